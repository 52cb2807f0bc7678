# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Student-t intervals of means over images, per point of a curve (a PGD loss per step, a feature statistic per
block, a mean confidence per occlusion ratio): bounds clipped to the values' support, and where every image gave
the same value (s = 0) the share bound of `metrics.intervals.unit_share_bound` in place of a zero width."""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.stats import t as student_t

from .intervals import (
    DEFAULT_CONFIDENCE_LEVEL,
    EQUAL_VALUES,
    UNBOUNDED,
    Interval,
    Support,
    check_confidence_level,
    clip_to_support,
    fallback_method,
    not_estimable_note,
    share_fallback_note,
    unit_share_bound,
)

#: A standard deviation at most this share of the mean's size is zero spread: the rounding of a standard deviation
#: computed from a sum of squares (`probes.intervals.sample_std`) of values that are all equal.
ZERO_SPREAD_TOLERANCE = 1e-7


def zero_spread(mean: Any, std: Any, count: Any) -> np.ndarray:
    """Where a mean of n >= 2 values has zero spread (s = 0 to rounding: every value the same), vectorised."""
    m, s = np.asarray(mean, dtype=np.float64), np.asarray(std, dtype=np.float64)
    return (s <= ZERO_SPREAD_TOLERANCE * np.abs(m)) & (np.asarray(count, dtype=np.float64) >= 2)


def mean_bounds(
    mean: Any,
    std: Any,
    count: Any,
    confidence_level: float = DEFAULT_CONFIDENCE_LEVEL,
    support: Support = UNBOUNDED,
    method: str = "wilson",
) -> tuple[np.ndarray, np.ndarray]:
    """Student-t interval bounds of a mean over `count` independent images, vectorised: mean -/+ t * s / sqrt(n),
    with `std` the sample standard deviation (ddof = 1), clipped to the values' `support`. For per-point intervals
    of a probe curve whose values are not proportions (a PGD loss per step, a feature statistic per block); NaN
    where n < 2. Where s = 0 (every image gave the same value) the t-interval's zero width is no evidence: a
    bounded support [a, b] gives the share bound [m - eps (m - a), m + eps (b - m)] (`unit_share_bound` of n by
    `method`), an unbounded one NaN (not estimable)."""
    m = np.asarray(mean, dtype=np.float64)
    s = np.asarray(std, dtype=np.float64)
    n = np.asarray(count, dtype=np.float64)
    level = check_confidence_level(confidence_level)
    with np.errstate(divide="ignore", invalid="ignore"):
        half = student_t.ppf(0.5 + 0.5 * level, np.maximum(n - 1.0, 1.0)) * s / np.sqrt(n)
    half = np.where(n < 2, np.nan, half)
    low, high = m - half, m + half
    constant = zero_spread(m, s, n)
    if np.any(constant):
        if support[0] is None or support[1] is None:
            low, high = np.where(constant, np.nan, low), np.where(constant, np.nan, high)
        else:
            share = unit_share_bound(np.maximum(n, 1.0), level, method)
            low = np.where(constant, m - share * (m - float(support[0])), low)
            high = np.where(constant, m + share * (float(support[1]) - m), high)
    return clip_to_support(low, high, support)


def mean_interval_dicts(
    means: Any,
    stds: Any,
    counts: Any,
    confidence_level: float,
    unit: str = "image",
    support: Support = UNBOUNDED,
) -> list[dict[str, Any]]:
    """One Student-t `Interval` dict per point of a curve of means (`mean_bounds`: s the sample standard deviation,
    ddof 1, of the point's n records, bounds clipped to `support`; low and high None for a point of one record, or
    of zero spread with an unbounded support), e.g. a PGD loss per step. A point of zero spread with a bounded
    support records the Wilson share bound as its method."""
    low, high = mean_bounds(means, stds, counts, confidence_level, support)
    flats = np.broadcast_to(zero_spread(means, stds, counts), np.shape(low))

    def note(flat: bool, bounded: bool) -> str | None:
        if not flat:
            return None
        return share_fallback_note("wilson", EQUAL_VALUES) if bounded else not_estimable_note(EQUAL_VALUES)

    return [
        Interval(
            estimate=float(mean),
            low=float(lo) if np.isfinite(lo) else None,
            high=float(hi) if np.isfinite(hi) else None,
            confidence_level=confidence_level,
            method=fallback_method("student-t", "wilson") if flat and np.isfinite(lo) else "student-t",
            num_samples=int(n),
            unit=unit,
            note=note(bool(flat), bool(np.isfinite(lo))),
        ).to_dict()
        for mean, n, lo, hi, flat in zip(
            np.asarray(means, dtype=np.float64), np.asarray(counts), low, high, flats, strict=True
        )
    ]


__all__ = ["ZERO_SPREAD_TOLERANCE", "mean_bounds", "mean_interval_dicts", "zero_spread"]
