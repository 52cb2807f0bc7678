# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The per-point intervals over images of a merged probe dict (see `probes.spec`): interval curves of proportions
(Wilson, from counts; `counts_from_means` recovers the counts behind a mean of 0/1 values) and of means (Student-t,
from the sample standard deviation, clipped to the values' support), and `interval_entry`, the "intervals" a
probe's `intervals_fn` returns."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import torch

from ..metrics.intervals import (
    DEFAULT_CONFIDENCE_LEVEL,
    EQUAL_VALUES,
    UNBOUNDED,
    Support,
    not_estimable_note,
    proportion_bounds,
    share_fallback_note,
)
from ..metrics.mean_intervals import mean_bounds, zero_spread

INTERVAL_UNIT = "image"


def _array(values: Any) -> np.ndarray:
    if isinstance(values, torch.Tensor):
        return values.detach().cpu().double().numpy()
    return np.array(values, dtype=np.float64)


def counts_from_means(means: Any, num_images: Any) -> np.ndarray | None:
    """The success counts behind proportions over `num_images` images (a mean of 0/1 values times the count,
    rounded), int64 of the shape of `means`; None where a mean is missing or is no count over those images (off
    by more than 1e-6 of an image)."""
    values = np.asarray(
        means.detach().cpu().double().numpy() if isinstance(means, torch.Tensor) else means, dtype=np.float64
    )
    if num_images is None or isinstance(num_images, bool):
        return None
    scaled = values * float(num_images)
    counts = np.round(scaled)
    if not np.all(np.isfinite(scaled)) or np.any(np.abs(scaled - counts) > 1e-6):
        return None
    return counts.astype(np.int64)


def proportion_curve(
    successes: Any, trials: Any, confidence_level: float = DEFAULT_CONFIDENCE_LEVEL, method: str = "wilson"
) -> dict[str, Any] | None:
    """The interval curve {"method", "low", "high"} of proportions successes / trials (any shape; `trials` may
    be one count for all), by `method` ("wilson" or "clopper-pearson"); None without counts."""
    if successes is None or trials is None:
        return None
    low, high = proportion_bounds(_array(successes), _array(trials), confidence_level, method)
    return {"method": method, "low": low.tolist(), "high": high.tolist()}


def sample_std(mean: Any, square_sum: Any, count: Any) -> np.ndarray:
    """The sample (ddof 1) standard deviation of `count` values from their mean and their sum of squares:
    sqrt(max(sum x^2 - n mean^2, 0) / (n - 1)), vectorised; NaN where n < 2."""
    m, squares, n = _array(mean), _array(square_sum), _array(count)
    with np.errstate(divide="ignore", invalid="ignore"):
        variance = np.maximum(squares - n * m * m, 0.0) / (n - 1.0)
    return np.where(n < 2, np.nan, np.sqrt(variance))


def mean_curve(
    mean: Any,
    std: Any,
    count: Any,
    confidence_level: float = DEFAULT_CONFIDENCE_LEVEL,
    support: Support = UNBOUNDED,
) -> dict[str, Any] | None:
    """The Student-t interval curve {"method", "low", "high"} of means over `count` images with sample standard
    deviations `std` (any shape; `metrics.mean_intervals.mean_bounds`), clipped to the per-image values' `support`
    (an L2 norm's (0, None), an error's (0, 1)); None without them. Where some point's images all gave the same
    value, a "note" says that point has the Wilson share bound (bounded support) or no bounds (NaN)."""
    if mean is None or std is None or count is None:
        return None
    m, s, n = _array(mean), _array(std), _array(count)
    low, high = mean_bounds(m, s, n, confidence_level, support)
    curve: dict[str, Any] = {"method": "student-t", "low": low.tolist(), "high": high.tolist()}
    if np.any(zero_spread(m, s, n)):
        bounded = support[0] is not None and support[1] is not None
        note = share_fallback_note("wilson", EQUAL_VALUES) if bounded else not_estimable_note(EQUAL_VALUES)
        curve["note"] = f"at some points {note}"
    return curve


def paired_accuracy_curves(
    probe: Mapping[str, Any], count: Any, reference: str, confidence_level: float
) -> dict[str, dict[str, Any] | None]:
    """The intervals of a probe that measures an accuracy against a reference accuracy on the same images
    (frequency noise: `reference` "clean"; lesions: "baseline"): Wilson intervals of "accuracy" and
    "<reference>_accuracy" (from "num_correct" / "num_<reference>_correct", or accuracy x images), and the paired
    Student-t interval of "accuracy_drop" (per image d = reference - perturbed in {-1, 0, 1}, so sum d^2 is
    "num_discordant"; None where the dict lacks it)."""
    reference_count = probe.get(f"num_{reference}_correct")
    if reference_count is None:
        reference_count = counts_from_means(probe.get(f"{reference}_accuracy"), count)
    correct = probe.get("num_correct")
    if correct is None:
        correct = counts_from_means(probe.get("accuracy"), count)
    drop, discordant = probe.get("accuracy_drop"), probe.get("num_discordant")
    drop_curve = None
    if drop is not None and discordant is not None and count is not None:
        std = sample_std(drop, discordant, count)
        drop_curve = mean_curve(drop, std, count, confidence_level, support=(-1.0, 1.0))
    return {
        "accuracy": proportion_curve(correct, count, confidence_level),
        f"{reference}_accuracy": proportion_curve(reference_count, count, confidence_level),
        "accuracy_drop": drop_curve,
    }


def interval_entry(confidence_level: float, curves: Mapping[str, Mapping[str, Any] | None]) -> dict[str, Any]:
    """A probe dict's "intervals": the level, the first curve's method, the unit ("image") and every curve that
    could be computed ({} when none could)."""
    present = {key: dict(curve) for key, curve in curves.items() if curve is not None}
    if not present:
        return {}
    return {
        "confidence_level": float(confidence_level),
        "method": next(iter(present.values()))["method"],
        "unit": INTERVAL_UNIT,
        **present,
    }


__all__ = [
    "INTERVAL_UNIT",
    "counts_from_means",
    "interval_entry",
    "mean_curve",
    "paired_accuracy_curves",
    "proportion_curve",
    "sample_std",
]
