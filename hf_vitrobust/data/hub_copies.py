# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The Hub copies read from their own files (`webdataset.HubFileCopy`: the clip-benchmark WebDataset copies of
ImageNet-A, -R, -O, -Sketch, -V2 and ObjectNet, and the ImageNet-V2 release archives) and the Hub repositories and
splits refused (`hub_schemas.RefusedRepo`), each with the evidence for every fact.

As in `hub_datasets`, every fact was read from stored copies of the public pages (the Hub's tree, viewer and commit
pages, and LAION-AI/CLIP_benchmark's code at 48de38c1, which wrote and reads these copies); nothing was downloaded.
What could not be verified is said in `unverified`. `docs/hub_datasets.md` lists it all (`hub_sources_markdown`).
`webdataset_source` finds the WebDataset copy a source string names.
"""

from __future__ import annotations

import os

from .class_lists import imagenet_a_classes, imagenet_o_classes, imagenet_r_classes
from .hub_schemas import Evidence, RefusedRepo, register_refused_repo
from .objectnet import BORDER
from .samples import SchemaError, Source
from .webdataset import (
    HUB_FILE_COPIES,
    HubFileCopy,
    WebDatasetSource,
    clip_imagenet_names,
    download_file_copy,
    objectnet_labels,
    objectnet_names,
    register_hub_file_copy,
    subset_names,
)

#: When the pages were read (stored copies; the pages' own dates are in each entry).
READ_ON = "2026-12-03"

_HF = "https://huggingface.co/datasets"
_CLIP_BENCHMARK = "LAION-AI/CLIP_benchmark@48de38c1"
_WDS_FILES = ("test/*", "classnames.txt")
_LAYOUT = Evidence(
    "the exporter writes test/nshards.txt, test/{0..n-1}.tar with one key s%07d per image (its index in the exported "
    "dataset) holding the image (lossless .webp by default) and .cls, and classnames.txt from the dataset's classes; "
    "the reader takes .webp/.png/.jpg with .cls",
    f"{_CLIP_BENCHMARK}:clip_benchmark/webdataset_builder.py (convert_dataset) and datasets/builder.py "
    "(build_wds_dataset)",
    f"commit of 2025-06-17; read {READ_ON}",
)


def _seen(page_date: str) -> str:
    return f"{page_date}; read {READ_ON}"


def _imagenet_names() -> tuple[str, ...]:
    return clip_imagenet_names()


def _imagenet_labels() -> tuple[int, ...]:
    return tuple(range(1000))


def _subset_copy(name: str, benchmark: str, display: str, subset, num_rows: int, *evidence, unverified=()):
    return HubFileCopy(
        name=name,
        repo=f"clip-benchmark/wds_{benchmark}",
        benchmark=benchmark,
        layout="webdataset",
        files=_WDS_FILES,
        display=display,
        class_names=lambda: subset_names(subset()),
        labels=lambda: subset().class_indices,
        num_rows=num_rows,
        confirmed=(_LAYOUT, *evidence),
        unverified=unverified,
    )


for _copy in (
    _subset_copy(
        "clip-benchmark-imagenet-a",
        "imagenet-a",
        "ImageNet-A",
        imagenet_a_classes,
        7_500,
        Evidence(
            "built as torchvision ImageFolder over the release's 200 wnid folders (.cls = the wnid's rank among the "
            "200, ImageNet-1k order), classes = the CLIP names of the 200 ImageNet-A classes",
            f"{_CLIP_BENCHMARK}:clip_benchmark/datasets/builder.py (dataset 'imagenet-a', imagenet_a_mask)",
            _seen("commit of 2025-06-17"),
        ),
        Evidence(
            "main holds test/ (0.tar 212 MB, 1.tar 197 MB, 2.tar 166 MB, 3.tar 121 MB, nshards.txt), classnames.txt "
            "2.09 kB (the 200 CLIP names one a line are 2,093 bytes) and zeroshot_classification_templates.txt; one "
            "split test of 7.5k rows",
            f"{_HF}/clip-benchmark/wds_imagenet-a/tree/main, tree/main/test and viewer/default/test",
            _seen("commit 614c3a5 'Initial upload' by djghosh"),
        ),
        unverified=(
            "the exact row count beyond the viewer's '7.5k' (the count check compares it with 7,500)",
        ),
    ),
    _subset_copy(
        "clip-benchmark-imagenet-r",
        "imagenet-r",
        "ImageNet-R",
        imagenet_r_classes,
        30_000,
        Evidence(
            "built as ImageFolder over the release's 200 wnid folders, classes = the CLIP names of the 200 "
            "ImageNet-R classes",
            f"{_CLIP_BENCHMARK}:clip_benchmark/datasets/builder.py (dataset 'imagenet-r', imagenet_r_mask)",
            _seen("commit of 2025-06-17"),
        ),
        Evidence(
            "main holds test/, classnames.txt 2.03 kB (the 200 CLIP names are 2,027 bytes) and "
            "zeroshot_classification_templates.txt; size category 10K-100K",
            f"{_HF}/clip-benchmark/wds_imagenet-r/tree/main",
            _seen("commit 610f29c 'Initial upload', Jan 20, 2023"),
        ),
        unverified=("the row count (no viewer page was stored; the count check compares it with 30,000)",),
    ),
    _subset_copy(
        "clip-benchmark-imagenet-o",
        "imagenet-o",
        "ImageNet-O",
        imagenet_o_classes,
        2_000,
        Evidence(
            "built as ImageFolder over the release's 200 wnid folders (the class each image was confused with), "
            "classes = the CLIP names of the 200 ImageNet-O classes; read here as out-of-distribution images",
            f"{_CLIP_BENCHMARK}:clip_benchmark/datasets/builder.py (dataset 'imagenet-o', imagenet_o_mask)",
            _seen("commit of 2025-06-17"),
        ),
        Evidence(
            "test/nshards.txt is '4'; one split test of 2k rows",
            f"{_HF}/clip-benchmark/wds_imagenet-o/blob/main/test/nshards.txt and viewer",
            _seen("commit 72f1c9a 'Initial upload'"),
        ),
        unverified=("classnames.txt's size (the 200 CLIP names would be 2,272 bytes; checked at load)",),
    ),
    HubFileCopy(
        name="clip-benchmark-imagenet-sketch",
        repo="clip-benchmark/wds_imagenet_sketch",
        benchmark="imagenet-sketch",
        layout="webdataset",
        files=_WDS_FILES,
        display="ImageNet-Sketch",
        class_names=_imagenet_names,
        labels=_imagenet_labels,
        num_rows=50_889,
        confirmed=(
            _LAYOUT,
            Evidence(
                "built as ImageFolder over the release's `sketch` folder of 1000 wnid folders (.cls = ImageNet-1k "
                "index), classes = the 1000 CLIP names",
                f"{_CLIP_BENCHMARK}:clip_benchmark/datasets/builder.py (dataset 'imagenet_sketch')",
                _seen("commit of 2025-06-17"),
            ),
            Evidence(
                "main holds test/, classnames.txt 11.8 kB (the 1000 CLIP names are 11,814 bytes) and "
                "zeroshot_classification_templates.txt",
                f"{_HF}/clip-benchmark/wds_imagenet_sketch/tree/main and commits/main/.gitattributes",
                _seen("commit 751cf0a 'Initial upload', Jan 20, 2023"),
            ),
        ),
        unverified=(
            "the row count: the viewer shows one split test of '30.1k rows', fewer than ImageNet-Sketch's 50,889 "
            "(a viewer conversion of part of the shards?); a download that does not give 50,889 is refused",
        ),
    ),
    HubFileCopy(
        name="clip-benchmark-imagenetv2",
        repo="clip-benchmark/wds_imagenetv2",
        benchmark="imagenet-v2",
        layout="webdataset",
        files=_WDS_FILES,
        display="ImageNet-V2",
        class_names=_imagenet_names,
        labels=_imagenet_labels,
        num_rows=10_000,
        confirmed=(
            _LAYOUT,
            Evidence(
                "built from ImageNetV2_pytorch's matched-frequency set (.cls = ImageNet-1k index), classes = the "
                "1000 CLIP names",
                f"{_CLIP_BENCHMARK}:clip_benchmark/datasets/builder.py (dataset 'imagenetv2')",
                _seen("commit of 2025-06-17"),
            ),
            Evidence(
                "main holds test/, classnames.txt 11.8 kB (the 1000 CLIP names are 11,814 bytes) and "
                "zeroshot_classification_templates.txt",
                f"{_HF}/clip-benchmark/wds_imagenetv2/tree/main",
                _seen("commit 98e9ba6 'Initial upload'"),
            ),
        ),
        unverified=(
            "the shard count and row count (no tree/test or viewer page was stored; counts checked at load)",
        ),
    ),
    HubFileCopy(
        name="clip-benchmark-objectnet",
        repo="clip-benchmark/wds_objectnet",
        benchmark="objectnet",
        layout="webdataset",
        files=_WDS_FILES,
        display="ObjectNet",
        class_names=objectnet_names,
        labels=objectnet_labels,
        border=BORDER,
        confirmed=(
            _LAYOUT,
            Evidence(
                "built from the release's objectnet-1.0/images, keeping the 113 ImageNet-overlapping folders: .cls = "
                "the folder's rank among them sorted by name, classes = their ObjectNet names lower-cased; the images "
                "are not cropped (the red border stays)",
                f"{_CLIP_BENCHMARK}:clip_benchmark/datasets/objectnet.py (ObjectNetDataset, label_map) and "
                "datasets/builder.py (dataset 'objectnet')",
                _seen("commit of 2025-06-17"),
            ),
            Evidence(
                "its parquet conversion holds only default/partial-test/0000..0006.parquet (807, 735, 763, 819, 886, "
                "767, 408 MB): part of the data, refused",
                f"{_HF}/clip-benchmark/wds_objectnet/tree/refs%2Fconvert%2Fparquet/default/partial-test",
                _seen("converter commit 7f632f4, Mar 7, 2024"),
            ),
        ),
        unverified=(
            "the main branch's files and the number of images (no page of them was stored: the 113 classes' count "
            "is not checked; classnames.txt is)",
        ),
    ),
    HubFileCopy(
        name="vaishaal-imagenetv2",
        repo="vaishaal/ImageNetV2",
        benchmark="imagenet-v2",
        layout="archives",
        files=(
            "imagenetv2-matched-frequency.tar.gz",
            "imagenetv2-threshold0.7.tar.gz",
            "imagenetv2-top-images.tar.gz",
        ),
        display="ImageNet-V2",
        num_rows=10_000,
        confirmed=(
            Evidence(
                "the release's download location: the three test sets as imagenetv2-matched-frequency.tar.gz, "
                "imagenetv2-threshold0.7.tar.gz, imagenetv2-top-images.tar.gz, each holding "
                "imagenetv2-<set>-format-val/<k>/<hash>.jpeg with k the ImageNet-1k index",
                "modestyachts/ImageNetV2_pytorch@14d4456:imagenetv2_pytorch/ImageNetV2_dataset.py (URLS, FNAMES, "
                "label = int(path.parent.name)); modestyachts/ImageNetV2@0b0c3fe:code/make_imagenet_folders.py",
                _seen("commits 14d4456 and 0b0c3fe"),
            ),
        ),
        unverified=("the repository's own pages (none stored); each archive's counts are checked at load",),
    ),
):
    register_hub_file_copy(_copy)


#: Image bytes of the copies (`HUB_IMAGE_BYTES` in `hub_datasets` takes these): schema name -> (value, the fact).
COPY_IMAGE_BYTES: dict[str, tuple[str, str]] = {
    **{
        name: (
            "re-encoded",
            "CLIP_benchmark's exporter decodes each release image and writes it anew (lossless WebP by default, "
            "PIL_to_bytes): the release's pixels at best, never its files",
        )
        for name in (
            "clip-benchmark-imagenet-a",
            "clip-benchmark-imagenet-r",
            "clip-benchmark-imagenet-o",
            "clip-benchmark-imagenet-sketch",
            "clip-benchmark-imagenetv2",
            "clip-benchmark-objectnet",
        )
    },
    "vaishaal-imagenetv2": ("release", "the release's own archives, read member by member"),
}


for _refused in (
    RefusedRepo(
        "MarMaster/corruption-*",
        "imagenet-c",
        "a regenerated ImageNet-C, not the release: each repository corrupts all of ImageNet-1k (train 1,281,167 and "
        "validation 50,000 images, which the release has no training half of) with one corruption at a severity "
        "its card never states, and labels by a string class_id",
        "the released ImageNet-C (a local folder, or Tsomaros/ImageNet-C-<corruption>-severity_<s>, "
        "WNJXYK/TTA-ImageNet-C) or generated:<clean source> at stated severities",
        (
            Evidence(
                "card: 'corrupted versions of ImageNet-1K images using contrast corruption', Train 1,281,167, "
                "Validation 50,000, features image, class_id (string), filename; no severity anywhere",
                f"{_HF}/MarMaster/corruption-contrast/blob/main/README.md and corruption-gaussian_noise/blob/main/"
                "README.md",
                _seen("commit 971846b, Oct 27, 2025"),
            ),
            Evidence(
                "dataset_info.json: description 'ImageNet-Corruption dataset with pixelate corruption', splits train "
                "1281167 and validation 50000, corruption_type pixelate, no severity field",
                f"{_HF}/MarMaster/corruption-pixelate/blob/main/dataset_info.json",
                _seen("created_at 2025-10-28"),
            ),
            Evidence(
                "repositories seen: contrast, gaussian_noise, brightness, fog, elastic_transform, jpeg_compression, "
                "pixelate, snow, each train/ and val/ of .arrow shards",
                f"{_HF}/MarMaster/corruption-<name>/tree/main",
                _seen("pages dated Oct-Nov 2025"),
            ),
        ),
        ("how the images were generated (which code, which severity): no page says",),
    ),
    RefusedRepo(
        "Voxel51/ImageNet-A",
        "imagenet-a",
        "a FiftyOne export (samples.json, metadata.json, data/ media) whose labels sit in FiftyOne's samples.json, "
        "which `datasets` does not read, and whose card is reported (issue 34) to count 7,450 samples, not "
        "ImageNet-A's 7,500",
        "barkermrl/imagenet-a, Tsomaros/imagenet-a, clip-benchmark/wds_imagenet-a or a local folder of the release",
        (
            Evidence(
                "files: data/ ('Adding media files in dir data'), samples.json 6.14 MB, metadata.json 6.03 kB, "
                "fiftyone.yml (format: FiftyOneDataset), README.md 3.85 kB; tags fiftyone, size 1K<n<10K",
                f"{_HF}/Voxel51/ImageNet-A/tree/a6bd7e1 and blob/11f1cf0/fiftyone.yml",
                _seen("commits of Jul 5, 2024 by harpreetsahota"),
            ),
        ),
        (
            "the card's sample count: its README (3.85 kB) was not among the stored pages, so the 7,450 is the "
            "issue's report (issue 34), not read here",
        ),
    ),
):
    register_refused_repo(_refused)


def hub_file_copies_for(benchmark: str, layout: str | None = None) -> tuple[HubFileCopy, ...]:
    """The registered file copies of one benchmark (of one layout), in registration order."""
    return tuple(
        c for c in HUB_FILE_COPIES.values() if c.benchmark == benchmark and layout in (None, c.layout)
    )


def webdataset_source(benchmark: str, spec: str) -> Source | None:
    """The source of `benchmark` that `spec` names when it is its clip-benchmark WebDataset copy: the Hub id
    (optionally "@revision"; downloaded with huggingface_hub) or a local folder laid out like it (`test/nshards.txt`
    and `classnames.txt`); None when `spec` is neither. Another benchmark's WebDataset copy is refused."""
    repo = spec.replace(os.sep, "/").rstrip("/")
    local = os.path.isdir(spec)
    if not local:
        repo = repo.split("@", 1)[0]
    named = next(
        (c for c in HUB_FILE_COPIES.values() if f"/{repo}".lower().endswith(f"/{c.repo}".lower())), None
    )
    if named is not None and named.benchmark != benchmark:
        raise SchemaError(f"{spec}: {named.repo} is a copy of {named.benchmark}, not of {benchmark}.")
    if local and not os.path.isfile(os.path.join(spec, "test", "nshards.txt")):
        return None
    if not local and (named is None or named.layout != "webdataset"):
        return None
    own = hub_file_copies_for(benchmark, "webdataset")
    if not own:
        raise SchemaError(f"{spec}: a WebDataset copy, but no clip-benchmark copy of {benchmark} is known.")
    if local:
        return WebDatasetSource(spec, own[0])
    return WebDatasetSource(download_file_copy(own[0], spec), own[0], hub_repo=spec)
