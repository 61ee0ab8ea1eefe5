"""The seller a commerce app embeds: ``SellerAgent``, an LLM party that always plays the
seller, always guarded, assisted by a negotiation strategy by default.

Names load on first use, so importing the package does not pull LangGraph in.
"""

from importlib import import_module
from typing import TYPE_CHECKING

_HOMES = {
    "DEFAULT_SELLER": ".seller",
    "SellerAgent": ".seller",
}

__all__ = ["DEFAULT_SELLER", "SellerAgent"]  # literal, for type checkers


def __getattr__(name: str):
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(_HOMES[name], __name__), name)


if TYPE_CHECKING:  # for type checkers: the same names, typed
    from .seller import DEFAULT_SELLER, SellerAgent
