"""The HTTP service's own overhead: buyer moves over HTTP against the same moves in-process.

Side by side in one run, with a zero-latency scripted seller (``scripted/boulware``) so the
figures are the service's cost, not a model's:

* ``POST /v1/negotiations/{id}/moves`` against a real ``negotiator serve`` process
  (uvicorn, loopback, SQLite store), at 1 and 32 concurrent clients;
* the same moves through ``Sessions.move`` in this process (same seller, same SQLite
  checkpointer), at the same concurrency.

Each client plays its own negotiation (50 rounds, the buyer repeating a low offer so the
seller never accepts) and opens a new one when it ends; only moves are timed. The two paths
alternate in several rounds so that a change in the machine's load hits both alike. Prints
requests per second and p50/p95 latency per row and the ratios HTTP / in-process, plus the
machine's load, since other work on the machine moves these numbers.

    python benchmarks/service.py [--requests 200] [--rounds 3] [--json out.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from negotiator.sessions import BuyerMove, Sessions
from negotiator.sim import generate

SELLER = "scripted/boulware"  # zero latency: the seller's model costs nothing
KEY = "benchmark-key-0123456789abcdef"
SCENARIO = generate(0, "furniture", max_rounds=50)
LOW_OFFER = {**SCENARIO.buyer.ideal(SCENARIO.space), "price": SCENARIO.space.issue("price").low}


def _quantile(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def _row(kind: str, clients: int, latencies: list[float], wall: float) -> dict:
    """Summary of one path at one concurrency, over every round."""
    return {
        "path": kind,
        "clients": clients,
        "requests": len(latencies),
        "rps": len(latencies) / wall,
        "p50_ms": 1000 * statistics.median(latencies),
        "p95_ms": 1000 * _quantile(latencies, 0.95),
    }


async def _drive(clients: int, total: int, open_, move) -> tuple[list[float], float]:
    """``clients`` tasks share ``total`` timed moves; each keeps one negotiation going."""
    latencies: list[float] = []
    left = [total]

    async def client() -> None:
        state = await open_()
        while left[0] > 0:
            left[0] -= 1
            t0 = time.perf_counter()
            state = await move(state)
            latencies.append(time.perf_counter() - t0)
            if state["status"] != "open":
                state = await open_()

    t0 = time.perf_counter()
    await asyncio.gather(*[client() for _ in range(clients)])
    return latencies, time.perf_counter() - t0


async def over_http(base_url: str, clients: int, total: int) -> tuple[list[float], float]:
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(
        base_url=base_url, headers={"Authorization": f"Bearer {KEY}"}, limits=limits, timeout=60
    ) as http:
        body = {"listing": SCENARIO.listing().model_dump(mode="json")}

        async def open_() -> dict:
            r = await http.post("/v1/negotiations", json=body)
            r.raise_for_status()
            return r.json()

        async def move(state: dict) -> dict:
            r = await http.post(f"/v1/negotiations/{state['id']}/moves", json={"action": "offer", "terms": LOW_OFFER})
            r.raise_for_status()
            return r.json()

        await move(await open_())  # warm up the connection and the server
        return await _drive(clients, total, open_, move)


async def in_process(store: Path, clients: int, total: int) -> tuple[list[float], float]:
    async with Sessions.connect(SELLER, store) as sessions:

        async def open_() -> dict:
            return (await sessions.open(SCENARIO)).model_dump()

        async def move(state: dict) -> dict:
            return (await sessions.move(state["id"], BuyerMove.offer(LOW_OFFER))).model_dump()

        await move(await open_())
        return await _drive(clients, total, open_, move)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_service(workdir: Path) -> tuple[subprocess.Popen, str]:
    port = _free_port()
    env = {**os.environ, "NEGOTIATOR_API_KEY": KEY}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "negotiator",
            "serve",
            "--port",
            str(port),
            "--seller",
            SELLER,
            "--store",
            str(workdir / "service.sqlite"),
            "--log-level",
            "warning",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("negotiator serve did not start")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200, help="timed moves per path, concurrency and round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds alternating HTTP and in-process")
    parser.add_argument("--json", type=Path, help="also write the rows here")
    args = parser.parse_args()
    load_before = os.getloadavg()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        proc, url = start_service(work)
        try:
            for clients in (1, 32):
                got = {"HTTP service": ([], 0.0), "in-process": ([], 0.0)}
                for _ in range(args.rounds):
                    for kind, run in (
                        ("HTTP service", lambda n=clients: over_http(url, n, args.requests)),
                        ("in-process", lambda n=clients: in_process(work / "in-process.sqlite", n, args.requests)),
                    ):
                        lat, wall = asyncio.run(run())
                        got[kind] = (got[kind][0] + lat, got[kind][1] + wall)
                rows += [_row(kind, clients, lat, wall) for kind, (lat, wall) in got.items()]
        finally:
            proc.terminate()
            proc.wait(timeout=15)
    load_after = os.getloadavg()

    print(f"{'path':<14}{'clients':>8}{'requests':>10}{'req/s':>10}{'p50 ms':>9}{'p95 ms':>9}")
    for r in rows:
        print(
            f"{r['path']:<14}{r['clients']:>8}{r['requests']:>10}{r['rps']:>10.1f}{r['p50_ms']:>9.2f}{r['p95_ms']:>9.2f}"
        )
    print("\nservice overhead (HTTP / in-process):")
    for clients in (1, 32):
        h, p = (
            next(r for r in rows if r["clients"] == clients and r["path"] == k) for k in ("HTTP service", "in-process")
        )
        print(
            f"  {clients:>2} clients: throughput x{p['rps'] / h['rps']:.2f} lower, p50 x{h['p50_ms'] / p['p50_ms']:.2f}, p95 x{h['p95_ms'] / p['p95_ms']:.2f}"
        )
    print(
        f"\nmachine: {os.cpu_count()} CPUs; load average (1 min) {load_before[0]:.2f} before, {load_after[0]:.2f} after"
    )
    if args.json:
        args.json.write_text(
            json.dumps({"rows": rows, "cpus": os.cpu_count(), "load": [load_before[0], load_after[0]]}, indent=2)
        )


if __name__ == "__main__":
    main()
