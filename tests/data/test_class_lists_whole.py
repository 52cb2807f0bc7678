# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Every class list the protocols read, checked whole: the ImageNet-1k order and names, and the ImageNet-A and -R
200-class masks (wnids and ImageNet-1k indices), against an independent copy of their sources: timm's tables
(`timm/data/_info/`, MIT; timm states they are hendrycks' lists: `imagenet_a_synsets.txt`, `imagenet_r_synsets.txt`
and their `*_indices.txt`). ImageNet-O's mask and ImageNet-9's superclass table have no such copy installed: the
shipped files are pinned by SHA-256, with their source named."""

from __future__ import annotations

import hashlib
from importlib import resources

import pytest

from hf_vitrobust.data import BENCHMARKS
from hf_vitrobust.data.class_lists import imagenet_to_imagenet_9
from hf_vitrobust.models.imagenet import IMAGENET_CLASS_NAMES, IMAGENET_WNIDS

ASSETS = resources.files("hf_vitrobust") / "assets" / "class_lists"
TIMM_INFO = resources.files("timm") / "data" / "_info"

#: SHA-256 of the shipped files that no installed package re-publishes.
PINNED = {
    # hendrycks/natural-adv-examples @ 0777070, eval_many_models.py `imagenet_o_wnids` (MIT), one wnid a line.
    "imagenet_o_wnids.txt": "29575307f17b6cb040fcd04fee2b5b7b0e43f7c55072fb05d4b33cc39fc60978",
    # MadryLab/backgrounds_challenge @ 46d224b, in_to_in9.json with in9_classes.txt, as a table (index, wnid,
    # superclass index, superclass name).
    "imagenet_9.tsv": "2647a1d74faa55b444e964646fcc282991253b5069365b2f25b48a8f9d0bee9c",
}


def _lines(path) -> list[str]:
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_the_imagenet_1k_order_and_names_are_timms():
    wnids = _lines(TIMM_INFO / "imagenet_synsets.txt")
    lemmas = dict(line.split("\t", 1) for line in _lines(TIMM_INFO / "imagenet_synset_to_lemma.txt"))
    assert list(IMAGENET_WNIDS) == wnids and len(wnids) == 1000
    assert list(IMAGENET_CLASS_NAMES) == [lemmas[wnid] for wnid in wnids]


@pytest.mark.parametrize(
    ("benchmark", "prefix"), [("imagenet-a", "imagenet_a"), ("imagenet-r", "imagenet_r")]
)
def test_the_200_class_masks_are_hendrycks_lists_whole(benchmark, prefix):
    subset = BENCHMARKS.get(benchmark).class_subset
    wnids = _lines(TIMM_INFO / f"{prefix}_synsets.txt")
    indices = [int(line) for line in _lines(TIMM_INFO / f"{prefix}_indices.txt")]
    assert len(wnids) == len(indices) == 200
    assert list(subset.wnids) == wnids
    assert list(subset.class_indices) == indices
    assert [subset.to_imagenet_index(k) for k in range(200)] == indices
    assert subset.mask.nonzero().flatten().tolist() == indices
    assert _lines(ASSETS / f"{prefix}_wnids.txt") == wnids


@pytest.mark.parametrize("name", sorted(PINNED))
def test_the_other_tables_are_the_pinned_files(name):
    assert hashlib.sha256((ASSETS / name).read_bytes()).hexdigest() == PINNED[name]


def test_imagenet_o_and_imagenet_9_read_the_pinned_files_whole():
    """What the package reads is the whole pinned file: ImageNet-O's 200 wnids in file order, and ImageNet-9's
    superclass of every one of the 1000 classes."""
    subset = BENCHMARKS.get("imagenet-o").class_subset
    assert list(subset.wnids) == _lines(ASSETS / "imagenet_o_wnids.txt") and len(subset) == 200
    rows = [line.split("\t") for line in _lines(ASSETS / "imagenet_9.tsv")[1:]]
    assert [int(r[0]) for r in rows] == list(range(1000)) and [r[1] for r in rows] == list(IMAGENET_WNIDS)
    assert imagenet_to_imagenet_9().tolist() == [int(r[2]) for r in rows]
    assert (
        sum(int(r[2]) >= 0 for r in rows) == 370
    )  # Xiao et al.: 370 ImageNet classes form the 9 superclasses


def test_right_group_counts_a_prediction_anywhere_in_its_labels_group():
    """ObjectNet's rule, by hand: groups {0, 1} and {2}; class 5 is outside every group (its own group)."""
    from hf_vitrobust.data.class_lists import ClassSubset

    wnids = IMAGENET_WNIDS
    subset = ClassSubset("toy", (wnids[0], wnids[1], wnids[2]), groups=((wnids[0], wnids[1]), (wnids[2],)))
    predicted = [1, 0, 2, 1, 5, 5]
    labels = [0, 1, 2, 2, 5, 0]
    assert subset.right_group(predicted, labels).tolist() == [True, True, True, False, True, False]
