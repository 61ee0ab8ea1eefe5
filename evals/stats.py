"""Statistics for evaluation: cluster-bootstrap confidence intervals and paired differences.

Negotiations on the same scenario are not independent (a generous scenario is generous to
every buyer and persona), so uncertainty is resampled by **cluster**: the scenario. With
no clusters given, every observation is its own cluster (the ordinary bootstrap).

* ``bootstrap_mean``: the mean with a percentile bootstrap CI over clusters.
* ``paired_difference``: arm B minus arm A on identical negotiations; a cluster-bootstrap CI
  and a two-sided p-value from a cluster sign-flip permutation test (exact when there are
  few clusters). "No detectable difference" means the CI spans 0.

Everything is vectorised numpy and seeded, so a report is reproducible to the digit.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from statistics import NormalDist

import numpy as np

LEVEL = 0.95
RESAMPLES = 4000
_CHUNK = 2_000_000  # resample indices held in memory at once


@dataclass(frozen=True)
class Estimate:
    mean: float
    low: float
    high: float
    n: int
    clusters: int

    def as_dict(self, digits: int = 6) -> dict:
        return {k: (round(v, digits) if isinstance(v, float) else v) for k, v in asdict(self).items()}


@dataclass(frozen=True)
class PairedDifference(Estimate):
    """B - A on identical negotiations."""

    p_value: float

    @property
    def detectable(self) -> bool:
        """The CI excludes 0."""
        return self.low > 0 or self.high < 0

    @property
    def verdict(self) -> str:
        if self.low > 0:
            return "B better"
        if self.high < 0:
            return "A better"
        return "no detectable difference"

    def as_dict(self, digits: int = 6) -> dict:
        return {**super().as_dict(digits), "detectable": self.detectable, "verdict": self.verdict}


def _clusters(values: np.ndarray, clusters: Sequence | None) -> tuple[np.ndarray, np.ndarray]:
    """Per-cluster sums and counts."""
    if clusters is None:
        return values.copy(), np.ones(len(values))
    if len(clusters) != len(values):
        raise ValueError(f"{len(values)} values but {len(clusters)} cluster labels")
    _, codes = np.unique(np.asarray(clusters, dtype=str), return_inverse=True)
    sums = np.bincount(codes, weights=values)
    counts = np.bincount(codes).astype(float)
    return sums, counts


def _resampled_means(sums: np.ndarray, counts: np.ndarray, resamples: int, rng: np.random.Generator) -> np.ndarray:
    g = len(sums)
    out = np.empty(resamples)
    step = max(1, _CHUNK // g)
    for start in range(0, resamples, step):
        k = min(step, resamples - start)
        idx = rng.integers(0, g, size=(k, g))
        out[start : start + k] = sums[idx].sum(axis=1) / counts[idx].sum(axis=1)
    return out


def bootstrap_mean(
    values: Sequence[float],
    clusters: Sequence | None = None,
    *,
    level: float = LEVEL,
    resamples: int = RESAMPLES,
    seed: int = 0,
) -> Estimate:
    """Mean of ``values`` with a percentile cluster-bootstrap CI at ``level``."""
    x = np.asarray(values, dtype=float)
    if len(x) == 0:
        return Estimate(math.nan, math.nan, math.nan, 0, 0)
    sums, counts = _clusters(x, clusters)
    mean = float(x.mean())
    if len(sums) < 2:
        return Estimate(mean, mean, mean, len(x), len(sums))
    means = _resampled_means(sums, counts, resamples, np.random.default_rng(seed))
    alpha = (1 - level) / 2
    low, high = np.quantile(means, [alpha, 1 - alpha])
    # The bootstrap spread is too narrow with few clusters: widen it by sqrt(G / (G - 1))
    # (its variance misses that factor) and by t / z with G - 1 degrees of freedom.
    c = _small_sample_factor(len(sums), level)
    # The widening can reach past anything a mean of these values can be (a score CI below
    # 0 when most negotiations score 0): keep the interval inside the observed range.
    lo, hi = float(x.min()), float(x.max())
    return Estimate(
        mean, max(lo, float(mean + (low - mean) * c)), min(hi, float(mean + (high - mean) * c)), len(x), len(sums)
    )


def _small_sample_factor(g: int, level: float) -> float:
    z = NormalDist().inv_cdf(0.5 + level / 2)
    return math.sqrt(g / (g - 1)) * _t_quantile(z, g - 1) / z


def _t_quantile(z: float, df: int) -> float:
    """Student-t quantile from the normal one (Cornish-Fisher; within 1% for df >= 3)."""
    return (
        z
        + (z**3 + z) / (4 * df)
        + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
        + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * df**3)
    )


def sign_flip_p_value(
    differences: Sequence[float], clusters: Sequence | None = None, *, resamples: int = RESAMPLES, seed: int = 0
) -> float:
    """Two-sided p-value of "mean difference = 0": flip the sign of whole clusters.

    Under the null the two arms are exchangeable within each negotiation, so each
    cluster's total difference is as likely negative as positive. Exact (all 2^G sign
    patterns) for G <= 12 clusters, Monte Carlo otherwise.
    """
    d = np.asarray(differences, dtype=float)
    if len(d) == 0:
        return math.nan
    sums, _ = _clusters(d, clusters)
    observed = abs(sums.sum())
    if observed == 0:
        return 1.0
    g = len(sums)
    if g <= 12:
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=g)))
        return float(np.mean(np.abs(signs @ sums) >= observed - 1e-12))
    rng = np.random.default_rng(seed)
    hits, step = 0, max(1, _CHUNK // g)
    for start in range(0, resamples, step):
        k = min(step, resamples - start)
        signs = rng.choice((1.0, -1.0), size=(k, g))
        hits += int(np.sum(np.abs(signs @ sums) >= observed - 1e-12))
    return (hits + 1) / (resamples + 1)


def paired_difference(
    a: Sequence[float],
    b: Sequence[float],
    clusters: Sequence | None = None,
    *,
    level: float = LEVEL,
    resamples: int = RESAMPLES,
    seed: int = 0,
) -> PairedDifference:
    """Mean of ``b - a`` over paired observations, with CI and sign-flip p-value."""
    if len(a) != len(b):
        raise ValueError(f"paired samples differ in length: {len(a)} and {len(b)}")
    d = np.asarray(b, dtype=float) - np.asarray(a, dtype=float)
    est = bootstrap_mean(d, clusters, level=level, resamples=resamples, seed=seed)
    p = sign_flip_p_value(d, clusters, resamples=resamples, seed=seed)
    return PairedDifference(est.mean, est.low, est.high, est.n, est.clusters, p)
