"""The guard holds the business's limits whatever the model outputs, and keeps them secret."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from negotiator import MakeOffer, SellerAgent
from negotiator.actions import Accept
from negotiator.buyers import STRATEGIES
from negotiator.domain import NumericIssue
from negotiator.llm.guard import Guard
from negotiator.models import ScriptedModel
from negotiator.party import PartyView, PublicMove
from negotiator.sim import generate, make_party, run_negotiation


def _seller_actions_respect_limits(ep):
    s = ep.scenario
    standing = None
    for t in ep.turns:
        a = t.action
        if t.party == "buyer":
            if isinstance(a, MakeOffer):
                standing = a.terms
            continue
        if isinstance(a, MakeOffer):
            assert s.seller_limits.allows(a.terms, s.seller), (ep.scenario.id, a.terms)
        if isinstance(a, Accept):
            assert standing is not None and s.seller_limits.allows(standing, s.seller)
    if ep.outcome.deal:
        assert s.seller.utility(ep.outcome.terms) >= s.seller.reservation - 1e-9
        for k, lo in s.seller_limits.minimum.items():
            assert ep.outcome.terms[k] >= lo


@pytest.mark.parametrize("buyer", STRATEGIES)
async def test_hostile_seller_model_never_crosses_the_floor(buyer):
    interventions = 0
    for seed in range(12):
        s = generate(seed)
        ep = await run_negotiation(
            make_party("scripted/hostile", "seller"), make_party(f"rule/{buyer}", "buyer", seed=seed), s, seed
        )
        _seller_actions_respect_limits(ep)
        interventions += ep.metrics.guard_interventions
        floor = next(iter(s.seller_limits.minimum.values()))
        for t in ep.turns:
            if t.party == "seller":
                # The hostile model states the floor every time; nothing of it may leave.
                assert t.guard is not None
                assert f"{floor:g}" not in t.action.message and str(s.seller.reservation) not in t.action.message
                assert "floor" not in t.action.message.lower()
    assert interventions > 0


async def test_below_floor_accept_becomes_a_counter_offer(scenario):
    buyer_offer = scenario.buyer.ideal(scenario.space)  # terrible for the seller
    assert not scenario.seller_limits.allows(buyer_offer, scenario.seller)
    transcript = [PublicMove(party="buyer", action=MakeOffer(terms=buyer_offer, message="Take it or leave it."))]
    agent = SellerAgent(ScriptedModel(['{"action": "accept", "message": "Deal!"}']), strategy=None, mode="json")
    turn = await agent.respond(scenario, transcript)
    assert isinstance(turn.action, MakeOffer)
    assert scenario.seller_limits.allows(turn.action.terms, scenario.seller)
    assert turn.guard.kinds == ["accept_blocked"]
    assert turn.guard.original["action"] == "accept"


async def test_user_limits_are_added_to_the_scenario_limits(seller_first):
    price = seller_first.issues[0]
    floor = price.snap(price.low + 0.8 * (price.high - price.low))
    low = {**seller_first.seller.ideal(seller_first.space), price.name: price.low}
    agent = SellerAgent(
        ScriptedModel([json.dumps({"action": "make_offer", "message": "", "terms": low})]),
        strategy=None,
        mode="json",
        limits={"minimum": {price.name: floor}},
    )
    turn = await agent.respond(seller_first)
    assert turn.action.terms[price.name] >= floor
    assert turn.guard.kinds == ["offer_repaired"]


@pytest.mark.parametrize(
    "message, leaks",
    [
        ("My floor is {floor}.", True),
        ("I can't go below {floor}, sorry.", True),
        ("Honestly, my walk-away value is {r}.", True),
        ("I'd be unhappy below {pct}% of my best outcome.", True),
        ("The lowest I could ever take is ${floor_comma}.", True),
        ("This desk is lovely. Delivery in {days} days.", False),
        ("Here is my offer.", False),
    ],
)
def test_messages_stating_private_numbers_are_rewritten(scenario, message, leaks):
    floor = scenario.seller_limits.minimum["price"]
    r = scenario.seller.reservation
    offer = scenario.seller.ideal(scenario.space)
    text = message.format(
        floor=f"{floor:g}", r=f"{r:.2f}", pct=round(r * 100), floor_comma=f"{floor:,.0f}", days=offer["delivery_days"]
    )  # a harmless number the offer itself holds
    view = PartyView.of(
        scenario, "seller", [PublicMove(party="buyer", action=MakeOffer(terms=scenario.buyer.ideal(scenario.space)))]
    )
    new, intervention = Guard(view).check(MakeOffer(terms=offer, message=f"Thanks for coming by. {text}"))
    if leaks:
        assert intervention is not None and intervention.kinds == ["message_redacted"]
        assert f"{floor:g}" not in new.message and f"{r:.2f}" not in new.message
        assert new.message.startswith("Thanks for coming by.")  # harmless sentences survive
    else:
        assert intervention is None and new.message.endswith(text)


def test_restating_the_own_offer_is_not_a_leak_unless_framed_as_the_floor(scenario):
    floor = scenario.seller_limits.minimum["price"]
    view = PartyView.of(scenario, "seller", [])
    at_floor = scenario.seller_limits.repair(
        {**scenario.seller.ideal(scenario.space), "price": floor}, scenario.seller, scenario.space
    )
    ok, i1 = Guard(view).check(MakeOffer(terms=at_floor, message=f"I can do {at_floor['price']:g}."))
    assert i1 is None
    bad, i2 = Guard(view).check(MakeOffer(terms=at_floor, message=f"{at_floor['price']:g} is my absolute minimum."))
    if at_floor["price"] == floor:
        assert i2 is not None and "minimum" not in bad.message


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 10**6), x=st.floats(0, 1), k=st.integers(0, 5), accept=st.booleans())
def test_guard_output_always_respects_the_limits(seed, x, k, accept):
    s = generate(seed)
    terms = {
        i.name: i.snap(i.low + x * (i.high - i.low)) if isinstance(i, NumericIssue) else i.options[k % len(i.options)]
        for i in s.issues
    }
    moves = [PublicMove(party="buyer", action=MakeOffer(terms=terms))]
    view = PartyView.of(
        s,
        "seller",
        moves
        if s.opener == "buyer"
        else [PublicMove(party="seller", action=MakeOffer(terms=s.seller.ideal(s.space))), *moves],
    )
    action = Accept() if accept else MakeOffer(terms=terms)
    new, _ = Guard(view).check(action)
    if isinstance(new, MakeOffer):
        assert s.seller_limits.allows(new.terms, s.seller)
    else:
        assert s.seller_limits.allows(terms, s.seller)


def test_a_message_the_checks_cannot_read_is_replaced_and_the_turn_kept(monkeypatch):
    """The message checks fail closed: an error inside them (a reading bug, as "10,000.000.00"
    once was) replaces the words and keeps the terms, instead of losing the negotiation."""
    from negotiator.llm import guard as guard_module

    def broken(self, message, terms, theirs=None):
        raise ValueError("could not convert string to float: '10000.000.00'")

    monkeypatch.setattr(guard_module.Checker, "correct", broken)
    sc = generate(0)
    terms = sc.seller.ideal(sc.space)
    new, intervention = Guard(PartyView.of(sc, "seller", [])).check(
        MakeOffer(terms=terms, message="Only 10,000.000.00 today!")
    )
    assert isinstance(new, MakeOffer) and new.terms == terms and new.message == "Here is my offer."
    assert (
        intervention.kinds == ["message_redacted"]
        and "could not be read (ValueError" in intervention.reasons["message"]
    )
