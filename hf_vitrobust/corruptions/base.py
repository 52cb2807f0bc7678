# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The corruption registry and `corrupt`, the one entry point to every ImageNet-C corruption.

Each corruption is a batched tensor function `fn(images, severity, profile, seed, sample_ids) -> images` on float
pixels in [0, 1], shaped (N, 3, H, W), on any device. Random corruptions derive each image's randomness from
(`seed`, its entry of `sample_ids`, an int64 tensor on the images' device); deterministic ones ignore both. `corrupt` validates the request before any work, converts uint8 input to float
and back (or, for uint8 images on the CPU, takes the corruption's uint8 route where it has one: the same result,
fewer full passes over the pixels), and picks the parameter profile: "imagenet" (the tables of Hendrycks & Dietterich 2019, as in the
`imagecorruptions` package, for any image size) or "cifar" (the tables of the reference's make_cifar_c.py, for
32x32 images).
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from ..constants import SEVERITIES
from ..registry import Registry

PROFILES = ("imagenet", "cifar")
# The reference (imagecorruptions) refuses images smaller than 32x32.
MIN_IMAGE_SIZE = 32

CorruptionFn = Callable[[torch.Tensor, int, str, int, torch.Tensor], torch.Tensor]


@dataclass(frozen=True)
class Corruption:
    """A registered corruption: its name, its batched function, and the smallest image side it supports.

    `uint8_fn`, where given, is the corruption's route for uint8 images on the CPU, with `fn`'s signature but
    uint8 (N, 3, H, W) in and out. It must return exactly `from_unit_float(fn(to_unit_float(images)), images)`,
    bit for bit (each one's tests check it); it exists only because it is faster (it skips the conversion passes,
    or uses a CPU library). Other devices and float input always take `fn`.
    """

    name: str
    fn: CorruptionFn
    min_size: int = MIN_IMAGE_SIZE
    uint8_fn: CorruptionFn | None = None


#: Every corruption, by the reference's name, in registration order.
CORRUPTION_REGISTRY: Registry[Corruption] = Registry("corruption")


def register_corruption(
    name: str, min_size: int = MIN_IMAGE_SIZE, uint8_fn: CorruptionFn | None = None
) -> Callable[[CorruptionFn], CorruptionFn]:
    """Register `fn(images, severity, profile, seed, sample_ids)` under `name` (the reference's spelling), with an
    optional uint8 CPU route (see `Corruption`)."""

    def decorator(fn: CorruptionFn) -> CorruptionFn:
        CORRUPTION_REGISTRY.register(name, Corruption(name, fn, min_size, uint8_fn))
        return fn

    return decorator


def registered_corruptions() -> tuple[str, ...]:
    return CORRUPTION_REGISTRY.names()


def get_corruption(name: str) -> Corruption:
    """The registered corruption `name`; an unknown name is a ValueError that suggests the closest one."""
    return CORRUPTION_REGISTRY.get(name)


def resolve_profile(profile: str | None, height: int, width: int) -> str:
    """An explicit profile, or by image size: "cifar" for images of at most 32x32, else "imagenet"."""
    if profile is None:
        return "cifar" if max(height, width) <= 32 else "imagenet"
    if profile not in PROFILES:
        raise ValueError(f"Unknown profile {profile!r}; choose one of {PROFILES}.")
    return profile


def check_images(images: torch.Tensor, min_size: int = MIN_IMAGE_SIZE, name: str = "corruption") -> None:
    """Raise ValueError unless `images` is uint8 or float, shaped (N, 3, H, W), with H, W >= min_size."""
    if not isinstance(images, torch.Tensor):
        raise ValueError(f"images must be a torch.Tensor, got {type(images).__name__}.")
    if images.ndim != 4:
        raise ValueError(f"images must have shape (N, 3, H, W), got {tuple(images.shape)}.")
    if images.shape[1] != 3:
        raise ValueError(f"images must have 3 channels in dim 1, got shape {tuple(images.shape)}.")
    if images.dtype != torch.uint8 and not images.is_floating_point():
        raise ValueError(f"images must be uint8 (0-255) or float (0-1), got dtype {images.dtype}.")
    height, width = images.shape[-2:]
    if min(height, width) < min_size:
        raise ValueError(f"{name} needs images of at least {min_size}x{min_size}, got {height}x{width}.")


def check_severity(severity: int) -> None:
    if isinstance(severity, bool) or not isinstance(severity, int) or severity not in SEVERITIES:
        raise ValueError(f"severity must be an integer from 1 to 5, got {severity!r}.")


def check_sample_ids(
    seed: int, sample_ids: Sequence[int] | torch.Tensor | None, images: torch.Tensor
) -> torch.Tensor:
    """Validate `seed` and `sample_ids` (default 0..N-1); return the ids as int64 on the images' device."""
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise ValueError(f"seed must be an int, got {seed!r}.")
    ids = torch.arange(images.shape[0]) if sample_ids is None else torch.as_tensor(sample_ids)
    if ids.ndim != 1 or len(ids) != images.shape[0] or ids.is_floating_point():
        raise ValueError(
            f"sample_ids must be {images.shape[0]} integers, one per image, got shape {tuple(ids.shape)}."
        )
    return ids.to(images.device, torch.int64)


def to_unit_float(images: torch.Tensor) -> torch.Tensor:
    """uint8 0-255 -> float32 0-1; float input is used as is (float32 at least)."""
    if images.dtype == torch.uint8:
        return images.float().div_(255.0)
    return images if images.dtype in (torch.float32, torch.float64) else images.float()


def from_unit_float(corrupted: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """Back to the input's dtype. uint8 is truncated after clipping, as the reference's `np.uint8(x * 255)`."""
    if like.dtype == torch.uint8:
        # clamp(x, 0, 1) * 255 == clamp(x * 255, 0, 255) in floats; on values >= 0, int() truncates as floor does,
        # and float -> int32 -> uint8 is about three times faster than torch's direct float -> uint8 cast.
        return corrupted.mul(255.0).clamp_(0.0, 255.0).int().to(torch.uint8)
    return corrupted.clamp(0.0, 1.0).to(like.dtype)


def corrupt(
    images: torch.Tensor,
    name: str,
    severity: int,
    seed: int = 0,
    sample_ids: Sequence[int] | torch.Tensor | None = None,
    profile: str | None = None,
) -> torch.Tensor:
    """Apply corruption `name` at `severity` (1-5) to a batch; same dtype, shape and device as the input.

    `seed` and `sample_ids` (one id per image, default 0..N-1) determine the randomness of random corruptions per
    image, so that a sample's corruption never depends on batch size, batch order or the number of processes.
    When corrupting a data set batch by batch, pass each image's index in the data set as its sample id: with the
    default, every batch would get the same noise patterns.
    `profile` picks the parameter tables ("imagenet" or "cifar"; default by image size, see `resolve_profile`).
    """
    corruption = get_corruption(name)
    check_severity(severity)
    check_images(images, corruption.min_size, name)
    ids = check_sample_ids(seed, sample_ids, images)
    chosen = resolve_profile(profile, *images.shape[-2:])
    if corruption.uint8_fn is not None and images.dtype == torch.uint8 and images.device.type == "cpu":
        return corruption.uint8_fn(images, severity, chosen, seed, ids)
    corrupted = corruption.fn(to_unit_float(images), severity, chosen, seed, ids)
    return from_unit_float(corrupted, images)
