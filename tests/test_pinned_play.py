"""The baseline arm and the suites' buyers play exactly as they did before the responsive strategy.

Every comparison in docs/ and in the issues is pinned to the held-out suite's negotiations:
its scenarios, its personas and how its rule buyers play. ``rule/boulware`` is the pinned
baseline seller arm. Playing it against the ``quick`` and ``heldout`` suites must give, move
for move and buyer message for buyer message, what main gave at 8aea479 (before the responsive strategy,
the talking buyers and the choice model existed). A change in the buyers' play, the Boulware
seller or the strategy machinery they share shows up here. The rule seller's own words were
fixed on purpose since (a counter that gives nothing up no longer says it moved); they are
pinned by tests/test_rule_messages.py, so the digest leaves them out.

The digests were computed from ``negotiator eval --suite quick|heldout --seller rule/boulware``
run at 8aea479.
"""

from __future__ import annotations

import asyncio
import hashlib
import json

import pytest

from evals.runner import RunOptions, make_buyer, plan
from evals.suites import get_suite
from negotiator.runtime import make_party, run_negotiation

PINNED_AT_8AEA479 = {"quick": "465a494bf62d3860", "heldout": "a21b22637863b0ff"}


def play_digest(suite: str, seller: str = "rule/boulware", *, seller_messages: bool = False) -> str:
    """A digest of every move (party, action, terms, buyer message) of every negotiation, in negotiation order.

    ``seller_messages``: the seller's words too.
    """

    async def play() -> list:
        eps = []
        for job in plan(get_suite(suite), seller):
            ep = await run_negotiation(
                make_party(seller, "seller", seed=job.seed),
                make_buyer(job, RunOptions()),
                job.scenario,
                job.seed,
                labels=job.labels,
                persona=job.persona,
            )
            eps.append(ep)
        return eps

    h = hashlib.sha256()
    for ep in sorted(asyncio.run(play()), key=lambda e: e.labels["negotiation"]):
        h.update(ep.labels["negotiation"].encode())
        for t in ep.turns:
            terms = getattr(t.action, "terms", None)
            # The rule seller's words are pinned by tests/test_rule_messages.py (they were fixed on purpose);
            # its moves and everything the buyers do are pinned here.
            message = t.action.message if t.party != "seller" or seller_messages else None
            h.update(json.dumps([t.party, t.action.action, terms, message], sort_keys=True).encode())
    return h.hexdigest()[:16]


def test_the_quick_suite_plays_as_it_did():
    assert play_digest("quick") == PINNED_AT_8AEA479["quick"]


@pytest.mark.slow
def test_the_heldout_suite_plays_as_it_did():
    """All 1,152 negotiations: the baseline seller and both rule buyers (rule/persona, rule/tit_for_tat)."""
    assert play_digest("heldout") == PINNED_AT_8AEA479["heldout"]


# The responsive seller (the default's strategy), words included, as played at 3adbc04. Making the
# strategy or the runtime cheaper must not change a move or a message; a change of its play on
# purpose updates these digests, and says so in its commit.
RESPONSIVE_AT_3ADBC04 = {"quick": "365115c31906660f", "heldout": "11e5c1c1e8cdc52d"}


def test_the_responsive_seller_plays_the_quick_suite_as_pinned():
    assert play_digest("quick", "rule/responsive", seller_messages=True) == RESPONSIVE_AT_3ADBC04["quick"]


@pytest.mark.slow
def test_the_responsive_seller_plays_the_heldout_suite_as_pinned():
    assert play_digest("heldout", "rule/responsive", seller_messages=True) == RESPONSIVE_AT_3ADBC04["heldout"]
