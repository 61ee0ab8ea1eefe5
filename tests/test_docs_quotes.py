"""What the pages quote from the code is what the code gives.

A developer reads a quoted message to learn what a mistake looks like, and searches the page
for the one they got: each error message docs/embedding.md quotes is produced here by the call
the page describes and must appear in the page word for word (line breaks aside). A reader of
``episodes.jsonl`` learns its fields from docs/episode-schema.md: every field of the record
must be in the page's example.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import ValidationError

from negotiator import BuyerMove, HardLimits, Listing, SellerAgent, UsageError
from negotiator.buyers.rules import STRATEGIES
from negotiator.buyers.talk import TALKERS
from negotiator.domain import DiscreteIssue, LinearValue, NumericIssue, Preferences, Product, TableValue, generate
from negotiator.models.scripted import NAMED
from negotiator.models.specs import STRATEGY_KEYS
from negotiator.party import AdviceRecord, Attempt, GuardIntervention, TurnRecord, Usage
from negotiator.runtime.episode import Episode, EpisodeMetrics, ErrorInfo, Outcome, PartyInfo, Provenance

ROOT = Path(__file__).resolve().parent.parent


def _words(text: str) -> str:
    return re.sub(r"\s+", " ", text)


EMBEDDING = _words((ROOT / "docs" / "embedding.md").read_text(encoding="utf-8"))


def _desk(reservation: float = 0.25, limits: HardLimits | None = None) -> Listing:
    """The desk of the page's "Sell your own product"."""
    return Listing(
        id="oakline-desk-160",
        product=Product(name="Oakline standing desk 160", list_price=1200),
        currency="USD",
        issues=(
            NumericIssue(name="price", low=800, high=1200, step=10, unit="USD"),
            DiscreteIssue(name="delivery", options=("standard", "express")),
            DiscreteIssue(name="warranty_years", options=(2, 3, 5), ordered=True),
        ),
        seller=Preferences(
            weights={"price": 0.7, "delivery": 0.1, "warranty_years": 0.2},
            values={
                "price": LinearValue(worst=800, best=1200),
                "delivery": TableValue(values={"standard": 1.0, "express": 0.4}),
                "warranty_years": TableValue(values={"2": 1.0, "3": 0.7, "5": 0.0}),
            },
            reservation=reservation,
        ),
        seller_limits=limits or HardLimits(minimum={"price": 950}, forbidden={"warranty_years": (5,)}),
    )


def _validation_message(call) -> str:
    with pytest.raises(ValidationError) as e:
        call()
    return str(e.value.errors()[0]["msg"]).removeprefix("Value error, ")


def _usage_message(call) -> str:
    with pytest.raises(UsageError) as e:
        call()
    return str(e.value)


QUOTES = {
    "utility floor": lambda: _validation_message(
        lambda: _desk(reservation=0.9, limits=HardLimits(maximum={"price": 1000}))
    ),
    "unknown issue": lambda: _validation_message(lambda: _desk(limits=HardLimits(minimum={"unit_price": 950}))),
    "look-alike option": lambda: _validation_message(
        lambda: Listing.model_validate(
            {**generate(seed=0).listing().model_dump(), "seller_limits": {"forbidden": {"assembly": ["n\u043ene"]}}}
        )
    ),
    "NaN limit": lambda: _usage_message(
        lambda: SellerAgent("scripted/boulware", limits={"minimum": {"price": float("nan")}})
    ),
    "NaN offer": lambda: _usage_message(lambda: BuyerMove.offer({"price": float("nan")}, "x")),
}


@pytest.mark.parametrize("name", QUOTES)
def test_the_quoted_message_is_the_one_the_code_gives(name):
    message = QUOTES[name]()
    assert _words(message) in EMBEDDING, f"docs/embedding.md should quote: {message}"


def test_the_episode_schema_page_names_every_field_of_an_episode():
    page = (ROOT / "docs" / "episode-schema.md").read_text(encoding="utf-8")
    example = page.split("```jsonc", 1)[1].split("```", 1)[0]
    named = set(re.findall(r'"(\w+)":', example)) | set(
        re.findall(r"\{([\w, ]+)\}", example)[0].replace(" ", "").split(",")
    )
    records = (
        Episode,
        PartyInfo,
        TurnRecord,
        Attempt,
        GuardIntervention,
        AdviceRecord,
        Usage,
        Outcome,
        EpisodeMetrics,
        ErrorInfo,
        Provenance,
    )
    missing = {f"{r.__name__}.{name}" for r in records for name in r.model_fields if name not in named}
    assert missing == set()


def test_the_concepts_page_names_every_rule_tactic_and_scripted_model():
    page = (ROOT / "docs" / "concepts.md").read_text(encoding="utf-8")
    scripted = next(line for line in page.splitlines() if line.startswith("| `scripted/<name>`"))
    assert [n for n in NAMED if f"`{n}`" not in scripted] == []
    assert [s for s in STRATEGIES if s not in TALKERS and f"`rule/{s}" not in page] == []


def test_the_strategy_page_lists_every_setting_a_seller_spec_takes():
    page = (ROOT / "docs" / "strategy.md").read_text(encoding="utf-8")
    table = page.split("## What a business sets", 1)[1].split("\n\n", 2)[1]
    written = set(re.findall(r"[`&](\w+)=", table))
    assert sorted(k for k in STRATEGY_KEYS if k != "custom" and k not in written) == []
