"""The guard's redaction on the labelled corpus: this tree against an earlier commit, side by side.

For every class of ``tests/disclosure_corpus.py``: the disclosures each secrecy check removes
and the ordinary messages it changes, for this tree's ``negotiator.llm.secrecy`` and for the one
at REV (its ``secrecy.py``, and ``numerals.py`` where it has one, loaded beside this tree's; the
domain they read is this tree's). Then the time each takes per message (``Secrecy.redact``, what
the guard runs on every seller message), every message timed on both, interleaved, with the
caches of the normalised text cleared before each call as for a message never seen before.

    python benchmarks/redaction_corpus.py [--against 8aea479] [--rounds 3]
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from disclosure_corpus import Case, disclosures, ordinary  # type: ignore[import-not-found]  # noqa: E402

from negotiator.llm import numerals, secrecy  # noqa: E402


def _load(rev: str, folder: Path) -> ModuleType:
    """``negotiator/llm/secrecy.py`` as it was at ``rev``, importable beside this tree's."""

    def show(path: str) -> str | None:
        done = subprocess.run(["git", "show", f"{rev}:{path}"], cwd=ROOT, capture_output=True, text=True)
        return done.stdout if done.returncode == 0 else None

    def module(name: str, source: str) -> ModuleType:
        path = folder / f"{name.rsplit('.', 1)[1]}.py"
        path.write_text(source)
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
        return mod

    source = show("negotiator/llm/secrecy.py")
    if source is None:
        raise SystemExit(f"error: no negotiator/llm/secrecy.py at {rev}; give a commit of this repository")
    old_numerals = show("negotiator/llm/numerals.py")
    if old_numerals is not None:
        module("negotiator.llm._numerals_before", old_numerals)
        source = source.replace("from .numerals import", "from ._numerals_before import")
    return module("negotiator.llm._secrecy_before", source)


def _clear(mod: ModuleType) -> None:
    """Forget the normalised sentences: the guard sees each message once."""
    for name in ("normalize", "forms"):
        fn = getattr(mod, name, None)
        if hasattr(fn, "cache_clear"):
            fn.cache_clear()  # type: ignore[union-attr]


def _rates(cases: list[Case], hit) -> dict[str, tuple[int, int]]:
    out: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for c in cases:
        out[c.cls][0] += bool(hit(c))
        out[c.cls][1] += 1
    return {k: (a, n) for k, (a, n) in sorted(out.items())}


def _table(title: str, now: dict[str, tuple[int, int]], before: dict[str, tuple[int, int]], rev: str) -> None:
    print(f"\n{title}\n  {'class':36s} {'this tree':>16s} {rev:>16s}")
    for cls, (a, n) in now.items():
        b, _ = before[cls]
        print(f"  {cls:36s} {a:5d}/{n:<4d} {a / n:6.1%} {b:5d}/{n:<4d} {b / n:6.1%}")
    a, b, n = (sum(r[0] for r in now.values()), sum(r[0] for r in before.values()), sum(r[1] for r in now.values()))
    print(f"  {'all':36s} {a:5d}/{n:<4d} {a / n:6.1%} {b:5d}/{n:<4d} {b / n:6.1%}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--against", default="8aea479", help="the commit to compare with (default: 8aea479)")
    ap.add_argument("--rounds", type=int, default=3, help="timed passes over every message (default: 3)")
    args = ap.parse_args()
    if args.rounds < 1:
        raise SystemExit("error: --rounds must be at least 1")
    with tempfile.TemporaryDirectory() as d:
        old = _load(args.against, Path(d))
    d_cases, o_cases = disclosures(), ordinary()
    checks: dict[str, tuple] = {}
    for c in d_cases + o_cases:
        if c.scenario.id not in checks:
            sc = c.scenario
            args_ = (sc.seller, sc.seller_limits, sc.space)
            checks[sc.id] = (secrecy.Secrecy(*args_), old.Secrecy(*args_))

    def redacts(i: int):
        return lambda c: c.leak not in checks[c.scenario.id][i].redact(c.message, c.terms)

    def changes(i: int):
        return lambda c: checks[c.scenario.id][i].redact(c.message, c.terms) != c.message

    _table("disclosures caught, per class", _rates(d_cases, redacts(0)), _rates(d_cases, redacts(1)), args.against)
    _table(
        "ordinary messages changed, per class", _rates(o_cases, changes(0)), _rates(o_cases, changes(1)), args.against
    )

    cached = ([numerals], [old] + [m for m in [sys.modules.get("negotiator.llm._numerals_before")] if m is not None])
    # per message, the fastest of the rounds on each side: what the code costs, not what the machine's load adds
    times: dict[str, list[list[float]]] = {}
    for kind, cases in (("disclosures", d_cases), ("ordinary", o_cases)):
        best = [[float("inf")] * len(cases), [float("inf")] * len(cases)]
        for _ in range(args.rounds):
            for j, c in enumerate(cases):
                for i in (0, 1):
                    for mod in cached[i]:
                        _clear(mod)
                    check = checks[c.scenario.id][i]
                    t = time.perf_counter()
                    check.redact(c.message, c.terms)
                    best[i][j] = min(best[i][j], time.perf_counter() - t)
        times[kind] = best
    print(f"\ntime per message (Secrecy.redact, fresh caches; each the fastest of {args.rounds} interleaved rounds)")
    print(f"  {'messages':14s} {'this tree':>22s} {args.against:>22s} {'ratio (median)':>15s}")
    for kind, (now, before) in times.items():
        m0, m1 = statistics.median(now) * 1e6, statistics.median(before) * 1e6
        p0, p1 = _p95(now) * 1e6, _p95(before) * 1e6
        print(f"  {kind:14s} {m0:8.0f} us (p95 {p0:5.0f}) {m1:8.0f} us (p95 {p1:5.0f}) {m0 / m1:14.2f}x")


def _p95(xs: list[float]) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(0.95 * len(xs)))]


if __name__ == "__main__":
    main()
