# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The Hub datasets hf_vitrobust knows, each as the Hub really serves it, with the evidence for every fact.

Every schema below was checked against the dataset's published card, viewer and file pages (and, where those stop,
against the official `datasets` loading scripts and other projects' loaders), read on 2026-12-01 from stored copies
of those public pages; no page was fetched live and nothing here was downloaded. Each fact carries its source and
date in `HubSchema.confirmed`; what could not be verified is said in `HubSchema.unverified`. The same evidence, as
a table, is `docs/hub_datasets.md`, written by `hub_docs.hub_sources_markdown()`. The copies read from their own files
(WebDataset shards, release archives) and the repositories refused are in `hub_copies`.

Also here: the class-name spellings of Hub copies that differ from the shipped class lists (`crane2`, `cra`),
accepted deliberately, and the repositories that cannot be streamed (loading scripts without data files), refused
with what to use instead.
"""

from __future__ import annotations

from ..constants import SEVERITIES, STANDARD_CORRUPTIONS
from .class_lists import imagenet_a_classes, imagenet_o_classes, imagenet_r_classes
from .hub_copies import COPY_IMAGE_BYTES
from .hub_labels import ClassNameVariant, register_class_name_variant
from .hub_schemas import (
    Evidence,
    HubSchema,
    UnstreamableRepo,
    register_hub_schema,
    register_unstreamable_repo,
)

#: When the pages were read (stored copies of the public pages; the pages' own dates are in each entry).
READ_ON = "2026-12-01"

_HF = "https://huggingface.co/datasets"


def _seen(page_date: str) -> str:
    return f"{page_date}; read {READ_ON}"


#: (corruption, severities) of the Tsomaros ImageNet-C repositories seen on a tree, commit, viewer or listing page.
_TSOMAROS_SEEN = {
    "gaussian_noise": (3, 4, 5),
    "shot_noise": (1, 2, 3, 4, 5),
    "motion_blur": (1, 2, 3, 4, 5),
    "zoom_blur": (1, 2, 3, 4, 5),
    "fog": (1, 2, 3, 4, 5),
    "brightness": (1, 2, 3, 4),
    "pixelate": (1, 2, 3, 4, 5),
    "jpeg_compression": (1, 3, 4),
}

_IMAGENET_1K_CARD = "huggingface/datasets@040102f1:datasets/imagenet-1k/README.md and dataset_infos.json"
_IMAGENET_CLASSES = "huggingface/datasets@6a640b3d:datasets/imagenet-1k/classes.py (IMAGENET2012_CLASSES)"

for _schema in (
    HubSchema(
        name="ilsvrc-imagenet-1k",
        benchmark="imagenet-val",
        repo="ILSVRC/imagenet-1k",
        split="validation",
        splits=("train", "validation", "test"),
        label_mode="imagenet_names",
        num_rows={"train": 1_281_167, "validation": 50_000, "test": 100_000},
        confirmed=(
            Evidence(
                "columns image (Image) and label (ClassLabel of the 1000 full synset names in wnid order, "
                "0 = 'tench, Tinca tinca'); config default",
                _IMAGENET_1K_CARD,
                _seen("commit 040102f1"),
            ),
            Evidence(
                "class 517 (n03126707) is spelled 'crane2' (ClassLabel names must be unique; 134 stays 'crane'); "
                "the other 999 names equal the shipped table",
                _IMAGENET_CLASSES,
                _seen("commit 6a640b3d"),
            ),
            Evidence(
                "splits train 1,281,167, validation 50,000, test 100,000; the test labels are -1",
                _IMAGENET_1K_CARD + " ('Data Fields': -1 for the test set)",
                _seen("commit 040102f1"),
            ),
            Evidence(
                "gated: the card asks to accept the ImageNet terms of access",
                f"{_HF}/ILSVRC/imagenet-1k (extra_gated_prompt)",
                _seen("updated 2024-07-16"),
            ),
        ),
        unverified=(
            "the live card is gated and no copy of it was readable: the parquet files on main "
            "(data/validation-0000N-of-00014.parquet) are known from third-party download scripts only",
            "that the parquet conversion keeps 'crane2' (a derived dataset's viewer, "
            "datacomp/imagenet-1k-random20.0, shows '517 crane2') and label -1 in the test split",
        ),
    ),
    HubSchema(
        name="wnjxyk-tta-imagenet-c",
        benchmark="imagenet-c",
        repo="WNJXYK/TTA-ImageNet-C",
        config_template="{corruption}",
        split="severity_1",
        split_template="severity_{severity}",
        splits=tuple(f"severity_{s}" for s in SEVERITIES),
        label_mode="imagenet_names",
        int_labels=True,
        class_sorted=True,
        cells=tuple((c, s) for c in STANDARD_CORRUPTIONS for s in SEVERITIES),
        num_rows={"*": 50_000},
        confirmed=(
            Evidence(
                "one config per corruption (Hendrycks' snake_case names), splits severity_1..severity_5 at "
                "data/<corruption>/severity_<s>/*.parquet (the gaussian_noise, shot_noise and impulse_noise blocks "
                "read in full)",
                f"{_HF}/WNJXYK/TTA-ImageNet-C/blob/main/README.md",
                _seen("commit bb0fa9d, 232 lines"),
            ),
            Evidence(
                "the card declares no dataset_info/features: the features come from the parquet schema",
                f"{_HF}/WNJXYK/TTA-ImageNet-C/blob/main/README.md",
                _seen("commit bb0fa9d"),
            ),
        ),
        unverified=(
            "the configs after impulse_noise: the 15 standard corruptions, from third-party loaders pinned to "
            "commit bb0fa9d (one checks 15 files data/<c>/severity_5/data-00000.parquet) and the card's length; "
            "none of the 4 extra corruptions",
            "the label: a plain integer in ImageNet-1k index order (third-party loaders map it through "
            "robustbench's class-to-id table); the first-batch range check guards it",
            "50,000 rows per split, and that rows are grouped by class (a third-party preparation script says "
            "'class-sorted parquet files')",
        ),
    ),
    HubSchema(
        name="tsomaros-imagenet-c",
        benchmark="imagenet-c",
        repo="Tsomaros/ImageNet-C",
        repo_template="Tsomaros/ImageNet-C-{corruption}-severity_{severity}",
        split="validation",
        splits=("validation",),
        label_mode="wnid_names",
        cells=tuple((c, s) for c, levels in _TSOMAROS_SEEN.items() for s in levels),
        num_rows={"*": 50_000},
        confirmed=(
            Evidence(
                "columns image (Image) and label (ClassLabel whose names are the wnids in the standard order, "
                "0 = n01440764)",
                f"{_HF}/Tsomaros/ImageNet-C-motion_blur-severity_1/blob/main/README.md and "
                "ImageNet-C-fog-severity_4/blob/main/README.md",
                _seen("commits dated 'May 13-14', year not shown"),
            ),
            Evidence(
                "config default, one split validation of 50k rows; files data/validation-0000K-of-0000N.parquet, "
                "N from 1 to 4",
                f"{_HF}/Tsomaros/ImageNet-C-gaussian_noise-severity_5/viewer and its tree/main/data",
                _seen("page undated"),
            ),
            Evidence(
                "repositories seen: "
                + "; ".join(f"{c} {', '.join(map(str, levels))}" for c, levels in _TSOMAROS_SEEN.items()),
                f"tree, commit and viewer pages under {_HF}/Tsomaros/ImageNet-C-<corruption>-severity_<s>, and "
                "https://huggingface.co/Tsomaros (50 datasets in all)",
                _seen("profile updated 2024-12-27"),
            ),
        ),
        unverified=(
            "any other corruption or severity: impulse_noise, defocus_blur, glass_blur, snow, frost, contrast, "
            "elastic_transform and the 4 extras were not found; the owner lists 50 datasets in all, too few for "
            "15 x 5. A single repository id is still read as given",
            "label names 47..999 (the README's 27.3 kB fits the 1000 wnids; the names check verifies them)",
        ),
    ),
    HubSchema(
        name="barkermrl-imagenet-a",
        benchmark="imagenet-a",
        repo="barkermrl/imagenet-a",
        split="train",
        splits=("train",),
        label_mode="subset_index",
        class_subset=imagenet_a_classes,
        num_rows={"train": 7_500},
        confirmed=(
            Evidence(
                "columns image and label (ClassLabel of 200 classes named by the ImageNet-A wnids, 0 = n01498041)",
                f"{_HF}/barkermrl/imagenet-a",
                _seen("updated 2022-10-05"),
            ),
            Evidence(
                "one split train of 7.5k rows; files data/train-0000{0,1}-of-00002-<hash>.parquet and "
                "dataset_infos.json",
                f"{_HF}/barkermrl/imagenet-a/viewer/default/train and tree/main/data",
                _seen("updated 2022-10-05"),
            ),
        ),
        unverified=("the exact row count beyond the viewer's '7.5k' (7,500 is ImageNet-A's size)",),
    ),
    HubSchema(
        name="tsomaros-imagenet-a",
        benchmark="imagenet-a",
        repo="Tsomaros/imagenet-a",
        split="train",
        splits=("train",),
        label_mode="subset_index",
        class_subset=imagenet_a_classes,
        num_rows={"train": 7_500},
        confirmed=(
            Evidence(
                "columns image and label (ClassLabel of 200 classes named by the ImageNet-A wnids, "
                "0 = n01498041): 200-class numbers, not ImageNet-1k indices",
                f"{_HF}/Tsomaros/imagenet-a",
                _seen("page undated"),
            ),
            Evidence(
                "one split train of 7.5k rows",
                f"{_HF}/Tsomaros/imagenet-a/viewer/default/train",
                _seen("page undated"),
            ),
        ),
        unverified=("the file names under data/ and the exact row count beyond the viewer's '7.5k'",),
    ),
    HubSchema(
        name="axiong-imagenet-r",
        benchmark="imagenet-r",
        repo="axiong/imagenet-r",
        config="test",
        split="test",
        splits=("test",),
        label_column="wnid",
        label_mode="wnid_column",
        class_subset=imagenet_r_classes,
        num_rows={"test": 30_000},
        confirmed=(
            Evidence(
                "config test (default), split test of 30,000 rows at test/test-*; columns image, wnid (string), "
                "class_name (string); no integer label",
                f"{_HF}/axiong/imagenet-r/blame/main/README.md",
                _seen("commit 762a23f, June 2024"),
            ),
            Evidence(
                "wnid takes 200 values (first row n02088094, afghan_hound)",
                f"{_HF}/axiong/imagenet-r (viewer)",
                _seen("page undated"),
            ),
        ),
        unverified=("the shard file names under test/",),
    ),
    HubSchema(
        name="cais-imagenet-o",
        benchmark="imagenet-o",
        repo="cais/imagenet-o",
        split="test",
        splits=("test",),
        data_files={"test": "test/**"},
        layout="imagefolder",
        label_mode="none",
        class_subset=imagenet_o_classes,
        fixed_metadata=(("is_ood", True),),
        num_rows={"test": 2_000},
        confirmed=(
            Evidence(
                "image folder test/<wnid>/<name>_<confidence>.JPEG (the Center for AI Safety's upload, "
                "'Add imagenet-o'); one split test of 2k rows; label = ClassLabel of 200 wnids (0 = n01443537), "
                "the ImageNet-O classes the image was confused with",
                f"{_HF}/cais/imagenet-o/viewer/default/test and commits/10f6bd3/test",
                _seen("commit 10f6bd3"),
            ),
            Evidence(
                "README.txt: 2,000 natural adversarial examples of 200 classes; imagenet-o.tar beside test/",
                f"{_HF}/cais/imagenet-o/blob/main/README.txt",
                _seen("commit bf468c9"),
            ),
        ),
        unverified=("the ClassLabel's full list of 200 names beyond the first ones (checked at load)",),
    ),
    HubSchema(
        name="voxel51-imagenet-o",
        benchmark="imagenet-o",
        repo="Voxel51/ImageNet-O",
        split="train",
        splits=("train",),
        data_files={"train": "data/*"},
        layout="imagefolder",
        label_column=None,
        label_mode="none",
        class_subset=imagenet_o_classes,
        fixed_metadata=(("is_ood", True),),
        num_rows={"train": 2_000},
        confirmed=(
            Evidence(
                "a FiftyOne export: data/ (media), samples.json, metadata.json, fiftyone.yml; 2000 samples",
                f"{_HF}/Voxel51/ImageNet-O/tree/main and the card",
                _seen("2024-07-08"),
            ),
            Evidence(
                "without data_files the viewer detects an imagefolder of only 3 rows (train 1, test 2) with one "
                "column image: data/* is read as one split",
                f"{_HF}/Voxel51/ImageNet-O/viewer",
                _seen("page undated"),
            ),
        ),
        unverified=(
            "that data/ holds the 2,000 images as flat files (the row count check refuses a copy that does not "
            "give 2,000); whether samples.json carries any label field",
        ),
    ),
    HubSchema(
        name="nateraw-imagenet-sketch",
        benchmark="imagenet-sketch",
        repo="nateraw/imagenet-sketch",
        revision="refs/convert/parquet",
        data_files={"train": "default/train/*.parquet"},
        split="train",
        splits=("train",),
        label_mode="imagenet_names",
        num_rows={"train": 50_889},
        confirmed=(
            Evidence(
                "main holds a loading script only; refs/convert/parquet holds default/train/0000..0016.parquet",
                f"{_HF}/nateraw/imagenet-sketch/tree/refs%2Fconvert%2Fparquet/default/train and commits/main",
                _seen("converter commit d5c91a5, 2023-08-21"),
            ),
            Evidence(
                "one split train of 50.9k rows (ImageNet-Sketch: 50,889)",
                f"{_HF}/nateraw/imagenet-sketch/viewer/default/train",
                _seen("page undated"),
            ),
            Evidence(
                "the canonical ImageNet-Sketch loader labels with the imagenet-1k ClassLabel list ('crane2' "
                "included), 50,889 rows",
                "huggingface/datasets@040102f1:datasets/imagenet_sketch/dataset_infos.json",
                _seen("commit 040102f1"),
            ),
        ),
        unverified=(
            "nateraw's own features: its script is not stored; the label is assumed to be a ClassLabel of the "
            "1000 names or wnids, which the names check verifies before any index is used",
        ),
    ),
    HubSchema(
        name="uoft-cs-cifar10",
        benchmark="cifar10",
        repo="uoft-cs/cifar10",
        config="plain_text",
        split="test",
        splits=("train", "test"),
        image_column="img",
        label_mode="cifar10",
        num_rows={"train": 50_000, "test": 10_000},
        confirmed=(
            Evidence(
                "config plain_text (the only one), columns img (Image) and label (ClassLabel airplane ... truck), "
                "splits train 50,000 and test 10,000 at plain_text/{train,test}-00000-of-00001.parquet",
                f"{_HF}/uoft-cs/cifar10/blob/main/README.md and tree/main/plain_text",
                _seen("commit 0b27149, 'Convert dataset to Parquet'"),
            ),
        ),
    ),
    HubSchema(
        name="uoft-cs-cifar100",
        benchmark="cifar100",
        repo="uoft-cs/cifar100",
        config="cifar100",
        split="test",
        splits=("train", "test"),
        image_column="img",
        label_column="fine_label",
        label_mode="cifar100",
        num_rows={"train": 50_000, "test": 10_000},
        confirmed=(
            Evidence(
                "config cifar100, columns img, fine_label (ClassLabel of the 100 fine names, class 26 spelled 'cra'), "
                "coarse_label (20 names); splits train 50,000 and test 10,000",
                f"{_HF}/uoft-cs/cifar100/blob/f90290ff/README.md and commit 33ecdf7",
                _seen("commits f90290f, aadb3af"),
            ),
            Evidence(
                "cifar100/train-00000-of-00001.parquet",
                f"{_HF}/uoft-cs/cifar100/commits/main/cifar100/train-00000-of-00001.parquet",
                _seen("commit aadb3af"),
            ),
        ),
        unverified=(
            "the test file's name (cifar100/test-00000-of-00001.parquet) and the card's configs block",
        ),
    ),
):
    register_hub_schema(_schema)


for _variant in (
    ClassNameVariant(
        "imagenet-1k",
        "crane2",
        517,
        Evidence(
            "ILSVRC/imagenet-1k (and the ImageNet-Sketch copies that reuse its list) name class 517 (n03126707, the "
            "machine) 'crane2', because ClassLabel names must be unique and 134 (the bird) is also 'crane'",
            _IMAGENET_CLASSES,
            _seen("commit 6a640b3d"),
        ),
    ),
    ClassNameVariant(
        "cifar100",
        "cra",
        26,
        Evidence(
            "uoft-cs/cifar100 spells fine class 26 ('crab') 'cra', as did the original datasets loader",
            f"{_HF}/uoft-cs/cifar100/blob/f90290ff/README.md; huggingface/datasets:datasets/cifar100/cifar100.py",
            _seen("commit f90290f"),
        ),
    ),
):
    register_class_name_variant(_variant)


_SCRIPT_ONLY = "a loading script with no data files and no parquet conversion (datasets >= 4 runs no scripts)"

for _entry in (
    UnstreamableRepo(
        "randall-lab/cifar10-c",
        "cifar10-c",
        _SCRIPT_ONLY,
        "the released .npy folder (Zenodo 2535967: --data cifar10-c=/path/to/CIFAR-10-C) or "
        "generated:uoft-cs/cifar10",
        (
            Evidence(
                "the repository holds .gitattributes, README.md and cifar10-c.py (9.88 kB in all); the viewer is "
                "disabled ('requires arbitrary Python code execution'); no refs/convert/parquet was found",
                f"{_HF}/randall-lab/cifar10-c/tree/main",
                _seen("'8 months ago'"),
            ),
        ),
    ),
    UnstreamableRepo(
        "randall-lab/cifar100-c",
        "cifar100-c",
        _SCRIPT_ONLY,
        "the released .npy folder (Zenodo 3555552: --data cifar100-c=/path/to/CIFAR-100-C) or "
        "generated:uoft-cs/cifar100",
        (
            Evidence(
                "the viewer is disabled ('requires arbitrary Python code execution'); the card describes the "
                "script's 950,000-row test split; no refs/convert/parquet was found",
                f"{_HF}/randall-lab/cifar100-c",
                _seen("page undated"),
            ),
        ),
    ),
    UnstreamableRepo(
        "songweig/imagenet_sketch",
        "imagenet-sketch",
        "a loading script over data/ImageNet-Sketch.zip (datasets >= 4 runs no scripts; the viewer is disabled)",
        "nateraw/imagenet-sketch (read from its parquet conversion) or a local folder of the release",
        (
            Evidence(
                "files data/, README.md, classes.py, imagenet_sketch.py; the viewer is disabled",
                f"{_HF}/songweig/imagenet_sketch/tree/main",
                _seen("'8 months ago'"),
            ),
        ),
    ),
):
    register_unstreamable_repo(_entry)


#: Whether each registered Hub copy serves the release's own image files (results.json records it per benchmark:
#: `analysis.protocols.source_image_bytes`). "release" only where a card or page says the bytes are the release's;
#: "re-encoded" where the release holds no image files to keep; else "unknown". schema name -> (value, the fact).
HUB_IMAGE_BYTES: dict[str, tuple[str, str]] = {
    "ilsvrc-imagenet-1k": (
        "unknown",
        "parquet shards behind a gated card; no readable page says how they were encoded",
    ),
    "wnjxyk-tta-imagenet-c": (
        "unknown",
        "parquet shards; the card declares no features and does not say whether the released JPEG files were kept",
    ),
    "tsomaros-imagenet-c": (
        "unknown",
        "parquet shards; the cards do not say whether the released JPEGs were kept",
    ),
    "barkermrl-imagenet-a": (
        "unknown",
        "parquet shards; the card does not say whether the released JPEGs were kept",
    ),
    "tsomaros-imagenet-a": (
        "unknown",
        "parquet shards; the card does not say whether the released JPEGs were kept",
    ),
    "axiong-imagenet-r": (
        "unknown",
        "parquet shards; the card does not say whether the released files were kept",
    ),
    "cais-imagenet-o": (
        "unknown",
        "JPEG files served as uploaded (an image folder, no conversion) beside imagenet-o.tar, but no page says they "
        "are the release's bytes",
    ),
    "voxel51-imagenet-o": (
        "unknown",
        "a FiftyOne export's media folder; no page says the files are the release's",
    ),
    "nateraw-imagenet-sketch": (
        "unknown",
        "the Hub's parquet conversion of a loading script's output; no page says how the images were stored",
    ),
    "uoft-cs-cifar10": (
        "re-encoded",
        "the release is pickled uint8 arrays (no image files); the Image column stores each image encoded as a file",
    ),
    "uoft-cs-cifar100": (
        "re-encoded",
        "the release is pickled uint8 arrays (no image files); the Image column stores each image encoded as a file",
    ),
    **COPY_IMAGE_BYTES,
}
