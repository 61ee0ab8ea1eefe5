"""Choosing the responsive strategy's settings on training scenarios, never on an evaluation suite.

    python benchmarks/tune_responsive.py                                   # the recorded choice
    python benchmarks/tune_responsive.py --scenarios 60 'rule/responsive?lead=0.3' 'rule/responsive?rho=0.5'

Each seller spec plays every buyer below on ``--scenarios`` training scenarios (seeds from
500,000 on, in ``TRAIN_SEEDS``), each with one of the training personas in turn; it prints
the mean seller score / deal rate per buyer, the mean over the default training pool and
over all buyers. The buyers: the training pool (``train.pool.DEFAULT_TACTICS``: parameters no
evaluation persona uses), tit-for-tat, the hold-out and MiCRO buyers, and the eight talkers.
The held-out and talk suites' scenarios and personas never appear, so the settings chosen
here are measured there without having been fitted to them (docs/strategy.md records the
runs and the choice).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from negotiator.buyers.talk import TALKERS  # noqa: E402
from negotiator.runtime import make_party, run_negotiation  # noqa: E402
from train.pool import DEFAULT_TACTICS, TRAIN_PERSONAS, BuyerPool  # noqa: E402

BUYERS = (
    *DEFAULT_TACTICS,
    "rule/tit_for_tat",
    "rule/holdout",
    "rule/micro",
    *(f"rule/{t}" for t in TALKERS),
)
SEED_BASE = 500_000
DEFAULT_SELLERS = ("rule/boulware", "rule/responsive?reader=none", "rule/responsive")


def _play(args: tuple[str, str, int]) -> tuple[str, float, float]:
    seller, buyer, n = args
    seeds = tuple(SEED_BASE + i for i in range(n))
    pool = BuyerPool(buyers=(buyer,), scenario_seeds=seeds)
    personas = list(TRAIN_PERSONAS)

    async def run() -> tuple[list[float], list[bool]]:
        scores, deals = [], []
        for i, seed in enumerate(seeds):
            persona = personas[i % len(personas)]
            ep = await run_negotiation(
                make_party(seller, "seller", seed=i),
                pool.buyer(buyer, persona, i),
                pool.scenario(seed, persona),
                seed=i,
            )
            scores.append(ep.metrics.seller_score)
            deals.append(ep.outcome.deal)
        return scores, deals

    scores, deals = asyncio.run(run())
    return buyer, statistics.mean(scores), statistics.mean(deals)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("sellers", nargs="*", default=list(DEFAULT_SELLERS), help="seller specs to compare")
    p.add_argument("--scenarios", type=int, default=60, help="training scenarios per buyer")
    p.add_argument("--workers", type=int, default=min(os.cpu_count() or 1, 4))
    args = p.parse_args(argv)
    names = [b.removeprefix("rule/")[:12] for b in BUYERS]
    print(f"{args.scenarios} training scenarios per buyer; score/deal rate per buyer; pool = the training pool's mean")
    print(" " * 34 + " ".join(f"{n:>12}" for n in names) + "   pool    all")
    for seller in args.sellers:
        with ProcessPoolExecutor(max(1, args.workers)) as ex:
            res = {b: (s, d) for b, s, d in ex.map(_play, [(seller, b, args.scenarios) for b in BUYERS])}
        pool = statistics.mean(res[b][0] for b in DEFAULT_TACTICS)
        every = statistics.mean(v[0] for v in res.values())
        cells = " ".join(f"{res[b][0]:6.3f}/{res[b][1]:4.2f}" for b in BUYERS)
        print(f"{seller[:34]:34}{cells}  {pool:.3f}  {every:.3f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
