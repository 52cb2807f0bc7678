# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Class-balanced, seeded mini-batches drawn from a whole source, for per-batch measurements such as Park & Kim's
Hessian spectra (their `losslandscape.ipynb` draws its training batches with `shuffle=True` from the whole set).

`class_balanced_order` puts every labelled sample of a source in one seeded order: round r holds the r-th sample
of every class that has more than r, the classes always in the same seeded order, the samples of each class in a
seeded order of their own. Cut into consecutive batches of B, the order gives each batch as many classes as B
allows: B distinct classes while B is at most the number of classes left, else every class floor(B / C) or
ceil(B / C) times. Which samples and classes come first depends only on the seed, the sample ids and the labels:
not on the order of the rows (a class-sorted parquet and a shuffled one give the same batches), the number of
processes, or the batch size of the forward pass. The first L positions of the order over a subset that is itself
the first L' >= L positions of the order over the whole source are those same L positions, so a benchmark limited
to `class_balanced_subset` and a probe that orders the benchmark's rows again draw the same batches.

`ClassBalancedSource` (`subset: class-balanced` of a suite's benchmark) keeps the first `limit` samples of that
order over the whole source. It reads the labels of every row first, then only the kept rows' images. What reading
the labels costs depends on the source (`source_labels`): an image folder is listed (no image is opened); parquet
files and Hub datasets read their label column only (`DatasetsSource.label_rows`); any other source reads every
row's undecoded data once.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from .samples import NO_LABEL, RawSample, Source, _LimitedView, subset_hash


def class_balanced_order(
    sample_ids: Sequence[str], labels: Sequence[int] | np.ndarray, seed: int
) -> np.ndarray:
    """Positions (int64) of every sample with a label (>= 0) in class-balanced round-robin order (module
    docstring): round r is the r-th sample of each class that has more than r, the classes in the order of
    `subset_hash(seed, "class/<label>")`, a class's samples in the order of `subset_hash(seed, "row/<sample id>")`."""
    ids = np.asarray([str(sample_id) for sample_id in sample_ids], dtype=str)
    labels = np.asarray(labels, dtype=np.int64).reshape(-1)
    if len(ids) != len(labels):
        raise ValueError(f"{len(ids)} sample ids but {len(labels)} labels.")
    if len(set(ids.tolist())) != len(ids):
        raise ValueError("Sample ids must be unique: they key each sample's place in the draw.")
    kept = np.flatnonzero(labels >= 0)
    if not len(kept):
        return np.zeros(0, dtype=np.int64)
    kept_labels = labels[kept]
    row_keys = np.asarray([subset_hash(seed, f"row/{ids[i]}") for i in kept], dtype=np.uint64)
    by_class = kept[np.lexsort((ids[kept], row_keys, kept_labels))]
    sorted_labels = labels[by_class]
    rounds = np.arange(len(by_class)) - np.searchsorted(sorted_labels, sorted_labels, side="left")
    classes = np.unique(kept_labels)
    class_keys = np.asarray([subset_hash(seed, f"class/{int(c)}") for c in classes], dtype=np.uint64)
    class_rank = np.empty(len(classes), dtype=np.int64)
    class_rank[np.lexsort((classes, class_keys))] = np.arange(len(classes))
    places = class_rank[np.searchsorted(classes, sorted_labels)]
    return by_class[np.lexsort((places, rounds))].astype(np.int64)


def class_balanced_batches(
    sample_ids: Sequence[str],
    labels: Sequence[int] | np.ndarray,
    batch_size: int,
    num_batches: int | None,
    seed: int,
) -> np.ndarray:
    """(batches, batch_size) int64 positions: consecutive slices of `class_balanced_order`, full batches only, the
    first `num_batches` of them (None: as many as the samples fill)."""
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive int, got {batch_size!r}.")
    order = class_balanced_order(sample_ids, labels, seed)
    count = len(order) // batch_size
    if num_batches is not None:
        count = min(count, int(num_batches))
    return order[: count * batch_size].reshape(count, batch_size)


def source_labels(source: Source) -> tuple[list[str], np.ndarray, str]:
    """(sample ids, labels with `NO_LABEL` for none, how they were read) of every raw sample of `source`, without
    decoding any image: a source's own `label_rows()` where it has one (parquet and Hub sources: the label column
    only), else its raw samples (an image folder: a listing; other sources read each row's undecoded data)."""
    label_rows = getattr(source, "label_rows", None)
    if callable(label_rows):
        rows = list(label_rows())
        how = "the label column only"
    else:
        rows = [(raw.sample_id, raw.label) for raw in source.raw_samples()]
        how = "a listing of the files" if source.reads_on_decode else "every row's undecoded data, once"
    ids = [str(sample_id) for sample_id, _ in rows]
    labels = np.asarray([NO_LABEL if label is None else int(label) for _, label in rows], dtype=np.int64)
    return ids, labels, how


class ClassBalancedSource(_LimitedView):
    """The first `limit` samples of `class_balanced_order(seed)` over every row of another source, yielded in
    stream order: the labels of all rows are read first (`source_labels`), then only the kept rows' data. Rows
    without a label are never kept. Shares the inner source's skip report. What `class_balanced_subset` makes."""

    def __init__(self, inner: Source, limit: int, seed: int) -> None:
        super().__init__(inner, limit)
        self.seed = int(seed)
        self._kept: set[str] | None = None
        self.labels_read: str | None = None

    def kept_ids(self) -> set[str]:
        """The sample ids of the kept rows (the labels are read on the first call)."""
        if self._kept is None:
            ids, labels, self.labels_read = source_labels(self.inner)
            order = class_balanced_order(ids, labels, self.seed)[: self.limit]
            self._kept = {ids[position] for position in order}
        return self._kept

    def raw_samples(self) -> Iterator[RawSample]:
        if self.limit == 0:
            return
        kept = self.kept_ids()
        for raw in self.inner.raw_samples():
            if raw.sample_id in kept:
                yield raw

    def describe(self) -> dict[str, Any]:
        subset = {"kind": "class-balanced", "limit": self.limit, "seed": self.seed, "per_cell": False}
        if self.labels_read is not None:
            subset["labels_read"] = self.labels_read
        return {**self.inner.describe(), "subset": subset}

    def count_without_decoding(self) -> int | None:
        """The limit (an upper bound: the inner source may hold fewer labelled rows)."""
        return self.limit


def class_balanced_subset(source: Source, limit: int, seed: int) -> Source:
    """`limit` samples of `source` drawn class-balanced with `seed` from all its rows (`ClassBalancedSource`).
    Refused for sources generated from a clean source (ImageNet-C/-P on the fly): draw their clean images
    instead."""
    if source.clean_source is not None:
        raise ValueError(
            "A class-balanced subset is drawn from a clean classification source, not from a generated one."
        )
    return ClassBalancedSource(source, limit, seed)


__all__ = [
    "ClassBalancedSource",
    "class_balanced_batches",
    "class_balanced_order",
    "class_balanced_subset",
    "source_labels",
]
