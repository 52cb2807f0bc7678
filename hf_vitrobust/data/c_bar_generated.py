# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""ImageNet-C-bar generated on the fly: `CBarRecipe`, the `GenerationRecipe` of `make_imagenet_c_bar.py`.

Each clean image is resized to shorter side 256 and centre-cropped to 224 (the script's `Resize(256),
CenterCrop(224)`), corrupted by `hf_vitrobust.corruptions.c_bar.corrupt_c_bar` (seeded by the clean sample id, so
never by the batch), and saved as JPEG quality 85 and decoded again in memory, as the script saves it. Imported on
first use (`generated` needs the video codecs' module).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from .. import __version__
from ..constants import SEVERITIES
from ..corruptions.base import check_severity
from ..corruptions.c_bar import C_BAR_CORRUPTIONS, C_BAR_REGISTRY, C_BAR_SEVERITY_PARAMETERS, corrupt_c_bar
from ..corruptions.digital import jpeg_round_trip
from ..corruptions.export import IMAGENET_C_CROP, IMAGENET_C_RESIZE, resize_and_crop
from .generated import Cell, GenerationRecipe


class CBarRecipe(GenerationRecipe):
    """Every ImageNet-C-bar corruption at every severity, cells in that order.

    corruptions: default all 10 (`C_BAR_CORRUPTIONS`); severities: default 1..5 (the release's parameters,
    `C_BAR_SEVERITY_PARAMETERS`); seed: seeds every draw, with each clean sample id; jpeg_quality: 85 (the
    script's save) or None (the corrupted pixels as computed: the repository's in-memory `test_c_bar`).
    """

    kind = "generated-c-bar"
    min_size = IMAGENET_C_CROP

    def __init__(
        self,
        corruptions: Sequence[str] | None = None,
        severities: Sequence[int] | None = None,
        seed: int = 0,
        jpeg_quality: int | None = 85,
    ) -> None:
        self.corruptions = tuple(C_BAR_CORRUPTIONS if corruptions is None else corruptions)
        self.severities = tuple(SEVERITIES if severities is None else severities)
        if not self.corruptions or not self.severities:
            raise ValueError("corruptions and severities must not be empty.")
        for name in self.corruptions:
            C_BAR_REGISTRY.get(name)
        for severity in self.severities:
            check_severity(severity)
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise ValueError(f"seed must be an int, got {seed!r}.")
        if jpeg_quality not in (None, 85):
            raise ValueError(f"jpeg_quality must be 85 (the release's) or None, got {jpeg_quality!r}.")
        self.seed = seed
        self.jpeg_quality = jpeg_quality
        self.cells = tuple((name, severity) for name in self.corruptions for severity in self.severities)

    def prepare(self, image: torch.Tensor) -> torch.Tensor:
        return resize_and_crop(image, IMAGENET_C_RESIZE, IMAGENET_C_CROP)

    def make(self, cell: Cell, images: torch.Tensor, sample_ids: list[int]) -> torch.Tensor:
        name, severity = cell
        corrupted = corrupt_c_bar(images, name, severity, seed=self.seed, sample_ids=sample_ids)
        return corrupted if self.jpeg_quality is None else jpeg_round_trip(corrupted.cpu(), self.jpeg_quality)

    def cell_metadata(self, cell: Cell) -> dict[str, Any]:
        return {"corruption": cell[0], "severity": cell[1]}

    def describe(self, clean: dict[str, Any]) -> dict[str, Any]:
        return {
            "note": "ImageNet-C-bar corrupted on the fly from the clean source, not the released files: the same "
            "formulas, parameters and distributions as make_imagenet_c_bar.py, other random draws"
            + (
                " (saved as JPEG quality 85 and decoded again)"
                if self.jpeg_quality
                else " (no JPEG round trip)"
            ),
            "clean": clean,
            "corruptions": list(self.corruptions),
            "severities": list(self.severities),
            "severity_parameters": {name: list(C_BAR_SEVERITY_PARAMETERS[name]) for name in self.corruptions},
            "seed": self.seed,
            "sample_seed": "seed + BLAKE2b-31 of the clean sample id (hf_vitrobust.corruptions.export)",
            "resize": IMAGENET_C_RESIZE,
            "crop": IMAGENET_C_CROP,
            "release_encoding": "none" if self.jpeg_quality is None else "jpeg-85",
            "engine": f"hf_vitrobust.corruptions.c_bar {__version__}",
        }


__all__ = ["CBarRecipe"]
