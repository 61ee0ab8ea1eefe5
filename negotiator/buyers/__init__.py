"""Buyers (and rule-based sellers): classical tactics and LLM personas."""

from .llm import LLMBuyer
from .rules import STRATEGIES, RuleParty

__all__ = ["LLMBuyer", "RuleParty", "STRATEGIES"]
