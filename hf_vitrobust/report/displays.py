# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""How each kind of benchmark is shown: `BENCHMARK_DISPLAYS`, one `BenchmarkDisplay` per `BenchmarkKind` name.

A display holds a kind's rows in the report's Summary table, its report section (`benchmark_sections`), its
per-benchmark figures and the figure that groups every benchmark of the kind (`figures`). A kind with no display of
its own is shown by `GENERIC_DISPLAY`: every key of its metric dict in a table, no Summary rows, no figures; its
headline numbers and their intervals are shown as every kind's are (the Summary's headlines, the Uncertainty
section).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..registry import Registry
from . import benchmark_sections as sections
from . import figures as drawing

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from ..analysis.results import ModelView
    from .benchmark_sections import SummaryRow
    from .blocks import Block
    from .figures import FigureFile

Section = Callable[[str, "Sequence[ModelView]", "Mapping[str, FigureFile]"], "list[Block]"]
BenchmarkFigures = Callable[[str, "Sequence[ModelView]"], "dict[str, Figure]"]
GroupFigure = Callable[[Sequence[str], "Sequence[ModelView]"], "Figure | None"]


@dataclass(frozen=True)
class BenchmarkDisplay:
    """How one kind of benchmark is shown (keyword arguments).

    summary_rows(benchmark name): the report's Summary rows, (label, formatter of the benchmark's metric dict, the
        headline whose interval the cell shows).
    section(benchmark name, model views, figures): the blocks of the benchmark's report section.
    figures(benchmark name, model views): the benchmark's own figures (name -> Figure), drawn only from the models
        whose results of it are of this kind.
    group_figure: (figure name, draw(benchmark names, model views)): one figure over every benchmark of this kind,
        placed in the report after the last of them.
    captions: the captions of its figures, by figure name or by the part of a benchmark's figure name after its
        last "_" (`figures.benchmark_figure_name`: "imagenet-c_ce" -> "ce").
    """

    name: str
    summary_rows: Callable[[str], list[SummaryRow]]
    section: Section
    figures: BenchmarkFigures | None = None
    group_figure: tuple[str, GroupFigure] | None = None
    captions: Mapping[str, str] = field(default_factory=dict)


#: The display of a kind without one of its own (an unknown benchmark of an old results.json, a model's metric
#: dict that holds no result, or a plug-in kind): no Summary rows, every key of its metric dict in its section.
GENERIC_DISPLAY = BenchmarkDisplay(
    name="generic", summary_rows=sections.no_rows, section=sections.other_section
)

BENCHMARK_DISPLAYS: Registry[BenchmarkDisplay] = Registry("benchmark display")

for _display in (
    BenchmarkDisplay(name="clean", summary_rows=sections.clean_rows, section=sections.clean_section),
    BenchmarkDisplay(
        name="masked",
        summary_rows=sections.masked_rows,
        section=sections.masked_section,
        group_figure=(drawing.MASKED_FIGURE, drawing.masked_bars),
        captions={
            drawing.MASKED_FIGURE: "Top-1 accuracy (%) on the natural adversarial / rendition sets (200-class "
            "protocol)."
        },
    ),
    BenchmarkDisplay(
        name="corruption",
        summary_rows=sections.corruption_rows,
        section=sections.corruption_section,
        figures=drawing.corruption_figures,
        captions={
            "ce": "Corruption error per corruption (%, AlexNet-normalised; lower is better), one bar per model "
            "(Paul & Chen Table/Fig.; Hendrycks & Dietterich).",
            "severity": "Mean top-1 accuracy (%) over the corruptions present, per severity (Paul & Chen Fig. 2 at "
            "severity 5).",
        },
    ),
    BenchmarkDisplay(
        name="perturbation",
        summary_rows=sections.perturbation_rows,
        section=sections.perturbation_section,
        figures=drawing.perturbation_figures,
        captions={
            "flip": "ImageNet-P flip probability (%) per perturbation (unnormalised; lower is more stable)."
        },
    ),
    BenchmarkDisplay(
        name="ood",
        summary_rows=sections.ood_rows,
        section=sections.ood_section,
        group_figure=(drawing.OOD_FIGURE, drawing.ood_bars),
        captions={
            drawing.OOD_FIGURE: "Out-of-distribution detection AUPR (%), score = -max softmax over the set's 200 "
            "classes."
        },
    ),
    BenchmarkDisplay(
        name="background",
        summary_rows=sections.background_rows,
        section=sections.background_section,
        group_figure=(drawing.BACKGROUND_FIGURE, drawing.background_figure),
        captions={drawing.BACKGROUND_FIGURE: "ImageNet-9 accuracy (%) per background variant (Xiao et al.)."},
    ),
):
    BENCHMARK_DISPLAYS.register(_display.name, _display)


def get_display(kind: str) -> BenchmarkDisplay:
    """The display of benchmark kind `kind`; `GENERIC_DISPLAY` where it has none ("other" included)."""
    return BENCHMARK_DISPLAYS.get(kind, GENERIC_DISPLAY)


__all__ = ["BENCHMARK_DISPLAYS", "GENERIC_DISPLAY", "BenchmarkDisplay", "get_display"]
