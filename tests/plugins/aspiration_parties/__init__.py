"""An outside package's parties, written only against negotiator's public API.

``buyer``: concedes on a time-dependent aspiration curve over the deadline convention
(``view.progress``), offers points of the issues' own grids (``space.values``), accepts a
standing offer worth its current aspiration. ``fixed_seller``: asks the same terms every turn
and accepts any offer worth at least ``floor`` to it. Both write every ``on_end`` to the file
in ``$ASPIRATION_LOG`` (one JSON line: negotiation id, role, deal, ended_by).
"""

from __future__ import annotations

import itertools
import json
import os

from negotiator import Accept, MakeOffer, TurnRecord, WalkAway
from negotiator.sim import PartyView


class Aspiration:
    family = "aspiration"

    def __init__(self, role: str, seed: int = 0, exponent: float = 2.0):
        self.role, self.seed, self.exponent = role, seed, exponent
        self.negotiation: str | None = None

    def _candidates(self, view: PartyView) -> list[dict]:
        axes = [
            view.space.values(i.name) if i.size <= 41 else [view.space.normalise(i.name, v) for v in i.grid(41)]
            for i in view.space.issues
        ]
        return [dict(zip(view.space.names, combo, strict=False)) for combo in itertools.product(*axes)]

    async def act(self, view: PartyView) -> TurnRecord:
        if self.negotiation not in (None, view.negotiation_id):
            raise RuntimeError("one party object played two negotiations")
        self.negotiation = view.negotiation_id
        floor = view.preferences.reservation
        target = 1.0 - (1.0 - floor) * view.progress ** (1.0 / self.exponent)
        standing = view.standing_offer
        if standing is not None and view.utility(standing) >= target:
            return TurnRecord(action=Accept(message="Agreed."))
        if view.turns_left <= 1:
            return TurnRecord(action=WalkAway(message="We could not agree."))
        best = min(self._candidates(view), key=lambda o: (abs(view.utility(o) - target), -view.utility(o)))
        return TurnRecord(action=MakeOffer(terms=best, message="How about this?"))

    def on_end(self, outcome) -> None:
        path = os.environ.get("ASPIRATION_LOG")
        if path:
            with open(path, "a") as f:
                f.write(
                    json.dumps(
                        {
                            "negotiation_id": self.negotiation,
                            "role": self.role,
                            "deal": outcome.deal,
                            "ended_by": outcome.ended_by,
                        }
                    )
                    + "\n"
                )


class FixedSeller(Aspiration):
    family = "fixed"

    def __init__(self, role: str, seed: int = 0, floor: str = "0.6"):
        super().__init__(role, seed)
        self.floor = float(floor)

    async def act(self, view: PartyView):
        self.negotiation = view.negotiation_id
        standing = view.standing_offer
        if standing is not None and view.utility(standing) >= self.floor:
            return Accept(message="Deal.")  # a bare action is enough
        best = max(self._candidates(view), key=view.utility)
        return MakeOffer(terms=best, message="Our price.")


def buyer(role: str, seed: int = 0, exponent: str = "2") -> Aspiration:
    if role != "buyer":
        raise ValueError("aspiration/buyer plays the buyer")
    return Aspiration(role, seed, float(exponent))


def fixed_seller(role: str, seed: int = 0, **params: str) -> FixedSeller:
    return FixedSeller(role, seed, **params)
