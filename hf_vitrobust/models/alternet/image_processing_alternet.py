# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The image processor saved beside an AlterNet checkpoint.

The official evaluation resizes the shorter side to `image_size / crop_pct` (bilinear) and center-crops
`image_size` (ImageNet: Resize(256), CenterCrop(224), crop_pct 0.875; CIFAR: 32x32 as is, crop_pct 1.0).
transformers' ConvNext processor implements exactly that, so a saved AlterNet folder works with
`pipeline("image-classification")` and `AutoImageProcessor` without custom code.
"""

from transformers import ConvNextImageProcessor
from transformers.image_utils import IMAGENET_DEFAULT_MEAN, IMAGENET_DEFAULT_STD, PILImageResampling

from .configuration_alternet import AlterNetConfig

# transformers' ImageNet statistics (the values of `hf_vitrobust.constants`, which this file must not import: it runs
# without hf_vitrobust); a test checks that the two agree.
IMAGENET_MEAN: tuple[float, float, float] = tuple(IMAGENET_DEFAULT_MEAN)
IMAGENET_STD: tuple[float, float, float] = tuple(IMAGENET_DEFAULT_STD)
# The official CIFAR-100 statistics (how-do-vits-work, ops/datasets.py).
CIFAR100_MEAN = (0.5071, 0.4867, 0.4408)
CIFAR100_STD = (0.2675, 0.2565, 0.2761)


def alternet_image_processor(
    config: AlterNetConfig,
    image_mean: tuple[float, float, float] = IMAGENET_MEAN,
    image_std: tuple[float, float, float] = IMAGENET_STD,
    crop_pct: float | None = None,
) -> ConvNextImageProcessor:
    """Evaluation preprocessing for `config.image_size`; crop_pct defaults to 0.875 at >= 224 px and 1.0 below."""
    if crop_pct is None:
        crop_pct = 0.875 if config.image_size >= 224 else 1.0
    if not 0.0 < crop_pct <= 1.0:
        raise ValueError(f"crop_pct must be in (0, 1], got {crop_pct}.")
    return ConvNextImageProcessor(
        size={"shortest_edge": config.image_size},
        crop_pct=crop_pct,
        resample=PILImageResampling.BILINEAR,
        image_mean=list(image_mean),
        image_std=list(image_std),
        do_rescale=True,
        do_normalize=True,
    )


__all__ = ["CIFAR100_MEAN", "CIFAR100_STD", "IMAGENET_MEAN", "IMAGENET_STD", "alternet_image_processor"]
