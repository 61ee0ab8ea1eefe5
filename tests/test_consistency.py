"""Seller messages agree with their terms: the guard corrects values the terms do not hold."""

from __future__ import annotations

import itertools

import pytest

from negotiator import MakeOffer
from negotiator.actions import Accept
from negotiator.domain.issues import NumericIssue
from negotiator.llm.consistency import Checker
from negotiator.llm.guard import Guard
from negotiator.party import PartyView, PublicMove
from negotiator.sim import generate


def used_car():
    sc = next(s for s in (generate(i) for i in range(60)) if s.template == "used_car")
    return sc


def test_a_price_and_an_option_the_offer_does_not_hold_are_corrected():
    sc = used_car()
    terms = {**sc.seller.ideal(sc.space), "price": 20100, "inspection": "as_is"}
    checker = Checker(sc.space, sc.currency)
    out, found = checker.correct("Thanks for asking. I can do 23k with full service.", terms)
    assert found == 2  # 23k is not 20,100; full_service is not as_is
    assert out == "Thanks for asking."
    out, found = checker.correct("I can do $23,000 for it.", terms)
    assert (out, found) == ("I can do $20,100 for it.", 1)  # the number is put right in place


def test_values_the_terms_hold_and_the_buyers_own_numbers_pass():
    sc = generate(0)  # furniture: price, delivery_days, assembly, payment_terms
    terms = {"price": 950, "delivery_days": 7, "assembly": "included", "payment_terms": "net30"}
    theirs = {"price": 700, "delivery_days": 3, "assembly": "included", "payment_terms": "net60"}
    checker = Checker(sc.space, sc.currency)
    for message in [
        "How about $950 with delivery in 7 days?",
        "Your 700 is too low, but I can do 950 with assembly included.",
        "I can't do net 60, but net30 works.",  # the buyer's option, then ours
        "We have 2 colours in stock and it ships from our warehouse.",  # numbers of no issue
        "Thanks! Looking forward to it.",
    ]:
        assert checker.correct(message, terms, theirs) == (message, 0), message


def test_the_buyers_values_stated_as_the_sellers_own_are_corrected():
    """A value the buyer's offer holds passes only where the sentence speaks of that offer: claimed
    as the seller's own ("my offer", "our", "here is", "included") it must be in the terms."""
    sc = generate(0)
    terms = {"price": 950, "delivery_days": 7, "assembly": "none", "payment_terms": "net30"}
    theirs = {"price": 700, "delivery_days": 3, "assembly": "included", "payment_terms": "net60"}
    checker = Checker(sc.space, sc.currency)
    out, found = checker.correct("Here is my offer: $950, assembly included. Thanks!", terms, theirs)
    assert found == 1 and "included" not in out and out == "Thanks!"
    assert checker.correct("Our delivery takes 3 days.", terms, theirs) == ("Our delivery takes 7 days.", 1)
    assert checker.correct("My best price is 700.", terms, theirs) == ("My best price is 950.", 1)
    assert checker.correct("We can offer net60 today.", terms, theirs)[1] == 1
    for message in [  # the buyer's values, spoken of as the buyer's
        "Your 700 is too low.",
        "I can't do 700.",
        "I think 700 is too low.",
        "My price stands, but you asked for 3 days delivery.",
        "You asked for assembly included, which I cannot do.",
        "Here is my answer to your net60 terms: no.",
    ]:
        assert checker.correct(message, terms, theirs) == (message, 0), message


def test_units_and_issue_names_attribute_numbers():
    sc = generate(0)
    terms = {"price": 950, "delivery_days": 7, "assembly": "included", "payment_terms": "net30"}
    checker = Checker(sc.space, sc.currency)
    out, found = checker.correct("Delivery in 14 days and the price is 1,100.", terms)
    assert found == 2 and out == "Delivery in 7 days and the price is 950."


@pytest.mark.parametrize(
    "said", ["You can pay within 60 days.", "You can pay in 150 days.", "The cost is 60 days of work."]
)
def test_a_count_of_days_is_never_corrected_into_the_price(said):
    # Before, a money word near a number of days made it the price: "You can pay within 1,014 days."
    sc = generate(0)
    terms = {"price": 1014, "delivery_days": 28, "assembly": "none", "payment_terms": "upfront"}
    out, _ = Checker(sc.space, sc.currency).correct(said, terms)
    assert "1,014" not in out and "1014" not in out
    moves = [PublicMove(party="buyer", action=MakeOffer(terms={**terms, "price": 507}, message="507?"))]
    view = PartyView.of(sc, "seller", moves)
    checked, guard = Guard(view).check(MakeOffer(terms=terms, message=said))
    assert checked.message == "Here is my offer." and guard is not None  # a span no term holds goes


def test_nothing_left_means_a_message_written_from_the_terms():
    sc = used_car()
    terms = {**sc.seller.ideal(sc.space), "price": 20100, "inspection": "as_is"}
    out, found = Checker(sc.space, sc.currency).correct("Full service included!", terms)
    assert found == 1 and out.startswith("Here is my offer:") and "20,100" in out and "as is" in out


@pytest.mark.parametrize("seed", range(12))
def test_after_correction_no_sentence_contradicts_the_terms(seed):
    sc = generate(seed)
    checker = Checker(sc.space, sc.currency)
    ideal = sc.seller.ideal(sc.space)
    other = sc.buyer.ideal(sc.space)
    price = sc.issues[0]
    lines = [
        f"I can do {other[price.name]} for you.",
        f"My price is {price.high}.",
        *(f"{i.title()}: {other[i.name]}." for i in sc.issues[1:]),
        "Let's close this today.",
    ]
    for a, b in itertools.combinations(lines, 2):
        out, _ = checker.correct(f"{a} {b}", ideal)
        assert all(not checker.contradictions(s, ideal) for s in out.split(". ")), (a, b, out)


def test_a_sentence_whose_rewrite_reads_as_another_contradiction_goes():
    """Found in a held-out run of the 270M: a number's issue is read partly from its size. In
    "pay a 2-2-1-0" the 0 is too small for a price and was the delivery's; the 14 it was
    rewritten to then read as a price."""
    from negotiator.domain.issues import DiscreteIssue, OutcomeSpace

    space = OutcomeSpace(
        issues=(
            NumericIssue(name="price", low=426, high=851, unit="USD"),
            DiscreteIssue(name="delivery_days", options=(3, 7, 14, 28), ordered=True, unit="days"),
            DiscreteIssue(name="assembly", options=("none", "included")),
            DiscreteIssue(name="payment_terms", options=("upfront", "net30", "net60")),
        )
    )
    checker = Checker(space)
    terms = {"price": 838, "delivery_days": 14, "assembly": "none", "payment_terms": "upfront"}
    message = "Here is my offer, price 838 USD, delivery days 14. We'll pay a 2-2-1-0 on your delivery day. Talk soon."
    out, found = checker.correct(message, terms)
    assert found == 4
    assert out == "Here is my offer, price 838 USD, delivery days 14. Talk soon."
    assert checker.correct(out, terms) == (out, 0)


def test_the_guard_counts_corrections_and_corrects_an_accept_against_the_accepted_terms():
    sc = generate(0)
    standing = {"price": 1500, "delivery_days": 14, "assembly": "none", "payment_terms": "upfront"}
    view = PartyView.of(sc, "seller", [PublicMove(party="buyer", action=MakeOffer(terms=standing))])
    assert sc.seller_limits.allows(standing, sc.seller)
    new, intervention = Guard(view).check(Accept(message="Deal at 1,450, delivered in 14 days."))
    assert intervention.kinds == ["message_corrected"] and new.message == "Deal at 1,500, delivered in 14 days."


def test_a_message_listing_every_term_agrees_with_its_terms():
    """Each number is read in its own clause: in "warranty months 0, delivery days 14" the 0 is
    the warranty's, though "delivery" is the next word (the rule sellers write such lists)."""
    import asyncio
    import random

    from negotiator.sim import make_party, run_negotiation

    sc = next(s for s in (generate(i) for i in range(60)) if "accessories" in s.space.names)
    terms = {"price": 655, "warranty_months": 0, "delivery_days": 14, "accessories": "none"}
    listed = "Let's start here: price 655 USD, warranty months 0, delivery days 14, accessories none."
    assert Checker(sc.space, sc.currency).correct(listed, terms) == (listed, 0)

    rng = random.Random(0)
    checked = 0
    for seed in range(40):
        sc = generate(seed)
        checker = Checker(sc.space, sc.currency)
        for _ in range(5):  # the guard's own rewrite from the terms must read back as those terms
            terms = {
                i.name: rng.choice(i.grid(11) if isinstance(i, NumericIssue) else list(i.options))
                for i in sc.space.issues
            }
            assert checker.correct(checker.from_terms(terms), terms) == (checker.from_terms(terms), 0), terms
        episode = asyncio.run(
            run_negotiation(make_party("rule/boulware", "seller"), make_party("rule/conceder", "buyer"), sc, seed)
        )
        for t in episode.turns:
            if t.party == "seller" and isinstance(t.action, MakeOffer) and t.action.message:
                assert checker.correct(t.action.message, t.action.terms) == (t.action.message, 0), t.action.message
                checked += 1
    assert checked > 100


@pytest.mark.parametrize(
    "said",
    [
        "Pay within 30 days.",  # "pay" names the payment terms (net30): 30 may be theirs, not the delivery's
        "Payment within 45 days.",
        "Pay 700 within 30 days.",
        "Delivery in 10 days with 12 months warranty.",  # months are no delivery days
        "Delivery in 2 weeks.",
    ],
)
def test_a_number_that_may_be_another_issues_is_removed_not_rewritten(said):
    # Before, "Pay within 30 days." became "Pay within 28 days.": the delivery's value on a payment
    # sentence, a promise the seller never made. A correction only puts a number's own issue's value.
    sc = generate(0)
    terms = {"price": 1014, "delivery_days": 28, "assembly": "none", "payment_terms": "upfront"}
    checker = Checker(sc.space, sc.currency)
    out, found = checker.correct(f"{said} Thanks.", terms)
    assert found >= 1 and out == "Thanks."


@pytest.mark.parametrize(
    "said, rewritten, found",
    [
        ("We deliver in 10 days.", "We deliver in 28 days.", 1),
        ("Delivery in 14 days and the price is 1,100.", "Delivery in 28 days and the price is 1,014.", 2),
        ("Delivery in 10 days, pay upfront.", "Delivery in 28 days, pay upfront.", 1),
        ("I can do 900 for it.", "I can do 1,014 for it.", 1),
    ],
)
def test_a_number_of_one_issue_is_still_put_right_in_place(said, rewritten, found):
    sc = generate(0)
    terms = {"price": 1014, "delivery_days": 28, "assembly": "none", "payment_terms": "upfront"}
    assert Checker(sc.space, sc.currency).correct(said, terms) == (rewritten, found)
