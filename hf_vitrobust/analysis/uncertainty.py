# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Confidence intervals of a run's headline numbers, and paired comparisons of models, from per-sample predictions.

Everything here reads predictions (the parquet rows) only, so `vitrobust report` recomputes it for any run folder:

- the headline estimators of each kind of benchmark (`accuracy_headlines`, `corruption_headlines`, ...; each
  `BenchmarkKind` names its own in `kinds`): one `metrics.estimators.Estimator` per headline (the names of
  results.json "summary", `headlines.headline_name`), plus the ECE of clean benchmarks that keep logits;
- `intervals_of`: their intervals (`UncertaintySettings`: level, resamples, proportion method, seed), each
  with the caveats of its subset (first N of a stream) and of its units (samples treated as independent);
- `compare_models`: for each pair of models and each shared headline, the difference over the samples both saw,
  with its paired-bootstrap interval, McNemar's test for accuracies, and Holm's correction over the family.

Seeds: each interval's seed is derived from the run's seed and the headline's name (`derived_seed`), so intervals
do not depend on which others were computed, nor on the number of processes (they are computed once, on the merged
predictions, whose units are sorted by key).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..data import Benchmark
from ..data.real_labels import real_labels_of, real_topk_correct
from ..data.samples import clean_image_key
from ..metrics import calibration_bins, imagenet_to_in9
from ..metrics.calibration import softmax
from ..metrics.cell_tables import CellTable, ClusteredCellSums, cell_table
from ..metrics.corruption_cells import _corruption_cell, corruption_cell_labels
from ..metrics.estimators import (
    Estimator,
    accuracy_estimator,
    aupr_estimator,
    background_gap_estimator,
    corruption_table_estimators,
    derived_seed,
    ece_estimator,
    flip_rate_estimator,
    paired_comparison,
)
from ..metrics.flip_rate import per_sequence_stability
from ..metrics.intervals import (
    DEFAULT_CONFIDENCE_LEVEL,
    DEFAULT_NUM_RESAMPLES,
    PROPORTION_METHODS,
    UNIT_RANGE,
    check_confidence_level,
    holm_adjust,
    samples_needed,
)
from ..metrics.robustbench import robustbench_alexnet_accuracies, robustbench_estimators
from .headlines import (
    AUPR,
    BG_GAP,
    CORRUPTIONS_ACCURACY,
    ECE,
    MCE,
    MEAN_ERROR,
    MEAN_TOP1,
    MFR,
    RELATIVE_MCE,
    SEVERITY5_TOP1,
    TOP1,
    headline_name,
)
from .image_identity import images_differ
from .prediction_source import Predictions, PredictionsFile, as_predictions
from .protocols import (
    CLASS_MASK_PROTOCOLS,
    IMAGE_LIST_PROTOCOLS,
    LABELS_PROTOCOLS,
    MCE_PROTOCOLS,
    default_protocol,
    protocol_parts,
)

#: The default target half-width of "samples needed", in the headline's own units (points for percentages).
DEFAULT_TARGET_HALF_WIDTH = 1.0
FIRST_N_NOTE = "first-N subset of the stream: the interval describes these images, not the benchmark"
#: The columns ImageNet-C's (CIFAR-C's) error table reads.
CORRUPTION_COLUMNS = (
    "sample_id", "clean_sample_id", "label", "prediction", "corruption", "severity", "perturbation", "difficulty",
    "variant",
)  # fmt: skip


@dataclass(frozen=True)
class UncertaintySettings:
    """How intervals are computed: the confidence level, bootstrap resamples, the interval of proportions
    ("wilson" or "clopper-pearson"), the seed the per-interval seeds derive from, and the target half-width of the
    "samples needed" column."""

    confidence_level: float = DEFAULT_CONFIDENCE_LEVEL
    num_resamples: int = DEFAULT_NUM_RESAMPLES
    proportion_method: str = "wilson"
    seed: int = 0
    target_half_width: float = DEFAULT_TARGET_HALF_WIDTH

    def __post_init__(self) -> None:
        check_confidence_level(self.confidence_level)
        if (
            isinstance(self.num_resamples, bool)
            or not isinstance(self.num_resamples, int)
            or self.num_resamples < 1
        ):
            raise ValueError(f"num_resamples must be a positive integer, got {self.num_resamples!r}.")
        if self.proportion_method not in PROPORTION_METHODS:
            raise ValueError(
                f"proportion_method must be one of {list(PROPORTION_METHODS)}, got {self.proportion_method!r}."
            )
        if not self.target_half_width > 0:
            raise ValueError(f"target_half_width must be > 0, got {self.target_half_width!r}.")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> UncertaintySettings:
        fields = cls.__dataclass_fields__
        return cls(**{key: value for key, value in (data or {}).items() if key in fields})


def cluster_keys(
    frame: pd.DataFrame, prefixes: dict[tuple[Any, ...], str] | None = None
) -> np.ndarray | None:
    """The clean image of each row (`data.samples.clean_image_key`), or None where some row has none: the
    resampling unit of a multi-cell benchmark. Generated benchmarks name it in "clean_sample_id" (read as a
    column). Released layouts derive it from the sample id: `clean_image_key` of each cell's first row gives the
    cell's prefix (`<corruption>/<severity>/`), and every row of the cell must start with it (vectorised per cell).
    `prefixes` (cell values -> prefix), read and filled, carries the prefixes across the batches of one benchmark,
    so that each cell's is that of its first row in the whole benchmark, as for one frame."""
    if "clean_sample_id" in frame and frame["clean_sample_id"].notna().all():
        return frame["clean_sample_id"].to_numpy().astype(str)
    cell_columns = [
        c for c in ("corruption", "severity", "perturbation", "difficulty", "variant") if c in frame
    ]
    ids = frame["sample_id"].astype(str).reset_index(drop=True)
    cells = frame[cell_columns].reset_index(drop=True)
    keys = pd.Series(index=ids.index, dtype=object)
    groups = (
        cells.groupby(cell_columns, dropna=False, sort=False).indices if cell_columns else {(): ids.index}
    )
    for rows in groups.values():
        first = int(rows[0])
        metadata = {  # NaN (a column null for this row) dropped; 3.0 (pandas' nullable ints) read as 3
            c: int(v) if isinstance(v, float) and v.is_integer() else v
            for c, v in cells.iloc[first].items()
            if v is not None and v == v
        }
        named = tuple(sorted(metadata.items()))  # the cell, the same however a batch typed its columns
        prefix = None if prefixes is None else prefixes.get(named)
        if prefix is None:
            key = clean_image_key(ids[first], metadata)
            if key is None or not ids[first].endswith(key):
                return None
            prefix = ids[first][: len(ids[first]) - len(key)]
            if prefixes is not None:
                prefixes[named] = prefix
        group = ids.iloc[rows]
        if not group.str.startswith(prefix).all():
            return None
        rest = group.str.slice(len(prefix))
        if rest.eq("").any() or rest.str.contains(r"(?:^|/)row-[^/]*$").any():
            return None
        keys.iloc[rows] = rest.to_numpy()
    return keys.to_numpy().astype(str)


def _labelled(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[frame["label"] >= 0]


def accuracy_headlines(
    benchmark: Benchmark, frame: pd.DataFrame, clean: pd.DataFrame | None, protocol: Mapping[str, str]
) -> dict[str, Estimator]:
    """Top-1 (under the class mask of `protocol` where the benchmark has one) and, where logits were kept, ECE."""
    labelled = _labelled(frame)
    if labelled.empty:
        return {}
    labels = labelled["label"].to_numpy()
    ids = labelled["sample_id"].to_numpy()
    out: dict[str, Estimator] = {}
    if (
        benchmark.class_subset is not None and benchmark.class_subset.groups
    ):  # ObjectNet: right within the group
        correct = benchmark.class_subset.right_group(labelled["subset_prediction"].to_numpy(), labels)
        return {headline_name(benchmark.name, TOP1): accuracy_estimator(correct, ids)}
    if benchmark.class_subset is not None:
        chosen = protocol.get("class_mask", "hendrycks-200")
        column = "subset_prediction" if chosen == "hendrycks-200" else "prediction"
        correct = labelled[column].to_numpy() == labels
        out[headline_name(benchmark.name, TOP1, chosen)] = accuracy_estimator(correct, ids)
        return out
    if benchmark.reassessed_labels and protocol.get("labels") == "real":  # over the images with a ReaL label
        label_sets = real_labels_of(labelled["sample_id"], "ReaL labels: ")
        top1, _, scored = real_topk_correct(np.stack(labelled["top5"].to_numpy()), label_sets)
        out[headline_name(benchmark.name, TOP1, "real")] = accuracy_estimator(top1[scored], ids[scored])
    else:
        out[headline_name(benchmark.name, TOP1)] = accuracy_estimator(
            labelled["prediction"].to_numpy() == labels, ids
        )
    logits = labelled.get("logits")
    if logits is not None and not logits.isna().any():
        stacked = np.stack(logits.to_numpy()).astype(np.float64)
        if stacked.shape[1] > int(labels.max()):
            probabilities = softmax(stacked)  # as calibration_metrics(from_logits=True) computes them
            confidence = probabilities.max(axis=1)
            correct = probabilities.argmax(axis=1) == labels
            out[headline_name(benchmark.name, ECE)] = ece_estimator(
                confidence, correct, calibration_bins(confidence)
            )
    return out


def _corruption_errors(batch: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Each labelled row's top-1 error (0 / 1) and "name/severity" cell label."""
    wrong = (batch["prediction"].to_numpy() != batch["label"].to_numpy()).astype(np.float64)
    cells = corruption_cell_labels(batch["corruption"].astype(str).to_list(), batch["severity"].to_numpy())
    return wrong, cells


def corruption_error_table(predictions: Predictions) -> CellTable | None:
    """The `CellTable` of the labelled rows' top-1 errors by (corruption, severity) cell, read batch by batch: per
    clean image (`cluster_keys`; summed as it is read, `ClusteredCellSums`), else, where no key names the clean
    image, per sample within its cell (which holds every sample: read once more, only then). None: no labelled
    rows. Equal, bit for bit, to the table of the whole frame at once."""
    by_clean_id = "clean_sample_id" in predictions.names and all(
        _labelled(batch)["clean_sample_id"].notna().all()
        for batch in predictions.batches(["label", "clean_sample_id"])
    )
    sums, prefixes = ClusteredCellSums(), {}
    for batch in predictions.batches(CORRUPTION_COLUMNS):
        labelled = _labelled(batch)
        if labelled.empty:
            continue
        if by_clean_id:
            keys = labelled["clean_sample_id"].to_numpy().astype(str)
        else:
            keys = cluster_keys(labelled.drop(columns="clean_sample_id", errors="ignore"), prefixes)
        if keys is None:
            parts = [
                (*_corruption_errors(b), b["sample_id"].to_numpy())
                for b in map(_labelled, predictions.batches(CORRUPTION_COLUMNS))
            ]
            wrong, cells, ids = (np.concatenate(column) for column in zip(*parts, strict=True))
            return cell_table(wrong, cells, ids, None, _corruption_cell)
        sums.add(*_corruption_errors(labelled), keys)
    return sums.table(_corruption_cell) if sums.num_samples else None


def _percent_complement(estimator: Estimator) -> Estimator:
    """100 minus a percent estimator in [0, 100] (a mean error from a mean top-1): the same units, its interval
    and spread mirrored."""
    statistic, spread = estimator.statistic, estimator.spread

    def mirrored_spread(data: Mapping[str, np.ndarray], share: Any) -> tuple[float, float] | None:
        found = spread(data, share) if spread is not None else None
        return None if found is None else (-found[1], -found[0])

    return replace(
        estimator,
        statistic=lambda data, weights: 100.0 - np.asarray(statistic(data, weights), dtype=np.float64),
        spread=mirrored_spread if spread is not None else None,
    )


def corruption_headlines(
    benchmark: Benchmark,
    frame: pd.DataFrame | Predictions,
    clean: pd.DataFrame | None,
    protocol: Mapping[str, str],
) -> dict[str, Estimator]:
    """Mean top-1, the mCE under each protocol (the headline one first) and the relative mCE where AlexNet's
    errors normalise it, and the severity-5 mean top-1; resampled over clean images. The predictions are read in
    batches (`corruption_error_table`)."""
    table = corruption_error_table(as_predictions(frame))
    if table is None:
        return {}
    clean_arguments: dict[str, Any] = {}
    if clean is not None and table.clustered:
        clean_rows = _labelled(clean)
        clean_arguments = {
            "clean_wrong": (clean_rows["prediction"].to_numpy() != clean_rows["label"].to_numpy()),
            "clean_wrong_keys": clean_rows["sample_id"].to_numpy().astype(str),
        }
    estimators = corruption_table_estimators(table, **clean_arguments)
    name = benchmark.name
    out = {}
    if benchmark.mean_error_headline and "mean_top1" in estimators:
        out[headline_name(name, MEAN_ERROR)] = _percent_complement(estimators["mean_top1"])
    if "mean_top1" in estimators:
        out[headline_name(name, MEAN_TOP1)] = estimators["mean_top1"]
    if benchmark.alexnet_baseline:
        by_protocol = {"alexnet-15": "mce", "unnormalized-19": "unnormalized_mce_all"}
        first = protocol.get("mce", "alexnet-15")
        for chosen in (first, *(p for p in by_protocol if p != first)):
            if by_protocol[chosen] in estimators:
                out[headline_name(name, MCE, chosen)] = estimators[by_protocol[chosen]]
        if "relative_mce" in estimators:
            out[headline_name(name, RELATIVE_MCE)] = estimators["relative_mce"]
    if "severity5_top1" in estimators:
        out[headline_name(name, SEVERITY5_TOP1)] = estimators["severity5_top1"]
    if benchmark.robustbench_alexnet and protocol.get("image_list") == "robustbench-5000":
        found = robustbench_estimators(table, robustbench_alexnet_accuracies(benchmark.robustbench_alexnet))
        if found:  # RobustBench's leaderboard columns, named apart as their headlines are
            out[headline_name(name, CORRUPTIONS_ACCURACY, "robustbench-5000")] = found["corruptions_acc"]
            out[headline_name(name, MCE, "robustbench AlexNet")] = found["corruptions_mce"]
    return out


def perturbation_headlines(
    benchmark: Benchmark, frame: pd.DataFrame, clean: pd.DataFrame | None, protocol: Mapping[str, str]
) -> dict[str, Estimator]:
    """The unnormalised mFR, resampled over clean images (each sequence's flip probability in [0, 1])."""
    difficulty = int(frame["difficulty"].fillna(1).astype(int).iloc[0]) if len(frame) else 1
    names = frame["perturbation"].astype(str).to_numpy()
    sequences = [np.asarray(list(top), dtype=np.int64) for top in frame["frame_top5"]]
    flips, _ = per_sequence_stability(sequences, names.tolist(), difficulty)
    keys = cluster_keys(frame)
    ids = frame["sample_id"].to_numpy()
    estimator = flip_rate_estimator(flips, names.tolist(), ids, keys, value_range=UNIT_RANGE)
    return {headline_name(benchmark.name, MFR): estimator}


def ood_headlines(
    benchmark: Benchmark, frame: pd.DataFrame, clean: pd.DataFrame | None, protocol: Mapping[str, str]
) -> dict[str, Estimator]:
    """The AUPR (OOD images positive), resampled within each half."""
    is_ood = frame["is_ood"].fillna(False).astype(bool).to_numpy()
    if is_ood.all() or not is_ood.any():
        return {}
    scores = frame["ood_score"].to_numpy(np.float64)
    # The images are named by their sample ids, so that two models' estimators pair image by image.
    return {
        headline_name(benchmark.name, AUPR): aupr_estimator(scores, is_ood, frame["sample_id"].to_numpy())
    }


def background_headlines(
    benchmark: Benchmark, frame: pd.DataFrame, clean: pd.DataFrame | None, protocol: Mapping[str, str]
) -> dict[str, Estimator]:
    """The BG-gap, paired by foreground image."""
    variants = frame["variant"].astype(str).to_numpy()
    if not {"mixed_same", "mixed_rand"} <= set(variants.tolist()):
        return {}
    correct = imagenet_to_in9(frame["prediction"].to_numpy()) == frame["label"].to_numpy()
    keys = cluster_keys(frame)
    estimator = background_gap_estimator(correct, variants.tolist(), frame["sample_id"].to_numpy(), keys)
    return {headline_name(benchmark.name, BG_GAP): estimator}


def subset_note(subset: Mapping[str, Any] | None) -> str | None:
    """The caveat of a benchmark's subset (results.json `benchmarks.<name>.subset`): first-N subsets only."""
    if subset and subset.get("kind") == "first" and subset.get("limit") is not None:
        return FIRST_N_NOTE
    return None


#: A headline's estimator with the caveat its interval carries (a first-N subset's, or None).
NotedEstimator = tuple[Estimator, "str | None"]


def intervals_of(
    estimators: Mapping[str, NotedEstimator], settings: UncertaintySettings
) -> dict[str, dict[str, Any]]:
    """Each estimator's interval as a dict, with its note and its "samples needed" for the target half-width."""
    out = {}
    for name, (estimator, note) in estimators.items():
        interval = estimator.interval(
            settings.confidence_level,
            num_resamples=settings.num_resamples,
            seed=derived_seed(settings.seed, name),
            proportion_method=settings.proportion_method,
        ).with_note(note)
        out[name] = {
            **interval.to_dict(),
            "samples_needed": samples_needed(interval, settings.target_half_width),
            "target_half_width": settings.target_half_width,
        }
    return out


# ------------------------------------------------------------------------------------------ from a run folder
def read_predictions(path: Path) -> pd.DataFrame:
    """A predictions parquet's columns the intervals read (not the metadata JSON), as one frame."""
    return PredictionsFile(path).frame()


def run_folder(result: Mapping[str, Any]) -> Path | None:
    """The folder a loaded results.json came from (`results.load_results` records it as "_source")."""
    source = result.get("_source")
    return None if not source else Path(str(source)).parent


def recorded_protocol(result: Mapping[str, Any], name: str, benchmark: Benchmark) -> dict[str, str]:
    """The protocol a run recorded for a benchmark's headlines: the default, with the class mask and mCE it ran
    under and the labels it was scored against (where recorded and known)."""
    record = ((result.get("benchmarks") or {}).get(name) or {}).get("protocol") or {}
    protocol = default_protocol(benchmark)
    choices = {
        "class_mask": CLASS_MASK_PROTOCOLS,
        "mce": MCE_PROTOCOLS,
        "labels": LABELS_PROTOCOLS,
        "image_list": IMAGE_LIST_PROTOCOLS,
    }
    for part in protocol_parts(benchmark):
        if part in choices and isinstance(record.get(part), str) and record[part] in choices[part]:
            protocol[part] = record[part]
    return protocol


def run_settings(result: Mapping[str, Any], **overrides: Any) -> UncertaintySettings:
    """The uncertainty settings a run recorded (results.json "uncertainty"), its seed included, with `overrides`
    by the run options' names (confidence_level, num_resamples, interval_method, target_half_width)."""
    if "interval_method" in overrides:
        overrides["proportion_method"] = overrides.pop("interval_method")
    recorded = {**(result.get("uncertainty") or {}), "seed": result.get("seed", 0)}
    return UncertaintySettings.from_dict({**recorded, **overrides})


# --------------------------------------------------------------------------------------------- comparisons
def compare_models(
    models: Mapping[str, Mapping[str, NotedEstimator]],
    settings: UncertaintySettings,
    images: Mapping[str, Mapping[str, Mapping[str, Any]]] | None = None,
) -> dict[str, Any]:
    """Every pair of models (in the given order, A before B) on every headline both have: A - B over the samples
    both saw, its paired-bootstrap interval, the p-value (McNemar's exact test for accuracies, else the bootstrap's),
    and whether the difference is resolved at the level after Holm's correction over all comparisons.

    `images`: model -> headline -> the images its sample ids stand for (`image_identity.benchmark_images`); where
    two models' differ (a generated run against a run of files, two seeds), the headline is not compared, with
    the reason, since pairing by sample id would pair different images."""
    rows: list[dict[str, Any]] = []
    images = images or {}
    for a, b in combinations(list(models), 2):
        for label in models[a]:
            if label not in models[b]:
                continue
            differ = images_differ((images.get(a) or {}).get(label, {}), (images.get(b) or {}).get(label, {}))
            if differ is not None:
                rows.append({"a": a, "b": b, "headline": label, "skipped": differ})
                continue
            (estimator_a, note), (estimator_b, _) = models[a][label], models[b][label]
            try:
                comparison = paired_comparison(
                    estimator_a,
                    estimator_b,
                    settings.confidence_level,
                    num_resamples=settings.num_resamples,
                    seed=derived_seed(settings.seed, "compare", label),
                    proportion_method=settings.proportion_method,
                )
            except ValueError as error:
                rows.append({"a": a, "b": b, "headline": label, "skipped": str(error)})
                continue
            difference = comparison.difference.with_note(note)
            rows.append(
                {
                    "a": a,
                    "b": b,
                    "headline": label,
                    **comparison.to_dict(),
                    "difference": difference.to_dict(),
                    "test": "McNemar exact" if comparison.mcnemar is not None else "paired bootstrap",
                }
            )
    tested = [row for row in rows if "p_value" in row]
    adjusted = holm_adjust([row["p_value"] for row in tested])
    alpha = 1.0 - settings.confidence_level
    for row, p in zip(tested, adjusted, strict=True):
        row["p_holm"] = p
        row["resolved"] = bool(p <= alpha)
    return {
        "confidence_level": settings.confidence_level,
        "correction": "holm" if len(tested) > 1 else "none",
        "num_comparisons": len(tested),
        "rows": rows,
    }


__all__ = [
    "DEFAULT_TARGET_HALF_WIDTH",
    "FIRST_N_NOTE",
    "NotedEstimator",
    "UncertaintySettings",
    "accuracy_headlines",
    "background_headlines",
    "cluster_keys",
    "compare_models",
    "corruption_headlines",
    "intervals_of",
    "ood_headlines",
    "perturbation_headlines",
    "read_predictions",
    "recorded_protocol",
    "run_folder",
    "run_settings",
    "subset_note",
]
