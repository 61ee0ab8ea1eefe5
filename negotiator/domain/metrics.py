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
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from pydantic import BaseModel, ConfigDict

from .issues import Offer
from .scenario import Scenario
from .utility import LinearValue, score

__all__ = ["OutcomeMetrics", "outcome_metrics", "seller_score", "analysis", "ScenarioAnalysis", "pareto_frontier"]


def seller_score(scenario: Scenario, terms: Offer | None) -> float:
    """The reward: (U_s(deal) - r_s) / (1 - r_s) in [0, 1]; no deal scores 0."""
    u = None if terms is None else scenario.seller.utility(terms)
    return score(u, scenario.seller.reservation)


@dataclass(frozen=True)
class ScenarioAnalysis:
    nash: tuple[float, float] | None  # None when there is no zone of agreement
    nash_terms: Offer | None
    best_joint_margin: float  # max over allowed outcomes of min(U_s - r_s, U_b - r_b)
    scenario: Scenario = field(repr=False, compare=False)

    @cached_property
    def frontier(self) -> tuple[tuple[float, float], ...]:
        """(U_s, U_b) of the whole outcome space's Pareto frontier, U_s ascending. Computed when
        first asked for: planning a suite needs only the zone of agreement."""
        return tuple(map(tuple, self.polyline.tolist()))

    @cached_property
    def polyline(self):
        """``frontier`` as an (n, 2) numpy array, for distances to it."""
        import numpy as np

        full = _front(self.scenario, within_limits=False)
        return np.column_stack((full.us[::-1], full.ub[::-1]))


Point = tuple[float, float, tuple]


def _pareto_order(us, ub):
    """Indices of the Pareto-optimal points (maximising both utilities), U_s descending.

    Ties keep U_b descending, then the given order (``lexsort`` is stable); a point is kept
    when it beats every point before it on U_b by more than 1e-12."""
    import numpy as np

    order = np.lexsort((-ub, -us))
    sub = ub[order]
    best_before = np.maximum.accumulate(np.concatenate(([-1.0], sub[:-1])))
    return order[sub > best_before + 1e-12]


def pareto_frontier(scenario: Scenario, *, within_limits: bool = False, points: int = 201) -> list[Point]:
    """Pareto frontier of the outcome space as (U_s, U_b, values in issue order), U_s descending.

    Utilities are additive, so the frontier of the whole space is the pruned sum of the
    per-issue frontiers: built issue by issue it stays small and exact on the grid
    (``points`` values per numeric issue). ``within_limits`` drops values the seller's
    per-issue hard limits forbid.
    """
    front = _Front.of(scenario, within_limits, points)
    return [(float(a), float(c), front.terms(i)) for i, (a, c) in enumerate(zip(front.us, front.ub, strict=False))]


@dataclass(frozen=True)
class _Front:
    """A frontier as arrays: utilities, U_s descending, and each point's value per issue
    (an index into ``choices``); terms are put together only for the points asked for."""

    us: Any  # numpy arrays (numpy is imported when first needed)
    ub: Any
    picks: Any
    choices: tuple[list, ...]

    @classmethod
    def of(cls, scenario: Scenario, within_limits: bool, points: int) -> _Front:
        import numpy as np

        s, b = scenario.seller, scenario.buyer
        lim = scenario.seller_limits
        fus, fub = np.zeros(1), np.zeros(1)
        picks = np.zeros((1, 0), dtype=np.int64)
        choices = []
        for issue in scenario.space.issues:
            k = issue.name
            values = list(issue.options) if issue.kind == "discrete" else issue.grid(points)
            if within_limits:
                lo, hi = lim.minimum.get(k), lim.maximum.get(k)
                values = [
                    v
                    for v in values
                    if (lo is None or float(v) >= lo)
                    and (hi is None or float(v) <= hi)
                    and v not in lim.forbidden.get(k, ())
                ]
            ws, wb = s.weights[k], b.weights[k]
            vs, vb = s.values[k], b.values[k]
            cus, cub = _weighted_values(ws, vs, values), _weighted_values(wb, vb, values)
            kept = _pareto_order(cus, cub)
            choices.append([values[i] for i in kept])
            # Every (front point, issue value) pair, front-major: point i with value j sits at i * n + j.
            n = len(kept)
            us = (fus[:, None] + cus[kept][None, :]).ravel()
            ub = (fub[:, None] + cub[kept][None, :]).ravel()
            kept = _pareto_order(us, ub)
            fus, fub = us[kept], ub[kept]
            picks = np.column_stack((picks[kept // n], kept % n))
        return cls(fus, fub, picks, tuple(choices))

    def terms(self, i: int) -> tuple:
        return tuple(self.choices[j][v] for j, v in enumerate(self.picks[i].tolist()))


def _weighted_values(w: float, vf, values: list):
    """``[w * vf(v) for v in values]`` as a numpy array; a linear value function's in numpy,
    with the same operations on the same floats (``+ 0.0`` turns the -0.0 that ``np.maximum``
    may keep into the 0.0 that ``max`` gives): the numeric issues' 201 grid points."""
    import numpy as np

    if isinstance(vf, LinearValue):
        t = (np.array(values, dtype=float) - vf.worst) / (vf.best - vf.worst)
        return w * (np.minimum(1.0, np.maximum(0.0, t)) + 0.0)
    return np.array([w * vf(v) for v in values], dtype=float)


_CACHE: dict[str, ScenarioAnalysis] = {}
_FRONTIERS: dict[tuple, _Front] = {}


def analysis(scenario: Scenario) -> ScenarioAnalysis:
    """Frontier and Nash point of ``scenario``, computed once per distinct game."""
    key = scenario.fingerprint
    if key not in _CACHE:
        if len(_CACHE) > 4096:
            _CACHE.clear()
        _CACHE[key] = _analyse(scenario)
    return _CACHE[key]


def _front(scenario: Scenario, *, within_limits: bool) -> _Front:
    """A frontier on the 201-point grid. It does not depend on the reservations, so a persona
    whose reservation is lowered until a zone of agreement opens reuses it."""
    key = (
        within_limits,
        scenario.space.model_dump_json(),
        scenario.seller.model_dump_json(exclude={"reservation"}),
        scenario.buyer.model_dump_json(exclude={"reservation"}),
        scenario.seller_limits.model_dump_json(exclude={"min_utility"}) if within_limits else "",
    )
    if key not in _FRONTIERS:
        if len(_FRONTIERS) > 4096:
            _FRONTIERS.clear()
        _FRONTIERS[key] = _Front.of(scenario, within_limits, 201)
    return _FRONTIERS[key]


def _analyse(scenario: Scenario) -> ScenarioAnalysis:
    import numpy as np

    s, b = scenario.seller, scenario.buyer
    allowed = _front(scenario, within_limits=True)
    rs = scenario.seller_limits.utility_floor(s)
    rb = b.reservation
    margin = float(np.max(np.minimum(allowed.us - rs, allowed.ub - rb)))
    zone = (allowed.us >= rs) & (allowed.ub >= rb)
    nash, nash_terms = None, None
    if zone.any():
        prod = np.where(zone, (allowed.us - s.reservation) * (allowed.ub - rb), -np.inf)
        i = int(np.argmax(prod))  # the first of the best, in U_s-descending order
        nash = (float(allowed.us[i]), float(allowed.ub[i]))
        nash_terms = dict(zip(scenario.space.names, allowed.terms(i), strict=False))
    return ScenarioAnalysis(nash, nash_terms, margin, scenario)


def _pareto_distance(front, p: tuple[float, float]) -> float:
    """Euclidean distance from ``p`` to the frontier polyline (an (n, 2) array, U_s
    ascending); 0 when nothing dominates ``p``."""
    import numpy as np

    x, y = front[:, 0], front[:, 1]
    if not np.any((x >= p[0] - 1e-9) & (y >= p[1] - 1e-9) & ((x > p[0] + 1e-9) | (y > p[1] + 1e-9))):
        return 0.0
    a, d = front[:-1], np.diff(front, axis=0)
    length = np.einsum("ij,ij->i", d, d)
    t = np.clip(np.einsum("ij,ij->i", p - a, d) / np.where(length > 0, length, 1.0), 0.0, 1.0)
    nearest = np.vstack((front, a + t[:, None] * d))  # the vertices and each segment's nearest point
    return float(np.sqrt(np.min(np.einsum("ij,ij->i", nearest - p, nearest - p))))


class OutcomeMetrics(BaseModel):
    """How a negotiation ended, scored for both sides."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)  # a log line with a nan score is damaged

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
        pareto_distance=round(_pareto_distance(a.polyline, (us, ub)), 6),
        nash_distance=None if a.nash is None else round(math.dist((us, ub), a.nash), 6),
        rounds=(turns + 1) // 2,
        turns=turns,
    )
