"""Simulation and evaluation: whole scenarios (both sides' private preferences), buyers,
``run_negotiation`` and the episodes it returns.

::

    from negotiator.sim import generate, make_party, run_negotiation

    scenario = generate(seed=7)                       # a seeded multi-issue scenario
    seller = make_party("scripted/boulware", "seller")
    buyer = make_party("rule/conceder", "buyer")
    episode = await run_negotiation(seller, buyer, scenario)
    episode.metrics.seller_score

The commerce app's API is the package root (``negotiator``); this module is for
researchers, evaluations and training. Names load on first use, like the root's.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# public name -> the module that defines it
_EXPORTS: dict[str, str] = {
    **dict.fromkeys(
        (
            "DiscreteIssue",
            "LinearValue",
            "NumericIssue",
            "OutcomeSpace",
            "Preferences",
            "Product",
            "Scenario",
            "TableValue",
            "generate",
            "outcome_metrics",
            "seller_score",
            "template_names",
        ),
        ".domain",
    ),
    **dict.fromkeys(("PartyView", "Party"), ".party"),
    **dict.fromkeys(("action_json_schema", "tool_definitions"), ".actions"),
    **dict.fromkeys(("Guard", "LLMParty", "RetryPolicy"), ".llm"),
    "DEFAULT_SELLER": ".agent",
    **dict.fromkeys(("LLMBuyer", "RuleParty"), ".buyers"),
    **dict.fromkeys(("Episode", "EpisodeLog", "make_party", "read_episodes", "run_negotiation"), ".runtime"),
    **dict.fromkeys(("InvalidOffer", "ModelError", "ProtocolError", "RemoteRequestBlocked"), ".errors"),
}

# Written out: type checkers read a literal __all__ (tests/test_typing.py checks it against _EXPORTS).
__all__ = [
    "DiscreteIssue",
    "LinearValue",
    "NumericIssue",
    "OutcomeSpace",
    "Preferences",
    "Product",
    "Scenario",
    "TableValue",
    "generate",
    "outcome_metrics",
    "seller_score",
    "template_names",
    "PartyView",
    "Party",
    "action_json_schema",
    "tool_definitions",
    "Guard",
    "LLMParty",
    "RetryPolicy",
    "DEFAULT_SELLER",
    "LLMBuyer",
    "RuleParty",
    "Episode",
    "EpisodeLog",
    "make_party",
    "read_episodes",
    "run_negotiation",
    "InvalidOffer",
    "ModelError",
    "ProtocolError",
    "RemoteRequestBlocked",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'negotiator.sim' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, "negotiator"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


if TYPE_CHECKING:
    from .actions import action_json_schema, tool_definitions
    from .agent.seller import DEFAULT_SELLER
    from .buyers import LLMBuyer, RuleParty
    from .domain import (
        DiscreteIssue,
        LinearValue,
        NumericIssue,
        OutcomeSpace,
        Preferences,
        Product,
        Scenario,
        TableValue,
        generate,
        outcome_metrics,
        seller_score,
        template_names,
    )
    from .errors import InvalidOffer, ModelError, ProtocolError, RemoteRequestBlocked
    from .llm.graph import RetryPolicy  # from the defining modules: .llm loads its names lazily
    from .llm.guard import Guard
    from .llm.party import LLMParty
    from .party import Party, PartyView
    from .runtime import Episode, EpisodeLog, make_party, read_episodes, run_negotiation
