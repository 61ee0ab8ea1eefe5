"""Real LiteLLM routing to a real OpenAI-compatible HTTP server on loopback."""

from __future__ import annotations

import json

import pytest

from negotiator import SellerAgent
from negotiator.errors import RemoteRequestBlocked
from negotiator.sim import generate, make_party, run_negotiation
from negotiator.testing import FakeOpenAIServer, FakeReply


async def test_seller_drives_any_openai_compatible_base_url(seller_first):
    terms = seller_first.seller.ideal(seller_first.space)
    answer = json.dumps({"action": "make_offer", "message": "Welcome!", "terms": terms})
    with FakeOpenAIServer(lambda req: answer, model="google/gemma-3-1b-it") as srv:
        agent = SellerAgent("hosted_vllm/google/gemma-3-1b-it", base_url=srv.base_url, strategy=None)
        turn = await agent.respond(seller_first)
    assert turn.action.terms == terms and turn.usage.prompt_tokens > 0
    req = srv.requests[0]
    assert req["model"] == "google/gemma-3-1b-it"
    # vLLM takes a JSON schema for structured outputs: the agent asks for it.
    schema = req["response_format"]["json_schema"]["schema"]
    assert "anyOf" in schema or schema.get("properties", {}).get("action")
    assert req["messages"][0]["role"] == "system"


async def test_tool_mode_through_litellm(seller_first):
    terms = seller_first.seller.ideal(seller_first.space)
    reply = FakeReply(tool_call=("make_offer", {"terms": terms, "message": "hi"}))
    with FakeOpenAIServer(lambda req: reply) as srv:
        agent = SellerAgent("openai/fake-model", base_url=srv.base_url, mode="tools", strategy=None)
        turn = await agent.respond(seller_first)
    assert turn.action.terms == terms
    req = srv.requests[0]
    assert [t["function"]["name"] for t in req["tools"]] == ["make_offer", "walk_away"]
    assert "response_format" not in req


async def test_provider_http_errors_are_retried_then_recorded(seller_first, fast_retry):
    terms = seller_first.seller.ideal(seller_first.space)
    answers = [
        FakeReply(status=503),
        FakeReply(status=429),
        json.dumps({"action": "make_offer", "message": "", "terms": terms}),
    ]
    with FakeOpenAIServer(lambda req: answers.pop(0)) as srv:
        turn = await SellerAgent("hosted_vllm/m", base_url=srv.base_url, retry=fast_retry, strategy=None).respond(
            seller_first
        )
        assert turn.action.terms == terms and len(srv.requests) == 3
    with FakeOpenAIServer(lambda req: FakeReply(status=500)) as srv:
        ep = await run_negotiation(
            SellerAgent("hosted_vllm/m", base_url=srv.base_url, retry=fast_retry),
            make_party("rule/linear", "buyer"),
            seller_first,
        )
        assert ep.outcome.ended_by == "error" and ep.error.transient and len(srv.requests) == 4
    with FakeOpenAIServer(lambda req: FakeReply(status=400)) as srv:
        ep = await run_negotiation(
            SellerAgent("hosted_vllm/m", base_url=srv.base_url, retry=fast_retry),
            make_party("rule/linear", "buyer"),
            seller_first,
        )
        assert ep.outcome.ended_by == "error" and not ep.error.transient and len(srv.requests) == 1


async def test_llm_buyer_through_litellm(scenario):
    buyer_terms = scenario.buyer.ideal(scenario.space)
    with FakeOpenAIServer(
        lambda req: json.dumps({"action": "make_offer", "message": "Too pricey.", "terms": buyer_terms})
    ) as srv:
        buyer = make_party(
            "hosted_vllm/buyer-model", "buyer", base_url=srv.base_url, instructions="You are a budget-bound student."
        )
        ep = await run_negotiation(make_party("rule/boulware", "seller"), buyer, scenario)
    assert ep.buyer.spec == "hosted_vllm/buyer-model"
    assert ep.turns[0].action.terms == buyer_terms
    system = srv.requests[0]["messages"][0]["content"]
    assert "You are the buyer" in system and "budget-bound student" in system
    # the buyer's prompt carries the buyer's own preferences, never the seller's floor
    assert f"{scenario.seller_limits.minimum['price']:g}" not in json.dumps(srv.requests)


async def test_requests_to_real_providers_fail_loudly_in_tests(seller_first):
    with pytest.raises(RemoteRequestBlocked):
        await SellerAgent("openai/gpt-4o-mini").respond(seller_first)
    with pytest.raises(RemoteRequestBlocked):
        await run_negotiation(SellerAgent("anthropic/claude-sonnet-4"), make_party("rule/linear", "buyer"), generate(1))
