# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""How each kind of benchmark is analysed: `BENCHMARK_KINDS`, one `BenchmarkKind` per `Benchmark.kind`.

A kind holds everything the analysis does with a benchmark's predictions: its metrics (`scoring`), its headline
numbers for the run's summary (named by `headlines.headline_name`), the estimators of their intervals
(`uncertainty`), the rows of the model card's model-index with the interval each is given with, and the headline
quantities a paper's finding may read. How a kind is shown (report section, figures) is its display, registered in
`hf_vitrobust.report.displays`. A new benchmark of an existing kind needs only its `Benchmark` entry; a new kind
registers a `BenchmarkKind` here (or in a plug-in module) and, to be shown otherwise than generically, a display.

The kind of a benchmark is written into results.json (`benchmarks.<name>.kind`) and read back from there
(`results.benchmark_kind`), never guessed from the metric dict's keys.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..data import Benchmark
from ..metrics import imagenet_to_in9
from ..metrics.estimators import Estimator
from ..registry import Registry
from . import scoring, uncertainty
from .headlines import (
    AUPR,
    BG_GAP,
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
from .prediction_source import Predictions, as_predictions
from .protocols import default_protocol

Metrics = Callable[[Benchmark, pd.DataFrame, "pd.DataFrame | None", "dict[str, str] | None"], dict[str, Any]]
Headline = Callable[[Benchmark, dict[str, Any], dict[str, str]], dict[str, Any]]
Estimators = Callable[
    [Benchmark, pd.DataFrame, "pd.DataFrame | None", Mapping[str, str]], dict[str, Estimator]
]
#: The choice of a card row's interval read from the metric dict: the class mask (ImageNet-A/R) or the labels ("real":
#: ImageNet-ReaL, set only then) the run's top-1 was scored under.
RUN_CLASS_MASK = "<the run's class mask>"


@dataclass(frozen=True)
class CardRow:
    """One model-index row of a benchmark's metric dict: the value at `path`, its metric type and display name,
    and the headline whose interval describes it (`quantity`, its protocol `choice`) with the factor from the
    interval's units (percent, points) to the value's (a fraction where the name says so)."""

    path: tuple[str, ...]
    type: str
    name: str
    quantity: str | None = None
    choice: str | None = None
    factor: float = 1.0

    def interval_name(self, benchmark: str, metrics: Mapping[str, Any]) -> str | None:
        """The name of the interval (results.json "intervals") of this row's value; None where none describes it."""
        if self.quantity is None:
            return None
        choice = (
            (metrics.get("class_mask") or metrics.get("labels"))
            if self.choice == RUN_CLASS_MASK
            else self.choice
        )
        return headline_name(benchmark, self.quantity, choice)


CLASSIFICATION_ROWS = (
    CardRow(("top1",), "accuracy", "Top-1 accuracy (%)", TOP1, RUN_CLASS_MASK),
    CardRow(("top5",), "top_5_accuracy", "Top-5 accuracy (%)"),
    CardRow(
        ("calibration", "ece"), "ece", "Expected calibration error (fraction, 15 bins)", ECE, factor=0.01
    ),
    # ImageNet-A/R: both class-mask protocols (docs/protocols.md); "top1" above is the run's headline one.
    CardRow(
        ("protocols", "hendrycks-200", "top1"),
        "accuracy",
        "Top-1 over the set's 200 classes (%, hendrycks-200)",
        TOP1,
        "hendrycks-200",
    ),
    CardRow(
        ("protocols", "paul-chen-1000", "top1"),
        "accuracy",
        "Top-1 over all 1000 classes (%, paul-chen-1000)",
        TOP1,
        "paul-chen-1000",
    ),
)
CORRUPTION_ROWS = (
    CardRow(("mce",), "mce", "mCE (%, AlexNet-normalised, lower is better)", MCE, "alexnet-15"),
    CardRow(
        ("protocols", "unnormalized-19", "mce"),
        "mce",
        "Unnormalised mean corruption error over every corruption (%, unnormalized-19, lower is better)",
        MCE,
        "unnormalized-19",
    ),
    CardRow(("relative_mce",), "relative_mce", "Relative mCE (%, lower is better)", RELATIVE_MCE),
    CardRow(("mean_top1",), "accuracy", "Mean top-1 over corruptions and severities (%)", MEAN_TOP1),
    CardRow(
        ("mean_error",),
        "mean_error",
        "Mean top-1 error over corruptions and severities (%, lower is better)",
        MEAN_ERROR,
    ),
    CardRow(("severity5_top1",), "accuracy_severity_5", "Mean top-1 at severity 5 (%)", SEVERITY5_TOP1),
)
SEQUENCE_ROWS = (
    CardRow(("mfr",), "mfr", "mFR (%, AlexNet-normalised, lower is better)"),
    CardRow(
        ("mfr_unnormalized",),
        "flip_probability",
        "Mean flip probability (fraction, lower is better)",
        MFR,
        factor=0.01,
    ),
    CardRow(("mt5d_unnormalized",), "top_5_distance", "Mean top-5 distance (lower is better)"),
)
OOD_ROWS = (
    CardRow(("aupr",), "aupr", "AUPR, OOD images positive (fraction)", AUPR, factor=0.01),
    CardRow(("auroc",), "roc_auc", "AUROC (fraction)"),
    CardRow(("fpr_at_95_tpr",), "fpr_at_95_tpr", "FPR at 95% TPR (fraction, lower is better)"),
)


def background_rows(metrics: Mapping[str, Any]) -> tuple[CardRow, ...]:
    """ImageNet-9's rows: the BG-gap, then the top-1 of each variant the run has."""
    variants = sorted((metrics.get("accuracy") or {}).keys())
    return (
        CardRow(("bg_gap",), "bg_gap", "BG-gap (fraction, mixed_same - mixed_rand)", BG_GAP, factor=0.01),
        *(CardRow(("accuracy", v), "accuracy", f"Top-1 on {v} (fraction)") for v in variants),
    )


@dataclass(frozen=True)
class BenchmarkKind:
    """One kind of benchmark (keyword arguments).

    metrics(benchmark, frame, clean_predictions, protocol): the metric dict from the predictions (a non-empty
        frame); `clean_predictions` are those of `Benchmark.clean`, or None.
    headline(benchmark, metrics, protocol): the numbers of the run's summary (results.json "summary").
    estimators(benchmark, frame, clean, protocol): an `Estimator` per headline (and per extra number with an
        interval), named by `headline_name`: the intervals, the model comparisons, the published numbers and the
        findings all read them.
    card_rows(metrics): the model-index rows of a benchmark's metric dict (`CardRow`).
    quantities: the headline quantities (`headline_name`'s second argument) a finding may read of this kind.
    cells: the prediction columns that name a cell (ImageNet-C: corruption and severity): an accuracy of this kind
        is read per cell, all of them named, and resampled by clean image across its cells.
    label_map: maps a 1000-class prediction into the benchmark's label space before it is compared with the label
        (ImageNet-9: its 9 superclasses); None where predictions and labels share one space.
    reads_batches: whether `metrics` and `estimators` take the predictions as a `prediction_source.Predictions`
        and read them in batches (ImageNet-C: millions of rows, never held at once); otherwise they get one frame.
    """

    name: str
    metrics: Metrics
    headline: Headline
    estimators: Estimators
    card_rows: Callable[[Mapping[str, Any]], tuple[CardRow, ...]]
    quantities: tuple[str, ...] = ()
    cells: tuple[str, ...] = ()
    label_map: Callable[[np.ndarray], np.ndarray] | None = None
    reads_batches: bool = False

    def given(self, predictions: pd.DataFrame | Predictions) -> pd.DataFrame | Predictions:
        """The predictions as this kind's `metrics` and `estimators` take them: batched or one frame."""
        source = as_predictions(predictions)
        return source if self.reads_batches else source.frame()


def _no_metrics(benchmark: Benchmark, frame: pd.DataFrame, clean: Any, protocol: Any) -> dict[str, Any]:
    raise ValueError(f"{benchmark.name}: benchmark kind {benchmark.kind!r} has no metrics.")


#: The kind of a benchmark whose kind is not known (an unknown benchmark of an old results.json, or a model's
#: metric dict that holds no result: skipped, or no samples): no metrics, no headlines, no intervals.
OTHER_KIND = BenchmarkKind(
    name="other",
    metrics=_no_metrics,
    headline=lambda benchmark, metrics, protocol: {},
    estimators=lambda benchmark, frame, clean, protocol: {},
    card_rows=lambda metrics: CLASSIFICATION_ROWS,
)

BENCHMARK_KINDS: Registry[BenchmarkKind] = Registry("benchmark kind")


def _classification(benchmark: Benchmark, frame: pd.DataFrame, clean: Any, protocol: Any) -> dict[str, Any]:
    return scoring.classification_metrics(benchmark, frame, protocol)


for _kind in (
    BenchmarkKind(
        name="clean",
        metrics=_classification,
        headline=scoring.clean_headline,
        estimators=uncertainty.accuracy_headlines,
        card_rows=lambda metrics: CLASSIFICATION_ROWS,
        quantities=(TOP1, ECE),
    ),
    BenchmarkKind(
        name="masked",
        metrics=_classification,
        headline=scoring.masked_headline,
        estimators=uncertainty.accuracy_headlines,
        card_rows=lambda metrics: CLASSIFICATION_ROWS,
        quantities=(TOP1,),
    ),
    BenchmarkKind(
        name="corruption",
        metrics=scoring.corruption_metrics,
        headline=scoring.corruption_headline,
        estimators=uncertainty.corruption_headlines,
        card_rows=lambda metrics: CORRUPTION_ROWS,
        quantities=(MEAN_TOP1, MCE, RELATIVE_MCE, SEVERITY5_TOP1),
        cells=("corruption", "severity"),
        reads_batches=True,
    ),
    BenchmarkKind(
        name="perturbation",
        metrics=lambda benchmark, frame, clean, protocol: scoring.sequence_metrics(frame),
        headline=scoring.perturbation_headline,
        estimators=uncertainty.perturbation_headlines,
        card_rows=lambda metrics: SEQUENCE_ROWS,
        quantities=(MFR,),
    ),
    BenchmarkKind(
        name="ood",
        metrics=lambda benchmark, frame, clean, protocol: scoring.ood_metrics(frame),
        headline=scoring.ood_headline,
        estimators=uncertainty.ood_headlines,
        card_rows=lambda metrics: OOD_ROWS,
        quantities=(AUPR,),
    ),
    BenchmarkKind(
        name="background",
        metrics=lambda benchmark, frame, clean, protocol: scoring.background_metrics(frame),
        headline=scoring.background_headline,
        estimators=uncertainty.background_headlines,
        card_rows=background_rows,
        quantities=(BG_GAP,),
        label_map=imagenet_to_in9,
    ),
):
    BENCHMARK_KINDS.register(_kind.name, _kind)


def get_benchmark_kind(name: str) -> BenchmarkKind:
    """The registered kind `name`; "other" (and any unknown name) is `OTHER_KIND`."""
    return BENCHMARK_KINDS.get(name, OTHER_KIND)


def benchmark_metrics(
    benchmark: Benchmark,
    frame: pd.DataFrame | Predictions,
    clean_predictions: pd.DataFrame | None = None,
    protocol: dict[str, str] | None = None,
) -> dict[str, Any]:
    """The metrics of `benchmark` from its predictions (a frame, or a file read in batches where the kind
    `reads_batches`), computed by its kind: `clean_predictions` are the clean benchmark's (`Benchmark.clean`), for
    ImageNet-C's relative mCE; `protocol` holds the headline choices (default: the canonical protocol)."""
    if as_predictions(frame).num_rows == 0:
        return {"num_samples": 0, "note": "no samples were evaluated"}
    kind = BENCHMARK_KINDS[benchmark.kind]
    return kind.metrics(benchmark, kind.given(frame), clean_predictions, protocol)


def summary_headlines(
    benchmark: Benchmark, metrics: dict[str, Any], protocol: dict[str, str] | None = None
) -> dict[str, float | None]:
    """The numbers of a benchmark that go in the run's summary table (its kind's `headline`), named by protocol
    where there is a choice: ImageNet-C's mCE under both of its protocols, the headline one first; ImageNet-A/R's
    top-1 under `protocol`'s class mask."""
    return BENCHMARK_KINDS[benchmark.kind].headline(
        benchmark, metrics, protocol or default_protocol(benchmark)
    )


def headline_estimators(
    benchmark: Benchmark,
    frame: pd.DataFrame | Predictions,
    clean: pd.DataFrame | None = None,
    protocol: Mapping[str, str] | None = None,
) -> dict[str, Estimator]:
    """The estimators of a benchmark's headline numbers (its kind's `estimators`), named as in results.json
    "summary" (plus the relative mCE, the severity-5 mean top-1 and the ECE where they exist), from its predictions
    (a frame, or a file read in batches where the kind `reads_batches`)."""
    if as_predictions(frame).num_rows == 0:
        return {}
    kind = get_benchmark_kind(benchmark.kind)
    return kind.estimators(benchmark, kind.given(frame), clean, protocol or default_protocol(benchmark))


__all__ = [
    "BENCHMARK_KINDS",
    "CLASSIFICATION_ROWS",
    "CORRUPTION_ROWS",
    "OOD_ROWS",
    "OTHER_KIND",
    "RUN_CLASS_MASK",
    "SEQUENCE_ROWS",
    "BenchmarkKind",
    "CardRow",
    "background_rows",
    "benchmark_metrics",
    "get_benchmark_kind",
    "headline_estimators",
    "summary_headlines",
]
