"""The alternating-offers protocol.

The opener moves first, then the sides alternate. On its turn a side does exactly one
thing: make an offer (a full assignment of the issues), accept the other side's standing
offer, or walk away. Accepting is only possible when the other side has an offer on the
table. When ``max_turns`` moves pass without an accept or walk-away, the deadline ends
the negotiation with no deal.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ..errors import ProtocolError
from .issues import Offer
from .scenario import Role, other

ActionKind = Literal["make_offer", "accept", "walk_away"]
EndReason = Literal["accept", "walk_away", "deadline", "error"]


@dataclass
class ProtocolState:
    """Where a negotiation stands. Mutated only through :meth:`apply`."""

    opener: Role
    max_turns: int
    turn: int = 0
    standing: dict[str, Offer] = field(default_factory=dict)  # role -> its latest offer
    ended_by: EndReason | None = None
    ended_by_party: Role | None = None
    agreement: Offer | None = None

    @property
    def to_move(self) -> Role:
        return self.opener if self.turn % 2 == 0 else other(self.opener)

    @property
    def done(self) -> bool:
        return self.ended_by is not None

    @property
    def round(self) -> int:
        """1-based round of the next move (a round is one move by each side)."""
        return self.turn // 2 + 1

    @property
    def rounds_played(self) -> int:
        return (self.turn + 1) // 2

    @property
    def turns_left(self) -> int:
        return self.max_turns - self.turn

    def standing_offer_for(self, role: Role) -> Offer | None:
        """The offer ``role`` could accept now: the other side's latest offer."""
        return self.standing.get(other(role))

    def check(self, role: Role, kind: ActionKind) -> str | None:
        """Why ``role`` may not do ``kind`` now, or None when it may."""
        if self.done:
            return "the negotiation has ended"
        if role != self.to_move:
            return f"it is the {self.to_move}'s turn"
        if kind == "accept" and self.standing_offer_for(role) is None:
            return "there is no offer from the other side to accept; make an offer instead"
        return None

    def apply(self, role: Role, kind: ActionKind, terms: Offer | None = None) -> None:
        err = self.check(role, kind)
        if err:
            raise ProtocolError(err)
        if kind == "make_offer":
            if terms is None:
                raise ProtocolError("an offer needs terms")
            self.standing[role] = dict(terms)
        elif kind == "accept":
            self.agreement = dict(self.standing[other(role)])
            self._end("accept", role)
        elif kind == "walk_away":
            self._end("walk_away", role)
        self.turn += 1
        if not self.done and self.turn >= self.max_turns:
            self._end("deadline", None)

    def fail(self, role: Role | None) -> None:
        """End the negotiation because a party could not act (provider failure, crash)."""
        self._end("error", role)

    def _end(self, reason: EndReason, role: Role | None) -> None:
        self.ended_by = reason
        self.ended_by_party = role
