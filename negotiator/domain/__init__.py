"""The game: pure data and arithmetic, no I/O. Imports nothing else of negotiator."""

from .generator import GENERATOR_VERSION, TEMPLATES, example_listing, generate, has_zopa, template_names
from .issues import DiscreteIssue, NumericIssue, Offer, OutcomeSpace, Value
from .metrics import OutcomeMetrics, ScenarioAnalysis, analysis, outcome_metrics, seller_score
from .protocol import ActionKind, EndReason, ProtocolState
from .scenario import HardLimits, Listing, Product, PublicScenario, Role, Scenario, other
from .utility import LinearValue, Preferences, TableValue, score

__all__ = [
    "GENERATOR_VERSION",
    "TEMPLATES",
    "example_listing",
    "generate",
    "has_zopa",
    "template_names",
    "DiscreteIssue",
    "NumericIssue",
    "Offer",
    "OutcomeSpace",
    "Value",
    "OutcomeMetrics",
    "ScenarioAnalysis",
    "analysis",
    "outcome_metrics",
    "seller_score",
    "ActionKind",
    "EndReason",
    "ProtocolState",
    "HardLimits",
    "Listing",
    "Product",
    "PublicScenario",
    "Role",
    "Scenario",
    "other",
    "LinearValue",
    "Preferences",
    "TableValue",
    "score",
]
