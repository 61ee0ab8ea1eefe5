"""The MCP face of ``negotiator serve``: a buyer's agent negotiates through tools.

Mounted at ``/mcp`` on the same application (the official ``mcp`` SDK, streamable HTTP
transport, stateless and with JSON answers: every tool call is one HTTP request, so a
restart of the service or a second replica behind a load balancer changes nothing for
the client; the negotiation itself lives in the session store).

=====================  ==================================================================
``list_listings``      what this seller negotiates: the catalogue's public listings
``open_negotiation``   open a negotiation (a catalogue listing; with the API key also a
                       full listing or a generated one) -> its state and session token
``get_negotiation``    state and transcript
``make_offer``         the buyer's offer (issues left out keep the previous offer's values)
``accept``             accept the seller's standing offer
``walk_away``          end without a deal
=====================  ==================================================================

Inputs and outputs are the REST API's own pydantic models (``CreateNegotiation``,
``BuyerMove``, ``SessionState``, ``OpenedSession``): the tool schemas are theirs, and the
answers are structured results. A mistake is a tool error whose text is the REST error's
code and message (``conflict: cannot accept: ...``, ``invalid_request: invalid offer:
warranty_months: ...``).

Auth is the REST API's, checked by ``AccessGuard`` before the body is read: the API key may
do everything; a session token may read and move its own negotiation (``negotiation_id``
may then be left out); with ``--public-catalogue`` a caller without any credential may list
the catalogue and open a catalogue listing, and then continues with the token it got.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field, ValidationError

from ..domain.issues import NotBoolean, Value
from ..domain.scenario import HardLimits, Listing
from ..errors import Forbidden, UsageError, first_error
from ..sessions import BUYER_MESSAGE_MAX_CHARS, BuyerMove, OpenedSession, Sessions, SessionState
from .access import ACCESS_SCOPE_KEY, Access
from .catalogue import Catalogue, CatalogueListing
from .faults import FORBIDDEN_OPEN, FORBIDDEN_SESSION, fault
from .models import CreateNegotiation

MCP_PATH = "/mcp"
INSTRUCTIONS = (
    "This server is a shop's negotiating seller. list_listings shows what can be negotiated; open_negotiation "
    "starts a negotiation and returns its state (keep its id; its token is the credential for that negotiation "
    "alone). Then alternate: make_offer, accept (the seller's standing offer, seller_offer) or walk_away; every "
    "answer holds the seller's reply as the transcript's last entry. An offer assigns a value to every issue "
    "(state.scenario.issues lists them with their ranges and options); issues you leave out keep your previous "
    "offer's values. Send expected_turn=state.turn so a retried call is never applied twice."
)


def _desc(model, name: str) -> str:
    return model.model_fields[name].description or ""


NegotiationId = Annotated[
    str | None,
    Field(
        description="the id open_negotiation returned; may be left out when the credential is that negotiation's token",
        pattern=r"^[0-9a-f]{32}$",
    ),
]
Message = Annotated[str, Field(max_length=BUYER_MESSAGE_MAX_CHARS, description=_desc(BuyerMove, "message"))]
ExpectedTurn = Annotated[
    Annotated[int, Field(ge=0), NotBoolean] | None, Field(description=_desc(BuyerMove, "expected_turn"))
]


class _Server(MCPServer):
    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        """As the SDK calls a tool, but arguments that do not fit its schema are said as the REST API says
        them (``invalid_request: expected_turn: Input should be greater than or equal to 0``), not as
        pydantic's multi-line report with its links; and an argument the tool does not take is refused,
        as the REST API refuses an unknown field (the SDK drops it: ``expected_trun=2`` would have made a
        move without its stale-move check)."""
        schema = next((t.input_schema for t in await self.list_tools() if t.name == name), None)
        unknown = sorted(set(arguments) - set(schema.get("properties", {}))) if schema is not None else []
        if unknown:
            raise ToolError(
                f"Error executing tool {name}: invalid_request: {unknown[0]}: unknown argument; {name} takes "
                + ", ".join(schema["properties"])  # type: ignore[index]
            )
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as e:
            if not isinstance(e.__cause__, ValidationError):
                raise
            raise ToolError(
                f"Error executing tool {name}: invalid_request: {first_error(e.__cause__)}"
            ) from e.__cause__


def build_mcp(sessions: Callable[[], Sessions], catalogue: Catalogue, *, public_catalogue: bool):
    """The MCP server; ``sessions()`` returns the running ``Sessions`` (opened in the app's lifespan)."""
    from ..version import package_version

    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    server = _Server(
        "negotiator",
        title="Negotiating seller",
        instructions=INSTRUCTIONS,
        version=package_version(),
        log_level="WARNING",
    )
    root.handlers[:], root.level = (
        handlers,
        level,
    )  # the SDK configures the root logger; the service's logging is its own

    def access(ctx: Context) -> Access:
        request = ctx.request_context.request
        found = request.scope.get(ACCESS_SCOPE_KEY) if request is not None else None
        return found if isinstance(found, Access) else Access()

    def negotiation(ctx: Context, negotiation_id: str | None) -> str:
        who = access(ctx)
        nid = negotiation_id or who.session_id
        if nid is None:  # a missing argument, not a refusal: only a session token names its negotiation
            raise UsageError("give negotiation_id (the id open_negotiation returned)")
        if not who.may_use(nid):
            raise Forbidden(FORBIDDEN_SESSION)
        return nid

    async def guarded(call):
        try:
            return await call
        except Exception as e:
            described = fault(e)
            if described is None:
                raise  # a bug: the SDK reports a generic error and logs the trace
            _, body = described
            raise ToolError(f"{body.error}: {body.message}") from None

    async def move(ctx: Context, negotiation_id: str | None, m: dict[str, Any]) -> SessionState:
        async def run() -> SessionState:
            nid = negotiation(ctx, negotiation_id)
            return await sessions().move(nid, m)

        return await guarded(run())

    @server.tool(
        description="The listings this seller negotiates (public facts: product, issues, who opens, round limit)."
    )
    async def list_listings(ctx: Context) -> CatalogueListing:
        return catalogue.public()

    @server.tool(
        description="Open a negotiation. Give listing_id (from list_listings); with the business's API key also "
        "a full listing or seed (+ template, max_rounds, generator). The answer is the state, with the seller's "
        "first offer when the seller opens, and the negotiation's token (shown once)."
    )
    async def open_negotiation(
        ctx: Context,
        listing_id: Annotated[
            str | None, Field(max_length=200, description=_desc(CreateNegotiation, "listing_id"))
        ] = None,
        seed: Annotated[
            Annotated[int, Field(ge=0, lt=2**31), NotBoolean] | None,
            Field(description=_desc(CreateNegotiation, "seed")),
        ] = None,
        template: Annotated[str | None, Field(max_length=64, description=_desc(CreateNegotiation, "template"))] = None,
        max_rounds: Annotated[
            Annotated[int, Field(ge=1, le=100), NotBoolean] | None,
            Field(description=_desc(CreateNegotiation, "max_rounds")),
        ] = None,
        generator: Annotated[
            Annotated[int, NotBoolean] | None, Field(description=_desc(CreateNegotiation, "generator"))
        ] = None,
        listing: Annotated[Listing | None, Field(description=_desc(CreateNegotiation, "listing"))] = None,
        limits: Annotated[HardLimits | None, Field(description=_desc(CreateNegotiation, "limits"))] = None,
    ) -> OpenedSession:
        async def run() -> OpenedSession:
            body = _create(
                listing_id=listing_id,
                seed=seed,
                template=template,
                max_rounds=max_rounds,
                generator=generator,
                listing=listing,
                limits=limits,
            )
            who = access(ctx)
            if not who.business and not (public_catalogue and body.listing_id is not None and body.limits is None):
                raise Forbidden(FORBIDDEN_OPEN)
            scenario, lim = body.resolve(catalogue)
            return await sessions().open(scenario, lim)

        return await guarded(run())

    @server.tool(description="The negotiation's state and full transcript.")
    async def get_negotiation(ctx: Context, negotiation_id: NegotiationId = None) -> SessionState:
        async def run() -> SessionState:
            return await sessions().get(negotiation(ctx, negotiation_id))

        return await guarded(run())

    @server.tool(
        description="Offer terms to the seller; the answer holds the seller's reply. " + _desc(BuyerMove, "terms")
    )
    async def make_offer(
        ctx: Context,
        terms: Annotated[dict[str, Value], Field(description=_desc(BuyerMove, "terms"))],
        message: Message = "",
        negotiation_id: NegotiationId = None,
        expected_turn: ExpectedTurn = None,
    ) -> SessionState:
        return await move(
            ctx, negotiation_id, {"action": "offer", "terms": terms, "message": message, "expected_turn": expected_turn}
        )

    @server.tool(
        description="Accept the seller's standing offer (state.seller_offer) as it stands: a deal, with a signed "
        "agreement record."
    )
    async def accept(
        ctx: Context, message: Message = "", negotiation_id: NegotiationId = None, expected_turn: ExpectedTurn = None
    ) -> SessionState:
        return await move(ctx, negotiation_id, {"action": "accept", "message": message, "expected_turn": expected_turn})

    @server.tool(description="End the negotiation without a deal.")
    async def walk_away(
        ctx: Context, message: Message = "", negotiation_id: NegotiationId = None, expected_turn: ExpectedTurn = None
    ) -> SessionState:
        return await move(
            ctx, negotiation_id, {"action": "walk_away", "message": message, "expected_turn": expected_turn}
        )

    return server


def _create(**fields) -> CreateNegotiation:
    try:
        return CreateNegotiation(**fields)
    except ValidationError as e:
        raise UsageError(e.errors()[0]["msg"].removeprefix("Value error, ")) from None


def mcp_route(server, *, loopback_only: bool):
    """The Starlette route serving ``server`` at ``/mcp`` (its session manager runs in the app's lifespan).

    ``loopback_only`` (a service without a key): refuse any Host but loopback, so a web page
    cannot reach a local, unauthenticated server through DNS rebinding. With a key, the
    guard's credential check is what protects it, and any Host name may be served.
    """
    from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
    from mcp.server.transport_security import TransportSecuritySettings
    from starlette.routing import Route

    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=loopback_only,
        allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
    )
    server.streamable_http_app(
        stateless_http=True, json_response=True, streamable_http_path=MCP_PATH, transport_security=security
    )
    return Route(MCP_PATH, endpoint=StreamableHTTPASGIApp(server.session_manager), methods=["GET", "POST", "DELETE"])


__all__ = ["MCP_PATH", "build_mcp", "mcp_route"]
