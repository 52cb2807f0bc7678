# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Accuracy and mean confidence per Cutout masking ratio: the occlusion curve of Paul & Chen ("Vision Transformers
are Robust Learners", AAAI 2022, Cutout masking analysis), from one record (ratio, correct, confidence) per image and
ratio.

The confidence is what the caller records; `hf_vitrobust.probes.occlusion_sweep` records the maximum softmax
probability (the confidence of the prediction, as Paul & Chen's notebooks compute it: `softmax(logits).max()`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from ._validation import as_float_array, check_same_length


def as_correct(values: Any, name: str = "correct") -> np.ndarray:
    """Per-sample correctness (booleans, or 0 / 1) as a float64 array of zeros and ones."""
    array = as_float_array(values, name, ndim=1)
    if not np.all((array == 0) | (array == 1)):
        raise ValueError(f"`{name}` must hold booleans (or 0 / 1), one per sample.")
    return array


def group_means(keys: np.ndarray, *columns: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """The distinct keys (ascending), the number of records of each, and each column's mean per key."""
    unique, inverse, counts = np.unique(keys, return_inverse=True, return_counts=True)
    means = [np.bincount(inverse, weights=column, minlength=unique.size) / counts for column in columns]
    return unique, counts, means


@dataclass(frozen=True)
class OcclusionAccuracyResult:
    """Per masking ratio (ascending): top-1 accuracy and mean confidence (fractions), and the number of records."""

    ratios: list[float]
    accuracy: list[float]
    mean_confidence: list[float]
    num_samples: list[int]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def occlusion_accuracy(ratios: Any, correct: Any, confidences: Any) -> OcclusionAccuracyResult:
    """Group records by masking ratio and average their correctness and confidence.

    ratios: masked fraction of the image area in [0, 1], per record (0 for the clean image).
    correct: whether the top-1 prediction was right, per record.
    confidences: a probability in [0, 1] per record (e.g. the maximum softmax probability).
    """
    ratios = as_float_array(ratios, "ratios", ndim=1)
    correct = as_correct(correct)
    confidences = as_float_array(confidences, "confidences", ndim=1)
    if not check_same_length(ratios=ratios, correct=correct, confidences=confidences):
        raise ValueError("No records given.")
    if np.any((ratios < 0) | (ratios > 1)):
        raise ValueError("`ratios` must be masked fractions in [0, 1].")
    if np.any((confidences < 0) | (confidences > 1)):
        raise ValueError("`confidences` must be probabilities in [0, 1].")
    unique, counts, (accuracy, confidence) = group_means(ratios, correct, confidences)
    return OcclusionAccuracyResult(
        ratios=unique.tolist(),
        accuracy=accuracy.tolist(),
        mean_confidence=confidence.tolist(),
        num_samples=counts.tolist(),
    )


__all__ = ["OcclusionAccuracyResult", "as_correct", "group_means", "occlusion_accuracy"]
