"""Every origin row of Park & Kim's loss landscapes compares (issue 33 point 2): top-5, ECE, signed ECE, Brier,
the L1 norm sum, the confident-image rows and the mean IoUs of a constructed run go through the published-vs-ours
path with a sampling interval (Wilson over their counts, or the jackknife over batches), the L1 sum within its
reading precision; equal values are within, far ones outside."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from reproduction_runs import PARK_KIM_LANDSCAPE_PARAMS, Model, accuracy_frame, published_row, write_run
from scipy.stats import binomtest, norm

from hf_vitrobust.analysis.published import published_numbers
from hf_vitrobust.analysis.published_vs_ours import compare_published
from hf_vitrobust.analysis.results import load_results, merge_results
from hf_vitrobust.analysis.run_models import RunModel
from hf_vitrobust.analysis.uncertainty import UncertaintySettings
from hf_vitrobust.probes.loss_landscape_metrics import (
    L1_METRIC,
    ORIGIN_METRICS,
    merge_origin,
    origin_batch_statistics,
)

SETTINGS = UncertaintySettings(confidence_level=0.95, num_resamples=200, seed=0)
SPEC = "https://github.com/xxxnell/how-do-vits-work-storage/releases/download/v0.1/vit_ti_cifar100_9857b21357.pth.tar"
PARAMS = PARK_KIM_LANDSCAPE_PARAMS
BATCHES, BATCH_SIZE, NUM_CLASSES = 52, 96, 100  # their 4,992 draws
L1 = 130782.3359375
STEPS = np.round(np.linspace(-1.0, 1.0, 21), 10)


def _origin() -> dict:
    """52 batches of constructed CIFAR-100 logits: about 65 % right, a few per cent confident."""
    generator = torch.Generator().manual_seed(0)
    parts = []
    for _ in range(BATCHES):
        labels = torch.randint(0, NUM_CLASSES, (BATCH_SIZE,), generator=generator)
        logits = torch.randn(BATCH_SIZE, NUM_CLASSES, generator=generator)
        right = torch.rand(BATCH_SIZE, generator=generator) < 0.65
        boost = 3.0 + 6.0 * torch.rand(BATCH_SIZE, generator=generator) ** 4
        target = torch.where(right, labels, (labels + 1) % NUM_CLASSES)
        logits[torch.arange(BATCH_SIZE), target] += boost
        parts.append(origin_batch_statistics(logits, labels))
    return merge_origin(parts)


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> RunModel:
    """A run of the ViT-Ti release file whose loss landscape recorded the origin's statistics."""
    flat = np.zeros((21, 21))
    probe = {
        "x": STEPS.tolist(),
        "y": STEPS.tolist(),
        "loss": (flat + 40.0).tolist(),
        "accuracy": (flat + 0.65).tolist(),
        "l2": (flat + 769.5).tolist(),
        "loss_standard_error": (flat + 0.01).tolist(),
        "weight_decay": 0.05,
        "num_images": BATCHES * BATCH_SIZE,
        "origin": _origin(),
        "origin_l1": L1,
        **PARAMS,
        "benchmark": "cifar100-train",
        "params": PARAMS,
    }
    probe["origin"] = {
        key: (
            {k: torch.as_tensor(v).tolist() for k, v in value.items()} if isinstance(value, dict) else value
        )
        for key, value in probe["origin"].items()
    }
    folder = write_run(
        tmp_path_factory.mktemp("origin") / "run",
        [Model(SPEC, {"cifar100-train": accuracy_frame([True] * 10)}, probes={"loss_landscape": probe})],
    )
    result = merge_results(load_results([folder]))[0]
    return RunModel(result, result["models"][0]["key"])


def _row(metric: str, value: float, precision: float = 5e-15):
    """A published ViT-Ti origin row as the table has it (the protocol and images of the shipped rows)."""
    shipped = next(
        r
        for r in published_numbers("park-kim")
        if r.model_key == "vit-ti-park-kim-cifar100"
        and r.benchmark == "loss_landscape"
        and r.metric == metric
        and r.conditions.get("x") == "0.0" == r.conditions.get("y")
    )
    return published_row(
        **{
            **{
                f: getattr(shipped, f)
                for f in ("row_id", "paper", "model", "model_key", "model_id", "benchmark")
            },
            **{f: getattr(shipped, f) for f in ("condition", "protocol", "unit", "images", "image_set")},
            "metric": metric,
            "value": value,
            "reading_precision": precision,
        }
    )


def test_every_shipped_vit_ti_origin_row_compares(model):
    """No origin row of the published table is left "not in this run" for a run of its checkpoint that recorded the
    origin: each gets "within" or "outside"."""
    rows = [
        r
        for r in published_numbers("park-kim")
        if r.model_key == "vit-ti-park-kim-cifar100"
        and r.benchmark == "loss_landscape"
        and r.conditions.get("x") == "0.0" == r.conditions.get("y")
    ]
    assert {r.metric for r in rows} >= {*ORIGIN_METRICS, L1_METRIC, "top-1 %", "NLL", "loss"}
    for published in rows:
        comparison = compare_published(published, model, SETTINGS)
        assert not comparison.reasons, (published.metric, comparison.reason_text())
        assert comparison.kind in ("within", "outside"), published.metric


@pytest.mark.parametrize("metric", [*ORIGIN_METRICS, L1_METRIC])
def test_an_equal_origin_value_is_within_and_a_far_one_outside(model, metric):
    ours = compare_published(_row(metric, 1.0), model, SETTINGS).ours
    interval = ours.interval
    assert interval is not None and interval.low <= ours.value <= interval.high
    assert compare_published(_row(metric, ours.value), model, SETTINGS).kind == "within"
    width = max(interval.high - interval.low, 1e-3 * abs(ours.value))
    assert compare_published(_row(metric, ours.value + 3 * width + 1.0), model, SETTINGS).kind == "outside"


def test_the_intervals_are_wilson_over_their_counts_the_jackknife_or_exact(model):
    origin = model.probe("loss_landscape")["origin"]
    totals = {k: torch.as_tensor(v, dtype=torch.float64) for k, v in origin["totals"].items()}
    # The accuracy of the confident images: Wilson over the confident images, not over all 4,992.
    hits, confident = (int(c) for c in ORIGIN_METRICS["top-1 % (confidence > 0.9)"].counts(totals))
    assert 20 < confident < 1000 and hits < confident
    low, high = binomtest(hits, confident).proportion_ci(0.95, method="wilson")
    interval = compare_published(_row("top-1 % (confidence > 0.9)", 100.0), model, SETTINGS).ours.interval
    assert (interval.low, interval.high) == (pytest.approx(100 * low), pytest.approx(100 * high))
    # The report's cell says over how many of the 4,992 images that proportion is; the ECE's is over all of them.
    from hf_vitrobust.report.reproduction_sections import PUBLISHED_HEADERS, published_table

    column = PUBLISHED_HEADERS.index("ours [interval]")
    entries = [
        compare_published(_row(m, 10.0), model, SETTINGS).to_dict()
        for m in ("top-1 % (confidence > 0.9)", "ECE %")
    ]
    confident_cell, ece_cell = (row[column] for row in published_table(entries))
    assert confident_cell.endswith(f"(n = {confident:,} of 4,992)")
    assert ece_cell.endswith("(n = 4,992)")
    # ECE: the normal interval of the jackknife standard error over the 52 batches.
    ece = compare_published(_row("ECE %", 10.0), model, SETTINGS).ours
    half = norm.ppf(0.975) * origin["standard_errors"]["ECE %"]
    assert ece.interval.high - ece.interval.low == pytest.approx(2 * half) and half > 0.1
    assert compare_published(_row("ECE %", ece.value + 1.01 * half), model, SETTINGS).kind == "outside"
    assert compare_published(_row("ECE %", ece.value - 0.99 * half), model, SETTINGS).kind == "within"
    # The L1 norm sum depends on no image: within its reading precision and float32 rounding only.
    assert compare_published(_row(L1_METRIC, L1 + 0.1, 5e-8), model, SETTINGS).kind == "within"
    assert compare_published(_row(L1_METRIC, L1 + 1.0, 5e-8), model, SETTINGS).kind == "outside"
