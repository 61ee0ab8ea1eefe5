"""The assisted seller: the strategy's options in the view, a choice in the answer."""

from __future__ import annotations

import json

import jsonschema
import pytest

from negotiator import MakeOffer, SellerAgent
from negotiator.actions import Accept
from negotiator.errors import UsageError
from negotiator.llm.assist import answer_schema, answer_tools
from negotiator.llm.guard import Guard
from negotiator.llm.prompt import render_messages
from negotiator.models import ScriptedModel
from negotiator.party import PartyView, PublicMove
from negotiator.sim import generate, make_party, run_negotiation
from negotiator.strategy import Strategy

# A business may open several candidates to its model (``?candidates=3``); the default is one.
THREE = Strategy(candidates=3)


def choice(cid: str, message: str = "How about this?") -> str:
    return json.dumps({"action": "make_offer", "choice": cid, "message": message})


def mid_negotiation(scenario, rounds: int = 2):
    """A transcript a few rounds in, played by rule parties, ending on the buyer's offer."""
    seller, buyer = make_party("rule/boulware", "seller"), make_party("rule/linear", "buyer")
    moves: list[PublicMove] = []
    while True:
        role = scenario.opener if len(moves) % 2 == 0 else ("buyer" if scenario.opener == "seller" else "seller")
        party = seller if role == "seller" else buyer
        action = party.decide(PartyView.of(scenario, role, moves))
        moves.append(PublicMove(party=role, action=action))
        if role == "buyer" and len(moves) >= 2 * rounds:
            return moves


async def test_the_model_picks_an_option_and_the_offer_is_that_option(scenario):
    moves = mid_negotiation(scenario)
    model = ScriptedModel([choice("B")])
    turn = await SellerAgent(model, mode="json", strategy=THREE).respond(scenario, moves)
    advice = THREE.advise(PartyView.of(scenario, "seller", moves).situation())
    assert isinstance(turn.action, MakeOffer) and turn.action.terms == advice.candidate("B").terms
    assert turn.advice.chosen == "B" and turn.advice.recommended == "A" and turn.advice.options[:3] == ["A", "B", "C"]
    # The view shows the options with their worth, and the schema allows only those ids.
    req = model.requests[0]
    shown = req.messages[-1]["content"]
    for c in advice.candidates:
        assert f"{c.id}: {json.dumps(c.terms)} (worth {c.worth:.2f} to you)" in shown
    assert "Recommended: A." in shown
    variant = req.response_schema if "anyOf" not in req.response_schema else req.response_schema["anyOf"][0]
    assert variant["properties"]["choice"] == {"enum": ["A", "B", "C"]}


async def test_an_unknown_option_is_refused_and_the_model_retries(scenario):
    moves = mid_negotiation(scenario)
    model = ScriptedModel([choice("Z"), choice("C")])
    turn = await SellerAgent(model, mode="json", strategy=THREE).respond(scenario, moves)
    assert len(turn.invalid_attempts) == 1 and "not one of the options" in turn.invalid_attempts[0].error
    assert "A, B, C" in turn.invalid_attempts[0].error
    assert turn.advice.chosen == "C" and not turn.fallback


def test_the_answer_schema_refuses_an_unknown_candidate_id(scenario):
    moves = mid_negotiation(scenario)
    advice = THREE.advise(PartyView.of(scenario, "seller", moves).situation())
    schema = answer_schema(advice, scenario.space)
    jsonschema.validate({"action": "make_offer", "choice": "A", "message": "ok"}, schema)
    for bad in (
        {"action": "make_offer", "choice": "Z", "message": "ok"},
        {"action": "make_offer", "message": "ok", "terms": advice.candidates[0].terms},  # own terms are off by default
        {"action": "walk_away", "message": "bye"},  # walking away is off by default
    ):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)
    tools = {t["function"]["name"]: t for t in answer_tools(advice, scenario.space)}
    assert list(advice.choices) == ["A", "B", "C"]
    assert tools["make_offer"]["function"]["parameters"]["properties"]["choice"]["enum"] == list(advice.choices)
    assert set(tools) == set(advice.actions)


async def test_accepting_is_open_only_when_the_strategy_allows_it(scenario):
    moves = mid_negotiation(scenario, rounds=1)
    advice = Strategy().advise(PartyView.of(scenario, "seller", moves).situation())
    assert not advice.can_accept
    model = ScriptedModel(['{"action": "accept", "message": "Deal"}', choice("A")])
    turn = await SellerAgent(model, mode="json").respond(scenario, moves)
    assert "'accept' is not open now" in turn.invalid_attempts[0].error and isinstance(turn.action, MakeOffer)


async def test_when_every_answer_is_unusable_the_strategy_plays_alone(scenario):
    moves = mid_negotiation(scenario)
    agent = SellerAgent("scripted/garbage", mode="json")
    turn = await agent.respond(scenario, moves)
    advice = agent.strategy.advise(PartyView.of(scenario, "seller", moves).situation())
    assert turn.fallback and turn.action.terms == advice.candidates[0].terms


async def test_the_chat_stays_append_only_with_advice_in_every_turn(seller_first):
    strategy = Strategy()
    seller = make_party("rule/boulware", "seller")
    buyer = make_party("rule/conceder", "buyer")
    moves: list[PublicMove] = []
    previous = None
    for turn in range(8):
        role = "seller" if turn % 2 == 0 else "buyer"
        view = PartyView.of(seller_first, role, moves)
        if role == "seller":
            chat = render_messages(view, strategy=strategy)
            if previous is not None:
                assert chat[: len(previous)] == previous  # what the model read before is unchanged
            assert "Your options:" in chat[-1]["content"] or "accept it" in chat[-1]["content"]
            action = (seller if role == "seller" else buyer).decide(view)
            previous = chat
        else:
            action = buyer.decide(view)
        moves.append(PublicMove(party=role, action=action))


@pytest.mark.parametrize(
    "seed, rule, assisted, buyer",
    [
        *((s, "rule/responsive", "scripted/boulware", "rule/tit_for_tat") for s in range(4)),  # the default strategy
        *(
            (s, "rule/responsive", "scripted/boulware", "rule/threat") for s in range(4, 6)
        ),  # it reads the buyer's words
        *((s, "rule/boulware?noise=0", "scripted/boulware?strategy=boulware", "rule/tit_for_tat") for s in range(6, 8)),
        # the decision menu: a model that always takes the recommended move is the responsive rule
        *(
            (s, "rule/responsive", "scripted/boulware?menu=moves", b)
            for s, b in enumerate(("rule/tit_for_tat", "rule/threat", "rule/holdout", "rule/micro", "rule/conceder"), 8)
        ),
    ],
)
async def test_a_model_that_takes_every_recommendation_plays_the_rule_seller_exactly(seed, rule, assisted, buyer):
    """The assisted LLM seller and the rule seller are one machinery: with a model that always
    takes the recommendation, they make the same moves (the rule's target noise off)."""
    sc = generate(seed)
    by_rule = await run_negotiation(make_party(rule, "seller"), make_party(buyer, "buyer"), sc, seed)
    by_model = await run_negotiation(make_party(assisted, "seller"), make_party(buyer, "buyer"), sc, seed)
    assert [(t.party, t.action.action, t.action.terms) for t in by_rule.turns] == [
        (t.party, t.action.action, t.action.terms) for t in by_model.turns
    ]
    assert by_rule.metrics.seller_score == by_model.metrics.seller_score


def test_spec_strings_carry_the_strategy():
    default = make_party("scripted/boulware", "seller").strategy
    assert (default.name, default.reader, default.learner) == ("responsive", "keywords", "choice")
    assert make_party("scripted/boulware?strategy=boulware", "seller").strategy.name == "boulware"
    tuned = make_party("scripted/boulware?lead=0.3&rho=0.5&reader=none&opponent=frequency", "seller").strategy
    assert (tuned.schedule.lead, tuned.schedule.reciprocity, tuned.reader, tuned.learner) == (
        0.3,
        0.5,
        None,
        "frequency",
    )
    assert make_party("scripted/boulware?strategy=none", "seller").strategy is None
    s = make_party("scripted/boulware?strategy=linear&leeway=0.05&latency=0", "seller")
    assert (s.strategy.name, s.strategy.leeway, s.spec) == (
        "linear",
        0.05,
        "scripted/boulware?strategy=linear&leeway=0.05&latency=0",
    )
    assert SellerAgent("scripted/boulware", strategy="conceder").strategy.name == "conceder"
    with pytest.raises(UsageError, match="unknown strategy 'bogus'"):
        make_party("scripted/boulware?strategy=bogus", "seller")
    with pytest.raises(UsageError, match="takes no strategy settings"):
        make_party("scripted/boulware?strategy=none&leeway=0.1", "seller")
    with pytest.raises(UsageError, match="leeway"):
        make_party("scripted/boulware?leeway=2", "seller")


@pytest.mark.parametrize("seed", range(6))
async def test_a_repaired_offer_goes_to_the_target_not_the_floor(seed):
    sc = generate(seed)
    ep = await run_negotiation(
        make_party("scripted/hostile?strategy=none", "seller"), make_party("rule/boulware", "buyer"), sc, seed
    )
    floor = sc.seller_limits.utility_floor(sc.seller)
    repaired = [
        t
        for t in ep.turns
        if t.party == "seller" and t.guard and {"offer_repaired", "accept_blocked"} & set(t.guard.kinds)
    ]
    assert repaired
    for t in repaired:
        view = PartyView.of(sc, "seller", [PublicMove(party=x.party, action=x.action) for x in ep.turns[: t.index]])
        target = Strategy().target(view.situation())
        u = sc.seller.utility(t.action.terms)
        assert u >= target - 1e-9
        if t.index < sc.max_turns - 2:  # before the last round the target is well above the floor
            assert u > floor + 0.01


def test_an_accept_the_guard_blocks_becomes_the_strategys_counter(scenario):
    buyer_offer = scenario.buyer.ideal(scenario.space)
    view = PartyView.of(scenario, "seller", [PublicMove(party="buyer", action=MakeOffer(terms=buyer_offer))])
    new, intervention = Guard(view).check(Accept(message="Deal"))
    assert intervention.kinds == ["accept_blocked"]
    assert new.terms == Strategy().repair(view.situation(), buyer_offer)
    assert scenario.seller.utility(new.terms) >= Strategy().target(view.situation()) - 1e-9
