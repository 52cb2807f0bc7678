# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Occlusion sweep: accuracy and confidence as a growing black square hides more of each image.

Paul & Chen ("Vision Transformers are Robust Learners", AAAI 2022, Cutout masking analysis) mask one square region
covering a fraction r of each image (r = 0.05, 0.1, 0.2, 0.5) with zeros and report the top-1 accuracy: ViT-L/16
keeps more of its clean accuracy than BiT as r grows (their notebooks, on 1000 ImageNet validation images: 83.0 % ->
60.4 % for ViT-L/16 and 79.0 % -> 52.0 % for BiT-M-R101x3 from r = 0 to r = 0.5). The hole is
`hf_vitrobust.corruptions.occlusion.cutout` (wholly inside the image, exactly `side**2` pixels, placed by the
per-image stream keyed by the seed and sample id); the aggregation is `hf_vitrobust.metrics.occlusion_accuracy`.

Confidence: Paul & Chen's masking notebooks compute only the accuracy; where their code speaks of a prediction's
confidence (analysis/attention_maps) it is the maximum softmax probability. The sweep reports that mean, and
also the mean softmax probability of the true class.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from ..corruptions.occlusion import DEFAULT_RATIOS, check_ratio, cutout, hole_side
from ..metrics.occlusion_accuracy import occlusion_accuracy
from ..models.classifier import Classifier
from .base import (
    DEFAULT_BATCH_SIZE,
    ProbeResult,
    batch_slices,
    check_seed,
    new_axes,
    predict_logits,
    prepare_inputs,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes


@dataclass
class OcclusionResult(ProbeResult):
    """Per masking ratio (ascending): top-1 accuracy, mean maximum softmax probability (`confidence`) and mean
    softmax probability of the true class, all fractions, over `num_samples` images."""

    ratios: list[float]
    accuracy: list[float]
    confidence: list[float]
    true_class_probability: list[float]
    num_samples: int
    seed: int

    @classmethod
    def probe_name(cls) -> str:
        return "occlusion_sweep"

    def plot(self, ax: Axes | None = None) -> Axes:
        """Accuracy and mean confidence (%) against the masked share of the image (%)."""
        ax = new_axes(ax)
        masked = [100 * r for r in self.ratios]
        ax.plot(masked, [100 * a for a in self.accuracy], marker="o", label="top-1 accuracy")
        ax.plot(
            masked, [100 * c for c in self.confidence], marker="s", linestyle="--", label="mean confidence"
        )
        ax.set_xlabel("masked image area (%)")
        ax.set_ylabel("%")
        ax.set_ylim(0, 100)
        ax.set_title(f"Cutout occlusion ({self.num_samples} images)")
        ax.legend()
        return ax


def _check_ratios(ratios: Sequence[float], input_size: tuple[int, int]) -> list[float]:
    if isinstance(ratios, str | bytes) or not isinstance(ratios, Sequence | np.ndarray) or len(ratios) == 0:
        raise ValueError(f"ratios must be a non-empty sequence of fractions in [0, 1], got {ratios!r}.")
    checked = [check_ratio(float(r) if isinstance(r, np.floating) else r) for r in ratios]
    if len(set(checked)) != len(checked):
        raise ValueError(f"ratios must be distinct, got {list(ratios)!r}.")
    for ratio in checked:
        hole_side(*input_size, ratio)  # a hole that cannot fit is an error before any model work
    return sorted(checked)


def occlusion_sweep(
    classifier: Classifier,
    images: torch.Tensor | Iterable[Any],
    labels: torch.Tensor | Sequence[int] | None = None,
    *,
    seed: int = 0,
    batch_size: int = DEFAULT_BATCH_SIZE,
    ratios: Sequence[float] = DEFAULT_RATIOS,
    limit: int | None = None,
    sample_ids: torch.Tensor | Sequence[int] | None = None,
) -> OcclusionResult:
    """Top-1 accuracy and mean confidence of `classifier` with one black square hole covering each ratio of the
    image area (Paul & Chen, AAAI 2022, Cutout).

    images, labels: as `prepare_inputs` (pixels in [0, 1] at the classifier's input size, or a dataset; at most
        `limit` images); labels are required.
    ratios: masked fractions in [0, 1]; 0 gives the clean accuracy. Default (0, 0.05, 0.1, 0.2, 0.5).
    seed: with each image's sample id, places its hole; the same position (relative to the free room) for every
        ratio, and independent of `batch_size`.
    sample_ids: (N,) integer ids that key each image's hole (default: as `prepare_inputs`), so that a subset of
        the images gets the holes it gets among all of them.
    """
    seed = check_seed(seed)
    inputs = prepare_inputs(classifier, images, labels, limit=limit, sample_ids=sample_ids)
    ratio_list = _check_ratios(ratios, tuple(inputs.pixels.shape[-2:]))
    record_ratios, correct, confidence, true_probability = [], [], [], []
    for ratio in ratio_list:
        for part in batch_slices(len(inputs), batch_size):
            batch = inputs.select(part)
            masked = cutout(batch.pixels, ratio, seed=seed, sample_ids=batch.sample_ids)
            probabilities = predict_logits(classifier, masked, batch_size).softmax(dim=-1)
            top, prediction = probabilities.max(dim=-1)
            correct.append((prediction == batch.labels).cpu())
            confidence.append(top.cpu())
            true_probability.append(probabilities.gather(1, batch.labels[:, None])[:, 0].cpu())
            record_ratios.append(torch.full((len(batch),), ratio, dtype=torch.float64))
    ratio_records = torch.cat(record_ratios).numpy()
    correct_records = torch.cat(correct).numpy()
    curve = occlusion_accuracy(ratio_records, correct_records, torch.cat(confidence).double().numpy())
    truth = occlusion_accuracy(ratio_records, correct_records, torch.cat(true_probability).double().numpy())
    return OcclusionResult(
        ratios=curve.ratios,
        accuracy=curve.accuracy,
        confidence=curve.mean_confidence,
        true_class_probability=truth.mean_confidence,
        num_samples=len(inputs),
        seed=seed,
    )


__all__ = ["OcclusionResult", "occlusion_sweep"]
