"""The runner: a killed run resumes to the same result; provider faults are retried or recorded; limits hold."""

from __future__ import annotations

import collections
import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from evals.runner import RunOptions, plan, provider, run_jobs
from evals.suites import get_suite
from negotiator.llm.graph import RetryPolicy
from negotiator.runtime.log import read_episodes
from negotiator.testing import FakeOpenAIServer, FakeReply

ENV = {**os.environ, "NEGOTIATOR_BLOCK_REMOTE": "1", "COLUMNS": "160"}
FAST = RetryPolicy(max_retries=1, initial_delay=0.001, max_delay=0.002, timeout=5.0)


def _lines(path) -> int:
    try:
        with open(path, "rb") as f:
            return f.read().count(b"\n")
    except FileNotFoundError:
        return 0


def test_a_run_killed_mid_way_resumes_to_every_episode_exactly_once_and_the_same_summary(tmp_path):
    n = 96
    args = [
        sys.executable,
        "-m",
        "negotiator",
        "eval",
        "--suite",
        "heldout",
        "--seller",
        "scripted/boulware?latency=0.01",
        "--limit",
        str(n),
        "--concurrency",
        "4",
        "--quiet",
    ]
    killed, clean = tmp_path / "killed", tmp_path / "clean"
    # The uninterrupted run goes alongside the one we kill (the machine has cores to spare for it).
    uninterrupted = subprocess.Popen(
        [*args, "--out", str(clean)], env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    proc = subprocess.Popen([*args, "--out", str(killed)], env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while _lines(killed / "episodes.jsonl") < 20:
        assert proc.poll() is None, proc.stderr.read().decode()
        assert time.monotonic() < deadline, "the run never got going"
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done_at_kill = _lines(killed / "episodes.jsonl")
    assert 20 <= done_at_kill < n, "the kill must land mid-way"

    r = subprocess.run([*args, "--out", str(killed)], env=ENV, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "already done" in r.stdout
    assert uninterrupted.wait(timeout=300) == 0, uninterrupted.stderr.read().decode()

    lines = (killed / "episodes.jsonl").read_text().splitlines()
    ids = collections.Counter(json.loads(line)["episode_id"] for line in lines)
    planned = {j.episode_id for j in plan(get_suite("heldout"), "scripted/boulware?latency=0.01", limit=n)}
    assert set(ids) == planned and set(ids.values()) == {1} and len(lines) == n
    assert json.loads((killed / "summary.json").read_text()) == json.loads((clean / "summary.json").read_text())
    a = {e.episode_id: e for e in read_episodes(killed / "episodes.jsonl")}
    b = {e.episode_id: e for e in read_episodes(clean / "episodes.jsonl")}
    assert all(a[k].outcome == b[k].outcome and a[k].metrics.seller_score == b[k].metrics.seller_score for k in planned)


async def test_provider_faults_are_retried_and_persistent_ones_recorded_as_errors(tmp_path):
    """The seller is a real LiteLLM model on a loopback server that fails on purpose: an outage
    (503) at the start, 429s and calls slower than the timeout sprinkled in, and one product
    whose calls always fail. Every negotiation ends as exactly one episode."""
    jobs = plan(get_suite("quick"), "hosted_vllm/fake?strategy=none", ["rule/linear"])
    doomed = "packaging film"
    lock, count = threading.Lock(), collections.Counter()

    def handler(req):
        system = req["messages"][0]["content"]
        with lock:
            count["all"] += 1
            n = count["all"]
            if doomed in system:
                count["doomed"] += 1
                return FakeReply(status=503)
        if n <= 4:
            return FakeReply(status=503)  # an outage: the per-call retry also fails, the episode is replayed
        if n % 5 == 0:
            return FakeReply(status=429)
        if n % 7 == 0:
            return FakeReply(
                text='{"action": "walk_away", "message": "late"}', delay=30.0
            )  # far beyond the call timeout
        return '{"action": "walk_away", "message": "Not today."}'

    with FakeOpenAIServer(handler) as server:
        options = RunOptions(
            concurrency=3,
            seller_base_url=server.base_url,
            call_retries=1,  # LiteLLM's Router retries each call once
            call_timeout=2.0,
            retries=2,
            retry_delay=0.01,
        )  # a busy machine's ordinary call stays well under
        episodes = await run_jobs(jobs, tmp_path, options)

    logged = read_episodes(tmp_path / "episodes.jsonl")
    assert len(episodes) == len(jobs) == 6 and sorted(e.episode_id for e in logged) == sorted(
        j.episode_id for j in jobs
    )
    failed = [e for e in logged if e.error is not None]
    assert [e.scenario.product.name for e in failed] == [doomed]
    err = failed[0].error
    assert err.type == "ProviderError" and err.transient and err.party == "seller" and "503" in err.message
    assert failed[0].labels["attempts"] == 3  # played, then replayed twice
    assert count["doomed"] == 3 * 2  # each play: the call and its one retry
    ok = [e for e in logged if e.error is None]
    assert all(e.outcome.ended_by == "walk_away" and e.outcome.ended_by_party == "seller" for e in ok)
    assert any(e.labels.get("attempts", 1) > 1 for e in ok)  # the outage was survived by a replay


async def test_timeouts_from_a_scripted_model_end_as_error_episodes_not_lost(tmp_path):
    jobs = plan(get_suite("quick"), "scripted/boulware?latency=0.5", ["rule/linear"], limit=3)
    options = RunOptions(concurrency=3, seller_options={"retry": FAST}, call_timeout=0.05, retries=1, retry_delay=0.01)
    episodes = await run_jobs(jobs, tmp_path, options)
    assert len(read_episodes(tmp_path / "episodes.jsonl")) == 3
    for e in episodes:
        assert e.outcome.ended_by == "error" and e.error.transient and "timed out after 0.05s" in e.error.message
        assert e.labels["attempts"] == 2


async def test_a_permanent_error_is_not_replayed(tmp_path):
    episodes = await run_jobs(
        plan(get_suite("quick"), "scripted/error", ["rule/linear"], limit=2),
        tmp_path,
        RunOptions(retries=3, retry_delay=0.01),
    )
    assert all(
        e.error.type == "ProviderError" and not e.error.transient and "attempts" not in e.labels for e in episodes
    )


async def test_run_jobs_again_plays_the_negotiations_that_ended_in_an_error(tmp_path):
    """The CLI's resume replayed error episodes; run_jobs, the same run from Python, counted them as done."""
    jobs = plan(get_suite("quick"), "scripted/error", ["rule/linear"], limit=2)
    first = await run_jobs(jobs, tmp_path, RunOptions(retries=0))
    again = await run_jobs(jobs, tmp_path, RunOptions(retries=0))
    assert len(first) == len(again) == 2 and all(e.error is not None for e in first + again)
    assert sorted(e.episode_id for e in again) == sorted(j.episode_id for j in jobs)
    assert len(read_episodes(tmp_path / "episodes.jsonl")) == 2  # each negotiation once in the log
    assert len(read_episodes(tmp_path / "episodes.failed.jsonl")) == 2  # the first tries, kept


async def test_concurrency_overlaps_model_latency(tmp_path, monkeypatch):
    """Six workers keep six model calls in flight at once (counted, not timed: a busy machine
    stretches the wall clock but not the overlap)."""
    from negotiator.models.scripted import ScriptedModel

    in_flight, peak = 0, 0
    real_complete = ScriptedModel.complete

    async def counted(self, request):
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        try:
            return await real_complete(self, request)
        finally:
            in_flight -= 1

    monkeypatch.setattr(ScriptedModel, "complete", counted)
    jobs = plan(get_suite("quick"), "scripted/boulware?latency=0.2", ["rule/linear"])
    eps = await run_jobs(jobs, tmp_path, RunOptions(concurrency=6))
    assert len(eps) == len(jobs) >= 6 and all(e.error is None for e in eps)
    assert peak == 6


def test_provider_of_a_spec():
    assert [provider(s) for s in ("openai/gpt-4o", "anthropic/claude-x", "hosted_vllm/m?x=1", "scripted/boulware")] == [
        "openai",
        "anthropic",
        "hosted_vllm",
        "scripted",
    ]


@pytest.mark.parametrize(
    "bad, message",
    [
        ({"concurrency": 0}, "at least 1"),
        ({"retries": -1}, "0 or more"),
        ({"call_timeout": 0}, "positive"),
        ({"rate_limits": {"openai": 0}}, "calls per minute"),
        ({"token_limits": {"openai": float("nan")}}, "tokens per minute"),
        ({"call_retries": -1}, "0 or more"),
        ({"call_timeout": float("inf")}, "positive"),
    ],
)
async def test_bad_run_options(tmp_path, bad, message):
    from negotiator.errors import UsageError

    with pytest.raises(UsageError, match=message):
        await run_jobs([], tmp_path, RunOptions(**bad))


async def test_episodes_are_written_in_batches_and_a_write_failure_stops_the_run(tmp_path, monkeypatch):
    from negotiator.runtime.log import EpisodeLog

    batches = []
    real = EpisodeLog.append_many

    def counting(self, episodes):
        batches.append(len(episodes))
        real(self, episodes)

    monkeypatch.setattr(EpisodeLog, "append_many", counting)
    jobs = plan(get_suite("heldout"), "rule/boulware", limit=96)
    await run_jobs(jobs, tmp_path / "ok", RunOptions(concurrency=16))
    assert sum(batches) == 96 and len(batches) < 96  # group commit: fewer fsyncs than episodes
    assert len(read_episodes(tmp_path / "ok" / "episodes.jsonl")) == 96

    def full(self, episodes):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(EpisodeLog, "append_many", full)
    with pytest.raises(OSError, match="No space left"):
        await run_jobs(jobs, tmp_path / "full", RunOptions(concurrency=4))
