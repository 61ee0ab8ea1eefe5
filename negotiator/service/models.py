"""Request and error bodies of the HTTP service (responses are ``SessionState``)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..domain.scenario import HardLimits, Listing


class CreateNegotiation(BaseModel):
    """A listing to negotiate over: given in full, or a generated one (seed and template)."""

    model_config = ConfigDict(extra="forbid")

    listing: Listing | None = Field(None, description="the product, the issues, the seller's preferences and limits (the buyer's are not needed)")
    seed: int | None = Field(None, ge=0, lt=2**31, description="generate the listing from this seed instead")
    template: str | None = Field(None, max_length=64, description="product template for a generated listing")
    limits: HardLimits | None = Field(None, description="the business's hard limits for this negotiation, on top of the listing's")

    @model_validator(mode="after")
    def _one_source(self) -> CreateNegotiation:
        if (self.listing is None) == (self.seed is None):
            raise ValueError("give either 'listing' or 'seed' (with an optional 'template'), not both or neither")
        if self.template is not None and self.seed is None:
            raise ValueError("'template' only goes with 'seed'")
        return self


ErrorCode = Literal[
    "unauthorized", "forbidden", "credentials_in_url", "not_found", "conflict", "invalid_request", "too_large",
    "seller_unavailable", "internal_error",
]


class ErrorBody(BaseModel):
    """Every error answer: a stable code for programs and a sentence for people."""

    error: ErrorCode
    message: str = Field(description="what was wrong and what to do")
    details: list[dict] | None = Field(None, description="per-field problems of an invalid request")
