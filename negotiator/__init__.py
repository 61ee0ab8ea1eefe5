"""negotiator: deploy negotiating sellers that never cross the business's hard limits.

The API a commerce app needs, and nothing else::

    from negotiator import SellerAgent, Sessions, BuyerMove, example_listing

    seller = SellerAgent("local/gemma-3-270m", limits={"minimum": {"price": 900}})
    async with Sessions.connect(seller, "negotiations.sqlite") as sessions:
        opened = await sessions.open(example_listing(seed=0))  # the state, and the shopper's token
        terms = {"price": 850, "delivery_days": 7, "assembly": "none", "payment_terms": "net30"}  # every issue
        state = await sessions.move(opened.id, BuyerMove.offer(terms, "Would you take 850?"))

``Sessions`` is the way an app runs a seller (``SellerAgent.respond`` for an app that keeps
the transcript itself). Simulation and evaluation (scenarios with both sides, rule and LLM
buyers, ``run_negotiation``, episodes) live in ``negotiator.sim``; docs/api.md lists the
public surface by audience.

Every name is imported on first use (PEP 562): ``import negotiator`` costs milliseconds, and
a command that never builds an LLM seller never pays for LangGraph (about 2 s here).
"""

from __future__ import annotations

import importlib
import os as _os
from typing import TYPE_CHECKING, Any

# Keep LiteLLM offline and quiet before anything imports it.
_os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from .version import DISTRIBUTION  # noqa: E402,F401  (DISTRIBUTION: the pip name)
from .version import read_version as _version

# public name -> the module that defines it
_EXPORTS: dict[str, str] = {
    "SellerAgent": ".agent",
    **dict.fromkeys(("BuyerMove", "Sessions", "SessionState"), ".sessions"),
    **dict.fromkeys(("HardLimits", "Listing", "example_listing"), ".domain"),
    **dict.fromkeys(("Accept", "MakeOffer", "WalkAway"), ".actions"),
    **dict.fromkeys(("PublicMove", "TurnRecord"), ".party"),
    **dict.fromkeys(("MoveConflict", "NegotiatorError", "ProviderError", "UnknownSession", "UsageError"), ".errors"),
}

# Written out: type checkers read a literal __all__ (under mypy --strict a name missing here is not
# exported to an app); tests/test_typing.py checks it against _EXPORTS.
__all__ = [
    "__version__",
    "SellerAgent",
    "BuyerMove",
    "Sessions",
    "SessionState",
    "HardLimits",
    "Listing",
    "example_listing",
    "Accept",
    "MakeOffer",
    "WalkAway",
    "PublicMove",
    "TurnRecord",
    "MoveConflict",
    "NegotiatorError",
    "ProviderError",
    "UnknownSession",
    "UsageError",
]


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
    from .actions import Accept, MakeOffer, WalkAway
    from .agent.seller import SellerAgent
    from .domain import HardLimits, Listing, example_listing
    from .errors import MoveConflict, NegotiatorError, ProviderError, UnknownSession, UsageError
    from .party import PublicMove, TurnRecord
    from .sessions import BuyerMove, Sessions, SessionState
