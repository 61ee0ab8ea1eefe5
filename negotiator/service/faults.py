"""What went wrong, as every face of the service says it: a stable code and a sentence.

The REST API answers these as ``ErrorBody`` JSON with an HTTP status; the MCP tools and
the A2A executor carry the same code and message in a tool error or an agent message, so
a mistake reads the same whichever protocol a buyer's agent speaks.
"""

from __future__ import annotations

from ..errors import Forbidden, ProviderError, StoreUnavailable, UsageError
from ..sessions import MoveConflict, UnknownSession
from .models import ErrorBody

UNAVAILABLE = "the seller's model is unavailable right now; nothing was recorded, send the same move again in a moment"
RETRY_AFTER = {"Retry-After": "5"}  # seconds, on a 503
FORBIDDEN_SESSION = "this session token reads and moves only the negotiation it was issued for"
FORBIDDEN_OPEN = (
    "opening a negotiation needs the API key (the business's server), except on a catalogue listing "
    "where the service was started with --public-catalogue"
)


def fault(exc: BaseException) -> tuple[int, ErrorBody] | None:
    """The HTTP status and error body for a caller's mistake or a retryable failure; None for a bug."""
    if isinstance(exc, Forbidden):
        return 403, ErrorBody(error="forbidden", message=str(exc))
    if isinstance(exc, UnknownSession):
        return 404, ErrorBody(error="not_found", message=str(exc))
    if isinstance(exc, MoveConflict):
        return 409, ErrorBody(error="conflict", message=str(exc), state=exc.state)
    if isinstance(exc, UsageError):
        return 422, ErrorBody(error="invalid_request", message=str(exc))
    if isinstance(exc, ProviderError):
        return 503, ErrorBody(error="seller_unavailable", message=UNAVAILABLE)
    if isinstance(exc, StoreUnavailable):
        return 503, ErrorBody(error="store_unavailable", message=str(exc))
    return None
