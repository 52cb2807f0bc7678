"""The reference ImageNet-C implementation (`imagecorruptions` 1.1.2), made importable on today's stack.

It needs setuptools < 81 (it imports pkg_resources), and two shims applied before its import: scikit-image's
removed `gaussian(..., multichannel=True)` (now `channel_axis=-1`) and NumPy 2's removed `np.float_`. Import
failures are errors, never skips: fidelity tests must not pass silently without their reference.
"""

import numpy as np
import skimage.filters
import torch
import torch.nn.functional as F

_original_gaussian = skimage.filters.gaussian


def _gaussian_with_multichannel(image, *args, multichannel=None, **kwargs):
    if multichannel is not None:
        kwargs.setdefault("channel_axis", -1 if multichannel else None)
    return _original_gaussian(image, *args, **kwargs)


skimage.filters.gaussian = _gaussian_with_multichannel
if not hasattr(np, "float_"):
    np.float_ = np.float64

import imagecorruptions  # noqa: E402  (after the shims above)


def reference_corrupt(images: torch.Tensor, name: str, severity: int) -> torch.Tensor:
    """Run the reference on a uint8 batch (N, 3, H, W), one image at a time, and return a uint8 batch."""
    outputs = [
        imagecorruptions.corrupt(image.permute(1, 2, 0).numpy(), corruption_name=name, severity=severity)
        for image in images.cpu()
    ]
    return torch.from_numpy(np.stack(outputs)).permute(0, 3, 1, 2).contiguous()


def mean_ssim_psnr(clean: torch.Tensor, corrupted: torch.Tensor) -> tuple[float, float]:
    """Mean SSIM and mean PSNR (dB) between clean and corrupted uint8 batches (N, 3, H, W), image by image."""
    from skimage.metrics import peak_signal_noise_ratio, structural_similarity

    ssims, psnrs = [], []
    for a, b in zip(clean.cpu(), corrupted.cpu(), strict=True):
        a_np, b_np = a.permute(1, 2, 0).numpy(), b.permute(1, 2, 0).numpy()
        ssims.append(structural_similarity(a_np, b_np, channel_axis=-1, data_range=255))
        psnrs.append(peak_signal_noise_ratio(a_np, b_np, data_range=255) if (a_np != b_np).any() else 100.0)
    return float(np.mean(ssims)), float(np.mean(psnrs))


def reference_statistics(images: torch.Tensor, name: str, severity: int, seeds: range) -> np.ndarray:
    """(len(seeds), 2) array of the reference's (mean SSIM, mean PSNR) on `images`, one row per NumPy seed."""
    rows = []
    for seed in seeds:
        np.random.seed(seed)
        rows.append(mean_ssim_psnr(images, reference_corrupt(images, name, severity)))
    return np.array(rows)


def assert_statistics_match(
    ours: np.ndarray, reference: np.ndarray, ssim_floor: float = 0.03, psnr_floor: float = 1.0
) -> None:
    """Our mean SSIM / PSNR over seeds lie within the reference's mean, +- max(its spread over seeds, the floor).

    The spread is the reference's own range (max - min) over its seeds: random corruptions vary from seed to
    seed in the reference too, and a faithful re-implementation varies as much.
    """
    ours_mean, ref_mean = ours.mean(0), reference.mean(0)
    spread = reference.max(0) - reference.min(0)
    tolerance = np.maximum(spread, [ssim_floor, psnr_floor])
    assert abs(ours_mean[0] - ref_mean[0]) <= tolerance[0], (
        f"mean SSIM {ours_mean[0]:.4f} vs reference {ref_mean[0]:.4f} (tolerance {tolerance[0]:.4f})"
    )
    assert abs(ours_mean[1] - ref_mean[1]) <= tolerance[1], (
        f"mean PSNR {ours_mean[1]:.2f} dB vs reference {ref_mean[1]:.2f} dB (tolerance {tolerance[1]:.2f})"
    )


def photo(image: np.ndarray, size: tuple[int, int]) -> torch.Tensor:
    """A (1, 3, H, W) uint8 photo, resized with antialiasing."""
    tensor = torch.from_numpy(np.ascontiguousarray(image[..., :3])).permute(2, 0, 1)[None].double()
    resized = F.interpolate(tensor, size=size, mode="bilinear", antialias=True, align_corners=False)
    return resized.round().clamp(0, 255).to(torch.uint8)


def difference(ours: torch.Tensor, reference: torch.Tensor) -> tuple[float, int]:
    """Mean and max absolute difference of two uint8 batches, on the 0-255 scale."""
    assert ours.shape == reference.shape and ours.dtype == reference.dtype == torch.uint8
    difference = (ours.int() - reference.int()).abs()
    return difference.float().mean().item(), int(difference.max())


def to_uint8(images: torch.Tensor) -> torch.Tensor:
    """Float [0, 1] images -> uint8, truncated as the reference's `np.uint8(x * 255)`."""
    return (images.clamp(0, 1) * 255).floor().to(torch.uint8)
