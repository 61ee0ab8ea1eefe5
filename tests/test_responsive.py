"""The responsive strategy: concession that answers concession, a final offer, hints, priced moves,
the choice model, MiCRO and the hold-out buyer; and its properties under hypothesis."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from negotiator.actions import Accept, MakeOffer
from negotiator.buyers.rules import STRATEGIES, RuleParty
from negotiator.domain import HardLimits, generate
from negotiator.party import PartyView, PublicMove
from negotiator.runtime import make_party, run_negotiation
from negotiator.strategy import (
    MOVE_KINDS,
    NO_HINTS,
    ChoiceModel,
    FrequencyModel,
    Hints,
    MiCRO,
    OutcomeIndex,
    Responsive,
    Situation,
    Strategy,
)
from negotiator.strategy.responsive import last_answerable

RESPONSIVE = Strategy.named("responsive")


def situation(sc, turn, own=(), theirs=(), messages=(), limits=None):
    lim = sc.seller_limits.merged(limits)
    standing = theirs[-1] if theirs else None
    return Situation(sc.space, sc.seller, lim, turn, sc.max_turns, tuple(own), tuple(theirs), standing, tuple(messages))


def surplus(sc, limits=None):
    idx = OutcomeIndex.shared(sc.space, sc.seller, sc.seller_limits.merged(limits))
    floor = sc.seller_limits.merged(limits).utility_floor(sc.seller)
    return floor, idx.u_max - floor


def buyer_offers(sc, shares):
    """Buyer offers that give the seller these shares of the way from the buyer's ideal to the seller's."""
    bi, si = sc.buyer.ideal(sc.space), sc.seller.ideal(sc.space)
    price = next(i for i in sc.space.issues if i.kind == "numeric" and "price" in i.name)
    out = []
    for s in shares:
        o = dict(bi)
        o[price.name] = price.snap(float(bi[price.name]) + s * (float(si[price.name]) - float(bi[price.name])))
        out.append(o)
    return out


def history(sc, their_shares, seller_first=True):
    """A transcript's offers: the seller's at its aspiration-ish schedule, the buyer's at these shares."""
    theirs = buyer_offers(sc, their_shares)
    idx = OutcomeIndex.shared(sc.space, sc.seller, sc.seller_limits)
    own = [idx.offer(idx.u_max - 0.02 * k) for k in range(len(theirs))]
    return own, theirs


# --- the schedule -------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(6))
def test_a_buyer_that_concedes_gets_more_than_one_that_does_not(seed):
    """Early on the lead goes to a buyer that waits (a MiCRO buyer moves only after we do);
    by the final offer, the one that came toward us is answered and the other is not."""
    sc = generate(seed, max_rounds=6)
    n = (sc.max_turns - 2) // 2
    own, moving = history(sc, [0.3 * k / n for k in range(n)])
    _, stuck = history(sc, [0.0] * n)
    turn = 2 * n
    assert last_answerable(situation(sc, turn, own, moving))
    answering = RESPONSIVE.target(situation(sc, turn, own, moving))
    holding = RESPONSIVE.target(situation(sc, turn, own, stuck))
    assert answering < holding - 1e-6


@pytest.mark.parametrize("seed", range(6))
def test_the_final_offer_keeps_a_margin_against_a_buyer_that_never_moved(seed):
    sc = generate(seed)
    floor, s = surplus(sc)
    n = (sc.max_turns - 1) // 2
    own, stuck = history(sc, [0.0] * n)
    turn = 2 * n if sc.max_turns % 2 == 0 else 2 * n - 1
    turn = sc.max_turns - 2  # the last move whose offer the buyer can still answer
    sit = situation(sc, turn, own[: turn // 2], stuck[: turn // 2])
    assert last_answerable(sit)
    menu = RESPONSIVE.moves(sit)
    assert menu.recommended == "final"
    lead = RESPONSIVE.schedule.lead
    assert menu.move("final").worth >= floor + (1 - lead) * s - 1e-6
    assert menu.move("final").worth >= floor + 0.05


def test_on_the_negotiations_last_move_the_seller_holds():
    sc = generate(3, max_rounds=5)  # ten moves: the seller's is the last when the buyer opened
    own, theirs = history(sc, [0.0, 0.1, 0.2, 0.3, 0.4])
    k = (sc.max_turns - 1) // 2
    sit = situation(sc, sc.max_turns - 1, own[:k], theirs[: k + 1])
    lv = RESPONSIVE.levels(sit, RESPONSIVE.index(sit), None, NO_HINTS)
    assert sit.final_move and lv.recommended == "hold"
    assert lv.target == pytest.approx(sc.seller.utility(own[k - 1]))


def test_a_credible_threat_asks_for_a_bigger_step_never_past_the_final_offer():
    sc = generate(5, max_rounds=10)
    own, theirs = history(sc, [0.0, 0.0, 0.0])
    sit = situation(sc, 6, own, theirs)
    idx = RESPONSIVE.index(sit)
    calm = RESPONSIVE.levels(sit, idx, None, NO_HINTS)
    meant = RESPONSIVE.levels(sit, idx, None, Hints(threat=True, threat_credible=1.0))
    bluff = RESPONSIVE.levels(sit, idx, None, Hints(threat=True, threat_credible=0.0))
    assert meant.recommended == "big_step" and meant.target < calm.target - 1e-6
    assert meant.target >= meant.final - 1e-9
    assert bluff.recommended == "step" and bluff.target == pytest.approx(calm.target)


def test_a_hurry_brings_the_final_offer_before_the_buyer_leaves():
    sc = generate(1, max_rounds=10)
    own, theirs = history(sc, [0.0, 0.1])
    sit = situation(sc, 4, own, theirs)
    idx = RESPONSIVE.index(sit)
    leaves_next = Hints(hurry=True, deadline=5 / (sc.max_turns - 1))
    assert RESPONSIVE.levels(sit, idx, None, NO_HINTS).recommended == "step"
    hurried = RESPONSIVE.levels(sit, idx, None, leaves_next)
    assert hurried.recommended == "final"
    assert hurried.target < RESPONSIVE.levels(sit, idx, None, NO_HINTS).target


def test_a_quote_bounds_the_targets_and_the_final_meets_it_as_far_as_believed():
    sc = generate(2, max_rounds=10)
    floor, s = surplus(sc)
    own, theirs = history(sc, [0.0, 0.05, 0.1, 0.15])
    sit = situation(sc, sc.max_turns - 2, own, theirs)
    idx = RESPONSIVE.index(sit)
    price = next(i for i in sc.space.issues if i.kind == "numeric" and "price" in i.name)
    # a price whose quote is worth about the middle of the surplus to us
    offer = next(o for u, o in idx.outcomes if u >= floor + 0.5 * s)
    terms = {**idx.ideal, price.name: offer[price.name]}
    worth = sc.seller.utility(terms)
    model = RESPONSIVE.opponent(sit)
    plain = RESPONSIVE.levels(sit, idx, model, NO_HINTS)
    sure = RESPONSIVE.levels(sit, idx, model, Hints(quote={price.name: offer[price.name]}, quote_credible=1.0))
    doubt = RESPONSIVE.levels(sit, idx, model, Hints(quote={price.name: offer[price.name]}, quote_credible=0.0))
    for lv in (sure, doubt):
        assert min(lv.step, lv.final, lv.big_step) >= min(worth, lv.hold) - 1e-9  # never below the quote
    assert doubt.final == pytest.approx(max(plain.final, min(worth, plain.hold)))
    assert sure.final <= doubt.final + 1e-9


def test_every_move_is_priced_and_the_recommendation_is_what_advise_plays():
    sc = generate(4, max_rounds=10)
    own, theirs = history(sc, [0.0, 0.2, 0.4])
    sit = situation(sc, 6, own, theirs, messages=("I'm ready to walk away if you don't move.",) * 3)
    menu = RESPONSIVE.moves(sit)
    open_accept = sit.limits.allows(sit.standing, sc.seller)
    assert set(menu.kinds) == set(MOVE_KINDS) - (set() if open_accept else {"accept"})
    assert menu.hints.threat and menu.hints.source == "keywords"
    for m in menu.moves:
        if m.kind == "walk_away":
            assert m.terms is None and m.worth == sc.seller.reservation
        else:
            assert m.worth == pytest.approx(sc.seller.utility(m.terms))
            assert m.their_worth is not None and 0 <= m.their_worth <= 1
            assert sc.seller_limits.allows(m.terms, sc.seller)
    offers = [menu.move(k) for k in ("hold", "step", "big_step", "final")]
    assert offers[0].worth >= offers[1].worth - 1e-9 >= offers[2].worth - 2e-9
    advice = RESPONSIVE.advise(sit)
    played = "accept" if advice.accept else "offer"
    assert played == ("accept" if menu.recommended == "accept" else "offer")
    if played == "offer":
        assert advice.candidates[0].terms == menu.move(menu.recommended).terms


def test_the_time_dependent_strategies_are_priced_too():
    sc = generate(0)
    own, theirs = history(sc, [0.0, 0.2])
    sit = situation(sc, 4, own, theirs)
    menu = Strategy.named("boulware").moves(sit)
    accept = ("accept",) if sit.limits.allows(sit.standing, sc.seller) else ()
    assert menu.kinds == ("hold", "step", *accept, "walk_away") and menu.recommended in ("step", "accept")
    assert menu.move("step").target == pytest.approx(Strategy.named("boulware").target(sit))


# --- the choice model ---------------------------------------------------------------------


def _echoing_buyer(sc, keep: str, n: int = 6):
    """Exchanges with a buyer that copies the seller's values on every issue but ``keep``,
    which it holds at its own best: the pattern that fools a frequency model."""
    idx = OutcomeIndex.shared(sc.space, sc.seller, sc.seller_limits)
    bi = sc.buyer.ideal(sc.space)
    out = [(None, dict(bi))]
    for k in range(n):
        ours = idx.offer(idx.u_max - 0.03 * k, toward=bi)
        out.append((ours, {**ours, keep: bi[keep]}))
    return out


@pytest.mark.parametrize("seed", range(6))
def test_the_choice_model_is_not_fooled_by_echoes(seed):
    sc = generate(seed)
    for keep in sc.space.names:
        idx = OutcomeIndex.shared(sc.space, sc.seller, sc.seller_limits)
        ex = _echoing_buyer(sc, keep)
        if all(ours[keep] == sc.buyer.ideal(sc.space)[keep] for ours, _ in ex[1:]):
            continue  # we already offered what it holds: nothing to learn from
        choice = ChoiceModel.learn(sc.space, sc.seller, ex)
        assert choice.heaviest() == keep, (seed, keep, choice.weights)
        del idx


def test_the_choice_model_keeps_its_prior_without_evidence_and_reads_stated_priorities():
    sc = generate(0)
    bare = ChoiceModel.learn(sc.space, sc.seller, [])
    assert bare.weights == pytest.approx(sc.seller.weights)
    light = min(sc.seller.weights, key=lambda k: sc.seller.weights[k])
    told = ChoiceModel.learn(sc.space, sc.seller, [], stated=(light,), stated_credible=1.0)
    assert told.weights[light] > bare.weights[light] * 2
    freq = FrequencyModel.learn(sc.space, sc.seller, [])
    assert freq.weights != bare.weights  # the frequency model starts equal, the choice model at our weights


def test_the_choice_model_measures_the_buyers_concession_in_its_own_utility():
    sc = generate(1)
    own, theirs = history(sc, [0.0, 0.3, 0.6])
    ex = list(zip([None, *own[:2]], theirs, strict=True))
    model = ChoiceModel.learn(sc.space, sc.seller, ex)
    assert 0.0 < model.conceded() <= 1.0
    assert (
        ChoiceModel.learn(sc.space, sc.seller, list(zip([None, *own[:2]], [theirs[0]] * 3, strict=True))).conceded()
        == 0.0
    )


@pytest.mark.parametrize("seed", range(4))
def test_the_choice_model_learned_move_by_move_is_the_one_learned_at_once(seed):
    """The evidence of earlier moves is kept and extended (the same offer objects): the weights
    are exactly those of a model learned from fresh copies of every exchange."""
    sc = generate(seed)
    keep = max(sc.space.names, key=lambda k: sc.buyer.weights[k])
    ex = _echoing_buyer(sc, keep, n=8)
    for n in range(len(ex) + 1):
        step = ChoiceModel.learn(sc.space, sc.seller, ex[:n])  # extends what the previous n learned
        fresh = [(None if o is None else dict(o), dict(t)) for o, t in ex[:n]]
        assert step.weights == ChoiceModel.learn(sc.space, sc.seller, fresh).weights
    # Another negotiation with the same opening object but other answers is not mistaken for it.
    ChoiceModel.learn(sc.space, sc.seller, ex[:3])
    other = [ex[0], *[(ours, dict(ours)) for ours, _ in ex[1:6]]]  # it echoes every value
    fresh = [(None if o is None else dict(o), dict(t)) for o, t in other]
    assert (
        ChoiceModel.learn(sc.space, sc.seller, other).weights == ChoiceModel.learn(sc.space, sc.seller, fresh).weights
    )


# --- MiCRO and the hold-out buyer ---------------------------------------------------------


def test_micro_concedes_only_after_the_other_side_concedes():
    sc = generate(2, max_rounds=6)
    buyer_view_offers = buyer_offers(
        sc, [1.0, 1.0, 0.8, 0.8, 0.6]
    )  # the seller's offers, worse then better for the buyer
    micro = Strategy.named("micro")
    prefs, floor_lim = sc.buyer, HardLimits()

    def target(seller_offers):
        sit = Situation(sc.space, prefs, floor_lim, 2 * len(seller_offers), sc.max_turns, (), tuple(seller_offers))
        return micro.target(sit)

    t0 = target(buyer_view_offers[:2])  # the seller repeated its offer: no concession
    t1 = target(buyer_view_offers[:3])  # one concession
    t2 = target(buyer_view_offers[:4])  # held again
    t3 = target(buyer_view_offers[:5])  # a second one
    assert t0 == pytest.approx(t0) and t1 < t0 and t2 == pytest.approx(t1) and t3 < t2
    assert MiCRO(step=0.5).target(
        Situation(sc.space, prefs, floor_lim, 4, sc.max_turns, (), tuple(buyer_view_offers[:3])), 1.0
    ) == pytest.approx(max(prefs.reservation, 1.0 - 0.5 * (1.0 - prefs.reservation)))


def test_the_holdout_buyer_repeats_its_ideal_and_accepts_only_on_its_last_move():
    sc = generate(7)
    holdout = RuleParty("holdout", "buyer")
    ideal = sc.buyer.ideal(sc.space)
    fine = max(OutcomeIndex.shared(sc.space, sc.buyer, HardLimits()).outcomes, key=lambda x: -abs(x[0] - 0.9))[1]
    moves: list[PublicMove] = []
    first = "seller" if sc.opener == "seller" else "buyer"
    for turn in range(sc.max_turns):
        role = first if turn % 2 == 0 else ("buyer" if first == "seller" else "seller")
        view = PartyView.of(sc, role, moves)
        if role == "seller":
            action = MakeOffer(terms=fine)
        else:
            action = holdout.decide(view)
            own_last = (sc.max_turns - turn + 1) // 2 <= 1
            if own_last:
                assert isinstance(action, Accept)
                break
            assert isinstance(action, MakeOffer) and action.terms == ideal
        moves.append(PublicMove(party=role, action=action))


# --- settings -----------------------------------------------------------------------------


def test_responsive_settings_are_spec_parameters_and_checked():
    s = Strategy.named("responsive", {"lead": "0.3", "rho": "0.5", "reader": "none", "opponent": "frequency"})
    assert isinstance(s.schedule, Responsive)
    assert (s.schedule.lead, s.schedule.reciprocity, s.reader, s.learner) == (0.3, 0.5, None, "frequency")
    assert Strategy.named("responsive").reader == "keywords"
    assert Strategy.named("boulware").reader is None and Strategy.named("boulware").learner == "frequency"
    for bad in ({"lead": "2"}, {"rho": "nan"}, {"reader": "tea-leaves"}, {"opponent": "psychic"}, {"speed": "1"}):
        with pytest.raises(ValueError, match="strategy responsive"):
            Strategy.named("responsive", bad)
    with pytest.raises(ValueError, match="credible"):
        Hints(threat=True, threat_credible=1.5)
    with pytest.raises(ValueError, match="deadline"):
        Hints(hurry=True, deadline=float("inf"))


# --- properties ---------------------------------------------------------------------------

_hints = st.builds(
    Hints,
    threat=st.booleans(),
    threat_credible=st.floats(0, 1),
    hurry=st.booleans(),
    deadline=st.none() | st.floats(0, 1),
    quote_credible=st.floats(0, 1),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 300),
    shares=st.lists(st.floats(-0.5, 1.5), min_size=0, max_size=9),
    turn_back=st.integers(0, 3),
    hints=_hints,
    quote=st.none() | st.floats(0, 5000),
    raise_floor=st.floats(0, 0.6),
)
def test_no_target_is_ever_below_the_floor(seed, shares, turn_back, hints, quote, raise_floor):
    sc = generate(seed)
    price = next(i for i in sc.space.issues if i.kind == "numeric")
    limits = HardLimits(minimum={price.name: price.low + raise_floor * (price.high - price.low)})
    own, theirs = history(sc, [max(0.0, min(1.0, x)) for x in shares])
    turn = max(0, min(sc.max_turns - 1, 2 * len(theirs) - turn_back))
    sit = situation(sc, turn, own[: turn // 2], theirs[: (turn + 1) // 2], limits=limits)
    if quote is not None:
        hints = replace(hints, quote={price.name: quote})
    idx = RESPONSIVE.index(sit)
    lv = RESPONSIVE.levels(sit, idx, RESPONSIVE.opponent(sit, hints), hints)
    for k in ("hold", "step", "big_step", "final"):
        assert lv.of(k) >= sit.floor - 1e-9
    for m in RESPONSIVE.moves(sit, hints=hints).moves:
        if m.terms is not None and m.kind != "accept":
            assert sit.limits.allows(m.terms, sc.seller) and m.worth >= sit.floor - 1e-9


SELLERS = ("rule/responsive", "rule/responsive?reader=none", "scripted/boulware")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    buyer=st.sampled_from([s for s in STRATEGIES if s != "responsive"]),
    seller=st.sampled_from(SELLERS),
    raise_floor=st.floats(0, 0.5),
)
def test_no_offer_or_deal_below_a_limit_whatever_the_buyer_does(seed, buyer, seller, raise_floor):
    sc = generate(seed)
    price = next(i for i in sc.space.issues if i.kind == "numeric")
    limits = {"minimum": {price.name: price.low + raise_floor * (price.high - price.low)}}
    seller_party = make_party(seller, "seller", limits=limits) if seller.startswith("scripted") else None
    if seller_party is None:  # a rule seller: the limits as the listing's own
        sc = sc.model_copy(update={"seller_limits": sc.seller_limits.merged(HardLimits(**limits))})
        seller_party = make_party(seller, "seller", seed=seed)
    ep = asyncio.run(run_negotiation(seller_party, make_party(f"rule/{buyer}", "buyer", seed=seed), sc, seed))
    lim = sc.seller_limits.merged(HardLimits(**limits))
    floor = lim.utility_floor(sc.seller)
    for t in ep.turns:
        if t.party == "seller" and isinstance(t.action, MakeOffer):
            assert lim.allows(t.action.terms, sc.seller), (t.index, t.action.terms)
        if t.party == "buyer" and isinstance(t.action, MakeOffer):
            assert sc.space.problems(t.action.terms) == {}
    if ep.outcome.deal:
        assert lim.allows(ep.outcome.terms, sc.seller)
        assert sc.seller.utility(ep.outcome.terms) >= floor - 1e-9
        assert sc.buyer.utility(ep.outcome.terms) >= sc.buyer.reservation - 1e-9  # no buyer accepts below its own


class _StubbornTalker:
    """Its ideal on every move, with a threat in every message: it never moves."""

    spec, family = "test/stubborn", "test"

    def decide(self, view: PartyView):
        return MakeOffer(terms=view.preferences.ideal(view.space), message="Last chance, or I walk away.")

    async def act(self, view):
        from negotiator.party import TurnRecord

        return TurnRecord(index=view.turn, party="buyer", action=self.decide(view))

    async def aclose(self):
        return None


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), buyer=st.sampled_from(["holdout", "stubborn", "hardliner?level=1"]))
def test_a_buyer_that_never_moves_never_gets_the_floor(seed, buyer):
    sc = generate(seed)
    party = _StubbornTalker() if buyer == "stubborn" else make_party(f"rule/{buyer}", "buyer", seed=seed)
    ep = asyncio.run(run_negotiation(make_party("rule/responsive", "seller", seed=seed), party, sc, seed))
    floor, s = surplus(sc)
    margin = (1 - RESPONSIVE.schedule.lead) * s
    offers = [t.action.terms for t in ep.turns if t.party == "seller" and isinstance(t.action, MakeOffer)]
    assert offers and all(sc.seller.utility(o) >= floor + margin - 1e-6 for o in offers)
    if ep.outcome.deal and ep.outcome.ended_by_party == "buyer":
        assert sc.seller.utility(ep.outcome.terms) >= floor + margin - 1e-6
