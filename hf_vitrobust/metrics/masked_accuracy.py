# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Top-k accuracy within a class subset: the ImageNet-A (Hendrycks et al., CVPR 2021) and ImageNet-R (Hendrycks et
al., ICCV 2021) protocol, where the 1000 logits are cut to the dataset's 200 classes before the argmax (timm's
`--valid-labels`). References stay ImageNet-1k indices."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from ._validation import as_float_array, as_index_array, check_class_indices, check_same_length


@dataclass(frozen=True)
class MaskedAccuracyResult:
    """Top-1 / top-5 accuracy (fractions) within the mask; `top5` is None for a mask of fewer than 5 classes."""

    top1: float
    top5: float | None
    num_samples: int
    num_classes: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def masked_topk_predictions(logits: Any, class_indices: Sequence[int] | np.ndarray, k: int = 5) -> np.ndarray:
    """The k best classes (ImageNet-1k indices, best first) among `class_indices`, `(samples, k)`."""
    logits = as_float_array(logits, "logits", ndim=2)
    indices = check_class_indices(class_indices, logits.shape[1])
    k = min(k, indices.size)
    # A stable sort of the negated scores: ties go to the lower position in the mask, as argmax does.
    order = np.argsort(-logits[:, indices], axis=1, kind="stable")[:, :k]
    return indices[order]


def masked_accuracy(
    logits: Any, references: Sequence[int] | np.ndarray, class_indices: Sequence[int] | np.ndarray
) -> MaskedAccuracyResult:
    """Top-1 and top-5 accuracy of `(samples, classes)` logits (or any scores) restricted to `class_indices`.

    Every reference must lie in the mask: a sample outside it has no correct answer under this protocol.
    """
    references = as_index_array(references, "references")
    indices = check_class_indices(class_indices)
    outside = np.setdiff1d(np.unique(references), indices)
    if outside.size:
        raise ValueError(
            f"References outside `class_indices`: {outside[:20].tolist()} ({outside.size} classes)."
        )
    top = masked_topk_predictions(logits, indices, 5)
    check_same_length(logits=top, references=references)
    if not len(references):
        raise ValueError("No samples given.")
    hits = top == references[:, None]
    return MaskedAccuracyResult(
        top1=float(hits[:, 0].mean()),
        top5=float(hits.any(axis=1).mean()) if indices.size >= 5 else None,
        num_samples=len(references),
        num_classes=int(indices.size),
    )
