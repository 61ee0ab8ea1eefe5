"""The LangGraph seller: prompt rendering, turn graph, validation and retry, guard."""

from .graph import RetryPolicy
from .guard import Guard, fallback_action
from .llm_party import LLMParty
from .prompt import PROMPT_VERSION, render_messages
from .seller import DEFAULT_SELLER, SellerAgent

__all__ = ["RetryPolicy", "Guard", "fallback_action", "LLMParty", "PROMPT_VERSION", "render_messages", "DEFAULT_SELLER", "SellerAgent"]
