"""Negotiation strategy: the arithmetic of bargaining, kept out of the language model.

Pure (imports the domain only). One implementation serves every seller: the rule sellers
play it alone; the assisted LLM seller sees its advice and chooses.

==============  ============================================================================
``schedule``    the target utility over the deadline (Boulware, linear, Conceder; tit-for-tat)
``opponent``    what the other side seems to want, from its offers (frequency model)
``bidding``     candidate offers at the target, best for the other side first (logrolling)
``acceptance``  when to accept (AC_next, AC_time, AC_combi)
``advice``      the strategy as a whole, and what it would do now
==============  ============================================================================
"""

from .acceptance import Acceptance
from .advice import ACCEPT, CANDIDATE_IDS, STRATEGY_NAMES, WALK_AWAY, Advice, Candidate, Strategy
from .bidding import bids
from .opponent import FrequencyModel
from .outcomes import OutcomeIndex
from .schedule import Hardliner, Schedule, TimeDependent, TitForTat, progress, target_utility
from .situation import Situation

__all__ = [
    "Acceptance",
    "ACCEPT",
    "CANDIDATE_IDS",
    "STRATEGY_NAMES",
    "WALK_AWAY",
    "Advice",
    "Candidate",
    "Strategy",
    "bids",
    "FrequencyModel",
    "OutcomeIndex",
    "Hardliner",
    "Schedule",
    "TimeDependent",
    "TitForTat",
    "progress",
    "target_utility",
    "Situation",
]
