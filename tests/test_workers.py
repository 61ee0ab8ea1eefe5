"""Rule-vs-rule arms in several processes: the same episodes and summary as one process."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from evals.runner import RunOptions, plan, run_jobs
from evals.suites import get_suite
from evals.summary import summarize
from evals.workers import AUTO_MIN_JOBS, forked, resolve_workers
from negotiator.errors import UsageError
from negotiator.runtime.log import read_episodes

ENV = {**os.environ, "NEGOTIATOR_BLOCK_REMOTE": "1", "COLUMNS": "160"}
TIMING = re.compile(r'"([a-z_]*latency_s|wall_time_s|created_at)":[^,}]*')


def _played(path) -> list[str]:
    """The log's episodes without what the clock decides, in id order."""
    return sorted(TIMING.sub("", line) for line in path.read_text().splitlines())


def test_two_workers_write_the_episodes_and_summary_of_one_process(tmp_path):
    jobs = plan(get_suite("heldout"), "rule/boulware", shard=(0, 16))  # 72 negotiations, every persona
    one = asyncio.run(run_jobs(jobs, tmp_path / "one", RunOptions(concurrency=8)))
    seen = []
    with forked(jobs, tmp_path / "two", RunOptions(), workers=2) as play:
        rows = play(on_row=seen.append)
    assert len(rows) == len(jobs) == len(seen) and {r.episode_id for r in rows} == {j.episode_id for j in jobs}
    assert _played(tmp_path / "two" / "episodes.jsonl") == _played(tmp_path / "one" / "episodes.jsonl")
    assert summarize(rows) == summarize(one) == summarize(read_episodes(tmp_path / "two" / "episodes.jsonl"))
    assert len({r.scenario for r in rows}) > 1 and 0 < summarize(rows)["overall"]["deal_rate"] <= 1


def test_workers_play_only_what_the_log_lacks(tmp_path):
    jobs = plan(get_suite("quick"), "rule/linear", ["rule/boulware"])
    asyncio.run(run_jobs(jobs[:5], tmp_path, RunOptions()))
    with forked(jobs, tmp_path, RunOptions(), workers=2) as play:
        rows = play()
    ids = [json.loads(line)["episode_id"] for line in (tmp_path / "episodes.jsonl").read_text().splitlines()]
    assert len(rows) == len(jobs) - 5 and sorted(ids) == sorted(j.episode_id for j in jobs)


def test_auto_uses_one_process_per_core_only_for_a_large_rule_only_arm(monkeypatch):
    monkeypatch.setattr("evals.workers.cores", lambda: 2)
    heldout = plan(get_suite("heldout"), "rule/boulware")
    assert resolve_workers("auto", heldout) == 2 == resolve_workers(None, heldout)
    assert resolve_workers("auto", heldout[: AUTO_MIN_JOBS - 1]) == 1
    models = plan(get_suite("heldout"), "scripted/boulware")
    assert resolve_workers("auto", models) == 1
    assert resolve_workers("3", heldout) == 3


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("0", "at least 1"),
        ("many", "a number of processes"),
    ],
)
def test_bad_worker_counts_are_usage_errors(value, message):
    with pytest.raises(UsageError, match=message):
        resolve_workers(value, plan(get_suite("quick"), "rule/boulware"))


def test_model_parties_refuse_several_processes():
    with pytest.raises(UsageError, match="only rule-vs-rule arms"):
        resolve_workers(2, plan(get_suite("quick"), "scripted/boulware"))


def test_the_cli_with_workers_prints_and_records_what_one_process_does(tmp_path):
    base = [
        sys.executable,
        "-m",
        "negotiator",
        "eval",
        "--suite",
        "heldout",
        "--shard",
        "0/24",
        "--seller",
        "rule/conceder",
        "--quiet",
    ]
    out = {}
    for n in ("1", "2"):
        r = subprocess.run(
            [*base, "--workers", n, "--out", str(tmp_path / n)], env=ENV, capture_output=True, text=True, timeout=300
        )
        assert r.returncode == 0, r.stderr
        out[n] = r.stdout.replace(str(tmp_path / n), "OUT")
    assert out["1"] == out["2"] and "48 negotiations" in out["1"]
    assert (tmp_path / "1" / "summary.json").read_text() == (tmp_path / "2" / "summary.json").read_text()
    r = subprocess.run(
        [*base, "--workers", "2", "--seller", "scripted/boulware", "--out", str(tmp_path / "s")],
        env=ENV,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 2 and "only rule-vs-rule arms" in r.stdout + r.stderr and "Traceback" not in r.stderr


def test_a_run_in_workers_killed_mid_way_resumes_to_every_episode_once(tmp_path):
    args = [
        sys.executable,
        "-m",
        "negotiator",
        "eval",
        "--suite",
        "heldout",
        "--seller",
        "rule/boulware",
        "--workers",
        "2",
        "--quiet",
        "--out",
        str(tmp_path),
    ]
    proc = subprocess.Popen(args, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    log = tmp_path / "episodes.jsonl"
    deadline = time.monotonic() + 120
    while not (log.exists() and log.read_bytes().count(b"\n") >= 50):
        assert proc.poll() is None, proc.stderr.read().decode()
        assert time.monotonic() < deadline, "the run never got going"
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)  # the parent and its workers
    proc.wait()
    done = log.read_bytes().count(b"\n")
    assert 50 <= done < 1152, "the kill must land mid-way"
    r = subprocess.run(args, env=ENV, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    ids = [json.loads(line)["episode_id"] for line in log.read_text().splitlines()]
    assert len(ids) == len(set(ids)) == 1152
