# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Digital corruptions of ImageNet-C (Hendrycks & Dietterich, ICLR 2019): JPEG compression and pixelate.

The reference runs both on 8-bit PIL images, so here both work on 8-bit levels too: float input is first rounded
to the nearest of the 256 levels (`round(x * 255)`, exact for input that came from uint8) and the output lies on
the 1/255 grid, so that uint8 input gives the reference's uint8 output. Pixelate reproduces Pillow's resampling
(its BOX filter in 22-bit fixed point with rounding after each pass, and its NEAREST scaling) exactly, batched;
uint8 images on the CPU go through Pillow itself, which is faster there and gives the same bits.
JPEG goes through libjpeg via torchvision, on the CPU, one encode and decode per image.
"""

import io
import warnings
from functools import lru_cache

import numpy as np
import torch
from PIL import Image
from torchvision.io import ImageReadMode, decode_jpeg

from .base import from_unit_float, register_corruption, to_unit_float

# JPEG quality. imagenet: imagecorruptions/corruptions.py `jpeg_compression`;
# cifar: ImageNet-C/create_c/make_cifar_c.py `jpeg_compression`.
JPEG_QUALITY = {
    "imagenet": (25, 18, 15, 10, 7),
    "cifar": (80, 65, 58, 50, 40),
}

# Fraction of each side kept by the downscale. imagenet: imagecorruptions/corruptions.py `pixelate` (BOX down,
# NEAREST back up); cifar: make_cifar_c.py `pixelate` (BOX down to int(32 * c), BOX back up).
PIXELATE = {
    "imagenet": (0.6, 0.5, 0.4, 0.3, 0.25),
    "cifar": (0.95, 0.9, 0.85, 0.75, 0.65),
}

# The smallest image side for which pixelate's per-image Pillow route is faster than the batched float route.
_PILLOW_MIN_SIDE = 64

# Pillow's fixed-point precision for 8-bit resampling (Resample.c: PRECISION_BITS = 32 - 8 - 2).
_PRECISION_BITS = 22


def to_levels(images: torch.Tensor) -> torch.Tensor:
    """Float [0, 1] -> the nearest 8-bit levels 0..255, still as float (exact integers)."""
    return (images.clamp(0.0, 1.0) * 255.0).round()


@lru_cache(maxsize=256)
def _box_weights(in_size: int, out_size: int) -> tuple[np.ndarray, np.ndarray]:
    """Pillow's BOX resampling of one axis, `in_size` -> `out_size`: a 0/1 (out, in) matrix of the taps of each
    output pixel, and each output pixel's fixed-point weight (every tap of a box has the same weight 1 / taps).

    As Pillow's `precompute_coeffs`: the filter support grows with the downscale factor; output pixel i is
    centred at (i + 0.5) * scale in input coordinates, and input pixel j is a tap where the box filter is 1 at
    (j - centre + 0.5) / max(scale, 1), i.e. on (-0.5, 0.5].
    """
    scale = in_size / out_size
    filter_scale = max(scale, 1.0)
    support = 0.5 * filter_scale
    centre = (np.arange(out_size) + 0.5) * scale
    first = np.maximum(np.trunc(centre - support + 0.5), 0)
    stop = np.minimum(np.trunc(centre + support + 0.5), in_size)
    column = np.arange(in_size)
    arg = (column[None, :] - centre[:, None] + 0.5) / filter_scale
    taps = (column >= first[:, None]) & (column < stop[:, None]) & (arg > -0.5) & (arg <= 0.5)
    count = taps.sum(1)
    if (count == 0).any():
        raise ValueError(f"Cannot box-resample {in_size} pixels to {out_size}.")
    weight = np.floor(0.5 + (1.0 / count) * (1 << _PRECISION_BITS)).astype(np.int64)
    return taps.astype(np.float32), weight


def _box_resample_axis(levels: torch.Tensor, out_size: int, dim: int) -> torch.Tensor:
    """One Pillow BOX pass over `dim` (-1: width, -2: height) of 8-bit levels, rounded and clipped as Pillow."""
    taps, weight = _box_weights(levels.shape[dim], out_size)
    taps = torch.from_numpy(taps).to(levels.device, levels.dtype)
    # Sums of 8-bit levels are exact in float32 (and in TF32/bf16 matmuls) for boxes under 65,000 taps.
    sums = levels @ taps.T if dim == -1 else taps @ levels
    weight = torch.from_numpy(weight).to(levels.device)
    weight = weight.view(-1) if dim == -1 else weight.view(-1, 1)
    fixed = sums.long() * weight + (1 << (_PRECISION_BITS - 1))
    return (fixed >> _PRECISION_BITS).clamp(0, 255).to(levels.dtype)


def box_resize(levels: torch.Tensor, height: int, width: int) -> torch.Tensor:
    """Pillow's `resize((width, height), Image.BOX)` of 8-bit levels (N, C, H, W): horizontal, then vertical."""
    return _box_resample_axis(_box_resample_axis(levels, width, -1), height, -2)


@lru_cache(maxsize=256)
def _nearest_indices(in_size: int, out_size: int) -> np.ndarray:
    """Pillow's NEAREST scaling of one axis (Geometry.c `ImagingScaleAffine`): source index floor of a running
    double sum that starts at scale / 2 and adds scale = in / out per output pixel."""
    scale = in_size / out_size
    steps = np.full(out_size, scale)
    steps[0] = scale * 0.5
    return np.minimum(np.floor(np.add.accumulate(steps)), in_size - 1).astype(np.int64)


def nearest_resize(levels: torch.Tensor, height: int, width: int) -> torch.Tensor:
    """Pillow's `resize((width, height), Image.NEAREST)` of (N, C, H, W): a gather along each axis."""
    rows = torch.from_numpy(_nearest_indices(levels.shape[-2], height)).to(levels.device)
    columns = torch.from_numpy(_nearest_indices(levels.shape[-1], width)).to(levels.device)
    return levels.index_select(-2, rows).index_select(-1, columns)


def _pixelate_uint8(
    images: torch.Tensor, severity: int, profile: str, seed: int, sample_ids: torch.Tensor
) -> torch.Tensor:
    """`pixelate` of uint8 images on the CPU through Pillow itself, the reference's resampler: the same bits as
    the float route (which reproduces Pillow), about five times faster on one thread at 224x224.

    Pillow resizes have no batched form, so the planes of the batch go four at a time into 4-band (CMYK) Pillow
    images: Pillow's 8-bit resampling works on 4 bytes per pixel whatever the bands (RGB too), and resizes each
    band alone, so this is the per-image RGB resize with no byte wasted (about 10 % faster than RGB, and several
    times faster than one call over all planes as a single 8-bit image). Below 64 pixels a side the per-call
    overhead costs more than it saves (measured at 32x32 and 48x48), so small images take the float route.
    """
    factor = PIXELATE[profile][severity - 1]
    height, width = images.shape[-2:]
    if min(height, width) < _PILLOW_MIN_SIDE:
        return from_unit_float(pixelate(to_unit_float(images), severity, profile, seed, sample_ids), images)
    small_size = (int(width * factor), int(height * factor))
    upscale = Image.NEAREST if profile == "imagenet" else Image.BOX
    planes = images.contiguous().numpy().reshape(-1, height, width)
    out = np.empty_like(planes)
    for start in range(0, len(planes), 4):
        group = [Image.fromarray(plane) for plane in planes[start : start + 4]]
        group += group[:1] * (4 - len(group))  # the batch's last group may hold fewer than four planes
        resized = Image.merge("CMYK", group).resize(small_size, Image.BOX).resize((width, height), upscale)
        for band_index, band in enumerate(resized.split()[: len(planes) - start]):
            out[start + band_index] = np.asarray(band)
    return torch.from_numpy(out).view(images.shape)


@register_corruption("pixelate", uint8_fn=_pixelate_uint8)
def pixelate(
    images: torch.Tensor, severity: int, profile: str, seed: int, sample_ids: torch.Tensor
) -> torch.Tensor:
    """Pixelate: BOX-downscale each side to int(side * c) pixels, then upscale back to the original size.

    The "imagenet" profile upscales with NEAREST, the "cifar" profile with BOX, as their references do
    (make_cifar_c.py hard-codes 32 for the side; here the image's own sides are used, the same for 32x32).
    Fast path: uint8 images on the CPU of at least 64 pixels a side are resized by Pillow (`_pixelate_uint8`).
    """
    factor = PIXELATE[profile][severity - 1]
    height, width = images.shape[-2:]
    small = box_resize(to_levels(images), int(height * factor), int(width * factor))
    upscale = nearest_resize if profile == "imagenet" else box_resize
    return upscale(small, height, width) / 255.0


def _jpeg_compression_uint8(
    images: torch.Tensor, severity: int, profile: str, seed: int, sample_ids: torch.Tensor
) -> torch.Tensor:
    """`jpeg_compression` of uint8 images on the CPU: the same round trip, without the float conversions."""
    return jpeg_round_trip(images, JPEG_QUALITY[profile][severity - 1])


@register_corruption("jpeg_compression", uint8_fn=_jpeg_compression_uint8)
def jpeg_compression(
    images: torch.Tensor, severity: int, profile: str, seed: int, sample_ids: torch.Tensor
) -> torch.Tensor:
    """JPEG-compress each image at the profile's quality and decode it, as the reference's PIL save and load.

    The 8-bit images are encoded and decoded by Pillow's libjpeg (`jpeg_round_trip`), on the CPU whatever the
    images' device (a GPU codec such as nvJPEG is not the reference's libjpeg).
    """
    quality = JPEG_QUALITY[profile][severity - 1]
    decoded = jpeg_round_trip(to_levels(images).to(torch.uint8), quality)
    return decoded.to(images.dtype) / 255.0


def jpeg_round_trip(images: torch.Tensor, quality: int) -> torch.Tensor:
    """uint8 RGB images (N, 3, H, W) -> the same images JPEG-encoded at `quality` and decoded again, uint8, on the
    images' device.

    Pillow's `save(format="JPEG", quality=quality)` (the reference's encoder) and a reload, on the CPU whatever
    the images' device (a GPU codec such as nvJPEG is not the reference's libjpeg); `optimize=True` would change
    only the Huffman tables, not the pixels. Each image is encoded by Pillow from its three planes
    (`Image.merge`, cheaper than an interleaving copy of the batch; a codec call has no batched form) and the
    batch is decoded by libjpeg through torchvision's list API, which skips Pillow's Python-level header parsing
    (the decoded pixels are Pillow's, tested). About twice as fast on one thread as torchvision's encoder. Used
    by the `jpeg_compression` corruption and by the release encoding of generated ImageNet-C (make_imagenet_c.py
    saves every corrupted image at quality 85).
    """
    if images.dtype != torch.uint8 or images.dim() != 4 or images.shape[1] != 3:
        raise ValueError(f"Expected uint8 RGB images (N, 3, H, W), got {images.dtype} {tuple(images.shape)}.")
    if isinstance(quality, bool) or not isinstance(quality, int) or not 1 <= quality <= 100:
        raise ValueError(f"JPEG quality must be an integer in 1..100, got {quality!r}.")
    if images.shape[0] == 0:
        return images.clone()
    encoded = []
    for image in images.cpu().contiguous().numpy():
        buffer = io.BytesIO()
        Image.merge("RGB", [Image.fromarray(plane) for plane in image]).save(
            buffer, format="JPEG", quality=quality
        )
        encoded.append(torch.frombuffer(buffer.getbuffer(), dtype=torch.uint8))
    with warnings.catch_warnings():
        # torchvision 0.29 deprecates its image codecs in favour of TorchCodec; constraints.txt pins 0.29, whose
        # libjpeg decoder is the one tested against Pillow's here. Revisit when the pin moves.
        warnings.filterwarnings(
            "ignore", message="The image decoding and encoding", category=DeprecationWarning
        )
        decoded = decode_jpeg(encoded, mode=ImageReadMode.RGB)
    # Each decoded image is a (3, H, W) view of libjpeg's (H, W, 3) pixels; NumPy's transposing copy of the stacked
    # batch to planes is faster than torch's.
    interleaved = np.stack([image.permute(1, 2, 0).numpy() for image in decoded])
    return torch.from_numpy(np.ascontiguousarray(interleaved.transpose(0, 3, 1, 2))).to(images.device)
