"""Buyers that negotiate with a seller served elsewhere, through its MCP tools or its A2A task.

``negotiator eval --buyer mcp+http://HOST:PORT/mcp --buyer-model MODEL`` (or
``a2a+http://HOST:PORT``; ``--seller URL --buyer MODEL`` is the same run) measures a seller
wherever it runs, ours or someone else's, end to end over the protocol: each buyer agent
(a rule tactic, an LLM with a persona, a plugin party, anything ``--buyer`` takes) decides
its moves as always, and every move travels only as a protocol call (the MCP tools
``open_negotiation``, ``make_offer``, ``accept``, ``walk_away``; A2A messages on one task).
What the buyer sees of the seller is what the protocol answers: the public listing and the
transcript.

``remote_parties(spec, buyer, scenario)`` returns the pair ``run_negotiation`` plays:

* a **relayed buyer**: the buyer, whose every move is sent to the remote seller as it is made
  (an accept or a walk-away too, so the remote negotiation ends where the local one does);
* a **remote seller**: a party whose moves are the remote seller's replies, so the episode
  records them as the seller's turns, exactly as an in-process one.

**Scoring.** The remote seller's private preferences are not known to the buyer side, so an
episode is scored with the suite's scenario, and the remote negotiation must be that
scenario: it is opened by seed and template (``open_negotiation(seed=..., template=...,
max_rounds=...)``, which needs the service's API key, from the environment variable the
spec's ``key_env`` names, ``NEGOTIATOR_API_KEY`` by default) so the service generates the
very listing the suite plays, and the listing the service answers with is checked against
the suite's (product, issues, who opens, round limit): a service that serves another
listing stops the run with an error instead of being scored against the wrong game.
"""

from __future__ import annotations

import os
import re
import time
import uuid
from contextlib import AsyncExitStack
from typing import Any

from .actions import Accept, MakeOffer
from .domain.generator import GENERATOR_VERSIONS, generate
from .domain.scenario import Listing
from .errors import ProtocolError, ProviderError, RemoteRefused, UsageError
from .models.specs import parse_spec, refuse_unknown
from .party import AnyAction, Party, PartyView, TurnRecord
from .sessions import BuyerMove, SessionState

DEFAULT_KEY_ENV = "NEGOTIATOR_API_KEY"
_PARAMS = ("key_env",)
# How a refusal reads in an MCP tool error or an A2A error data part: the REST error code first.
_CODE = re.compile(r"^(?:Error executing tool \w+: )?(?P<code>[a-z_]+): (?P<message>.*)$", re.S)


def check_remote_spec(spec: str, role: str) -> None:
    """Fail early on a remote spec that cannot work."""
    s = parse_spec(spec)
    if role != "seller":
        raise UsageError(
            f"{spec} is a seller served elsewhere: evaluate it with `negotiator eval --buyer {spec} --buyer-model "
            "MODEL` (the buyer agents reach it over the protocol)"
        )
    refuse_unknown(f"{s.kind}+ specs", s.params, _PARAMS)
    if not re.match(r"^https?://[^/?#\s]+", s.name):
        raise UsageError(f"{spec}: write {s.kind}+http://HOST:PORT{'/mcp' if s.kind == 'mcp' else ''}")
    try:
        import a2a.client  # noqa: F401
        import mcp.client  # noqa: F401
    except ImportError as e:
        raise UsageError(
            f"a remote seller needs the protocol clients: pip install 'negotiator-sdk[serve]' ({e.name} is missing)"
        ) from None


def remote_parties(spec: str, buyer: Party, scenario: Listing) -> tuple[Party, Party]:
    """(remote seller, relayed buyer) for one negotiation of ``scenario`` with the seller at ``spec``."""
    check_remote_spec(spec, "seller")
    s = parse_spec(spec)
    key_env = s.params.get("key_env", DEFAULT_KEY_ENV)
    key = os.environ.get(key_env, "").strip() or None
    link = (MCPLink if s.kind == "mcp" else A2ALink)(s.name, key)
    negotiation = RemoteNegotiation(link, scenario, spec=spec, key_env=key_env)
    return RemoteSeller(negotiation), RelayedBuyer(buyer, negotiation)


def open_request(scenario: Listing) -> dict[str, Any]:
    """The ``open_negotiation`` arguments that make a service generate exactly ``scenario``'s listing."""
    if scenario.seed is None:
        raise UsageError(
            f"scenario {scenario.id!r} was not generated from a seed: a remote seller can only be evaluated "
            "on generated scenarios (the service must play the same listing the episode is scored on)"
        )
    listing = scenario.listing() if hasattr(scenario, "listing") else scenario
    # The generator version is always named: a suite pins its own, whatever the service's default.
    for version in GENERATOR_VERSIONS:
        for max_rounds in (None, scenario.max_rounds):
            generated = generate(scenario.seed, scenario.template, max_rounds=max_rounds, version=version).listing()
            if (
                generated.model_dump(exclude={"id"}) == listing.model_dump(exclude={"id"})
                and listing.id.split("~")[0] == generated.id
            ):
                request = {"seed": scenario.seed, "template": scenario.template, "generator": version}
                return request if max_rounds is None else {**request, "max_rounds": max_rounds}
    raise UsageError(
        f"scenario {scenario.id!r} is not what seed {scenario.seed} and template {scenario.template} generate: "
        "a remote seller can only be evaluated on generated scenarios"
    )


class RemoteNegotiation:
    """One negotiation on the remote service, shared by the remote seller and the relayed buyer."""

    def __init__(self, link, scenario: Listing, *, spec: str, key_env: str):
        self.link, self.scenario, self.spec, self.key_env = link, scenario, spec, key_env
        self.state: SessionState | None = None
        self.reply_latency = 0.0

    async def ensure_open(self) -> SessionState:
        if self.state is None:
            t0 = time.perf_counter()
            try:
                self.state = await self.link.open(open_request(self.scenario))
            except RemoteRefused as e:
                hint = f" (the key comes from ${self.key_env})" if e.code in ("unauthorized", "forbidden") else ""
                raise UsageError(f"{self.spec} refused to open the negotiation: {e}{hint}") from None
            self.reply_latency = time.perf_counter() - t0
            served, suite = self.state.scenario, self.scenario.public()
            # A persona's scenario id carries the persona (furniture-3~impatient); the listing's does not.
            if served.id != suite.id.split("~")[0] or served.model_dump(exclude={"id"}) != suite.model_dump(
                exclude={"id"}
            ):
                raise UsageError(
                    f"{self.spec} serves another listing than scenario {self.scenario.id!r} (its answer: "
                    f"{self.state.scenario.id!r}): the episode could not be scored; evaluate a service that "
                    "generates the suite's listings (negotiator serve does)"
                )
        return self.state

    async def send(self, action: AnyAction, turn: int) -> SessionState:
        await self.ensure_open()
        if isinstance(action, MakeOffer):
            move = BuyerMove.offer(dict(action.terms), action.message, expected_turn=turn)
        elif isinstance(action, Accept):
            move = BuyerMove.accept(action.message, expected_turn=turn)
        else:
            move = BuyerMove.walk_away(action.message, expected_turn=turn)
        t0 = time.perf_counter()
        try:
            self.state = await self.link.move(self.state.id, move)  # type: ignore[union-attr]
        except RemoteRefused as e:
            raise ProtocolError(f"{self.spec} refused the buyer's move {turn}: {e}") from None
        self.reply_latency = time.perf_counter() - t0
        return self.state

    async def aclose(self) -> None:
        await self.link.aclose()


class RemoteSeller:
    """The seller served elsewhere: its moves are the remote service's replies."""

    role = "seller"
    family = "remote"
    keeps_limits = True  # the remote service's own limits and guard; its replies are recorded as they came

    def __init__(self, negotiation: RemoteNegotiation):
        self.negotiation = negotiation
        self.spec = negotiation.spec

    async def act(self, view: PartyView) -> TurnRecord:
        state = await self.negotiation.ensure_open()
        remote = state.transcript
        for i, (mine, theirs) in enumerate(zip(view.transcript, remote, strict=False)):
            if (
                mine.party != theirs.party
                or mine.action.action != theirs.action.action
                or mine.action.terms != theirs.action.terms
            ):
                raise ProtocolError(f"{self.spec}: the remote transcript differs from the local one at move {i}")
        if len(remote) <= view.turn or remote[view.turn].party != "seller":
            raise ProtocolError(
                f"{self.spec}: no seller move {view.turn} in the remote negotiation (status {state.status})"
            )
        action = remote[view.turn].action
        if isinstance(
            action, MakeOffer
        ):  # on the listing's grid, as the service checked it (JSON may turn 12 into 12.0)
            action = MakeOffer(terms=view.space.validate_offer(dict(action.terms)), message=action.message)
        return TurnRecord(
            index=view.turn, party="seller", action=action, latency_s=round(self.negotiation.reply_latency, 6)
        )

    async def aclose(self) -> None:
        await self.negotiation.aclose()


class RelayedBuyer:
    """A buyer whose every move is also sent to the remote seller."""

    role = "buyer"

    def __init__(self, buyer: Party, negotiation: RemoteNegotiation):
        self.buyer, self.negotiation = buyer, negotiation
        self.spec, self.family = buyer.spec, buyer.family
        self.persona_name = getattr(buyer, "persona_name", None)

    @property
    def config(self):  # the runner's rate limiter wraps the buyer's model here
        return getattr(self.buyer, "config", None)

    async def act(self, view: PartyView) -> TurnRecord:
        turn = await self.buyer.act(view)
        await self.negotiation.send(turn.action, view.turn)
        return turn

    async def on_end(self, outcome) -> None:
        hook = getattr(self.buyer, "on_end", None)
        if hook is not None:
            result = hook(outcome)
            if hasattr(result, "__await__"):
                await result

    async def aclose(self) -> None:
        await self.buyer.aclose()


# --- the two protocols ----------------------------------------------------------------


def _refusal(text: str) -> Exception:
    m = _CODE.match(text.strip())
    code, message = (m["code"], m["message"]) if m else ("invalid_request", text.strip())
    if code == "seller_unavailable":
        return ProviderError(f"the remote seller is unavailable: {message}", transient=True)
    return RemoteRefused(code, message)


def _unreachable(url: str, e: BaseException) -> ProviderError:
    return ProviderError(f"cannot reach the seller at {url}: {type(e).__name__}: {e}", transient=True)


class MCPLink:
    """A negotiation over the service's MCP tools (streamable HTTP), with the official MCP client."""

    def __init__(self, url: str, api_key: str | None):
        self.url, self.api_key = url, api_key
        self._stack: AsyncExitStack | None = None
        self._client: Any = None  # the MCP SDK's Client, once connected

    async def _connect(self, credential: str | None) -> None:
        import httpx2
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client

        await self.aclose()
        self._stack = AsyncExitStack()
        headers = {"Authorization": f"Bearer {credential}"} if credential else {}
        http = await self._stack.enter_async_context(httpx2.AsyncClient(headers=headers, timeout=120))
        try:
            self._client = await self._stack.enter_async_context(
                Client(streamable_http_client(self.url, http_client=http))
            )
        except Exception as e:
            await self.aclose()
            raise _unreachable(self.url, e) from None

    async def _call(self, tool: str, arguments: dict) -> dict:
        try:
            result = await self._client.call_tool(tool, arguments)
        except Exception as e:
            raise _unreachable(self.url, e) from None
        if result.is_error:
            raise _refusal(" ".join(getattr(c, "text", "") for c in result.content))
        return result.structured_content or {}

    async def open(self, request: dict) -> SessionState:
        from .sessions import OpenedSession

        await self._connect(self.api_key)
        opened = OpenedSession.model_validate(await self._call("open_negotiation", request))
        if self.api_key is None:  # opened on a public catalogue: go on with this negotiation's own token
            await self._connect(opened.token)
        return opened

    async def move(self, negotiation_id: str, move: BuyerMove) -> SessionState:
        args: dict[str, Any] = {
            "negotiation_id": negotiation_id,
            "message": move.message,
            "expected_turn": move.expected_turn,
        }
        tool = {"offer": "make_offer", "accept": "accept", "walk_away": "walk_away"}[move.action]
        if move.action == "offer":
            args["terms"] = move.terms
        return SessionState.model_validate(await self._call(tool, args))

    async def aclose(self) -> None:
        if self._stack is not None:
            stack, self._stack, self._client = self._stack, None, None
            await stack.aclose()


class A2ALink:
    """A negotiation as one A2A task (JSON-RPC), with the official a2a-sdk client."""

    def __init__(self, url: str, api_key: str | None):
        self.url, self.api_key = url.rstrip("/"), api_key
        self._http: Any = None  # httpx.AsyncClient, once connected
        self._client: Any = None  # the a2a-sdk client, once connected
        self.task_id: str | None = None
        self.context_id: str | None = None

    async def _connect(self, credential: str | None) -> None:
        import httpx
        from a2a.client import ClientConfig, create_client

        await self.aclose()
        headers = {"Authorization": f"Bearer {credential}"} if credential else {}
        self._http = httpx.AsyncClient(headers=headers, timeout=120)
        try:
            self._client = await create_client(
                self.url, client_config=ClientConfig(httpx_client=self._http, streaming=False)
            )
        except Exception as e:
            await self.aclose()
            raise _unreachable(self.url, e) from None

    async def _send(self, data: dict, text: str = "") -> dict:
        from a2a.helpers.proto_helpers import new_data_part, new_text_part
        from a2a.types import a2a_pb2 as pb
        from a2a.utils.errors import A2AError
        from google.protobuf.json_format import MessageToDict

        parts = [new_data_part(data)] + ([new_text_part(text)] if text else [])
        message = pb.Message(
            message_id=uuid.uuid4().hex,
            role=pb.Role.ROLE_USER,
            parts=parts,
            task_id=self.task_id or "",
            context_id=self.context_id or "",
        )
        task = None
        try:
            async for event in self._client.send_message(pb.SendMessageRequest(message=message)):
                if event.HasField("task"):
                    task = event.task
        except A2AError as e:
            raise RemoteRefused(
                "not_found" if type(e).__name__ == "TaskNotFoundError" else "invalid_request", str(e)
            ) from None
        except Exception as e:
            raise _unreachable(self.url, e) from None
        if task is None:
            raise ProtocolError(f"{self.url} answered without a task")
        self.task_id, self.context_id = task.id, task.context_id
        reply = MessageToDict(task.status.message)
        data_parts = [p["data"] for p in reply.get("parts", []) if isinstance(p.get("data"), dict)]
        if not data_parts:
            raise ProtocolError(f"{self.url}: the task's status message carries no data part")
        answer = data_parts[0]
        if answer.get("error"):
            err = answer["error"]
            if err.get("error") == "seller_unavailable":
                raise ProviderError(f"the remote seller is unavailable: {err.get('message')}", transient=True)
            raise RemoteRefused(err.get("error", "invalid_request"), err.get("message", ""))
        return answer["state"]

    async def open(self, request: dict) -> SessionState:
        from .sessions import OpenedSession

        await self._connect(self.api_key)
        opened = OpenedSession.model_validate(await self._send(request))
        if self.api_key is None:
            await self._connect(opened.token)
        return opened

    async def move(self, negotiation_id: str, move: BuyerMove) -> SessionState:
        data = move.model_dump(exclude={"message"}, exclude_none=True)
        return SessionState.model_validate(await self._send(data, move.message))

    async def aclose(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            await client.close()
        if self._http is not None:
            http, self._http = self._http, None
            await http.aclose()


__all__ = [
    "A2ALink",
    "MCPLink",
    "RelayedBuyer",
    "RemoteNegotiation",
    "RemoteSeller",
    "check_remote_spec",
    "open_request",
    "remote_parties",
]
