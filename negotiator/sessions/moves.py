"""What a buyer can do in a live session, and how it becomes a protocol move.

A person (or the commerce app on their behalf) sends one ``BuyerMove`` per turn:

==============  ===========================================================================
``offer``       propose terms. Issues left out keep the values of the buyer's previous
                offer, so a page can send only the price it changed.
``message``     free text alone. The protocol has no "just talk" move, so a message is
                carried as the buyer's previous offer restated (no concession, one turn
                used, like any counter-offer). Before the buyer has offered anything there
                is nothing to restate, and a message alone is refused: make an offer first.
``accept``      accept the seller's standing offer exactly as it stands.
``walk_away``   end the negotiation without a deal.
==============  ===========================================================================

Every message is untrusted data: it reaches the seller's model as the buyer's quoted
words, and whatever it says, the guard (deterministic code after the model) keeps the
seller inside the business's limits.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..actions import Accept, MakeOffer, WalkAway, normalise_terms
from ..domain.issues import NotBoolean, OutcomeSpace, Value, booleans_in
from ..domain.protocol import ProtocolState
from ..errors import InvalidOffer, MoveConflict, UsageError, first_error

BUYER_MESSAGE_MAX_CHARS = 2000
# C0 control characters other than tab and newline: they break logs and terminals.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


class BuyerMove(BaseModel):
    """One move by the buyer. See the module docstring for the four kinds."""

    model_config = ConfigDict(extra="forbid")

    action: Literal["offer", "message", "accept", "walk_away"]
    terms: dict[str, Value] = Field(
        default_factory=dict,
        description="offer only: issue -> value; issues left out keep your previous offer's values",
    )
    message: str = Field(
        default="", max_length=BUYER_MESSAGE_MAX_CHARS, description="what the buyer says (untrusted text)"
    )
    expected_turn: Annotated[int, Field(ge=0), NotBoolean] | None = Field(
        default=None,
        description="the number of moves the client has seen (state.turn); when the negotiation has moved on, "
        "the move is refused instead of being applied twice (double clicks, two tabs)",
    )

    @field_validator("terms", mode="before")
    @classmethod
    def _no_booleans(cls, terms: object) -> object:
        # pydantic would read {"price": True} as a price of 1.
        found = booleans_in(terms) if isinstance(terms, dict) else ""
        if found:
            raise ValueError(f"{found} is not a value of an issue; give a number or an option")
        return terms

    @classmethod
    def offer(cls, terms: Mapping[str, object], message: str = "", **kw: object) -> BuyerMove:
        """An offer; issues left out keep the buyer's previous values. Any mapping: an app's
        ``{"price": 850, "assembly": "none"}`` is a ``dict[str, object]`` to a type checker."""
        return cls.of(
            {"action": "offer", "terms": dict(terms) if isinstance(terms, Mapping) else terms, "message": message, **kw}
        )

    @classmethod
    def say(cls, message: str, **kw: object) -> BuyerMove:
        return cls.of({"action": "message", "message": message, **kw})

    @classmethod
    def accept(cls, message: str = "", **kw: object) -> BuyerMove:
        return cls.of({"action": "accept", "message": message, **kw})

    @classmethod
    def walk_away(cls, message: str = "", **kw: object) -> BuyerMove:
        return cls.of({"action": "walk_away", "message": message, **kw})

    @classmethod
    def of(cls, move: Mapping[str, object]) -> BuyerMove:
        """The move ``move`` writes (a page's JSON), or a UsageError naming what is wrong with it: the
        shopper's input, for the app to show (the shortcuts above raise the same)."""
        if not isinstance(move, Mapping | BuyerMove):  # as Sessions.move says it
            raise UsageError(
                f"a buyer move is a BuyerMove, a dict or a message string, not {type(move).__name__} {move!r}"
            )
        try:
            return cls.model_validate(dict(move))
        except ValidationError as e:
            raise UsageError(f"invalid buyer move: {first_error(e)}") from None


def to_action(move: BuyerMove, state: ProtocolState, space: OutcomeSpace) -> MakeOffer | Accept | WalkAway:
    """The protocol action for ``move`` at ``state``; raises MoveConflict or UsageError."""
    if move.expected_turn is not None and move.expected_turn != state.turn:
        raise MoveConflict(
            f"the negotiation has moved on: it stands at move {state.turn}, your move was made at move "
            f"{move.expected_turn}; reload the state and decide again"
        )
    kind = {"offer": "make_offer", "message": "make_offer"}.get(move.action, move.action)
    problem = state.check("buyer", kind)  # type: ignore[arg-type]
    if problem:
        raise MoveConflict(f"cannot {move.action.replace('_', ' ')}: {problem}")
    message = _CONTROL.sub("", move.message).strip()
    if move.terms and move.action != "offer":
        raise UsageError(f"terms only go with action 'offer', not {move.action!r}; drop them or make an offer")
    if move.action == "accept":
        return Accept(message=message)
    if move.action == "walk_away":
        return WalkAway(message=message)
    previous = state.standing.get("buyer")
    if move.action == "message":
        if previous is None:
            raise UsageError(
                "a message alone is carried as your previous offer restated, and you have made no offer yet: "
                "send action 'offer' with terms (or accept the seller's offer)"
            )
        return MakeOffer(terms=dict(previous), message=message)
    terms = {**(previous or {}), **move.terms}
    try:
        return MakeOffer(terms=normalise_terms(space, terms), message=message)
    except InvalidOffer as e:
        raise UsageError("invalid offer: " + "; ".join(f"{k}: {v}" for k, v in e.problems.items())) from None
