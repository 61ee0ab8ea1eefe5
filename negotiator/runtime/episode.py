"""The Episode: the one record that evaluation, training and reports read.

Versioned (``schema_version``) and written one per line as JSONL. An episode is complete
even when something failed: a provider error ends it with ``outcome.ended_by == "error"``
and the cause in ``error``; invalid model output shows up in each turn's
``invalid_attempts`` and ``fallback``.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..domain.issues import Offer
from ..domain.metrics import OutcomeMetrics
from ..domain.protocol import EndReason
from ..domain.scenario import Role, Scenario
from ..party import TurnRecord

SCHEMA_VERSION = 1


class PartyInfo(BaseModel):
    spec: str
    family: str
    persona: str | None = None


class Outcome(BaseModel):
    deal: bool
    terms: Offer | None = None
    ended_by: EndReason
    ended_by_party: Role | None = None


class ProcessMetrics(BaseModel):
    """How the negotiation went, beyond its outcome: validity, guard, cost."""

    model_config = ConfigDict(allow_inf_nan=False)

    seller_turns: int = 0
    invalid_actions: int = 0  # unusable seller answers, counted over all attempts
    invalid_rate: float = 0.0  # invalid answers / seller model answers
    first_attempt_valid_rate: float | None = None  # share of seller turns valid on the first answer
    fallbacks: int = 0
    guard_interventions: int = 0
    messages_corrected: int = 0  # seller messages whose stated values the guard put right (message_corrected)
    messages_ungrounded: int = 0  # seller messages with sentences the listing and move do not back, removed
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    seller_latency_s: float = 0.0
    wall_time_s: float = 0.0


class EpisodeMetrics(OutcomeMetrics, ProcessMetrics):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class ErrorInfo(BaseModel):
    type: str
    message: str
    party: Role | None = None  # which side's model failed, None for the runtime itself
    transient: bool | None = None


class Provenance(BaseModel):
    package_version: str
    seed: int
    prompt_hash: str | None = None
    git_commit: str | None = None


class Episode(BaseModel):
    model_config = ConfigDict(extra="allow")  # newer minor fields survive a round-trip

    schema_version: int = SCHEMA_VERSION
    episode_id: str
    created_at: str = Field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    scenario: Scenario
    seller: PartyInfo
    buyer: PartyInfo
    seed: int
    turns: list[TurnRecord]
    outcome: Outcome
    metrics: EpisodeMetrics
    error: ErrorInfo | None = None
    provenance: Provenance
    labels: dict[str, Any] = Field(default_factory=dict)  # suite, persona, shard ...

    @property
    def seller_score(self) -> float:
        return self.metrics.seller_score


def episode_id(*parts: Any) -> str:
    """A deterministic id from what defines a negotiation (suite, scenario, buyer, seller, seed)."""
    key = "|".join(str(p) for p in parts)
    return hashlib.sha256(key.encode()).hexdigest()[:20]


def process_metrics(turns: list[TurnRecord], wall_time_s: float) -> ProcessMetrics:
    seller = [t for t in turns if t.party == "seller"]
    answers = sum(len(t.invalid_attempts) + (0 if t.fallback else 1) for t in seller)
    invalid = sum(len(t.invalid_attempts) for t in seller)
    model_turns = [t for t in seller if t.usage.model_calls > 0]
    first_ok = sum(1 for t in model_turns if not t.invalid_attempts and not t.fallback)
    return ProcessMetrics(
        seller_turns=len(seller),
        invalid_actions=invalid,
        invalid_rate=round(invalid / answers, 6) if answers else 0.0,
        first_attempt_valid_rate=round(first_ok / len(model_turns), 6) if model_turns else None,
        fallbacks=sum(1 for t in seller if t.fallback),
        guard_interventions=sum(1 for t in seller if t.guard is not None),
        messages_corrected=sum(1 for t in seller if t.guard is not None and "message_corrected" in t.guard.kinds),
        messages_ungrounded=sum(1 for t in seller if t.guard is not None and "message_ungrounded" in t.guard.kinds),
        prompt_tokens=sum(t.usage.prompt_tokens for t in turns),
        completion_tokens=sum(t.usage.completion_tokens for t in turns),
        cost_usd=round(sum(t.usage.cost_usd for t in turns), 8),
        seller_latency_s=round(sum(t.latency_s for t in seller), 6),
        wall_time_s=round(wall_time_s, 6),
    )
