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
from negotiator.models.scripted import UNGROUNDED
from negotiator.party import PartyView, PublicMove

KEY = "test-key-0123456789abcdef"
SC = generate(0)  # a standing desk: price 507..1014 USD, delivery, assembly, payment terms (upfront, net30, net60)
THEIRS = {"price": 560, "delivery_days": 7, "assembly": "included", "payment_terms": "net60"}
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
    ],
)
def test_grounded_messages_pass_untouched(message):
    assert _reasons(MakeOffer(terms=MINE, message=message)) == []


def test_policies_the_listing_states_may_be_cited():
    policies = ["Returns within 30 days for a full refund.", "Paid by credit card or PayPal."]
    data = SC.model_dump()
    shop = type(SC).model_validate({**data, "product": {**data["product"], "policies": policies}})
    cited = MakeOffer(terms=MINE, message="You can return it within 30 days for a refund, and pay by credit card.")
    assert _reasons(cited, shop) == []
    assert _reasons(cited) == ["commitment"]  # the same words where the listing states no such policy


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


@pytest.mark.parametrize("say", UNGROUNDED)
async def test_the_sdk_seller_never_sends_an_ungrounded_sentence(say):
    seller = SellerAgent(f"scripted/ungrounded?say={say}", strategy=None)
    moves = [PublicMove(party="buyer", action=MakeOffer(terms=THEIRS, message="560?"))]
    turn = await seller.respond(SC.listing(), moves)
    # A stray price next to the name is put right by the consistency check first; the rest go.
    changed = {"message_ungrounded", "message_corrected"}
    assert turn.guard is not None and changed & set(turn.guard.kinds), turn.action.message
    assert Grounding(_view()).findings(turn.action) == []
    assert turn.guard.original["message"] != turn.action.message  # the model did say it


def _move_over_http(base_url: str, headers: dict) -> str:
    opened = httpx.post(f"{base_url}/v1/negotiations", json={"seed": 0}, headers=headers).json()
    moved = httpx.post(
        f"{base_url}/v1/negotiations/{opened['id']}/moves",
        json={"action": "offer", "terms": THEIRS, "message": "560?"},
        headers={"Authorization": f"Bearer {opened['token']}"},
    ).json()
    return moved["transcript"][-1]["action"]["message"]


def test_the_http_and_mcp_faces_send_only_grounded_words(service_process):
    import asyncio

    served = service_process(seller="scripted/ungrounded?say=commitment", key=KEY)
    said = _move_over_http(served.base_url, served.headers)
    assert "refundable" not in said and said.strip()

    async def over_mcp() -> str:
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client

        async with httpx.AsyncClient(headers=served.headers, timeout=60) as http:
            async with Client(streamable_http_client(f"{served.base_url}/mcp", http_client=http)) as c:
                opened = (await c.call_tool("open_negotiation", {"seed": 0})).structured_content
                moved = await c.call_tool(
                    "make_offer",
                    {"negotiation_id": opened["id"], "terms": THEIRS, "message": "560?"},
                )
                return moved.structured_content["transcript"][-1]["action"]["message"]

    said = asyncio.run(over_mcp())
    assert "refundable" not in said and said.strip()
