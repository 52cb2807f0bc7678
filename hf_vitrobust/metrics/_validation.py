# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Input checks shared by the metrics: every bad input is rejected with a message naming it, before any work."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np


def to_numpy(values: Any, name: str) -> np.ndarray:
    """`values` (list, numpy array or torch tensor) as a numpy array."""
    if hasattr(values, "detach"):  # a torch tensor, without importing torch
        values = values.detach().cpu().numpy()
    try:
        return np.asarray(values)
    except ValueError as error:  # ragged nested lists
        raise ValueError(f"`{name}` must be a rectangular array: {error}") from None


def as_index_array(values: Any, name: str, *, ndim: int = 1) -> np.ndarray:
    """Integer class indices (or severities) with `ndim` dimensions; floats that are whole numbers are accepted."""
    array = to_numpy(values, name)
    if array.ndim != ndim:
        raise ValueError(f"`{name}` must have {ndim} dimension(s), got shape {array.shape}.")
    if (
        array.size
        and not np.issubdtype(array.dtype, np.integer)
        and (
            not np.issubdtype(array.dtype, np.number)
            or not np.all(np.isfinite(array) & (array == np.round(array)))
        )
    ):
        raise ValueError(f"`{name}` must hold integers, got dtype {array.dtype}.")
    return array.astype(np.int64)


def as_float_array(values: Any, name: str, *, ndim: int) -> np.ndarray:
    """Finite float64 values with `ndim` dimensions."""
    array = to_numpy(values, name)
    if array.ndim != ndim:
        raise ValueError(f"`{name}` must have {ndim} dimension(s), got shape {array.shape}.")
    if array.size and not np.issubdtype(array.dtype, np.number) and array.dtype != np.bool_:
        raise ValueError(f"`{name}` must be numeric, got dtype {array.dtype}.")
    array = array.astype(np.float64)
    if not np.all(np.isfinite(array)):
        raise ValueError(f"`{name}` holds NaN or infinite values.")
    return array


def as_string_list(values: Any, name: str) -> list[str]:
    if isinstance(values, str):
        raise ValueError(f"`{name}` must be one string per sample, not a single string.")
    values = list(values)
    bad = [value for value in values if not isinstance(value, str)]
    if bad:
        raise ValueError(f"`{name}` must hold strings; got {bad[0]!r}.")
    return values


def check_same_length(**arrays: Sequence | np.ndarray) -> int:
    """The common length of the inputs; a mismatch names every input's length."""
    lengths = {name: len(array) for name, array in arrays.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError(
            "Inputs must have one entry per sample; got lengths "
            + ", ".join(f"{k}={v}" for k, v in lengths.items())
        )
    return next(iter(lengths.values()))


def check_class_indices(class_indices: Any, num_classes: int | None = None) -> np.ndarray:
    """A non-empty set of distinct, non-negative class indices (the class mask of ImageNet-A/R/O)."""
    indices = as_index_array(class_indices, "class_indices")
    if indices.size == 0:
        raise ValueError("`class_indices` is empty.")
    if np.any(indices < 0) or (num_classes is not None and np.any(indices >= num_classes)):
        raise ValueError(
            f"`class_indices` must lie in [0, {num_classes}); got min {indices.min()}, max {indices.max()}."
        )
    if np.unique(indices).size != indices.size:
        raise ValueError("`class_indices` holds duplicates.")
    return indices


def json_float(value: float | None) -> float | None:
    """A Python float, or None for a missing / undefined value (NaN is not valid JSON)."""
    if value is None or not math.isfinite(float(value)):
        return None
    return float(value)
