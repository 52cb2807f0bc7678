# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Hub copies read from their own files rather than through `datasets`: the clip-benchmark WebDataset copies
(`clip-benchmark/wds_<name>`, one `WebDatasetSource` for all of them, the label mapping per benchmark) and the
ImageNet-V2 release archives (`vaishaal/ImageNetV2`, read by `imagenet_v2`). Each is a `HubFileCopy`, registered
with its evidence in `hub_copies`, which also finds the copy a source string names (`hub_copies.webdataset_source`).

The WebDataset layout is LAION-AI/CLIP_benchmark's (at 48de38c: `webdataset_builder.py` `convert_dataset` writes it,
`datasets/builder.py` `build_wds_dataset` reads it): `test/nshards.txt`, `test/{0..n-1}.tar`, and `classnames.txt`
(one class name a line, the exporter dataset's `classes`). Each sample is a key `s%07d` (its index in the exported
dataset) with the image (lossless `.webp` by default, else `.png`/`.jpg`) and `.cls`, its class number in that
dataset's numbering:

- ImageNet-A, -R, -O: torchvision's `ImageFolder` over the release's 200 wnid folders, so the class number is the
  wnid's rank among the 200 (sorted wnids, which is ImageNet-1k order), and the names are CLIP's ImageNet class names
  (CLIP_benchmark's `en_classnames.json`) of those 200 classes;
- ImageNet-V2 (matched-frequency) and ImageNet-Sketch: the ImageNet-1k index, the 1000 CLIP names;
- ObjectNet: the rank of the class folder among the 113 ImageNet-overlapping folders sorted by name
  (`datasets/objectnet.py`: `label_map` over `sorted(folders_to_ids)`), the names ObjectNet's class names
  lower-cased. Its images are the release's with their red border (the exporter does not crop): `BORDER` pixels
  are cut here as from the release.

`classnames.txt` must equal the names these lists give, line by line, so a copy numbered otherwise is refused before
any image is read.
"""

from __future__ import annotations

import os
import re
import tarfile
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

from ..registry import Registry
from .class_lists import ClassSubset, _class_list_file
from .hub_schemas import Evidence
from .objectnet import _BorderCropped, objectnet_classes
from .samples import RawSample, SchemaError, Source

#: The layouts of a `HubFileCopy`: WebDataset shards, or the release's own `.tar.gz` archives.
FILE_LAYOUTS = ("webdataset", "archives")
_IMAGE_EXTENSIONS = ("webp", "png", "jpg", "jpeg")
_CLASS_NUMBER = re.compile(r"0|[1-9][0-9]*")


@dataclass(frozen=True)
class HubFileCopy:
    """A Hub repository read from its files (downloaded with huggingface_hub, or a local folder laid out like it).

    files: the download's `allow_patterns`. class_names: what `classnames.txt` must list (class number k on line
    k+1). labels: the benchmark label (ImageNet-1k index) of each class number. num_rows: the images of the whole
    benchmark (a download with fewer is refused). border: pixels cut from each side of every image. display: the
    benchmark's name in messages. confirmed / unverified: the evidence, as for `HubSchema`.
    """

    name: str
    repo: str
    benchmark: str
    layout: str
    files: tuple[str, ...]
    display: str
    class_names: Callable[[], tuple[str, ...]] | None = None
    labels: Callable[[], tuple[int, ...]] | None = None
    num_rows: int | None = None
    border: int = 0
    confirmed: tuple[Evidence, ...] = ()
    unverified: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.layout not in FILE_LAYOUTS:
            raise ValueError(f"{self.name}: layout must be one of {FILE_LAYOUTS}, got {self.layout!r}")


#: Lower-case repository id -> copy; filled by `hub_copies`.
HUB_FILE_COPIES: Registry[HubFileCopy] = Registry("Hub file copy")


def register_hub_file_copy(copy: HubFileCopy) -> HubFileCopy:
    """Add a copy to `HUB_FILE_COPIES` (its repository must be new)."""
    return HUB_FILE_COPIES.register(copy.repo.lower(), copy)


@cache
def clip_imagenet_names() -> tuple[str, ...]:
    """CLIP's names of the 1000 ImageNet classes, in ImageNet-1k order (CLIP_benchmark's `en_classnames.json`,
    "imagenet1k"; shipped as `imagenet_1k_clip_names.txt`): the names clip-benchmark's `classnames.txt` files use."""
    names = tuple(_class_list_file("imagenet_1k_clip_names.txt").read_text(encoding="utf-8").splitlines())
    if len(names) != 1000:
        raise ImportError(f"imagenet_1k_clip_names.txt lists {len(names)} names, not 1000.")
    return names


def subset_names(subset: ClassSubset) -> tuple[str, ...]:
    """The CLIP names of a 200-class subset, by its class numbers (ImageNet-A/R/O's `classnames.txt`)."""
    names = clip_imagenet_names()
    return tuple(names[i] for i in subset.class_indices)


def objectnet_names() -> tuple[str, ...]:
    """The 113 ObjectNet class names, lower-cased, by folder name (ObjectNet's `classnames.txt`)."""
    return tuple(label.lower() for _, label, _ in objectnet_classes())


def objectnet_labels() -> tuple[int, ...]:
    """Each of the 113 ObjectNet classes' label: the smallest ImageNet-1k index of its group (as `ObjectNetSource`)."""
    return tuple(min(indices) for _, _, indices in objectnet_classes())


class WebDatasetSource(Source):
    """One clip-benchmark WebDataset copy of a benchmark (see the module docstring), from a local folder laid out
    like the repository or its download.

    `validate` reads `test/nshards.txt` and `classnames.txt` (which must list the copy's classes, in its order) and
    every shard's members (tar headers and `.cls` only, no image decoded): a class number outside the copy's or a
    key without image or label is refused; fewer images than the benchmark has is refused for a download from the
    Hub and recorded as a warning for a local copy (a deliberate subset). One shard per tar."""

    kind = "webdataset"

    def __init__(self, root: str | os.PathLike, copy: HubFileCopy, hub_repo: str | None = None) -> None:
        super().__init__()
        if copy.layout != "webdataset" or copy.class_names is None or copy.labels is None:
            raise ValueError(f"{copy.name} is not a WebDataset copy with class names and labels.")
        self.root = os.fspath(root)
        self.copy = copy
        self.hub_repo = hub_repo
        self.counts: dict[str, Any] | None = None
        self.warnings: list[str] = []
        self._shards: list[str] = []
        self._labels: tuple[int, ...] = ()

    @property
    def where(self) -> str:
        return self.hub_repo or self.root

    def validate(self) -> None:
        if self.counts is not None:
            return
        try:
            with open(os.path.join(self.root, "test", "nshards.txt")) as handle:
                num_shards = int(handle.read().strip())
            with open(os.path.join(self.root, "classnames.txt"), encoding="utf-8") as handle:
                names = [line.strip() for line in handle.read().splitlines() if line.strip()]
        except (OSError, ValueError) as error:
            raise SchemaError(
                f"{self.where}: not a WebDataset copy (test/nshards.txt, classnames.txt): {error}"
            ) from None
        self._check_class_names(names)
        self._labels = self.copy.labels()
        self._shards = [os.path.join(self.root, "test", f"{i}.tar") for i in range(num_shards)]
        counts: Counter = Counter()
        for index in range(num_shards):
            for _, label, _ in self._samples(index, read=False):
                counts[label] += 1
        self.counts = self._check_counts(counts)

    def _check_class_names(self, names: list[str]) -> None:
        expected = self.copy.class_names()
        if len(names) != len(expected):
            raise SchemaError(
                f"{self.where}: classnames.txt names {len(names)} classes, not {self.copy.display}'s "
                f"{len(expected)}: the .cls numbers cannot be mapped."
            )
        wrong = next((k for k, (a, b) in enumerate(zip(names, expected, strict=True)) if a != b), None)
        if wrong is not None:
            raise SchemaError(
                f"{self.where}: classnames.txt line {wrong + 1} is {names[wrong]!r}, but {self.copy.display}'s class "
                f"{wrong} is {expected[wrong]!r} ({self.copy.repo} numbers its classes that way): another numbering "
                "or another dataset, refused rather than mislabelled."
            )

    def _check_counts(self, counts: Counter) -> dict[str, Any]:
        """The count record; a download short of the benchmark's size is refused, a short local copy warned."""
        found = sum(counts.values())
        record: dict[str, Any] = {"expected": self.copy.num_rows, "found": found}
        if self.copy.num_rows is not None and found != self.copy.num_rows:
            message = f"{found} images, but {self.copy.display} has {self.copy.num_rows}"
            if self.hub_repo is not None:
                raise SchemaError(f"{self.hub_repo}: {message}: this copy is incomplete or another dataset.")
            self.warnings.append(f"{self.root}: {message} (a partial local copy?).")
            record["mismatch"] = message
        return record

    def _samples(self, index: int, read: bool) -> Iterator[tuple[bytes, int, str]]:
        """(image bytes, or b"" where not `read`, label, sample id) of each key of shard `index`, in the shard's order;
        a key's files are consecutive in a WebDataset shard, so one key is held in memory at a time."""
        path = self._shards[index]
        key, parts = None, {}
        try:
            with tarfile.open(path, "r:") as tar:
                for member in tar:
                    if not member.isfile():
                        continue
                    name, _, extension = member.name.partition(".")
                    if name != key:
                        if key is not None:
                            yield self._sample(path, index, key, parts)
                        key, parts = name, {}
                    wanted = extension == "cls" or (read and extension.lower() in _IMAGE_EXTENSIONS)
                    handle = tar.extractfile(member) if wanted else None
                    parts[extension.lower()] = handle.read() if handle else b""
        except (tarfile.TarError, OSError) as error:
            raise SchemaError(f"{path}: not a readable tar shard ({error}).") from None
        if key is not None:
            yield self._sample(path, index, key, parts)

    def _sample(self, path: str, index: int, key: str, parts: dict[str, bytes]) -> tuple[bytes, int, str]:
        image = next((e for e in _IMAGE_EXTENSIONS if e in parts), None)
        if image is None or "cls" not in parts:
            raise SchemaError(
                f"{path}: sample {key!r} lacks an image or its .cls label ({', '.join(parts)})."
            )
        text = parts["cls"].decode().strip()
        if not _CLASS_NUMBER.fullmatch(text) or int(text) >= len(self._labels):
            raise SchemaError(
                f"{path}: {key}.cls {text!r} is not an {self.copy.display} class number "
                f"(0 to {len(self._labels) - 1})."
            )
        return parts[image], self._labels[int(text)], f"{index}/{key}"

    def shards(self) -> tuple[str, ...]:
        self.validate()
        return tuple(f"test/{i}.tar" for i in range(len(self._shards)))

    def shard_raw_samples(self, index: int) -> Iterator[RawSample]:
        self.validate()
        for data, label, sample_id in self._samples(index, read=True):
            image = _BorderCropped(data) if self.copy.border else data
            yield RawSample(data=image, label=label, sample_id=sample_id)

    def raw_samples(self) -> Iterator[RawSample]:
        self.validate()
        for index in range(len(self._shards)):
            yield from self.shard_raw_samples(index)

    def describe(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "location": self.hub_repo or os.path.abspath(self.root),
            "schema": self.copy.name,
            "revision": None,
            "labels": f".cls = {self.copy.display} class number, classnames.txt checked",
            "row_counts": {"test": self.counts},
            "generated": False,
            **({"border_removed_px": self.copy.border} if self.copy.border else {}),
            **({"warnings": list(self.warnings)} if self.warnings else {}),
        }


def download_file_copy(copy: HubFileCopy, spec: str, files: tuple[str, ...] | None = None) -> str:
    """The local folder of a Hub copy's files (`copy.files`, or `files`), downloaded with huggingface_hub (or found
    in its cache); `spec` may end in "@revision". SchemaError naming the copy when it cannot be had."""
    from huggingface_hub import snapshot_download

    revision = spec.split("@", 1)[1] if "@" in spec else None
    try:
        return snapshot_download(
            copy.repo, repo_type="dataset", revision=revision, allow_patterns=list(files or copy.files)
        )
    except Exception as error:  # offline, not cached, or not found: say which files
        raise SchemaError(
            f"{spec}: could not get {', '.join(files or copy.files)} ({type(error).__name__}: {error})."
        ) from None


__all__ = [
    "FILE_LAYOUTS",
    "HUB_FILE_COPIES",
    "HubFileCopy",
    "WebDatasetSource",
    "clip_imagenet_names",
    "download_file_copy",
    "objectnet_labels",
    "objectnet_names",
    "register_hub_file_copy",
    "subset_names",
]
