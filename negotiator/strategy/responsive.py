"""Concession that answers concession: the responsive schedule.

A time-dependent schedule concedes on the clock alone, so a buyer that never moves gets
as much as one that meets the seller halfway, and the last offers sit at the floor. The
responsive schedule mixes the clock with what the other side does, as behaviour-dependent
tactics (Faratin, Sierra & Jennings' relative tit-for-tat; Baarslag, Hindriks & Jonker's
Nice Tit-for-Tat, which measures the other side's concession in its own utility through
an opponent model; de Jonge's MiCRO: concede only when the other side concedes) and the
ANAC agents do. In shares of the surplus ``S`` between the floor and the aspiration
(0 = the aspiration, 1 = the floor), on a move at progress ``t``:

    conceded   c = how far the other side has come toward us: the larger of its concession
                   in our utility and, by the opponent model, in its own (both 0..1)
    lead       L * (1 - c) * t                 given first, to start an exchange with a side
                                               that waits for us (MiCRO, tit-for-tat); a side
                                               that concedes on its own needs none
    answer     min(t ** (1/e), rho * c)        part of its concession answered, never ahead
                                               of a Boulware clock
    step       lead + answer                   target = aspiration - step * S

So a buyer that never moves is offered at most the lead, and the last offers keep a margin
of ``(1 - L) * S`` above the floor; one that waits for us is led; one that concedes is
answered, as fast as the clock allows. The target never rises above the last offer's worth.

The **final offer** is a decision, not the end of the schedule: on the last move whose
offer the other side can still answer, the whole lead is given and the clock no longer
holds the answer back (``L + rho * c``), and the offer goes no lower than where the other side's own
offers are heading (its last offers extrapolated to the deadline, less ``slack`` * S):
against a side that concedes on its own, holding is enough. On the negotiation's very last
move, where no offer can be accepted any more, the seller holds.

**Hints** (``negotiator.strategy.hints``) move the targets:

* a **threat** asks for a real move now: a bigger step (``big_step`` * S beyond the
  schedule's step, times the reader's belief that the threat is meant), which stays given
  on later moves (a schedule that stalled while it caught up would be walked out on), never
  past the final offer, so a bluffer that threatens on every move gets no more than a buyer
  that never moves;
* a buyer in a **hurry** runs the clock to its deadline (the progress of its last move: a
  stated one, else ``hurry_deadline``), and the final offer comes on our last move before it;
* a competing **quote** bounds every target from below (a buyer that names its alternative
  pays at least that much; an invented quote is lower than the truth, so the bound holds
  for a lie too), and the final offer moves toward the best offer the opponent model says
  the buyer values as much as its quote, as far as the reader believes the quote;
* stated **priorities** raise those issues in the opponent model's prior (``ChoiceModel``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .hints import NO_HINTS, Hints
from .situation import Situation

MOVE_KINDS = ("hold", "step", "big_step", "final", "accept", "walk_away")
"""The moves a responsive strategy prices: keep the last offer's worth, the schedule's step, a
bigger step, the final offer, accept the standing offer, walk away."""


@dataclass(frozen=True)
class Levels:
    """The target utility of each offering move on this turn, and the one the schedule takes."""

    hold: float
    step: float
    big_step: float
    final: float
    recommended: str  # one of hold, step, big_step, final
    conceded: float  # c: how far the other side has come toward us (0..1)

    def of(self, kind: str) -> float:
        return float(getattr(self, kind))

    @property
    def target(self) -> float:
        return self.of(self.recommended)


@dataclass(frozen=True)
class Responsive:
    """Concession that answers concession (see the module docstring)."""

    exponent: float = 0.2  # the clock's e (Boulware): the most the answer may have given by now
    aspiration: float | None = None  # utility to open at; None: the side's best outcome
    lead: float = 0.4  # L: the share of the surplus given to a side that never moves, by the deadline
    reciprocity: float = 0.3  # rho: the share of the other side's concession answered
    slack: float = 0.05  # the final offer stays within this share of the surplus of where their offers head
    big_step: float = 0.1  # the extra share of the surplus a bigger step gives (a threat's answer)
    hurry_deadline: float = 0.5  # the progress of a hurried side's last move, when it does not say
    name: str = "responsive"

    def __post_init__(self) -> None:
        if not (math.isfinite(self.exponent) and self.exponent > 0):
            raise ValueError(f"the clock's exponent must be positive and finite, not {self.exponent!r}")
        for k in ("lead", "reciprocity", "slack", "big_step", "hurry_deadline"):
            v = getattr(self, k)
            if not (math.isfinite(v) and 0.0 <= v <= 1.0):
                raise ValueError(f"{k} must be a finite number in [0, 1], not {v!r}")

    def target(self, situation: Situation, u_max: float) -> float:
        """The step's target with the other side's concession read in our utility only."""
        return self.levels(situation, u_max, conceded=conceded_for_us(situation)).target

    def levels(
        self,
        situation: Situation,
        u_max: float,
        *,
        conceded: float,
        quoted: float | None = None,
        quote_final: float | None = None,
        hints: Hints = NO_HINTS,
    ) -> Levels:
        """The targets of this move. ``conceded``: how far the other side has come toward us
        (0..1); ``quoted``: what the other side's quote is worth to us, the rest at our best
        (the least it would pay); ``quote_final``: the best for us that the opponent model
        says the other side values as much as its quote (the final offer that meets it)."""
        floor = situation.floor
        top = max(floor, min(u_max, u_max if self.aspiration is None else self.aspiration))
        surplus = top - floor
        t = situation.progress
        deadline = 1.0
        if hints.hurry:  # run the clock to the hurried side's deadline
            deadline = max(1e-6, hints.deadline if hints.deadline is not None else self.hurry_deadline)
        clock = min(1.0, t / deadline)
        c = max(0.0, min(1.0, conceded))
        answer = min(clock ** (1.0 / self.exponent), self.reciprocity * c)
        lead = self.lead * (1.0 - c)  # a side that concedes needs no lead
        final_share = min(1.0, self.lead + self.reciprocity * c)  # the whole lead, and the answer unclocked
        # Each threat answered before stays given (else the schedule would stall while it caught
        # up, and a threatener walks on a stall); never past the final offer.
        past = max(0, hints.threats - (1 if hints.threat else 0)) * hints.threat_credible * self.big_step
        base = lead * clock + answer
        share = min(base + past, max(base, final_share))
        hold = min(top, situation.utility(situation.own_offers[-1])) if situation.own_offers else top
        step = min(hold, top - share * surplus)
        final = min(hold, top - final_share * surplus)
        heading = heading_to(situation, deadline)
        if heading is not None:  # no lower than their own offers are heading, less the slack
            final = max(final, min(hold, heading - self.slack * surplus))
        if quoted is not None and quoted >= floor:
            # Never below the quote: a buyer that names its alternative pays at least that much
            # (an invented quote is lower than the truth, so this holds for a lie too); and the
            # final offer meets the quote, as far as the reader believes it.
            quoted = min(hold, quoted)
            meet = min(hold, max(quoted, quote_final if quote_final is not None else quoted))
            if meet < final:
                final -= hints.quote_credible * (final - meet)
            step, final = max(step, quoted), max(final, quoted)
        final = max(floor, final)
        # A bigger step gives big_step * S beyond the schedule's step, never past the final offer:
        # so a bluffer that threatens on every move gets no more than a buyer that never moves.
        big = max(floor, min(step, final), step - self.big_step * surplus)
        if not situation.own_offers:
            recommended = "hold"  # the opening: the aspiration
        elif situation.final_move:
            recommended = "hold"  # no offer made now can be accepted: show nothing more
        elif last_answerable(situation) or (
            hints.hurry and t + 1.0 / max(1, situation.max_turns - 1) >= deadline - 1e-9
        ):
            recommended = "final"
        elif hints.threat and hints.threat_credible > 0 and big < step:
            recommended = "big_step"  # a threat asks for a real move now, as far as it is believed
            big = max(floor, min(step, final), step - hints.threat_credible * self.big_step * surplus)
        else:
            recommended = "step"
        return Levels(
            hold=max(floor, hold),
            step=max(floor, step),
            big_step=big,
            final=final,
            recommended=recommended,
            conceded=c,
        )


def last_answerable(situation: Situation) -> bool:
    """This is the last move whose offer the other side can still answer."""
    return situation.turn <= situation.max_turns - 2 and situation.turn + 2 > situation.max_turns - 2


def conceded_for_us(situation: Situation) -> float:
    """How far the other side has come toward our aspiration, in our utility (0..1): the
    best of its offers against its opening, over the gap its opening left."""
    theirs = situation.their_offers
    if len(theirs) < 2:
        return 0.0
    start = situation.utility(theirs[0])
    top = situation.utility(situation.own_offers[0]) if situation.own_offers else 1.0
    gap = top - start
    if gap <= 1e-9:
        return 0.0
    return max(0.0, min(1.0, (max(situation.utility(o) for o in theirs) - start) / gap))


def heading_to(situation: Situation, deadline: float = 1.0) -> float | None:
    """Where the other side's offers are heading, for us: its last offers' worth, extrapolated
    linearly to its last move (the deadline's progress; None before it has made two offers)."""
    theirs = situation.their_offers[-3:]
    if len(theirs) < 2:
        return None
    us = [situation.utility(o) for o in theirs]
    slope = (us[-1] - us[0]) / (2 * (len(us) - 1))  # per turn: its moves are two turns apart
    last = deadline * max(1, situation.max_turns - 1)
    return us[-1] + max(0.0, slope) * max(0.0, last - (situation.turn - 1))
