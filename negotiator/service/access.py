"""Who may call what, decided before a byte of the body is read.

``AccessGuard`` is a pure ASGI middleware in front of the whole application. For every
HTTP request, in this order:

1. **Credentials in the URL** (``?api_key=``, ``?token=``, the key itself anywhere in the
   path or query) are refused with 400 ``credentials_in_url``, and the query (or path) is
   blanked in the request scope before anything answers, so uvicorn's access log, which
   reads the scope, writes ``?[redacted]`` instead of the secret.
2. **Auth** for every ``/v1`` path and the agent-protocol endpoints (MCP, A2A), from the
   ``Authorization`` header alone: the business's API key may do everything; a session
   token (``nst_...``, returned when a negotiation is opened) may read and move its own
   negotiation and nothing else. 401 without a valid credential, 403 for a session token
   used outside its negotiation. On the protocol endpoints a token is checked against the
   negotiation it names (their URLs carry no negotiation id); the tools then refuse it on
   any other negotiation. With ``public_catalogue`` a caller without a credential passes
   to the protocol endpoints as anonymous, where it may only list the catalogue and open a
   negotiation on a catalogue listing.
3. **The body limit**: a declared ``Content-Length`` over the limit is refused without
   reading it; a streamed (chunked) body is counted as it arrives and refused with 413 as
   soon as it crosses the limit, so at most ``max_body_bytes`` are ever held.

A refusal sent while body bytes are still on their way says ``Connection: close``, and the
server drops the connection instead of reading a body nobody wants. The one exception, as
in Go's net/http: the rest of a body that is only somewhat over the limit (up to
``DRAIN_BYTES`` more) is read and thrown away first, so the client sees the 413 and not a
connection reset.
"""

from __future__ import annotations

import hmac
import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from urllib.parse import parse_qsl, unquote

from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..errors import StoreUnavailable
from ..models import is_loopback_host
from ..sessions import TOKEN_PREFIX, token_session
from .faults import RETRY_AFTER
from .models import ErrorBody

log = logging.getLogger("negotiator.service")
ACCESS_SCOPE_KEY = "negotiator.access"
SESSION_PATH = re.compile(r"^/v1/negotiations/(?P<id>[0-9a-f]{32})(?:/moves)?$")
# Query parameter names that carry a credential in someone's habits (normalised: lower case,
# no separators). The API takes no query parameters, so refusing these costs nothing.
_CREDENTIAL_WORDS = ("key", "token", "secret", "password", "auth", "bearer", "jwt", "credential")
REDACTED = "[redacted]"
DRAIN_BYTES = 4_000_000  # read and discarded, never held


@dataclass(frozen=True)
class Access:
    """What the caller of one request may do."""

    business: bool = False  # the API key (or --no-auth): every negotiation, and opening new ones
    session_id: str | None = None  # a session token: this negotiation only
    # Neither: an anonymous caller of a protocol endpoint (public catalogue): list and open catalogue listings.

    def may_use(self, session_id: str) -> bool:
        return self.business or self.session_id == session_id


def error_response(
    status: int,
    code: str,
    message: str,
    details: list[dict] | None = None,
    headers: dict | None = None,
    state: object = None,
) -> JSONResponse:
    full = ErrorBody(error=code, message=message, details=details, state=state).model_dump(mode="json")
    body = {k: v for k, v in full.items() if v is not None}  # the state keeps its nulls, as GET shows it
    return JSONResponse(body, status_code=status, headers=headers)


class AccessGuard:
    """The ASGI middleware described in the module docstring."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        api_key: str | None,
        verify_token: Callable[[str, str], Awaitable[bool]],
        max_body_bytes: int,
        protocol_paths: tuple[str, ...] = (),
        public_catalogue: bool = False,
    ):
        self.app = app
        self.api_key = api_key
        self.verify_token = verify_token
        self.max_body_bytes = max_body_bytes
        self.protocol_paths = protocol_paths  # the MCP and A2A endpoints (no negotiation id in the URL)
        self.public_catalogue = public_catalogue

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        if self._credentials_in_url(scope):
            return await self._refuse(
                scope,
                receive,
                send,
                headers,
                400,
                "credentials_in_url",
                "credentials go in the 'Authorization: Bearer ...' header, never in the URL (URLs end up "
                "in logs and browser history); the request was refused and its URL blanked before logging. "
                "If that was the API key, rotate it.",
            )
        path = scope["path"]
        if path == "/v1" or path.startswith("/v1/") or path in self.protocol_paths:
            try:
                access = await self._authorise(scope, headers)
            except StoreUnavailable as e:  # a session token is checked against the store
                log.warning("%s: %s", path, e)
                access = _Refusal(503, "store_unavailable", str(e))
            if isinstance(access, _Refusal):
                return await self._refuse(
                    scope,
                    receive,
                    send,
                    headers,
                    access.status,
                    access.code,
                    access.message,
                    {"WWW-Authenticate": "Bearer"}
                    if access.status == 401
                    else RETRY_AFTER
                    if access.status == 503
                    else None,
                )
            scope[ACCESS_SCOPE_KEY] = access
        length = headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > self.max_body_bytes):
            # Drain a declared body only if it is small enough, and only if the client is sending it
            # (a client that asked for "100-continue" waits for this answer instead).
            small = length.isdigit() and int(length) <= self.max_body_bytes + DRAIN_BYTES
            ended = (
                small and "100-continue" not in headers.get("expect", "").lower() and await _drain(receive, DRAIN_BYTES)
            )
            return await self._too_large(scope, receive, send, ended=ended)
        body = await self._read_body(receive)
        if body is _DISCONNECTED:
            return  # the client left; there is nobody to answer
        if body is _TOO_LARGE:
            return await self._too_large(scope, receive, send, ended=await _drain(receive, DRAIN_BYTES))
        if body is _TOO_LARGE_ENDED:
            return await self._too_large(scope, receive, send, ended=True)
        assert isinstance(body, bytes)
        await self.app(scope, _replay(body, receive), send)

    # --- the three checks -------------------------------------------------------------

    def _credentials_in_url(self, scope: Scope) -> bool:
        query = scope.get("query_string", b"").decode("latin-1")
        path = scope.get("path", "")
        keys = [self.api_key] if self.api_key else []
        found = any(k in unquote(query) or k in path for k in keys) or TOKEN_PREFIX in path
        for name, value in parse_qsl(query, keep_blank_values=True):
            plain = re.sub(r"[^a-z]", "", name.lower())
            if any(w in plain for w in _CREDENTIAL_WORDS) or value.startswith(TOKEN_PREFIX):
                found = True
        if found:  # blank the secret where servers read the request line for their access log
            if query:
                scope["query_string"] = REDACTED.encode()
            if any(k in path for k in keys) or TOKEN_PREFIX in path:
                scope["path"], scope["raw_path"] = "/redacted", b"/redacted"
        return found

    async def _authorise(self, scope: Scope, headers: Headers) -> Access | _Refusal:
        if self.api_key is None:  # --no-auth: local development, on this machine only
            host = headers.get("host")
            if host is not None and not is_loopback_host(host):  # a web page through DNS rebinding
                return _Refusal(
                    421,
                    "misdirected_host",
                    f"Host {host!r} is not this service's: without an API key (--no-auth) it answers requests "
                    "addressed to localhost, 127.0.0.1 or [::1] only; set NEGOTIATOR_API_KEY to serve other names",
                )
            return Access(business=True)
        header = headers.get("authorization")
        scheme, _, credential = (header or "").partition(" ")
        credential = credential.strip()
        protocol = scope["path"] in self.protocol_paths
        if not header and protocol and self.public_catalogue:
            return Access()  # anonymous: the tools let it list and open catalogue listings only
        if scheme.lower() != "bearer" or not credential:
            return _Refusal(
                401,
                "unauthorized",
                "missing API key or session token: send 'Authorization: Bearer <NEGOTIATOR_API_KEY>' "
                "from the business's server, or 'Authorization: Bearer <session token>' for one negotiation",
            )
        if hmac.compare_digest(credential.encode(), self.api_key.encode()):
            return Access(business=True)
        if credential.startswith(TOKEN_PREFIX) and protocol:
            sid = token_session(credential)
            if sid and await self.verify_token(sid, credential):
                return Access(session_id=sid)
        elif credential.startswith(TOKEN_PREFIX):
            match = SESSION_PATH.match(scope["path"])
            if match and await self.verify_token(match["id"], credential):
                return Access(session_id=match["id"])
            return _Refusal(
                403,
                "forbidden",
                "this session token reads and moves only the negotiation it was issued for; "
                "opening negotiations and every other call need the API key, which stays on the business's server",
            )
        return _Refusal(
            401,
            "unauthorized",
            "wrong API key or session token: send 'Authorization: Bearer <NEGOTIATOR_API_KEY>' "
            "or the negotiation's session token",
        )

    async def _read_body(self, receive: Receive) -> bytes | object:
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return _DISCONNECTED
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body_bytes:  # stop holding here
                return _TOO_LARGE if message.get("more_body", False) else _TOO_LARGE_ENDED
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)

    # --- answers ----------------------------------------------------------------------

    async def _too_large(self, scope: Scope, receive: Receive, send: Send, *, ended: bool) -> None:
        await error_response(
            413,
            "too_large",
            f"the request body is over {self.max_body_bytes} bytes",
            headers=None if ended else {"Connection": "close"},
        )(scope, receive, send)

    async def _refuse(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        headers: Headers,
        status: int,
        code: str,
        message: str,
        extra: dict | None = None,
    ) -> None:
        out = dict(extra or {})
        if _has_body(headers):
            out["Connection"] = "close"  # the body, unread, is dropped with the connection
        await error_response(status, code, message, headers=out)(scope, receive, send)


@dataclass(frozen=True)
class _Refusal:
    status: int
    code: str
    message: str


_DISCONNECTED, _TOO_LARGE, _TOO_LARGE_ENDED = object(), object(), object()


async def _drain(receive: Receive, budget: int) -> bool:
    """Read and discard up to ``budget`` bytes of the body; True when it ended within them."""
    while budget >= 0:
        message = await receive()
        if message["type"] == "http.disconnect":
            return False
        budget -= len(message.get("body", b""))
        if not message.get("more_body", False):
            return budget >= 0
    return False


def _has_body(headers: Headers) -> bool:
    return headers.get("content-length", "0") != "0" or "transfer-encoding" in headers


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that hands the app the body already read, then defers to the server."""
    done = False

    async def replayed() -> Message:
        nonlocal done
        if not done:
            done = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()  # http.disconnect, when it comes

    return replayed
