"""Several ``negotiator serve`` replicas on one store: conflicting moves raced, every answer checked.

Starts 2 or 3 real ``negotiator serve`` processes on one store (a SQLite file, or a
PostgreSQL URL with ``--store``), opens negotiations, and at each of the buyer's turns posts
one move per replica at the same moment, all made for the same turn (``expected_turn``):

* ``offers``: a different counter-offer to each replica;
* ``ends``: an accept to one replica and a walk-away to another (and an offer to a third).

Then it reads what is stored and checks every answer against it, counting

* ``double_applied``: answers 200 beyond the first for one turn (several moves acknowledged
  where the protocol allows one);
* ``lost``: answers 200 whose transcript is not how the stored negotiation begins (a move
  acknowledged and then not kept);
* ``agreement_without_deal``: answers carrying an agreement record while the stored
  negotiation is not that deal (no deal, or another record);
* ``conflict_without_state``: 409 answers that do not carry the state the negotiation now has;
* ``stalled``: turns where no replica stored a move (every answer an error).

A correct replica set answers 0 on every count, whoever wins each race. The moves come from
a scripted seller with a little latency (``scripted/boulware?latency=0.05``) so that every
replica computes its move on the same state before any of them stores it: the race is at
the store, not in front of it.

    python benchmarks/replicas.py [--replicas 3] [--rounds 24] [--store postgresql://...] [--before ../old]
    python benchmarks/replicas.py --cost 200 --before ../old    # what the ledger costs a move, in one process

``--before`` races another checkout's code (its replicas run with PYTHONPATH set to it) in the
same run, side by side with this one: the "before" column of docs/service.md is the commit
before the turn ledger.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from service_process import ServiceProcess  # noqa: E402  (the tests' serve process, one class for both)

KEY = "replicas-benchmark-key-0123456789"
SELLER = "scripted/boulware?latency=0.05"


@dataclass
class Tally:
    rounds: int = 0  # contested turns
    answers: int = 0
    ok: int = 0
    conflicts: int = 0
    errors: int = 0  # answers other than 200 and 409
    double_applied: int = 0
    lost: int = 0
    agreement_without_deal: int = 0
    conflict_without_state: int = 0
    stalled: int = 0
    deals: int = 0
    no_deals: int = 0
    problems: list[str] = field(default_factory=list)

    def clean(self) -> bool:
        return not (
            self.errors
            or self.double_applied
            or self.lost
            or self.agreement_without_deal
            or self.conflict_without_state
            or self.stalled
        )


def start_replicas(
    store: str, n: int, workdir: Path, seller: str = SELLER, env: dict[str, str] | None = None
) -> list[ServiceProcess]:
    """``n`` serve processes on ``store``, sharing one API key and one agreement signing key."""
    from negotiator.agreements import SIGNING_KEY_ENV, SigningKey

    env = {**(env or {}), SIGNING_KEY_ENV: SigningKey.generate().export()}
    replicas: list[ServiceProcess] = []
    try:
        for _ in range(n):  # one after the other: the first creates the store's tables
            replicas.append(ServiceProcess(workdir, seller=seller, key=KEY, extra_env=env, store=store).start())
    except BaseException:
        for r in replicas:
            r.stop()
        raise
    return replicas


def _offer(scenario: dict, i: int, n: int) -> dict:
    """A buyer offer that differs per replica ``i`` of ``n`` (low prices: the seller rarely accepts)."""
    terms = {}
    for issue in scenario["issues"]:
        if issue["kind"] == "numeric":
            lo, hi = issue["low"], issue["high"]
            terms[issue["name"]] = lo + (hi - lo) * (i + 1) / (4 * (n + 1))
        else:
            terms[issue["name"]] = issue["options"][i % len(issue["options"])]
    return terms


def _post_together(urls: list[str], moves: list[dict], path: str) -> list[httpx.Response | Exception]:
    """Each move to its replica, released at the same moment; every answer (or the exception)."""
    barrier = threading.Barrier(len(urls))
    answers: list[httpx.Response | Exception] = [RuntimeError("no answer")] * len(urls)

    def send(i: int) -> None:
        with httpx.Client(headers={"Authorization": f"Bearer {KEY}"}, timeout=60) as client:
            barrier.wait()
            try:
                answers[i] = client.post(f"{urls[i]}{path}", json=moves[i])
            except Exception as e:  # noqa: BLE001 - counted as an error answer
                answers[i] = e

    threads = [threading.Thread(target=send, args=(i,)) for i in range(len(urls))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return answers


def race(urls: list[str], rounds: int, seed: int = 0) -> Tally:
    """``rounds`` contested turns over as many negotiations as they take; every answer checked."""
    tally = Tally()
    auth = {"Authorization": f"Bearer {KEY}"}
    with httpx.Client(headers=auth, timeout=60) as client:
        n_neg = 0
        while tally.rounds < rounds:
            opened = client.post(f"{urls[0]}/v1/negotiations", json={"seed": seed + n_neg})
            opened.raise_for_status()
            state = opened.json()
            nid, scenario = state["id"], state["scenario"]
            acknowledged: list[tuple[int, dict]] = []  # (turn, answer body) of every 200
            k = 0
            while state["status"] == "open" and state["to_move"] == "buyer" and tally.rounds < rounds:
                t = state["turn"]
                ending = state["seller_offer"] is not None and (n_neg + k) % 3 == 2
                moves = []
                for i in range(len(urls)):
                    if ending and i == 0:
                        moves.append({"action": "accept", "message": "deal", "expected_turn": t})
                    elif ending and i == 1:
                        moves.append({"action": "walk_away", "message": "bye", "expected_turn": t})
                    else:
                        moves.append({"action": "offer", "terms": _offer(scenario, i, len(urls)), "expected_turn": t})
                answers = _post_together(urls, moves, f"/v1/negotiations/{nid}/moves")
                tally.rounds += 1
                oks = 0
                for a in answers:
                    tally.answers += 1
                    if isinstance(a, Exception) or a.status_code not in (200, 409):
                        tally.errors += 1
                        tally.problems.append(f"{nid} turn {t}: {a if isinstance(a, Exception) else a.text[:300]}")
                    elif a.status_code == 200:
                        oks += 1
                        tally.ok += 1
                        acknowledged.append((t, a.json()))
                    else:
                        tally.conflicts += 1
                        now = a.json().get("state")
                        if not now or now.get("id") != nid or now.get("turn", -1) <= t:
                            tally.conflict_without_state += 1
                tally.double_applied += max(0, oks - 1)
                tally.stalled += oks == 0
                k += 1
                state = client.get(f"{urls[k % len(urls)]}/v1/negotiations/{nid}").raise_for_status().json()
            stored = [client.get(f"{u}/v1/negotiations/{nid}").raise_for_status().json() for u in urls]
            if any(s != stored[0] for s in stored[1:]):
                tally.problems.append(f"{nid}: the replicas read different states")
            final = stored[0]
            tally.deals += final["status"] == "deal"
            tally.no_deals += final["status"] == "no_deal"
            for t, body in acknowledged:
                if final["transcript"][: len(body["transcript"])] != body["transcript"]:
                    tally.lost += 1
                    tally.problems.append(f"{nid}: the move acknowledged at turn {t} is not in the stored transcript")
                if body.get("agreement_record") is not None and (
                    final["status"] != "deal" or final.get("agreement_record") != body["agreement_record"]
                ):
                    tally.agreement_without_deal += 1
                    tally.problems.append(
                        f"{nid}: turn {t} answered a signed agreement; the store says {final['status']}"
                    )
            n_neg += 1
    return tally


def run(store: str | None, replicas: int, rounds: int, seller: str = SELLER, code: str | None = None) -> Tally:
    """The race on ``store`` (default: a fresh SQLite file); ``code``: the checkout the replicas run."""
    with tempfile.TemporaryDirectory(prefix="negotiator-replicas-") as tmp:
        work = Path(tmp)
        env = {"PYTHONPATH": str(Path(code).resolve())} if code else None
        procs = start_replicas(store or str(work / "negotiations.sqlite"), replicas, work, seller, env)
        try:
            tally = race([p.base_url for p in procs], rounds)
        finally:
            for p in procs:
                p.stop()
        if tally.errors:  # what the replicas logged is the only account of an error answer: keep it
            tally.problems += [f"{p.log.name}: {p.log.read_text()[-4000:]}" for p in procs]
        return tally


_COST = """
import asyncio, json, os, sys, tempfile, time
from negotiator.sessions import BuyerMove, Sessions
from negotiator.sim import generate

async def main(n):
    sc = generate(0)
    offer = {**sc.buyer.ideal(sc.space), "price": 510}  # low: the seller never accepts, the moves go on
    times = []
    with tempfile.TemporaryDirectory() as d:
        async with Sessions.connect("scripted/boulware", os.path.join(d, "s.sqlite")) as s:
            while len(times) < n:
                st = await s.open(sc)
                while st.status == "open" and len(times) < n:
                    t0 = time.perf_counter()
                    st = await s.move(st.id, BuyerMove.offer(offer, expected_turn=st.turn))
                    await s.get(st.id)
                    times.append(time.perf_counter() - t0)
    print(json.dumps(sorted(times)))

asyncio.run(main(int(sys.argv[1])))
"""


def move_cost(codes: list[str], moves: int, repeats: int = 5) -> dict[str, list[float]]:
    """Median seconds of one move and one read (``Sessions`` on SQLite, zero-latency seller) per code,
    the codes alternating ``repeats`` times so that a change in the machine's load hits both alike."""
    medians: dict[str, list[float]] = {c: [] for c in codes}
    for _ in range(repeats):
        for code in codes:
            env = {**os.environ, "PYTHONPATH": code}
            out = subprocess.run(
                [sys.executable, "-c", _COST, str(moves)], env=env, capture_output=True, text=True, check=True
            )
            times = json.loads(out.stdout.strip().splitlines()[-1])
            medians[code].append(times[len(times) // 2])
    return medians


COUNTS = (
    "rounds",
    "answers",
    "ok",
    "conflicts",
    "errors",
    "double_applied",
    "lost",
    "agreement_without_deal",
    "conflict_without_state",
    "stalled",
    "deals",
    "no_deals",
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--replicas", type=int, default=3, choices=(2, 3, 4))
    ap.add_argument("--rounds", type=int, default=24, help="contested turns")
    ap.add_argument("--store", default=None, help="a postgresql:// URL (default: a fresh SQLite file per run)")
    ap.add_argument(
        "--before", default=None, help="another checkout (its root folder) to race side by side with this one"
    )
    ap.add_argument("--json", type=Path, default=None, help="also write the counts here")
    ap.add_argument(
        "--cost",
        type=int,
        default=0,
        metavar="MOVES",
        help="instead of the race: the time of a move and a read in one process (SQLite), MOVES per run",
    )
    ap.add_argument("--repeats", type=int, default=5, help="--cost: runs per code, alternating")
    args = ap.parse_args()
    here = str(Path(__file__).resolve().parent.parent)
    codes = [str(Path(args.before).resolve()), here] if args.before else [here]
    if args.cost:
        medians = move_cost(codes, args.cost, args.repeats)
        for c in codes:
            runs = " ".join(f"{1000 * m:.2f}" for m in medians[c])
            label = "before" if c != here else "this"
            print(f"{label:<8}median move+read per run (ms): {runs}")
        if len(codes) == 2:
            diffs = sorted(1000 * (b - a) for a, b in zip(medians[codes[0]], medians[codes[1]], strict=True))
            print("this - before, per run (ms): " + " ".join(f"{d:+.2f}" for d in diffs))
            print(f"median difference: {diffs[len(diffs) // 2]:+.2f} ms")
        return
    results: dict[str, Tally] = {}
    for code in codes:
        t0 = time.perf_counter()
        results[code] = run(args.store, args.replicas, args.rounds, code=code)
        print(f"{code}: {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    where = "PostgreSQL" if args.store else "SQLite"
    print(f"{args.replicas} replicas on {where}, {args.rounds} contested turns")
    print(f"{'':<24}" + "".join(f"{('before' if c != here else 'this'):>10}" for c in codes))
    for name in COUNTS:
        print(f"{name:<24}" + "".join(f"{getattr(results[c], name):>10}" for c in codes))
    for c in codes:
        for p in results[c].problems[:5]:
            print(f"  {('before' if c != here else 'this')}: {p}")
    if args.json:
        args.json.write_text(json.dumps({c: asdict(t) for c, t in results.items()}, indent=2))


if __name__ == "__main__":
    main()
