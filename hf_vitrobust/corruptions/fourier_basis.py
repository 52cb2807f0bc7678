# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Fourier basis images and the Fourier-basis perturbation of Yin et al. (NeurIPS 2019, "A Fourier perspective on
model robustness in computer vision", the perturbation behind their Fourier heat maps), which
Paul & Chen (AAAI 2022, "Vision Transformers are Robust Learners", Fourier heat maps) use to compare ViTs and CNNs.

For a frequency (i, j) (cycles per image along the height and the width) the basis image is the real cosine

    U_ij[m, n] = cos(2 pi (i m / H + j n / W)) / ||cos(...)||_2,

a real (H, W) image of unit L2 norm whose 2D DFT is non-zero exactly at (i, j) and (-i, -j) (one bin when those
coincide: the constant image, Nyquist frequencies). The perturbed image is

    X~ = clip(X + eps * r * U_ij, 0, 1),

with r in {-1, +1} drawn independently for each of the three colour channels (Yin et al.'s "r", uniform on
{-1, 1}), so each channel's perturbation has L2 norm eps.

Which scale eps lives on: pixels in [0, 1] before the model's mean/std normalisation. That is where the reference
implementation used by Paul & Chen (github.com/gatheluck/FourierHeatmap, `AddFourierNoise` runs after `ToTensor`
and before `Normalize`, then clamps to [0, 1]) adds the noise with the published norms eps = 4 for 32x32 CIFAR-10
and eps = 15.7 for 224x224 ImageNet (the values its README gives for the paper). Our `Classifier` takes exactly
those pixels, so these numbers reproduce the published protocol unchanged.

The cosine phase is the one of that reference (`irfftn` of a one-hot half spectrum). The authors' own code
(google-research/frequency_analysis) uses the phase-shifted (cos - sin) / sqrt(2) for both (i, j) and (-i, -j):
the same frequency content, the pattern shifted by an eighth of its period. Because cos is even, U_ij and
U_{-i,-j} are the *same* image: the heat map is symmetric about the origin and only one half of it needs a model
(Yin et al.'s heat maps are point symmetric for this reason). The phase is computed from the integer
`(i m W + j n H) mod (H W)` folded to its smaller representative, so U_ij and U_{-i,-j} agree bit for bit.

Random signs come from the counter-based stream "fourier_heatmap/sign" keyed by (seed, sample id), with the element
counter taken from the *canonical* frequency of the pair {(i, j), (-i, -j)} and the channel: the sign of an image
never depends on the batch size, the batch order or the window, and a frequency and its mirror get the same signs,
so perturbing at (-i, -j) gives the very image perturbed at (i, j).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

from .randomness import uniform_at

STREAM = "fourier_heatmap/sign"
# The L2 norms of the perturbation used by Yin et al. 2019 (as the reference implementation gives them): CIFAR-10
# (32x32) and ImageNet (224x224).
CIFAR_EPS = 4.0
IMAGENET_EPS = 15.7
# The largest window (side of the centred square of frequencies) drawn by default: Yin et al. show the central
# 63x63 low frequencies of ImageNet maps; smaller images show every frequency except Nyquist (31x31 at 32 px).
DEFAULT_MAX_WINDOW = 63
# Frequencies are packed into a 32-bit stream counter as (i + _OFFSET) * 2 * _OFFSET + j, 3 channels each.
_OFFSET = 2048


def _size_pair(size: int | Sequence[int]) -> tuple[int, int]:
    if isinstance(size, int) and not isinstance(size, bool):
        size = (size, size)
    if (
        not isinstance(size, Sequence)
        or len(size) != 2
        or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 1 for s in size)
    ):
        raise ValueError(f"size must be a positive int or a (height, width) pair of them, got {size!r}.")
    return int(size[0]), int(size[1])


def default_fourier_eps(size: int | Sequence[int]) -> float:
    """The L2 norm of the perturbation for images of `size`: 4.0 at 32x32 (CIFAR-10) and 15.7 at 224x224
    (ImageNet), as in Yin et al. 2019; any other size gets the ImageNet value rescaled by
    sqrt(H W) / 224, which keeps the per-pixel amplitude of the ImageNet protocol (a unit-norm basis image has
    amplitude sqrt(2 / (H W)))."""
    height, width = _size_pair(size)
    if (height, width) == (32, 32):
        return CIFAR_EPS
    return IMAGENET_EPS * math.sqrt(height * width) / 224.0


def max_window(size: int | Sequence[int]) -> int:
    """The widest odd window of distinct frequencies: |i|, |j| <= (min(H, W) - 1) // 2 (Nyquist excluded)."""
    height, width = _size_pair(size)
    return 2 * ((min(height, width) - 1) // 2) + 1


def check_window(window: int | None, size: int | Sequence[int]) -> int:
    """A window is an odd positive int no wider than `max_window(size)`; None gives min(63, max_window)."""
    widest = max_window(size)
    if window is None:
        return min(DEFAULT_MAX_WINDOW, widest)
    if isinstance(window, bool) or not isinstance(window, int) or window < 1 or window % 2 == 0:
        raise ValueError(
            f"window must be an odd positive int (frequencies -K..K, window = 2K + 1), got {window!r}."
        )
    if window > widest:
        height, width = _size_pair(size)
        raise ValueError(
            f"window {window} is too wide for {height}x{width} images: frequencies up to "
            f"{(widest - 1) // 2} (window {widest}) are distinct."
        )
    return window


def window_frequencies(window: int) -> torch.Tensor:
    """Every frequency (i, j) of a centred window, (window**2, 2) int64 in row-major order of the heat map:
    row r holds i = r - K and column c holds j = c - K, K = (window - 1) // 2."""
    if isinstance(window, bool) or not isinstance(window, int) or window < 1 or window % 2 == 0:
        raise ValueError(f"window must be an odd positive int, got {window!r}.")
    half = (window - 1) // 2
    axis = torch.arange(-half, half + 1, dtype=torch.int64)
    rows, cols = torch.meshgrid(axis, axis, indexing="ij")
    return torch.stack((rows.flatten(), cols.flatten()), dim=1)


def is_canonical(frequencies: torch.Tensor) -> torch.Tensor:
    """Whether each frequency (F, 2) is the representative of its pair {(i, j), (-i, -j)}: j > 0, or j = 0 and
    i >= 0 (the right half of the heat map and the lower half of its centre column, rows growing downwards)."""
    i, j = frequencies[:, 0], frequencies[:, 1]
    return (j > 0) | ((j == 0) & (i >= 0))


def canonical_frequencies(frequencies: torch.Tensor) -> torch.Tensor:
    """The representative of each frequency's mirror pair (see `is_canonical`), same shape (F, 2)."""
    frequencies = _check_frequencies(frequencies)
    return torch.where(is_canonical(frequencies)[:, None], frequencies, -frequencies)


def half_window_frequencies(window: int) -> torch.Tensor:
    """The canonical frequencies of a window, ((window**2 + 1) // 2, 2), in the heat map's row-major order:
    every other cell of the window is the mirror (-i, -j) of one of them."""
    frequencies = window_frequencies(window)
    return frequencies[is_canonical(frequencies)]


def _check_frequencies(frequencies: torch.Tensor | Sequence[Sequence[int]]) -> torch.Tensor:
    frequencies = torch.as_tensor(frequencies)
    if frequencies.ndim != 2 or frequencies.shape[1] != 2:
        raise ValueError(
            f"frequencies must have shape (F, 2) (pairs (i, j)), got {tuple(frequencies.shape)}."
        )
    if frequencies.is_floating_point() or frequencies.is_complex() or frequencies.dtype == torch.bool:
        raise ValueError(f"frequencies must be integers, got dtype {frequencies.dtype}.")
    frequencies = frequencies.to(torch.int64)
    if frequencies.numel() and frequencies.abs().max() >= _OFFSET:
        raise ValueError(f"frequencies must lie in (-{_OFFSET}, {_OFFSET}).")
    return frequencies


def fourier_basis(
    frequencies: torch.Tensor | Sequence[Sequence[int]],
    size: int | Sequence[int],
    *,
    dtype: torch.dtype = torch.float32,
    device: torch.device | str | None = None,
) -> torch.Tensor:
    """The unit-L2-norm real Fourier basis images U_ij (F, H, W) of `frequencies` (F, 2), see the module docstring.

    Computed in float64 and cast to `dtype`; the phase is reduced exactly in integers, so the image of (-i, -j)
    equals the image of (i, j) bit for bit, and a frequency and its alias (i + H, j) give the same image.
    """
    frequencies = _check_frequencies(frequencies)
    height, width = _size_pair(size)
    if device is None:
        device = frequencies.device
    frequencies = frequencies.to(device)
    period = height * width
    rows = torch.arange(height, dtype=torch.int64, device=device) * width  # m W
    cols = torch.arange(width, dtype=torch.int64, device=device) * height  # n H
    i = torch.remainder(frequencies[:, 0], height).view(-1, 1, 1)
    j = torch.remainder(frequencies[:, 1], width).view(-1, 1, 1)
    phase = torch.remainder(i * rows.view(1, -1, 1) + j * cols.view(1, 1, -1), period)
    phase = torch.minimum(
        phase, period - phase
    )  # cos(2 pi p / P) = cos(2 pi (P - p) / P): fold, exactly even
    basis = torch.cos(phase.to(torch.float64) * (2.0 * math.pi / period))
    basis = basis / torch.linalg.vector_norm(basis, dim=(-2, -1), keepdim=True)
    return basis.to(dtype)


def fourier_signs(
    seed: int, sample_ids: torch.Tensor, frequencies: torch.Tensor | Sequence[Sequence[int]]
) -> torch.Tensor:
    """Yin et al.'s random sign r per colour channel, (B, 3) float32 in {-1, +1}, for B (image, frequency) pairs:
    image `sample_ids[b]` perturbed at `frequencies[b]`. Pure function of (seed, sample id, canonical frequency,
    channel), drawn from the counter-based stream "fourier_heatmap/sign"."""
    frequencies = _check_frequencies(frequencies)
    if not isinstance(sample_ids, torch.Tensor) or sample_ids.ndim != 1:
        raise ValueError("sample_ids must be a 1-D integer tensor (one id per pair).")
    if sample_ids.shape[0] != frequencies.shape[0]:
        raise ValueError(
            f"sample_ids ({sample_ids.shape[0]}) and frequencies ({frequencies.shape[0]}) must pair up one to one."
        )
    canonical = canonical_frequencies(frequencies).to(sample_ids.device)
    cell = (canonical[:, 0] + _OFFSET) * (2 * _OFFSET) + canonical[:, 1]
    counters = cell[:, None] * 3 + torch.arange(3, dtype=torch.int64, device=sample_ids.device)
    rows = torch.arange(sample_ids.shape[0], device=sample_ids.device)[:, None].expand(-1, 3)
    draws = uniform_at(seed, sample_ids, STREAM, rows, counters)
    return torch.where(draws < 0.5, -1.0, 1.0).to(torch.float32)


def add_fourier_noise(
    images: torch.Tensor, basis: torch.Tensor, eps: float, signs: torch.Tensor
) -> torch.Tensor:
    """clip(images + eps * signs * basis, 0, 1): images (B, 3, H, W) float in [0, 1], basis (B, H, W) unit-norm
    images (one per image), signs (B, 3) in {-1, +1}. Each channel's perturbation has L2 norm eps."""
    if images.ndim != 4 or images.shape[1] != 3 or not images.is_floating_point():
        raise ValueError(f"images must be float (B, 3, H, W) pixels in [0, 1], got {tuple(images.shape)}.")
    if basis.shape != (images.shape[0], *images.shape[-2:]):
        raise ValueError(
            f"basis must have shape {(images.shape[0], *images.shape[-2:])}, got {tuple(basis.shape)}."
        )
    if signs.shape != (images.shape[0], 3):
        raise ValueError(f"signs must have shape {(images.shape[0], 3)}, got {tuple(signs.shape)}.")
    noise = (eps * signs.to(images))[:, :, None, None] * basis.to(images)[:, None]
    return (images + noise).clamp_(0.0, 1.0)


def fourier_noise(
    images: torch.Tensor,
    frequency: tuple[int, int],
    eps: float | None = None,
    *,
    seed: int = 0,
    sample_ids: torch.Tensor | Sequence[int] | None = None,
) -> torch.Tensor:
    """Perturb float images (N, 3, H, W) in [0, 1] with the Fourier basis at one `frequency` (i, j) and L2 norm
    `eps` per channel (default `default_fourier_eps`): the exact images the Fourier heat map evaluates for those
    sample ids (default 0..N-1) and seed."""
    if not isinstance(images, torch.Tensor) or images.ndim != 4 or images.shape[1] != 3:
        raise ValueError("images must be a (N, 3, H, W) tensor.")
    if not images.is_floating_point():
        raise ValueError(f"images must be float pixels in [0, 1], got dtype {images.dtype}.")
    size = tuple(images.shape[-2:])
    eps = default_fourier_eps(size) if eps is None else check_eps(eps)
    n = images.shape[0]
    if sample_ids is None:
        ids = torch.arange(n, device=images.device)
    else:
        ids = torch.as_tensor(sample_ids, dtype=torch.int64, device=images.device)
        if ids.shape != (n,):
            raise ValueError(f"sample_ids must have shape ({n},), got {tuple(ids.shape)}.")
    if not isinstance(frequency, Sequence) or len(frequency) != 2:
        raise ValueError(f"frequency must be a pair of ints (i, j), got {frequency!r}.")
    frequencies = _check_frequencies([list(frequency)]).to(images.device).expand(n, 2)
    basis = fourier_basis(frequencies[:1], size, dtype=images.dtype).expand(n, *size)
    return add_fourier_noise(images, basis, eps, fourier_signs(seed, ids, frequencies))


def check_eps(eps: float) -> float:
    """An L2 norm is a finite non-negative real number."""
    if isinstance(eps, bool) or not isinstance(eps, int | float) or not math.isfinite(eps) or eps < 0:
        raise ValueError(f"eps (the L2 norm of the perturbation) must be a finite number >= 0, got {eps!r}.")
    return float(eps)


__all__ = [
    "CIFAR_EPS",
    "DEFAULT_MAX_WINDOW",
    "IMAGENET_EPS",
    "STREAM",
    "add_fourier_noise",
    "canonical_frequencies",
    "check_eps",
    "check_window",
    "default_fourier_eps",
    "fourier_basis",
    "fourier_noise",
    "fourier_signs",
    "half_window_frequencies",
    "is_canonical",
    "max_window",
    "window_frequencies",
]
