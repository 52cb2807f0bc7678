# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""RobustBench's ImageNet-C leaderboard columns: "corruptions" accuracy and its mCE against its own AlexNet.

RobustBench (Croce et al. 2021, github.com/RobustBench/robustbench, MIT) scores ImageNet-C on its own 5,000
validation images (`robustbench/helper_files/imagenet_test_image_ids.txt`, shipped here as the image list
"robustbench-imagenet-c-5000"), 15 corruptions x severities 1-5, each image resized to 224 x 224
(`eval.py`: "for corruptions ... we use only resizing to 224x224"). `eval.py`'s `corruptions_evaluation`:

- corruptions accuracy = the plain mean of the 75 cell accuracies;
- mCE = mean over corruptions c of mean over severities s of (1 - acc[c, s]) / mean_s (1 - acc_AlexNet[c, s]),
  i.e. sum_s E / sum_s E_AlexNet as Hendrycks & Dietterich, but with AlexNet measured by RobustBench on the same
  5,000 images (the "AlexNet" row of `model_info/imagenet/corruptions/unaggregated_results.csv`, shipped as
  `robustbench_alexnet_imagenet_c_accuracies.csv`), not the paper's full-set AlexNet errors. Mixing the two (or
  the subset with the full 50,000 images) gives numbers that do not line up (RobustBench issues #47, #73, #116).

The leaderboard (`model_info/imagenet/corruptions/*.json`) reports both in percent: "corruptions_acc" and
"corruptions_mce" (AlexNet itself: 21.12 and 100.0).

Its ImageNet-3DCC columns ("corruptions_acc_3d", "corruptions_mce_3d") are the same formulas over the 12 x 5 cells of
ImageNet-3DCC on the same 5,000 images (`load_imagenet3dcc` reads the same list), normalised by its AlexNet row of
`unaggregated_results_3d.csv` (same commit, shipped as `robustbench_alexnet_imagenet_3dcc_accuracies.csv`; AlexNet
28.47 and 100.0, Standard_R50 47.12 and 73.16):
`robustbench_corruption_scores(..., alexnet=ROBUSTBENCH_3DCC_ALEXNET_ACCURACIES)`.
"""

from __future__ import annotations

import csv
import functools
from collections.abc import Callable, Hashable, Mapping
from importlib import resources

import numpy as np

from .cell_tables import CellTable
from .corruption_cells import _corruption_combine
from .estimators import Estimator, _cell_estimator
from .intervals import NON_NEGATIVE

ROBUSTBENCH_ALEXNET_FILE = "robustbench_alexnet_imagenet_c_accuracies.csv"
ROBUSTBENCH_3DCC_ALEXNET_FILE = "robustbench_alexnet_imagenet_3dcc_accuracies.csv"
ROBUSTBENCH_SEVERITIES = (1, 2, 3, 4, 5)


@functools.cache
def robustbench_alexnet_accuracies(file_name: str) -> dict[str, tuple[float, ...]]:
    """RobustBench's AlexNet top-1 accuracy (fraction) per corruption and severity 1-5 on its 5,000 images, in its
    order, from a shipped file of this package (`ROBUSTBENCH_ALEXNET_FILE`, `ROBUSTBENCH_3DCC_ALEXNET_FILE`)."""
    text = resources.files(__package__).joinpath(file_name).read_text(encoding="utf-8")
    return {
        row["corruption"]: tuple(float(row[str(s)]) for s in ROBUSTBENCH_SEVERITIES)
        for row in csv.DictReader(text.splitlines())
    }


#: RobustBench's AlexNet top-1 accuracy (fraction) per corruption and severity 1-5, in its `CORRUPTIONS` order.
ROBUSTBENCH_ALEXNET_ACCURACIES: dict[str, tuple[float, ...]] = robustbench_alexnet_accuracies(
    ROBUSTBENCH_ALEXNET_FILE
)
#: RobustBench's 15 ImageNet-C corruptions (`robustbench.data.CORRUPTIONS`), in its order.
ROBUSTBENCH_CORRUPTIONS: tuple[str, ...] = tuple(ROBUSTBENCH_ALEXNET_ACCURACIES)
#: The same for ImageNet-3DCC: its AlexNet row and its 12 corruptions (`robustbench.data.CORRUPTIONS_3DCC`).
ROBUSTBENCH_3DCC_ALEXNET_ACCURACIES: dict[str, tuple[float, ...]] = robustbench_alexnet_accuracies(
    ROBUSTBENCH_3DCC_ALEXNET_FILE
)
ROBUSTBENCH_3DCC_CORRUPTIONS: tuple[str, ...] = tuple(ROBUSTBENCH_3DCC_ALEXNET_ACCURACIES)


def robustbench_corruption_scores(
    accuracies: Mapping[tuple[str, int], float],
    alexnet: Mapping[str, tuple[float, ...]] = ROBUSTBENCH_ALEXNET_ACCURACIES,
) -> dict[str, float]:
    """RobustBench's two leaderboard columns, in percent, from the top-1 accuracy (a fraction) of each of the
    15 x 5 (corruption, severity) cells on its 5,000 images: {"corruptions_acc", "corruptions_mce"}; with
    `alexnet=ROBUSTBENCH_3DCC_ALEXNET_ACCURACIES`, its ImageNet-3DCC columns from the 12 x 5 cells.

    Every cell is required (RobustBench evaluates all of them); a missing, extra or out-of-range cell is a
    ValueError, since a partial mean would not line up with the leaderboard."""
    corruptions = tuple(alexnet)
    expected = {(c, s) for c in corruptions for s in ROBUSTBENCH_SEVERITIES}
    given = set(accuracies)
    if given != expected:
        missing = sorted(expected - given)
        extra = sorted(given - expected, key=str)
        raise ValueError(
            f"RobustBench's scores need exactly its {len(corruptions)} corruptions x severities 1-5; "
            f"missing {len(missing)} cells {missing[:3]}, unexpected {extra[:3]}."
        )
    model = np.array([[accuracies[(c, s)] for s in ROBUSTBENCH_SEVERITIES] for c in corruptions])
    if not np.all((model >= 0.0) & (model <= 1.0)):
        raise ValueError("RobustBench cell accuracies are fractions in [0, 1].")
    reference = np.array([alexnet[c] for c in corruptions])
    corruption_errors = (1.0 - model).mean(axis=1) / (1.0 - reference).mean(axis=1)  # (corruptions,)
    return {
        "corruptions_acc": 100.0 * float(model.mean()),
        "corruptions_mce": 100.0 * float(corruption_errors.mean()),
    }


def robustbench_mce_combine(
    alexnet: Mapping[str, tuple[float, ...]],
) -> Callable[[np.ndarray, list[Hashable]], np.ndarray]:
    """RobustBench's mCE (percent) of cell errors (b, cells), cells being (corruption, severity): per corruption the
    model's mean error over its severities over AlexNet's (1 - its mean accuracy), then the mean over corruptions,
    as `robustbench_corruption_scores` computes it; the statistic its interval resamples."""

    def combine(errors: np.ndarray, cells: list[Hashable]) -> np.ndarray:
        by_corruption: dict[str, list[int]] = {}
        for i, (corruption, _) in enumerate(cells):
            by_corruption.setdefault(corruption, []).append(i)
        ratios = [
            errors[:, columns].mean(axis=1) / (1.0 - float(np.mean(alexnet[corruption])))
            for corruption, columns in by_corruption.items()
        ]
        return 100.0 * np.stack(ratios, axis=1).mean(axis=1)

    return combine


def robustbench_estimators(
    table: CellTable, alexnet: Mapping[str, tuple[float, ...]] = ROBUSTBENCH_ALEXNET_ACCURACIES
) -> dict[str, Estimator]:
    """RobustBench's two columns as estimators of the errors' `CellTable` by (corruption, severity), resampled
    over clean images as the run's other corruption headlines: {"corruptions_acc", "corruptions_mce"}; empty
    unless the table holds exactly every cell of `alexnet`'s corruptions at severities 1-5 (a partial mean would
    not line up with the leaderboard)."""
    expected = {(corruption, severity) for corruption in alexnet for severity in ROBUSTBENCH_SEVERITIES}
    if set(table.cells) != expected:
        return {}
    return {
        "corruptions_acc": _cell_estimator(
            table, _corruption_combine("mean_top1"), "clean image", 1.0, support=(0.0, 100.0)
        ),
        "corruptions_mce": _cell_estimator(
            table, robustbench_mce_combine(alexnet), "clean image", 1.0, support=NON_NEGATIVE
        ),
    }


__all__ = [
    "ROBUSTBENCH_3DCC_ALEXNET_ACCURACIES",
    "ROBUSTBENCH_3DCC_ALEXNET_FILE",
    "ROBUSTBENCH_3DCC_CORRUPTIONS",
    "ROBUSTBENCH_ALEXNET_ACCURACIES",
    "ROBUSTBENCH_ALEXNET_FILE",
    "ROBUSTBENCH_CORRUPTIONS",
    "ROBUSTBENCH_SEVERITIES",
    "robustbench_alexnet_accuracies",
    "robustbench_corruption_scores",
    "robustbench_estimators",
    "robustbench_mce_combine",
]
