"""Park & Kim's loss landscape beside ours (issue 33 point 2): the origin rows point by point under their random
augmentation (the sampling interval), the rest of the surface by its summary statistics
(`analysis.published_surface`), each with a verdict."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from reproduction_runs import PARK_KIM_LANDSCAPE_PARAMS, Model, accuracy_frame, published_row, write_run
from scipy.stats import binomtest, norm

import hf_vitrobust.analysis.published_vs_ours as published_vs_ours
from hf_vitrobust.analysis.published_models import Identified
from hf_vitrobust.analysis.published_surface import compare_surfaces, direction_statistics
from hf_vitrobust.analysis.published_vs_ours import compare_published, surface_comparisons
from hf_vitrobust.analysis.results import load_results, merge_results
from hf_vitrobust.analysis.run_models import RunModel
from hf_vitrobust.analysis.uncertainty import UncertaintySettings

SETTINGS = UncertaintySettings(confidence_level=0.95, num_resamples=200, seed=0)
SPEC = "https://github.com/xxxnell/how-do-vits-work-storage/releases/download/v0.1/vit_ti_cifar100_9857b21357.pth.tar"
PROTOCOL = (
    "augmentation=park-kim-cifar100;augmentation_draw=per-point;batch_size=96;exclude=pos_embed,relative_position;"
    "l2_term=park-kim;loss_average=batches;normalization=park-kim;resolution=21;weight_decay=0.05"
)
PARAMS = PARK_KIM_LANDSCAPE_PARAMS
N = 4992
STEPS = np.round(np.linspace(-1.0, 1.0, 21), 10)
CORRECT = 3286  # 65.8253 %, the published ViT-Ti origin's count of 4,992
L2 = 769.5
NLL = 2.4896
SE = 0.01  # our chunks' standard error of the loss at every point


def quadratic(a: float, b: float, base: float) -> np.ndarray:
    """loss = base + a x^2 + b y^2 on the 21 x 21 grid, entry [i, j] at (x[j], y[i])."""
    return base + a * STEPS[None, :] ** 2 + b * STEPS[:, None] ** 2


def row(**changes) -> object:
    """A published row of the ViT-Ti loss landscape with its checkpoint's release URL as same-weights."""
    base = {
        "row_id": "park-kim/loss_landscape/loss/vit-ti-park-kim-cifar100/x=0.0/y=0.0",
        "paper": "park-kim",
        "model": "ViT-Ti",
        "model_key": "vit-ti-park-kim-cifar100",
        "model_id": SPEC,
        "benchmark": "loss_landscape",
        "metric": "loss",
        "condition": "dataset=cifar100-train;x=0.0;y=0.0",
        "protocol": PROTOCOL,
        "unit": "",
        "images": N,
        "image_set": "subset-of-all",
        "reading_precision": 5e-15,
    }
    return published_row(**{**base, **changes})


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> RunModel:
    """A run of the checkpoint whose loss_landscape probe read 4,992 cifar100-train images."""
    loss = quadratic(20.0, 20.0, NLL + 0.05 * L2)
    probe = {
        "x": STEPS.tolist(),
        "y": STEPS.tolist(),
        "loss": loss.tolist(),
        "accuracy": np.full_like(loss, CORRECT / N).tolist(),
        "l2": np.full_like(loss, L2).tolist(),
        "loss_standard_error": np.full_like(loss, SE).tolist(),
        "weight_decay": 0.05,
        "num_images": N,
        **PARAMS,
        "benchmark": "cifar100-train",
        "params": PARAMS,
    }
    correct = np.zeros(5000, dtype=bool)
    correct[:3000] = True
    folder = write_run(
        tmp_path_factory.mktemp("surface") / "run",
        [Model(SPEC, {"cifar100-train": accuracy_frame(correct)}, probes={"loss_landscape": probe})],
    )
    result = merge_results(load_results([folder]))[0]
    return RunModel(result, result["models"][0]["key"])


def _kind(published, model) -> str:
    comparison = compare_published(published, model, SETTINGS)
    assert not comparison.reasons, comparison.reason_text()
    return comparison.kind


def test_origin_top1_is_compared_by_its_wilson_interval_not_as_counts(model):
    """Their augmentation was drawn at random, so their 4,992 inputs are never ours: the top-1 gets our Wilson
    interval (scipy's), not a count of images."""
    low, high = binomtest(CORRECT, N).proportion_ci(0.95, method="wilson")
    comparison = compare_published(row(metric="top-1 %", value=100.0 * CORRECT / N), model, SETTINGS)
    assert comparison.ours.interval.low == pytest.approx(100 * low) and comparison.counts is None
    assert comparison.kind == "within"
    assert _kind(row(metric="top-1 %", value=100 * low - 0.05), model) == "outside"
    assert _kind(row(metric="top-1 %", value=100 * high - 0.05), model) == "within"


def test_origin_nll_loss_and_l2_compare_within_their_precision_and_our_interval(model):
    """NLL = loss - 0.05 x l2 at the origin, with the normal interval of the chunks' standard error; the L2 norm sum
    depends on no image: equal within the reading precision, else outside."""
    z = norm.ppf(0.975)
    nll = compare_published(row(metric="NLL", value=NLL), model, SETTINGS)
    assert nll.ours.value == pytest.approx(NLL, abs=1e-9) and nll.kind == "within"
    assert nll.ours.interval.high - nll.ours.interval.low == pytest.approx(2 * z * SE)
    assert _kind(row(metric="NLL", value=NLL + 1.01 * z * SE), model) == "outside"
    assert _kind(row(metric="NLL", value=NLL + 0.99 * z * SE), model) == "within"
    assert _kind(row(metric="loss", value=NLL + 0.05 * L2), model) == "within"
    assert _kind(row(metric="sum of parameter L2 norms", value=L2), model) == "within"
    assert _kind(row(metric="sum of parameter L2 norms", value=L2 + 0.01), model) == "outside"
    ece = compare_published(row(metric="ECE %", value=16.3), model, SETTINGS)
    assert ece.kind == "not comparable" and "not in this run" in ece.reason_text()


def test_surface_statistics_are_the_closed_forms_of_a_quadratic_bowl():
    """loss = c + a x^2 + b y^2: minimum c, curvature 2a and 2b exactly (a second difference of a quadratic), basin
    width at +5 = 2 sqrt(5 / a), on grid points for a = 20 (1.0) and b = 125 (0.4)."""
    stats = direction_statistics(STEPS, STEPS, quadratic(20.0, 125.0, 40.0))
    np.testing.assert_allclose(stats["minimum"], [40.0, 40.0])
    np.testing.assert_allclose(stats["curvature at the origin"], [40.0, 250.0])
    np.testing.assert_allclose(stats["basin width at +5"], [1.0, 0.4])


def test_the_same_surface_agrees_and_another_differs():
    """Their directions differ from ours: the statistics of the same bowl agree, a bowl twice as curved differs (its
    curvature and basin width), and a basin past the grid's edge cannot be read."""
    ours = (STEPS, STEPS, quadratic(20.0, 20.0, 40.0))
    same = compare_surfaces(ours, ours, np.full((21, 21), SE), 0.95)
    assert [s.kind for s in same] == ["within", "within", "within"]
    steeper = compare_surfaces((STEPS, STEPS, quadratic(40.0, 40.0, 40.0)), ours, np.full((21, 21), SE), 0.95)
    assert {s.name: s.kind for s in steeper} == {
        "minimum": "within",
        "curvature at the origin": "outside",
        "basin width at +5": "outside",
    }
    flat = compare_surfaces((STEPS, STEPS, quadratic(1.0, 1.0, 40.0)), ours, None, 0.95)
    assert flat[2].kind == "not comparable"


def test_the_direction_spread_widens_the_tolerance():
    """Two directions of different curvature on either side: the tolerance is z sqrt(s_theirs^2 + s_ours^2), s half
    the difference between the directions."""
    theirs = (STEPS, STEPS, quadratic(20.0, 30.0, 40.0))  # curvatures 40 and 60: s = 10
    ours = (STEPS, STEPS, quadratic(25.0, 25.0, 40.0))  # 50 and 50: s = 0
    curvature = compare_surfaces(theirs, ours, None, 0.95)[1]
    assert curvature.tolerance == pytest.approx(norm.ppf(0.975) * 10.0)
    assert curvature.kind == "within" and curvature.ours == pytest.approx(50.0)


def test_a_run_gets_one_comparison_per_statistic_from_the_published_grid(model, monkeypatch):
    """`surface_comparisons` builds their grid from the loss rows and names each statistic's row; a surface equal
    to ours agrees, one twice as curved differs."""

    def grid_rows(a: float, b: float) -> list:
        loss = quadratic(a, b, NLL + 0.05 * L2)
        return [
            row(row_id=f"r{i}/{j}", condition=f"dataset=cifar100-train;x={x:.1f};y={y:.1f}", value=loss[i, j])
            for i, y in enumerate(STEPS)
            for j, x in enumerate(STEPS)
        ]

    identified = Identified("park-kim", "vit-ti-park-kim-cifar100", ((0, model.key),))
    monkeypatch.setattr(published_vs_ours, "published_numbers", lambda paper=None: grid_rows(20.0, 20.0))
    same = surface_comparisons(identified, [model], SETTINGS)
    assert [c.row.metric for c in same] == [
        "surface minimum",
        "surface curvature at the origin",
        "surface basin width at +5",
    ]
    assert [c.kind for c in same] == ["within"] * 3
    assert (
        same[1].row.row_id
        == "park-kim/loss_landscape/surface-curvature-at-the-origin/vit-ti-park-kim-cifar100"
    )
    monkeypatch.setattr(published_vs_ours, "published_numbers", lambda paper=None: grid_rows(40.0, 40.0))
    steeper = surface_comparisons(identified, [model], SETTINGS)
    assert [c.kind for c in steeper] == ["within", "outside", "outside"]
    other = dataclasses.replace(identified, stand_in=True)
    assert {c.kind for c in surface_comparisons(other, [model], SETTINGS)} == {"not comparable"}
