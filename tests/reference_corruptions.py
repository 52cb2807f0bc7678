"""The reference ImageNet-C implementation (`imagecorruptions` 1.1.2), made importable on today's stack.

It needs setuptools < 81 (it imports pkg_resources), and two shims applied before its import: scikit-image's
removed `gaussian(..., multichannel=True)` (now `channel_axis=-1`) and NumPy 2's removed `np.float_`. Import
failures are errors, never skips: fidelity tests must not pass silently without their reference.
"""

import numpy as np
import skimage.filters
import torch

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
