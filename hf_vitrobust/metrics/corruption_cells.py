# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""ImageNet-C's (CIFAR-C's) cells for its estimators (`estimators.corruption_estimators`): the (corruption,
severity) cell of a "name/severity" label (`_corruption_cell`) and the statistics of resampled cell errors (mean
top-1, severity-5 top-1, unnormalised mCE, mCE, relative mCE; `_corruption_combine`), as `mce` computes them."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence

import numpy as np
import pandas as pd

from ..constants import EXTRA_CORRUPTIONS, STANDARD_CORRUPTIONS
from .mce import ALEXNET_CLEAN_ERROR, ALEXNET_CORRUPTION_ERRORS


def _corruption_combine(name: str) -> Callable[[np.ndarray, list[Hashable]], np.ndarray]:
    """The statistic `name` of cell errors (b, cells) -> (b,), percent; cells are (corruption, severity) and, for
    the relative mCE, "clean" (the clean error of the same units), as `mce.corruption_error_from_cells` and
    `analysis.scoring.corruption_metrics` compute them."""

    def combine(errors: np.ndarray, cells: list[Hashable]) -> np.ndarray:
        corruption_cells = [(i, cell) for i, cell in enumerate(cells) if cell != "clean"]
        if name == "mean_top1":
            return 100.0 * (1.0 - errors[:, [i for i, _ in corruption_cells]]).mean(axis=1)
        if name == "severity5_top1":
            return 100.0 * (1.0 - errors[:, [i for i, (_, s) in corruption_cells if s == 5]]).mean(axis=1)
        by_corruption: dict[str, list[int]] = {}
        for i, (corruption, _) in corruption_cells:
            by_corruption.setdefault(corruption, []).append(i)
        if name == "unnormalized_mce_all":
            covered = [c for c in STANDARD_CORRUPTIONS + EXTRA_CORRUPTIONS if c in by_corruption]
            return 100.0 * np.stack([errors[:, by_corruption[c]].mean(axis=1) for c in covered], 1).mean(1)
        standard = [c for c in STANDARD_CORRUPTIONS if c in by_corruption]
        values = []
        for corruption in standard:
            columns = by_corruption[corruption]
            alexnet = np.array([ALEXNET_CORRUPTION_ERRORS[corruption][cells[i][1] - 1] for i in columns])
            model = errors[:, columns]
            if name == "mce":
                values.append(100.0 * model.sum(axis=1) / alexnet.sum())
            else:  # relative_mce
                clean = errors[:, cells.index("clean")][:, None]
                values.append(100.0 * (model - clean).sum(axis=1) / (alexnet - ALEXNET_CLEAN_ERROR).sum())
        return np.stack(values, axis=1).mean(axis=1)

    return combine


def corruption_cell_labels(corruptions: Sequence[str], severities: np.ndarray) -> np.ndarray:
    """The "name/severity" label of each sample's cell (object array), built from the factorised names, not a
    string formatted per sample."""
    codes, names_present = pd.factorize(pd.Series(np.asarray(corruptions, dtype=object)), sort=True)
    combos = np.asarray(
        [f"{name}/{severity}" for name in names_present for severity in range(10)], dtype=object
    )
    return combos[codes * 10 + np.asarray(severities, dtype=np.int64)]


def _corruption_cell(label: str) -> tuple[str, int]:
    name, severity = label.rsplit("/", 1)
    return name, int(severity)
