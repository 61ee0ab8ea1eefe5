"""The evaluation runner at the paper's scale, measured side by side in one run.

1. The full held-out suite (1,152 negotiations) with zero-latency models: wall and CPU time
   through the runner (64 in flight, every episode logged and fsynced) against the same
   negotiations played with no runner at all (no log, no retries, no limits), 64 at once and
   one by one. Runner minus bare loop at the same concurrency is the runner's own overhead.
   Done for a rule-based seller (no LangGraph) and the scripted seller model behind the real
   LangGraph agent.
2. The same suite with a simulated seller-model latency L, 64 in flight: ideal wall time
   (seller calls x L / 64, or the longest negotiation if that is longer) over actual wall
   time (goal >= 0.9), with the process's CPU time beside it: CPU/wall near 1 means the
   two cores, not the runner's waiting, set the pace.

    python benchmarks/eval_scale.py [--quick] [--latency 0.1 --latency 0.5 ...]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time

from evals.runner import RunOptions, make_buyer, plan, run_jobs
from evals.suites import get_suite
from negotiator.sim import make_party, run_negotiation


def load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


async def through_runner(jobs, concurrency: int):
    with tempfile.TemporaryDirectory() as d:
        c0, t0 = time.process_time(), time.perf_counter()
        eps = await run_jobs(jobs, d, RunOptions(concurrency=concurrency))
        return eps, time.perf_counter() - t0, time.process_time() - c0


async def bare_loop(jobs, concurrency: int = 1):
    """The same negotiations with no runner: no log, no retries, no limits; ``concurrency`` at once."""
    sem = asyncio.Semaphore(concurrency)

    async def one(j):
        async with sem:
            seller, buyer = make_party(j.seller, "seller", seed=j.seed), make_buyer(j, RunOptions())
            await run_negotiation(seller, buyer, j.scenario, j.seed)

    c0, t0 = time.process_time(), time.perf_counter()
    await asyncio.gather(*(one(j) for j in jobs))
    return time.perf_counter() - t0, time.process_time() - c0


def seller_calls(eps) -> int:
    return sum(t.usage.model_calls for e in eps for t in e.turns if t.party == "seller")


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="a quarter of the suite, one latency")
    ap.add_argument("--latency", type=float, action="append", help="simulated seller latency in seconds (repeatable)")
    ap.add_argument("--concurrency", type=int, default=64)
    args = ap.parse_args()
    suite = get_suite("heldout")
    k = args.concurrency
    latencies = args.latency or ([0.1] if args.quick else [0.1, 0.25, 0.5, 1.0])
    print(f"machine: {os.cpu_count()} CPUs, load average (1/5/15 min) at start {load()}")

    t = time.perf_counter()
    rule_jobs = plan(suite, "rule/boulware")
    print(
        f"plan: {len(rule_jobs)} negotiations of {suite.key} in {time.perf_counter() - t:.2f} s "
        "(builds the 576 persona scenarios and their Pareto frontiers)"
    )
    if args.quick:
        rule_jobs = rule_jobs[::4]
    n = len(rule_jobs)
    _, wall, _ = await through_runner(rule_jobs, k)
    print(f"first pass, cold caches (outcome indices): {wall:.2f} s")

    print(f"1. {n} negotiations, zero-latency models, {k} in flight (warm caches)")
    for seller in ("rule/boulware", "scripted/boulware"):
        jobs = plan(suite, seller)[:: 4 if args.quick else 1]
        eps, wall, cpu = await through_runner(jobs, k)
        seq, seq_cpu = await bare_loop(jobs)
        conc, conc_cpu = await bare_loop(jobs, k)
        calls = seller_calls(eps)
        print(
            f"   {seller}: {n / wall:.0f} negotiations/s through the runner"
            + (f", {calls} seller model calls, {cpu / calls * 1e3:.2f} ms CPU per call" if calls else "")
        )
        print(f"      runner, {k} in flight   wall {wall:6.2f} s  CPU {cpu:6.2f} s")
        print(
            f"      bare loop, {k} at once  wall {conc:6.2f} s  CPU {conc_cpu:6.2f} s   -> runner overhead "
            f"{(wall - conc) / n * 1e3:+.2f} ms wall, {(cpu - conc_cpu) / n * 1e3:+.2f} ms CPU per negotiation"
        )
        print(f"      bare loop, one by one  wall {seq:6.2f} s  CPU {seq_cpu:6.2f} s")

    print(f"2. {n} negotiations, scripted seller with simulated latency, {k} in flight (goal: ideal/actual >= 0.9)")
    for lat in latencies:
        jobs = plan(suite, f"scripted/boulware?latency={lat}")[:: 4 if args.quick else 1]
        eps, wall, cpu = await through_runner(jobs, k)
        calls = seller_calls(eps)
        longest = max(seller_calls([e]) for e in eps)
        ideal = max(calls * lat / k, longest * lat)
        print(
            f"   latency {lat:.2f} s: {calls} seller calls, ideal {ideal:6.2f} s, actual {wall:6.2f} s, "
            f"ideal/actual = {ideal / wall:.2f}, CPU {cpu:.2f} s = {cpu / wall:.0%} of wall"
        )
    print(f"load average at end {load()}")


if __name__ == "__main__":
    asyncio.run(main())
