# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Decode one image, whatever form a source stores it in, into an RGB uint8 tensor, or say precisely why not.

Real benchmark data holds surprises: ImageNet's validation set has a CMYK JPEG and a PNG named .JPEG, scraped
sets have palette PNGs with transparency, 16-bit greyscale TIFFs, truncated downloads and HTML error pages saved
as .jpg. Images in other modes are converted to RGB the way PIL and torchvision loaders do, and counted by the
caller; data that cannot be decoded raises `BadSampleError` with a reason, so the stream skips and counts it.
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from PIL import Image, UnidentifiedImageError

#: File extensions (lower case) of the image files a folder or an image-folder repository holds.
IMAGE_FILE_EXTENSIONS = (".jpeg", ".jpg", ".png", ".bmp", ".gif", ".tif", ".tiff", ".webp", ".ppm")


class BadSampleError(Exception):
    """A sample that cannot be used; `reason` is a short key for counting ("truncated", "undecodable", ...)."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class DecodedImage:
    image: torch.Tensor  # uint8 (3, H, W)
    converted_from: str | None  # the PIL mode converted to RGB, or None when the image was RGB already


def _open(data: Any) -> Image.Image:
    if isinstance(data, dict):
        if data.get("bytes") is not None:
            data = data["bytes"]
        elif data.get("path"):
            data = data["path"]
        else:
            raise BadSampleError("empty", "the image field holds neither bytes nor a path")
    if isinstance(data, (bytes, bytearray, memoryview)):
        if len(data) == 0:
            raise BadSampleError("empty", "the image has zero bytes")
        return Image.open(io.BytesIO(bytes(data)))
    if isinstance(data, (str, os.PathLike)):
        return Image.open(data)
    if isinstance(data, Image.Image):
        return data
    raise BadSampleError("unsupported", f"cannot decode an image from {type(data).__name__}")


def _to_rgb(image: Image.Image) -> tuple[Image.Image, str | None]:
    mode = image.mode
    if mode == "RGB":
        return image, None
    if mode in ("I;16", "I;16B", "I;16L", "I;16N", "I"):
        # 16/32-bit greyscale: scale the full integer range to 8 bits instead of clipping at 255.
        values = np.asarray(image, dtype=np.float64)
        top = 65535.0 if mode.startswith("I;16") else max(float(values.max()), 1.0)
        grey = np.clip(np.round(values / top * 255.0), 0, 255).astype(np.uint8)
        return Image.fromarray(grey, mode="L").convert("RGB"), mode
    if (mode == "P" and "transparency" in image.info) or mode in ("PA", "LA", "RGBA"):
        # Composite transparent pixels on white rather than exposing the hidden colour under them.
        rgba = image.convert("RGBA")
        background = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        return Image.alpha_composite(background, rgba).convert("RGB"), mode
    return image.convert("RGB"), mode


def decode_image(data: Any) -> DecodedImage:
    """An RGB uint8 (3, H, W) tensor from bytes, a file path, a `datasets` Image dict, a PIL image, an HWC/CHW
    uint8 array or tensor. Raises `BadSampleError` for empty, truncated, undecodable or non-image data."""
    if isinstance(data, (np.ndarray, torch.Tensor)):
        return DecodedImage(_array_to_chw(data), None)
    try:
        image = _open(data)
        image.load()
        image, converted_from = _to_rgb(image)
        array = np.asarray(image, dtype=np.uint8)
    except BadSampleError:
        raise
    except UnidentifiedImageError as error:
        raise BadSampleError("not_an_image", f"not an image file: {error}") from error
    except FileNotFoundError as error:
        raise BadSampleError("missing_file", str(error)) from error
    except (OSError, SyntaxError, ValueError) as error:
        reason = "truncated" if "truncat" in str(error).lower() else "undecodable"
        raise BadSampleError(reason, f"{type(error).__name__}: {error}") from error
    if array.ndim != 3 or array.shape[2] != 3 or 0 in array.shape:
        raise BadSampleError("undecodable", f"decoded to an array of shape {array.shape}")
    return DecodedImage(torch.from_numpy(array.copy()).permute(2, 0, 1).contiguous(), converted_from)


def _array_to_chw(array: np.ndarray | torch.Tensor) -> torch.Tensor:
    tensor = torch.as_tensor(np.asarray(array)) if isinstance(array, np.ndarray) else array.cpu()
    if tensor.dtype != torch.uint8:
        raise BadSampleError("bad_array", f"expected a uint8 image array, got {tensor.dtype}")
    if tensor.dim() == 3 and tensor.shape[-1] == 3 and tensor.shape[0] != 3:
        tensor = tensor.permute(2, 0, 1)
    if tensor.dim() != 3 or tensor.shape[0] != 3:
        raise BadSampleError(
            "bad_array", f"expected an (H, W, 3) or (3, H, W) image, got {tuple(tensor.shape)}"
        )
    return tensor.contiguous()
