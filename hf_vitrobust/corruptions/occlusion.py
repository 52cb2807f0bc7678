# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Cutout occlusion: one random square hole per image, filled with black, covering a given fraction of the image.

Paul & Chen ("Vision Transformers are Robust Learners", AAAI 2022, masking analysis) mask out a square region
of each ImageNet image with Cutout (DeVries & Taylor, 2017) at masking factors 0.05, 0.1, 0.2 and 0.5 of the image
area and report the top-1 accuracy; their notebooks (sayakpaul/robustness-vit, analysis/masking/CutOut_*.ipynb) use
albumentations' `Cutout(num_holes=1, max_h_size=int(sqrt(area)), max_w_size=int(sqrt(area)))` with the default
fill of 0 (black).

Two choices differ from that reference, so that the masked fraction is the one asked for:
- the side is the integer whose square is closest to `ratio * H * W` (the reference floors the square root);
- the hole lies wholly inside the image. albumentations draws the hole's centre uniformly over the image, shifts
  a hole that would start above or left of the image inside, but clips it at the bottom and right borders, so
  the masked area falls short of the stated fraction (on average by about 6 % of it at 0.05 and 17 % at 0.5);
  here the top-left corner is drawn uniformly over the positions that keep the hole inside, so every image
  loses exactly `side**2` pixels.

The position comes from the counter-based stream "cutout" keyed by (seed, sample id): an image's hole never
depends on the batch size, the batch order or the device, and the same two uniforms place the holes of every
ratio (common random numbers: a sweep over ratios compares hole sizes, not hole positions).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

from .base import check_images, check_sample_ids
from .randomness import uniform

# Paul & Chen's masking factors (their Cutout notebooks), with 0 for the clean images.
DEFAULT_RATIOS = (0.0, 0.05, 0.1, 0.2, 0.5)
STREAM = "cutout"


def check_ratio(ratio: float) -> float:
    """A masked fraction is a real number in [0, 1]."""
    if isinstance(ratio, bool) or not isinstance(ratio, int | float) or not 0.0 <= float(ratio) <= 1.0:
        raise ValueError(
            f"ratio must be a number in [0, 1] (the fraction of the image area to mask), got {ratio!r}."
        )
    return float(ratio)


def hole_side(height: int, width: int, ratio: float) -> int:
    """The side (pixels) of the square hole whose area is closest to `ratio * height * width`.

    Raises ValueError when that square does not fit in the image (e.g. half of a 16x64 image).
    """
    ratio = check_ratio(ratio)
    target = ratio * height * width
    low = math.isqrt(math.floor(target))
    side = min((low, low + 1), key=lambda s: (abs(s * s - target), s))
    if side > min(height, width):
        raise ValueError(
            f"A square hole covering {ratio:g} of a {height}x{width} image needs a side of {side} pixels, "
            f"more than the image's shorter side {min(height, width)}."
        )
    return side


def cutout_mask(
    height: int,
    width: int,
    ratio: float,
    *,
    seed: int = 0,
    sample_ids: torch.Tensor,
) -> torch.Tensor:
    """Boolean masks (N, 1, H, W), True inside each image's square hole, on the device of `sample_ids` (int64).

    The hole's side is `hole_side(height, width, ratio)`; its top-left corner is uniform over the
    `(H - side + 1) * (W - side + 1)` positions that keep it inside the image.
    """
    side = hole_side(height, width, ratio)
    u = uniform(seed, sample_ids, STREAM, (2,), torch.float64)
    # floor(u * k) with u in the open interval (0, 1) is uniform over 0..k-1; the clamp guards rounding.
    top = (u[:, 0] * (height - side + 1)).floor().long().clamp_(0, height - side)
    left = (u[:, 1] * (width - side + 1)).floor().long().clamp_(0, width - side)
    return box_masks(height, width, top, top + side, left, left + side)


def box_masks(
    height: int, width: int, top: torch.Tensor, bottom: torch.Tensor, left: torch.Tensor, right: torch.Tensor
) -> torch.Tensor:
    """Boolean masks (N, 1, H, W), True on rows top..bottom-1 and columns left..right-1 of each image (the
    bounds (N,) integer tensors), on their device."""
    rows = torch.arange(height, device=top.device)
    cols = torch.arange(width, device=top.device)
    inside_rows = (rows >= top[:, None]) & (rows < bottom[:, None])
    inside_cols = (cols >= left[:, None]) & (cols < right[:, None])
    return (inside_rows[:, :, None] & inside_cols[:, None, :])[:, None]


def cutout(
    images: torch.Tensor,
    ratio: float,
    *,
    seed: int = 0,
    sample_ids: Sequence[int] | torch.Tensor | None = None,
    fill: float = 0.0,
) -> torch.Tensor:
    """Mask one random square hole covering `ratio` of each image's area with `fill` (0 = black).

    images: (N, 3, H, W), uint8 (0-255) or float (0-1), any device; the output has the same dtype and device.
    ratio: fraction of the area to mask, in [0, 1] (0 returns the images unchanged).
    seed, sample_ids: the hole of image i depends only on (seed, sample_ids[i]) (default ids 0..N-1); pass each
        image's index in the data set when masking a data set batch by batch.
    fill: the hole's value in [0, 1] (for uint8 images, `round(fill * 255)`).

    Pixels outside the hole are returned bit for bit (no float round trip for uint8 input).
    """
    check_images(images, min_size=1, name="cutout")
    ids = check_sample_ids(seed, sample_ids, images)
    check_fill(fill)
    height, width = images.shape[-2:]
    return fill_holes(images, cutout_mask(height, width, ratio, seed=seed, sample_ids=ids), fill)


def check_fill(fill: float) -> float:
    """`fill` if it is a hole value in [0, 1] (0 = black), else a ValueError."""
    if isinstance(fill, bool) or not isinstance(fill, int | float) or not 0.0 <= float(fill) <= 1.0:
        raise ValueError(f"fill must be a number in [0, 1], got {fill!r}.")
    return fill


def fill_holes(images: torch.Tensor, mask: torch.Tensor, fill: float) -> torch.Tensor:
    """`images` with the pixels where `mask` (N, 1, H, W) is True set to `fill` in [0, 1] (`round(fill * 255)` for
    uint8 images); the other pixels bit for bit."""
    value = round(float(fill) * 255) if images.dtype == torch.uint8 else float(fill)
    return images.masked_fill(mask, value)


__all__ = [
    "DEFAULT_RATIOS",
    "box_masks",
    "check_fill",
    "check_ratio",
    "cutout",
    "cutout_mask",
    "fill_holes",
    "hole_side",
]
