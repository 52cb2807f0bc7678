# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Calibration of a classifier: expected and maximum calibration error (Naeini et al., AAAI 2015; Guo et al., ICML
2017, Eqs. 3 and 5), negative log-likelihood and the multi-class Brier score (Brier, 1950).

Confidence is the top predicted probability. Bins are `num_bins` equal-width intervals ((m-1)/M, m/M] (a confidence
of exactly 0 joins the first bin). ECE = sum_m |B_m|/n |acc(B_m) - conf(B_m)|; MCE = max over non-empty bins of
|acc(B_m) - conf(B_m)|. Brier = mean over samples of sum_k (p_k - 1[k = y])^2, in [0, 2] (Brier's original
multi-class form, not divided by the number of classes).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from ._validation import as_float_array, as_index_array, check_same_length

DEFAULT_NUM_BINS = 15
_PROBABILITY_TOLERANCE = 1e-3


@dataclass(frozen=True)
class CalibrationResult:
    """ECE and MCE are fractions in [0, 1]; NLL in nats."""

    ece: float
    max_calibration_error: float
    nll: float
    brier: float
    accuracy: float
    num_samples: int
    num_bins: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def softmax(logits: np.ndarray) -> np.ndarray:
    shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
    return shifted / shifted.sum(axis=1, keepdims=True)


def calibration_bins(confidence: Any, num_bins: int = DEFAULT_NUM_BINS) -> np.ndarray:
    """The 0-based bin of each confidence: m - 1 for edge(m-1) < c <= edge(m), with edge(k) = k/M as a float (a
    confidence of 0 joins the first bin), as the reference ECE (gpleiss/temperature_scaling, Guo et al. 2017)
    compares with its bin boundaries. A confidence equal to an edge belongs to the bin below it: the product c * M
    would round ((7/25) * 25 is 7.000000000000001) and put the edge 7/25 one bin too high."""
    confidence = np.asarray(confidence, dtype=np.float64)
    edges = np.arange(num_bins + 1) / num_bins
    return np.clip(np.searchsorted(edges, confidence, side="left") - 1, 0, num_bins - 1)


def calibration_metrics(
    scores: Any,
    references: Sequence[int] | np.ndarray,
    *,
    from_logits: bool = False,
    num_bins: int = DEFAULT_NUM_BINS,
) -> CalibrationResult:
    """ECE, MCE, NLL and Brier score of `(samples, classes)` probabilities (or logits with `from_logits=True`)."""
    if int(num_bins) != num_bins or num_bins < 1:
        raise ValueError(f"`num_bins` must be a positive integer; got {num_bins}.")
    scores = as_float_array(scores, "scores", ndim=2)
    references = as_index_array(references, "references")
    n = check_same_length(scores=scores, references=references)
    if n == 0:
        raise ValueError("No samples given.")
    if np.any(references < 0) or np.any(references >= scores.shape[1]):
        raise ValueError(f"References must lie in [0, {scores.shape[1]}).")
    if from_logits:
        probabilities = softmax(scores)
    else:
        probabilities = scores
        if np.any(scores < 0) or np.any(np.abs(scores.sum(axis=1) - 1.0) > _PROBABILITY_TOLERANCE):
            raise ValueError(
                "`scores` rows must be probabilities summing to 1; pass from_logits=True for logits."
            )

    confidence = probabilities.max(axis=1)
    correct = probabilities.argmax(axis=1) == references
    bins = calibration_bins(confidence, num_bins)
    counts = np.bincount(bins, minlength=num_bins)
    gap = np.abs(
        np.bincount(bins, weights=correct, minlength=num_bins)
        - np.bincount(bins, weights=confidence, minlength=num_bins)
    )
    filled = counts > 0
    if from_logits:  # log-softmax, exact for very confident logits
        shifted = scores - scores.max(axis=1, keepdims=True)
        log_true = shifted[np.arange(n), references] - np.log(np.exp(shifted).sum(axis=1))
    else:
        log_true = np.log(np.clip(probabilities[np.arange(n), references], np.finfo(np.float64).tiny, None))
    one_hot = np.zeros_like(probabilities)
    one_hot[np.arange(n), references] = 1.0
    return CalibrationResult(
        ece=float(gap.sum() / n),
        max_calibration_error=float((gap[filled] / counts[filled]).max()),
        nll=float(-log_true.mean()),
        brier=float(((probabilities - one_hot) ** 2).sum(axis=1).mean()),
        accuracy=float(correct.mean()),
        num_samples=n,
        num_bins=int(num_bins),
    )
