"""Every code example in README.md and docs/*.md runs as written.

Each fenced block that is Python, or a shell block that runs a ``negotiator`` command, is
executed: Python as a script in a subprocess, shell blocks with bash (``-e``: every line must
succeed) with the installed ``negotiator`` first on PATH; both in a fresh temporary folder,
offline (``NEGOTIATOR_BLOCK_REMOTE=1``). A block that cannot run here says why, in an HTML
comment on the line before its fence:

    <!-- skip: needs an API key -->      reported as skipped with that reason
    <!-- slow: a 270M-model run -->     run only with ``-m slow`` (the default suite skips it, saying so)
    <!-- continues -->                  runs after the block before it, in the same folder;
                                        consecutive Python blocks are joined into one script
    <!-- serves: what it serves -->     a shell block whose last command serves until Ctrl-C
                                        (``negotiator view``): run until it prints a loopback
                                        URL, that page must load, then it gets Ctrl-C

Nothing is ignored silently: every block needs a language on its fence, and a Python or
``negotiator`` block either runs or carries a reason (``test_every_block_runs_or_says_why``).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PYTHON = {"python", "py"}
SHELL = {"bash", "sh", "shell", "console"}
TIMEOUT = 300  # seconds per block; the ones that take longer are slow-marked
SLOW_TIMEOUT = 3600  # a slow block: a 270M run on two shared cores

_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([\w+-]*)")
_MARK = re.compile(r"^\s*<!--\s*(skip|slow|continues|serves)\s*(?::\s*(.*?))?\s*-->\s*$")
# a command word: at a line start or after && || ; | ( , past any VAR=value assignments
_NEGOTIATOR = re.compile(r"(?:^|&&|\|\||[;|(])\s*(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*(?:\S*/)?negotiator(?:\s|$)", re.M)


@dataclass
class Block:
    page: str
    line: int  # of the opening fence, 1-based
    lang: str
    code: str
    skip: str | None = None
    slow: str | None = None
    continues: bool = False
    serves: str | None = None

    @property
    def kind(self) -> str:
        if self.lang in PYTHON:
            return "python"
        if self.lang in SHELL and _NEGOTIATOR.search(_strip_comments(self.code)):
            return "negotiator"
        return "other"

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


@dataclass
class Group:
    blocks: list[Block] = field(default_factory=list)

    @property
    def head(self) -> Block:
        return self.blocks[0]

    @property
    def skip(self) -> str | None:
        return next((b.skip for b in self.blocks if b.skip), None)

    @property
    def slow(self) -> str | None:
        return next((b.slow for b in self.blocks if b.slow is not None), None)

    @property
    def serves(self) -> str | None:
        return next((b.serves for b in self.blocks if b.serves is not None), None)


def _strip_comments(code: str) -> str:
    return "\n".join(line.split(" #")[0] for line in code.splitlines() if not line.lstrip().startswith("#"))


def parse(path: Path, root: Path = ROOT) -> list[Block]:
    """The fenced blocks of one markdown page, with the markers written right before each."""
    lines = path.read_text(encoding="utf-8").splitlines()
    name = str(path.relative_to(root))
    blocks: list[Block] = []
    marks: list[tuple[str, str | None]] = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if m is None:
            mk = _MARK.match(lines[i])
            if mk:
                marks.append((mk.group(1), mk.group(2)))
            elif lines[i].strip():
                marks = []  # a marker belongs to the block right after it
            i += 1
            continue
        indent, fence, lang = len(m.group(1)), m.group(2), m.group(3).lower()
        start, body = i, []
        i += 1
        while i < len(lines) and not lines[i].strip().startswith(fence):
            body.append(
                lines[i][indent:] if not lines[i][:indent].strip() else lines[i]
            )  # a fence indented in a list item
            i += 1
        i += 1
        b = Block(name, start + 1, lang, "\n".join(body) + "\n")
        for kind, arg in marks:
            if kind == "skip":
                b.skip = arg or ""
            elif kind == "slow":
                b.slow = arg or "a long model run"
            elif kind == "serves":
                b.serves = arg or "a server"
            else:
                b.continues = True
        marks = []
        blocks.append(b)
    return blocks


BLOCKS = [b for page in PAGES for b in parse(page)]


def groups() -> list[Group]:
    out: list[Group] = []
    for b in BLOCKS:
        if b.kind == "other":
            continue
        if b.continues:
            assert out and out[-1].head.page == b.page, (
                f"{b.where}: <!-- continues --> needs an earlier block on its page"
            )
            out[-1].blocks.append(b)
        else:
            out.append(Group([b]))
    return out


GROUPS = groups()


def _env() -> dict[str, str]:
    env = {**os.environ, "NEGOTIATOR_BLOCK_REMOTE": "1", "COLUMNS": "160", "NO_COLOR": "1"}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"  # the installed negotiator first
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):  # a block that needs one says so
        env.pop(key, None)
    return env


def _segments(group: Group) -> list[tuple[str, str, str]]:
    """(kind, where, code) to run in order; consecutive Python blocks become one script."""
    segs: list[tuple[str, str, str]] = []
    for b in group.blocks:
        if b.kind == "python" and segs and segs[-1][0] == "python":
            kind, where, code = segs[-1]
            segs[-1] = (kind, f"{where}+{b.line}", code + "\n" + b.code)
        else:
            segs.append((b.kind, b.where, b.code))
    return segs


_URL = re.compile(r"http://127\.0\.0\.1:\d+/")


def run_serving(group: Group, cwd: Path) -> None:
    """A block that ends by serving: it must print its loopback URL, serve a page there, and stop on Ctrl-C."""
    import httpx

    ((kind, where, code),) = _segments(group)
    assert kind == "negotiator", f"{where}: <!-- serves --> marks a shell block"
    out = cwd / "served.log"
    with open(out, "w") as log:
        proc = subprocess.Popen(
            ["bash", "-e", "-o", "pipefail", "-c", code],
            cwd=cwd,
            env=_env(),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + TIMEOUT
        while not (m := _URL.search(out.read_text())):
            assert proc.poll() is None, f"{where} ended (exit {proc.returncode}) without serving:\n{out.read_text()}"
            assert time.monotonic() < deadline, f"{where} printed no URL in {TIMEOUT} s:\n{out.read_text()}"
            time.sleep(0.1)
        page = httpx.get(m.group(), timeout=120)
        assert page.status_code == 200 and "negotiator" in page.text, (
            f"{where}: {m.group()} answered {page.status_code}"
        )
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C, as a terminal sends it to the foreground group
        assert proc.wait(timeout=60) == 0, f"{where} did not stop cleanly on Ctrl-C:\n{out.read_text()}"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def run_group(group: Group, cwd: Path) -> None:
    if group.serves is not None:
        return run_serving(group, cwd)
    env = _env()
    limit = TIMEOUT if group.slow is None else SLOW_TIMEOUT
    for n, (kind, where, code) in enumerate(_segments(group)):
        if kind == "python":
            script = cwd / f"example_{n}.py"
            script.write_text(code, encoding="utf-8")
            argv = [sys.executable, str(script)]
        else:
            argv = ["bash", "-e", "-o", "pipefail", "-c", code]
        # its own process group, so a timeout also ends what it started (a local model server)
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            out, err = proc.communicate(timeout=limit)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            pytest.fail(
                f"{where} ran past {limit} s: slow-mark it (<!-- slow: why -->)\n{code}\n{out[-2000:]}\n{err[-2000:]}"
            )
        assert proc.returncode == 0, (
            f"{where} failed (exit {proc.returncode}):\n{code}\n--- stdout\n{out[-4000:]}\n--- stderr\n{err[-4000:]}"
        )


def _param(g: Group):
    marks = []
    if g.skip is not None:
        marks.append(pytest.mark.skip(reason=f"{g.head.where}: {g.skip}"))
    if g.slow is not None:
        marks.append(pytest.mark.slow)
    return pytest.param(g, id=g.head.where, marks=marks)


@pytest.mark.parametrize("group", [_param(g) for g in GROUPS])
def test_example_runs_as_written(group: Group, tmp_path, request):
    if group.slow is not None and "slow" not in (request.config.getoption("markexpr") or ""):
        pytest.skip(f"{group.head.where}: {group.slow} (run it with -m slow)")
    run_group(group, tmp_path)


def test_every_block_runs_or_says_why():
    untagged = [b.where for b in BLOCKS if not b.lang]
    assert not untagged, f"fenced blocks without a language (python, bash, text ...): {untagged}"
    for b in BLOCKS:
        if b.skip is not None:
            assert b.skip.strip(), f"{b.where}: <!-- skip: REASON --> needs its reason"
            assert b.kind != "other", f"{b.where}: a skip mark on a block that is never run"
    assert sum(g.skip is None and g.slow is None for g in GROUPS) >= 10, "most examples should run in the default suite"


def test_the_parser_finds_markers_blocks_and_commands(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "Intro.\n\n<!-- skip: needs an API key -->\n```bash\nOTEL_X=1 negotiator eval --seller openai/x\n```\n\n"
        "<!-- stale marker -->\ntext between\n\n```python\nx = 1\n```\n"
        "<!-- continues -->\n```python\nassert x == 1\n```\n"
        "```bash\npip install foo   # negotiator is not a command here\n```\n"
        "```bash\n(cd /tmp && .venv/bin/negotiator report runs/a)\n```\n",
        encoding="utf-8",
    )
    blocks = parse(page, tmp_path)
    assert [(b.line, b.lang, b.kind) for b in blocks] == [
        (4, "bash", "negotiator"),
        (11, "python", "python"),
        (15, "python", "python"),
        (18, "bash", "other"),
        (21, "bash", "negotiator"),
    ]
    assert blocks[0].skip == "needs an API key" and blocks[1].skip is None
    assert blocks[2].continues and not blocks[1].continues
    # and a continued Python pair runs as one script: x carries over
    g = Group(blocks[1:3])
    assert [k for k, _, _ in _segments(g)] == ["python"]
    run_group(g, tmp_path)
    with pytest.raises(AssertionError, match="failed"):
        run_group(Group([blocks[2]]), tmp_path)  # alone, x is undefined
