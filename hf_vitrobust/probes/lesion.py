# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Lesion study of Park & Kim, "How do vision transformers work?" (ICLR 2022, Sec. 4.2, Fig. 11-12).

Switch off one residual unit at a time (its branch outputs zero, so its block passes only its shortcut) and measure
how much the accuracy drops. Park & Kim find that in a ResNet or AlterNet, removing an MSA unit near the end of a
stage costs more than removing a conv unit, and that in a ViT the early MSA units matter little: the evidence that
MSAs at the end of a stage play a particular role, which motivates AlterNet's design.

Residual units come from `Classifier.residual_units()` and are switched off with `Classifier.lesion(...)` (see
`hf_vitrobust.models.residual_units` for the supported architectures and where each unit is cut).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch

from ..models.classifier import Classifier
from .base import (
    DEFAULT_BATCH_SIZE,
    ProbeResult,
    check_batch_size,
    check_seed,
    new_axes,
    predict_logits,
    prepare_inputs,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes

KIND_COLORS = {"msa": "tab:red", "mlp": "tab:green", "conv": "tab:blue"}


@dataclass
class LesionResult(ProbeResult):
    """Accuracy with each residual unit removed (Park & Kim 2022, Fig. 11-12).

    units, kinds, stages, indices: the lesioned units in network order (`ResidualUnit` name, kind "msa" / "mlp" /
        "conv", stage (None for ViTs) and block index).
    baseline_accuracy: top-1 accuracy of the intact model, in [0, 1].
    accuracy: top-1 accuracy with that one unit removed.
    accuracy_drop: baseline_accuracy - accuracy (positive = the unit matters).
    num_images: how many images were evaluated.
    """

    units: list[str]
    kinds: list[str]
    stages: list[int | None]
    indices: list[int]
    baseline_accuracy: float
    accuracy: list[float]
    accuracy_drop: list[float]
    num_images: int

    @classmethod
    def probe_name(cls) -> str:
        return "lesion_study"

    def plot(self, ax: Axes | None = None) -> Axes:
        """Accuracy drop (percentage points) per removed unit, in network order, coloured by kind."""
        from matplotlib.patches import Patch

        ax = new_axes(ax, figsize=(max(4.5, 0.25 * len(self.units) + 1.5), 3.5))
        positions = np.arange(len(self.units))
        colors = [KIND_COLORS.get(kind, "tab:gray") for kind in self.kinds]
        ax.bar(positions, 100.0 * np.array(self.accuracy_drop, dtype=float), color=colors)
        ax.axhline(0.0, color="black", linewidth=0.8)
        ax.set_xlabel("Removed unit (depth)")
        ax.set_ylabel("Accuracy drop (%p)")
        ax.set_xticks(positions)
        ax.set_xticklabels([str(i) for i in positions], fontsize="small")
        present = [kind for kind in KIND_COLORS if kind in self.kinds]
        ax.legend(handles=[Patch(color=KIND_COLORS[kind], label=kind.upper()) for kind in present])
        ax.set_title("Lesion study")
        return ax


def _accuracy(classifier: Classifier, pixels: torch.Tensor, labels: torch.Tensor, batch_size: int) -> float:
    logits = predict_logits(classifier, pixels, batch_size)
    return float((logits.argmax(dim=-1) == labels).double().mean())


def lesion_study(
    classifier: Classifier,
    images: torch.Tensor | Iterable[object],
    labels: torch.Tensor | Sequence[int] | None = None,
    *,
    seed: int = 0,
    batch_size: int = DEFAULT_BATCH_SIZE,
    units: Sequence[str] | None = None,
    limit: int | None = None,
) -> LesionResult:
    """Top-1 accuracy drop when one residual unit at a time is removed (Park & Kim 2022, Fig. 11-12).

    Args:
        classifier: a `Classifier` whose architecture `Classifier.residual_units()` supports (AlterNet, transformers
            ViT/DeiT, timm ViT, timm ResNet); others raise ValueError.
        images, labels: pixels in [0, 1] with labels, or a labelled dataset.
        seed: unused (deterministic), validated for the common signature.
        batch_size: images per forward pass; the result does not depend on it.
        units: names of the units to remove one at a time (default: every unit, in network order).
        limit: read at most this many images of a dataset.
    """
    check_seed(seed)
    check_batch_size(batch_size)
    if isinstance(units, str):
        raise TypeError("units must be a sequence of unit names, not a single string.")
    available = classifier.residual_units()
    if units is None:
        selected = available
    else:
        wanted = list(units)
        if not wanted:
            raise ValueError("units is empty.")
        known = [unit.name for unit in available]
        unknown = [name for name in wanted if name not in known]
        if unknown:
            raise ValueError(f"Unknown residual units {unknown}; available: {known}.")
        selected = [unit for unit in available if unit.name in set(wanted)]
    inputs = prepare_inputs(classifier, images, labels, limit=limit)
    assert inputs.labels is not None
    baseline = _accuracy(classifier, inputs.pixels, inputs.labels, batch_size)
    accuracy = []
    for unit in selected:
        with classifier.lesion([unit.name]):
            accuracy.append(_accuracy(classifier, inputs.pixels, inputs.labels, batch_size))
    return LesionResult(
        units=[unit.name for unit in selected],
        kinds=[unit.kind for unit in selected],
        stages=[unit.stage for unit in selected],
        indices=[unit.index for unit in selected],
        baseline_accuracy=baseline,
        accuracy=accuracy,
        accuracy_drop=[baseline - value for value in accuracy],
        num_images=len(inputs),
    )


__all__ = ["KIND_COLORS", "LesionResult", "lesion_study"]
