"""Linear-additive utilities and reservation values.

Each side privately values an outcome as ``U(o) = sum_i w_i * v_i(o_i)`` with weights
summing to 1 and per-issue value functions mapping to [0, 1]. Walking away is worth the
side's reservation utility ``r``. The seller's score of a deal is ``(U_s - r_s)/(1 - r_s)``.
"""

from __future__ import annotations

import math
from functools import cached_property
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, FiniteFloat, model_validator

from .issues import DiscreteIssue, NumericIssue, Offer, OutcomeSpace, Value


class LinearValue(BaseModel):
    """Value of a numeric issue rising linearly from 0 at ``worst`` to 1 at ``best``."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    kind: Literal["linear"] = "linear"
    worst: FiniteFloat
    best: FiniteFloat

    @model_validator(mode="after")
    def _distinct(self) -> LinearValue:
        if self.worst == self.best:
            raise ValueError("linear value function needs worst != best")
        if not math.isfinite(self.best - self.worst):
            raise ValueError(
                f"linear value function: worst ({self.worst}) and best ({self.best}) are too far apart to compute with"
            )
        return self

    def __call__(self, x: Value) -> float:
        t = (float(x) - self.worst) / (self.best - self.worst)
        return min(1.0, max(0.0, t))

    def inverse(self, v: float) -> float:
        """The issue value whose value is ``v`` (clamped to [0, 1])."""
        return self.worst + min(1.0, max(0.0, v)) * (self.best - self.worst)


class TableValue(BaseModel):
    """Value of each option of a discrete issue."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    kind: Literal["table"] = "table"
    values: dict[str, FiniteFloat]

    @model_validator(mode="after")
    def _range(self) -> TableValue:
        bad = {k: v for k, v in self.values.items() if not 0.0 <= v <= 1.0}
        if bad:
            raise ValueError(f"table values must lie in [0, 1]: {bad}")
        return self

    def __call__(self, x: Value) -> float:
        # Keys are strings in JSON; options may be ints (delivery days).
        return self.values[str(x)]


ValueFunction = Annotated[LinearValue | TableValue, Field(discriminator="kind")]


class Preferences(BaseModel):
    """One side's private preferences: weights, value functions and reservation utility."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    weights: dict[str, FiniteFloat]
    values: dict[str, ValueFunction]
    reservation: FiniteFloat = Field(ge=0.0, lt=1.0, description="utility of walking away, in [0, 1)")

    @model_validator(mode="after")
    def _check(self) -> Preferences:
        if set(self.weights) != set(self.values):
            raise ValueError("weights and value functions must name the same issues")
        if any(w < 0 for w in self.weights.values()):
            raise ValueError("weights must be non-negative")
        total = sum(self.weights.values())
        if abs(total - 1.0) > 1e-6:
            raise ValueError(f"weights must sum to 1, they sum to {total:.6f}")
        return self

    def check_space(self, space: OutcomeSpace) -> None:
        if set(self.weights) != set(space.names):
            raise ValueError(f"preferences cover {sorted(self.weights)} but the issues are {sorted(space.names)}")
        for issue in space.issues:
            vf = self.values[issue.name]
            if isinstance(issue, DiscreteIssue):
                if not isinstance(vf, TableValue):
                    raise ValueError(f"issue {issue.name!r} is discrete: give a table value function")
                missing = [o for o in issue.options if str(o) not in vf.values]
                if missing:
                    raise ValueError(f"value table of {issue.name!r} lacks options {missing}")
            elif not isinstance(vf, LinearValue):
                raise ValueError(f"issue {issue.name!r} is numeric: give a linear value function")

    def utility(self, offer: Offer) -> float:
        # sum() over a list: the same additions in the same order as over a generator, faster
        # (bidding and the guard value thousands of offers per negotiation).
        return sum([w * vf(offer[k]) for k, w, vf in self._terms])

    @cached_property
    def _terms(self) -> tuple[tuple[str, float, LinearValue | TableValue], ...]:
        return tuple((k, w, self.values[k]) for k, w in self.weights.items())

    def issue_value(self, issue: str, value: Value) -> float:
        return self.values[issue](value)

    def best_value(self, issue: NumericIssue | DiscreteIssue) -> Value:
        vf = self.values[issue.name]
        if isinstance(issue, DiscreteIssue):
            return max(issue.options, key=lambda o: vf(o))
        assert isinstance(vf, LinearValue)
        return issue.snap(min(max(vf.best, issue.low), issue.high))

    def ideal(self, space: OutcomeSpace) -> Offer:
        """The outcome this side likes best."""
        return {i.name: self.best_value(i) for i in space.issues}


def score(utility: float | None, reservation: float) -> float:
    """Normalised gain over walking away: ``(U - r) / (1 - r)`` clipped to [0, 1]; no deal -> 0.

    This is the reward GRPO trains on and the score every evaluation reports.
    """
    if utility is None:
        return 0.0
    return min(1.0, max(0.0, (utility - reservation) / (1.0 - reservation)))
