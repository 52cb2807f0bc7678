# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Each headline metric as a statistic of resampling units, for its confidence interval and for paired comparisons.

An `Estimator` holds unit-indexed arrays (one row per resampling unit), the strata its units are resampled within,
and a statistic of weights (b, units) -> (b,) that is exactly the metric's formula at unit weights 1. The units are:

- accuracies of independent samples: the sample (Wilson or Clopper-Pearson; `proportion`);
- ImageNet-C / CIFAR-C: the clean image, with all its corruptions and severities (a cluster bootstrap); where no
  key names the clean image, each sample is its own unit, resampled within its cell, and the estimator says so;
- ImageNet-P: the clean image's sequences (or each sequence, within its perturbation);
- ImageNet-O: each image, OOD and in-distribution images resampled separately (a stratified bootstrap);
- ImageNet-9's BG-gap: the foreground image, with its backgrounds (paired);
- ECE: each image.

The formulas are the metric modules' (`mce`, `flip_rate`, `ood`, `background_gap`, `calibration`); the tests check
every estimator at unit weights against them. Each estimator knows its support (bounds are clipped to it) and, where
one holds, its `unit_spread.SpreadBound`: where every bootstrap replicate is equal (all units alike) the interval
falls back on it rather than on a zero width, and is not estimable without one.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..constants import STANDARD_CORRUPTIONS, TEST_PERTURBATIONS
from .cell_tables import INDEPENDENT_NOTE, CellTable, cell_table
from .corruption_cells import _corruption_cell, _corruption_combine, corruption_cell_labels
from .intervals import (
    DEFAULT_CONFIDENCE_LEVEL,
    DEFAULT_NUM_RESAMPLES,
    NON_NEGATIVE,
    UNBOUNDED,
    UNIT_RANGE,
    Interval,
    McNemarResult,
    Support,
    bootstrap_p_value,
    bootstrap_replicates,
    clipped_bounds,
    fallback_method,
    mcnemar_test,
    not_estimable_note,
    percentile_bounds,
    proportion_interval,
    replicates_identical,
    share_fallback_note,
    unit_share_bound,
    weighted_ratio,
)
from .mce import ALEXNET_CORRUPTION_ERRORS
from .unit_spread import SpreadBound, calibration_spread, cell_spread, mean_spread

UnitStatistic = Callable[[Mapping[str, np.ndarray], np.ndarray], np.ndarray]


def derived_seed(seed: int, *names: str) -> int:
    """A seed for one named interval (a headline, a comparison) derived from the run's seed, so that an interval
    does not depend on which others were computed before it."""
    digest = hashlib.blake2b("/".join([str(int(seed)), *names]).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") >> 1


@dataclass(frozen=True)
class Estimator:
    """A headline number as a statistic of resampling units.

    keys: (units,) unit keys, contiguous per stratum; strata: (units,) stratum index, non-decreasing; data:
    unit-indexed arrays; statistic(data, weights (b, units)) -> (b,); unit: what a unit is ("image", "clean image",
    ...); num_samples: the samples behind the estimate; scale: 100 for percent; proportion: whether the statistic
    is a proportion of independent units (data["correct"], 0/1 per unit), which gets a Wilson or Clopper-Pearson
    interval; note: a caveat (samples treated as independent); support: the values the statistic can take, before
    `scale`; spread: how far it may lie from the estimate when every unit was alike (None: not estimable then).
    """

    keys: np.ndarray
    strata: np.ndarray
    data: Mapping[str, np.ndarray]
    statistic: UnitStatistic
    unit: str
    num_samples: int
    scale: float = 1.0
    proportion: bool = False
    note: str | None = None
    #: The name of each stratum (the cell of an unclustered cell table, "ood"/"id"), so that two estimators' units
    #: pair by (key, stratum name) even where one lacks a stratum the other has.
    stratum_labels: tuple[str, ...] = ()
    support: Support = UNBOUNDED
    spread: SpreadBound | None = None

    def stratum_label(self, stratum: int) -> str:
        return self.stratum_labels[stratum] if self.stratum_labels else str(int(stratum))

    @property
    def strata_sizes(self) -> list[int]:
        return np.bincount(self.strata).tolist() if len(self.strata) else []

    def values(self, weights: np.ndarray) -> np.ndarray:
        """The statistic at resampling weights (b, units), times `scale`."""
        return self.scale * np.asarray(self.statistic(self.data, weights), dtype=np.float64)

    @property
    def estimate(self) -> float:
        """The metric itself (every unit weighted once)."""
        return float(self.values(np.ones((1, len(self.keys))))[0])

    @property
    def scaled_support(self) -> Support:
        """`support` in the units of `values` (times `scale`)."""
        low, high = self.support
        return (None if low is None else low * self.scale, None if high is None else high * self.scale)

    def share_offsets(self, confidence_level: float, proportion_method: str) -> tuple[float, float] | None:
        """(low, high) offsets from the estimate, times `scale`, that a share of units up to
        `intervals.unit_share_bound` (by `proportion_method`) differing from units all alike allows; None where no
        `spread` holds."""
        if self.spread is None or not len(self.keys):
            return None
        found = self.spread(self.data, lambda n: unit_share_bound(n, confidence_level, proportion_method))
        return None if found is None else (self.scale * found[0], self.scale * found[1])

    def interval(
        self,
        confidence_level: float = DEFAULT_CONFIDENCE_LEVEL,
        *,
        num_resamples: int = DEFAULT_NUM_RESAMPLES,
        seed: int = 0,
        proportion_method: str = "wilson",
    ) -> Interval:
        """The estimate's interval: Wilson / Clopper-Pearson for a proportion, else the percentile bootstrap over
        the units (within strata), clipped to the support. Where every replicate is equal, the `share_offsets` by
        `proportion_method` around the estimate (method "percentile bootstrap with <method> fallback"), or no
        bounds where none hold; the note says which."""
        if self.proportion:
            correct = self.data["correct"]
            interval = proportion_interval(
                int(correct.sum()), len(correct), confidence_level, proportion_method, self.scale, self.unit
            )
            return interval.with_note(self.note)
        sizes = [size for size in self.strata_sizes if size]
        if not sizes:
            return Interval(None, None, None, float(confidence_level), "percentile bootstrap", 0, self.unit)
        replicates = bootstrap_replicates(self.values, sizes, num_resamples, seed)
        estimate = self.estimate
        method, fallback_note = "percentile bootstrap", None
        low, high = percentile_bounds(replicates, confidence_level)
        if replicates_identical(replicates) and np.isfinite(estimate):
            offsets = self.share_offsets(confidence_level, proportion_method)
            if offsets is None:
                low, high, fallback_note = None, None, not_estimable_note()
            else:
                low, high = estimate + offsets[0], estimate + offsets[1]
                method = fallback_method(method, proportion_method)
                fallback_note = share_fallback_note(proportion_method)
        low, high = clipped_bounds(low, high, self.scaled_support)
        return Interval(
            estimate=estimate if np.isfinite(estimate) else None,
            low=low,
            high=high,
            confidence_level=float(confidence_level),
            method=method,
            num_samples=self.num_samples,
            unit=self.unit,
            num_units=len(self.keys),
            num_resamples=int(num_resamples),
            seed=int(seed),
            note=self.note,
            scale=self.scale,
        ).with_note(fallback_note)

    def restricted(self, keys: Sequence[Hashable], strata: Sequence[int] | None = None) -> Estimator:
        """The estimator over the units with these keys only, in the order of `keys` (which must keep strata
        contiguous: pass keys in this estimator's order). `strata`, one per key, picks the unit of a key that
        occurs in several strata (samples whose ids are unique only within their cell)."""
        if strata is None:
            position = {key: i for i, key in enumerate(self.keys.tolist())}
            if len(position) != len(self.keys):
                raise ValueError("Unit keys repeat across strata: pass the stratum of each key too.")
            index = np.asarray([position[key] for key in keys], dtype=np.int64)
        else:
            units = zip(self.keys.tolist(), self.strata, strict=True)
            pairs = {(key, int(s)): i for i, (key, s) in enumerate(units)}
            chosen = zip(keys, strata, strict=True)
            index = np.asarray([pairs[key, int(s)] for key, s in chosen], dtype=np.int64)
        kept = np.bincount(self.strata[index], minlength=len(self.strata_sizes))
        samples = round(self.num_samples * len(index) / max(len(self.keys), 1))
        return replace(
            self,
            keys=self.keys[index],
            strata=self.strata[index],
            data={name: array[index] for name, array in self.data.items()},
            num_samples=samples if kept.any() else 0,
        )


def _cell_estimator(
    table: CellTable,
    combine: Callable[[np.ndarray, list[Hashable]], np.ndarray],
    unit: str,
    scale: float,
    independent_unit: str = "sample",
    support: Support = UNBOUNDED,
    value_range: Support = UNIT_RANGE,
) -> Estimator:
    cells = table.cells

    def statistic(data: Mapping[str, np.ndarray], weights: np.ndarray) -> np.ndarray:
        # A cell none of the units hold (an estimator restricted to the units another model saw) is left out.
        present = np.flatnonzero(data["counts"].sum(axis=0) > 0)
        ratio = weighted_ratio(weights, data["sums"][:, present], data["counts"][:, present])
        return combine(ratio, [cells[i] for i in present])

    return Estimator(
        keys=table.keys,
        strata=table.strata,
        data={"sums": table.sums, "counts": table.counts},
        statistic=statistic,
        unit=unit if table.clustered else independent_unit,
        num_samples=table.num_samples,
        scale=scale,
        note=None if table.clustered else INDEPENDENT_NOTE,
        stratum_labels=() if table.clustered else tuple(str(cell) for cell in table.cells),
        support=support,
        spread=cell_spread(combine, cells, value_range),
    )


# --------------------------------------------------------------------------------------------------- accuracies
def accuracy_estimator(correct: Sequence[bool] | np.ndarray, keys: Sequence[Any] | None = None) -> Estimator:
    """Top-1 / top-5 accuracy in percent of independent samples (Wilson or Clopper-Pearson; paired comparisons
    bootstrap over the samples and run McNemar's test)."""
    correct = np.asarray(correct, dtype=np.float64)
    keys_array = np.asarray(np.arange(len(correct)) if keys is None else keys).astype(str)
    order = np.argsort(keys_array, kind="stable")
    if len(np.unique(keys_array)) != len(keys_array):
        raise ValueError("accuracy_estimator: sample keys must be unique.")

    def statistic(data: Mapping[str, np.ndarray], weights: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return (weights @ data["correct"]) / weights.sum(axis=1)

    return Estimator(
        keys=keys_array[order],
        strata=np.zeros(len(correct), dtype=np.int64),
        data={"correct": correct[order]},
        statistic=statistic,
        unit="sample",
        num_samples=len(correct),
        scale=100.0,
        proportion=True,
        support=UNIT_RANGE,
        spread=mean_spread("correct", UNIT_RANGE),
    )


def mean_estimator(
    values: Sequence[float] | np.ndarray,
    keys: Sequence[Any] | None = None,
    *,
    unit: str = "image",
    scale: float = 1.0,
    value_range: Support = UNBOUNDED,
) -> Estimator:
    """The mean of one value per unit (a probe's per-image number: an accuracy averaged over masking ratios, a
    feature statistic), bootstrapped over the units; `scale` multiplies it (100 for a mean of 0/1 in percent).
    `value_range`: the values a unit can take (the support; a bounded one gives the all-alike fallback). Units
    whose value is not finite are left out."""
    values = np.asarray(values, dtype=np.float64)
    keys_array = np.asarray(np.arange(len(values)) if keys is None else keys).astype(str)
    if keys_array.shape != values.shape:
        raise ValueError(f"mean_estimator: {len(keys_array)} keys for {len(values)} values.")
    if len(np.unique(keys_array)) != len(keys_array):
        raise ValueError("mean_estimator: unit keys must be unique.")
    kept = np.isfinite(values)
    order = np.argsort(keys_array[kept], kind="stable")

    def statistic(data: Mapping[str, np.ndarray], weights: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return (weights @ data["value"]) / weights.sum(axis=1)

    return Estimator(
        keys=keys_array[kept][order],
        strata=np.zeros(int(kept.sum()), dtype=np.int64),
        data={"value": values[kept][order]},
        statistic=statistic,
        unit=unit,
        num_samples=int(kept.sum()),
        scale=scale,
        support=value_range,
        spread=mean_spread("value", value_range),
    )


# ---------------------------------------------------------------------------------------------------- ImageNet-C


def corruption_estimators(
    wrong: Sequence[bool] | np.ndarray,
    corruptions: Sequence[str],
    severities: Sequence[int] | np.ndarray,
    sample_ids: Sequence[Any],
    clean_keys: Sequence[Any] | None = None,
    clean_wrong: Sequence[bool] | np.ndarray | None = None,
    clean_wrong_keys: Sequence[Any] | None = None,
) -> dict[str, Estimator]:
    """ImageNet-C (CIFAR-C) estimators, percent: "mce" (AlexNet-normalised over the standard corruptions present),
    "unnormalized_mce_all" (test.py's mean over every corruption present), "relative_mce" (with clean errors of the
    same clean images), "mean_top1" (over every cell) and "severity5_top1" (over the corruptions at severity 5).

    sample_ids: each sample's id (the unit key without clean keys, and what pairs two models' samples).
    clean_keys: the clean image of each sample (`data.samples.clean_image_key`): a cluster bootstrap over clean
    images, all corruptions and severities of one image together; None: each sample its own unit, within its cell.
    clean_wrong / clean_wrong_keys: the clean benchmark's errors and keys, for the relative mCE (only when every
    clean image of the clusters has one)."""
    labels = corruption_cell_labels(corruptions, np.asarray(severities, dtype=np.int64))
    table = cell_table(np.asarray(wrong, dtype=np.float64), labels, sample_ids, clean_keys, _corruption_cell)
    return corruption_table_estimators(table, clean_wrong, clean_wrong_keys)


def corruption_table_estimators(
    table: CellTable,
    clean_wrong: Sequence[bool] | np.ndarray | None = None,
    clean_wrong_keys: Sequence[Any] | None = None,
) -> dict[str, Estimator]:
    """`corruption_estimators` of the errors' `CellTable` by "name/severity" cell (`cells` (corruption,
    severity)), however it was built: at once, or batch by batch (`cell_tables.ClusteredCellSums`)."""
    names = {c for c, _ in table.cells}
    present_standard = any(c in STANDARD_CORRUPTIONS for c in names)
    out: dict[str, Estimator] = {}
    for name in ("mean_top1", "severity5_top1", "unnormalized_mce_all", "mce"):
        if name == "severity5_top1" and not any(s == 5 for _, s in table.cells):
            continue
        if name in {"mce", "unnormalized_mce_all"} and not names <= set(ALEXNET_CORRUPTION_ERRORS):
            continue  # CIFAR-C names outside ImageNet-C's table: no mCE
        if name == "mce" and not present_standard:
            continue
        support = (0.0, 100.0) if name.endswith("top1") else NON_NEGATIVE  # percent accuracies; errors
        out[name] = _cell_estimator(table, _corruption_combine(name), "clean image", 1.0, support=support)
    if not table.clustered or clean_wrong is None or clean_wrong_keys is None or not present_standard:
        return out
    if not names <= set(ALEXNET_CORRUPTION_ERRORS):
        return out
    clean_ids = np.asarray(clean_wrong_keys, dtype=str)
    if len(clean_ids) == 0:
        return out
    order = np.argsort(clean_ids, kind="stable")
    found = np.searchsorted(clean_ids[order], table.keys)
    found = np.minimum(found, len(clean_ids) - 1)
    if not np.array_equal(clean_ids[order][found], table.keys):
        return out  # some clean image of the clusters has no clean prediction
    clean_values = np.asarray(clean_wrong, dtype=np.float64)[order][found]
    with_clean = CellTable(
        sums=np.concatenate([table.sums, clean_values[:, None]], axis=1),
        counts=np.concatenate([table.counts, np.ones((len(table.keys), 1))], axis=1),
        cells=[*table.cells, "clean"],
        keys=table.keys,
        strata=table.strata,
        clustered=True,
        num_samples=table.num_samples,
    )
    out["relative_mce"] = _cell_estimator(with_clean, _corruption_combine("relative_mce"), "clean image", 1.0)
    # (no support: a corruption can cost less than the clean error, so the relative mCE can be negative)
    return out


# ---------------------------------------------------------------------------------------------------- ImageNet-P
def flip_rate_estimator(
    sequence_flips: Sequence[float] | np.ndarray,
    perturbations: Sequence[str],
    sample_ids: Sequence[Any],
    clean_keys: Sequence[Any] | None = None,
    scale: float = 100.0,
    value_range: Support = UNBOUNDED,
) -> Estimator:
    """ImageNet-P's unnormalised mFR (or mT5D with per-sequence distances and scale 1): the mean over the test
    perturbations present of each one's mean over its sequences (`flip_rate.flip_rates`), bootstrapped over the
    clean images behind the sequences (`clean_keys`), else over sequences within each perturbation. Non-negative;
    `value_range`: the values one sequence can take (flip probabilities: [0, 1]), for the all-alike fallback."""

    def combine(means: np.ndarray, cells: list[Hashable]) -> np.ndarray:
        columns = [i for i, cell in enumerate(cells) if cell in TEST_PERTURBATIONS]
        return means[:, columns].mean(axis=1) if columns else np.full(len(means), np.nan)

    table = cell_table(sequence_flips, np.asarray(perturbations, dtype=str), sample_ids, clean_keys)
    return _cell_estimator(
        table, combine, "clean image", scale, "sequence", support=NON_NEGATIVE, value_range=value_range
    )


# ---------------------------------------------------------------------------------------------------- ImageNet-9
def background_gap_estimator(
    correct: Sequence[bool] | np.ndarray,
    variants: Sequence[str],
    sample_ids: Sequence[Any],
    foreground_keys: Sequence[Any] | None = None,
) -> Estimator:
    """ImageNet-9's BG-gap in points, accuracy(mixed_same) - accuracy(mixed_rand) (Xiao et al. 2021), paired by
    foreground image (`foreground_keys`: both backgrounds of one foreground resampled together), else each image
    resampled within its variant."""

    def combine(accuracy: np.ndarray, cells: list[Hashable]) -> np.ndarray:
        return accuracy[:, cells.index("mixed_same")] - accuracy[:, cells.index("mixed_rand")]

    names = [str(v) for v in variants]
    if not {"mixed_same", "mixed_rand"} <= set(names):
        raise ValueError("The BG-gap needs both the mixed_same and the mixed_rand variant.")
    keep = np.isin(np.asarray(names), ["mixed_same", "mixed_rand"])
    keys = None if foreground_keys is None else np.asarray(foreground_keys, dtype=str)[keep]
    table = cell_table(
        np.asarray(correct, dtype=np.float64)[keep],
        np.asarray(names)[keep],
        np.asarray(sample_ids, dtype=str)[keep],
        keys,
    )
    return _cell_estimator(table, combine, "foreground image", 100.0, support=(-1.0, 1.0))


# ---------------------------------------------------------------------------------------------------- ImageNet-O
def weighted_average_precision(scores: np.ndarray, positive: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """scikit-learn's average precision (step-wise: sum over thresholds of (R_k - R_{k-1}) P_k), with integer sample
    weights (b, n) = the resampled multiplicities, for b resamples at once."""
    order = np.argsort(-scores, kind="mergesort")
    sorted_scores = scores[order]
    last_of_tie = np.r_[np.flatnonzero(np.diff(sorted_scores)), len(scores) - 1]
    w = weights[:, order]
    true_positives = np.cumsum(w * positive[order], axis=1)[:, last_of_tie]
    false_positives = np.cumsum(w * ~positive[order], axis=1)[:, last_of_tie]
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = np.where(
            true_positives + false_positives > 0, true_positives / (true_positives + false_positives), 0.0
        )
        recall = true_positives / true_positives[:, -1:]
    steps = np.diff(np.concatenate([np.zeros((len(w), 1)), recall], axis=1), axis=1)
    return (steps * precision).sum(axis=1)


def aupr_estimator(
    scores: Sequence[float] | np.ndarray,
    is_ood: Sequence[bool] | np.ndarray,
    keys: Sequence[Any] | None = None,
) -> Estimator:
    """ImageNet-O's AUPR in percent (OOD positive; `ood.ood_detection_metrics`), with a stratified bootstrap: OOD
    and in-distribution images resampled separately, so every resample keeps both halves' sizes. `keys` (the
    sample ids) name the units, so that two models' estimators pair image by image; by default their positions."""
    scores = np.asarray(scores, dtype=np.float64)
    positive = np.asarray(is_ood, dtype=bool)
    order = np.lexsort((np.arange(len(scores)), ~positive))  # OOD first (stratum 0), then in-distribution
    names = order.astype(str) if keys is None else np.asarray(keys).astype(str)[order]

    def statistic(data: Mapping[str, np.ndarray], weights: np.ndarray) -> np.ndarray:
        return weighted_average_precision(data["scores"], data["is_ood"], weights)

    return Estimator(
        keys=np.char.add(np.where(positive[order], "ood/", "id/"), names),
        strata=(~positive[order]).astype(np.int64),
        stratum_labels=("ood", "id"),
        data={"scores": scores[order], "is_ood": positive[order]},
        statistic=statistic,
        unit="image",
        num_samples=len(scores),
        scale=100.0,
        support=UNIT_RANGE,  # no spread: the AUPR of units all alike is not estimable
    )


# ---------------------------------------------------------------------------------------------------- calibration
def ece_estimator(
    confidence: Sequence[float] | np.ndarray,
    correct: Sequence[bool] | np.ndarray,
    bins: Sequence[int] | np.ndarray,
) -> Estimator:
    """The expected calibration error in percent, sum_b |sum_{i in b} (correct_i - confidence_i)| / n over the
    fixed confidence bins (`calibration.calibration_bins`), bootstrapped over images."""
    confidence = np.asarray(confidence, dtype=np.float64)
    correct = np.asarray(correct, dtype=np.float64)
    bins = np.asarray(bins, dtype=np.int64)
    one_hot = np.zeros((len(bins), int(bins.max()) + 1 if len(bins) else 1))
    one_hot[np.arange(len(bins)), bins] = 1.0

    def statistic(data: Mapping[str, np.ndarray], weights: np.ndarray) -> np.ndarray:
        gap = np.abs(weights @ (data["one_hot"] * data["difference"][:, None]))
        return gap.sum(axis=1) / weights.sum(axis=1)

    return Estimator(
        keys=np.arange(len(bins)).astype(str),
        strata=np.zeros(len(bins), dtype=np.int64),
        data={"one_hot": one_hot, "difference": correct - confidence},
        statistic=statistic,
        unit="image",
        num_samples=len(bins),
        scale=100.0,
        support=UNIT_RANGE,
        spread=calibration_spread,
    )


# --------------------------------------------------------------------------------------------- paired comparison
@dataclass(frozen=True)
class Comparison:
    """Model A minus model B on the samples both saw: the difference with its paired-bootstrap interval, the
    bootstrap p-value of "no difference", McNemar's exact test for accuracies, and the units compared."""

    difference: Interval
    p_value: float
    mcnemar: McNemarResult | None
    num_units: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "difference": self.difference.to_dict(),
            "p_value": self.p_value,
            "mcnemar": None if self.mcnemar is None else self.mcnemar.to_dict(),
            "num_units": self.num_units,
        }


def paired_comparison(
    a: Estimator,
    b: Estimator,
    confidence_level: float = DEFAULT_CONFIDENCE_LEVEL,
    *,
    num_resamples: int = DEFAULT_NUM_RESAMPLES,
    seed: int = 0,
    proportion_method: str = "wilson",
) -> Comparison:
    """A's estimate minus B's over the units both have (same key and stratum), with one set of bootstrap weights
    for both, so the interval reflects the pairing. The p-value is McNemar's for accuracies (`proportion`), else
    the bootstrap's. Where every replicate is equal (identical models, or units all alike) the interval falls back
    on both estimators' `share_offsets`: A - B lies in [d + lowA - highB, d + highA - lowB] (a differing unit may
    move A and B either way), or has no bounds where either has none."""
    b_stratum = {(key, b.stratum_label(s)): int(s) for key, s in zip(b.keys.tolist(), b.strata, strict=True)}
    shared_pairs = [
        (key, int(s), b_stratum[key, a.stratum_label(s)])
        for key, s in zip(a.keys.tolist(), a.strata, strict=True)
        if (key, a.stratum_label(s)) in b_stratum
    ]
    if not shared_pairs:
        raise ValueError("The two models share no samples to compare.")
    shared = [key for key, _, _ in shared_pairs]
    a_shared = a.restricted(shared, [s for _, s, _ in shared_pairs])
    b_shared = b.restricted(shared, [s for _, _, s in shared_pairs])
    sizes = [size for size in a_shared.strata_sizes if size]
    difference = a_shared.estimate - b_shared.estimate
    replicates = bootstrap_replicates(
        lambda weights: a_shared.values(weights) - b_shared.values(weights), sizes, num_resamples, seed
    )
    low, high = percentile_bounds(replicates, confidence_level)
    method, fallback_note = "paired percentile bootstrap", None
    if replicates_identical(replicates) and np.isfinite(difference):
        offsets_a = a_shared.share_offsets(confidence_level, proportion_method)
        offsets_b = b_shared.share_offsets(confidence_level, proportion_method)
        if offsets_a is None or offsets_b is None:
            low, high, fallback_note = None, None, not_estimable_note()
        else:
            low, high = difference + offsets_a[0] - offsets_b[1], difference + offsets_a[1] - offsets_b[0]
            method = fallback_method(method, proportion_method)
            fallback_note = share_fallback_note(proportion_method)
    mcnemar = None
    p_value = bootstrap_p_value(replicates)
    if a.proportion and b.proportion:
        mcnemar = mcnemar_test(a_shared.data["correct"] > 0.5, b_shared.data["correct"] > 0.5)
        p_value = mcnemar.p_value
    interval = Interval(
        estimate=float(difference),
        low=low,
        high=high,
        confidence_level=float(confidence_level),
        method=method,
        num_samples=a_shared.num_samples,
        unit=a.unit,
        num_units=len(shared),
        num_resamples=int(num_resamples),
        seed=int(seed),
        note=a.note,
        scale=a.scale,
    ).with_note(fallback_note)
    return Comparison(interval, float(p_value), mcnemar, len(shared))


__all__ = [
    "Comparison",
    "Estimator",
    "accuracy_estimator",
    "aupr_estimator",
    "background_gap_estimator",
    "corruption_estimators",
    "corruption_table_estimators",
    "derived_seed",
    "ece_estimator",
    "flip_rate_estimator",
    "mean_estimator",
    "paired_comparison",
    "weighted_average_precision",
]
