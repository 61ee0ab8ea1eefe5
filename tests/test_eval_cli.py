"""`negotiator eval` and `negotiator report` as a user runs them: subprocesses, files, exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

ENV = {**os.environ, "NEGOTIATOR_BLOCK_REMOTE": "1", "COLUMNS": "160"}


def cli(*args, timeout: float = 600):
    return subprocess.run(
        [sys.executable, "-m", "negotiator", *args], capture_output=True, text=True, env=ENV, timeout=timeout
    )


def eval_and_compare(tmp_path, limit: str | None):
    extra = ["--limit", limit] if limit else []
    runs = []
    for seller in ("rule/boulware", "rule/conceder"):
        out = tmp_path / seller.replace("/", "_")
        r = cli("eval", "--suite", "heldout", "--seller", seller, "--out", str(out), "--quiet", *extra)
        assert r.returncode == 0, r.stderr
        assert "rule/persona" in r.stdout and "rule/tit_for_tat" in r.stdout and "seller score" in r.stdout
        runs.append(out)
    r = cli("report", *map(str, runs), "--out", str(tmp_path / "report"))
    assert r.returncode == 0, r.stderr
    assert "Paired differences" in r.stdout and "rule/boulware better" in r.stdout
    report = json.loads((tmp_path / "report" / "summary.json").read_text())
    assert (tmp_path / "report" / "report.html").exists() and len(
        list((tmp_path / "report" / "plots").glob("*.png"))
    ) == 4
    return runs, report


def test_heldout_offline_on_a_slice_and_report_compares_two_runs(tmp_path):
    runs, report = eval_and_compare(tmp_path, limit="48")
    assert [a["summary"]["overall"]["n"] for a in report["arms"]] == [48, 48]
    assert report["comparisons"][0]["n"] == 48
    config = json.loads((runs[0] / "config.json").read_text())
    assert config["suite"] == "heldout@v1.g1.p1" and config["buyers"] == ["rule/persona", "rule/tit_for_tat"]
    # --resume picks the recorded settings up: nothing runs twice.
    r = cli("eval", "--resume", str(runs[0]), "--quiet")
    assert r.returncode == 0, r.stderr
    assert "48 of 48 negotiations already done" in r.stdout
    assert len((runs[0] / "episodes.jsonl").read_text().splitlines()) == 48
    # A flag that contradicts the recorded run is refused, with what to do.
    r = cli("eval", "--resume", str(runs[0]), "--seller", "rule/linear")
    assert r.returncode == 2 and "differs from the run" in r.stderr
    # One run alone: the report lands in the run folder.
    r = cli("report", str(runs[0]))
    assert r.returncode == 0 and (runs[0] / "report" / "report.html").exists()


@pytest.mark.slow
def test_full_heldout_offline_and_report_compares_two_runs(tmp_path):
    """The paper's 1,152 negotiations per arm, offline with the default rule-based buyers."""
    _, report = eval_and_compare(tmp_path, limit=None)
    assert [a["summary"]["overall"]["n"] for a in report["arms"]] == [1152, 1152]
    c = report["comparisons"][0]
    assert c["n"] == 1152 and c["overall"]["high"] < 0 and set(c["by_buyer"]) == {"rule/persona", "rule/tit_for_tat"}
    assert len(report["arms"][0]["summary"]["by_persona"]) == 12
    assert report["arms"][0]["summary"]["overall"]["clusters"] == 48


@pytest.mark.parametrize(
    "args, message",
    [
        (("eval", "--rate-limit", "openai"), "PROVIDER=CALLS_PER_MINUTE"),
        (("eval", "--rate-limit", "openai=0"), "positive number of calls per minute"),
        (("eval", "--timeout", "0"), "--timeout must be a positive"),
        (("eval", "--buyer", "rule/persona?e=1"), "takes no parameters"),
        (("eval", "--resume", "/nonexistent/run"), "no config.json"),
        (("report", "/nonexistent/run"), "no episodes.jsonl"),
    ],
)
def test_bad_input_is_a_usage_error(args, message):
    r = cli(*args)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert message in r.stderr and "Traceback" not in r.stderr


def test_without_matplotlib_eval_still_runs_and_report_says_what_to_install(tmp_path):
    """matplotlib comes with the evals extra; the base install still evaluates, with its CIs."""
    no_plots = (
        "import sys; sys.modules['matplotlib'] = None; sys.argv[0] = 'negotiator'; "
        "from negotiator.cli import main; main()"
    )
    out = tmp_path / "run"
    r = subprocess.run(
        [
            sys.executable,
            "-c",
            no_plots,
            "eval",
            "--seller",
            "rule/boulware",
            "--limit",
            "4",
            "--out",
            str(out),
            "--quiet",
        ],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    low, high = json.loads((out / "summary.json").read_text())["overall"]["seller_score_ci"]
    assert low <= high
    r = subprocess.run(
        [sys.executable, "-c", no_plots, "report", str(out)], capture_output=True, text=True, env=ENV, timeout=300
    )
    assert r.returncode == 2 and "pip install numpy matplotlib" in r.stderr and "evals extra" in r.stderr
