"""Schedules: the utility a side aims at on each move, from its aspiration down to its floor.

The deadline convention used everywhere in negotiator: the *progress* of a move is
``turn / (max_turns - 1)``, 0 at the negotiation's first move and 1 at its very last, so a
time-dependent tactic reaches its floor exactly at the deadline.

Time-dependent tactics (Faratin, Sierra & Jennings 1998) aim at
``u(t) = floor + (aspiration - floor) * (1 - t ** (1 / e))``: ``e < 1`` is Boulware (holds
firm, concedes late), ``e = 1`` linear, ``e > 1`` Conceder. Behaviour-dependent tactics
follow the other side instead: relative tit-for-tat concedes as much as the other side
just conceded; a hardliner never goes below a fixed share of its surplus.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

from .situation import Situation, progress  # noqa: F401  (progress: read from here too)

BOULWARE_E, LINEAR_E, CONCEDER_E = 0.2, 1.0, 3.0


def target_utility(t: float, floor: float, exponent: float, aspiration: float = 1.0) -> float:
    """Faratin's time-dependent target at progress ``t`` in [0, 1]."""
    t = min(1.0, max(0.0, t))
    return floor + (aspiration - floor) * (1.0 - t ** (1.0 / exponent))


class Schedule(Protocol):
    """What a side aims at on this move, given where it stands (``u_max``: its best outcome)."""

    name: str

    def target(self, situation: Situation, u_max: float) -> float: ...


def _aspiration(aspiration: float | None, floor: float, u_max: float) -> float:
    """The business's aspiration, kept between the floor and the best outcome (default: the best)."""
    a = u_max if aspiration is None else aspiration
    return max(floor, min(u_max, a))


@dataclass(frozen=True)
class TimeDependent:
    """Faratin's time-dependent tactic: Boulware (``e`` < 1), linear (1) or Conceder (> 1)."""

    exponent: float = BOULWARE_E
    aspiration: float | None = None  # utility to open at; None: the side's best outcome

    def __post_init__(self):
        if not (math.isfinite(self.exponent) and self.exponent > 0):
            raise ValueError(f"a time-dependent schedule needs a positive finite exponent, not {self.exponent!r}")

    @property
    def name(self) -> str:
        if self.exponent < 1:
            return "boulware"
        return "linear" if self.exponent == 1 else "conceder"

    def target(self, situation: Situation, u_max: float) -> float:
        floor = situation.floor
        return target_utility(situation.progress, floor, self.exponent, _aspiration(self.aspiration, floor, u_max))


@dataclass(frozen=True)
class TitForTat:
    """Relative tit-for-tat: concede as much (in own utility) as the other side just conceded.

    ``min_step`` keeps two tit-for-tat players from deadlocking.
    """

    min_step: float = 0.02
    aspiration: float | None = None
    name: str = "tit_for_tat"

    def target(self, situation: Situation, u_max: float) -> float:
        floor = situation.floor
        if not situation.own_offers:
            return _aspiration(self.aspiration, floor, u_max)
        theirs = situation.their_offers
        gain = 0.0
        if len(theirs) >= 2:
            gain = situation.utility(theirs[-1]) - situation.utility(theirs[-2])
        return max(floor, situation.utility(situation.own_offers[-1]) - max(self.min_step, gain))


@dataclass(frozen=True)
class Hardliner:
    """Never below ``level`` of the surplus between the floor and the best outcome."""

    level: float = 0.9
    name: str = "hardliner"

    def target(self, situation: Situation, u_max: float) -> float:
        floor = situation.floor
        return floor + (u_max - floor) * self.level
