# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Mean corruption error (mCE) on ImageNet-C, AlexNet-normalised (Hendrycks & Dietterich, ICLR 2019, Sec. 4).

For each corruption c, the corruption error is CE_c = sum_s E(c, s) / sum_s E_AlexNet(c, s) over the five
severities s, and mCE is the mean of CE_c over the 15 standard corruptions, in percent. The relative mCE divides the
*degradation* instead: sum_s (E(c, s) - E_clean) / sum_s (E_AlexNet(c, s) - E_AlexNet_clean). The AlexNet errors are
the canonical table of the hendrycks/robustness README (commit 76d93933; the same numbers are hard-coded in AugMix),
shipped as `alexnet_imagenet_c_errors.csv`. Park & Kim (ICLR 2022) report the mean accuracy over the 15 x 5 cells
instead, returned here as `mean_corruption_accuracy`.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from importlib import resources
from typing import Any

import numpy as np

from ..constants import EXTRA_CORRUPTIONS, SEVERITIES, STANDARD_CORRUPTIONS
from ..registry import check_known
from ._validation import as_index_array, as_string_list, check_same_length, json_float

# AlexNet's clean top-1 error on the ImageNet validation set, the baseline of relative mCE: Hendrycks & Dietterich
# (2019), "Benchmarking Neural Network Robustness to Common Corruptions and Perturbations", ICLR, Table 1 / Sec. 4.
ALEXNET_CLEAN_ERROR = 0.435


def _read_alexnet_table() -> tuple[dict[str, tuple[float, ...]], dict[str, float], dict[str, str]]:
    text = resources.files(__package__).joinpath("alexnet_imagenet_c_errors.csv").read_text(encoding="utf-8")
    errors, averages, sets = {}, {}, {}
    for row in csv.DictReader(text.splitlines()):
        errors[row["corruption"]] = tuple(float(row[f"s{severity}"]) for severity in SEVERITIES)
        averages[row["corruption"]] = float(row["average"])
        sets[row["corruption"]] = row["set"]
    return errors, averages, sets


# AlexNet top-1 error (a fraction) per corruption and severity 1..5, in the table's (the reference's) order.
ALEXNET_CORRUPTION_ERRORS, ALEXNET_AVERAGE_ERRORS, _CORRUPTION_SETS = _read_alexnet_table()
if tuple(_CORRUPTION_SETS) != STANDARD_CORRUPTIONS + EXTRA_CORRUPTIONS or any(
    kind != ("standard" if name in STANDARD_CORRUPTIONS else "extra")
    for name, kind in _CORRUPTION_SETS.items()
):
    raise ImportError(
        "alexnet_imagenet_c_errors.csv must list hf_vitrobust.constants' corruptions, in order."
    )


@dataclass(frozen=True)
class CorruptionErrorResult:
    """ImageNet-C results. Every value is in percent; None where it cannot be computed (e.g. no clean error).

    `errors[corruption][severity]` is the model's top-1 error of each cell; `ce` / `extra_ce` the AlexNet-normalised
    corruption error of each standard / extra corruption; `mce` their mean over the standard ones.
    `unnormalized_mce` and `mean_corruption_accuracy` (= 100 - it) weight the standard cells equally.
    `unnormalized_mce_all` is what hendrycks/robustness ImageNet-C/test.py prints as "mCE (unnormalized by AlexNet
    errors)" (and Paul & Chen's copy of it): the mean over every corruption present, standard and extra (all 19
    in their runs), of its mean error over severities; `unnormalized_corruptions` lists the corruptions it covers.
    `missing_cells` lists the absent standard cells (and the absent severities of a present extra corruption) as
    "corruption/severity"; it is non-empty only with `allow_partial=True`, and then the means cover what is present.
    """

    mce: float | None
    relative_mce: float | None
    unnormalized_mce: float | None
    mean_corruption_accuracy: float | None
    clean_error: float | None
    ce: dict[str, float]
    relative_ce: dict[str, float]
    extra_ce: dict[str, float]
    errors: dict[str, dict[int, float]]
    num_samples: int
    missing_cells: list[str] = field(default_factory=list)
    unnormalized_mce_all: float | None = None
    unnormalized_corruptions: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return not self.missing_cells

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict (severity keys become strings)."""
        result = asdict(self)
        result["errors"] = {
            name: {str(s): e for s, e in cells.items()} for name, cells in self.errors.items()
        }
        result["complete"] = self.complete
        return result


def _check_corruption_names(names: np.ndarray) -> None:
    check_known(names, tuple(ALEXNET_CORRUPTION_ERRORS), "ImageNet-C corruption")


def corruption_cell_errors(
    predictions: Sequence[int] | np.ndarray,
    references: Sequence[int] | np.ndarray,
    corruptions: Sequence[str],
    severities: Sequence[int] | np.ndarray,
) -> dict[tuple[str, int], tuple[int, int]]:
    """(number wrong, number of samples) per (corruption, severity) cell present in the samples, whatever the
    corruption names (ImageNet-C's, or another benchmark's such as ImageNet-3DCC's): they are checked against
    ImageNet-C's where the errors are normalised (`corruption_error_from_cells`)."""
    predictions = as_index_array(predictions, "predictions")
    references = as_index_array(references, "references")
    severities = as_index_array(severities, "severities")
    corruptions = np.asarray(as_string_list(corruptions, "corruptions"), dtype=object)
    check_same_length(
        predictions=predictions, references=references, corruptions=corruptions, severities=severities
    )
    names, name_index = (
        np.unique(corruptions.astype(str), return_inverse=True) if len(corruptions) else ([], [])
    )
    bad_severities = sorted(set(np.unique(severities).tolist()) - set(SEVERITIES))
    if bad_severities:
        raise ValueError(f"Severities must be in 1..5; got {bad_severities}.")
    if not len(predictions):
        return {}
    cell = np.asarray(name_index) * len(SEVERITIES) + (severities - 1)
    wrong = np.bincount(cell, weights=(predictions != references), minlength=len(names) * len(SEVERITIES))
    counts = np.bincount(cell, minlength=len(names) * len(SEVERITIES))
    return {
        (str(names[i // len(SEVERITIES)]), SEVERITIES[i % len(SEVERITIES)]): (int(wrong[i]), int(counts[i]))
        for i in np.flatnonzero(counts)
    }


def _clean_error(clean_error: float | None, clean_predictions: Any, clean_references: Any) -> float | None:
    if clean_error is not None and (clean_predictions is not None or clean_references is not None):
        raise ValueError("Give either `clean_error` or `clean_predictions` + `clean_references`, not both.")
    if (clean_predictions is None) != (clean_references is None):
        raise ValueError("`clean_predictions` and `clean_references` go together.")
    if clean_predictions is not None:
        predictions = as_index_array(clean_predictions, "clean_predictions")
        references = as_index_array(clean_references, "clean_references")
        if check_same_length(clean_predictions=predictions, clean_references=references) == 0:
            raise ValueError("`clean_predictions` is empty.")
        return float(np.mean(predictions != references))
    if clean_error is not None and not 0.0 <= float(clean_error) <= 1.0:
        raise ValueError(f"`clean_error` is a fraction in [0, 1]; got {clean_error}.")
    return None if clean_error is None else float(clean_error)


def mean_corruption_error(
    predictions: Sequence[int] | np.ndarray,
    references: Sequence[int] | np.ndarray,
    corruptions: Sequence[str],
    severities: Sequence[int] | np.ndarray,
    *,
    clean_error: float | None = None,
    clean_predictions: Sequence[int] | np.ndarray | None = None,
    clean_references: Sequence[int] | np.ndarray | None = None,
    allow_partial: bool = False,
) -> CorruptionErrorResult:
    """mCE, relative mCE, per-corruption CE and the unnormalised means from per-sample top-1 predictions.

    One entry per ImageNet-C sample: predicted and true class index, corruption name and severity (1..5).
    The clean error (a fraction, or clean predictions + references) enables the relative mCE. Every one of the
    15 x 5 standard cells must be present unless `allow_partial=True`; the 4 extra corruptions are optional.
    """
    clean = _clean_error(clean_error, clean_predictions, clean_references)
    cells = corruption_cell_errors(predictions, references, corruptions, severities)
    return corruption_error_from_counts(cells, clean_error=clean, allow_partial=allow_partial)


def corruption_error_from_counts(
    cells: Mapping[tuple[str, int], tuple[int, int]],
    *,
    clean_error: float | None = None,
    clean_predictions: Sequence[int] | np.ndarray | None = None,
    clean_references: Sequence[int] | np.ndarray | None = None,
    allow_partial: bool = False,
) -> CorruptionErrorResult:
    """`mean_corruption_error` from (number wrong, number of samples) per (corruption, severity) cell, as
    `corruption_cell_errors` gives them: the counts add up over batches of samples, so a benchmark of millions of
    samples is scored without holding them. The cells are read in sorted order, as `corruption_cell_errors` makes
    them, whatever order they are given in."""
    clean = _clean_error(clean_error, clean_predictions, clean_references)
    ordered = dict(sorted(cells.items()))
    return corruption_error_from_cells(
        {key: wrong / count for key, (wrong, count) in ordered.items()},
        clean_error=clean,
        allow_partial=allow_partial,
        num_samples=int(sum(count for _, count in ordered.values())),
    )


def corruption_error_from_cells(
    cell_errors: Mapping[tuple[str, int], float],
    *,
    clean_error: float | None = None,
    allow_partial: bool = False,
    num_samples: int = 0,
) -> CorruptionErrorResult:
    """The same results from top-1 errors (fractions) per (corruption, severity) cell, e.g. a model's published table."""
    _check_corruption_names(np.asarray(sorted({name for name, _ in cell_errors}), dtype=object))
    bad_severities = sorted({s for _, s in cell_errors} - set(SEVERITIES))
    if bad_severities:
        raise ValueError(f"Severities must be in 1..5; got {bad_severities}.")
    if any(not 0.0 <= value <= 1.0 for value in cell_errors.values()):
        raise ValueError("Cell errors are fractions in [0, 1].")
    clean = _clean_error(clean_error, None, None)
    error = dict(cell_errors)
    present = {name for name, _ in error}
    expected = [(name, s) for name in STANDARD_CORRUPTIONS for s in SEVERITIES]
    expected += [(name, s) for name in EXTRA_CORRUPTIONS if name in present for s in SEVERITIES]
    missing = [f"{name}/{s}" for name, s in expected if (name, s) not in error]
    if missing and not allow_partial:
        raise ValueError(
            f"Missing ImageNet-C cells (corruption/severity), {len(missing)} of {len(expected)}: {', '.join(missing)}. "
            "Pass allow_partial=True to compute over the cells present."
        )

    ce, relative_ce, extra_ce = {}, {}, {}
    for name in STANDARD_CORRUPTIONS + EXTRA_CORRUPTIONS:
        levels = [s for s in SEVERITIES if (name, s) in error]
        if not levels:
            continue
        model = np.array([error[name, s] for s in levels])
        alexnet = np.array([ALEXNET_CORRUPTION_ERRORS[name][s - 1] for s in levels])
        value = 100.0 * model.sum() / alexnet.sum()
        if name in STANDARD_CORRUPTIONS:
            ce[name] = float(value)
            if clean is not None:
                relative_ce[name] = float(
                    100.0 * (model - clean).sum() / (alexnet - ALEXNET_CLEAN_ERROR).sum()
                )
        else:
            extra_ce[name] = float(value)

    standard_cells = [error[key] for key in error if key[0] in STANDARD_CORRUPTIONS]
    unnormalized = 100.0 * float(np.mean(standard_cells)) if standard_cells else None
    covered = [name for name in STANDARD_CORRUPTIONS + EXTRA_CORRUPTIONS if name in present]
    per_corruption = [np.mean([error[name, s] for s in SEVERITIES if (name, s) in error]) for name in covered]
    return CorruptionErrorResult(
        mce=json_float(np.mean(list(ce.values()))) if ce else None,
        relative_mce=json_float(np.mean(list(relative_ce.values()))) if relative_ce else None,
        unnormalized_mce=unnormalized,
        mean_corruption_accuracy=None if unnormalized is None else 100.0 - unnormalized,
        clean_error=None if clean is None else 100.0 * clean,
        ce=ce,
        relative_ce=relative_ce,
        extra_ce=extra_ce,
        errors={
            name: {s: 100.0 * error[name, s] for s in SEVERITIES if (name, s) in error}
            for name in STANDARD_CORRUPTIONS + EXTRA_CORRUPTIONS
            if name in present
        },
        num_samples=int(num_samples),
        missing_cells=missing,
        unnormalized_mce_all=100.0 * float(np.mean(per_corruption)) if per_corruption else None,
        unnormalized_corruptions=covered,
    )
