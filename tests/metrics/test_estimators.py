# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The headline estimators of issue 19 (`metrics.estimators`): each one at unit weights equals its metric module
(mCE, flip rate, BG-gap, AUPR, ECE, accuracy; and evaluation.scoring's mean / severity-5 top-1), at random integer
weights equals the metric recomputed on the explicitly resampled data (rows repeated by their weights); the cluster
and stratified bootstraps cover by simulation; paired comparisons; derived seeds."""

import hashlib

import numpy as np
import pandas as pd
import pytest
from scipy import integrate, stats
from scipy.special import expit
from sklearn.metrics import average_precision_score

from hf_vitrobust.analysis.scoring import corruption_metrics
from hf_vitrobust.constants import TEST_PERTURBATIONS
from hf_vitrobust.data.benchmarks import get_benchmark
from hf_vitrobust.metrics import (
    EXTRA_CORRUPTIONS,
    IMAGENET_TO_IN9,
    SEVERITIES,
    STANDARD_CORRUPTIONS,
    VARIANTS,
    background_gap,
    calibration_bins,
    calibration_metrics,
    corruption_error_from_cells,
    flip_rates,
    imagenet_to_in9,
    mean_corruption_error,
    ood_detection_metrics,
)
from hf_vitrobust.metrics.cell_tables import INDEPENDENT_NOTE
from hf_vitrobust.metrics.estimators import (
    accuracy_estimator,
    aupr_estimator,
    background_gap_estimator,
    corruption_estimators,
    derived_seed,
    ece_estimator,
    flip_rate_estimator,
    paired_comparison,
    weighted_average_precision,
)
from hf_vitrobust.metrics.flip_rate import sequence_stability
from hf_vitrobust.metrics.intervals import bootstrap_interval, proportion_interval

NUM_CLASSES = 10


def _row_weights(unit_weights: np.ndarray, estimator, row_keys) -> np.ndarray:
    """Each row's weight: the weight of its unit (the estimator's keys are sorted, so look them up by key)."""
    by_key = dict(zip(estimator.keys.tolist(), unit_weights.tolist(), strict=True))
    return np.asarray([by_key[str(key)] for key in row_keys], dtype=np.int64)


def _random_weights(rng, num_units: int, rows: int = 3) -> np.ndarray:
    """Bootstrap-like integer multiplicities 0..3 (b, units), some units left out of each resample."""
    weights = rng.integers(0, 4, (rows, num_units)).astype(np.float64)
    assert (weights == 0).any(axis=1).all() and (weights > 1).any(axis=1).all()
    return weights


# ---------------------------------------------------------------------------------------------------- seeds
def test_derived_seed_is_stable_and_differs_across_names():
    """blake2b (8 bytes) of "seed/name/...", read little-endian, shifted right once (so it fits a signed int64)."""
    name = "imagenet-c mCE % (alexnet-15)"
    expected = int.from_bytes(hashlib.blake2b(f"0/{name}".encode(), digest_size=8).digest(), "little") >> 1
    assert derived_seed(0, name) == expected == 601399450390232998
    assert derived_seed(2026, "compare", "imagenet top-1 %") == 3674185797713041759
    seeds = {derived_seed(0, label) for label in ("a", "b", "imagenet top-1 %", "imagenet ECE %")}
    seeds |= {derived_seed(1, "a"), derived_seed(0, "compare", "a")}
    assert len(seeds) == 6
    assert all(0 <= seed < 2**63 for seed in seeds)
    np.random.default_rng(derived_seed(0, name))  # a valid Generator seed


# ------------------------------------------------------------------------------------------------ accuracy
def test_accuracy_estimator_is_the_mean_and_gets_a_wilson_interval():
    rng = np.random.default_rng(0)
    correct = rng.random(157) < 0.62
    keys = [f"val/{i:05d}" for i in rng.permutation(157)]
    estimator = accuracy_estimator(correct, keys)
    assert estimator.estimate == pytest.approx(100.0 * correct.mean(), abs=1e-12)
    assert estimator.proportion and estimator.unit == "sample" and estimator.num_samples == 157
    assert estimator.keys.tolist() == sorted(keys)
    interval = estimator.interval(0.9)
    low, high = stats.binomtest(int(correct.sum()), 157).proportion_ci(0.9, method="wilson")
    assert (interval.low, interval.high) == pytest.approx((100 * low, 100 * high), abs=1e-10)
    assert estimator.interval(proportion_method="clopper-pearson") == proportion_interval(
        int(correct.sum()), 157, 0.95, "clopper-pearson", 100.0
    )
    weights = _random_weights(rng, 157)
    for row, value in zip(weights, estimator.values(weights), strict=True):
        repeated = np.repeat(correct, _row_weights(row, estimator, keys))
        assert value == pytest.approx(100.0 * repeated.mean(), abs=1e-12)
    with pytest.raises(ValueError, match="sample keys must be unique"):
        accuracy_estimator([True, False], ["a", "a"])


# ---------------------------------------------------------------------------------------------- ImageNet-C
def _corruption_samples(rng, num_images: int, corruptions, severities=SEVERITIES):
    """Predictions of num_images clean images under every (corruption, severity) cell, wrong with a probability
    that grows with the severity and an image's own difficulty; and the clean predictions of the same images."""
    cells = [(c, s) for c in corruptions for s in severities]
    difficulty = rng.normal(0.0, 1.0, num_images)
    labels = rng.integers(0, NUM_CLASSES, num_images)
    shift = np.array([-1.5 + 0.35 * s + 0.05 * (i % 7) for i, (_, s) in enumerate(cells)])
    wrong = rng.random((num_images, len(cells))) < expit(shift[None, :] + difficulty[:, None])
    other = (labels[:, None] + rng.integers(1, NUM_CLASSES, (num_images, len(cells)))) % NUM_CLASSES
    predictions = np.where(wrong, other, labels[:, None])
    image = np.repeat(np.arange(num_images), len(cells))
    corruption = np.tile([c for c, _ in cells], num_images)
    severity = np.tile([s for _, s in cells], num_images)
    samples = pd.DataFrame(
        {
            "prediction": predictions.ravel(),
            "label": labels[image],
            "corruption": corruption,
            "severity": severity,
            "sample_id": [f"{c}/{s}/img{i:03d}" for c, s, i in zip(corruption, severity, image, strict=True)],
            "clean_key": [f"img{i:03d}" for i in image],
        }
    )
    clean_wrong = rng.random(num_images) < expit(-1.0 + difficulty)
    clean = pd.DataFrame(
        {
            "prediction": np.where(clean_wrong, (labels + 1) % NUM_CLASSES, labels),
            "label": labels,
            "sample_id": [f"img{i:03d}" for i in range(num_images)],
        }
    )
    return samples.sample(frac=1.0, random_state=1).reset_index(
        drop=True
    ), clean  # rows in no particular order


def _estimators(samples: pd.DataFrame, clean: pd.DataFrame | None, clustered: bool = True):
    return corruption_estimators(
        (samples["prediction"] != samples["label"]).to_numpy(),
        samples["corruption"].tolist(),
        samples["severity"].to_numpy(),
        samples["sample_id"].to_numpy(),
        samples["clean_key"].to_numpy() if clustered else None,
        None if clean is None else (clean["prediction"] != clean["label"]).to_numpy(),
        None if clean is None else clean["sample_id"].to_numpy(),
    )


def _module_values(samples: pd.DataFrame, clean: pd.DataFrame) -> dict[str, float]:
    """The five headlines as the metric module and evaluation.scoring compute them."""
    module = mean_corruption_error(
        samples["prediction"],
        samples["label"],
        samples["corruption"].tolist(),
        samples["severity"],
        clean_predictions=clean["prediction"],
        clean_references=clean["label"],
        allow_partial=True,
    )
    scored = corruption_metrics(get_benchmark("imagenet-c"), samples, clean)
    assert scored["mce"] == module.mce and scored["relative_mce"] == module.relative_mce
    return {
        "mce": module.mce,
        "relative_mce": module.relative_mce,
        "unnormalized_mce_all": module.unnormalized_mce_all,
        "mean_top1": scored["mean_top1"],  # mean over every cell of top-1
        "severity5_top1": scored["severity5_top1"],  # mean over the corruptions at severity 5
    }


def test_corruption_estimators_equal_mce_and_scoring_at_unit_and_resampled_weights():
    """All 19 corruptions (the 4 extras enter unnormalized_mce_all and the top-1 means, not the mCE)."""
    rng = np.random.default_rng(1)
    samples, clean = _corruption_samples(rng, 24, STANDARD_CORRUPTIONS + EXTRA_CORRUPTIONS)
    estimators = _estimators(samples, clean)
    assert set(estimators) == {"mce", "relative_mce", "unnormalized_mce_all", "mean_top1", "severity5_top1"}
    expected = _module_values(samples, clean)
    for name, estimator in estimators.items():
        assert estimator.estimate == pytest.approx(expected[name], abs=1e-10), name
        assert (estimator.unit, estimator.note, len(estimator.keys)) == ("clean image", None, 24)
        assert estimator.num_samples == len(samples) and estimator.strata_sizes == [24]

    weights = _random_weights(rng, 24)
    values = {name: estimator.values(weights) for name, estimator in estimators.items()}
    for b, row in enumerate(weights):
        repeat = _row_weights(row, estimators["mce"], samples["clean_key"])
        clean_repeat = _row_weights(row, estimators["mce"], clean["sample_id"])
        resampled = _module_values(
            samples.loc[samples.index.repeat(repeat)], clean.loc[clean.index.repeat(clean_repeat)]
        )
        for name in estimators:
            assert values[name][b] == pytest.approx(resampled[name], abs=1e-10), (name, b)


def test_corruption_estimators_without_clean_keys_resample_samples_within_cells():
    """A partial set of cells (3 standard corruptions, severities 2, 3, 5): same estimates; each sample its own
    unit, stratified by cell, and the estimator says so. No relative mCE without the clusters."""
    rng = np.random.default_rng(2)
    samples, clean = _corruption_samples(rng, 15, ("fog", "contrast", "glass_blur"), (2, 3, 5))
    estimators = _estimators(samples, clean, clustered=False)
    assert set(estimators) == {"mce", "unnormalized_mce_all", "mean_top1", "severity5_top1"}
    expected = _module_values(samples, clean)
    mce = estimators["mce"]
    assert (mce.unit, mce.note, mce.strata_sizes) == ("sample", INDEPENDENT_NOTE, [15] * 9)
    for name, estimator in estimators.items():
        assert estimator.estimate == pytest.approx(expected[name], abs=1e-10), name
    weights = _random_weights(rng, len(samples))
    assert all((weights[:, mce.strata == s].sum(1) > 0).all() for s in range(9))  # no cell left empty
    values = {name: estimator.values(weights) for name, estimator in estimators.items()}
    for b, row in enumerate(weights):
        repeat = _row_weights(row, mce, samples["sample_id"])
        resampled = _module_values(samples.loc[samples.index.repeat(repeat)], clean)
        for name in estimators:
            assert values[name][b] == pytest.approx(resampled[name], abs=1e-10), (name, b)
    # Without severity 5 there is no severity-5 headline.
    no_five = samples[samples["severity"] != 5]
    assert "severity5_top1" not in _estimators(no_five, None)


def test_relative_mce_needs_a_clean_prediction_of_every_clean_image():
    rng = np.random.default_rng(3)
    samples, clean = _corruption_samples(rng, 6, ("fog",), (1, 2))
    assert "relative_mce" in _estimators(samples, clean)
    assert "relative_mce" not in _estimators(samples, clean.iloc[1:])


def test_interval_of_a_cluster_estimator_is_the_bootstrap_of_its_statistic():
    rng = np.random.default_rng(4)
    samples, clean = _corruption_samples(rng, 30, ("fog", "frost"), (1, 5))
    estimator = _estimators(samples, clean)["mce"]
    interval = estimator.interval(0.9, num_resamples=300, seed=17)
    direct = bootstrap_interval(estimator.values, 30, confidence_level=0.9, num_resamples=300, seed=17)
    assert (interval.estimate, interval.low, interval.high) == (direct.estimate, direct.low, direct.high)
    assert interval.low < interval.estimate < interval.high
    assert (interval.num_units, interval.num_samples, interval.unit) == (30, len(samples), "clean image")


# ---------------------------------------------------------------------------------------------- ImageNet-P
def _sequences(rng, num_images: int, perturbations, frames: int = 6):
    """Top-5 lists (frames, 5) per sequence: each frame keeps the previous frame's list or draws a new one."""
    names, ids, keys, tops = [], [], [], []
    for i in range(num_images):
        for name in perturbations:
            top = [rng.permutation(NUM_CLASSES)[:5]]
            for _ in range(frames - 1):
                top.append(top[-1] if rng.random() < 0.7 else rng.permutation(NUM_CLASSES)[:5])
            names.append(name)
            ids.append(f"{name}/img{i:02d}")
            keys.append(f"img{i:02d}")
            tops.append(np.stack(top))
    return names, np.asarray(ids), np.asarray(keys), tops


def _per_sequence(names, tops):
    flips, distances = np.empty(len(names)), np.empty(len(names))
    for name in set(names):
        members = [i for i, n in enumerate(names) if n == name]
        flip, distance = sequence_stability(np.stack([tops[i] for i in members]), name, 1)
        flips[members], distances[members] = flip, distance
    return flips, distances


def test_flip_rate_estimator_equals_flip_rates():
    """mFR (unnormalised, percent) and mT5D (scale 1) over the 10 test perturbations; the validation ones present
    in the data do not enter."""
    rng = np.random.default_rng(5)
    names, ids, keys, tops = _sequences(rng, 12, (*TEST_PERTURBATIONS, "speckle_noise", "shear"))
    flips, distances = _per_sequence(names, tops)
    module = flip_rates(tops, names, 1)
    mfr = flip_rate_estimator(flips, names, ids, keys)
    mt5d = flip_rate_estimator(distances, names, ids, keys, scale=1.0)
    assert mfr.estimate == pytest.approx(100.0 * module.mfr_unnormalized, abs=1e-10)
    assert mt5d.estimate == pytest.approx(module.mt5d_unnormalized, abs=1e-10)
    assert (mfr.unit, mfr.note, len(mfr.keys)) == ("clean image", None, 12)
    weights = _random_weights(rng, 12)
    for row, flip_value, distance_value in zip(
        weights, mfr.values(weights), mt5d.values(weights), strict=True
    ):
        repeat = _row_weights(row, mfr, keys)
        resampled = flip_rates(
            [t for t, r in zip(tops, repeat, strict=True) for _ in range(r)],
            np.repeat(names, repeat).tolist(),
            1,
        )
        assert flip_value == pytest.approx(100.0 * resampled.mfr_unnormalized, abs=1e-10)
        assert distance_value == pytest.approx(resampled.mt5d_unnormalized, abs=1e-10)
    independent = flip_rate_estimator(flips, names, ids)
    assert independent.estimate == pytest.approx(mfr.estimate, abs=1e-10)
    assert (independent.unit, independent.note) == ("sequence", INDEPENDENT_NOTE)
    assert independent.strata_sizes == [12] * 12


# ---------------------------------------------------------------------------------------------- ImageNet-9
def test_background_gap_estimator_equals_background_gap():
    """Correctness fed as background_gap scores it: the ImageNet-1k prediction mapped to the 9 superclasses."""
    rng = np.random.default_rng(6)
    num_images = 40
    variant = np.tile(VARIANTS, num_images)
    image = np.repeat(np.arange(num_images), len(VARIANTS))
    references = np.repeat(rng.integers(0, 9, num_images), len(VARIANTS))
    superclass = IMAGENET_TO_IN9
    in_class = [np.flatnonzero(superclass == c) for c in range(9)]
    hit_rate = np.where(variant == "mixed_same", 0.8, np.where(variant == "mixed_rand", 0.6, 0.7))
    predictions = np.where(
        rng.random(len(variant)) < hit_rate,
        [rng.choice(in_class[r]) for r in references],
        rng.integers(0, 1000, len(variant)),  # mostly outside the 9 superclasses
    )
    correct = imagenet_to_in9(predictions) == references
    ids = np.char.add(np.char.add(variant.astype(str), "/"), image.astype(str))
    foreground = np.char.add("fg", image.astype(str))
    module = background_gap(predictions, references, variant.tolist())
    estimator = background_gap_estimator(correct, variant.tolist(), ids, foreground)
    assert estimator.estimate == pytest.approx(100.0 * module.bg_gap, abs=1e-10)
    assert (estimator.unit, estimator.note, len(estimator.keys)) == ("foreground image", None, num_images)
    weights = _random_weights(rng, num_images)
    for row, value in zip(weights, estimator.values(weights), strict=True):
        repeat = _row_weights(row, estimator, foreground)
        resampled = background_gap(
            np.repeat(predictions, repeat), np.repeat(references, repeat), np.repeat(variant, repeat).tolist()
        )
        assert value == pytest.approx(100.0 * resampled.bg_gap, abs=1e-10)
    unpaired = background_gap_estimator(correct, variant.tolist(), ids)
    assert unpaired.estimate == pytest.approx(estimator.estimate, abs=1e-10)
    assert unpaired.strata_sizes == [num_images, num_images] and unpaired.note == INDEPENDENT_NOTE
    with pytest.raises(ValueError, match="needs both the mixed_same and the mixed_rand"):
        background_gap_estimator(
            correct[variant != "mixed_rand"],
            variant[variant != "mixed_rand"].tolist(),
            ids[variant != "mixed_rand"],
        )


# ---------------------------------------------------------------------------------------------- ImageNet-O
def _ood_scores(rng, num_ood: int, num_in: int, decimals: int | None = 1):
    scores = np.r_[rng.normal(1.0, 1.0, num_ood), rng.normal(0.0, 1.0, num_in)]
    is_ood = np.r_[np.ones(num_ood, bool), np.zeros(num_in, bool)]
    order = rng.permutation(len(scores))
    scores = scores[order] if decimals is None else np.round(scores[order], decimals)  # rounding makes ties
    return scores, is_ood[order]


def test_aupr_estimator_equals_average_precision():
    rng = np.random.default_rng(7)
    scores, is_ood = _ood_scores(rng, 60, 90)
    assert len(np.unique(scores)) < len(scores)  # ties, across and within the classes
    estimator = aupr_estimator(scores, is_ood)
    assert estimator.estimate == pytest.approx(100.0 * average_precision_score(is_ood, scores), abs=1e-10)
    assert estimator.estimate == pytest.approx(100.0 * ood_detection_metrics(scores, is_ood).aupr, abs=1e-10)
    assert estimator.strata_sizes == [60, 90] and estimator.unit == "image"
    original = np.asarray([int(key.split("/")[1]) for key in estimator.keys])
    assert is_ood[original[:60]].all() and not is_ood[original[60:]].any()
    weights = _random_weights(rng, 150)
    for row, value in zip(weights, estimator.values(weights), strict=True):
        repeat = np.zeros(150, dtype=np.int64)
        repeat[original] = row
        resampled = np.repeat(scores, repeat), np.repeat(is_ood, repeat)
        assert value == pytest.approx(100.0 * average_precision_score(resampled[1], resampled[0]), abs=1e-10)


def test_weighted_average_precision_equals_sklearn_sample_weight():
    rng = np.random.default_rng(8)
    scores, is_ood = _ood_scores(rng, 25, 40, decimals=0)
    weights = rng.integers(0, 5, (6, len(scores))).astype(np.float64)
    values = weighted_average_precision(scores, is_ood, weights)
    expected = [average_precision_score(is_ood, scores, sample_weight=w) for w in weights]
    np.testing.assert_allclose(values, expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(
        weighted_average_precision(scores, is_ood, np.ones((1, len(scores)))),
        [average_precision_score(is_ood, scores)],
        rtol=0,
        atol=1e-12,
    )


# --------------------------------------------------------------------------------------------- calibration
def test_ece_estimator_equals_calibration_metrics():
    """calibration_metrics' ECE is a fraction; the estimator's is in percent."""
    rng = np.random.default_rng(9)
    logits = rng.normal(0.0, 2.5, (300, NUM_CLASSES))
    labels = np.where(rng.random(300) < 0.6, logits.argmax(1), rng.integers(0, NUM_CLASSES, 300))
    probabilities = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    confidence = probabilities.max(1)
    correct = probabilities.argmax(1) == labels
    estimator = ece_estimator(confidence, correct, calibration_bins(confidence))
    module = calibration_metrics(probabilities, labels)
    assert 0.0 < module.ece < 1.0
    assert estimator.estimate == pytest.approx(100.0 * module.ece, abs=1e-10)
    weights = _random_weights(rng, 300)
    for row, value in zip(weights, estimator.values(weights), strict=True):
        repeat = _row_weights(row, estimator, np.arange(300).astype(str))
        resampled = calibration_metrics(np.repeat(probabilities, repeat, axis=0), np.repeat(labels, repeat))
        assert value == pytest.approx(100.0 * resampled.ece, abs=1e-10)


# --------------------------------------------------------------------------------------- paired comparison
def _two_models(rng, n: int):
    """A right with probability 0.75, B 0.70; on half the samples (chosen at random) both read the same uniform,
    so their errors are positively correlated."""
    shared, own, together = rng.random(n), rng.random(n), rng.random(n) < 0.5
    return shared < 0.75, np.where(together, shared, own) < 0.70


def test_a_known_gap_is_resolved_at_large_n_and_not_at_small_n():
    """A - B = 5 points. At n = 20,000 the paired SE is about sqrt(0.225 / n) = 0.34 points: resolved, near 5;
    at n = 100 (SE ~4.7 points) not (seeded)."""
    large_a, large_b = _two_models(np.random.default_rng(11), 20_000)
    large = paired_comparison(accuracy_estimator(large_a), accuracy_estimator(large_b), num_resamples=500)
    assert large.difference.low > 0.0 and large.p_value < 0.05 and large.mcnemar.p_value == large.p_value
    assert abs(large.difference.estimate - 5.0) < 4 * 0.34
    assert large.mcnemar.only_a > large.mcnemar.only_b
    small_a, small_b = _two_models(np.random.default_rng(12), 100)
    small = paired_comparison(accuracy_estimator(small_a), accuracy_estimator(small_b), num_resamples=500)
    assert small.difference.low <= 0.0 <= small.difference.high and small.p_value >= 0.05


def test_pairing_narrows_the_interval_of_correlated_models():
    """One set of weights for both models: the difference's interval is narrower than the two intervals combined as
    if independent (sqrt of the summed squared half-widths), since the models' errors are correlated."""
    a, b = _two_models(np.random.default_rng(13), 2000)
    ea, eb = accuracy_estimator(a), accuracy_estimator(b)
    paired = paired_comparison(ea, eb, num_resamples=1000)
    unpaired = np.hypot(ea.interval().half_width, eb.interval().half_width)
    assert paired.difference.half_width < 0.85 * unpaired


def test_paired_corruption_estimators_on_the_clean_images_both_saw():
    """B lacks 7 of the 40 clean images: the comparison runs over the 33 both saw (num_units), and its difference
    is the mCE of A minus that of B, each recomputed by the metric module on those images only."""
    rng = np.random.default_rng(14)
    corruptions = ("gaussian_noise", "motion_blur", "fog")
    samples_a, clean = _corruption_samples(rng, 40, corruptions)
    samples_b = samples_a.copy()
    flip = rng.random(len(samples_b)) < 0.15
    samples_b.loc[flip, "prediction"] = (samples_b.loc[flip, "prediction"] + 1) % NUM_CLASSES
    missing = {f"img{i:03d}" for i in rng.choice(40, 7, replace=False)}
    samples_b = samples_b[~samples_b["clean_key"].isin(missing)]
    a, b = _estimators(samples_a, clean)["mce"], _estimators(samples_b, clean)["mce"]
    comparison = paired_comparison(a, b, num_resamples=400, seed=3)
    assert comparison.num_units == comparison.difference.num_units == 33
    shared = samples_a[~samples_a["clean_key"].isin(missing)]

    def module_mce(frame):
        return mean_corruption_error(
            frame["prediction"],
            frame["label"],
            frame["corruption"].tolist(),
            frame["severity"],
            allow_partial=True,
        ).mce

    assert comparison.difference.estimate == pytest.approx(
        module_mce(shared) - module_mce(samples_b), abs=1e-10
    )
    assert comparison.difference.low < comparison.difference.estimate < comparison.difference.high
    assert comparison.mcnemar is None and 0.0 <= comparison.p_value <= 1.0
    assert comparison.difference.unit == "clean image"
    with pytest.raises(ValueError, match="share no samples"):
        paired_comparison(accuracy_estimator([True], ["x"]), accuracy_estimator([True], ["y"]))


def test_paired_comparison_of_samples_keyed_only_within_their_cell():
    """Without clean keys the units are samples within cells, and a sample id need only be unique within its cell
    (`cell_table`): the same id in two cells is two units. The comparison pairs them by (id, cell)."""
    rng = np.random.default_rng(15)
    cells = [("fog", 1), ("fog", 2), ("frost", 1)]
    n = 30
    corruption = [c for c, _ in cells for _ in range(n)]
    severity = [s for _, s in cells for _ in range(n)]
    ids = [f"img{i}" for _ in cells for i in range(n)]  # repeated across cells
    wrong_a, wrong_b = rng.random(3 * n) < 0.3, rng.random(3 * n) < 0.5
    a = corruption_estimators(wrong_a, corruption, severity, ids)["mce"]
    b = corruption_estimators(wrong_b, corruption, severity, ids)["mce"]
    comparison = paired_comparison(a, b, num_resamples=300)
    assert comparison.num_units == 3 * n
    assert comparison.difference.estimate == pytest.approx(a.estimate - b.estimate, abs=1e-10)
    assert comparison.difference.low < comparison.difference.estimate < comparison.difference.high
    # B without the last 5 samples of each cell: the 75 shared units, the difference recomputed on them.
    kept = np.tile(np.arange(n) < n - 5, 3)
    b_less = corruption_estimators(
        wrong_b[kept], np.asarray(corruption)[kept], np.asarray(severity)[kept], np.asarray(ids)[kept]
    )["mce"]
    a_less = corruption_estimators(
        wrong_a[kept], np.asarray(corruption)[kept], np.asarray(severity)[kept], np.asarray(ids)[kept]
    )["mce"]
    partial = paired_comparison(a, b_less, num_resamples=300)
    assert partial.num_units == 3 * (n - 5)
    assert partial.difference.estimate == pytest.approx(a_less.estimate - b_less.estimate, abs=1e-10)
    with pytest.raises(ValueError, match="repeat across strata"):
        a.restricted(a.keys.tolist())
    # B without the whole first cell: its strata are numbered from the second cell, and the units still pair by
    # (id, cell name): the shared units are those of the two other cells.
    later = np.asarray(corruption) != "fog"
    later |= np.asarray(severity) == 2
    b_two = corruption_estimators(
        wrong_b[later], np.asarray(corruption)[later], np.asarray(severity)[later], np.asarray(ids)[later]
    )["unnormalized_mce_all"]
    a_full = corruption_estimators(wrong_a, corruption, severity, ids)["unnormalized_mce_all"]
    a_two = corruption_estimators(
        wrong_a[later], np.asarray(corruption)[later], np.asarray(severity)[later], np.asarray(ids)[later]
    )["unnormalized_mce_all"]
    two = paired_comparison(a_full, b_two, num_resamples=300)
    assert two.num_units == 2 * n
    assert two.difference.estimate == pytest.approx(a_two.estimate - b_two.estimate, abs=1e-10)


def test_paired_accuracy_on_shared_samples_only():
    rng = np.random.default_rng(16)
    a, b = rng.random(50) < 0.8, rng.random(50) < 0.6
    keys = [f"s{i:02d}" for i in range(50)]
    comparison = paired_comparison(
        accuracy_estimator(a, keys), accuracy_estimator(b[10:], keys[10:]), num_resamples=200
    )
    assert comparison.num_units == 40
    assert comparison.difference.estimate == pytest.approx(100.0 * (a[10:].mean() - b[10:].mean()), abs=1e-10)
    assert comparison.mcnemar.only_a == int(np.sum(a[10:] & ~b[10:]))
    assert comparison.mcnemar.only_b == int(np.sum(~a[10:] & b[10:]))
    assert comparison.to_dict()["mcnemar"] == comparison.mcnemar.to_dict()


# ------------------------------------------------------------------------------------- coverage (simulated)
MCE_CORRUPTIONS = ("gaussian_noise", "contrast", "fog")
MCE_CELLS = [(c, s) for c in MCE_CORRUPTIONS for s in SEVERITIES]
MCE_SHIFT = np.array([-1.2 + 0.35 * s + 0.2 * j for j, c in enumerate(MCE_CORRUPTIONS) for s in SEVERITIES])
MCE_SIGMA = 1.5  # the sd of an image's difficulty (logit scale): strong within-image correlation across cells


def _population_cell_errors(nodes: int) -> np.ndarray:
    """E over images of expit(shift_c + sigma Z), Z ~ N(0, 1): Gauss-Hermite quadrature (probabilists')."""
    z, weight = np.polynomial.hermite_e.hermegauss(nodes)
    return (expit(MCE_SHIFT[None, :] + MCE_SIGMA * z[:, None]) * (weight / weight.sum())[:, None]).sum(0)


@pytest.mark.slow
def test_mce_cluster_bootstrap_covers_and_treating_samples_as_independent_does_not():
    """Each of 200 clean images has a difficulty u ~ N(0, 1.5^2) shared by its 15 cells (3 standard corruptions x 5
    severities): P(wrong | u) = expit(shift_c + u). The truth is the mCE of the population cell errors
    E[expit(shift_c + u)], exact by quadrature (80 and 160 nodes agree to 1e-12); mCE is linear in the cell errors,
    so this is the estimand. 800 repetitions, 300 resamples: the coverage estimate's Monte Carlo SE is
    sqrt(0.94 * 0.06 / 800) = 0.84 points (a 3,000-repetition run measured 94.2 %), so 92-97 % is 2.6 SE below and
    3.4 SE above. The same data with clean_keys=None (samples independent within cells) on the first 100
    repetitions: 56-64 % measured (SE about 5 points), far below the cluster version: the within-image
    correlation makes the independent bootstrap's interval too narrow."""
    cell_errors = _population_cell_errors(80)
    np.testing.assert_allclose(cell_errors, _population_cell_errors(160), rtol=0, atol=1e-12)
    truth = corruption_error_from_cells(
        dict(zip(MCE_CELLS, cell_errors, strict=True)), allow_partial=True
    ).mce
    num_images, cells = 200, len(MCE_CELLS)
    corruption = np.tile([c for c, _ in MCE_CELLS], num_images)
    severity = np.tile([s for _, s in MCE_CELLS], num_images)
    image = np.repeat(np.arange(num_images), cells)
    ids = np.char.add(np.char.add(image.astype(str), "/"), np.tile(np.arange(cells), num_images).astype(str))
    clean_keys = image.astype(str)
    rng = np.random.default_rng(190)
    clustered, independent = [], []
    for repetition in range(800):
        difficulty = rng.normal(0.0, MCE_SIGMA, num_images)
        wrong = (rng.random((num_images, cells)) < expit(MCE_SHIFT[None, :] + difficulty[:, None])).ravel()
        estimator = corruption_estimators(wrong, corruption, severity, ids, clean_keys)["mce"]
        clustered.append(estimator.interval(num_resamples=300, seed=repetition).contains(truth))
        if repetition < 100:
            flat = corruption_estimators(wrong, corruption, severity, ids, None)["mce"]
            assert flat.note == INDEPENDENT_NOTE
            independent.append(flat.interval(num_resamples=300, seed=repetition).contains(truth))
    cluster_coverage, independent_coverage = np.mean(clustered), np.mean(independent)
    assert 0.92 <= cluster_coverage <= 0.97, cluster_coverage
    assert independent_coverage < 0.85 and independent_coverage < cluster_coverage - 0.1, independent_coverage


def _population_aupr(separation: float) -> float:
    """The limit of average precision with equal class sizes, OOD ~ N(separation, 1), in-distribution ~ N(0, 1):
    the integral over recall r of r / (r + FPR(r)), FPR(r) = Phi(Phi^-1(r) - separation)."""
    value, _ = integrate.quad(
        lambda r: r / (r + stats.norm.cdf(stats.norm.ppf(r) - separation)), 0, 1, epsabs=1e-13
    )
    return value


@pytest.mark.slow
def test_aupr_stratified_bootstrap_covers():
    """500 OOD ~ N(1.5, 1) and 500 in-distribution ~ N(0, 1) images per repetition. The truth is the population AP
    (an integral), which a huge seeded sample (250,000 per class; its AP's SD is 0.013 * sqrt(500 / 250000) = 0.0006)
    reproduces. 600 repetitions, 300 resamples: the coverage estimate's SE is sqrt(0.945 * 0.055 / 600) = 0.93 points
    (a 2,000-repetition run measured 94.5 %), so 92-97 % is about 2.7 SE either side. (At separation 1.0 the same
    design measured 93.2-93.6 %: inside the band but too near its edge for 600 repetitions.)"""
    separation = 1.5
    truth = _population_aupr(separation)
    huge = np.random.default_rng(0)
    big = 250_000
    huge_scores = np.r_[huge.normal(separation, 1.0, big), huge.normal(0.0, 1.0, big)]
    huge_labels = np.r_[np.ones(big, bool), np.zeros(big, bool)]
    assert average_precision_score(huge_labels, huge_scores) == pytest.approx(truth, abs=0.0025)
    rng = np.random.default_rng(191)
    per_class = 500
    is_ood = np.r_[np.ones(per_class, bool), np.zeros(per_class, bool)]
    covered = []
    for repetition in range(600):
        scores = np.r_[rng.normal(separation, 1.0, per_class), rng.normal(0.0, 1.0, per_class)]
        estimator = aupr_estimator(scores, is_ood)
        covered.append(estimator.interval(num_resamples=300, seed=repetition).contains(100.0 * truth))
    coverage = np.mean(covered)
    assert 0.92 <= coverage <= 0.97, coverage
