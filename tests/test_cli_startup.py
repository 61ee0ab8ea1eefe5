"""What the command line costs before it starts: heavy libraries load only for the commands that use them.

Times are measured by benchmarks/startup.py, not here; these tests check which modules a
process has loaded, which does not depend on the machine's speed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

ENV = {**os.environ, "NEGOTIATOR_BLOCK_REMOTE": "1", "COLUMNS": "160"}
HEAVY = ("langgraph", "langchain_core", "litellm", "torch", "transformers", "matplotlib", "trl", "peft")


def loaded_after(args: list[str], tmp_path, wanted: tuple[str, ...] = HEAVY) -> set[str]:
    """Which of ``wanted`` (packages, or dotted prefixes of modules) a CLI process has imported by the time it exits."""
    code = (
        "import atexit, json, sys\n"
        f"wanted = {wanted!r}\n"
        "atexit.register(lambda: print('LOADED=' + json.dumps(sorted("
        "{w for w in wanted for m in list(sys.modules) if m == w or m.startswith(w + '.')}))))\n"
        "sys.argv[0] = 'negotiator'\n"
        "from negotiator.cli import main\n"
        "main()\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, env=ENV, cwd=tmp_path, timeout=120
    )
    assert r.returncode == 0, r.stderr
    (line,) = [x for x in r.stdout.splitlines() if x.startswith("LOADED=")]
    return set(json.loads(line[len("LOADED=") :]))


def test_a_rule_vs_rule_eval_loads_no_model_library(tmp_path):
    args = [
        "eval",
        "--seller",
        "rule/boulware",
        "--buyer",
        "rule/conceder",
        "--limit",
        "2",
        "--out",
        str(tmp_path / "run"),
        "--quiet",
    ]
    assert loaded_after(args, tmp_path) == set()
    assert len((tmp_path / "run" / "episodes.jsonl").read_text().splitlines()) == 2


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["eval", "--help"], ["train", "--help"]])
def test_help_loads_none_of_the_negotiation_code(args, tmp_path):
    """`negotiator --help` took 0.38 s where it had taken 0.17 s: a module-level import in the eval
    command loaded the scenario generator, the strategy and the model specs (0.35 s) to print help."""
    code = ("negotiator.domain", "negotiator.strategy", "negotiator.models", "evals", "train")
    assert loaded_after(args, tmp_path, code) == set()


@pytest.mark.parametrize("args", [["--help"], ["eval", "--help"], ["scenarios", "list", "--count", "2"], ["--version"]])
def test_help_and_light_commands_load_no_model_library(args, tmp_path):
    assert loaded_after(args, tmp_path) == set()


def test_an_llm_seller_still_gets_the_langgraph_agent(tmp_path):
    args = [
        "eval",
        "--seller",
        "scripted/boulware",
        "--buyer",
        "rule/conceder",
        "--limit",
        "1",
        "--out",
        str(tmp_path / "run"),
        "--quiet",
    ]
    assert "langgraph" in loaded_after(args, tmp_path)


def test_version_comes_from_the_package_metadata():
    from importlib.metadata import version

    import negotiator

    r = subprocess.run(
        [sys.executable, "-m", "negotiator", "--version"], capture_output=True, text=True, env=ENV, timeout=60
    )
    assert r.returncode == 0
    assert (
        r.stdout.strip() == f"negotiator {version(negotiator.DISTRIBUTION)}" == f"negotiator {negotiator.__version__}"
    )


def test_a_source_checkout_without_metadata_reads_pyproject(monkeypatch):
    import importlib.metadata
    import tomllib
    from pathlib import Path

    import negotiator

    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", missing)
    pyproject = tomllib.loads((Path(negotiator.__file__).parent.parent / "pyproject.toml").read_text())
    assert negotiator._version() == pyproject["project"]["version"]


def test_every_public_name_of_the_package_root_resolves():
    code = (
        "import negotiator\n"
        "missing = [n for n in negotiator.__all__ if getattr(negotiator, n, None) is None]\n"
        "assert not missing, missing\n"
        "ns = {}\n"
        "exec('from negotiator import *', ns)\n"
        "assert set(negotiator.__all__) <= set(ns), set(negotiator.__all__) - set(ns)\n"
        "assert set(negotiator.__all__) <= set(dir(negotiator))\n"
        "from negotiator import SellerAgent, Sessions\n"
        "from negotiator.sim import RuleParty, generate, run_negotiation\n"
        "from negotiator.agent import SellerAgent as S2\n"
        "assert SellerAgent is S2\n"
        "try:\n"
        "    negotiator.not_a_name\n"
        "except AttributeError as e:\n"
        "    assert 'not_a_name' in str(e)\n"
        "else:\n"
        "    raise AssertionError('no AttributeError')\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=ENV, timeout=120)
    assert r.returncode == 0, r.stderr


def test_the_clis_default_seller_is_the_agents():
    """The CLI names the default seller without importing the agent; the two must not drift apart."""
    from negotiator.agent.seller import DEFAULT_SELLER
    from negotiator.cli.app import DEFAULT_SELLER as CLI_DEFAULT

    assert CLI_DEFAULT == DEFAULT_SELLER
