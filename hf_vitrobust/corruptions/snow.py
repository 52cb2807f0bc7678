# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The `snow` corruption of ImageNet-C (Hendrycks & Dietterich, ICLR 2019), batched on tensors.

The "imagenet" profile follows `snow` of the reference implementation (`imagecorruptions` 1.1.2, `corruptions.py`):
a Gaussian snow layer per image, zoomed up from its centre (`clipped_zoom`), thresholded, motion-blurred along a
random direction, quantised to uint8 levels and cropped to the image; the image is brightened towards its grey
level and the snow layer is added twice, once rotated by 180 degrees. The randomness (the layer and the blur angle)
is drawn from the counter-based per-sample streams of `randomness.py` instead of NumPy's global generator.

The "cifar" profile follows `snow` of make_cifar_c.py (hendrycks/robustness) with its parameters: there
`clipped_zoom` trims the zoomed layer centred, and the layer is stored as a uint8 PNG (truncated) before
ImageMagick's motion blur (Wand), whose 8-bit result is read back. This package does not depend on ImageMagick: the
blur is imagecorruptions' NumPy re-implementation of ImageMagick's motion blur (as for `motion_blur`), applied
between the same two uint8 quantisations.
"""

import torch

from .base import register_corruption
from .blur import clipped_zoom_axis, lerp_along
from .motion_glass import motion_blur_with_angles
from .randomness import normal, uniform

# (loc, scale, zoom, threshold, blur radius, blur sigma, image blend) per severity.
# imagenet: imagecorruptions/corruptions.py `snow`; cifar: ImageNet-C/create_c/make_cifar_c.py `snow`.
SNOW_PARAMS: dict[str, tuple[tuple[float, float, float, float, int, int, float], ...]] = {
    "imagenet": (
        (0.1, 0.3, 3, 0.5, 10, 4, 0.8),
        (0.2, 0.3, 2, 0.5, 12, 4, 0.7),
        (0.55, 0.3, 4, 0.9, 12, 8, 0.7),
        (0.55, 0.3, 4.5, 0.85, 12, 8, 0.65),
        (0.55, 0.3, 2.5, 0.85, 12, 12, 0.55),
    ),
    "cifar": (
        (0.1, 0.2, 1, 0.6, 8, 3, 0.95),
        (0.1, 0.2, 1, 0.5, 10, 4, 0.9),
        (0.15, 0.3, 1.75, 0.55, 10, 4, 0.9),
        (0.25, 0.3, 2.25, 0.6, 12, 6, 0.85),
        (0.3, 0.3, 1.25, 0.65, 14, 12, 0.8),
    ),
}

# cv2.cvtColor(COLOR_RGB2GRAY) weights of red, green and blue.
GREY_WEIGHTS = (0.299, 0.587, 0.114)


def snow_layer_noise(seed: int, sample_ids: torch.Tensor, height: int, width: int) -> torch.Tensor:
    """(N, H, W) float64 standard normal draws of the snow layer, the reference's `np.random.normal(size=(H, W))`."""
    return normal(seed, sample_ids, "snow/layer", (height, width), torch.float64)


def snow_angles(seed: int, sample_ids: torch.Tensor) -> torch.Tensor:
    """(N,) float64 motion-blur angles in degrees, U(-135, -45) as the reference's `np.random.uniform(-135, -45)`."""
    return uniform(seed, sample_ids, "snow/angle", (), torch.float64) * 90.0 - 135.0


def snow_with_draws(
    images: torch.Tensor, severity: int, profile: str, noise: torch.Tensor, angles: torch.Tensor
) -> torch.Tensor:
    """The reference's `snow` given its random draws: `noise` (N, H, W) standard normal, `angles` (N,) degrees.

    Steps: layer = loc + scale * noise; `clipped_zoom` by the zoom factor (bilinear, separable); values below the
    threshold set to 0 and the layer clipped to [0, 1]; motion blur of the single-channel layer with the table's
    radius and sigma along the angle; quantised to uint8 levels and cropped to (H, W). The image is blended with
    max(x, 1.5 grey + 0.5) and the result is clip(x + layer + layer rotated by 180 degrees, 0, 1). On CPU tensors
    the motion blur sums its shifted copies directly, as the reference does (`motion_blur_with_angles`'
    `tap_sum_on_cpu`), instead of the FFT that other devices run.
    """
    loc, scale, zoom, threshold, radius, sigma, blend = SNOW_PARAMS[profile][severity - 1]
    height, width = images.shape[-2:]
    device = images.device
    cifar = profile == "cifar"
    layer = (noise.to(device, torch.float64) * scale + loc)[:, None]  # (N, 1, H, W), float64 as NumPy's draws
    layer = lerp_along(layer, -2, *clipped_zoom_axis(height, zoom, device, "centred" if cifar else "none"))
    layer = lerp_along(layer, -1, *clipped_zoom_axis(width, zoom, device, "centred" if cifar else "none"))
    layer = torch.where(layer < threshold, 0.0, layer).clamp(0.0, 1.0)
    if cifar:  # make_cifar_c.py hands the layer to ImageMagick as an 8-bit PNG: np.uint8(layer * 255)
        layer = torch.floor(layer * 255.0) / 255.0
    layer = motion_blur_with_angles(layer, radius, sigma, angles.to(device), tap_sum_on_cpu=True)
    layer = (torch.round(layer * 255.0) / 255.0)[..., :height, :width]

    x = images
    red, green, blue = x.unbind(1)
    grey = (GREY_WEIGHTS[0] * red + GREY_WEIGHTS[1] * green + GREY_WEIGHTS[2] * blue)[:, None]
    # blend * x + (1 - blend) * max(x, 1.5 grey + 0.5), then + layer + rotated layer in float64 (the reference adds
    # the float64 layer to the float32 image), each step in place on fresh buffers, in the same order.
    x = (blend * x).add_(torch.maximum(x, grey.mul_(1.5).add_(0.5)).mul_(1 - blend))
    out = x.double().add_(layer).add_(layer.flip(-2, -1))
    return out.clamp_(0.0, 1.0).to(images.dtype)


@register_corruption("snow")
def snow(
    images: torch.Tensor, severity: int, profile: str, seed: int, sample_ids: torch.Tensor
) -> torch.Tensor:
    """Snow: a zoomed, thresholded, motion-blurred Gaussian layer over a brightened image, as the reference."""
    height, width = images.shape[-2:]
    noise = snow_layer_noise(seed, sample_ids, height, width)
    return snow_with_draws(images, severity, profile, noise, snow_angles(seed, sample_ids))


__all__ = ["SNOW_PARAMS", "snow", "snow_angles", "snow_layer_noise", "snow_with_draws"]
