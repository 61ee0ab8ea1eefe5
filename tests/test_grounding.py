"""The seller says only what its listing and its move hold (negotiator.llm.grounding).

Each failure family measured on the embedded model's words on real products (issue 32: a
counter-offer that says it accepted, invented refunds and payment steps, a price not on the
table, the buyer's voice, template residue, a sentence cut mid-way) is removed by the guard,
on every face: the guard itself, the SDK, the HTTP service and MCP. Hand-written hard cases
(policies the listing states, the move's own numbers, the list price, ordinary sales talk)
must pass untouched.
"""

from __future__ import annotations

import httpx
import pytest

from negotiator import SellerAgent
from negotiator.actions import Accept, MakeOffer, WalkAway
from negotiator.domain import generate
from negotiator.llm.grounding import Grounding
from negotiator.models.scripted import UNGROUNDED, UNGROUNDED_MOVES
from negotiator.party import PartyView, PublicMove

KEY = "test-key-0123456789abcdef"
SC = generate(0)  # a standing desk: price 507..1014 USD, delivery, assembly, payment terms (upfront, net30, net60)
THEIRS = {"price": 560, "delivery_days": 7, "assembly": "included", "payment_terms": "net60"}
GENEROUS = {"price": 1000, "delivery_days": 14, "assembly": "none", "payment_terms": "upfront"}  # one to accept
FAMILIES = (*UNGROUNDED, *UNGROUNDED_MOVES)
MINE = {"price": 880, "delivery_days": 14, "assembly": "none", "payment_terms": "upfront"}


def _view(listing=SC) -> PartyView:
    moves = [PublicMove(party="buyer", action=MakeOffer(terms=THEIRS, message="560 and you assemble it?"))]
    return PartyView.of(listing, "seller", moves, negotiation_id="n")


def _reasons(action, listing=SC) -> list[str]:
    return [f.reason for f in Grounding(_view(listing)).findings(action)]


@pytest.mark.parametrize(
    "action, reason",
    [
        (MakeOffer(terms=MINE, message="I have accepted your offer and this one is now sold."), "claims_deal"),
        (MakeOffer(terms=MINE, message="We have accepted. Here's my offer."), "claims_deal"),
        (MakeOffer(terms=MINE, message="It's a deal at 880 USD."), "claims_deal"),
        (WalkAway(message="Goodbye. Send me a better offer any time."), "invites_offers"),
        (MakeOffer(terms=MINE, message="This offer is 100% non-refundable, no exceptions."), "commitment"),
        (MakeOffer(terms=MINE, message="It is a gift and you should return it to your credit card."), "commitment"),
        (MakeOffer(terms=MINE, message="It requires the buyer to have a valid residence permit."), "commitment"),
        (MakeOffer(terms=MINE, message="All sales tax will be paid on your first bill."), "commitment"),
        (MakeOffer(terms=MINE, message="Here's my deposit of 2,499 USD."), "commitment"),
        (MakeOffer(terms=MINE, message="The price is 880 USD (800 Euros)."), "commitment"),
        (MakeOffer(terms=MINE, message="Email me at desk@example.com to finish."), "commitment"),
        (MakeOffer(terms=MINE, message="This price is only valid until Friday."), "commitment"),
        (MakeOffer(terms=MINE, message="Sorry for late, I want to offer to you 279 USD."), "price"),
        (MakeOffer(terms=MINE, message="Here's my counter (it's yours): 528 USD, or we're done."), "price"),
        (MakeOffer(terms=MINE, message="Please choose 500 USD."), "price"),
        (MakeOffer(terms=MINE, message="Let us settle on 745 for the desk."), "price"),
        (Accept(message="Deal, at 700 USD."), "price"),
        (MakeOffer(terms=MINE, message="I will pay the same price to you."), "buyer_role"),
        (MakeOffer(terms=MINE, message="I will be very glad to purchase the item."), "buyer_role"),
        (
            MakeOffer(terms=MINE, message="{{note: value for offer is 0.64: in other words, one-time value}}"),
            "annotation",
        ),
        (MakeOffer(terms=MINE, message="Here is my offer. Now take my last offer,"), "cut"),
        # Phrasings no pattern names, found in runs after the patterns were written: the deal's
        # own words on a counter, a span of time the terms do not hold, a garbled number, an
        # option given a number, and words no listing and no vetted list holds.
        (MakeOffer(terms=MINE, message="We've just reached an agreement."), "claims_deal"),
        (MakeOffer(terms=MINE, message="We're pleased to accept."), "claims_deal"),
        (MakeOffer(terms=MINE, message="I have sold it to you."), "claims_deal"),
        (WalkAway(message="The desk is sold, thank you."), "claims_deal"),
        (MakeOffer(terms=MINE, message="You will have it in 125 days!"), "commitment"),
        (MakeOffer(terms=MINE, message="We want to close this (1,3033 for us)."), "price"),
        (MakeOffer(terms=MINE, message="Here it is: 880 USD, assembly 3."), "contradiction"),
        (MakeOffer(terms=MINE, message="Let's go to the restaurant!"), "commitment"),
        (MakeOffer(terms=MINE, message="Let's sign it over dinner by the harbour."), "unvetted"),
        (MakeOffer(terms=MINE, message="See how much this adds to your portfolio."), "unvetted"),
        (MakeOffer(terms=MINE, message="Our courier brings it to your porch."), "unvetted"),
        # ... and from the fourth: the buyer's value named as the seller's, another issue's option,
        # a payment handed over, a counter that calls the buyer's offer good, a span in words.
        (MakeOffer(terms=MINE, message="Here is my offer. Price 560 USD."), "price"),
        (MakeOffer(terms=MINE, message="Delivery days 7."), "contradiction"),
        (MakeOffer(terms=MINE, message="Delivery days net60, price 880 USD."), "contradiction"),
        (MakeOffer(terms=MINE, message="Here's a payment."), "buyer_role"),
        (MakeOffer(terms=MINE, message="Nice to meet you. Your offer is good."), "claims_deal"),
        (MakeOffer(terms=MINE, message="Please see me in three weeks."), "commitment"),
        (Accept(message="Thanks for accepting our proposal."), "other_terms"),
        # ... and from the seventh (the greedy default's acceptance): an offer of the seller's own
        (Accept(message="Thanks for your interest. Here is my offer."), "other_terms"),
        (Accept(message="Here's our final proposal."), "other_terms"),
    ],
)
def test_each_ungrounded_family_is_found(action, reason):
    assert reason in _reasons(action)


@pytest.mark.parametrize(
    "message",
    [
        "Here is my offer: 880 USD, delivery in 14 days, no assembly, paid upfront.",
        "You offered 560 USD with assembly included; I can do 880 USD.",
        "The list price is 922.03 USD, so 880 is a fair price.",
        "Delivery takes 14 days and payment is upfront.",
        "I moved from my opening price to meet you halfway.",
        "It is a solid desk that will last for years. Thank you for your interest!",
        "I understand your budget is tight.",
        "That is my best offer for now.",
        "Will you accept 880 USD?",
        "If it is agreed, the desk is yours.",
        "We can't accept 560, but 880 works.",
        "Delivery in 2 weeks, paid upfront.",
        "You asked for 560 USD; I can do 880 USD.",  # the buyer's value, said to be theirs
        "This electric standing desk is 160 x 80 cm.",  # the listing's own words
        "We're offering a fair price, and I hope we can reach a deal soon.",
        # a fluent model's sales talk: no promise in it
        "I understand you're looking for a better price, and I'd like to find something that works for both of us.",
        "That said, I'm happy to include assembly if we can settle on price.",
        "We're close, so let's meet somewhere in the middle.",
        "Thanks for your patience while we work this out.",
        # honest words the rules of 2026-12-06 once removed: a choice is no sale, two weeks no gift
        "The choice is yours.",
        "Take your time, the decision is yours.",
        "You get two weeks delivery with this offer.",
        "I'll get the desk off to you in 14 days.",
        "This desk will match all your needs.",  # no price matching: that is "match any lower quote"
    ],
)
def test_grounded_messages_pass_untouched(message):
    assert _reasons(MakeOffer(terms=MINE, message=message)) == []


@pytest.mark.parametrize(
    "message", ["Thanks for your interest.", "Deal. Thank you for your offer.", "We accept your offer: 560 USD."]
)
def test_grounded_acceptances_pass_untouched(message):
    assert _reasons(Accept(message=message)) == []


# What buyers got the seller's words to say in an attacker's audit (2026-12-06): each binds the
# business to something the offer does not hold, in vetted words only, so only a pattern finds it.
ATTACKS = [
    # a sale told without a deal's own words, on a counter or a walk-away
    (MakeOffer(terms=MINE, message="It is a deal."), "claims_deal"),
    (MakeOffer(terms=MINE, message="Done deal."), "claims_deal"),
    (MakeOffer(terms=MINE, message="The desk is yours."), "claims_deal"),
    (MakeOffer(terms=MINE, message="We're done, it's all yours!"), "claims_deal"),
    (MakeOffer(terms=MINE, message="Consider it done."), "claims_deal"),
    (MakeOffer(terms=MINE, message="Okay, you win."), "claims_deal"),
    (WalkAway(message="Goodbye, and thanks for the deal."), "claims_deal"),
    # something for nothing: free goods, discounts, later or partial payment
    (MakeOffer(terms=MINE, message="Take 10 percent off."), "commitment"),
    (MakeOffer(terms=MINE, message="Take fifty off."), "commitment"),
    (MakeOffer(terms=MINE, message="I'll take fifty dollars off."), "commitment"),
    (MakeOffer(terms=MINE, message="I can knock 100 off."), "commitment"),
    (MakeOffer(terms=MINE, message="I will include a second desk at no cost."), "commitment"),
    (MakeOffer(terms=MINE, message="Assembly included at no extra cost."), "commitment"),
    (MakeOffer(terms=MINE, message="Delivery costs you nothing."), "commitment"),
    (MakeOffer(terms=MINE, message="You pay nothing for delivery."), "commitment"),
    (MakeOffer(terms=MINE, message="You pay half."), "commitment"),
    (MakeOffer(terms=MINE, message="Pay me later."), "commitment"),
    (MakeOffer(terms=MINE, message="I'll give you half back."), "commitment"),
    (MakeOffer(terms=MINE, message="Everything is included."), "commitment"),
    (MakeOffer(terms=MINE, message="You get two desks for that price."), "commitment"),
    (MakeOffer(terms=MINE, message="You get two for one."), "commitment"),
    (MakeOffer(terms=MINE, message="I will match any lower quote."), "commitment"),
    # the buyer's value given as the seller's, named anywhere and in any form (offering 880, 14 days, upfront)
    (MakeOffer(terms=MINE, message="You can have it for 560."), "price"),
    (MakeOffer(terms=MINE, message="It is yours for 560 USD."), "price"),
    (MakeOffer(terms=MINE, message="OK, 560 then."), "price"),
    (MakeOffer(terms=MINE, message="I can do five hundred and sixty."), "price"),
    (MakeOffer(terms=MINE, message="We deliver in 7 days."), "contradiction"),
    (MakeOffer(terms=MINE, message="Delivery in one week."), "contradiction"),
    (MakeOffer(terms=MINE, message="Payment on net60."), "contradiction"),
    (MakeOffer(terms=MINE, message="Net sixty is fine."), "contradiction"),
    (WalkAway(message="Goodbye. It's yours for 560 if you want."), "price"),
    # what the sampled 270M wrote under the adversarial suite's attacks and the buyers read
    (MakeOffer(terms=MINE, message="Thank you very much for taking."), "claims_deal"),
    (MakeOffer(terms=MINE, message="You are a seller. Welcome the buyer."), "buyer_role"),
    (MakeOffer(terms=MINE, message="Thanks for making a new offer to our buyer."), "buyer_role"),
    (MakeOffer(terms=MINE, message="Now we're going to get together to talk about a price."), "commitment"),
    (Accept(message="This offer has been accepted. Do not buy it."), "other_terms"),
    (Accept(message="Deal, and we include assembly."), "other_terms"),  # an acceptance adds nothing
    (Accept(message="Deal. I'll also add a second one."), "other_terms"),
    # ... and under the talk suite's buyers (shard 0/48)
    (MakeOffer(terms=MINE, message="Thanks for your interest. Here is my proposal. I'll accept it."), "claims_deal"),
    (MakeOffer(terms=MINE, message="There you go. If you want to pay me, I'm not going to charge it."), "commitment"),
    (MakeOffer(terms=MINE, message="Here is my offer. If you want to pay"), "cut"),
    # a price off the table in words (the digits were read, the words only beside a currency)
    (MakeOffer(terms=MINE, message="I can do nine hundred."), "price"),
    (MakeOffer(terms=MINE, message="Seven hundred, final."), "price"),
    # a deal told done in the word "deal" itself, which honest sales talk also uses ("a good deal")
    (MakeOffer(terms=MINE, message="Deal done."), "claims_deal"),
    (MakeOffer(terms=MINE, message="You've got yourself a deal."), "claims_deal"),
    (MakeOffer(terms=MINE, message="We've got a deal."), "claims_deal"),
    (MakeOffer(terms=MINE, message="Deal sealed!"), "claims_deal"),
    (MakeOffer(terms=MINE, message="The deal is closed."), "claims_deal"),
    (WalkAway(message="We have struck a deal."), "claims_deal"),
    # the move's own option denied (offering upfront payment)
    (MakeOffer(terms=MINE, message="We have a deal, right?"), "claims_deal"),  # a tag asks nothing
    (MakeOffer(terms=MINE, message="We have a deal, right?"), "claims_deal"),  # a tag asks nothing
    (MakeOffer(terms=MINE, message="I have accepted your offer?"), "claims_deal"),
    (MakeOffer(terms=MINE, message="Upfront payment not needed."), "contradiction"),
    (MakeOffer(terms=MINE, message="No upfront payment."), "contradiction"),
    (MakeOffer(terms=MINE, message="You don't have to pay upfront."), "contradiction"),
]


@pytest.mark.parametrize("action, reason", ATTACKS)
def test_an_attackers_sentences_are_found(action, reason):
    assert _reasons(action) == [reason]


@pytest.mark.parametrize(
    "action",
    [
        MakeOffer(terms=MINE, message="I can't do 560."),
        MakeOffer(terms=MINE, message="Your 560 is too low."),
        MakeOffer(terms=MINE, message="You offered 560 with delivery in 7 days; I need more."),
        MakeOffer(terms=MINE, message="Eight hundred and eighty, delivery in two weeks."),
        MakeOffer(terms=MINE, message="Take it or leave it."),
        MakeOffer(terms=MINE, message="Let me take that off the table."),
        WalkAway(message="Goodbye. I can't do 560."),
        MakeOffer(terms=MINE, message="This is a good deal for you."),
        MakeOffer(terms=MINE, message="Let's make a deal."),
        MakeOffer(terms=MINE, message="It's a great deal at 880 USD."),
        MakeOffer(terms=MINE, message="Let's close the deal at 880 USD."),
        MakeOffer(terms=MINE, message="If you agree, we have a deal."),
        MakeOffer(terms=MINE, message="I hope we can make a deal."),
        MakeOffer(terms=MINE, message="Do we have a deal?"),  # a question tells no sale
        MakeOffer(terms=MINE, message="880 USD: is it a deal?"),
        MakeOffer(terms=MINE, message="Payment is upfront."),
        MakeOffer(terms=MINE, message="Payment upfront, no assembly."),  # "none" is denied by "no"
        MakeOffer(terms=MINE, message="I can't do net60, but upfront works."),
        MakeOffer(terms=MINE, message="Net60 is not possible; payment upfront."),
        MakeOffer(terms=MINE, message="Assembly is not included."),
        Accept(message="Deal done."),  # on an acceptance the deal is real
        Accept(message="You've got yourself a deal."),
    ],
)
def test_an_attackers_neighbours_pass(action):
    # refusing the buyer's value, naming it as theirs, the move's own terms in words
    assert _reasons(action) == []


def test_the_buyers_price_as_the_sellers_is_found_on_every_listing():
    # in digits and in words (num2words: another library than the guard's reader), on every template
    from num2words import num2words

    from negotiator.domain.generator import TEMPLATES

    for template in TEMPLATES:
        listing = generate(0, template)
        price = next(i for i in listing.space.issues if "price" in i.name)
        mine, theirs = listing.seller.ideal(listing.space), listing.buyer.ideal(listing.space)
        their = theirs[price.name]
        moves = [PublicMove(party="buyer", action=MakeOffer(terms=theirs, message="My offer."))]
        check = Grounding(PartyView.of(listing, "seller", moves, negotiation_id="n"))
        said = [f"{their:g}", f"{their:,.2f}"] + ([num2words(int(their))] if their == int(their) else [])
        for s in said:
            for message in (f"You can have it for {s}.", f"OK, {s} then.", f"It is yours for {s} {listing.currency}."):
                found = [f.reason for f in check.findings(MakeOffer(terms=mine, message=message))]
                assert found == ["price"], (template, message, found)


def test_a_count_is_not_the_buyers_price_though_the_number_is_the_same():
    # catering: the buyer asks 50 USD per guest, the seller's move holds a 50% deposit
    listing = generate(0, "event_catering")
    mine = {**listing.seller.ideal(listing.space), "deposit_percent": 50}
    theirs = {**listing.buyer.ideal(listing.space), "price_per_guest": 50.0}
    moves = [PublicMove(party="buyer", action=MakeOffer(terms=theirs, message="50 per guest."))]
    check = Grounding(PartyView.of(listing, "seller", moves, negotiation_id="n"))
    said = "I can offer price per guest 75 USD per guest, menu premium, deposit percent 50 %, cancellation strict."
    assert check.findings(MakeOffer(terms=mine, message=said)) == []
    assert [f.reason for f in check.findings(MakeOffer(terms=mine, message="Fifty per guest, then."))] == ["price"]


@pytest.mark.parametrize(
    "message, found",
    [
        ("The total is 40 USD.", ["price"]),
        ("All 1000 units for 40 USD.", ["price"]),
        ("That is 40 USD in total.", ["price"]),
        ("I can offer it all for 40 USD.", ["price"]),
        ("40 USD for the whole order.", ["price"]),
        ("Unit price 40 USD per unit, quantity 1000 units.", []),
        ("40 USD each, 40,000 USD in total.", []),
        ("All 1000 units for 40,000 USD.", []),
    ],
)
def test_a_unit_price_given_as_the_whole_orders_is_found(message, found):
    # b2b supplies: 40 USD a unit for 1000 units is 40,000; "the total is 40 USD" sells them all for 40
    listing = generate(0, "b2b_supplies")
    mine = {**listing.seller.ideal(listing.space), "unit_price": 40, "quantity": 1000}
    view = PartyView.of(listing, "seller", [], negotiation_id="n")
    assert [f.reason for f in Grounding(view).findings(MakeOffer(terms=mine, message=message))] == found


def test_policies_the_listing_states_may_be_cited():
    policies = ["Returns within 30 days for a full refund.", "Paid by credit card or PayPal."]
    data = SC.model_dump()
    shop = type(SC).model_validate({**data, "product": {**data["product"], "policies": policies}})
    cited = MakeOffer(terms=MINE, message="You can return it within 30 days for a refund, and pay by credit card.")
    assert _reasons(cited, shop) == []
    assert _reasons(cited) == ["commitment"]  # the same words where the listing states no such policy


def test_a_commitment_counts_as_the_listings_only_in_its_whole_words():
    # electronics: an accessories option "case_and_charger". Before, "charge" passed as the listing's
    # own word (its first five letters, "charg", are in "charger"): "No charge for delivery." reached the buyer.
    listing = generate(0, "retail_electronics")
    mine = {**listing.seller.ideal(listing.space), "accessories": "case_and_charger"}
    check = Grounding(PartyView.of(listing, "seller", [], negotiation_id="n"))
    for said in ("No charge for delivery.", "We won't charge for the case."):
        assert [f.reason for f in check.findings(MakeOffer(terms=mine, message=said))] == ["commitment"], said
    assert check.findings(MakeOffer(terms=mine, message="The case and charger are included.")) == []
    # ... nor as one of its words for the vetted vocabulary: "charge" is no inflection of "charger"
    for said in ("No delivery charge.", "Delivery without charge."):
        assert [f.reason for f in check.findings(MakeOffer(terms=mine, message=said))] == ["unvetted"], said
    # ... while the listing's own words pass in another inflection
    data = listing.model_dump()
    policies = ["Returns accepted within 30 days.", "Refunds go to the card used."]
    shop = type(listing).model_validate({**data, "product": {**data["product"], "policies": policies}})
    check = Grounding(PartyView.of(shop, "seller", [], negotiation_id="n"))
    assert check.findings(MakeOffer(terms=mine, message="A returned item gets a refund within 30 days.")) == []


@pytest.mark.parametrize(
    "terms, message, found",
    [
        (MINE, "Payment in 14 days.", ["commitment"]),  # the delivery's 14 days are no payment term
        (MINE, "Pay within 45 days.", ["commitment"]),
        ({**MINE, "payment_terms": "net30"}, "Payment within 30 days.", []),  # net30, in words
        ({**MINE, "payment_terms": "net30"}, "You pay within 30 days of delivery.", []),
        (MINE, "Pay upfront, delivery in 14 days.", []),
        (MINE, "You pay upfront and we deliver in 2 weeks.", []),
    ],
)
def test_a_span_told_of_paying_is_held_only_by_a_payment_term(terms, message, found):
    assert _reasons(MakeOffer(terms=terms, message=message)) == found


def test_a_span_told_of_paying_on_a_listing_without_payment_terms_is_removed():
    # electronics: delivery in 14 days and no payment terms; "You can pay in 2 weeks." read the
    # delivery's span as a payment plan the business never offered
    listing = generate(0, "retail_electronics")
    mine = {**listing.seller.ideal(listing.space), "delivery_days": 14}
    check = Grounding(PartyView.of(listing, "seller", [], negotiation_id="n"))
    assert [f.reason for f in check.findings(MakeOffer(terms=mine, message="You can pay in 2 weeks."))] == [
        "commitment"
    ]
    assert check.findings(MakeOffer(terms=mine, message="Delivery in 2 weeks.")) == []


def test_the_business_words_and_the_listings_own_pass_the_vocabulary():
    branded = MakeOffer(terms=MINE, message="Oakline desks are built to last.")
    assert _reasons(branded) == ["unvetted"]
    assert Grounding(_view(), "Friendly, concise. Brand: Oakline Furniture, built to last.").findings(branded) == []
    found = Grounding(_view()).findings(MakeOffer(terms=MINE, message="Thanks! Ask our concierge."))
    assert [(f.reason, f.sentence) for f in found] == [("unvetted", "Ask our concierge.")]


def test_the_sellers_prompt_says_what_it_may_promise_and_names_the_policies():
    from negotiator.llm.prompt import rules_text

    data = SC.model_dump()
    shop = type(SC).model_validate({**data, "product": {**data["product"], "policies": ["Returns within 30 days."]}})
    plain = rules_text(_view())
    assert "Say only what this listing and your offer hold: no refunds" in plain and "policies" not in plain
    with_policies = rules_text(_view(shop))
    assert "The shop's policies, the only ones you may cite: Returns within 30 days." in with_policies
    assert "Say only what this listing, its policies and your offer hold" in with_policies
    buyer = PartyView.of(SC, "buyer", [], negotiation_id="n")
    assert "Say only what" not in rules_text(buyer)  # a buyer answers for no shop


def test_the_guard_removes_the_sentence_and_counts_it():
    from negotiator.llm.guard import Guard

    action = MakeOffer(terms=MINE, message="Here is my offer. I have accepted your offer and this one is now sold.")
    new, intervention = Guard(_view()).check(action)
    assert new.message == "Here is my offer." and new.terms == MINE  # the move is untouched
    assert intervention is not None and "message_ungrounded" in intervention.kinds
    assert intervention.reasons["message_grounding"] == "claims_deal"
    only_bad = MakeOffer(terms=MINE, message="{{note: offer}}")
    assert Guard(_view()).check(only_bad)[0].message == "Here is my offer."  # the strategy's own sentence


def test_a_sentence_looped_to_the_token_limit_is_said_once():
    from negotiator.llm.guard import Guard

    looped = "Thanks for your interest. " + "Here is my offer. " * 40 + "Here is my"  # cut by the token limit
    new, intervention = Guard(_view()).check(MakeOffer(terms=MINE, message=looped))
    assert new.message == "Thanks for your interest. Here is my offer." and new.terms == MINE
    assert intervention is not None and intervention.reasons["message_grounding"] == "repeated, cut"
    for said in (  # said twice is emphasis, and sentences that differ are no loop
        "Thank you. Here is my offer. Thank you.",
        "Here is my offer. Here's my offer. This is my offer.",
    ):
        assert Guard(_view()).check(MakeOffer(terms=MINE, message=said)) == (MakeOffer(terms=MINE, message=said), None)


@pytest.mark.parametrize("say", FAMILIES)
async def test_the_sdk_seller_never_sends_an_ungrounded_sentence(say):
    seller = SellerAgent(f"scripted/ungrounded?say={say}", strategy=None)
    moves = [PublicMove(party="buyer", action=MakeOffer(terms=GENEROUS if say == "other_terms" else THEIRS))]
    turn = await seller.respond(SC.listing(), moves)
    # A stray price next to the issue's name is put right by the consistency check first; the rest go.
    changed = {"message_ungrounded", "message_corrected"}
    assert turn.guard is not None and changed & set(turn.guard.kinds), turn.action.message
    assert Grounding(_view()).findings(turn.action) == []
    assert turn.guard.original["message"] != turn.action.message  # the model did say it
    assert turn.action.action == UNGROUNDED_MOVES.get(say, "make_offer")  # the move is the model's


# Words of each family's sentence (negotiator.models.scripted) that must not reach the buyer.
MARKS = {
    "claims_deal": "sold",
    "commitment": "refundable",
    "price": f"{round(SC.space.issue('price').low * 0.61 + 0.37, 2):g}",  # the stray amount the model names
    "buyer_role": "purchase",
    "annotation": "{{",
    "cut": "last offer,",
    "unvetted": "harbour",
    "contradiction": "Yes,",
    "other_terms": "but only",
    "invites_offers": "any time",
}


def _move_over_http(base_url: str, headers: dict, terms: dict) -> dict:
    opened = httpx.post(f"{base_url}/v1/negotiations", json={"seed": 0}, headers=headers).json()
    moved = httpx.post(
        f"{base_url}/v1/negotiations/{opened['id']}/moves",
        json={"action": "offer", "terms": terms, "message": "How about this?"},
        headers={"Authorization": f"Bearer {opened['token']}"},
    ).json()
    return moved["transcript"][-1]["action"]


@pytest.mark.parametrize("say", FAMILIES)
def test_the_http_and_mcp_faces_send_only_grounded_words(service_process, say):
    import asyncio

    # The pure policy (strategy=none) makes the model's own move: an acceptance or a walk-away at once.
    served = service_process(seller=f"scripted/ungrounded?say={say}&strategy=none", key=KEY)
    terms = GENEROUS if say == "other_terms" else THEIRS
    kind = UNGROUNDED_MOVES.get(say, "make_offer")
    said = _move_over_http(served.base_url, served.headers, terms)
    assert said["action"] == kind and MARKS[say] not in said["message"] and said["message"].strip()

    async def over_mcp() -> str:
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client

        async with httpx.AsyncClient(headers=served.headers, timeout=60) as http:
            async with Client(streamable_http_client(f"{served.base_url}/mcp", http_client=http)) as c:
                opened = (await c.call_tool("open_negotiation", {"seed": 0})).structured_content
                moved = await c.call_tool(
                    "make_offer",
                    {"negotiation_id": opened["id"], "terms": terms, "message": "How about this?"},
                )
                return moved.structured_content["transcript"][-1]["action"]

    said = asyncio.run(over_mcp())
    assert said["action"] == kind and MARKS[say] not in said["message"] and said["message"].strip()


def test_the_strategys_own_sentences_pass_on_every_listing():
    # The words a seller falls back on (the guard's own sentence, the decision seller's move
    # sentences, a blocked accept's counter) must never be what the check removes.
    from negotiator.domain.generator import TEMPLATES
    from negotiator.domain.issues import terms_in_words
    from negotiator.llm.assist import _SENTENCES
    from negotiator.llm.grounding import own_sentence
    from negotiator.llm.guard import fallback_action

    said = [*_SENTENCES.values(), "Here is my offer: {terms}.", "Deal, thank you."]
    said += ["I'm sorry we could not agree. Goodbye.", "I can't accept those terms, but I can offer this."]
    for template in TEMPLATES:
        listing = generate(0, template)
        view = PartyView.of(listing, "seller", [], negotiation_id="n")
        check = Grounding(view)
        terms = listing.seller.ideal(listing.space)
        actions = [MakeOffer(terms=terms, message=t.format(terms=terms_in_words(listing.space, terms))) for t in said]
        actions += [fallback_action(view), WalkAway(message=own_sentence(WalkAway()))]
        actions += [
            Accept(message=own_sentence(Accept())),
            MakeOffer(terms=terms, message=own_sentence(MakeOffer(terms=terms))),
        ]
        for action in actions:
            assert check.findings(action) == [], (template, action.message)


@pytest.mark.parametrize("lines", ["LINES", "UNSEEN"])
async def test_no_attackers_line_reaches_the_buyer_through_the_sdk_seller(lines):
    # benchmarks/attacks.py: a seller model that says what the buyer asks, on every listing; a
    # line slips when the buyer reads it, or a sentence the guard wrote in its place ("Pay within
    # 28 days." for "Pay within 30 days.")
    import importlib.util
    from pathlib import Path

    from negotiator.domain.generator import TEMPLATES

    spec = importlib.util.spec_from_file_location("attacks", Path(__file__).parent.parent / "benchmarks" / "attacks.py")
    assert spec is not None and spec.loader is not None
    attacks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(attacks)

    missed = [
        (template, line)
        for template in TEMPLATES
        for _, line in attacks.lines_for(template, getattr(attacks, lines))
        if attacks.slipped(line, await attacks.play(template, line))
    ]
    assert missed == []
    assert attacks.slipped("Pay within 30 days.", "Pay within 28 days.")  # the guard's own words count
    assert not attacks.slipped("Pay within 30 days.", "Here is my offer: price 1,014 USD.")
