"""Buyer personas: their utility, reservation and style, for rule-based and LLM buyers."""

from __future__ import annotations

import json

import pytest

from evals.runner import Job, RunOptions, make_buyer, plan, run_job
from evals.suites import get_suite
from negotiator.buyers.personas import NEUTRAL, PERSONAS, aspect, get_persona, persona_scenario
from negotiator.domain.metrics import analysis
from negotiator.errors import UsageError
from negotiator.sim import generate, make_party, run_negotiation
from negotiator.testing import FakeOpenAIServer


def price_key(scenario):
    return next(k for k in scenario.buyer.weights if aspect(k) == "price")


def test_twelve_personas_each_with_style_tactic_and_a_utility_change():
    assert len(PERSONAS) == 12
    for p in PERSONAS.values():
        assert p.style and p.title
        make_party(p.rule_spec, "buyer")  # a valid rule tactic
        assert p.emphasis or p.reservation_shift or p.name == "friendly_haggler"
    assert {
        "budget_student",
        "procurement_officer",
        "impatient",
        "friendly_haggler",
        "aggressive_anchorer",
        "walkaway_threatener",
        "bundle_seeker",
        "quality_first",
    } <= set(PERSONAS)


def test_a_persona_changes_the_buyers_utility_and_reservation_not_the_sellers():
    base = generate(10_100_000, "retail_electronics")
    k = price_key(base)
    student = persona_scenario(base, "budget_student")
    quality = persona_scenario(base, "quality_first")
    shopper = persona_scenario(base, "comparison_shopper")
    assert student.id == f"{base.id}~budget_student"
    assert (
        student.seller == base.seller and student.seller_limits == base.seller_limits and student.issues == base.issues
    )
    assert student.buyer.weights[k] > base.buyer.weights[k] > quality.buyer.weights[k]
    assert quality.buyer.weights["warranty_months"] > base.buyer.weights["warranty_months"]
    assert abs(sum(student.buyer.weights.values()) - 1) < 1e-9
    assert shopper.buyer.reservation > base.buyer.reservation
    assert persona_scenario(base, "impatient").buyer.reservation < base.buyer.reservation
    assert persona_scenario(base, NEUTRAL) is base


def test_every_heldout_persona_scenario_keeps_a_zone_of_agreement():
    for _, _, s in get_suite("heldout").negotiations():
        assert analysis(s).best_joint_margin >= 0.05 or s.buyer.reservation == 0.0


def test_unknown_persona_is_a_usage_error():
    with pytest.raises(UsageError, match="unknown persona 'hipster'"):
        get_persona("hipster")


async def test_rule_persona_buyer_plays_the_personas_own_tactic():
    suite = get_suite("heldout")
    jobs = {j.persona: j for j in plan(suite, "rule/boulware", ["rule/persona"], limit=12)}
    impatient, anchorer = jobs["impatient"], jobs["aggressive_anchorer"]
    b1, b2 = make_buyer(impatient, RunOptions()), make_buyer(anchorer, RunOptions())
    assert (b1.tactic, b1.strategy.schedule.exponent) == ("conceder", 4.0) and (
        b2.tactic,
        b2.strategy.schedule.exponent,
    ) == ("boulware", 0.12)
    assert b1.spec == b2.spec == "rule/persona"
    ep1 = await run_negotiation(
        make_party("rule/boulware", "seller"),
        b1,
        impatient.scenario,
        labels=impatient.labels,
        persona=impatient.persona,
    )
    ep2 = await run_negotiation(
        make_party("rule/boulware", "seller"), b2, anchorer.scenario, labels=anchorer.labels, persona=anchorer.persona
    )
    assert ep1.buyer.persona == "impatient" and ep1.buyer.spec == "rule/persona"
    # The conceder gives ground faster: a deal sooner, and better for the seller.
    assert ep1.metrics.rounds < ep2.metrics.rounds
    assert ep1.metrics.seller_score > ep2.metrics.seller_score


async def test_llm_buyer_gets_the_persona_style_and_the_persona_utility_through_litellm():
    """A real LiteLLM call to a loopback OpenAI-compatible server: the persona's style is in
    the buyer's instructions and its weights in the rendered priorities."""
    seen = []

    def handler(req):
        system = req["messages"][0]["content"]
        seen.append(system)
        return json.dumps({"action": "walk_away", "message": "Not for me."})

    suite = get_suite("heldout")
    job = next(j for j in plan(suite, "rule/boulware", ["hosted_vllm/fake"], limit=12) if j.persona == "budget_student")
    with FakeOpenAIServer(handler) as server:
        buyer = make_buyer(job, RunOptions(buyer_base_url=server.base_url))
        ep = await run_negotiation(
            make_party("rule/boulware", "seller"), buyer, job.scenario, labels=job.labels, persona=job.persona
        )
    style = PERSONAS["budget_student"].style
    assert seen and all(style in s for s in seen)
    k = price_key(job.scenario)
    assert f"{k} {round(100 * job.scenario.buyer.weights[k])}%" in seen[0]
    assert ep.outcome.ended_by == "walk_away" and ep.buyer.persona == "budget_student" and ep.buyer.family == "fake"


async def test_make_buyer_for_a_job_without_persona_is_neutral(scenario):
    job = Job("x", scenario, "rule/boulware", "rule/linear", 0)
    assert (await run_job(job, RunOptions())).buyer.persona == "neutral"
