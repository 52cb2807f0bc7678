# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Counts of images behind a published accuracy and ours (`analysis.image_counts`): the bound the images the authors
left out give from our own accuracy, worked by hand, and the shipped notebook accuracies read back as counts."""

from __future__ import annotations

import itertools

import pytest

from hf_vitrobust.analysis.image_counts import ImageCounts, dropped_images_bound, published_count
from hf_vitrobust.analysis.published import published_numbers
from hf_vitrobust.analysis.published_vs_ours import EQUAL_RELATIVE


def test_the_dropped_images_bound_by_enumeration():
    """Every way of leaving out d of n images, of which the model counts k: the counts on the kept m = n - d are
    exactly the bound's range (small n, enumerated)."""
    for n, k, m in [(6, 2, 4), (6, 5, 3), (5, 0, 2), (5, 5, 1), (7, 3, 7)]:
        counted = [True] * k + [False] * (n - k)
        seen = {sum(counted[i] for i in kept) for kept in itertools.combinations(range(n), m)}
        assert dropped_images_bound(k, n, m) == (min(seen), max(seen)), (n, k, m)
    with pytest.raises(ValueError, match="kept"):
        dropped_images_bound(3, 5, 6)


def test_a_printed_accuracy_is_one_count_and_a_reading_a_range():
    assert published_count(100 * 2086 / 7424, 7424, 1e-6) == (2086, 2086)
    assert published_count(28.1, 7500, 0.05) == (2104, 2111)  # 28.05 .. 28.15 % of 7,500 = 2103.75 .. 2111.25
    assert published_count(28.10001, 7500, 0.0) is None  # 2107.50075 images: no count fits


def test_shipped_notebook_accuracies_read_back_as_whole_counts():
    """The notebooks print float32 fractions of their images: each reads back as exactly one count; only Table 7's
    rows, the mean of Keras' running accuracies over the batches (their note says so), are no count."""
    rows = [
        row
        for row in published_numbers()
        if row.metric in ("top-1 %", "top-5 %") and row.images and row.read_from == "notebook-output"
    ]
    no_count = []
    for row in rows:
        tolerance = row.reading_precision + EQUAL_RELATIVE * max(abs(row.value), 1.0)
        counts = published_count(row.value, row.images, tolerance)
        if counts is None:
            no_count.append(row)
            continue
        assert counts[0] == counts[1], row.row_id
        assert abs(100 * counts[0] / row.images - row.value) <= tolerance, row.row_id
    assert len(rows) - len(no_count) >= 60
    assert {row.where.split(",")[0] for row in no_count} == {"Table 7"}
    assert all("running accurac" in row.note and "not the" in row.note for row in no_count)


def test_verdict_words():
    same = ImageCounts((10, 10), 50, 10, 50, (10, 10))
    assert (same.verdict(), same.difference, same.flipped) == ("equal", (0, 0), 0)
    dropped = ImageCounts((9, 9), 48, 10, 50, dropped_images_bound(10, 50, 48))
    assert dropped.ours_on_theirs == (8, 10) and dropped.verdict() == "within 1 image"
    off = ImageCounts((13, 13), 48, 10, 50, (8, 10))
    assert (off.verdict(), off.flipped) == ("outside by 3 images", 3)
