"""An evaluation's LiteLLM calls go through LiteLLM's Router, for real, to a fake provider on loopback:
rate limits, per-call retries, fallbacks, and the seller's generation settings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from evals.routing import build_routes, unused_limits
from evals.runner import RunOptions, plan, run_jobs
from evals.suites import get_suite
from negotiator.errors import RemoteRequestBlocked, UsageError
from negotiator.testing import FakeOpenAIServer, FakeReply

ENV = {**os.environ, "NEGOTIATOR_BLOCK_REMOTE": "1", "COLUMNS": "160"}
QUICK = get_suite("quick")


def walk_away(req) -> str:
    return json.dumps({"action": "walk_away", "message": "Not today."})


def cli(*args, timeout: float = 300):
    return subprocess.run(
        [sys.executable, "-m", "negotiator", *args], capture_output=True, text=True, env=ENV, timeout=timeout
    )


async def test_a_rate_limit_is_counted_by_the_router_per_model_and_minute(tmp_path):
    """3 calls a minute, no retries: the Router lets at most 3 a minute reach the provider and refuses the
    rest with a RateLimitError, which each negotiation records (transient: a replay would play it again)."""
    jobs = plan(QUICK, "hosted_vllm/m?strategy=none", ["rule/linear"], limit=6) * 1
    with FakeOpenAIServer(walk_away) as srv:
        first = time.gmtime().tm_min
        episodes = await run_jobs(
            jobs,
            tmp_path,
            RunOptions(
                concurrency=1, seller_base_url=srv.base_url, rate_limits={"hosted_vllm": 3}, call_retries=0, retries=0
            ),
        )
        minutes = 1 + (time.gmtime().tm_min != first)  # a test across a minute's turn may send 3 more
        assert 1 <= len(srv.requests) <= 3 * minutes
    limited = [e for e in episodes if e.error is not None]
    assert len(limited) >= len(jobs) - 3 * minutes
    assert all("RateLimitError" in e.error.message and e.error.transient for e in limited)


async def test_transient_errors_are_retried_per_call_by_the_router_and_permanent_ones_are_not(tmp_path):
    jobs = plan(QUICK, "hosted_vllm/m", ["rule/linear"], limit=1)
    for status, calls, transient in ((503, 3, True), (429, 3, True), (400, 1, False)):
        with FakeOpenAIServer(lambda req, status=status: FakeReply(status=status)) as srv:
            (ep,) = await run_jobs(
                jobs, tmp_path / str(status), RunOptions(seller_base_url=srv.base_url, call_retries=2, retries=0)
            )
        assert len(srv.requests) == calls and ep.error.transient is transient, status
    # the Router retried, not the agent as well: 1 + 2 calls, not (1 + 2) x (1 + 3)
    with FakeOpenAIServer(walk_away) as srv:
        (ep,) = await run_jobs(jobs, tmp_path / "ok", RunOptions(seller_base_url=srv.base_url))
    assert ep.error is None and ep.seller.spec == "hosted_vllm/m"


async def test_a_fallback_answers_when_the_primary_keeps_failing(tmp_path):
    """Two models of one (fake) vLLM host: m answers 503, backup answers; the negotiation is played."""
    jobs = plan(QUICK, "hosted_vllm/m?strategy=none", ["rule/linear"], limit=2)

    def host(req):
        return FakeReply(status=503) if req["model"] == "m" else walk_away(req)

    with FakeOpenAIServer(host) as srv:
        episodes = await run_jobs(
            jobs,
            tmp_path,
            RunOptions(
                seller_base_url=srv.base_url,
                call_retries=1,
                retries=0,
                fallbacks={"hosted_vllm/m": ["hosted_vllm/backup"]},
            ),
        )
    models = [r["model"] for r in srv.requests]
    assert all(e.error is None and e.outcome.ended_by == "walk_away" for e in episodes)
    assert models.count("backup") == 2 and models.count("m") == 4  # per call: m, m again (a retry), then backup


async def test_routes_refuse_what_they_cannot_route():
    parties = [("seller", "hosted_vllm/m", "http://127.0.0.1:9/v1"), ("buyer", "rule/linear", None)]
    kw = {"rate_limits": {}, "token_limits": {}, "call_retries": 1, "call_timeout": None}
    assert build_routes([("seller", "rule/boulware", None)], fallbacks={}, **kw) is None  # nothing to route
    with pytest.raises(UsageError, match="not a LiteLLM model of this run"):
        build_routes(parties, fallbacks={"openai/gpt-4o": ["hosted_vllm/b"]}, **kw)
    with pytest.raises(UsageError, match="a fallback is a LiteLLM model spec"):
        build_routes(parties, fallbacks={"hosted_vllm/m": ["rule/boulware"]}, **kw)
    with pytest.raises(RemoteRequestBlocked):  # a fallback to a provider would leave the machine in tests
        build_routes(parties, fallbacks={"hosted_vllm/m": ["openai/gpt-4o-mini"]}, **kw)
    routes = build_routes(
        parties, fallbacks={}, **{**kw, "rate_limits": {"hosted_vllm": 60}, "token_limits": {"hosted_vllm/m": 1000}}
    )
    (deployment,) = routes.router.registry().all()
    await routes.aclose()
    assert deployment["litellm_params"]["rpm"] == 60 and deployment["litellm_params"]["tpm"] == 1000
    assert unused_limits(["hosted_vllm/m", "rule/linear"], {"openai": 5, "hosted_vllm": 1}, {"rule": 3}) == [
        "openai",
        "rule",
    ]


def test_temperature_and_max_tokens_reach_the_seller_s_model_and_the_run_s_config(tmp_path):
    with FakeOpenAIServer(walk_away) as srv:
        out = tmp_path / "run"
        args = [
            "eval",
            "--seller",
            "hosted_vllm/m?strategy=none",
            "--seller-base-url",
            srv.base_url,
            "--buyer",
            "rule/linear",
        ]
        r = cli(*args, "--limit", "2", "--temperature", "0.3", "--max-tokens", "64", "--out", str(out), "--quiet")
        assert r.returncode == 0, r.stderr
        assert {(q.get("temperature"), q.get("max_tokens")) for q in srv.requests} == {(0.3, 64)}
        config = json.loads((out / "config.json").read_text())
        # written into the seller's spec, recorded there only: the spec and the flags are one arm
        assert config["seller"] == "hosted_vllm/m?strategy=none&temperature=0.3&max_tokens=64"
        assert (config["temperature"], config["max_tokens"]) == (None, None)
        # what a run measures: a resume at another temperature is refused, naming it
        r = cli("eval", "--resume", str(out), "--temperature", "0.9")
        assert r.returncode == 2 and "--temperature 0.9 differs from the run" in r.stderr
        r = cli("eval", "--resume", str(out), "--quiet")
        assert r.returncode == 0 and "2 of 2 negotiations already done" in r.stdout


def test_a_spec_s_own_settings_reach_the_model_and_flags_are_written_into_the_arm_s_name(tmp_path):
    """A spec's ?max_tokens= is what the model gets (the agent's default of 256 used to overwrite it);
    --temperature on a spec that sets its own is written into the seller's name, so the run folder and
    every episode say what it sampled at."""
    with FakeOpenAIServer(walk_away) as srv:
        own = tmp_path / "own"
        seller = "hosted_vllm/m?strategy=none&max_tokens=48"
        r = cli("eval", "--seller", seller, "--seller-base-url", srv.base_url, "--buyer", "rule/linear",
                "--limit", "1", "--out", str(own), "--quiet")  # fmt: skip
        assert r.returncode == 0, r.stderr
        assert {q.get("max_tokens") for q in srv.requests} == {48}
        srv.requests.clear()
        flagged = tmp_path / "flagged"
        seller = "hosted_vllm/m?strategy=none&temperature=0"
        r = cli("eval", "--seller", seller, "--seller-base-url", srv.base_url, "--buyer", "rule/linear",
                "--limit", "1", "--temperature", "2", "--out", str(flagged), "--quiet")  # fmt: skip
        assert r.returncode == 0, r.stderr
        assert {q.get("temperature") for q in srv.requests} == {2}
        named = "hosted_vllm/m?strategy=none&temperature=2"
        assert json.loads((flagged / "config.json").read_text())["seller"] == named
        episodes = [json.loads(line) for line in (flagged / "episodes.jsonl").read_text().splitlines()]
        assert [e["seller"]["spec"] for e in episodes] == [named]


@pytest.mark.parametrize(
    "args, message",
    [
        (("--temperature", "-0.5"), "--temperature -0.5: give a number 0 or above"),
        (("--temperature", "nan"), "--temperature nan: give a number 0 or above"),
        (("--max-tokens", "0"), "--max-tokens 0: give a number of tokens"),
        (("--token-limit", "openai"), "PROVIDER=TOKENS_PER_MINUTE"),
        (("--fallback", "openai/gpt-4o"), "write PRIMARY=BACKUP"),
        (("--fallback", "openai/gpt-4o=anthropic/claude-3-5-haiku-latest"), "not a LiteLLM model of this run"),
        (("--call-retries", "-1"), "--call-retries must be 0 or more"),
    ],
)
def test_bad_generation_and_routing_settings_are_usage_errors(args, message, tmp_path):
    r = cli("eval", "--seller", "rule/boulware", "--limit", "1", "--out", str(tmp_path / "run"), *args)
    assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_generation_settings_on_a_rule_seller_are_noted_and_a_limit_that_limits_nothing_is_warned(tmp_path):
    r = cli("eval", "--seller", "rule/boulware", "--limit", "1", "--temperature", "0", "--rate-limit", "openai=50",
            "--out", str(tmp_path / "run"), "--quiet")  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "--temperature set the seller's model; rule/boulware calls no model" in r.stdout
    assert "the limit on openai limits nothing in this run" in r.stdout
    assert json.loads((tmp_path / "run" / "config.json").read_text())["temperature"] == 0.0


def test_a_scripted_seller_s_flags_are_in_its_name_as_well(tmp_path):
    r = cli("eval", "--seller", "scripted/boulware", "--buyer", "rule/linear", "--limit", "1", "--temperature", "0.2",
            "--out", str(tmp_path / "run"), "--quiet")  # fmt: skip
    assert r.returncode == 0, r.stderr
    named = "scripted/boulware?temperature=0.2"
    assert json.loads((tmp_path / "run" / "config.json").read_text())["seller"] == named
    episode = json.loads((tmp_path / "run" / "episodes.jsonl").read_text().splitlines()[0])
    assert episode["seller"]["spec"] == named
