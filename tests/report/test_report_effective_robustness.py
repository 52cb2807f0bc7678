# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The report's effective robustness section (`report.effective_robustness_section`): present, with the stored
numbers and the scatter, for a run with imagenet-val and ImageNet-A; absent, and nothing stored, for a run without
a natural shift."""

from __future__ import annotations

import json

import numpy as np
import pytest
from reproduction_runs import Model, accuracy_frame, write_run

from hf_vitrobust.analysis.analyze import ANALYSIS_KEY, analyze
from hf_vitrobust.analysis.results import load_results, merge_results
from hf_vitrobust.report.document import render_markdown, write_report
from hf_vitrobust.report.figure_set import build_figures

SPEC = "google/vit-base-patch16-224"


def _analysed(folder, metrics):
    """`folder`'s run with its recorded metrics replaced by `metrics` (as the runner scores them), analysed."""
    path = folder / "results.json"
    results = json.loads(path.read_text())
    [key] = results["metrics"]
    results["metrics"][key] = metrics
    path.write_text(json.dumps(results))
    merged = merge_results(load_results([folder]))
    analyze(merged).store(merged)
    return merged, key


def test_the_section_shows_a_run_with_val_and_imagenet_a(tmp_path):
    clean, shifted = [True] * 80 + [False] * 20, [True] * 30 + [False] * 70
    folder = write_run(
        tmp_path / "run",
        [Model(SPEC, {"imagenet-val": accuracy_frame(clean), "imagenet-a": accuracy_frame(shifted)})],
    )
    metrics = {
        "imagenet-val": {"num_samples": 100, "top1": 80.0},
        "imagenet-a": {
            "num_samples": 100,
            "top1": 25.0,
            "protocols": {"hendrycks-200": {"top1": 30.0}, "paul-chen-1000": {"top1": 25.0}},
        },
    }
    merged, key = _analysed(folder, metrics)
    [row] = merged[0][ANALYSIS_KEY]["effective_robustness"]["models"]
    assert (row["model"], row["shift"], row["shift_top1"]) == (key, "imagenet-a", 30.0)
    # ImageNet-A's upper line (clean top-1 above ResNet-50's 76.13 %), worked again from the stored fit.
    upper = merged[0][ANALYSIS_KEY]["effective_robustness"]["fits"]["imagenet-a"]["segments"][1]
    predicted = 100.0 / (1.0 + np.exp(-(upper["slope"] * np.log(0.8 / 0.2) + upper["intercept"])))
    assert row["value"] == pytest.approx(30.0 - predicted, abs=1e-9)
    markdown = render_markdown(merged, {})
    assert "## Effective robustness" in markdown
    assert f"+{row['value']:.2f} [" in markdown and "ImageNet-A (200 classes)" in markdown
    # The scatter: the run's model on top of the testbed's, at its logit coordinates.
    figure = build_figures(merged)["effective_robustness"]
    [ax] = [ax for ax in figure.axes if ax.get_visible()]
    offsets = np.concatenate([collection.get_offsets() for collection in ax.collections])
    assert tuple(offsets[-1]) == pytest.approx((np.log(0.8 / 0.2), np.log(0.3 / 0.7)))
    assert len(offsets) > 200 and np.isfinite(offsets).all()


def test_no_section_for_a_run_without_a_shift(tmp_path):
    folder = write_run(
        tmp_path / "run", [Model(SPEC, {"imagenet-val": accuracy_frame([True] * 8 + [False] * 2)})]
    )
    merged, _ = _analysed(folder, {"imagenet-val": {"num_samples": 10, "top1": 80.0}})
    assert "effective_robustness" not in merged[0][ANALYSIS_KEY]
    written = write_report(merged, tmp_path / "report")
    assert "Effective robustness" not in written["markdown"].read_text()
    assert "effective_robustness" not in written["figures"]
