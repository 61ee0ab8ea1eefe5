"""Several processes on one store: each move stored exactly once, every answer true to the store.

The race runs real ``negotiator serve`` processes (benchmarks/replicas.py starts and drives
them) on one SQLite file and on a real PostgreSQL server, posts conflicting moves made for
the same turn to every replica at once (different offers; an accept against a walk-away),
and checks every answer against what is stored afterwards. The assertions are invariants
over all answers, never who wins a race: exactly one 200 per contested turn, each 409
carrying the newer state, every acknowledged move in the stored transcript, every agreement
answered stored as that deal. Before the turn ledger, two processes both answered 200 at
every contested turn and the store kept one of them.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import sqlite3
import sys
from pathlib import Path

import httpx

from negotiator.errors import MoveConflict
from negotiator.sessions import BuyerMove, Sessions
from negotiator.sessions.ledger import overlay
from negotiator.sim import generate

_spec = importlib.util.spec_from_file_location(
    "replicas_benchmark", Path(__file__).resolve().parent.parent / "benchmarks" / "replicas.py"
)
assert _spec is not None and _spec.loader is not None
replicas = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = replicas  # dataclasses look their module up there
_spec.loader.exec_module(replicas)


def _assert_exactly_once(tally, rounds: int) -> None:
    assert tally.problems == [], tally.problems[:5]
    assert tally.rounds == rounds and tally.answers == rounds * 3
    assert (tally.double_applied, tally.lost, tally.agreement_without_deal) == (0, 0, 0)
    assert (tally.errors, tally.stalled, tally.conflict_without_state) == (0, 0, 0)
    assert tally.ok == rounds and tally.conflicts == 2 * rounds  # one winner per turn; the others 409
    assert tally.deals + tally.no_deals >= 3  # accept/walk-away pairs were raced, not only offers


def test_three_serve_processes_on_one_sqlite_file_store_each_move_once(tmp_path):
    tally = replicas.run(str(tmp_path / "negotiations.sqlite"), replicas=3, rounds=15)
    _assert_exactly_once(tally, 15)
    # What is stored, read without the service: one ledger row per acknowledged exchange.
    with sqlite3.connect(tmp_path / "negotiations.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM negotiator_turns").fetchone()[0] == tally.ok


def test_three_serve_processes_on_one_postgres_database_store_each_move_once(postgres_url):
    tally = replicas.run(postgres_url, replicas=3, rounds=15)
    _assert_exactly_once(tally, 15)


async def test_two_stores_on_one_file_race_an_accept_against_a_walk_away(tmp_path):
    """The SDK face: two ``Sessions`` (two connections, as two processes have) on one SQLite file."""
    store = tmp_path / "s.sqlite"
    sc = generate(0)
    async with (
        Sessions.connect("scripted/boulware?latency=0.02", store) as a,
        Sessions.connect("scripted/boulware?latency=0.02", store) as b,
    ):
        st = await a.open(sc)
        st = await a.move(st.id, BuyerMove.offer({**sc.buyer.ideal(sc.space), "price": 600}, expected_turn=st.turn))
        assert st.seller_offer is not None
        t = st.turn
        results = await asyncio.gather(
            a.move(st.id, BuyerMove.accept(expected_turn=t)),
            b.move(st.id, BuyerMove.walk_away(expected_turn=t)),
            return_exceptions=True,
        )
        won = [r for r in results if not isinstance(r, BaseException)]
        lost = [r for r in results if isinstance(r, MoveConflict)]
        assert len(won) == 1 and len(lost) == 1, results
        assert lost[0].state is not None and lost[0].state.turn == t + 1  # the loser hears where it stands now
        for s in (a, b):
            stored = await s.get(st.id)
            assert stored.transcript == won[0].transcript and stored.status == won[0].status
            assert stored.agreement_record == won[0].agreement_record
            assert (stored.status == "deal") == (stored.agreement_record is not None)


async def test_a_move_without_expected_turn_that_loses_the_store_is_refused_not_applied_twice(tmp_path):
    store = tmp_path / "s.sqlite"
    sc = generate(0)
    async with (
        Sessions.connect("scripted/boulware?latency=0.05", store) as a,
        Sessions.connect("scripted/boulware?latency=0.05", store) as b,
    ):
        st, won = await _race_two_offers(a, b, sc)
        stored = await b.get(st.id)
        assert stored.transcript == won.transcript and stored.turn == 2


async def _race_two_offers(a: Sessions, b: Sessions, sc):
    """Open on ``a``, then send one offer through each at once, neither with ``expected_turn``: exactly one
    is stored, the other is a MoveConflict. Returns the opened state and the winner's."""
    st = await a.open(sc)
    offer = {**sc.buyer.ideal(sc.space), "price": 600}
    results = await asyncio.gather(
        a.move(st.id, BuyerMove.offer(offer, "from a")),
        b.move(st.id, BuyerMove.offer(offer, "from b")),
        return_exceptions=True,
    )
    won = [r for r in results if not isinstance(r, BaseException)]
    assert len(won) == 1 and isinstance([r for r in results if r not in won][0], MoveConflict), results
    return st, won[0]


async def test_an_apps_subclass_of_the_sqlite_saver_keeps_moves_exactly_once_across_replicas(tmp_path):
    """The ledger was chosen by the saver's own class name: an app's subclass of AsyncSqliteSaver got
    an in-process ledger, and two replicas (two connections to one file) each stored the same turn."""
    import aiosqlite
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    class LoggingSaver(AsyncSqliteSaver):  # what an app adds to the store it hands the service
        pass

    store = tmp_path / "s.sqlite"
    sc = generate(0)
    async with aiosqlite.connect(store) as ca, aiosqlite.connect(store) as cb:
        a = Sessions("scripted/boulware?latency=0.05", LoggingSaver(ca))
        b = Sessions("scripted/boulware?latency=0.05", LoggingSaver(cb))
        st, won = await _race_two_offers(a, b, sc)
        assert (await b.get(st.id)).transcript == (await a.get(st.id)).transcript == won.transcript


async def test_two_replicas_opening_one_id_at_once_open_it_once(tmp_path):
    """A protocol face opens under its client's id (an A2A task id); a client retrying against another
    replica opened it twice, and the later checkpoint stood: the first caller's token did not verify and
    the seller's opening move it was shown was never stored."""
    store = tmp_path / "s.sqlite"
    sc = next(generate(s) for s in range(20) if generate(s).opener == "seller")  # the seller's move widens the race
    sid = "cd" * 16
    async with (
        Sessions.connect("scripted/boulware?latency=0.05", store) as a,
        Sessions.connect("scripted/boulware?latency=0.05", store) as b,
    ):
        results = await asyncio.gather(
            a.open(sc.listing(), session_id=sid), b.open(sc.listing(), session_id=sid), return_exceptions=True
        )
        assert sorted(type(r).__name__ for r in results) == ["MoveConflict", "OpenedSession"], results
        (opened,) = [r for r in results if not isinstance(r, BaseException)]
        for s in (a, b):
            assert await s.verify_token(sid, opened.token)
            assert (await s.get(sid)).transcript == opened.transcript
            assert len(await s.seller_turns(sid)) == 1
        moved = await b.move(sid, BuyerMove.walk_away(expected_turn=opened.turn))
        assert moved.status == "no_deal" and len(moved.transcript) == 2  # the opening row is no exchange


def test_a_checkpoint_written_late_does_not_hide_a_newer_exchange():
    """The ledger, not the latest checkpoint, is the record: exchanges laid over in turn order."""
    m = [{"party": p, "action": {"action": "make_offer", "terms": {"x": i}}} for i, p in enumerate("bsbsbs")]
    rows = [
        (0, {"moves": m[0:2], "seller_turns": [{"index": 1}], "updated_at": "t2"}),
        (2, {"moves": m[2:4], "seller_turns": [{"index": 3}], "updated_at": "t4"}),
        (4, {"moves": m[4:6], "seller_turns": [{"index": 5}], "updated_at": "t6", "agreement_record": {"r": 1}}),
    ]
    stale = {"moves": m[0:2], "seller_turns": [{"index": 1}], "updated_at": "t2", "created_at": "t0"}
    got = overlay(stale, rows)
    assert got["moves"] == m and [t["index"] for t in got["seller_turns"]] == [1, 3, 5]
    assert got["updated_at"] == "t6" and got["agreement_record"] == {"r": 1} and got["created_at"] == "t0"
    # A session stored before the ledger existed: its checkpoint's moves come first.
    old = {"moves": m[0:4], "seller_turns": [{"index": 1}, {"index": 3}], "updated_at": "t4"}
    assert overlay(old, rows[2:])["moves"] == m
    assert overlay(old, [])["moves"] == m[0:4]


def test_a_409_carries_the_state_the_negotiation_has_now(service_process):
    import httpx

    sp = service_process()
    st = httpx.post(f"{sp.base_url}/v1/negotiations", json={"seed": 0}, headers=sp.headers).json()
    move = {"action": "offer", "terms": replicas._offer(st["scenario"], 0, 3), "expected_turn": st["turn"]}
    first = httpx.post(f"{sp.base_url}/v1/negotiations/{st['id']}/moves", json=move, headers=sp.headers)
    assert first.status_code == 200
    again = httpx.post(f"{sp.base_url}/v1/negotiations/{st['id']}/moves", json=move, headers=sp.headers)
    assert again.status_code == 409
    body = again.json()
    assert body["error"] == "conflict" and body["state"] == first.json()


async def test_mcp_and_a2a_answer_a_move_another_replica_stored_first_with_a_conflict_and_where_it_stands(
    service_process,
):
    """Two replicas on one store (the fixture's processes share one SQLite file)."""
    from a2a.helpers import new_data_part
    from test_protocols import MCP, _a2a, _reply, _send

    a, b = service_process(), service_process()
    sc = generate(0)
    terms = {**sc.buyer.ideal(sc.space), "price": 600}
    async with MCP(a.base_url, a.key) as on_a, MCP(b.base_url, b.key) as on_b:
        st = (await on_a.call("open_negotiation", seed=0)).structured_content
        moved = await on_a.call("make_offer", negotiation_id=st["id"], terms=terms, expected_turn=0)
        assert not moved.is_error and moved.structured_content["turn"] == 2
        late = await on_b.call("make_offer", negotiation_id=st["id"], terms=terms, expected_turn=0)
        assert late.is_error and "conflict: the negotiation has moved on: it stands at move 2" in late.content[0].text
    http, client = await _a2a(b.base_url, b.key)
    try:
        task = await _send(client, [new_data_part({"seed": 0})])
        ok = httpx.post(
            f"{a.base_url}/v1/negotiations/{task.id}/moves",
            json={"action": "offer", "terms": terms, "expected_turn": 0},
            headers=a.headers,
        )
        assert ok.status_code == 200
        late = await _send(client, [new_data_part({"action": "offer", "terms": terms, "expected_turn": 0})], task)
        text, data = _reply(late)
        assert data["error"]["error"] == "conflict" and "it stands at move 2" in text
        assert data["state"]["turn"] == 2 and data["state"]["transcript"] == ok.json()["transcript"]
    finally:
        await client.close()
        await http.aclose()


async def test_replicas_creating_the_ledger_table_at_the_same_moment_all_succeed(postgres_url):
    """Each replica creates the ledger table on its first move; several first moves arrive together.

    PostgreSQL's ``CREATE TABLE IF NOT EXISTS`` is not atomic: racing it raised
    ``DuplicateObject`` in one replica, answered as an internal error (a flaky race test found it).
    """
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

    from negotiator.sessions.ledger import TABLE, PostgresLedger

    async with contextlib.AsyncExitStack() as stack:
        savers = [await stack.enter_async_context(AsyncPostgresSaver.from_conn_string(postgres_url)) for _ in range(16)]
        for _ in range(100):
            async with savers[0]._cursor() as cur:
                await cur.execute(f"DROP TABLE IF EXISTS {TABLE}")
            results = await asyncio.gather(*(PostgresLedger(s).setup() for s in savers), return_exceptions=True)
            assert [r for r in results if r is not None] == []
            assert await PostgresLedger(savers[1]).claim("race", 0, {"moves": []})
