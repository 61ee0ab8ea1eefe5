"""Acceptance conditions: when the other side's offer is worth taking.

The conditions of Baarslag, Hindriks & Jonker, "Effective acceptance conditions in
automated negotiation" (2014):

* ``AC_next``: accept when the offer is worth at least what we would offer next;
* ``AC_time``: on the negotiation's final move (an offer made now could never be
  accepted), accept anything at or above the floor; with ``at_last_own_move``, already on
  this side's own last move (a hold-out buyer's rule: take what beats walking away, and only
  then);
* ``AC_combi``: from progress ``T`` on, also accept an offer at least as good as the best
  the other side made within the time window left (``MAX^W``), when it clears the floor.

An offer that crosses one of the side's hard limits is never accepted.
"""

from __future__ import annotations

from dataclasses import dataclass

from .situation import Situation


@dataclass(frozen=True)
class Acceptance:
    at_deadline: bool = True  # AC_time on the final move
    combi_after: float | None = None  # T of AC_combi; None: off
    at_last_own_move: bool = False  # AC_time on this side's own last move, not only the negotiation's

    def decide(self, situation: Situation, next_worth: float) -> str | None:
        """Why to accept the standing offer now (a condition's name), or None to go on."""
        standing = situation.standing
        if standing is None or not situation.limits.allows(standing, situation.preferences):
            return None
        u = situation.utility(standing)
        if u >= next_worth - 1e-9:
            return "AC_next"
        if u < situation.floor:
            return None
        if self.at_deadline and situation.final_move:
            return "AC_time"
        if self.at_last_own_move and situation.own_moves_left <= 1:
            return "AC_time"
        t = situation.progress
        if self.combi_after is not None and t >= self.combi_after:
            window = self._window(situation, 1.0 - t)
            if window and u >= max(situation.utility(o) for o in window) - 1e-9:
                return "AC_combi"
        return None

    @staticmethod
    def _window(situation: Situation, share: float):
        """The other side's offers made within the last ``share`` of the deadline."""
        theirs = situation.their_offers
        n = max(1, round(share * situation.max_turns / 2))
        return theirs[-n:]
