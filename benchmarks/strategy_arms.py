"""The strategy's arms side by side: the pinned Boulware, the responsive strategy, responsive +
keyword reader, and the oracle, on identical negotiations, paired.

    python benchmarks/strategy_arms.py                              # heldout and talk, the five arms
    python benchmarks/strategy_arms.py --suites talk --by persona   # one suite, per-persona rows only
    python benchmarks/strategy_arms.py --buyers                     # + the hold-out, MiCRO and tit-for-tat buyers
    python benchmarks/strategy_arms.py --arm old-default='rule/boulware?noise=0' --arm new-default=rule/responsive

Every arm plays every negotiation of the suite (its scenarios, personas and default buyers,
or ``--buyer``), in this process or ``--workers`` forked ones; each arm is compared with the
first (``boulware``: ``rule/boulware`` as main had it at 8aea479, the pinned baseline) on the
negotiations both played, with a 95% bootstrap CI clustered by scenario and a sign-flip
p-value (``evals.stats``), overall, per buyer and per persona. The oracle
(``evals.oracle``) knows each buyer's type and true walk-away; oracle minus keywords is what
a better reading could still win.

``--recall`` reads every buyer message of the talk suite (as ``rule/boulware`` plays it) with the
keyword reader and counts, per signal, the offers' messages that carry it (known from the talkers'
phrasebooks) it reads, and the messages without one it reads a signal into.

``--buyers`` adds the buyers of issue 28's targets on the ``quick`` and ``heldout``
scenarios: a hold-out buyer (``rule/holdout``: its ideal every move, on its last move
whatever beats walking away), MiCRO (``rule/micro``; ``rule/micro?step=0.1``, the fixed step closer
to de Jonge's slow walk down its outcomes) and ``rule/tit_for_tat``, with the
deal rate, and, against the hold-out, the seller's last offer over its walk-away value in
the negotiations where the buyer never conceded.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import sys
import time
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evals.oracle import ORACLE_SPEC, READ_SPEC, SAID_SPEC, OracleSeller  # noqa: E402
from evals.runner import Job, RunOptions, make_buyer, plan  # noqa: E402
from evals.stats import PairedDifference, bootstrap_mean, paired_difference  # noqa: E402
from evals.suites import get_suite  # noqa: E402
from negotiator.actions import MakeOffer  # noqa: E402
from negotiator.party import Party  # noqa: E402
from negotiator.runtime import make_party, run_negotiation  # noqa: E402

DEFAULT_ARMS = {
    "boulware": "rule/boulware",
    "responsive": "rule/responsive?reader=none",
    "keywords": "rule/responsive",
    "said": SAID_SPEC,
    "read": READ_SPEC,
    "oracle": ORACLE_SPEC,
}
ORACLES = (ORACLE_SPEC, SAID_SPEC, READ_SPEC)
TOLERANCE = 0.005  # a buyer offer better for the seller by less than this is not a concession


@dataclass(frozen=True)
class Row:
    """What the table needs of one episode."""

    key: str  # the negotiation (labels["negotiation"]): identical across arms
    score: float
    deal: bool
    buyer: str
    persona: str
    cluster: str  # the base scenario
    ended_by: str
    buyer_conceded: bool  # some buyer offer beat its first for the seller by TOLERANCE
    last_margin: float | None  # the seller's last offer's worth to it minus its floor


def _row(job: Job, ep) -> Row:
    sc = ep.scenario
    floor = sc.seller_limits.utility_floor(sc.seller)
    theirs = [
        sc.seller.utility(t.action.terms) for t in ep.turns if t.party == "buyer" and isinstance(t.action, MakeOffer)
    ]
    mine = [t.action.terms for t in ep.turns if t.party == "seller" and isinstance(t.action, MakeOffer)]
    return Row(
        key=job.labels["negotiation"],
        score=ep.metrics.seller_score,
        deal=ep.outcome.deal,
        buyer=job.buyer,
        persona=job.persona,
        cluster=job.labels.get("scenario") or job.scenario.id.split("~")[0],
        ended_by=ep.outcome.ended_by,
        buyer_conceded=any(u > theirs[0] + TOLERANCE for u in theirs[1:]) if theirs else False,
        last_margin=sc.seller.utility(mine[-1]) - floor if mine else None,
    )


async def _play(jobs: list[Job], seller: str) -> list[Row]:
    rows = []
    for job in jobs:
        party: Party
        if seller in ORACLES:
            party = OracleSeller(job.scenario, job.persona, seed=job.seed, spec=seller)
        else:
            party = make_party(seller, "seller", seed=job.seed)
        ep = await run_negotiation(
            party, make_buyer(job, RunOptions()), job.scenario, job.seed, labels=job.labels, persona=job.persona
        )
        rows.append(_row(job, ep))
    return rows


def _play_chunk(args: tuple[str, str, list[str] | None, int, int]) -> list[Row]:
    suite, seller, buyers, i, n = args
    jobs = plan(get_suite(suite), seller if seller not in ORACLES else "rule/boulware", buyers)
    return asyncio.run(_play(jobs[i::n], seller))


def play(suite: str, seller: str, buyers: list[str] | None, workers: int) -> list[Row]:
    """Every negotiation of ``suite`` for one seller arm."""
    if workers <= 1:
        return _play_chunk((suite, seller, buyers, 0, 1))
    with ProcessPoolExecutor(workers) as pool:
        parts = pool.map(_play_chunk, [(suite, seller, buyers, i, workers * 4) for i in range(workers * 4)])
        return [r for part in parts for r in part]


def describe(name: str, rows: list[Row]) -> str:
    est = bootstrap_mean([r.score for r in rows], [r.cluster for r in rows])
    deal = statistics.mean(r.deal for r in rows)
    walks = sum(r.ended_by == "walk_away" for r in rows)
    return (
        f"  {name:<14} n={len(rows):5d}  score {est.mean:.3f} [{est.low:.3f}, {est.high:.3f}]  deal rate {deal:.2f}"
        f"  walk-aways {walks}"
    )


def compare(
    base: dict[str, Row], other: dict[str, Row], by: str | None
) -> list[tuple[str, PairedDifference, float, int]]:
    common = sorted(set(base) & set(other))
    groups: dict[str, list[str]] = defaultdict(list)
    for k in common:
        groups[getattr(base[k], by) if by else "all"].append(k)
    out = []
    for g, ks in sorted(groups.items()):
        d = paired_difference([base[k].score for k in ks], [other[k].score for k in ks], [base[k].cluster for k in ks])
        deal = statistics.mean(other[k].deal for k in ks) - statistics.mean(base[k].deal for k in ks)
        out.append((g, d, deal, len(ks)))
    return out


def show_pairs(rows: dict[str, dict[str, Row]], base: str, pairs: list[tuple[str, str]], by: list[str]) -> None:
    for a, b in pairs:
        if a not in rows or b not in rows:
            continue
        print(f"\n  {b} - {a}")
        for level in [None, *by]:
            for g, d, deal, n in compare(rows[a], rows[b], level):
                label = "all" if level is None else f"{level} {g}"
                print(
                    f"    {label:<36} n={n:5d}  {d.mean:+.3f} [{d.low:+.3f}, {d.high:+.3f}]  p={d.p_value:.3g}"
                    f"  deal rate {deal:+.2f}"
                )


def suite_table(suite: str, arms: dict[str, str], buyers: list[str] | None, workers: int, by: list[str]) -> dict:
    print(f"\n== {suite}" + (f", buyers {', '.join(buyers)}" if buyers else ", the suite's buyers"), flush=True)
    rows: dict[str, dict[str, Row]] = {}
    for name, spec in arms.items():
        t0 = time.perf_counter()
        got = play(suite, spec, buyers, workers)
        rows[name] = {r.key: r for r in got}
        print(describe(name, got) + f"  ({time.perf_counter() - t0:.1f} s)  {spec}", flush=True)
    names = list(arms)
    base = names[0]
    pairs = [(base, n) for n in names[1:]]
    for a, b in (
        ("keywords", "said"),
        ("keywords", "read"),
        ("read", "said"),
        ("said", "oracle"),
        ("keywords", "oracle"),
        ("responsive", "keywords"),
    ):
        if a in arms and b in arms and (a, b) not in pairs:
            pairs.append((a, b))
    show_pairs(rows, base, pairs, by)
    return rows


def holdout_margins(rows: dict[str, Row]) -> str:
    margins = sorted(r.last_margin for r in rows.values() if not r.buyer_conceded and r.last_margin is not None)
    if not margins:
        return "no negotiation where the buyer never conceded"
    return (
        f"{len(margins)} negotiations where the buyer never conceded: the seller's last offer over its walk-away, "
        f"min {margins[0]:.3f}, median {statistics.median(margins):.3f}"
    )


def _phrase(template: str) -> re.Pattern[str]:
    """A talker's phrase as a pattern: its placeholders match anything."""
    parts = re.split(r"\{[a-z_]+\}", template)
    return re.compile("^" + ".+?".join(re.escape(p) for p in parts))


def reader_recall() -> None:
    """The keyword reader on every buyer message of the talk suite, against what the talker said."""
    from negotiator.buyers import talk
    from negotiator.strategy import read_hints

    books = {
        "threat": [_phrase(p) for p in talk.THREATS],
        "hurry": [_phrase(p) for p in (*talk.HURRY, *talk.HURRY_ROUNDS)],
        "quote": [_phrase(p) for p in (*talk.QUOTES, *talk.RELATIVE_QUOTES)],
        "priorities": [_phrase(p) for p in talk.PRIORITIES],
    }
    said: dict[str, list[bool]] = defaultdict(list)
    quiet: dict[str, int] = defaultdict(int)
    plain = 0

    async def run() -> None:
        nonlocal plain
        for job in plan(get_suite("talk"), "rule/boulware"):
            ep = await run_negotiation(
                make_party("rule/boulware", "seller", seed=job.seed),
                make_buyer(job, RunOptions()),
                job.scenario,
                job.seed,
            )
            for t in ep.turns:
                if t.party != "buyer" or not isinstance(t.action, MakeOffer):
                    continue  # the offers' words: a walk-away says what it does
                msg = t.action.message
                hints = read_hints([msg], ep.scenario.space, turn=t.index + 1, max_turns=ep.scenario.max_turns)
                carried = [k for k, pats in books.items() if any(p.match(msg) for p in pats)]
                for k in carried:
                    said[k].append(k in hints.signals())
                if not carried:
                    plain += 1
                    for k in hints.signals():
                        quiet[k] += 1

    asyncio.run(run())
    print("\n== the keyword reader on the talk suite's buyer messages (rule/boulware's negotiations)")
    for k, hits in said.items():
        print(
            f"  {k:<11} read in {sum(hits):4d} of {len(hits):4d} messages that carry it ({sum(hits) / len(hits):.0%})"
        )
    print(
        f"  {plain} messages that carry none: read as " + ", ".join(f"{k} {v}" for k, v in quiet.items()) or "nothing"
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--suites", default="heldout,talk", help="comma-separated suites (default: heldout,talk)")
    p.add_argument("--arm", action="append", default=[], help="NAME=SPEC, an arm added after the default five")
    p.add_argument("--only", help="comma-separated arm names to play (the first is the baseline)")
    p.add_argument("--buyer", action="append", help="buyer spec(s) in place of the suite's")
    p.add_argument("--buyers", action="store_true", help="also the hold-out, MiCRO and tit-for-tat buyers")
    p.add_argument("--recall", action="store_true", help="also the keyword reader's recall on the talk suite")
    p.add_argument("--by", default="buyer,persona", help="breakdowns of the paired differences (buyer, persona)")
    p.add_argument("--workers", type=int, default=min(os.cpu_count() or 1, 4), help="processes (1: this one)")
    args = p.parse_args(argv)
    arms = dict(DEFAULT_ARMS)
    for item in args.arm:
        name, _, spec = item.partition("=")
        arms[name] = spec
    if args.only:
        arms = {k: arms[k] for k in args.only.split(",")}
    by = [b for b in args.by.split(",") if b]
    for suite in [x for x in args.suites.split(",") if x]:  # --suites '' plays only --buyers
        suite_table(suite, arms, args.buyer, args.workers, by)
    if args.recall:
        reader_recall()
    if args.buyers:
        sellers = {k: v for k, v in arms.items() if k != "oracle"}
        for suite in ("quick", "heldout"):
            for buyer in ("rule/holdout", "rule/micro", "rule/micro?step=0.1", "rule/tit_for_tat"):
                rows = suite_table(suite, sellers, [buyer], args.workers, ["persona"] if suite == "heldout" else [])
                if buyer == "rule/holdout":
                    for name, r in rows.items():
                        print(f"  {name}: {holdout_margins(r)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
