# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Effective robustness (`analysis.effective_robustness`): the fits against scipy's least squares (the routine the
imagenet-testbed's plotting code calls) on the shipped data with the testbed's selection rule written again here,
models on and above a line, and an interval that narrows with more images."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.stats

from hf_vitrobust.analysis.effective_robustness import (
    TESTBED_FILE,
    FitSegment,
    ShiftFit,
    effective_robustness,
    fit_shift,
    run_effective_robustness,
)
from hf_vitrobust.constants import STANDARD_CORRUPTIONS


def _logit(percent: pd.Series) -> np.ndarray:
    p = percent.to_numpy() / 100.0
    return np.log(p) - np.log1p(-p)


def _testbed_selection(shift: str) -> pd.DataFrame:
    """The testbed's `use_for_line_fit` and `show_in_plot` (paper_*.py, no-subsample x axis) on the shipped CSV."""
    data = pd.read_csv(TESTBED_FILE)
    name = data["model"].str.lower()
    keep = (
        (data["testbed_type"] == "standard")
        & ~name.str.contains("aws")
        & ~name.str.contains("batch64")
        & ~name.str.contains("subsample")
        & (data["imagenet-val"] >= 55)
    )
    if shift == "imagenet-a":
        keep &= name != "resnet50"
    return data[keep].dropna(subset=["imagenet-val", shift])


@pytest.mark.parametrize("shift", ["imagenet-v2", "imagenet-r", "imagenet-sketch", "objectnet", "imagenet-c"])
def test_the_fit_is_the_testbeds_least_squares_in_logit_axes(shift):
    rows = _testbed_selection(shift)
    reference = scipy.stats.linregress(_logit(rows["imagenet-val"]), _logit(rows[shift]))
    fit = fit_shift(shift, num_resamples=50)
    [segment] = fit.segments
    assert segment.num_models == len(rows) > 70
    assert segment.slope == pytest.approx(reference.slope, abs=1e-9)
    assert segment.intercept == pytest.approx(reference.intercept, abs=1e-9)
    assert segment.slope_interval[0] < segment.slope < segment.slope_interval[1]


def test_imagenet_a_is_fitted_in_two_pieces_split_at_resnet50():
    rows = _testbed_selection("imagenet-a")
    fit = fit_shift("imagenet-a", num_resamples=50)
    below, above = rows[rows["imagenet-val"] < 76.13], rows[rows["imagenet-val"] > 76.13]
    for segment, part in zip(fit.segments, (below, above), strict=True):
        reference = np.polyfit(_logit(part["imagenet-val"]), _logit(part["imagenet-a"]), 1)
        assert (segment.slope, segment.intercept) == pytest.approx(tuple(reference), abs=1e-9)
        assert segment.num_models == len(part)
    # The prediction takes the line of the side the clean top-1 falls on.
    upper = fit.segments[1]
    expected = 100.0 / (1.0 + np.exp(-(upper.slope * np.log(0.8 / 0.2) + upper.intercept)))
    assert float(fit.predict(80.0)) == pytest.approx(expected, rel=1e-12)


def _line(slope: float, intercept: float) -> ShiftFit:
    """A fit of one exact line whose resamples all equal it (no fit uncertainty)."""
    segment = FitSegment(slope, intercept, (slope, slope), (intercept, intercept), 10, (0.0, 100.0))
    resampled = np.tile([[[slope, intercept]]], (400, 1, 1))
    return ShiftFit("imagenet-v2", (segment,), None, 0.95, resampled)


def test_a_model_on_the_line_has_zero_effective_robustness():
    # logit(y) = 2 logit(x): clean 2/3 has logit ln 2, so the line predicts logit 2 ln 2, i.e. 4/5.
    result = effective_robustness(_line(2.0, 0.0), 200, 300, 80, 100)
    assert result.predicted_top1 == pytest.approx(80.0, abs=1e-9)
    assert result.value == pytest.approx(0.0, abs=1e-9)
    assert result.low < 0.0 < result.high


def test_a_model_above_the_line_is_positive_and_matches_the_fit_by_hand():
    fit = fit_shift("imagenet-v2", num_resamples=200)
    [segment] = fit.segments
    clean = 0.7613
    predicted = 100.0 / (1.0 + np.exp(-(segment.slope * np.log(clean / (1 - clean)) + segment.intercept)))
    result = effective_robustness(fit, 7613, 10000, 7000, 10000)
    assert result.value == pytest.approx(70.0 - predicted, abs=1e-9)
    assert result.value > 0 and result.low > 0


def test_the_interval_narrows_with_more_images_and_is_seeded():
    fit = fit_shift("imagenet-v2", num_resamples=400)
    few = effective_robustness(fit, 760, 1000, 640, 1000, seed=3)
    many = effective_robustness(fit, 76000, 100000, 64000, 100000, seed=3)
    assert few.value == pytest.approx(many.value, abs=1e-9)
    assert many.high - many.low < 0.5 * (few.high - few.low)
    again = effective_robustness(fit, 760, 1000, 640, 1000, seed=3)
    assert (again.low, again.high) == (few.low, few.high)


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="No testbed fit"):
        fit_shift("imagenet-o")
    with pytest.raises(ValueError, match="correct <= images"):
        effective_robustness(_line(1.0, 0.0), 11, 10, 5, 10)


def _run(generated: bool, variant: str) -> dict:
    cells = {f"{c}/{s}": 40.0 + s for c in STANDARD_CORRUPTIONS for s in range(1, 6)}
    return {
        "benchmarks": {
            "imagenet-c": {"generated": generated},
            "imagenet-v2": {"options": {"variant": variant}},
        },
        "metrics": {
            "m": {
                "imagenet-val": {"num_samples": 50000, "top1": 80.0},
                "imagenet-a": {
                    "num_samples": 7500,
                    "top1": 10.0,
                    "protocols": {"hendrycks-200": {"top1": 30.0}, "paul-chen-1000": {"top1": 10.0}},
                },
                "imagenet-v2": {"num_samples": 10000, "top1": 70.0},
                "imagenet-c": {"num_samples": 75 * 100, "top1_by_cell": {**cells, "speckle_noise/5": 0.0}},
            }
        },
    }


def test_a_runs_models_are_read_as_the_testbed_scores_them():
    """ImageNet-A over its 200 classes, ImageNet-V2 only for matched-frequency, ImageNet-C as the mean of the 15
    standard corruptions x 5 severities of the released files (extra corruptions ignored, generated runs left out)."""
    stored = run_effective_robustness([_run(False, "matched-frequency")], num_resamples=50)
    shifted = {row["shift"]: row["shift_top1"] for row in stored["models"]}
    assert shifted == {"imagenet-v2": 70.0, "imagenet-a": 30.0, "imagenet-c": pytest.approx(43.0)}
    assert set(stored["fits"]) == set(shifted)
    other = run_effective_robustness([_run(True, "threshold-0.7")], num_resamples=50)
    assert {row["shift"] for row in other["models"]} == {"imagenet-a"}
    assert (
        run_effective_robustness([{"metrics": {"m": {"imagenet-val": {"num_samples": 9, "top1": 50.0}}}}])
        == {}
    )


def test_the_clean_accuracy_is_imagenets_own_labels_even_under_real():
    """Under `labels: real` the clean axis stays the testbed's: ImageNet's labels over all 50,000 images, not the
    ReaL top-1 over the images that have a ReaL label."""
    plain = _run(False, "matched-frequency")
    real = _run(False, "matched-frequency")
    real["metrics"]["m"]["imagenet-val"] = {
        "num_samples": 50000,
        "top1": 86.0,
        "num_scored": 46837,
        "labels": "real",
        "protocols": {"imagenet": {"top1": 80.0}, "real": {"top1": 86.0}},
    }
    rows = [run_effective_robustness([run], num_resamples=50)["models"] for run in (plain, real)]
    assert [row["clean_top1"] for row in rows[1]] == [80.0] * len(rows[1])
    assert rows[0] == rows[1]
