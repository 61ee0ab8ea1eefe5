"""The SDK's own cost, measured side by side in one run.

1. Time per seller turn with a zero-latency scripted model (median, p95) against a bare
   four-node LangGraph graph that does nothing: the ratio is the SDK's overhead over
   LangGraph itself (goal <= 1.5x).
2. 256 negotiations with a scripted seller model of 100 ms latency at concurrency 64:
   ideal wall time (seller calls x latency / concurrency) over actual (goal >= 0.9).
3. Rule-vs-rule negotiations per second (Boulware seller vs Conceder buyer, four issues,
   20 rounds), a figure to hold against other negotiation libraries.

    python benchmarks/overhead.py [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import TypedDict

from langgraph.graph import END, START, StateGraph

from negotiator import SellerAgent
from negotiator.actions import MakeOffer
from negotiator.party import PartyView, PublicMove
from negotiator.sim import generate, make_party, run_negotiation


class _S(TypedDict):
    x: int


def bare_graph():
    g = StateGraph(_S)
    for n in "abcd":
        g.add_node(n, lambda s: {"x": s["x"] + 1})
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", "c")
    g.add_edge("c", "d")
    g.add_edge("d", END)
    return g.compile()


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p / 100 * len(xs)))]


async def per_turn(n: int) -> tuple[list[float], list[float]]:
    bare = bare_graph()
    s = generate(21, "furniture")
    agent = SellerAgent("scripted/boulware", mode="json")
    # A mid-negotiation view: four moves already on the table.
    moves, view = [], None
    for i in range(4):
        role = s.opener if i % 2 == 0 else ("buyer" if s.opener == "seller" else "seller")
        prefs = s.seller if role == "seller" else s.buyer
        moves.append(PublicMove(party=role, action=MakeOffer(terms=prefs.ideal(s.space), message="An offer.")))
    view = PartyView.of(s, s.opener, moves)
    if view.role != "seller":
        moves = moves[:3]
        view = PartyView.of(s, "seller", moves)
    for _ in range(50):
        await bare.ainvoke({"x": 0})
        await agent.act(view)
    tb, ta = [], []
    for _ in range(n):  # interleaved so machine noise hits both alike
        t = time.perf_counter()
        await bare.ainvoke({"x": 0})
        tb.append(time.perf_counter() - t)
        t = time.perf_counter()
        await agent.act(view)
        ta.append(time.perf_counter() - t)
    return tb, ta


async def concurrency(n: int, k: int, latency: float, scenarios: int) -> tuple[float, float, int]:
    """``n`` negotiations over ``scenarios`` distinct scenarios (a suite shares each
    scenario between several buyers and personas)."""
    import tempfile

    from evals.runner import Job, RunOptions, run_jobs

    pool = [generate(1000 + i, max_rounds=5) for i in range(scenarios)]
    buyers = ["rule/conceder", "rule/boulware", "rule/linear", "rule/tit_for_tat"]
    jobs = [
        Job(f"bench-{i}", pool[i % scenarios], f"scripted/boulware?latency={latency}", buyers[i % 4], i)
        for i in range(n)
    ]
    with tempfile.TemporaryDirectory() as d:
        t = time.perf_counter()
        eps = await run_jobs(jobs, d, RunOptions(concurrency=k))
        wall = time.perf_counter() - t
    calls = sum(ep.metrics.seller_turns for ep in eps)
    # Negotiations are sequential chains of seller calls; with k in flight the ideal is
    # max(total calls x latency / k, the longest single chain x latency).
    longest = max(ep.metrics.seller_turns for ep in eps)
    ideal = max(calls * latency / k, longest * latency)
    return ideal, wall, calls


async def rule_throughput(seconds: float) -> float:
    s = generate(7, "retail_electronics", max_rounds=20)  # four issues
    seller, buyer = make_party("rule/boulware", "seller"), make_party("rule/conceder", "buyer")
    await run_negotiation(seller, buyer, s)  # warm caches (outcome index, frontier)
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        await run_negotiation(seller, buyer, s, seed=n)
        n += 1
    return n / (time.perf_counter() - t0)


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = ap.parse_args()
    n = 300 if args.quick else 2000
    tb, ta = await per_turn(n)
    mb, ma = statistics.median(tb) * 1e3, statistics.median(ta) * 1e3
    print(f"1. seller turn, zero-latency scripted model ({n} turns, interleaved)")
    print(f"   bare 4-node LangGraph ainvoke: median {mb:.3f} ms, p95 {pct(tb, 95) * 1e3:.3f} ms")
    print(f"   negotiator seller turn:        median {ma:.3f} ms, p95 {pct(ta, 95) * 1e3:.3f} ms")
    print(f"   ratio (median): {ma / mb:.2f}x   (goal <= 1.5x)")
    n = 64 if args.quick else 256
    print(f"2. {n} negotiations, scripted seller 100 ms/call, concurrency 64")
    for label, scen in (("suite-like: 32 scenarios shared by the buyers", 32), (f"all {n} scenarios distinct", n)):
        ideal, wall, calls = await concurrency(n, 64, 0.1, scen)
        print(
            f"   {label}: {calls} seller calls, ideal {ideal:.2f} s, actual {wall:.2f} s, "
            f"ideal/actual = {ideal / wall:.2f}   (goal >= 0.9)"
        )
    rate = await rule_throughput(3 if args.quick else 10)
    print(f"3. rule vs rule (Boulware seller vs Conceder buyer, 4 issues, 20 rounds): {rate:.0f} negotiations/s")


if __name__ == "__main__":
    asyncio.run(main())
