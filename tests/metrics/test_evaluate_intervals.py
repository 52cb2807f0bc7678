# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Confidence intervals from the `evaluate` modules (issue 19, point 4): `compute(..., confidence_level=0.95)` adds
a "<key>_interval" per headline, whose estimate is the module's value; without a level the output is unchanged.
Proportions are checked against scipy's binomtest, means against scipy's Student-t, the AUPR's stratified bootstrap
against scipy.stats.bootstrap."""

import ast
import json
import re
import uuid
from pathlib import Path

import evaluate
import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import average_precision_score

import hf_vitrobust.metrics as metrics
from hf_vitrobust.hub.staging import stage_metric
from hf_vitrobust.metrics import (
    EXTRA_CORRUPTIONS,
    IMAGENET_TO_IN9,
    METRIC_NAMES,
    SEVERITIES,
    STANDARD_CORRUPTIONS,
    TEST_PERTURBATIONS,
)
from hf_vitrobust.metrics.cell_tables import INDEPENDENT_NOTE

ROOT = Path(__file__).resolve().parents[2]
LEVEL = 0.95
RESAMPLES = 200
BOOTSTRAPPED = {"mce", "flip_rate", "ood_aupr", "calibration", "background_gap"}
# The interval keys each module adds with a confidence level (and its example's cluster keys).
INTERVAL_KEYS = {
    "mce": {
        "mce_interval",
        "relative_mce_interval",
        "unnormalized_mce_interval",
        "mean_corruption_accuracy_interval",
        "unnormalized_mce_all_interval",
    },
    "flip_rate": {"mfr_unnormalized_interval", "mt5d_unnormalized_interval", "mfr_interval", "mt5d_interval"},
    "ood_aupr": {"aupr_interval"},
    "masked_accuracy": {"top1_interval", "top5_interval"},
    "calibration": {"ece_interval", "accuracy_interval"},
    "background_gap": {"bg_gap_interval", "accuracy_interval"},
    "occlusion_accuracy": {"accuracy_interval", "mean_confidence_interval"},
    "fourier_heatmap": {"error_map_interval"},
    "frequency_noise": {"accuracy_interval"},
    "loss_progression": {"loss_mean_interval"},
}


def _mce_case(rng):
    cells = [(c, s) for c in (*STANDARD_CORRUPTIONS, EXTRA_CORRUPTIONS[0]) for s in SEVERITIES]
    images = 8
    hard = rng.random(images)  # errors cluster by clean image
    rows = [(c, s, i) for c, s in cells for i in range(images)]
    wrong = rng.random(len(rows)) < 0.15 + 0.7 * hard[[i for *_, i in rows]]
    inputs = {
        "predictions": wrong.astype(int).tolist(),
        "references": [0] * len(rows),
        "corruptions": [c for c, _, _ in rows],
        "severities": [s for _, s, _ in rows],
    }
    kwargs = {"clean_predictions": (hard > 0.6).astype(int).tolist(), "clean_references": [0] * images}
    keys = {
        "clean_keys": [f"image{i}" for *_, i in rows],
        "clean_prediction_keys": [f"image{i}" for i in range(images)],
    }
    return inputs, kwargs, keys, metrics.mean_corruption_error(*inputs.values(), **kwargs)


def _flip_rate_case(rng):
    images, frames = 6, 5
    names = [p for p in TEST_PERTURBATIONS for _ in range(images)]
    sequences = [[rng.permutation(10)[:5].tolist() for _ in range(frames)] for _ in names]
    inputs = {"predictions": sequences, "perturbations": names, "difficulties": [1] * len(names)}
    kwargs = {
        "baseline_flip_probability": dict.fromkeys(TEST_PERTURBATIONS, 0.5),
        "baseline_top5_distance": dict.fromkeys(TEST_PERTURBATIONS, 4.0),
    }
    keys = {"clean_keys": [f"image{i % images}" for i in range(len(names))]}
    return inputs, kwargs, keys, metrics.flip_rates(*inputs.values(), **kwargs)


def _ood_case(rng):
    is_ood = np.arange(45) % 3 == 0
    scores = rng.normal(size=45) + 0.7 * is_ood
    inputs = {"scores": scores.tolist(), "is_ood": is_ood.tolist()}
    return inputs, {}, {}, metrics.ood_detection_metrics(scores, is_ood)


def _masked_case(rng):
    mask = list(range(0, 20, 2))
    logits = rng.normal(size=(60, 20))
    references = rng.choice(mask, size=60)
    logits[np.arange(60), references] += rng.random(60) < 0.4  # some right, most wrong
    inputs = {"predictions": logits.tolist(), "references": references.tolist()}
    kwargs = {"class_indices": mask}
    return inputs, kwargs, {}, metrics.masked_accuracy(logits, references, mask)


def _calibration_case(rng):
    logits = 2.0 * rng.normal(size=(80, 5))
    references = rng.integers(0, 5, size=80)
    inputs = {"predictions": logits.tolist(), "references": references.tolist()}
    kwargs = {"from_logits": True, "num_bins": 10}
    return inputs, kwargs, {}, metrics.calibration_metrics(logits, references, **kwargs)


def _in9_index(superclass):
    """The first ImageNet-1k index of an ImageNet-9 superclass (-1: a class in none of the 9)."""
    return int(np.flatnonzero(np.equal(IMAGENET_TO_IN9, superclass))[0])


def _background_case(rng):
    foregrounds = 30
    variants = ["original", "mixed_same", "mixed_rand", "only_fg"]
    rows = [(v, f) for v in variants for f in range(foregrounds)]
    labels = rng.integers(0, 9, size=foregrounds)
    easy = rng.random(foregrounds)
    hit = {"original": 0.9, "mixed_same": 0.8, "mixed_rand": 0.5, "only_fg": 0.7}
    correct = [rng.random() < hit[v] * (0.5 + easy[f]) for v, f in rows]
    predictions = [
        _in9_index(labels[f]) if ok else _in9_index(-1) for (_, f), ok in zip(rows, correct, strict=True)
    ]
    inputs = {
        "predictions": predictions,
        "references": [int(labels[f]) for _, f in rows],
        "variants": [v for v, _ in rows],
    }
    keys = {"foreground_keys": [f"fg{f}" for _, f in rows]}
    return inputs, {}, keys, metrics.background_gap(*inputs.values())


def _occlusion_case(rng):
    ratios = [r for r in (0.0, 0.1, 0.2, 0.5) for _ in range(25)]
    correct = [bool(rng.random() < 0.9 - r) for r in ratios]
    confidences = rng.uniform(0.2, 1.0, size=len(ratios)).tolist()
    inputs = {"ratios": ratios, "correct": correct, "confidences": confidences}
    return inputs, {}, {}, metrics.occlusion_accuracy(*inputs.values())


def _fourier_case(rng):
    half = [(i, j) for i in range(-2, 3) for j in range(-2, 3) if i > 0 or (i == 0 and j >= 0)]
    records = [(i, j) for i, j in half for _ in range(6)]  # the other half of the window is mirrored
    inputs = {
        "frequency_i": [i for i, _ in records],
        "frequency_j": [j for _, j in records],
        "correct": (rng.random(len(records)) < 0.6).tolist(),
    }
    kwargs = {"window": 5}
    return inputs, kwargs, {}, metrics.fourier_error_map(*inputs.values(), **kwargs)


def _frequency_case(rng):
    frequencies = [f for f in (0.1, 0.3, 0.5, 0.7, 0.9) for _ in range(20)]
    inputs = {"frequencies": frequencies, "correct": [bool(rng.random() < 1.0 - f) for f in frequencies]}
    kwargs = {"clean_accuracy": 0.8}
    return inputs, kwargs, {}, metrics.frequency_noise_accuracy(*inputs.values(), **kwargs)


def _loss_case(rng):
    steps = [s for s in range(5) for _ in range(12)] + [5]  # step 5 has one record: no Student-t interval
    losses = [0.5 * s + rng.normal(scale=0.3) for s in steps]
    inputs = {"steps": steps, "losses": losses}
    return inputs, {}, {}, metrics.loss_progression(*inputs.values())


CASES = {
    "mce": _mce_case,
    "flip_rate": _flip_rate_case,
    "ood_aupr": _ood_case,
    "masked_accuracy": _masked_case,
    "calibration": _calibration_case,
    "background_gap": _background_case,
    "occlusion_accuracy": _occlusion_case,
    "fourier_heatmap": _fourier_case,
    "frequency_noise": _frequency_case,
    "loss_progression": _loss_case,
}


def _case(name):
    """(evaluate inputs, the module's own compute options, cluster keys, the package function's result dict)."""
    inputs, kwargs, keys, expected = CASES[name](np.random.default_rng(sorted(CASES).index(name)))
    return inputs, kwargs, keys, expected.to_dict()


def _pairs(value, interval, label):
    """(label, value, interval dict) for every interval of an output entry (per variant, ratio, cell, ...)."""
    if interval is None:
        yield label, value, None
    elif isinstance(interval, dict) and "estimate" in interval:
        yield label, value, interval
    elif isinstance(interval, dict):
        assert set(interval) == set(value), label
        for key in interval:
            yield from _pairs(value[key], interval[key], f"{label}.{key}")
    else:
        assert len(interval) == len(value), label
        for i, (item, bounds) in enumerate(zip(value, interval, strict=True)):
            yield from _pairs(item, bounds, f"{label}[{i}]")


def _intervals(result):
    for key in sorted(k for k in result if k.endswith("_interval")):
        yield from _pairs(result[key.removesuffix("_interval")], result[key], key)


def _widths(result):
    return {
        label: interval["high"] - interval["low"]
        for label, _, interval in _intervals(result)
        if interval is not None and interval["low"] is not None
    }


@pytest.fixture(scope="module")
def modules():
    """Each evaluate module, loaded once by path from the checkout (evaluate.load is slow)."""
    return {name: evaluate.load(str(ROOT / "metrics" / name)) for name in METRIC_NAMES}


def _fresh(name):
    """A module of its own for a compute that raises: evaluate keeps a failed compute's cache-file lock, and the
    next compute of that instance waits a second for it."""
    return evaluate.load(str(ROOT / "metrics" / name), experiment_id=uuid.uuid4().hex)


def _compute(modules, name, **options):
    inputs, kwargs, keys, _ = _case(name)
    if options.pop("with_keys", True):
        options = {**keys, **options}
    return modules[name].compute(**inputs, **kwargs, **options)


def test_every_module_has_a_case():
    assert set(CASES) == set(METRIC_NAMES) == set(INTERVAL_KEYS)


@pytest.mark.parametrize("name", METRIC_NAMES)
def test_without_a_level_the_output_is_unchanged(modules, name):
    _, _, _, expected = _case(name)
    plain = _compute(modules, name, with_keys=False)
    assert plain == expected
    options = {"num_resamples": 50, "seed": 3, "interval_method": "clopper-pearson"}
    assert _compute(modules, name, confidence_level=None, **options) == expected


@pytest.mark.parametrize("name", METRIC_NAMES)
def test_interval_estimates_are_the_values(modules, name):
    _, _, _, expected = _case(name)
    result = _compute(modules, name, confidence_level=LEVEL, num_resamples=RESAMPLES)
    json.dumps(result)  # JSON-safe
    assert set(result) - set(expected) == INTERVAL_KEYS[name]
    assert {key: result[key] for key in expected} == expected  # the intervals are added, nothing else changes
    checked = 0
    for label, value, interval in _intervals(result):
        if interval is None:
            assert value is None, label
            continue
        assert interval["estimate"] == pytest.approx(value, rel=1e-12, abs=1e-12), label
        assert interval["confidence_level"] == LEVEL and interval["scale"] == 1.0, label
        if interval["low"] is not None:
            assert interval["low"] - 1e-12 <= value <= interval["high"] + 1e-12, label
            assert interval["low"] < interval["high"], label
            checked += 1
    assert checked >= len(INTERVAL_KEYS[name])


def _in_mask_hits(logits, references, mask):
    mask = np.asarray(mask)
    ranked = mask[np.argsort(-logits[:, mask], axis=1, kind="stable")]
    return ranked[:, 0] == references, (ranked[:, :5] == references[:, None]).any(axis=1)


def _proportion_cases(result, name):
    """(interval, successes, trials) of every proportion in `result`, the counts taken from the inputs."""
    inputs, kwargs, _, _ = _case(name)
    if name == "masked_accuracy":
        top1, top5 = _in_mask_hits(
            np.asarray(inputs["predictions"]), np.asarray(inputs["references"]), kwargs["class_indices"]
        )
        return [(result["top1_interval"], top1.sum(), 60), (result["top5_interval"], top5.sum(), 60)]
    if name == "calibration":
        correct = np.argmax(inputs["predictions"], axis=1) == np.asarray(inputs["references"])
        return [(result["accuracy_interval"], correct.sum(), len(correct))]
    if name == "background_gap":
        correct = IMAGENET_TO_IN9[inputs["predictions"]] == np.asarray(inputs["references"])
        variants = np.asarray(inputs["variants"])
        return [
            (interval, correct[variants == variant].sum(), (variants == variant).sum())
            for variant, interval in result["accuracy_interval"].items()
        ]
    if name in {"occlusion_accuracy", "frequency_noise"}:
        column = "ratios" if name == "occlusion_accuracy" else "frequencies"
        points, correct = np.asarray(inputs[column]), np.asarray(inputs["correct"])
        return [
            (interval, correct[points == point].sum(), (points == point).sum())
            for point, interval in zip(result[column], result["accuracy_interval"], strict=True)
        ]
    if name == "fourier_heatmap":
        i, j = np.asarray(inputs["frequency_i"]), np.asarray(inputs["frequency_j"])
        wrong = ~np.asarray(inputs["correct"])
        out = []
        for row, fi in enumerate(result["frequencies"]):
            for column, fj in enumerate(result["frequencies"]):
                cell = (i == fi) & (j == fj)
                if not cell.any():  # a mirrored cell: the records of (-i, -j)
                    assert result["mirrored"][row][column]
                    cell = (i == -fi) & (j == -fj)
                out.append((result["error_map_interval"][row][column], wrong[cell].sum(), cell.sum()))
        return out
    raise AssertionError(name)


PROPORTION_MODULES = [
    "masked_accuracy",
    "calibration",
    "background_gap",
    "occlusion_accuracy",
    "frequency_noise",
    "fourier_heatmap",
]


@pytest.mark.parametrize("method", ["wilson", "clopper-pearson"])
@pytest.mark.parametrize("name", PROPORTION_MODULES)
def test_proportion_bounds_are_scipys(modules, name, method):
    result = _compute(modules, name, confidence_level=LEVEL, interval_method=method)
    cases = _proportion_cases(result, name)
    assert len(cases) >= 2 or name == "calibration"
    for interval, successes, trials in cases:
        reference = stats.binomtest(int(successes), int(trials)).proportion_ci(
            confidence_level=LEVEL, method="wilson" if method == "wilson" else "exact"
        )
        assert interval["method"] == method and interval["num_samples"] == trials
        assert interval["estimate"] == successes / trials
        assert abs(interval["low"] - reference.low) < 1e-12 and abs(interval["high"] - reference.high) < 1e-12


def _student_t(values):
    values = np.asarray(values, dtype=np.float64)
    return stats.t.interval(LEVEL, len(values) - 1, loc=values.mean(), scale=stats.sem(values))


def test_mean_bounds_are_scipys_student_t(modules):
    inputs, _, _, _ = _case("loss_progression")
    result = _compute(modules, "loss_progression", confidence_level=LEVEL)
    steps, losses = np.asarray(inputs["steps"]), np.asarray(inputs["losses"])
    for step, interval in zip(result["steps"], result["loss_mean_interval"], strict=True):
        assert interval["method"] == "student-t"
        if step == 5:  # one record: no interval
            assert interval["low"] is None and interval["high"] is None and interval["num_samples"] == 1
            continue
        low, high = _student_t(losses[steps == step])
        assert abs(interval["low"] - low) < 1e-12 and abs(interval["high"] - high) < 1e-12
    inputs, _, _, _ = _case("occlusion_accuracy")
    result = _compute(modules, "occlusion_accuracy", confidence_level=LEVEL)
    ratios, confidences = np.asarray(inputs["ratios"]), np.asarray(inputs["confidences"])
    for ratio, interval in zip(result["ratios"], result["mean_confidence_interval"], strict=True):
        low, high = _student_t(confidences[ratios == ratio])
        assert abs(interval["low"] - low) < 1e-12 and abs(interval["high"] - high) < 1e-12


def test_aupr_interval_is_scipys_stratified_bootstrap(modules):
    """OOD and in-distribution images resampled apart: scipy.stats.bootstrap over the two samples, same draws."""
    inputs, _, _, _ = _case("ood_aupr")
    result = _compute(modules, "ood_aupr", confidence_level=LEVEL, num_resamples=RESAMPLES, seed=5)
    scores, is_ood = np.asarray(inputs["scores"]), np.asarray(inputs["is_ood"])

    def aupr(ood, in_distribution):
        labels = np.r_[np.ones(len(ood)), np.zeros(len(in_distribution))]
        return average_precision_score(labels, np.r_[ood, in_distribution])

    reference = stats.bootstrap(
        (scores[is_ood], scores[~is_ood]),
        aupr,
        vectorized=False,
        n_resamples=RESAMPLES,
        method="percentile",
        confidence_level=LEVEL,
        rng=np.random.default_rng(5),
    ).confidence_interval
    interval = result["aupr_interval"]
    assert interval["unit"] == "image" and interval["num_units"] == 45 and interval["seed"] == 5
    assert abs(interval["low"] - reference.low) < 1e-12 and abs(interval["high"] - reference.high) < 1e-12


@pytest.mark.parametrize("name", METRIC_NAMES)
def test_a_higher_level_gives_a_wider_interval(modules, name):
    narrow = _widths(_compute(modules, name, confidence_level=0.8, num_resamples=RESAMPLES))
    wide = _widths(_compute(modules, name, confidence_level=0.99, num_resamples=RESAMPLES))
    assert set(narrow) == set(wide) and narrow
    assert all(wide[label] >= narrow[label] for label in narrow)
    assert sum(wide.values()) > sum(narrow.values())


@pytest.mark.parametrize("name", METRIC_NAMES)
def test_the_same_seed_gives_identical_intervals(modules, name):
    first = _compute(modules, name, confidence_level=LEVEL, num_resamples=RESAMPLES, seed=7)
    assert _compute(modules, name, confidence_level=LEVEL, num_resamples=RESAMPLES, seed=7) == first
    other = _compute(modules, name, confidence_level=LEVEL, num_resamples=RESAMPLES, seed=8)
    if name in BOOTSTRAPPED:
        assert _widths(other) != _widths(first)
    else:  # no bootstrap: the seed changes nothing
        assert other == first


def _broken(name):
    """Inputs the metric itself rejects with a ValueError (so an options error first shows nothing ran)."""
    inputs, kwargs, _, _ = _case(name)
    if name == "mce":
        inputs = {key: values[8:] for key, values in inputs.items()}  # without the cell gaussian_noise/1
    elif name == "flip_rate":
        inputs = {key: values[6:] for key, values in inputs.items()}  # a test perturbation missing
        kwargs = {}
    elif name == "ood_aupr":
        inputs = {**inputs, "is_ood": [True] * len(inputs["is_ood"])}
    elif name == "masked_accuracy":
        kwargs = {"class_indices": kwargs["class_indices"][1:]}  # references outside the mask
    elif name == "calibration":
        kwargs = {**kwargs, "from_logits": False}  # logits are not probabilities
    elif name == "background_gap":
        inputs = {**inputs, "references": [9] * len(inputs["references"])}
    elif name == "occlusion_accuracy":
        inputs = {**inputs, "ratios": [r + 1.0 for r in inputs["ratios"]]}
    elif name == "fourier_heatmap":
        kwargs = {"window": 4}
    elif name == "frequency_noise":
        kwargs = {"clean_accuracy": 1.5}
    elif name == "loss_progression":
        inputs = {**inputs, "steps": [-1, *inputs["steps"][1:]]}
    return inputs, kwargs


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("confidence_level", 1.5),
        ("confidence_level", 0.0),
        ("interval_method", "foo"),
        ("num_resamples", 0),
        ("seed", -1),
    ],
)
@pytest.mark.parametrize("name", METRIC_NAMES)
def test_bad_options_fail_before_any_work(name, option, value):
    inputs, kwargs = _broken(name)
    with pytest.raises(ValueError) as raised:
        _fresh(name).compute(**inputs, **kwargs)
    assert option not in str(raised.value)  # the metric's own complaint
    options = {"confidence_level": LEVEL, option: value}
    with pytest.raises(ValueError, match=option):
        _fresh(name).compute(**inputs, **kwargs, **options)


def test_cluster_keys_resample_clean_images_together(modules):
    """Errors that cluster by clean image: the cluster bootstrap (clean_keys) is wider than treating the samples
    as independent, which the interval's note then says."""
    clustered = _compute(modules, "mce", confidence_level=LEVEL, num_resamples=RESAMPLES)
    independent = _compute(modules, "mce", confidence_level=LEVEL, num_resamples=RESAMPLES, with_keys=False)
    for key in ("mce_interval", "mean_corruption_accuracy_interval", "unnormalized_mce_all_interval"):
        assert clustered[key]["unit"] == "clean image" and clustered[key]["num_units"] == 8
        assert clustered[key]["note"] is None
        assert independent[key]["unit"] == "sample" and independent[key]["note"] == INDEPENDENT_NOTE
        # Park & Kim's mean accuracy resamples the 15 x 5 standard cells only, the others all 16 x 5.
        assert independent[key]["num_units"] == (600 if key == "mean_corruption_accuracy_interval" else 640)
        width = clustered[key]["high"] - clustered[key]["low"]
        assert width > 1.5 * (independent[key]["high"] - independent[key]["low"])
    assert independent["relative_mce_interval"] is None  # needs the clean images' keys
    assert clustered["relative_mce_interval"]["estimate"] == pytest.approx(
        clustered["relative_mce"], rel=1e-12
    )
    flips = _compute(modules, "flip_rate", confidence_level=LEVEL, num_resamples=RESAMPLES, with_keys=False)
    assert flips["mfr_unnormalized_interval"]["unit"] == "sequence"
    assert flips["mfr_unnormalized_interval"]["note"] == INDEPENDENT_NOTE
    gap = _compute(modules, "background_gap", confidence_level=LEVEL, num_resamples=RESAMPLES)
    assert gap["bg_gap_interval"]["unit"] == "foreground image" and gap["bg_gap_interval"]["num_units"] == 30
    gap = _compute(
        modules, "background_gap", confidence_level=LEVEL, num_resamples=RESAMPLES, with_keys=False
    )
    assert gap["bg_gap_interval"]["note"] == INDEPENDENT_NOTE


def test_mce_derived_intervals(modules):
    result = _compute(modules, "mce", confidence_level=LEVEL, num_resamples=RESAMPLES)
    accuracy, error = result["mean_corruption_accuracy_interval"], result["unnormalized_mce_interval"]
    assert error["low"] == pytest.approx(100.0 - accuracy["high"]) and error["high"] == pytest.approx(
        100.0 - accuracy["low"]
    )
    # Park & Kim's mean accuracy weighs the 15 standard corruptions only; the example has an extra one too.
    assert result["unnormalized_mce_all"] != pytest.approx(result["unnormalized_mce"])


def test_normalised_flip_rate_interval_scales_the_unnormalised_one(modules):
    """A baseline of 0.5 everywhere: mFR = 200 x the unnormalised mean, and so are its bounds."""
    result = _compute(modules, "flip_rate", confidence_level=LEVEL, num_resamples=RESAMPLES)
    for normalised, unnormalised, factor in (
        ("mfr", "mfr_unnormalized", 200.0),
        ("mt5d", "mt5d_unnormalized", 25.0),
    ):
        for bound in ("estimate", "low", "high"):
            assert result[f"{normalised}_interval"][bound] == pytest.approx(
                factor * result[f"{unnormalised}_interval"][bound], rel=1e-12
            )


def test_mismatched_keys_are_rejected():
    inputs, kwargs, keys, _ = _case("mce")
    with pytest.raises(ValueError, match="clean_keys"):
        _fresh("mce").compute(**inputs, **kwargs, clean_keys=keys["clean_keys"][:-1])
    with pytest.raises(ValueError, match="clean_prediction_keys"):
        _fresh("mce").compute(
            **inputs, **kwargs, clean_keys=keys["clean_keys"], clean_prediction_keys=["image0"] * 8
        )
    inputs, _, keys, _ = _case("flip_rate")
    with pytest.raises(ValueError, match="clean_keys"):
        _fresh("flip_rate").compute(**inputs, clean_keys=keys["clean_keys"][1:])
    inputs, _, keys, _ = _case("background_gap")
    with pytest.raises(ValueError, match="foreground_keys"):
        _fresh("background_gap").compute(**inputs, foreground_keys=keys["foreground_keys"][1:])


def test_staged_metric_gives_the_same_intervals(modules, tmp_path):
    """The published Space bundles the estimators too: its intervals are the checkout module's."""
    for name in METRIC_NAMES:
        stage_metric(tmp_path / name, name)
    staged = evaluate.load(str(tmp_path / "mce"))
    inputs, kwargs, keys, _ = _case("mce")
    options = {**keys, "confidence_level": LEVEL, "num_resamples": RESAMPLES}
    assert staged.compute(**inputs, **kwargs, **options) == _compute(
        modules, "mce", confidence_level=LEVEL, num_resamples=RESAMPLES
    )


@pytest.mark.parametrize("name", METRIC_NAMES)
def test_card_example_prints_what_the_card_shows(name):
    """Each README's "Confidence intervals" example, run as written, gives the interval the card prints."""
    text = (ROOT / "metrics" / name / "README.md").read_text()
    section = text[text.index("## Confidence intervals") : text.index("## Citation")]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1).rstrip("\n").split("\n")
    if name == "mce":  # the card's first example loads it
        code = ["import evaluate", 'mce = evaluate.load("metrics/mce")', *code]
    *body, shown = code
    namespace = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(ROOT)
        exec("\n".join(body), namespace)
    printed = re.search(r"```\n(\{.*?\})\n```", section, re.S).group(1)
    assert eval(shown.split("#")[0], namespace) == ast.literal_eval(printed)
