"""Run folders, as Inspect users know its logs: a fresh, named folder per run, found under a parent.

``negotiator eval`` without ``--out`` writes a new folder under ``runs/`` (or ``$NEGOTIATOR_RUNS_DIR``)
named for when it started, the suite, the seller and the buyers:
``runs/2025-06-01T09-30-12_quick_rule_boulware_vs_rule_conceder+rule_linear``; two runs never share a
folder by accident, and the names sort by time. ``--out`` still chooses one (rerunning into it
resumes). ``negotiator report`` and ``negotiator view`` take run folders or any folder above them.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path

from negotiator.errors import UsageError

RUNS_DIR_ENV = "NEGOTIATOR_RUNS_DIR"
_MAX_NAME = 150  # characters of a folder name: well under any filesystem's 255


def runs_root() -> Path:
    """Where run folders go by default: ``$NEGOTIATOR_RUNS_DIR``, else ``runs`` in the working directory."""
    return Path(os.environ.get(RUNS_DIR_ENV) or "runs")


def slug(spec: str) -> str:
    """A spec as a piece of a file name: ``rule/boulware?e=0.3`` -> ``rule_boulware_e_0.3``."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", spec).strip("_")[:80]


def run_name(suite: str, seller: str, buyers: list[str], started: datetime) -> str:
    """``<started>_<suite>_<seller>_vs_<buyer>+<buyer>``, cut (with a hash of the whole) when very long."""
    stamp = started.strftime("%Y-%m-%dT%H-%M-%S")
    name = f"{stamp}_{slug(suite)}_{slug(seller)}_vs_{'+'.join(slug(b) for b in buyers)}"
    if len(name) > _MAX_NAME:
        digest = hashlib.sha256(name.encode()).hexdigest()[:8]
        name = f"{name[: _MAX_NAME - 9]}-{digest}"
    return name


def new_run_folder(suite: str, seller: str, buyers: list[str], *, root: Path | None = None) -> Path:
    """A folder no run uses yet (``-2``, ``-3`` ... when one started in the same second)."""
    base = (root or runs_root()) / run_name(suite, seller, buyers, datetime.now())
    path, k = base, 1
    while path.exists():
        k += 1
        path = base.with_name(f"{base.name}-{k}")
    return path


def is_run(path: Path) -> bool:
    """A folder ``negotiator eval`` wrote into: its config or its episode log."""
    return (path / "config.json").is_file() or (path / "episodes.jsonl").is_file()


def runs_under(folder: Path) -> list[Path]:
    """The run folders at or below ``folder``, in name order (time order for default names)."""
    if is_run(folder):
        return [folder]
    found = []
    for here, dirs, _ in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        path = Path(here)
        if path != folder and is_run(path):
            found.append(path)
            dirs[:] = []  # a run holds no other runs
    return sorted(found)


def find_runs(paths: Iterable[Path]) -> list[Path]:
    """Every run folder named, and every run with episodes found under a folder named.

    A run folder named is passed on as it is (``load_arms`` says what is wrong with it); a run under a
    folder that has no episode log yet (it has just started) is left out. A UsageError names a path
    that holds no run.
    """
    out: list[Path] = []
    for p in paths:
        if p.exists() and not p.is_dir():
            raise UsageError(f"{p} is a file; pass run folders (the --out of `negotiator eval`) or a folder above them")
        if not p.is_dir() or is_run(p):
            found = [p]  # a run folder, or a path that does not exist: load_arms says what is missing
        else:
            found = [r for r in runs_under(p) if (r / "episodes.jsonl").is_file()]
            if not found:
                raise UsageError(
                    f"no runs in {p}: a run folder holds config.json and episodes.jsonl (what `negotiator eval` "
                    "writes); pass one, or a folder above them"
                )
        out.extend(r for r in found if r not in out)
    return out


def report_folder(paths: list[Path]) -> Path:
    """Where a report goes by default: beside the runs, never the working directory by accident.

    One folder given (a run, or a folder of runs): its ``report`` subfolder. Several: ``report`` in the
    deepest folder that holds them all (``runs/report`` for two runs under ``runs/``).
    """
    if len(paths) == 1:
        return paths[0] / "report"
    common = Path(os.path.commonpath([str(p.resolve()) for p in paths]))
    cwd = Path.cwd().resolve()
    try:  # keep the path relative when the runs were given relative: it reads as the user wrote them
        common = common.relative_to(cwd)
    except ValueError:
        pass
    return common / "report"
