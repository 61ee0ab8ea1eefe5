"""The service's catalogue: the listings an agent may discover and negotiate.

``negotiator serve --catalogue listings.json`` reads a JSON array of entries, each a
listing (the product, the issues, the seller's preferences and limits, exactly the
``listing`` body of ``POST /v1/negotiations``) with optional extra hard limits::

    [{"listing": {"id": "desk-oak", "product": {...}, "issues": [...], "seller": {...}}, "limits": {"minimum": {"price": 900}}}]

Without a file, the catalogue holds one generated listing per product template (seed 0),
so a fresh service has something to show. Only each listing's public part (product,
issues, who opens, round limit) is ever shown to callers.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from ..domain.generator import generate, template_names
from ..domain.scenario import HardLimits, Listing, PublicScenario
from ..errors import UsageError


class CatalogueEntry(BaseModel):
    """One listing on offer, with the business's hard limits for it."""

    model_config = ConfigDict(extra="forbid")
    listing: Listing
    limits: HardLimits | None = None


class CatalogueItem(BaseModel):
    """What a caller sees of a catalogue entry: its id and public facts."""

    listing_id: str = Field(description="pass it to open a negotiation on this listing")
    scenario: PublicScenario


class CatalogueListing(BaseModel):
    """The listings this seller negotiates."""

    listings: list[CatalogueItem]


class Catalogue:
    """Listings by id."""

    def __init__(self, entries: list[CatalogueEntry]):
        self.entries: dict[str, CatalogueEntry] = {}
        for e in entries:
            if e.listing.id in self.entries:
                raise UsageError(f"the catalogue lists {e.listing.id!r} twice; listing ids must be unique")
            try:
                e.listing.check_limits(e.limits)
            except ValueError as err:
                raise UsageError(f"catalogue listing {e.listing.id!r}: limits: {err}") from None
            self.entries[e.listing.id] = e

    @classmethod
    def generated(cls) -> Catalogue:
        """One listing per product template (seed 0)."""
        return cls([CatalogueEntry(listing=generate(0, t).listing()) for t in template_names()])

    @classmethod
    def load(cls, path: str | Path) -> Catalogue:
        p = Path(path)
        try:
            data = json.loads(p.read_text())
        except OSError as e:
            raise UsageError(f"cannot read the catalogue {p}: {e.strerror or e}") from None
        except json.JSONDecodeError as e:
            raise UsageError(f"the catalogue {p} is not JSON: {e.msg} (line {e.lineno})") from None
        if not isinstance(data, list) or not data:
            raise UsageError(
                f'the catalogue {p} must be a non-empty JSON array of {{"listing": ..., "limits": ...}} entries'
            )
        try:
            entries = TypeAdapter(list[CatalogueEntry]).validate_python(data)
        except ValidationError as e:
            err = e.errors()[0]
            where = ".".join(str(x) for x in err["loc"])
            raise UsageError(f"the catalogue {p}: entry {where}: {err['msg']}") from None
        return cls(entries)

    def get(self, listing_id: str) -> CatalogueEntry:
        try:
            return self.entries[listing_id]
        except KeyError:
            known = ", ".join(list(self.entries)[:10])
            raise UsageError(
                f"no listing {listing_id!r} in the catalogue; list_listings shows them ({known})"
            ) from None

    def public(self) -> CatalogueListing:
        return CatalogueListing(
            listings=[CatalogueItem(listing_id=k, scenario=e.listing.public()) for k, e in self.entries.items()]
        )
