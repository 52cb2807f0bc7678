# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The weather corruptions of ImageNet-C (Hendrycks & Dietterich, ICLR 2019): fog and frost.

Batched re-implementations of the reference functions (the `imagecorruptions` package for the "imagenet" profile,
`make_cifar_c.py` of hendrycks/robustness for the "cifar" profile). The reference draws its randomness with
NumPy's global generator; here the same distributions come from the counter-based streams of `randomness`, so that
an image's corruption depends only on (seed, its sample id), never on the batch.

Fog adds a plasma fractal (the diamond-square algorithm), one per image, computed for the whole batch level by level.
Frost blends the image with a random crop of one of the reference's frost photographs, shipped in `frost/` (see
`frost/LICENSE.md`).
"""

import functools
import importlib.resources
import math

import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image

from .base import from_unit_float, register_corruption, to_unit_float
from .randomness import uniform, uniform_streams

# (fractal weight, wibble decay per level). imagenet: imagecorruptions/corruptions.py `fog`;
# cifar: ImageNet-C/create_c/make_cifar_c.py `fog`.
FOG: dict[str, tuple[tuple[float, float], ...]] = {
    "imagenet": ((1.5, 2), (2.0, 2), (2.5, 1.7), (2.5, 1.5), (3.0, 1.4)),
    "cifar": ((0.2, 3), (0.5, 3), (0.75, 2.5), (1, 2), (1.5, 1.75)),
}

# (image weight, frost weight). imagenet: imagecorruptions/corruptions.py `frost`;
# cifar: ImageNet-C/create_c/make_cifar_c.py `frost`.
FROST: dict[str, tuple[tuple[float, float], ...]] = {
    "imagenet": ((1, 0.4), (0.8, 0.6), (0.7, 0.7), (0.65, 0.7), (0.6, 0.75)),
    "cifar": ((1, 0.2), (1, 0.3), (0.9, 0.4), (0.85, 0.4), (0.75, 0.45)),
}

# The reference's six frost photographs, in its order (files of `frost/`, unchanged copies of imagecorruptions').
FROST_FILES = ("frost1.png", "frost2.png", "frost3.png", "frost4.jpg", "frost5.jpg", "frost6.jpg")
# The reference picks its photograph with `np.random.randint(5)`, which draws from 0..4: frost6.jpg is listed but
# never used. Kept faithfully: frost picks uniformly among the first five photographs.
FROST_CHOICES = 5
# The reference's plasma fractal starts its perturbation amplitude at 100 (make_cifar_c.py and imagecorruptions).
PLASMA_WIBBLE = 100.0
# make_cifar_c.py's fog uses plasma_fractal's default map size, 32; its frost shrinks the photographs by 0.2.
CIFAR_FOG_MAP_SIZE = 32
CIFAR_FROST_SCALE = 0.2
# The "imagenet" frost enlarges the photograph by this factor beyond the size needed to cover the image.
FROST_MARGIN = 1.1


def next_power_of_2(size: int) -> int:
    """The smallest power of two >= size (the reference's `next_power_of_2`)."""
    return 1 if size == 0 else 2 ** (size - 1).bit_length()


def plasma_fractal_stream(stream: str, step: int, part: str) -> str:
    """The stream name of the perturbations of one diamond-square pass: part is "squares", "rows" or "columns"."""
    return f"{stream}/step{step}/{part}"


def plasma_fractal(
    mapsize: int,
    wibbledecay: float,
    seed: int,
    sample_ids: torch.Tensor,
    stream: str,
    dtype: torch.dtype = torch.float32,
) -> torch.Tensor:
    """One plasma fractal per sample, (N, mapsize, mapsize) in [0, 1], as the reference's `plasma_fractal`.

    Diamond-square from a zero corner: for each step size (mapsize, mapsize / 2, ..., 2), square centres get the
    mean of their four corners, then the diamond centres on rows and on columns the mean of their four neighbours
    (wrapping around), each plus `wibble * U(-wibble, wibble)`; wibble starts at 100 and is divided by
    `wibbledecay` after each step. The map is finally rescaled to [0, 1] per sample. The perturbations of each
    pass come from their own stream (`plasma_fractal_stream`), drawn in the reference's (row, column) layout.
    """
    if mapsize & (mapsize - 1):
        raise ValueError(f"mapsize must be a power of two, got {mapsize}.")
    count = sample_ids.shape[0]
    maparray = torch.zeros(count, mapsize, mapsize, dtype=dtype, device=sample_ids.device)
    # Every pass's perturbations, drawn at once: a pass at step s fills (mapsize / s)^2 points.
    passes = [
        (step, part) for step in (mapsize >> level for level in range(mapsize.bit_length() - 1))
        for part in ("squares", "rows", "columns")
    ]  # fmt: skip
    streams = [(plasma_fractal_stream(stream, step, part), (mapsize // step,) * 2) for step, part in passes]
    draws = dict(zip(passes, uniform_streams(seed, sample_ids, streams, dtype), strict=True))
    step, wibble = mapsize, PLASMA_WIBBLE

    def wibbled_mean(total: torch.Tensor, part: str) -> torch.Tensor:
        """total / 4 + wibble * (wibble * (2 u - 1)), in place on the fresh `total` and this pass's draws."""
        return draws[step, part].mul_(2).sub_(1).mul_(wibble).mul_(wibble).add_(total.div_(4))

    while step >= 2:
        half = step // 2
        # Squares: the centre of each square of corners `step` apart.
        corners = maparray[:, ::step, ::step]
        total = corners + corners.roll(-1, dims=1)
        total = total + total.roll(-1, dims=2)
        maparray[:, half::step, half::step] = wibbled_mean(total, "squares")
        # Diamonds: the points between two corners on a row, then between two corners on a column.
        centres = maparray[:, half::step, half::step]
        corners = maparray[:, ::step, ::step]
        total = centres + centres.roll(1, dims=1) + corners + corners.roll(-1, dims=2)
        maparray[:, ::step, half::step] = wibbled_mean(total, "rows")
        total = centres + centres.roll(1, dims=2) + corners + corners.roll(-1, dims=1)
        maparray[:, half::step, ::step] = wibbled_mean(total, "columns")
        step //= 2
        wibble /= wibbledecay
    maparray = maparray - maparray.amin(dim=(1, 2), keepdim=True)
    return maparray / maparray.amax(dim=(1, 2), keepdim=True)


@register_corruption("fog")
def fog(
    images: torch.Tensor, severity: int, profile: str, seed: int, sample_ids: torch.Tensor
) -> torch.Tensor:
    """imagecorruptions `fog`: add `c0 * plasma fractal` (cropped to the image) and rescale by max / (max + c0).

    The fractal map is square, of side the next power of two of the image's larger side ("imagenet"), or 32 as in
    make_cifar_c.py ("cifar"; larger for larger images), cropped to the image's top-left corner; one map per image,
    shared by the three channels. `max` is the image's largest value over all channels.
    """
    weight, decay = FOG[profile][severity - 1]
    height, width = images.shape[-2:]
    mapsize = next_power_of_2(max(height, width))
    if profile == "cifar":
        mapsize = max(mapsize, CIFAR_FOG_MAP_SIZE)
    fractal = plasma_fractal(mapsize, decay, seed, sample_ids, "fog/plasma", images.dtype)
    max_val = images.amax(dim=(1, 2, 3), keepdim=True)
    fogged = (weight * fractal[:, None, :height, :width]) + images
    return fogged.mul_(max_val).div_(max_val + weight).clamp_(0.0, 1.0)


@functools.lru_cache(maxsize=len(FROST_FILES))
def frost_photo(index: int) -> torch.Tensor:
    """The reference's frost photograph `index` (0-5) as a uint8 tensor (3, H, W), RGB (alpha dropped, as cv2)."""
    resource = importlib.resources.files(__package__) / "frost" / FROST_FILES[index]
    with resource.open("rb") as file, Image.open(file) as photo:
        pixels = np.array(photo.convert("RGB"))
    return torch.from_numpy(pixels).permute(2, 0, 1).contiguous()


def _frost_imagenet_size(photo_height: int, photo_width: int, height: int, width: int) -> tuple[int, int]:
    """The reference's rescaled frost size: the scale that covers the image (at least 1), times 1.1, rounded up."""
    scale = 1.0
    if photo_height < height and photo_width < width:
        scale = max(height / photo_height, width / photo_width)
    elif photo_height < height:
        scale = height / photo_height
    elif photo_width < width:
        scale = width / photo_width
    scale *= FROST_MARGIN
    return math.ceil(photo_height * scale), math.ceil(photo_width * scale)


def rescaled_frost_photo(index: int, profile: str, height: int, width: int) -> torch.Tensor:
    """Frost photograph `index` rescaled as the reference does for an image of height x width: uint8 (3, h, w).

    "imagenet": bicubic resize (cv2 INTER_CUBIC's kernel, a = -0.75, half-pixel centres) to the size of
    `_frost_imagenet_size`. "cifar": make_cifar_c.py's `cv2.resize(fx=0.2, fy=0.2)` (bilinear), which samples
    source pixel 5 * i + 2 exactly, so it is a strided subsample.
    """
    photo = frost_photo(index)
    photo_height, photo_width = photo.shape[-2:]
    if profile == "cifar":
        rows = torch.arange(round(photo_height * CIFAR_FROST_SCALE)) * 5 + 2
        columns = torch.arange(round(photo_width * CIFAR_FROST_SCALE)) * 5 + 2
        return photo[:, rows.clamp(max=photo_height - 1)][:, :, columns.clamp(max=photo_width - 1)]
    size = _frost_imagenet_size(photo_height, photo_width, height, width)
    resized = F.interpolate(photo[None].double(), size=size, mode="bicubic", align_corners=False)
    return resized[0].round().clamp(0, 255).to(torch.uint8)


@functools.lru_cache(maxsize=8)
def _frost_stack(
    profile: str, height: int, width: int, device: torch.device
) -> tuple[torch.Tensor, torch.Tensor]:
    """The choosable frost photographs, rescaled for height x width and zero-padded to one size: uint8
    (FROST_CHOICES, 3, h_max, w_max) on `device`, and their rescaled sizes, int64 (FROST_CHOICES, 2)."""
    photos = [rescaled_frost_photo(index, profile, height, width) for index in range(FROST_CHOICES)]
    sizes = torch.tensor([photo.shape[-2:] for photo in photos], dtype=torch.int64)
    if (sizes <= torch.tensor([height, width])).any():
        raise ValueError(
            f"frost ({profile} profile) needs every frost photograph larger than the image, got {height}x{width}; "
            f"rescaled photographs are {sizes.tolist()}."
        )
    stack = torch.zeros(FROST_CHOICES, 3, *sizes.amax(0).tolist(), dtype=torch.uint8)
    for index, photo in enumerate(photos):
        stack[index, :, : photo.shape[1], : photo.shape[2]] = photo
    return stack.to(device), sizes.to(device)


def _frost_crops(
    profile: str, height: int, width: int, index: torch.Tensor, top: torch.Tensor, left: torch.Tensor
) -> torch.Tensor:
    """uint8 (N, 3, H, W) crops of the rescaled photographs `index` at corners (top, left), on their device: one
    flat gather (index_select) of the padded stack, every crop a rectangle of its photograph."""
    device = index.device
    stack, _ = _frost_stack(profile, height, width, device)
    _, channels, stack_height, stack_width = stack.shape
    dtype = torch.int32 if stack.numel() < 1 << 31 else torch.int64
    corner = ((index * channels) * stack_height + top) * stack_width + left
    channel = torch.arange(channels, device=device, dtype=dtype)[:, None, None] * stack_height
    row = torch.arange(height, device=device, dtype=dtype)[None, :, None]
    column = torch.arange(width, device=device, dtype=dtype)[None, None, :]
    within = (channel + row) * stack_width + column
    flat = (corner.to(dtype)[:, None, None, None] + within[None]).view(-1)
    return torch.index_select(stack.view(-1), 0, flat).view(-1, channels, height, width)


def blend_frost(
    images: torch.Tensor,
    severity: int,
    profile: str,
    index: torch.Tensor,
    top: torch.Tensor,
    left: torch.Tensor,
) -> torch.Tensor:
    """`c0 * image + c1 * frost crop` with the given per-sample photograph index (0-4) and crop corner (N,), on
    any device (they are moved to the images')."""
    image_weight, frost_weight = FROST[profile][severity - 1]
    index, top, left = (choice.to(images.device) for choice in (index, top, left))
    crops = _frost_crops(profile, *images.shape[-2:], index, top, left).to(images.dtype) / 255.0
    return (image_weight * images + frost_weight * crops).clamp(0.0, 1.0)


@functools.lru_cache(maxsize=16)
def _frost_levels(severity: int, profile: str) -> torch.Tensor:
    """The uint8 result of `blend_frost` for every (image level, frost level) pair, flat at 256 * image + frost:
    the float route's arithmetic on k / 255 in float32, then `from_unit_float`."""
    image_weight, frost_weight = FROST[profile][severity - 1]
    levels = torch.arange(256)
    images = to_unit_float(levels.to(torch.uint8))[:, None]
    frost = levels.to(torch.uint8).to(torch.float32)[None, :] / 255.0
    blended = (image_weight * images + frost_weight * frost).clamp(0.0, 1.0)
    return from_unit_float(blended, levels.to(torch.uint8)).reshape(-1)


def _frost_uint8(
    images: torch.Tensor, severity: int, profile: str, seed: int, sample_ids: torch.Tensor
) -> torch.Tensor:
    """`frost`'s uint8 CPU route: each output level is a function of the image's and the crop's levels, looked up
    in `_frost_levels` (65,536 entries), with no float pass per pixel."""
    index, top, left = frost_choices(profile, *images.shape[-2:], seed, sample_ids)
    crops = _frost_crops(profile, *images.shape[-2:], index, top, left)
    pairs = images.int().bitwise_left_shift_(8).bitwise_or_(crops)
    return torch.index_select(_frost_levels(severity, profile), 0, pairs.view(-1)).view(images.shape)


def frost_choices(
    profile: str, height: int, width: int, seed: int, sample_ids: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Per-sample (photograph index, crop top, crop left), each int64 (N,), as the reference's three randints.

    The index is uniform on 0..4 (the reference's `np.random.randint(5)`, see `FROST_CHOICES`); the crop corner
    uniform on [0, h - H) x [0, w - W) for the chosen photograph rescaled to h x w (exclusive bounds, as
    `np.random.randint(0, h - H)`).
    """
    _, sizes = _frost_stack(profile, height, width, sample_ids.device)
    draws = uniform(seed, sample_ids, "frost/choice", (3,), torch.float64)
    # Uniforms lie in (0, 1 - 2**-33], so floor(u * n) < n for every n below 2**20: no clamping is needed.
    index = (draws[:, 0] * FROST_CHOICES).long()
    spans = sizes[index] - torch.tensor([height, width], device=sample_ids.device)
    corner = (draws[:, 1:] * spans).long()
    return index, corner[:, 0], corner[:, 1]


@register_corruption("frost", uint8_fn=_frost_uint8)
def frost(
    images: torch.Tensor, severity: int, profile: str, seed: int, sample_ids: torch.Tensor
) -> torch.Tensor:
    """imagecorruptions `frost`: blend the image with a random crop of a random frost photograph.

    Per image: a photograph and a crop corner from `frost_choices`, the photograph rescaled as
    `rescaled_frost_photo`, then `c0 * x + c1 * crop` (`blend_frost`). uint8 CPU input takes `_frost_uint8`, a
    lookup of the same arithmetic's result per pair of levels.
    """
    index, top, left = frost_choices(profile, *images.shape[-2:], seed, sample_ids)
    return blend_frost(images, severity, profile, index, top, left)


__all__ = [
    "FOG",
    "FROST",
    "FROST_FILES",
    "blend_frost",
    "fog",
    "frost",
    "frost_choices",
    "plasma_fractal",
    "rescaled_frost_photo",
]
