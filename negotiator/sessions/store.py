"""``Sessions``: live negotiations a commerce app keeps across requests and restarts.

::

    async with Sessions.connect(SellerAgent("local/gemma-3-270m"), "negotiations.sqlite") as sessions:
        opened = await sessions.open(example_listing(seed=0), limits={"minimum": {"price": 900}})  # .token
        terms = {"price": 850, "delivery_days": 7, "assembly": "none", "payment_terms": "net30"}
        state = await sessions.move(opened.id, BuyerMove.offer(terms, "Would you take 850?"))
        state = await sessions.move(state.id, BuyerMove.offer({"price": 870}))   # later offers: what changed
        state.transcript[-1]          # the seller's reply (always within the limits)
        state = await sessions.get(state.id)   # later, from another request or process

Persistence is a LangGraph checkpointer: a one-node graph whose channels are the
session (scenario, limits, moves, the seller's turn records) and whose thread id is the
session id. Each exchange (the buyer's move and the seller's reply) is one checkpoint,
written only once the seller has answered: a provider failure or a crash mid-turn leaves
the session as it was, and the buyer can send the same move again.

The seller's turn runs outside the graph, before the commit: the checkpoint is written once
the seller has answered, and the turn graph itself never checkpoints (``llm.graph``).

Concurrency: a move is stored only if the negotiation is still at the turn it was computed
for, by one conditional insert keyed by (negotiation, turn) in the store's own database
(``ledger``): of several processes (``serve`` replicas on one SQLite file or one
PostgreSQL database) that computed a move for the same turn, exactly one stores it and
the others raise ``MoveConflict`` carrying the current state (HTTP 409), and only the
write that stored a deal returns its agreement record. Within one process, moves on one
session are also serialised by a per-session lock, so a move without ``expected_turn``
waits for the one before it and then applies; ``expected_turn`` refuses a stale move
(double clicks, two tabs).

Session tokens: ``open`` returns a fresh random token with the state (``opened.token``),
shown once. Only its SHA-256 is stored; ``verify_token`` tells whether a token is the one
of a given session, so a shopper's browser can hold the token for its own negotiation
while the business's key stays on its server. A token names its session
(``nst_<session id>_<secret>``, like Stripe's client secrets): the MCP and A2A faces,
whose URLs carry no negotiation id, can tell which negotiation a token is for before
reading a request body (``token_session``).

Agreements: the move that ends a negotiation in a deal also signs an ``AgreementRecord``
(negotiator.agreements) with the sessions' signing key and stores it with the session, so
``state.agreement_record`` is the same record, signature and all, on every later read.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import logging
import re
import secrets
import sqlite3
import sys
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypedDict
from uuid import uuid4

from pydantic import ValidationError

from ..actions import play
from ..agent.seller import DEFAULT_SELLER
from ..agreements import AgreementRecord, SigningKey, agreement_record
from ..domain.protocol import ProtocolState
from ..domain.scenario import HardLimits, Listing, Scenario
from ..errors import (
    InvalidOffer,
    NegotiatorError,
    ProtocolError,
    StoreUnavailable,
    UnknownSession,
    UsageError,
    first_error,
)
from ..party import Party, PartyView, PublicMove, TurnRecord
from ..runtime.run import hold_limits
from ..tracing import get_tracer, record_turn, span_of
from .ledger import OPENED, ledger_for, overlay
from .moves import BuyerMove, MoveConflict, to_action
from .state import OpenedSession, SessionState, public_state, replay

TOKEN_PREFIX = "nst_"  # tells a session token from an API key at a glance (and in a leaked log)
log = logging.getLogger("negotiator.sessions")
_SESSION_ID = re.compile(r"^[0-9a-f]{32}$")


def _shown(session_id: object) -> str:
    """An id as an error names it: in full up to 40 characters (ids are 32), cut beyond, so a
    client's 10,000-character id is not echoed back in every error and log line."""
    text = repr(session_id)
    return text if len(text) <= 42 else f"{text[:40]}... ({len(str(session_id))} characters)"


class _Channels(TypedDict, total=False):
    scenario: dict[str, Any]  # the full scenario, private preferences included
    limits: dict[str, Any] | None  # the business's limits for this listing
    moves: list[dict[str, Any]]  # PublicMove, both sides, in order
    seller_turns: list[dict[str, Any]]  # TurnRecord of each seller move: guard, usage, raw output
    token_sha256: str  # the session token's hash; the token itself is never stored
    agreement_record: dict[str, Any] | None  # the signed AgreementRecord of a deal
    annotations: dict[str, Any]  # what a protocol face keeps with the session (the A2A task record)
    created_at: str
    updated_at: str


def _session_graph(checkpointer):
    from langgraph.graph import END, START, StateGraph

    async def commit(state: _Channels) -> dict:
        return {}  # the input is the update; the checkpointer stores it

    g = StateGraph(_Channels)
    g.add_node("commit", commit)
    g.add_edge(START, "commit")
    g.add_edge("commit", END)
    return g.compile(checkpointer=checkpointer)


@asynccontextmanager
async def open_checkpointer(store: str | Path) -> AsyncIterator[Any]:
    """A LangGraph checkpointer for ``store``: a SQLite file path or a ``postgresql://`` URL."""
    if hasattr(store, "aget_tuple"):  # a LangGraph checkpointer already open
        raise UsageError(
            f"Sessions.connect opens a store from a SQLite file path or a postgresql:// URL; a checkpointer "
            f"you opened ({type(store).__name__}) goes to Sessions(seller, checkpointer)"
        )
    if not isinstance(store, (str, Path)) or not str(store).strip():
        raise UsageError(
            f"store must be a SQLite file path (negotiations.sqlite) or a postgresql:// URL, not {store!r}"
        )
    target = str(store)
    if target.startswith(("postgres://", "postgresql://")):
        try:
            from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
        except ImportError:
            raise UsageError(
                "a Postgres store needs langgraph-checkpoint-postgres: pip install 'negotiator-sdk[postgres]'"
            ) from None
        async with AsyncPostgresSaver.from_conn_string(target) as saver:
            await saver.setup()
            yield saver
        return
    try:
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
    except ImportError:
        raise UsageError(
            "a SQLite store needs langgraph-checkpoint-sqlite: pip install 'negotiator-sdk[serve]'"
        ) from None
    path = Path(target)
    if path.is_dir():
        raise UsageError(f"store {target!r} is a folder; give a file path such as {path / 'negotiations.sqlite'}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError(f"store {target!r}: cannot create its folder {str(path.parent)!r} ({e.strerror})") from None
    async with AsyncSqliteSaver.from_conn_string(target) as saver:
        await saver.setup()
        yield saver


def _check_async_saver(checkpointer: object) -> None:
    """A UsageError, before anything runs, for what Sessions cannot store in: not a LangGraph
    checkpointer (a store path, for which ``connect`` is the way), or one without async methods."""
    from langgraph.checkpoint.base import BaseCheckpointSaver
    from langgraph.checkpoint.sqlite import SqliteSaver

    use = (
        "use `async with Sessions.connect(seller, 'negotiations.sqlite')` (or a postgresql:// URL), or pass an "
        "async LangGraph checkpointer (InMemorySaver(), AsyncSqliteSaver, AsyncPostgresSaver)"
    )
    kind = type(checkpointer).__name__
    if not isinstance(checkpointer, BaseCheckpointSaver):  # the value itself is not shown: a URL may hold a password
        raise UsageError(
            f"Sessions(seller, checkpointer) needs a LangGraph checkpointer, not a value of type {kind}; {use}"
        )
    if isinstance(checkpointer, SqliteSaver) or type(checkpointer).aget_tuple is BaseCheckpointSaver.aget_tuple:
        raise UsageError(f"Sessions runs async, and the checkpointer {kind} has no async methods; {use}")


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class Sessions:
    """Open negotiations, apply buyer moves, read state; persisted by a LangGraph checkpointer."""

    def __init__(
        self,
        seller: Party | str = DEFAULT_SELLER,
        checkpointer: Any = None,
        *,
        tracer=None,
        signing_key: SigningKey | None = None,
    ):
        if checkpointer is None:
            raise UsageError(
                "Sessions needs a LangGraph checkpointer; use `async with Sessions.connect(seller, 'negotiations.sqlite')` "
                "or pass checkpointer=... (for example langgraph's InMemorySaver() in tests)"
            )
        _check_async_saver(checkpointer)
        if not isinstance(seller, str) and not callable(getattr(seller, "act", None)):
            raise UsageError(
                f"Sessions(seller=...) takes a SellerAgent, a seller party (an object with act(view)) or a spec "
                f"such as 'rule/boulware', not {type(seller).__name__} {seller!r}"
            )
        self._owns_seller = isinstance(seller, str)  # close only what was built here
        if isinstance(seller, str):
            from ..runtime.parties import make_party

            seller = make_party(seller, "seller")
        if getattr(seller, "role", "seller") != "seller":
            raise UsageError("Sessions(seller=...): that party plays the buyer")
        self.seller = seller
        self.tracer = tracer or get_tracer()
        # Signs the agreement record of every deal. Without one given, a fresh key per process:
        # its records verify with ``sessions.signing_key.verify_key`` until the process ends.
        self.signing_key = signing_key or SigningKey.generate()
        self._graph = _session_graph(checkpointer)
        self._ledger = ledger_for(checkpointer)  # where each exchange is stored exactly once (.ledger)
        self._ledger_ready = False
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()
        self._scenarios: dict[str, Listing] = {}  # parsed once per session; scenarios never change
        self._closed = False  # Sessions.connect's block has ended: its store is closed

    @classmethod
    @asynccontextmanager
    async def connect(
        cls,
        seller: Party | str = DEFAULT_SELLER,
        store: str | Path = "negotiations.sqlite",
        *,
        tracer=None,
        signing_key: SigningKey | None = None,
    ) -> AsyncIterator[Sessions]:
        """Sessions backed by ``store`` (SQLite file or ``postgresql://`` URL), closed on exit.

        A seller given as a spec string is built here and closed on exit; a party you pass in
        stays yours to close.
        """
        async with open_checkpointer(store) as saver:
            sessions = cls(seller, saver, tracer=tracer, signing_key=signing_key)
            try:
                yield sessions
            finally:
                sessions._closed = True  # its store closes with the block (a URL may hold a password: not named)
                if sessions._owns_seller:
                    await sessions.seller.aclose()

    # --- the embedding API ------------------------------------------------------------

    async def open(
        self, scenario: Listing | dict, limits: HardLimits | dict | None = None, *, session_id: str | None = None
    ) -> OpenedSession:
        """Start a negotiation for a listing. When the seller opens, its first offer is made now.

        The answer carries the session's token (``.token``), which is not shown again: hand
        it to the shopper's page; :meth:`verify_token` checks it on later requests.
        ``session_id`` (32 hex digits, unused) lets a protocol face give the negotiation the
        id its own protocol already chose (an A2A task id); by default a fresh one. An id in use is a
        ``MoveConflict``, also for the second of two opens racing, in one process or in replicas on one
        store (the opening is claimed in the ledger before it is stored).
        """
        self._usable()
        scenario, limits = _checked(scenario, limits)
        own = getattr(self.seller, "limits", None)  # a SellerAgent's own limits: refused now, not at its first move
        if isinstance(own, HardLimits):
            try:
                scenario.check_limits(own if limits is None else limits.merged(own))
            except ValueError as e:
                raise UsageError(f"the seller's limits do not fit listing {scenario.id!r}: {e}") from None
        if session_id is not None and (not isinstance(session_id, str) or not _SESSION_ID.match(session_id)):
            raise UsageError(f"session_id must be 32 lower-case hex digits, not {session_id!r}")
        sid = session_id or uuid4().hex
        # An id the caller chose may come twice at once (a protocol face's task id): under the session's lock
        # the second finds the first instead of overwriting it (its token, the seller's opening move).
        async with self._locks.setdefault(sid, asyncio.Lock()):
            now = _now()
            if session_id is not None and (
                await self._exists(sid) or not await self._claim(sid, OPENED, {"opened_at": now})
            ):
                raise MoveConflict(f"a negotiation with id {sid} already exists")
            token = f"{TOKEN_PREFIX}{sid}_{secrets.token_urlsafe(32)}"
            with span_of(self.tracer, "negotiation.session") as span:
                span.set_attribute("negotiator.session.id", sid)
                span.set_attribute("negotiator.session.operation", "open")
                span.set_attribute("negotiator.scenario_id", scenario.id)
                moves: list[PublicMove] = []
                seller_turns: list[TurnRecord] = []
                state = replay(scenario, moves)
                if state.to_move == "seller":
                    seller_turns.append(await self._seller_turn(scenario, limits, moves, state, sid))
                await self._commit(
                    sid,
                    {
                        "scenario": scenario.model_dump(mode="json"),
                        "limits": limits.model_dump(mode="json") if limits else None,
                        "moves": [m.model_dump(mode="json") for m in moves],
                        "seller_turns": [t.model_dump(mode="json") for t in seller_turns],
                        "token_sha256": _digest(token),
                        "created_at": now,
                        "updated_at": now,
                    },
                )
            self._scenarios[sid] = scenario
        opened = public_state(sid, scenario, moves, now, now, token=token)
        assert isinstance(opened, OpenedSession)  # a token makes it one
        return opened

    async def move(self, session_id: str, move: BuyerMove | str | dict) -> SessionState:
        """Apply the buyer's move and get the seller's reply; a string is a free-text message."""
        if isinstance(move, (str, dict)):  # a shopper's text, or a page's JSON: UsageError names what is wrong
            move = BuyerMove.say(move) if isinstance(move, str) else BuyerMove.of(move)
        elif not isinstance(move, BuyerMove):
            raise UsageError(
                f"a buyer move is a BuyerMove, a dict or a message string, not {type(move).__name__} {move!r}"
            )
        lock = self._locks.setdefault(session_id, asyncio.Lock())
        async with lock:
            values = await self._load(session_id)
            scenario = self._scenario(session_id, values)
            limits = HardLimits.model_validate(values["limits"]) if values.get("limits") else None
            moves = [PublicMove.model_validate(m) for m in values["moves"]]
            state = replay(scenario, moves)
            at = state.turn  # the turn this move is computed for: stored only if the negotiation is still there
            try:
                action = to_action(move, state, scenario.space)
            except MoveConflict as e:
                raise MoveConflict(str(e), state=self._public(session_id, values)) from None
            seller_turns: list[dict] = list(values.get("seller_turns", []))
            with span_of(self.tracer, "negotiation.session") as span:
                span.set_attribute("negotiator.session.id", session_id)
                span.set_attribute("negotiator.session.operation", "move")
                span.set_attribute("negotiator.scenario_id", scenario.id)
                buyer = TurnRecord(index=state.turn, party="buyer", action=action)
                with self.tracer.start_as_current_span("negotiation.turn") as tspan:
                    record_turn(tspan, buyer)
                action = play(state, scenario.space, "buyer", action)
                moves.append(PublicMove(party="buyer", action=action))
                new_turns: list[dict] = []
                if not state.done:
                    turn = await self._seller_turn(scenario, limits, moves, state, session_id)
                    new_turns.append(turn.model_dump(mode="json"))
                now = _now()
                record = None
                if state.agreement is not None:
                    record = agreement_record(scenario, session_id, state.agreement, now, self.signing_key)
                change = {
                    "moves": [m.model_dump(mode="json") for m in moves[at:]],
                    "seller_turns": new_turns,
                    "agreement_record": record.model_dump(mode="json") if record else None,
                    "updated_at": now,
                }
                # The commit point: one row per (negotiation, turn), so of several processes that computed
                # a move for this turn exactly one stores it; the others store nothing and answer 409.
                if not await self._claim(session_id, at, change):
                    current = await self.get(session_id)
                    span.set_attribute("negotiator.session.conflict", True)
                    raise MoveConflict(
                        f"another request moved this negotiation first: it now stands at move {current.turn} "
                        f"({current.status}), your move was made at move {at} and was not applied; reload the "
                        "state and decide again",
                        state=current,
                    )
                if state.done:
                    span.set_attribute("negotiator.ended_by", state.ended_by or "")
                    span.set_attribute("negotiator.deal", state.agreement is not None)
                update: _Channels = {
                    "moves": [m.model_dump(mode="json") for m in moves],
                    "seller_turns": seller_turns + new_turns,
                    "updated_at": now,
                }
                if record is not None:
                    update["agreement_record"] = record.model_dump(mode="json")  # what the ledger row holds
                try:
                    await self._commit(session_id, update)
                except Exception:  # the ledger row is the record; the checkpoint is a cache
                    log.warning("session %s: move stored, checkpoint not written", session_id, exc_info=True)
        return public_state(session_id, scenario, moves, values["created_at"], now, agreement_record=record)

    async def get(self, session_id: str) -> SessionState:
        """The session's public state and transcript."""
        return self._public(session_id, await self._load(session_id))

    def _public(self, session_id: str, values: _Channels) -> SessionState:
        moves = [PublicMove.model_validate(m) for m in values["moves"]]
        record = values.get("agreement_record")
        return public_state(
            session_id,
            self._scenario(session_id, values),
            moves,
            values["created_at"],
            values["updated_at"],
            agreement_record=AgreementRecord.model_validate(record) if record else None,
        )

    async def verify_token(self, session_id: str, token: str) -> bool:
        """Whether ``token`` is the token ``open`` returned for this session (constant time)."""
        if not isinstance(token, str) or not token.startswith(TOKEN_PREFIX):
            return False
        try:
            values = await self._load(session_id)
        except UnknownSession:
            return False
        stored = values.get("token_sha256")  # sessions opened before tokens existed have none
        return stored is not None and hmac.compare_digest(stored, _digest(token))

    async def annotation(self, session_id: str, key: str) -> Any:
        """What a protocol face stored with the session under ``key`` (None if nothing)."""
        return (await self._load(session_id)).get("annotations", {}).get(key)

    async def annotate(self, session_id: str, key: str, value: Any) -> None:
        """Store JSON data with the session (durably, like a move); for protocol faces."""
        async with self._locks.setdefault(session_id, asyncio.Lock()):
            values = await self._load(session_id)
            await self._commit(session_id, {"annotations": {**values.get("annotations", {}), key: value}})

    async def seller_turns(self, session_id: str) -> list[TurnRecord]:
        """The seller's turn records: guard interventions, retries, tokens. Private: for the business only."""
        values = await self._load(session_id)
        return [TurnRecord.model_validate(t) for t in values.get("seller_turns", [])]

    # --- internals --------------------------------------------------------------------

    async def _seller_turn(
        self,
        scenario: Listing,
        limits: HardLimits | None,
        moves: list[PublicMove],
        state: ProtocolState,
        session_id: str,
    ) -> TurnRecord:
        view = PartyView.of(scenario, "seller", moves, limits, negotiation_id=session_id)
        with span_of(self.tracer, "negotiation.turn") as span:
            turn = await self.seller.act(view)  # ProviderError propagates: nothing is stored
            index = state.turn
            try:
                turn = hold_limits(self.seller, view, turn, self.tracer)
                turn.action = play(state, scenario.space, "seller", turn.action)
            except (ProtocolError, InvalidOffer) as e:  # a bug in the seller party, never the buyer's doing
                raise NegotiatorError(f"the seller produced an action the protocol forbids: {e}") from None
            turn.index, turn.party = index, "seller"
            record_turn(span, turn)
        moves.append(PublicMove(party="seller", action=turn.action))
        return turn

    async def _exists(self, session_id: str) -> bool:
        with _store_call():
            snapshot = await self._graph.aget_state({"configurable": {"thread_id": session_id}})
        return bool(snapshot.values.get("scenario"))

    def _usable(self) -> None:
        if self._closed:
            raise UsageError(
                "this Sessions is closed: its `async with Sessions.connect(...)` block has ended, and its store "
                "with it; use it inside the block, or connect again"
            )

    async def _load(self, session_id: str) -> _Channels:
        self._usable()
        if not isinstance(session_id, str) or not session_id:
            raise UnknownSession(f"no negotiation with id {_shown(session_id)}")
        with _store_call():
            snapshot = await self._graph.aget_state({"configurable": {"thread_id": session_id}})
            if not snapshot.values.get("scenario"):
                raise UnknownSession(f"no negotiation with id {_shown(session_id)}; open one first")
            await self._ledger_setup()
            return overlay(snapshot.values, await self._ledger.rows(session_id))  # type: ignore[return-value]

    async def _claim(self, session_id: str, turn: int, change: dict[str, Any]) -> bool:
        with _store_call():
            await self._ledger_setup()
            return await self._ledger.claim(session_id, turn, change)

    async def _ledger_setup(self) -> None:
        if not self._ledger_ready:
            await self._ledger.setup()
            self._ledger_ready = True

    async def _commit(self, session_id: str, update: _Channels) -> None:
        self._usable()
        # durability="sync": the checkpoint is on disk before the caller hears back.
        with _store_call():
            await self._graph.ainvoke(update, {"configurable": {"thread_id": session_id}}, durability="sync")

    def _scenario(self, session_id: str, values: _Channels) -> Listing:
        scenario = self._scenarios.get(session_id)
        if scenario is None:
            if len(self._scenarios) > 10_000:
                self._scenarios.clear()
            scenario = self._scenarios[session_id] = Listing.model_validate(values["scenario"])
        return scenario


@contextmanager
def _store_call():
    """A store that fails at run time (a SQLite file locked by another process past its timeout, or
    read-only; a PostgreSQL server gone) raises StoreUnavailable: the caller's to retry, not a bug."""
    pg = sys.modules.get("psycopg")  # imported by a PostgreSQL store only
    failures: tuple[type[Exception], ...] = (sqlite3.OperationalError, *((pg.OperationalError,) if pg else ()))
    try:
        yield
    except failures as e:
        said = " ".join(str(e).split())[:200] or type(e).__name__
        raise StoreUnavailable(
            f"the negotiation store is unavailable ({said}); nothing was stored, send the same request again "
            "in a moment"
        ) from e


def token_session(token: str) -> str | None:
    """The session id a session token names (``nst_<id>_<secret>``); None for anything else."""
    if not isinstance(token, str) or not token.startswith(TOKEN_PREFIX):
        return None
    sid, sep, secret = token[len(TOKEN_PREFIX) :].partition("_")
    return sid if sep and secret and _SESSION_ID.match(sid) else None


def _digest(token: str) -> str:
    # A token is 256 random bits: a fast hash is enough (no dictionary to guess from).
    return hashlib.sha256(token.encode()).hexdigest()


def _checked(scenario: Listing | dict, limits: HardLimits | dict | None) -> tuple[Listing, HardLimits | None]:
    """The listing to store (a full Scenario is cut to its seller's side) and the limits."""
    try:
        if isinstance(scenario, Scenario):
            scenario = scenario.listing()  # the buyer's preferences are neither needed nor kept
        sc = scenario if isinstance(scenario, Listing) else Listing.model_validate(scenario)
    except ValidationError as e:
        raise UsageError(f"invalid listing: {first_error(e)}") from None
    try:
        lim = HardLimits.model_validate(limits) if isinstance(limits, dict) else limits
    except ValidationError as e:
        raise UsageError(f"invalid limits: {first_error(e)}") from None
    try:
        sc.check_limits(lim)
        lim = lim.on(sc.space) if lim is not None else None  # stored as the listing writes its options
    except ValueError as e:
        raise UsageError(f"invalid limits: {e}") from None
    return sc, lim
