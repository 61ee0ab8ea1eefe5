"""The local decoder at two versions of the code, measured side by side: ``negotiator eval`` on
the same negotiations from a git worktree of ``--ref`` and from this checkout.

A change to the decode loop (batching, packing, attention) must keep every token and should
cost less time. Both arms play the same seeded negotiations with the same seller, each in its
own process and local server, one after the other; the script prints each arm's wall time,
the ratio, and how many episodes came out identical (moves, messages and token counts; only
timings may differ).

    python benchmarks/decoder_versions.py --ref c0e857e~1 [--seller 'local/gemma-3-270m?strategy=none']
        [--suite heldout] [--shard 1/11] [--limit 6] [--concurrency 6]

Run it on a quiet machine: it reports the load average it ran under.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from negotiator.runtime.log import played

ROOT = Path(__file__).resolve().parent.parent


def run_arm(source: Path, out: Path, args) -> float:
    """Wall seconds of one eval whose ``negotiator`` package (and local server) is ``source``'s."""
    cmd = [
        sys.executable,
        "-m",
        "negotiator",
        "eval",
        "--seller",
        args.seller,
        "--suite",
        args.suite,
        "--shard",
        args.shard,
        "--limit",
        str(args.limit),
        "--concurrency",
        str(args.concurrency),
        "--timeout",
        str(args.timeout),
        "--quiet",
        "--out",
        str(out),
    ]
    env = {**os.environ, "PYTHONPATH": str(source)}  # the server subprocess inherits it
    t0 = time.perf_counter()
    r = subprocess.run(cmd, cwd=source, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    if r.returncode != 0:
        raise SystemExit(
            f"{' '.join(cmd)} (in {source}) failed ({r.returncode}):\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}"
        )
    return wall


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ref", required=True, help="the git ref to compare this checkout with")
    p.add_argument("--seller", default="local/gemma-3-270m?strategy=none")
    p.add_argument("--suite", default="heldout")
    p.add_argument("--shard", default="1/11")
    p.add_argument("--limit", type=int, default=6)
    p.add_argument("--concurrency", type=int, default=6)
    p.add_argument("--timeout", type=float, default=3000)
    args = p.parse_args()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        worktree = tmp / "ref"
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(worktree), args.ref], check=True
        )
        try:
            walls = {}
            for name, source in ((args.ref, worktree), ("this checkout", ROOT)):
                walls[name] = run_arm(source, tmp / f"out-{len(walls)}", args)
                print(f"{name}: wall {walls[name]:.1f} s", flush=True)
            before, after = played(tmp / "out-0" / "episodes.jsonl"), played(tmp / "out-1" / "episodes.jsonl")
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(worktree)], check=False)
    ref_wall, new_wall = walls.values()
    same = sum(before[k] == after.get(k) for k in before)
    print(f"wall time this checkout / {args.ref}: {new_wall / ref_wall:.2f}  ({ref_wall:.0f} s -> {new_wall:.0f} s)")
    print(f"episodes identical: {same}/{len(before)}")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
