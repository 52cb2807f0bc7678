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


__all__ = ["INDEPENDENT_NOTE", "CellTable", "cell_table"]
