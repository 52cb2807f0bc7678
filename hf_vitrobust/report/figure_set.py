# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Every figure of a report: drawn from each benchmark display (`displays`) and each probe's `ProbeSpec.figures`,
and saved as PNG files (`write_figures`), each with the confidence levels of the error bars drawn on it and the
caption that says so (`caption`)."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..analysis.analyze import stored_analysis
from ..analysis.results import ModelView, benchmark_names, model_views, probe_kind
from ..atomic_files import write_bytes_atomic
from ..probes.display import DPI
from ..probes.spec import PROBES
from .displays import BENCHMARK_DISPLAYS
from .effective_robustness_section import CAPTION as EFFECTIVE_ROBUSTNESS_CAPTION
from .effective_robustness_section import FIGURE as EFFECTIVE_ROBUSTNESS_FIGURE
from .effective_robustness_section import effective_robustness_figure
from .figures import FIGURES_DIR, FigureFile, captioned, interval_levels

if TYPE_CHECKING:
    from matplotlib.figure import Figure


# ---------------------------------------------------------------------------------------------------------------
# Probe figures


def _probe_data(views: Sequence[ModelView], kind: str) -> dict[str, Mapping[str, Any]]:
    """Model key -> its dict of probe `kind` (the first such probe of the model)."""
    data = {}
    for v in views:
        for name, probe in v.probes.items():
            if probe_kind(name, probe) == kind and v.key not in data and "skipped" not in probe:
                data[v.key] = probe
    return data


def _probe_figures(views: Sequence[ModelView]) -> dict[str, Figure]:
    """Every registered probe's figures (its `ProbeSpec.figures`), in registration order, from the models' dicts."""
    figures: dict[str, Figure | None] = {}
    for spec in PROBES.values():
        if data := _probe_data(views, spec.name):
            for name, figure in spec.figures.items():
                figures[name] = figure.draw(data)
    return {name: figure for name, figure in figures.items() if figure is not None}


# ---------------------------------------------------------------------------------------------------------------
# Captions


def caption(name: str, levels: Sequence[float] = ()) -> str:
    """The caption of figure `name`: its display's (by name, or by the part of a benchmark figure's name after its
    last "_") or its probe's (`ProbeSpec.figures`), else its name in words; where the figure has error bars
    (`levels`, those drawn on it), it says so."""
    captions = {
        key: text for display in BENCHMARK_DISPLAYS.values() for key, text in display.captions.items()
    }
    captions.update({key: figure.caption for spec in PROBES.values() for key, figure in spec.figures.items()})
    captions[EFFECTIVE_ROBUSTNESS_FIGURE] = EFFECTIVE_ROBUSTNESS_CAPTION
    text = captions.get(name) or captions.get(name.rsplit("_", 1)[-1], name.replace("_", " "))
    return captioned(text, levels)


# ---------------------------------------------------------------------------------------------------------------
# Entry point


def build_figures(results: Sequence[Mapping[str, Any]]) -> dict[str, Figure]:
    """Figure name -> matplotlib Figure (not saved) for everything present in `results` (a list of runs): each
    benchmark display's figures and each probe's (`ProbeSpec.figures`). A figure's error bars are on the figure
    itself (`interval_levels`)."""
    views = model_views(results)
    benchmarks = benchmark_names(results, views)
    figures: dict[str, Figure | None] = {}
    displays = list(BENCHMARK_DISPLAYS.values())
    for benchmark in benchmarks:
        for display in displays:
            if display.figures is not None:
                figures.update(display.figures(benchmark, views))
    for display in displays:
        if display.group_figure is not None:
            name, draw = display.group_figure
            figures[name] = draw(benchmarks, views)
    figures.update(_probe_figures(views))
    figures[EFFECTIVE_ROBUSTNESS_FIGURE] = effective_robustness_figure(stored_analysis(results))
    return {name: figure for name, figure in figures.items() if figure is not None}


def write_figures(
    results: Mapping[str, Any] | Sequence[Mapping[str, Any]], out_dir: Path
) -> dict[str, FigureFile]:
    """Draw every figure whose data is present and save it as `out_dir/figures/<name>.png` (atomically). Returns
    name -> `FigureFile`: the path relative to `out_dir` ("figures/<name>.png") and the confidence levels of the
    error bars drawn on it, which its caption states.

    `results`: one results.json dict or several (models of several runs side by side). Figures are plain
    `matplotlib.figure.Figure` objects rendered to PNG: no pyplot, and a user's backend choice is never touched."""
    runs = [results] if isinstance(results, Mapping) else list(results)
    if not all(isinstance(run, Mapping) for run in runs):
        raise TypeError("`results` must be a results.json dict or a list of them.")
    figures_dir = Path(out_dir) / FIGURES_DIR
    written = {}
    for name, figure in build_figures(runs).items():
        figures_dir.mkdir(parents=True, exist_ok=True)
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png", dpi=DPI)
        write_bytes_atomic(figures_dir / f"{name}.png", buffer.getvalue())
        levels = interval_levels(figure)
        written[name] = FigureFile(f"{FIGURES_DIR}/{name}.png", levels, caption(name, levels))
    return written


__all__ = ["build_figures", "caption", "write_figures"]
