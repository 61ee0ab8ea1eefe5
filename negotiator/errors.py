"""Every exception the package raises, in three kinds (pydantic-ai's split).

**The developer's mistake** (``UsageError`` and its subclasses): the caller asked for
something impossible: a bad spec, a malformed listing, a flag out of range, a move that
does not fit the negotiation, a session that does not exist. The message says what was
wrong and what to do. Raised at once, never recorded as a failed negotiation.

**A failed run** (``ModelError``, ``ProviderError``, ``ProtocolError`` ...): a model answered
badly, a provider failed, a party broke the rules, a sweep step exited non-zero. Inside a
negotiation these never escape: the runtime records them on the episode (invalid attempts,
a fallback action, or an ``error`` outcome).

**Control flow** (``ActionParseError``): not an error at all. It carries feedback for the
model ("that tool does not exist; call make_offer ...") and the turn graph catches it to ask
again. It is deliberately outside ``NegotiatorError``: ``except NegotiatorError`` never
swallows a retry signal, and a retry signal is never mistaken for a failure.

What an app must catch is exported here and from ``negotiator``: ``UsageError`` (with
``MoveConflict`` and ``UnknownSession`` for ``Sessions``) and ``ProviderError``.
"""

from __future__ import annotations

from typing import Any


class NegotiatorError(Exception):
    """Base class of every error this package raises (control flow aside)."""


# --- the developer's mistake ------------------------------------------------------------


class UsageError(NegotiatorError, ValueError):
    """A mistake by the caller: bad spec, bad scenario, bad flag. Fix the input."""


def first_error(e: Any) -> str:
    """A pydantic ``ValidationError`` in one line for a ``UsageError``: where (the field; nothing when
    the error is on the object itself), what, and how many more. A message our own validators wrote
    is shown as written, without pydantic's ``Value error, `` before it."""
    err = e.errors()[0]
    where = ".".join(str(p) for p in err["loc"])
    what = str(err["msg"]).removeprefix("Value error, ")
    more = f" (and {e.error_count() - 1} more)" if e.error_count() > 1 else ""
    return f"{where}: {what}{more}" if where else f"{what}{more}"


class MoveConflict(UsageError):
    """The move does not fit where the negotiation stands (ended, not the buyer's turn, stale).

    ``state``, when known, is where the negotiation stands now (a ``SessionState``): what
    the caller reloads before deciding again.
    """

    def __init__(self, message: str, state: Any = None):
        super().__init__(message)
        # A SessionState; typed Any, as this module sits below sessions: an app's e.state.turn type-checks.
        self.state: Any = state


class UnknownSession(UsageError):
    """No session has this id (never opened, or opened in another store)."""


class Unauthorised(UsageError):
    """The service got no credentials, or ones it does not know (HTTP 401)."""


class Forbidden(UsageError):
    """The credentials are valid but not for this negotiation (HTTP 403)."""


class InvalidAgreement(NegotiatorError):
    """An agreement record that does not verify: changed after signing, or signed by another key."""


class ScriptError(UsageError):
    """A scripted test model was used other than its script says (a test's mistake)."""


class ScriptExhausted(ScriptError):
    """A scripted model was called more often than it had answers for."""


class RemoteRequestBlocked(NegotiatorError):
    """Code under test tried to reach a non-loopback model provider (the test's mistake).

    Not a ``UsageError`` on purpose: the CLI turns those into a message and an exit code,
    and a blocked request must fail the test loudly instead.
    """


# --- a failed run -----------------------------------------------------------------------


class ModelError(NegotiatorError):
    """A model produced output that cannot be used (after parsing and retries)."""


class ProviderError(NegotiatorError):
    """The model provider failed (network, HTTP status, timeout).

    ``transient`` errors (429, 5xx, timeouts, connection resets) are worth retrying.
    """

    def __init__(self, message: str, *, transient: bool = False, status: int | None = None):
        super().__init__(message)
        self.transient = transient
        self.status = status


class Unreachable(ProviderError):
    """A model endpoint could not be reached before a run started (the CLI exits with 3)."""


class StoreUnreachable(Unreachable):
    """The session store (a PostgreSQL server) could not be reached when the service started (exit 3)."""


class StoreUnavailable(NegotiatorError):
    """The session store refused a read or a write while running: a SQLite file locked by another
    process past its timeout or made read-only, a PostgreSQL server gone (HTTP 503). Nothing new was
    stored; the same request may be sent again."""


class ProtocolError(NegotiatorError):
    """An action the protocol does not allow at this point (e.g. accepting nothing)."""


class RemoteRefused(NegotiatorError):
    """A remote seller's service answered a call with an error (a REST error code and message)."""

    def __init__(self, code: str, message: str):
        super().__init__(f"{code}: {message}")
        self.code = code


class InvalidOffer(NegotiatorError, ValueError):
    """Offer terms that do not fit the outcome space. ``problems`` maps issue -> reason."""

    def __init__(self, problems: dict[str, str]):
        self.problems = dict(problems)
        super().__init__("; ".join(f"{k}: {v}" for k, v in self.problems.items()))


class TraceError(NegotiatorError, RuntimeError):
    """Training: the seller's chat did not grow append-only, so the training sequence cannot follow it."""


class SweepFailed(NegotiatorError):
    """Training: a step of a sweep exited non-zero; rerunning the same command resumes it."""


class TrainingFailed(NegotiatorError):
    """Training: a step had nothing to learn from (every negotiation of it ended in an error: a broken setup, not
    bad luck); the run's checkpoints are kept, and rerunning the same command resumes it."""


class PushFailed(NegotiatorError):
    """Training: the hub refused the trained adapter or could not be reached; the run's files are kept,
    and rerunning the same command pushes them again."""


# --- control flow -----------------------------------------------------------------------


class ActionParseError(Exception):
    """The model's output is not a usable action: send ``feedback`` back so it can correct itself.

    Control flow, not an error: the turn graph catches it and asks the model again (at most
    ``max_retries`` times, then the guard's fallback action).
    """

    def __init__(self, feedback: str):
        super().__init__(feedback)
        self.feedback = feedback


__all__ = [
    "ActionParseError",
    "Forbidden",
    "InvalidAgreement",
    "InvalidOffer",
    "ModelError",
    "MoveConflict",
    "NegotiatorError",
    "ProtocolError",
    "ProviderError",
    "PushFailed",
    "RemoteRefused",
    "RemoteRequestBlocked",
    "ScriptError",
    "ScriptExhausted",
    "SweepFailed",
    "TraceError",
    "TrainingFailed",
    "Unauthorised",
    "UnknownSession",
    "StoreUnavailable",
    "StoreUnreachable",
    "Unreachable",
    "UsageError",
]
