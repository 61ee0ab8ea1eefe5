"""The LangGraph seller: prompt rendering, turn graph, validation and retry, guard.

Names load on first use, so a module that needs only the guard's secrecy check (the
summaries of a rule-vs-rule run) does not pull LangGraph in.
"""

from importlib import import_module

_HOMES = {
    "RetryPolicy": ".graph",
    "Guard": ".guard",
    "fallback_action": ".guard",
    "LLMParty": ".llm_party",
    "PROMPT_VERSION": ".prompt",
    "render_messages": ".prompt",
    "DEFAULT_SELLER": ".seller",
    "SellerAgent": ".seller",
}

__all__ = list(_HOMES)


def __getattr__(name: str):
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(_HOMES[name], __name__), name)
