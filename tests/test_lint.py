"""The tree stays clean under the project's own lint and layout rules (pyproject [tool.ruff]).

.ci/run runs ruff and mypy before the tests; this keeps `pytest` alone honest about lint too
(seconds), and keeps the contributors' pre-commit hook on the ruff version CI uses.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _ruff(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ruff", *args], cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_ruff_finds_nothing_and_the_layout_is_ruff_formats():
    lint = _ruff("check", ".", "--output-format", "concise")
    assert lint.returncode == 0, lint.stdout[-3000:]
    layout = _ruff("format", "--check", ".")
    assert layout.returncode == 0, layout.stdout[-3000:]


def test_the_pre_commit_hook_runs_the_ruff_version_ci_installs():
    pinned = re.search(r'"ruff==([\d.]+)"', (ROOT / "pyproject.toml").read_text()).group(1)
    hook = re.search(r"ruff-pre-commit\s+rev: v([\d.]+)", (ROOT / ".pre-commit-config.yaml").read_text()).group(1)
    assert hook == pinned
    ci = (ROOT / ".ci/run").read_text()
    assert all(step in ci for step in ("ruff check .", "ruff format --check .", "/mypy", "lint-imports"))
