"""Statistics for evaluation: cluster-bootstrap confidence intervals and paired differences.

Negotiations on the same scenario are not independent (a generous scenario is generous to
every buyer and persona), so uncertainty is resampled by **cluster**: the scenario. With
no clusters given, every observation is its own cluster (the ordinary bootstrap).

* ``bootstrap_mean``: the mean with a percentile bootstrap CI over clusters.
* ``paired_difference``: arm B minus arm A on identical negotiations. One method gives all of
  it: a sign-flip permutation test that flips whole clusters (exact when there are few) gives
  the two-sided p-value, and inverting the same test gives the CI, so the verdict ("no
  detectable difference" when the CI spans 0) always agrees with p <= 0.05.

Everything is vectorised numpy and seeded, so a report is reproducible to the digit.
"""

from __future__ import annotations

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
        return {k: (_round(v, digits) if isinstance(v, float) else v) for k, v in asdict(self).items()}


@dataclass(frozen=True)
class PairedDifference(Estimate):
    """B - A on identical negotiations: the mean, the CI and the p-value of one sign-flip test."""

    p_value: float
    level: float = LEVEL

    @property
    def detectable(self) -> bool:
        """The CI excludes 0; the same as ``p_value <= 1 - level`` (``paired_difference`` inverts the test)."""
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


def _round(x: float, digits: int) -> float:
    """``round``, except that a value it would make 0 keeps two significant digits: a CI bound
    just above 0 must not read as 0 beside a verdict that says it excludes 0."""
    r = round(x, digits)
    return float(f"{x:.2g}") if r == 0 and x != 0 else r


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


def _resampled_means(sums: np.ndarray, counts: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    out = np.empty(resamples)
    for start, idx, n in _draws(counts, resamples, seed):
        out[start : start + len(idx)] = sums[idx].sum(axis=1) / n
    return out


_DRAWS: list[tuple[tuple, list]] = []


def _draws(counts: np.ndarray, resamples: int, seed: int) -> list[tuple[int, np.ndarray, np.ndarray]]:
    """The resampled clusters, chunk by chunk (where each chunk starts, its cluster indices, the
    negotiations each resample counts), as ``np.random.default_rng(seed)`` draws them. They
    depend only on the clusters' sizes and the seed: a summary block resamples the same
    clusters for every figure (score, deal rate, buyer score), so the last few are kept."""
    key = (counts.tobytes(), resamples, seed)
    for k, found in _DRAWS:
        if k == key:
            return found
    rng = np.random.default_rng(seed)
    g = len(counts)
    step = max(1, _CHUNK // g)
    found = []
    for start in range(0, resamples, step):
        idx = rng.integers(0, g, size=(min(step, resamples - start), g))
        found.append((start, idx, counts[idx].sum(axis=1)))
    _DRAWS.insert(0, (key, found))
    del _DRAWS[4:]
    return found


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
    means = _resampled_means(sums, counts, resamples, seed)
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


# --- paired comparisons: one sign-flip distribution gives the p-value and the CI ----------

EXACT_UP_TO = 16
"""Clusters up to which every sign pattern is enumerated (2^16 = 65,536); Monte Carlo above."""

PAIRED_RESAMPLES = 9_999
"""Random sign patterns above ``EXACT_UP_TO`` clusters; with the observed one, 10,000."""


def _sign_patterns(g: int, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """(B, g) patterns of +1/-1 as integers, the observed (all +1) first: all 2^g of them for few clusters."""
    if g <= EXACT_UP_TO:
        bits = (np.arange(2**g, dtype=np.int64)[:, None] >> np.arange(g)) & 1
        return 1 - 2 * bits
    return np.vstack(
        [np.ones((1, g), dtype=np.int64), rng.choice(np.array([1, -1], dtype=np.int64), size=(resamples, g))]
    )


@dataclass(frozen=True)
class _Flips:
    """Per sign pattern, the interval of mean differences delta it cannot tell from the observed data."""

    mean: float
    lo: np.ndarray  # interval ends, in the differences' units
    hi: np.ndarray
    p_value: float  # of delta = 0: the share of intervals that hold 0
    clusters: int


def _flips(differences: Sequence[float], clusters: Sequence | None, resamples: int, seed: int) -> _Flips:
    """Test "the mean difference is delta" by flipping the signs of whole clusters of ``d - delta``.

    A pattern e is as extreme as the observed one when |sum_g e_g (S_g - delta n_g)| >=
    |sum_g (S_g - delta n_g)| (S_g, n_g: cluster sums and sizes). In x = delta - mean that is
    (E/N - b x)^2 >= (N x)^2 with E = sum_g e_g (N S_g - n_g S) and b = sum_g e_g n_g: a concave
    quadratic that holds on one interval around the mean, delta in [(S t - |E|) / (N t),
    (S a + |E|) / (N a)] with t = N - b, a = N + b (swapped when E < 0); the whole line when
    |b| = N (the observed pattern and its mirror). So p(delta), the share of intervals holding
    delta, only falls as delta moves away from the mean, and the deltas a test at level alpha
    keeps form one interval: the CI. The differences are put on a grid of about 1e-9 first, so all
    of this is integer arithmetic: a pattern that ties the observed one (a scenario whose
    difference is 0 flips to the same total) counts exactly, and every bound has the sign of
    its exact value.
    """
    d = np.asarray(differences, dtype=float)
    _, counts_f = _clusters(d, clusters)
    counts = counts_f.astype(np.int64)
    n = int(counts.sum())
    # the finest grid (at most 2^-30) on which N * N * max|d| stays below 2^50: exact in int64 and in floats
    top = max(float(np.max(np.abs(d))), 1e-300) * n * n
    scale = 2.0 ** min(30, math.floor(50 - math.log2(top)))
    grid = np.rint(d * scale).astype(np.int64)
    sums = _clusters(grid.astype(float), clusters)[0].astype(np.int64)  # integers, exact below 2^53
    total = int(sums.sum())
    patterns = _sign_patterns(len(sums), resamples, np.random.default_rng(seed))
    e = patterns @ (n * sums - counts * total)
    b = patterns @ counts
    whole = np.abs(b) == n
    toward = np.where(whole, 1, np.where(e >= 0, n - b, n + b))
    away = np.where(whole, 1, np.where(e >= 0, n + b, n - b))
    lo_num, hi_num = total * toward - np.abs(e), total * away + np.abs(e)
    holds_zero = whole | ((lo_num <= 0) & (hi_num >= 0))
    # correctly rounded divisions of exact integers, then by a power of two: order and sign are kept
    lo = np.where(whole, -np.inf, lo_num / (n * toward)) / scale
    hi = np.where(whole, np.inf, hi_num / (n * away)) / scale
    return _Flips(total / n / scale, lo, hi, float(np.mean(holds_zero)), len(sums))


def sign_flip_p_value(
    differences: Sequence[float],
    clusters: Sequence | None = None,
    *,
    resamples: int = PAIRED_RESAMPLES,
    seed: int = 0,
) -> float:
    """Two-sided p-value of "mean difference = 0": flip the sign of whole clusters.

    Under the null the two arms are exchangeable within each cluster, so each cluster's total
    difference is as likely negative as positive. Exact (all 2^G sign patterns) for G <= 16
    clusters, Monte Carlo otherwise (the observed pattern counted, so p is never 0).
    """
    if len(differences) == 0:
        return math.nan
    return _flips(differences, clusters, resamples, seed).p_value


def min_clusters(level: float = LEVEL) -> int:
    """The fewest clusters whose sign-flip test can reject at all: 2 ** (1 - k) <= 1 - ``level``
    (6 at 95%); with fewer, ``paired_difference``'s CI is its bounds whatever the data."""
    return math.ceil(1 - math.log2(1 - level) - 1e-9)


def paired_difference(
    a: Sequence[float],
    b: Sequence[float],
    clusters: Sequence | None = None,
    *,
    level: float = LEVEL,
    resamples: int = PAIRED_RESAMPLES,
    seed: int = 0,
    bounds: tuple[float, float] = (-math.inf, math.inf),
) -> PairedDifference:
    """Mean of ``b - a`` over paired observations, with a sign-flip p-value and the CI that inverts it.

    The CI holds every shift delta that the same sign-flip test does not reject at 1 - ``level``,
    computed on the same sign patterns as the p-value, so the two can never disagree: the CI
    excludes 0 exactly when p <= 1 - ``level``. ``bounds``: what a mean difference can be (-1 and
    1 for scores in [0, 1]); with too few clusters to reject anything (5 or fewer at 95%) the CI
    is these bounds.
    """
    if len(a) != len(b):
        raise ValueError(f"paired samples differ in length: {len(a)} and {len(b)}")
    d = np.asarray(b, dtype=float) - np.asarray(a, dtype=float)
    if len(d) == 0:
        return PairedDifference(math.nan, math.nan, math.nan, 0, 0, math.nan, level)
    f = _flips(d, clusters, resamples, seed)
    # delta is kept while more than 1 - level of the patterns are as extreme: at least k of them
    k = math.floor((1 - level) * len(f.lo) + 1e-9) + 1
    low, high = float(np.sort(f.lo)[k - 1]), float(np.sort(f.hi)[::-1][k - 1])
    return PairedDifference(f.mean, max(bounds[0], low), min(bounds[1], high), len(d), f.clusters, f.p_value, level)
