"""The two disjoint ranges scenario seeds are drawn from: training below, evaluation above.

Training (``train``) and evaluation (``evals``) both read them here, so neither imports the
other. Every evaluation suite draws from ``EVAL_SEEDS`` (``evals.suites`` checks that when
it builds a suite), so a seed that passes :func:`check_train_seeds` is one no suite uses.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..errors import UsageError

TRAIN_SEEDS = range(0, 1_000_000)
"""Scenario seeds reserved for training. No evaluation suite may use one."""

EVAL_SEED_BASE = 10_000_000
EVAL_SEEDS = range(EVAL_SEED_BASE, 2 * EVAL_SEED_BASE)
"""Scenario seeds evaluation suites draw from: disjoint from ``TRAIN_SEEDS``."""


def check_train_seeds(seeds: Iterable[int]) -> None:
    """Refuse any seed outside the training range (so any seed an evaluation suite uses)."""
    bad = sorted({s for s in seeds if s not in TRAIN_SEEDS})
    if bad:
        raise UsageError(
            f"scenario seeds {bad[:5]}{'...' if len(bad) > 5 else ''} are not training seeds: training draws from "
            f"{TRAIN_SEEDS.start}..{TRAIN_SEEDS.stop - 1}, which no evaluation suite touches"
        )
