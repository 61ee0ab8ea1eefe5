"""The exception hierarchy.

Three kinds of failure are kept apart:

* ``UsageError``: the developer or CLI user asked for something impossible (a bad spec,
  a malformed scenario, a flag out of range). The message says what was wrong and what
  to do. Raised immediately.
* ``ModelError`` / ``ProviderError``: a model answered badly or a provider failed.
  Inside a negotiation these never escape: the runtime turns them into data on the
  episode (invalid attempts, a fallback action, or an ``error`` outcome).
* ``InvalidOffer`` / ``ProtocolError``: the rules of the game were broken; they carry
  a message meant to be fed back to the model that broke them.
"""

from __future__ import annotations


class NegotiatorError(Exception):
    """Base class of every error this package raises."""


class UsageError(NegotiatorError, ValueError):
    """A mistake by the caller: bad spec, bad scenario, bad flag. Fix the input."""


class InvalidOffer(NegotiatorError, ValueError):
    """Offer terms that do not fit the outcome space. ``problems`` maps issue -> reason."""

    def __init__(self, problems: dict[str, str]):
        self.problems = dict(problems)
        super().__init__("; ".join(f"{k}: {v}" for k, v in self.problems.items()))


class ProtocolError(NegotiatorError):
    """An action the protocol does not allow at this point (e.g. accepting nothing)."""


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


class RemoteRequestBlocked(NegotiatorError):
    """Raised when code under test tries to reach a non-loopback model provider."""
