# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Colour corruptions of ImageNet-C (Hendrycks & Dietterich, ICLR 2019): brightness, contrast and saturate.

Batched re-implementations of the reference functions (the `imagecorruptions` package for the "imagenet" profile,
`make_cifar_c.py` of hendrycks/robustness for the "cifar" profile). Brightness and saturate edit one channel of
scikit-image's HSV colour space (`rgb2hsv`, `hsv2rgb`, which the reference uses, including their conventions for
grey (delta == 0) and black (max == 0) pixels); each is computed as the per-pixel scaling of RGB that the HSV round
trip amounts to, in 8-bit levels, exact before the truncation for uint8 input, with a uint8 CPU route that skips
the float conversions. `rgb_to_hsv` and `hsv_to_rgb` (used by ImageNet-P's brightness) follow scikit-image.
"""

import torch

from .base import register_corruption

# Added to the HSV value channel. imagenet: imagecorruptions/corruptions.py `brightness`;
# cifar: ImageNet-C/create_c/make_cifar_c.py `brightness`.
BRIGHTNESS = {
    "imagenet": (0.1, 0.2, 0.3, 0.4, 0.5),
    "cifar": (0.05, 0.1, 0.15, 0.2, 0.3),
}

# Factor on each channel's deviation from its mean. imagenet: imagecorruptions/corruptions.py `contrast`;
# cifar: make_cifar_c.py `contrast`.
CONTRAST = {
    "imagenet": (0.4, 0.3, 0.2, 0.1, 0.05),
    "cifar": (0.75, 0.5, 0.4, 0.3, 0.15),
}

# (scale, shift) of the HSV saturation channel. imagenet: imagecorruptions/corruptions.py `saturate`;
# cifar: make_cifar_c.py `saturate`.
SATURATE = {
    "imagenet": ((0.3, 0.0), (0.1, 0.0), (2.0, 0.0), (5.0, 0.1), (20.0, 0.2)),
    "cifar": ((0.3, 0.0), (0.1, 0.0), (1.5, 0.0), (2.0, 0.1), (2.5, 0.2)),
}

# For each sextant of hue (0..5), which of (v, t, p, q) becomes red, green and blue; as skimage's `hsv2rgb`.
_SEXTANT_TO_CHANNELS = ((0, 1, 2), (3, 0, 2), (2, 0, 1), (2, 3, 0), (1, 2, 0), (0, 2, 3))


def rgb_to_hsv(images: torch.Tensor) -> torch.Tensor:
    """RGB (N, 3, H, W) in [0, 1] -> HSV (N, 3, H, W), each channel in [0, 1], as skimage's `rgb2hsv`.

    Value is the largest channel, saturation is (max - min) / max, and hue is 0 where max == min (grey and black
    pixels). Where several channels are the largest, blue's hue formula wins over green's over red's.
    """
    red, green, blue = images.unbind(1)
    value = images.amax(1)
    delta = value - images.amin(1)
    grey = delta == 0
    safe_delta = torch.where(grey, torch.ones_like(delta), delta)
    safe_value = torch.where(grey, torch.ones_like(value), value)  # max == 0 implies delta == 0
    saturation = torch.where(grey, torch.zeros_like(delta), delta / safe_value)
    hue = (green - blue) / safe_delta
    hue = torch.where(green == value, 2.0 + (blue - red) / safe_delta, hue)
    hue = torch.where(blue == value, 4.0 + (red - green) / safe_delta, hue)
    hue = torch.remainder(hue / 6.0, 1.0)
    hue = torch.where(grey, torch.zeros_like(hue), hue)
    return torch.stack((hue, saturation, value), dim=1)


def hsv_to_rgb(hsv: torch.Tensor) -> torch.Tensor:
    """HSV (N, 3, H, W) -> RGB (N, 3, H, W), as skimage's `hsv2rgb`: pick (v, t, p, q) by the sextant of hue."""
    hue, saturation, value = hsv.unbind(1)
    sextant = torch.floor(hue * 6.0)
    fraction = hue * 6.0 - sextant
    p = value * (1.0 - saturation)
    q = value * (1.0 - fraction * saturation)
    t = value * (1.0 - (1.0 - fraction) * saturation)
    candidates = torch.stack((value, t, p, q), dim=1)
    table = torch.tensor(_SEXTANT_TO_CHANNELS, device=hsv.device)
    choice = table[torch.remainder(sextant.long(), 6)].permute(0, 3, 1, 2)
    return candidates.gather(1, choice)


def _brightness_levels(severity: int, profile: str) -> float:
    """The brightness shift of the HSV value channel, in 8-bit levels (a multiple of 1/4, exact in float32)."""
    return BRIGHTNESS[profile][severity - 1] * 255.0


def _brightness_uint8(
    images: torch.Tensor, severity: int, profile: str, seed: int, sample_ids: torch.Tensor
) -> torch.Tensor:
    """`brightness` on uint8 levels: floor(C * V' / V) for each channel level C, computed as C * (V' / V)
    with the ratio nudged up by 2^-20 so that float rounding never lands below an exact integer.

    V' / V has a denominator of at most 4 * 255, so a non-integer result is at least 1/1020 from the next
    integer, far more than the nudge (< 0.0003 levels at 255): the floor is exact, as in `brightness`.
    """
    value = images.amax(1)
    new_value = (value.float() + _brightness_levels(severity, profile)).clamp_(max=255.0)
    ratio = new_value.div_(value.clamp(min=1)).mul_(1.0 + 2.0**-20)
    out = images.float().mul_(ratio.unsqueeze(1)).to(torch.int16).to(torch.uint8)
    if value.numel() and value.min() == 0:  # black pixels (C = V = 0 above) become grey V' = the shift
        black_level = int(_brightness_levels(severity, profile))
        out.bitwise_or_(value.eq(0).to(torch.uint8).mul_(black_level).unsqueeze(1))
    return out


@register_corruption("brightness", uint8_fn=_brightness_uint8)
def brightness(
    images: torch.Tensor, severity: int, profile: str, seed: int, sample_ids: torch.Tensor
) -> torch.Tensor:
    """Brighten: add a constant to the HSV value channel (clipped to [0, 1]) and convert back to RGB.

    skimage's `hsv2rgb(rgb2hsv(x))` with the value V raised to V' scales every channel by V' / V (hue and
    saturation are ratios of channel differences to V), and a black pixel becomes grey V'; so this computes
    `x * V' / V` directly, in 8-bit levels, where for uint8 input the result is exact before the truncation
    (`_brightness_uint8`, the uint8 CPU route, gives the same bits without the float round trip).
    """
    levels = images * 255.0
    value = levels.amax(1, keepdim=True)
    new_value = (value + _brightness_levels(severity, profile)).clamp(max=255.0)
    scaled = torch.where(value > 0, levels * new_value / value, new_value)
    return scaled / 255.0


@register_corruption("contrast")
def contrast(
    images: torch.Tensor, severity: int, profile: str, seed: int, sample_ids: torch.Tensor
) -> torch.Tensor:
    """Reduce contrast: scale each pixel's deviation from its image's per-channel mean, `(x - mean) * c + mean`.

    The reference takes the mean over the two spatial axes of an (H, W, 3) image, so one mean per channel.
    """
    factor = CONTRAST[profile][severity - 1]
    means = images.mean(dim=(2, 3), keepdim=True)
    return ((images - means) * factor + means).clamp(0.0, 1.0)


def _saturate_tenths(severity: int, profile: str) -> tuple[int, int]:
    """The profile's (scale, shift) of the saturation in tenths, as integers (every table entry is a tenth)."""
    scale, shift = SATURATE[profile][severity - 1]
    return round(scale * 10), round(shift * 10)


def _saturate_levels(
    levels: torch.Tensor, value: torch.Tensor, minimum: torch.Tensor, severity: int, profile: str
) -> torch.Tensor:
    """`saturate` of 8-bit levels (N, 3, H, W) as floats 0..255 (overwritten), given each pixel's largest and
    smallest level (N, 1, H, W); returns levels.

    skimage's `hsv2rgb(rgb2hsv(x))` with the saturation S = D / V (D = V - min) changed to S' keeps the largest
    channel V and moves every channel C away from V by the factor k = S' * V / D: C' = V - k * (V - C). With the
    scale and shift in tenths (a, b), S' * V = min(a * D + b * V, 10 * V) / 10, so k = min(aD + bV, 10V) / (10D).
    Grey pixels (D = 0) have hue 0, so they become (V, V (10 - b) / 10, V (10 - b) / 10).
    For integer levels every product and quotient here is exact or rounded once, and a non-integer C' is at least
    1 / 2550 from an integer, so the floor of the result is the exact one.
    """
    scale, shift = _saturate_tenths(severity, profile)
    delta = value - minimum
    # Grey pixels lose V * b / 10 in green and blue; 0 elsewhere (then adding it changes nothing).
    grey_loss = value.mul(shift).mul_(delta == 0).div_(10.0) if shift > 0 else None
    numerator = delta.mul(scale).add_(value.mul(shift))
    numerator = torch.minimum(numerator, value.mul(10.0), out=numerator)
    # Grey pixels: V - C = 0 in every channel, so any positive denominator gives C' = V.
    denominator = delta.mul_(10.0).clamp_(min=torch.finfo(delta.dtype).tiny)
    loss = torch.sub(value, levels, out=levels).mul_(numerator).div_(denominator)
    if grey_loss is not None:
        loss[:, 1:] += grey_loss
    return torch.sub(value, loss, out=loss)


def _saturate_uint8(
    images: torch.Tensor, severity: int, profile: str, seed: int, sample_ids: torch.Tensor
) -> torch.Tensor:
    """`saturate` on uint8 levels: the same arithmetic as `saturate` (whose levels x * 255 are these exactly),
    with the largest and smallest channel taken on the bytes, truncated directly (exact, see `_saturate_levels`)
    instead of through [0, 1] floats."""
    value, minimum = images.amax(1, keepdim=True).float(), images.amin(1, keepdim=True).float()
    return _saturate_levels(images.float(), value, minimum, severity, profile).to(torch.int16).to(torch.uint8)


@register_corruption("saturate", uint8_fn=_saturate_uint8)
def saturate(
    images: torch.Tensor, severity: int, profile: str, seed: int, sample_ids: torch.Tensor
) -> torch.Tensor:
    """Change saturation: HSV saturation becomes `clip(s * scale + shift, 0, 1)`, then back to RGB.

    As in the reference, grey pixels have hue 0, so a positive shift tints them red. Computed per pixel as a
    scaling of each channel's distance to the largest one (`_saturate_levels`), the same in exact arithmetic as
    skimage's HSV round trip, and exact before the truncation for uint8 input.
    """
    levels = images * 255.0
    value, minimum = levels.amax(1, keepdim=True), levels.amin(1, keepdim=True)
    return _saturate_levels(levels, value, minimum, severity, profile).div_(255.0)
