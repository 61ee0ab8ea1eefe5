"""LLM parties behind providers that misbehave, through the real LiteLLM Router, against a fake
OpenAI-compatible server on loopback: a bad configuration is one line before anything runs, a
provider's failure is data on the episode, and a resume plays again what failed."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from evals.runner import RunOptions, plan, run_jobs
from evals.suites import get_suite
from negotiator.models.base import RAW_KEPT
from negotiator.runtime.episode import Episode
from negotiator.testing import FakeOpenAIServer, FakeReply

ENV = {**os.environ, "NEGOTIATOR_BLOCK_REMOTE": "1", "COLUMNS": "200"}
WALK = '{"action": "walk_away", "message": "Not today."}'


def cli(*args, env: dict | None = None, timeout: float = 300):
    return subprocess.run(
        [sys.executable, "-m", "negotiator", *args],
        capture_output=True,
        text=True,
        env={**ENV, **(env or {})},
        timeout=timeout,
    )


def eval_llm_buyer(buyer: str, base_url: str, out, *more: str):
    """``negotiator eval`` of rule/boulware against the LLM buyer ``buyer`` served at ``base_url``, quietly."""
    return cli(
        "eval", "--seller", "rule/boulware", "--buyer", buyer, "--buyer-base-url", base_url, "--out", str(out), "--quiet",
        *more,
    )  # fmt: skip


@pytest.mark.parametrize("url", ["{host}:{port}/v1", "ftp://{host}:{port}/v1", "http://{host}:notaport/v1"])
def test_a_base_url_that_is_not_an_http_address_is_one_line_before_any_negotiation(url, tmp_path):
    """Without a scheme the server check passed and every call then failed, after its retries and replays;
    a port that is not a number was a traceback."""
    with FakeOpenAIServer(lambda req: WALK) as server:
        host, port = server._server.server_address[:2]
        given = url.format(host=host, port=port)
        r = eval_llm_buyer("openai/m", given, tmp_path / "run", "--limit", "2")
        assert server.requests == []
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr.strip() == (
        f"error: base URL {given!r} for openai/m is not an http:// or https:// address: write it whole, "
        "e.g. http://127.0.0.1:8000/v1 (the server's OpenAI-compatible address)"
    )
    assert "Traceback" not in r.stderr and not (tmp_path / "run" / "episodes.jsonl").exists()


async def test_an_answer_with_no_choices_is_a_transient_provider_error_on_the_episode(tmp_path):
    """An empty ``choices`` list was an IndexError ('list index out of range', neither transient nor
    replayed, no word of the provider); it is the provider's failure, replayed like a 503."""
    jobs = plan(get_suite("quick"), "rule/boulware", ["openai/m"], limit=1)
    empty = {"id": "x", "object": "chat.completion", "created": 1, "model": "m", "choices": []}
    with FakeOpenAIServer(lambda req: FakeReply(body=empty)) as server:
        options = RunOptions(buyer_base_url=server.base_url, call_retries=0, retries=1, retry_delay=0.01)
        (ep,) = await run_jobs(jobs, tmp_path, options)
    assert len(server.requests) == 2  # played, then replayed once
    assert ep.outcome.ended_by == "error" and ep.labels["attempts"] == 2
    assert (ep.error.type, ep.error.party, ep.error.transient) == ("ProviderError", "buyer", True)
    assert ep.error.message == "the provider answered with no choices (an empty `choices` list)"


def test_a_resume_plays_again_only_the_negotiations_that_ended_in_an_error(tmp_path):
    """A provider that failed one negotiation past its retries: the run says how to play it again, and
    ``--resume`` replays that one only (it used to count it as done, so no resume ever retried it)."""
    run = tmp_path / "run"
    answers = [FakeReply(status=400)]  # the first call fails (permanently: no replay within the run)

    with FakeOpenAIServer(lambda req: answers.pop(0) if answers else WALK) as server:
        r = eval_llm_buyer(
            "openai/m", server.base_url, run, "--limit", "3", "--concurrency", "1", "--call-retries", "0"
        )
        assert r.returncode == 0, r.stdout + r.stderr
        said = " ".join(r.stdout.split())
        assert (
            "1 negotiation ended in an error" in said
            and f"`{sys.executable} -m negotiator eval --resume {run}` plays them again" in said
        )
        first = [Episode.model_validate_json(x) for x in (run / "episodes.jsonl").read_text().splitlines()]
        (failed,) = [e for e in first if e.error is not None]
        assert len(server.requests) == 3

        r = cli("eval", "--resume", str(run), "--quiet")
        assert r.returncode == 0, r.stdout + r.stderr
        assert len(server.requests) == 4  # the failed negotiation only
    said = " ".join(r.stdout.split())
    assert (
        f"playing again 1 negotiation that ended in an error (the failed episode kept in {run}/episodes.failed.jsonl)"
        in said
    )
    assert "2 of 3 negotiations already done" in said and "ended in an error" not in said.split("already done")[1]
    again = {
        e.episode_id: e for e in map(Episode.model_validate_json, (run / "episodes.jsonl").read_text().splitlines())
    }
    assert len(again) == 3 and all(e.error is None for e in again.values())
    assert again[failed.episode_id].outcome.ended_by == "walk_away"
    assert {e.episode_id: e for e in first if e.error is None}.items() <= again.items()  # the others untouched
    (kept,) = (run / "episodes.failed.jsonl").read_text().splitlines()
    assert Episode.model_validate_json(kept) == failed


async def test_an_answer_of_a_megabyte_is_kept_and_quoted_back_cut_to_its_first_characters(tmp_path):
    """A server that ignores max_tokens and answers a megabyte: each attempt's copy in the episode and the
    retry feedback sent back to the provider hold its first RAW_KEPT characters (they held all of it:
    tens of megabytes per episode, and each retry's request grew by a megabyte)."""
    jobs = plan(get_suite("quick"), "rule/boulware", ["openai/m"], limit=1)
    with FakeOpenAIServer(lambda req: "A" * 1_000_000) as server:
        options = RunOptions(buyer_base_url=server.base_url, call_retries=0, retries=0)
        (ep,) = await run_jobs(jobs, tmp_path, options)
    cut = "A" * RAW_KEPT + f" ... [{1_000_000 - RAW_KEPT} more characters not kept]"
    buyer_turns = [t for t in ep.turns if t.party == "buyer"]
    assert ep.error is None and buyer_turns and all(t.fallback for t in buyer_turns)
    assert all(t.raw_output == cut and [a.raw for a in t.invalid_attempts] == [cut] * 3 for t in buyer_turns)
    assert len(server.requests) == 3 * len(buyer_turns)  # each turn: the answer, then two retries
    assert max(len(json.dumps(r)) for r in server.requests) < 3 * RAW_KEPT + 20_000
    assert (tmp_path / "episodes.jsonl").stat().st_size < 20 * RAW_KEPT * len(buyer_turns)


@pytest.mark.parametrize(
    "role, param",
    [
        ("--buyer", "api_key"),
        ("--seller", "api_key"),
        ("--buyer", "aws_secret_access_key"),
        ("--seller", "azure_ad_token"),
    ],
)
def test_a_credential_in_a_spec_is_refused_unechoed_before_anything_is_written(role, param, tmp_path):
    """LiteLLM takes ``?api_key=`` from a spec and it worked, but the spec (the key in it) was written into
    config.json, summary.json and every episode."""
    spec = f"openai/m?{param}=sk-SECRET-0123&max_tokens=64"
    other = {"--buyer": "--seller", "--seller": "--buyer"}[role]
    with FakeOpenAIServer(lambda req: WALK) as server:
        r = cli(
            "eval",
            role,
            spec,
            other,
            f"rule/{'boulware' if other == '--seller' else 'conceder'}",
            f"{role}-base-url",
            server.base_url,
            "--limit",
            "1",
            "--out",
            str(tmp_path / "run"),
            "--quiet",
        )
        assert server.requests == []
    assert r.returncode == 2, r.stdout + r.stderr
    assert " ".join(r.stderr.split()) == (
        f"error: openai/m: ?{param}= puts a credential in the spec, which runs write into every episode; set it in "
        "the environment (OPENAI_API_KEY ..., NEGOTIATOR_MODEL_API_KEY for a server at a base URL)"
    )
    assert "SECRET" not in r.stdout + r.stderr and not (tmp_path / "run" / "config.json").exists()
    r = cli("play", "--seller", spec, "--seller-base-url", server.base_url)
    assert r.returncode == 2 and "puts a credential in the spec" in r.stderr and "SECRET" not in r.stdout + r.stderr


async def test_a_server_that_wants_a_key_gets_negotiator_model_api_key_and_a_401_says_so(tmp_path, monkeypatch):
    """An OpenAI-compatible server at a base URL never gets OPENAI_API_KEY (a key for OpenAI's own API); its
    401 said only 'AuthenticationError' in every episode, with nothing on which key was sent or where to set it."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-own")
    monkeypatch.delenv("NEGOTIATOR_MODEL_API_KEY", raising=False)
    jobs = plan(get_suite("quick"), "rule/boulware", ["openai/m"], limit=1)
    seen: list[str | None] = []

    def server_with_a_key(req):
        seen.append(server.headers[-1].get("authorization"))
        return WALK if seen[-1] == "Bearer k-123" else FakeReply(status=401)

    with FakeOpenAIServer(server_with_a_key) as server:
        (ep,) = await run_jobs(jobs, tmp_path / "without", RunOptions(buyer_base_url=server.base_url, retries=0))
        assert (
            ep.error.message.endswith("(the key for a server at a base URL comes from NEGOTIATOR_MODEL_API_KEY)")
            and not ep.error.transient
        )
        monkeypatch.setenv("NEGOTIATOR_MODEL_API_KEY", "k-123")
        (ep,) = await run_jobs(jobs, tmp_path / "with", RunOptions(buyer_base_url=server.base_url))
    assert ep.error is None and ep.outcome.ended_by == "walk_away"
    assert seen == ["Bearer not-needed", "Bearer k-123"]
    logged = b"".join(p.read_bytes() for p in tmp_path.rglob("*.jsonl"))
    assert b"k-123" not in logged and b"sk-openai-own" not in logged


def test_a_provider_s_missing_key_is_said_before_the_run_even_at_a_base_url(tmp_path):
    """anthropic/... behind a proxy at a base URL: the key check was skipped, and every negotiation then
    ended in LiteLLM's 'Missing Anthropic API Key' (exit 3 only after the whole batch)."""
    env = {k: v for k, v in ENV.items() if k not in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")}
    with FakeOpenAIServer(lambda req: WALK) as server:
        r = subprocess.run(
            [sys.executable, "-m", "negotiator", "eval", "--seller", "rule/boulware", "--buyer", "anthropic/claude-x"]
            + ["--buyer-base-url", server.base_url, "--limit", "2", "--out", str(tmp_path / "run"), "--quiet"],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
        assert server.requests == []
    assert r.returncode == 3, r.stdout + r.stderr
    assert " ".join(r.stderr.split()) == (
        f"model unreachable: anthropic/claude-x at {server.base_url} needs ANTHROPIC_API_KEY in the environment "
        "(LiteLLM sends that key to the base URL too). Set it, or call the server as openai/MODEL, which sends "
        "NEGOTIATOR_MODEL_API_KEY."
    )
    assert not (tmp_path / "run" / "episodes.jsonl").exists()


async def test_a_key_a_server_echoes_in_its_error_stays_out_of_the_episode(tmp_path, monkeypatch):
    """A proxy answering 401 'invalid key k-...' put the key into the episode's error, the summary and the
    terminal's line on errors."""
    monkeypatch.setenv("NEGOTIATOR_MODEL_API_KEY", "k-SECRET-model-key")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-SECRET-other")
    jobs = plan(get_suite("quick"), "rule/boulware", ["openai/m"], limit=1)

    def echo(req):
        said = f"invalid key {server.headers[-1]['authorization'].split()[-1]} (also tried sk-ant-SECRET-other)"
        return FakeReply(status=401, body={"error": {"message": said, "type": "invalid_request_error"}})

    with FakeOpenAIServer(echo) as server:
        (ep,) = await run_jobs(jobs, tmp_path, RunOptions(buyer_base_url=server.base_url))
    assert ep.error.message == (
        "AuthenticationError: OpenAIException - invalid key "
        "[redacted] (also tried [redacted]) (the key for a server at a base URL comes from NEGOTIATOR_MODEL_API_KEY)"
    )
    assert b"SECRET" not in (tmp_path / "episodes.jsonl").read_bytes()


NO_MESSAGE = {"id": "x", "object": "chat.completion", "created": 1, "model": "m", "choices": [{"index": 0}]}


@pytest.mark.parametrize(
    "reply, message, transient",
    [
        (FakeReply(status=429), "RateLimitError: OpenAIException - fake error 429", True),
        (FakeReply(status=503), "ServiceUnavailableError: OpenAIException - fake error 503", True),
        (FakeReply(status=400), "BadRequestError: OpenAIException - fake error 400", False),
        (FakeReply(body=NO_MESSAGE), "InternalServerError: OpenAIException - Invalid response object", True),
    ],
)
async def test_a_provider_error_is_recorded_in_the_provider_s_words_once(reply, message, transient, tmp_path):
    """The episode's error named the class three times ('RateLimitError: litellm.RateLimitError: RateLimitError:
    OpenAIException - ...') and an answer without a message ended in LiteLLM's 'Traceback (most recent call'."""
    jobs = plan(get_suite("quick"), "rule/boulware", ["openai/m"], limit=2)
    with FakeOpenAIServer(lambda req: reply) as server:
        options = RunOptions(buyer_base_url=server.base_url, call_retries=0, retries=0)
        episodes = await run_jobs(jobs, tmp_path, options)
    assert len(episodes) == 2 and len(server.requests) == 2
    for ep in episodes:
        assert (ep.error.message, ep.error.transient, ep.error.party) == (message, transient, "buyer")


@pytest.mark.parametrize("param", ["stream=true", "api_base=http://10.1.2.3:8000/v1", "num_retries=50"])
def test_a_spec_parameter_that_would_take_over_the_call_is_refused_before_the_run(param, tmp_path):
    """LiteLLM takes any parameter of a spec: ?stream=true ended every negotiation in "'_AsyncChatStream'
    object has no attribute 'choices'", ?api_base= sent the calls past the recorded base URL (and past
    NEGOTIATOR_BLOCK_REMOTE), ?num_retries= past --call-retries."""
    with FakeOpenAIServer(lambda req: WALK) as server:
        r = eval_llm_buyer(f"openai/m?{param}", server.base_url, tmp_path / "run", "--limit", "1")
        assert server.requests == []
    key = param.split("=")[0]
    assert r.returncode == 2, r.stdout + r.stderr
    said = " ".join(r.stderr.split())
    assert said.startswith(f"error: openai/m: ?{key}= is not a model setting a spec can give (") and said.endswith(
        "a spec's parameters are sampling settings such as temperature, top_p or max_tokens"
    )
    assert not (tmp_path / "run" / "config.json").exists()


def test_an_llm_buyer_that_cannot_decide_is_counted_and_said(tmp_path):
    """A buyer's unusable answers and fallback turns were on the episodes only: the summary counted the
    seller's, so a score against a buyer that mostly held by fallback read as a score against that model."""
    with FakeOpenAIServer(lambda req: "I would rather not say.") as server:
        host, port = server._server.server_address[:2]
        r = eval_llm_buyer("openai/m", f"http://{host}:{port}/v1", tmp_path / "run", "--limit", "2")
    assert r.returncode == 0, r.stderr[-2000:]
    episodes = [Episode.model_validate_json(x) for x in (tmp_path / "run" / "episodes.jsonl").read_text().splitlines()]
    buyer_turns = [t for e in episodes for t in e.turns if t.party == "buyer"]
    invalid = sum(len(t.invalid_attempts) for t in buyer_turns)
    fallbacks = sum(t.fallback for t in buyer_turns)
    assert fallbacks == len(buyer_turns) > 0 and invalid >= fallbacks  # every answer was unusable
    overall = json.loads((tmp_path / "run" / "summary.json").read_text())["overall"]
    assert (overall["buyer_invalid_actions"], overall["buyer_fallbacks"]) == (invalid, fallbacks)
    assert overall["invalid_actions"] == 0  # the seller's own column stays the seller's
    assert (
        f"the buyers' models gave {invalid} unusable answers; {fallbacks} buyer turns repeated the buyer's last "
        "offer because its model could not decide" in " ".join(r.stdout.split())
    )


def test_an_llm_buyer_whose_retries_all_worked_is_not_said_to_have_fallen_back(tmp_path):
    """A buyer answer that was unusable once and usable when asked again once printed "0 buyer turns repeated
    the buyer's last offer ...: scores against those buyers partly measure that fallback", of a run where no
    turn fell back."""
    answers = iter(["I would rather not say."])
    with FakeOpenAIServer(lambda req: next(answers, WALK)) as server:  # one negotiation: its calls come in turn
        host, port = server._server.server_address[:2]
        r = eval_llm_buyer("openai/m", f"http://{host}:{port}/v1", tmp_path / "run", "--limit", "1")
    assert r.returncode == 0, r.stderr[-2000:]
    overall = json.loads((tmp_path / "run" / "summary.json").read_text())["overall"]
    assert (overall["buyer_invalid_actions"], overall["buyer_fallbacks"]) == (1, 0)
    out = " ".join(r.stdout.split())
    assert "the buyers' models gave 1 unusable answers, each asked again until usable: no buyer turn fell back" in out
    assert "fallback)" not in out and "partly measure" not in out
