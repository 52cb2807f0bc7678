# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The cell tables behind the estimators of the benchmarks scored per cell (ImageNet-C / CIFAR-C: corruption and
severity; ImageNet-P: perturbation; ImageNet-9: background variant): per-unit, per-cell sums and counts of a
per-sample value (`CellTable`, `cell_table`), whose units are the clean images (a cluster bootstrap) or, where no
key names the clean image, the samples themselves, stratified by cell (`INDEPENDENT_NOTE`)."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

INDEPENDENT_NOTE = (
    "no key names the clean image, so samples are treated as independent (resampled within cells)"
)


def _units(
    unit_keys: np.ndarray, strata_keys: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sorted unique units (by stratum, then key): (keys, strata, inverse index of each sample)."""
    # pandas' hash factorisation, sorted: the order of np.unique, several times faster on millions of strings.
    key_index, key_names = pd.factorize(pd.Series(unit_keys, dtype=object), sort=True)
    key_names = np.asarray(key_names, dtype=str)
    if strata_keys is None:
        return key_names, np.zeros(len(key_names), dtype=np.int64), key_index.astype(np.int64)
    stratum_index, _ = pd.factorize(np.asarray(strata_keys), sort=True)
    combined, inverse = np.unique(
        stratum_index.astype(np.int64) * len(key_names) + key_index, return_inverse=True
    )
    return key_names[combined % len(key_names)], (combined // len(key_names)).astype(np.int64), inverse


@dataclass(frozen=True)
class CellTable:
    """Per-unit, per-cell sums and counts of a per-sample value: sums, counts (units, cells); cells: the cell of
    each column; keys / strata: the units'; clustered: whether units are clean images (else single samples,
    stratified by cell); num_samples: the samples summed."""

    sums: np.ndarray
    counts: np.ndarray
    cells: list[Hashable]
    keys: np.ndarray
    strata: np.ndarray
    clustered: bool
    num_samples: int


def cell_table(
    values: Sequence[float] | np.ndarray,
    cell_labels: Sequence[str] | np.ndarray,
    sample_ids: Sequence[Any],
    clean_keys: Sequence[Any] | None,
    cell_of: Callable[[str], Hashable] = str,
) -> CellTable:
    """The `CellTable` of `values` by cell (`cell_labels`, strings; `cell_of` turns a label into the cell the
    statistics read, e.g. "contrast/5" -> ("contrast", 5)). With `clean_keys` the units are the clean images (a
    cluster bootstrap, one stratum); without, each sample (keyed by its id) is its own unit, stratified by cell.
    Vectorised: a few `np.unique` and `np.bincount` over the samples."""
    values = np.asarray(values, dtype=np.float64)
    column, labels = pd.factorize(pd.Series(np.asarray(cell_labels, dtype=object)), sort=True)
    if clean_keys is not None:
        keys, strata, inverse = _units(np.asarray(clean_keys, dtype=str), None)
    else:
        ids = np.asarray(sample_ids, dtype=str)
        keys, strata, inverse = _units(ids, column)
        if len(keys) != len(ids):
            raise ValueError("Sample ids must be unique within a cell.")
    flat = inverse * len(labels) + column
    size = len(keys) * len(labels)
    sums = np.bincount(flat, weights=values, minlength=size).reshape(len(keys), len(labels))
    counts = np.bincount(flat, minlength=size).reshape(len(keys), len(labels)).astype(np.float64)
    cells = [cell_of(str(label)) for label in labels]
    return CellTable(sums, counts, cells, keys, strata, clean_keys is not None, len(values))


class ClusteredCellSums:
    """A clustered `CellTable` (units: the clean images) summed batch by batch, for benchmarks too large to hold
    per sample (a generated ImageNet-C: 3.75 M samples, 50,000 clean images). What it holds grows with the units
    and cells seen, not with the samples. `table()` equals `cell_table` of all the batches at once, bit for bit,
    for integer-valued values (counts of errors: their float sums are exact in any order)."""

    def __init__(self) -> None:
        self._units: dict[str, int] = {}
        self._cells: dict[str, int] = {}
        self._sums = np.zeros((0, 0))
        self._counts = np.zeros((0, 0))
        self.num_samples = 0

    def _fit(self, units: int, cells: int) -> None:
        rows, columns = self._sums.shape
        if units <= rows and cells <= columns:
            return
        shape = (max(units, 2 * rows), max(cells, columns))
        for name in ("_sums", "_counts"):
            grown = np.zeros(shape)
            grown[:rows, :columns] = getattr(self, name)
            setattr(self, name, grown)

    def add(self, values: np.ndarray, cell_labels: np.ndarray, clean_keys: np.ndarray) -> None:
        """Add one batch: each sample's value, cell label (string) and clean image key."""
        values = np.asarray(values, dtype=np.float64)
        key_index, key_names = pd.factorize(pd.Series(np.asarray(clean_keys, dtype=str), dtype=object))
        cell_index, cell_names = pd.factorize(pd.Series(np.asarray(cell_labels, dtype=object)))
        rows = np.asarray([self._units.setdefault(str(k), len(self._units)) for k in key_names], np.int64)
        columns = np.asarray([self._cells.setdefault(str(c), len(self._cells)) for c in cell_names], np.int64)
        self._fit(len(self._units), len(self._cells))
        flat = key_index * len(cell_names) + cell_index
        size = len(key_names) * len(cell_names)
        shape = (len(key_names), len(cell_names))
        block = np.ix_(rows, columns)  # rows and columns are distinct: += adds each batch sum once
        self._sums[block] += np.bincount(flat, weights=values, minlength=size).reshape(shape)
        self._counts[block] += np.bincount(flat, minlength=size).reshape(shape)
        self.num_samples += len(values)

    def table(self, cell_of: Callable[[str], Hashable] = str) -> CellTable:
        """The `CellTable`, units and cells sorted as `cell_table` sorts them."""
        keys = np.asarray(list(self._units), dtype=str)
        labels = list(self._cells)
        unit_order = np.argsort(keys, kind="stable")
        cell_order = sorted(range(len(labels)), key=labels.__getitem__)
        pick = np.ix_(unit_order, cell_order)
        return CellTable(
            sums=self._sums[pick],
            counts=self._counts[pick],
            cells=[cell_of(labels[i]) for i in cell_order],
            keys=keys[unit_order],
            strata=np.zeros(len(keys), dtype=np.int64),
            clustered=True,
            num_samples=self.num_samples,
        )


__all__ = ["INDEPENDENT_NOTE", "CellTable", "ClusteredCellSums", "cell_table"]
