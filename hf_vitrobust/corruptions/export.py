# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Write a corrupted copy of an image folder, in the layout and encoding of the released ImageNet-C.

The reference generation script (hendrycks/robustness, ImageNet-C/create_c/make_imagenet_c.py) resizes each
validation image's shorter side to 256, center-crops 224, corrupts it, and saves
`<corruption>/<severity>/<class>/<file name>` as JPEG with quality 85 and `optimize=True`. `corrupt_image_folder`
does the same for any folder in the `<class>/<file>` layout, batched through `corrupt`.

Every image's sample id is its index in the sorted file list, so its corruption depends only on the seed and its
place in the data set, not on the batch size. The job is resumable: files are written atomically (temporary name,
then rename) and outputs that already exist are skipped. An unreadable image is skipped, counted and reported;
nothing already written is lost.
"""

import io
import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import torch
from PIL import Image, UnidentifiedImageError
from torchvision.transforms.v2 import functional as TF

from .base import SEVERITIES, check_severity, get_corruption
from .base import corrupt as apply_corruption

IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp")
# make_imagenet_c.py: trn.Resize(256), trn.CenterCrop(224); Image.save(..., quality=85, optimize=True).
IMAGENET_C_RESIZE = 256
IMAGENET_C_CROP = 224
IMAGENET_C_JPEG_QUALITY = 85


@dataclass
class ExportReport:
    """What a `corrupt_image_folder` run did."""

    written: int = 0
    skipped_existing: int = 0
    bad_images: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "written": self.written,
            "skipped_existing": self.skipped_existing,
            "bad_images": self.bad_images,
        }


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


def load_image(path: Path, resize: int | None, crop: int | None) -> torch.Tensor:
    """An RGB uint8 tensor (3, H, W): shorter side resized to `resize` (bilinear, as torchvision's Resize on PIL
    images), then center-cropped to `crop`; either step is skipped when None."""
    with Image.open(path) as image:
        image = image.convert("RGB")
    if resize is not None:
        image = TF.resize(image, [resize], interpolation=TF.InterpolationMode.BILINEAR, antialias=True)
    if crop is not None:
        image = TF.center_crop(image, [crop, crop])
    return TF.pil_to_tensor(image)


def _write_atomically(destination: Path, write: Callable[[str], None]) -> None:
    """`write(temporary_path)`, then rename onto `destination`: a half-written file never has the final name."""
    destination.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=destination.parent, suffix=".part")
    os.close(handle)
    try:
        write(temporary)
        os.replace(temporary, destination)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _jpeg_bytes(image: torch.Tensor, quality: int) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(image.permute(1, 2, 0).cpu().numpy()).save(
        buffer, format="JPEG", quality=quality, optimize=True
    )
    return buffer.getvalue()


def _write_parquet(path: str, records: list[dict]) -> None:
    """A parquet file with the Hub's Image feature (so `load_dataset("parquet", ...)` decodes the images)."""
    from datasets import Dataset, Features, Value
    from datasets import Image as ImageFeature

    features = Features(
        {"image": ImageFeature(), "label": Value("string"), "file": Value("string"),
         "corruption": Value("string"), "severity": Value("int32")}
    )  # fmt: skip
    Dataset.from_list(records, features=features).to_parquet(path)


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

    `output_format="jpeg"` writes `output/<corruption>/<severity>/<class>/<file>` (the released ImageNet-C layout;
    the file keeps its name, as in the reference). `output_format="parquet"` writes
    `output/<corruption>/<severity>/part-NNNNN.parquet`, one per `batch_size` images in sorted order, with columns
    image (JPEG bytes), label (class folder), file, corruption and severity.

    Everything is validated before any image is read. `progress`, when given, is called with the number of images
    finished after each batch.
    """
    for name in corruptions:
        get_corruption(name)
    for severity in severities:
        check_severity(severity)
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}.")
    if output_format not in ("jpeg", "parquet"):
        raise ValueError(f"output_format must be 'jpeg' or 'parquet', got {output_format!r}.")
    if not 1 <= jpeg_quality <= 100:
        raise ValueError(f"jpeg_quality must be in 1..100, got {jpeg_quality}.")
    if crop is None:
        raise ValueError("crop is needed: images of different sizes cannot be batched.")
    samples = list_image_folder(source)
    output = Path(output)
    report = ExportReport()
    bad: set[int] = set()

    for name in corruptions:
        for severity in severities:
            folder = output / name / str(severity)
            for part, start in enumerate(range(0, len(samples), batch_size)):
                chunk = range(start, min(start + batch_size, len(samples)))
                if output_format == "jpeg":
                    targets = {i: folder / samples[i][0] / samples[i][1].name for i in chunk if i not in bad}
                    todo = [i for i, target in targets.items() if not target.exists()]
                    report.skipped_existing += len(targets) - len(todo)
                else:
                    part_file = folder / f"part-{part:05d}.parquet"
                    todo = [] if part_file.exists() else [i for i in chunk if i not in bad]
                    report.skipped_existing += len(chunk) if part_file.exists() else 0
                images, ids = [], []
                for index in todo:
                    try:
                        images.append(load_image(samples[index][1], resize, crop))
                        ids.append(index)
                    except (OSError, UnidentifiedImageError, ValueError):
                        bad.add(index)
                        report.bad_images.append(str(samples[index][1]))
                if images:
                    pixels = torch.stack(images).to(device)
                    corrupted = apply_corruption(pixels, name, severity, seed=seed, sample_ids=ids).cpu()
                    if output_format == "jpeg":
                        for index, image in zip(ids, corrupted, strict=True):
                            data = _jpeg_bytes(image, jpeg_quality)
                            _write_atomically(
                                targets[index], lambda path, data=data: Path(path).write_bytes(data)
                            )
                    else:
                        records = [
                            {"image": {"bytes": _jpeg_bytes(image, jpeg_quality), "path": samples[i][1].name},
                             "label": samples[i][0], "file": str(samples[i][1].relative_to(source)),
                             "corruption": name, "severity": severity}
                            for i, image in zip(ids, corrupted, strict=True)
                        ]  # fmt: skip
                        _write_atomically(
                            part_file, lambda path, records=records: _write_parquet(path, records)
                        )
                    report.written += len(ids)
                if progress is not None:
                    progress(len(chunk))
    return report


__all__ = ["ExportReport", "corrupt_image_folder", "list_image_folder", "load_image"]
