"""What a rule seller says matches what it does: it claims to move toward the buyer only when it
does. The words are all that changed: the rule seller's moves (a pinned baseline) and the rule
buyers' moves and messages (the held-out suite's buyers) are exactly what they were."""

from __future__ import annotations

import asyncio
import hashlib
import json

import pytest

from evals.runner import RunOptions, plan, run_job
from evals.suites import get_suite

CLAIMS = ("I can move a little", "Meet me here")  # the counters that say the seller moved toward the buyer


@pytest.fixture(scope="module")
def episodes():
    """rule/boulware against the held-out suite's own buyers, every 8th negotiation (144 of 1,152)."""
    jobs = plan(get_suite("heldout"), "rule/boulware")[::8]

    async def play():
        return await asyncio.gather(*(run_job(j, RunOptions()) for j in jobs))

    return asyncio.run(play())


def _counters(episodes):
    """(scenario, previous seller offer, new seller offer, message) for every changed seller offer."""
    for ep in episodes:
        before = None
        for t in ep.turns:
            if t.party != "seller" or t.action.action != "make_offer":
                continue
            if before is not None and t.action.terms != before:
                yield ep.scenario, before, t.action.terms, t.action.message
            before = t.action.terms


def test_a_rule_seller_says_it_meets_the_buyer_only_when_its_offer_got_better_for_the_buyer(episodes):
    claimed = raised = 0
    for sc, before, after, message in _counters(episodes):
        price = sc.issues[0].name
        worse_for_buyer = sc.buyer.utility(after) < sc.buyer.utility(before) - 1e-9 or after[price] > before[price]
        if message.startswith(CLAIMS):
            claimed += 1
            assert not worse_for_buyer, (sc.id, before, after, message)
            # by its own values: something given up, nothing taken back
            assert sc.seller.utility(after) < sc.seller.utility(before)
        if sc.seller.utility(after) > sc.seller.utility(before):  # the schedule's noise raised the ask
            raised += 1
            assert not message.startswith(CLAIMS), (sc.id, before, after, message)
    # Both kinds happen in these negotiations, so the checks above were exercised.
    assert claimed > 100 and raised > 20, (claimed, raised)


# sha256 prefixes over these 144 negotiations at 8aea479, before the seller's words changed.
MOVES = "c28e129ff3c01fde"  # every turn's party, action and terms
BUYER_WORDS = "cb97c71e36d97efe"  # every buyer message


def test_the_moves_and_the_buyers_words_are_what_they_were(episodes):
    moves, buyer_words = hashlib.sha256(), hashlib.sha256()
    for ep in episodes:
        for t in ep.turns:
            a = t.action
            moves.update(json.dumps([t.party, a.action, getattr(a, "terms", None)], sort_keys=True).encode())
            if t.party == "buyer":
                buyer_words.update(a.message.encode())
    assert (moves.hexdigest()[:16], buyer_words.hexdigest()[:16]) == (MOVES, BUYER_WORDS)
