# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The Fourier heat map of Yin et al. (NeurIPS 2019, "A Fourier perspective on model robustness in computer
vision") as drawn by Paul & Chen (AAAI 2022, "Vision Transformers are Robust Learners"): the test
error under a Fourier-basis perturbation at each frequency (i, j) of a centred window, from one record
(frequency i, frequency j, correct) per image and frequency.

Row r of the map holds the vertical frequency i = r - K and column c the horizontal frequency j = c - K
(K = (window - 1) // 2), so the zero frequency is at the centre, low frequencies around it and the highest at the
border, as in Yin et al.'s figures (and github.com/gatheluck/FourierHeatmap, which Paul & Chen used).

The basis image of (-i, -j) is the basis image of (i, j) (a real cosine), so the map is point symmetric about the
origin. `mirror=True` fills a cell without records from its mirror cell: one half of the window suffices, as in
the reference implementation (which computes the half j >= 0 and flips it).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from ._validation import as_float_array, as_index_array, check_same_length


@dataclass(frozen=True)
class FourierHeatmapMetricResult:
    """A Fourier heat map.

    error_map: (window, window) test error (fraction) per frequency cell, row = i + K, column = j + K; None where
        neither the cell nor (with `mirror`) its mirror has records.
    num_samples: (window, window) the number of records behind each cell's error (its mirror's when mirrored).
    mirrored: (window, window) whether the cell's error was copied from its mirror (-i, -j).
    frequencies: the frequencies -K..K of the rows (i) and of the columns (j).
    mean_error: the mean of the defined cells of the map (None when none is).
    """

    error_map: list[list[float | None]]
    num_samples: list[list[int]]
    mirrored: list[list[bool]]
    frequencies: list[int]
    mean_error: float | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def as_array(self) -> np.ndarray:
        """The error map as a float64 (window, window) array, NaN for undefined cells."""
        return np.array(
            [[np.nan if value is None else value for value in row] for row in self.error_map],
            dtype=np.float64,
        )


def _check_window(window: Any, frequency_i: np.ndarray, frequency_j: np.ndarray) -> int:
    widest = int(max(np.abs(frequency_i).max(), np.abs(frequency_j).max()))
    if window is None:
        return 2 * widest + 1
    if isinstance(window, bool) or not isinstance(window, int | np.integer) or window < 1 or window % 2 == 0:
        raise ValueError(f"`window` must be an odd positive int (frequencies -K..K), got {window!r}.")
    if widest > (window - 1) // 2:
        raise ValueError(
            f"Records at frequency {widest} lie outside the window {window} (frequencies up to {(window - 1) // 2})."
        )
    return int(window)


def fourier_error_map(
    frequency_i: Any, frequency_j: Any, correct: Any, *, window: int | None = None, mirror: bool = True
) -> FourierHeatmapMetricResult:
    """Average records (frequency i, frequency j, correct) into a Fourier heat map of test errors.

    frequency_i, frequency_j: the vertical and horizontal frequency (cycles per image, integers, may be negative)
        of the basis the image was perturbed with, one per record.
    correct: whether the top-1 prediction of the perturbed image was the label (booleans or 0 / 1).
    window: the side of the centred map (odd); default: the smallest window holding every record.
    mirror: fill cells without records from their mirror (-i, -j) (the map is point symmetric).
    """
    frequency_i = as_index_array(frequency_i, "frequency_i")
    frequency_j = as_index_array(frequency_j, "frequency_j")
    correct = as_float_array(correct, "correct", ndim=1)
    if not np.all((correct == 0) | (correct == 1)):
        raise ValueError("`correct` must hold booleans (or 0 / 1), one per record.")
    if not check_same_length(frequency_i=frequency_i, frequency_j=frequency_j, correct=correct):
        raise ValueError("No records given.")
    if not isinstance(mirror, bool):
        raise ValueError(f"`mirror` must be a bool, got {mirror!r}.")
    window = _check_window(window, frequency_i, frequency_j)
    half = (window - 1) // 2
    cells = (frequency_i + half) * window + (frequency_j + half)
    counts = np.bincount(cells, minlength=window * window).reshape(window, window)
    wrong = np.bincount(cells, weights=1.0 - correct, minlength=window * window).reshape(window, window)
    with np.errstate(invalid="ignore", divide="ignore"):
        errors = np.where(counts > 0, wrong / np.maximum(counts, 1), np.nan)
    mirrored = np.zeros((window, window), dtype=bool)
    if mirror:
        # Cell (i, j) sits at [i + K, j + K]; its mirror (-i, -j) at [K - i, K - j]: both axes reversed.
        mirrored = (counts == 0) & (counts[::-1, ::-1] > 0)
        errors = np.where(mirrored, errors[::-1, ::-1], errors)
        counts = np.where(mirrored, counts[::-1, ::-1], counts)
    defined = np.isfinite(errors)
    return FourierHeatmapMetricResult(
        error_map=[[float(v) if np.isfinite(v) else None for v in row] for row in errors],
        num_samples=counts.astype(int).tolist(),
        mirrored=mirrored.tolist(),
        frequencies=list(range(-half, half + 1)),
        mean_error=float(errors[defined].mean()) if defined.any() else None,
    )


__all__ = ["FourierHeatmapMetricResult", "fourier_error_map"]
