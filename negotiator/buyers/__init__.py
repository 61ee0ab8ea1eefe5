"""Buyers (and rule-based sellers): classical tactics and LLM personas."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .rules import STRATEGIES, RuleParty

if TYPE_CHECKING:
    from .llm import LLMBuyer

__all__ = ["LLMBuyer", "RuleParty", "STRATEGIES"]


def __getattr__(name: str) -> Any:
    # LLMBuyer pulls in the LangGraph agent; rule-only runs never need it.
    if name == "LLMBuyer":
        from .llm import LLMBuyer

        return LLMBuyer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
