"""``SellerAgent``: the seller a commerce app embeds.

::

    agent = SellerAgent(model="openai/gpt-4o-mini",
                        instructions="Friendly, concise. Brand: Oakline Furniture.",
                        limits={"minimum": {"price": 900}})
    turn = await agent.respond(scenario, transcript)      # or agent.respond_sync(...)
    turn.action          # MakeOffer | Accept | WalkAway, always within the limits
    turn.guard           # what the guard changed, if anything

The seller sees its own preferences and limits plus the public transcript, never the
buyer's. The guard is always on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from ..domain.protocol import ProtocolState
from ..domain.scenario import HardLimits, Listing
from ..errors import UsageError
from ..models.base import ChatModel
from ..party import PartyView, PublicMove, TurnRecord
from .llm_party import LLMParty, ModeOption

DEFAULT_SELLER = "local/gemma-3-270m"


class SellerAgent(LLMParty):
    def __init__(
        self,
        model: str | ChatModel = DEFAULT_SELLER,
        *,
        instructions: str = "",
        limits: HardLimits | dict | None = None,
        mode: ModeOption = "auto",
        max_retries: int = 2,
        **kwargs,
    ):
        kwargs.pop("guard", None)  # the seller's guard cannot be switched off
        super().__init__(model, role="seller", instructions=instructions, limits=limits, mode=mode, max_retries=max_retries, guard=True, **kwargs)

    def view(self, scenario: Listing, transcript: Sequence[PublicMove | dict] = ()) -> PartyView:
        """The seller's view after ``transcript``; checks that it is the seller's move."""
        moves = tuple(m if isinstance(m, PublicMove) else PublicMove.model_validate(m) for m in transcript)
        state = ProtocolState(opener=scenario.opener, max_turns=scenario.max_turns)
        for m in moves:
            err = state.check(m.party, m.action.action)
            if err:
                raise UsageError(f"transcript move {state.turn + 1} ({m.party} {m.action.action}) is not allowed: {err}")
            state.apply(m.party, m.action.action, m.action.terms)
        if state.done:
            raise UsageError(f"the negotiation has already ended ({state.ended_by})")
        if state.to_move != "seller":
            raise UsageError("it is the buyer's move, not the seller's")
        return PartyView.of(scenario, "seller", moves, self.limits)

    async def respond(self, scenario: Listing, transcript: Sequence[PublicMove | dict] = ()) -> TurnRecord:
        """The seller's next move in ``scenario`` after ``transcript``."""
        return await self.act(self.view(scenario, transcript))

    def respond_sync(self, scenario: Listing, transcript: Sequence[PublicMove | dict] = ()) -> TurnRecord:
        """``respond`` for synchronous code (not from inside a running event loop)."""
        try:
            asyncio.get_running_loop()
            in_loop = True
        except RuntimeError:
            in_loop = False
        if in_loop:
            raise UsageError("respond_sync was called inside a running event loop; await respond(...) instead")
        return asyncio.run(self.respond(scenario, transcript))
