"""The layer contracts in pyproject.toml ([tool.importlinter]) hold, and they are live:
a deliberate violation in a copy of the packages breaks the contract it should."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINT = Path(sys.executable).with_name("lint-imports")
CONTRACTS = 4


def lint(cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(cwd)}  # the packages under cwd, not the installed ones
    return subprocess.run([str(LINT), "--no-cache"], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def test_the_layers_hold():
    r = lint(ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"Contracts: {CONTRACTS} kept, 0 broken." in r.stdout


@pytest.fixture(scope="module")
def copy(tmp_path_factory) -> Path:
    dst = tmp_path_factory.mktemp("layers")
    for pkg in ("negotiator", "evals", "train"):
        shutil.copytree(ROOT / pkg, dst / pkg, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", dst / "pyproject.toml")
    return dst


@pytest.mark.parametrize(
    "module, line, contract, culprit",
    [
        # a buyer reaching into the seller: siblings never import each other
        (
            "negotiator/buyers/llm.py",
            "from ..agent.seller import SellerAgent",
            "domain <- actions/party",
            "negotiator.buyers.llm -> negotiator.agent.seller",
        ),
        # the domain importing upwards
        (
            "negotiator/domain/seeds.py",
            "from ..runtime import run_negotiation",
            "domain <- actions/party",
            "negotiator.domain.seeds -> negotiator.runtime",
        ),
        # training reading evaluation's suites (the seed ranges are in the domain)
        (
            "train/pool.py",
            "from evals.suites import get_suite",
            "domain <- actions/party",
            "train.pool -> evals.suites",
        ),
        # the package face, which loads every layer
        (
            "negotiator/runtime/run.py",
            "from .. import __version__",
            "no module imports the package face",
            "negotiator.runtime.run -> negotiator",
        ),
        # an import loop inside one package
        ("evals/formatting.py", "from .html import render_html", "no import loops", "No cycles are allowed in evals."),
    ],
)
def test_a_violation_breaks_its_contract(copy, module, line, contract, culprit):
    path = copy / module
    original = path.read_text()
    path.write_text(original + f"\n\ndef _violation():\n    {line}\n")
    try:
        r = lint(copy)
    finally:
        path.write_text(original)
    assert r.returncode == 1, r.stdout + r.stderr
    assert f"Contracts: {CONTRACTS} kept" not in r.stdout, r.stdout
    broken = r.stdout.split("Broken contracts", 1)[1]
    assert contract in broken and culprit in broken, r.stdout


def test_the_root_is_the_apps_api_and_simulation_has_its_own_face():
    import negotiator
    import negotiator.sim

    assert len(negotiator.__all__) <= 20
    assert {"SellerAgent", "Sessions", "Listing", "MoveConflict", "UnknownSession", "__version__"} <= set(
        negotiator.__all__
    )
    assert not {"generate", "run_negotiation", "make_party", "Episode"} & set(negotiator.__all__)
    missing = [n for n in negotiator.sim.__all__ if getattr(negotiator.sim, n, None) is None]
    assert not missing
    assert negotiator.sim.generate(0).listing() == negotiator.example_listing(0)
