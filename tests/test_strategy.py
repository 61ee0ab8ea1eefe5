"""The negotiation strategy: schedule, opponent model, bidding, acceptance, advice."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from negotiator.domain import HardLimits, generate
from negotiator.strategy import (
    Acceptance,
    FrequencyModel,
    OutcomeIndex,
    Situation,
    Strategy,
    TimeDependent,
    bids,
    progress,
    target_utility,
)


def situation(scenario, turn=0, own=(), theirs=(), standing=None, limits=None, role="seller"):
    prefs = scenario.seller if role == "seller" else scenario.buyer
    lim = scenario.seller_limits.merged(limits) if role == "seller" else HardLimits()
    return Situation(scenario.space, prefs, lim, turn, scenario.max_turns, tuple(own), tuple(theirs), standing)


def test_deadline_convention_runs_from_first_to_last_move():
    assert progress(0, 16) == 0.0
    assert progress(15, 16) == 1.0
    assert progress(5, 11) == 0.5
    # Faratin: the aspiration at the start, the floor at the deadline, Boulware above linear in between.
    assert target_utility(0.0, 0.3, 0.2, 0.9) == pytest.approx(0.9)
    assert target_utility(1.0, 0.3, 0.2, 0.9) == pytest.approx(0.3)
    assert target_utility(0.5, 0.3, 0.2, 1.0) > target_utility(0.5, 0.3, 1.0, 1.0) > target_utility(0.5, 0.3, 3.0, 1.0)


def test_business_aspiration_caps_the_opening_target():
    sc = generate(0)
    sit = situation(sc)
    full = Strategy().target(sit)
    capped = Strategy(schedule=TimeDependent(0.2, aspiration=0.7)).target(sit)
    assert full == pytest.approx(OutcomeIndex.shared(sc.space, sc.seller, sc.seller_limits).u_max)
    assert capped == pytest.approx(0.7)


def _buyer_offers_holding(scenario, heaviest: str, n: int = 6):
    """Offers of a buyer that keeps ``heaviest`` at its best and concedes on every other issue."""
    prefs = scenario.buyer
    ideal = prefs.ideal(scenario.space)
    offers = []
    for k in range(n):
        o = dict(ideal)
        for issue in scenario.space.issues:
            if issue.name == heaviest:
                continue
            if issue.kind == "numeric":
                vf = prefs.values[issue.name]
                o[issue.name] = issue.snap(vf.best + (vf.worst - vf.best) * k / (n - 1) * 0.6)
            else:
                ranked = sorted(issue.options, key=lambda x: -prefs.issue_value(issue.name, x))
                o[issue.name] = ranked[min(len(ranked) - 1, k // 2)]
        offers.append(o)
    return offers


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4, 5])
def test_opponent_model_recovers_the_issue_the_buyer_never_concedes_on(seed):
    sc = generate(seed)
    for heaviest in sc.space.names:
        model = FrequencyModel.learn(sc.space, sc.seller, _buyer_offers_holding(sc, heaviest))
        assert model.heaviest() == heaviest, (seed, heaviest, model.weights)


@pytest.mark.parametrize("seed", range(4))
def test_the_frequency_model_learned_move_by_move_is_the_one_learned_at_once(seed):
    """A model learned on an earlier move is kept and extended (the same offer objects): it is
    exactly the model learned from fresh copies of every offer, weights and estimates."""
    sc = generate(seed)
    offers = _buyer_offers_holding(sc, sc.space.names[seed % len(sc.space.names)])

    def same(a: FrequencyModel, b: FrequencyModel) -> None:
        assert a.weights == b.weights and a.offers == b.offers
        for o in offers:
            assert a.utility(o) == b.utility(o)

    for n in range(len(offers) + 1):
        same(
            FrequencyModel.learn(sc.space, sc.seller, offers[:n]),
            FrequencyModel.learn(sc.space, sc.seller, [dict(o) for o in offers[:n]]),
        )
    # The same first offer object, then others: not mistaken for the negotiation learned above.
    FrequencyModel.learn(sc.space, sc.seller, offers[:2])
    other = [offers[0], *reversed(offers[1:])]
    same(
        FrequencyModel.learn(sc.space, sc.seller, other),
        FrequencyModel.learn(sc.space, sc.seller, [dict(o) for o in other]),
    )
    # What a caller does to the model it gets does not reach the kept one.
    FrequencyModel.learn(sc.space, sc.seller, offers[:3]).update(offers[-1])
    same(
        FrequencyModel.learn(sc.space, sc.seller, offers[:3]),
        FrequencyModel.learn(sc.space, sc.seller, [dict(o) for o in offers[:3]]),
    )


def test_opponent_model_learns_option_values_and_the_price_direction():
    sc = generate(0)  # furniture: price, delivery_days, assembly, payment_terms
    offers = _buyer_offers_holding(sc, "price")
    model = FrequencyModel.learn(sc.space, sc.seller, offers)
    price = sc.space.issue("price")
    # The buyer keeps the price at its best (low): low prices are worth more to it.
    assert model.value("price", price.low) > model.value("price", price.high)
    # Its most offered delivery option is the one it values most.
    best_delivery = max(sc.space.issue("delivery_days").options, key=lambda o: sc.buyer.issue_value("delivery_days", o))
    assert model.value("delivery_days", best_delivery) == 1.0


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 400), share=st.floats(0.0, 1.0), k=st.integers(1, 5), opponent=st.booleans())
def test_bids_never_fall_below_the_target_or_leave_the_outcome_space(seed, share, k, opponent):
    sc = generate(seed)
    idx = OutcomeIndex.shared(sc.space, sc.seller, sc.seller_limits)
    floor = sc.seller_limits.utility_floor(sc.seller)
    target = floor + share * (idx.u_max - floor)
    theirs = [sc.buyer.ideal(sc.space)]
    model = FrequencyModel.learn(sc.space, sc.seller, theirs) if opponent else None
    out = bids(idx, target, model=model, toward=theirs[-1], k=k)
    assert 1 <= len(out) <= k
    assert len({tuple(sorted(o.items())) for o in out}) == len(out)
    for o in out:
        assert sc.space.problems(o) == {}
        assert sc.seller.utility(o) >= target - 1e-9
        assert sc.seller_limits.allows(o, sc.seller)


def test_bids_trade_other_issues_best_for_the_buyer_first():
    sc = generate(0)
    idx = OutcomeIndex.shared(sc.space, sc.seller, sc.seller_limits)
    model = FrequencyModel.learn(sc.space, sc.seller, _buyer_offers_holding(sc, "delivery_days"))
    out = bids(idx, 0.6, model=model, k=3)
    estimates = [model.utility(o) for o in out]
    assert estimates == sorted(estimates, reverse=True)
    # The trades differ in more than the price.
    assert len({tuple((k, v) for k, v in o.items() if k != "price") for o in out}) == len(out)


def test_ac_next_accepts_an_offer_worth_more_than_the_next_own_offer():
    sc = generate(0)
    ac = Acceptance()
    ideal = sc.seller.ideal(sc.space)
    good = dict(ideal)
    worth = sc.seller.utility(good)
    sit = situation(sc, turn=3, theirs=[good], standing=good)
    assert ac.decide(sit, next_worth=worth - 0.05) == "AC_next"
    assert ac.decide(sit, next_worth=worth + 0.05) is None


def test_ac_time_takes_what_clears_the_floor_on_the_final_move_only():
    sc = generate(0)
    idx = OutcomeIndex.shared(sc.space, sc.seller, sc.seller_limits)
    floor = sc.seller_limits.utility_floor(sc.seller)
    modest = next(o for u, o in idx.outcomes if floor + 0.02 <= u <= floor + 0.1)
    last = situation(sc, turn=sc.max_turns - 1, theirs=[modest], standing=modest)
    earlier = situation(sc, turn=sc.max_turns - 3, theirs=[modest], standing=modest)
    assert Acceptance().decide(last, next_worth=0.99) == "AC_time"
    assert Acceptance().decide(earlier, next_worth=0.99) is None
    assert Acceptance(at_deadline=False).decide(last, next_worth=0.99) is None


def test_acceptance_never_takes_terms_that_cross_a_limit():
    sc = generate(0)
    ideal = sc.seller.ideal(sc.space)
    limits = HardLimits(minimum={"price": float(ideal["price"]) + 1})
    sit = situation(sc, turn=sc.max_turns - 1, theirs=[ideal], standing=ideal, limits=limits)
    assert Acceptance().decide(sit, next_worth=0.0) is None


def test_advice_lists_candidates_at_the_target_and_opens_accept_within_the_leeway():
    sc = generate(2)
    idx = OutcomeIndex.shared(sc.space, sc.seller, sc.seller_limits)
    strat = Strategy(leeway=0.1)
    mid = situation(sc, turn=sc.max_turns // 2)
    target = strat.target(mid)
    near = next(o for u, o in idx.outcomes if target - 0.08 <= u <= target - 0.02)
    sit = situation(sc, turn=sc.max_turns // 2, theirs=[near], standing=near)
    advice = strat.advise(sit)
    assert advice.accept is None and advice.can_accept
    assert [c.id for c in advice.candidates] == ["A", "B", "C"][: len(advice.candidates)]
    assert all(c.worth >= advice.target - 1e-9 for c in advice.candidates)
    assert advice.actions == ("make_offer", "accept")
    assert not Strategy(leeway=0.0).advise(sit).can_accept


def test_when_accepting_is_recommended_no_dominated_counter_offer_is_open():
    sc = generate(2)
    ideal = sc.seller.ideal(sc.space)
    advice = Strategy().advise(situation(sc, turn=5, theirs=[ideal], standing=ideal))
    assert advice.accept == "AC_next" and advice.recommended == "accept"
    assert advice.choices == () and advice.actions == ("accept",)


def test_strategy_settings_are_checked():
    with pytest.raises(ValueError, match="unknown strategy"):
        Strategy.named("aggressive")
    with pytest.raises(ValueError, match="unknown settings"):
        Strategy.named("boulware", {"speed": 2})
    with pytest.raises(ValueError, match="finite"):
        Strategy.named("boulware", {"leeway": "nan"})
    s = Strategy.named("linear", {"e": "1", "leeway": "0.05", "candidates": "2", "own_terms": "on"})
    assert (s.name, s.leeway, s.candidates, s.own_terms) == ("linear", 0.05, 2, True)
    assert math.isclose(Strategy.named("conceder").schedule.exponent, 3.0)
