# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The progression of a loss over the steps of an iterative attack: mean and standard deviation per step.

Paul & Chen (AAAI 2022, the loss-progression figure; notebooks `analysis/pgd_attacks/` of
github.com/sayakpaul/robustness-vit) attack 100 correctly classified ImageNet images with 10 steps of a PGD-style attack and plot the cross-entropy at each step, averaged
over the images with a band of one standard deviation: a ViT's loss rises more slowly than a CNN's. This function
turns (step, loss) records, one per image and step, into that curve; `hf_vitrobust.probes.pgd_loss_progression`
produces the records.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from ._validation import as_float_array, as_index_array, check_same_length


@dataclass(frozen=True)
class LossProgressionResult:
    """Per step, in increasing step order: the step, the mean and the (population, ddof 0) standard deviation of
    the loss over the records of that step, and how many records it had."""

    steps: list[int]
    loss_mean: list[float]
    loss_std: list[float]
    counts: list[int]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def loss_progression(steps: Any, losses: Any) -> LossProgressionResult:
    """Mean and standard deviation of `losses` grouped by `steps` (one record per image and attack step).

    steps: (records,) non-negative integer step indices; losses: (records,) finite loss values.
    """
    step_array = as_index_array(steps, "steps")
    loss_array = as_float_array(losses, "losses", ndim=1)
    check_same_length(steps=step_array, losses=loss_array)
    if not len(step_array):
        raise ValueError("No (step, loss) records given.")
    if np.any(step_array < 0):
        raise ValueError("`steps` must be non-negative step indices.")
    unique, inverse, counts = np.unique(step_array, return_inverse=True, return_counts=True)
    sums = np.bincount(inverse, weights=loss_array, minlength=len(unique))
    means = sums / counts
    squares = np.bincount(inverse, weights=(loss_array - means[inverse]) ** 2, minlength=len(unique))
    stds = np.sqrt(squares / counts)
    return LossProgressionResult(
        steps=[int(step) for step in unique],
        loss_mean=[float(value) for value in means],
        loss_std=[float(value) for value in stds],
        counts=[int(count) for count in counts],
    )


__all__ = ["LossProgressionResult", "loss_progression"]
