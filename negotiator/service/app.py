"""The HTTP service: the business's backend opens negotiations and relays its shoppers' moves.

==========================================  ==================================================
``POST /v1/negotiations``                   open a negotiation for a listing -> 201 state
``POST /v1/negotiations/{id}/moves``        the buyer's move; the seller replies -> state
``GET  /v1/negotiations/{id}``              state and transcript
``POST /v1/agreements/verify``              check a deal's signed agreement record
``GET  /.well-known/jwks.json``             the public key agreements are signed with (no key needed)
``POST /mcp``                               the MCP face (mcp.py): the same negotiations as tools
``GET  /.well-known/agent-card.json``       the A2A face (a2a.py): agent card; tasks at ``POST /a2a``
``GET  /healthz``                           liveness (no key needed)
``GET  /openapi.json``, ``/docs``           the API description
==========================================  ==================================================

Every ``/v1`` call needs ``Authorization: Bearer <credential>``: the business's
``NEGOTIATOR_API_KEY`` (its backend only, never a browser) may do everything; the session
token returned when a negotiation is opened may read and move that negotiation only, so a
shop page may hold it. ``AccessGuard`` (access.py) checks this, and the body limit, before
the body is read. Errors are JSON ``ErrorBody`` answers (4xx for the caller's mistakes,
503 when the seller's model is unavailable); no stack trace ever reaches a client.
"""

from __future__ import annotations

import logging
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Path, Request
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.exceptions import HTTPException as StarletteHTTPException

from ..agreements import AgreementRecord, SigningKey, verify_agreement
from ..errors import Forbidden as _Forbidden
from ..errors import InvalidAgreement, ProviderError, StoreUnavailable, UsageError
from ..errors import Unauthorised as _Unauthorised
from ..party import Party
from ..sessions import BuyerMove, MoveConflict, OpenedSession, Sessions, SessionState, UnknownSession
from ..version import package_version
from .access import ACCESS_SCOPE_KEY, Access, AccessGuard, error_response
from .catalogue import Catalogue
from .faults import FORBIDDEN_SESSION, RETRY_AFTER, UNAVAILABLE
from .models import AgreementCheck, CreateNegotiation, ErrorBody

log = logging.getLogger("negotiator.service")

MAX_BODY_BYTES = 1_000_000
SessionId = Annotated[
    str, Path(pattern=r"^[0-9a-f]{32}$", description="the id returned when the negotiation was opened")
]


@dataclass
class ServiceSettings:
    """How the service runs. ``api_key=None`` turns auth off: local development only."""

    seller: Party | str
    store: str = "negotiations.sqlite"
    api_key: str | None = None
    tracer: Any = None
    extra: dict = field(default_factory=dict)
    cors_origins: list[str] = field(default_factory=list)  # shop pages that call the service with a session token
    catalogue: Catalogue | None = None  # what agents may discover and open; None: one generated listing per template
    public_catalogue: bool = False  # agents without a credential may open catalogue listings over MCP and A2A
    signing_key: SigningKey | None = None  # signs agreement records; None: a fresh key for this process
    public_url: str | None = None  # where clients reach the service (the A2A card's URL); None: from each request


_ERRORS = {
    400: ("the body is not a JSON object (or not sent as application/json), or a credential was in the URL", ErrorBody),
    401: ("missing or wrong API key or session token", ErrorBody),
    403: ("a session token used outside its own negotiation", ErrorBody),
    404: ("no negotiation with this id", ErrorBody),
    409: ("the move does not fit where the negotiation stands", ErrorBody),
    413: (f"the body is over {MAX_BODY_BYTES} bytes", ErrorBody),
    422: ("the request is invalid; the message says what to fix", ErrorBody),
    503: (
        "the seller's model or the negotiation store is unavailable; nothing was recorded, send the same request again",
        ErrorBody,
    ),
}


def _responses(*codes: int) -> dict[int | str, dict[str, Any]]:
    return {c: {"description": _ERRORS[c][0], "model": _ERRORS[c][1]} for c in codes}


def create_app(settings: ServiceSettings) -> FastAPI:
    """The FastAPI application; the store is opened at startup and closed at shutdown."""

    from .a2a import A2A_PATH, build_a2a
    from .mcp import MCP_PATH, build_mcp, mcp_route

    catalogue = settings.catalogue or Catalogue.generated()
    signing_key = settings.signing_key or SigningKey.generate()
    app: FastAPI  # made below; the faces read its sessions when a request comes
    mcp_server = build_mcp(lambda: app.state.sessions, catalogue, public_catalogue=settings.public_catalogue)
    a2a_face = build_a2a(
        lambda: app.state.sessions,
        catalogue,
        public_catalogue=settings.public_catalogue,
        public_url=settings.public_url,
        auth=settings.api_key is not None,
    )

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        async with Sessions.connect(
            settings.seller, settings.store, tracer=settings.tracer, signing_key=signing_key
        ) as sessions:
            app.state.sessions = sessions
            async with mcp_server.session_manager.run():
                try:
                    yield
                finally:
                    await a2a_face.aclose()

    app = FastAPI(
        title="negotiator",
        version=package_version(),
        summary="A negotiating seller that never crosses the business's hard limits.",
        lifespan=lifespan,
    )
    app.add_middleware(
        AccessGuard,
        api_key=settings.api_key,
        verify_token=lambda session_id, token: app.state.sessions.verify_token(session_id, token),
        max_body_bytes=MAX_BODY_BYTES,
        protocol_paths=(MCP_PATH, A2A_PATH),
        public_catalogue=settings.public_catalogue,
    )
    if settings.cors_origins:  # added last, so outermost: a browser's preflight carries no credential
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.cors_origins,
            allow_methods=["GET", "POST"],
            allow_headers=["Authorization", "Content-Type"],
            max_age=600,
        )

    @app.get("/healthz", tags=["operations"])
    async def health() -> dict[str, str]:
        """Liveness: the process answers. Needs no key."""
        return {"status": "ok"}

    @app.post(
        "/v1/negotiations",
        status_code=201,
        response_model=OpenedSession,
        dependencies=[Depends(business_only)],
        responses=_responses(400, 401, 403, 413, 422, 503),
        tags=["negotiations"],
    )
    async def open_negotiation(body: CreateNegotiation, request: Request) -> OpenedSession:
        """Open a negotiation for a listing (API key only). When the seller opens, its first offer is in
        the answer. The answer's ``token`` reads and moves this negotiation alone: hand it to the shopper's page."""
        listing, limits = body.resolve(catalogue)
        return await sessions(request).open(listing, limits)

    @app.post(
        "/v1/negotiations/{negotiation_id}/moves",
        response_model=SessionState,
        dependencies=[Depends(this_negotiation)],
        responses=_responses(400, 401, 403, 404, 409, 413, 422, 503),
        tags=["negotiations"],
    )
    async def post_move(negotiation_id: SessionId, move: BuyerMove, request: Request) -> SessionState:
        """Apply the buyer's move; the answer holds the seller's reply as the transcript's last entry."""
        return await sessions(request).move(negotiation_id, move)

    @app.get(
        "/v1/negotiations/{negotiation_id}",
        response_model=SessionState,
        dependencies=[Depends(this_negotiation)],
        responses=_responses(400, 401, 403, 404, 422, 503),
        tags=["negotiations"],
    )
    async def get_negotiation(negotiation_id: SessionId, request: Request) -> SessionState:
        """The negotiation's state and full transcript."""
        return await sessions(request).get(negotiation_id)

    @app.post(
        "/v1/agreements/verify",
        response_model=AgreementCheck,
        dependencies=[Depends(business_only)],
        responses=_responses(400, 401, 403, 413, 422),
        tags=["agreements"],
    )
    async def verify(record: AgreementRecord) -> AgreementCheck:
        """Check a deal's agreement record against this service's signing key (API key only):
        ``valid`` false, with the reason, when it was changed after signing or signed by another key."""
        try:
            verify_agreement(record, signing_key.verify_key)
        except InvalidAgreement as e:
            return AgreementCheck(valid=False, reason=str(e), key_id=signing_key.key_id)
        return AgreementCheck(valid=True, key_id=signing_key.key_id)

    @app.get("/.well-known/jwks.json", tags=["agreements"])
    async def jwks() -> dict[str, list[dict[str, str]]]:
        """The public key agreement records are signed with (JWK, Ed25519). Needs no key."""
        return {"keys": [signing_key.verify_key.jwk()]}

    app.router.routes.append(mcp_route(mcp_server, loopback_only=settings.api_key is None))
    app.router.routes.extend(a2a_face.routes)
    _install_error_handlers(app)
    return app


_bearer = HTTPBearer(
    auto_error=False,
    description="the business backend's NEGOTIATOR_API_KEY (everything), or a negotiation's session token (that negotiation only)",
)


def _access(request: Request, credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]) -> Access:
    # AccessGuard decided before the body was read; this only reads its decision (and
    # declares the bearer scheme in the OpenAPI spec). No decision means no access.
    access = request.scope.get(ACCESS_SCOPE_KEY)
    if not isinstance(access, Access):
        raise _Unauthorised()
    return access


def business_only(access: Annotated[Access, Depends(_access)]) -> None:
    if not access.business:
        raise _Forbidden()


def this_negotiation(negotiation_id: SessionId, access: Annotated[Access, Depends(_access)]) -> None:
    if not access.may_use(negotiation_id):
        raise _Forbidden()


def sessions(request: Request) -> Sessions:
    return request.app.state.sessions


def _install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(_Unauthorised)
    async def unauthorised(request: Request, exc: _Unauthorised):
        return error_response(
            401,
            "unauthorized",
            "missing or wrong API key: send 'Authorization: Bearer <NEGOTIATOR_API_KEY>'",
            headers={"WWW-Authenticate": "Bearer"},
        )

    @app.exception_handler(_Forbidden)
    async def forbidden(request: Request, exc: _Forbidden):
        return error_response(403, "forbidden", FORBIDDEN_SESSION)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError):
        unread = _unreadable_body(request, exc)
        if unread:
            return error_response(400, "invalid_request", unread)
        details = [  # our validators' words as written, as MCP, A2A and the SDK say them (no "Value error, ")
            {"loc": [str(p) for p in e.get("loc", ())], "msg": str(e.get("msg", "")).removeprefix("Value error, ")}
            for e in exc.errors()
        ]
        details = [d for i, d in enumerate(details) if d not in details[:i]]  # a path id is checked twice
        first = details[0] if details else {"loc": [], "msg": "invalid request"}
        where = ".".join(first["loc"]) or "request"
        more = f" (and {len(details) - 1} more problems)" if len(details) > 1 else ""
        return error_response(422, "invalid_request", f"{where}: {first['msg']}{more}", details)

    @app.exception_handler(UnknownSession)
    async def unknown(request: Request, exc: UnknownSession):
        return error_response(404, "not_found", str(exc))

    @app.exception_handler(MoveConflict)
    async def conflict(request: Request, exc: MoveConflict):
        return error_response(409, "conflict", str(exc), state=exc.state)

    @app.exception_handler(UsageError)
    async def usage(request: Request, exc: UsageError):
        return error_response(422, "invalid_request", str(exc))

    @app.exception_handler(ProviderError)
    async def provider(request: Request, exc: ProviderError):
        log.warning("seller model unavailable: %s", exc)
        return error_response(
            503,
            "seller_unavailable",
            UNAVAILABLE,
            headers=RETRY_AFTER,
        )

    @app.exception_handler(StoreUnavailable)
    async def store_unavailable(request: Request, exc: StoreUnavailable):
        log.warning("%s %s: %s", request.method, request.url.path, exc)  # an operational state, not a bug: no trace
        return error_response(503, "store_unavailable", str(exc), headers=RETRY_AFTER)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException):
        if exc.status_code == 400 and exc.__cause__ is not None:  # FastAPI could not decode the JSON body
            return error_response(400, "invalid_request", _not_json(_decoding_problem(exc.__cause__)))
        code = {401: "unauthorized", 403: "forbidden", 404: "not_found", 409: "conflict"}.get(
            exc.status_code, "invalid_request"
        )
        headers = getattr(exc, "headers", None)
        message = str(exc.detail)
        where = f"{request.method} {request.url.path[:100]}"
        if exc.status_code == 404:  # no route: the path is not one of the API's
            message = f"there is no {where}; the endpoints are listed at /docs and /openapi.json"
        elif exc.status_code == 405:
            allowed = (headers or {}).get("Allow", "")
            message = f"{where} is not allowed: {request.url.path[:100]} takes {allowed or 'other methods'}"
        return error_response(exc.status_code, code, message, headers=headers)

    @app.exception_handler(Exception)
    async def internal(request: Request, exc: Exception):
        log.exception("unhandled error on %s %s", request.method, request.url.path)  # the trace stays in the server log
        return error_response(500, "internal_error", "internal error; it has been logged")


def _not_json(problem: str) -> str:
    return f"the body is not a JSON object ({problem}); send one, UTF-8 encoded, with 'Content-Type: application/json'"


def _decoding_problem(cause: BaseException) -> str:
    if isinstance(cause, UnicodeDecodeError):
        return f"byte {cause.start} is not UTF-8"
    if isinstance(cause, RecursionError):
        return "it is nested too deeply"
    if "digits" in str(cause):  # Python refuses to read an integer of more than 4300 digits
        return "a number has too many digits"
    return " ".join(str(cause).split())[:200] or type(cause).__name__


def _unreadable_body(request: Request, exc: RequestValidationError) -> str | None:
    """What is wrong with a body FastAPI could not read as JSON, or None when it did (its fields are the problem)."""
    errors = exc.errors()
    first = errors[0] if errors else {}
    if first.get("type") == "json_invalid":
        return _not_json(f"{first.get('ctx', {}).get('error', 'invalid JSON')} at character {first['loc'][-1]}")
    if isinstance(exc.body, (bytes, bytearray)):  # a body sent with another content type is not read as JSON
        sent = request.headers.get("content-type")
        said = f"as {sent!r}" if sent else "with no Content-Type"
        return f"the body was sent {said}, so it was not read as JSON; send it with 'Content-Type: application/json'"
    if tuple(first.get("loc", ())) == ("body",):
        if first.get("type") == "missing":
            return _not_json("the request has no body")
        if first.get("type") == "model_attributes_type":
            kind = {list: "an array", str: "a string", int: "a number", float: "a number", bool: "true or false"}
            return _not_json(f"it is {kind.get(type(first.get('input')), 'null')}")
    return None
