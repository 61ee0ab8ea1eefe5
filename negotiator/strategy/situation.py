"""Where one side stands on its move, in the domain's terms only.

A ``Situation`` is what every part of a strategy reads: the outcome space, the side's own
preferences and hard limits, the move's place in the deadline, and the offers both sides
have made so far. Parties build it from their view (``negotiator.party.PartyView``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from ..domain.issues import Offer, OutcomeSpace
from ..domain.scenario import HardLimits
from ..domain.utility import Preferences


@dataclass(frozen=True)
class Situation:
    space: OutcomeSpace
    preferences: Preferences  # this side's own
    limits: HardLimits
    turn: int  # 0-based index of this move in the negotiation
    max_turns: int
    own_offers: tuple[Offer, ...] = ()  # this side's offers, oldest first
    their_offers: tuple[Offer, ...] = ()  # the other side's offers, oldest first
    standing: Offer | None = None  # the other side's latest offer: what this side may accept
    their_messages: tuple[str, ...] = ()  # the other side's words, oldest first (public: what a reader reads)

    @property
    def progress(self) -> float:
        """0 at the negotiation's first move, 1 at its very last (the deadline convention)."""
        return progress(self.turn, self.max_turns)

    @cached_property
    def floor(self) -> float:
        """The lowest utility this side may agree to: its reservation or the business's utility floor."""
        return self.limits.utility_floor(self.preferences)

    @property
    def final_move(self) -> bool:
        """No move follows this one: an offer made now can never be accepted."""
        return self.turn >= self.max_turns - 1

    @property
    def own_moves_left(self) -> int:
        """This side's moves left, this one included."""
        return (self.max_turns - self.turn + 1) // 2

    def utility(self, offer: Offer) -> float:
        return self.preferences.utility(offer)

    def exchanges(self) -> list[tuple[Offer | None, Offer]]:
        """Each of the other side's offers with the offer of ours it answered (None for an opening).

        Offers alternate until a negotiation ends, so counted from the latest back, the other
        side's k-th last offer answers our k-th last."""
        own, theirs = self.own_offers, self.their_offers
        lag = len(theirs) - len(own)  # 1 when they opened, 0 when we did (on our move)
        return [(own[i - lag] if i - lag >= 0 else None, o) for i, o in enumerate(theirs)]


def progress(turn: int, max_turns: int) -> float:
    """Share of the deadline used at move ``turn`` (0-based): 0 at the first move, 1 at the last."""
    return min(1.0, max(0.0, turn / max(1, max_turns - 1)))
