# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The statistical core of issue 19 (`metrics.intervals`): Wilson and Clopper-Pearson bounds against scipy's
binomtest and by simulated coverage, the percentile bootstrap against scipy.stats.bootstrap draw for draw,
McNemar's exact test, Holm's step-down correction, the bootstrap p-value, `samples_needed`, and bad input."""

import math

import numpy as np
import pytest
from scipy import stats

from hf_vitrobust.metrics import intervals
from hf_vitrobust.metrics.intervals import (
    Interval,
    bootstrap_interval,
    bootstrap_p_value,
    bootstrap_replicates,
    bootstrap_weights,
    check_confidence_level,
    clopper_pearson_bounds,
    holm_adjust,
    mcnemar_test,
    percentile_bounds,
    proportion_bounds,
    proportion_interval,
    samples_needed,
    wilson_bounds,
    z_value,
)
from hf_vitrobust.metrics.mean_intervals import mean_bounds

LEVELS = (0.5, 0.8, 0.9, 0.95, 0.99)
COUNT_GRID = [(k, n) for n in (1, 2, 7, 30, 200, 1001) for k in sorted({0, 1, n // 3, n // 2, n - 1, n})]


# ----------------------------------------------------------------------------------------------- proportions
@pytest.mark.parametrize("level", LEVELS)
def test_wilson_and_clopper_pearson_equal_scipy_binomtest(level):
    """Both bounds equal scipy's `binomtest(k, n).proportion_ci` over a grid that includes k = 0 and k = n."""
    k = np.array([k for k, _ in COUNT_GRID])
    n = np.array([n for _, n in COUNT_GRID])
    for method, scipy_method, bounds in (
        ("wilson", "wilson", wilson_bounds),
        ("clopper-pearson", "exact", clopper_pearson_bounds),
    ):
        low, high = bounds(k, n, level)  # vectorised over the whole grid at once
        via_dispatch = proportion_bounds(k, n, level, method)
        expected = np.array(
            [
                tuple(stats.binomtest(int(ki), int(ni)).proportion_ci(level, method=scipy_method))
                for ki, ni in COUNT_GRID
            ]
        )
        np.testing.assert_allclose(low, expected[:, 0], rtol=0, atol=1e-12, err_msg=method)
        np.testing.assert_allclose(high, expected[:, 1], rtol=0, atol=1e-12, err_msg=method)
        np.testing.assert_array_equal(via_dispatch[0], low)
        np.testing.assert_array_equal(via_dispatch[1], high)
        assert np.all(low[k == 0] == 0.0) and np.all(high[k == n] == 1.0)


def test_proportion_bounds_are_nan_without_trials_and_broadcast():
    low, high = wilson_bounds([0, 3], [0, 10])
    assert math.isnan(low[0]) and math.isnan(high[0])
    assert 0.0 < low[1] < 0.3 < high[1] < 1.0
    low, high = clopper_pearson_bounds(np.array([[1], [2]]), np.array([10, 20, 40]))
    assert low.shape == (2, 3)
    assert low[0, 0] == pytest.approx(stats.binomtest(1, 10).proportion_ci(method="exact").low, abs=1e-12)
    assert high[1, 2] == pytest.approx(stats.binomtest(2, 40).proportion_ci(method="exact").high, abs=1e-12)


def test_proportion_interval_scales_to_percent():
    interval = proportion_interval(37, 120, 0.9, "wilson", scale=100.0, unit="image")
    low, high = stats.binomtest(37, 120).proportion_ci(0.9, method="wilson")
    assert interval.estimate == pytest.approx(100.0 * 37 / 120, abs=1e-12)
    assert (interval.low, interval.high) == pytest.approx((100.0 * low, 100.0 * high), abs=1e-10)
    assert (interval.method, interval.num_samples, interval.unit, interval.scale) == (
        "wilson",
        120,
        "image",
        100,
    )
    empty = proportion_interval(0, 0)
    assert (empty.estimate, empty.low, empty.high, empty.format()) == (None, None, None, "-")
    with pytest.raises(ValueError, match="Unknown proportion interval method 'agresti'"):
        proportion_interval(3, 10, method="agresti")


def _exact_coverage(bounds, n: int, p: float, level: float = 0.95) -> float:
    """P(low <= p <= high) under Binomial(n, p), summed over every k (no Monte Carlo)."""
    k = np.arange(n + 1)
    low, high = bounds(k, n, level)
    return float(stats.binom.pmf(k, n, p)[(low <= p) & (p <= high)].sum())


def test_wilson_and_clopper_pearson_coverage_by_simulation():
    """2,000 seeded Binomial(200, p) draws, all bounds at once. Coverage of a 95 % interval over 2,000 repetitions
    has a Monte Carlo standard error of sqrt(0.95 * 0.05 / 2000) = 0.49 points, so the 93-97 % band is about
    4 SE wide on each side. p = 0.3 (exact Wilson coverage 94.7 %) and p = 0.04 (95.6 %): at p = 0.05 the exact
    Wilson coverage is 96.7 %, 0.6 SE inside the band's edge, too close for a simulated check, so p = 0.05 is
    checked exactly (the binomial sum) instead."""
    repetitions, n = 2000, 200
    rng = np.random.default_rng(20260419)
    for p in (0.3, 0.04):
        k = rng.binomial(n, p, repetitions)
        low, high = wilson_bounds(k, n)
        wilson = float(np.mean((low <= p) & (p <= high)))
        low, high = clopper_pearson_bounds(k, n)
        exact = float(np.mean((low <= p) & (p <= high)))
        assert 0.93 <= wilson <= 0.97, (p, wilson)
        assert exact >= 0.94, (p, exact)
        # The simulation agrees with the exact coverage to within 3 Monte Carlo standard errors.
        se = math.sqrt(0.95 * 0.05 / repetitions)
        assert abs(wilson - _exact_coverage(wilson_bounds, n, p)) < 3 * se
        assert abs(exact - _exact_coverage(clopper_pearson_bounds, n, p)) < 3 * se
    assert 0.93 <= _exact_coverage(wilson_bounds, n, 0.05) <= 0.97


def test_clopper_pearson_never_covers_less_than_nominal():
    """The exact interval's guarantee: coverage >= the level for every p (checked exactly on a grid of p)."""
    for n in (20, 200):
        for p in np.linspace(0.01, 0.99, 41):
            assert _exact_coverage(clopper_pearson_bounds, n, float(p)) >= 0.95 - 1e-12, (n, p)
            assert _exact_coverage(clopper_pearson_bounds, n, float(p), 0.8) >= 0.8 - 1e-12, (n, p)


def test_mean_bounds_equal_student_t():
    rng = np.random.default_rng(3)
    for count in (2, 5, 40):
        x = rng.normal(1.0, 2.0, count)
        low, high = mean_bounds(x.mean(), x.std(ddof=1), count, 0.9)
        expected = stats.t.interval(0.9, count - 1, loc=x.mean(), scale=stats.sem(x))
        assert (float(low), float(high)) == pytest.approx(expected, abs=1e-12)
    low, high = mean_bounds([0.5, 0.5], [0.1, 0.1], [1, 0])
    assert np.isnan(low).all() and np.isnan(high).all()


# ------------------------------------------------------------------------------------------------- bootstrap
def _weighted_mean(x):
    return lambda w: (w @ x) / w.sum(axis=1)


@pytest.mark.parametrize(("seed", "n", "resamples", "level"), [(0, 50, 999, 0.95), (7, 333, 400, 0.9)])
def test_percentile_bootstrap_equals_scipy_one_sample(seed, n, resamples, level):
    """`bootstrap_interval` with a weighted mean, (w @ x) / w.sum(1), equals `scipy.stats.bootstrap((x,),
    np.mean, method="percentile")` given the same Generator seed. The match is exact to rounding (1e-12), not a
    Monte Carlo agreement: both draw `rng.integers(0, n, (B, n))`, so the replicates are the same resamples."""
    x = np.random.default_rng(100 + seed).exponential(size=n)
    ours = bootstrap_interval(
        _weighted_mean(x), n, confidence_level=level, num_resamples=resamples, seed=seed
    )
    theirs = stats.bootstrap(
        (x,),
        np.mean,
        method="percentile",
        confidence_level=level,
        n_resamples=resamples,
        rng=np.random.default_rng(seed),
    )
    assert ours.low == pytest.approx(theirs.confidence_interval.low, abs=1e-12)
    assert ours.high == pytest.approx(theirs.confidence_interval.high, abs=1e-12)
    replicates = bootstrap_replicates(_weighted_mean(x), n, resamples, seed)
    np.testing.assert_allclose(replicates, theirs.bootstrap_distribution, rtol=0, atol=1e-12)
    assert ours.estimate == pytest.approx(x.mean(), abs=1e-12)
    assert (ours.num_units, ours.num_samples, ours.num_resamples, ours.seed) == (n, n, resamples, seed)
    assert ours.method == "percentile bootstrap"


def test_percentile_bootstrap_equals_scipy_two_samples_stratified():
    """Two strata resampled separately equal scipy's two-sample bootstrap (paired=False) of mean(x) - mean(y),
    exact to rounding (1e-12, not Monte Carlo): scipy draws each sample's indices in turn from one Generator, as
    `bootstrap_weights` draws each stratum's."""
    rng = np.random.default_rng(11)
    x, y = rng.normal(0.3, 1.0, 120), rng.normal(0.0, 2.0, 45)
    nx = len(x)

    def difference(w):
        return (w[:, :nx] @ x) / w[:, :nx].sum(1) - (w[:, nx:] @ y) / w[:, nx:].sum(1)

    ours = bootstrap_interval(difference, [nx, len(y)], num_resamples=700, seed=5)
    theirs = stats.bootstrap(
        (x, y),
        lambda a, b, axis=-1: a.mean(axis) - b.mean(axis),
        paired=False,
        method="percentile",
        n_resamples=700,
        rng=np.random.default_rng(5),
    )
    assert ours.low == pytest.approx(theirs.confidence_interval.low, abs=1e-12)
    assert ours.high == pytest.approx(theirs.confidence_interval.high, abs=1e-12)
    assert ours.estimate == pytest.approx(x.mean() - y.mean(), abs=1e-12)
    assert ours.num_units == nx + len(y)


def test_bootstrap_weights_count_the_draws_of_each_stratum():
    """Weights are the bincounts of `rng.integers(0, n_s, (b, n_s))`, stratum after stratum, in its own columns."""
    sizes, resamples = [3, 5, 2], 40
    (weights,) = list(bootstrap_weights(sizes, resamples, np.random.default_rng(9)))
    rng = np.random.default_rng(9)
    expected = np.concatenate(
        [
            np.stack([np.bincount(row, minlength=n) for row in rng.integers(0, n, (resamples, n))])
            for n in sizes
        ],
        axis=1,
    )
    np.testing.assert_array_equal(weights, expected)
    assert weights.dtype == np.float64
    np.testing.assert_array_equal(weights[:, :3].sum(1), 3)
    np.testing.assert_array_equal(weights[:, 3:8].sum(1), 5)
    np.testing.assert_array_equal(weights[:, 8:].sum(1), 2)


def test_bootstrap_weights_batches_stay_within_the_draw_budget(monkeypatch):
    """With a small draw budget the replicates come in several batches, each at most MAX_DRAWS_PER_BATCH weights
    (rows x all units), together exactly `num_resamples` rows whose strata keep their sizes."""
    monkeypatch.setattr(intervals, "MAX_DRAWS_PER_BATCH", 64)
    sizes = [4, 10, 6]
    batches = list(bootstrap_weights(sizes, 25, np.random.default_rng(0)))
    assert len(batches) > 1
    assert sum(len(batch) for batch in batches) == 25
    assert all(batch.size <= 64 for batch in batches), [batch.shape for batch in batches]
    stacked = np.concatenate(batches)
    np.testing.assert_array_equal(stacked[:, :4].sum(1), 4)
    np.testing.assert_array_equal(stacked[:, 4:14].sum(1), 10)
    np.testing.assert_array_equal(stacked[:, 14:].sum(1), 6)


def test_one_stratum_draws_do_not_depend_on_how_rows_are_cut(monkeypatch):
    """One stratum's weights are cut into row batches of at most MAX_DRAWS_ONE_STRATUM draws, and are the same
    numbers as one draw of every row at once (`integers(0, n, (b, n))`, as scipy.stats.bootstrap draws them)."""
    n, b = 37, 50
    drawn = np.random.default_rng(9).integers(0, n, (b, n))
    expected = np.stack([np.bincount(row, minlength=n) for row in drawn]).astype(np.float64)
    for budget in (1, 40, 37 * 7, 1 << 20):
        monkeypatch.setattr(intervals, "MAX_DRAWS_ONE_STRATUM", budget)
        batches = list(bootstrap_weights(n, b, np.random.default_rng(9)))
        assert all(len(batch) == 1 or batch.size <= budget for batch in batches)
        assert len(batches) == -(-b // max(1, budget // n))
        np.testing.assert_array_equal(np.concatenate(batches), expected)


def test_percentile_bounds_drop_undefined_replicates():
    values = np.array([np.nan, 1.0, 2.0, 3.0, np.inf, 4.0, 5.0])
    assert percentile_bounds(values, 0.5) == pytest.approx((2.0, 4.0))
    assert percentile_bounds(np.array([np.nan, np.nan])) == (None, None)
    # Linear interpolation between order statistics, as numpy's default quantile (and scipy's percentile CI).
    assert percentile_bounds(np.arange(11.0), 0.9) == pytest.approx((0.5, 9.5))


# -------------------------------------------------------------------------------------------------- McNemar
def _paired_correctness(only_a: int, only_b: int, both: int = 7, neither: int = 4):
    a = np.r_[np.ones(only_a), np.zeros(only_b), np.ones(both), np.zeros(neither)].astype(bool)
    b = np.r_[np.zeros(only_a), np.ones(only_b), np.ones(both), np.zeros(neither)].astype(bool)
    order = np.random.default_rng(only_a * 1000 + only_b).permutation(len(a))
    return a[order], b[order]


@pytest.mark.parametrize(
    ("only_a", "only_b"), [(5, 0), (0, 9), (3, 12), (40, 25), (10, 10), (1, 200), (17, 16)]
)
def test_mcnemar_p_equals_scipy_binomtest(only_a, only_b):
    """McNemar's exact p is scipy's two-sided binomtest of the discordant pairs at 1/2, which for p = 1/2 is twice
    the smaller tail (capped at 1) by symmetry: both identities are asserted."""
    a, b = _paired_correctness(only_a, only_b)
    result = mcnemar_test(a, b)
    assert (result.only_a, result.only_b) == (only_a, only_b)
    discordant, smaller = only_a + only_b, min(only_a, only_b)
    scipy_p = stats.binomtest(smaller, discordant, 0.5).pvalue
    assert result.p_value == pytest.approx(scipy_p, abs=1e-12)
    assert scipy_p == pytest.approx(min(1.0, 2.0 * stats.binom.cdf(smaller, discordant, 0.5)), abs=1e-12)
    assert result.to_dict() == {"only_a": only_a, "only_b": only_b, "p_value": result.p_value}


def test_mcnemar_without_discordant_pairs_and_bad_shapes():
    a = np.array([True, False, True])
    assert mcnemar_test(a, a).p_value == 1.0
    assert (mcnemar_test(a, a).only_a, mcnemar_test(a, a).only_b) == (0, 0)
    with pytest.raises(ValueError, match="two 1-d arrays of the same samples"):
        mcnemar_test(a, a[:2])
    with pytest.raises(ValueError, match="two 1-d arrays"):
        mcnemar_test(a[None], a[None])


# ----------------------------------------------------------------------------------------------------- Holm
def test_holm_adjust_hand_computed():
    """Sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1 = 0.02, 0.03, 0.06, 0.04 -> monotone 0.02, 0.03, 0.06,
    0.06, returned in the input order."""
    assert holm_adjust([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02], abs=1e-15)
    # Ties: 0.02 x 4 = 0.08 and 0.02 x 3 = 0.06 -> 0.08 for both; 0.5 x 2 = 1.0; 0.6 x 1 = 0.6 -> max 1.0.
    assert holm_adjust([0.5, 0.02, 0.6, 0.02]) == pytest.approx([1.0, 0.08, 1.0, 0.08], abs=1e-15)
    # The cap at 1: 0.3 x 2 = 0.6, 0.7 x 1 -> 0.7; 0.45 x 3 = 1.35 -> 1.
    assert holm_adjust([0.7, 0.3]) == pytest.approx([0.7, 0.6], abs=1e-15)
    assert holm_adjust([0.45, 0.5, 0.9]) == pytest.approx([1.0, 1.0, 1.0], abs=1e-15)
    assert holm_adjust([0.04]) == [0.04]
    assert holm_adjust([]) == []


# --------------------------------------------------------------------------------------- bootstrap p-value
def test_bootstrap_p_value_is_twice_the_smaller_share():
    # 1 replicate below 0 and one at 0 (counted half): 1.5 / 5 = 0.3 below, 0.7 above -> p = 0.6.
    assert bootstrap_p_value(np.array([-1.0, 0.0, 1.0, 2.0, 3.0])) == pytest.approx(0.6)
    assert bootstrap_p_value(np.array([1.0, 2.0, np.nan, 3.0])) == 0.0
    assert bootstrap_p_value(np.array([1.0, 2.0, 3.0]), null=2.0) == pytest.approx(1.0)
    assert bootstrap_p_value(np.zeros(10)) == 1.0
    assert bootstrap_p_value(np.array([np.nan])) == 1.0
    # 3 of 40 replicates below the null: p = 2 * 3 / 40 = 0.15.
    assert bootstrap_p_value(np.r_[-np.ones(3), np.ones(37)]) == pytest.approx(0.15)


# ------------------------------------------------------------------------------------------- samples needed
@pytest.mark.parametrize(("successes", "trials", "target"), [(60, 200, 2.0), (930, 1000, 0.5), (10, 50, 5.0)])
def test_samples_needed_for_a_wilson_interval_hits_the_target(successes, trials, target):
    """n = z^2 p (1 - p) / h^2 from the normal approximation; Wilson's half-width at that n and the same p comes
    within 5 % of the target (in the interval's percent units)."""
    interval = proportion_interval(successes, trials, 0.95, "wilson", scale=100.0)
    n = samples_needed(interval, target)
    p = successes / trials
    low, high = wilson_bounds(round(p * n), n)
    half_width = 100.0 * (float(high) - float(low)) / 2.0
    assert abs(half_width - target) / target < 0.05, (n, half_width)
    assert target < interval.half_width and n > trials  # a narrower interval takes more samples


def test_samples_needed_for_a_bootstrap_interval_scales_with_the_squared_ratio():
    """n_needed = n_now (h_now / h)^2 in the interval's units; and the scaling is real: a bootstrap interval of
    4x the samples has about half the half-width (seeded; 2,000 resamples keep the quantiles' own noise ~2 %)."""
    rng = np.random.default_rng(4)
    x = rng.normal(size=6400)
    small = bootstrap_interval(_weighted_mean(x[:400]), 400, num_resamples=2000, seed=1, num_samples=1200)
    large = bootstrap_interval(_weighted_mean(x[:1600]), 1600, num_resamples=2000, seed=2)
    h = small.half_width
    assert samples_needed(small, h / 2.0) == 1600  # counted in units (num_units), not num_samples
    assert samples_needed(small, h * 2.0) == 100
    assert samples_needed(small, h / 3.0) == math.ceil(400 * (h / (h / 3.0)) ** 2)
    assert samples_needed(small, large.half_width) == pytest.approx(1600, rel=0.2)
    degenerate = bootstrap_interval(lambda w: np.zeros(len(w)), 10, num_resamples=20)
    assert (
        degenerate.half_width is None and samples_needed(degenerate, 0.1) is None
    )  # not estimable (issue 38)
    assert samples_needed(proportion_interval(0, 0), 0.1) is None
    with pytest.raises(ValueError, match="target_half_width must be > 0"):
        samples_needed(small, 0.0)


def test_samples_needed_at_the_edge_uses_a_quarter_sample():
    interval = proportion_interval(0, 100, 0.95, "clopper-pearson")
    z = z_value(0.95)
    p = 1.0 / 400.0
    assert samples_needed(interval, 0.01) == math.ceil(z * z * p * (1 - p) / 0.01**2)


# ------------------------------------------------------------------------------------------------- Interval
def test_interval_scaling_format_and_round_trip():
    interval = Interval(0.25, 0.2, 0.3, 0.95, "percentile bootstrap", 100, unit="image", num_units=100)
    assert interval.half_width == pytest.approx(0.05)
    assert interval.contains(0.2) and interval.contains(0.3) and not interval.contains(0.31)
    negative = interval.scaled(-100.0)
    assert (negative.estimate, negative.low, negative.high) == pytest.approx((-25.0, -30.0, -20.0))
    assert negative.scale == 100.0
    assert interval.scaled(100.0).format(1) == "25.0 [20.0, 30.0]"
    noted = interval.with_note("first 100").with_note("independent")
    assert noted.note == "first 100; independent" and interval.with_note(None) is interval
    assert Interval.from_dict({**noted.to_dict(), "from_a_newer_writer": 1}) == noted
    assert Interval(0.5, None, None, 0.95, "wilson", 0).format() == "0.50"
    assert Interval(float("nan"), 0.0, 1.0, 0.95, "wilson", 0).format() == "-"
    assert not Interval(None, None, None, 0.95, "wilson", 0).contains(0.0)


# ------------------------------------------------------------------------------------------------ bad input
@pytest.mark.parametrize("level", [0, 1, 1.5, True, -0.1, float("nan"), "0.95", None])
def test_bad_confidence_levels_are_value_errors(level):
    with pytest.raises(ValueError, match="confidence_level must be"):
        check_confidence_level(level)
    with pytest.raises(ValueError, match="confidence_level must be"):
        wilson_bounds(3, 10, level)
    with pytest.raises(ValueError, match="confidence_level must be"):
        clopper_pearson_bounds(3, 10, level)
    with pytest.raises(ValueError, match="confidence_level must be"):
        mean_bounds(0.0, 1.0, 10, level)
    with pytest.raises(ValueError, match="confidence_level must be"):
        bootstrap_interval(_weighted_mean(np.arange(5.0)), 5, confidence_level=level, num_resamples=10)


@pytest.mark.parametrize(("successes", "trials"), [(11, 10), (-1, 10), (2, -3), (2.5, 10), (3, 10.5)])
def test_bad_counts_are_value_errors(successes, trials):
    for bounds in (wilson_bounds, clopper_pearson_bounds):
        with pytest.raises(ValueError, match="integer counts with 0 <= successes <= trials"):
            bounds(successes, trials)
    with pytest.raises(ValueError, match="0 <= successes <= trials"):
        proportion_interval(successes, trials)


def test_bad_bootstrap_arguments_are_value_errors():
    with pytest.raises(ValueError, match="num_resamples must be >= 1, got 0"):
        next(bootstrap_weights(10, 0, np.random.default_rng(0)))
    with pytest.raises(ValueError, match="num_resamples must be >= 1, got 0"):
        bootstrap_interval(_weighted_mean(np.arange(5.0)), 5, num_resamples=0)
    with pytest.raises(ValueError, match="at least one unit"):
        next(bootstrap_weights([3, 0], 10, np.random.default_rng(0)))
