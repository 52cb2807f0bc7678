# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The report's effective robustness section (Taori et al. 2020): for every model of the runs with an imagenet-val
top-1 and a natural-shift top-1, its effective robustness per shift with its interval, and the testbed's scatter in
logit axes (its models as grey points, the fit line, the run's models on top, labelled). Both show what
`analysis.effective_robustness` computed and `analysis.analyze` stored; the scatter's background points are the
shipped testbed data."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from ..analysis.effective_robustness import (
    CLEAN_BENCHMARK,
    MIN_CLEAN_TOP1,
    SHIFTS,
    fit_models,
    logit_percent,
    testbed_top1,
)
from ..probes.display import colors, fmt_count, fmt_percent, panels
from .blocks import Block, Heading, Paragraph, Table, figure_blocks
from .figures import FigureFile

if TYPE_CHECKING:
    from matplotlib.figure import Figure

FIGURE = "effective_robustness"
CAPTION = (
    "Effective robustness (Taori et al. 2020), one panel per shift, in the imagenet-testbed's logit axes (ticks in "
    "top-1 %): its models in grey (filled: the standard ImageNet-1k models the fit uses), the fit line in red, this "
    "report's models on top, labelled. A model above the line is more robust than its clean accuracy predicts."
)
#: Top-1 values (%) the logit axes are ticked at, where they fall inside a panel.
TICKS = (1, 2, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 98, 99)


def _percent_signed(value: Any) -> str:
    text = fmt_percent(value)
    return text if text.startswith("-") or not text[:1].isdigit() else f"+{text}"


def effective_robustness_table(stored: Mapping[str, Any]) -> tuple[list[str], list[list[str]], str] | None:
    """The effective-robustness table (headers and rows, one per model and shift) and the note that explains it
    (the fits, the intervals), from a stored analysis (`analysis.analyze.stored_analysis`); None where the runs
    stored none (no model with both an imagenet-val top-1 and a top-1 on a shift of `SHIFTS`). The report and the
    model card show the same table."""
    effective = stored.get("effective_robustness") or {}
    rows = effective.get("models") or []
    if not rows:
        return None
    level = rows[0]["confidence_level"]
    table_rows = [
        [
            row["model"],
            SHIFTS[row["shift"]].title if row["shift"] in SHIFTS else row["shift"],
            fmt_percent(row["clean_top1"]),
            fmt_percent(row["shift_top1"]),
            fmt_percent(row["predicted_top1"]),
            f"{_percent_signed(row['value'])} [{_percent_signed(row['low'])}, {_percent_signed(row['high'])}]",
            f"{fmt_count(row['clean_images'])} / {fmt_count(row['shift_images'])}",
        ]
        for row in rows
    ]
    fits = effective.get("fits") or {}
    fit_notes = "; ".join(
        f"{SHIFTS[name].title if name in SHIFTS else name}: "
        + ", ".join(
            f"slope {segment['slope']:.4f}, intercept {segment['intercept']:.4f} over {segment['num_models']} models"
            + (
                (" (clean top-1 below" if segment["clean_range"][0] == 0 else " (clean top-1 above")
                + f" ResNet-50's {fit['pivot']:g} %)"
                if fit["pivot"]
                else ""
            )
            for segment in fit["segments"]
        )
        for name, fit in fits.items()
    )
    note = (
        "Effective robustness (Taori et al. 2020): a model's top-1 under a natural shift minus the top-1 that the "
        "imagenet-testbed's linear fit of standard ImageNet-1k models, in logit axes, predicts at its imagenet-val "
        f"top-1. Fits: {fit_notes}. Intervals: {100 * level:g} %, from the fit's bootstrap over its models and "
        "binomial draws over this run's images (docs/effective_robustness.md)."
    )
    headers = [
        "model",
        "shift",
        "imagenet-val top-1 (%)",
        "shifted top-1 (%)",
        "predicted top-1 (%)",
        f"effective robustness (points) [{100 * level:g} % interval]",
        "images (clean / shifted)",
    ]
    return headers, table_rows, note


def effective_robustness_blocks(stored: Mapping[str, Any], figures: Mapping[str, FigureFile]) -> list[Block]:
    """The section's heading, note, table and figure; none where the runs stored no effective robustness."""
    table = effective_robustness_table(stored)
    if table is None:
        return []
    headers, rows, note = table
    return [
        Heading(2, "Effective robustness"),
        Paragraph(note),
        Table(headers, rows),
        *figure_blocks(FIGURE, figures),
    ]


def effective_robustness_figure(stored: Mapping[str, Any]) -> Figure | None:
    """The scatter, one panel per shift of the stored effective robustness; None where there is none."""
    effective = stored.get("effective_robustness") or {}
    rows = effective.get("models") or []
    shifts = list(
        dict.fromkeys(row["shift"] for row in rows if row["shift"] in (effective.get("fits") or {}))
    )
    if not shifts:
        return None
    figure, axes = panels(len(shifts), (4.2, 3.8))
    data = testbed_top1()
    models = list(dict.fromkeys(row["model"] for row in rows))
    palette = dict(zip(models, colors(len(models)), strict=True))
    for ax, shift in zip(axes, shifts, strict=False):
        shown = data[[CLEAN_BENCHMARK, shift]].dropna()
        # As the testbed's figures: models from MIN_CLEAN_TOP1 up; 0 % and 100 % lie off the logit axes.
        shown = shown[((shown > 0) & (shown < 100)).all(axis=1) & (shown[CLEAN_BENCHMARK] >= MIN_CLEAN_TOP1)]
        used = fit_models(shift).index
        background = shown.loc[~shown.index.isin(used)]
        ax.scatter(
            logit_percent(background[CLEAN_BENCHMARK]),
            logit_percent(background[shift]),
            s=8,
            facecolors="none",
            edgecolors="0.6",
            linewidths=0.6,
        )
        ax.scatter(
            logit_percent(shown.loc[used, CLEAN_BENCHMARK]),
            logit_percent(shown.loc[used, shift]),
            s=8,
            color="0.6",
        )
        ours = [row for row in rows if row["shift"] == shift]
        clean = [row["clean_top1"] for row in ours] + shown[CLEAN_BENCHMARK].tolist()
        xs = np.linspace(
            logit_percent(max(min(clean) - 1, 0.5)), logit_percent(min(max(clean) + 1, 99.5)), 200
        )
        fit = effective["fits"][shift]
        for segment in fit["segments"]:
            low, high = (logit_percent(np.clip(bound, 0.01, 99.99)) for bound in segment["clean_range"])
            part = xs[(xs >= low) & (xs <= high)]
            ax.plot(part, segment["slope"] * part + segment["intercept"], color="tab:red", linewidth=1.2)
        for row in ours:
            x, y = logit_percent(row["clean_top1"]), logit_percent(np.clip(row["shift_top1"], 0.01, 99.99))
            ax.scatter(
                [x], [y], s=30, color=palette[row["model"]], zorder=5, edgecolors="black", linewidths=0.5
            )
            ax.annotate(row["model"], (x, y), xytext=(4, 4), textcoords="offset points", fontsize=6)
        for limits, set_ticks in ((ax.get_xlim(), ax.set_xticks), (ax.get_ylim(), ax.set_yticks)):
            ticks = [t for t in TICKS if limits[0] <= logit_percent(t) <= limits[1]]
            set_ticks(logit_percent(np.array(ticks)), [f"{t:g}" for t in ticks])
        ax.set_xlabel("imagenet-val top-1 (%, logit axis)", fontsize=7)
        ax.set_ylabel(f"{SHIFTS[shift].title} top-1 (%, logit axis)", fontsize=7)
        ax.tick_params(labelsize=6)
        ax.set_title(SHIFTS[shift].title, fontsize=8)
    return figure


__all__ = [
    "CAPTION",
    "FIGURE",
    "effective_robustness_blocks",
    "effective_robustness_figure",
    "effective_robustness_table",
]
