"""What a party sees and what it returns.

A ``PartyView`` is everything one side may know when it moves: the public scenario, the
public transcript, and its *own* private preferences and limits, never the other side's.
Every seller and buyer (LLM, rule-based, scripted, a person) implements ``Party.act`` and
returns a ``TurnRecord``: the action plus what it took to get there (raw model output,
invalid attempts, guard intervention, tokens, latency).
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from .actions import Action, MakeOffer
from .actions import AnyAction as AnyAction  # re-exported: parties import it from here
from .domain.issues import Offer
from .domain.scenario import HardLimits, Listing, PublicScenario, Role, other
from .domain.utility import Preferences
from .strategy.schedule import progress
from .strategy.situation import Situation


class PublicMove(BaseModel):
    """One move as both sides saw it."""

    model_config = ConfigDict(frozen=True)
    party: Role
    action: Action


class PartyView(BaseModel):
    """Everything one side may know on its turn. Built by the runtime, read by parties."""

    model_config = ConfigDict(frozen=True)

    role: Role
    scenario: PublicScenario
    preferences: Preferences  # this side's own
    limits: HardLimits = Field(default_factory=HardLimits)  # this side's own
    transcript: tuple[PublicMove, ...] = ()
    turn: int = 0  # 0-based index of this move
    max_turns: int = 16
    negotiation_id: str = ""  # the episode id in a run, the session id in the service: one per negotiation

    @property
    def space(self):
        return self.scenario.space

    @property
    def round(self) -> int:
        return self.turn // 2 + 1

    @property
    def turns_left(self) -> int:
        """Moves left including this one."""
        return self.max_turns - self.turn

    @property
    def progress(self) -> float:
        """Share of the deadline used: 0 at the negotiation's first move, 1 at its very last
        (the t of time-dependent tactics; one convention everywhere, see negotiator.strategy)."""
        return progress(self.turn, self.max_turns)

    def situation(self) -> Situation:
        """This view in the strategy's terms: the domain facts and both sides' offers."""
        return Situation(
            space=self.space,
            preferences=self.preferences,
            limits=self.limits,
            turn=self.turn,
            max_turns=self.max_turns,
            own_offers=tuple(self.offers_by(self.role)),
            their_offers=tuple(self.offers_by(other(self.role))),
            standing=self.standing_offer,
            their_messages=tuple(m.action.message for m in self.transcript if m.party != self.role),
        )

    def latest(self, role: Role) -> Offer | None:
        for m in reversed(self.transcript):
            if m.party == role and isinstance(m.action, MakeOffer):
                return m.action.terms
        return None

    @property
    def standing_offer(self) -> Offer | None:
        """The other side's latest offer: the only thing this side may accept."""
        return self.latest(other(self.role))

    @property
    def own_last_offer(self) -> Offer | None:
        return self.latest(self.role)

    def offers_by(self, role: Role) -> list[Offer]:
        return [m.action.terms for m in self.transcript if m.party == role and isinstance(m.action, MakeOffer)]

    def utility(self, offer: Offer) -> float:
        return self.preferences.utility(offer)

    @classmethod
    def of(
        cls,
        scenario: Listing,
        role: Role,
        transcript: tuple[PublicMove, ...] | list[PublicMove],
        limits: HardLimits | None = None,
        negotiation_id: str = "",
    ) -> PartyView:
        """The view of ``role`` in ``scenario`` after ``transcript``."""
        if limits is not None:
            try:
                limits = limits.on(scenario.space)  # "NONE" forbids the option none
            except ValueError:
                pass  # refused where the limits were given (Listing.check_limits); kept as they are here
        return cls(
            role=role,
            scenario=scenario.public(),
            preferences=scenario.preferences(role),
            limits=scenario.limits(role).merged(limits),
            transcript=tuple(transcript),
            turn=len(transcript),
            max_turns=scenario.max_turns,
            negotiation_id=negotiation_id,
        )


class Attempt(BaseModel):
    """One model answer that could not be used, and the feedback sent back."""

    raw: str
    error: str


class GuardIntervention(BaseModel):
    """The guard changed what a seller model wanted to do.

    ``kind``: ``offer_repaired`` (below a limit or the strategy's target, moved to the
    target), ``accept_blocked`` (an accept of terms below a limit, replaced by the
    strategy's counter-offer), ``message_corrected`` (the message stated values the terms
    do not hold), ``message_redacted`` (the message disclosed a private number),
    ``message_ungrounded`` (sentences the listing and the move do not back were removed;
    ``reasons["message_grounding"]`` names their families, ``negotiator.llm.grounding``).
    """

    kinds: list[str]
    reasons: dict[str, str] = Field(default_factory=dict)
    original: dict[str, Any]  # the action the model produced, as JSON data


class AdviceRecord(BaseModel):
    """The strategy's advice on an assisted seller's move, and what the model chose."""

    target: float  # the schedule's target utility on this move
    recommended: str  # a candidate id or "accept" (the readings menu: "none")
    options: list[str]  # what the model could answer: candidate ids, "accept", "walk_away" (or the readings)
    chosen: str | None = None  # a candidate id, "accept", "walk_away", "own" (own terms), a reading; None: the fallback


class Usage(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    model_calls: int = 0

    def add(self, other: Usage) -> None:
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.cost_usd += other.cost_usd
        self.model_calls += other.model_calls


class TurnRecord(BaseModel):
    """One move of one party, with what it cost and what went wrong on the way."""

    index: int = 0
    party: Role = "seller"
    action: Action
    raw_output: str | None = None
    invalid_attempts: list[Attempt] = Field(default_factory=list)
    guard: GuardIntervention | None = None
    advice: AdviceRecord | None = None  # assisted sellers only
    fallback: bool = False  # the party could not produce a valid action; a safe default was used
    usage: Usage = Field(default_factory=Usage)
    latency_s: float = 0.0
    prompt_hash: str | None = None


@runtime_checkable
class Party(Protocol):
    """A seller or buyer: anything with a spec that can act on a view.

    Optional: ``on_end(outcome)`` (async or plain), called once with the episode's ``Outcome``
    when the negotiation is over, before ``aclose``. Parties from outside the package follow
    docs/plugins.md. A seller's moves pass the guard's limit checks (``runtime.run.hold_limits``)
    unless its class says ``keeps_limits = True``, as the built-in sellers do that check every
    move themselves.
    """

    spec: str
    family: str

    async def act(self, view: PartyView) -> TurnRecord: ...

    async def aclose(self) -> None: ...
