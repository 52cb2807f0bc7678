# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Background robustness on ImageNet-9 (Xiao et al., "Noise or Signal: The Role of Image Backgrounds in Object
Recognition", ICLR 2021; MadryLab/backgrounds_challenge).

Protocol: the top-1 class over all 1000 ImageNet classes is mapped to one of the 9 superclasses (the shipped table
`assets/class_lists/imagenet_9.tsv`); a prediction in a class outside the 9 counts as wrong. The BG-gap is the
accuracy on MIXED-SAME minus the accuracy on MIXED-RAND.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from ..constants import IMAGENET_9_CLASSES, IMAGENET_9_VARIANTS, imagenet_to_imagenet_9
from ..registry import check_known
from ._validation import as_index_array, as_string_list, check_same_length, json_float

# The test-set variations of the backgrounds challenge (its folder names), ImageNet-1k index -> ImageNet-9 superclass
# index (-1: in none of the 9), and the 9 names in index order: `hf_vitrobust.constants`.
VARIANTS = IMAGENET_9_VARIANTS
IMAGENET_TO_IN9 = np.asarray(imagenet_to_imagenet_9(), dtype=np.int64)
IN9_CLASSES = IMAGENET_9_CLASSES


def imagenet_to_in9(predictions: Sequence[int] | np.ndarray) -> np.ndarray:
    """Map ImageNet-1k class indices to ImageNet-9 superclass indices (-1 for the classes outside the 9)."""
    predictions = as_index_array(predictions, "predictions")
    if np.any(predictions < 0) or np.any(predictions >= len(IMAGENET_TO_IN9)):
        raise ValueError(f"`predictions` must be ImageNet-1k indices in [0, {len(IMAGENET_TO_IN9)}).")
    return IMAGENET_TO_IN9[predictions]


@dataclass(frozen=True)
class BackgroundGapResult:
    """Accuracies are fractions; `bg_gap` = accuracy[mixed_same] - accuracy[mixed_rand] (None if either is absent)."""

    accuracy: dict[str, float]
    bg_gap: float | None
    num_samples: dict[str, int]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def background_gap(
    predictions: Sequence[int] | np.ndarray, references: Sequence[int] | np.ndarray, variants: Sequence[str]
) -> BackgroundGapResult:
    """Per-variant accuracy and BG-gap from top-1 ImageNet-1k `predictions` and ImageNet-9 `references` (0..8)."""
    mapped = imagenet_to_in9(predictions)
    references = as_index_array(references, "references")
    names = as_string_list(variants, "variants")
    check_same_length(predictions=mapped, references=references, variants=names)
    if not names:
        raise ValueError("No samples given.")
    if np.any(references < 0) or np.any(references >= len(IN9_CLASSES)):
        raise ValueError(
            f"`references` are ImageNet-9 indices in [0, {len(IN9_CLASSES)}) ({', '.join(IN9_CLASSES)})."
        )
    unique, variant_index = np.unique(np.asarray(names, dtype=str), return_inverse=True)
    check_known(unique.tolist(), VARIANTS, "ImageNet-9 variant")
    counts = np.bincount(variant_index, minlength=len(unique))
    correct = np.bincount(variant_index, weights=mapped == references, minlength=len(unique))
    position = {str(name): i for i, name in enumerate(unique)}
    ordered = [name for name in VARIANTS if name in position]
    accuracy = {name: float(correct[position[name]] / counts[position[name]]) for name in ordered}
    gap = (
        accuracy["mixed_same"] - accuracy["mixed_rand"]
        if {"mixed_same", "mixed_rand"} <= set(accuracy)
        else None
    )
    return BackgroundGapResult(
        accuracy=accuracy,
        bg_gap=json_float(gap),
        num_samples={name: int(counts[position[name]]) for name in ordered},
    )
