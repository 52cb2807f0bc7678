# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The report of one or more evaluation runs: report.md and a self-contained report.html (figures inlined).

Models of every run are shown side by side, one column per model: a summary table, the data sources (generated vs
released), one table per benchmark (clean accuracy and calibration, ImageNet-C mCE and Paul & Chen's severity-5
numbers, ImageNet-P flip rates, ImageNet-A/R/O, ImageNet-9) and the probes' headline numbers, with the figures of
`figures.py`. Units are stated in every row label; percentages carry two decimals.
"""

from __future__ import annotations

import base64
import copy
import html
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..atomic_files import write_text_atomic
from ..metrics import EXTRA_CORRUPTIONS, STANDARD_CORRUPTIONS
from .figures import (
    BACKGROUND_FIGURE,
    MASKED_FIGURE,
    OOD_FIGURE,
    PROBE_FIGURES,
    ModelView,
    as_float_array,
    benchmark_figure_name,
    benchmark_names,
    caption,
    corruption_top1_by_severity,
    masked_top1_percent,
    metric_kind,
    model_views,
    number,
    ordered_union,
    probe_kind,
    probe_names,
    run_names,
    severity5_top1,
    unique_model_keys,
    write_figures,
)
from .protocols import CLASS_MASK_PROTOCOLS
from .results import check_schema

RESULTS_FILE = "results.json"
MISSING = "—"

# Sections of results.json keyed by model key (renamed together when a key is disambiguated).
_MODEL_KEYED_SECTIONS = ("metrics", "probes", "predictions", "timing", "summary")


# ---------------------------------------------------------------------------------------------------------------
# Loading and merging


def _describe(result: Mapping[str, Any], index: int) -> str:
    source = result.get("_source")
    return f"{source}" if source else f"results[{index}]"


def _check(result: Any, where: str) -> None:
    if not isinstance(result, Mapping):
        raise ValueError(f"{where}: a results.json holds a JSON object, got {type(result).__name__}.")
    check_schema(dict(result), where)


def load_results(paths: Sequence[Path | str]) -> list[dict]:
    """Read results.json files: each path is a run folder holding results.json, or the file itself.

    Each dict gets "_source" (the file's path), which names the run in errors and disambiguates model keys."""
    if isinstance(paths, str | os.PathLike):
        paths = [paths]
    if not paths:
        raise ValueError("No results given: pass one or more run folders (or results.json files).")
    loaded = []
    for given in paths:
        path = Path(given)
        file = path / RESULTS_FILE if path.is_dir() else path
        if not file.is_file():
            where = f"{path} holds no {RESULTS_FILE}" if path.is_dir() else f"{path} does not exist"
            raise FileNotFoundError(f"No results: {where}. Pass a run folder or its {RESULTS_FILE}.")
        try:
            result = json.loads(file.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise ValueError(f"{file}: not valid JSON ({error}).") from error
        _check(result, str(file))
        result["_source"] = str(file)
        loaded.append(result)
    return loaded


def merge_results(results: Sequence[Mapping[str, Any]]) -> list[dict]:
    """Several runs' results, ready to show side by side: each is checked (schema name and version; ValueError
    naming the file) and copied, and a model key found in more than one run becomes "<key>@<run folder name>"
    everywhere in its run. Merging merged results changes nothing."""
    if isinstance(results, Mapping):
        results = [results]
    results = list(results)
    if not results:
        raise ValueError("No results to report.")
    for index, result in enumerate(results):
        _check(result, _describe(result, index))
    merged = []
    for result, renamed in zip(results, unique_model_keys(results), strict=True):
        copied = copy.deepcopy(dict(result))
        if any(old != new for old, new in renamed.items()):
            copied["models"] = [
                {**model, "key": renamed[str(model["key"])], "run_key": model["key"]}
                for model in copied["models"]
            ]
            for section in _MODEL_KEYED_SECTIONS:
                if isinstance(copied.get(section), Mapping):
                    copied[section] = {renamed.get(k, k): v for k, v in copied[section].items()}
        merged.append(copied)
    return merged


# ---------------------------------------------------------------------------------------------------------------
# Formatting


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


def _plain(value: Any) -> str:
    """A value of an unrecognised metric dict: numbers formatted, text as it is, containers summarised."""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping | list):
        return f"({len(value)} entries)"
    return fmt_number(value)


def fmt_count(value: Any) -> str:
    return f"{int(value):,}" if number(value) is not None else MISSING


# ---------------------------------------------------------------------------------------------------------------
# The document: blocks rendered to Markdown and to HTML


@dataclass(frozen=True)
class Heading:
    level: int
    text: str


@dataclass(frozen=True)
class Paragraph:
    text: str


@dataclass(frozen=True)
class Table:
    headers: list[str]
    rows: list[list[str]]
    title: str | None = None
    numeric: bool = True  # right-align every column but the first


@dataclass(frozen=True)
class FigureBlock:
    name: str
    path: str
    caption: str


Block = Heading | Paragraph | Table | FigureBlock
Row = tuple[str, Callable[[Mapping[str, Any]], str]]


def _model_table(
    views: Sequence[ModelView],
    data: Callable[[ModelView], Mapping[str, Any] | None],
    rows: Sequence[Row],
    first: str,
) -> Table | None:
    """One row per (label, formatter), one column per model that has data; rows empty for every model dropped."""
    columns = [(v.key, data(v)) for v in views]
    columns = [(key, value) for key, value in columns if value]
    if not columns:
        return None
    body = []
    for label, cell in rows:
        cells = [cell(value) for _, value in columns]
        if any(c != MISSING for c in cells):
            body.append([label, *cells])
    if not body:
        return None
    return Table([first, *(key for key, _ in columns)], body)


def _named_value_table(
    views: Sequence[ModelView],
    values: Callable[[ModelView], Mapping[str, Any] | None],
    first: str,
    cell: Callable[[Any], str],
    title: str | None = None,
) -> Table | None:
    """Rows = the union of the names (in order), columns = models: e.g. CE per corruption."""
    columns = [(v.key, values(v)) for v in views]
    columns = [(key, value) for key, value in columns if value]
    if not columns:
        return None
    names = ordered_union([list(value) for _, value in columns])
    rows = [[str(name), *(cell(value.get(name)) for _, value in columns)] for name in names]
    return Table([first, *(key for key, _ in columns)], rows, title)


def _get(*path: str) -> Callable[[Mapping[str, Any]], Any]:
    def read(data: Mapping[str, Any]) -> Any:
        for key in path:
            if not isinstance(data, Mapping):
                return None
            data = data.get(key)
        return data

    return read


def _pct(*path: str, scale: float = 1.0) -> Callable[[Mapping[str, Any]], str]:
    return lambda d: fmt_percent(_get(*path)(d), scale)


def _num(*path: str) -> Callable[[Mapping[str, Any]], str]:
    return lambda d: fmt_number(_get(*path)(d))


# ---------------------------------------------------------------------------------------------------------------
# Derived numbers (the runner stores most; these fall back to the raw tables when it did not)


def _mean_top1(metrics: Mapping[str, Any]) -> float | None:
    if number(metrics.get("mean_top1")) is not None:
        return float(metrics["mean_top1"])
    cells = [v for table in corruption_top1_by_severity(metrics).values() for v in table.values()]
    return float(np.mean(cells)) if cells else None


def _severity5_mean(metrics: Mapping[str, Any]) -> float | None:
    if number(metrics.get("severity5_top1")) is not None:
        return float(metrics["severity5_top1"])
    values = list(severity5_top1(metrics).values())
    return float(np.mean(values)) if values else None


def _contrast_s5(metrics: Mapping[str, Any]) -> float | None:
    if number(metrics.get("contrast_s5_top1")) is not None:
        return float(metrics["contrast_s5_top1"])
    return severity5_top1(metrics).get("contrast")


def _probe_values(kind: str, probe: Mapping[str, Any]) -> dict[str, Any]:
    """The headline numbers of one probe dict: label (with unit) -> formatted value."""
    out: dict[str, Any] = {}
    if "skipped" in probe:
        return {"skipped": str(probe["skipped"])}
    if kind == "occlusion":
        for ratio, accuracy in zip(probe.get("ratios") or [], probe.get("accuracy") or [], strict=False):
            out[f"top-1 (%) at {fmt_percent(ratio, 100, 0)} % masked"] = fmt_percent(accuracy, 100)
    elif kind == "fourier_heatmap":
        error_map = as_float_array(probe.get("error_map"))
        finite = error_map[np.isfinite(error_map)] if error_map.size else error_map
        out["mean error over the map (%)"] = fmt_percent(finite.mean() if finite.size else None, 100)
        out["max error (%)"] = fmt_percent(finite.max() if finite.size else None, 100)
        out["clean error (%)"] = fmt_percent(probe.get("clean_error"), 100)
        out["eps (L2)"] = fmt_number(probe.get("eps"))
    elif kind == "deepfool":
        out["success rate (%)"] = fmt_percent(probe.get("success_rate"), 100)
        out["mean L2 of the perturbation"] = fmt_number(probe.get("mean_l2"))
    elif kind == "pgd":
        mean = as_float_array(probe.get("loss_mean"))
        std = as_float_array(probe.get("loss_std"))
        notebook = probe.get("record") == "paul-chen-notebook"
        out["loss recorded"] = (
            "−CE before each step (paul-chen-notebook)" if notebook else "CE at t = 0..steps"
        )
        out["initial loss"] = fmt_number(mean[0] if mean.size else None)
        final = fmt_number(mean[-1] if mean.size else None)
        if std.size == mean.size and mean.size:
            final = f"{final} ± {fmt_number(std[-1])}"
        out["final loss (mean ± std)"] = final
        out["success rate (%)"] = fmt_percent(probe.get("success_rate"), 100)
        out["eps (L∞) / steps"] = f"{fmt_number(probe.get('eps'))} / {fmt_count(probe.get('steps'))}"
    elif kind == "frequency_noise":
        out["clean top-1 (%)"] = fmt_percent(probe.get("clean_accuracy"), 100)
        for frequency, drop in zip(
            probe.get("frequencies") or [], probe.get("accuracy_drop") or [], strict=False
        ):
            out[f"accuracy drop (pp) at {fmt_number(frequency)}π"] = fmt_percent(drop, 100)
    elif kind == "hessian":
        top = as_float_array(probe.get("eigenvalues"))
        bottom = as_float_array(probe.get("bottom_eigenvalues"))
        top, bottom = top[np.isfinite(top)], bottom[np.isfinite(bottom)]
        out["top eigenvalue (max over batches)"] = fmt_number(top.max() if top.size else None)
        out["most negative eigenvalue"] = fmt_number(bottom.min() if bottom.size else None)
        out["mini-batches"] = fmt_count(len(probe.get("batch_sizes") or []) or None)
    elif kind == "feature_fourier":
        deltas = probe.get("delta_log_amplitude") or []
        finite = [d for d in deltas if number(d) is not None]
        out["Δ log amplitude, last layer"] = fmt_number(finite[-1] if finite else None)
        out["layers"] = fmt_count(len(deltas) or None)
    elif kind == "feature_variance":
        variance = [v for v in probe.get("variance") or [] if number(v) is not None]
        out["variance, last layer"] = fmt_number(variance[-1] if variance else None)
    elif kind == "lesion":
        drops = probe.get("accuracy_drop") or []
        out["intact top-1 (%)"] = fmt_percent(probe.get("baseline_accuracy"), 100)
        if any(number(d) is not None for d in drops):
            biggest = int(np.nanargmax(as_float_array(drops)))
            units = probe.get("units") or []
            unit = f" ({units[biggest]})" if biggest < len(units) else ""
            out["biggest drop (pp)"] = f"{fmt_percent(drops[biggest], 100)}{unit}"
    elif kind == "loss_landscape":
        loss = as_float_array(probe.get("loss"))
        finite = loss[np.isfinite(loss)] if loss.size else loss
        out["center loss"] = fmt_number(probe.get("center_loss"))
        out["max loss on the grid"] = fmt_number(finite.max() if finite.size else None)
    elif kind == "cka":
        matrix = as_float_array(probe.get("cka"))
        if matrix.ndim == 2 and matrix.size > 1:
            off = matrix[~np.eye(*matrix.shape, dtype=bool)]
            out["mean CKA between different layers"] = fmt_number(np.nanmean(off) if off.size else None)
    elif kind in ("attention", "gradcam"):
        out["method"] = str(probe.get("method") or MISSING)
    images = probe.get("num_images", probe.get("num_samples"))
    if images is None and kind == "hessian":
        images = sum(probe.get("batch_sizes") or []) or None
    if images is None and probe.get("success") is not None:  # DeepFool: one entry per image
        images = len(probe["success"])
    if images is not None:
        out["images"] = fmt_count(images)
    return out


# ---------------------------------------------------------------------------------------------------------------
# Sections


def _header(results: Sequence[Mapping[str, Any]]) -> list[Block]:
    suites = ordered_union([[str((r.get("suite") or {}).get("name") or MISSING)] for r in results])
    blocks: list[Block] = [Heading(1, f"hf_vitrobust report — suite {', '.join(suites)}")]
    columns = [f"run {name}" for name in run_names(results)] if len(results) > 1 else ["value"]

    def env(result: Mapping[str, Any], key: str) -> str:
        environment = result.get("environment") or {}
        value = environment.get(key, (environment.get("libraries") or {}).get(key))
        return MISSING if value in (None, "") else str(value)

    def device(result: Mapping[str, Any]) -> str:
        settings = result.get("settings") or {}
        devices = (result.get("environment") or {}).get("devices") or []
        parts = [str(settings.get("device") or MISSING)]
        if devices and [str(d) for d in devices] != parts:
            parts.append(f"({', '.join(map(str, devices))})")
        return " ".join(parts)

    def setting(key: str) -> Callable[[Mapping[str, Any]], str]:
        return lambda r: MISSING if (r.get("settings") or {}).get(key) is None else str(r["settings"][key])

    fields: list[tuple[str, Callable[[Mapping[str, Any]], str]]] = [
        ("suite", lambda r: str((r.get("suite") or {}).get("name") or MISSING)),
        ("created (UTC)", lambda r: str(r.get("created") or MISSING)),
        ("hf_vitrobust", lambda r: str(r.get("hf_vitrobust_version") or MISSING)),
        ("device", device),
        ("torch", lambda r: env(r, "torch")),
        ("CUDA", lambda r: env(r, "cuda")),
        ("transformers / timm", lambda r: f"{env(r, 'transformers')} / {env(r, 'timm')}"),
        ("python / platform", lambda r: f"{env(r, 'python')} / {env(r, 'platform')}"),
        ("seed", lambda r: MISSING if r.get("seed") is None else str(r["seed"])),
        ("precision", setting("precision")),
        ("batch size", setting("batch_size")),
        ("processes", setting("num_processes")),
        ("sample limit", lambda r: str((r.get("settings") or {}).get("limit") or "none")),
    ]
    rows = [[label, *(read(r) for r in results)] for label, read in fields]
    blocks.append(Table(["", *columns], rows, numeric=False))
    descriptions = [str((r.get("suite") or {}).get("description") or "") for r in results]
    if any(descriptions):
        blocks.append(Paragraph(" ".join(dict.fromkeys(d for d in descriptions if d))))
    return blocks


def _source_text(source: Mapping[str, Any]) -> str:
    location = source.get("location") or MISSING
    text = f"{source.get('kind', 'source')}: {location}"
    if source.get("revision"):
        text += f" @ {source['revision']}"
    return text


def _data_sources(results: Sequence[Mapping[str, Any]]) -> list[Block]:
    rows = []
    runs = run_names(results)
    for run, result in zip(runs, results, strict=True):
        for name, bench in (result.get("benchmarks") or {}).items():
            source = bench.get("source") or {}
            generated = bench.get("generated", source.get("generated"))
            if generated:
                clean = source.get("clean") or {}
                origin = f" from {clean.get('location')}" if clean.get("location") else ""
                data = f"GENERATED on the fly{origin} (not the released files)"
            elif generated is None:
                data = MISSING
            else:
                data = "released"
            cells = (source.get("unavailable") or {}).get("cells") or []
            if cells:
                corruptions = ", ".join(dict.fromkeys(cell.split("/")[0] for cell in cells))
                data += f"; not published by the source, left out: {len(cells)} parts ({corruptions})"
            skipped = bench.get("skipped") or {}
            count = int(skipped.get("num_skipped") or 0)
            reasons = ", ".join(f"{reason}: {n}" for reason, n in (skipped.get("skipped") or {}).items())
            skip_text = f"{count} ({reasons})" if count and reasons else str(count)
            converted = skipped.get("converted_to_rgb") or {}
            if converted:
                skip_text += "; converted to RGB: " + ", ".join(
                    f"{mode}: {n}" for mode, n in converted.items()
                )
            row = [name, _source_text(source), data, fmt_count(bench.get("num_samples")), skip_text]
            rows.append(([run] if len(results) > 1 else []) + row)
    if not rows:
        return []
    headers = (["run"] if len(results) > 1 else []) + [
        "benchmark",
        "source",
        "images",
        "samples",
        "skipped (reasons)",
    ]
    return [Heading(2, "Data sources"), Table(headers, rows, numeric=False)]


def _schema_1_masked_top1(metrics: Mapping[str, Any], field: str = "top1") -> str:
    """ImageNet-A/R top-k of a run that recorded one class mask only (schema 1: the 200-class argmax)."""
    return MISSING if "protocols" in metrics else fmt_percent(masked_top1_percent(metrics, field))


def _protocol_text(record: Mapping[str, Any]) -> str:
    parts = [
        f"{part}: {record[part]}" for part in ("class_mask", "mce", "release_encoding") if record.get(part)
    ]
    for key in ("score", "baseline"):
        if record.get(key):
            parts.append(f"{key}: {record[key]}")
    return "; ".join(parts) or MISSING


def _protocols(results: Sequence[Mapping[str, Any]]) -> list[Block]:
    """Which protocol each benchmark ran under, per model (docs/protocols.md); schema-1 runs recorded none."""
    runs = run_names(results)
    rows, old = [], []
    for run, result in zip(runs, results, strict=True):
        if int(result.get("schema_version") or 1) < 2:
            old.append(run)
            continue
        for name, bench in (result.get("benchmarks") or {}).items():
            record = bench.get("protocol") or {}
            for model, given in (record.get("models") or {}).items():
                size = given.get("input_size")
                applied = str(given.get("applied") or MISSING)
                if given.get("requested") and given.get("requested") != applied:
                    applied += f" (asked: {given['requested']})"
                row = [
                    name,
                    model,
                    applied,
                    "×".join(map(str, size)) if size else MISSING,
                    _protocol_text(record),
                    str(given.get("note") or ""),
                ]
                rows.append(([run] if len(results) > 1 else []) + row)
    blocks: list[Block] = []
    if rows or old:
        blocks.append(Heading(2, "Protocols"))
    if rows:
        headers = (["run"] if len(results) > 1 else []) + [
            "benchmark",
            "model",
            "preprocessing",
            "input",
            "scoring",
            "note",
        ]
        blocks.append(Table(headers, rows, numeric=False))
    if old:
        blocks.append(
            Paragraph(
                f"{', '.join(old)}: results schema 1, which recorded no protocol. Such runs fed ImageNet-C, -P, -9 "
                "and CIFAR through each model's own resize and crop (not as released), scored ImageNet-A/R with "
                "the 200-class argmax and generated ImageNet-C without the release's JPEG step."
            )
        )
    return blocks


def _models(views: Sequence[ModelView], results: Sequence[Mapping[str, Any]]) -> list[Block]:
    runs = run_names(results)
    rows = []
    for v in views:
        info = v.info
        size = info.get("input_size")
        params = number(info.get("num_parameters"))
        row = [
            v.key,
            str(info.get("name") or MISSING),
            str(info.get("spec") or MISSING),
            str(info.get("kind") or MISSING),
            fmt_count(info.get("num_classes")),
            "×".join(map(str, size)) if size else MISSING,
            MISSING if params is None else f"{params / 1e6:.2f}",
        ]
        rows.append(row + ([runs[v.run]] if len(results) > 1 else []))
    headers = ["model", "name", "spec", "kind", "classes", "input", "parameters (M)"]
    return [Heading(2, "Models"), Table(headers + (["run"] if len(results) > 1 else []), rows, numeric=False)]


def _summary(views: Sequence[ModelView], benchmarks: Sequence[str], probes: Sequence[str]) -> list[Block]:
    rows: list[Row] = []
    for bench in benchmarks:
        kinds = {metric_kind(v.metrics[bench]) for v in views if bench in v.metrics}
        kind = next(iter(kinds)) if len(kinds) == 1 else None

        def at(read: Callable, bench: str = bench) -> Callable[[Mapping[str, Any]], str]:
            return lambda metrics: read(metrics.get(bench) or {})

        if kind == "clean":
            rows.append((f"{bench} top-1 (%)", at(_pct("top1"))))
            rows.append((f"{bench} ECE (%)", at(_pct("calibration", "ece", scale=100))))
        elif kind == "corruption":
            rows.append((f"{bench} mCE (%, lower is better; alexnet-15)", at(_pct("mce"))))
            rows.append(
                (f"{bench} mCE (%, unnormalized-19)", at(_pct("protocols", "unnormalized-19", "mce")))
            )
            rows.append((f"{bench} mean top-1 (%)", at(lambda m: fmt_percent(_mean_top1(m)))))
            rows.append((f"{bench} severity-5 mean top-1 (%)", at(lambda m: fmt_percent(_severity5_mean(m)))))
        elif kind == "masked":
            for mask in CLASS_MASK_PROTOCOLS:
                rows.append((f"{bench} top-1 (%, {mask})", at(_pct("protocols", mask, "top1"))))
            rows.append((f"{bench} top-1 (%)", at(_schema_1_masked_top1)))
        elif kind == "ood":
            rows.append((f"{bench} AUPR (%)", at(_pct("aupr", scale=100))))
        elif kind == "perturbation":
            rows.append((f"{bench} mFR, unnormalised (%)", at(_pct("mfr_unnormalized", scale=100))))
        elif kind == "background":
            rows.append((f"{bench} BG-gap (pp)", at(_pct("bg_gap", scale=100))))
    headline = {
        "occlusion": None,
        "fourier_heatmap": "mean error over the map (%)",
        "deepfool": "mean L2 of the perturbation",
        "pgd": "final loss (mean ± std)",
        "hessian": "top eigenvalue (max over batches)",
        "feature_fourier": "Δ log amplitude, last layer",
        "lesion": "biggest drop (pp)",
        "loss_landscape": "center loss",
    }
    for name in probes:
        kinds = {probe_kind(name, v.probes[name]) for v in views if name in v.probes}
        kind = next(iter(kinds)) if len(kinds) == 1 else None
        if kind not in headline:
            continue
        label = headline[kind]

        def probe_cell(
            metrics: Mapping[str, Any], name: str = name, kind: str = kind, label: str | None = label
        ) -> str:
            probe = metrics.get(name)
            if not probe:
                return MISSING
            values = _probe_values(kind, probe)
            if label is None:  # occlusion: accuracy at the largest ratio
                accuracies = [k for k in values if k.startswith("top-1")]
                return values[accuracies[-1]] if accuracies else MISSING
            return values.get(label, MISSING)

        shown = "top-1 (%) at the largest ratio" if label is None else label
        rows.append((f"{name}: {shown}", lambda metrics, cell=probe_cell: cell(metrics)))
    table = _model_table(views, lambda v: {**v.metrics, **v.probes}, rows, "headline")
    if table is None:
        return []
    return [Heading(2, "Summary"), table]


def _figure(name: str, figures: Mapping[str, str]) -> list[Block]:
    return [FigureBlock(name, figures[name], caption(name))] if name in figures else []


def _clean_section(bench: str, views: Sequence[ModelView]) -> list[Block]:
    rows: list[Row] = [
        ("top-1 (%)", _pct("top1")),
        ("top-5 (%)", _pct("top5")),
        ("ECE (%)", _pct("calibration", "ece", scale=100)),
        ("max calibration error (%)", _pct("calibration", "max_calibration_error", scale=100)),
        ("NLL (nats)", _num("calibration", "nll")),
        ("Brier score", _num("calibration", "brier")),
        ("samples", lambda m: fmt_count(m.get("num_samples", _get("calibration", "num_samples")(m)))),
    ]
    table = _model_table(views, lambda v: v.metrics.get(bench), rows, "metric")
    return [table] if table else []


def _corruption_section(bench: str, views: Sequence[ModelView], figures: Mapping[str, str]) -> list[Block]:
    def data(v: ModelView) -> Mapping[str, Any] | None:
        return v.metrics.get(bench) if metric_kind(v.metrics.get(bench, {})) == "corruption" else None

    rows: list[Row] = [
        ("mCE (%, AlexNet-normalised: alexnet-15)", _pct("mce")),
        (
            "mCE (%, unnormalised mean over every corruption present: unnormalized-19)",
            _pct("protocols", "unnormalized-19", "mce"),
        ),
        (
            "corruptions absent from unnormalized-19",
            lambda m: (
                ", ".join(_get("protocols", "unnormalized-19", "absent_corruptions")(m) or []) or MISSING
            ),
        ),
        ("relative mCE (%)", _pct("relative_mce")),
        ("unnormalised mCE (%)", _pct("unnormalized_mce")),
        ("mean corruption accuracy, standard corruptions (%)", _pct("mean_corruption_accuracy")),
        ("mean top-1 over all cells present (%) — Park & Kim", lambda m: fmt_percent(_mean_top1(m))),
        ("severity-5 mean top-1 (%) — Paul & Chen Fig. 2", lambda m: fmt_percent(_severity5_mean(m))),
        ("contrast, severity 5, top-1 (%) — Paul & Chen Fig. 3", lambda m: fmt_percent(_contrast_s5(m))),
        ("clean error (%)", _pct("clean_error")),
        ("samples", lambda m: fmt_count(m.get("num_samples"))),
        ("missing cells", lambda m: fmt_count(len(m.get("missing_cells") or []))),
    ]
    blocks: list[Block] = []
    if table := _model_table(views, data, rows, "metric"):
        blocks.append(table)
    partial = [v.key for v in views if (data(v) or {}).get("missing_cells")]
    if partial:
        blocks.append(
            Paragraph(
                f"Partial ImageNet-C for {', '.join(partial)}: some standard corruption/severity cells are missing, "
                "so mCE and the means cover only the cells present and are not comparable to published values."
            )
        )

    def ce(v: ModelView) -> Mapping[str, Any] | None:
        metrics = data(v)
        if not metrics:
            return None
        extra = {f"{name} (extra)": value for name, value in (metrics.get("extra_ce") or {}).items()}
        return {**(metrics.get("ce") or {}), **extra}

    for values, first, title in (
        (ce, "corruption", "Corruption error CE per corruption (%)"),
        (lambda v: (data(v) or {}).get("relative_ce"), "corruption", "Relative CE per corruption (%)"),
        (
            lambda v: _in_table_order(severity5_top1(data(v) or {})),
            "corruption",
            "Top-1 at severity 5 per corruption (%)",
        ),
        (
            lambda v: _by_severity(data(v) or {}),
            "severity",
            "Mean top-1 per severity over the corruptions present (%)",
        ),
    ):
        if table := _named_value_table(views, values, first, fmt_percent, title):
            blocks.append(table)
    blocks += _figure(benchmark_figure_name(bench, "ce"), figures)
    blocks += _figure(benchmark_figure_name(bench, "severity"), figures)
    return blocks


def _in_table_order(values: Mapping[str, Any]) -> dict[str, Any]:
    """Corruptions in the ImageNet-C table's order (noise, blur, weather, digital, then the extra ones)."""
    order = {name: i for i, name in enumerate(STANDARD_CORRUPTIONS + EXTRA_CORRUPTIONS)}
    return dict(sorted(values.items(), key=lambda item: order.get(item[0], len(order))))


def _by_severity(metrics: Mapping[str, Any]) -> dict[str, float]:
    """Mean top-1 (%) over the corruptions present, per severity."""
    table = corruption_top1_by_severity(metrics)
    levels = sorted({level for cells in table.values() for level in cells})
    return {str(level): float(np.mean([c[level] for c in table.values() if level in c])) for level in levels}


def _perturbation_section(bench: str, views: Sequence[ModelView], figures: Mapping[str, str]) -> list[Block]:
    def data(v: ModelView) -> Mapping[str, Any] | None:
        return v.metrics.get(bench) if metric_kind(v.metrics.get(bench, {})) == "perturbation" else None

    rows: list[Row] = [
        ("difficulty", lambda m: fmt_count(m.get("difficulty"))),
        ("mFR, AlexNet-normalised (%)", _pct("mfr")),
        ("mT5D, AlexNet-normalised (%)", _pct("mt5d")),
        ("mFR, unnormalised (mean flip probability, %)", _pct("mfr_unnormalized", scale=100)),
        ("mT5D, unnormalised (top-5 distance, ranks)", _num("mt5d_unnormalized")),
        ("validation mFR, unnormalised (%)", _pct("validation_mfr_unnormalized", scale=100)),
        ("validation mT5D, unnormalised (ranks)", _num("validation_mt5d_unnormalized")),
        ("sequences", lambda m: fmt_count(sum((m.get("num_sequences") or {}).values()) or None)),
        ("missing test perturbations", lambda m: ", ".join(m.get("missing_perturbations") or []) or "none"),
    ]
    blocks: list[Block] = []
    if table := _model_table(views, data, rows, "metric"):
        blocks.append(table)
    for field, cell, title in (
        ("flip_probability", lambda x: fmt_percent(x, 100), "Flip probability per perturbation (%)"),
        ("top5_distance", fmt_number, "Top-5 distance per perturbation (ranks)"),
    ):
        if table := _named_value_table(
            views, lambda v, f=field: (data(v) or {}).get(f), "perturbation", cell, title
        ):
            blocks.append(table)
    blocks += _figure(benchmark_figure_name(bench, "flip"), figures)
    return blocks


def _simple_section(bench: str, kind: str, views: Sequence[ModelView]) -> list[Block]:
    rows: list[Row]
    if kind == "masked":
        rows = [
            (f"{part} (%, {mask}: {meaning})", _pct("protocols", mask, part))
            for mask, meaning in CLASS_MASK_PROTOCOLS.items()
            for part in ("top1", "top5")
        ]
        rows += [
            ("headline class mask", lambda m: str(m.get("class_mask") or MISSING)),
            ("top-1 (%, within the set's classes)", _schema_1_masked_top1),
            ("top-5 (%, within the set's classes)", lambda m: _schema_1_masked_top1(m, "top5")),
            ("classes", lambda m: fmt_count(m.get("num_classes"))),
            ("samples", lambda m: fmt_count(m.get("num_samples"))),
        ]
    elif kind == "ood":
        rows = [
            ("AUPR (%)", _pct("aupr", scale=100)),
            ("AUROC (%)", _pct("auroc", scale=100)),
            ("FPR at 95 % TPR (%)", _pct("fpr_at_95_tpr", scale=100)),
            ("OOD samples", lambda m: fmt_count(m.get("num_ood"))),
            ("in-distribution samples", lambda m: fmt_count(m.get("num_in_distribution"))),
        ]
    elif kind == "background":
        variants = ordered_union([list((v.metrics.get(bench) or {}).get("accuracy") or {}) for v in views])
        rows = [(f"{name} top-1 (%)", _pct("accuracy", name, scale=100)) for name in variants]
        rows.append(("BG-gap = mixed_same − mixed_rand (pp)", _pct("bg_gap", scale=100)))
        rows.append(("samples", lambda m: fmt_count(sum((m.get("num_samples") or {}).values()) or None)))
    else:
        keys = ordered_union([list(v.metrics.get(bench) or {}) for v in views])
        rows = [(key, lambda m, key=key: _plain(m.get(key))) for key in keys]
    table = _model_table(views, lambda v: v.metrics.get(bench), rows, "metric")
    return [table] if table else []


def _benchmark_sections(
    benchmarks: Sequence[str], views: Sequence[ModelView], figures: Mapping[str, str]
) -> list[Block]:
    blocks: list[Block] = []
    placed: set[str] = set()
    for bench in benchmarks:
        kinds = [metric_kind(v.metrics[bench]) for v in views if bench in v.metrics]
        if not kinds:
            continue
        kind = max(set(kinds), key=kinds.count)
        blocks.append(Heading(2, f"Benchmark: {bench}"))
        if kind == "clean":
            blocks += _clean_section(bench, views)
        elif kind == "corruption":
            blocks += _corruption_section(bench, views, figures)
        elif kind == "perturbation":
            blocks += _perturbation_section(bench, views, figures)
        else:
            blocks += _simple_section(bench, kind, views)
        last_of_kind = all(
            metric_kind(v.metrics.get(b, {})) != kind
            for b in benchmarks[benchmarks.index(bench) + 1 :]
            for v in views
        )
        group = {"masked": MASKED_FIGURE, "ood": OOD_FIGURE, "background": BACKGROUND_FIGURE}.get(kind)
        if group and last_of_kind and group not in placed:
            blocks += _figure(group, figures)
            placed.add(group)
    return blocks


def _probe_sections(
    names: Sequence[str], views: Sequence[ModelView], figures: Mapping[str, str]
) -> list[Block]:
    blocks: list[Block] = []
    placed: set[str] = set()
    for name in names:
        kinds = [probe_kind(name, v.probes[name]) for v in views if name in v.probes]
        kind = kinds[0] if kinds else None
        if kind is None:
            continue
        blocks.append(Heading(3, f"Probe: {name}"))
        benchmarks = ordered_union(
            [[str(v.probes[name]["benchmark"])] for v in views if v.probes.get(name, {}).get("benchmark")]
        )
        if benchmarks:
            blocks.append(Paragraph(f"Images from: {', '.join(benchmarks)}."))
        if table := _named_value_table(
            views,
            lambda v, n=name, k=kind: _probe_values(k, v.probes[n]) if n in v.probes else None,
            "value",
            str,
        ):
            blocks.append(table)
        for figure in PROBE_FIGURES.get(kind, ()):
            if figure not in placed:
                blocks += _figure(figure, figures)
                placed.add(figure)
    return [Heading(2, "Probes"), *blocks] if blocks else []


def _timing(results: Sequence[Mapping[str, Any]], views: Sequence[ModelView]) -> list[Block]:
    by_key = {}
    for v in views:
        timing = (results[v.run].get("timing") or {}).get(v.key)
        if timing:
            by_key[v.key] = timing
    table = _named_value_table(
        [v for v in views if v.key in by_key],
        lambda v: by_key.get(v.key),
        "step",
        fmt_number,
        "Wall time (s)",
    )
    return [Heading(2, "Timing"), table] if table else []


def build_document(results: Sequence[Mapping[str, Any]], figures: Mapping[str, str]) -> list[Block]:
    """The report as a list of blocks (headings, paragraphs, tables, figures), for both renderers."""
    merged = merge_results(results)
    views = model_views(merged)
    benchmarks = benchmark_names(merged, views)
    probes = probe_names(views)
    blocks: list[Block] = _header(merged)
    blocks += _summary(views, benchmarks, probes)
    blocks += _data_sources(merged)
    blocks += _protocols(merged)
    blocks += _models(views, merged)
    blocks += _benchmark_sections(benchmarks, views, figures)
    blocks += _probe_sections(probes, views, figures)
    blocks += _timing(merged, views)
    shown = {block.name for block in blocks if isinstance(block, FigureBlock)}
    others = [FigureBlock(name, path, caption(name)) for name, path in figures.items() if name not in shown]
    if others:
        blocks += [Heading(2, "Other figures"), *others]
    return blocks


# ---------------------------------------------------------------------------------------------------------------
# Rendering


def _md_cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render_markdown(results: Sequence[Mapping[str, Any]], figures: Mapping[str, str]) -> str:
    """report.md: GitHub-flavoured Markdown, figures linked by their relative paths."""
    lines: list[str] = []
    for block in build_document(results, figures):
        if isinstance(block, Heading):
            lines += [f"{'#' * block.level} {block.text}", ""]
        elif isinstance(block, Paragraph):
            lines += [block.text, ""]
        elif isinstance(block, Table):
            if block.title:
                lines += [f"**{block.title}**", ""]
            lines.append("| " + " | ".join(_md_cell(h) for h in block.headers) + " |")
            align = "---:" if block.numeric else "---"
            lines.append("|" + "|".join(["---", *[align] * (len(block.headers) - 1)]) + "|")
            lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in block.rows]
            lines.append("")
        else:
            lines += [f"![{block.name}]({block.path})", "", f"*{block.caption}*", ""]
    return "\n".join(lines).rstrip() + "\n"


_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 2em auto; max-width: 1200px;
       padding: 0 1em; color: #222; line-height: 1.45; }
h1 { border-bottom: 2px solid #444; padding-bottom: .2em; }
h2 { border-bottom: 1px solid #ccc; padding-bottom: .15em; margin-top: 1.8em; }
table { border-collapse: collapse; margin: .6em 0 1.2em; font-size: 14px; }
caption { caption-side: top; text-align: left; font-weight: 600; padding: .2em 0; }
th, td { border: 1px solid #ccc; padding: 3px 8px; }
th { background: #f0f0f0; }
td { text-align: right; font-variant-numeric: tabular-nums; }
td:first-child, th:first-child, table.text td { text-align: left; }
figure { margin: 1em 0 1.6em; }
figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-size: 13px; color: #555; }
"""


def render_html(results: Sequence[Mapping[str, Any]], figures: Mapping[str, str], base_dir: Path) -> str:
    """report.html: one self-contained page (inline CSS, the PNGs as base64 data URIs; nothing is fetched).

    `base_dir` is the folder the figures' relative paths start from."""
    escape = html.escape
    suites = ordered_union([[str((r.get("suite") or {}).get("name") or "")] for r in results])
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>hf_vitrobust report {escape(', '.join(s for s in suites if s))}</title>",
        f"<style>{_CSS}</style></head><body>",
    ]
    for block in build_document(results, figures):
        if isinstance(block, Heading):
            parts.append(f"<h{block.level}>{escape(block.text)}</h{block.level}>")
        elif isinstance(block, Paragraph):
            parts.append(f"<p>{escape(block.text)}</p>")
        elif isinstance(block, Table):
            parts.append("<table>" if block.numeric else '<table class="text">')
            if block.title:
                parts.append(f"<caption>{escape(block.title)}</caption>")
            parts.append(
                "<thead><tr>" + "".join(f"<th>{escape(h)}</th>" for h in block.headers) + "</tr></thead>"
            )
            parts.append("<tbody>")
            for row in block.rows:
                cells = [f"<th>{escape(row[0])}</th>", *(f"<td>{escape(c)}</td>" for c in row[1:])]
                parts.append("<tr>" + "".join(cells) + "</tr>")
            parts.append("</tbody></table>")
        else:
            path = Path(base_dir) / block.path
            if not path.is_file():
                raise FileNotFoundError(f"Figure {block.name!r} is missing: {path}.")
            data = base64.b64encode(path.read_bytes()).decode("ascii")
            parts.append(
                f'<figure><img alt="{escape(block.name)}" src="data:image/png;base64,{data}">'
                f"<figcaption>{escape(block.caption)}</figcaption></figure>"
            )
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def write_report(results: Mapping[str, Any] | Sequence[Mapping[str, Any]], out_dir: Path) -> dict[str, Any]:
    """Write `out_dir/figures/*.png`, `out_dir/report.md` and the self-contained `out_dir/report.html`.

    Returns {"figures": name -> relative path, "markdown": Path, "html": Path}. Schema problems raise ValueError
    before anything is written."""
    merged = merge_results([results] if isinstance(results, Mapping) else results)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    figures = write_figures(merged, out_dir)
    markdown, page = out_dir / "report.md", out_dir / "report.html"
    write_text_atomic(markdown, render_markdown(merged, figures))
    write_text_atomic(page, render_html(merged, figures, out_dir))
    return {"figures": figures, "markdown": markdown, "html": page}


__all__ = [
    "RESULTS_FILE",
    "build_document",
    "load_results",
    "merge_results",
    "render_html",
    "render_markdown",
    "write_report",
]
