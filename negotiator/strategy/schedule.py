"""Schedules: the utility a side aims at on each move, from its aspiration down to its floor.

The deadline convention used everywhere in negotiator: the *progress* of a move is
``turn / (max_turns - 1)``, 0 at the negotiation's first move and 1 at its very last, so a
time-dependent tactic reaches its floor exactly at the deadline.

Time-dependent tactics (Faratin, Sierra & Jennings 1998) aim at
``u(t) = floor + (aspiration - floor) * (1 - t ** (1 / e))``: ``e < 1`` is Boulware (holds
firm, concedes late), ``e = 1`` linear, ``e > 1`` Conceder. Behaviour-dependent tactics
follow the other side instead: relative tit-for-tat concedes as much as the other side
just conceded; MiCRO (de Jonge 2022) concedes one step only after the other side has
conceded; a hardliner never goes below a fixed share of its surplus. The responsive
schedule, which mixes the two families, lives in ``responsive``.
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

    @property
    def name(self) -> str: ...

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
    name: str = "hardliner"  # "holdout" at level 1: a side that never moves from its ideal

    def target(self, situation: Situation, u_max: float) -> float:
        floor = situation.floor
        return floor + (u_max - floor) * self.level


@dataclass(frozen=True)
class MiCRO:
    """Monotonic Concession with Reciprocal Offers (de Jonge, IJCAI 2022): concede one step
    only after the other side has conceded, so never more steps than it has made.

    A step is ``step`` of the surplus between the floor and the best outcome; by default
    (None) one over the side's moves after its first, so that answering every concession
    of the other side brings it to its floor by its last move (de Jonge's MiCRO walks down
    its sorted outcomes one at a time, which in a large outcome space under a deadline of a
    few rounds almost never reaches an agreement). The other side *concedes* when its offer
    is worth more to us than every offer it made before, by at least ``tolerance`` (a
    retuned price that moves a hair is not a concession)."""

    step: float | None = None
    tolerance: float = 0.005
    name: str = "micro"

    def __post_init__(self):
        if self.step is not None and not (math.isfinite(self.step) and 0 < self.step <= 1):
            raise ValueError(f"a MiCRO step must be a finite share in (0, 1], not {self.step!r}")

    def target(self, situation: Situation, u_max: float) -> float:
        floor = situation.floor
        step = self.step
        if step is None:
            moves = (situation.max_turns - situation.turn % 2 + 1) // 2  # this side's moves in the negotiation
            step = 1.0 / max(1, moves - 1)
        return max(floor, u_max - (u_max - floor) * step * concessions(situation, self.tolerance))


def concessions(situation: Situation, tolerance: float = 0.005) -> int:
    """How many times the other side's offer beat, for us, every offer it made before."""
    best, count = None, 0
    for offer in situation.their_offers:
        u = situation.utility(offer)
        if best is not None and u > best + tolerance:
            count += 1
        best = u if best is None else max(best, u)
    return count
