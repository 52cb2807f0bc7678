# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""A benchmark's images as the corruption export's items (`vitrobust corrupt` on parquet files or a Hub dataset):
each sample's class folder from its label, a file named after its sample id, and the corruption seeded by the
stable hash of the sample id, as `GeneratedCorruptionSource` seeds it."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial

from ..corruptions.export import (
    IMAGE_EXTENSIONS,
    ExportItem,
    list_image_folder,
    resize_and_crop,
    stable_sample_index,
)
from ..models.imagenet import IMAGENET_WNIDS
from .benchmarks import Benchmark
from .class_lists import imagenet_9_folder_name
from .samples import NO_LABEL, Source

#: The class folder of samples without a label.
NO_LABEL_FOLDER = "no_label"


def class_folder_names(benchmark: Benchmark) -> tuple[str, ...]:
    """The `<class>` folder of each label of a benchmark's label space: the wnid for ImageNet-1k labels, the
    "NN_class" folder for ImageNet-9, the class name for CIFAR (the folders `ImageFolderSource` reads back)."""
    if benchmark.label_space == "imagenet-1k":
        return tuple(IMAGENET_WNIDS)
    if benchmark.label_space == "imagenet-9":
        return tuple(imagenet_9_folder_name(k) for k in range(benchmark.num_classes))
    return tuple(benchmark.class_names)


def export_file_name(sample_id: str) -> str:
    """A file name from a sample id, unique as the id is: "train/row-000012" -> "train__row-000012.JPEG"."""
    name = sample_id.strip("/").replace("/", "__")
    return name if name.lower().endswith(IMAGE_EXTENSIONS) else f"{name}.JPEG"


def export_items(
    source: Source, benchmark: Benchmark, resize: int | None, crop: int | None
) -> Iterator[ExportItem]:
    """Adapt a data `Source` to the export writer's items: class folder from the label, the file named after the
    sample id, the corruption seeded by the stable hash of the sample id (as `GeneratedCorruptionSource` does)."""
    folders = class_folder_names(benchmark)
    for sample in source.samples():
        if sample.image.dim() != 3:
            source.report.skip(
                sample.sample_id, "not_an_image", "a video sequence cannot be corrupted as an image"
            )
            continue
        if sample.label == NO_LABEL:
            class_name = NO_LABEL_FOLDER
        elif 0 <= sample.label < len(folders):
            class_name = folders[sample.label]
        else:
            source.report.skip(
                sample.sample_id, "bad_label", f"label {sample.label} is outside {benchmark.name}"
            )
            continue
        yield ExportItem(
            class_name=class_name,
            file_name=export_file_name(sample.sample_id),
            relative_path=sample.sample_id,
            sample_index=stable_sample_index(sample.sample_id),
            image=partial(resize_and_crop, sample.image, resize, crop),
        )


def is_image_folder(path: str) -> bool:
    """Whether `path` is a <class>/<image> folder the corruption export reads as it is."""
    try:
        list_image_folder(path)
    except ValueError:
        return False
    return True


__all__ = ["NO_LABEL_FOLDER", "class_folder_names", "export_file_name", "export_items", "is_image_folder"]
