"""Live negotiations for a commerce app: open, move, read; kept by a LangGraph checkpointer."""

from .moves import BUYER_MESSAGE_MAX_CHARS, BuyerMove, MoveConflict
from .state import OpenedSession, SessionState
from .store import TOKEN_PREFIX, Sessions, UnknownSession, open_checkpointer, token_session

__all__ = [
    "BUYER_MESSAGE_MAX_CHARS",
    "BuyerMove",
    "MoveConflict",
    "OpenedSession",
    "SessionState",
    "Sessions",
    "TOKEN_PREFIX",
    "UnknownSession",
    "open_checkpointer",
    "token_session",
]
