"""The local server's prefix cache, measured side by side: ``negotiator eval`` with it off and on.

Both arms play the same negotiations (a shard of a suite) with the default seller, the
embedded Gemma 3 270M assisted by its strategy, each in its own process and local server;
only ``NEGOTIATOR_PREFIX_CACHE_TOKENS`` differs (0: every turn reads the whole chat again).
It prints each arm's wall time and seller tokens, the ratio of wall times, and how many
negotiations came out identical move for move (seeded sampling: both arms draw the same
random numbers, so they differ only where reused keys and values round differently and a
near-tied token flips).

    python benchmarks/prefix_cache.py [--suite quick] [--shard 0/3] [--concurrency 8]

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

from negotiator.runtime.log import read_episodes

SELLER = "local/gemma-3-270m"


def run_arm(out: Path, cache_tokens: int, args) -> tuple[float, list]:
    cmd = [
        sys.executable,
        "-m",
        "negotiator",
        "eval",
        "--seller",
        SELLER,
        "--suite",
        args.suite,
        "--shard",
        args.shard,
        "--concurrency",
        str(args.concurrency),
        "--timeout",
        str(args.timeout),
        "--quiet",
        "--out",
        str(out),
    ]
    env = {**os.environ, "NEGOTIATOR_PREFIX_CACHE_TOKENS": str(cache_tokens)}
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}")
    return wall, read_episodes(out / "episodes.jsonl")


def moves(episode) -> list:
    return [(t.party, t.action.model_dump(mode="json")) for t in episode.turns]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--suite", default="quick")
    p.add_argument("--shard", default="0/3")
    p.add_argument("--concurrency", type=int, default=8)
    p.add_argument("--timeout", type=float, default=3000)
    p.add_argument("--cache-tokens", type=int, default=32_768)
    args = p.parse_args()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        arms = {}
        for name, tokens in (("off", 0), ("on", args.cache_tokens)):
            wall, episodes = run_arm(Path(tmp) / name, tokens, args)
            turns = [t for e in episodes for t in e.turns if t.party == "seller"]
            arms[name] = (wall, {e.episode_id: e for e in episodes})
            print(
                f"cache {name:3}: {len(episodes)} negotiations, {len(turns)} seller turns, "
                f"{sum(t.usage.prompt_tokens for t in turns)} prompt tokens, wall {wall:.0f} s",
                flush=True,
            )
    (off_wall, off), (on_wall, on) = arms["off"], arms["on"]
    same = sum(moves(off[k]) == moves(on[k]) for k in off if k in on)
    print(f"wall time on/off: {on_wall / off_wall:.2f}  (off {off_wall:.0f} s, on {on_wall:.0f} s)")
    print(f"negotiations identical move for move: {same}/{len(off)}")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
