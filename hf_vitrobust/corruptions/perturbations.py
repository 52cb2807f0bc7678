# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""ImageNet-P perturbation sequences (Hendrycks & Dietterich, ICLR 2019), batched on tensors.

Follows the generation script of the reference (hendrycks/robustness, `ImageNet-P/create_p/make_imagenet_p.py`).
The script resizes each image to shorter side 256 and writes one video per image:

* noise types (gaussian_noise, shot_noise, speckle_noise): 31 frames; frame 0 is the clean 224 centre crop and
  frames 1-30 are independent noisy copies of it. Difficulties 1, 2 and 3 are separate data sets
  (`gaussian_noise`, `gaussian_noise_2`, `gaussian_noise_3`) that differ only in the noise level;
* geometric types transform the whole 256 image, then centre-crop 224: translate (41 frames, -20..20 pixels,
  nearest), rotate (-15..15 degrees), scale (0.40..1.15), shear (-15..15 degrees) through torchvision's `affine`
  (bilinear), and tilt (a perspective warp, cv2.warpPerspective, bilinear, black border);
* zoom_blur: the running mean of the clean crop and crops of the image zoomed by 1 + 0.004 j, j = 1..t;
* the others centre-crop first and perturb the crop: motion_blur (angle (t - 30) * 4), snow (one snow layer, motion
  blurred along angle 4 t - 150), brightness (HSV value shift (t - 15) / 50) and gaussian_blur (sigma
  0.25 + 0.035 t).

Differences from the script, by design: the input is the 256-resized image (any size with both sides at least
`crop`), the frames are returned as a tensor instead of being encoded to MP4 (the script's libx264 compression is
not reproduced); motion blur is imagecorruptions' NumPy re-implementation of ImageMagick's motion blur (as for the
`motion_blur` corruption), not Wand; the geometric frames use torchvision's current `affine` on tensors (the
script ran an early torchvision on PIL images); intermediate 8-bit PNG quantisations inside a frame's computation
are skipped except for the snow layer, and uint8 output is truncated as the script's `np.uint8(...)`. For
the non-noise types, ImageNet-P's evaluation (`ImageNet-P/test.py`) reads difficulty d as a frame stride over the
same video: those types have only difficulty 1 here; take `frames[:, ::d]` for the evaluation's strides.
spatter (validation): one liquid layer per image that flows down the image from frame to frame, drawn as
pale-turquoise water with ImageNet-C's water shading (`spatter.water_mask`, the cv2 steps re-implemented).

Randomness comes from the counter-based per-sample streams of `randomness.py`: noise frame t of a sample draws
from stream f"{name}/frame-{t}" (the same draws at every difficulty), the snow layer from "snow/sequence-layer",
the spatter liquid from "spatter/sequence-liquid".
"""

import math
from collections.abc import Sequence

import torch
import torchvision.transforms.v2.functional as TF
from torchvision.transforms import InterpolationMode

from ..constants import PERTURBATIONS, TEST_PERTURBATIONS, VALIDATION_PERTURBATIONS
from ..registry import did_you_mean
from .base import check_images, check_sample_ids, from_unit_float, to_unit_float
from .blur import clipped_zoom_axis, gaussian_filter, lerp_along
from .color import hsv_to_rgb, rgb_to_hsv
from .motion_glass import motion_blur_with_angles
from .noise import photon_counts
from .randomness import normal
from .snow import GREY_WEIGHTS
from .spatter import WATER_COLOR, water_mask

# ImageNet-P's perturbation names (TEST_PERTURBATIONS, VALIDATION_PERTURBATIONS, PERTURBATIONS): `hf_vitrobust.constants`.

DEFAULT_CROP = 224

# Noise level per difficulty 1, 2, 3 (the script's blocks for `name`, `name_2`, `name_3`): the standard deviation
# for gaussian_noise and speckle_noise, the photon count per unit intensity for shot_noise.
NOISE_LEVELS: dict[str, tuple[float, float, float]] = {
    "gaussian_noise": (0.03, 0.05, 0.08),
    "shot_noise": (300.0, 120.0, 60.0),
    "speckle_noise": (0.05, 0.10, 0.15),
}

# Frames per sequence: `range(0, 41)` for translate, 31 frames (`range(0, 31)`, or frame 0 plus `range(1, 31)`)
# for every other type.
FRAME_COUNTS: dict[str, int] = {name: 41 if name == "translate" else 31 for name in PERTURBATIONS}

# Snow layer: np.random.normal(loc=0.05, scale=0.3), clipped_zoom 3, values below 0.5 zeroed; motion blur radius 14,
# sigma 4; image blend 0.85. make_imagenet_p.py, "Snow Code".
SNOW_LAYER = (0.05, 0.3, 3.0, 0.5)
SNOW_BLUR = (14, 4)
SNOW_BLEND = 0.85
# make_imagenet_p.py, "Motion Blur Code": radius 10, sigma 3.
MOTION_BLUR = (10, 3)
# Liquid layer: np.random.normal(loc=0.65, scale=0.27), skimage gaussian sigma 3.7, values below 0.69 zeroed; water
# intensity 0.6; after each frame the layer flows down by np.convolve(column, [0.05, 0.1, 0.15, 0.7], "same").
# make_imagenet_p.py, "Spatter Code".
SPATTER_LIQUID = (0.65, 0.27, 3.7, 0.69)
SPATTER_INTENSITY = 0.6
SPATTER_FLOW = (0.05, 0.1, 0.15, 0.7)
# make_imagenet_p.py, "Gaussian Blur Code": skimage.filters.gaussian(..., truncate=6.0).
GAUSSIAN_BLUR_TRUNCATE = 6.0


def frame_parameters(name: str) -> tuple[float, ...]:
    """The per-frame parameter of a non-noise type, as in make_imagenet_p.py (frame t = 0, 1, ...).

    motion_blur: blur angle (t - 30) * 4 degrees; zoom_blur: zoom 1 + 0.004 t of the copy added at frame t (frame 0
    is the clean crop); snow: blur angle 4 t - 150; brightness: value shift (t - 15) * 2 / 100; translate: t - 20
    pixels to the right; rotate: t - 15 degrees; tilt: t - 15 degrees about both axes; scale: (2.5 t + 40) / 100;
    shear: t - 15 degrees; gaussian_blur: sigma 0.25 + 0.035 t. Noise types and spatter have none.
    """
    frames = range(FRAME_COUNTS[_check_name(name)])
    rules = {
        "motion_blur": lambda t: (t - 30) * 4.0,
        "zoom_blur": lambda t: 1 + 0.004 * t,
        "snow": lambda t: t * 4.0 - 150,
        "brightness": lambda t: (t - 15) * 2 / 100.0,
        "translate": lambda t: float(t - 20),
        "rotate": lambda t: float(t - 15),
        "tilt": lambda t: float(t - 15),
        "scale": lambda t: (t * 2.5 + 40) / 100.0,
        "shear": lambda t: float(t - 15),
        "gaussian_blur": lambda t: 0.25 + 0.035 * t,
    }
    if name not in rules:
        raise ValueError(
            f"{name!r} has no per-frame parameter: noise frames are independent draws (see NOISE_LEVELS) and "
            "spatter's liquid layer flows down by one step per frame."
        )
    return tuple(rules[name](t) for t in frames)


def _check_name(name: str) -> str:
    if name not in PERTURBATIONS:
        hint = did_you_mean(name, PERTURBATIONS)
        raise ValueError(f"Unknown perturbation {name!r}.{hint} Available: {', '.join(PERTURBATIONS)}.")
    return name


def _check_difficulty(name: str, difficulty: int) -> None:
    allowed = (1, 2, 3) if name in NOISE_LEVELS else (1,)
    if isinstance(difficulty, bool) or not isinstance(difficulty, int) or difficulty not in allowed:
        detail = (
            "1, 2 or 3"
            if name in NOISE_LEVELS
            else "1 (ImageNet-P's difficulty for this type is a frame stride at evaluation: use frames[:, ::d])"
        )
        raise ValueError(f"difficulty for {name!r} must be {detail}, got {difficulty!r}.")


def _affine_frame(
    images: torch.Tensor,
    crop: int,
    angle: float = 0.0,
    translate: tuple[int, int] = (0, 0),
    scale: float = 1.0,
    shear: float = 0.0,
    interpolation: InterpolationMode = InterpolationMode.BILINEAR,
) -> torch.Tensor:
    """torchvision's `affine` on the whole images (black fill), then the centre crop."""
    moved = TF.affine(
        images,
        angle=angle,
        translate=list(translate),
        scale=scale,
        shear=[shear, 0.0],
        interpolation=interpolation,
    )
    return TF.center_crop(moved, [crop, crop])


def _translate_frame(images: torch.Tensor, crop: int, shift: int) -> torch.Tensor:
    """The centre crop of the images moved `shift` pixels to the right, black where nothing moves in: exactly the
    script's `affine(translate=(shift, 0))` with nearest resampling, as an integer shift."""
    moved = torch.zeros_like(images)
    width = images.shape[-1]
    if shift >= 0:
        moved[..., shift:] = images[..., : width - shift]
    else:
        moved[..., :shift] = images[..., -shift:]
    return TF.center_crop(moved, [crop, crop])


def tilt_matrix(height: int, width: int, degrees: float) -> torch.Tensor:
    """The script's 3x3 homography P2 @ T @ RX @ RY @ P1: rotate the image plane by `degrees` about the x and y
    axes (phi = theta) at focal length sqrt(w^2 + h^2), projecting back onto the image (float64)."""
    a = math.radians(degrees)
    w, h = float(width), float(height)
    f = math.hypot(w, h)
    p1 = torch.tensor([[1, 0, -w / 2], [0, 1, -h / 2], [0, 0, 1], [0, 0, 1]], dtype=torch.float64)
    c, s = math.cos(a), math.sin(a)
    rx = torch.tensor([[1, 0, 0, 0], [0, c, -s, 0], [0, s, c, 0], [0, 0, 0, 1]], dtype=torch.float64)
    ry = torch.tensor([[c, 0, -s, 0], [0, 1, 0, 0], [s, 0, c, 0], [0, 0, 0, 1]], dtype=torch.float64)
    t = torch.tensor([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, f], [0, 0, 0, 1]], dtype=torch.float64)
    p2 = torch.tensor([[f, 0, w / 2, 0], [0, f, h / 2, 0], [0, 0, 1, 0]], dtype=torch.float64)
    return p2 @ t @ rx @ ry @ p1


def _tilt_frame(images: torch.Tensor, crop: int, degrees: float) -> torch.Tensor:
    """cv2.warpPerspective(x, M, (w, h)) (bilinear, black border) as grid_sample: output pixel (x, y) reads the
    source at M^-1 (x, y, 1), pixel centres at integer coordinates; then the centre crop."""
    n, _, height, width = images.shape
    inverse = torch.linalg.inv(tilt_matrix(height, width, degrees)).to(images.device)
    rows = torch.arange(height, dtype=torch.float64, device=images.device)
    columns = torch.arange(width, dtype=torch.float64, device=images.device)
    ys, xs = torch.meshgrid(rows, columns, indexing="ij")
    source = torch.stack((xs, ys, torch.ones_like(xs)), dim=-1) @ inverse.T
    sx, sy = source[..., 0] / source[..., 2], source[..., 1] / source[..., 2]
    grid = torch.stack((2 * sx / (width - 1) - 1, 2 * sy / (height - 1) - 1), dim=-1)
    grid = grid.to(images.dtype)[None].expand(n, -1, -1, -1)
    warped = torch.nn.functional.grid_sample(
        images, grid, mode="bilinear", padding_mode="zeros", align_corners=True
    )
    return TF.center_crop(warped, [crop, crop])


def _noise_frame(
    crops: torch.Tensor, name: str, level: float, seed: int, sample_ids: torch.Tensor, frame: int
) -> torch.Tensor:
    stream = f"{name}/frame-{frame}"
    if name == "shot_noise":
        return photon_counts(crops, level, seed, sample_ids, stream).to(crops.dtype) / level
    draws = normal(seed, sample_ids, stream, tuple(crops.shape[1:]), torch.float64).to(crops.dtype) * level
    return crops + (crops * draws if name == "speckle_noise" else draws)


def _snow_layer(seed: int, sample_ids: torch.Tensor, size: int, device: torch.device) -> torch.Tensor:
    """The script's snow layer before its motion blur, (N, 1, size, size) float64 on 8-bit levels: normal draws
    (loc 0.05, scale 0.3), the centred `clipped_zoom` by 3 (bilinear), values below 0.5 zeroed, clipped to [0, 1]
    and truncated to uint8 levels (the PNG handed to ImageMagick)."""
    loc, scale, zoom, threshold = SNOW_LAYER
    draws = normal(seed, sample_ids, "snow/sequence-layer", (size, size), torch.float64).to(device)
    layer = (draws * scale + loc)[:, None]
    layer = lerp_along(layer, -2, *clipped_zoom_axis(size, zoom, device, "centred"))
    layer = lerp_along(layer, -1, *clipped_zoom_axis(size, zoom, device, "centred"))
    layer = torch.where(layer < threshold, 0.0, layer).clamp(0.0, 1.0)
    return torch.floor(layer * 255.0) / 255.0


def _spatter_liquid(seed: int, sample_ids: torch.Tensor, size: int, device: torch.device) -> torch.Tensor:
    """The script's initial liquid layer, (N, size, size) float64: normal draws, skimage's gaussian (truncate 4,
    mode "nearest") and values below the threshold zeroed."""
    mean, std, sigma, threshold = SPATTER_LIQUID
    liquid = (
        normal(seed, sample_ids, "spatter/sequence-liquid", (size, size), torch.float64).to(device) * std
        + mean
    )
    liquid = gaussian_filter(liquid, sigma)
    return torch.where(liquid < threshold, 0.0, liquid)


def _spatter_flow(liquid: torch.Tensor) -> torch.Tensor:
    """np.convolve(column, [0.05, 0.1, 0.15, 0.7], mode="same") down every column: row i becomes
    0.05 L[i + 1] + 0.1 L[i] + 0.15 L[i - 1] + 0.7 L[i - 2], zero outside the layer."""
    padded = torch.nn.functional.pad(liquid, (0, 0, 2, 1))
    height = liquid.shape[-2]
    taps = [weight * padded[..., 3 - j : 3 - j + height, :] for j, weight in enumerate(SPATTER_FLOW)]
    return taps[0] + taps[1] + taps[2] + taps[3]


def _spatter_frame(crops: torch.Tensor, liquid: torch.Tensor) -> torch.Tensor:
    """One frame of the script's spatter: pale-turquoise water shaded by `spatter.water_mask` of the uint8 liquid
    layer, normalised to its maximum and scaled by 0.6 (a layer without liquid adds nothing)."""
    liquid_uint8 = (liquid * 255).long() & 255  # .astype(np.uint8): truncation, wrapping modulo 256
    mask = water_mask(liquid_uint8)
    peak = mask.amax((1, 2), keepdim=True)
    mask = mask / torch.where(peak > 0, peak, torch.ones_like(peak)) * SPATTER_INTENSITY
    color = torch.tensor(WATER_COLOR, dtype=torch.float32, device=crops.device)[None, :, None, None]
    return crops + (mask[:, None] * color).to(crops.dtype)


def perturbation_sequence(
    images: torch.Tensor,
    name: str,
    difficulty: int = 1,
    seed: int = 0,
    sample_ids: Sequence[int] | torch.Tensor | None = None,
    crop: int = DEFAULT_CROP,
) -> torch.Tensor:
    """The ImageNet-P sequence `name` of every image: (N, T, 3, crop, crop), in the input's dtype and device.

    `images` (N, 3, H, W), uint8 (0-255) or float (0-1), are the sources resized to shorter side 256 as in the
    script; H and W must be at least `crop`. Frames are centre crops of size `crop` (ImageNet-P: 224). T is
    `FRAME_COUNTS[name]` (41 for translate, 31 otherwise). `difficulty` (1-3) sets the noise level of the noise types
    and must be 1 for the others. `seed` and `sample_ids` (default 0..N-1) fix the randomness of the noise, snow
    and spatter types per image, as in `corrupt`.
    """
    _check_name(name)
    _check_difficulty(name, difficulty)
    check_images(images, crop, f"perturbation {name!r} with crop {crop}")
    ids = check_sample_ids(seed, sample_ids, images)
    # uint8 sources are perturbed in float64, as the script's NumPy arithmetic: in float32, values that should land
    # on an 8-bit level (a brightness shift of 0, say) often fall just below it and are truncated one level down.
    x = images.double() / 255.0 if images.dtype == torch.uint8 else to_unit_float(images)
    crops = TF.center_crop(x, [crop, crop])
    count = FRAME_COUNTS[name]

    if name in NOISE_LEVELS:
        level = NOISE_LEVELS[name][difficulty - 1]
        frames = [crops] + [_noise_frame(crops, name, level, seed, ids, t) for t in range(1, count)]
    elif name == "translate":
        frames = [_translate_frame(x, crop, int(shift)) for shift in frame_parameters(name)]
    elif name in ("rotate", "scale", "shear"):
        key = {"rotate": "angle", "scale": "scale", "shear": "shear"}[name]
        frames = [_affine_frame(x, crop, **{key: value}) for value in frame_parameters(name)]
    elif name == "tilt":
        frames = [_tilt_frame(x, crop, degrees) for degrees in frame_parameters(name)]
    elif name == "zoom_blur":
        total, frames = crops.clone(), [crops]
        for t, zoom in enumerate(frame_parameters(name)[1:], start=1):
            total = total + _affine_frame(x, crop, scale=zoom)
            frames.append(total / (t + 1))
    elif name == "motion_blur":
        radius, sigma = MOTION_BLUR
        frames = [
            motion_blur_with_angles(crops, radius, sigma, torch.full((len(x),), angle, dtype=torch.float64))
            for angle in frame_parameters(name)
        ]
    elif name == "snow":
        layer = _snow_layer(seed, ids, crop, x.device)
        red, green, blue = crops.unbind(1)
        grey = (GREY_WEIGHTS[0] * red + GREY_WEIGHTS[1] * green + GREY_WEIGHTS[2] * blue)[:, None]
        base = SNOW_BLEND * crops + (1 - SNOW_BLEND) * torch.maximum(crops, grey * 1.5 + 0.5)
        radius, sigma = SNOW_BLUR
        frames = []
        for angle in frame_parameters(name):
            angles = torch.full((len(x),), angle, dtype=torch.float64)
            moving = torch.round(motion_blur_with_angles(layer, radius, sigma, angles) * 255.0) / 255.0
            frames.append((base.double() + moving + moving.flip(-2, -1)).to(crops.dtype))
    elif name == "brightness":
        hsv = rgb_to_hsv(crops)
        frames = [
            hsv_to_rgb(torch.cat((hsv[:, :2], (hsv[:, 2:] + shift).clamp(0.0, 1.0)), dim=1))
            for shift in frame_parameters(name)
        ]
    elif name == "spatter":
        liquid, frames = _spatter_liquid(seed, ids, crop, x.device), []
        for _ in range(count):
            frames.append(_spatter_frame(crops, liquid))
            liquid = _spatter_flow(liquid)
    else:  # gaussian_blur
        frames = [gaussian_filter(crops, sigma, GAUSSIAN_BLUR_TRUNCATE) for sigma in frame_parameters(name)]
    return from_unit_float(torch.stack(frames, dim=1), images)


__all__ = [
    "FRAME_COUNTS",
    "NOISE_LEVELS",
    "PERTURBATIONS",
    "TEST_PERTURBATIONS",
    "VALIDATION_PERTURBATIONS",
    "frame_parameters",
    "perturbation_sequence",
    "tilt_matrix",
]
