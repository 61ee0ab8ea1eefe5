"""The A2A face of ``negotiator serve``: another company's agent negotiates as an A2A task.

Built with the official ``a2a-sdk`` (protocol 1.0, JSON-RPC binding at ``POST /a2a``); the
agent card at the spec's well-known path (``/.well-known/agent-card.json``) describes one
skill, ``negotiate``.

**One negotiation is one task**, with the negotiation's id as the task id:

* The first message opens it. Its data part is ``CreateNegotiation`` (``{"listing_id":
  ...}``; with the API key also ``{"seed": ..., "template": ...}`` or a full ``listing``).
* While it is the buyer's turn the task stays ``input-required``; each later message
  (same ``taskId``) is one move: a data part ``BuyerMove`` (``{"action": "offer",
  "terms": {...}}``, ``accept``, ``walk_away``) and the free text as a text part. A text
  part alone restates the buyer's previous offer with that message.
* Every agent message carries the seller's move the same way: the seller's words as a text
  part and a data part ``{"seller_move": {...} | null, "state": SessionState}``.
* The task completes when the negotiation ends; a deal adds an ``agreement`` artifact, the
  signed ``AgreementRecord``. A move that does not fit (an invalid offer, a stale turn)
  leaves the task ``input-required`` with an agent message holding ``{"error": ErrorBody,
  "state": ...}``, the REST error's code and message. A task cancel is a walk-away.

State persists in the session store: the negotiation as always, and the A2A task record
beside it (``Sessions.annotate``), so a restart between two moves continues the task. The
session token in the answer to the opening message is left out of what is stored.
"""

from __future__ import annotations

import copy
import json
import re
import uuid
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from ..errors import Forbidden, UsageError
from ..sessions import BuyerMove, SessionState, UnknownSession
from .access import ACCESS_SCOPE_KEY, Access
from .catalogue import Catalogue
from .faults import FORBIDDEN_OPEN, FORBIDDEN_SESSION, fault
from .models import CreateNegotiation, ErrorBody

A2A_PATH = "/a2a"
TASK_ANNOTATION = "a2a_task"
SKILL = "negotiate"


@dataclass
class A2AFace:
    routes: list
    handler: Any

    async def aclose(self) -> None:
        await self.handler.aclose()


def build_a2a(sessions, catalogue: Catalogue, *, public_catalogue: bool, public_url: str | None, auth: bool) -> A2AFace:
    """Routes for the agent card and the JSON-RPC endpoint; ``sessions()`` gives the running Sessions."""
    from a2a.server.agent_execution import AgentExecutor, SimpleRequestContextBuilder
    from a2a.server.context import ServerCallContext
    from a2a.server.id_generator import IDGenerator
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.request_handlers.response_helpers import agent_card_to_dict
    from a2a.server.routes import DefaultServerCallContextBuilder, create_jsonrpc_routes
    from a2a.server.tasks import TaskStore, TaskUpdater
    from a2a.types import a2a_pb2 as pb
    from a2a.utils.constants import AGENT_CARD_WELL_KNOWN_PATH
    from a2a.utils.errors import UnsupportedOperationError
    from google.protobuf.json_format import MessageToDict, ParseDict
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    from ..version import package_version

    def access(context: ServerCallContext) -> Access:
        found = context.state.get("access")
        return found if isinstance(found, Access) else Access()

    class AccessContextBuilder(DefaultServerCallContextBuilder):
        """Hands the guard's decision (and nothing of the raw headers) to the store and executor."""

        def build(self, request: Request) -> ServerCallContext:
            context = super().build(request)
            context.state.get("headers", {}).pop("authorization", None)  # the credential stays out of call state
            context.state["access"] = request.scope.get(ACCESS_SCOPE_KEY)
            return context

    class NegotiationIds(IDGenerator):
        def generate(self, context) -> str:
            return uuid.uuid4().hex  # a task id is a session id: 32 hex digits

    class SessionTaskStore(TaskStore):
        """A2A task records kept with their negotiation in the session store.

        A refused opening never becomes a negotiation: its task lives only in the request's own
        call state (the SDK saves it, reads it back and answers with it), so nothing of it is kept
        and no later read, by anyone, finds it.
        """

        def _visible(self, task_id: str, context: ServerCallContext) -> bool:
            who = access(context)
            return who.may_use(task_id) or context.state.get("opened") == task_id

        async def save(self, task: pb.Task, context: ServerCallContext) -> None:
            record = _scrubbed(MessageToDict(task))
            try:
                await sessions().annotate(task.id, TASK_ANNOTATION, record)
            except UnknownSession:
                context.state.setdefault("a2a_unopened", {})[task.id] = record
                return
            context.state.get("a2a_unopened", {}).pop(task.id, None)
            if task.status.state == pb.TaskState.TASK_STATE_CANCELED:
                state = await sessions().get(task.id)
                if state.status == "open" and state.to_move == "buyer":
                    await sessions().move(task.id, BuyerMove.walk_away("The buyer cancelled the negotiation."))

        async def get(self, task_id: str, context: ServerCallContext) -> pb.Task | None:
            unopened = context.state.get("a2a_unopened", {})
            if task_id in unopened:
                return ParseDict(unopened[task_id], pb.Task())
            if not self._visible(task_id, context):
                return None  # as if unknown: a token for another negotiation learns nothing
            try:
                record = await sessions().annotation(task_id, TASK_ANNOTATION)
                state = await sessions().get(task_id)
            except UnknownSession:
                return None
            if record:
                return ParseDict(record, pb.Task())
            return _task_of(state)  # opened on another face (REST, MCP, the SDK): the same negotiation

        async def list(self, params, context):
            raise UnsupportedOperationError(
                message="tasks/list is not offered: each negotiation is read by its task id"
            )

        async def delete(self, task_id: str, context: ServerCallContext) -> None:
            raise UnsupportedOperationError(message="negotiations are kept; end one with a walk_away move")

    class NegotiationExecutor(AgentExecutor):
        async def execute(self, context, event_queue) -> None:
            # A follow-up that names only the task gets a fresh context id from the SDK: keep the task's own.
            context_id = context.current_task.context_id if context.current_task else context.context_id
            updater = TaskUpdater(event_queue, context.task_id, context_id)
            who = access(context.call_context)
            opened = await _state(context.task_id)
            if opened is None:  # a new task: the SDK wants the Task itself before its status changes
                await event_queue.enqueue_event(
                    pb.Task(
                        id=context.task_id,
                        context_id=context_id,
                        history=[context.message],
                        status=pb.TaskStatus(state=pb.TaskState.TASK_STATE_SUBMITTED),
                    )
                )
            try:
                data, text = _parts(context.message)
                if opened is None:
                    state = await self._open(context, who, data)
                else:
                    if not who.may_use(context.task_id):
                        raise Forbidden(FORBIDDEN_SESSION)
                    state = await sessions().move(context.task_id, _move(data, text))
            except Exception as e:
                described = fault(e)
                if described is None:
                    raise
                _, body = described
                reply = _reply(
                    updater,
                    body.message,
                    {
                        "error": body.model_dump(mode="json", exclude_none=True, exclude={"state"}),
                        # on a conflict, where the negotiation stands now (another replica may have moved it)
                        "state": _state_json(now) if (now := body.state or opened) is not None else None,
                    },
                )
                if opened is None:
                    await updater.reject(reply)  # nothing was opened: the task ends here
                else:
                    await updater.requires_input(reply)  # the negotiation stands as it was: try again
                return
            await _answer(updater, state)

        async def _open(self, context, who: Access, data: dict) -> SessionState:
            try:
                body = CreateNegotiation.model_validate(data)
            except ValidationError as e:
                err = e.errors()[0]
                where = ".".join(str(p) for p in err["loc"]) or "the data part"
                raise UsageError(
                    f"to open a negotiation, send a data part with CreateNegotiation ({{'listing_id': ...}}): "
                    f"{where}: {err['msg'].removeprefix('Value error, ')}"
                ) from None
            if not who.business and not (public_catalogue and body.listing_id is not None and body.limits is None):
                raise Forbidden(FORBIDDEN_OPEN)
            listing, limits = body.resolve(catalogue)
            context.call_context.state["opened"] = context.task_id
            return await sessions().open(listing, limits, session_id=context.task_id)

        async def cancel(self, context, event_queue) -> None:
            context_id = context.current_task.context_id if context.current_task else context.context_id
            updater = TaskUpdater(event_queue, context.task_id, context_id)
            state = await sessions().move(context.task_id, BuyerMove.walk_away("The buyer cancelled the negotiation."))
            await updater.cancel(
                _reply(updater, "Cancelled: the buyer walked away.", {"seller_move": None, "state": _state_json(state)})
            )

    def _task_of(state: SessionState) -> pb.Task:
        """The task view of a negotiation no A2A message opened: its state now, as an agent message."""
        from a2a.helpers.proto_helpers import new_data_part, new_text_part

        seller_move = _seller_move(state)
        data = _state_json(state)  # read from the store: no session token in it
        message = pb.Message(
            message_id=uuid.uuid4().hex,
            role=pb.Role.ROLE_AGENT,
            task_id=state.id,
            context_id=state.id,
            parts=[
                new_text_part(_words(state, seller_move)),
                new_data_part({"seller_move": seller_move, "state": data}),
            ],
        )
        done = pb.TaskState.TASK_STATE_COMPLETED
        task = pb.Task(
            id=state.id,
            context_id=state.id,
            status=pb.TaskStatus(
                state=pb.TaskState.TASK_STATE_INPUT_REQUIRED if state.status == "open" else done, message=message
            ),
        )
        if state.agreement_record is not None:
            task.artifacts.append(
                pb.Artifact(
                    artifact_id=uuid.uuid4().hex,
                    name="agreement",
                    parts=[new_data_part(state.agreement_record.model_dump(mode="json"))],
                )
            )
        return task

    async def _state(task_id: str) -> SessionState | None:
        try:
            return await sessions().get(task_id)
        except UnknownSession:
            return None

    def _reply(updater, text: str, data: dict):
        from a2a.helpers.proto_helpers import new_data_part, new_text_part

        return updater.new_agent_message([new_text_part(text or "(no message)"), new_data_part(data)])

    async def _answer(updater, state: SessionState) -> None:
        from a2a.helpers.proto_helpers import new_data_part

        seller_move = _seller_move(state)
        reply = _reply(updater, _words(state, seller_move), {"seller_move": seller_move, "state": _state_json(state)})
        if state.status == "open":
            await updater.requires_input(reply)
            return
        if state.agreement_record is not None:
            await updater.add_artifact(
                [new_data_part(state.agreement_record.model_dump(mode="json"))], name="agreement"
            )
        await updater.complete(reply)

    card = pb.AgentCard(
        name="negotiator seller",
        description="A shop's negotiating seller: bargains over price and the other terms of a listing, within the "
        "business's hard limits, and signs the agreement when there is a deal.",
        version=package_version(),
        capabilities=pb.AgentCapabilities(streaming=False, push_notifications=False),
        default_input_modes=["application/json", "text/plain"],
        default_output_modes=["application/json", "text/plain"],
        skills=[
            pb.AgentSkill(
                id=SKILL,
                name="Negotiate",
                description="Negotiate a listing by alternating offers. Open with a data part {'listing_id': ...}; the task stays "
                "input-required while it is your turn; send a data part BuyerMove {'action': 'offer'|'accept'|"
                "'walk_away', 'terms': {...}} and your words as a text part. A deal completes the task with a "
                "signed 'agreement' artifact.",
                tags=["negotiation", "commerce", "bargaining"],
                examples=['{"listing_id": "furniture-0"}', '{"action": "offer", "terms": {"price": 850}}'],
                input_modes=["application/json", "text/plain"],
                output_modes=["application/json", "text/plain"],
            )
        ],
    )
    if auth:
        card.security_schemes["bearer"].CopyFrom(
            pb.SecurityScheme(
                http_auth_security_scheme=pb.HTTPAuthSecurityScheme(
                    scheme="bearer", description="the business's API key, or a negotiation's session token (nst_...)"
                )
            )
        )
        if not public_catalogue:
            card.security_requirements.append(pb.SecurityRequirement(schemes={"bearer": pb.StringList()}))

    async def agent_card(request: Request) -> JSONResponse:
        served = pb.AgentCard()
        served.CopyFrom(card)
        base = (public_url or str(request.base_url)).rstrip("/")
        del served.supported_interfaces[:]
        served.supported_interfaces.append(
            pb.AgentInterface(url=base + A2A_PATH, protocol_binding="JSONRPC", protocol_version="1.0")
        )
        return JSONResponse(agent_card_to_dict(served))

    card.supported_interfaces.append(
        pb.AgentInterface(
            url=(public_url or "").rstrip("/") + A2A_PATH, protocol_binding="JSONRPC", protocol_version="1.0"
        )
    )
    store = SessionTaskStore()
    handler = DefaultRequestHandler(
        agent_executor=NegotiationExecutor(),
        task_store=store,
        agent_card=card,
        request_context_builder=SimpleRequestContextBuilder(task_id_generator=NegotiationIds()),
    )
    rpc = create_jsonrpc_routes(handler, rpc_url=A2A_PATH, context_builder=AccessContextBuilder())
    routes = [
        Route(AGENT_CARD_WELL_KNOWN_PATH, endpoint=agent_card, methods=["GET"]),
        *(Route(r.path, endpoint=_checked(r.endpoint), methods=["POST"]) for r in rpc),
    ]
    return A2AFace(routes=routes, handler=handler)


# REST and MCP answer a body nested deeper than any negotiation's data with a clean 400; the
# SDK's parser would recurse into it (a Python RecursionError's text as the answer at 3,000
# levels, a long protobuf trace in the log at 150).
MAX_NESTING = 64
_JSON_STRINGS = re.compile(rb'"(?:[^"\\]|\\.)*"')
_NOT_BRACKETS = re.compile(rb"[^\[\]{}]")


def _nesting(body: bytes) -> int:
    """How deep the JSON text's arrays and objects nest (brackets inside strings do not count)."""
    depth = deepest = 0
    for c in _NOT_BRACKETS.sub(b"", _JSON_STRINGS.sub(b"", body)):
        depth += 1 if c in b"[{" else -1
        deepest = max(deepest, depth)
    return deepest


def _checked(endpoint):
    """The JSON-RPC endpoint behind a check of the body: UTF-8, JSON, bounded nesting; errors in our words."""
    from starlette.responses import JSONResponse

    def refuse(code: int, message: str) -> JSONResponse:
        return JSONResponse({"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}})

    async def handle(request):
        body = await request.body()  # Starlette keeps it: the SDK reads the same bytes
        try:
            body.decode("utf-8")
        except UnicodeDecodeError:
            return refuse(-32700, "Parse error: the body is not UTF-8 text; send a JSON-RPC 2.0 request as JSON")
        if _nesting(body) > MAX_NESTING:
            return refuse(-32600, f"Invalid Request: JSON nested deeper than {MAX_NESTING} levels")
        try:
            json.loads(body)
        except ValueError as e:
            return refuse(-32700, f"Parse error: the body is not JSON ({getattr(e, 'msg', 'invalid')})")
        return await endpoint(request)

    return handle


def _parts(message) -> tuple[dict, str]:
    """The message's data part (one JSON object) and its text parts, joined."""
    from google.protobuf.json_format import MessageToDict

    data: dict = {}
    texts = []
    for part in message.parts if message is not None else ():
        kind = part.WhichOneof("content")
        if kind == "data":
            value = MessageToDict(part.data)
            if not isinstance(value, dict):
                raise UsageError("a data part must hold a JSON object")
            clash = next((k for k in value if k in data and data[k] != value[k]), None)
            if clash is not None:  # two moves in one message: neither is taken
                raise UsageError(
                    f"two data parts give different {clash!r}: send one move per message, in one data part"
                )
            data.update(value)
        elif kind == "text":
            texts.append(part.text)
    return data, "\n".join(t for t in texts if t).strip()


def _move(data: dict, text: str) -> BuyerMove:
    if not data:
        if not text:
            raise UsageError("send a data part with your move ({'action': 'offer', 'terms': {...}}) or a text part")
        return BuyerMove.say(text)
    if "message" in data and text and data["message"] != text:
        raise UsageError("the message goes in the text part or the data part's 'message', not two different ones")
    try:
        return BuyerMove.model_validate({**data, "message": data.get("message", text)})
    except ValidationError as e:
        err = e.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "(top level)"
        raise UsageError(f"invalid buyer move: {where}: {err['msg']}") from None


def _seller_move(state: SessionState) -> dict | None:
    """The seller's move that ends the transcript, as JSON data; None when the buyer moved last."""
    last = state.transcript[-1] if state.transcript else None
    return last.action.model_dump(mode="json") if last is not None and last.party == "seller" else None


def _words(state: SessionState, seller_move: dict | None) -> str:
    """The text part of an answer: the seller's words, or where the negotiation stands."""
    text = seller_move.get("message") if seller_move else ""
    return (
        text
        or {"open": "Your move.", "deal": "Deal.", "no_deal": "The negotiation ended without a deal."}[state.status]
    )


def _state_json(state: SessionState) -> dict:
    return state.model_dump(mode="json")


def _scrubbed(task: dict) -> dict:
    """The task record to store: without the session token shown in the opening answer."""
    task = copy.deepcopy(task)
    messages = [*task.get("history", []), task.get("status", {}).get("message") or {}]
    for m in messages:
        for part in m.get("parts", []):
            state = part.get("data", {}).get("state") if isinstance(part.get("data"), dict) else None
            if isinstance(state, dict):
                state.pop("token", None)
    return task


__all__ = ["A2A_PATH", "A2AFace", "ErrorBody", "build_a2a"]
