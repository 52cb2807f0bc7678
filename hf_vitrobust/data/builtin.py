# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The bundled sample of real photos: a small, offline, labelled stand-in for the ImageNet validation set.

`hf_vitrobust/assets/photos` ships 29 JPEGs made from scikit-image's bundled photos (CC0 or public domain; whole
photos and crops of them, see `LICENSE.md` and `build_sample.py` there) and `manifest.csv`, which gives each file
its ImageNet-1k label and wnid. `BuiltinPhotosSource` reads them in manifest order; the source string "builtin"
names it for "imagenet-val", and "generated:builtin" corrupts or perturbs it for ImageNet-C and ImageNet-P, so a
whole evaluation runs without the Hub.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

from .. import __version__
from ..constants import IMAGENET_NUM_CLASSES
from ..models.imagenet import IMAGENET_WNIDS
from .samples import RawSample, SchemaError, Source

#: The source string that names the bundled sample.
BUILTIN_SOURCE = "builtin"
MANIFEST_NAME = "manifest.csv"
#: Columns every manifest must have (the builtin model's columns are provenance, not read here).
REQUIRED_COLUMNS = ("file", "label", "wnid", "class_name", "source", "crop")


def builtin_photos_dir() -> Path:
    """The folder of the bundled photos and their manifest (inside the installed package)."""
    return Path(str(resources.files("hf_vitrobust") / "assets" / "photos"))


def read_manifest(root: str | os.PathLike) -> list[dict[str, str]]:
    """The rows of `root/manifest.csv`, checked: the required columns, unique existing files, labels in 0..999 whose
    wnid is the row's wnid. Raises `SchemaError` naming the first problem."""
    path = Path(root) / MANIFEST_NAME
    if not path.is_file():
        raise SchemaError(f"builtin photos: {path} is missing.")
    with open(path, encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        missing = [column for column in REQUIRED_COLUMNS if column not in (reader.fieldnames or ())]
        if missing:
            raise SchemaError(f"builtin photos: {path} lacks the column(s) {', '.join(missing)}.")
        rows = list(reader)
    if not rows:
        raise SchemaError(f"builtin photos: {path} lists no images.")
    seen: set[str] = set()
    for number, row in enumerate(rows, start=2):
        where = f"{path}, line {number}"
        file = row["file"]
        if not file or file in seen or os.path.basename(file) != file:
            raise SchemaError(f"{where}: file {file!r} is empty, repeated or not a plain file name.")
        seen.add(file)
        if not (Path(root) / file).is_file():
            raise SchemaError(f"{where}: {file} is not in {root}.")
        try:
            label = int(row["label"])
        except ValueError:
            raise SchemaError(f"{where}: label {row['label']!r} is not an integer.") from None
        if not 0 <= label < IMAGENET_NUM_CLASSES:
            raise SchemaError(f"{where}: label {label} is not an ImageNet-1k index (0..999).")
        if IMAGENET_WNIDS[label] != row["wnid"]:
            raise SchemaError(
                f"{where}: wnid {row['wnid']!r} is not class {label}'s ({IMAGENET_WNIDS[label]})."
            )
    return rows


class BuiltinPhotosSource(Source):
    """The bundled photos as ImageNet-1k validation samples, in manifest order.

    root: a folder with `manifest.csv` and the JPEGs it lists (default: the package's `assets/photos`).

    Sample ids are the file names ("chelsea_face.jpg"); labels are the manifest's ImageNet-1k indices; metadata
    holds the photo's scikit-image source and crop box.
    """

    def __init__(self, root: str | os.PathLike | None = None) -> None:
        super().__init__()
        self.root = Path(root) if root is not None else builtin_photos_dir()
        self._rows: list[dict[str, str]] | None = None

    def validate(self) -> None:
        self._rows = read_manifest(self.root)

    def raw_samples(self) -> Iterator[RawSample]:
        if self._rows is None:
            self.validate()
        for row in self._rows:  # type: ignore[union-attr]
            yield RawSample(
                data=str(self.root / row["file"]),
                label=int(row["label"]),
                sample_id=row["file"],
                metadata={"photo_source": row["source"], "crop": row["crop"]},
            )

    @property
    def countable(self) -> bool:
        """The bundled photos are listed from their manifest, nothing decoded."""
        return True

    @property
    def reads_on_decode(self) -> bool:
        """Each raw sample is a photo's path."""
        return True

    def describe(self) -> dict[str, Any]:
        if self._rows is None:
            self.validate()
        return {
            "kind": "builtin-photos",
            # The package's own copy is named by its place in the package, not by this machine's path (results
            # files are published).
            "location": "hf_vitrobust/assets/photos" if self.root == builtin_photos_dir() else str(self.root),
            "revision": f"hf_vitrobust {__version__}",
            "generated": False,
            "count": len(self._rows),  # type: ignore[arg-type]
            "note": "real photos bundled with scikit-image (CC0 / public domain) and crops of them, with checked "
            "ImageNet-1k labels; a demo sample, not the ImageNet validation set",
            "manifest": MANIFEST_NAME,
        }


__all__ = ["BUILTIN_SOURCE", "BuiltinPhotosSource", "builtin_photos_dir", "read_manifest"]
