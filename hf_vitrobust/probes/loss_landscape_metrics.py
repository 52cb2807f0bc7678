# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The metrics Park & Kim record at each point of their loss landscape, kept here for its origin (x = y = 0), where
their published numbers compare with ours point by point.

At every grid point their notebook (how-do-vits-work losslandscape.ipynb -> `ops/loss_landscapes.py`
`get_loss_landscape` -> `ops/tests.py` `test`, `ops/meters.py`, `ops/norm.py`) records, from p = softmax(logits) in
float32, the confidence c = max p, the prediction argmax p and the label y (argmax of the Mixup/CutMix soft target):

- top-5: y among the 5 largest p, a mean over images; Brier: sum_k (1[k = y] - p_k)^2, a mean over images;
- for the cutoffs 0.0 and 0.9 a "certain" confusion matrix (cutoff < c <= 1) and an "uncertain" one
  (0 < c <= cutoff), summed over batches: the accuracy of the certain images, the mean IoU of the certain matrix (per
  class TP / (row + column - TP), 0 where that is 0, averaged over the classes with a row), the share of the images
  that are certain, certain / (certain + uncertain + 1e-7), and the share of the errors that are uncertain,
  uncertain errors / (all errors + 1e-7);
- over 10 equal-width bins (the edges of `np.linspace(0, 1, 11)`): the count and the accuracy of the images with
  start < c <= end (a confusion matrix per bin), and the sum of the confidences with start <= c < end (their
  `conf_acc_bin`: the other side of each edge, so a confidence of exactly 1.0 is counted but adds no confidence);
  the bin's confidence is that sum / (count + 1e-7), its weight count / (all + 1e-7); ECE = sum of weight x |accuracy
  - confidence|, signed ECE = sum of weight x (confidence - accuracy) (negative: underconfident);
- the sum of the parameter tensors' L1 norms (`ops/norm.py` `l1`).

Their ECE is a variant of `metrics.calibration`'s (Guo et al.'s bins, which sum the confidences of the same images they
count, at edges k / M): it differs where a confidence lies on an edge (1.0 from a saturated float32 softmax) and by
the +1e-7 terms, so it is transcribed here rather than reused.

`origin_batch_statistics` keeps, per mini-batch, the counts and sums these need; batches merge by summing
(`origin_totals`), so a value never depends on how batches are grouped into chunks or processes. Their augmentation
is random, so each value gets a sampling interval: a proportion of images (top-5, the confident share, the accuracy
of the confident images, the unconfident share of the errors) its Wilson interval from its counts, the rest (ECE,
signed ECE, Brier, mean IoU) the delete-one-batch jackknife standard error over the mini-batches (Mixup mixes the
images of a batch, so a batch is the unit of independent draws).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from .spec import ProbeValue

#: Their confidence cutoffs (`test(cutoffs=(0.0, 0.9))`): index 0 holds every image, index 1 the confident ones.
CUTOFFS = (0.0, 0.9)
#: Their calibration bin edges, exactly `np.linspace(0.0, 1.0, 11)` (0.30000000000000004, ...).
BIN_EDGES = tuple(np.linspace(0.0, 1.0, 11).tolist())
TOP_K = 5
#: The published origin row of the sum of the parameter L1 norms (the only one no image changes).
L1_METRIC = "sum of parameter L1 norms"
_CONFIDENT = CUTOFFS.index(0.9)
_EPS = 1e-7  # their +1e-7 in the denominators of frequency, unconfidence and the bins


def origin_batch_statistics(logits: torch.Tensor, labels: torch.Tensor) -> dict[str, torch.Tensor]:
    """The counts and sums of one mini-batch that their origin metrics need, each with a leading batch axis of 1.

    logits: (n, C); labels: (n,) int64 in [0, C) (the argmax of a soft target). Counts are int64, sums float64.
    """
    if logits.ndim != 2 or labels.shape != logits.shape[:1]:
        raise ValueError(
            f"logits must be (n, C) and labels (n,), got {tuple(logits.shape)} and {tuple(labels.shape)}"
        )
    probabilities = torch.softmax(logits.float(), dim=-1)
    num_classes = probabilities.shape[-1]
    confidence, predicted = probabilities.max(dim=-1)
    confidence = confidence.double()
    hit = predicted == labels
    cutoffs = torch.tensor(CUTOFFS, dtype=torch.float64, device=logits.device)[:, None]
    certain = (confidence > cutoffs) & (confidence <= 1.0)  # (K, n): their cm(filter_min=cutoff)
    uncertain = (confidence > 0.0) & (confidence <= cutoffs)  # their cm(filter_max=cutoff)
    true_class = F.one_hot(labels, num_classes).bool()
    predicted_class = F.one_hot(predicted, num_classes).bool()
    edges = torch.tensor(BIN_EDGES, dtype=torch.float64, device=logits.device)
    start, end = edges[:-1, None], edges[1:, None]
    in_bin = (confidence > start) & (confidence <= end)  # (M, n)
    in_confidence_bin = (confidence >= start) & (confidence < end)
    top = probabilities.topk(min(TOP_K, num_classes), dim=-1).indices
    statistics = {
        "images": torch.tensor(len(labels)),
        "top5_hits": (top == labels[:, None]).any(-1).sum(),
        "brier_sum": (true_class.double() - probabilities.double()).pow(2).sum(),
        "certain_true": (certain[:, :, None] & true_class).sum(1),
        "certain_predicted": (certain[:, :, None] & predicted_class).sum(1),
        "certain_hits": (certain[:, :, None] & (true_class & hit[:, None])).sum(1),
        "uncertain_count": uncertain.sum(1),
        "uncertain_hits": (uncertain & hit).sum(1),
        "bin_count": in_bin.sum(1),
        "bin_hits": (in_bin & hit).sum(1),
        "bin_confidence_sum": (in_confidence_bin * confidence).sum(1),
    }
    return {name: value[None].cpu() for name, value in statistics.items()}


def concatenate_batches(parts: Sequence[Mapping[str, Any]]) -> dict[str, torch.Tensor]:
    """The per-batch statistics of several parts (lists or tensors, each with a leading batch axis), in order."""
    if not parts:
        raise ValueError("No per-batch statistics to concatenate.")
    keys = list(parts[0])
    return {key: torch.cat([torch.as_tensor(part[key]) for part in parts]) for key in keys}


def origin_totals(per_batch: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    """The statistics summed over the batch axis (float64)."""
    return {key: torch.as_tensor(value, dtype=torch.float64).sum(0) for key, value in per_batch.items()}


def _ratio(numerator: torch.Tensor, denominator: torch.Tensor) -> torch.Tensor:
    """numerator / denominator, 0 where the denominator is 0 (their `gacc`, `ious`)."""
    safe = torch.where(denominator != 0, denominator, torch.ones_like(denominator))
    return torch.where(denominator != 0, numerator / safe, torch.zeros_like(numerator))


def _accuracy(t: Mapping[str, torch.Tensor], k: int) -> torch.Tensor:
    return _ratio(t["certain_hits"][..., k, :].sum(-1), t["certain_true"][..., k, :].sum(-1))


def _errors(t: Mapping[str, torch.Tensor], k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(errors among the certain images, errors among the uncertain ones) at cutoff k."""
    certain = t["certain_true"][..., k, :].sum(-1) - t["certain_hits"][..., k, :].sum(-1)
    return certain, t["uncertain_count"][..., k] - t["uncertain_hits"][..., k]


def _unconfidence(t: Mapping[str, torch.Tensor], k: int) -> torch.Tensor:
    certain, uncertain = _errors(t, k)
    return uncertain / (certain + uncertain + _EPS)


def _frequency(t: Mapping[str, torch.Tensor], k: int) -> torch.Tensor:
    certain = t["certain_true"][..., k, :].sum(-1)
    return certain / (certain + t["uncertain_count"][..., k] + _EPS)


def _mean_iou(t: Mapping[str, torch.Tensor], k: int) -> torch.Tensor:
    rows, columns, hits = (
        t[name][..., k, :] for name in ("certain_true", "certain_predicted", "certain_hits")
    )
    iou = _ratio(hits, rows + columns - hits)
    present = (rows > 0).double()
    return _ratio((iou * present).sum(-1), present.sum(-1))


def _bins(t: Mapping[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(weight, accuracy, confidence) of each bin."""
    count = t["bin_count"]
    weight = count / (count.sum(-1, keepdim=True) + _EPS)
    return weight, _ratio(t["bin_hits"], count), t["bin_confidence_sum"] / (count + _EPS)


def _ece(t: Mapping[str, torch.Tensor]) -> torch.Tensor:
    weight, accuracy, confidence = _bins(t)
    return ((accuracy - confidence).abs() * weight).sum(-1)


def _signed_ece(t: Mapping[str, torch.Tensor]) -> torch.Tensor:
    weight, accuracy, confidence = _bins(t)
    return ((confidence - accuracy) * weight).sum(-1)


Totals = Mapping[str, torch.Tensor]


@dataclass(frozen=True)
class OriginMetric:
    """One published origin metric: its value from summed statistics (any leading axes) times `scale` (100 for a
    percentage), and, for a proportion of images, its (successes, trials) counts (the Wilson interval)."""

    value: Callable[[Totals], torch.Tensor]
    scale: float = 100.0
    counts: Callable[[Totals], tuple[torch.Tensor, torch.Tensor]] | None = None


#: The published origin metrics (as `published.csv` names them) that the statistics give, besides the L1 norm sum.
ORIGIN_METRICS: dict[str, OriginMetric] = {
    "top-5 %": OriginMetric(
        lambda t: _ratio(t["top5_hits"], t["images"]), counts=lambda t: (t["top5_hits"], t["images"])
    ),
    "ECE %": OriginMetric(_ece),
    "signed ECE %": OriginMetric(_signed_ece),
    "Brier": OriginMetric(lambda t: t["brier_sum"] / t["images"], scale=1.0),
    "top-1 % (confidence > 0.9)": OriginMetric(
        lambda t: _accuracy(t, _CONFIDENT),
        counts=lambda t: (
            t["certain_hits"][..., _CONFIDENT, :].sum(-1),
            t["certain_true"][..., _CONFIDENT, :].sum(-1),
        ),
    ),
    "share of images with confidence > 0.9 %": OriginMetric(
        lambda t: _frequency(t, _CONFIDENT),
        counts=lambda t: (t["certain_true"][..., _CONFIDENT, :].sum(-1), t["images"]),
    ),
    "share of errors with confidence <= 0.9 %": OriginMetric(
        lambda t: _unconfidence(t, _CONFIDENT),
        counts=lambda t: (_errors(t, _CONFIDENT)[1], sum(_errors(t, _CONFIDENT))),
    ),
    "mean IoU %": OriginMetric(lambda t: _mean_iou(t, 0)),
    "mean IoU % (confidence > 0.9)": OriginMetric(lambda t: _mean_iou(t, _CONFIDENT)),
}


def origin_metrics(per_batch: Mapping[str, Any]) -> dict[str, float]:
    """Each of `ORIGIN_METRICS` (in its published unit) from the per-batch statistics of all batches."""
    totals = origin_totals(per_batch)
    return {name: float(metric.value(totals)) * metric.scale for name, metric in ORIGIN_METRICS.items()}


def jackknife_standard_errors(per_batch: Mapping[str, Any]) -> dict[str, float] | None:
    """Each metric's delete-one-batch jackknife standard error (in its published unit): sqrt((B - 1) / B x
    sum_b (theta_(b) - mean)^2), theta_(b) the metric without batch b. None with fewer than two batches."""
    stacked = {key: torch.as_tensor(value, dtype=torch.float64) for key, value in per_batch.items()}
    batches = len(stacked["images"])
    if batches < 2:
        return None
    left_out = {key: value.sum(0, keepdim=True) - value for key, value in stacked.items()}
    out = {}
    for name, metric in ORIGIN_METRICS.items():
        theta = metric.value(left_out) * metric.scale
        out[name] = float(((batches - 1) / batches * (theta - theta.mean()).pow(2).sum()).sqrt())
    return out


def unit_standard_error(squares: Sequence[Any], nll: torch.Tensor, units: int) -> torch.Tensor | None:
    """Per grid point of a loss landscape, the standard error of the mean NLL `nll` over its `units` averaging units
    (images, or Park & Kim's batch means: the spread their random augmentation and images give): sqrt(s^2 / n), the
    sample variance s^2 from `squares`, each chunk's per-point sum of its units' squared NLL, so any split into chunks
    or processes gives the same. The L2 term is constant at a point and adds no spread. None with fewer than two
    units, or a chunk that recorded no squares."""
    if units < 2 or any(part is None for part in squares):
        return None
    square = sum(torch.as_tensor(part, dtype=torch.float64) for part in squares)
    variance = (square - units * nll.pow(2)).clamp(min=0.0) / (units - 1)
    return (variance / units).sqrt()


def merge_origin(parts: Sequence[Mapping[str, Any] | None]) -> dict[str, Any] | None:
    """The merged origin of a loss landscape's chunks: the number of batches, the summed statistics and each
    metric's jackknife standard error over the batches; None when a chunk recorded no origin."""
    if not parts or any(part is None for part in parts):
        return None
    per_batch = concatenate_batches([part for part in parts if part is not None])
    return {
        "batches": len(per_batch["images"]),
        "totals": origin_totals(per_batch),
        "standard_errors": jackknife_standard_errors(per_batch),
    }


def origin_value(probe: Mapping[str, Any], metric: str) -> ProbeValue:
    """A published origin metric from a merged loss landscape (`merge_origin`'s "origin" and the "origin_l1"
    sum): with its Wilson counts for a proportion, else its jackknife standard error (0 for the L1 norm sum, which
    no image changes). LookupError (with the reason) when the probe did not record it."""
    images = None if probe.get("num_images") is None else int(probe["num_images"])
    if metric == L1_METRIC:
        if probe.get("origin_l1") is None:
            raise LookupError(f"this loss landscape recorded no {metric!r} (its grid has no origin)")
        return ProbeValue(float(probe["origin_l1"]), images, standard_error=0.0)
    origin = probe.get("origin")
    if metric not in ORIGIN_METRICS or not origin:
        raise LookupError(f"this loss landscape recorded no {metric!r} at its origin")
    spec = ORIGIN_METRICS[metric]
    totals = {key: torch.as_tensor(value, dtype=torch.float64) for key, value in origin["totals"].items()}
    value = float(spec.value(totals)) * spec.scale
    if spec.counts is not None:
        successes, trials = (round(float(count)) for count in spec.counts(totals))
        if trials == 0:
            raise LookupError(f"no image of this run's origin counts towards {metric!r}")
        return ProbeValue(value, images, successes, trials=trials)
    errors = origin.get("standard_errors") or {}
    return ProbeValue(value, images, standard_error=errors.get(metric))


__all__ = [
    "BIN_EDGES",
    "CUTOFFS",
    "L1_METRIC",
    "ORIGIN_METRICS",
    "OriginMetric",
    "concatenate_batches",
    "jackknife_standard_errors",
    "merge_origin",
    "origin_batch_statistics",
    "origin_metrics",
    "origin_totals",
    "origin_value",
    "unit_standard_error",
]
