"""Bidding: concrete offers worth the target, the ones best for the other side.

Every candidate comes from the outcome index, which holds only outcomes within the side's
hard limits, and is worth at least the target: the price (the heaviest numeric issue) is
fine-tuned so each lands on the target, and the candidates differ in how they trade the
other issues (logrolling), ranked by what the opponent model says the other side wants.
Without an opponent model the candidates are the outcomes nearest the other side's latest
offer (the similarity criterion of Faratin's trade-off tactic).
"""

from __future__ import annotations

import heapq

from ..domain.issues import Offer
from .opponent import OpponentModel
from .outcomes import OutcomeIndex


def bids(
    index: OutcomeIndex,
    target: float,
    *,
    model: OpponentModel | None = None,
    toward: Offer | None = None,
    k: int = 3,
    window: float = 0.05,
    similarity: float = 0.0,
) -> list[Offer]:
    """Up to ``k`` distinct offers worth at least ``target``, best for the other side first."""
    if target >= index.u_max - 1e-9:
        return [dict(index.ideal)]
    if model is None and k == 1:
        return [index.offer(target, toward=toward, window=window)]
    tuned = index.distinct_tuned_band(target, window)  # the index's own offers: copy what leaves
    if not tuned:
        return [dict(index.ideal)]

    def distance(o: Offer) -> float:
        return index.distance(o, toward) if toward is not None else 0.0

    if model is None:
        return [dict(o) for o in heapq.nsmallest(k, tuned, key=distance)]
    n = len(index.space.names)

    def rank(o: Offer) -> tuple[float, float]:
        d = distance(o)
        return -round(model.utility(o) - similarity * d / n, 9), d

    # what sorted(tuned, key=rank)[:k] gives, without the full sort
    return [dict(o) for o in heapq.nsmallest(k, tuned, key=rank)]
