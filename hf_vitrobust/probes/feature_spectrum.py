# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The Fourier spectrum of feature maps read along its diagonal (Park & Kim 2022, Fig. 2a and 8), the math of the
`feature_fourier` probe (`features.py`): the frequency bins ("nyquist", "park-kim-notebook"), the diagonal's DFT
indices, the channel-mean log amplitude per image, and its per-layer sums over images (`log_amplitude_sums`), which
add up over chunks."""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

from ..models.classifier import Classifier
from .base import DEFAULT_BATCH_SIZE
from .feature_maps import _check_layers, _feature_batches

# The official notebook adds this before the logarithm so that zero amplitudes stay finite.
LOG_AMPLITUDE_EPS = 1e-6
# `frequency_bins` values: ours (through the Nyquist corner) and the official notebook's half diagonal.
NYQUIST_BINS = "nyquist"
NOTEBOOK_BINS = "park-kim-notebook"
FREQUENCY_BINS = (NYQUIST_BINS, NOTEBOOK_BINS)


def check_frequency_bins(frequency_bins: str) -> str:
    """`frequency_bins` if it is one of `FREQUENCY_BINS`, else a ValueError naming them."""
    if frequency_bins not in FREQUENCY_BINS:
        raise ValueError(f"frequency_bins must be one of {FREQUENCY_BINS}, got {frequency_bins!r}.")
    return frequency_bins


def diagonal_indices(
    height: int, width: int, frequency_bins: str = NYQUIST_BINS
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Integer DFT indices (rows, cols) along the spectrum's diagonal from frequency 0 to the highest, and each
    point's frequency in units of pi (along the height axis).

    "nyquist", square maps of side h: indices k = 0 .. h // 2 on both axes, frequency 2k/h, so an even side ends
    at exactly (pi, pi), the checkerboard. Non-square maps: min(h, w) // 2 + 1 points spread evenly on each axis.

    "park-kim-notebook" (`fourier_analysis.ipynb`: `torch.roll` by (h // 2, w // 2), then `diag()[h // 2:]`),
    square maps: k = 0 .. ceil(h / 2) - 1, i.e. up to h / 2 - 1 for even h and h // 2 (as "nyquist") for odd h.
    Non-square maps (which the notebook's square reshape never makes): ceil(min(h, w) / 2) points spread evenly
    up to ceil(h / 2) - 1 and ceil(w / 2) - 1."""
    check_frequency_bins(frequency_bins)
    if frequency_bins == NOTEBOOK_BINS:
        points = (min(height, width) + 1) // 2
        last_row, last_col = (height + 1) // 2 - 1, (width + 1) // 2 - 1
    else:
        points = min(height, width) // 2 + 1
        last_row, last_col = height // 2, width // 2
    steps = torch.arange(points, dtype=torch.float64) / max(points - 1, 1)
    rows = torch.round(steps * last_row).long()
    cols = torch.round(steps * last_col).long()
    return rows, cols, rows.double() * 2 / height


def log_amplitude_diagonal(maps: torch.Tensor, frequency_bins: str = NYQUIST_BINS) -> torch.Tensor:
    """Per image, the channel-mean log amplitude log(|FFT2(map)| + 1e-6) along the spectrum's diagonal (N, points).

    The official code (`fourier_analysis.ipynb`) rolls the spectrum by half its size and takes the half diagonal
    from the centre, i.e. the unshifted spectrum at k = 0 .. ceil(h / 2) - 1 ("park-kim-notebook"). The default
    "nyquist" reads k = 0 .. h // 2: the same values plus, for even sides, the exact (pi, pi) corner (a
    checkerboard's frequency) that the notebook's half diagonal stops one bin short of (see `diagonal_indices`)."""
    height, width = maps.shape[-2:]
    rows, cols, _ = diagonal_indices(height, width, frequency_bins)
    spectrum = torch.fft.fft2(maps.to(torch.float64))
    log_amplitude = torch.log(spectrum.abs() + LOG_AMPLITUDE_EPS)
    return log_amplitude[:, :, rows.to(maps.device), cols.to(maps.device)].mean(dim=1)


def log_amplitude_sums(
    classifier: Classifier,
    pixels: torch.Tensor,
    layers: Sequence[str] | str | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    frequency_bins: str = NYQUIST_BINS,
) -> tuple[dict[str, torch.Tensor], dict[str, list[int]]]:
    """What `feature_fourier` averages: per layer (in network order), the sum over the images of `pixels` of the
    channel-mean log amplitude diagonal (points,) float64, and the layer's map shape (C, h, w).

    Sums over disjoint sets of images add up, so a probe split into chunks can be merged exactly with
    `feature_fourier_result` (given the same `frequency_bins`)."""
    sums, _, shapes, _ = log_amplitude_moments(classifier, pixels, layers, batch_size, frequency_bins)
    return sums, shapes


def log_amplitude_moments(
    classifier: Classifier,
    pixels: torch.Tensor,
    layers: Sequence[str] | str | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    frequency_bins: str = NYQUIST_BINS,
) -> tuple[dict[str, torch.Tensor], dict[str, float], dict[str, list[int]], torch.Tensor]:
    """`log_amplitude_sums` and, per layer, the sum over the images of the square of each image's Δ log amplitude
    (its diagonal's last value minus its first; NaN for a one-point diagonal): (sums, delta square sums, shapes,
    deltas), what the Student-t interval of `delta_log_amplitude` over images needs; `deltas` (images, layers),
    float64 on the CPU, holds every image's Δ log amplitude at every layer, for paired comparisons of models."""
    check_frequency_bins(frequency_bins)
    layers = _check_layers(layers)
    sums: dict[str, torch.Tensor] = {}
    squares: dict[str, torch.Tensor] = {}
    shapes: dict[str, list[int]] = {}
    deltas: dict[str, list[torch.Tensor]] = {}
    for _, maps in _feature_batches(classifier, pixels, layers, batch_size):
        for name, value in maps.items():
            diagonal = log_amplitude_diagonal(value, frequency_bins)
            batch_sum = diagonal.sum(dim=0)
            sums[name] = sums[name] + batch_sum if name in sums else batch_sum
            if diagonal.shape[1] > 1:
                delta = (diagonal[:, -1] - diagonal[:, 0]).double()
                batch_squares = (delta * delta).sum()
            else:
                delta = torch.full((len(diagonal),), math.nan, dtype=torch.float64, device=diagonal.device)
                batch_squares = torch.tensor(math.nan, dtype=torch.float64, device=diagonal.device)
            squares[name] = squares[name] + batch_squares if name in squares else batch_squares
            deltas.setdefault(name, []).append(delta.cpu())
            shapes[name] = list(value.shape[1:])
    per_image = torch.stack([torch.cat(deltas[name]) for name in sums], dim=1) if sums else torch.zeros(0, 0)
    return sums, {name: float(value) for name, value in squares.items()}, shapes, per_image


__all__ = [
    "FREQUENCY_BINS",
    "LOG_AMPLITUDE_EPS",
    "NOTEBOOK_BINS",
    "NYQUIST_BINS",
    "check_frequency_bins",
    "diagonal_indices",
    "log_amplitude_diagonal",
    "log_amplitude_moments",
    "log_amplitude_sums",
]
