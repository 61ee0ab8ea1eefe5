"""GRPO steps per hour: whole assisted negotiations (before) against decision rollouts (after).

    python benchmarks/decision_steps.py --steps 2                # both arms, the cpu profile
    python benchmarks/decision_steps.py --steps 2 --base local/tiny-random-gemma

Each arm is one ``negotiator train`` run of ``--steps`` steps from the same base, seed, buyer
pool and scenario seeds, one after the other in this process's machine:

* ``assisted``: the training default before the decision menu (``boulware?candidates=3``: the
  model chooses among equal-worth offers and writes the message; 128 tokens a turn).
* ``decisions``: the decision seller (``responsive?menu=moves&words=strategy``): the model
  chooses the move in the compact decision view and writes no words (24 tokens a turn).

It prints each arm's median step time, steps per hour and tokens per step, and the ratio.
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
        "median_step_s": round(step_s, 1),
        "steps_per_hour": round(3600 / step_s, 1),
        "seq_tokens_per_step": round(statistics.mean(s["env_tokens"] + s["seller_tokens"] for s in steps)),
        "generated_tokens_per_step": round(statistics.mean(s["generated_tokens"] for s in steps)),
        "generate_s": round(statistics.median(s["generate_s"] for s in steps), 1),
        "optimize_s": round(statistics.median(s["optimize_s"] for s in steps), 1),
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
    print(f"decisions / assisted, steps per hour: {rows[1]['steps_per_hour'] / rows[0]['steps_per_hour']:.1f}x")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
