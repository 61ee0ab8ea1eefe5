"""The turn ledger: each exchange of a negotiation stored exactly once, whatever the number of processes.

Several ``negotiator serve`` replicas may share one store. Each computes a move on the
state it read; two replicas can read the same state and both compute a move for it. The
ledger is where they meet: a table keyed by (negotiation, turn) in the same database as
the checkpoints, and an exchange is stored by inserting its row. The database's primary
key lets exactly one insert for a given turn through (SQLite's write lock, PostgreSQL's
unique index); the other replica learns it lost (``claim`` returns False) and stores
nothing. Committing is that one insert, so there is no window between "won" and "stored":
a process killed after it leaves the exchange stored; killed before, leaves nothing.

A row holds what the exchange changed (the moves from its turn on, the seller's turn
records, the signed agreement of a deal, the time); reading a negotiation lays the rows
over its checkpoint in turn order (``overlay``). The checkpoint is still written after
each exchange, as a cache and for tools that read LangGraph's tables, but it is no longer
the record: a checkpoint written late by a slower process cannot hide a newer exchange.
"""

from __future__ import annotations

import asyncio
import json
import weakref
from typing import Any

TABLE = "negotiator_turns"
OPENED = -1
"""The row claimed when a negotiation opens under an id its caller chose (an A2A task id): of two
replicas opening one id at once, one does. It holds no exchange: ``overlay`` skips it."""


class Ledger:
    """In-process ledger, for checkpointers that are not SQLite or PostgreSQL (tests' InMemorySaver).

    One per saver (``ledger_for``), so exactly once for every ``Sessions`` on that saver in this process;
    several processes need a SQLite file or PostgreSQL.
    """

    def __init__(self) -> None:
        self._rows: dict[str, dict[int, dict[str, Any]]] = {}
        self._lock = asyncio.Lock()

    async def setup(self) -> None:
        return None

    async def claim(self, session_id: str, turn: int, change: dict[str, Any]) -> bool:
        """Store ``change`` as the exchange made at ``turn``; False when that turn is taken already."""
        async with self._lock:
            rows = self._rows.setdefault(session_id, {})
            if turn in rows:
                return False
            rows[turn] = json.loads(json.dumps(change))
            return True

    async def rows(self, session_id: str) -> list[tuple[int, dict[str, Any]]]:
        """The stored exchanges of ``session_id``, in turn order."""
        return sorted(self._rows.get(session_id, {}).items())


class SqliteLedger(Ledger):
    """The ledger in the SQLite file of an ``AsyncSqliteSaver`` (its connection and its lock)."""

    def __init__(self, saver: Any) -> None:
        self._saver = saver

    async def setup(self) -> None:
        async with self._saver.lock:
            await self._saver.conn.execute(
                f"CREATE TABLE IF NOT EXISTS {TABLE} (session_id TEXT NOT NULL, turn INTEGER NOT NULL, "
                "change TEXT NOT NULL, PRIMARY KEY (session_id, turn))"
            )
            await self._saver.conn.commit()

    async def claim(self, session_id: str, turn: int, change: dict[str, Any]) -> bool:
        async with self._saver.lock:
            try:
                cur = await self._saver.conn.execute(
                    f"INSERT OR IGNORE INTO {TABLE} (session_id, turn, change) VALUES (?, ?, ?)",
                    (session_id, turn, json.dumps(change)),
                )
                won = cur.rowcount == 1
                await self._saver.conn.commit()
            except BaseException:  # a busy store past its timeout: nothing stored, no transaction left open
                await self._saver.conn.rollback()
                raise
        return won

    async def rows(self, session_id: str) -> list[tuple[int, dict[str, Any]]]:
        async with self._saver.lock:
            cur = await self._saver.conn.execute(
                f"SELECT turn, change FROM {TABLE} WHERE session_id = ? ORDER BY turn", (session_id,)
            )
            found = await cur.fetchall()
        return [(int(turn), json.loads(change)) for turn, change in found]


class PostgresLedger(Ledger):
    """The ledger in the PostgreSQL database of an ``AsyncPostgresSaver`` (autocommit statements)."""

    def __init__(self, saver: Any) -> None:
        self._saver = saver

    async def setup(self) -> None:
        # "CREATE TABLE IF NOT EXISTS" is not atomic in PostgreSQL: replicas making their first
        # move together collide on the table's type (DuplicateObject, UniqueViolation). A lock
        # held until the transaction ends makes them take turns; the later ones find the table.
        async with self._saver._cursor() as cur, cur.connection.transaction():
            await cur.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (TABLE,))
            await cur.execute(
                f"CREATE TABLE IF NOT EXISTS {TABLE} (session_id TEXT NOT NULL, turn INTEGER NOT NULL, "
                "change JSONB NOT NULL, PRIMARY KEY (session_id, turn))"
            )

    async def claim(self, session_id: str, turn: int, change: dict[str, Any]) -> bool:
        async with self._saver._cursor() as cur:
            await cur.execute(
                f"INSERT INTO {TABLE} (session_id, turn, change) VALUES (%s, %s, %s::jsonb) "
                "ON CONFLICT (session_id, turn) DO NOTHING",
                (session_id, turn, json.dumps(change)),
            )
            return cur.rowcount == 1

    async def rows(self, session_id: str) -> list[tuple[int, dict[str, Any]]]:
        async with self._saver._cursor() as cur:
            await cur.execute(
                f"SELECT turn, change::text AS change FROM {TABLE} WHERE session_id = %s ORDER BY turn", (session_id,)
            )
            found = await cur.fetchall()
        return [(int(r["turn"]), json.loads(r["change"])) for r in found]


_IN_PROCESS: weakref.WeakKeyDictionary[Any, Ledger] = weakref.WeakKeyDictionary()


def ledger_for(saver: Any) -> Ledger:
    """The ledger that lives in the same database as ``saver``'s checkpoints; for any other saver, the
    one in-process ledger of that saver, so every ``Sessions`` on it meets in the same ledger."""
    # By the names along its class's MRO, not its own name: an app's subclass of a saver (to add logging,
    # say) is still that database, and an in-process ledger there would let two replicas store a move twice.
    kinds = {c.__name__ for c in type(saver).__mro__}
    if "AsyncSqliteSaver" in kinds and hasattr(saver, "conn") and hasattr(saver, "lock"):
        return SqliteLedger(saver)
    if "AsyncPostgresSaver" in kinds and hasattr(saver, "_cursor"):
        return PostgresLedger(saver)
    ledger = _IN_PROCESS.get(saver)
    if ledger is None:
        ledger = _IN_PROCESS[saver] = Ledger()
    return ledger


def overlay(values: dict[str, Any], rows: list[tuple[int, dict[str, Any]]]) -> dict[str, Any]:
    """``values`` (a checkpoint's channels) with the ledger's exchanges laid over, in turn order.

    An exchange at turn t replaces the moves from t on and the seller's turn records from t
    on; a checkpoint that already holds it is left as it was.
    """
    if not rows:
        return values
    out = dict(values)
    moves = list(out.get("moves", []))
    turns = list(out.get("seller_turns", []))
    for turn, change in rows:
        if turn == OPENED:
            continue
        if turn > len(moves):
            break  # cannot happen: every exchange was claimed on the state before it
        moves = moves[:turn] + change["moves"]
        turns = [t for t in turns if t.get("index", 0) < turn] + change["seller_turns"]
        if change.get("agreement_record") is not None:
            out["agreement_record"] = change["agreement_record"]
        out["updated_at"] = change["updated_at"]
    out["moves"], out["seller_turns"] = moves, turns
    return out
