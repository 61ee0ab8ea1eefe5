"""GRPO steps per hour: whole assisted negotiations (before) against decision rollouts (after).

    python benchmarks/decision_steps.py --steps 2                # both arms, the cpu profile
    python benchmarks/decision_steps.py --steps 2 --base local/tiny-random-gemma

Each arm is one ``negotiator train`` run of ``--steps`` steps from the same base, seed, buyer
pool and scenario seeds, one after the other in this process's machine:

* ``assisted``: the training default before the decision menu (``boulware?candidates=3``: the
  model chooses among equal-worth offers and writes the message; 128 tokens a turn).
* ``decisions``: the decision seller (``responsive?menu=moves&words=strategy``): the model
  chooses the move in the compact decision view and writes no words (24 tokens a turn).

It prints each arm's median step time, steps per hour and tokens per step, the ratio, and what
the optimisation's cost per sequence token says about the issue's goal (10x the assisted arm's
steps per hour): the most sequence tokens a step could hold at that cost, were generation free.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ARMS = {
    "assisted": ("boulware?candidates=3", 128),
    "decisions": ("responsive?menu=moves&words=strategy", 24),
}


def _sequence(step: dict) -> int:
    """Every token of the step's sequences: first prompts, environment and seller tokens."""
    return step.get("prompt_tokens", 0) + step["env_tokens"] + step["seller_tokens"]


def run_arm(name: str, args, out: Path) -> dict:
    strategy, max_tokens = ARMS[name]
    cmd = [
        sys.executable, "-m", "negotiator", "train", "--out", str(out / name), "--base", args.base,
        "--strategy", strategy, "--max-tokens", str(max_tokens), "--steps", str(args.steps),
        "--seed", str(args.seed), "--quiet",
    ]  # fmt: skip
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    steps = [json.loads(line) for line in (out / name / "metrics.jsonl").read_text().splitlines()]
    step_s = statistics.median(s["step_s"] for s in steps)
    return {
        "arm": name,
        "strategy": strategy,
        "steps": len(steps),
        "negotiations_per_step": steps[0]["episodes"],
        "median_step_s": round(step_s, 1),
        "steps_per_hour": round(3600 / step_s, 1),
        "seq_tokens_per_step": round(statistics.mean(_sequence(s) for s in steps)),
        "generated_tokens_per_step": round(statistics.mean(s["generated_tokens"] for s in steps)),
        "generate_s": round(statistics.median(s["generate_s"] for s in steps), 1),
        "optimize_s": round(statistics.median(s["optimize_s"] for s in steps), 1),
        "optimize_ms_per_token": round(1000 * statistics.median(s["optimize_s"] / _sequence(s) for s in steps), 2),
        "wall_s": round(wall, 1),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--base", default="local/gemma-3-270m")
    p.add_argument("--steps", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", type=Path, help="also write the rows here")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        rows = [run_arm(name, args, Path(tmp)) for name in ARMS]
    keys = list(rows[0])
    print(" | ".join(keys))
    for r in rows:
        print(" | ".join(str(r[k]) for k in keys))
    assisted, decisions = rows
    print(f"decisions / assisted, steps per hour: {decisions['steps_per_hour'] / assisted['steps_per_hour']:.1f}x")
    # The optimisation reads every token of the sequence (forward through all layers, backward
    # through the adapted ones), so its cost per token bounds the sequence a 10x step can hold.
    goal_s = assisted["median_step_s"] / 10
    room = goal_s * 1000 / decisions["optimize_ms_per_token"]
    print(
        f"10x the assisted arm is a step of {goal_s:.1f} s: at {decisions['optimize_ms_per_token']} ms of optimisation "
        f"per sequence token, at most {room:,.0f} tokens a step ({room / decisions['negotiations_per_step']:,.0f} per negotiation of the step's {decisions['negotiations_per_step']}) "
        f"even with free generation; the decision arm's step holds {decisions['seq_tokens_per_step']:,}"
    )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
