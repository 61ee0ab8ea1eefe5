"""Live negotiations for a commerce app: open, move, read; kept by a LangGraph checkpointer."""

from .moves import BUYER_MESSAGE_MAX_CHARS, BuyerMove, MoveConflict
from .state import SessionState
from .store import Sessions, UnknownSession, open_checkpointer

__all__ = ["BUYER_MESSAGE_MAX_CHARS", "BuyerMove", "MoveConflict", "SessionState", "Sessions", "UnknownSession", "open_checkpointer"]
