# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""A painted occlusion: the strokes a visitor paints over a photo in `gr.ImageEditor` become a mask, and the model
sees the photo with the painted pixels replaced as Cutout replaces its hole (hf_vitrobust.corruptions.cutout,
after Paul & Chen's masking analysis): filled with black."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from PIL import Image

from hf_vitrobust.corruptions.occlusion import fill_holes
from hf_vitrobust.models.preprocessing import Preprocessing

# Cutout's hole value (its `fill` default): black, albumentations' default fill in Paul & Chen's notebooks.
FILL = 0.0


def painted_mask(layers: Sequence[Image.Image], size: tuple[int, int]) -> torch.Tensor:
    """(H, W) bool, True where any layer holds paint (alpha > 0). `layers` are the editor's RGBA layers, each the
    size (width, height) of the photo; none, or untouched ones, give an empty mask."""
    width, height = size
    for layer in layers:
        if layer.size != (width, height):
            raise ValueError(
                f"A painted layer is {layer.width}x{layer.height} but the photo is {width}x{height}; paint on the "
                "photo as uploaded."
            )
    if not layers:
        return torch.zeros(height, width, dtype=torch.bool)
    alphas = torch.from_numpy(
        np.stack([np.asarray(layer.convert("RGBA").getchannel("A")) for layer in layers])
    )
    return (alphas > 0).any(dim=0)


def mask_for_model(preprocessing: Preprocessing, mask: torch.Tensor) -> torch.Tensor:
    """The photo's (H, W) mask where the model sees it, (1, 1, h, w) bool: resized and cropped with the photo's own
    `preprocessing`, True where the resized mask is more than half painted."""
    as_image = Image.fromarray(mask.to(torch.uint8).mul(255).numpy(), mode="L")
    return preprocessing.to_tensor(as_image)[:, :1] > 0.5


def occlude(pixels: torch.Tensor, mask: torch.Tensor, fill: float = FILL) -> torch.Tensor:
    """`pixels` (1, 3, h, w) in [0, 1] with the masked ones set to `fill`, as Cutout fills its hole."""
    return fill_holes(pixels, mask.to(pixels.device), fill)
