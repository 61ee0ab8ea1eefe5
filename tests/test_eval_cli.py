"""`negotiator eval` and `negotiator report` as a user runs them: subprocesses, files, exit codes."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

ENV = {**os.environ, "NEGOTIATOR_BLOCK_REMOTE": "1", "COLUMNS": "160"}


def cli(*args, timeout: float = 600, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "negotiator", *args], capture_output=True, text=True, env=ENV, timeout=timeout, cwd=cwd
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
    # 48 negotiations of the held-out suite are its first 2 scenarios: no test at 95% can tell arms apart on 2
    verdict = "no detectable difference" if limit == "48" else "rule/boulware better"
    assert "Paired differences" in r.stdout and verdict in r.stdout
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
        (("report", "/nonexistent/run"), "does not exist"),
    ],
)
def test_bad_input_is_a_usage_error(args, message):
    r = cli(*args)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert message in r.stderr and "Traceback" not in r.stderr


def test_without_matplotlib_eval_and_report_still_run_and_say_what_to_install(tmp_path):
    """matplotlib comes with the evals extra (and the local one); the base install still evaluates, with its
    CIs, and reports without plots."""
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
    # issue 30: the report works without it, says the plots are left out and how to add them
    r = subprocess.run(
        [sys.executable, "-c", no_plots, "report", str(out)], capture_output=True, text=True, env=ENV, timeout=300
    )
    assert r.returncode == 0, r.stderr
    assert "left out: matplotlib is not installed" in r.stdout and "pip install 'negotiator-sdk[evals]'" in r.stdout
    html = (out / "report" / "report.html").read_text()
    assert "Plots left out" in html and "negotiator-sdk[evals]" in html and "data:image/png" not in html
    assert json.loads((out / "report" / "summary.json").read_text())["arms"][0]["summary"]["overall"]["n"] == 4
    assert not (out / "report" / "plots").exists()


# --- run folders as Inspect users expect them (issue 30) --------------------------------


def test_each_run_gets_its_own_folder_and_report_finds_the_runs_under_a_parent(tmp_path):
    """On main 8aea479 the default folder was runs/<suite>/<seller>: the quickstart's run with two chosen buyers,
    after a plain run, was refused ("already holds a different run"), and a report of two runs wrote ./report."""
    plain = cli("eval", "--seller", "rule/boulware", "--quiet", cwd=tmp_path)
    chosen = cli(
        "eval", "--seller", "rule/boulware", "--buyer", "rule/conceder", "--buyer", "rule/tit_for_tat", "--quiet",
        cwd=tmp_path,
    )  # fmt: skip
    other = cli("eval", "--seller", "rule/linear", "--quiet", cwd=tmp_path)
    assert plain.returncode == chosen.returncode == other.returncode == 0, (plain.stderr, chosen.stderr, other.stderr)
    runs = sorted(p for p in (tmp_path / "runs").iterdir())
    assert len(runs) == 3
    names = [p.name for p in runs]
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d_quick_rule_(boulware|linear)_vs_.+", n) for n in names), (
        names
    )
    assert any(n.endswith("_vs_rule_conceder+rule_tit_for_tat") for n in names)
    configs = [json.loads((p / "config.json").read_text()) for p in runs]
    assert all(c["suite_name"] == "quick" and c["created"] for c in configs)
    assert sorted(len(c["buyers"]) for c in configs) == [2, 4, 4]
    assert f"run folder: runs/{names[0]}" in plain.stdout or f"run folder: runs/{names[1]}" in plain.stdout
    # the parent of the runs (runs/ by default): every run inside, the report beside them, none in the working
    # directory
    r = cli("report", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    report = json.loads((tmp_path / "runs" / "report" / "summary.json").read_text())
    assert len(report["arms"]) == 3 and not (tmp_path / "report").exists()
    # two runs named: report/ in the folder that holds them both
    r = cli("report", f"runs/{names[0]}", f"runs/{names[-1]}", cwd=tmp_path)
    assert r.returncode == 0 and "runs/report/report.html" in r.stdout and not (tmp_path / "report").exists()
    # the runs are found, not any folder: a run inside a folder inside the parent too, and nothing else
    assert cli("report", str(tmp_path / "nothing-here"), cwd=tmp_path).returncode == 2
    (tmp_path / "empty").mkdir()
    r = cli("report", "empty", cwd=tmp_path)
    assert r.returncode == 2 and "no runs in empty" in r.stderr
    r = cli("report", cwd=tmp_path / "empty")
    assert r.returncode == 2 and "no runs/ folder here: run `negotiator eval` first" in r.stderr
    # --resume keeps working on a default folder
    r = cli("eval", "--resume", f"runs/{names[0]}", "--quiet", cwd=tmp_path)
    assert r.returncode == 0 and "negotiations already done" in r.stdout


def test_the_summary_defines_its_columns_and_shows_a_reference_from_the_folder(tmp_path):
    first = cli("eval", "--seller", "scripted/boulware", "--limit", "8", "--quiet", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    for column in ("seller score", "deal rate", "buyer score", "invalid", "guard", "errors"):
        (line,) = [x for x in first.stdout.splitlines() if x.startswith(column + " ")]
        assert len(line.split(None, len(column.split()))[-1]) > 20  # a definition on one line
    assert "0 = no deal, 1 = its best terms" in first.stdout
    assert "reference:" not in first.stdout and "negotiator eval --seller rule/boulware --suite quick" in first.stdout
    assert cli("eval", "--seller", "rule/boulware", "--quiet", cwd=tmp_path).returncode == 0
    again = cli("eval", "--seller", "scripted/boulware", "--limit", "8", "--quiet", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "│ reference: rule/boulware" in again.stdout
    m = re.search(r"reference: rule/boulware \(runs/\S+\) scored (\d\.\d{3}) on the same 8 negotiations", again.stdout)
    assert m, again.stdout
    (run,) = sorted(p for p in (tmp_path / "runs").iterdir() if "scripted" in p.name)[-1:]  # the latest
    reference = json.loads((run / "summary.json").read_text())["reference"]
    assert reference["seller"] == "rule/boulware" and reference["block"]["n"] == 8
    assert f"{reference['block']['seller_score']:.3f}" == m.group(1)
    d = reference["difference"]
    assert d["detectable"] == (d["p_value"] <= 0.05)


def test_a_reference_on_too_few_scenarios_says_so_instead_of_an_interval(tmp_path):
    """On 1 or 2 shared negotiations the reference line printed '+0.051 [-1.000, +1.000], p = 1.000': an
    interval no data could narrow (a sign-flip test over fewer than 6 scenarios cannot reject at 95%)."""
    assert cli("eval", "--seller", "rule/boulware", "--limit", "1", "--quiet", cwd=tmp_path).returncode == 0
    r = cli("eval", "--seller", "scripted/boulware", "--limit", "2", "--quiet", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    line = " ".join(r.stdout[r.stdout.index("reference:") :].replace("│", " ").split())
    assert re.search(
        r"reference: rule/boulware \(runs/\S+\) scored \d\.\d{3} on the same 1 negotiation; this seller - reference: "
        r"[+-]\d\.\d{3} over 1 scenario, too few to tell \(a 95% interval needs 6 or more\)",
        line,
    ), line
    assert "[-1.000, +1.000]" not in r.stdout


def test_ctrl_c_says_what_was_kept_and_how_to_resume(tmp_path):
    """On main 8aea479 Ctrl-C exited 130 saying only "interrupted"."""
    out = tmp_path / "run"
    log = out / "episodes.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-m", "negotiator", "eval", "--suite", "heldout", "--seller", "scripted/boulware",
         "--workers", "1", "--out", str(out), "--quiet"],
        env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        if log.is_file() and log.read_bytes().count(b"\n") >= 2:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    kept = log.read_bytes().count(b"\n")
    assert 2 <= kept < 1152
    assert (
        f"interrupted: kept {kept} of 1152 negotiations in {out}; resume with `{sys.executable} -m negotiator eval "
        f"--resume {out}`" in err  # as this test started it
    )
    assert "Traceback" not in err and err.count("interrupted") == 1  # said once


def test_the_eta_is_the_run_s_own_pace_and_waits_for_the_first_negotiation():
    """On main 8aea479 the ETA jumped from 1 s to 2:33: rich's column divides by the last 30 s' speed, and
    concurrent negotiations finish in waves. The run's own average does not jump with a wave."""
    from rich.progress import Task, TaskID

    from negotiator.cli.eval_cmd import StableETA

    now = [100.0]
    task = Task(TaskID(0), "quick", 24, 3, _get_time=lambda: now[0], fields={"done_before": 3})  # 3 resumed
    task.start_time = 100.0
    eta = StableETA()
    now[0] = 141.0  # 41 s, nothing finished yet this run: no pace to go by
    assert eta.render(task).plain == "ETA …"
    task.completed = 3 + 8  # a wave of 8 after 41 s ...
    assert eta.render(task).plain == "ETA 1:07"  # 41 s / 8 x the 13 left
    now[0] = 142.0
    task.completed = 3 + 9  # ... one more a second later: the estimate moves by seconds, not minutes
    assert eta.render(task).plain == "ETA 0:56"  # 42 s / 9 x 12


def test_the_commands_a_run_prints_run_as_typed(tmp_path):
    """After the README's set-up (`.venv/bin/negotiator eval`, no activated environment) the summary
    said `negotiator report runs`, which that shell cannot find: the commands to copy now start the
    way the program was started, and say plain `negotiator` when PATH finds it."""
    from pathlib import Path

    script = Path(sys.executable).with_name("negotiator")
    if not script.is_file():
        pytest.skip("the console script is not installed next to this interpreter")
    path_without = os.pathsep.join(p for p in ENV["PATH"].split(os.pathsep) if Path(p) != script.parent)
    args = ["eval", "--seller", "rule/boulware", "--limit", "1", "--quiet"]
    for argv, path, start in (
        ([str(script)], path_without, str(script)),
        ([sys.executable, "-m", "negotiator"], path_without, f"{sys.executable} -m negotiator"),
        (["negotiator"], f"{script.parent}{os.pathsep}{path_without}", "negotiator"),
    ):
        r = subprocess.run(
            [*argv, *args], capture_output=True, text=True, env={**ENV, "PATH": path}, cwd=tmp_path, timeout=300
        )
        assert r.returncode == 0, r.stderr
        assert f"watch:    {start} view runs" in r.stdout and f"compare:  {start} report runs " in r.stdout


def test_the_commands_a_run_prints_keep_a_spec_and_a_folder_whole(tmp_path):
    """A folder named `a [b]` lost its `[b]` to the console's markup (`--out /tmp/a /rule_boulware`), and a
    buyer spec with `?` went unquoted, which a shell reads as a pattern: each printed command, split as a shell
    splits it, now gives back what the run used."""
    import shlex

    out = tmp_path / "a [b]" / "run"
    buyer = "rule/boulware?e=0.5"
    r = cli("eval", "--seller", "scripted/boulware", "--buyer", buyer, "--limit", "1", "--quiet", "--out", str(out))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    (line,) = [ln for ln in lines if ln.startswith("for a point of comparison")]
    rule = shlex.split(line.split("(seconds, no model): ", 1)[1].split("; this summary")[0])
    assert rule[rule.index("--buyer") + 1] == buyer
    assert rule[rule.index("--out") + 1] == str(tmp_path / "a [b]" / "rule_boulware")
    (report,) = [ln for ln in lines if ln.startswith("report:   ")]
    assert shlex.split(report)[-1] == str(out)
    (watch,) = [ln for ln in lines if ln.startswith("watch:    ")]
    assert shlex.split(watch)[-1] == str(out.parent)
    assert f"episodes: {out / 'episodes.jsonl'}" in lines
