# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Benchmarks as released: folders of image files in each benchmark's official layout.

- `<root>/<wnid>/<file>`: ImageNet val, ImageNet-A, -R, -O, -Sketch (Hendrycks et al. 2021; Wang et al. 2019); a
  class folder may also be named by its ImageNet class name ("goldfish", "great_white_shark", or the whole
  "goldfish, Carassius auratus"; any case, "_" for a space), mapped to the ImageNet-1k index as a wnid is.
- `<root>/<corruption>/<severity>/<wnid>/<file>`: ImageNet-C (Hendrycks & Dietterich 2019).
- `<root>/<variant>/val/<NN_class>/<file>` or `<root>/<NN_class>/<file>`: ImageNet-9 (Xiao et al. 2021).
- `<root>/<class name>/<file>`: CIFAR exported as images.

The folder is read with a plain sorted walk rather than `datasets`' `imagefolder` builder: imagefolder labels
only the last folder level and treats "val"/"test" folders as split names, so the corruption/severity and
ImageNet-9 variant levels would be lost or misread, and it silently drops files it does not recognise, which
must be counted here. The walk checks every class folder name before the first image is read (an unknown wnid is
a `SchemaError`) and lists the file names of one cell (the whole folder, or one ImageNet-C corruption and severity,
or one ImageNet-9 variant) at a time, never opening an image before it is yielded.

Within a cell the files come round-robin over the classes, each class in sorted file order: the first file of every
class, then the second, and so on. Positions are therefore stable for sharding, and the first N samples of a cell,
which is what `--limit N` keeps, cover every class rather than the first few classes of a class-sorted folder.
Every file inside a class folder is yielded: a non-image or broken file is skipped and counted by
`Source.samples()`.
"""

from __future__ import annotations

import functools
import itertools
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..constants import ALL_CORRUPTIONS, IMAGENET_9_CLASSES, IMAGENET_9_VARIANTS
from ..models.imagenet import IMAGENET_CLASS_NAMES, IMAGENET_WNIDS, imagenet_wnid_to_index
from .class_lists import ClassSubset, imagenet_9_folder_name
from .samples import NO_LABEL, RawSample, SchemaError, Source

#: Folder layouts `ImageFolderSource` reads.
LAYOUTS = ("classes", "corruption_severity", "imagenet_9")

#: How class folder names become labels: ImageNet wnids, CIFAR-style class names, ImageNet-9's "NN_class"
#: folders, or no label at all (out-of-distribution images).
LABEL_KINDS = ("wnid", "names", "imagenet_9", "ood")


@dataclass(frozen=True)
class _ClassFolder:
    path: str
    label: int
    metadata: dict[str, Any]
    id_prefix: str


def _files(path: str) -> list[tuple[str, int]]:
    """(name, size in bytes) of the files in a folder, sorted by name."""
    with os.scandir(path) as entries:
        return sorted((e.name, e.stat().st_size) for e in entries if e.is_file())


def _subdirs(path: str) -> list[str]:
    with os.scandir(path) as entries:
        return sorted(e.name for e in entries if e.is_dir() and not e.name.startswith("."))


class ImageFolderSource(Source):
    """Image files in a benchmark's official folder layout.

    root: the benchmark folder.
    layout: "classes", "corruption_severity" (ImageNet-C) or "imagenet_9".
    labels: "wnid" (ImageNet-1k index of the folder's wnid or ImageNet class name), "names" (index in `class_names`), "imagenet_9" (the
        superclass of an "NN_class" folder) or "ood" (`NO_LABEL`, is_ood=True, any folder names).
    class_subset: with labels="wnid", the only wnids allowed (ImageNet-A/R/O); another wnid is a SchemaError.
    corruptions / severities: ImageNet-C selection (default: every corruption and severity present).
    corruption_names: the corruption folders the "corruption_severity" layout knows (default ImageNet-C's 19; the
        benchmark's own, such as ImageNet-3DCC's 12); any other folder is a SchemaError.
    variants: ImageNet-9 selection (default: every variant present); `variant` names a single-variant folder.
    """

    kind = "image_folder"

    def __init__(
        self,
        root: str | os.PathLike,
        *,
        layout: str = "classes",
        labels: str = "wnid",
        class_subset: ClassSubset | None = None,
        class_names: Sequence[str] | None = None,
        corruptions: Sequence[str] | None = None,
        severities: Sequence[int] | None = None,
        variants: Sequence[str] | None = None,
        variant: str | None = None,
        metadata: dict[str, Any] | None = None,
        corruption_names: Sequence[str] = ALL_CORRUPTIONS,
    ) -> None:
        super().__init__()
        if layout not in LAYOUTS:
            raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")
        if labels not in LABEL_KINDS:
            raise ValueError(f"labels must be one of {LABEL_KINDS}, got {labels!r}")
        if labels == "names" and not class_names:
            raise ValueError("labels='names' needs class_names")
        self.root = os.fspath(root)
        self.layout = layout
        self.labels = labels
        self.class_subset = class_subset
        self.class_names = tuple(class_names or ())
        self.corruptions = None if corruptions is None else list(corruptions)
        self.severities = None if severities is None else [int(s) for s in severities]
        self.variants = None if variants is None else list(variants)
        self.variant = variant
        self.corruption_names = tuple(corruption_names)
        self.metadata = dict(metadata or {})
        if labels == "ood":
            self.metadata["is_ood"] = True
        self._folders: list[_ClassFolder] | None = None

    # -- schema check: directory names only, no file is opened ------------------------------------------------

    def validate(self) -> None:
        if self._folders is not None:
            return
        if not os.path.isdir(self.root):
            raise SchemaError(f"{self.root}: no such folder.")
        if self.layout == "classes":
            folders = self._class_folders(self.root, "", self.metadata)
        elif self.layout == "corruption_severity":
            folders = self._corruption_folders()
        else:
            folders = self._imagenet_9_folders()
        if not folders:
            raise SchemaError(f"{self.root}: no class folders found for layout {self.layout!r}.")
        self._folders = folders

    def _label(self, name: str, where: str) -> int | None:
        """The label of a class folder; None for a folder that names no ImageNet class (labels="wnid": the caller
        lists every such folder at once)."""
        if self.labels == "ood":
            return NO_LABEL
        if self.labels == "wnid":
            index = imagenet_wnid_to_index().get(name)
            if index is None:
                index = imagenet_index_of_class_name(name, where)
            if index is None:
                return None
            if self.class_subset is not None and IMAGENET_WNIDS[index] not in self.class_subset.wnids:
                raise SchemaError(
                    f"{where}: folder {name!r} ({IMAGENET_WNIDS[index]}) is not one of the "
                    f"{self.class_subset.name} classes."
                )
            return index
        if self.labels == "names":
            if name not in self.class_names:
                raise SchemaError(
                    f"{where}: folder {name!r} is not a class ({', '.join(self.class_names[:5])}, ...)."
                )
            return self.class_names.index(name)
        for k in range(len(IMAGENET_9_CLASSES)):
            if name == imagenet_9_folder_name(k):
                return k
        raise SchemaError(f"{where}: folder {name!r} is not an ImageNet-9 class folder (00_dog ... 08_fish).")

    def _class_folders(self, path: str, prefix: str, metadata: dict[str, Any]) -> list[_ClassFolder]:
        labels = {n: self._label(n, path) for n in _subdirs(path)}
        unknown = [n for n, label in labels.items() if label is None]
        if unknown:
            shown = ", ".join(map(repr, unknown[:10])) + (
                f" and {len(unknown) - 10} more" if len(unknown) > 10 else ""
            )
            raise SchemaError(
                f"{path}: {len(unknown)} folder(s) name no ImageNet-1k class (neither a wnid such as n01443537 "
                f"nor a class name such as goldfish): {shown}."
            )
        return [
            _ClassFolder(os.path.join(path, n), label, dict(metadata), f"{prefix}{n}/")
            for n, label in labels.items()
            if label is not None
        ]

    def _corruption_folders(self) -> list[_ClassFolder]:
        known = self.corruption_names
        present = _subdirs(self.root)
        cell = _corruption_cell(self.root, known)
        if cell is not None and not any(n in known for n in present):
            return self._single_corruption_folders(*cell)
        unknown = [n for n in present if n not in known]
        if unknown:
            raise SchemaError(
                f"{self.root}: folder {unknown[0]!r} is not a corruption of this benchmark; known: {', '.join(known)}."
            )
        if self.corruptions is not None:
            missing = [c for c in self.corruptions if c not in present]
            if missing:
                raise SchemaError(f"{self.root}: corruption {missing[0]!r} not found; present: {present}.")
        chosen = [c for c in known if c in present and (self.corruptions is None or c in self.corruptions)]
        folders = []
        for corruption in chosen:
            levels = _subdirs(os.path.join(self.root, corruption))
            bad = [level for level in levels if level not in {"1", "2", "3", "4", "5"}]
            if bad:
                raise SchemaError(f"{self.root}/{corruption}: folder {bad[0]!r} is not a severity 1..5.")
            for severity in sorted(int(level) for level in levels):
                if self.severities is not None and severity not in self.severities:
                    continue
                metadata = {**self.metadata, "corruption": corruption, "severity": severity}
                path = os.path.join(self.root, corruption, str(severity))
                folders += self._class_folders(path, f"{corruption}/{severity}/", metadata)
            if self.severities is not None:
                missing = [s for s in self.severities if str(s) not in levels]
                if missing:
                    raise SchemaError(f"{self.root}/{corruption}: severity {missing[0]} not found.")
        return folders

    def _single_corruption_folders(self, corruption: str, severity: int | None) -> list[_ClassFolder]:
        # The root is one corruption's folder (`.../fog`, severity folders inside) or one cell (`.../fog/3`).
        if self.corruptions is not None and corruption not in self.corruptions:
            raise SchemaError(f"{self.root}: holds corruption {corruption!r} only, not {self.corruptions}.")
        if severity is not None:
            if self.severities is not None and severity not in self.severities:
                raise SchemaError(f"{self.root}: holds severity {severity} only, not {self.severities}.")
            metadata = {**self.metadata, "corruption": corruption, "severity": severity}
            return self._class_folders(self.root, f"{corruption}/{severity}/", metadata)
        folders = []
        for level in _subdirs(self.root):
            if level not in {"1", "2", "3", "4", "5"}:
                raise SchemaError(f"{self.root}: folder {level!r} is not a severity 1..5.")
            if self.severities is None or int(level) in self.severities:
                metadata = {**self.metadata, "corruption": corruption, "severity": int(level)}
                path = os.path.join(self.root, level)
                folders += self._class_folders(path, f"{corruption}/{level}/", metadata)
        return folders

    def _imagenet_9_folders(self) -> list[_ClassFolder]:
        root = self.root
        present = _subdirs(root)
        if present == ["val"]:  # a single variant's folder, `<variant>/val/NN_class`
            root = os.path.join(root, "val")
            present = _subdirs(root)
        if any(n[:3].rstrip("_").isdigit() for n in present):
            named = self.variant or (self.variants[0] if self.variants and len(self.variants) == 1 else None)
            variant = named or _variant_from_path(root)
            if variant is None:
                raise SchemaError(
                    f"{root}: a single ImageNet-9 variant folder; pass variant= ({', '.join(IMAGENET_9_VARIANTS)})."
                )
            prefix = "" if root == self.root else "val/"
            return self._class_folders(root, prefix, {**self.metadata, "variant": variant})
        available = [v for v in IMAGENET_9_VARIANTS if v in present]
        if not available:
            raise SchemaError(f"{self.root}: neither ImageNet-9 variant folders nor NN_class folders.")
        wanted = self.variants or ([self.variant] if self.variant else None)
        if wanted is not None:
            missing = [v for v in wanted if v not in available]
            if missing:
                raise SchemaError(f"{self.root}: variant {missing[0]!r} not found; present: {available}.")
        folders = []
        for variant in available:
            if wanted is not None and variant not in wanted:
                continue
            path = os.path.join(self.root, variant)
            if os.path.isdir(os.path.join(path, "val")):
                path, prefix = os.path.join(path, "val"), f"{variant}/val/"
            else:
                prefix = f"{variant}/"
            folders += self._class_folders(path, prefix, {**self.metadata, "variant": variant})
        return folders

    # -- the stream -----------------------------------------------------------------------------------------

    def raw_samples(self) -> Iterator[RawSample]:
        self.validate()
        assert self._folders is not None
        # The folders of a cell are consecutive and share its metadata.
        for _, cell in itertools.groupby(self._folders, key=lambda folder: sorted(folder.metadata.items())):
            folders = list(cell)
            listings = [_files(folder.path) for folder in folders]
            for rank in range(max(map(len, listings), default=0)):
                for folder, files in zip(folders, listings, strict=True):
                    if rank >= len(files):
                        continue
                    name, size = files[rank]
                    if size == 0:
                        self.report.skip(folder.id_prefix + name, "empty", "the file has zero bytes")
                        continue
                    yield RawSample(
                        data=os.path.join(folder.path, name),
                        label=folder.label,
                        sample_id=folder.id_prefix + name,
                        metadata=dict(folder.metadata),
                    )

    @property
    def countable(self) -> bool:
        """Local files: listing them reads no image."""
        return True

    @property
    def reads_on_decode(self) -> bool:
        """Each raw sample is a file's path: a process opens only the files of its own chunks."""
        return True

    def describe(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "location": os.path.abspath(self.root),
            "revision": None,
            "layout": self.layout,
            "labels": self.labels,
            "generated": False,
        }


def _spelling(name: str) -> str:
    """A class name as compared with folder names: lower case, "_" for a space, spaces collapsed."""
    return " ".join(name.replace("_", " ").lower().split())


@functools.cache
def _imagenet_class_spellings() -> dict[str, tuple[int, ...]]:
    """Each spelling of an ImageNet-1k class name -> the indices it names: every class's whole name ("goldfish,
    Carassius auratus") and each of its comma-separated synonyms; a synonym two classes share ("crane": the bird
    134 and the machine 517) names both."""
    found: dict[str, set[int]] = {}
    for index, label in enumerate(IMAGENET_CLASS_NAMES):
        for name in (label, *label.split(",")):
            found.setdefault(_spelling(name), set()).add(index)
    return {name: tuple(sorted(indices)) for name, indices in found.items()}


def imagenet_index_of_class_name(name: str, where: str = "") -> int | None:
    """The ImageNet-1k index a folder named by a class name stands for (`_spelling`), None when it names none; a
    name two classes share is a SchemaError that names them by wnid."""
    indices = _imagenet_class_spellings().get(_spelling(name), ())
    if len(indices) > 1:
        choices = " or ".join(f"{IMAGENET_WNIDS[i]} ({IMAGENET_CLASS_NAMES[i]})" for i in indices)
        raise SchemaError(
            f"{where}: folder {name!r} names {len(indices)} ImageNet classes: rename it {choices}."
        )
    return indices[0] if indices else None


def _corruption_cell(path: str, known: Sequence[str]) -> tuple[str, int | None] | None:
    """(corruption, severity or None) when `path` ends in `<corruption>` or `<corruption>/<severity>`."""
    pieces = os.path.abspath(path).split(os.sep)
    if pieces[-1] in known:
        return pieces[-1], None
    if len(pieces) >= 2 and pieces[-2] in known and pieces[-1] in {"1", "2", "3", "4", "5"}:
        return pieces[-2], int(pieces[-1])
    return None


def _variant_from_path(path: str) -> str | None:
    pieces = os.path.abspath(path).split(os.sep)
    for piece in reversed(pieces[-2:]):
        if piece in IMAGENET_9_VARIANTS:
            return piece
    return None
