"""Real seller prompts from a suite, for measuring a model's decoding on the prompts it serves."""

from __future__ import annotations

from negotiator.actions import MakeOffer, action_json_schema
from negotiator.llm.prompt import render_messages
from negotiator.party import PartyView, PublicMove

from .suites import get_suite


def first_seller_turns(n: int, suite: str = "quick") -> list[tuple[list[dict], dict]]:
    """(messages, action schema) of ``n`` first seller turns of ``suite``'s scenarios, in turn."""
    out = []
    scenarios = get_suite(suite).scenarios()
    for i in range(n):
        sc = scenarios[i % len(scenarios)]
        moves: tuple[PublicMove, ...] = ()
        allowed: tuple[str, ...] = ("make_offer", "walk_away")
        if sc.opener == "buyer":  # the seller answers the buyer's opening offer
            moves = (PublicMove(party="buyer", action=MakeOffer(terms=sc.buyer.ideal(sc.space), message="My offer.")),)
            allowed = ("make_offer", "accept", "walk_away")
        out.append((render_messages(PartyView.of(sc, "seller", moves)), action_json_schema(sc.space, allowed)))
    return out
