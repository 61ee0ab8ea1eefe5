"""Request and error bodies of the HTTP service (responses are ``SessionState``)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..domain.generator import GENERATOR_VERSION, GENERATOR_VERSIONS, generate
from ..domain.issues import NotBoolean
from ..domain.scenario import HardLimits, Listing
from ..sessions.state import SessionState


class CreateNegotiation(BaseModel):
    """A listing to negotiate over: one of the catalogue's, given in full, or a generated one (seed and template)."""

    model_config = ConfigDict(extra="forbid")

    listing_id: str | None = Field(
        None, max_length=200, description="a listing of the service's catalogue (list_listings shows them)"
    )
    listing: Listing | None = Field(
        None, description="the product, the issues, the seller's preferences and limits (the buyer's are not needed)"
    )
    seed: Annotated[int, Field(ge=0, lt=2**31), NotBoolean] | None = Field(
        None, description="generate the listing from this seed instead"
    )
    template: str | None = Field(None, max_length=64, description="product template for a generated listing")
    max_rounds: Annotated[int, Field(ge=1, le=100), NotBoolean] | None = Field(
        None, description="round limit for a generated listing (default: the template's own draw)"
    )
    generator: Annotated[int, NotBoolean] | None = Field(
        None,
        description=f"scenario generator version for a generated listing (default {GENERATOR_VERSION}; 2 ends the "
        "price range at the list price a shop shows)",
    )
    limits: HardLimits | None = Field(
        None, description="the business's hard limits for this negotiation, on top of the listing's"
    )

    @model_validator(mode="after")
    def _one_source(self) -> CreateNegotiation:
        if sum(x is not None for x in (self.listing_id, self.listing, self.seed)) != 1:
            raise ValueError(
                "give exactly one of 'listing_id' (the catalogue), 'listing', or 'seed' (with an optional 'template')"
            )
        if (
            self.template is not None or self.max_rounds is not None or self.generator is not None
        ) and self.seed is None:
            raise ValueError("'template', 'max_rounds' and 'generator' only go with 'seed'")
        if self.generator is not None and self.generator not in GENERATOR_VERSIONS:
            raise ValueError(
                f"unknown scenario generator version {self.generator}; choose one of "
                + ", ".join(map(str, GENERATOR_VERSIONS))
            )
        return self

    def resolve(self, catalogue) -> tuple[Listing, HardLimits | None]:
        """The listing this asks for and the limits to open it with (a catalogue entry's, then these on top)."""
        if self.listing_id is not None:
            entry = catalogue.get(self.listing_id)
            limits = entry.limits.merged(self.limits) if entry.limits and self.limits else (entry.limits or self.limits)
            return entry.listing, limits
        if self.listing is not None:
            return self.listing, self.limits
        generated = generate(
            self.seed,  # type: ignore[arg-type]
            self.template,
            max_rounds=self.max_rounds,
            version=self.generator or GENERATOR_VERSION,
        )
        return generated.listing(), self.limits


ErrorCode = Literal[
    "unauthorized",
    "forbidden",
    "credentials_in_url",
    "misdirected_host",
    "not_found",
    "conflict",
    "invalid_request",
    "too_large",
    "seller_unavailable",
    "store_unavailable",
    "internal_error",
]


class ErrorBody(BaseModel):
    """Every error answer: a stable code for programs and a sentence for people."""

    error: ErrorCode
    message: str = Field(description="what was wrong and what to do")
    details: list[dict] | None = Field(None, description="per-field problems of an invalid request")
    state: SessionState | None = Field(
        None, description="on a conflict (409): where the negotiation stands now, to reload before deciding again"
    )


class AgreementCheck(BaseModel):
    """The answer of ``POST /v1/agreements/verify``."""

    valid: bool
    reason: str | None = Field(None, description="why it does not verify")
    key_id: str = Field(description="the service's signing key id")
