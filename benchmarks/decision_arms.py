"""Issue 29's comparison: the decision seller, trained and not, beside the rule sellers, paired.

    python benchmarks/decision_arms.py --out runs/decisions \
        --arm "trained=local/runs/decide?strategy=responsive&menu=moves&words=strategy&temperature=0"
    python benchmarks/decision_arms.py --out runs/decisions --places talk --arms boulware,keywords

Every arm plays the same negotiations through ``negotiator eval`` (so a run folder of each arm
and place stays behind, resumable, readable by ``negotiator report``):

* ``talk``: talk shard 0 of 3 (160 negotiations, each of the 8 talking buyers 20 times);
* ``heldout``: held-out shards 0 and 1 of 11 (``--shard 0/11``, ``--shard 1/11``);
* ``holdout``: the quick suite against the hold-out buyer (``rule/holdout``).

The default arms: ``boulware`` (``rule/boulware``, the pinned baseline), ``responsive``
(``rule/responsive?reader=none``), ``keywords`` (``rule/responsive``: the keyword reader),
``default`` (``local/gemma-3-270m``: the default seller, the model writing the words),
``base`` (the untrained 270M deciding: ``local/gemma-3-270m?menu=moves&words=strategy``),
plus any ``--arm NAME=SPEC``. Give a trained arm ``temperature=0``: the default seller chooses
greedily, and a trained default would too; without it a local model samples its move
(temperature 1), which cost the warm-started student 0.037 on ``talk`` (docs/decisions.md).

It prints each arm's score, deal rate and deals below the floor per place, and the paired
differences (95% CI clustered by scenario, sign-flip p) of ``--pairs`` (default: each trained
arm against boulware, keywords and default, and base).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evals.arms import compare, load_arms, negotiation_key  # noqa: E402

ARMS = {
    "boulware": "rule/boulware",
    "responsive": "rule/responsive?reader=none",
    "keywords": "rule/responsive",
    "default": "local/gemma-3-270m",
    "base": "local/gemma-3-270m?menu=moves&words=strategy",
}
PLACES = {
    "talk": [["--suite", "talk", "--shard", "0/3"]],  # 160 negotiations, every talker 20 times (3 is prime to 8)
    "heldout": [["--suite", "heldout", "--shard", "0/11"], ["--suite", "heldout", "--shard", "1/11"]],
    "holdout": [["--suite", "quick", "--buyer", "rule/holdout"]],
}


def play(name: str, spec: str, place: str, out: Path) -> list[Path]:
    """The arm's run folders on ``place``, one per shard (a finished one is left as it is)."""
    folders = []
    for i, args in enumerate(PLACES[place]):
        folder = out / place / name / str(i)
        if not (folder / "summary.json").exists():
            cmd = [sys.executable, "-m", "negotiator", "eval", "--seller", spec, *args, "--out", str(folder)]
            done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            if done.returncode != 0:
                raise SystemExit(f"{name} on {place} failed: {done.stderr.strip().splitlines()[-1]}")
        folders.append(folder)
    return folders


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, required=True, help="folder for the runs (resumable)")
    p.add_argument("--arm", action="append", default=[], help="NAME=SPEC, added to the default arms")
    p.add_argument("--arms", help="comma-separated arm names to play (default: all)")
    p.add_argument("--places", default="talk,heldout,holdout", help="comma-separated: talk, heldout, holdout")
    p.add_argument("--pairs", help="comma-separated B-A pairs, e.g. trained-keywords (default: see above)")
    args = p.parse_args(argv)
    arms = dict(ARMS)
    for item in args.arm:
        name, _, spec = item.partition("=")
        arms[name] = spec
    if args.arms:
        arms = {k: arms[k] for k in args.arms.split(",")}
    added = [n for n in arms if n not in ARMS]
    if args.pairs:
        pairs = [tuple(x.split("-", 1)) for x in args.pairs.split(",")]
    else:
        pairs = [(t, b) for t in added for b in ("boulware", "keywords", "default", "base") if b in arms]
    for place in args.places.split(","):
        loaded = {name: load_arms(play(name, spec, place, args.out))[0] for name, spec in arms.items()}
        common = set.intersection(*({negotiation_key(e) for e in a.episodes} for a in loaded.values()))
        print(f"\n{place}: the {len(common)} negotiations every arm played")
        print("arm | n | seller score | deal rate | below floor")
        for name, arm in loaded.items():
            eps = [e for e in arm.episodes if e.outcome.ended_by != "error" and negotiation_key(e) in common]
            score = sum(e.metrics.seller_score for e in eps) / len(eps)
            deal = sum(e.metrics.deal for e in eps) / len(eps)
            below = sum(
                1 for e in eps if e.metrics.deal and e.metrics.seller_utility < e.metrics.seller_reservation - 1e-9
            )
            print(f"{name} | {len(eps)} | {score:.3f} | {deal:.2f} | {below}")
        for b, a in pairs:
            if a in loaded and b in loaded:
                d = compare(loaded[a], loaded[b])["overall"]
                print(
                    f"{b} - {a} | {d['mean']:+.3f} [{d['low']:+.3f}, {d['high']:+.3f}] | p {d['p_value']:.3g} | n {d['n']}"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
