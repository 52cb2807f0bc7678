# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""ImageNet-V2 (Recht et al., "Do ImageNet Classifiers Generalize to ImageNet?", ICML 2019) as released.

Three test sets of 10,000 images, 10 for each of the 1000 ImageNet classes: matched-frequency (the one peers report
as "ImageNet-V2"), threshold-0.7 and top-images. The release is one folder per test set,
`imagenetv2-<set>-format-val/<k>/<hash>.jpeg`, where the folder name `k` is the ImageNet-1k class index written
in decimal, not a wnid: the release's own writer (github.com/modestyachts/ImageNetV2, code/make_imagenet_folders.py
at commit 0b0c3fe, `class_ids = [sorted(set(wnids)).index(w) ...]`, folder `str(label)`) and loader
(github.com/modestyachts/ImageNetV2_pytorch at 14d4456, `label = int(path.parent.name)`). A class-folder reader
that numbers folders in sorted order (torchvision's `ImageFolder`, `datasets`' imagefolder) mislabels them: "10"
sorts before "2". Here each folder's label is `int(name)`.

The Hub copy `vaishaal/ImageNetV2` (the release's download location, named in both repositories' READMEs) holds the
three folders as archives: `imagenetv2-matched-frequency.tar.gz`, `imagenetv2-threshold0.7.tar.gz`,
`imagenetv2-top-images.tar.gz` (ImageNetV2_pytorch's `URLS` and `FNAMES`). They are read here member by member
with `tarfile`, never unpacked to disk.

The Hub copy `clip-benchmark/wds_imagenetv2` is a WebDataset export of matched-frequency (LAION-AI/CLIP_benchmark at
48de38c: `datasets/builder.py` builds "imagenetv2" from ImageNetV2_pytorch's matched-frequency set, and
`webdataset_builder.py` writes `test/{0..n-1}.tar` with `test/nshards.txt`, one `s%07d` key per image holding the
image (lossless `.webp` by default) and its `.cls` label, and `classnames.txt`, CLIP's 1000 class names, checked line
by line). It is read as every clip-benchmark copy is (`webdataset.WebDatasetSource`). The file names of the release
are not kept there, so its samples are identified by shard and key.
"""

from __future__ import annotations

import os
import re
import tarfile
from collections import Counter
from collections.abc import Iterator
from typing import Any

from ..models.imagenet import IMAGENET_CLASS_NAMES
from .decoding import IMAGE_FILE_EXTENSIONS
from .hub_copies import hub_file_copies_for
from .local import ImageFolderSource, _ClassFolder, _files, _subdirs
from .samples import RawSample, SchemaError, Source
from .webdataset import HubFileCopy, WebDatasetSource, download_file_copy

IMAGENET_V2_VARIANTS = ("matched-frequency", "threshold-0.7", "top-images")
IMAGENET_V2_DEFAULT_VARIANT = "matched-frequency"
IMAGENET_V2_HUB_REPO = "vaishaal/ImageNetV2"
IMAGENET_V2_WDS_REPO = "clip-benchmark/wds_imagenetv2"
IMAGES_PER_CLASS = 10
IMAGENET_V2_SIZE = IMAGES_PER_CLASS * len(IMAGENET_CLASS_NAMES)

#: Each test set's name in the release's file names (threshold-0.7 is written "threshold0.7" there).
_RELEASE_NAMES = {
    "matched-frequency": "matched-frequency",
    "threshold-0.7": "threshold0.7",
    "top-images": "top-images",
}
_CLASS_FOLDER = re.compile(r"0|[1-9][0-9]{0,2}")


def release_folder(variant: str) -> str:
    """The release's folder of one test set: "imagenetv2-matched-frequency-format-val"."""
    return f"imagenetv2-{_RELEASE_NAMES[_check_variant(variant)]}-format-val"


def release_archive(variant: str) -> str:
    """The Hub copy's archive of one test set: "imagenetv2-threshold0.7.tar.gz"."""
    return f"imagenetv2-{_RELEASE_NAMES[_check_variant(variant)]}.tar.gz"


def _check_variant(variant: str) -> str:
    if variant not in IMAGENET_V2_VARIANTS:
        raise ValueError(
            f"unknown ImageNet-V2 test set {variant!r}; known: {', '.join(IMAGENET_V2_VARIANTS)}."
        )
    return variant


def _variant_named_by(name: str) -> str | None:
    """The test set a folder or archive name names (release or ImageNetV2_pytorch spelling), else None."""
    lowered = name.lower()
    for variant, release in _RELEASE_NAMES.items():
        if f"imagenetv2-{release}" in lowered or f"imagenetv2-{variant}" in lowered:
            return variant
    return None


def class_index_of_folder(name: str, where: str) -> int:
    """The ImageNet-1k index a release class folder names: its decimal integer 0..999 (SchemaError otherwise)."""
    if not _CLASS_FOLDER.fullmatch(name) or int(name) >= len(IMAGENET_CLASS_NAMES):
        raise SchemaError(
            f"{where}: folder {name!r} is not an ImageNet-V2 class folder; the release names them by ImageNet-1k "
            "index, 0 to 999 (not by wnid)."
        )
    return int(name)


def _completeness(counts: Counter, where: str) -> dict[str, Any]:
    """The count record of one test set (per-class counts -> expected, found, classes missing); a class with more
    than 10 images is no ImageNet-V2 test set (two sets merged?) and is refused."""
    over = sorted(k for k, n in counts.items() if n > IMAGES_PER_CLASS)
    if over:
        raise SchemaError(
            f"{where}: class {over[0]} holds {counts[over[0]]} images; an ImageNet-V2 test set has exactly "
            f"{IMAGES_PER_CLASS} per class (are two test sets mixed in one folder?)."
        )
    found = sum(counts.values())
    record: dict[str, Any] = {"expected": IMAGENET_V2_SIZE, "found": found}
    if found != IMAGENET_V2_SIZE:
        missing = len(IMAGENET_CLASS_NAMES) - len(counts)
        short = sum(1 for n in counts.values() if n < IMAGES_PER_CLASS)
        record["mismatch"] = (
            f"{found} images, but a test set has {IMAGENET_V2_SIZE} ({IMAGES_PER_CLASS} in each of 1000 classes): "
            f"{missing} classes missing, {short} classes short"
        )
    return record


def _checked_counts(
    counts: Counter, where: str, refused_as: str | None, warnings: list[str]
) -> dict[str, Any]:
    """`_completeness` of a copy: a short or overfull download is refused, named `refused_as` (a download is the
    dataset or it is not); a short local copy (`refused_as` None) runs, with a warning appended to `warnings`."""
    record = _completeness(counts, where)
    if "mismatch" in record:
        if refused_as is not None:
            raise SchemaError(
                f"{refused_as}: {record['mismatch']}: this copy is incomplete or another dataset."
            )
        warnings.append(f"{where}: {record['mismatch']} (a partial local copy?).")
    return record


class ImageNetV2FolderSource(ImageFolderSource):
    """One ImageNet-V2 test set from the release's folder: `<k>/<file>` with `k` the ImageNet-1k index.

    root: the test set's folder (`imagenetv2-<set>-format-val`, or however it was renamed), or a folder holding the
        release folders. variant: the test set; where the folder's name names one, it must be this one.
    An incomplete copy (fewer than 10,000 images) is read and recorded in `describe()` (counts and a warning: a
    local copy may be a deliberate subset); a class with more than 10 images is refused.
    """

    kind = "imagenet_v2_folder"

    def __init__(self, root: str | os.PathLike, variant: str = IMAGENET_V2_DEFAULT_VARIANT) -> None:
        super().__init__(root, layout="classes", labels="wnid", metadata={})
        self.variant = _check_variant(variant)
        self.folder = self.root
        self.counts: dict[str, Any] = {}
        self.warnings: list[str] = []

    def validate(self) -> None:
        if self._folders is not None:
            return
        if not os.path.isdir(self.root):
            raise SchemaError(f"{self.root}: no such folder.")
        present = _subdirs(self.root)
        if release_folder(self.variant) in present:
            self.folder = os.path.join(self.root, release_folder(self.variant))
        elif present and all(n.isdigit() for n in present):
            named = _variant_named_by(os.path.basename(os.path.abspath(self.root)))
            if named is not None and named != self.variant:
                raise SchemaError(
                    f"{self.root}: this folder is ImageNet-V2 {named}, not the {self.variant} asked for."
                )
        else:
            sets = [n for n in present if _variant_named_by(n)]
            raise SchemaError(
                f"{self.root}: neither an ImageNet-V2 test set folder (class folders 0..999) nor a folder holding "
                f"{release_folder(self.variant)}" + (f" (found: {', '.join(sets)})." if sets else ".")
            )
        names = _subdirs(self.folder)
        folders = [
            _ClassFolder(os.path.join(self.folder, n), class_index_of_folder(n, self.folder), {}, f"{n}/")
            for n in names
        ]
        if not folders:
            raise SchemaError(f"{self.folder}: no class folders.")
        counts = Counter({f.label: sum(1 for name, _ in _files(f.path) if _is_image(name)) for f in folders})
        self.counts = _checked_counts(counts, self.folder, None, self.warnings)
        self._folders = folders

    def describe(self) -> dict[str, Any]:
        self.validate()
        described = {
            **super().describe(),
            "kind": self.kind,
            "location": os.path.abspath(self.folder),
            "labels": "folder name = ImageNet-1k index",
            "variant": self.variant,
            "row_counts": {self.variant: self.counts},
        }
        if self.warnings:
            described["warnings"] = list(self.warnings)
        return described


def _is_image(name: str) -> bool:
    return name.lower().endswith(IMAGE_FILE_EXTENSIONS)


class ImageNetV2ArchiveSource(Source):
    """One ImageNet-V2 test set from its release archive (`imagenetv2-<set>.tar.gz`, as `vaishaal/ImageNetV2` holds
    them), read member by member. `validate` lists the archive once (no image decoded) and refuses an unreadable
    one (a truncated download). Fewer than 10,000 images is refused for an archive downloaded from the Hub (the
    release itself, not a subset) and recorded as a warning for a local one, as for Hub copies read by `datasets`."""

    kind = "imagenet_v2_archive"

    def __init__(
        self,
        archive: str | os.PathLike,
        variant: str = IMAGENET_V2_DEFAULT_VARIANT,
        hub_repo: str | None = None,
    ) -> None:
        super().__init__()
        self.archive = os.fspath(archive)
        self.variant = _check_variant(variant)
        self.hub_repo = hub_repo
        self.counts: dict[str, Any] | None = None
        self.warnings: list[str] = []

    def _members(self, tar: tarfile.TarFile) -> Iterator[tuple[tarfile.TarInfo, int, str]]:
        """(member, label, sample id) of each image file: `<set folder>/<k>/<file>`."""
        for member in tar:
            parts = member.name.strip("/").split("/")
            if not member.isfile() or not _is_image(parts[-1]) or len(parts) < 2:
                continue
            label = class_index_of_folder(parts[-2], self.archive)
            yield member, label, f"{parts[-2]}/{parts[-1]}"

    def validate(self) -> None:
        if self.counts is not None:
            return
        if not os.path.isfile(self.archive):
            raise SchemaError(f"{self.archive}: no such archive.")
        counts: Counter = Counter()
        try:
            with tarfile.open(self.archive, "r|*") as tar:
                for _, label, _ in self._members(tar):
                    counts[label] += 1
        except (tarfile.TarError, EOFError, OSError) as error:
            raise SchemaError(
                f"{self.archive}: not a readable tar archive ({error}); a truncated download?"
            ) from None
        self.counts = _checked_counts(counts, self.archive, self.hub_repo, self.warnings)

    def raw_samples(self) -> Iterator[RawSample]:
        self.validate()
        with tarfile.open(self.archive, "r|*") as tar:
            for member, label, sample_id in self._members(tar):
                handle = tar.extractfile(member)
                yield RawSample(data=handle.read() if handle else b"", label=label, sample_id=sample_id)

    def describe(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "location": self.hub_repo or os.path.abspath(self.archive),
            "schema": "vaishaal-imagenetv2",
            "file": os.path.basename(self.archive),
            "revision": None,
            "labels": "folder name = ImageNet-1k index",
            "variant": self.variant,
            "row_counts": {self.variant: self.counts},
            "generated": False,
            **({"warnings": list(self.warnings)} if self.warnings else {}),
        }


class ImageNetV2WebDatasetSource(WebDatasetSource):
    """ImageNet-V2 matched-frequency from its clip-benchmark WebDataset copy (`clip-benchmark/wds_imagenetv2`, read as
    every clip-benchmark copy is: `webdataset.WebDatasetSource`, `.cls` = ImageNet-1k index, `classnames.txt` the
    1000 CLIP names), its counts checked as for the other ImageNet-V2 copies (10 per class; a short download refused,
    a short local copy warned)."""

    kind = "imagenet_v2_webdataset"

    def __init__(
        self, root: str | os.PathLike, variant: str = IMAGENET_V2_DEFAULT_VARIANT, hub_repo: str | None = None
    ) -> None:
        if _check_variant(variant) != "matched-frequency":
            raise SchemaError(
                f"{os.fspath(root)}: the WebDataset copy holds ImageNet-V2 matched-frequency only, not {variant}."
            )
        super().__init__(root, _webdataset_copy(), hub_repo)
        self.variant = variant

    def _check_counts(self, counts: Counter) -> dict[str, Any]:
        return _checked_counts(counts, self.where, self.hub_repo, self.warnings)

    def describe(self) -> dict[str, Any]:
        return {
            **super().describe(),
            "labels": ".cls = ImageNet-1k index, classnames.txt checked",
            "variant": self.variant,
            "row_counts": {self.variant: self.counts},
        }


def _webdataset_copy() -> HubFileCopy:
    return hub_file_copies_for("imagenet-v2", "webdataset")[0]


def imagenet_v2_source(spec: str, variant: str | None = None) -> Source:
    """The source of one ImageNet-V2 test set (default matched-frequency) that `spec` names: a folder of the
    release (the test set's folder, or one holding the release folders), a folder laid out like a Hub copy (the
    `.tar.gz` archives of `vaishaal/ImageNetV2`, or the WebDataset shards of `clip-benchmark/wds_imagenetv2`), one
    archive, or either Hub id (downloaded with huggingface_hub)."""
    variant = _check_variant(variant or IMAGENET_V2_DEFAULT_VARIANT)
    if os.path.isfile(spec):
        named = _variant_named_by(os.path.basename(spec))
        if named is not None and named != variant:
            raise SchemaError(f"{spec}: this archive is ImageNet-V2 {named}, not the {variant} asked for.")
        return ImageNetV2ArchiveSource(spec, variant)
    if os.path.isdir(spec) and os.path.isfile(os.path.join(spec, "test", "nshards.txt")):
        return ImageNetV2WebDatasetSource(spec, variant)
    if os.path.isdir(spec):
        archive = os.path.join(spec, release_archive(variant))
        if os.path.isfile(archive):
            return ImageNetV2ArchiveSource(archive, variant)
        return ImageNetV2FolderSource(spec, variant)
    repo = spec.split("@", 1)[0]
    if repo not in (IMAGENET_V2_HUB_REPO, IMAGENET_V2_WDS_REPO):
        raise SchemaError(
            f"{spec!r}: neither a local ImageNet-V2 folder or archive nor one of its Hub copies "
            f"{IMAGENET_V2_HUB_REPO}, {IMAGENET_V2_WDS_REPO}."
        )
    from huggingface_hub import hf_hub_download

    revision = spec.split("@", 1)[1] if "@" in spec else None
    if repo == IMAGENET_V2_WDS_REPO:
        return ImageNetV2WebDatasetSource(
            download_file_copy(_webdataset_copy(), spec), variant, hub_repo=spec
        )
    try:
        path = hf_hub_download(repo, release_archive(variant), repo_type="dataset", revision=revision)
    except Exception as error:  # offline, not cached, or not found: say which file
        raise SchemaError(
            f"{spec}: could not get {release_archive(variant)} ({type(error).__name__}: {error})."
        ) from None
    return ImageNetV2ArchiveSource(path, variant, hub_repo=spec)


__all__ = [
    "IMAGENET_V2_DEFAULT_VARIANT",
    "IMAGENET_V2_HUB_REPO",
    "IMAGENET_V2_SIZE",
    "IMAGENET_V2_VARIANTS",
    "IMAGENET_V2_WDS_REPO",
    "ImageNetV2ArchiveSource",
    "ImageNetV2FolderSource",
    "ImageNetV2WebDatasetSource",
    "class_index_of_folder",
    "imagenet_v2_source",
    "release_archive",
    "release_folder",
]
