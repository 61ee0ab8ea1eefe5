"""Negotiation strategy: the arithmetic of bargaining, kept out of the language model.

Pure (imports the domain only). One implementation serves every seller: the rule sellers
play it alone; the assisted LLM seller sees its advice and chooses.

==============  ============================================================================
``schedule``    the target utility over the deadline (Boulware, linear, Conceder; tit-for-tat,
                MiCRO, hardliner)
``responsive``  concession that answers concession, with a final offer, moved by hints
``opponent``    what the other side seems to want: from its offers (frequency model) or from
                what it chose against what it was offered (choice model)
``hints``       what the other side's words say it will do, as one reading of them
``reading``     the keyword reader: messages to hints by patterns (the baseline for a model)
``bidding``     candidate offers at the target, best for the other side first (logrolling)
``acceptance``  when to accept (AC_next, AC_time, AC_combi)
``advice``      the strategy as a whole, what it would do now, and every move it could make, priced
==============  ============================================================================
"""

from .acceptance import Acceptance
from .advice import (
    ACCEPT,
    CANDIDATE_IDS,
    LEARNERS,
    STRATEGY_NAMES,
    WALK_AWAY,
    Advice,
    Candidate,
    Menu,
    Move,
    ReadMove,
    Strategy,
)
from .bidding import bids
from .hints import NO_HINTS, UNSURE, Hints
from .opponent import ChoiceModel, FrequencyModel
from .outcomes import OutcomeIndex
from .reading import READERS, READINGS, read_hints
from .responsive import MOVE_KINDS, Levels, Responsive
from .schedule import Hardliner, MiCRO, Schedule, TimeDependent, TitForTat, progress, target_utility
from .situation import Situation

__all__ = [
    "Acceptance",
    "ACCEPT",
    "CANDIDATE_IDS",
    "LEARNERS",
    "MOVE_KINDS",
    "NO_HINTS",
    "READERS",
    "READINGS",
    "STRATEGY_NAMES",
    "UNSURE",
    "WALK_AWAY",
    "Advice",
    "Candidate",
    "ChoiceModel",
    "Hints",
    "Levels",
    "Menu",
    "Move",
    "ReadMove",
    "Strategy",
    "bids",
    "FrequencyModel",
    "OutcomeIndex",
    "Hardliner",
    "MiCRO",
    "Responsive",
    "Schedule",
    "TimeDependent",
    "TitForTat",
    "progress",
    "read_hints",
    "target_utility",
    "Situation",
]
