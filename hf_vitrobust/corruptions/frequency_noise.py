# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Band-passed random noise: white noise restricted to a square annulus of 2D frequencies, phase kept.

Park & Kim ("How Do Vision Transformers Work?", ICLR 2022, Fig. 2b) measure how much accuracy a model loses under
random noise whose frequencies lie near one value f, for f from 0.1 pi to 0.9 pi: ViTs lose most to low-frequency
noise, ResNets to high-frequency noise. Their code (xxxnell/how-do-vits-work, `ops/adversarial.py`, `FreqAttack`
wrapping `Random`; the first author's example in the repository's issue #44) draws white sign noise
`eps * sign(N(0, 1))` per pixel and channel, takes its 2D FFT, zeroes the amplitude outside a square annulus
centred on the zero frequency, keeps the phase, and adds the real part of the inverse FFT to the normalised image.

Here, for an image of H x W pixels, frequency index (k, l) of `torch.fft.fft2` has the angular frequency
`(2 pi k / H, 2 pi l / W)` (k, l taken in [-H/2, H/2) and [-W/2, W/2), as `torch.fft.fftfreq`), and its radius is
the max-norm `max(|2k / H|, |2l / W|)` in units of pi, from 0 (constant) to 1 (Nyquist). A band of centre f and
width w keeps the radii in [f - w/2, f + w/2) (and the Nyquist radius 1 itself when f + w/2 >= 1): with the
default width 0.2, f = 0.5 keeps [0.4 pi, 0.6 pi). The mask depends on |k| and |l| only, so it is symmetric and
the band-passed noise is real (the reference's mask is off by one frequency on one side, which its `.real` then
averages). The width here is the full width in units of pi; the reference `FreqAttack(s=0.2)` uses a half-width
of 0.2 radians (about 0.064 pi).

Two bands (`BANDS`):
- "square-annulus" (the default): the symmetric band just described, full width `bandwidth` in units of pi.
- "park-kim": the band of the authors' `FreqAttack._fourier_mask` exactly, for square images of even side h (the
  only ones it handles). With f in radians (f pi for a centre f in units of pi) and s = 0.2 rad, the spectrum,
  shifted to centre the zero frequency, keeps the centred square of side `2 * int((f + s) h / (2 pi))` minus the
  centred square of side `2 * int((f - s) h / (2 pi))` (sides clamped to [0, h]): in frequency indices k, l of
  `torch.fft.fftfreq(h) * h`, the set `-a <= k, l < a` minus `-b <= k, l < b`, with `int()`'s truncation. Its full
  width is about 0.4 rad = 0.127 pi, not 0.2 pi, and it is one-sided at each edge (k = -a kept, k = a not), which
  the reference's `.real` then averages: the edge frequencies count half.

Magnitude and normalisation. The white noise is Rademacher noise (+1 or -1 with equal probability, what
`sign(randn)` gives) scaled by `magnitude`; it is filtered without rescaling, as in the reference, so a band keeps
the energy of the white noise's frequencies that fall in it: the filtered noise has an expected RMS of
`magnitude * sqrt(fraction of the H x W frequencies in the band)` (Parseval), larger for higher bands, whose square
annuli are longer. `equal_energy=True` instead rescales each image's band-passed noise to an RMS of exactly
`magnitude`, so every band carries the same energy. The reference adds eps = 0.7 (the default of the author's
example in issue #44; the paper states no value) to images normalised with the ImageNet std; in pixel units that is 0.7 * std per channel,
`REFERENCE_MAGNITUDE` below. Probes pass `epsilon * classifier std`, the same noise in each model's own
normalised input space.

The white noise comes from the counter-based stream "frequency_noise/white" keyed by (seed, sample id): an image's
noise never depends on the batch size, the batch order or the device, and every band filters the same white noise
(common random numbers: the bands differ in frequency only, not in the draw).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

from .base import check_images, check_sample_ids, from_unit_float, to_unit_float
from .randomness import random_bits

# Park & Kim's white-noise amplitude in normalised input units (issue #44 of xxxnell/how-do-vits-work) and the
# ImageNet std used to normalise the images their models take; their product is the amplitude in pixel units.
REFERENCE_EPSILON = 0.7
IMAGENET_STD = (0.229, 0.224, 0.225)
REFERENCE_MAGNITUDE = tuple(REFERENCE_EPSILON * s for s in IMAGENET_STD)
# Fig. 2b: band centres 0.1 pi ... 0.9 pi; the default band width, 0.2 pi: [f - 0.1 pi, f + 0.1 pi).
DEFAULT_FREQUENCIES = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
DEFAULT_BANDWIDTH = 0.2
#: The bands `band_pass` can keep: ours (symmetric, width in units of pi) and the authors' `_fourier_mask`.
BANDS = ("square-annulus", "park-kim")
#: `FreqAttack(s=0.2)`: the half-width, in radians, of the authors' band.
PARK_KIM_HALF_WIDTH = 0.2
STREAM = "frequency_noise/white"
# Radii are k / (n / 2); a tolerance keeps a radius equal to a band edge on the same side whatever the rounding.
_EDGE_TOLERANCE = 1e-9


def _check_unit_interval(value: float, name: str, *, low_open: bool = False, high: float = 1.0) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}.")
    if (value <= 0.0 if low_open else value < 0.0) or value > high:
        interval = f"{'(' if low_open else '['}0, {high:g}]"
        raise ValueError(f"{name} must lie in {interval} (in units of pi), got {value!r}.")
    return float(value)


def frequency_radius(height: int, width: int, device: torch.device | str | None = None) -> torch.Tensor:
    """(H, W) float64: the max-norm radius, in units of pi, of each frequency of `torch.fft.fft2`'s layout."""
    rows = (2.0 * torch.fft.fftfreq(height, dtype=torch.float64, device=device)).abs()
    cols = (2.0 * torch.fft.fftfreq(width, dtype=torch.float64, device=device)).abs()
    return torch.maximum(rows[:, None], cols[None, :])


def square_annulus_mask(
    height: int,
    width: int,
    frequency: float,
    bandwidth: float = DEFAULT_BANDWIDTH,
    *,
    device: torch.device | str | None = None,
) -> torch.Tensor:
    """Boolean (H, W) mask in `torch.fft.fft2`'s layout: the frequencies whose max-norm radius (units of pi) lies
    in [frequency - bandwidth / 2, frequency + bandwidth / 2), plus the Nyquist radius 1 when the band reaches it.

    Raises ValueError when no frequency of an H x W image falls in the band.
    """
    frequency = _check_unit_interval(frequency, "frequency")
    bandwidth = _check_unit_interval(bandwidth, "bandwidth", low_open=True, high=2.0)
    low, high = frequency - bandwidth / 2, frequency + bandwidth / 2
    radius = frequency_radius(height, width, device)
    inside = radius >= low - _EDGE_TOLERANCE
    inside &= radius < high - _EDGE_TOLERANCE if high < 1.0 - _EDGE_TOLERANCE else radius <= 1.0
    if not bool(inside.any()):
        raise ValueError(
            f"No frequency of a {height}x{width} image lies in the band [{low:g} pi, {high:g} pi): its frequencies "
            f"are {2 / max(height, width):g} pi apart; widen the band."
        )
    return inside


def park_kim_band_mask(
    height: int,
    width: int,
    frequency: float,
    *,
    half_width: float = PARK_KIM_HALF_WIDTH,
    device: torch.device | str | None = None,
) -> torch.Tensor:
    """Boolean (H, W) mask in `torch.fft.fft2`'s layout: the band of xxxnell/how-do-vits-work `ops/adversarial.py`
    `FreqAttack._fourier_mask(x, f=frequency * pi, s=half_width)` (see the module docstring), which handles square
    images of even side only. Raises ValueError for other sizes and for a band that keeps no frequency."""
    frequency = _check_unit_interval(frequency, "frequency")
    if height != width or height % 2:
        raise ValueError(
            f"The park-kim band (FreqAttack._fourier_mask) needs square images of even side, got {height}x{width}; "
            "use band='square-annulus'."
        )
    angle = frequency * math.pi

    def half_side(radians: float) -> int:
        # _center_mask(int((f ± s) h / (2 pi)) * 2, h): the side, clamped to [0, h]; half of it is the bound.
        return min(max(math.trunc(radians * height / (2 * math.pi)) * 2, 0), height) // 2

    outer, inner = half_side(angle + half_width), half_side(angle - half_width)
    index = torch.fft.fftfreq(height, 1.0 / height, dtype=torch.float64, device=device).round().long()

    def square(half: int) -> torch.Tensor:
        inside = (index >= -half) & (index < half)
        return inside[:, None] & inside[None, :]

    mask = square(outer) & ~square(inner)
    if not bool(mask.any()):
        raise ValueError(
            f"The park-kim band at {frequency:g} pi keeps no frequency of a {height}x{width} image."
        )
    return mask


def band_mask(
    height: int,
    width: int,
    frequency: float,
    bandwidth: float = DEFAULT_BANDWIDTH,
    *,
    band: str = "square-annulus",
    device: torch.device | str | None = None,
) -> torch.Tensor:
    """The boolean frequency mask of `band` ("square-annulus": `square_annulus_mask`, of width `bandwidth`;
    "park-kim": `park_kim_band_mask`, whose width is the authors' and ignores `bandwidth`)."""
    if band == "square-annulus":
        return square_annulus_mask(height, width, frequency, bandwidth, device=device)
    if band == "park-kim":
        return park_kim_band_mask(height, width, frequency, device=device)
    raise ValueError(f"band must be one of {', '.join(BANDS)}, got {band!r}.")


def band_pass(
    x: torch.Tensor, frequency: float, bandwidth: float = DEFAULT_BANDWIDTH, *, band: str = "square-annulus"
) -> torch.Tensor:
    """Keep the frequencies of real `x` (..., H, W) in the band `band_mask(...)`: amplitude and phase unchanged
    inside, zero outside, then the real part of the inverse FFT (as the reference's `.real`). Returns a real tensor
    of x's shape (float32 for non-float64 input)."""
    if x.is_complex() or x.ndim < 2:
        raise ValueError(f"band_pass needs a real tensor (..., H, W), got {x.dtype} {tuple(x.shape)}.")
    work = x if x.dtype == torch.float64 else x.float()
    mask = band_mask(*x.shape[-2:], frequency, bandwidth, band=band, device=x.device)
    return torch.fft.ifft2(torch.fft.fft2(work) * mask).real


def white_sign_noise(
    sample_ids: torch.Tensor,
    shape: tuple[int, int, int],
    *,
    seed: int = 0,
    dtype: torch.dtype = torch.float32,
) -> torch.Tensor:
    """Rademacher noise (+1 / -1, equally likely) of shape (N, *shape): element j of sample i depends only on
    (seed, sample_ids[i], j)."""
    bits = random_bits(seed, sample_ids, STREAM, shape)
    return ((bits & 1) * 2 - 1).to(dtype)


def band_pass_noise(
    sample_ids: torch.Tensor,
    size: tuple[int, int],
    frequency: float,
    *,
    bandwidth: float = DEFAULT_BANDWIDTH,
    seed: int = 0,
    channels: int = 3,
    equal_energy: bool = False,
    band: str = "square-annulus",
) -> torch.Tensor:
    """Band-passed white noise, float32 (N, channels, H, W) on the device of `sample_ids` (int64).

    Unit-amplitude white sign noise filtered by `band_pass` with `band`; its expected RMS is the square root of the
    fraction of frequencies in the band. With `equal_energy`, each image's noise is rescaled to an RMS of exactly 1.
    """
    height, width = size
    white = white_sign_noise(sample_ids, (channels, height, width), seed=seed)
    noise = band_pass(white, frequency, bandwidth, band=band)
    if equal_energy:
        rms = noise.square().mean(dim=(1, 2, 3), keepdim=True).sqrt()
        noise = noise / rms.clamp_min(torch.finfo(noise.dtype).tiny)
    return noise


def _per_channel(magnitude: float | Sequence[float] | torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    values = torch.as_tensor(magnitude, dtype=like.dtype, device=like.device)
    if values.ndim == 0:
        values = values.expand(like.shape[1])
    if values.shape != (like.shape[1],) or not bool(torch.isfinite(values).all()) or bool((values < 0).any()):
        raise ValueError(
            f"magnitude must be a non-negative number or one per channel ({like.shape[1]}), got {magnitude!r}."
        )
    return values.view(1, -1, 1, 1)


def add_band_noise(
    images: torch.Tensor,
    frequency: float,
    *,
    magnitude: float | Sequence[float] | torch.Tensor = REFERENCE_MAGNITUDE,
    bandwidth: float = DEFAULT_BANDWIDTH,
    seed: int = 0,
    sample_ids: Sequence[int] | torch.Tensor | None = None,
    equal_energy: bool = False,
    clip: bool = True,
    band: str = "square-annulus",
) -> torch.Tensor:
    """Add band-passed noise of centre `frequency` (units of pi) to a batch; same dtype, shape and device out.

    images: (N, 3, H, W), uint8 (0-255) or float (0-1).
    magnitude: amplitude of the white sign noise before filtering, in pixel units ([0, 1] scale), one number or
        one per channel (default: Park & Kim's eps = 0.7 times the ImageNet std); with `equal_energy`, the RMS of
        the band-passed noise instead.
    bandwidth: full width of the square annulus in units of pi (default 0.2: [f - 0.1 pi, f + 0.1 pi)).
    band: "square-annulus" (default) or "park-kim", the authors' `_fourier_mask` band (see the module docstring).
    seed, sample_ids: image i's noise depends only on (seed, sample_ids[i]) (default ids 0..N-1).
    clip: clamp the result to [0, 1] (always for uint8 output). Park & Kim add the noise to normalised images
        without clipping; probes pass `clip=False` to match.
    """
    check_images(images, min_size=1, name="band-passed noise")
    ids = check_sample_ids(seed, sample_ids, images)
    pixels = to_unit_float(images)
    scale = _per_channel(magnitude, pixels)
    noise = band_pass_noise(
        ids,
        tuple(images.shape[-2:]),
        frequency,
        bandwidth=bandwidth,
        seed=seed,
        channels=images.shape[1],
        equal_energy=equal_energy,
        band=band,
    )
    noisy = pixels + scale * noise.to(pixels.dtype)
    if clip or images.dtype == torch.uint8:
        return from_unit_float(noisy, images)
    return noisy.to(images.dtype)


__all__ = [
    "BANDS",
    "DEFAULT_BANDWIDTH",
    "DEFAULT_FREQUENCIES",
    "IMAGENET_STD",
    "PARK_KIM_HALF_WIDTH",
    "REFERENCE_EPSILON",
    "REFERENCE_MAGNITUDE",
    "add_band_noise",
    "band_mask",
    "band_pass",
    "band_pass_noise",
    "frequency_radius",
    "park_kim_band_mask",
    "square_annulus_mask",
    "white_sign_noise",
]
