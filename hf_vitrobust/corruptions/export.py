# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Write corrupted copies of images, in the layout and encoding of the released ImageNet-C.

The reference generation script (hendrycks/robustness, ImageNet-C/create_c/make_imagenet_c.py) resizes each
validation image's shorter side to 256, center-crops 224, corrupts it, and saves
`<corruption>/<severity>/<class>/<file name>` as JPEG with quality 85 and `optimize=True`.

`write_corrupted_images` does this for any stream of `ExportItem`s (class folder, file name, image), batched
through `corrupt`; it reads the stream once and writes every corruption and severity of each batch.
`corrupt_image_folder` feeds it a folder in the `<class>/<file>` layout. This module knows nothing of data sources:
the command line adapts a benchmark source (parquet files, a Hub dataset) into items.

Every item carries the sample id that seeds its random corruptions, so an image's corruption depends only on the
seed and that id, not on the batch size. The job is resumable: files are written atomically (temporary name, then
rename) and outputs that already exist are skipped without reading their image. An unreadable image is skipped,
counted and reported; nothing already written is lost.
"""

import hashlib
import io
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path

import torch
from PIL import Image, UnidentifiedImageError
from torchvision.transforms.v2 import functional as TF

from ..atomic_files import atomic_path, write_bytes_atomic
from .base import SEVERITIES, check_severity, get_corruption
from .base import corrupt as apply_corruption

IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp")
# make_imagenet_c.py: trn.Resize(256), trn.CenterCrop(224); Image.save(..., quality=85, optimize=True).
IMAGENET_C_RESIZE = 256
IMAGENET_C_CROP = 224
IMAGENET_C_JPEG_QUALITY = 85
OUTPUT_FORMATS = ("jpeg", "parquet")


@dataclass
class ExportReport:
    """What a `write_corrupted_images` run did."""

    written: int = 0
    skipped_existing: int = 0
    bad_images: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "written": self.written,
            "skipped_existing": self.skipped_existing,
            "bad_images": self.bad_images,
        }


@dataclass(frozen=True)
class ExportItem:
    """One image to corrupt and write.

    class_name: the `<class>` folder (and the parquet "label" column).
    file_name: the output file name in JPEG mode (the released ImageNet-C keeps each file's name).
    relative_path: the image's name in its source (the parquet "file" column).
    sample_index: the sample id that seeds the random corruptions (`corrupt`'s `sample_ids`).
    image: a uint8 (3, H, W) tensor, or a function returning one; a function is only called when some output of
        the item is missing, and may raise OSError/ValueError for an unreadable image (skipped and reported).
    origin: how the report names the image when it cannot be read (default: relative_path).
    """

    class_name: str
    file_name: str
    relative_path: str
    sample_index: int
    image: torch.Tensor | Callable[[], torch.Tensor]
    origin: str | None = None


def stable_sample_index(key: str) -> int:
    """A 31-bit integer id from a string sample id (BLAKE2b), the same in every process, run and platform, to seed
    a sample's random corruptions from its name rather than from its position in a stream."""
    digest = hashlib.blake2b(key.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") & 0x7FFFFFFF


def list_image_folder(root: str | os.PathLike) -> list[tuple[str, Path]]:
    """(class name, file) for every image in `root/<class>/...`, sorted as torchvision's ImageFolder sorts."""
    root = Path(root)
    if not root.is_dir():
        raise ValueError(f"{root} is not a folder.")
    classes = sorted(entry.name for entry in root.iterdir() if entry.is_dir())
    if not classes:
        raise ValueError(f"{root} has no class folders: expected the layout <root>/<class>/<image file>.")
    samples = []
    for name in classes:
        for directory, _, files in sorted(os.walk(root / name)):
            samples += [
                (name, Path(directory) / file)
                for file in sorted(files)
                if file.lower().endswith(IMAGE_EXTENSIONS)
            ]
    if not samples:
        raise ValueError(f"{root} has class folders but no images with extensions {IMAGE_EXTENSIONS}.")
    return samples


def resize_and_crop(image: Image.Image | torch.Tensor, resize: int | None, crop: int | None) -> torch.Tensor:
    """An RGB uint8 tensor (3, H, W): shorter side resized to `resize` (bilinear on the PIL image, as
    torchvision's Resize in the reference script), then center-cropped to `crop`; either step is skipped when None.
    A tensor input is a uint8 (3, H, W) RGB image; it goes through PIL so both inputs give the same pixels."""
    if isinstance(image, torch.Tensor):
        if resize is None and crop is None:
            return image
        image = TF.to_pil_image(image)
    image = image.convert("RGB")
    if resize is not None:
        image = TF.resize(image, [resize], interpolation=TF.InterpolationMode.BILINEAR, antialias=True)
    if crop is not None:
        image = TF.center_crop(image, [crop, crop])
    return TF.pil_to_tensor(image)


def load_image(path: Path, resize: int | None, crop: int | None) -> torch.Tensor:
    """The image file at `path` as `resize_and_crop` returns it."""
    with Image.open(path) as image:
        return resize_and_crop(image.convert("RGB"), resize, crop)


def _jpeg_bytes(image: torch.Tensor, quality: int) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(image.permute(1, 2, 0).cpu().numpy()).save(
        buffer, format="JPEG", quality=quality, optimize=True
    )
    return buffer.getvalue()


def _write_parquet(path: Path, records: list[dict]) -> None:
    """A parquet file with the Hub's Image feature (so `load_dataset("parquet", ...)` decodes the images)."""
    from datasets import Dataset, Features, Value
    from datasets import Image as ImageFeature

    features = Features(
        {"image": ImageFeature(), "label": Value("string"), "file": Value("string"),
         "corruption": Value("string"), "severity": Value("int32")}
    )  # fmt: skip
    Dataset.from_list(records, features=features).to_parquet(path)


def check_export_request(
    corruptions: Sequence[str],
    severities: Sequence[int],
    batch_size: int,
    output_format: str,
    jpeg_quality: int,
) -> None:
    """Raise ValueError for an unknown corruption, a bad severity or option, before any image is read."""
    if not corruptions:
        raise ValueError("No corruptions given.")
    for name in corruptions:
        get_corruption(name)
    if not severities:
        raise ValueError("No severities given.")
    for severity in severities:
        check_severity(severity)
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}.")
    if output_format not in OUTPUT_FORMATS:
        raise ValueError(f"output_format must be 'jpeg' or 'parquet', got {output_format!r}.")
    if not 1 <= jpeg_quality <= 100:
        raise ValueError(f"jpeg_quality must be in 1..100, got {jpeg_quality}.")


def _batches(items: Iterable[ExportItem], batch_size: int) -> Iterator[list[ExportItem]]:
    iterator = iter(items)
    while batch := list(islice(iterator, batch_size)):
        yield batch


def _corrupt_by_shape(
    images: list[torch.Tensor],
    name: str,
    severity: int,
    seed: int,
    ids: list[int],
    device: str | torch.device,
) -> list[torch.Tensor]:
    """Corrupt images of possibly different sizes, one stacked batch per size; per-image ids keep every result
    independent of the grouping."""
    results: list[torch.Tensor | None] = [None] * len(images)
    groups: dict[tuple[int, ...], list[int]] = {}
    for position, image in enumerate(images):
        groups.setdefault(tuple(image.shape), []).append(position)
    for positions in groups.values():
        pixels = torch.stack([images[p] for p in positions]).to(device)
        group_ids = [ids[p] for p in positions]
        corrupted = apply_corruption(pixels, name, severity, seed=seed, sample_ids=group_ids).cpu()
        for position, image in zip(positions, corrupted, strict=True):
            results[position] = image
    return results  # type: ignore[return-value]


class _BatchImages:
    """The clean images of one batch, each read at most once (and only when some output needs it); an unreadable
    or too small one is reported once and remembered in `bad`."""

    def __init__(self, batch: list[ExportItem], report: ExportReport, min_size: int) -> None:
        self.batch = batch
        self.report = report
        self.min_size = min_size
        self.loaded: dict[int, torch.Tensor] = {}
        self.bad: set[int] = set()

    def get(self, position: int) -> torch.Tensor | None:
        if position in self.bad:
            return None
        if position not in self.loaded:
            item = self.batch[position]
            try:
                image = item.image() if callable(item.image) else item.image
                if image.dim() != 3 or image.shape[0] != 3 or min(image.shape[-2:]) < self.min_size:
                    raise ValueError(f"expected a (3, H, W) image of at least {self.min_size} pixels a side")
                self.loaded[position] = image
            except (OSError, UnidentifiedImageError, ValueError):
                self.bad.add(position)
                self.report.bad_images.append(item.origin or item.relative_path)
                return None
        return self.loaded[position]


def write_corrupted_images(
    items: Iterable[ExportItem],
    output: str | os.PathLike,
    corruptions: Sequence[str],
    severities: Sequence[int] = SEVERITIES,
    seed: int = 0,
    batch_size: int = 32,
    output_format: str = "jpeg",
    jpeg_quality: int = IMAGENET_C_JPEG_QUALITY,
    device: str | torch.device = "cpu",
    progress: Callable[[int], None] | None = None,
) -> ExportReport:
    """Corrupt every item with each corruption at each severity; the items are read once, `batch_size` at a time.

    `output_format="jpeg"` writes `output/<corruption>/<severity>/<class>/<file name>` (the released ImageNet-C
    layout). `output_format="parquet"` writes `output/<corruption>/<severity>/part-NNNNN.parquet`, one per batch of
    `batch_size` items in stream order, with columns image (JPEG bytes), label (class folder), file, corruption and
    severity; resuming a parquet export needs the same items in the same order and the same batch size.

    The request is validated before any item is read. `progress`, when given, is called with the number of items
    finished after each batch and each corruption and severity.
    """
    check_export_request(corruptions, severities, batch_size, output_format, jpeg_quality)
    output = Path(output)
    report = ExportReport()
    # An image too small for a corruption is reported like an unreadable one, instead of ending the stream.
    min_size = max(get_corruption(name).min_size for name in corruptions)
    for part, batch in enumerate(_batches(items, batch_size)):
        images = _BatchImages(batch, report, min_size)
        for name in corruptions:
            for severity in severities:
                folder = output / name / str(severity)
                part_file = folder / f"part-{part:05d}.parquet"
                if output_format == "jpeg":
                    targets = {
                        p: folder / item.class_name / item.file_name
                        for p, item in enumerate(batch)
                        if p not in images.bad
                    }
                    todo = [p for p, target in targets.items() if not target.exists()]
                    report.skipped_existing += len(targets) - len(todo)
                elif part_file.exists():
                    todo = []
                    report.skipped_existing += len(batch)
                else:
                    todo = [p for p in range(len(batch)) if p not in images.bad]
                clean = {p: image for p in todo if (image := images.get(p)) is not None}
                if clean:
                    positions = list(clean)
                    corrupted = _corrupt_by_shape(
                        list(clean.values()), name, severity, seed,
                        [batch[p].sample_index for p in positions], device,
                    )  # fmt: skip
                    if output_format == "jpeg":
                        for p, image in zip(positions, corrupted, strict=True):
                            data = _jpeg_bytes(image, jpeg_quality)
                            write_bytes_atomic(targets[p], data, durable=False)
                    else:
                        records = [
                            {"image": {"bytes": _jpeg_bytes(image, jpeg_quality), "path": batch[p].file_name},
                             "label": batch[p].class_name, "file": batch[p].relative_path,
                             "corruption": name, "severity": severity}
                            for p, image in zip(positions, corrupted, strict=True)
                        ]  # fmt: skip
                        with atomic_path(part_file) as temporary:
                            _write_parquet(temporary, records)
                    report.written += len(positions)
                if progress is not None:
                    progress(len(batch))
    return report


def corrupt_image_folder(
    source: str | os.PathLike,
    output: str | os.PathLike,
    corruptions: Sequence[str],
    severities: Sequence[int] = SEVERITIES,
    seed: int = 0,
    batch_size: int = 32,
    output_format: str = "jpeg",
    resize: int | None = IMAGENET_C_RESIZE,
    crop: int | None = IMAGENET_C_CROP,
    jpeg_quality: int = IMAGENET_C_JPEG_QUALITY,
    device: str | torch.device = "cpu",
    progress: Callable[[int], None] | None = None,
) -> ExportReport:
    """Corrupt every image of `source/<class>/<file>` with each corruption at each severity.

    Writes what `write_corrupted_images` writes; the class folders keep their names, each file keeps its name, and
    an image's corruption is seeded by the stable hash of its path under `source` ("<class>/<file>", the sample
    id the data layer gives it), so the files written here are pixel for pixel the images a run generates on the
    fly from the same folder with the same seed (`generated:<folder>`). Everything is validated before any image
    is read. With `crop=None`, images of different sizes are corrupted in separate stacks.
    """
    check_export_request(corruptions, severities, batch_size, output_format, jpeg_quality)
    samples = list_image_folder(source)
    items = (
        ExportItem(
            class_name=class_name,
            file_name=path.name,
            relative_path=path.relative_to(source).as_posix(),
            sample_index=stable_sample_index(path.relative_to(source).as_posix()),
            image=lambda path=path: load_image(path, resize, crop),
            origin=str(path),
        )
        for class_name, path in samples
    )
    return write_corrupted_images(
        items,
        output,
        corruptions,
        severities,
        seed,
        batch_size,
        output_format,
        jpeg_quality,
        device,
        progress,
    )


__all__ = [
    "ExportItem",
    "ExportReport",
    "corrupt_image_folder",
    "list_image_folder",
    "load_image",
    "resize_and_crop",
    "stable_sample_index",
    "write_corrupted_images",
]
