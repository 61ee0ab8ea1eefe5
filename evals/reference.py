"""A reference arm for one run's summary: another seller's run beside it, on the same negotiations.

A seller score of 0.503 means little alone. When the folder that holds a run (``runs/``) also holds a
run of another seller on the same suite, buyers and seed, ``negotiator eval`` shows that seller's
score on the negotiations both played, and the paired difference (``evals.stats``). A rule seller is
preferred (a fixed baseline), else the latest run.
"""

from __future__ import annotations

import json
from pathlib import Path

from negotiator.runtime.log import iter_episodes

from .formatting import fmt, fmt_diff, fmt_p
from .runs import is_run
from .summary import Row, block, row

# what must match for two runs to have played the same negotiations
_SAME = ("suite", "buyers", "seed")


def _config(run: Path) -> dict | None:
    try:
        config = json.loads((run / "config.json").read_text())
    except (OSError, ValueError):
        return None
    return config if isinstance(config, dict) else None


def reference_run(run_dir: Path, config: dict) -> tuple[Path, dict] | None:
    """The sibling run folder to compare ``run_dir`` with (its config too), or None."""
    here = run_dir.resolve()
    candidates = []
    try:
        siblings = sorted(p for p in run_dir.parent.iterdir() if p.is_dir())
    except OSError:
        return None
    for run in siblings:
        if run.resolve() == here or not is_run(run) or not (run / "episodes.jsonl").is_file():
            continue
        other = _config(run)
        if other is None or other.get("seller") == config.get("seller"):
            continue
        if all(other.get(k) == config.get(k) for k in _SAME):
            candidates.append((run, other))
    if not candidates:
        return None
    return max(candidates, key=lambda rc: (str(rc[1].get("seller", "")).startswith("rule/"), rc[0].name))


def reference_for(run_dir: Path, config: dict, rows: list[Row], negotiations: dict[str, str]) -> dict | None:
    """The reference of a run whose summary rows are ``rows`` (``negotiations``: episode id -> the
    negotiation it played): its name, its figures on the negotiations both played, and a line to print."""
    from .stats import min_clusters, paired_difference

    found = reference_run(run_dir, config)
    if found is None:
        return None
    ref_dir, ref_config = found
    mine = {negotiations[r.episode_id]: r for r in rows if r.metrics is not None and r.episode_id in negotiations}
    theirs: dict[str, Row] = {}
    for ep in iter_episodes(ref_dir / "episodes.jsonl"):
        key = ep.labels.get("negotiation")
        if key in mine and ep.outcome.ended_by != "error":
            theirs[key] = row(ep)
    common = sorted(theirs)
    if not common:
        return None
    seller = str(ref_config.get("seller"))
    d = paired_difference(
        [theirs[k].metrics.seller_score for k in common],  # type: ignore[union-attr]
        [mine[k].metrics.seller_score for k in common],  # type: ignore[union-attr]
        [mine[k].scenario for k in common],
        bounds=(-1.0, 1.0),
    )
    verdict = (
        "this seller is better"
        if d.low > 0
        else "the reference is better"
        if d.high < 0
        else "no detectable difference"
    )
    ref_block = block([theirs[k] for k in common])
    fewest = min_clusters(d.level)
    compared = (
        f"{fmt_diff(d.as_dict())}, p = {fmt_p(d.p_value)}: {verdict}"
        if d.clusters >= fewest  # fewer scenarios than that cannot show a difference, whatever the scores
        else f"{d.mean:+.3f} over {d.clusters} scenario{'s' if d.clusters != 1 else ''}, too few to tell "
        f"(a {d.level:.0%} interval needs {fewest} or more)"
    )
    line = (
        f"reference: {seller} ({ref_dir}) scored {fmt(ref_block.get('seller_score'))} on the same "
        f"{len(common)} negotiation{'s' if len(common) != 1 else ''}; this seller - reference: {compared}"
    )
    return {"seller": seller, "run": str(ref_dir), "block": ref_block, "difference": d.as_dict(), "line": line}
