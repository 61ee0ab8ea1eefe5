"""Bad files and folders reach the user as an error that says what to do, never as a traceback.

Damaged episode logs are not fatal: the damaged lines are reported and kept aside, the valid
ones are never lost.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ENV = {**os.environ, "NEGOTIATOR_BLOCK_REMOTE": "1", "COLUMNS": "200"}
RULES = ["--seller", "rule/boulware", "--buyer", "rule/conceder"]


def cli(*args, env: dict | None = None, cwd=None, timeout: float = 300):
    return subprocess.run(
        [sys.executable, "-m", "negotiator", *args],
        capture_output=True,
        text=True,
        env={**ENV, **(env or {})},
        cwd=cwd,
        timeout=timeout,
    )


def said(r) -> str:
    return " ".join((r.stdout + r.stderr).split())


def usage_error(r, *fragments: str) -> None:
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr, r.stderr
    for f in fragments:
        assert f in said(r), said(r)


@pytest.fixture
def a_file(tmp_path):
    f = tmp_path / "notes.txt"
    f.write_text("not a folder\n")
    return f


# --- output folders -------------------------------------------------------------------


@pytest.mark.parametrize("command", [["eval", *RULES, "--limit", "1"], ["train", "--steps", "1"]])
def test_an_out_that_is_a_file_or_below_a_file(command, a_file):
    usage_error(cli(*command, "--out", str(a_file)), f"--out {a_file} is a file, not a folder")
    usage_error(cli(*command, "--out", str(a_file / "run")), f"{a_file} is a file, so no folder can be made below it")
    assert a_file.read_text() == "not a folder\n"


@pytest.fixture
def read_only_folder(tmp_path):
    """A folder the CLI cannot write into: read-only by mode, or, for root (whom modes do not stop), immutable."""
    ro = tmp_path / "ro"
    ro.mkdir()
    if os.geteuid() != 0:
        os.chmod(ro, 0o555)
        yield ro
        os.chmod(ro, 0o755)
        return
    if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(ro)], capture_output=True).returncode != 0:
        pytest.skip("running as root on a file system without chattr +i: no folder here is unwritable")
    yield ro
    subprocess.run(["chattr", "-i", str(ro)], check=True)


def test_an_out_folder_that_cannot_be_written(read_only_folder):
    ro = read_only_folder
    usage_error(cli("eval", *RULES, "--limit", "1", "--out", str(ro)), f"--out {ro}: cannot write there (")
    usage_error(
        cli("eval", *RULES, "--limit", "1", "--out", str(ro / "run")), f"--out {ro / 'run'}: cannot write there ("
    )
    usage_error(cli("train", "--steps", "1", "--out", str(ro / "run")), f"--out {ro / 'run'}: cannot write there (")
    assert list(ro.iterdir()) == []


def test_report_refuses_a_file_and_an_out_that_is_a_file(tmp_path, a_file):
    run = tmp_path / "run"
    assert cli("eval", *RULES, "--limit", "2", "--out", str(run), "--quiet").returncode == 0
    usage_error(cli("report", str(a_file)), f"{a_file} is a file; pass run folders")
    usage_error(cli("report", str(run), "--out", str(a_file)), f"--out {a_file} is a file, not a folder")
    missing = tmp_path / "nosuch"  # a typo: it said "no episodes.jsonl in nosuch", as if the folder were there
    usage_error(cli("report", str(missing)), f"{missing} does not exist: pass the --out folder")


# --- a damaged config.json ------------------------------------------------------------


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    run = tmp_path_factory.mktemp("damaged") / "run"
    r = cli("eval", *RULES, "--limit", "5", "--out", str(run), "--quiet")
    assert r.returncode == 0, r.stderr
    return run


@pytest.mark.parametrize(
    "content, message",
    [
        (b'{"seller": "rule/boul', "config.json is damaged (line 1, column 12: Unterminated string"),
        (b"", "config.json is damaged (line 1, column 1: Expecting value)"),
        (b'{"seller": "r\xff"}', "config.json is damaged (not UTF-8 text)"),
        (b"[1, 2]", "config.json is not a run configuration (a JSON object)"),
        (b'{"seller": "rule/boulware"}', "config.json does not record its suite_name"),
    ],
)
def test_resume_on_a_damaged_config(finished_run, tmp_path, content, message):
    run = tmp_path / "run"
    shutil.copytree(finished_run, run)
    (run / "config.json").write_bytes(content)
    usage_error(cli("eval", "--resume", str(run)), message)
    usage_error(cli("eval", *RULES, "--limit", "5", "--out", str(run)))  # a plain rerun: refused too, no traceback
    assert (run / "config.json").read_bytes() == content


def test_resume_on_a_file_or_a_folder_without_a_run(a_file, tmp_path):
    usage_error(cli("eval", "--resume", str(a_file)), "is a file; give the run folder")
    usage_error(cli("eval", "--resume", str(tmp_path)), "no config.json in")


def test_train_into_a_folder_with_a_damaged_record(tmp_path):
    out = tmp_path / "trained"
    out.mkdir()
    (out / "config.json").write_text('{"lr": 6e-4,')
    usage_error(cli("train", "--out", str(out), "--steps", "1"), f"{out / 'config.json'} is damaged")


@pytest.mark.parametrize("content", ['{"max_steps": "x"}', '{"max_steps": 7}', "{}", "[1]", '{"steps": 1, "max'])
def test_train_into_a_folder_with_a_damaged_manifest(tmp_path, content):
    """A manifest that parsed but lacked its steps ended the rerun in TypeError's or KeyError's traceback, and {}
    read 'holds a finished run of None steps'; a damaged manifest is now one line saying how to write it again."""
    out = tmp_path / "trained"
    out.mkdir()
    (out / "manifest.json").write_text(content)
    usage_error(
        cli("train", "--out", str(out), "--steps", "1"),
        f"{out / 'manifest.json'} is damaged; delete it and rerun the same command to write it again from the run's "
        "last checkpoint, or choose a new --out folder",
    )


# --- a damaged episode log ------------------------------------------------------------


def _damage(run: Path) -> list[bytes]:
    """Break lines 2, 3 and 5 of the log three ways; returns the lines as they were written."""
    original = (run / "episodes.jsonl").read_bytes().splitlines()
    broken = list(original)
    bad = json.loads(broken[1])
    bad["outcome"] = "lost"  # valid JSON, not a valid episode
    broken[1] = json.dumps(bad).encode()
    broken[2] = broken[2][:40] + b"\xff\xfe" + broken[2][42:]  # bytes that are not UTF-8
    (run / "episodes.jsonl").write_bytes(b"\n".join(broken[:4]) + b"\n" + broken[4][:150])  # a torn last line
    return [broken[1], broken[2], broken[4][:150]], [original[0], original[3]]


def test_report_reads_a_damaged_log_and_says_which_lines_it_skipped(finished_run, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(finished_run, run)
    _damage(run)
    before = (run / "episodes.jsonl").read_bytes()
    r = cli("report", str(run), "--out", str(tmp_path / "report"))
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    text = said(r)
    assert "skipped 3 damaged lines" in text and "line 2: is not a valid episode (outcome" in text
    assert "line 3: holds bytes that are not UTF-8 text" in text and "line 5: is torn" in text
    summary = json.loads((tmp_path / "report" / "summary.json").read_text())
    assert summary["arms"][0]["summary"]["overall"]["n"] == 2  # the two valid negotiations
    assert (run / "episodes.jsonl").read_bytes() == before  # a reader changes nothing


def test_a_run_with_no_finished_negotiation_under_a_folder_is_left_out(finished_run, tmp_path):
    """User audit: `negotiator report runs` with one run killed during its first write (its log a torn line,
    nothing readable) beside finished ones failed outright, 'no readable negotiations in the run of
    rule/conceder', though cli.md says such a run is left out, and it had already made runs/report/.
    Now that run is left out with a note; named on its own it is refused, by its folder."""
    runs = tmp_path / "runs"
    shutil.copytree(finished_run, runs / "done")
    killed = runs / "killed"
    killed.mkdir()
    config = json.loads((finished_run / "config.json").read_text())
    (killed / "config.json").write_text(json.dumps({**config, "seller": "rule/conceder"}))
    (killed / "episodes.jsonl").write_bytes((finished_run / "episodes.jsonl").read_bytes()[:150])  # torn
    r = cli("report", str(runs))
    assert r.returncode == 0 and "Traceback" not in r.stderr, (r.stdout, r.stderr)
    assert f"note: left out {killed}: no negotiation has finished there yet" in said(r)
    summary = json.loads((runs / "report" / "summary.json").read_text())
    assert [a["seller"] for a in summary["arms"]] == ["rule/boulware"]
    usage_error(cli("report", str(killed), "--out", str(tmp_path / "r2")), f"no readable negotiations in {killed}")
    assert not (tmp_path / "r2").exists()  # refused before any folder is made


@pytest.mark.parametrize(("field", "value"), [("seller_score", "NaN"), ("cost_usd", "Infinity")])
def test_a_log_line_with_a_non_finite_metric_is_damaged_not_averaged(finished_run, tmp_path, field, value):
    """Before, a hand-edited nan score made the arm's mean nan, and an infinite cost printed as 0.0000."""
    run = tmp_path / "run"
    shutil.copytree(finished_run, run)
    lines = (run / "episodes.jsonl").read_text().splitlines()
    head, _, metrics = lines[0].partition('"metrics":')
    metrics, n = re.subn(rf'"{field}":[^,}}]+', f'"{field}":{value}', metrics, count=1)
    assert n == 1
    lines[0] = f'{head}"metrics":{metrics}'
    (run / "episodes.jsonl").write_text("\n".join(lines) + "\n")
    r = cli("report", str(run), "--out", str(tmp_path / "report"))
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert f"metrics.{field}: Input should be a finite number" in said(r)
    summary = json.loads((tmp_path / "report" / "summary.json").read_text())
    assert summary["arms"][0]["summary"]["overall"]["n"] == len(lines) - 1
    assert math.isfinite(summary["arms"][0]["summary"]["overall"]["seller_score"])


def test_eval_sets_damaged_lines_aside_and_plays_those_negotiations_again(finished_run, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(finished_run, run)
    ids = [json.loads(x)["episode_id"] for x in (run / "episodes.jsonl").read_text().splitlines()]
    damaged, kept = _damage(run)
    r = cli("eval", "--resume", str(run), "--quiet")
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    text = said(r)
    assert "had 3 damaged lines" in text and f"moved to {run / 'episodes.damaged.jsonl'}" in text
    assert "2 of 5 negotiations already done" in text
    # the damaged lines are kept, byte for byte; the valid ones are still there, first, untouched
    assert (run / "episodes.damaged.jsonl").read_bytes() == b"".join(d + b"\n" for d in damaged)
    log = (run / "episodes.jsonl").read_bytes().splitlines()
    assert log[:2] == kept
    assert sorted(json.loads(x)["episode_id"] for x in log) == sorted(ids)
    # a second resume finds nothing to set aside and nothing to run
    r = cli("eval", "--resume", str(run), "--quiet")
    assert r.returncode == 0 and "damaged line" not in r.stdout and "5 of 5 negotiations already done" in r.stdout


def test_a_log_of_another_schema_version_is_refused_not_set_aside(finished_run, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(finished_run, run)
    rows = (run / "episodes.jsonl").read_text().splitlines()
    future = json.loads(rows[0])
    future["schema_version"] = 99
    (run / "episodes.jsonl").write_text("\n".join([json.dumps(future), *rows[1:]]) + "\n")
    usage_error(cli("eval", "--resume", str(run)), "schema_version 99 is not supported", "upgrade negotiator")
    usage_error(cli("report", str(run)), "schema_version 99")
    assert not (run / "episodes.damaged.jsonl").exists()


# --- the other commands ---------------------------------------------------------------


@pytest.mark.parametrize(
    "args, message",
    [
        (["play", "--template", "nope"], "unknown scenario template 'nope'"),
        (["play", "--seller", "gpt4"], "unknown model spec 'gpt4'"),
        (["scenarios", "show", "3", "--template", "nope"], "unknown scenario template 'nope'"),
        (["scenarios", "list", "--count", "0"], "--count"),
        (["models", "prepare", "gemma-9000"], "unknown model 'gemma-9000': models prepare takes one of gemma-3-270m"),
        (["train", "--out", "x", "--lr", "fast"], "--lr 'fast': give a learning rate such as 6e-4"),
        (["train", "--out", "x", "--profile", "tpu"], "--profile 'tpu': choose cpu or gpu"),
        (["train", "--out", "x", "--teacher", "oracle"], "--teacher 'oracle': choose strategy, lookahead or reader"),
        (
            [
                "train",
                "--out",
                "x",
                "--strategy",
                "responsive?menu=moves&words=strategy",
                "--imitate",
                "2",
                "--teacher-margin",
                "0.2",
            ],
            "--teacher-margin is the lookahead teacher's: add --teacher lookahead",
        ),
        (
            [
                "train",
                "--out",
                "x",
                "--strategy",
                "responsive?menu=moves",
                "--imitate",
                "2",
                "--teacher",
                "lookahead",
                "--teacher-margin",
                "nan",
            ],
            "--teacher-margin nan: should be a finite number",
        ),
        (
            ["train", "--out", "x", "--strategy", "responsive?candidates=3", "--imitate", "2", "--teacher", "reader"],
            "--teacher reader chooses among the strategy's priced moves",
        ),
        (
            ["train", "--out", "x", "--strategy", "responsive?menu=readings", "--imitate", "2", "--steps", "0"],
            "only the reader teacher knows what they said: add --teacher reader",
        ),
        (
            ["train", "--out", "x", "--strategy", "responsive?menu=readings", "--imitate", "2", "--teacher", "reader"],
            "train it by imitation alone (--steps 0 --imitate N)",
        ),
        (["eval", *RULES, "--limit", "0"], "--limit must be at least 1"),
    ],
)
def test_other_commands_refuse_bad_input_clearly(args, message, tmp_path):
    r = cli(*args, cwd=tmp_path)
    usage_error(r, message)
    assert not (tmp_path / "x").exists()


def test_a_cache_home_below_a_file(a_file):
    r = cli("models", "prepare", "tiny-random-gemma", env={"NEGOTIATOR_HOME": str(a_file / "home")})
    usage_error(r, f"NEGOTIATOR_HOME {a_file / 'home'}: {a_file} is a file")


def test_serve_refuses_a_store_it_cannot_open(a_file, tmp_path):
    def serve(store):
        return cli("serve", "--no-auth", "--seller", "rule/boulware", "--port", "9", "--store", store, timeout=60)

    usage_error(serve(str(a_file / "negotiations.sqlite")), f"--store's folder {a_file} is a file")
    usage_error(serve(str(tmp_path)), f"--store {tmp_path} is a folder")
    usage_error(serve(str(a_file)), f"--store {a_file} is not a SQLite database")
    usage_error(serve("mysql://shop:pw@db/negotiations"), "unknown store URL scheme 'mysql'", "postgresql:// URL")
    usage_error(serve("Postgres://db/negotiations"), "unknown store URL scheme 'Postgres'")
    usage_error(serve("postgresql://shop:s3cret@[db"), "is not a valid PostgreSQL URL")
    assert "s3cret" not in said(serve("postgresql://shop:s3cret@[db"))
    assert a_file.read_text() == "not a folder\n"


def test_serve_without_a_key_warns_who_can_negotiate_on_the_address_it_listens_on(tmp_path):
    """The Host check stops a web page (DNS rebinding), not a program that writes its own Host header:
    on 0.0.0.0 the warning said only programs on this machine could negotiate, while anyone on the
    network could, by addressing the request to localhost."""

    def warning(host: str) -> str:  # the warning comes before --public-url is read, which stops the command
        r = cli(
            "serve", "--no-auth", "--seller", "rule/boulware", "--host", host, "--public-url", "ftp://x", cwd=tmp_path
        )
        usage_error(r, "--public-url 'ftp://x'")
        return said(r)

    for host in ("127.0.0.1", "::1", "localhost"):
        assert "warning: --no-auth: any program on this machine can negotiate" in warning(host)
    for host in ("0.0.0.0", "::"):
        assert (
            f"warning: --no-auth: listening on {host}, anyone who can reach this port can negotiate by addressing the "
            "request to localhost (requests to other host names are refused). Local development only."
        ) in warning(host)


def test_serve_on_a_postgres_server_it_cannot_reach_is_one_line_and_exit_3():
    import socket

    with socket.socket() as s:  # a loopback port nothing listens on, held so no other process takes it meanwhile
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        r = cli(
            "serve",
            "--no-auth",
            "--seller",
            "rule/boulware",
            "--store",
            f"postgresql://shop:s3cret@127.0.0.1:{port}/db",
        )
    assert r.returncode == 3, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr and "s3cret" not in said(r), r.stderr
    assert said(r).startswith(f"store unreachable: --store postgresql://shop:***@127.0.0.1:{port}/db: cannot connect")
    assert "check that the server is running" in said(r)


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_a_non_finite_eval_timeout_is_a_usage_error(value, tmp_path):
    """On 91bd565 `eval --timeout nan` and `--timeout inf` were accepted."""
    r = cli("eval", "--seller", "rule/boulware", "--limit", "1", "--timeout", value, "--out", str(tmp_path / "run"))
    usage_error(r, "--timeout must be a positive number of seconds")
    assert not (tmp_path / "run").exists()


def test_report_refuses_a_negative_seed_without_a_traceback(finished_run, tmp_path):
    r = cli("report", str(finished_run), "--seed", "-1", "--out", str(tmp_path / "report"))
    assert r.returncode == 2 and "--seed" in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_an_error_written_to_a_pipe_is_one_line_however_long(tmp_path):
    """Written to a log or a script, a long error came out in 160-column pieces: a grep for it found
    half a message. Errors and warnings are now one line each (a terminal still wraps them on screen)."""
    env = {k: v for k, v in ENV.items() if k != "COLUMNS"}  # a pipe, as a CI log or a script reads it
    suite = "q" * 300
    r = subprocess.run(
        [sys.executable, "-m", "negotiator", "eval", "--seller", "rule/boulware", "--suite", suite, "--out", "x"],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120,
    )  # fmt: skip
    assert r.returncode == 2 and "Traceback" not in r.stderr
    (line,) = r.stderr.splitlines()
    assert line.startswith("error: ") and suite in line and len(line) > 300


def test_eval_s_notes_and_warnings_are_one_line_each_in_a_log(tmp_path):
    """eval writes its notes and warnings with its output, to stdout: in a log they came out in 160-column pieces."""
    env = {k: v for k, v in ENV.items() if k != "COLUMNS"}  # a pipe, as a CI log reads it
    out = tmp_path / ("a-long-run-folder-name-" * 6)
    for limit in ("1", "2"):
        r = subprocess.run(
            [sys.executable, "-m", "negotiator", "eval", *RULES, "--limit", limit, "--out", str(out), "--quiet"],
            capture_output=True, text=True, env=env, timeout=300,
        )  # fmt: skip
        assert r.returncode == 0, r.stderr
    (note,) = [line for line in r.stdout.splitlines() if line.startswith("note: ")]
    assert note == f"note: the run in {out} was planned with --limit 1; it now plans 2 negotiations"
