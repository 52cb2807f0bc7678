# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The ImageNet-1k label space: 1000 WordNet ids in the standard index order, and their class names.

Read from the table this package ships (`hf_vitrobust/assets/class_lists/imagenet_1k.tsv`, sources in
`SOURCES.md` beside it), so that every model, dataset, metric and probe agrees on which index is which class.
Datasets on the Hub label ImageNet variants in different ways (integer index, wnid, 200-class subsets): map
them through the wnid, never by position.
"""

import csv
from collections.abc import Mapping
from importlib import resources

from ..constants import IMAGENET_NUM_CLASSES


def _read_table() -> tuple[tuple[str, ...], tuple[str, ...]]:
    table = resources.files("hf_vitrobust") / "assets" / "class_lists" / "imagenet_1k.tsv"
    with table.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    if [int(row["index"]) for row in rows] != list(range(IMAGENET_NUM_CLASSES)):
        raise ImportError(f"{table} must list the indices 0..999 in order.")
    return tuple(row["wnid"] for row in rows), tuple(row["name"] for row in rows)


#: The 1000 ImageNet-1k WordNet ids, index i is class i (sorted wnid order, as in the ILSVRC-2012 devkit), and
#: the human-readable names (e.g. 285 -> "Egyptian cat", 0 -> "tench, Tinca tinca").
IMAGENET_WNIDS, IMAGENET_CLASS_NAMES = _read_table()

if len(set(IMAGENET_WNIDS)) != IMAGENET_NUM_CLASSES:
    raise ImportError("The shipped ImageNet-1k class table must hold 1000 unique wnids.")

_WNID_TO_INDEX = {wnid: i for i, wnid in enumerate(IMAGENET_WNIDS)}


def imagenet_id2label() -> dict[int, str]:
    """A fresh `{index: class name}` dict for ImageNet-1k, in the format of a transformers config's id2label."""
    return dict(enumerate(IMAGENET_CLASS_NAMES))


def imagenet_wnid_to_index() -> dict[str, int]:
    """A fresh `{wnid: index}` dict for ImageNet-1k (e.g. "n02124075" -> 285)."""
    return dict(_WNID_TO_INDEX)


def _first_name(label: str) -> str:
    return label.split(",")[0].strip().lower()


_FIRST_NAMES = tuple(_first_name(name) for name in IMAGENET_CLASS_NAMES)


def is_imagenet_1k(
    id2label: Mapping[int, str] | Mapping[str, str] | None, min_agreement: float = 0.95
) -> bool:
    """Whether `id2label` is the ImageNet-1k label space in the standard order.

    True when it has exactly the keys 0..999 and at least `min_agreement` of the labels name the class at
    that index, either by wnid or by its first name (so both timm's and transformers' spellings, such as
    "tench, Tinca tinca" or "tench", count). A 1000-class head with placeholder labels ("LABEL_0") is not.
    """
    if not id2label or len(id2label) != IMAGENET_NUM_CLASSES:
        return False
    try:
        labels = {int(key): str(value) for key, value in id2label.items()}
    except (TypeError, ValueError):
        return False
    if set(labels) != set(range(IMAGENET_NUM_CLASSES)):
        return False
    agree = sum(
        labels[i].strip() == IMAGENET_WNIDS[i] or _first_name(labels[i]) == _FIRST_NAMES[i]
        for i in range(IMAGENET_NUM_CLASSES)
    )
    return agree >= min_agreement * IMAGENET_NUM_CLASSES


__all__ = [
    "IMAGENET_CLASS_NAMES",
    "IMAGENET_NUM_CLASSES",
    "IMAGENET_WNIDS",
    "imagenet_id2label",
    "imagenet_wnid_to_index",
    "is_imagenet_1k",
]
