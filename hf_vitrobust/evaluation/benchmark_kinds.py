# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""How each kind of benchmark is scored and shown: `BENCHMARK_KINDS`, one `BenchmarkKind` per `Benchmark.kind`.

A kind holds everything the evaluation does with a benchmark's predictions once they exist: its metrics
(`scoring`), its headline numbers for the run's summary, its rows in the report's Summary table, its report section
(`benchmark_sections`), its per-benchmark figures and the figure that groups every benchmark of the kind
(`figures`). The runner, `scoring`, the report and the figures look the kind up here and name none: a new benchmark
of an existing kind needs only its `Benchmark` entry; a new kind registers a `BenchmarkKind` here.

The kind of a benchmark is written into results.json (`benchmarks.<name>.kind`) and read back from there
(`results.benchmark_kind`), never guessed from the metric dict's keys.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from ..data import Benchmark
from ..registry import Registry
from . import benchmark_sections as sections
from . import figures as drawing
from . import scoring

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from .report_blocks import Block, Row
    from .results import ModelView

Metrics = Callable[[Benchmark, pd.DataFrame, "pd.DataFrame | None", "dict[str, str] | None"], dict[str, Any]]
Headline = Callable[[Benchmark, dict[str, Any], dict[str, str]], dict[str, Any]]
Section = Callable[[str, "Sequence[ModelView]", Mapping[str, str]], "list[Block]"]
BenchmarkFigures = Callable[[str, "Sequence[ModelView]"], "dict[str, Figure]"]
GroupFigure = Callable[[Sequence[str], "Sequence[ModelView]"], "Figure | None"]


@dataclass(frozen=True)
class BenchmarkKind:
    """One kind of benchmark (keyword arguments).

    metrics(benchmark, frame, clean_predictions, protocol): the metric dict from the predictions (a non-empty
        frame); `clean_predictions` are those of `Benchmark.clean`, or None.
    headline(benchmark, metrics, protocol): the numbers of the run's summary (results.json "summary").
    summary_rows(benchmark name): the report's Summary rows, (label, formatter of the benchmark's metric dict).
    section(benchmark name, model views, figures): the blocks of the benchmark's report section.
    figures(benchmark name, model views): the benchmark's own figures (name -> Figure), drawn only from the models
        whose results of it are of this kind.
    group_figure: (figure name, draw(benchmark names, model views)): one figure over every benchmark of this kind,
        placed in the report after the last of them.
    """

    name: str
    metrics: Metrics
    headline: Headline
    summary_rows: Callable[[str], list[Row]]
    section: Section
    figures: BenchmarkFigures | None = None
    group_figure: tuple[str, GroupFigure] | None = None


def _no_metrics(benchmark: Benchmark, frame: pd.DataFrame, clean: Any, protocol: Any) -> dict[str, Any]:
    raise ValueError(f"{benchmark.name}: benchmark kind {benchmark.kind!r} has no metrics.")


#: The display of a benchmark whose kind is not known (an unknown benchmark of an old results.json, or a model's
#: metric dict that holds no result: skipped, or no samples): every key of its metric dict, no summary rows.
OTHER_KIND = BenchmarkKind(
    name="other",
    metrics=_no_metrics,
    headline=lambda benchmark, metrics, protocol: {},
    summary_rows=sections.no_rows,
    section=sections.other_section,
)

BENCHMARK_KINDS: Registry[BenchmarkKind] = Registry("benchmark kind")

for _kind in (
    BenchmarkKind(
        name="clean",
        metrics=lambda benchmark, frame, clean, protocol: scoring.classification_metrics(
            benchmark, frame, protocol
        ),
        headline=scoring.clean_headline,
        summary_rows=sections.clean_rows,
        section=sections.clean_section,
    ),
    BenchmarkKind(
        name="masked",
        metrics=lambda benchmark, frame, clean, protocol: scoring.classification_metrics(
            benchmark, frame, protocol
        ),
        headline=scoring.masked_headline,
        summary_rows=sections.masked_rows,
        section=sections.masked_section,
        group_figure=(drawing.MASKED_FIGURE, drawing.masked_bars),
    ),
    BenchmarkKind(
        name="corruption",
        metrics=scoring.corruption_metrics,
        headline=scoring.corruption_headline,
        summary_rows=sections.corruption_rows,
        section=sections.corruption_section,
        figures=drawing.corruption_figures,
    ),
    BenchmarkKind(
        name="perturbation",
        metrics=lambda benchmark, frame, clean, protocol: scoring.sequence_metrics(frame),
        headline=scoring.perturbation_headline,
        summary_rows=sections.perturbation_rows,
        section=sections.perturbation_section,
        figures=drawing.perturbation_figures,
    ),
    BenchmarkKind(
        name="ood",
        metrics=lambda benchmark, frame, clean, protocol: scoring.ood_metrics(frame),
        headline=scoring.ood_headline,
        summary_rows=sections.ood_rows,
        section=sections.ood_section,
        group_figure=(drawing.OOD_FIGURE, drawing.ood_bars),
    ),
    BenchmarkKind(
        name="background",
        metrics=lambda benchmark, frame, clean, protocol: scoring.background_metrics(frame),
        headline=scoring.background_headline,
        summary_rows=sections.background_rows,
        section=sections.background_section,
        group_figure=(drawing.BACKGROUND_FIGURE, drawing.background_figure),
    ),
):
    BENCHMARK_KINDS.register(_kind.name, _kind)


def get_benchmark_kind(name: str) -> BenchmarkKind:
    """The registered kind `name`; "other" (and any unknown name) is `OTHER_KIND`, the generic display."""
    return BENCHMARK_KINDS.get(name, OTHER_KIND)


__all__ = ["BENCHMARK_KINDS", "OTHER_KIND", "BenchmarkKind", "get_benchmark_kind"]
