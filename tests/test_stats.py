"""The statistics on synthetic data whose truth is known."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from evals.stats import bootstrap_mean, paired_difference, sign_flip_p_value


def eval_like(rng, shift=0.0, scenarios=48, per=24):
    """Paired seller scores shaped like a held-out run: 48 scenarios x 24 negotiations,
    a scenario effect shared by both arms, an arm x scenario interaction, episode noise."""
    cl = np.repeat(np.arange(scenarios), per)
    a = 0.45 + rng.normal(0, 0.15, scenarios)[cl] + rng.normal(0, 0.2, scenarios * per)
    b = a + shift + rng.normal(0, 0.05, scenarios)[cl] + rng.normal(0, 0.15, scenarios * per)
    return a, b, cl


def test_a_planted_shift_of_five_hundredths_is_detected():
    a, b, cl = eval_like(np.random.default_rng(7), shift=0.05)
    d = paired_difference(a, b, cl)
    assert d.detectable and d.verdict == "B better"
    assert d.low > 0 and d.p_value < 0.01
    assert d.low < 0.05 < d.high  # and the CI holds the truth
    assert d.n == 1152 and d.clusters == 48
    # the same data the other way round
    r = paired_difference(b, a, cl)
    assert r.verdict == "A better" and r.mean == pytest.approx(-d.mean)


def test_a_null_is_not_detected():
    a, b, cl = eval_like(np.random.default_rng(8), shift=0.0)
    d = paired_difference(a, b, cl)
    assert not d.detectable and d.verdict == "no detectable difference"
    assert d.low < 0 < d.high and d.p_value > 0.05


def test_power_and_false_positive_rate_over_repeated_draws():
    rng = np.random.default_rng(11)
    hits = sum(paired_difference(*eval_like(rng, shift=0.05), resamples=1000, seed=k).detectable for k in range(60))
    false = sum(paired_difference(*eval_like(rng, shift=0.0), resamples=1000, seed=k).detectable for k in range(200))
    assert hits >= 57  # +0.05 on 1,152 paired negotiations: found nearly always
    assert false <= 18  # about 5% of 200 nulls, with room for chance (binomial sd ~3)


@pytest.mark.parametrize("clusters", [48, 8])
def test_paired_ci_covers_the_true_difference_about_95_percent_of_the_time(clusters):
    """The inverted sign-flip test: coverage over repeated draws, with many and with few scenarios."""
    rng = np.random.default_rng(21)
    covered, draws = 0, 300
    for k in range(draws):
        a, b, cl = eval_like(rng, shift=0.03, scenarios=clusters, per=12)
        d = paired_difference(a, b, cl, resamples=1000, seed=k)
        covered += d.low <= 0.03 <= d.high
    assert 0.91 <= covered / draws <= 0.99, covered / draws


def brute_p(d, cl, delta: float) -> float:
    """The sign-flip p-value of "mean difference = delta", by enumerating every pattern, on the grid of
    2^-30 the method puts differences on (for these few, small differences), where ties are exact."""
    d = np.asarray(d, dtype=float)
    assert np.max(np.abs(d)) * len(d) ** 2 < 2**20  # the method's grid is 2^-30 here
    grid = 2.0**30
    codes = np.unique(cl, return_inverse=True)[1]
    sums, counts = np.bincount(codes, weights=np.rint(d * grid)), np.bincount(codes).astype(float)
    t = sums - delta * grid * counts
    patterns = np.array(list(itertools.product((1.0, -1.0), repeat=len(sums))))
    return float(np.mean(np.abs(patterns @ t) >= abs(t.sum()) - 1e-3))  # a grid step is 1


@given(
    st.lists(
        st.tuples(st.integers(0, 5), st.sampled_from([-0.4, -0.1, 0.0, 0.05, 0.2, 0.5]), st.floats(-0.05, 0.05)),
        min_size=1,
        max_size=24,
    )
)
def test_the_ci_is_the_set_of_differences_the_test_keeps(rows):
    """Whatever the data (ties, zero-difference scenarios, few clusters): the CI excludes 0 exactly
    when p <= 0.05, and it holds exactly the shifts the same test does not reject."""
    cl = np.array([f"s{c}" for c, _, _ in rows])
    d = np.array([x + (noise if k % 2 else 0.0) for k, (_, x, noise) in enumerate(rows)])
    r = paired_difference(np.zeros(len(d)), d, cl, bounds=(-1.0, 1.0))
    assert r.detectable == (r.p_value <= 0.05) == (r.verdict != "no detectable difference")
    assert r.p_value == pytest.approx(brute_p(d, cl, 0.0))
    for delta in np.linspace(-1, 1, 41):
        if min(abs(delta - r.low), abs(delta - r.high)) > 1e-6:
            assert (r.low <= delta <= r.high) == (brute_p(d, cl, delta) > 0.05), delta


@pytest.mark.parametrize(
    "scenario_differences, p",
    [
        ([-0.02, -0.015, -0.01, -0.005, -0.0001, 0.0001], 6 / 64),  # the old CI: [-0.017, -0.000]
        ([-0.02, -0.015, -0.01, -0.005, -0.002, 0.0], 4 / 64),  # the old CI: [-0.017, -0.001]
    ],
)
def test_the_issue_s_contradiction_cannot_happen(scenario_differences, p):
    """Issue 30: "rule/boulware better" with CI [-0.013, -0.000] at p = 0.125, and again at p = 0.062, on
    the quick suite's six scenarios: a cluster-bootstrap CI beside a sign-flip p-value. On data of that
    shape the bootstrap CI stays below 0 while the test cannot reject; now the CI inverts the test, so
    it spans 0 and the verdict says so."""
    cl = np.repeat(np.arange(6), 4)
    d = np.repeat(scenario_differences, 4) + np.tile([0.001, -0.001, 0.0005, -0.0005], 6)
    old_ci = bootstrap_mean(d, cl)  # what the report used to print as the CI
    assert old_ci.high < 0
    r = paired_difference(np.zeros(24), d, cl, bounds=(-1.0, 1.0))
    assert r.p_value == pytest.approx(p) and r.p_value > 0.05
    assert r.low < 0 <= r.high and not r.detectable and r.verdict == "no detectable difference"


def test_too_few_scenarios_to_reject_anything_give_the_whole_range():
    """Five scenarios have 32 sign patterns; the observed one and its mirror are 2/32 > 5% of them."""
    r = paired_difference([0.0] * 5, [0.5] * 5, ["a", "b", "c", "d", "e"], bounds=(-1.0, 1.0))
    assert r.p_value == pytest.approx(2 / 32) and (r.low, r.high) == (-1.0, 1.0) and not r.detectable
    six = paired_difference([0.0] * 6, [0.5] * 6, list("abcdef"), bounds=(-1.0, 1.0))
    assert six.p_value == pytest.approx(2 / 64) and six.detectable and six.low > 0


@pytest.mark.parametrize("clusters", [48, 8])
def test_ci_coverage_is_near_95_percent(clusters):
    rng = np.random.default_rng(3)
    truth, covered, draws = 0.5, 0, 300
    for k in range(draws):
        cl = np.repeat(np.arange(clusters), 20)
        x = truth + rng.normal(0, 0.15, clusters)[cl] + rng.normal(0, 0.2, clusters * 20)
        e = bootstrap_mean(x, cl, resamples=1000, seed=k)
        covered += e.low <= truth <= e.high
    assert 0.91 <= covered / draws <= 0.985, covered / draws


def test_clustering_widens_the_interval_when_clusters_are_correlated():
    rng = np.random.default_rng(5)
    cl = np.repeat(np.arange(24), 40)
    x = rng.normal(0, 0.2, 24)[cl] + rng.normal(0, 0.1, 960)
    clustered, naive = bootstrap_mean(x, cl), bootstrap_mean(x)
    assert (clustered.high - clustered.low) > 3 * (naive.high - naive.low)
    assert naive.clusters == 960 and clustered.clusters == 24


def test_results_are_reproducible_and_seeded():
    a, b, cl = eval_like(np.random.default_rng(1), shift=0.02)
    assert paired_difference(a, b, cl, seed=4) == paired_difference(a, b, cl, seed=4)


def test_exact_sign_flip_with_few_clusters():
    # 3 clusters all positive: of the 8 sign patterns, 2 reach |sum| >= observed.
    assert sign_flip_p_value([1.0, 2.0, 3.0], ["a", "b", "c"]) == pytest.approx(2 / 8)
    # a scenario with no difference flips to the same total: those patterns tie, and ties count
    assert sign_flip_p_value([0.1, 0.2, 0.0], ["a", "b", "c"]) == pytest.approx(4 / 8)
    assert sign_flip_p_value([0.0, 0.0], ["a", "b"]) == 1.0


def test_edge_cases():
    e = bootstrap_mean([])
    assert e.n == 0 and np.isnan(e.mean)
    one = bootstrap_mean([0.3, 0.5], ["s", "s"])
    assert one.mean == one.low == one.high == pytest.approx(0.4)
    with pytest.raises(ValueError, match="differ in length"):
        paired_difference([1.0], [1.0, 2.0])
    same = paired_difference([0.2, 0.4, 0.6] * 4, [0.2, 0.4, 0.6] * 4, list("abcdefghijkl"))
    assert (same.mean, same.low, same.high, same.p_value, same.detectable) == (0.0, 0.0, 0.0, 1.0, False)
    with pytest.raises(ValueError, match="cluster labels"):
        bootstrap_mean([1.0, 2.0], ["a"])


def test_interval_stays_inside_what_the_values_allow():
    """Few clusters and mostly zero scores: the small-sample widening would reach below 0,
    which no mean of [0, 1] scores can be."""
    x = [0.0] * 10 + [0.9, 0.0, 0.0, 0.8]
    cl = ["a"] * 4 + ["b"] * 4 + ["c"] * 2 + ["d"] * 4
    e = bootstrap_mean(x, cl)
    assert e.low == 0.0 and 0 < e.mean < e.high <= 0.9


def test_figures_that_share_clusters_share_the_resamples_and_get_what_fresh_draws_give():
    """A summary block bootstraps several figures over the same clusters: the draws are kept
    and reused, and every CI is the one a fresh generator gives."""
    from evals import stats

    rng = random.Random(7)
    clusters = [f"s{i % 9}" for i in range(60)]
    figures = [[rng.random() for _ in clusters] for _ in range(3)]
    other = [f"t{i % 5}" for i in range(60)]  # other cluster sizes: other draws

    def fresh(values, labels):
        stats._DRAWS.clear()
        return stats.bootstrap_mean(values, labels, seed=3)

    expected = [fresh(v, clusters) for v in figures] + [fresh(figures[0], other)]
    stats._DRAWS.clear()
    kept = [stats.bootstrap_mean(v, clusters, seed=3) for v in figures] + [
        stats.bootstrap_mean(figures[0], other, seed=3)
    ]
    assert kept == expected
    assert len(stats._DRAWS) == 2
    assert stats.bootstrap_mean(figures[1], clusters, seed=4) != expected[1]  # another seed, other draws
