# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Out-of-distribution detection scores for ImageNet-O (Hendrycks et al., "Natural Adversarial Examples", CVPR 2021).

The protocol: the anomaly score of an image is the negative maximum softmax probability (Hendrycks & Gimpel, ICLR
2017) over ImageNet-O's 200-class mask, the OOD images are the positive class, and the headline number is the area
under the precision-recall curve (AUPR, computed as scikit-learn's average precision).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from sklearn.metrics import average_precision_score, roc_auc_score, roc_curve

from ._validation import as_float_array, check_class_indices, check_same_length, to_numpy

TPR_LEVEL = 0.95


def ood_scores_from_logits(logits: Any, class_indices: Sequence[int] | np.ndarray) -> np.ndarray:
    """Anomaly scores -max softmax over the classes in `class_indices` (the softmax is taken over that subset).

    `logits`: `(samples, classes)` array or tensor. Higher score = more anomalous.
    """
    logits = as_float_array(to_numpy(logits, "logits"), "logits", ndim=2)
    indices = check_class_indices(class_indices, logits.shape[1])
    subset = logits[:, indices]
    # max_k softmax_k = 1 / sum_j exp(x_j - max x), computed stably.
    return -1.0 / np.exp(subset - subset.max(axis=1, keepdims=True)).sum(axis=1)


@dataclass(frozen=True)
class OODDetectionResult:
    """Fractions in [0, 1]. `fpr_at_95_tpr`: the false positive rate at the first ROC threshold whose true positive
    rate reaches 95 % (scikit-learn `roc_curve`, thresholds from high to low, `drop_intermediate=False`)."""

    aupr: float
    auroc: float
    fpr_at_95_tpr: float
    num_ood: int
    num_in_distribution: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def ood_detection_metrics(
    scores: Sequence[float] | np.ndarray, is_ood: Sequence[bool] | np.ndarray
) -> OODDetectionResult:
    """AUPR (OOD = positive class), AUROC and FPR at 95 % TPR of anomaly `scores` (higher = more anomalous)."""
    scores = as_float_array(scores, "scores", ndim=1)
    labels = to_numpy(is_ood, "is_ood")
    if labels.ndim != 1 or not np.isin(labels, (0, 1)).all():
        raise ValueError("`is_ood` must be one boolean (or 0/1) per sample.")
    labels = labels.astype(bool)
    check_same_length(scores=scores, is_ood=labels)
    num_ood = int(labels.sum())
    if num_ood == 0 or num_ood == len(labels):
        raise ValueError(f"Need both OOD and in-distribution samples; got {num_ood} OOD of {len(labels)}.")
    fpr, tpr, _ = roc_curve(labels, scores, drop_intermediate=False)
    return OODDetectionResult(
        aupr=float(average_precision_score(labels, scores)),
        auroc=float(roc_auc_score(labels, scores)),
        fpr_at_95_tpr=float(fpr[np.searchsorted(tpr, TPR_LEVEL, side="left")]),
        num_ood=num_ood,
        num_in_distribution=len(labels) - num_ood,
    )
