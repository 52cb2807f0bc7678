# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""ImageNet-C (or CIFAR-C) generated on the fly from a clean source, with `hf_vitrobust.corruptions`.

The clean images are preprocessed as the reference generation script (hendrycks/robustness
`ImageNet-C/create_c/make_imagenet_c.py`: shorter side resized to 256, center crop 224; `resize=None, crop=None`
keeps CIFAR's 32x32), batched, and corrupted with every requested corruption at every severity. The corruption
engine picks its parameter tables by image size ("cifar" up to 32x32, else "imagenet").

Each image's random corruptions are seeded by `seed` and a stable 31-bit hash of its clean sample id
(`stable_sample_index`), never by its position: a sample's corrupted image does not depend on the batch size, the
order of the stream or the number of processes. The generated images are not the released JPEGs (no quality-85
JPEG round trip, and a different random stream), and `describe()` says so.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import torch

from .. import __version__
from ..corruptions import STANDARD_CORRUPTIONS, corrupt, get_corruption
from ..corruptions.base import SEVERITIES, check_severity
from ..corruptions.export import IMAGENET_C_CROP, IMAGENET_C_RESIZE, resize_and_crop, stable_sample_index
from .samples import RawSample, Sample, Source


class GeneratedCorruptionSource(Source):
    """Corrupted copies of a clean source's samples: for each batch of `batch_size` clean samples, every corruption
    at every severity, in that order (the order of the stream depends on `batch_size`; the images do not).

    clean: the clean source (its labels are kept; its skipped images are counted in its report, which this source
        shares as `report`).
    corruptions: default the 15 standard ImageNet-C corruptions. severities: default 1..5.
    seed: seeds the random corruptions, with each clean sample id.
    resize, crop: the reference preprocessing (256, 224); None skips a step.

    Sample ids are "<corruption>/<severity>/<clean sample id>"; metadata is the clean sample's plus "corruption",
    "severity" and "generated": True.
    """

    def __init__(
        self,
        clean: Source,
        corruptions: Sequence[str] | None = None,
        severities: Sequence[int] | None = None,
        seed: int = 0,
        batch_size: int = 32,
        resize: int | None = IMAGENET_C_RESIZE,
        crop: int | None = IMAGENET_C_CROP,
    ) -> None:
        super().__init__()
        self.clean = clean
        # One report: bad clean images are skipped (and counted once) by the clean source's own stream.
        self.report = clean.report
        self.corruptions = tuple(STANDARD_CORRUPTIONS if corruptions is None else corruptions)
        self.severities = tuple(SEVERITIES if severities is None else severities)
        if not self.corruptions or not self.severities:
            raise ValueError("corruptions and severities must not be empty.")
        self.min_size = max(get_corruption(name).min_size for name in self.corruptions)
        for severity in self.severities:
            check_severity(severity)
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise ValueError(f"seed must be an int, got {seed!r}.")
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}.")
        if crop is not None and crop < self.min_size:
            raise ValueError(
                f"crop {crop} is smaller than the {self.min_size} pixels these corruptions need."
            )
        self.seed = seed
        self.batch_size = batch_size
        self.resize = resize
        self.crop = crop

    def validate(self) -> None:
        self.clean.validate()

    def _preprocessed(self) -> Iterator[tuple[Sample, torch.Tensor]]:
        for sample in self.clean.samples():
            if sample.image.dim() != 3:
                self.report.skip(
                    sample.sample_id, "not_an_image", "a sequence cannot be corrupted as one image"
                )
                continue
            image = resize_and_crop(sample.image, self.resize, self.crop)
            if min(image.shape[-2:]) < self.min_size:
                self.report.skip(
                    sample.sample_id,
                    "too_small",
                    f"{tuple(image.shape[-2:])} is below {self.min_size} pixels",
                )
                continue
            yield sample, image

    def _batches(self) -> Iterator[list[tuple[Sample, torch.Tensor]]]:
        batch = []
        for pair in self._preprocessed():
            batch.append(pair)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch:
            yield batch

    def raw_samples(self) -> Iterator[RawSample]:
        for batch in self._batches():
            # Images of one size are corrupted together (all of them, once cropped).
            groups: dict[tuple[int, ...], list[int]] = {}
            for position, (_, image) in enumerate(batch):
                groups.setdefault(tuple(image.shape), []).append(position)
            ids = [stable_sample_index(sample.sample_id) for sample, _ in batch]
            for name in self.corruptions:
                for severity in self.severities:
                    corrupted: list[torch.Tensor | None] = [None] * len(batch)
                    for positions in groups.values():
                        pixels = torch.stack([batch[p][1] for p in positions])
                        outputs = corrupt(
                            pixels, name, severity, seed=self.seed, sample_ids=[ids[p] for p in positions]
                        )
                        for p, output in zip(positions, outputs, strict=True):
                            corrupted[p] = output
                    for (sample, _), image in zip(batch, corrupted, strict=True):
                        yield RawSample(
                            data=image,
                            label=sample.label,
                            sample_id=f"{name}/{severity}/{sample.sample_id}",
                            metadata={
                                **sample.metadata,
                                "corruption": name,
                                "severity": severity,
                                "generated": True,
                            },
                        )

    def describe(self) -> dict[str, Any]:
        clean = self.clean.describe()
        return {
            "kind": "generated-corruptions",
            "location": clean.get("location"),
            "revision": clean.get("revision"),
            "generated": True,
            "note": "corrupted on the fly from the clean source, not the released ImageNet-C/CIFAR-C files",
            "clean": clean,
            "corruptions": list(self.corruptions),
            "severities": list(self.severities),
            "seed": self.seed,
            "sample_seed": "seed + BLAKE2b-31 of the clean sample id (hf_vitrobust.corruptions.export)",
            "resize": self.resize,
            "crop": self.crop,
            "profile": "by image size: cifar up to 32x32, else imagenet",
            "engine": f"hf_vitrobust.corruptions {__version__}",
        }


__all__ = ["GeneratedCorruptionSource"]
