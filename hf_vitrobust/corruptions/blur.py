# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The deterministic ImageNet-C blurs: `gaussian_blur`, `defocus_blur` and `zoom_blur`, batched on tensors.

Each follows the reference implementation (`imagecorruptions` 1.1.2, `corruptions.py`) step by step, with the
CIFAR parameters of the reference's `make_cifar_c.py` as the "cifar" profile. All three work on float (N, 3, H, W)
images in [0, 1] on the images' device and return float images in [0, 1].

CPU tensors take OpenCV where it is much faster than torch for the same arithmetic (`opencv_for`): separable
Gaussian filters (cv2.sepFilter2D) and the zooms of zoom_blur (cv2.warpAffine). Those differ from the torch path,
which CUDA keeps, only by float rounding.
"""

import contextlib
import contextvars
import functools
import math
import os
import sys
from collections.abc import Iterator
from types import ModuleType

import numpy as np
import torch
import torch.nn.functional as F

from .base import register_corruption

# Gaussian sigma per severity. imagecorruptions/corruptions.py `gaussian_blur`; make_cifar_c.py `gaussian_blur`.
GAUSSIAN_BLUR_SIGMAS: dict[str, tuple[float, ...]] = {
    "imagenet": (1, 2, 3, 4, 6),
    "cifar": (0.4, 0.6, 0.7, 0.8, 1),
}

# (disk radius, anti-aliasing Gaussian sigma) per severity. imagecorruptions/corruptions.py `defocus_blur`;
# make_cifar_c.py `defocus_blur`.
DEFOCUS_BLUR_PARAMS: dict[str, tuple[tuple[float, float], ...]] = {
    "imagenet": ((3, 0.1), (4, 0.5), (6, 0.5), (8, 0.5), (10, 0.5)),
    "cifar": ((0.3, 0.4), (0.4, 0.5), (0.5, 0.6), (1, 0.2), (1.5, 0.1)),
}

# Zoom factors per severity, as `np.arange(start, stop, step)` arguments. imagecorruptions/corruptions.py
# `zoom_blur`; make_cifar_c.py `zoom_blur`.
ZOOM_BLUR_RANGES: dict[str, tuple[tuple[float, float, float], ...]] = {
    "imagenet": ((1, 1.11, 0.01), (1, 1.16, 0.01), (1, 1.21, 0.02), (1, 1.26, 0.02), (1, 1.31, 0.03)),
    "cifar": ((1, 1.06, 0.01), (1, 1.11, 0.01), (1, 1.16, 0.01), (1, 1.21, 0.01), (1, 1.26, 0.01)),
}


_CPU_FAST_PATHS = contextvars.ContextVar("cpu_fast_paths", default=True)


@contextlib.contextmanager
def torch_paths_only() -> Iterator[None]:
    """Within this block, CPU tensors take the torch paths that CUDA runs, not the CPU fast paths: to compare the two
    (the fast paths differ by float rounding), or a CPU run with a (fake) CUDA one value for value."""
    token = _CPU_FAST_PATHS.set(False)
    try:
        yield
    finally:
        _CPU_FAST_PATHS.reset(token)


def takes_cpu_fast_path(images: torch.Tensor) -> bool:
    """Whether `images` may take a CPU-only fast path: a float32 or float64 CPU tensor, outside `torch_paths_only`."""
    return (
        _CPU_FAST_PATHS.get()
        and images.device.type == "cpu"
        and images.dtype in (torch.float32, torch.float64)
    )


@functools.cache
def _opencv() -> ModuleType | None:
    """cv2, when OpenCV >= 5 is installed: its warpAffine interpolates at exact source coordinates (4.x rounds them
    to 1/32 pixel), which the fast paths rely on; else None."""
    try:
        import cv2
    except ImportError:
        return None
    return cv2 if int(cv2.__version__.split(".")[0]) >= 5 else None


# OpenCV's thread pool does not survive fork: a forked child (a DataLoader worker) that resizes the pool it inherited
# waits forever on the parent's threads. So the parent winds its pool down to one thread just before every fork,
# restoring its setting afterwards, and a forked child never resizes the pool: it runs OpenCV on one thread.
_opencv_threads_before_fork: list[int] = []
_in_forked_child = False


def _opencv_pool_down_before_fork() -> None:
    cv2 = sys.modules.get("cv2")
    if cv2 is not None and hasattr(cv2, "getNumThreads"):
        _opencv_threads_before_fork.append(cv2.getNumThreads())
        cv2.setNumThreads(1)


def _opencv_pool_back_after_fork() -> None:
    cv2 = sys.modules.get("cv2")
    if cv2 is not None and _opencv_threads_before_fork:
        cv2.setNumThreads(_opencv_threads_before_fork.pop())


def _mark_forked_child() -> None:
    global _in_forked_child
    _in_forked_child = True


os.register_at_fork(
    before=_opencv_pool_down_before_fork,
    after_in_parent=_opencv_pool_back_after_fork,
    after_in_child=_mark_forked_child,
)


def opencv_for(images: torch.Tensor) -> ModuleType | None:
    """cv2, limited to `torch.get_num_threads()` threads, when `images` may take a CPU fast path
    (`takes_cpu_fast_path`) and OpenCV >= 5 is installed; else None, and the caller runs its torch path. The thread
    limit is set per call, so DataLoader workers (1 thread) stay at 1; a forked process keeps the one thread it
    inherits (see `_opencv_pool_down_before_fork`). Threads change no result."""
    cv2 = _opencv()
    if cv2 is None or not takes_cpu_fast_path(images):
        return None
    if not _in_forked_child and cv2.getNumThreads() != torch.get_num_threads():
        cv2.setNumThreads(torch.get_num_threads())
    return cv2


def device_exact_dtype(images: torch.Tensor) -> torch.dtype:
    """The dtype for a convolution or matrix product whose result must not depend on the device: float64 for
    float32 CUDA tensors, since CUDA runs float32 convolutions in TF32 (a 10-bit mantissa) by default, and float32
    matrix products too when the user allows it; the tensor's own dtype elsewhere (float32 on the CPU is IEEE)."""
    return torch.float64 if images.is_cuda and images.dtype == torch.float32 else images.dtype


def _depthwise_conv(
    images: torch.Tensor, kernel: torch.Tensor, padding: tuple[int, int, int, int], mode: str
) -> torch.Tensor:
    """Correlate every channel of (N, C, H, W) `images` with the 2D `kernel` after padding (left, right, top, bottom)."""
    n, c, h, w = images.shape
    work = device_exact_dtype(images)
    flat = F.pad(images.reshape(n * c, 1, h, w).to(work), padding, mode=mode)
    weight = kernel.to(images.device, work)[None, None]
    return F.conv2d(flat, weight).reshape(n, c, h, w).to(images.dtype)


def gaussian_kernel1d(sigma: float, radius: int) -> torch.Tensor:
    """scipy.ndimage's sampled Gaussian: exp(-x^2 / (2 sigma^2)) for x in [-radius, radius], summing to 1."""
    x = torch.arange(-radius, radius + 1, dtype=torch.float64)
    kernel = torch.exp(-0.5 / sigma**2 * x**2)
    return kernel / kernel.sum()


def replicate_blur_matrix(kernel: torch.Tensor, size: int) -> torch.Tensor:
    """The (size, size) matrix of correlating one axis with a centred 1D `kernel` under edge replication.

    Row i holds kernel[k] at column clamp(i + k - radius, 0, size - 1), so `x @ M.T` blurs the last axis exactly as
    padding by replication and correlating, and runs as one matrix product for the whole batch.
    """
    radius = (kernel.numel() - 1) // 2
    rows = torch.arange(size).repeat_interleave(kernel.numel())
    columns = (
        (torch.arange(size)[:, None] + torch.arange(-radius, radius + 1)[None, :])
        .clamp(0, size - 1)
        .flatten()
    )
    matrix = torch.zeros(size, size, dtype=kernel.dtype)
    return matrix.index_put_((rows, columns), kernel.repeat(size), accumulate=True)


def gaussian_filter(
    images: torch.Tensor, sigma: float, truncate: float = 4.0, opencv: bool = False
) -> torch.Tensor:
    """scipy.ndimage.gaussian_filter over the last two axes with mode "nearest", what skimage.filters.gaussian
    runs per channel: a kernel of radius int(truncate * sigma + 0.5), as two matrix products (rows, then columns)
    in `device_exact_dtype`. Any leading shape: (N, C, H, W) images or (N, H, W) maps.

    `opencv=True` lets (N, C, H, W) CPU images take cv2.sepFilter2D (BORDER_REPLICATE is mode "nearest"), one call
    per channel plane (it has no batched form; measured 1.4x (sigma 6) to 7x (sigma 1) faster than the matrix
    products on one thread), summing in the images' dtype: it differs from the matrix products by float rounding only
    (float32: below 1e-6)."""
    kernel = gaussian_kernel1d(sigma, int(truncate * sigma + 0.5))
    height, width = images.shape[-2:]
    cv2 = opencv_for(images) if opencv else None
    if cv2 is not None:
        planes = images.detach().contiguous().view(-1, height, width).numpy()
        filtered = np.empty_like(planes)
        taps = kernel.numpy()
        for plane, out in zip(planes, filtered, strict=True):
            cv2.sepFilter2D(plane, -1, taps, taps, dst=out, borderType=cv2.BORDER_REPLICATE)
        return torch.from_numpy(filtered).view(images.shape)
    work = device_exact_dtype(images)
    along_height = replicate_blur_matrix(kernel, height).to(images.device, work)
    along_width = replicate_blur_matrix(kernel, width).to(images.device, work)
    return (along_height @ images.to(work) @ along_width.T).to(images.dtype)


@register_corruption("gaussian_blur")
def gaussian_blur(
    images: torch.Tensor, severity: int, profile: str, seed: int, sample_ids: torch.Tensor
) -> torch.Tensor:
    """Gaussian blur per channel, as the reference's `skimage.filters.gaussian(x, sigma, multichannel=True)`.

    That is scipy.ndimage.gaussian_filter with truncate=4.0 and mode "nearest": a separable kernel of radius
    int(4 sigma + 0.5), applied along rows and columns with edge-replicating padding, here as two matrix products,
    or on the CPU as cv2.sepFilter2D (`gaussian_filter(opencv=True)`).
    """
    return gaussian_filter(images, GAUSSIAN_BLUR_SIGMAS[profile][severity - 1], opencv=True).clamp(0.0, 1.0)


def cv2_gaussian_kernel1d(ksize: int, sigma: float) -> torch.Tensor:
    """cv2.getGaussianKernel(ksize, sigma) for sigma > 0: exp(-x^2 / (2 sigma^2)), x centred, summing to 1."""
    if sigma <= 0:
        raise ValueError(f"sigma must be positive, got {sigma}.")
    x = torch.arange(ksize, dtype=torch.float64) - (ksize - 1) / 2
    kernel = torch.exp(-0.5 / sigma**2 * x**2)
    return kernel / kernel.sum()


def disk_kernel(radius: float, alias_blur: float) -> torch.Tensor:
    """The reference's `disk(radius, alias_blur)`: a normalised binary disk, anti-aliased by cv2.GaussianBlur.

    The grid spans [-8, 8] (Gaussian ksize 3) for radius <= 8, else [-radius, radius] (ksize 5). cv2.GaussianBlur
    with sigmaY=0 uses sigmaX for both axes and pads with its default border, BORDER_REFLECT_101 ("reflect").
    """
    if radius <= 8:
        grid, ksize = torch.arange(-8, 8 + 1, dtype=torch.float64), 3
    else:
        grid, ksize = torch.arange(-radius, radius + 1, dtype=torch.float64), 5
    aliased = ((grid[:, None] ** 2 + grid[None, :] ** 2) <= radius**2).to(torch.float64)
    aliased = aliased / aliased.sum()
    gauss = cv2_gaussian_kernel1d(ksize, alias_blur)
    pad = ksize // 2
    smoothed = _depthwise_conv(aliased[None, None], gauss[None, :], (pad, pad, 0, 0), "reflect")
    smoothed = _depthwise_conv(smoothed, gauss[:, None], (0, 0, pad, pad), "reflect")
    return smoothed[0, 0]


def fft_length(minimum: int) -> int:
    """The smallest integer >= `minimum` with no prime factor above 11: a length the FFT transforms fast."""
    length = minimum
    while True:
        rest = length
        for prime in (2, 3, 5, 7, 11):
            while rest % prime == 0:
                rest //= prime
        if rest == 1:
            return length
        length += 1


def _reflect_correlate_fft(images: torch.Tensor, kernel: torch.Tensor) -> torch.Tensor:
    """Correlate every channel with an odd square 2D `kernel` under "reflect" padding, by FFT.

    The padded image's circular cross-correlation with the kernel, over a transform at least as large as the
    padded image, equals the plain one on the first H x W outputs (none of them wraps around), and costs
    O(HW log HW) instead of O(HW k^2) for the large defocus disks. A padded side with a prime factor above 11 is
    zero-extended to the next length without one (`fft_length`): 244 = 4 x 61, the padded side at severity 5 at
    224x224, transforms 2x slower than 245 = 5 x 7 x 7.
    """
    pad = kernel.shape[-1] // 2
    height, width = images.shape[-2:]
    padded = F.pad(images, (pad, pad, pad, pad), mode="reflect")
    size = (fft_length(padded.shape[-2]), fft_length(padded.shape[-1]))
    kernel_spectrum = torch.fft.rfft2(kernel.to(images.device, images.dtype), s=size)
    correlated = torch.fft.irfft2(torch.fft.rfft2(padded, s=size) * kernel_spectrum.conj(), s=size)
    return correlated[..., :height, :width]


@register_corruption("defocus_blur")
def defocus_blur(
    images: torch.Tensor, severity: int, profile: str, seed: int, sample_ids: torch.Tensor
) -> torch.Tensor:
    """Defocus blur: each channel correlated with the reference's anti-aliased `disk` kernel.

    The reference applies cv2.filter2D per channel; its default border, BORDER_REFLECT_101, is torch's "reflect".
    """
    radius, alias_blur = DEFOCUS_BLUR_PARAMS[profile][severity - 1]
    return _reflect_correlate_fft(images, disk_kernel(radius, alias_blur)).clamp(0.0, 1.0)


def zoom_factors(profile: str, severity: int) -> list[float]:
    """The reference's zoom factors, `np.arange(start, stop, step)` (numpy's arange rounding included)."""
    return np.arange(*ZOOM_BLUR_RANGES[profile][severity - 1]).tolist()


def clipped_zoom_axis(
    size: int, zoom: float, device: torch.device, trim: str = "first"
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per output index along one axis of the reference's `clipped_zoom`: the lower source index and its weight.

    The references crop ceil(size / zoom) centred pixels, starting at (size - crop) // 2, and zoom them with
    scipy.ndimage.zoom(order=1) to round(crop * zoom) pixels: output index i reads crop coordinate
    i * (crop - 1) / (out - 1) (scipy, grid_mode=False), linearly interpolated. They keep different outputs:
    `trim="first"` the first `size` (imagecorruptions' zoom_blur), `"centred"` `size` pixels starting at
    (out - size) // 2 (make_cifar_c.py), `"none"` all `out` (imagecorruptions' snow, which crops after its blur).
    For zoom < 1.5 the zoomed crop exceeds `size` by at most one pixel, so "first" and "centred" agree.
    """
    crop = math.ceil(size / float(zoom))
    start = (size - crop) // 2
    out = round(crop * zoom)
    if out < size:
        raise ValueError(f"zoom factor {zoom} leaves {out} < {size} pixels; the reference needs zoom >= 1.")
    step = (crop - 1) / (out - 1) if out > 1 else 1.0
    first, count = {"first": (0, size), "centred": ((out - size) // 2, size), "none": (0, out)}[trim]
    coords = torch.arange(first, first + count, dtype=torch.float64, device=device) * step
    lower = coords.floor().clamp(max=max(crop - 2, 0))
    return lower.long() + start, coords - lower


def lerp_along(images: torch.Tensor, dim: int, lower: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """Linear interpolation of `images` along `dim` between indices `lower` and `lower + 1`."""
    upper = (lower + 1).clamp(max=images.shape[dim] - 1)
    shape = [1] * images.ndim
    shape[dim] = -1
    weight = weight.to(images.dtype).reshape(shape)
    low = images.index_select(dim, lower)
    return low + (images.index_select(dim, upper) - low) * weight


def zoom_source_map(size: int, zoom: float) -> tuple[float, float]:
    """(step, start) of the reference's `clipped_zoom` along one axis (`trim="first"`): output index i reads the
    source coordinate start + i * step, the affine form of `clipped_zoom_axis`."""
    crop = math.ceil(size / float(zoom))
    out = round(crop * zoom)
    return ((crop - 1) / (out - 1) if out > 1 else 1.0), float((size - crop) // 2)


def _zoom_sum_opencv(cv2: ModuleType, images: torch.Tensor, factors: list[float]) -> torch.Tensor:
    """images + sum_z clipped_zoom(images, z), the zooms added in order, on the CPU.

    Each zoom is cv2.warpAffine with the inverse map (x, y) -> (start_x + step_x x, start_y + step_y y) and bilinear
    interpolation: OpenCV >= 5 interpolates at these exact coordinates, so it is the reference's order-1 zoom up to
    float rounding (below 1e-6), with no crop or copy. One call per image and zoom (warpAffine has no batched form;
    measured 10x faster than the torch gathers on one thread); the images go channels-last once for it.
    """
    height, width = images.shape[-2:]
    channels_last = images.detach().permute(0, 2, 3, 1).contiguous().numpy()
    total = channels_last.copy()
    zoomed = np.empty_like(channels_last)
    flags = cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP
    for zoom in factors:
        (step_y, start_y), (step_x, start_x) = zoom_source_map(height, zoom), zoom_source_map(width, zoom)
        matrix = np.array([[step_x, 0.0, start_x], [0.0, step_y, start_y]])
        for image, out in zip(channels_last, zoomed, strict=True):
            cv2.warpAffine(
                image, matrix, (width, height), dst=out, flags=flags, borderMode=cv2.BORDER_REPLICATE
            )
        total += zoomed
    return torch.from_numpy(total).permute(0, 3, 1, 2).contiguous()


@register_corruption("zoom_blur")
def zoom_blur(
    images: torch.Tensor, severity: int, profile: str, seed: int, sample_ids: torch.Tensor
) -> torch.Tensor:
    """Zoom blur: the image averaged with centre crops of itself zoomed by each of the reference's factors.

    As the reference: (x + sum_z clipped_zoom(x, z)) / (len(z) + 1), each zoom being bilinear (scipy order 1)
    and separable, so one gather-and-lerp per axis per factor, for the whole batch. On the CPU each zoom is one
    cv2.warpAffine per image instead (`_zoom_sum_opencv`).
    """
    height, width = images.shape[-2:]
    factors = zoom_factors(profile, severity)
    cv2 = opencv_for(images)
    if cv2 is not None and images.shape[1] <= 4:  # OpenCV's exact interpolation stops at 4 channels
        return _zoom_sum_opencv(cv2, images, factors).div_(len(factors) + 1).clamp_(0.0, 1.0)
    total = images.clone()
    for zoom in factors:
        rows = clipped_zoom_axis(height, zoom, images.device)
        cols = clipped_zoom_axis(width, zoom, images.device)
        total += lerp_along(lerp_along(images, -2, *rows), -1, *cols)
    return (total / (len(factors) + 1)).clamp(0.0, 1.0)
