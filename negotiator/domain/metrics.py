"""Outcome metrics: the seller score (the reward) and what the literature reports beside it.

Every number here is computed once, in this module, and reused unchanged by the runtime,
the evaluation suite and GRPO training.

Pareto frontier and Nash point are computed on the outcome grid (all discrete options x
201 values per numeric issue), exactly and fast because utilities are additive (see
``pareto_frontier``). The Nash point respects the seller's hard limits. No deal is scored
at the disagreement point ``(r_s, r_b)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

from .issues import Offer
from .scenario import Scenario
from .utility import score

__all__ = ["OutcomeMetrics", "outcome_metrics", "seller_score", "analysis", "ScenarioAnalysis", "pareto_frontier"]


def seller_score(scenario: Scenario, terms: Offer | None) -> float:
    """The reward: (U_s(deal) - r_s) / (1 - r_s) in [0, 1]; no deal scores 0."""
    u = None if terms is None else scenario.seller.utility(terms)
    return score(u, scenario.seller.reservation)


@dataclass(frozen=True)
class ScenarioAnalysis:
    frontier: tuple[tuple[float, float], ...]  # (U_s, U_b) sorted by U_s ascending
    nash: tuple[float, float] | None  # None when there is no zone of agreement
    nash_terms: Offer | None
    best_joint_margin: float  # max over allowed outcomes of min(U_s - r_s, U_b - r_b)


Point = tuple[float, float, tuple]


def _pareto_order(us: list[float], ub: list[float]) -> list[int]:
    """Indices of the Pareto-optimal points (maximising both utilities), U_s descending.

    Ties keep U_b descending, then the given order. Two stable sorts on C-level keys do what
    one sort on ``(-U_s, -U_b)`` would, without building a key tuple per point."""
    order = sorted(range(len(us)), key=ub.__getitem__, reverse=True)
    order.sort(key=us.__getitem__, reverse=True)
    kept, top = [], -1.0
    for i in order:
        u = ub[i]
        if u > top + 1e-12:
            kept.append(i)
            top = u
    return kept


def pareto_frontier(scenario: Scenario, *, within_limits: bool = False, points: int = 201) -> list[Point]:
    """Pareto frontier of the outcome space as (U_s, U_b, values in issue order), U_s descending.

    Utilities are additive, so the frontier of the whole space is the pruned sum of the
    per-issue frontiers: built issue by issue it stays small and exact on the grid
    (``points`` values per numeric issue). ``within_limits`` drops values the seller's
    per-issue hard limits forbid. The sums are kept as plain float lists and the terms are
    put together only for the points that survive a step (most of the products do not).
    """
    s, b = scenario.seller, scenario.buyer
    lim = scenario.seller_limits
    fus, fub, fvals = [0.0], [0.0], [()]
    for issue in scenario.space.issues:
        k = issue.name
        values = list(issue.options) if issue.kind == "discrete" else issue.grid(points)
        if within_limits:
            lo, hi = lim.minimum.get(k), lim.maximum.get(k)
            values = [
                v for v in values
                if (lo is None or float(v) >= lo) and (hi is None or float(v) <= hi) and v not in lim.forbidden.get(k, ())
            ]
        ws, wb = s.weights[k], b.weights[k]
        vs, vb = s.values[k], b.values[k]
        cus, cub = [ws * vs(v) for v in values], [wb * vb(v) for v in values]
        kept = _pareto_order(cus, cub)
        pus, pub, pvals = [cus[i] for i in kept], [cub[i] for i in kept], [values[i] for i in kept]
        # Every (front point, issue value) pair, front-major: point i with value j sits at i * n + j.
        n = len(kept)
        us = [a + c for a in fus for c in pus]
        ub = [d + e for d in fub for e in pub]
        kept = _pareto_order(us, ub)
        fus, fub = [us[i] for i in kept], [ub[i] for i in kept]
        fvals = [fvals[i // n] + (pvals[i % n],) for i in kept]
    return list(zip(fus, fub, fvals))


_CACHE: dict[str, ScenarioAnalysis] = {}


def analysis(scenario: Scenario) -> ScenarioAnalysis:
    """Frontier and Nash point of ``scenario``, computed once per distinct game."""
    key = scenario.fingerprint
    if key not in _CACHE:
        if len(_CACHE) > 4096:
            _CACHE.clear()
        _CACHE[key] = _analyse(scenario)
    return _CACHE[key]


def _analyse(scenario: Scenario) -> ScenarioAnalysis:
    s, b = scenario.seller, scenario.buyer
    full = pareto_frontier(scenario)
    allowed = pareto_frontier(scenario, within_limits=True)
    rs = scenario.seller_limits.utility_floor(s)
    rb = b.reservation
    nash, nash_terms, best = None, None, -1.0
    margin = -1.0
    names = scenario.space.names
    for us, ub, values in allowed:
        margin = max(margin, min(us - rs, ub - rb))
        if us >= rs and ub >= rb:
            prod = (us - s.reservation) * (ub - rb)
            if prod > best:
                best, nash, nash_terms = prod, (us, ub), dict(zip(names, values))
    frontier = tuple((us, ub) for us, ub, _ in reversed(full))
    return ScenarioAnalysis(frontier, nash, nash_terms, margin)


def _pareto_distance(front: tuple[tuple[float, float], ...], p: tuple[float, float]) -> float:
    """Euclidean distance from ``p`` to the frontier polyline; 0 when nothing dominates ``p``."""
    if not any(f[0] >= p[0] - 1e-9 and f[1] >= p[1] - 1e-9 and (f[0] > p[0] + 1e-9 or f[1] > p[1] + 1e-9) for f in front):
        return 0.0
    best = min(math.dist(p, f) for f in front)
    for a, c in zip(front, front[1:]):
        dx, dy = c[0] - a[0], c[1] - a[1]
        L = dx * dx + dy * dy
        if L == 0:
            continue
        t = max(0.0, min(1.0, ((p[0] - a[0]) * dx + (p[1] - a[1]) * dy) / L))
        best = min(best, math.dist(p, (a[0] + t * dx, a[1] + t * dy)))
    return best


class OutcomeMetrics(BaseModel):
    """How a negotiation ended, scored for both sides."""

    model_config = ConfigDict(extra="forbid")

    deal: bool
    seller_score: float
    seller_utility: float
    seller_reservation: float
    buyer_score: float
    buyer_utility: float
    buyer_reservation: float
    joint_utility: float
    pareto_distance: float
    nash_distance: float | None
    rounds: int
    turns: int


def outcome_metrics(scenario: Scenario, terms: Offer | None, turns: int) -> OutcomeMetrics:
    s, b = scenario.seller, scenario.buyer
    us = s.utility(terms) if terms is not None else s.reservation
    ub = b.utility(terms) if terms is not None else b.reservation
    a = analysis(scenario)
    return OutcomeMetrics(
        deal=terms is not None,
        seller_score=seller_score(scenario, terms),
        seller_utility=round(us, 6),
        seller_reservation=s.reservation,
        buyer_score=score(ub if terms is not None else None, b.reservation),
        buyer_utility=round(ub, 6),
        buyer_reservation=b.reservation,
        joint_utility=round(us + ub, 6),
        pareto_distance=round(_pareto_distance(a.frontier, (us, ub)), 6),
        nash_distance=None if a.nash is None else round(math.dist((us, ub), a.nash), 6),
        rounds=(turns + 1) // 2,
        turns=turns,
    )
