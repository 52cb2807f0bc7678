# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Class-balanced seeded batches (`hf_vitrobust.data.balanced_batches`): the draw does not depend on the rows' order
(a class-sorted source and a shuffled one give the same batches), no class is over-represented in a batch (counts
per class within a batch differ by at most 1, counted here independently), the first L of the whole source's order
are what a probe re-draws from a subset of it, and the subset view of an image folder and of ILSVRC-layout parquet
reads the labels first (parquet: the label column only) and keeps the same rows."""

from __future__ import annotations

import numpy as np
import pytest
from data_fixtures import ilsvrc_imagenet_1k, image_bytes, image_folder

from hf_vitrobust.data import load_benchmark
from hf_vitrobust.data.balanced_batches import (
    ClassBalancedSource,
    class_balanced_batches,
    class_balanced_order,
    class_balanced_subset,
    source_labels,
)
from hf_vitrobust.models.imagenet import imagenet_wnid_to_index


def _sorted_rows(counts: list[int]) -> tuple[list[str], np.ndarray]:
    """Rows grouped by class (as a class-sorted parquet), ids that say nothing of the class."""
    labels = np.repeat(np.arange(len(counts)), counts)
    ids = [f"row-{i:05d}" for i in range(len(labels))]
    return ids, labels


def _max_count_gap(labels: np.ndarray, batch: np.ndarray, num_classes: int) -> int:
    """max - min of the per-class counts in one batch, over every class (absent ones count 0)."""
    counts = np.zeros(num_classes, dtype=int)
    for label in labels[batch]:
        counts[label] += 1
    return int(counts.max() - counts.min())


def test_the_draw_does_not_depend_on_the_rows_order():
    ids, labels = _sorted_rows([7, 9, 5, 8, 6, 9])
    shuffled = np.random.default_rng(0).permutation(len(ids))
    sorted_batches = class_balanced_batches(ids, labels, 4, None, seed=3)
    shuffled_batches = class_balanced_batches([ids[i] for i in shuffled], labels[shuffled], 4, None, seed=3)
    as_ids = [[ids[p] for p in batch] for batch in sorted_batches]
    assert as_ids == [[ids[shuffled[p]] for p in batch] for batch in shuffled_batches]
    # Another seed draws other rows and classes first.
    other = class_balanced_batches(ids, labels, 4, None, seed=4)
    assert other.tolist() != sorted_batches.tolist()
    # Every labelled row is drawn exactly once.
    assert sorted(class_balanced_order(ids, labels, 3).tolist()) == list(range(len(ids)))


@pytest.mark.parametrize("batch_size", [3, 6, 13, 20])
def test_no_class_is_over_represented_in_a_batch(batch_size):
    # 6 classes of 30 rows each, class-sorted: batches of 3 and 6 take distinct classes, 13 and 20 two or three
    # (four) of each.
    ids, labels = _sorted_rows([30] * 6)
    batches = class_balanced_batches(ids, labels, batch_size, 8, seed=0)
    assert len(batches) == 8
    for batch in batches:
        assert len(set(batch.tolist())) == batch_size
        assert _max_count_gap(labels, batch, 6) <= 1
    if batch_size <= 6:
        assert all(len(set(labels[b].tolist())) == batch_size for b in batches)


def test_the_first_rows_of_the_whole_order_are_the_order_of_that_subset():
    """What the benchmark keeps (`subset: class-balanced`) and what the probe re-orders agree: the class-balanced
    order over the first L rows of the whole source's order is those L rows, in the same order."""
    ids, labels = _sorted_rows([4, 11, 2, 9, 7])
    labels[5] = -1  # a row without a label is never drawn
    whole = class_balanced_order(ids, labels, 11)
    assert 5 not in whole.tolist()
    for kept in (3, 10, 17, len(whole)):
        subset = np.sort(whole[:kept])
        again = class_balanced_order([ids[i] for i in subset], labels[subset], 11)
        assert subset[again].tolist() == whole[:kept].tolist()


def test_bad_input():
    with pytest.raises(ValueError, match="unique"):
        class_balanced_order(["a", "a"], [0, 1], 0)
    with pytest.raises(ValueError, match="2 sample ids but 3 labels"):
        class_balanced_order(["a", "b"], [0, 1, 2], 0)
    with pytest.raises(ValueError, match="batch_size"):
        class_balanced_batches(["a"], [0], 0, None, 0)


def _folder_source(tmp_path):
    wnids = sorted(imagenet_wnid_to_index())[:4]
    files = {f"{wnid}/img_{k}.png": image_bytes(10 * c + k) for c, wnid in enumerate(wnids) for k in range(5)}
    return load_benchmark("imagenet-train", image_folder(tmp_path / "train", files)), wnids


def test_an_image_folder_subset_keeps_the_rows_of_the_whole_order(tmp_path):
    source, wnids = _folder_source(tmp_path)
    ids, labels, how = source_labels(source)
    assert how == "a listing of the files" and len(ids) == 20
    assert sorted(set(labels.tolist())) == sorted(imagenet_wnid_to_index()[w] for w in wnids)
    view = class_balanced_subset(source, 6, seed=2)
    kept = [sample.sample_id for sample in view.samples()]
    expected = {ids[p] for p in class_balanced_order(ids, labels, 2)[:6]}
    assert set(kept) == expected and len(kept) == 6
    # In stream order, at most 2 rows of each of the 4 classes (6 = 4 + 2).
    assert kept == [i for i in ids if i in expected]
    assert max(np.bincount([labels[ids.index(i)] - labels.min() for i in kept])) == 2
    assert view.describe()["subset"] == {
        "kind": "class-balanced",
        "limit": 6,
        "seed": 2,
        "per_cell": False,
        "labels_read": "a listing of the files",
    }


def test_parquet_labels_are_read_from_the_label_column_only(tmp_path):
    labels = [3, 3, 3, 3, 7, 7, 7, 9, 9, 9, 9, 9]  # class-sorted, as the Hub's ILSVRC rows may be
    repo = ilsvrc_imagenet_1k(tmp_path, labels, split="train")
    source = load_benchmark("imagenet-train", repo)
    ids, found, how = source_labels(source)
    assert how == "the label column only"
    full = [(raw.sample_id, raw.label) for raw in source.raw_samples()]
    assert list(zip(ids, found.tolist(), strict=True)) == full
    view = class_balanced_subset(source, 6, seed=0)
    assert isinstance(view, ClassBalancedSource)
    samples = list(view.samples())
    assert sorted(s.label for s in samples) == [3, 3, 7, 7, 9, 9]
    assert {s.sample_id for s in samples} == {ids[p] for p in class_balanced_order(ids, found, 0)[:6]}


def test_a_generated_source_is_refused():
    generated = load_benchmark("imagenet-c", "generated:builtin", corruptions=["fog"], severities=[1])
    with pytest.raises(ValueError, match="not from a generated one"):
        class_balanced_subset(generated, 4, seed=0)
