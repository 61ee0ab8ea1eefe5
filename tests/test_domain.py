"""The game's arithmetic: issues, offers, utilities, score, protocol, generator, metrics."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from negotiator.domain import (
    TEMPLATES,
    DiscreteIssue,
    HardLimits,
    LinearValue,
    Listing,
    NumericIssue,
    OutcomeSpace,
    Preferences,
    Product,
    ProtocolState,
    TableValue,
    analysis,
    example_listing,
    generate,
    has_zopa,
    outcome_metrics,
    score,
    seller_score,
)
from negotiator.errors import InvalidOffer, ProtocolError, UsageError

SPACE = OutcomeSpace(
    issues=(
        NumericIssue(name="price", low=800, high=1200, unit="USD"),
        DiscreteIssue(name="warranty_months", options=(0, 12, 24)),
        DiscreteIssue(name="payment", options=("upfront", "net30", "net60")),
    )
)
PREFS = Preferences(
    weights={"price": 0.5, "warranty_months": 0.3, "payment": 0.2},
    values={
        "price": LinearValue(worst=800, best=1200),
        "warranty_months": TableValue(values={"0": 1.0, "12": 0.5, "24": 0.0}),
        "payment": TableValue(values={"upfront": 1.0, "net30": 0.5, "net60": 0.0}),
    },
    reservation=0.4,
)


def test_utility_is_the_weighted_sum_of_issue_values():
    offer = {"price": 1000, "warranty_months": 12, "payment": "net60"}
    assert PREFS.utility(offer) == pytest.approx(0.5 * 0.5 + 0.3 * 0.5 + 0.2 * 0.0)
    assert PREFS.utility(PREFS.ideal(SPACE)) == pytest.approx(1.0)


def test_seller_score_normalises_gain_over_reservation():
    assert score(0.7, 0.4) == pytest.approx(0.5)
    assert score(1.0, 0.4) == 1.0
    assert score(0.4, 0.4) == 0.0
    assert score(None, 0.4) == 0.0  # no deal


@given(u=st.floats(0, 1), r=st.floats(0, 0.99))
def test_score_lies_in_unit_interval(u, r):
    assert 0.0 <= score(u, r) <= 1.0


@given(u1=st.floats(0, 1), u2=st.floats(0, 1), r=st.floats(0, 0.99))
def test_score_is_monotone_in_seller_utility(u1, u2, r):
    lo, hi = sorted((u1, u2))
    assert score(lo, r) <= score(hi, r)


@settings(max_examples=200)
@given(seed=st.integers(0, 10**6), price=st.floats(0, 1), w=st.integers(0, 2), p=st.integers(0, 2))
def test_score_of_generated_scenarios(seed, price, w, p):
    s = generate(seed)
    terms = {}
    for issue in s.issues:
        if isinstance(issue, NumericIssue):
            terms[issue.name] = issue.snap(issue.low + price * (issue.high - issue.low))
        else:
            terms[issue.name] = issue.options[(w + p) % len(issue.options)]
    sc = seller_score(s, terms)
    assert 0.0 <= sc <= 1.0
    assert seller_score(s, None) == 0.0
    expected = max(0.0, (s.seller.utility(terms) - s.seller.reservation) / (1 - s.seller.reservation))
    assert sc == pytest.approx(min(1.0, expected))


def test_weights_must_sum_to_one():
    with pytest.raises(ValueError, match="sum to 1"):
        Preferences(weights={"price": 0.5}, values={"price": LinearValue(worst=0, best=1)}, reservation=0.1)


@pytest.mark.parametrize(
    "terms, issue, words",
    [
        ({"price": 900, "warranty_months": 12, "payment": "net30", "color": "red"}, "color", "unknown issue"),
        ({"price": 900, "warranty_months": 12}, "payment", "missing"),
        ({"price": 1300, "warranty_months": 12, "payment": "net30"}, "price", "outside the allowed range 800..1200"),
        ({"price": 900, "warranty_months": 10, "payment": "net30"}, "warranty_months", "not an allowed option"),
        ({"price": "900", "warranty_months": 12, "payment": "net30"}, "price", "must be a number"),
        ({"price": True, "warranty_months": 12, "payment": "net30"}, "price", "must be a number"),
        ({"price": float("nan"), "warranty_months": 12, "payment": "net30"}, "price", "finite"),
        ({"price": 900, "warranty_months": 12, "payment": 30}, "payment", "not an allowed option"),
    ],
)
def test_invalid_offers_are_rejected_naming_the_issue(terms, issue, words):
    with pytest.raises(InvalidOffer) as e:
        SPACE.validate_offer(terms)
    assert issue in e.value.problems
    assert words in e.value.problems[issue]
    assert issue in str(e.value)


def test_valid_offer_is_canonicalised():
    out = SPACE.validate_offer({"payment": "net30", "warranty_months": 12.0, "price": 950.4})
    assert out == {"price": 950, "warranty_months": 12, "payment": "net30"}
    assert list(out) == ["price", "warranty_months", "payment"]


def test_protocol_alternates_and_accepts_only_a_standing_offer():
    p = ProtocolState(opener="buyer", max_turns=6)
    assert p.to_move == "buyer"
    assert "no offer from the other side" in p.check("buyer", "accept")
    with pytest.raises(ProtocolError):
        p.apply("buyer", "accept")
    with pytest.raises(ProtocolError, match="buyer's turn"):
        p.apply("seller", "make_offer", {"price": 1})
    p.apply("buyer", "make_offer", {"price": 1})
    assert p.to_move == "seller"
    # The seller may accept the buyer's offer, never its own.
    p.apply("seller", "make_offer", {"price": 2})
    p.apply("buyer", "accept")
    assert p.done and p.ended_by == "accept" and p.agreement == {"price": 2}
    with pytest.raises(ProtocolError, match="ended"):
        p.apply("seller", "walk_away")


def test_deadline_means_no_deal():
    p = ProtocolState(opener="seller", max_turns=4)
    for i in range(4):
        p.apply(p.to_move, "make_offer", {"price": i})
    assert p.done and p.ended_by == "deadline" and p.agreement is None
    assert p.rounds_played == 2


def test_walk_away_ends_without_deal():
    p = ProtocolState(opener="seller", max_turns=4)
    p.apply("seller", "make_offer", {"price": 1})
    p.apply("buyer", "walk_away")
    assert p.ended_by == "walk_away" and p.ended_by_party == "buyer" and p.agreement is None


def test_generator_is_deterministic_and_covers_six_templates():
    assert generate(42) == generate(42)
    assert generate(42).model_dump_json() == generate(42).model_dump_json()
    assert generate(42) != generate(43)
    assert len(TEMPLATES) >= 6
    assert {"retail_electronics", "furniture", "used_car", "b2b_supplies", "saas_seats"} <= set(TEMPLATES)
    s = generate(42)
    assert generate(42, s.template) == s  # the drawn template gives the same scenario
    for t in TEMPLATES:
        sc = generate(7, t)
        assert sc.template == t and sc.id == f"{t}-7"


@pytest.mark.parametrize("template", list(TEMPLATES))
def test_generated_scenarios_have_a_zone_of_agreement(template):
    for seed in range(15):
        s = generate(seed, template)
        assert has_zopa(s), s.id
        assert analysis(s).nash is not None
        # price is opposed: the seller wants it high, the buyer low
        price = s.issues[0]
        assert s.seller.values[price.name].best > s.seller.values[price.name].worst
        assert s.buyer.values[price.name].best < s.buyer.values[price.name].worst


def test_generator_can_make_scenarios_without_agreement():
    for seed in range(5):
        s = generate(seed, zopa=False)
        assert not has_zopa(s)
        assert s.id.endswith("-nozopa")


def test_pareto_and_nash_metrics():
    s = generate(5)
    a = analysis(s)
    # Frontier points are at distance 0, a dominated deal is not.
    us, ub = a.frontier[len(a.frontier) // 2]
    assert a.nash_terms is not None
    nash = outcome_metrics(s, a.nash_terms, 6)
    assert nash.pareto_distance == pytest.approx(0.0, abs=1e-6)
    assert nash.nash_distance == pytest.approx(0.0, abs=1e-6)
    worst_for_both = {i.name: (i.low + i.high) / 2 if isinstance(i, NumericIssue) else i.options[0] for i in s.issues}
    worst_for_both = s.space.validate_offer(worst_for_both)
    m = outcome_metrics(s, worst_for_both, 6)
    assert m.pareto_distance >= 0.0
    no_deal = outcome_metrics(s, None, 10)
    assert not no_deal.deal and no_deal.seller_score == 0.0 and no_deal.buyer_score == 0.0
    assert no_deal.seller_utility == s.seller.reservation
    assert no_deal.pareto_distance > 0 and no_deal.rounds == 5
    assert math.isclose(no_deal.joint_utility, s.seller.reservation + s.buyer.reservation, abs_tol=1e-6)


def test_hard_limits_repair_reaches_the_floor_with_the_smallest_move():
    limits = HardLimits(minimum={"price": 950})
    low = {"price": 810, "warranty_months": 24, "payment": "net60"}
    fixed = limits.repair(low, PREFS, SPACE)
    assert limits.allows(fixed, PREFS)
    assert fixed["price"] >= 950
    # Already allowed terms are left alone.
    ok = {"price": 1200, "warranty_months": 0, "payment": "upfront"}
    assert limits.repair(ok, PREFS, SPACE) == ok


@settings(max_examples=300)
@given(seed=st.integers(0, 10**6), x=st.floats(0, 1), k=st.integers(0, 10))
def test_repair_always_satisfies_the_limits(seed, x, k):
    s = generate(seed)
    terms = {
        i.name: i.snap(i.low + x * (i.high - i.low)) if isinstance(i, NumericIssue) else i.options[k % len(i.options)]
        for i in s.issues
    }
    fixed = s.seller_limits.repair(terms, s.seller, s.space)
    assert s.seller_limits.allows(fixed, s.seller)
    assert s.space.problems(fixed) == {}


@pytest.mark.parametrize("seed", [0, 3, 7, 11])
def test_the_pareto_frontier_is_the_brute_force_one_on_a_coarse_grid(seed):
    """Issue by issue pruning gives exactly the Pareto set of every outcome (5 values per numeric issue)."""
    import itertools

    from negotiator.domain.metrics import pareto_frontier

    sc = generate(seed)
    grids = [list(i.options) if i.kind == "discrete" else i.grid(5) for i in sc.space.issues]
    names = sc.space.names
    points = []
    for values in itertools.product(*grids):
        terms = dict(zip(names, values, strict=False))
        points.append((sc.seller.utility(terms), sc.buyer.utility(terms)))
    eps = 1e-9
    optimal = {
        (round(a, 9), round(b, 9))
        for a, b in points
        if not any(c >= a - eps and d >= b - eps and (c > a + eps or d > b + eps) for c, d in points)
    }
    front = pareto_frontier(sc, points=5)
    assert {(round(a, 9), round(b, 9)) for a, b, _ in front} == optimal
    for us, ub, values in front:  # each point's terms are worth what it says
        terms = dict(zip(names, values, strict=False))
        assert sc.seller.utility(terms) == pytest.approx(us) and sc.buyer.utility(terms) == pytest.approx(ub)
    assert [p[0] for p in front] == sorted((p[0] for p in front), reverse=True)


@settings(max_examples=200)
@given(
    worst=st.floats(-1e4, 1e4),
    span=st.floats(1e-3, 1e4),
    falling=st.booleans(),
    w=st.floats(0.0, 1.0),
    xs=st.lists(st.floats(-2e4, 2e4) | st.integers(-20000, 20000), max_size=30),
)
def test_the_frontiers_linear_values_are_the_value_functions_bit_for_bit(worst, span, falling, w, xs):
    """The Pareto analysis values a numeric issue's grid in numpy: the same floats, signed zeros included."""
    import numpy as np

    from negotiator.domain.metrics import _weighted_values
    from negotiator.domain.utility import LinearValue

    vf = LinearValue(worst=worst, best=worst - span if falling else worst + span)
    xs = [worst, *xs]  # at ``worst`` a falling function computes -0.0 before clipping
    expected = np.array([w * vf(x) for x in xs], dtype=float)
    assert _weighted_values(w, vf, xs).tobytes() == expected.tobytes()


def _desk(**changes):
    fields = dict(
        id="desk",
        product=Product(name="Desk", list_price=1200),
        issues=(
            NumericIssue(name="price", low=800, high=1200, step=10),
            DiscreteIssue(name="warranty_years", options=(2, 3, 5)),
        ),
        seller=Preferences(
            weights={"price": 0.8, "warranty_years": 0.2},
            values={
                "price": LinearValue(worst=800, best=1200),
                "warranty_years": TableValue(values={"2": 1.0, "3": 0.6, "5": 0.0}),
            },
            reservation=0.25,
        ),
    )
    return Listing(**{**fields, **changes})


def test_a_listing_whose_limits_leave_no_offer_is_refused_saying_why():
    # Before, these were built, and the guard repaired every offer into one below the utility floor:
    # the seller offered price 850 (utility 0.300) under a floor of 0.9.
    with pytest.raises(ValueError, match=r"utility floor 0\.900 \(its min_utility\): the best, price=850, "):
        _desk(seller_limits=HardLimits(maximum={"price": 850}, min_utility=0.9))
    worth_little = Preferences(
        weights={"price": 0.8, "warranty_years": 0.2},
        values={
            "price": LinearValue(worst=800, best=2000),
            "warranty_years": TableValue(values={"2": 1, "3": 0, "5": 0}),
        },
        reservation=0.9,
    )
    with pytest.raises(ValueError, match=r"floor 0\.900 \(its reservation utility\).* is worth 0\.467"):
        _desk(seller=worth_little)
    with pytest.raises(ValueError, match=r"price: 950 is below the limit 951"):  # no grid point between 951 and 959
        _desk(seller_limits=HardLimits(minimum={"price": 951}, maximum={"price": 959}))
    listing = _desk(seller_limits=HardLimits(maximum={"price": 850}, min_utility=0.2))
    with pytest.raises(ValueError, match=r"utility floor 0\.500"):
        listing.check_limits(HardLimits(min_utility=0.5))
    assert listing.check_limits(HardLimits(min_utility=0.3)).min_utility == 0.3


def test_a_listing_without_issues_names_the_issues():
    # Before: "seller preferences: 1 validation error for OutcomeSpace ..." nested in the Listing's error.
    with pytest.raises(ValidationError) as e:
        _desk(issues=())
    assert [(err["loc"], err["msg"]) for err in e.value.errors()] == [
        (("issues",), "Value error, an outcome space needs at least one issue")
    ]
    price = NumericIssue(name="price", low=800, high=1200, step=10)
    with pytest.raises(ValidationError, match=r"issues\n  Value error, duplicate issue names: \['price'\]"):
        _desk(issues=(price, price))


def test_discrete_options_a_shopper_could_not_tell_apart_are_refused():
    # Before: (True, False) became the options 1 and 0; (1, "1") and ("Net30", "net30 ") were built, and an
    # offer or a limit naming "1" or "net30" could only mean the first of them.
    for options, words in (
        ((True, False), "not True/False"),
        ((1, "1"), "options 1 and '1' read as the same option"),
        (("Net30", "net30 "), "options 'Net30' and 'net30 ' read as the same option"),
    ):
        with pytest.raises(ValidationError, match=words):
            DiscreteIssue(name="terms", options=options)
    assert DiscreteIssue(name="terms", options=("yes", "no", 3)).options == ("yes", "no", 3)


def test_example_listing_refuses_what_would_name_another_scenario():
    # Before: max_rounds=0 gave the template's own round limit (5 here), seed=None and seed=True
    # built scenarios named furniture-None and retail_electronics-True.
    for kwargs, words in (
        ({"max_rounds": 0}, "max_rounds must be 1 or more"),
        ({"seed": None}, "seed must be a whole number, not None"),
        ({"seed": True}, "seed must be a whole number, not True"),
    ):
        with pytest.raises(UsageError, match=words):
            example_listing(**kwargs)
    assert example_listing(seed=0, max_rounds=3).max_rounds == 3


def test_limits_that_contradict_themselves_are_refused_where_they_are_written():
    # Before: HardLimits (and SellerAgent(limits=...)) took a minimum above the maximum, refused only
    # when a negotiation was opened, or never (an agent's own limits in run_negotiation).
    with pytest.raises(ValidationError, match="minimum price 1000 is above the maximum 900"):
        HardLimits(minimum={"price": 1000}, maximum={"price": 900})
    # Two sets that contradict each other only together are named where they meet a listing.
    merged = HardLimits(minimum={"price": 1000}).merged(HardLimits(maximum={"price": 900}))
    with pytest.raises(ValueError, match="^minimum price 1000 is above the maximum 900$"):
        _desk().check_limits(merged)


def test_a_listing_is_a_key_and_a_cache_argument():
    # Before: TypeError: unhashable type: 'dict' (pydantic's hash of a frozen model with dict fields).
    first, again = example_listing(seed=0), example_listing(seed=0)
    assert {first: "desk"}[again] == "desk" and hash(generate(3)) == hash(generate(3))
    assert (
        len({first, example_listing(seed=1), generate(0), generate(0).listing()}) == 3
    )  # a Scenario is not its listing


def test_limits_refuse_true_and_false_for_numbers():
    # Before: min_utility=True demanded utility 1.0 (only the ideal offer), minimum={"price": True} a floor of 1.
    for limits, words in (
        ({"min_utility": True}, "min_utility: True is not a number"),
        ({"minimum": {"price": True}}, "minimum: price=True is not a number"),
        ({"forbidden": {"warranty_years": (2, False)}}, "forbidden: warranty_years=False is not a number"),
    ):
        with pytest.raises(ValidationError, match=words):
            HardLimits.model_validate(limits)
    assert HardLimits(minimum={"price": 3}, min_utility=0.5).minimum == {"price": 3.0}


def test_a_listing_refuses_true_and_false_for_its_round_limit_and_seed():
    # Before: max_rounds=True made a one-round negotiation.
    data = example_listing(seed=0).model_dump(mode="json")
    for field, value in (("max_rounds", True), ("seed", False)):
        with pytest.raises(ValidationError, match=f"{field}\n.*{value} is not a number"):
            Listing.model_validate({**data, field: value})
    assert Listing.model_validate({**data, "max_rounds": 3}).max_rounds == 3
