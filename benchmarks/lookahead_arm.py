"""A warm-start teacher as a seller: how much better its moves are than the strategy's own.

    python benchmarks/lookahead_arm.py                      # decision_arms.py's places, paired
    python benchmarks/lookahead_arm.py --places talk --workers 2
    python benchmarks/lookahead_arm.py --teacher reader     # the reader teacher (train/reading.py)

``--teacher lookahead`` (train/lookahead.py) labels the imitation warm start's moves by playing
every open move out against the training buyer. Here it plays the evaluation's negotiations the
same way, simulating each negotiation's own buyer (its spec and persona) with other noise seeds:
a seller no deployment can be (it has the buyer), so its score is a ceiling for what a model
that learns its choices from the decision view can reach on the same menu, as the oracle is for
the reader. Places as in benchmarks/decision_arms.py (talk shard 0 of 3, held-out shards 0 and
1 of 11, the quick suite against the hold-out buyer); the paired difference to ``rule/responsive``
(the keyword reader, the strategy it improves on) with a 95% CI clustered by scenario.
``--teacher reader`` plays the reader teacher instead: the strategy's move had it read every
phrasing the talking buyer used, on the menu the model is shown (a ceiling for a student of it).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evals.runner import Job, RunOptions, make_buyer, plan  # noqa: E402
from evals.stats import paired_difference  # noqa: E402
from evals.suites import get_suite  # noqa: E402
from negotiator.agent.seller import parse_strategy  # noqa: E402
from negotiator.party import PartyView, TurnRecord  # noqa: E402
from negotiator.runtime import make_party, run_negotiation  # noqa: E402
from train.lookahead import Lookahead, move_action  # noqa: E402
from train.reading import Reading  # noqa: E402
from train.tasks import Task  # noqa: E402

DECIDE = parse_strategy("responsive?menu=moves&words=strategy")
PLACES = {
    "talk": [("talk", None, (0, 3))],
    "heldout": [("heldout", None, (0, 11)), ("heldout", None, (1, 11))],
    "holdout": [("quick", ["rule/holdout"], None)],
}


class _SuiteBuyers:
    """The pool the lookahead simulates: the negotiation's own buyer with another seed."""

    def __init__(self, job: Job):
        self.job = job

    def buyer(self, spec: str, persona: str, seed: int):
        return make_buyer(replace(self.job, seed=seed), RunOptions())


class TeacherSeller:
    spec, family = "teacher", "rule"

    def __init__(self, job: Job, teacher: str):
        task = Task(id=job.labels["negotiation"], buyer=job.buyer, persona=job.persona, seed=job.seed)
        self.expert: Lookahead | Reading = (
            Reading(DECIDE, task, job.scenario)
            if teacher == "reader"
            else Lookahead(DECIDE, _SuiteBuyers(job), task, job.scenario)  # type: ignore[arg-type]
        )

    async def act(self, view: PartyView) -> TurnRecord:
        advice = DECIDE.advise(view.situation())
        return TurnRecord(
            index=view.turn, party="seller", action=move_action(advice, await self.expert.choose(view, advice))
        )

    async def aclose(self) -> None:
        return None


def _jobs(place: str) -> list[Job]:
    return [
        j
        for suite, buyers, shard in PLACES[place]
        for j in plan(get_suite(suite), "rule/responsive", buyers, shard=shard)
    ]


def _chunk(args: tuple[str, str, int, int]) -> list[tuple[str, str, float, float, bool, bool]]:
    place, teacher, i, n = args
    out = []
    for job in _jobs(place)[i::n]:
        eps = [
            asyncio.run(run_negotiation(seller, make_buyer(job, RunOptions()), job.scenario, job.seed))
            for seller in (make_party("rule/responsive", "seller", seed=job.seed), TeacherSeller(job, teacher))
        ]
        cluster = job.labels.get("scenario") or job.scenario.id.split("~")[0]
        out.append((job.persona, cluster, *(e.metrics.seller_score for e in eps), *(e.outcome.deal for e in eps)))
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--places", default="talk,heldout,holdout")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--teacher", choices=("lookahead", "reader"), default="lookahead")
    args = p.parse_args()
    for place in args.places.split(","):
        with ProcessPoolExecutor(args.workers) as pool:
            rows = [
                r
                for part in pool.map(_chunk, [(place, args.teacher, i, args.workers) for i in range(args.workers)])
                for r in part
            ]
        kw, la = [r[2] for r in rows], [r[3] for r in rows]
        d = paired_difference(kw, la, [r[1] for r in rows])
        print(
            f"{place} ({len(rows)}): keywords {statistics.mean(kw):.3f} (deal rate {statistics.mean(r[4] for r in rows):.2f})"
            f"  {args.teacher} {statistics.mean(la):.3f} (deal rate {statistics.mean(r[5] for r in rows):.2f})"
            f"  {args.teacher} - keywords {d.mean:+.3f} [{d.low:+.3f}, {d.high:+.3f}]"
        )
        for persona in sorted({r[0] for r in rows}):
            sub = [r for r in rows if r[0] == persona]
            print(f"  {persona:<18} n={len(sub):4d}  {statistics.mean(r[3] - r[2] for r in sub):+.3f}")


if __name__ == "__main__":
    main()
