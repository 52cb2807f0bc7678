# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""How far a headline may lie from its estimate when every resampling unit was alike, so that the bootstrap saw no
spread (8 images, all wrong on every ImageNet-C cell: every replicate of the mean top-1 is 0).

A zero-width bootstrap interval is no evidence of certainty. What n units seen all alike do bound is the share eps of
the population's units that differ from them: the upper bound of a proportion at 0 of n
(`intervals.unit_share_bound`: Wilson z^2 / (n + z^2) or Clopper-Pearson 1 - (alpha/2)^(1/n)). A headline that is
a mean over units of a value X in [a, b], seen equal to c on every unit, then lies in
[c - eps (c - a), c + eps (b - c)], since E X - c = E[(X - c) 1{X != c}] lies between -(c - a) and (b - c) times
P(X != c) <= eps; at c = a = 0 that is the proportion's own interval at 0 of n. Each `SpreadBound` here returns that
(low, high) offset from the estimate, in the statistic's units:

- `mean_spread`: a mean of one value per unit in a known range (accuracies of independent samples: [0, 1]);
- `cell_spread`: a statistic affine in the rates of its cells (ImageNet-C's mean top-1, mCE, relative mCE, the
  mFR, the BG-gap): each cell's rate moves toward either end of the value range by its own eps (n: the units that
  hold the cell), each in the direction that lowers (raises) the statistic, so derived quantities carry the bound
  through their own formula instead of a zero width;
- `calibration_spread`: the ECE, which is not affine, by the triangle inequality: a share eps of images changes it
  by at most eps (1 + c) downwards and eps (1 - c) upwards.

A statistic none of these fits (the AUPR) has no `SpreadBound`: its interval is then not estimable.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence

import numpy as np

from .intervals import Support

#: eps for each count of units (`intervals.unit_share_bound` at the interval's level and method), vectorised.
ShareOf = Callable[[np.ndarray], np.ndarray]
#: (unit data, share_of) -> (low, high) offsets from the estimate in the statistic's units, or None where none holds.
SpreadBound = Callable[[Mapping[str, np.ndarray], ShareOf], "tuple[float, float] | None"]
#: How closely a cell statistic must equal its affine reconstruction to be treated as affine.
AFFINE_TOLERANCE = 1e-9


def bounded(value_range: Support) -> bool:
    """Whether a value range has two ends, the low one below the high one."""
    low, high = value_range
    return low is not None and high is not None and float(low) < float(high)


def mean_spread(key: str, value_range: Support) -> SpreadBound | None:
    """The `SpreadBound` of the mean of `data[key]`, one value per unit in `value_range`; None where the range is
    unbounded on a side (a share of units could then move the mean any distance)."""
    if not bounded(value_range):
        return None
    low, high = float(value_range[0]), float(value_range[1])

    def spread(data: Mapping[str, np.ndarray], share_of: ShareOf) -> tuple[float, float] | None:
        values = np.asarray(data[key], dtype=np.float64)
        if not values.size:
            return None
        center = float(values.mean())
        share = float(share_of(np.asarray(float(values.size))))
        return share * (low - center), share * (high - center)

    return spread


def cell_spread(
    combine: Callable[[np.ndarray, list[Hashable]], np.ndarray],
    cells: Sequence[Hashable],
    value_range: Support,
) -> SpreadBound | None:
    """The `SpreadBound` of `combine` (cell rates (b, cells) -> (b,)) over the rates sums / counts of a cell table
    (`data["sums"]`, `data["counts"]`, (units, cells)), each unit's value in a cell lying in `value_range`. The
    statistic must be affine in the rates (checked: otherwise None); its coefficients come from evaluating it at
    the range's low end with one cell raised to the high end, so no formula is repeated here."""
    if not bounded(value_range):
        return None
    low, high = float(value_range[0]), float(value_range[1])

    def spread(data: Mapping[str, np.ndarray], share_of: ShareOf) -> tuple[float, float] | None:
        present = np.flatnonzero(data["counts"].sum(axis=0) > 0)
        if not present.size:
            return None
        counts = data["counts"][:, present]
        rates = data["sums"][:, present].sum(axis=0) / counts.sum(axis=0)
        k = present.size
        points = np.full((k + 2, k), low)
        points[np.arange(k), np.arange(k)] = high  # rows 0..k-1: one cell at the high end; row k: all low
        points[k + 1] = rates
        values = np.asarray(combine(points, [cells[i] for i in present]), dtype=np.float64)
        base = values[k]
        slopes = (values[:k] - base) / (high - low)
        affine = base + slopes @ (rates - low)
        if not np.all(np.isfinite(values)) or abs(values[k + 1] - affine) > AFFINE_TOLERANCE * max(
            1.0, abs(base)
        ):
            return None
        share = share_of((counts > 0).sum(axis=0).astype(np.float64))
        down, up = slopes * share * (low - rates), slopes * share * (high - rates)
        return float(np.minimum(down, up).sum()), float(np.maximum(down, up).sum())

    return spread


def calibration_spread(data: Mapping[str, np.ndarray], share_of: ShareOf) -> tuple[float, float] | None:
    """The `SpreadBound` of the ECE (a fraction; `estimators.ece_estimator`'s data: "one_hot" bins, "difference"
    correct - confidence per image): a share eps of other images moves each bin's gap by eps times theirs, whose
    absolute values sum to at most 1, so the ECE c becomes at least (1 - eps) c - eps and at most (1 - eps) c + eps
    (the caller clips at 0)."""
    difference = np.asarray(data["difference"], dtype=np.float64)
    if not difference.size:
        return None
    center = float(np.abs(difference @ data["one_hot"]).sum() / difference.size)
    share = float(share_of(np.asarray(float(difference.size))))
    return -share * (1.0 + center), share * (1.0 - center)


__all__ = [
    "AFFINE_TOLERANCE",
    "ShareOf",
    "SpreadBound",
    "bounded",
    "calibration_spread",
    "cell_spread",
    "mean_spread",
]
