"""Calibration of the paired comparison (``evals.stats.paired_difference``) on synthetic runs whose truth is known.

Paired seller scores shaped like a held-out run (``tests/test_stats.py``'s ``eval_like``: a scenario effect shared
by both arms, an arm x scenario interaction, episode noise), drawn again and again:

* coverage: how often the 95% CI holds a planted difference of +0.03 (300 draws, 48 and 8 scenarios);
* power: how often a planted +0.05 on 1,152 negotiations is detected (60 draws);
* false positives: how often a null is flagged (200 draws).

    python benchmarks/paired_stats.py        # about a minute
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from test_stats import eval_like  # noqa: E402

from evals.stats import paired_difference  # noqa: E402


def main() -> None:
    rng = np.random.default_rng(21)
    for clusters in (48, 8):
        covered = 0
        for k in range(300):
            a, b, cl = eval_like(rng, shift=0.03, scenarios=clusters, per=12)
            d = paired_difference(a, b, cl, resamples=1000, seed=k)
            covered += d.low <= 0.03 <= d.high
        print(f"coverage of the 95% CI, {clusters} scenarios: {covered}/300 = {covered / 300:.3f}")
    rng = np.random.default_rng(11)
    hits = sum(paired_difference(*eval_like(rng, shift=0.05), resamples=1000, seed=k).detectable for k in range(60))
    false = sum(paired_difference(*eval_like(rng, shift=0.0), resamples=1000, seed=k).detectable for k in range(200))
    print(f"planted +0.05 on 1,152 negotiations detected in {hits}/60 draws; a null flagged in {false}/200")


if __name__ == "__main__":
    main()
