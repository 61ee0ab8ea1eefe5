"""negotiator: deploy negotiating sellers that never cross the business's hard limits.

The public API::

    from negotiator import SellerAgent, generate, run_negotiation, make_party

    scenario = generate(seed=7)                       # a seeded multi-issue scenario
    seller = SellerAgent("openai/gpt-4o-mini", limits={"minimum": {"price": 900}})
    buyer = make_party("rule/conceder", "buyer")
    episode = await run_negotiation(seller, buyer, scenario)
    episode.metrics.seller_score

Every name is imported on first use (PEP 562): ``import negotiator`` costs milliseconds, and
a command that never builds an LLM seller never pays for LangGraph (about 2 s here).
"""

from __future__ import annotations

import importlib
import os as _os
from typing import TYPE_CHECKING, Any

# Keep LiteLLM offline and quiet before anything imports it.
_os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

DISTRIBUTION = "negotiator-sdk"
"""The distribution (pip) name this package is installed as; ``__version__`` reads its metadata."""


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:  # a source checkout on sys.path, not installed: read pyproject.toml
        import tomllib
        from pathlib import Path

        try:
            with open(Path(__file__).resolve().parent.parent / "pyproject.toml", "rb") as f:
                return tomllib.load(f)["project"]["version"]
        except (OSError, KeyError, ValueError):
            return "0+unknown"


# public name -> the module that defines it
_EXPORTS: dict[str, str] = {
    **dict.fromkeys(("Accept", "MakeOffer", "WalkAway", "action_json_schema", "tool_definitions"), ".actions"),
    **dict.fromkeys(("DEFAULT_SELLER", "Guard", "LLMParty", "RetryPolicy", "SellerAgent"), ".agent"),
    "LLMBuyer": ".buyers.llm",
    "RuleParty": ".buyers.rules",
    **dict.fromkeys((
        "DiscreteIssue", "HardLimits", "Listing", "NumericIssue", "OutcomeSpace", "Preferences", "Product", "Scenario",
        "generate", "outcome_metrics", "seller_score",
    ), ".domain"),
    **dict.fromkeys((
        "InvalidOffer", "ModelError", "NegotiatorError", "ProtocolError", "ProviderError", "RemoteRequestBlocked", "UsageError",
    ), ".errors"),
    **dict.fromkeys(("PartyView", "PublicMove", "TurnRecord"), ".party"),
    **dict.fromkeys(("Episode", "EpisodeLog", "make_party", "read_episodes", "run_negotiation"), ".runtime"),
    **dict.fromkeys(("BuyerMove", "Sessions", "SessionState"), ".sessions"),
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    if name == "__version__":  # read on first use: package metadata costs tens of milliseconds to import
        value: Any = _version()
        globals()[name] = value
        return value
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'negotiator' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


if TYPE_CHECKING:  # for type checkers and IDEs: the same names, imported eagerly
    __version__: str
    from .actions import Accept, MakeOffer, WalkAway, action_json_schema, tool_definitions
    from .agent import DEFAULT_SELLER, Guard, LLMParty, RetryPolicy, SellerAgent
    from .buyers import LLMBuyer, RuleParty
    from .domain import (
        DiscreteIssue, HardLimits, Listing, NumericIssue, OutcomeSpace, Preferences, Product, Scenario, generate,
        outcome_metrics, seller_score,
    )
    from .errors import InvalidOffer, ModelError, NegotiatorError, ProtocolError, ProviderError, RemoteRequestBlocked, UsageError
    from .party import PartyView, PublicMove, TurnRecord
    from .runtime import Episode, EpisodeLog, make_party, read_episodes, run_negotiation
    from .sessions import BuyerMove, Sessions, SessionState
