# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""ImageNet-C (or CIFAR-C) and ImageNet-P generated on the fly from a clean source, with `hf_vitrobust.corruptions`.

One class, `GeneratedSource`, reads the clean source in batches and hands each batch to its recipe: a
`CorruptionRecipe` (every corruption at every severity) or a `PerturbationRecipe` (the sequence of every
perturbation). `GeneratedCorruptionSource` and `GeneratedPerturbationSource` build the two with their own options.

The clean images are preprocessed as the reference generation script (hendrycks/robustness
`ImageNet-C/create_c/make_imagenet_c.py`: shorter side resized to 256, center crop 224; `resize=None, crop=None`
keeps CIFAR's 32x32), batched, and corrupted with every requested corruption at every severity. The corruption
engine picks its parameter tables by image size ("cifar" up to 32x32, else "imagenet").

Each image's random corruptions are seeded by `seed` and a stable 31-bit hash of its clean sample id
(`stable_sample_index`), never by its position: a sample's corrupted image does not depend on the batch size, the
order of the stream or the number of processes. Like the released files, each corrupted ImageNet image is saved
as JPEG at quality 85 (make_imagenet_c.py's `save(quality=85, optimize=True)`) and decoded again, in memory
(`jpeg_quality=None` turns this off); CIFAR-C keeps the uint8 arrays, as make_cifar_c.py saves them. The random
draws still differ from the released files', and `describe()` says so.

Generation runs in two stages, which a runner may put in different places: `GeneratedSource.prepare_clean` (CPU:
the recipe's resize and crop of each decoded clean image, in DataLoader workers) and
`GeneratedSource.generate_prepared` (every cell, computed in batches on a given device, the images returned to the
CPU). Together they give the samples of `raw_samples()`, in its order; the per-sample seeding makes the values
independent of the device beyond its float rounding (the JPEG and H.264 round trips always run on the CPU, with
the reference's codecs).

ImageNet-P sequences (`PerturbationRecipe`) follow the reference `ImageNet-P/create_p/make_imagenet_p.py`:
the clean image is resized to shorter side 256 and `perturbation_sequence` makes the frames (224 centre crops), with
the same per-sample seeding; the frames are not MP4-compressed as the released videos are (libx264, `-crf 20
-preset veryslow`, `-tune grain` for the noise types): the difference is recorded in `describe()`.
"""

from __future__ import annotations

import abc
import dataclasses
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import torch

from .. import __version__
from ..constants import PERTURBATIONS, SEVERITIES, STANDARD_CORRUPTIONS, TEST_PERTURBATIONS
from ..corruptions import corrupt, get_corruption
from ..corruptions.base import check_severity
from ..corruptions.digital import jpeg_round_trip
from ..corruptions.export import (
    IMAGENET_C_CROP,
    IMAGENET_C_JPEG_QUALITY,
    IMAGENET_C_RESIZE,
    resize_and_crop,
    stable_sample_index,
)
from ..corruptions.perturbations import DEFAULT_CROP, FRAME_COUNTS, NOISE_LEVELS, perturbation_sequence
from ..registry import did_you_mean
from .imagenet_p import DIFFICULTIES, h264_round_trip
from .samples import RawSample, Sample, SkipReport, Source

#: make_imagenet_p.py resizes every validation image to shorter side 256 before making its sequence.
IMAGENET_P_RESIZE = 256
#: How generated ImageNet-P sequences are stored: as computed, or through the release's H.264 compression.
VIDEO_ENCODINGS = ("none", "h264")

#: A cell of a generated benchmark: (corruption, severity) or (perturbation, difficulty).
Cell = tuple[str, int]


def _prepared_pairs(
    samples: Iterable[Sample],
    report: SkipReport,
    min_size: int,
    prepare: Callable[[torch.Tensor], torch.Tensor],
) -> Iterator[tuple[Sample, torch.Tensor]]:
    """(clean sample, prepared uint8 image) for each of `samples` a generated source can use. A sequence, or an
    image smaller than `min_size` pixels once prepared (resized, cropped), is skipped and recorded in `report`."""
    for sample in samples:
        if sample.image.dim() != 3:
            report.skip(sample.sample_id, "not_an_image", "a sequence cannot be corrupted or perturbed again")
            continue
        image = prepare(sample.image)
        if min(image.shape[-2:]) < min_size:
            report.skip(
                sample.sample_id, "too_small", f"{tuple(image.shape[-2:])} is below {min_size} pixels"
            )
            continue
        yield sample, image


def clean_batches(
    clean: Source,
    report: SkipReport,
    batch_size: int,
    min_size: int,
    prepare: Callable[[torch.Tensor], torch.Tensor],
) -> Iterator[list[tuple[Sample, torch.Tensor]]]:
    """Batches of (clean sample, prepared uint8 image) for a generated source, as `_prepared_pairs` makes them (the
    skipped samples recorded in `report`)."""
    batch: list[tuple[Sample, torch.Tensor]] = []
    for pair in _prepared_pairs(clean.samples(), report, min_size, prepare):
        batch.append(pair)
        if len(batch) == batch_size:
            yield batch
            batch = []
    if batch:
        yield batch


def _as_device(device: torch.device | str) -> torch.device:
    """`device` as a torch.device; a ValueError naming the accepted forms for anything else."""
    if isinstance(device, torch.device):
        return device
    if isinstance(device, str):
        try:
            return torch.device(device)
        except RuntimeError as error:
            raise ValueError(
                f"device must be a torch.device or a device string such as 'cpu', 'cuda' or 'cuda:1', "
                f"got {device!r} ({error})."
            ) from error
    raise ValueError(
        f"device must be a torch.device or a device string, got {type(device).__name__} {device!r}."
    )


def _on_cpu(outputs: Sequence[torch.Tensor]) -> Sequence[torch.Tensor]:
    """A recipe's outputs on the CPU: a batch tensor in one transfer, a list one tensor at a time."""
    if isinstance(outputs, torch.Tensor):
        return outputs.cpu()
    return [output.cpu() for output in outputs]


def _group_by_shape(images: Sequence[torch.Tensor]) -> list[list[int]]:
    """Positions of the images of each shape, so that images of one size are processed together."""
    groups: dict[tuple[int, ...], list[int]] = {}
    for position, image in enumerate(images):
        groups.setdefault(tuple(image.shape), []).append(position)
    return list(groups.values())


def _check_seed(seed: Any) -> None:
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise ValueError(f"seed must be an int, got {seed!r}.")


class GenerationRecipe(abc.ABC):
    """What a `GeneratedSource` makes of each clean image: one sample per cell, in the order of `cells`.

    `prepare` turns a clean image into the engine's input (resize, crop); an image smaller than `min_size` once
    prepared is skipped. `make` produces one cell for a stack of prepared images of one size, each seeded by its
    clean sample id's stable index, computed on the stack's device; its outputs, one per image, are on that device,
    or on the CPU after a step that runs only there (the release's JPEG or H.264 round trip). `cell_metadata` is
    what a made sample's metadata adds for its cell, and `describe` the recipe's part of the source's `describe()`
    (the clean source's description goes in it as "clean").
    """

    #: The `describe()["kind"]` of a source of this recipe.
    kind: str
    #: Pixels an image needs (shorter side, once prepared).
    min_size: int
    cells: tuple[Cell, ...]

    @abc.abstractmethod
    def prepare(self, image: torch.Tensor) -> torch.Tensor: ...

    @abc.abstractmethod
    def make(self, cell: Cell, images: torch.Tensor, sample_ids: list[int]) -> Sequence[torch.Tensor]: ...

    @abc.abstractmethod
    def cell_metadata(self, cell: Cell) -> dict[str, Any]: ...

    @abc.abstractmethod
    def describe(self, clean: dict[str, Any]) -> dict[str, Any]: ...


class CorruptionRecipe(GenerationRecipe):
    """Every corruption at every severity (ImageNet-C, CIFAR-C), cells in that order.

    corruptions: default the 15 standard ImageNet-C corruptions. severities: default 1..5.
    seed: seeds the random corruptions, with each clean sample id.
    resize, crop: the reference preprocessing (256, 224); None skips a step.
    jpeg_quality: the JPEG round trip of the released files (85, pixel-equal to Pillow's save and reload); None
        keeps the corrupted images as computed (the "in-memory" ImageNet-C of the imagenet-testbed, which scores
        higher than the released files).
    """

    kind = "generated-corruptions"

    def __init__(
        self,
        corruptions: Sequence[str] | None = None,
        severities: Sequence[int] | None = None,
        seed: int = 0,
        resize: int | None = IMAGENET_C_RESIZE,
        crop: int | None = IMAGENET_C_CROP,
        jpeg_quality: int | None = IMAGENET_C_JPEG_QUALITY,
    ) -> None:
        self.corruptions = tuple(STANDARD_CORRUPTIONS if corruptions is None else corruptions)
        self.severities = tuple(SEVERITIES if severities is None else severities)
        if not self.corruptions or not self.severities:
            raise ValueError("corruptions and severities must not be empty.")
        self.min_size = max(get_corruption(name).min_size for name in self.corruptions)
        for severity in self.severities:
            check_severity(severity)
        _check_seed(seed)
        if crop is not None and crop < self.min_size:
            raise ValueError(
                f"crop {crop} is smaller than the {self.min_size} pixels these corruptions need."
            )
        if jpeg_quality is not None and (
            isinstance(jpeg_quality, bool)
            or not isinstance(jpeg_quality, int)
            or not 1 <= jpeg_quality <= 100
        ):
            raise ValueError(f"jpeg_quality must be None or an integer in 1..100, got {jpeg_quality!r}.")
        self.seed = seed
        self.resize = resize
        self.crop = crop
        self.jpeg_quality = jpeg_quality
        self.cells = tuple((name, severity) for name in self.corruptions for severity in self.severities)

    def prepare(self, image: torch.Tensor) -> torch.Tensor:
        return resize_and_crop(image, self.resize, self.crop)

    def make(self, cell: Cell, images: torch.Tensor, sample_ids: list[int]) -> torch.Tensor:
        name, severity = cell
        corrupted = corrupt(images, name, severity, seed=self.seed, sample_ids=sample_ids)
        # The release's JPEG step runs on the CPU whatever the images' device (libjpeg, Pillow's pixels): corrupted
        # images on a GPU come back once here and stay on the CPU.
        return corrupted if self.jpeg_quality is None else jpeg_round_trip(corrupted.cpu(), self.jpeg_quality)

    def cell_metadata(self, cell: Cell) -> dict[str, Any]:
        return {"corruption": cell[0], "severity": cell[1]}

    def describe(self, clean: dict[str, Any]) -> dict[str, Any]:
        return {
            "note": "corrupted on the fly from the clean source, not the released ImageNet-C/CIFAR-C files"
            + (
                f" (each image saved as JPEG quality {self.jpeg_quality} and decoded again, as the release's)"
                if self.jpeg_quality is not None
                else " (no JPEG round trip)"
            ),
            "clean": clean,
            "corruptions": list(self.corruptions),
            "severities": list(self.severities),
            "seed": self.seed,
            "sample_seed": "seed + BLAKE2b-31 of the clean sample id (hf_vitrobust.corruptions.export)",
            "resize": self.resize,
            "crop": self.crop,
            "release_encoding": "none" if self.jpeg_quality is None else f"jpeg-{self.jpeg_quality}",
            "profile": "by image size: cifar up to 32x32, else imagenet",
            "engine": f"hf_vitrobust.corruptions {__version__}",
        }


class PerturbationRecipe(GenerationRecipe):
    """The sequence of every perturbation (ImageNet-P), cells (perturbation, difficulty) in that order.

    perturbations: default the 10 test perturbations of ImageNet-P (`TEST_PERTURBATIONS`).
    difficulty: 1, 2 or 3. The noise sequences take its noise level (the release's `<noise>_<d>` folders); the
        others are the same frames at every difficulty, which ImageNet-P's evaluation compares `d` frames apart
        (recorded in the metadata, as the release's videos are read).
    seed: seeds the noise, snow and spatter sequences, with each clean sample id (`stable_sample_index`).
    resize: the reference's shorter side (256), None to keep the image; crop: the frame size (224).
    video_encoding: "none" (default): the frames as computed; "h264": each sequence encoded as the release's videos
        (`hf_vitrobust.data.imagenet_p.encode_video_as_released`) and decoded again, about 3 s per sequence on a
        CPU core. The release's own x264 build is unknown, so this approximates its compression; it is not
        bit-equal to the released files.
    """

    kind = "generated-perturbations"

    def __init__(
        self,
        perturbations: Sequence[str] | None = None,
        difficulty: int = 1,
        seed: int = 0,
        resize: int | None = IMAGENET_P_RESIZE,
        crop: int = DEFAULT_CROP,
        video_encoding: str = "none",
    ) -> None:
        if video_encoding not in VIDEO_ENCODINGS:
            raise ValueError(
                f"video_encoding must be one of {', '.join(VIDEO_ENCODINGS)}, got {video_encoding!r}."
            )
        self.video_encoding = video_encoding
        self.perturbations = tuple(TEST_PERTURBATIONS if perturbations is None else perturbations)
        if isinstance(perturbations, str) or not self.perturbations:
            raise ValueError(f"perturbations must be a non-empty list of names, got {perturbations!r}.")
        for name in self.perturbations:
            if name not in PERTURBATIONS:
                hint = did_you_mean(name, PERTURBATIONS)
                raise ValueError(f"Unknown perturbation {name!r}.{hint} Known: {', '.join(PERTURBATIONS)}.")
        if isinstance(difficulty, bool) or difficulty not in DIFFICULTIES:
            raise ValueError(f"difficulty must be 1, 2 or 3, got {difficulty!r}.")
        _check_seed(seed)
        if crop < 1 or (resize is not None and resize < crop):
            raise ValueError(f"resize {resize} must be at least crop {crop} (and crop positive).")
        self.difficulty = difficulty
        self.seed = seed
        self.resize = resize
        self.crop = crop
        self.min_size = crop
        self.cells = tuple((name, difficulty) for name in self.perturbations)

    def engine_difficulty(self, name: str) -> int:
        """The `perturbation_sequence` difficulty of `name`: the noise level for the noise types, else 1."""
        return self.difficulty if name in NOISE_LEVELS else 1

    def prepare(self, image: torch.Tensor) -> torch.Tensor:
        return resize_and_crop(image, self.resize, None)

    def make(self, cell: Cell, images: torch.Tensor, sample_ids: list[int]) -> Sequence[torch.Tensor]:
        name = cell[0]
        frames = perturbation_sequence(
            images, name, self.engine_difficulty(name), seed=self.seed, sample_ids=sample_ids, crop=self.crop
        )
        if self.video_encoding == "none":
            return frames
        # The H.264 round trip (ffmpeg) runs on the CPU whatever the frames' device.
        return [h264_round_trip(sequence, name) for sequence in frames.cpu()]

    def cell_metadata(self, cell: Cell) -> dict[str, Any]:
        return {"perturbation": cell[0], "difficulty": cell[1]}

    def describe(self, clean: dict[str, Any]) -> dict[str, Any]:
        return {
            "note": "perturbation sequences made on the fly from the clean source, not the released ImageNet-P "
            + (
                "videos: no MP4 compression (make_imagenet_p.py encodes with libx264 -crf 20 -preset veryslow, "
                "-tune grain for the noise sequences)"
                if self.video_encoding == "none"
                else "videos, encoded with the release's libx264 settings and decoded (not bit-equal to them)"
            ),
            "release_encoding": self.video_encoding,
            "clean": clean,
            "perturbations": list(self.perturbations),
            "difficulty": self.difficulty,
            "frames": {name: FRAME_COUNTS[name] for name in self.perturbations},
            "seed": self.seed,
            "sample_seed": "seed + BLAKE2b-31 of the clean sample id (hf_vitrobust.corruptions.export)",
            "resize": self.resize,
            "crop": self.crop,
            "engine": f"hf_vitrobust.corruptions.perturbations {__version__}",
        }


class GeneratedSource(Source):
    """Samples generated on the fly from a clean source's: for each batch of `batch_size` clean samples, every cell
    of `recipe` in order, each for every sample of the batch (the order of the stream depends on `batch_size`;
    the images do not, as each is seeded by its clean sample id).

    clean: the clean source (its labels are kept; its skipped images are counted in its report, which this source
        shares as `report`).
    recipe: a `CorruptionRecipe` or a `PerturbationRecipe`.
    batch_size: clean images per call of the engine (ImageNet-P: about 40 MB of float64 per image and
        perturbation).

    Sample ids are "<corruption>/<severity>/<clean sample id>" (or "<perturbation>/<difficulty>/..."); metadata
    is the clean sample's plus the cell's ("corruption" and "severity", or "perturbation" and "difficulty"),
    "generated": True and "clean_sample_id".
    """

    def __init__(self, clean: Source, recipe: GenerationRecipe, batch_size: int = 32) -> None:
        super().__init__()
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}.")
        self.clean = clean
        # One report: bad clean images are skipped (and counted once) by the clean source's own stream.
        self.report = clean.report
        self.recipe = recipe
        self.batch_size = batch_size

    @property
    def clean_source(self) -> Source:
        return self.clean

    @property
    def expansion(self) -> int:
        return len(self.recipe.cells)

    def with_clean(self, clean: Source) -> GeneratedSource:
        return GeneratedSource(clean, self.recipe, self.batch_size)

    def limited(self, limit: int, per_cell: bool = False) -> Source:
        """per_cell: the first `limit` clean images, each in every cell; else the first `limit` generated samples."""
        return self.with_clean(self.clean.limited(limit)) if per_cell else super().limited(limit)

    def sampled(self, limit: int, seed: int, per_cell: bool = False) -> Source:
        """per_cell: a random `limit` of the clean images, each in every cell; else a random `limit` of the
        generated samples (which generates every one of them to list the stream)."""
        if per_cell:
            return self.with_clean(self.clean.sampled(limit, seed))
        return super().sampled(limit, seed)

    def count_without_decoding(self) -> int | None:
        count = self.clean.count_without_decoding()
        return None if count is None else count * self.expansion

    def validate(self) -> None:
        self.clean.validate()

    def validate_shards(self, shards: Sequence[int]) -> None:
        self.clean.validate_shards(shards)

    def raw_samples(self) -> Iterator[RawSample]:
        recipe = self.recipe
        for batch in clean_batches(self.clean, self.report, self.batch_size, recipe.min_size, recipe.prepare):
            yield from self._generate(batch, None)

    def prepare_clean(self, samples: list[Sample], report: SkipReport) -> list[Sample]:
        """The CPU stage of generation (what a DataLoader worker runs): each decoded clean sample with its image
        prepared by the recipe (ImageNet-C: shorter side 256, centre crop 224; ImageNet-P: shorter side 256), in
        order. A sequence, or an image smaller than the recipe's `min_size` once prepared, is left out and recorded
        in `report`, exactly as `raw_samples()` skips it. Labels, sample ids and metadata are the clean sample's.
        """
        recipe = self.recipe
        return [
            dataclasses.replace(sample, image=image)
            for sample, image in _prepared_pairs(samples, report, recipe.min_size, recipe.prepare)
        ]

    def generate_prepared(self, prepared: list[Sample], device: torch.device | str) -> list[Sample]:
        """The device stage of generation: every cell of the recipe for `prepared` (what `prepare_clean` returned),
        computed on `device`.

        The samples are those `raw_samples()` yields for a clean stream of these samples, in its order: consecutive
        batches of `batch_size` prepared samples, and in each batch every cell in `recipe.cells` order, each for
        every sample of the batch in the order given. Sample ids, labels and metadata are the same, so
        `generate_prepared(prepare_clean(samples, report), device)` equals
        `list(with_clean(InMemorySource(samples)).samples())` for any list of decoded samples (one batch when
        `batch_size` covers them all), bit for bit on the CPU; each image is seeded by its clean sample id, so
        another device changes the values only by that device's float rounding, never the random draws.

        The prepared images of each batch and shape are stacked and moved to `device` once; the corruption or
        perturbation runs there, and the release's JPEG quality-85 round trip (and the optional H.264 one) on the
        CPU, with the reference's codec. The images come back as CPU uint8 tensors: (3, H, W) images, or
        (T, 3, crop, crop) sequences. A bad device string is a ValueError; an image that `prepare_clean` would
        not have passed (not uint8 (3, H, W), or below `min_size`) is a ValueError.
        """
        target = _as_device(device)
        for sample in prepared:
            image = sample.image
            if image.dim() != 3 or image.shape[0] != 3 or image.dtype != torch.uint8:
                raise ValueError(
                    f"{sample.sample_id}: expected a prepared uint8 (3, H, W) image (prepare_clean), got "
                    f"{image.dtype} {tuple(image.shape)}."
                )
            if min(image.shape[-2:]) < self.recipe.min_size:
                raise ValueError(
                    f"{sample.sample_id}: {tuple(image.shape[-2:])} is below the recipe's {self.recipe.min_size} "
                    "pixels; prepare_clean skips such images."
                )
        made = []
        for start in range(0, len(prepared), self.batch_size):
            batch = [(sample, sample.image) for sample in prepared[start : start + self.batch_size]]
            made += [
                Sample(image=raw.data, label=raw.label, sample_id=raw.sample_id, metadata=raw.metadata)
                for raw in self._generate(batch, target)
            ]
        return made

    def _generate(
        self, batch: list[tuple[Sample, torch.Tensor]], device: torch.device | None
    ) -> Iterator[RawSample]:
        """Every cell for one batch of (clean sample, prepared image): cells in order, each for every sample of the
        batch. With a `device`, each shape's stack goes there once and the outputs come back to the CPU; with None,
        everything stays where the images are."""
        recipe = self.recipe
        # Images of one size are processed together (all of them, once cropped).
        groups = _group_by_shape([image for _, image in batch])
        ids = [stable_sample_index(sample.sample_id) for sample, _ in batch]
        stacks = [torch.stack([batch[p][1] for p in positions]) for positions in groups]
        if device is not None:
            stacks = [stack.to(device) for stack in stacks]
        for cell in recipe.cells:
            made: list[torch.Tensor | None] = [None] * len(batch)
            for positions, pixels in zip(groups, stacks, strict=True):
                outputs = recipe.make(cell, pixels, [ids[p] for p in positions])
                if device is not None:
                    outputs = _on_cpu(outputs)
                for p, output in zip(positions, outputs, strict=True):
                    made[p] = output
            extra = recipe.cell_metadata(cell)
            for (sample, _), image in zip(batch, made, strict=True):
                yield RawSample(
                    data=image,
                    label=sample.label,
                    sample_id=f"{cell[0]}/{cell[1]}/{sample.sample_id}",
                    metadata={
                        **sample.metadata,
                        **extra,
                        "generated": True,
                        "clean_sample_id": sample.sample_id,
                    },
                )

    def describe(self) -> dict[str, Any]:
        clean = self.clean.describe()
        return {
            "kind": self.recipe.kind,
            "location": clean.get("location"),
            "revision": clean.get("revision"),
            "generated": True,
            **self.recipe.describe(clean),
        }


def _from_recipe(name: str) -> property:
    return property(lambda self: getattr(self.recipe, name), doc=f"The recipe's `{name}`.")


class GeneratedCorruptionSource(GeneratedSource):
    """ImageNet-C / CIFAR-C of a clean source: a `GeneratedSource` with a `CorruptionRecipe` of these options (see
    both). Each image is `make_imagenet_c.py`'s: resized to 256, center-cropped to 224, corrupted, and saved as
    JPEG quality 85 and decoded again."""

    recipe: CorruptionRecipe

    def __init__(
        self,
        clean: Source,
        corruptions: Sequence[str] | None = None,
        severities: Sequence[int] | None = None,
        seed: int = 0,
        batch_size: int = 32,
        resize: int | None = IMAGENET_C_RESIZE,
        crop: int | None = IMAGENET_C_CROP,
        jpeg_quality: int | None = IMAGENET_C_JPEG_QUALITY,
    ) -> None:
        recipe = CorruptionRecipe(corruptions, severities, seed, resize, crop, jpeg_quality)
        super().__init__(clean, recipe, batch_size)

    corruptions = _from_recipe("corruptions")
    severities = _from_recipe("severities")
    seed = _from_recipe("seed")
    resize = _from_recipe("resize")
    crop = _from_recipe("crop")
    jpeg_quality = _from_recipe("jpeg_quality")
    min_size = _from_recipe("min_size")


class GeneratedPerturbationSource(GeneratedSource):
    """ImageNet-P of a clean source: a `GeneratedSource` with a `PerturbationRecipe` of these options (see both).
    Each sample's image is a uint8 (T, 3, crop, crop) sequence (T = 41 for translate, 31 otherwise)."""

    recipe: PerturbationRecipe

    def __init__(
        self,
        clean: Source,
        perturbations: Sequence[str] | None = None,
        difficulty: int = 1,
        seed: int = 0,
        batch_size: int = 8,
        resize: int | None = IMAGENET_P_RESIZE,
        crop: int = DEFAULT_CROP,
        video_encoding: str = "none",
    ) -> None:
        recipe = PerturbationRecipe(perturbations, difficulty, seed, resize, crop, video_encoding)
        super().__init__(clean, recipe, batch_size)

    perturbations = _from_recipe("perturbations")
    difficulty = _from_recipe("difficulty")
    seed = _from_recipe("seed")
    resize = _from_recipe("resize")
    crop = _from_recipe("crop")
    video_encoding = _from_recipe("video_encoding")

    def engine_difficulty(self, name: str) -> int:
        """The `perturbation_sequence` difficulty of `name`: the noise level for the noise types, else 1."""
        return self.recipe.engine_difficulty(name)


__all__ = [
    "IMAGENET_P_RESIZE",
    "VIDEO_ENCODINGS",
    "CorruptionRecipe",
    "GeneratedCorruptionSource",
    "GeneratedPerturbationSource",
    "GeneratedSource",
    "GenerationRecipe",
    "PerturbationRecipe",
    "clean_batches",
]
