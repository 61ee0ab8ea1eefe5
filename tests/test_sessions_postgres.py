"""Sessions on Postgres (langgraph-checkpoint-postgres): a real server, a restart, concurrency.

Uses the throwaway PostgreSQL cluster of tests/conftest.py (``postgres_url``); skips when the
server binaries or the ``postgres`` extra are missing (``apt-get install postgresql``,
``pip install 'negotiator-sdk[postgres]'``; .ci/run installs both).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap

import pytest

from negotiator.sessions import BuyerMove, Sessions
from negotiator.sim import generate

pytest.importorskip("langgraph.checkpoint.postgres", reason="pip install 'negotiator-sdk[postgres]'")


async def test_a_session_on_postgres_survives_a_new_process(postgres_url):
    sc = generate(0)
    async with Sessions.connect("scripted/boulware", postgres_url) as sessions:
        st = await sessions.open(sc, limits={"minimum": {"price": 700}})
        st = await sessions.move(st.id, BuyerMove.offer({**sc.buyer.ideal(sc.space), "price": 650}, "650?"))
    code = textwrap.dedent(
        """
        import asyncio, json, sys
        from negotiator.sessions import Sessions
        async def main():
            async with Sessions.connect("scripted/boulware", sys.argv[1]) as s:
                before = await s.get(sys.argv[2])
                after = await s.move(sys.argv[2], "Any better?")
                print(json.dumps({"before": before.model_dump(mode="json"), "after": after.model_dump(mode="json")}))
        asyncio.run(main())
        """
    )
    out = subprocess.run([sys.executable, "-c", code, postgres_url, st.id], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["before"] == st.model_dump(mode="json")
    assert got["after"]["turn"] == 4 and got["after"]["transcript"][:2] == got["before"]["transcript"]
    assert got["after"]["transcript"][3]["action"]["terms"]["price"] >= 700


async def test_concurrent_sessions_on_postgres_do_not_mix(postgres_url):
    sc = generate(0)
    async with Sessions.connect("scripted/boulware?latency=0.005", postgres_url) as sessions:

        async def shopper(i: int):
            st = await sessions.open(sc)
            for _ in range(3):
                st = await sessions.move(
                    st.id, BuyerMove.offer({**sc.buyer.ideal(sc.space), "price": 520 + i}, expected_turn=st.turn)
                )
            return i, st.id

        done = await asyncio.gather(*[shopper(i) for i in range(12)])
        for i, sid in done:
            st = await sessions.get(sid)
            assert [m.party for m in st.transcript] == ["buyer", "seller"] * 3
            assert {m.action.terms["price"] for m in st.transcript if m.party == "buyer"} == {520 + i}
