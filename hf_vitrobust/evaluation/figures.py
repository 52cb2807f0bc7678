# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The papers' figures, redrawn from one or more results.json dicts with every model as a series (or a panel).

Paul & Chen (AAAI 2022): per-corruption ImageNet-C bars, ImageNet-A/R/O bars, occlusion curves, Fourier heat maps,
DeepFool energy spectra, PGD loss progressions. Park & Kim (ICLR 2022): Hessian eigenvalue spectra, feature-map
Δ log amplitude and variance against depth, band-passed noise, lesion bars, loss landscapes, CKA maps. Figures are
drawn only from the stored metric and probe dicts (no model runs here) and only when their data is present.

This module also holds the read-side view of results (`model_views`, `metric_kind`, `probe_kind`) that the report
shares, so that figures and tables agree on which model is which and what a dict holds.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..atomic_files import write_bytes_atomic

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

DPI = 110
MAX_PANEL_COLUMNS = 4
FIGURES_DIR = "figures"

# A probe result's `probe` field (its function name) -> the probe task name used in results.json.
PROBE_FUNCTION_NAMES = {
    "occlusion_sweep": "occlusion",
    "fourier_heatmap": "fourier_heatmap",
    "deepfool_spectrum": "deepfool",
    "pgd_loss_progression": "pgd",
    "attention_maps": "attention",
    "gradcam": "gradcam",
    "hessian_spectrum": "hessian",
    "feature_fourier": "feature_fourier",
    "feature_variance": "feature_variance",
    "feature_similarity": "cka",
    "frequency_noise": "frequency_noise",
    "lesion_study": "lesion",
    "loss_landscape": "loss_landscape",
}
PROBE_KINDS = tuple(dict.fromkeys(PROBE_FUNCTION_NAMES.values()))


# ---------------------------------------------------------------------------------------------------------------
# Reading results


@dataclass(frozen=True)
class ModelView:
    """One model of one run: `key` is its column label, unique over all the runs shown together."""

    key: str
    info: Mapping[str, Any]
    run: int
    metrics: Mapping[str, Mapping[str, Any]]
    probes: Mapping[str, Mapping[str, Any]]


def run_names(results: Sequence[Mapping[str, Any]]) -> list[str]:
    """A distinct short name per run: the folder holding its results.json (recorded by `load_results` as
    "_source"), else "run<i>" (from 1)."""
    names: list[str] = []
    for i, result in enumerate(results):
        source = result.get("_source")
        name = Path(str(source)).parent.name if source else ""
        base = name or f"run{i + 1}"
        name, n = base, 2
        while name in names:
            name, n = f"{base}-{n}", n + 1
        names.append(name)
    return names


def unique_model_keys(results: Sequence[Mapping[str, Any]]) -> list[dict[str, str]]:
    """Per run, model key -> the key to show: unchanged when only one run has it, else "<key>@<run name>"."""
    per_run = [[str(model["key"]) for model in result.get("models", [])] for result in results]
    for i, keys in enumerate(per_run):
        duplicated = sorted({key for key in keys if keys.count(key) > 1})
        if duplicated:
            raise ValueError(f"Run {i + 1} lists model key(s) {duplicated} more than once.")
    counts: dict[str, int] = {}
    for keys in per_run:
        for key in keys:
            counts[key] = counts.get(key, 0) + 1
    names = run_names(results)
    taken = {key for keys in per_run for key in keys if counts[key] == 1}
    mapping: list[dict[str, str]] = []
    for name, keys in zip(names, per_run, strict=True):
        renamed = {}
        for key in keys:
            new = key if counts[key] == 1 else f"{key}@{name}"
            base, n = new, 2
            while counts[key] > 1 and new in taken:
                new, n = f"{base}-{n}", n + 1
            taken.add(new)
            renamed[key] = new
        mapping.append(renamed)
    return mapping


def model_views(results: Sequence[Mapping[str, Any]]) -> list[ModelView]:
    """Every model of every run, in run order then model order, with unique keys (see `unique_model_keys`).

    A model that has metrics or probes but no "models" entry is shown too (its info is then just its key)."""
    views = []
    for run, (result, renamed) in enumerate(zip(results, unique_model_keys(results), strict=True)):
        keys = list(renamed)
        for section in ("metrics", "probes"):
            keys += [key for key in result.get(section) or {} if key not in keys]
        infos = {str(model["key"]): model for model in result.get("models", [])}
        for key in keys:
            views.append(
                ModelView(
                    key=renamed.get(key, key),
                    info=infos.get(key, {"key": key}),
                    run=run,
                    metrics=(result.get("metrics") or {}).get(key) or {},
                    probes=(result.get("probes") or {}).get(key) or {},
                )
            )
    return views


def ordered_union(groups: Sequence[Sequence[str]]) -> list[str]:
    """The names of every group, each once, in order of first appearance."""
    return list(dict.fromkeys(name for group in groups for name in group))


def metric_kind(metrics: Mapping[str, Any]) -> str:
    """What a benchmark's metric dict holds, from its keys (so any benchmark name works): "corruption" (mCE),
    "perturbation" (flip rates), "ood", "background" (ImageNet-9), "masked" (ImageNet-A/R, fractions),
    "clean" (top-1/top-5 in percent + calibration) or "other"."""
    if any(key in metrics for key in ("mce", "ce", "top1_by_cell", "errors")):
        return "corruption"
    if "flip_probability" in metrics:
        return "perturbation"
    if "aupr" in metrics or "num_ood" in metrics:
        return "ood"
    if "bg_gap" in metrics:
        return "background"
    if (
        "top1" in metrics
        and ("num_classes" in metrics or "class_mask" in metrics or "protocol" in metrics)
        and "calibration" not in metrics
    ):
        return "masked"
    if "top1" in metrics:
        return "clean"
    return "other"


def probe_kind(name: str, data: Mapping[str, Any]) -> str | None:
    """The probe task a probe dict comes from: its results.json name, or its `probe` field."""
    if name in PROBE_KINDS:
        return name
    return PROBE_FUNCTION_NAMES.get(str(data.get("probe")))


def benchmark_names(results: Sequence[Mapping[str, Any]], views: Sequence[ModelView]) -> list[str]:
    """Benchmarks in suite order (results' "benchmarks"), then any only found in metrics."""
    return ordered_union(
        [list(result.get("benchmarks") or {}) for result in results] + [list(v.metrics) for v in views]
    )


def probe_names(views: Sequence[ModelView]) -> list[str]:
    return ordered_union([list(v.probes) for v in views])


def as_float_array(values: Any) -> np.ndarray:
    """Nested lists (None for NaN, as `to_dict` writes them) -> a float array with NaN."""
    if values is None:
        return np.array([], dtype=float)
    return np.array(values, dtype=float)


def number(value: Any) -> float | None:
    """A finite float, or None (missing, None, NaN, not a number)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def masked_top1_percent(metrics: Mapping[str, Any], field: str = "top1") -> float | None:
    """ImageNet-A/R top-k in percent: the runner stores percent; a bare `MaskedAccuracyResult.to_dict()` (it has
    "num_classes") holds fractions."""
    value = number(metrics.get(field))
    if value is None:
        return None
    return 100.0 * value if "num_classes" in metrics else value


def corruption_top1_by_severity(metrics: Mapping[str, Any]) -> dict[str, dict[int, float]]:
    """Top-1 (%) per corruption and severity: the runner's "top1_by_cell" ("corruption/severity" -> %), else
    100 - the "errors" table of `CorruptionErrorResult` (percent errors)."""
    table: dict[str, dict[int, float]] = {}
    for cell, value in (metrics.get("top1_by_cell") or {}).items():
        name, _, level = str(cell).rpartition("/")
        if name and level.isdigit() and number(value) is not None:
            table.setdefault(name, {})[int(level)] = float(value)
    if table:
        return table
    for name, cells in (metrics.get("errors") or {}).items():
        table[name] = {int(s): 100.0 - float(e) for s, e in cells.items() if number(e) is not None}
    return table


def severity5_top1(metrics: Mapping[str, Any]) -> dict[str, float]:
    """Top-1 (%) at severity 5 per corruption: the runner's "top1_by_corruption_s5", else from "errors"."""
    stored = metrics.get("top1_by_corruption_s5")
    if stored:
        return {name: float(v) for name, v in stored.items() if number(v) is not None}
    return {name: cells[5] for name, cells in corruption_top1_by_severity(metrics).items() if 5 in cells}


def slug(name: str) -> str:
    """A file-name-safe form of a benchmark or probe name."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "figure"


# ---------------------------------------------------------------------------------------------------------------
# Figure names and captions (the report places each figure in its section by name)


def benchmark_figure_name(benchmark: str, what: str) -> str:
    return f"{slug(benchmark)}_{what}"


MASKED_FIGURE = "natural_adversarial_top1"
OOD_FIGURE = "ood_aupr"
BACKGROUND_FIGURE = "imagenet9_accuracy"
PROBE_FIGURES = {
    "occlusion": ("occlusion",),
    "fourier_heatmap": ("fourier_heatmap",),
    "deepfool": ("deepfool_spectrum",),
    "pgd": ("pgd_loss",),
    "hessian": ("hessian_spectrum", "hessian_density"),
    "feature_fourier": ("feature_fourier",),
    "feature_variance": ("feature_variance",),
    "frequency_noise": ("frequency_noise",),
    "lesion": ("lesion",),
    "loss_landscape": ("loss_landscape",),
    "cka": ("cka",),
    "attention": ("attention",),
    "gradcam": ("gradcam",),
}
CAPTIONS = {
    "ce": "Corruption error per corruption (%, AlexNet-normalised; lower is better), one bar per model "
    "(Paul & Chen Table/Fig.; Hendrycks & Dietterich).",
    "severity": "Mean top-1 accuracy (%) over the corruptions present, per severity (Paul & Chen Fig. 2 at severity 5).",
    "flip": "ImageNet-P flip probability (%) per perturbation (unnormalised; lower is more stable).",
    MASKED_FIGURE: "Top-1 accuracy (%) on the natural adversarial / rendition sets (200-class protocol).",
    OOD_FIGURE: "Out-of-distribution detection AUPR (%), score = -max softmax over the set's 200 classes.",
    BACKGROUND_FIGURE: "ImageNet-9 accuracy (%) per background variant (Xiao et al.).",
    "occlusion": "Top-1 accuracy (%) against the masked share of the image (Paul & Chen, random patch drop).",
    "fourier_heatmap": "Fourier heat maps: top-1 error under a Fourier basis perturbation per frequency "
    "(same colour scale for every model; Yin et al., Paul & Chen).",
    "deepfool_spectrum": "Energy spectrum (dB) of DeepFool perturbations, 2D DCT, low frequencies at the top left "
    "(same colour scale; Paul & Chen).",
    "pgd_loss": "Cross-entropy along the PGD attack, mean ± one standard deviation over the images (Paul & Chen).",
    "hessian_spectrum": "Hessian eigenvalues per mini-batch: largest (filled) and smallest (hatched); the red area "
    "marks negative eigenvalues, i.e. non-convex directions (Park & Kim Fig. 1 right / Fig. 4).",
    "hessian_density": "Hessian eigenvalue density (stochastic Lanczos quadrature, log scale).",
    "feature_fourier": "Δ log amplitude of the feature maps at the highest frequency against normalised depth "
    "(Park & Kim Fig. 2a / Fig. 8).",
    "feature_variance": "Feature-map variance against normalised depth (Park & Kim Fig. 9).",
    "frequency_noise": "Change of top-1 accuracy (percentage points) under band-passed noise against its "
    "frequency (Park & Kim Fig. 2b).",
    "lesion": "Accuracy drop (percentage points) when one residual unit is removed (Park & Kim Fig. 11-12).",
    "loss_landscape": "Loss landscape along two filter-normalised random directions (Li et al.; Park & Kim Fig. 1).",
    "cka": "Layer-by-layer linear CKA similarity.",
    "attention": "Attention map of the first probe image.",
    "gradcam": "Grad-CAM map of the first probe image.",
}


def caption(name: str) -> str:
    if name in CAPTIONS:
        return CAPTIONS[name]
    suffix = name.rsplit("_", 1)[-1]
    return CAPTIONS.get(suffix, name.replace("_", " "))


# ---------------------------------------------------------------------------------------------------------------
# Drawing helpers


def _new_figure(width: float, height: float) -> Figure:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=DPI, layout="constrained")


def _panels(count: int, panel: tuple[float, float] = (3.6, 3.2)) -> tuple[Figure, list[Axes]]:
    """A figure with `count` panels, at most MAX_PANEL_COLUMNS per row; unused cells are hidden."""
    columns = min(count, MAX_PANEL_COLUMNS)
    rows = math.ceil(count / columns)
    figure = _new_figure(panel[0] * columns, panel[1] * rows)
    axes = figure.subplots(rows, columns, squeeze=False).ravel().tolist()
    for ax in axes[count:]:
        ax.set_visible(False)
    return figure, axes[:count]


def _colors(count: int) -> list:
    from matplotlib import colormaps

    cmap = colormaps["tab10" if count <= 10 else "tab20"]
    return [cmap(i % cmap.N) for i in range(count)]


def _grouped_bars(
    ax: Axes, categories: Sequence[str], series: Mapping[str, Mapping[str, float | None]], ylabel: str
) -> None:
    """One group per category, one bar per series (model); missing values leave a gap."""
    positions = np.arange(len(categories))
    width = 0.8 / max(len(series), 1)
    for i, ((label, values), color) in enumerate(zip(series.items(), _colors(len(series)), strict=True)):
        heights = [np.nan if number(values.get(c)) is None else float(values[c]) for c in categories]
        ax.bar(positions - 0.4 + width * (i + 0.5), heights, width, label=label, color=color)
    ax.set_xticks(positions)
    ax.set_xticklabels(
        categories, rotation=45 if len(categories) > 4 else 0, ha="right" if len(categories) > 4 else "center"
    )
    ax.set_ylabel(ylabel)
    ax.legend(fontsize="small")
    ax.grid(axis="y", alpha=0.3)


def _depth_axis(count: int) -> np.ndarray:
    return np.linspace(0.0, 1.0, count) if count > 1 else np.zeros(count)


def _image_hwc(values: Any) -> np.ndarray | None:
    image = as_float_array(values)
    if image.ndim != 3:
        return None
    if image.shape[0] in (1, 3) and image.shape[-1] not in (1, 3):
        image = image.transpose(1, 2, 0)
    return np.clip(np.nan_to_num(image), 0.0, 1.0)


def _first_map(values: Any) -> np.ndarray | None:
    maps = as_float_array(values)
    while maps.ndim > 2:
        maps = maps[0]
    return maps if maps.ndim == 2 and maps.size else None


# ---------------------------------------------------------------------------------------------------------------
# Benchmark figures


def _corruption_figures(benchmark: str, views: Sequence[ModelView]) -> dict[str, Figure]:
    data = {
        v.key: v.metrics[benchmark]
        for v in views
        if metric_kind(v.metrics.get(benchmark, {})) == "corruption"
    }
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
        for (key, table), color in zip(by_severity.items(), _colors(len(by_severity)), strict=True):
            levels = sorted({s for cells in table.values() for s in cells})
            means = [np.mean([cells[s] for cells in table.values() if s in cells]) for s in levels]
            ax.plot(levels, means, marker="o", label=key, color=color)
        ax.set_xlabel("severity")
        ax.set_ylabel("mean top-1 accuracy (%)")
        ax.set_xticks([1, 2, 3, 4, 5])
        ax.set_title(f"{benchmark}: accuracy by severity")
        ax.legend(fontsize="small")
        ax.grid(alpha=0.3)
        figures[benchmark_figure_name(benchmark, "severity")] = figure
    return figures


def _perturbation_figures(benchmark: str, views: Sequence[ModelView]) -> dict[str, Figure]:
    data = {
        v.key: v.metrics[benchmark]["flip_probability"]
        for v in views
        if metric_kind(v.metrics.get(benchmark, {})) == "perturbation"
        and v.metrics[benchmark]["flip_probability"]
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
) -> Figure | None:
    present = [b for b in benchmarks if any(metric_kind(v.metrics.get(b, {})) == kind for v in views)]
    if not present:
        return None
    series = {}
    for v in views:
        values = {b: value(v.metrics[b]) for b in present if metric_kind(v.metrics.get(b, {})) == kind}
        if any(number(x) is not None for x in values.values()):
            series[v.key] = values
    if not series:
        return None
    figure = _new_figure(max(4.5, 1.2 * len(present) * max(1, len(series)) ** 0.5 + 2), 3.6)
    ax = figure.add_subplot()
    _grouped_bars(ax, present, series, ylabel)
    ax.set_ylim(0, 100)
    return figure


def _background_figure(benchmarks: Sequence[str], views: Sequence[ModelView]) -> Figure | None:
    series = {}
    for v in views:
        for b in benchmarks:
            metrics = v.metrics.get(b, {})
            if metric_kind(metrics) == "background" and metrics.get("accuracy"):
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


def _line_figure(
    data: Mapping[str, Mapping[str, Any]],
    xy: Callable[[Mapping[str, Any]], tuple[Any, Any]],
    xlabel: str,
    ylabel: str,
    title: str,
) -> Figure | None:
    figure = _new_figure(5.0, 3.6)
    ax = figure.add_subplot()
    drawn = 0
    for (key, probe), color in zip(data.items(), _colors(len(data)), strict=True):
        x, y = xy(probe)
        x, y = as_float_array(x), as_float_array(y)
        if x.size and x.shape == y.shape:
            ax.plot(x, y, marker="o", markersize=4, label=key, color=color)
            drawn += 1
    if not drawn:
        return None
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize="small")
    ax.grid(alpha=0.3)
    return figure


def _occlusion(data: Mapping[str, Mapping[str, Any]]) -> Figure | None:
    figure = _line_figure(
        data,
        lambda p: (100 * as_float_array(p.get("ratios")), 100 * as_float_array(p.get("accuracy"))),
        "masked image area (%)",
        "top-1 accuracy (%)",
        "Occlusion (random patch drop)",
    )
    if figure is not None:
        figure.axes[0].set_ylim(0, 100)
    return figure


def _frequency_noise(data: Mapping[str, Mapping[str, Any]]) -> Figure | None:
    figure = _line_figure(
        data,
        lambda p: (p.get("frequencies"), -100 * as_float_array(p.get("accuracy_drop"))),
        "noise frequency (× π)",
        "Δ accuracy (pp)",
        "Band-passed noise",
    )
    if figure is not None:
        figure.axes[0].axhline(0.0, color="gray", linewidth=0.8)
    return figure


def _pgd(data: Mapping[str, Mapping[str, Any]]) -> Figure | None:
    figure = _new_figure(5.0, 3.6)
    ax = figure.add_subplot()
    drawn = 0
    for (key, probe), color in zip(data.items(), _colors(len(data)), strict=True):
        mean = as_float_array(probe.get("loss_mean"))
        std = as_float_array(probe.get("loss_std"))
        if not mean.size:
            continue
        steps = np.arange(mean.size)
        ax.plot(steps, mean, marker="o", markersize=3, label=key, color=color)
        if std.shape == mean.shape:
            ax.fill_between(steps, mean - std, mean + std, color=color, alpha=0.2, linewidth=0)
        drawn += 1
    if not drawn:
        return None
    ax.set_xlabel("attack step")
    ax.set_ylabel("cross-entropy")
    ax.set_title("PGD loss progression")
    ax.legend(fontsize="small")
    ax.grid(alpha=0.3)
    return figure


def _depth_figure(
    data: Mapping[str, Mapping[str, Any]], field: str, ylabel: str, title: str
) -> Figure | None:
    return _line_figure(
        data,
        lambda p: (_depth_axis(len(p.get(field) or [])), p.get(field)),
        "normalised depth",
        ylabel,
        title,
    )


def _map_panels(
    data: Mapping[str, Any],
    title: str,
    colorbar: str,
    cmap: str = "jet",
    limits: tuple[float, float] | None = None,
    extent: Callable[[np.ndarray], tuple[float, float, float, float] | None] = lambda _: None,
    labels: tuple[str, str] = ("", ""),
) -> Figure | None:
    """One panel per model of a 2D map, on one shared colour scale with one colorbar."""
    maps = {key: m for key, m in data.items() if m is not None and m.ndim == 2 and m.size}
    if not maps:
        return None
    if limits is None:
        finite = np.concatenate([m[np.isfinite(m)] for m in maps.values()])
        low, high = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
        limits = (low, high if high > low else low + 1.0)
    figure, axes = _panels(len(maps))
    image = None
    for ax, (key, values) in zip(axes, maps.items(), strict=True):
        shown = np.where(np.isfinite(values), values, limits[0])
        image = ax.imshow(
            shown, cmap=cmap, vmin=limits[0], vmax=limits[1], extent=extent(values), interpolation="nearest"
        )
        ax.set_title(key, fontsize="medium")
        ax.set_xlabel(labels[0])
        ax.set_ylabel(labels[1])
    figure.colorbar(image, ax=axes, label=colorbar, shrink=0.9)
    figure.suptitle(title)
    return figure


def _fourier_heatmap(data: Mapping[str, Mapping[str, Any]]) -> Figure | None:
    def extent(values: np.ndarray) -> tuple[float, float, float, float]:
        half = (values.shape[0] - 1) // 2
        return (-half - 0.5, half + 0.5, half + 0.5, -half - 0.5)

    return _map_panels(
        {key: as_float_array(p.get("error_map")) for key, p in data.items()},
        "Fourier heat map",
        "top-1 error",
        limits=(0.0, 1.0),
        extent=extent,
        labels=("horizontal frequency", "vertical frequency"),
    )


def _hessian(data: Mapping[str, Mapping[str, Any]]) -> dict[str, Figure]:
    figures = {}
    spectra = {}
    for key, probe in data.items():
        top = as_float_array(probe.get("eigenvalues"))
        bottom = as_float_array(probe.get("bottom_eigenvalues"))
        if probe.get("method") == "pyhessian":  # Park & Kim pool the top-k of every batch (their issue #12)
            top = top.ravel()
        else:
            top = top[:, 0] if top.ndim == 2 and top.shape[1] else top.ravel()
        bottom = bottom[:, 0] if bottom.ndim == 2 and bottom.shape[1] else bottom.ravel()
        top, bottom = top[np.isfinite(top)], bottom[np.isfinite(bottom)]
        if top.size or bottom.size:
            spectra[key] = (top, bottom)
    if spectra:
        figure = _new_figure(5.5, 3.8)
        ax = figure.add_subplot()
        everything = np.concatenate([np.concatenate(pair) for pair in spectra.values()])
        low, high = float(everything.min()), float(everything.max())
        pad = 0.05 * (high - low) + 1e-9
        bins = np.linspace(low - pad, high + pad, max(6, min(40, everything.size)))
        for (key, (top, bottom)), color in zip(spectra.items(), _colors(len(spectra)), strict=True):
            if top.size:
                ax.hist(top, bins=bins, alpha=0.55, color=color, label=f"{key} max")
            if bottom.size:
                ax.hist(
                    bottom, bins=bins, alpha=0.9, color=color, histtype="step", hatch="//", label=f"{key} min"
                )
        if low < 0:
            ax.axvspan(low - pad, 0.0, color="red", alpha=0.08, linewidth=0)
        ax.axvline(0.0, color="red", linewidth=0.8)
        ax.set_xlabel("Hessian eigenvalue (per mini-batch)")
        ax.set_ylabel("count")
        ax.set_title("Hessian eigenvalue spectrum")
        ax.legend(fontsize="x-small")
        figures["hessian_spectrum"] = figure
    densities = {}
    for key, probe in data.items():
        nodes = as_float_array(probe.get("density_nodes"))
        weights = as_float_array(probe.get("density_weights"))
        if nodes.ndim == 2 and nodes.shape == weights.shape and np.isfinite(nodes).any():
            densities[key] = (nodes, weights)
    if densities:
        figure = _new_figure(5.5, 3.8)
        ax = figure.add_subplot()
        for (key, (nodes, weights)), color in zip(densities.items(), _colors(len(densities)), strict=True):
            grid, values = _slq_density(nodes, weights)
            floor = max(float(values.max()) * 1e-6, 1e-300)
            ax.semilogy(grid, np.maximum(values, floor), label=key, color=color)
        ax.axvline(0.0, color="red", linewidth=0.8)
        ax.set_xlabel("eigenvalue")
        ax.set_ylabel("density")
        ax.set_title("Hessian eigenvalue density")
        ax.legend(fontsize="small")
        figures["hessian_density"] = figure
    return figures


def _slq_density(nodes: np.ndarray, weights: np.ndarray, points: int = 400) -> tuple[np.ndarray, np.ndarray]:
    """The batch-averaged SLQ density on a grid, through `HessianSpectrumResult.density` (NaN nodes = padding)."""
    import torch

    from ..probes.hessian import HessianSpectrumResult

    finite = nodes[np.isfinite(nodes)]
    low, high = float(finite.min()), float(finite.max())
    pad = 0.05 * (high - low) + 1e-12
    grid = torch.linspace(low - pad, high + pad, points, dtype=torch.float64)
    result = HessianSpectrumResult(
        eigenvalues=torch.zeros(nodes.shape[0], 1),
        bottom_eigenvalues=torch.zeros(nodes.shape[0], 1),
        batch_sizes=[],
        method="",
        iterations=0,
        weight_decay=0.0,
        density_nodes=torch.from_numpy(nodes),
        density_weights=torch.from_numpy(np.nan_to_num(weights)),
    )
    return grid.numpy(), result.density(grid).numpy()


def _lesion(data: Mapping[str, Mapping[str, Any]]) -> Figure | None:
    from matplotlib.patches import Patch

    from ..probes.lesion import KIND_COLORS

    usable = {key: p for key, p in data.items() if p.get("accuracy_drop")}
    if not usable:
        return None
    longest = max(len(p["accuracy_drop"]) for p in usable.values())
    figure, axes = _panels(len(usable), panel=(max(3.6, 0.22 * longest + 1.5), 3.2))
    for ax, (key, probe) in zip(axes, usable.items(), strict=True):
        drops = 100.0 * as_float_array(probe["accuracy_drop"])
        kinds = list(probe.get("kinds") or ["unit"] * drops.size)
        ax.bar(np.arange(drops.size), drops, color=[KIND_COLORS.get(k, "tab:gray") for k in kinds])
        ax.axhline(0.0, color="black", linewidth=0.8)
        ax.set_xlabel("removed unit (depth)")
        ax.set_ylabel("accuracy drop (pp)")
        ax.set_title(key, fontsize="medium")
        present = [k for k in KIND_COLORS if k in kinds]
        if present:
            ax.legend(
                handles=[Patch(color=KIND_COLORS[k], label=k.upper()) for k in present], fontsize="x-small"
            )
    figure.suptitle("Lesion study")
    return figure


def _loss_landscape(data: Mapping[str, Mapping[str, Any]]) -> Figure | None:
    surfaces = {}
    for key, probe in data.items():
        x, y, loss = (as_float_array(probe.get(name)) for name in ("x", "y", "loss"))
        if loss.ndim == 2 and loss.shape == (y.size, x.size) and loss.size > 1 and np.isfinite(loss).any():
            surfaces[key] = (x, y, loss)
    if not surfaces:
        return None
    figure, axes = _panels(len(surfaces))
    for ax, (key, (x, y, loss)) in zip(axes, surfaces.items(), strict=True):
        xs, ys = np.meshgrid(x, y)
        finite = loss[np.isfinite(loss)]
        levels = 15 if np.ptp(finite) > 0 and min(loss.shape) > 1 else None
        if levels is None:
            ax.plot(x if x.size > 1 else y, loss.ravel(), marker="o")
        else:
            contours = ax.contour(xs, ys, loss, levels=levels, cmap="viridis")
            ax.clabel(contours, inline=True, fontsize=6, fmt="%.2f")
            ax.plot([0.0], [0.0], marker="+", color="black")
            ax.set_aspect("equal", adjustable="box")
        ax.set_title(key, fontsize="medium")
        ax.set_xlabel("direction 1")
        ax.set_ylabel("direction 2")
    figure.suptitle("Loss landscape")
    return figure


def _overlays(data: Mapping[str, Mapping[str, Any]], field: str, title: str) -> Figure | None:
    shown = {}
    for key, probe in data.items():
        heat = _first_map(probe.get(field))
        if heat is not None:
            shown[key] = (heat, _image_hwc(probe.get("image")))
    if not shown:
        return None
    figure, axes = _panels(len(shown), panel=(3.0, 3.0))
    for ax, (key, (heat, image)) in zip(axes, shown.items(), strict=True):
        if image is not None:
            height, width = image.shape[:2]
            ax.imshow(image)
            ax.imshow(
                heat,
                cmap="jet",
                alpha=0.5,
                vmin=0.0,
                vmax=1.0,
                extent=(-0.5, width - 0.5, height - 0.5, -0.5),
            )
        else:
            ax.imshow(heat, cmap="jet", vmin=0.0, vmax=1.0)
        ax.set_title(key, fontsize="medium")
        ax.set_axis_off()
    figure.suptitle(title)
    return figure


def _probe_figures(views: Sequence[ModelView]) -> dict[str, Figure]:
    figures: dict[str, Figure | None] = {}
    if data := _probe_data(views, "occlusion"):
        figures["occlusion"] = _occlusion(data)
    if data := _probe_data(views, "fourier_heatmap"):
        figures["fourier_heatmap"] = _fourier_heatmap(data)
    if data := _probe_data(views, "deepfool"):
        figures["deepfool_spectrum"] = _map_panels(
            {key: as_float_array(p.get("energy_db")) for key, p in data.items()},
            "DeepFool perturbation energy spectrum",
            "energy (dB)",
            labels=("horizontal DCT frequency", "vertical DCT frequency"),
        )
    if data := _probe_data(views, "pgd"):
        figures["pgd_loss"] = _pgd(data)
    if data := _probe_data(views, "hessian"):
        figures.update(_hessian(data))
    if data := _probe_data(views, "feature_fourier"):
        figures["feature_fourier"] = _depth_figure(
            data, "delta_log_amplitude", "Δ log amplitude (high freq.)", "Feature-map Fourier analysis"
        )
    if data := _probe_data(views, "feature_variance"):
        figures["feature_variance"] = _depth_figure(
            data, "variance", "feature map variance", "Feature-map variance"
        )
    if data := _probe_data(views, "frequency_noise"):
        figures["frequency_noise"] = _frequency_noise(data)
    if data := _probe_data(views, "lesion"):
        figures["lesion"] = _lesion(data)
    if data := _probe_data(views, "loss_landscape"):
        figures["loss_landscape"] = _loss_landscape(data)
    if data := _probe_data(views, "cka"):
        figures["cka"] = _map_panels(
            {key: as_float_array(p.get("cka")) for key, p in data.items()},
            "Linear CKA",
            "CKA",
            cmap="magma",
            limits=(0.0, 1.0),
            labels=("layer", "layer"),
        )
    if data := _probe_data(views, "attention"):
        figures["attention"] = _overlays(data, "maps", "Attention maps")
    if data := _probe_data(views, "gradcam"):
        figures["gradcam"] = _overlays(data, "cams", "Grad-CAM")
    return {name: figure for name, figure in figures.items() if figure is not None}


# ---------------------------------------------------------------------------------------------------------------
# Entry point


def build_figures(results: Sequence[Mapping[str, Any]]) -> dict[str, Figure]:
    """Figure name -> matplotlib Figure (not saved) for everything present in `results` (a list of runs)."""
    views = model_views(results)
    benchmarks = benchmark_names(results, views)
    figures: dict[str, Figure | None] = {}
    for benchmark in benchmarks:
        figures.update(_corruption_figures(benchmark, views))
        figures.update(_perturbation_figures(benchmark, views))
    figures[MASKED_FIGURE] = _bars_over_benchmarks(
        benchmarks, views, "masked", masked_top1_percent, "top-1 (%)"
    )
    figures[OOD_FIGURE] = _bars_over_benchmarks(
        benchmarks,
        views,
        "ood",
        lambda m: None if number(m.get("aupr")) is None else 100.0 * m["aupr"],
        "AUPR (%)",
    )
    figures[BACKGROUND_FIGURE] = _background_figure(benchmarks, views)
    figures.update(_probe_figures(views))
    return {name: figure for name, figure in figures.items() if figure is not None}


def write_figures(results: Mapping[str, Any] | Sequence[Mapping[str, Any]], out_dir: Path) -> dict[str, str]:
    """Draw every figure whose data is present and save it as `out_dir/figures/<name>.png` (atomically, see
    `store`). Returns name -> the path relative to `out_dir` ("figures/<name>.png").

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
        written[name] = f"{FIGURES_DIR}/{name}.png"
    return written


__all__ = [
    "CAPTIONS",
    "PROBE_FIGURES",
    "ModelView",
    "benchmark_figure_name",
    "build_figures",
    "caption",
    "metric_kind",
    "model_views",
    "probe_kind",
    "unique_model_keys",
    "write_figures",
]
