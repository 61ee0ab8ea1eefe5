"""Seller quality: the assisted LLM seller against the rule it is built on and the pure LLM policy.

Every arm plays the identical held-out negotiations (shards of the heldout suite), and every
comparison is paired on them, with a 95% bootstrap CI clustered by scenario and a sign-flip
p-value. It prints, per arm and side by side:

* seller score, deal rate, invalid-answer rate;
* seller offers before the last round within 0.01 utility of the floor (what a probing
  buyer would learn the floor from);
* seller messages that state a value their terms do not hold: corrected by the guard
  (``message_corrected``), and left after the guard (checked again, must be 0);
* paired differences: assisted - rule, assisted - pure, trained - assisted (if given), overall,
  per buyer tactic and per persona; and the issue's targets, met or not.

Arms are ``negotiator eval`` runs under ``--root`` (one folder per arm and shard); missing
ones are run first (``--no-run`` only reads). The embedded 270M plays 105 negotiations in
about 25 minutes here, so the default (shards 0 and 1 of 11, three arms) takes hours the first
time and seconds afterwards.

    python benchmarks/seller_quality.py                                  # shards 0,1; the default arms
    python benchmarks/seller_quality.py --arm trained=local/gemma-3-270m-seller --no-run
    python benchmarks/seller_quality.py --only assisted,base3,trained --arm 'assisted=rule/boulware?noise=0' \
        --arm 'base3=local/gemma-3-270m?candidates=3' --arm trained=local/runs/assisted --pair base3:trained
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

from negotiator.actions import MakeOffer
from negotiator.llm.consistency import Checker
from negotiator.runtime.log import iter_episodes

DEFAULT_ARMS = {
    "assisted": "local/gemma-3-270m",
    "pure": "local/gemma-3-270m?strategy=none",
    "rule": "rule/boulware",
}
NEAR_FLOOR = 0.01


def run_arm(root: Path, name: str, spec: str, shard: int, of: int, concurrency: int, timeout: float) -> Path:
    out = root / name / f"shard{shard}of{of}"
    cmd = [
        sys.executable,
        "-m",
        "negotiator",
        "eval",
        "--suite",
        "heldout",
        "--shard",
        f"{shard}/{of}",
        "--seller",
        spec,
        "--out",
        str(out),
        "--concurrency",
        str(concurrency),
        "--timeout",
        str(timeout),
        "--quiet",
    ]
    print("$", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return out


def load(dirs: list[Path]) -> dict[str, object]:
    eps = {}
    for d in dirs:
        for ep in iter_episodes(d / "episodes.jsonl"):
            eps[ep.labels.get("negotiation", ep.episode_id)] = ep
    return eps


def offer_stats(eps) -> dict[str, float]:
    offers = near = corrected = left = messages = 0
    for ep in eps:
        sc = ep.scenario
        floor = sc.seller_limits.utility_floor(sc.seller)
        checker = Checker(sc.space, sc.currency)
        standing = None
        for t in ep.turns:
            if t.party == "buyer":
                if isinstance(t.action, MakeOffer):
                    standing = t.action.terms
                continue
            if t.guard and "message_corrected" in t.guard.kinds:
                corrected += 1
            terms = (
                t.action.terms if isinstance(t.action, MakeOffer) else standing if t.action.action == "accept" else None
            )
            if terms is not None and t.action.message:
                messages += 1
                theirs = standing if isinstance(t.action, MakeOffer) else None
                left += checker.correct(t.action.message, terms, theirs)[1] > 0
            if isinstance(t.action, MakeOffer) and t.index < sc.max_turns - 2:
                offers += 1
                near += sc.seller.utility(t.action.terms) - floor <= NEAR_FLOOR
    return {
        "offers": offers,
        "near_floor": near / offers if offers else 0.0,
        "corrected": corrected,
        "contradicting_after_guard": left,
        "messages": messages,
    }


def summary_line(name: str, eps: list) -> str:
    from evals.summary import block

    b = block(eps)
    st = offer_stats(eps)
    ci = b.get("seller_score_ci") or [float("nan")] * 2
    return (
        f"{name:>10}  n={b['n']:4d}  score {b['seller_score']:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]  deal {b['deal_rate']:.2f}  "
        f"invalid {b.get('invalid_rate', 0):.3f}  near-floor offers {st['near_floor']:.1%} of {st['offers']}  "
        f"messages corrected {st['corrected']}  contradicting after the guard {st['contradicting_after_guard']}"
    )


def paired(a: dict, b: dict, key=None):
    from evals.stats import paired_difference
    from evals.summary import scenario_of

    common = sorted(k for k in set(a) & set(b) if a[k].outcome.ended_by != "error" and b[k].outcome.ended_by != "error")
    groups = defaultdict(list)
    for k in common:
        groups[key(a[k]) if key else "all"].append(k)
    out = {}
    for g, ks in sorted(groups.items()):
        d = paired_difference(
            [a[k].metrics.seller_score for k in ks],
            [b[k].metrics.seller_score for k in ks],
            [scenario_of(a[k]) for k in ks],
        )
        deal = sum(b[k].outcome.deal for k in ks) / len(ks) - sum(a[k].outcome.deal for k in ks) / len(ks)
        out[g] = (d, deal, len(ks))
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--shards", default="0,1", help="heldout shards (of --of) to play, comma-separated")
    p.add_argument("--of", type=int, default=11)
    p.add_argument("--root", type=Path, default=Path("runs/quality"))
    p.add_argument("--arm", action="append", default=[], help="NAME=SPEC, an extra arm (e.g. trained=local/RUN/merged)")
    p.add_argument("--only", help="comma-separated arm names to use (default: all)")
    p.add_argument("--concurrency", type=int, default=16)
    p.add_argument("--timeout", type=float, default=900)
    p.add_argument("--no-run", action="store_true", help="only read the runs already under --root")
    p.add_argument("--pair", action="append", default=[], help="A:B, also show B - A (e.g. base3:trained)")
    args = p.parse_args(argv)
    from evals.summary import buyer_of, persona_of

    arms = dict(DEFAULT_ARMS)
    for item in args.arm:
        name, _, spec = item.partition("=")
        arms[name] = spec
    if args.only:
        arms = {k: v for k, v in arms.items() if k in args.only.split(",")}
    shards = [int(s) for s in args.shards.split(",")]
    dirs: dict[str, list[Path]] = {}
    for name, spec in arms.items():
        for s in shards:
            d = args.root / name / f"shard{s}of{args.of}"
            if not args.no_run:
                d = run_arm(args.root, name, spec, s, args.of, args.concurrency, args.timeout)
            if (d / "episodes.jsonl").exists():
                dirs.setdefault(name, []).append(d)
    episodes = {name: load(ds) for name, ds in dirs.items()}
    print(f"\nheldout shards {args.shards} of {args.of}; arms: " + ", ".join(f"{k}={arms[k]}" for k in episodes))
    for name, eps in episodes.items():
        print(summary_line(name, list(eps.values())))

    def show(a: str, b: str, target: float | None = None, what: str = "") -> None:
        if a not in episodes or b not in episodes:
            return
        print(f"\n{b} - {a}:")
        for label, key in (("overall", None), ("by buyer", buyer_of), ("by persona", persona_of)):
            res = paired(episodes[a], episodes[b], key)
            for g, (d, deal, n) in res.items():
                name = "all" if key is None else f"  {g}"
                print(
                    f"  {label if key is None else '':>8} {name:<24} n={n:4d}  {d.mean:+.3f} [{d.low:+.3f}, {d.high:+.3f}]  "
                    f"p={d.p_value:.3g}  deal rate {deal:+.2f}"
                )
        if target is not None:
            d, deal, _ = paired(episodes[a], episodes[b])["all"]
            value = d.low if what == "low" else d.mean
            print(
                f"  target: {'CI lower bound' if what == 'low' else 'difference'} >= {target:+.2f}: "
                f"{value:+.3f} -> {'met' if value >= target else 'NOT met'}"
            )

    show("rule", "assisted", -0.02, "low")
    show("pure", "assisted", 0.20, "mean")
    for extra in arms:
        if extra not in DEFAULT_ARMS:
            show("assisted", extra)
    for pair in args.pair:
        a, _, b = pair.partition(":")
        show(a, b)
    if "assisted" in episodes and "rule" in episodes:
        d, deal, _ = paired(episodes["rule"], episodes["assisted"])["all"]
        print(f"\ndeal rate, assisted - rule: {deal:+.3f} (target >= -0.05: {'met' if deal >= -0.05 else 'NOT met'})")
    if "assisted" in episodes:
        st = offer_stats(episodes["assisted"].values())
        print(
            f"assisted offers near the floor before the last round: {st['near_floor']:.1%} (target <= 5%: "
            f"{'met' if st['near_floor'] <= 0.05 else 'NOT met'}); contradicting messages after the guard: "
            f"{st['contradicting_after_guard']} (target 0), corrected by the guard: {st['corrected']}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
