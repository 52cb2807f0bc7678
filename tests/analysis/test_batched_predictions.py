# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Predictions read in batches (issue 36, point 4): ImageNet-C's metrics and intervals, read from its predictions
file a few rows at a time, equal bit for bit what the whole-frame computation gives (re-derived here as the code of
commit 348de85 computed it, from one pandas frame), for generated, released and row-id layouts, with the relative
mCE, across batch and row-group boundaries; the analysis never reads ImageNet-C's file whole, and the accuracy of
one cell reads that cell."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest
from reproduction_runs import Model, write_run

from hf_vitrobust.analysis import prediction_source
from hf_vitrobust.analysis.analyze import analyze
from hf_vitrobust.analysis.kinds import benchmark_metrics, headline_estimators
from hf_vitrobust.analysis.prediction_source import FramePredictions, PredictionsFile
from hf_vitrobust.analysis.results import load_results
from hf_vitrobust.analysis.run_models import RunModels
from hf_vitrobust.analysis.uncertainty import UncertaintySettings, intervals_of
from hf_vitrobust.data import get_benchmark
from hf_vitrobust.metrics import (
    calibration_metrics,
    corruption_cell_errors,
    mean_corruption_error,
)
from hf_vitrobust.metrics.cell_tables import ClusteredCellSums, cell_table
from hf_vitrobust.metrics.estimators import accuracy_estimator, corruption_estimators, derived_seed

CORRUPTIONS = ("gaussian_noise", "contrast", "fog", "speckle_noise")  # three standard, one extra
SETTINGS = UncertaintySettings(num_resamples=300, seed=11)
NUM_CLEAN = 37


def _corruption_frame(layout: str, seed: int = 0) -> pd.DataFrame:
    """ImageNet-C-like predictions in a generated stream's order (clean image by clean image, every cell of it):
    4 corruptions x 5 severities, less two cells; some rows unlabelled. layout "generated": clean ids in
    "clean_sample_id"; "released": ids `<corruption>/<severity>/<wnid>/<file>`; "rows": Hub row ids (no clean key)."""
    rng = np.random.default_rng(seed)
    rows = []
    for image in range(NUM_CLEAN):
        for corruption in CORRUPTIONS:
            for severity in range(1, 6):
                if (corruption, severity) in {("fog", 2), ("speckle_noise", 5)}:
                    continue
                label = -1 if rng.random() < 0.05 else int(rng.integers(0, 10))
                name = {
                    "generated": f"{corruption}/{severity}/clean/{image:04d}.JPEG",
                    "released": f"{corruption}/{severity}/n01440764/ILSVRC2012_val_{image:08d}.JPEG",
                    "rows": f"{corruption}/{severity}/row-{image:06d}",
                }[layout]
                rows.append(
                    {
                        "sample_id": name,
                        "clean_sample_id": f"clean/{image:04d}.JPEG" if layout == "generated" else None,
                        "label": label,
                        "prediction": int(rng.integers(0, 10)) if rng.random() < 0.6 else max(label, 0),
                        "corruption": corruption,
                        "severity": severity,
                    }
                )
    return pd.DataFrame(rows)


def _clean_frame(seed: int = 1) -> pd.DataFrame:
    """The clean benchmark's predictions of the same clean images (and 5 more), with logits."""
    rng = np.random.default_rng(seed)
    n = NUM_CLEAN + 5
    logits = rng.normal(size=(n, 10)).astype(np.float32)
    labels = rng.integers(0, 10, size=n)
    return pd.DataFrame(
        {
            "sample_id": [f"clean/{i:04d}.JPEG" for i in range(n)],
            "clean_sample_id": [None] * n,
            "label": labels.astype(np.int64),
            "prediction": logits.argmax(axis=1).astype(np.int64),
            "top5": [list(np.argsort(-row, kind="stable")[:5]) for row in logits],
            "logits": [list(row) for row in logits],
        }
    )


# ------------------------------------------------------------------------------------------------------------
# The whole-frame computation, as it was: one frame, every labelled row at once.


def _whole_frame_metrics(frame: pd.DataFrame, clean: pd.DataFrame | None) -> dict:
    labelled = frame[frame["label"] >= 0]
    predictions, labels = labelled["prediction"].to_numpy(), labelled["label"].to_numpy()
    corruptions = labelled["corruption"].astype(str).to_list()
    severities = labelled["severity"].to_numpy().astype(np.int64)
    cells = corruption_cell_errors(predictions, labels, corruptions, severities)
    top1 = {key: 100.0 * (1.0 - wrong / count) for key, (wrong, count) in cells.items()}
    extra = {}
    if clean is not None:
        clean_rows = clean[clean["label"] >= 0]
        extra = {
            "clean_predictions": clean_rows["prediction"].to_numpy(),
            "clean_references": clean_rows["label"].to_numpy(),
        }
    result = mean_corruption_error(predictions, labels, corruptions, severities, allow_partial=True, **extra)
    result = result.to_dict()
    absent = [
        n for n in get_benchmark("imagenet-c").corruptions if n not in result["unnormalized_corruptions"]
    ]
    result["protocols"] = {
        "alexnet-15": {"mce": result["mce"], "missing_cells": result["missing_cells"]},
        "unnormalized-19": {
            "mce": result["unnormalized_mce_all"],
            "corruptions": result["unnormalized_corruptions"],
            "absent_corruptions": absent,
        },
    }
    result["mce_protocol"] = "alexnet-15"
    severity5 = {c: value for (c, s), value in top1.items() if s == 5}
    result["top1_by_cell"] = {f"{c}/{s}": value for (c, s), value in sorted(top1.items())}
    result["top1_by_corruption_s5"] = dict(sorted(severity5.items()))
    result["severity5_top1"] = float(np.mean(list(severity5.values())))
    result["contrast_s5_top1"] = severity5.get("contrast")
    result["mean_top1"] = float(np.mean(list(top1.values())))
    result["num_samples"] = len(labelled)
    return result


def _clean_keys(labelled: pd.DataFrame, layout: str) -> np.ndarray | None:
    """Each row's clean image, read off by hand: the clean id, or the id after `<corruption>/<severity>/`."""
    if layout == "generated":
        return labelled["clean_sample_id"].to_numpy().astype(str)
    if layout == "released":
        return np.asarray([i.split("/", 2)[2] for i in labelled["sample_id"]], dtype=str)
    return None


def _whole_frame_intervals(frame: pd.DataFrame, clean: pd.DataFrame | None, layout: str) -> dict:
    labelled = frame[frame["label"] >= 0]
    keys = _clean_keys(labelled, layout)
    extra = {}
    if clean is not None and keys is not None:
        clean_rows = clean[clean["label"] >= 0]
        extra = {
            "clean_wrong": clean_rows["prediction"].to_numpy() != clean_rows["label"].to_numpy(),
            "clean_wrong_keys": clean_rows["sample_id"].to_numpy().astype(str),
        }
    found = corruption_estimators(
        labelled["prediction"].to_numpy() != labelled["label"].to_numpy(),
        labelled["corruption"].astype(str).to_list(),
        labelled["severity"].to_numpy().astype(np.int64),
        labelled["sample_id"].to_numpy(),
        keys,
        **extra,
    )
    names = {
        "mean_top1": "imagenet-c mean top-1 %",
        "mce": "imagenet-c mCE % (alexnet-15)",
        "unnormalized_mce_all": "imagenet-c mCE % (unnormalized-19)",
        "relative_mce": "imagenet-c relative mCE %",
        "severity5_top1": "imagenet-c severity-5 mean top-1 %",
    }
    return intervals_of({names[k]: (v, None) for k, v in found.items()}, SETTINGS)


def _same(a, b) -> bool:
    """Equal, float for float (NaN equal to NaN)."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


# ------------------------------------------------------------------------------------------------------------


@pytest.fixture
def small_batches(monkeypatch):
    """Batches of 23 rows: every batch boundary cuts a clean image's cells, and row groups (17 rows) fall
    elsewhere."""
    monkeypatch.setattr(prediction_source, "BATCH_ROWS", 23)


@pytest.mark.parametrize("layout", ["generated", "released", "rows"])
def test_batched_imagenet_c_equals_the_whole_frame(tmp_path, small_batches, layout):
    frame = _corruption_frame(layout)
    path = tmp_path / "imagenet-c.parquet"
    frame.to_parquet(path, row_group_size=17)
    clean = _clean_frame() if layout != "rows" else None
    benchmark = get_benchmark("imagenet-c")
    expected_metrics = _whole_frame_metrics(frame, clean)
    expected_intervals = _whole_frame_intervals(frame, clean, layout)
    for predictions in (PredictionsFile(path), FramePredictions(frame)):
        metrics = benchmark_metrics(benchmark, predictions, clean)
        assert _same(metrics, expected_metrics)
        found = headline_estimators(benchmark, predictions, clean)
        intervals = intervals_of({name: (e, None) for name, e in found.items()}, SETTINGS)
        assert _same(intervals, expected_intervals)
    # The numbers are not vacuous: the relative mCE comes with the clean images, the units are what they should be.
    assert expected_metrics["relative_mce"] is not None if clean is not None else True
    mean_top1 = expected_intervals["imagenet-c mean top-1 %"]
    assert mean_top1["unit"] == ("sample" if layout == "rows" else "clean image")
    assert mean_top1["low"] < mean_top1["estimate"] < mean_top1["high"]
    if layout != "rows":
        assert mean_top1["num_units"] == NUM_CLEAN


def test_clustered_cell_sums_equal_the_table_at_once():
    """Integer-valued sums over any cut into batches equal `cell_table` over all samples at once, bit for bit."""
    rng = np.random.default_rng(3)
    n = 500
    values = rng.integers(0, 2, size=n).astype(np.float64)
    labels = rng.choice(["b/1", "a/2", "c/5", "a/10"], size=n).astype(object)
    keys = rng.choice([f"img{i}" for i in range(40)], size=n)
    whole = cell_table(values, labels, keys, keys)
    for cuts in ([0, n], [0, 1, 7, 250, 499, n], list(range(0, n + 1, 50))):
        sums = ClusteredCellSums()
        for start, stop in itertools.pairwise(cuts):
            sums.add(values[start:stop], labels[start:stop], keys[start:stop])
        batched = sums.table()
        assert batched.cells == whole.cells and batched.num_samples == whole.num_samples == n
        np.testing.assert_array_equal(batched.keys, whole.keys)
        np.testing.assert_array_equal(batched.strata, whole.strata)
        assert batched.sums.tobytes() == whole.sums.tobytes()
        assert batched.counts.tobytes() == whole.counts.tobytes()
    assert whole.sums.sum() == values.sum() and whole.counts.sum() == n


def test_the_analysis_never_reads_imagenet_c_whole(tmp_path, small_batches, monkeypatch):
    """A generated ImageNet-C and its clean benchmark: the analysis reads the clean one whole (a plain benchmark,
    scored from one frame) and ImageNet-C only in batches and by cell; its intervals equal the whole-frame ones, and
    the accuracy of one cell (a finding's or a published number's) is that cell's, read alone."""
    frame, clean = _corruption_frame("generated"), _clean_frame()
    folder = write_run(
        tmp_path / "run",
        [Model("org/model", {"imagenet-c": frame, "imagenet-val": clean})],
        benchmark_info={"imagenet-c": {"kind": "corruption", "generated": True}},
        seed=11,
    )
    results = load_results([folder])
    read_whole = []
    whole = PredictionsFile.frame
    monkeypatch.setattr(
        PredictionsFile,
        "frame",
        lambda self, *a, **k: read_whole.append(self.path.name) or whole(self, *a, **k),
    )
    cells_read = []
    by_cell = PredictionsFile.cell
    monkeypatch.setattr(
        PredictionsFile,
        "cell",
        lambda self, conditions: cells_read.append(dict(conditions)) or by_cell(self, conditions),
    )
    analysis = analyze(results, UncertaintySettings(num_resamples=300, seed=11))
    assert "imagenet-c.parquet" not in read_whole and "imagenet-val.parquet" in read_whole
    key = results[0]["models"][0]["key"]
    intervals = analysis.intervals[key]
    expected = _whole_frame_intervals(frame, clean, "generated")
    # analyze seeds each interval by its name, as intervals_of does: the same settings give the same numbers.
    assert _same({name: intervals[name] for name in expected}, expected)
    # The plain benchmark: its top-1 and ECE, from the frame, as computed by hand.
    labels, predictions = clean["label"].to_numpy(), clean["prediction"].to_numpy()
    top1 = intervals["imagenet-val top-1 %"]
    assert top1["estimate"] == 100.0 * float(np.mean(predictions == labels))
    val = benchmark_metrics(
        get_benchmark("imagenet-val"),
        PredictionsFile(folder / results[0]["predictions"][key]["imagenet-val"]),
    )
    logits = np.stack(clean["logits"].to_numpy()).astype(np.float64)
    assert val["top1"] == 100.0 * float(np.mean(predictions == labels))
    assert val["top5"] == 100.0 * float(
        np.mean([label in top for label, top in zip(labels, clean["top5"], strict=True)])
    )
    assert val["calibration"] == calibration_metrics(logits, labels, from_logits=True).to_dict()
    # One cell's accuracy reads that cell only, and is its accuracy over its clean images.
    model = RunModels(results)((0, key))
    cells_read.clear()
    estimator = model.accuracy(get_benchmark("imagenet-c"), conditions={"corruption": "fog", "severity": "3"})
    assert cells_read == [{"corruption": "fog", "severity": "3"}]
    rows = frame[(frame["corruption"] == "fog") & (frame["severity"] == 3) & (frame["label"] >= 0)]
    reference = accuracy_estimator(rows["prediction"] == rows["label"], rows["clean_sample_id"].to_numpy())
    seed = derived_seed(11, "cell")
    assert _same(
        estimator.interval(0.95, num_resamples=300, seed=seed).to_dict(),
        reference.interval(0.95, num_resamples=300, seed=seed).to_dict(),
    )
    assert estimator.estimate == 100.0 * float(np.mean(rows["prediction"] == rows["label"]))
