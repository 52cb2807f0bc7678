# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""What the Space accepts from a visitor: an uploaded image file, checked before any pixel is decoded, and the
UserError that carries a problem back to the UI as a message."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

from PIL import Image, ImageOps, UnidentifiedImageError

MAX_FILE_MB = 20
MAX_MEGAPIXELS = 50


class UserError(ValueError):
    """A problem with what the user gave (file, model id, settings): shown in the UI, never a crash."""


def load_upload(path: str | os.PathLike | None) -> Image.Image:
    """The uploaded file as an RGB PIL image, after checking its size, its format and its pixel count.

    Raises UserError with a message for the UI: no file, a file over MAX_FILE_MB, a file PIL cannot read as an
    image, or an image over MAX_MEGAPIXELS (checked from the header, before any pixel is decoded).
    """
    if path is None or str(path) == "":
        raise UserError("Upload an image or pick an example first.")
    path = Path(path)
    if not path.is_file():
        raise UserError("The uploaded file could not be found on the server; please upload it again.")
    size_mb = path.stat().st_size / 1e6
    if size_mb > MAX_FILE_MB:
        raise UserError(f"That file is {size_mb:.1f} MB; this demo takes images up to {MAX_FILE_MB} MB.")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            image = Image.open(path)
    except Image.DecompressionBombError:
        raise UserError(
            f"That image has far more than {MAX_MEGAPIXELS} megapixels, the limit of this demo."
        ) from None
    except (UnidentifiedImageError, OSError, ValueError):
        raise UserError(
            f"{_display_name(path)} is not an image this demo can read. Upload a photo (JPEG, PNG, WebP, GIF, BMP "
            "or TIFF)."
        ) from None
    with image:  # closes the file, whatever happens
        check_megapixels(image)
        try:
            return ImageOps.exif_transpose(image).convert("RGB")  # phones store the rotation in EXIF
        except (OSError, ValueError, SyntaxError):
            raise UserError(
                f"{_display_name(path)} looks like an image but could not be decoded (truncated or damaged?)."
            ) from None


def check_megapixels(image: Image.Image) -> Image.Image:
    """`image` if it has at most MAX_MEGAPIXELS (its size comes from the header: nothing is decoded), else a
    UserError saying so."""
    megapixels = image.width * image.height / 1e6
    if megapixels > MAX_MEGAPIXELS:
        raise UserError(
            f"That image is {image.width}x{image.height} ({megapixels:.0f} megapixels); this demo takes images "
            f"up to {MAX_MEGAPIXELS} megapixels."
        )
    return image


def first_line(err: BaseException, limit: int = 300) -> str:
    """The first line of an error's message (at most `limit` characters), or its type's name: what the UI shows."""
    text = str(err).strip()
    return text.splitlines()[0][:limit] if text else type(err).__name__


def _display_name(path: Path) -> str:
    return f"'{path.name}'" if len(path.name) <= 60 else "That file"
