# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The geometric corruption of ImageNet-C: `elastic_transform`, batched on tensors.

"imagenet" profile: `imagecorruptions` 1.1.2 (`corruptions.py`), which scales its parameters by the image size and
applies no affine warp: two displacement fields (uniform noise in +-0.005 H, smoothed by scipy's Gaussian filter with
sigma = 0.01 (H, W), truncate=3 and mode "reflect", times alpha) move every pixel, resampled bilinearly with
scipy's `map_coordinates(order=1, mode="reflect")`.

"cifar" profile: make_cifar_c.py of hendrycks/robustness, which first warps the image by a random affine map (three
points of a centred square moved uniformly, OpenCV's `getAffineTransform` and `warpAffine` with bilinear
interpolation and BORDER_REFLECT_101), then displaces it as above with uniform noise in +-1 and its own
(alpha, sigma) table.

The reference's NumPy draws (`np.random.uniform`) come here from the counter-based streams of `randomness.py`.
"""

from types import ModuleType

import numpy as np
import torch

from .base import register_corruption
from .blur import gaussian_kernel1d, opencv_for
from .randomness import uniform

# alpha (displacement scale) per severity; sigma = 0.01 * (H, W), noise amplitude 0.005 * H.
# Source: imagecorruptions 1.1.2 corruptions.py `elastic_transform`.
ELASTIC_IMAGENET_ALPHAS: tuple[float, ...] = (250 * 0.05, 250 * 0.065, 250 * 0.085, 250 * 0.1, 250 * 0.12)

# make_cifar_c.py's image size constant (IMSIZE = 32), which its table is written in.
CIFAR_IMSIZE = 32
# (alpha, sigma, affine perturbation) per severity. Source: make_cifar_c.py `elastic_transform`.
ELASTIC_CIFAR_PARAMS: tuple[tuple[float, float, float], ...] = (
    (CIFAR_IMSIZE * 0, CIFAR_IMSIZE * 0, CIFAR_IMSIZE * 0.08),
    (CIFAR_IMSIZE * 0.05, CIFAR_IMSIZE * 0.2, CIFAR_IMSIZE * 0.07),
    (CIFAR_IMSIZE * 0.08, CIFAR_IMSIZE * 0.06, CIFAR_IMSIZE * 0.06),
    (CIFAR_IMSIZE * 0.1, CIFAR_IMSIZE * 0.04, CIFAR_IMSIZE * 0.05),
    (CIFAR_IMSIZE * 0.1, CIFAR_IMSIZE * 0.03, CIFAR_IMSIZE * 0.03),
)


def reflect_index(index: torch.Tensor, size: int) -> torch.Tensor:
    """scipy.ndimage's "reflect" (half-sample symmetric, d c b a | a b c d | d c b a) on integer indices."""
    index = index.remainder(2 * size)
    return torch.where(index >= size, 2 * size - 1 - index, index)


def reflect101_index(index: torch.Tensor, size: int) -> torch.Tensor:
    """OpenCV's BORDER_REFLECT_101 (whole-sample symmetric, d c b | a b c d | c b a) on integer indices."""
    if size == 1:
        return torch.zeros_like(index)
    index = index.remainder(2 * size - 2)
    return torch.where(index >= size, 2 * size - 2 - index, index)


def reflect_blur_matrix(kernel: torch.Tensor, size: int) -> torch.Tensor:
    """The (size, size) matrix of correlating one axis with a centred 1D `kernel` under scipy's "reflect" padding.

    Row i holds kernel[k] at column reflect(i + k - radius); `x @ M.T` filters the last axis as
    scipy.ndimage.correlate1d(mode="reflect") does, for any radius (repeated reflections included).
    """
    radius = (kernel.numel() - 1) // 2
    rows = torch.arange(size).repeat_interleave(kernel.numel())
    columns = reflect_index(torch.arange(size)[:, None] + torch.arange(-radius, radius + 1)[None, :], size)
    matrix = torch.zeros(size, size, dtype=kernel.dtype)
    return matrix.index_put_((rows, columns.flatten()), kernel.repeat(size), accumulate=True)


def smooth_field(noise: torch.Tensor, sigma_rows: float, sigma_cols: float) -> torch.Tensor:
    """skimage `gaussian(noise, (sigma_rows, sigma_cols), mode="reflect", truncate=3)` on a batch (N, H, W), in
    float64. On the CPU, for kernels shorter than the image, one cv2.sepFilter2D per map (BORDER_REFLECT is scipy's
    "reflect"; no batched form, measured 10x faster than the matrix products), equal to them up to float64 rounding."""
    height, width = noise.shape[-2:]
    field = noise.double()
    radii = (int(3.0 * sigma_rows + 0.5), int(3.0 * sigma_cols + 0.5))
    cv2 = opencv_for(field)
    if cv2 is not None and sigma_rows > 0 and sigma_cols > 0 and radii[0] < height and radii[1] < width:
        maps = field.contiguous().view(-1, height, width).numpy()
        smoothed = np.empty_like(maps)
        along_rows = gaussian_kernel1d(sigma_rows, radii[0]).numpy()
        along_cols = gaussian_kernel1d(sigma_cols, radii[1]).numpy()
        for noise_map, out in zip(maps, smoothed, strict=True):
            cv2.sepFilter2D(noise_map, -1, along_cols, along_rows, dst=out, borderType=cv2.BORDER_REFLECT)
        return torch.from_numpy(smoothed).view(field.shape)
    if sigma_cols > 0:
        kernel = gaussian_kernel1d(sigma_cols, int(3.0 * sigma_cols + 0.5))
        field = field @ reflect_blur_matrix(kernel, width).to(noise.device).T
    if sigma_rows > 0:
        kernel = gaussian_kernel1d(sigma_rows, int(3.0 * sigma_rows + 0.5))
        field = reflect_blur_matrix(kernel, height).to(noise.device) @ field
    return field


def _bilinear_gather(
    images: torch.Tensor, rows: torch.Tensor, cols: torch.Tensor, border: str
) -> torch.Tensor:
    """Sample `images` (N, C, H, W) at float64 source coordinates `rows`, `cols` (N, H', W') bilinearly; the four
    neighbours' indices are folded into the image by `border` ("reflect": scipy, "reflect101": OpenCV)."""
    n, c, height, width = images.shape
    fold = reflect_index if border == "reflect" else reflect101_index
    row0, col0 = rows.floor(), cols.floor()
    row_weight = (rows - row0).to(images.dtype)[:, None]
    col_weight = (cols - col0).to(images.dtype)[:, None]
    row0, col0 = row0.long(), col0.long()
    flat = images.reshape(n, c, height * width)
    # Each neighbour's folded row offset and column, computed once and shared by the two taps that use it.
    upper, lower = fold(row0, height) * width, fold(row0 + 1, height) * width
    left, right = fold(col0, width), fold(col0 + 1, width)

    def tap(row_offset: torch.Tensor, col: torch.Tensor) -> torch.Tensor:
        index = (row_offset + col).reshape(n, 1, -1).expand(n, c, -1)
        return flat.gather(2, index).reshape(n, c, *rows.shape[1:])

    left_weight = 1 - col_weight
    top = tap(upper, left) * left_weight + tap(upper, right) * col_weight
    bottom = tap(lower, left) * left_weight + tap(lower, right) * col_weight
    return top * (1 - row_weight) + bottom * row_weight


def affine_from_points(source: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """OpenCV's `getAffineTransform` for a batch: the (N, 2, 3) maps taking three (x, y) `source` points to `target`
    ((N, 3, 2) each), by one batched 3x3 linear solve in float64."""
    system = torch.cat([source.double(), torch.ones_like(source[..., :1], dtype=torch.float64)], dim=-1)
    return torch.linalg.solve(system, target.double()).transpose(1, 2)


def warp_affine_reflect101(images: torch.Tensor, matrices: torch.Tensor) -> torch.Tensor:
    """OpenCV's `warpAffine(image, M, (W, H), borderMode=BORDER_REFLECT_101)` (bilinear) for a batch of (N, 2, 3) M.

    As OpenCV: output pixel (x, y) reads the input at M^-1 (x, y, 1) (M inverted as `invertAffineTransform`), its
    four neighbours folded by BORDER_REFLECT_101. The source coordinates are exact, as in OpenCV 5.0's warpAffine
    (older versions round them to 1/32 pixel, a difference of at most about 0.02 on the 0-1 scale).
    """
    height, width = images.shape[-2:]
    m = matrices.double()
    determinant = m[:, 0, 0] * m[:, 1, 1] - m[:, 0, 1] * m[:, 1, 0]
    inverse_det = torch.where(determinant != 0, 1.0 / determinant, torch.zeros_like(determinant))
    a11, a22 = m[:, 1, 1] * inverse_det, m[:, 0, 0] * inverse_det
    a12, a21 = -m[:, 0, 1] * inverse_det, -m[:, 1, 0] * inverse_det
    b1 = -a11 * m[:, 0, 2] - a12 * m[:, 1, 2]
    b2 = -a21 * m[:, 0, 2] - a22 * m[:, 1, 2]
    inverse = torch.stack([torch.stack([a11, a12, b1], -1), torch.stack([a21, a22, b2], -1)], 1)

    xs = torch.arange(width, dtype=torch.float64, device=images.device)[None, None, :]
    ys = torch.arange(height, dtype=torch.float64, device=images.device)[None, :, None]
    source_x = (
        inverse[:, 0, 0, None, None] * xs + inverse[:, 0, 1, None, None] * ys + inverse[:, 0, 2, None, None]
    )
    source_y = (
        inverse[:, 1, 0, None, None] * xs + inverse[:, 1, 1, None, None] * ys + inverse[:, 1, 2, None, None]
    )
    return _bilinear_gather(images, source_y, source_x, "reflect101")


def elastic_transform_with_draws(
    images: torch.Tensor,
    severity: int,
    profile: str,
    noise_x: torch.Tensor,
    noise_y: torch.Tensor,
    affine_noise: torch.Tensor | None = None,
) -> torch.Tensor:
    """The reference's `elastic_transform` given its uniform draws in [0, 1): `noise_x`, `noise_y` (N, H, W) for
    the displacement fields and, for "cifar", `affine_noise` (N, 3, 2) for the three moved points. The draws may
    live on any device; they are moved to the images'."""
    height, width = images.shape[-2:]
    device = images.device
    noise_x, noise_y = noise_x.to(device), noise_y.to(device)
    if affine_noise is not None:
        affine_noise = affine_noise.to(device)
    if profile == "cifar":
        alpha, sigma, affine = ELASTIC_CIFAR_PARAMS[severity - 1]
        sigma_rows = sigma_cols = sigma
        low = -1.0
        # The centred square: make_cifar_c.py's float32 (H, W) // 2 and min(H, W) // 3, as (x, y) points.
        center_x, center_y, half = float(height // 2), float(width // 2), float(min(height, width) // 3)
        source = torch.tensor(
            [
                [center_x + half, center_y + half],
                [center_x + half, center_y - half],
                [center_x - half, center_y - half],
            ],
            dtype=torch.float32,
            device=device,
        ).expand(images.shape[0], 3, 2)
        moves = (-affine + 2 * affine * affine_noise.double()).float()
        images = warp_affine_reflect101(images, affine_from_points(source, source + moves))
    else:
        alpha = ELASTIC_IMAGENET_ALPHAS[severity - 1]
        sigma_rows, sigma_cols = height * 0.01, width * 0.01
        low = -height * 0.005

    def displacement(noise: torch.Tensor) -> torch.Tensor:
        field = smooth_field(low - 2 * low * noise.double(), sigma_rows, sigma_cols) * alpha
        return field.float().double()  # the reference's .astype(np.float32)

    rows = torch.arange(height, dtype=torch.float64, device=device)[None, :, None] + displacement(noise_y)
    cols = torch.arange(width, dtype=torch.float64, device=device)[None, None, :] + displacement(noise_x)
    cv2 = opencv_for(images)
    if cv2 is not None and images.shape[1] <= 4:  # OpenCV's exact interpolation stops at 4 channels
        return _remap_reflect_opencv(cv2, images, rows, cols).clamp_(0.0, 1.0)
    return _bilinear_gather(images, rows, cols, "reflect").clamp(0.0, 1.0)


def _remap_reflect_opencv(
    cv2: ModuleType, images: torch.Tensor, rows: torch.Tensor, cols: torch.Tensor
) -> torch.Tensor:
    """`_bilinear_gather(images, rows, cols, "reflect")` on the CPU: cv2.remap, bilinear, BORDER_REFLECT (scipy's
    "reflect" on the neighbours' indices), one call per image (no batched form; measured 10x faster than the four
    torch gathers on one thread). OpenCV >= 5 interpolates at the exact map coordinates, but the maps are float32:
    a source coordinate below 256 moves by at most 2**-17 pixel, so a value by at most 8e-6."""
    channels_last = images.detach().permute(0, 2, 3, 1).contiguous().numpy()
    map_x, map_y = cols.float().numpy(), rows.float().numpy()
    sampled = np.empty_like(channels_last)
    for image, x, y, out in zip(channels_last, map_x, map_y, sampled, strict=True):
        cv2.remap(image, x, y, cv2.INTER_LINEAR, dst=out, borderMode=cv2.BORDER_REFLECT)
    return torch.from_numpy(sampled).permute(0, 3, 1, 2).contiguous()


@register_corruption("elastic_transform")
def elastic_transform(
    images: torch.Tensor, severity: int, profile: str, seed: int, sample_ids: torch.Tensor
) -> torch.Tensor:
    """Elastic transform (see the module docstring), with uniform draws from the streams
    "elastic_transform/affine", "elastic_transform/dx" and "elastic_transform/dy"."""
    height, width = images.shape[-2:]
    affine_noise = uniform(seed, sample_ids, "elastic_transform/affine", (3, 2), torch.float64)
    noise_x = uniform(seed, sample_ids, "elastic_transform/dx", (height, width), torch.float64)
    noise_y = uniform(seed, sample_ids, "elastic_transform/dy", (height, width), torch.float64)
    return elastic_transform_with_draws(images, severity, profile, noise_x, noise_y, affine_noise)
