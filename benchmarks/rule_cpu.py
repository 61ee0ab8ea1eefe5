"""CPU seconds of rule-vs-rule play through the CLI, this version beside another, interleaved.

    git archive 3adbc04 | tar -x -C /tmp/before          # the version to compare with
    python benchmarks/rule_cpu.py --baseline /tmp/before  # rule/boulware and rule/responsive, 3 rounds

Each round runs ``negotiator eval --suite heldout --seller S --workers W`` (1,152 negotiations,
start-up, plan, log and summary included) once per version and seller, in turn, so a shared
machine's load moves both versions alike. CPU seconds (user + system, the workers included)
move less with the load than wall time; the paired ratio per round, baseline over this
version, is printed with its median. The episodes the two versions log are compared too
(every field but timings and the creation time): a speed-up must not change a move.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "NEGOTIATOR_BLOCK_REMOTE": "1", "OMP_NUM_THREADS": "1"}
ENV.pop("OTEL_TRACES_EXPORTER", None)


def run(source: Path, seller: str, workers: int, out: Path) -> float:
    """CPU seconds of one eval of the held-out suite with ``source`` first on the path."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    cmd = [sys.executable, "-m", "negotiator", "eval", "--suite", "heldout", "--seller", seller]
    cmd += ["--workers", str(workers), "--out", str(out), "--quiet"]
    # Run outside the repository: ``python -m`` puts the working directory first on sys.path,
    # ahead of PYTHONPATH, so run from the checkout both "versions" would be this one.
    r = subprocess.run(cmd, env={**ENV, "PYTHONPATH": str(source)}, capture_output=True, text=True, cwd=out.parent)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stderr[-2000:]}")
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def check_source(source: Path, cwd: Path) -> None:
    """Stop unless ``source`` is the code a run with it on PYTHONPATH imports."""
    probe = "import negotiator, evals; print(negotiator.__file__); print(evals.__file__)"
    r = subprocess.run(
        [sys.executable, "-c", probe], env={**ENV, "PYTHONPATH": str(source)}, capture_output=True, text=True, cwd=cwd
    )
    for line in r.stdout.split():
        if not Path(line).resolve().is_relative_to(source.resolve()):
            raise SystemExit(f"with PYTHONPATH={source}, {line} is imported: not the version to time")


def digest(log: Path) -> str:
    """The episodes, timings and creation times left out, in episode-id order."""
    eps = []
    for line in log.read_text().splitlines():
        e = json.loads(line)
        e.pop("created_at", None)
        e["provenance"].pop("git_commit", None)
        e["metrics"].pop("wall_time_s"), e["metrics"].pop("seller_latency_s")
        for t in e["turns"]:
            t.pop("latency_s")
        eps.append(e)
    eps.sort(key=lambda e: e["episode_id"])
    return hashlib.sha256(json.dumps(eps, sort_keys=True).encode()).hexdigest()[:16]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--baseline", type=Path, required=True, help="the source tree of another version (git archive)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workers", type=int, default=1, help="processes per eval (1: the CPU of one process)")
    ap.add_argument("--seller", action="append", help="rule sellers (default: rule/boulware and rule/responsive)")
    args = ap.parse_args()
    sellers = args.seller or ["rule/boulware", "rule/responsive"]
    versions = {"this": ROOT, "baseline": args.baseline.resolve()}
    with open("/proc/loadavg") as f:
        load_before = f.read().split()[0]
    work = Path(tempfile.mkdtemp(prefix="negotiator-rule-cpu-"))
    cpu: dict[tuple[str, str], list[float]] = {(s, v): [] for s in sellers for v in versions}
    digests: dict[tuple[str, str], set[str]] = {(s, v): set() for s in sellers for v in versions}
    for source in versions.values():
        check_source(source, work)
    try:
        for rnd in range(args.rounds):
            for seller in sellers:
                order = list(versions) if rnd % 2 == 0 else list(reversed(versions))
                for v in order:
                    out = work / f"{v}-{rnd}"
                    cpu[(seller, v)].append(run(versions[v], seller, args.workers, out))
                    digests[(seller, v)].add(digest(out / "episodes.jsonl"))
                    shutil.rmtree(out)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    with open("/proc/loadavg") as f:
        load_after = f.read().split()[0]
    print(
        f"{os.cpu_count()} CPUs, load average {load_before} before, {load_after} after; "
        f"{args.rounds} rounds, --workers {args.workers}, 1,152 negotiations per eval"
    )
    print(f"{'seller':<18} {'this CPU s':>11} {'baseline CPU s':>15} {'baseline/this (per round)':>28} {'same':>5}")
    for seller in sellers:
        mine, base = cpu[(seller, "this")], cpu[(seller, "baseline")]
        ratios = [b / m for b, m in zip(base, mine, strict=True)]
        same = len(digests[(seller, "this")] | digests[(seller, "baseline")]) == 1
        print(
            f"{seller:<18} {statistics.median(mine):11.2f} {statistics.median(base):15.2f} "
            f"{statistics.median(ratios):6.2f}x ({', '.join(f'{r:.2f}' for r in ratios)}) {'yes' if same else 'NO':>5}"
        )


if __name__ == "__main__":
    main()
