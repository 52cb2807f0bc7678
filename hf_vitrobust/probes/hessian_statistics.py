# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""What the Hessian probe's record says per mini-batch, its interval over batches, and Park & Kim's two claims about
it as findings (their Fig. 1 right and Fig. 4, "Hessian max eigenvalue spectra"):

- magnitude: "ViT's Hessian eigenvalues are smaller in magnitude than ResNet's" -- per batch, the largest |eigenvalue|
  (`batch_top_magnitudes`), ViT lower;
- negative share: "ViT has negative eigenvalues" -- per batch, the share of its top-k eigenvalues by magnitude that
  are negative (`batch_negative_shares`: Park & Kim's spectrum is of each batch's top-k by magnitude, issue #12 of
  xxxnell/how-do-vits-work), ViT higher.

Park & Kim add that large data suppresses the negative eigenvalues. That is a comparison of one architecture trained
on two data sizes, and a run's pairs are a ViT against a CNN (suite `model_pairs`, `reproduce`), so it is not
registered: no pairing of a run can hold it.

The unit of both is the mini-batch. A batch's eigenvalues come from one Hessian and are not independent of each
other, while the batches are drawn apart (`data.balanced_batches`), so the share's interval is a percentile
bootstrap over batches (each batch's top-k resampled together: a cluster bootstrap); a Wilson interval on the
pooled eigenvalue counts would treat the k eigenvalues of a batch as k independent draws and be too narrow. Two
models' batches pair by their key, the chunk seed of the batch's sample ids (`spec.chunk_seed`), which is the same
for two models given the same images.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..metrics.estimators import derived_seed, mean_estimator
from ..metrics.intervals import DEFAULT_NUM_RESAMPLES, NON_NEGATIVE, UNIT_RANGE, Support
from .display import as_float_array
from .spec import ProbeFinding, ProtocolPart

BATCH_UNIT = "mini-batch"


def magnitude_eigenvalues(probe: Mapping[str, Any]) -> np.ndarray:
    """(batches, top_k) float64: each batch's top_k eigenvalues by magnitude, with their signs, in descending
    magnitude (NaN padding last). Method "pyhessian" computes exactly these; "lanczos" and "power" give both
    algebraic ends, whose union holds them (a value both ends found is counted once)."""
    top = as_float_array(probe.get("eigenvalues"))
    if top.ndim != 2 or not top.size:
        raise LookupError("the record holds no per-batch eigenvalues")
    if probe.get("method") == "pyhessian":
        candidates = top
    else:
        bottom = as_float_array(probe.get("bottom_eigenvalues"))
        if bottom.shape != top.shape:
            raise LookupError("the record's largest and smallest eigenvalues differ in shape")
        candidates = np.concatenate([top, bottom], axis=1)
    rows = []
    for row in candidates:
        values = np.unique(row[np.isfinite(row)])
        values = values[np.argsort(-np.abs(values), kind="stable")][: top.shape[1]]
        rows.append(np.concatenate([values, np.full(top.shape[1] - len(values), np.nan)]))
    return np.stack(rows)


def batch_top_magnitudes(probe: Mapping[str, Any]) -> np.ndarray:
    """(batches,) each batch's largest eigenvalue magnitude (NaN for a batch without a finite eigenvalue)."""
    values = np.abs(magnitude_eigenvalues(probe))
    out = np.full(len(values), np.nan)
    found = np.isfinite(values).any(axis=1)
    out[found] = np.nanmax(values[found], axis=1)
    return out


def batch_negative_shares(probe: Mapping[str, Any]) -> np.ndarray:
    """(batches,) the share of each batch's top-k eigenvalues by magnitude that are negative (NaN without any)."""
    values = magnitude_eigenvalues(probe)
    counted = np.isfinite(values).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counted > 0, (values < 0).sum(axis=1) / np.maximum(counted, 1), np.nan)


def batch_keys(probe: Mapping[str, Any]) -> list[str]:
    """Each batch's key: its chunk seed (the same for two models given the same images); LookupError for a record
    that kept none (a direct call of `hessian_spectrum`, not a run)."""
    seeds = probe.get("batch_seeds")
    sizes = probe.get("batch_sizes") or []
    if not seeds or len(seeds) != len(sizes):
        raise LookupError("the record keeps no batch keys (batch_seeds), so its batches cannot be paired")
    return [str(seed) for seed in seeds]


def batch_interval(
    values: Sequence[float] | np.ndarray,
    confidence_level: float,
    *,
    support: Support = UNIT_RANGE,
    name: str = "negative_share",
    num_resamples: int = DEFAULT_NUM_RESAMPLES,
) -> dict[str, Any] | None:
    """{"estimate", "low", "high", "method", "num_units"}: the mean over batches of one per-batch value with its
    percentile bootstrap interval over the batches (seeded by `name`; the estimator's fallback where every batch is
    alike), or None without a finite value."""
    values = np.asarray(values, dtype=np.float64)
    if not np.isfinite(values).any():
        return None
    estimator = mean_estimator(values, unit=BATCH_UNIT, value_range=support)
    interval = estimator.interval(
        confidence_level, num_resamples=num_resamples, seed=derived_seed(0, "hessian", name)
    )
    return {
        "estimate": interval.estimate,
        "low": interval.low,
        "high": interval.high,
        "method": interval.method,
        "num_units": int(np.isfinite(values).sum()),
    }


def hessian_intervals(probe: Mapping[str, Any], confidence_level: float) -> dict[str, Any]:
    """The probe's "intervals": the negative share and the mean top magnitude over batches, each bootstrapped over
    the batches (unit "mini-batch"); {} for a record without per-batch eigenvalues."""
    try:
        curves = {
            "negative_share": batch_interval(batch_negative_shares(probe), confidence_level),
            "top_magnitude": batch_interval(
                batch_top_magnitudes(probe), confidence_level, support=NON_NEGATIVE, name="top_magnitude"
            ),
        }
    except LookupError:
        return {}
    present = {key: curve for key, curve in curves.items() if curve is not None}
    if not present:
        return {}
    first = next(iter(present.values()))
    return {
        "confidence_level": float(confidence_level),
        "method": first["method"],
        "unit": BATCH_UNIT,
        **present,
    }


def _magnitudes(probe: Mapping[str, Any]) -> tuple[list[str], np.ndarray]:
    return batch_keys(probe), batch_top_magnitudes(probe)


def _negative_shares(probe: Mapping[str, Any]) -> tuple[list[str], np.ndarray]:
    return batch_keys(probe), batch_negative_shares(probe)


#: What both models' records must share: how the eigenvalues were computed and which batches they came from.
_SHARED_MEASUREMENT = (
    ProtocolPart("preprocessing"),
    ProtocolPart("method"),
    ProtocolPart("regularizer"),
    ProtocolPart("weight_decay"),
    ProtocolPart("augmentation"),
    ProtocolPart("batches"),
)

HESSIAN_FINDINGS = (
    ProbeFinding(
        "hessian-magnitude",
        "park-kim",
        "ViT's Hessian eigenvalues are smaller in magnitude than ResNet's",
        "Park & Kim, Fig. 1 (right) and Fig. 4 (Hessian max eigenvalue spectra)",
        "largest Hessian eigenvalue magnitude per training mini-batch, mean over the batches both models saw",
        -1,
        _magnitudes,
        protocol=_SHARED_MEASUREMENT,
    ),
    ProbeFinding(
        "hessian-negative-share",
        "park-kim",
        "ViT has negative Hessian eigenvalues (a non-convex loss), ResNet fewer",
        "Park & Kim, Fig. 1 (right) and Fig. 4 (the negative side of the spectra)",
        "share (%) of each mini-batch's top-k Hessian eigenvalues by magnitude that are negative, mean over batches",
        +1,
        _negative_shares,
        scale=100.0,
        protocol=_SHARED_MEASUREMENT,
    ),
)


__all__ = [
    "BATCH_UNIT",
    "HESSIAN_FINDINGS",
    "batch_interval",
    "batch_keys",
    "batch_negative_shares",
    "batch_top_magnitudes",
    "hessian_intervals",
    "magnitude_eigenvalues",
]
