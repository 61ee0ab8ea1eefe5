"""An LLM-driven party, seller or buyer: prompt rendering, the turn graph (LangGraph),
validation and retry, and the deterministic guard.

It lies below both ``negotiator.agent`` (the seller an app embeds) and
``negotiator.buyers`` (LLM buyers), so neither has to import the other.

Names load on first use, so a module that needs only the guard's secrecy check (the
summaries of a rule-vs-rule run) does not pull LangGraph in.
"""

from importlib import import_module

_HOMES = {
    "RetryPolicy": ".graph",
    "Guard": ".guard",
    "fallback_action": ".guard",
    "LLMParty": ".party",
    "PROMPT_VERSION": ".prompt",
    "render_messages": ".prompt",
}

__all__ = list(_HOMES)


def __getattr__(name: str):
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(_HOMES[name], __name__), name)
