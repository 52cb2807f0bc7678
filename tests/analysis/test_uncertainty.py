# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Intervals of a run's headline numbers and paired comparisons of its models (`evaluation.uncertainty`), end to
end: a two-model run, its results.json and report, and `vitrobust report A B` recomputing from predictions."""

from __future__ import annotations

import json
import shutil
from statistics import NormalDist

import numpy as np
import pandas as pd
import pytest
import yaml
from probe_models import save_tiny_vit
from scipy.stats import binomtest

from hf_vitrobust.analysis.kinds import headline_estimators
from hf_vitrobust.analysis.uncertainty import (
    FIRST_N_NOTE,
    UncertaintySettings,
    compare_models,
)
from hf_vitrobust.cli import main as cli_main
from hf_vitrobust.data import get_benchmark
from hf_vitrobust.evaluation.config import EvaluationConfig, EvaluationError
from hf_vitrobust.evaluation.runner import evaluate

SUITE = {
    "name": "tiny-intervals",
    "batch_size": 8,
    "seed": 5,
    "chunk_size": 8,
    "benchmarks": {
        "imagenet-val": {"source": "builtin", "limit": 10},
        "imagenet-c": {
            "source": "generated:builtin",
            "limit": 4,
            "corruptions": ["gaussian_noise", "contrast"],
            "severities": [1, 5],
        },
    },
}


@pytest.fixture(scope="module")
def two_model_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("intervals")
    suite = root / "suite.yaml"
    suite.write_text(yaml.safe_dump(SUITE))
    vit = save_tiny_vit(root / "tiny-vit")
    output = root / "run"
    results = evaluate(
        EvaluationConfig(
            models=["builtin:efficientnet_lite0", vit], suite=str(suite), output=output, progress=False
        )
    )
    return output, results


def test_every_headline_has_its_interval(two_model_run):
    output, results = two_model_run
    on_disk = json.loads((output / "results.json").read_text())
    assert on_disk["intervals"] == json.loads(json.dumps(results["intervals"]))
    assert on_disk["uncertainty"]["confidence_level"] == 0.95
    for model, summary in results["summary"].items():
        intervals = results["intervals"][model]
        assert set(summary) <= set(intervals)
        for name, value in summary.items():
            interval = intervals[name]
            assert interval["estimate"] == pytest.approx(value, abs=1e-9), name
            assert interval["low"] <= value <= interval["high"], name
            # Never a zero width, even where every resample is equal (a random model wrong everywhere): the
            # fallback bound of issue 38 has a width, so a target half-width has a sample count.
            assert interval["high"] > interval["low"], name
            assert interval["samples_needed"] >= 1
        top1 = intervals["imagenet-val top-1 %"]
        frame = pd.read_parquet(output / results["predictions"][model]["imagenet-val"])
        correct = int((frame["prediction"] == frame["label"]).sum())
        reference = binomtest(correct, len(frame)).proportion_ci(0.95, method="wilson")
        assert (top1["low"], top1["high"]) == pytest.approx(
            (100 * reference.low, 100 * reference.high), abs=1e-10
        )
        mce = intervals["imagenet-c mCE % (alexnet-15)"]
        # Clustered over the 4 clean images: each holds all 2 x 2 corruption cells.
        assert (mce["unit"], mce["num_units"], mce["num_samples"]) == ("clean image", 4, 16)
        assert mce["num_resamples"] == 1000
        assert mce["method"] in ("percentile bootstrap", "percentile bootstrap with wilson fallback")
        if results["benchmarks"]["imagenet-c"].get("subset", {}).get("kind") == "first":
            assert FIRST_N_NOTE in (mce["note"] or "")


def test_the_report_shows_intervals_and_comparisons(two_model_run):
    output, results = two_model_run
    comparisons = results["comparisons"]
    rows = [row for row in comparisons["rows"] if "p_value" in row]
    assert comparisons["correction"] == "holm" and comparisons["num_comparisons"] == len(rows) >= 4
    shared = set(results["intervals"]["builtin_efficientnet_lite0"]) & set(results["intervals"][rows[0]["b"]])
    assert (
        {row["headline"] for row in rows} == shared >= set(results["summary"]["builtin_efficientnet_lite0"])
    )
    for row in rows:
        a, b = (
            results["intervals"][row["a"]][row["headline"]],
            results["intervals"][row["b"]][row["headline"]],
        )
        assert row["difference"]["estimate"] == pytest.approx(a["estimate"] - b["estimate"], abs=1e-9)
        assert row["p_holm"] >= row["p_value"]
        assert row["test"] == (
            "McNemar exact" if row["headline"] == "imagenet-val top-1 %" else "paired bootstrap"
        )
    text = (output / "report.md").read_text()
    assert "## Uncertainty" in text and "## Comparisons" in text and "Holm" in text
    value = results["summary"]["builtin_efficientnet_lite0"]["imagenet-val top-1 %"]
    interval = results["intervals"]["builtin_efficientnet_lite0"]["imagenet-val top-1 %"]
    assert f"{value:.2f} [{interval['low']:.2f}, {interval['high']:.2f}]" in text


def test_report_of_two_runs_recomputes_from_predictions(two_model_run, tmp_path):
    output, _ = two_model_run
    copy = tmp_path / "copy"
    shutil.copytree(output, copy)
    merged_dir = tmp_path / "merged"
    assert (
        cli_main(["report", str(output), str(copy), "--output", str(merged_dir), "--confidence-level", "0.9"])
        == 0
    )
    text = (merged_dir / "report.md").read_text()
    assert "90 % confidence interval" in text
    # The same model in both runs: a difference of exactly 0, never resolved. Every resample's difference is 0,
    # so the interval is the share bound: +/- 100 z^2 / (n + z^2) (Wilson at 0 of the n = 10 images, z at 90 %).
    key = "builtin_efficientnet_lite0"
    line = next(
        line
        for line in text.splitlines()
        if line.startswith(f"| imagenet-val top-1 % | {key}@run | {key}@copy")
    )
    z = NormalDist().inv_cdf(0.95)
    bound = 100.0 * z * z / (SUITE["benchmarks"]["imagenet-val"]["limit"] + z * z)
    assert f"| 0.00 [{-bound:.2f}, {bound:.2f}] | McNemar exact | 1 | 1 | no |" in line
    # The recomputed 90 % interval of the first run is inside its 95 % one.
    assert "Holm's correction" in text


def test_the_level_reaches_every_interval(tmp_path):
    """--confidence-level applies to the benchmarks' intervals and to the probes' per-point ones alike."""
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        yaml.safe_dump(
            {
                "name": "level",
                "seed": 1,
                "benchmarks": {"imagenet-val": {"source": "builtin", "limit": 6}},
                "probes": {
                    "occlusion": {
                        "benchmark": "imagenet-val",
                        "num_images": 4,
                        "params": {"ratios": [0.0, 0.5]},
                    }
                },
            }
        )
    )
    results = evaluate(
        EvaluationConfig(
            suite=str(suite), output=tmp_path / "run", progress=False, report=False, confidence_level=0.8
        )
    )
    top1 = results["intervals"]["builtin_efficientnet_lite0"]["imagenet-val top-1 %"]
    occlusion = results["probes"]["builtin_efficientnet_lite0"]["occlusion"]
    assert top1["confidence_level"] == occlusion["intervals"]["confidence_level"] == 0.8
    correct = round(occlusion["accuracy"][1] * occlusion["num_samples"])
    reference = binomtest(correct, occlusion["num_samples"]).proportion_ci(0.8, method="wilson")
    assert occlusion["intervals"]["accuracy"]["low"][1] == pytest.approx(reference.low, abs=1e-12)


def test_bad_interval_settings_fail_before_work(tmp_path):
    for kwargs, word in (
        ({"confidence_level": 1.5}, "confidence_level"),
        ({"num_resamples": 0}, "num_resamples"),
        ({"interval_method": "wald"}, "proportion_method"),
        ({"target_half_width": 0.0}, "target_half_width"),
    ):
        with pytest.raises(EvaluationError, match=word):
            evaluate(EvaluationConfig(output=tmp_path / "never", progress=False, **kwargs))
    assert not (tmp_path / "never").exists()


def _accuracy_frame(correct: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "sample_id": [f"val/{i:06d}.JPEG" for i in range(len(correct))],
            "label": np.zeros(len(correct), dtype=np.int64),
            "prediction": np.where(correct, 0, 1),
            "logits": [None] * len(correct),
        }
    )


@pytest.mark.parametrize(("n", "resolved"), [(20_000, True), (100, False)])
def test_a_known_gap_is_resolved_only_with_enough_samples(n, resolved):
    """Model A right with probability 0.75, B with 0.70 on the same images, correlated (B shares A's draw for 80 %
    of the images), so that they disagree both ways."""
    rng = np.random.default_rng(11)
    u = rng.random(n)
    v = np.where(rng.random(n) < 0.8, u, rng.random(n))
    a, b = u < 0.75, v < 0.70
    benchmark = get_benchmark("imagenet-val")
    settings = UncertaintySettings(num_resamples=300, seed=1)
    models = {
        name: {
            label: (est, None) for label, est in headline_estimators(benchmark, _accuracy_frame(c)).items()
        }
        for name, c in (("a", a), ("b", b))
    }
    row = compare_models(models, settings)["rows"][0]
    assert row["difference"]["estimate"] == pytest.approx(100 * (a.mean() - b.mean()))
    assert row["resolved"] is resolved
    assert (row["difference"]["low"] > 0) is resolved
