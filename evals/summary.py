"""Summaries of an episode log: overall and per evaluation buyer."""

from __future__ import annotations

from collections import defaultdict
from statistics import fmean

from negotiator.runtime.episode import Episode


def _block(eps: list[Episode]) -> dict:
    n = len(eps)
    if n == 0:
        return {"n": 0}
    m = [e.metrics for e in eps]
    model_turns = [x.first_attempt_valid_rate for x in m if x.first_attempt_valid_rate is not None]
    seller_answers = sum(x.seller_turns for x in m)
    return {
        "n": n,
        "seller_score": round(fmean(x.seller_score for x in m), 6),
        "deal_rate": round(fmean(1.0 if x.deal else 0.0 for x in m), 6),
        "buyer_score": round(fmean(x.buyer_score for x in m), 6),
        "joint_utility": round(fmean(x.joint_utility for x in m), 6),
        "pareto_distance": round(fmean(x.pareto_distance for x in m), 6),
        "nash_distance": round(fmean(x.nash_distance for x in m if x.nash_distance is not None), 6)
        if any(x.nash_distance is not None for x in m)
        else None,
        "rounds": round(fmean(x.rounds for x in m), 3),
        "invalid_actions": sum(x.invalid_actions for x in m),
        "invalid_rate": round(fmean(x.invalid_rate for x in m), 6),
        "first_attempt_valid_rate": round(fmean(model_turns), 6) if model_turns else None,
        "fallbacks": sum(x.fallbacks for x in m),
        "fallback_rate": round(sum(x.fallbacks for x in m) / seller_answers, 6) if seller_answers else 0.0,
        "guard_interventions": sum(x.guard_interventions for x in m),
        "errors": sum(1 for e in eps if e.outcome.ended_by == "error"),
        "prompt_tokens": sum(x.prompt_tokens for x in m),
        "completion_tokens": sum(x.completion_tokens for x in m),
        "cost_usd": round(sum(x.cost_usd for x in m), 6),
    }


def summarize(episodes: list[Episode]) -> dict:
    """Overall figures plus the same figures per evaluation buyer."""
    by_buyer: dict[str, list[Episode]] = defaultdict(list)
    for e in episodes:
        by_buyer[e.buyer.spec].append(e)
    sellers = sorted({e.seller.spec for e in episodes})
    return {
        "sellers": sellers,
        "overall": _block(episodes),
        "by_buyer": {b: _block(eps) for b, eps in sorted(by_buyer.items())},
    }
