"""negotiator: deploy negotiating sellers that never cross the business's hard limits.

The public API::

    from negotiator import SellerAgent, generate, run_negotiation, make_party

    scenario = generate(seed=7)                       # a seeded multi-issue scenario
    seller = SellerAgent("openai/gpt-4o-mini", limits={"minimum": {"price": 900}})
    buyer = make_party("rule/conceder", "buyer")
    episode = await run_negotiation(seller, buyer, scenario)
    episode.metrics.seller_score
"""

from __future__ import annotations

import os as _os

# Keep LiteLLM offline and quiet before anything imports it.
_os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

__version__ = "0.1.0"

from .actions import Accept, MakeOffer, WalkAway, action_json_schema, tool_definitions  # noqa: E402
from .agreements import AgreementRecord, InvalidAgreement, verify_agreement  # noqa: E402
from .agent import DEFAULT_SELLER, Guard, LLMParty, RetryPolicy, SellerAgent  # noqa: E402
from .buyers import LLMBuyer, RuleParty  # noqa: E402
from .domain import (  # noqa: E402
    DiscreteIssue,
    HardLimits,
    Listing,
    NumericIssue,
    OutcomeSpace,
    Preferences,
    Product,
    Scenario,
    generate,
    outcome_metrics,
    seller_score,
)
from .errors import (  # noqa: E402
    InvalidOffer,
    ModelError,
    NegotiatorError,
    ProtocolError,
    ProviderError,
    RemoteRequestBlocked,
    UsageError,
)
from .party import PartyView, PublicMove, TurnRecord  # noqa: E402
from .runtime import Episode, EpisodeLog, make_party, read_episodes, run_negotiation  # noqa: E402
from .sessions import BuyerMove, Sessions, SessionState  # noqa: E402

__all__ = [
    "__version__",
    "Accept", "MakeOffer", "WalkAway", "action_json_schema", "tool_definitions",
    "AgreementRecord", "InvalidAgreement", "verify_agreement",
    "DEFAULT_SELLER", "Guard", "LLMParty", "RetryPolicy", "SellerAgent",
    "LLMBuyer", "RuleParty",
    "DiscreteIssue", "HardLimits", "Listing", "NumericIssue", "OutcomeSpace", "Preferences", "Product", "Scenario",
    "generate", "outcome_metrics", "seller_score",
    "InvalidOffer", "ModelError", "NegotiatorError", "ProtocolError", "ProviderError", "RemoteRequestBlocked", "UsageError",
    "PartyView", "PublicMove", "TurnRecord",
    "Episode", "EpisodeLog", "make_party", "read_episodes", "run_negotiation",
    "BuyerMove", "Sessions", "SessionState",
]
