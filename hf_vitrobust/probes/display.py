# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""How probe (and benchmark) numbers are shown: the report's number formats and the figures' drawing helpers.

Each probe's `ProbeSpec` formats its headline rows and draws its figures with these, and `report.document` and
`report.figures` import them back for the benchmark tables and figures, so that every number and every panel
looks the same wherever it comes from. Figures are plain `matplotlib.figure.Figure` objects (no pyplot); matplotlib
is imported only when something is drawn.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

DPI = 110
MAX_PANEL_COLUMNS = 4
MISSING = "—"

# The value of one probe (or metric) dict for a figure: model key -> its dict as stored in results.json.
SeriesData = Mapping[str, Mapping[str, Any]]


# ---------------------------------------------------------------------------------------------------------------
# Numbers


def as_float_array(values: Any) -> np.ndarray:
    """Nested lists (None for NaN, as `to_dict` writes them), arrays or tensors -> a float array with NaN."""
    if values is None:
        return np.array([], dtype=float)
    if isinstance(values, torch.Tensor):
        values = values.detach().cpu().double().numpy()
    return np.array(values, dtype=float)


def number(value: Any) -> float | None:
    """A finite float, or None (missing, None, NaN, not a number)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def fmt_percent(value: Any, scale: float = 1.0, decimals: int = 2) -> str:
    """A percentage: `value * scale` with `decimals` decimals (scale 100 for fractions)."""
    value = number(value)
    return MISSING if value is None else f"{value * scale:.{decimals}f}"


def fmt_number(value: Any) -> str:
    """Any other real number: four significant digits (integers as they are)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    value = number(value)
    if value is None:
        return MISSING
    if value != 0 and (abs(value) >= 1e5 or abs(value) < 1e-3):
        return f"{value:.3e}"
    return f"{value:.4g}"


def fmt_count(value: Any) -> str:
    """A count with thousands separators."""
    return f"{int(value):,}" if number(value) is not None else MISSING


def _with_bounds(shown: str, low: Any, high: Any, fmt: Callable[[Any], str]) -> str:
    if shown == MISSING or number(low) is None or number(high) is None:
        return shown
    return f"{shown} [{fmt(low)}, {fmt(high)}]"


def fmt_percent_interval(value: Any, low: Any, high: Any, scale: float = 1.0, decimals: int = 2) -> str:
    """ "x [lo, hi]" as `fmt_percent` writes each; just x where a bound is missing (a dict without intervals)."""
    return _with_bounds(
        fmt_percent(value, scale, decimals), low, high, lambda v: fmt_percent(v, scale, decimals)
    )


def fmt_number_interval(value: Any, low: Any, high: Any) -> str:
    """ "x [lo, hi]" as `fmt_number` writes each; just x where a bound is missing (a dict without intervals)."""
    return _with_bounds(fmt_number(value), low, high, fmt_number)


def curve_bounds(probe: Mapping[str, Any], key: str) -> tuple[np.ndarray, np.ndarray] | None:
    """The (low, high) bounds of curve `key` in a probe dict's "intervals" (float arrays of the curve's shape, NaN
    where undefined), or None where the dict has none for it."""
    entry = (probe.get("intervals") or {}).get(key)
    if not isinstance(entry, Mapping):
        return None
    low, high = as_float_array(entry.get("low")), as_float_array(entry.get("high"))
    return (low, high) if low.shape == high.shape else None


def bounds_at(bounds: tuple[np.ndarray, np.ndarray] | None, *index: int) -> tuple[float | None, float | None]:
    """The bounds of one point of a curve (`curve_bounds`; no index for a scalar), (None, None) where absent."""
    if bounds is None:
        return None, None
    low, high = bounds
    try:
        values = (low[index], high[index]) if index else (low, high)
        return number(float(values[0])), number(float(values[1]))
    except (IndexError, TypeError, ValueError):
        return None, None


# ---------------------------------------------------------------------------------------------------------------
# Drawing


def new_figure(width: float, height: float) -> Figure:
    """A constrained-layout `Figure` at the report's DPI, made without pyplot."""
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=DPI, layout="constrained")


def panels(count: int, panel: tuple[float, float] = (3.6, 3.2)) -> tuple[Figure, list[Axes]]:
    """A figure with `count` panels, at most MAX_PANEL_COLUMNS per row; unused cells are hidden."""
    columns = min(count, MAX_PANEL_COLUMNS)
    rows = math.ceil(count / columns)
    figure = new_figure(panel[0] * columns, panel[1] * rows)
    axes = figure.subplots(rows, columns, squeeze=False).ravel().tolist()
    for ax in axes[count:]:
        ax.set_visible(False)
    return figure, axes[:count]


def panels_or_axes(
    count: int, ax: Axes | None, panel: tuple[float, float] = (3.6, 3.2)
) -> tuple[Figure, list[Axes]]:
    """`panels(count)`, or the given axes when the caller draws one series on its own `ax`."""
    if ax is None:
        return panels(count, panel)
    if count != 1:
        raise ValueError(f"One axes holds one series, got {count}.")
    return ax.figure, [ax]


def colors(count: int) -> list:
    """One colour per series (tab10, or tab20 beyond ten)."""
    from matplotlib import colormaps

    cmap = colormaps["tab10" if count <= 10 else "tab20"]
    return [cmap(i % cmap.N) for i in range(count)]


def depth_axis(count: int) -> np.ndarray:
    """Normalised depth 0..1 of `count` layers."""
    return np.linspace(0.0, 1.0, count) if count > 1 else np.zeros(count)


def image_hwc(values: Any) -> np.ndarray | None:
    """An image (CHW or HWC nested lists) as HWC in [0, 1], or None."""
    image = as_float_array(values)
    if image.ndim != 3:
        return None
    if image.shape[0] in (1, 3) and image.shape[-1] not in (1, 3):
        image = image.transpose(1, 2, 0)
    return np.clip(np.nan_to_num(image), 0.0, 1.0)


def first_map(values: Any) -> np.ndarray | None:
    """The first 2D map of a stack of maps, or None."""
    maps = as_float_array(values)
    while maps.ndim > 2:
        maps = maps[0]
    return maps if maps.ndim == 2 and maps.size else None


def draw_band(ax: Axes, x: Any, bounds: tuple[Any, Any] | None, color: Any) -> bool:
    """A shaded band (alpha 0.2) between the bounds of a curve at x, where they have x's shape; whether drawn."""
    if bounds is None:
        return False
    x, low, high = as_float_array(x), as_float_array(bounds[0]), as_float_array(bounds[1])
    if not x.size or low.shape != x.shape or high.shape != x.shape or not np.isfinite(low + high).any():
        return False
    ax.fill_between(x, low, high, color=color, alpha=0.2, linewidth=0)
    return True


def line_figure(
    data: SeriesData,
    xy: Callable[[Mapping[str, Any]], tuple[Any, Any]],
    xlabel: str,
    ylabel: str,
    title: str,
    ax: Axes | None = None,
    band: Callable[[Mapping[str, Any]], tuple[Any, Any] | None] | None = None,
) -> Figure | None:
    """One line per model (x, y = `xy(probe)`), on a new figure or on `ax`; `band(probe)`: the (low, high) bounds
    of its interval at the same points (in y's units), drawn as a shaded band where given."""
    if ax is None:
        figure = new_figure(5.0, 3.6)
        ax = figure.add_subplot()
    drawn = 0
    for (key, probe), color in zip(data.items(), colors(len(data)), strict=True):
        x, y = xy(probe)
        x, y = as_float_array(x), as_float_array(y)
        if x.size and x.shape == y.shape:
            ax.plot(x, y, marker="o", markersize=4, label=key, color=color)
            if band is not None:
                draw_band(ax, x, band(probe), color)
            drawn += 1
    if not drawn:
        return None
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize="small")
    ax.grid(alpha=0.3)
    return ax.figure


def depth_figure(
    data: SeriesData, field: str, ylabel: str, title: str, ax: Axes | None = None
) -> Figure | None:
    """A per-layer value (`field`) of each model against normalised depth, with the band of its interval where the
    dict has one (`curve_bounds`)."""
    return line_figure(
        data,
        lambda p: (depth_axis(len(p.get(field) or [])), p.get(field)),
        "normalised depth",
        ylabel,
        title,
        ax=ax,
        band=lambda p: curve_bounds(p, field),
    )


def map_panels(
    data: Mapping[str, Any],
    title: str,
    colorbar: str,
    cmap: str = "jet",
    limits: tuple[float, float] | None = None,
    extent: Callable[[np.ndarray], tuple[float, float, float, float] | None] = lambda _: None,
    labels: tuple[str, str] = ("", ""),
    ax: Axes | None = None,
) -> Figure | None:
    """One panel per model of a 2D map, on one shared colour scale with one colorbar (on `ax`: one map, no
    figure title)."""
    maps = {key: m for key, m in data.items() if m is not None and m.ndim == 2 and m.size}
    if not maps:
        return None
    if limits is None:
        finite = np.concatenate([m[np.isfinite(m)] for m in maps.values()])
        low, high = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
        limits = (low, high if high > low else low + 1.0)
    figure, axes = panels_or_axes(len(maps), ax)
    image = None
    for panel, (key, values) in zip(axes, maps.items(), strict=True):
        shown = np.where(np.isfinite(values), values, limits[0])
        image = panel.imshow(
            shown, cmap=cmap, vmin=limits[0], vmax=limits[1], extent=extent(values), interpolation="nearest"
        )
        panel.set_title(key, fontsize="medium")
        panel.set_xlabel(labels[0])
        panel.set_ylabel(labels[1])
    figure.colorbar(image, ax=axes, label=colorbar, shrink=0.9)
    if ax is None:
        figure.suptitle(title)
    return figure


def overlays(data: SeriesData, field: str, title: str, ax: Axes | None = None) -> Figure | None:
    """The first map of `field` of each model over its input image (when the dict has one), one panel each."""
    shown = {}
    for key, probe in data.items():
        heat = first_map(probe.get(field))
        if heat is not None:
            shown[key] = (heat, image_hwc(probe.get("image")))
    if not shown:
        return None
    figure, axes = panels_or_axes(len(shown), ax, panel=(3.0, 3.0))
    for panel, (key, (heat, image)) in zip(axes, shown.items(), strict=True):
        if image is not None:
            height, width = image.shape[:2]
            panel.imshow(image)
            panel.imshow(
                heat,
                cmap="jet",
                alpha=0.5,
                vmin=0.0,
                vmax=1.0,
                extent=(-0.5, width - 0.5, height - 0.5, -0.5),
            )
        else:
            panel.imshow(heat, cmap="jet", vmin=0.0, vmax=1.0)
        panel.set_title(key, fontsize="medium")
        panel.set_axis_off()
    if ax is None:
        figure.suptitle(title)
    return figure


__all__ = [
    "DPI",
    "MAX_PANEL_COLUMNS",
    "MISSING",
    "as_float_array",
    "bounds_at",
    "colors",
    "curve_bounds",
    "depth_axis",
    "depth_figure",
    "draw_band",
    "first_map",
    "fmt_count",
    "fmt_number",
    "fmt_number_interval",
    "fmt_percent",
    "fmt_percent_interval",
    "image_hwc",
    "line_figure",
    "map_panels",
    "new_figure",
    "number",
    "overlays",
    "panels",
    "panels_or_axes",
]
