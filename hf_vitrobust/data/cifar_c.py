# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""CIFAR-10-C and CIFAR-100-C from their released NumPy arrays (Hendrycks & Dietterich, ICLR 2019).

The release (Zenodo records 2535967 and 3555552) is one folder of `.npy` files, written by the reference script
hendrycks/robustness `ImageNet-C/create_c/make_cifar_c.py`: for each corruption it loops over severities 1..5 and,
inside, over the 10,000 test images, and saves `<corruption function name>.npy`, a uint8 array (50000, 32, 32, 3)
whose rows [10000 (s - 1), 10000 s) are severity s; `labels.npy` (uint8, 50000) holds the test labels, repeated
once per severity. The release's README says the same ("the first 10,000 images in each .npy are the test set
images corrupted at severity 1, and the last 10,000 images are the test set images corrupted at severity five").

Arrays are memory-mapped (`np.load(mmap_mode="r")`): only the rows being read are in memory.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..constants import ALL_CORRUPTIONS, SEVERITIES
from ..registry import check_known
from .samples import RawSample, SchemaError, Source

# The 19 arrays of the release, in the reference script's order (its dict `d`; file name = function name): the 15
# standard corruptions, then the 4 extra ones.
CIFAR_C_CORRUPTIONS = ALL_CORRUPTIONS
CIFAR_C_NUM_CLASSES = {"cifar10-c": 10, "cifar100-c": 100}
CIFAR_C_SEVERITIES = SEVERITIES
CIFAR_IMAGE_SHAPE = (32, 32, 3)
LABELS_FILE = "labels.npy"
# Rows copied out of the memory map at a time.
_READ_ROWS = 1024


class CifarCArraySource(Source):
    """Samples of a CIFAR-10-C / CIFAR-100-C folder, in order corruption, severity, image index.

    root: the folder holding `<corruption>.npy` and `labels.npy`.
    dataset: "cifar10-c" or "cifar100-c" (labels are CIFAR's own 0..9 or 0..99).
    corruptions: which arrays to read (default: all 19 of the release; each must be present).
    severities: which of 1..5 (default: all).

    Sample ids are "<corruption>/<severity>/<index in the test set, 5 digits>", e.g. "gaussian_noise/3/00042";
    metadata holds "corruption" and "severity".
    """

    def __init__(
        self,
        root: str | os.PathLike,
        dataset: str = "cifar10-c",
        corruptions: Sequence[str] | None = None,
        severities: Sequence[int] | None = None,
    ) -> None:
        super().__init__()
        if dataset not in CIFAR_C_NUM_CLASSES:
            raise ValueError(f"dataset must be one of {tuple(CIFAR_C_NUM_CLASSES)}, got {dataset!r}.")
        self.root = Path(root)
        self.dataset = dataset
        self.corruptions = tuple(CIFAR_C_CORRUPTIONS if corruptions is None else corruptions)
        self.severities = tuple(CIFAR_C_SEVERITIES if severities is None else severities)
        check_known(self.corruptions, CIFAR_C_CORRUPTIONS, f"{dataset} corruption")
        if not self.corruptions:
            raise ValueError("corruptions must not be empty.")
        bad = [s for s in self.severities if isinstance(s, bool) or s not in CIFAR_C_SEVERITIES]
        if bad or not self.severities:
            raise ValueError(
                f"severities must be a non-empty selection of 1..5; got {list(self.severities)}."
            )
        self._images_per_severity: int | None = None

    @property
    def images_per_severity(self) -> int:
        """Test images per severity (10,000 in the release), read from `labels.npy`."""
        if self._images_per_severity is None:
            self.validate()
        return self._images_per_severity  # type: ignore[return-value]

    def _load(self, name: str) -> np.ndarray:
        path = self.root / name
        if not path.is_file():
            raise SchemaError(
                f"{self.dataset}: {path} is missing (expected the released <corruption>.npy files)."
            )
        try:
            return np.load(path, mmap_mode="r", allow_pickle=False)
        except (OSError, ValueError) as error:
            raise SchemaError(f"{self.dataset}: cannot read {path} as a NumPy array: {error}") from error

    def validate(self) -> None:
        """Check that every requested array exists with the released shape and dtype, and that the labels repeat
        once per severity and lie in the dataset's classes. Reads only the array headers and `labels.npy`."""
        if not self.root.is_dir():
            raise SchemaError(f"{self.dataset}: {self.root} is not a folder.")
        labels = self._load(LABELS_FILE)
        if labels.ndim != 1 or labels.shape[0] == 0 or labels.shape[0] % len(CIFAR_C_SEVERITIES):
            raise SchemaError(
                f"{self.dataset}: {LABELS_FILE} has shape {labels.shape}; expected (5 n,), n images per severity."
            )
        if not np.issubdtype(labels.dtype, np.integer):
            raise SchemaError(f"{self.dataset}: {LABELS_FILE} holds {labels.dtype}, not integer labels.")
        per_severity = labels.shape[0] // len(CIFAR_C_SEVERITIES)
        blocks = np.asarray(labels).reshape(len(CIFAR_C_SEVERITIES), per_severity)
        if not (blocks == blocks[:1]).all():
            raise SchemaError(
                f"{self.dataset}: {LABELS_FILE} does not repeat the same labels for each of the 5 severities; "
                "this is not the released layout (severity s in rows [n (s - 1), n s))."
            )
        num_classes = CIFAR_C_NUM_CLASSES[self.dataset]
        if blocks.min() < 0 or blocks.max() >= num_classes:
            raise SchemaError(
                f"{self.dataset}: labels range over {int(blocks.min())}..{int(blocks.max())}, "
                f"outside the {num_classes} classes; is this {self.dataset}?"
            )
        missing = [f"{name}.npy" for name in self.corruptions if not (self.root / f"{name}.npy").is_file()]
        if missing:
            raise SchemaError(
                f"{self.dataset}: {self.root} lacks {len(missing)} of the {len(self.corruptions)} requested arrays: "
                f"{', '.join(missing)}. Pass `corruptions` to read a partial download."
            )
        expected = (labels.shape[0], *CIFAR_IMAGE_SHAPE)
        for name in self.corruptions:
            images = self._load(f"{name}.npy")
            if images.shape != expected or images.dtype != np.uint8:
                raise SchemaError(
                    f"{self.dataset}: {name}.npy is {images.dtype} {images.shape}; expected uint8 {expected} "
                    f"to match {LABELS_FILE}."
                )
        self._images_per_severity = per_severity

    def raw_samples(self) -> Iterator[RawSample]:
        for index in range(len(self.shards())):
            yield from self.shard_raw_samples(index)

    def shards(self) -> tuple[str, ...]:
        """One shard per cell, "<corruption>/<severity>": its row range of `<corruption>.npy`."""
        return tuple(f"{name}/{severity}" for name in self.corruptions for severity in self.severities)

    def shard_raw_samples(self, index: int) -> Iterator[RawSample]:
        """The rows of one cell, copied out of the memory-mapped array `_READ_ROWS` at a time (nothing else of
        the arrays is read)."""
        cells = self.shards()
        if not 0 <= index < len(cells):
            raise IndexError(f"{self.dataset} has {len(cells)} shards; there is no shard {index}.")
        name, severity = cells[index].split("/")
        severity_level = int(severity)
        per_severity = self.images_per_severity
        labels = np.asarray(self._load(LABELS_FILE)[:per_severity]).astype(np.int64)
        images = self._load(f"{name}.npy")
        offset = (severity_level - 1) * per_severity
        for start in range(0, per_severity, _READ_ROWS):
            stop = min(start + _READ_ROWS, per_severity)
            chunk = np.array(images[offset + start : offset + stop])  # copy these rows out of the map
            for row in range(start, stop):
                yield RawSample(
                    data=chunk[row - start],
                    label=int(labels[row]),
                    sample_id=f"{name}/{severity_level}/{row:05d}",
                    metadata={"corruption": name, "severity": severity_level},
                )

    @property
    def countable(self) -> bool:
        """Local arrays: listing them reads only labels.npy."""
        return True

    def describe(self) -> dict[str, Any]:
        return {
            "kind": "cifar-c-arrays",
            "dataset": self.dataset,
            "location": str(self.root),
            "revision": None,
            "generated": False,
            "corruptions": list(self.corruptions),
            "severities": list(self.severities),
            "images_per_severity": self._images_per_severity,
            "reference": "hendrycks/robustness ImageNet-C/create_c/make_cifar_c.py (Zenodo 2535967, 3555552)",
        }


__all__ = ["CIFAR_C_CORRUPTIONS", "CIFAR_C_NUM_CLASSES", "CifarCArraySource"]
