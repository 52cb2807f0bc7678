# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""ImageNet-ReaL: the reassessed labels of the ILSVRC-2012 validation set (Beyer et al., "Are we done with
ImageNet?", arXiv:2006.07159), scored as timm's `--real-labels` does (timm/data/real_labels.py).

Each of the 50,000 validation images has a set of acceptable ImageNet-1k classes: `real.json` entry i belongs to
`ILSVRC2012_val_{i+1:08d}.JPEG` (the file names sorted). A prediction is right when it is any of them (top-5: when
any of the five is); an image whose set is empty (3,163 of them: no label fitted) is left out of the mean. Images
are matched by validation file name, the last "/" part of a sample id (`<wnid>/ILSVRC2012_val_00000293.JPEG` in a
local class-folder copy). Hub and parquet sources number their rows ("row-000123"), so no file name is known and
they are refused: nothing else identifies an image of the validation set.

The label file ships as `assets/image_lists/imagenet_real_labels.json.gz` (google-research/reassessed-imagenet,
Apache-2.0; source, commit and checksum in that folder's README).
"""

from __future__ import annotations

import functools
import gzip
import itertools
import json
import re
from collections.abc import Iterable
from importlib import resources

import numpy as np

from .image_lists import file_name
from .samples import SchemaError, Source

REAL_LABELS_FILE = "imagenet_real_labels.json.gz"
NUM_VALIDATION_IMAGES = 50_000
_VALIDATION_FILE = re.compile(r"ILSVRC2012_val_(\d{8})\.JPEG")


@functools.cache
def imagenet_real_labels() -> np.ndarray:
    """The ReaL label set of each validation image, in file-name order (row i: `ILSVRC2012_val_{i+1:08d}.JPEG`), as
    a (50000, W) int64 array padded with -1 (W: the largest set)."""
    path = resources.files("hf_vitrobust") / "assets" / "image_lists" / REAL_LABELS_FILE
    labels = json.loads(gzip.decompress(path.read_bytes()))
    if len(labels) != NUM_VALIDATION_IMAGES:
        raise ValueError(f"{REAL_LABELS_FILE}: {len(labels)} entries, expected {NUM_VALIDATION_IMAGES}.")
    table = np.full((len(labels), max(map(len, labels))), -1, dtype=np.int64)
    lengths = np.array([len(entry) for entry in labels])
    table[np.arange(table.shape[1]) < lengths[:, None]] = np.fromiter(
        itertools.chain.from_iterable(labels), np.int64
    )
    table.setflags(write=False)
    return table


def validation_image_number(sample_id: str) -> int | None:
    """The number of the validation file a sample id names (".../ILSVRC2012_val_00000293.JPEG" -> 293), else
    None."""
    match = _VALIDATION_FILE.fullmatch(file_name(sample_id))
    number = int(match.group(1)) if match else 0
    return number if 1 <= number <= NUM_VALIDATION_IMAGES else None


def real_labels_of(sample_ids: Iterable[str], where: str = "") -> np.ndarray:
    """The ReaL label set of each sample, (N, W) padded with -1 (`imagenet_real_labels`); SchemaError naming the
    first samples that name no validation file."""
    sample_ids = [str(s) for s in sample_ids]
    numbers = [validation_image_number(s) for s in sample_ids]
    unmatched = [s for s, n in zip(sample_ids, numbers, strict=True) if n is None]
    if unmatched:
        shown = ", ".join(map(repr, unmatched[:3])) + (
            f" and {len(unmatched) - 3} more" if len(unmatched) > 3 else ""
        )
        rows = all(re.search(r"(^|/)row-\d+$", s) for s in unmatched)
        why = (
            "this source numbers its rows (a Hub or parquet copy): the validation file names, which the ReaL labels "
            "are matched by, are not known. Use a local copy in class folders (<wnid>/ILSVRC2012_val_XXXXXXXX.JPEG)"
            if rows
            else "the ReaL labels are matched by validation file name (ILSVRC2012_val_XXXXXXXX.JPEG)"
        )
        raise SchemaError(
            f"{where}{len(unmatched)} sample(s) name no ImageNet validation file ({shown}): {why}."
        )
    return imagenet_real_labels()[np.asarray(numbers, dtype=np.int64) - 1]


def check_real_labelled(source: Source, where: str = "") -> None:
    """Refuse, before any image is decoded, a source whose samples cannot be matched to ReaL labels: one whose
    listing costs nothing (local files) is listed whole; any other (a Hub stream) is refused, its rows carrying
    no file name."""
    source.validate()
    if not source.countable:
        raise SchemaError(
            f"{where}ReaL labels are matched by validation file name, which a streamed Hub copy does not carry; "
            "use a local copy in class folders (<wnid>/ILSVRC2012_val_XXXXXXXX.JPEG)."
        )
    real_labels_of((raw.sample_id for raw in source.raw_samples()), where)


def real_topk_correct(topk: np.ndarray, label_sets: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(top-1 right, top-k right, scored) per image, from (N, k) predicted classes (best first) and (N, W) ReaL label
    sets padded with -1 (`real_labels_of`): right when a prediction is in the set; `scored` is False for an empty
    set (left out of the mean)."""
    topk = np.asarray(topk, dtype=np.int64)
    label_sets = np.asarray(label_sets, dtype=np.int64)
    hits = (topk[:, :, None] == label_sets[:, None, :]).any(axis=2) & (topk >= 0)  # (N, k)
    return hits[:, 0], hits.any(axis=1), (label_sets >= 0).any(axis=1)


__all__ = [
    "NUM_VALIDATION_IMAGES",
    "REAL_LABELS_FILE",
    "check_real_labelled",
    "imagenet_real_labels",
    "real_labels_of",
    "real_topk_correct",
    "validation_image_number",
]
