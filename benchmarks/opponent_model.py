"""The opponent model's curve: how well it knows the buyer after n buyer offers, per buyer kind.

    python benchmarks/opponent_model.py                        # the held-out negotiations, both models
    python benchmarks/opponent_model.py --seller rule/boulware # the transcripts a Boulware seller makes

The seller plays the held-out suite's 576 persona negotiations against three kinds of
buyer (each with the persona's utility):

* **conceding**: each persona's own time-dependent tactic (``rule/persona``; the hardliner
  and threatening personas left out), which bids nearest the seller's latest offer;
* **mirroring**: ``rule/tit_for_tat``, which also bids nearest the seller's offer;
* **random**: a linear concession target, each offer drawn at random among the buyer's
  outcomes at that target (seeded): no echo of the seller's values at all.

Both opponent models then read the same transcripts, after 0, 1, ... 9 buyer offers: the
frequency model of HardHeaded (``FrequencyModel``: learns from the values the buyer offers)
and the choice model (``ChoiceModel``: learns from what the buyer chose against what it was
offered). For each, the share of negotiations in which it names the buyer's heaviest issue
and the L1 error of its issue weights (0 to 2), over the negotiations that lasted that long.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evals.runner import RunOptions, make_buyer, plan  # noqa: E402
from evals.suites import get_suite  # noqa: E402
from negotiator.actions import Accept, MakeOffer  # noqa: E402
from negotiator.buyers.personas import get_persona  # noqa: E402
from negotiator.party import PartyView, TurnRecord  # noqa: E402
from negotiator.runtime import make_party, run_negotiation  # noqa: E402
from negotiator.runtime.episode import Episode  # noqa: E402
from negotiator.strategy import ChoiceModel, FrequencyModel, OutcomeIndex  # noqa: E402
from negotiator.strategy.schedule import target_utility  # noqa: E402

MAX_SEEN = 9


class RandomBuyer:
    """A linear concession target; each offer a random outcome of the buyer's at that target."""

    spec, family = "bench/random", "bench"

    def __init__(self, seed: int):
        self.seed = seed

    async def act(self, view: PartyView) -> TurnRecord:
        rng = random.Random(f"{self.seed}:{view.scenario.id}:{view.turn}")
        idx = OutcomeIndex.shared(view.space, view.preferences, view.limits)
        floor = view.limits.utility_floor(view.preferences)
        target = target_utility(view.progress, floor, 1.0, idx.u_max)
        standing = view.standing_offer
        if standing is not None and view.utility(standing) >= target:
            action: Accept | MakeOffer = Accept()
        else:
            band = idx.band(target, 0.05) or [idx.ideal]
            action = MakeOffer(terms=dict(band[rng.randrange(len(band))]))
        return TurnRecord(index=view.turn, party="buyer", action=action)

    async def aclose(self) -> None:
        return None


def kind_of(buyer: str, persona: str) -> str | None:
    if buyer == "rule/tit_for_tat":
        return "mirroring"
    if buyer == "bench/random":
        return "random"
    tactic = get_persona(persona).tactic
    return None if tactic.startswith(("hardliner", "threatener")) else "conceding"


async def transcripts(seller: str) -> list[tuple[str, Episode]]:
    suite = get_suite("heldout")
    out: list[tuple[str, Episode]] = []
    for job in plan(suite, seller):  # rule/persona and rule/tit_for_tat
        kind = kind_of(job.buyer, job.persona)
        if kind is None:
            continue
        ep = await run_negotiation(
            make_party(seller, "seller", seed=job.seed), make_buyer(job, RunOptions()), job.scenario, job.seed
        )
        out.append((kind, ep))
    for job in plan(suite, seller, ["rule/tit_for_tat"]):  # the same negotiations, a random buyer
        ep = await run_negotiation(
            make_party(seller, "seller", seed=job.seed), RandomBuyer(job.seed), job.scenario, job.seed
        )
        out.append(("random", ep))
    return out


def exchanges(ep: Episode) -> list[tuple[dict | None, dict]]:
    """Each buyer offer with the seller offer it answered."""
    last, out = None, []
    for t in ep.turns:
        if isinstance(t.action, MakeOffer):
            if t.party == "seller":
                last = t.action.terms
            else:
                out.append((last, t.action.terms))
    return out


def curves(eps: list[tuple[str, Episode]]) -> dict:
    named: dict = defaultdict(list)
    error: dict = defaultdict(list)
    for kind, ep in eps:
        sc = ep.scenario
        truth = sc.buyer.weights
        heaviest = max(truth, key=lambda k: truth[k])
        ex = exchanges(ep)
        for n in range(min(len(ex), MAX_SEEN) + 1):
            for name, model in (
                ("frequency", FrequencyModel.learn(sc.space, sc.seller, [b for _, b in ex[:n]])),
                ("choice", ChoiceModel.learn(sc.space, sc.seller, ex[:n])),
            ):
                named[(kind, name, n)].append(model.heaviest() == heaviest)
                error[(kind, name, n)].append(sum(abs(model.weights[k] - truth[k]) for k in truth))
    return {"named": named, "error": error}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seller", default="rule/responsive", help="the seller whose negotiations are read")
    args = p.parse_args(argv)
    t0 = time.perf_counter()
    eps = asyncio.run(transcripts(args.seller))
    res = curves(eps)
    print(f"seller {args.seller}: {len(eps)} negotiations ({time.perf_counter() - t0:.0f} s)")
    print("share naming the buyer's heaviest issue / L1 error of the weights, after n buyer offers (negotiations)")
    header = " ".join(f"{n:>16}" for n in range(MAX_SEEN + 1))
    print(f"{'buyers':<10} {'model':<10} {header}")
    for kind in ("conceding", "mirroring", "random"):
        for name in ("frequency", "choice"):
            cells = []
            for n in range(MAX_SEEN + 1):
                hits = res["named"].get((kind, name, n), [])
                errs = res["error"].get((kind, name, n), [])
                cells.append(f"{sum(hits) / len(hits):.2f}/{sum(errs) / len(errs):.2f} ({len(hits)})" if hits else "-")
            print(f"{kind:<10} {name:<10} " + " ".join(f"{c:>16}" for c in cells))
    for kind in ("conceding", "mirroring", "random"):
        one = res["named"].get((kind, "choice", 1), [])
        five = res["named"].get((kind, "choice", 5), [])
        if one and five:
            a, b = sum(one) / len(one), sum(five) / len(five)
            print(
                f"target, {kind}: named after 5 offers ({b:.2f}) > after 1 ({a:.2f}): {'met' if b > a else 'NOT met'}"
                + (f"; >= 0.8 after 5: {'met' if b >= 0.8 else 'NOT met'}" if kind == "conceding" else "")
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
