# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Issue 38, point 5: small-sample intervals never claim more certainty than the data allow. Where every unit is
alike (every bootstrap replicate equal) the interval falls back on the share bound of `unit_share_bound`, mapped
through each headline's own formula (`metrics.unit_spread`); every interval is clipped to its quantity's support;
non-degenerate intervals are the ones computed before the change (pinned); nothing depends on the bootstrap's batch.

The expected bounds are computed here from the formulas: Wilson's at 0 of n, z^2 / (n + z^2), written out;
Clopper-Pearson's, 1 - (alpha/2)^(1/n), as scipy.stats.beta's quantile; the mCE of a model wrong everywhere from
AlexNet's published errors."""

from statistics import NormalDist

import numpy as np
import pytest
from scipy import stats

from hf_vitrobust.constants import TEST_PERTURBATIONS
from hf_vitrobust.metrics import ALEXNET_CLEAN_ERROR, ALEXNET_CORRUPTION_ERRORS, calibration_bins
from hf_vitrobust.metrics import intervals as interval_module
from hf_vitrobust.metrics.estimators import (
    accuracy_estimator,
    aupr_estimator,
    background_gap_estimator,
    corruption_estimators,
    ece_estimator,
    flip_rate_estimator,
    mean_estimator,
    paired_comparison,
)
from hf_vitrobust.metrics.intervals import (
    NON_NEGATIVE,
    UNIT_RANGE,
    bootstrap_interval,
    clip_to_support,
    samples_needed,
    unit_share_bound,
)

CORRUPTIONS = ("gaussian_noise", "fog", "contrast")
SEVERITIES = (1, 3, 5)


def _wilson_upper_at_zero(n: int, level: float = 0.95) -> float:
    """Wilson's upper bound at 0 successes of n: (2 n p + z^2 + z sqrt(4 n p (1 - p) + z^2)) / (2 (n + z^2)) at
    p = 0, i.e. z^2 / (n + z^2)."""
    z = NormalDist().inv_cdf(0.5 + level / 2.0)
    return (z * z + z * np.sqrt(z * z)) / (2.0 * (n + z * z))


def _clopper_pearson_upper_at_zero(n: int, level: float = 0.95) -> float:
    return float(stats.beta.ppf(1.0 - (1.0 - level) / 2.0, 1, n))


def _imagenet_c(num_images: int, wrong: bool, clustered: bool = True, with_clean: bool = True):
    """Every image under every (corruption, severity) cell, all wrong (or all right), and its clean prediction
    alike."""
    cells = [(c, s) for c in CORRUPTIONS for s in SEVERITIES]
    rows = [(c, s, i) for i in range(num_images) for c, s in cells]
    keys = [f"img{i}" for i in range(num_images)]
    return corruption_estimators(
        np.full(len(rows), wrong),
        [c for c, _, _ in rows],
        np.asarray([s for _, s, _ in rows]),
        [f"{c}/{s}/img{i}" for c, s, i in rows],
        [f"img{i}" for _, _, i in rows] if clustered else None,
        np.full(num_images, wrong) if with_clean else None,
        keys if with_clean else None,
    )


def _worst_mce() -> float:
    """The alexnet-15 mCE of a model wrong on every cell of CORRUPTIONS x SEVERITIES (Hendrycks & Dietterich: per
    corruption 100 * sum_s E / sum_s E_AlexNet, averaged)."""
    per_corruption = [
        100.0 * len(SEVERITIES) / sum(ALEXNET_CORRUPTION_ERRORS[c][s - 1] for s in SEVERITIES)
        for c in CORRUPTIONS
    ]
    return float(np.mean(per_corruption))


# ------------------------------------------------------------------------------------------ all alike: (a), (b)
def test_eight_images_all_wrong_get_the_wilson_bound_at_zero_of_eight_not_zero_width():
    """(a) The user's case: 8 images, all wrong on every cell. The mean top-1 was 0 [0, 0]; it is now the Wilson
    interval of 0 of 8 images (not 8 x 9 cells), the interval the clean top-1 of 0 of 8 gets."""
    estimators = _imagenet_c(8, wrong=True)
    interval = estimators["mean_top1"].interval(num_resamples=300, seed=1)
    assert interval.estimate == 0.0
    assert (interval.low, interval.high) == pytest.approx((0.0, 100.0 * _wilson_upper_at_zero(8)), abs=1e-10)
    assert interval.high == pytest.approx(32.44, abs=0.01)  # the clean top-1's [0, 32.4] beside it
    clean = accuracy_estimator(np.zeros(8, bool)).interval()
    assert (interval.low, interval.high) == pytest.approx((clean.low, clean.high), abs=1e-10)
    assert interval.method == "percentile bootstrap with wilson fallback"
    assert "every bootstrap replicate was equal" in interval.note and interval.num_units == 8
    exact = estimators["mean_top1"].interval(num_resamples=300, seed=1, proportion_method="clopper-pearson")
    assert (exact.low, exact.high) == pytest.approx(
        (0.0, 100.0 * _clopper_pearson_upper_at_zero(8)), abs=1e-10
    )
    assert exact.method == "percentile bootstrap with clopper-pearson fallback"
    severity5 = estimators["severity5_top1"].interval(num_resamples=300, seed=1)
    assert (severity5.low, severity5.high) == pytest.approx((interval.low, interval.high), abs=1e-10)


def test_all_wrong_carries_the_bound_through_the_mce_formulas():
    """mCE (affine in the cell errors, increasing): a share eps of other images can only lower it, down to
    (1 - eps) times the worst; unnormalised mCE likewise from 100; relative mCE (corruption minus clean errors, all
    1 - 1 = 0 here) moves either way by eps times its largest per-image value."""
    estimators = _imagenet_c(8, wrong=True)
    eps = _wilson_upper_at_zero(8)
    worst = _worst_mce()
    mce = estimators["mce"].interval(num_resamples=300, seed=1)
    assert mce.estimate == pytest.approx(worst, abs=1e-10)
    assert (mce.low, mce.high) == pytest.approx(((1.0 - eps) * worst, worst), abs=1e-10)
    unnormalized = estimators["unnormalized_mce_all"].interval(num_resamples=300, seed=1)
    assert (unnormalized.low, unnormalized.high) == pytest.approx((100.0 * (1.0 - eps), 100.0), abs=1e-10)
    relative = estimators["relative_mce"].interval(num_resamples=300, seed=1)
    # A differing image right on every corruption and wrong clean lowers it most; wrong on every corruption and
    # right clean raises it most: per corruption 100 * sum_s (e - e_clean) / sum_s (E_AlexNet - E_AlexNet,clean).
    spans = [
        100.0
        * len(SEVERITIES)
        / sum(ALEXNET_CORRUPTION_ERRORS[c][s - 1] - ALEXNET_CLEAN_ERROR for s in SEVERITIES)
        for c in CORRUPTIONS
    ]
    assert relative.estimate == 0.0
    assert (relative.low, relative.high) == pytest.approx(
        (-eps * np.mean(spans), eps * np.mean(spans)), abs=1e-9
    )


def test_all_right_reaches_100_and_stays_below_it():
    """(b) All correct: the mean top-1's high bound is 100, its low bound 100 (1 - eps) < 100; the mCE's low bound 0."""
    estimators = _imagenet_c(8, wrong=False)
    eps = _wilson_upper_at_zero(8)
    top1 = estimators["mean_top1"].interval(num_resamples=300, seed=2)
    assert top1.high == 100.0 and top1.low < 100.0
    assert top1.low == pytest.approx(100.0 * (1.0 - eps), abs=1e-10)
    mce = estimators["mce"].interval(num_resamples=300, seed=2)
    assert (mce.low, mce.high) == pytest.approx((0.0, eps * _worst_mce()), abs=1e-10)


def test_without_clean_keys_each_cell_uses_its_own_samples():
    """Samples treated as independent (resampled within each cell): each cell's rate moves by the bound at 0 of the
    cell's 8 samples, so the mean top-1 gets the same [0, 100 eps]; the independence note is kept."""
    interval = _imagenet_c(8, wrong=True, clustered=False, with_clean=False)["mean_top1"].interval(
        num_resamples=200
    )
    assert (interval.low, interval.high) == pytest.approx((0.0, 100.0 * _wilson_upper_at_zero(8)), abs=1e-10)
    assert (
        "treated as independent" in interval.note and "every bootstrap replicate was equal" in interval.note
    )


def test_other_headlines_of_units_all_alike():
    """BG-gap of foregrounds all right on both backgrounds: 0 +/- 100 eps; mFR of sequences that never flip: [0,
    100 eps]; ECE of images all right at confidence 1: [0, 100 eps]; AUPR of perfectly separated scores: every
    resample is 100, and no share bound holds for a ranking statistic, so it is not estimable (no bounds, a note)."""
    n = 6
    eps = _wilson_upper_at_zero(n)
    variants = ["mixed_same"] * n + ["mixed_rand"] * n
    keys = [str(i % n) for i in range(2 * n)]
    gap = background_gap_estimator(
        np.ones(2 * n, bool), variants, [f"{v}/{k}" for v, k in zip(variants, keys, strict=True)], keys
    )
    interval = gap.interval(num_resamples=200)
    assert (interval.estimate, interval.low, interval.high) == pytest.approx(
        (0.0, -100 * eps, 100 * eps), abs=1e-10
    )
    names = [name for name in list(TEST_PERTURBATIONS)[:2] for _ in range(n)]
    flips = flip_rate_estimator(
        np.zeros(2 * n), names, [f"{p}/{i}" for i, p in enumerate(names)], keys, value_range=UNIT_RANGE
    ).interval(num_resamples=200)
    assert (flips.low, flips.high) == pytest.approx((0.0, 100 * eps), abs=1e-10)
    unbounded = flip_rate_estimator(np.zeros(2 * n), names, [f"{p}/{i}" for i, p in enumerate(names)], keys)
    assert unbounded.interval(num_resamples=200).low is None  # an mT5D-like value of no known range
    confidence = np.ones(n)
    ece = ece_estimator(confidence, np.ones(n, bool), calibration_bins(confidence)).interval(
        num_resamples=200
    )
    assert (ece.estimate, ece.low, ece.high) == pytest.approx((0.0, 0.0, 100 * eps), abs=1e-10)
    aupr = aupr_estimator(np.r_[np.ones(4) + 1.0, np.zeros(4)], np.r_[np.ones(4), np.zeros(4)].astype(bool))
    interval = aupr.interval(num_resamples=200)
    assert interval.estimate == 100.0 and (interval.low, interval.high) == (None, None)
    assert "not estimable" in interval.note and interval.format(2) == "100.00"


def test_mean_estimator_falls_back_only_with_a_range():
    """A probe finding's mean over images: with the values' range the share bound; without one not estimable."""
    values = np.full(10, 0.25)
    eps = _wilson_upper_at_zero(10)
    bounded = mean_estimator(values, value_range=UNIT_RANGE, scale=100.0).interval(num_resamples=100)
    assert (bounded.low, bounded.high) == pytest.approx((25.0 - eps * 25.0, 25.0 + eps * 75.0), abs=1e-10)
    free = mean_estimator(values).interval(num_resamples=100)
    assert free.estimate == 25.0 * 0.01 and (free.low, free.high) == (None, None)


def test_identical_models_differ_by_zero_within_the_share_bound():
    """Two identical models: the paired difference is 0 on every image, so every replicate is 0. The interval is
    the range of a mean of per-image differences in [-1, 1] when a share eps of images may differ: [-eps, eps]
    (x100), not [0, 0]; McNemar's p stays 1."""
    rng = np.random.default_rng(10)
    accuracy = accuracy_estimator(rng.random(80) < 0.7)
    same = paired_comparison(accuracy, accuracy, num_resamples=200)
    eps = _wilson_upper_at_zero(80)
    assert (same.difference.estimate, same.difference.low, same.difference.high) == pytest.approx(
        (0.0, -100.0 * eps, 100.0 * eps), abs=1e-10
    )
    assert (
        same.p_value == 1.0 and same.difference.method == "paired percentile bootstrap with wilson fallback"
    )
    exact = paired_comparison(accuracy, accuracy, num_resamples=200, proportion_method="clopper-pearson")
    assert exact.difference.high == pytest.approx(100.0 * _clopper_pearson_upper_at_zero(80), abs=1e-10)
    mce = _imagenet_c(8, wrong=True)["mce"]
    same = paired_comparison(mce, mce, num_resamples=200)
    bound = _wilson_upper_at_zero(8) * _worst_mce()
    assert (same.difference.low, same.difference.high) == pytest.approx((-bound, bound), abs=1e-10)


# ------------------------------------------------------------------------------------------ supports: (c)
def test_a_mean_of_non_negative_values_is_clipped_at_zero_and_keeps_its_upper_bound():
    """(c) DeepFool-like L2 norms: mostly tiny, one large, so mean - t s / sqrt(n) < 0. With the support [0, inf)
    the low bound is exactly 0 and the high bound is the Student-t one, computed here with scipy."""
    from hf_vitrobust.metrics.mean_intervals import mean_bounds, mean_interval_dicts

    norms = np.array([0.001, 0.002, 0.0015, 0.2, 0.003])
    m, s, n = norms.mean(), norms.std(ddof=1), norms.size
    t_high = m + stats.t.ppf(0.975, n - 1) * s / np.sqrt(n)
    assert m - stats.t.ppf(0.975, n - 1) * s / np.sqrt(n) < 0.0  # the unclipped interval dips below 0
    low, high = mean_bounds(m, s, n, 0.95, NON_NEGATIVE)
    assert float(low) == 0.0 and float(high) == pytest.approx(t_high, abs=1e-12)
    (entry,) = mean_interval_dicts([m], [s], [n], 0.95, support=NON_NEGATIVE)
    assert entry["low"] == 0.0 and entry["high"] == pytest.approx(t_high, abs=1e-12)
    assert entry["method"] == "student-t" and entry["note"] is None


def test_a_mean_of_equal_values_is_not_zero_width():
    """s = 0: with a bounded support the share bound (Wilson at 0 of n around the mean), with an unbounded one no
    bounds (NaN / None), never [m, m]."""
    from hf_vitrobust.metrics.mean_intervals import mean_bounds, mean_interval_dicts

    eps = _wilson_upper_at_zero(12)
    low, high = mean_bounds([0.0, 0.4], [0.0, 0.0], [12, 12], 0.95, UNIT_RANGE)
    assert low.tolist() == pytest.approx([0.0, 0.4 - 0.4 * eps], abs=1e-12)
    assert high.tolist() == pytest.approx([eps, 0.4 + 0.6 * eps], abs=1e-12)
    low, high = mean_bounds(2.0, 0.0, 12, 0.95, NON_NEGATIVE)
    assert np.isnan(low) and np.isnan(high)
    (bounded,) = mean_interval_dicts([0.0], [0.0], [12], 0.95, support=UNIT_RANGE)
    assert bounded["method"] == "student-t with wilson fallback" and bounded["high"] == pytest.approx(eps)
    assert bounded["low"] == 0.0 and "every image gave the same value" in bounded["note"]
    (free,) = mean_interval_dicts([3.0], [0.0], [12], 0.95, support=NON_NEGATIVE)
    assert (free["low"], free["high"]) == (None, None) and "not estimable" in free["note"]


def test_clip_to_support_and_the_share_bound():
    low, high = clip_to_support([-0.5, 0.2, np.nan], [0.3, 1.4, np.nan], UNIT_RANGE)
    assert low.tolist()[:2] == [0.0, 0.2] and high.tolist()[:2] == [0.3, 1.0] and np.isnan(low[2])
    n = np.array([1, 8, 29, 1000])
    assert unit_share_bound(n).tolist() == pytest.approx([_wilson_upper_at_zero(k) for k in n], abs=1e-12)
    exact = unit_share_bound(n, 0.9, "clopper-pearson")
    assert exact.tolist() == pytest.approx([1.0 - 0.05 ** (1.0 / k) for k in n], abs=1e-12)


def test_a_bare_bootstrap_of_a_constant_is_not_estimable_and_samples_needed_follow_1_over_n():
    """`bootstrap_interval` knows no range of its statistic: every replicate equal gives no bounds. A fallback
    interval's width shrinks as 1/n (Wilson at 0: z^2 / (n + z^2)), so n_needed = n h_now / h."""
    constant = bootstrap_interval(lambda w: np.zeros(len(w)), 10, num_resamples=20)
    assert (constant.low, constant.high) == (None, None) and "not estimable" in constant.note
    assert samples_needed(constant, 0.1) is None
    interval = _imagenet_c(8, wrong=True)["mean_top1"].interval(num_resamples=100)
    h = interval.half_width
    assert samples_needed(interval, h / 4.0) == 32  # 4x narrower: 4x the clean images, not 16x


# ----------------------------------------------------------------------------------- unchanged elsewhere: (d)
#: Bounds computed by the code before issue 38's change (commit e811cd0), from the data built in
#: `test_non_degenerate_intervals_are_unchanged`; they must not move.
PINNED = {
    "clustered mean_top1": [41.666666666666664, 64.81481481481482],
    "clustered severity5_top1": [19.444444444444443, 47.22222222222223],
    "clustered unnormalized_mce_all": [35.18518518518518, 58.333333333333336],
    "clustered mce": [42.04603761092367, 69.74447237702171],
    "clustered relative_mce": [-58.44253204504817, 72.55842283605386],
    "independent mean_top1": [45.37037037037037, 59.25925925925927],
    "paired mce": [-14.71428646438597, 38.75086191977306],
    "paired accuracy": [-22.5, 23.812499999999947],
    "ece": [26.065208618080835, 50.974080710778786],
    "aupr": [56.49815234107998, 91.99943671630092],
    "flip rate": [16.138688075914445, 22.340816861669566],
    "bg gap": [-20.0, 36.83333333333319],
    "mean bounds": [
        [0.6140451962469103, 2.036024978957547, 0.05233045668159143],
        [0.9859548037530897, 2.963975021042453, 0.1476695433184086],
    ],
}


def _pinned_data():
    from test_estimators import _corruption_samples, _estimators

    samples, clean = _corruption_samples(
        np.random.default_rng(21), 12, ("fog", "snow", "contrast"), (1, 3, 5)
    )
    other, _ = _corruption_samples(np.random.default_rng(22), 12, ("fog", "snow", "contrast"), (1, 3, 5))
    return samples, clean, other, _estimators


def test_non_degenerate_intervals_are_unchanged():
    """(d) On data whose units differ, every interval is exactly what it was before the fallback and the clipping."""
    from hf_vitrobust.metrics.mean_intervals import mean_bounds

    samples, clean, other, estimators_of = _pinned_data()
    found = {}
    for name, estimator in estimators_of(samples, clean).items():
        interval = estimator.interval(0.95, num_resamples=300, seed=4)
        found[f"clustered {name}"] = [interval.low, interval.high]
        assert interval.method == "percentile bootstrap"
    interval = estimators_of(samples, None, clustered=False)["mean_top1"].interval(
        0.9, num_resamples=300, seed=4
    )
    found["independent mean_top1"] = [interval.low, interval.high]
    mce_a, mce_b = estimators_of(samples, clean)["mce"], estimators_of(other, None)["mce"]
    difference = paired_comparison(mce_a, mce_b, num_resamples=300, seed=4).difference
    found["paired mce"] = [difference.low, difference.high]
    rng = np.random.default_rng(23)
    correct = rng.random(40) < 0.6
    a, b = accuracy_estimator(correct), accuracy_estimator(rng.random(40) < 0.5)
    difference = paired_comparison(a, b, num_resamples=300, seed=4).difference
    found["paired accuracy"] = [difference.low, difference.high]
    confidence = 0.3 + 0.7 * rng.random(40)
    interval = ece_estimator(confidence, correct, calibration_bins(confidence)).interval(
        num_resamples=300, seed=4
    )
    found["ece"] = [interval.low, interval.high]
    labels = np.r_[np.ones(12), np.zeros(18)].astype(bool)
    interval = aupr_estimator(rng.normal(size=30) + labels, labels).interval(num_resamples=300, seed=4)
    found["aupr"] = [interval.low, interval.high]
    names = list(TEST_PERTURBATIONS)[:3]
    perturbations = [name for name in names for _ in range(10)]
    flips = flip_rate_estimator(
        rng.random(30) * 0.4,
        perturbations,
        [f"{p}/{i}" for i, p in enumerate(perturbations)],
        [str(i % 10) for i in range(30)],
    )
    interval = flips.interval(num_resamples=300, seed=4)
    found["flip rate"] = [interval.low, interval.high]
    variants = ["mixed_same"] * 15 + ["mixed_rand"] * 15
    gap = background_gap_estimator(
        rng.random(30) < 0.6,
        variants,
        [f"{v}/{i % 15}" for i, v in enumerate(variants)],
        [str(i % 15) for i in range(30)],
    )
    interval = gap.interval(num_resamples=300, seed=4)
    found["bg gap"] = [interval.low, interval.high]
    low, high = mean_bounds([0.8, 2.5, 0.1], [0.3, 1.2, 0.05], [9, 20, 5], 0.9)
    found["mean bounds"] = [low.tolist(), high.tolist()]
    assert found == PINNED


# ---------------------------------------------------------------------------------------- batch size: (e)
def test_the_fallback_does_not_depend_on_the_bootstrap_batch(monkeypatch):
    """(e) With a draw budget of 64 the replicates come in many batches; the all-alike intervals (and a normal
    one) are the same to the last bit as with one batch."""
    samples, clean, _, estimators_of = _pinned_data()
    cases = {
        "all wrong": _imagenet_c(8, wrong=True)["mce"],
        "all right": _imagenet_c(8, wrong=False)["mean_top1"],
        "normal": estimators_of(samples, clean)["mce"],
    }

    def intervals():
        found = {name: e.interval(num_resamples=150, seed=3) for name, e in cases.items()}
        found["paired"] = paired_comparison(
            cases["all wrong"], cases["all wrong"], num_resamples=150
        ).difference
        return found

    one_batch = intervals()
    monkeypatch.setattr(interval_module, "MAX_DRAWS_PER_BATCH", 64)
    assert intervals() == one_batch
    assert (
        one_batch["all wrong"].method.endswith("fallback")
        and one_batch["normal"].method == "percentile bootstrap"
    )
    assert one_batch["paired"].method.endswith("fallback")


def test_the_fallback_is_per_unit_not_per_sample():
    """The honest n of a clustered quantity is the number of clean images, not images x cells: 8 images x 9 cells
    (72 samples) get the bound at 0 of 8, far wider than at 0 of 72."""
    interval = _imagenet_c(8, wrong=True)["mean_top1"].interval(num_resamples=100)
    assert interval.num_samples == 72 and interval.num_units == 8
    assert interval.high == pytest.approx(100.0 * _wilson_upper_at_zero(8), abs=1e-10)
    assert interval.high > 2.0 * 100.0 * _wilson_upper_at_zero(72)
