"""The loss landscape's per-point standard error over its averaging units (Park & Kim's mini-batches; one per chunk in
a run, but any split gives the same), which gives Park & Kim's origin loss and NLL their sampling interval (`analysis.published_vs_ours`), and the published metrics a grid
point holds."""

from __future__ import annotations

import numpy as np
import pytest

from hf_vitrobust.probes.loss_landscape import SPEC


def _partial(loss: float, num_images: int = 96) -> dict:
    """One chunk of one mini-batch (loss_average "batches"): its grid of NLL + 0.05 x l2 and its NLL's square."""
    grid = [[loss, loss + 1.0]]
    nll = np.asarray(grid) - 0.05 * np.asarray([[700.0, 710.0]])
    return {
        "nll_square_sum": (nll**2).tolist(),
        "x": [0.0, 0.1],
        "y": [0.0],
        "loss": grid,
        "accuracy": [[0.5, 0.25]],
        "center_loss": loss,
        "weight_decay": 0.05,
        "l2": [[700.0, 710.0]],
        "normalization": "park-kim",
        "l2_term": "park-kim",
        "augmentation": "park-kim-cifar100",
        "augmentation_draw": "per-point",
        "loss_average": "batches",
        "batch_size": 96,
        "num_batches": 1,
        "num_images": num_images,
    }


def test_batch_means_give_the_standard_error_of_their_mean():
    """The standard error is the sample standard deviation of the batch means over the square root of their count
    (numpy's), at every grid point; one batch has none."""
    losses = [36.0, 37.5, 36.9, 38.1]
    merged = SPEC.merge_fn([_partial(v) for v in losses])
    expected = np.std(losses, ddof=1) / np.sqrt(len(losses))
    np.testing.assert_allclose(np.asarray(merged["loss_standard_error"]), [[expected, expected]])
    assert merged["loss"][0][0] == pytest.approx(np.mean(losses))
    assert SPEC.merge_fn([_partial(36.0)])["loss_standard_error"] is None


def test_a_grid_point_holds_the_loss_nll_top1_and_l2_with_their_spread():
    merged = SPEC.merge_fn([_partial(v) for v in (36.0, 37.0)])
    merged = {k: (v.tolist() if hasattr(v, "tolist") else v) for k, v in merged.items()}
    origin = {"x": "0.0", "y": "0.0"}
    nll = SPEC.value_of(merged, "NLL", origin)
    assert nll.value == pytest.approx(36.5 - 0.05 * 700.0) and nll.standard_error == pytest.approx(0.5)
    top1 = SPEC.value_of(merged, "top-1 %", {"x": "0.1", "y": "0.0"})
    assert (top1.value, top1.successes, top1.num_images) == (25.0, 48, 192)
    l2 = SPEC.value_of(merged, "sum of parameter L2 norms", origin)
    assert (l2.value, l2.standard_error) == (700.0, 0.0)
    with pytest.raises(LookupError, match="ECE"):
        SPEC.value_of(merged, "ECE %", origin)
