# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The random blurs of ImageNet-C: `motion_blur` and `glass_blur`, batched on tensors.

Both follow the reference implementation (`imagecorruptions` 1.1.2, `corruptions.py`), with their randomness drawn
from the counter-based per-sample streams of `randomness.py` instead of NumPy's global generator, and with the
CIFAR parameters of the reference's `make_cifar_c.py` as the "cifar" profile.

make_cifar_c.py's `motion_blur` calls ImageMagick (Wand's `motion_blur`), which this package does not depend on; the
"cifar" profile runs the same algorithm as the "imagenet" one (imagecorruptions' NumPy re-implementation of
ImageMagick's motion blur: a one-sided Gaussian-weighted line of shifted copies) with make_cifar_c.py's
(radius, sigma) table.
"""

import torch

from .base import register_corruption
from .blur import gaussian_filter, takes_cpu_fast_path
from .randomness import random_bits, uniform

# (radius, sigma) per severity. imagecorruptions/corruptions.py `motion_blur`; make_cifar_c.py `motion_blur`.
MOTION_BLUR_PARAMS: dict[str, tuple[tuple[float, float], ...]] = {
    "imagenet": ((10, 3), (15, 5), (15, 8), (15, 12), (20, 15)),
    "cifar": ((6, 1), (6, 1.5), (6, 2), (8, 2), (9, 2.5)),
}

# (sigma, max_delta, iterations) per severity. imagecorruptions/corruptions.py `glass_blur`; make_cifar_c.py
# `glass_blur`.
GLASS_BLUR_PARAMS: dict[str, tuple[tuple[float, int, int], ...]] = {
    "imagenet": ((0.7, 1, 2), (0.9, 2, 1), (1, 2, 3), (1.1, 3, 2), (1.5, 4, 2)),
    "cifar": ((0.05, 1, 1), (0.25, 1, 1), (0.4, 1, 1), (0.25, 1, 2), (0.4, 1, 2)),
}


def motion_blur_taps(radius: float) -> int:
    """The reference's `getOptimalKernelWidth1D`: the number of taps, 2 * radius + 1."""
    return int(radius * 2 + 1)


def motion_blur_with_angles(
    images: torch.Tensor, radius: float, sigma: float, angles: torch.Tensor, *, tap_sum_on_cpu: bool = False
) -> torch.Tensor:
    """The reference's `_motion_blur(x, radius, sigma, angle)` for a batch, with one angle (degrees) per image.

    Tap i of width = 2 radius + 1 is the image shifted by (dy, dx) = (-ceil(i sin(a) - 0.5), -ceil(i cos(a) - 0.5))
    with edge replication (the reference's `shift`: output pixel (h, w) reads (h - dy, w - dx), clamped), weighted
    by the one-sided Gaussian exp(-i^2 / (2 sigma^2)) normalised over all taps. As the reference, the taps stop at the
    first one whose shift reaches the image size (the remaining weights are dropped, not renormalised).

    `tap_sum_on_cpu=True` lets CPU images sum the shifted copies directly, as the reference does, one in-place
    multiply-add per image and tap on views of the padded image (no batched form, since each image has its own
    shifts; measured 2x faster than the FFT on one thread at 224x224); it differs from the FFT by float rounding.
    """
    n, _, height, width = images.shape
    taps = motion_blur_taps(radius)
    device = images.device
    steps = torch.arange(taps, dtype=torch.float64)
    weights = torch.exp(-(steps**2) / (2 * sigma**2))
    weights = (weights / weights.sum()).to(device)
    radians = torch.deg2rad(angles.to(device, torch.float64))
    # The reference's point = width * (sin, cos), divided by its hypot; kept in that form for identical rounding.
    point_y, point_x = taps * torch.sin(radians), taps * torch.cos(radians)
    hypot = torch.hypot(point_y, point_x)
    steps = steps.to(device)[None, :]
    dy = -torch.ceil(steps * point_y[:, None] / hypot[:, None] - 0.5).long()  # (N, taps)
    dx = -torch.ceil(steps * point_x[:, None] / hypot[:, None] - 0.5).long()
    inside = (dy.abs() < height) & (dx.abs() < width)
    # Zero from the first tap past the border on.
    active = torch.cumprod(inside.long(), dim=1).to(torch.float64)
    tap_weights = weights[None, :] * active
    if tap_sum_on_cpu and takes_cpu_fast_path(images):
        return _motion_tap_sum(images, dy, dx, tap_weights)

    # Every tap reads the replicate-padded image at offset (R - dy, R - dx), so the sum of taps is one
    # cross-correlation of the padded image with a per-image (2R+1)^2 line kernel, computed as an FFT product: one
    # transform per image instead of one gather per tap (41 at severity 5). It runs in the images' dtype. In float32
    # it differs from the reference's float64 sum by <= 1.3e-6, which moves about 3 in 10,000 uint8 values by one
    # level (measured on the test photos at all five severities).
    work_dtype = images.dtype
    # A shift never exceeds its tap index, and active taps stay inside the image: a bound known without a sync.
    pad = min(taps - 1, max(height, width) - 1)
    size = 2 * pad + 1
    kernels = torch.zeros(n, size * size, dtype=work_dtype, device=device)
    on = active.bool()  # dropped taps carry weight 0; park them at the kernel centre so their index is valid
    kernels.scatter_add_(1, (pad - dy * on) * size + (pad - dx * on), tap_weights.to(work_dtype))
    padded = torch.nn.functional.pad(images.to(work_dtype), (pad, pad, pad, pad), mode="replicate")
    fft_shape = padded.shape[-2:]
    # Correlation = convolution with the flipped kernel; the circular result equals the linear one on the valid
    # region [2R, 2R + H) x [2R, 2R + W) because the transform is as large as the padded image.
    flipped = kernels.view(n, 1, size, size).flip(-2, -1)
    spectrum = torch.fft.rfft2(padded, s=fft_shape) * torch.fft.rfft2(flipped, s=fft_shape)
    full = torch.fft.irfft2(spectrum, s=fft_shape)
    blurred = full[..., 2 * pad : 2 * pad + height, 2 * pad : 2 * pad + width]
    return blurred.clamp(0.0, 1.0).to(images.dtype)


def _motion_tap_sum(
    images: torch.Tensor, dy: torch.Tensor, dx: torch.Tensor, tap_weights: torch.Tensor
) -> torch.Tensor:
    """sum_i w_i x(h - dy_i, w - dx_i), edges replicated, for (N, taps) integer shifts and weights (0 for dropped
    taps), accumulated tap by tap in the images' dtype (float32: within 3e-6 of the reference's float64 sum)."""
    height, width = images.shape[-2:]
    pad = int((torch.maximum(dy.abs(), dx.abs()) * (tap_weights > 0)).max())  # the largest shift kept
    padded = torch.nn.functional.pad(images, (pad, pad, pad, pad), mode="replicate")
    blurred = torch.zeros_like(images)
    for image, out, shift_y, shift_x, weights in zip(
        padded, blurred, (pad - dy).tolist(), (pad - dx).tolist(), tap_weights.tolist(), strict=True
    ):
        for top, left, weight in zip(shift_y, shift_x, weights, strict=True):
            if weight > 0:
                out.add_(image[:, top : top + height, left : left + width], alpha=weight)
    return blurred.clamp_(0.0, 1.0)


@register_corruption("motion_blur")
def motion_blur(
    images: torch.Tensor, severity: int, profile: str, seed: int, sample_ids: torch.Tensor
) -> torch.Tensor:
    """Motion blur along a random direction per image, angle ~ U(-45, 45) degrees as in the reference; on the CPU
    as the reference's direct sum of shifted copies (`motion_blur_with_angles(tap_sum_on_cpu=True)`)."""
    radius, sigma = MOTION_BLUR_PARAMS[profile][severity - 1]
    angles = uniform(seed, sample_ids, "motion_blur/angle", (), torch.float64) * 90.0 - 45.0
    return motion_blur_with_angles(images, radius, sigma, angles, tap_sum_on_cpu=True)


def glass_shuffle_sources(offsets: torch.Tensor, max_delta: int) -> torch.Tensor:
    """Flat source pixel of every output pixel after the reference's shuffle loop, given its (dy, dx) per pixel.

    The reference visits the pixels (h, w) with max_delta < h, w <= size - max_delta in reverse raster order and
    runs `x[h, w], x[h', w'] = x[h', w'], x[h, w]` with (h', w') = (h + dy, w + dx). On NumPy arrays the right-hand
    side holds views, so this is no swap: x[h, w] takes the current value of x[h', w'], which keeps it. So each
    visited pixel copies its partner's value as of its turn: the partner's new value if the partner was visited
    earlier, else its value before the loop. Following these pointers ends at a pixel of the starting image; the
    chains are resolved for all pixels at once by pointer jumping, so the result is exactly the loop's. Each round
    jumps only the pointers not yet final, and the rounds stop when none is left: chains are short (at most 5 rounds
    at max_delta 4 on 224x224 photos, none at max_delta 1), where a fixed count would take log2(H W) rounds.

    `offsets` is (N, 2, H, W) integer (dy, dx); returns (N, H * W) int64 indices into the flattened image.
    """
    n, _, height, width = offsets.shape
    size = height * width
    device = offsets.device
    rows = torch.arange(height, device=device)
    cols = torch.arange(width, device=device)
    # Visit order of the reference's loops over range(size - max_delta, max_delta, -1); -1 where not visited.
    row_ok = (rows > max_delta) & (rows <= height - max_delta)
    col_ok = (cols > max_delta) & (cols <= width - max_delta)
    order = (height - max_delta - rows)[:, None] * width + (width - max_delta - cols)[None, :]
    order = torch.where(row_ok[:, None] & col_ok[None, :], order, -1).flatten()
    here = torch.arange(size, device=device)
    partner = (here.view(height, width) + offsets[:, 0] * width + offsets[:, 1]).view(n, size)
    partner = torch.where(order >= 0, partner, here)  # unvisited pixels keep their own value
    # A pointer to the partner is final unless the partner was visited earlier (then follow the partner's pointer);
    # an unvisited pixel points to itself, of order -1, so it is final.
    partner_order = order.take(partner)
    done = ((partner_order < 0) | (partner_order >= order)).flatten()
    # Pointers into the flattened batch, so that one index op serves every image.
    first = torch.arange(n, device=device)[:, None] * size
    pointers = (partner + first).flatten()
    pending = torch.arange(n * size, device=device).masked_select(~done)
    while pending.numel():  # each pending pointer leads to an earlier-visited pixel: the chains end
        targets = pointers.index_select(0, pending)
        pointers.index_copy_(0, pending, pointers.index_select(0, targets))
        reached = done.index_select(0, targets)
        done.index_fill_(0, pending.masked_select(reached), True)
        pending = pending.masked_select(~reached)
    return pointers.view(n, size) - first


def glass_offsets(
    seed: int, sample_ids: torch.Tensor, max_delta: int, iterations: int, height: int, width: int
) -> torch.Tensor:
    """(iterations, N, 2, H, W) integer (dy, dx) per pass and pixel, uniform in [-max_delta, max_delta) as the
    reference's `np.random.randint(-max_delta, max_delta)`, from one stream per pass: the stream's 32-bit integer
    modulo 2 max_delta, minus max_delta."""
    passes = [
        _remainder(
            random_bits(seed, sample_ids, f"glass_blur/offsets/{i}", (2, height, width)), 2 * max_delta
        )
        - max_delta
        for i in range(iterations)
    ]
    return torch.stack(passes)


def _remainder(bits: torch.Tensor, modulus: int) -> torch.Tensor:
    """`bits % modulus` for integers in [0, 2**32), without int64 division (scalar on the CPU, 8x slower): a mask
    for a power of two, else through float64 division, exact here: bits / modulus is correctly rounded, and below
    2**32 it is either an integer or at least 1 / modulus away from one, far beyond float64's rounding."""
    if modulus & (modulus - 1) == 0:
        return bits & (modulus - 1)
    quotient = torch.floor(bits.double() / modulus).long()
    return bits - quotient * modulus


def glass_blur_with_offsets(
    images: torch.Tensor, sigma: float, max_delta: int, offsets: torch.Tensor
) -> torch.Tensor:
    """The reference's `glass_blur` given its random offsets, (iterations, N, 2, H, W) (dy, dx) per pass and pixel.

    Gaussian blur, quantised to uint8 levels (the reference's `np.uint8(gaussian(x) * 255)`, here in float64 as the
    reference so that the truncation matches), the shuffle passes of `glass_shuffle_sources` moving whole RGB
    pixels, and the same Gaussian blur again, also summed in float64 as the reference (and as CUDA did already): in
    flat regions the quantised image blurs to values on 8-bit level boundaries, where float32 sums break the
    truncation ties of up to 0.7% of the values differently. On the CPU both blurs run as cv2.sepFilter2D
    (`gaussian_filter(opencv=True)`).
    """
    n, c, height, width = images.shape
    blurred = gaussian_filter(images.double(), sigma, opencv=True)
    quantised = torch.floor(blurred * 255.0).clamp(0.0, 255.0) / 255.0
    flat = quantised.to(images.dtype).reshape(n, c, height * width)
    for pass_offsets in offsets:
        sources = glass_shuffle_sources(pass_offsets.to(images.device), max_delta)
        flat = flat.gather(2, sources[:, None, :].expand(n, c, height * width))
    blurred = gaussian_filter(flat.reshape(n, c, height, width).double(), sigma, opencv=True)
    return blurred.to(images.dtype).clamp(0.0, 1.0)


@register_corruption("glass_blur")
def glass_blur(
    images: torch.Tensor, severity: int, profile: str, seed: int, sample_ids: torch.Tensor
) -> torch.Tensor:
    """Glass blur as the reference: blur, local pixel shuffles with offsets from our streams, blur again.

    The reference's sequential loop is reproduced exactly given the offsets (see `glass_shuffle_sources`).
    """
    sigma, max_delta, iterations = GLASS_BLUR_PARAMS[profile][severity - 1]
    height, width = images.shape[-2:]
    offsets = glass_offsets(seed, sample_ids, max_delta, iterations, height, width)
    return glass_blur_with_offsets(images, sigma, max_delta, offsets)


__all__ = [
    "GLASS_BLUR_PARAMS",
    "MOTION_BLUR_PARAMS",
    "glass_blur",
    "glass_blur_with_offsets",
    "glass_offsets",
    "glass_shuffle_sources",
    "motion_blur",
    "motion_blur_with_angles",
]
