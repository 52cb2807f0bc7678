# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The papers' figures, redrawn from one or more results.json dicts with every model as a series (or a panel).

Benchmark figures (per-corruption ImageNet-C bars, ImageNet-A/R/O bars, ...) are drawn here; each probe's figures
are drawn by the draw functions its `ProbeSpec.figures` names (in its module of `hf_vitrobust.probes`), which this
module calls for every registered probe. Figures are drawn only from the stored metric and probe dicts (no model
runs here) and only when their data is present. This module only draws: which model is which and what a stored
dict holds is read through `results` (`model_views`, `probe_kind`), as the report reads it.

Where a bar or point is a headline number (a name of results.json "summary") whose interval the run holds
(`ModelView.intervals`), it gets an asymmetric error bar from the interval's low to its high, and its figure's
caption says so; results without intervals draw exactly as before.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..analysis.headlines import AUPR, SEVERITY5_TOP1, TOP1, headline_name
from ..analysis.results import (
    ModelView,
    corruption_top1_by_severity,
    masked_top1_percent,
    ordered_union,
)
from ..probes.display import colors as _colors
from ..probes.display import new_figure as _new_figure
from ..probes.display import number

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

FIGURES_DIR = "figures"


@dataclass(frozen=True)
class FigureFile:
    """A saved figure: its path relative to the report's folder, the confidence levels of its error bars, and its
    caption (which says so where it has them)."""

    path: str
    levels: tuple[float, ...] = ()
    caption: str = ""


# ---------------------------------------------------------------------------------------------------------------
# Reading results


def slug(name: str) -> str:
    """A file-name-safe form of a benchmark or probe name."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "figure"


# ---------------------------------------------------------------------------------------------------------------
# Intervals of the headline numbers (results.json "intervals", named by `analysis.headlines.headline_name`)

#: (low, high, confidence level) of one drawn number.
Bounds = tuple[float, float, float]
#: How close a drawn value and its interval's estimate must be to be the same number (relative and absolute).
_SAME_NUMBER = 1e-6
#: The attribute of a drawn Figure holding the confidence levels of its error bars.
_LEVELS_ATTRIBUTE = "_hf_vitrobust_interval_levels"


def headline_bounds(view: ModelView, name: str, value: float | None) -> Bounds | None:
    """(low, high, confidence level) of the headline `name` of `view`, where its run holds that interval and the
    interval's estimate is the drawn `value`; else None (no error bar)."""
    record = view.intervals.get(name)
    if value is None or not isinstance(record, Mapping):
        return None
    estimate, low, high, level = (
        number(record.get(key)) for key in ("estimate", "low", "high", "confidence_level")
    )
    if estimate is None or low is None or high is None or level is None or low > high:
        return None
    if not math.isclose(estimate, value, rel_tol=_SAME_NUMBER, abs_tol=_SAME_NUMBER):
        return None
    return low, high, level


def interval_levels(figure: Figure) -> tuple[float, ...]:
    """The confidence levels of the error bars drawn on `figure` (empty where none were drawn)."""
    return getattr(figure, _LEVELS_ATTRIBUTE, ())


def _mark_levels(figure: Figure, levels: set[float]) -> Figure:
    if levels:
        setattr(figure, _LEVELS_ATTRIBUTE, tuple(sorted(levels)))
    return figure


def _error_bars(
    ax: Axes, xs: Sequence[float], ys: Sequence[float], bounds: Sequence[Bounds], color: Any
) -> None:
    """Asymmetric error bars from each bound's low to its high, at the drawn values `ys` (at the interval's middle
    where a bootstrap interval leaves its value out, so that the bar still spans low to high)."""
    centres = [
        y if low <= y <= high else (low + high) / 2 for y, (low, high, _) in zip(ys, bounds, strict=True)
    ]
    below = [c - low for c, (low, _, _) in zip(centres, bounds, strict=True)]
    above = [high - c for c, (_, high, _) in zip(centres, bounds, strict=True)]
    ax.errorbar(
        list(xs),
        centres,
        yerr=[below, above],
        fmt="none",
        ecolor=color,
        elinewidth=1.0,
        capsize=3,
        label="_nolegend_",
    )


# ---------------------------------------------------------------------------------------------------------------
# Figure names and captions (the report places each figure in its section by name)


def benchmark_figure_name(benchmark: str, what: str) -> str:
    return f"{slug(benchmark)}_{what}"


MASKED_FIGURE = "natural_adversarial_top1"
OOD_FIGURE = "ood_aupr"
BACKGROUND_FIGURE = "imagenet9_accuracy"


def captioned(text: str, levels: Sequence[float] = ()) -> str:
    """A figure's caption `text`, saying so where the figure has error bars (`levels`: the confidence levels of
    those drawn on it)."""
    if not levels:
        return text
    percent = " / ".join(f"{100 * level:g}" for level in sorted(set(levels)))
    return f"{text.rstrip().rstrip('.')}; error bars: {percent} % intervals (see Uncertainty)."


# ---------------------------------------------------------------------------------------------------------------
# Drawing helpers


def _grouped_bars(
    ax: Axes,
    categories: Sequence[str],
    series: Mapping[str, Mapping[str, float | None]],
    ylabel: str,
    errors: Mapping[str, Mapping[str, Bounds]] | None = None,
) -> set[float]:
    """One group per category, one bar per series (model); missing values leave a gap. `errors`: series ->
    category -> the bar's interval, drawn as an error bar. Returns the confidence levels of the error bars drawn."""
    positions = np.arange(len(categories))
    width = 0.8 / max(len(series), 1)
    levels: set[float] = set()
    for i, ((label, values), color) in enumerate(zip(series.items(), _colors(len(series)), strict=True)):
        heights = [np.nan if number(values.get(c)) is None else float(values[c]) for c in categories]
        xs = positions - 0.4 + width * (i + 0.5)
        ax.bar(xs, heights, width, label=label, color=color)
        bounds = (errors or {}).get(label) or {}
        drawn = [j for j, c in enumerate(categories) if c in bounds and not np.isnan(heights[j])]
        if drawn:
            chosen = [bounds[categories[j]] for j in drawn]
            _error_bars(ax, [xs[j] for j in drawn], [heights[j] for j in drawn], chosen, "0.15")
            levels.update(level for _, _, level in chosen)
    ax.set_xticks(positions)
    ax.set_xticklabels(
        categories, rotation=45 if len(categories) > 4 else 0, ha="right" if len(categories) > 4 else "center"
    )
    ax.set_ylabel(ylabel)
    ax.legend(fontsize="small")
    ax.grid(axis="y", alpha=0.3)
    return levels


# ---------------------------------------------------------------------------------------------------------------
# Benchmark figures


def corruption_figures(benchmark: str, views: Sequence[ModelView]) -> dict[str, Figure]:
    """ImageNet-C (CIFAR-C): CE per corruption, and mean top-1 by severity."""
    data = {v.key: v.metrics[benchmark] for v in views if v.kinds.get(benchmark) == "corruption"}
    if not data:
        return {}
    figures = {}
    ce = {key: {**(m.get("ce") or {}), **(m.get("extra_ce") or {})} for key, m in data.items()}
    if any(ce.values()):
        label = {
            key: f"{key} (mCE {m['mce']:.1f})" if number(m.get("mce")) is not None else key
            for key, m in data.items()
        }
        names = ordered_union([list(values) for values in ce.values()])
        figure = _new_figure(max(6.0, 0.45 * len(names) * max(1, len(data)) ** 0.5 + 2), 4.0)
        ax = figure.add_subplot()
        _grouped_bars(
            ax, names, {label[key]: values for key, values in ce.items()}, "corruption error CE (%)"
        )
        ax.axhline(100.0, color="gray", linewidth=0.8, linestyle="--")
        ax.set_title(f"{benchmark}: corruption error per corruption")
        figures[benchmark_figure_name(benchmark, "ce")] = figure
    by_severity = {key: corruption_top1_by_severity(m) for key, m in data.items()}
    if any(by_severity.values()):
        figure = _new_figure(5.0, 3.6)
        ax = figure.add_subplot()
        views_by_key = {v.key: v for v in views}
        drawn: set[float] = set()
        for (key, table), color in zip(by_severity.items(), _colors(len(by_severity)), strict=True):
            levels = sorted({s for cells in table.values() for s in cells})
            means = [float(np.mean([cells[s] for cells in table.values() if s in cells])) for s in levels]
            ax.plot(levels, means, marker="o", label=key, color=color)
            if 5 in levels:
                bounds = headline_bounds(
                    views_by_key[key], headline_name(benchmark, SEVERITY5_TOP1), means[levels.index(5)]
                )
                if bounds is not None:
                    _error_bars(ax, [5], [means[levels.index(5)]], [bounds], color)
                    drawn.add(bounds[2])
        ax.set_xlabel("severity")
        ax.set_ylabel("mean top-1 accuracy (%)")
        ax.set_xticks([1, 2, 3, 4, 5])
        ax.set_title(f"{benchmark}: accuracy by severity")
        ax.legend(fontsize="small")
        ax.grid(alpha=0.3)
        figures[benchmark_figure_name(benchmark, "severity")] = _mark_levels(figure, drawn)
    return figures


def perturbation_figures(benchmark: str, views: Sequence[ModelView]) -> dict[str, Figure]:
    """ImageNet-P: flip probability per perturbation."""
    data = {
        v.key: v.metrics[benchmark]["flip_probability"]
        for v in views
        if v.kinds.get(benchmark) == "perturbation" and v.metrics[benchmark]["flip_probability"]
    }
    if not data:
        return {}
    names = ordered_union([list(values) for values in data.values()])
    percent = {
        key: {n: 100.0 * p for n, p in values.items() if number(p) is not None}
        for key, values in data.items()
    }
    figure = _new_figure(max(6.0, 0.5 * len(names) + 2), 4.0)
    ax = figure.add_subplot()
    _grouped_bars(ax, names, percent, "flip probability (%)")
    ax.set_title(f"{benchmark}: flip probability per perturbation")
    return {benchmark_figure_name(benchmark, "flip"): figure}


def _bars_over_benchmarks(
    benchmarks: Sequence[str],
    views: Sequence[ModelView],
    kind: str,
    value: Callable[[Mapping], Any],
    ylabel: str,
    headline_name: Callable[[str, Mapping], str] | None = None,
) -> Figure | None:
    """One bar per benchmark of `kind` and model: `value(metrics)`; `headline_name(benchmark, metrics)`: the
    summary's name of that number, whose interval (where the run holds it) is drawn as an error bar."""
    present = [b for b in benchmarks if any(v.kinds.get(b) == kind for v in views)]
    if not present:
        return None
    series = {}
    errors: dict[str, dict[str, Bounds]] = {}
    for v in views:
        values = {b: value(v.metrics[b]) for b in present if v.kinds.get(b) == kind}
        if any(number(x) is not None for x in values.values()):
            series[v.key] = values
            if headline_name is not None:
                bounds = {
                    b: headline_bounds(v, headline_name(b, v.metrics[b]), number(x))
                    for b, x in values.items()
                }
                errors[v.key] = {b: found for b, found in bounds.items() if found is not None}
    if not series:
        return None
    figure = _new_figure(max(4.5, 1.2 * len(present) * max(1, len(series)) ** 0.5 + 2), 3.6)
    ax = figure.add_subplot()
    levels = _grouped_bars(ax, present, series, ylabel, errors)
    ax.set_ylim(0, 100)
    return _mark_levels(figure, levels)


def masked_bars(benchmarks: Sequence[str], views: Sequence[ModelView]) -> Figure | None:
    """ImageNet-A/R: top-1 per benchmark and model."""
    return _bars_over_benchmarks(
        benchmarks,
        views,
        "masked",
        masked_top1_percent,
        "top-1 (%)",
        # named by the class mask the run's top-1 was scored under, where it has one
        lambda benchmark, metrics: headline_name(benchmark, TOP1, metrics.get("class_mask")),
    )


def ood_bars(benchmarks: Sequence[str], views: Sequence[ModelView]) -> Figure | None:
    """ImageNet-O: AUPR per benchmark and model."""
    return _bars_over_benchmarks(
        benchmarks,
        views,
        "ood",
        lambda m: None if number(m.get("aupr")) is None else 100.0 * m["aupr"],
        "AUPR (%)",
        lambda benchmark, _: headline_name(benchmark, AUPR),
    )


def background_figure(benchmarks: Sequence[str], views: Sequence[ModelView]) -> Figure | None:
    """ImageNet-9: top-1 per background variant (no bar is a headline number: the BG-gap is a difference of two, so
    this figure has no error bars)."""
    series = {}
    for v in views:
        for b in benchmarks:
            metrics = v.metrics.get(b, {})
            if v.kinds.get(b) == "background" and metrics.get("accuracy"):
                label = v.key if len(benchmarks) == 1 else f"{v.key} ({b})"
                series[label] = {
                    n: 100.0 * a for n, a in metrics["accuracy"].items() if number(a) is not None
                }
    if not series:
        return None
    variants = ordered_union([list(values) for values in series.values()])
    figure = _new_figure(max(6.0, 0.6 * len(variants) + 2), 3.8)
    ax = figure.add_subplot()
    _grouped_bars(ax, variants, series, "accuracy (%)")
    ax.set_ylim(0, 100)
    ax.set_title("ImageNet-9 background variants")
    return figure


__all__ = [
    "FigureFile",
    "benchmark_figure_name",
    "captioned",
    "headline_bounds",
    "interval_levels",
]
