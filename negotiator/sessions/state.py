"""What a session looks like from outside: ``SessionState``, public data only.

The stored session also holds the scenario's private preferences, the business's limits
and the seller's raw model output; none of that is in ``SessionState``, so a commerce
backend may pass it on to the shopper's browser as it is. ``OpenedSession``, the answer to
opening a negotiation, adds that negotiation's token: meant for the same shopper's page.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from ..actions import replay as replay_moves
from ..agreements import AgreementRecord
from ..domain.issues import Offer
from ..domain.protocol import EndReason, ProtocolState
from ..domain.scenario import Listing, PublicScenario, Role
from ..party import PublicMove

Status = Literal["open", "deal", "no_deal"]


class SessionState(BaseModel):
    """Where one negotiation stands, and everything both sides have said."""

    id: str
    status: Status
    ended_by: EndReason | None = Field(None, description="accept, walk_away or deadline once the negotiation is over")
    to_move: Role | None = Field(None, description="whose move it is; null once the negotiation is over")
    turn: int = Field(description="moves made so far; send it back as expected_turn with the next move")
    round: int = Field(description="1-based round of the next move (a round is one move by each side)")
    max_rounds: int
    scenario: PublicScenario = Field(description="the product and the issues under negotiation (no private values)")
    transcript: list[PublicMove]
    seller_offer: Offer | None = Field(None, description="the seller's standing offer: what the buyer can accept")
    buyer_offer: Offer | None = Field(None, description="the buyer's latest offer")
    agreement: Offer | None = Field(None, description="the agreed terms, when there is a deal")
    agreement_record: AgreementRecord | None = Field(
        None,
        description="when there is a deal: the agreement signed by the service (Ed25519), what a checkout creates its cart from",
    )
    created_at: str
    updated_at: str


class OpenedSession(SessionState):
    """The answer to opening a negotiation: its state, plus the session's token (shown once)."""

    token: str = Field(
        repr=False,  # a bearer secret: kept out of logs that print the state (model_dump still has it)
        description="lets whoever holds it read and move this negotiation, and nothing else: hand it to the "
        "shopper's page; it is not shown again (only its hash is stored)",
    )


def replay(scenario: Listing, moves: list[PublicMove]) -> ProtocolState:
    """The protocol state after ``moves``, each through the one turn step (``actions.play``)."""
    return replay_moves(scenario, ((m.party, m.action) for m in moves))


def public_state(
    session_id: str,
    scenario: Listing,
    moves: list[PublicMove],
    created_at: str,
    updated_at: str,
    *,
    token: str | None = None,
    agreement_record: AgreementRecord | None = None,
) -> SessionState:
    p = replay(scenario, moves)
    status: Status = "open" if not p.done else ("deal" if p.agreement is not None else "no_deal")
    state = SessionState(
        id=session_id,
        status=status,
        ended_by=p.ended_by,
        to_move=None if p.done else p.to_move,
        turn=p.turn,
        round=min(p.round, scenario.max_rounds),
        max_rounds=scenario.max_rounds,
        scenario=scenario.public(),
        transcript=moves,
        seller_offer=p.standing.get("seller"),
        buyer_offer=p.standing.get("buyer"),
        agreement=p.agreement,
        agreement_record=agreement_record,
        created_at=created_at,
        updated_at=updated_at,
    )
    return state if token is None else OpenedSession(**dict(state), token=token)
