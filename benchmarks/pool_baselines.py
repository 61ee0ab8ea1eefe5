"""What the training buyer pool rewards: rule sellers' scores per training buyer.

    python benchmarks/pool_baselines.py               # 60 training scenarios per buyer

A GRPO seller can only learn what its training buyers reward. This plays fixed rule
sellers (holding firm, conceding steadily, conceding early, never moving) against every
buyer of the default pool, with the training personas, on training scenario seeds, and
prints the mean seller score per buyer. Compare the ranking with the same sellers on the
held-out suite (``negotiator eval --suite heldout --seller rule/boulware``): when both rank
the sellers alike, what training rewards is what the evaluation measures.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

SELLERS = ("rule/boulware?e=0.1", "rule/boulware", "rule/linear", "rule/conceder", "rule/hardliner?level=0.75")


async def table(n: int) -> None:
    from negotiator.domain.seeds import TRAIN_SEEDS
    from negotiator.runtime import make_party, run_negotiation
    from train.pool import DEFAULT_TACTICS, TRAIN_PERSONAS, BuyerPool

    seeds = [TRAIN_SEEDS[i] for i in range(n)]
    pool = BuyerPool(scenario_seeds=tuple(seeds))
    personas = list(TRAIN_PERSONAS)
    print("seller".ljust(26), *(b.removeprefix("rule/")[:15].rjust(15) for b in DEFAULT_TACTICS), "mean".rjust(6))
    for seller in SELLERS:
        row = []
        for buyer in DEFAULT_TACTICS:
            scores = []
            for i, seed in enumerate(seeds):
                persona = personas[i % len(personas)]
                ep = await run_negotiation(
                    make_party(seller, "seller", seed=i),
                    pool.buyer(buyer, persona, i),
                    pool.scenario(seed, persona),
                    seed=i,
                )
                scores.append(ep.metrics.seller_score)
            row.append(statistics.mean(scores))
        print(seller.ljust(26), *(f"{x:15.3f}" for x in row), f"{statistics.mean(row):6.3f}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scenarios", type=int, default=60, help="training scenarios per buyer")
    asyncio.run(table(p.parse_args().scenarios))


if __name__ == "__main__":
    main()
