"""The HTTP service: the business's backend opens negotiations and relays its shoppers' moves.

==========================================  ==================================================
``POST /v1/negotiations``                   open a negotiation for a listing -> 201 state
``POST /v1/negotiations/{id}/moves``        the buyer's move; the seller replies -> state
``GET  /v1/negotiations/{id}``              state and transcript
``GET  /healthz``                           liveness (no key needed)
``GET  /openapi.json``, ``/docs``           the API description
==========================================  ==================================================

Every ``/v1`` call needs ``Authorization: Bearer <NEGOTIATOR_API_KEY>``: the key belongs
to the business's backend, never to a shopper's browser. Errors are JSON ``ErrorBody``
answers (4xx for the caller's mistakes, 503 when the seller's model is unavailable);
no stack trace ever reaches a client.
"""

from __future__ import annotations

import hmac
import logging
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Path, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.exceptions import HTTPException as StarletteHTTPException

from .. import __version__
from ..domain.generator import generate
from ..errors import ProviderError, UsageError
from ..party import Party
from ..sessions import BuyerMove, MoveConflict, Sessions, SessionState, UnknownSession
from .models import CreateNegotiation, ErrorBody

log = logging.getLogger("negotiator.service")

MAX_BODY_BYTES = 1_000_000
SessionId = Annotated[str, Path(pattern=r"^[0-9a-f]{32}$", description="the id returned when the negotiation was opened")]


@dataclass
class ServiceSettings:
    """How the service runs. ``api_key=None`` turns auth off: local development only."""

    seller: Party | str
    store: str = "negotiations.sqlite"
    api_key: str | None = None
    tracer: Any = None
    extra: dict = field(default_factory=dict)


def _error(status: int, code: str, message: str, details: list[dict] | None = None, headers: dict | None = None) -> JSONResponse:
    body = ErrorBody(error=code, message=message, details=details).model_dump(exclude_none=True)  # type: ignore[arg-type]
    return JSONResponse(body, status_code=status, headers=headers)


_ERRORS = {
    400: ("the body could not be read (not UTF-8 JSON)", ErrorBody),
    401: ("missing or wrong API key", ErrorBody),
    404: ("no negotiation with this id", ErrorBody),
    409: ("the move does not fit where the negotiation stands", ErrorBody),
    413: (f"the body is over {MAX_BODY_BYTES} bytes", ErrorBody),
    422: ("the request is invalid; the message says what to fix", ErrorBody),
    503: ("the seller's model is unavailable; nothing was recorded, send the same move again", ErrorBody),
}


def _responses(*codes: int) -> dict[int | str, dict[str, Any]]:
    return {c: {"description": _ERRORS[c][0], "model": _ERRORS[c][1]} for c in codes}


def create_app(settings: ServiceSettings) -> FastAPI:
    """The FastAPI application; the store is opened at startup and closed at shutdown."""

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        async with Sessions.connect(settings.seller, settings.store, tracer=settings.tracer) as sessions:
            app.state.sessions = sessions
            yield

    app = FastAPI(
        title="negotiator",
        version=__version__,
        summary="A negotiating seller that never crosses the business's hard limits.",
        lifespan=lifespan,
    )
    app.state.api_key = settings.api_key
    @app.middleware("http")
    async def limit_body(request: Request, call_next):
        size = request.headers.get("content-length")
        if size is not None and (not size.isdigit() or int(size) > MAX_BODY_BYTES):
            return _error(413, "too_large", f"the request body is over {MAX_BODY_BYTES} bytes")
        return await call_next(request)

    @app.get("/healthz", tags=["operations"])
    async def health() -> dict[str, str]:
        """Liveness: the process answers. Needs no key."""
        return {"status": "ok"}

    @app.post(
        "/v1/negotiations",
        status_code=201,
        response_model=SessionState,
        dependencies=[Depends(authorised)],
        responses=_responses(400, 401, 413, 422, 503),
        tags=["negotiations"],
    )
    async def open_negotiation(body: CreateNegotiation, request: Request) -> SessionState:
        """Open a negotiation for a listing. When the seller opens, its first offer is in the answer."""
        listing = body.listing if body.listing is not None else generate(body.seed, body.template).listing()  # type: ignore[arg-type]
        return await sessions(request).open(listing, body.limits)

    @app.post(
        "/v1/negotiations/{negotiation_id}/moves",
        response_model=SessionState,
        dependencies=[Depends(authorised)],
        responses=_responses(400, 401, 404, 409, 413, 422, 503),
        tags=["negotiations"],
    )
    async def post_move(negotiation_id: SessionId, move: BuyerMove, request: Request) -> SessionState:
        """Apply the buyer's move; the answer holds the seller's reply as the transcript's last entry."""
        return await sessions(request).move(negotiation_id, move)

    @app.get(
        "/v1/negotiations/{negotiation_id}",
        response_model=SessionState,
        dependencies=[Depends(authorised)],
        responses=_responses(401, 404, 422),
        tags=["negotiations"],
    )
    async def get_negotiation(negotiation_id: SessionId, request: Request) -> SessionState:
        """The negotiation's state and full transcript."""
        return await sessions(request).get(negotiation_id)

    _install_error_handlers(app)
    return app


class _Unauthorised(Exception):
    pass


_bearer = HTTPBearer(auto_error=False, description="the business backend's NEGOTIATOR_API_KEY")


def authorised(request: Request, credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]) -> None:
    key = request.app.state.api_key
    if key is None:  # --no-auth: local development
        return
    if credentials is None or not hmac.compare_digest(credentials.credentials.encode(), key.encode()):
        raise _Unauthorised()


def sessions(request: Request) -> Sessions:
    return request.app.state.sessions


def _install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(_Unauthorised)
    async def unauthorised(request: Request, exc: _Unauthorised):
        return _error(401, "unauthorized", "missing or wrong API key: send 'Authorization: Bearer <NEGOTIATOR_API_KEY>'",
                      headers={"WWW-Authenticate": "Bearer"})

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError):
        details = [{"loc": [str(p) for p in e.get("loc", ())], "msg": str(e.get("msg", ""))} for e in exc.errors()]
        first = details[0] if details else {"loc": [], "msg": "invalid request"}
        where = ".".join(first["loc"]) or "request"
        more = f" (and {len(details) - 1} more problems)" if len(details) > 1 else ""
        return _error(422, "invalid_request", f"{where}: {first['msg']}{more}", details)

    @app.exception_handler(UnknownSession)
    async def unknown(request: Request, exc: UnknownSession):
        return _error(404, "not_found", str(exc))

    @app.exception_handler(MoveConflict)
    async def conflict(request: Request, exc: MoveConflict):
        return _error(409, "conflict", str(exc))

    @app.exception_handler(UsageError)
    async def usage(request: Request, exc: UsageError):
        return _error(422, "invalid_request", str(exc))

    @app.exception_handler(ProviderError)
    async def provider(request: Request, exc: ProviderError):
        log.warning("seller model unavailable: %s", exc)
        return _error(503, "seller_unavailable", "the seller's model is unavailable right now; nothing was recorded, "
                      "send the same move again in a moment", headers={"Retry-After": "5"})

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException):
        code = {401: "unauthorized", 404: "not_found", 409: "conflict"}.get(exc.status_code, "invalid_request")
        return _error(exc.status_code, code, str(exc.detail), headers=getattr(exc, "headers", None))

    @app.exception_handler(Exception)
    async def internal(request: Request, exc: Exception):
        log.exception("unhandled error on %s %s", request.method, request.url.path)  # the trace stays in the server log
        return _error(500, "internal_error", "internal error; it has been logged")
