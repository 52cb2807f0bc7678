# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Accuracy per noise band and its drop from the clean accuracy: Park & Kim ("How Do Vision Transformers Work?",
ICLR 2022, Fig. 2b, "robustness for noise frequency"), from one record (band centre frequency, correct) per image
and band.

Frequencies are band centres in units of pi (0.1 ... 0.9 in the paper). The drop is clean accuracy minus the
accuracy under noise (positive = the noise hurts); Fig. 2b plots its negative, the change in accuracy.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from ._validation import as_float_array, check_same_length
from .occlusion_accuracy import as_correct, group_means


@dataclass(frozen=True)
class FrequencyNoiseAccuracyResult:
    """Per band centre (ascending, units of pi): accuracy under noise (fraction) and the number of records; with a
    clean accuracy, also the drop `clean_accuracy - accuracy` per band (else None)."""

    frequencies: list[float]
    accuracy: list[float]
    num_samples: list[int]
    clean_accuracy: float | None
    accuracy_drop: list[float] | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def frequency_noise_accuracy(
    frequencies: Any, correct: Any, *, clean_accuracy: float | None = None
) -> FrequencyNoiseAccuracyResult:
    """Group records by noise band and average their correctness.

    frequencies: the band centre of the noise each record saw, in units of pi, in [0, 1].
    correct: whether the top-1 prediction under that noise was right, per record.
    clean_accuracy: the accuracy (fraction) on the same images without noise, for the accuracy drop.
    """
    frequencies = as_float_array(frequencies, "frequencies", ndim=1)
    correct = as_correct(correct)
    if not check_same_length(frequencies=frequencies, correct=correct):
        raise ValueError("No records given.")
    if np.any((frequencies < 0) | (frequencies > 1)):
        raise ValueError("`frequencies` must be band centres in units of pi, in [0, 1].")
    if clean_accuracy is not None:
        if (
            isinstance(clean_accuracy, bool)
            or not isinstance(clean_accuracy, int | float | np.floating)
            or not math.isfinite(clean_accuracy)
            or not 0 <= clean_accuracy <= 1
        ):
            raise ValueError(f"`clean_accuracy` must be a fraction in [0, 1], got {clean_accuracy!r}.")
        clean_accuracy = float(clean_accuracy)
    unique, counts, (accuracy,) = group_means(frequencies, correct)
    drop = None if clean_accuracy is None else (clean_accuracy - accuracy).tolist()
    return FrequencyNoiseAccuracyResult(
        frequencies=unique.tolist(),
        accuracy=accuracy.tolist(),
        num_samples=counts.tolist(),
        clean_accuracy=clean_accuracy,
        accuracy_drop=drop,
    )


__all__ = ["FrequencyNoiseAccuracyResult", "frequency_noise_accuracy"]
