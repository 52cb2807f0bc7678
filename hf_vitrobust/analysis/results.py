# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""results.json: what a run computed and everything needed to trust, reproduce and recompute it.

The schema is versioned ("hf_vitrobust.results", `SCHEMA_VERSION`); a reader refuses a newer version instead of
misreading it. Version 2 records each benchmark's evaluation protocol (`benchmarks.<name>.protocol`) and names the
protocol in the summary's headlines where there is a choice; version 1 runs fed the pre-cropped benchmarks through
each model's own resize and crop and recorded no protocol: reports still read them (and say so), `--resume`
refuses to continue them. Top-level keys:

- schema, schema_version, created (ISO-8601 UTC), hf_vitrobust_version, complete (False while a run is underway);
- suite (the suite's full definition), seed, settings (limit, batch size, precision, compile, workers,
  processes, chunk size, device), environment (Python, platform, library versions, devices);
- provenance: the package's version and the git commit of the checkout it ran from (`provenance`; None when it
  is not a checkout), git_dirty True where that checkout had uncommitted changes;
- models: [{key, spec, name, kind, num_classes, input_size, num_parameters, stored_dtype (the dtype its weights
  were stored in, "bfloat16+float32" when mixed, None when unknown), run_dtype (its weights' dtype in the run:
  float32 unless asked; the benchmark passes add settings.precision's autocast)}]; runs written before these two
  keys lack them;
- benchmarks: {name: {task, kind (how it is scored and shown: `Benchmark.kind`; runs written before it was
  recorded get it from the benchmark registry by name, "other" for unknown names: `benchmark_kind`), label_space, source (the source's provenance), generated (True for ImageNet-C/-P
  corrupted on the fly, False for the released files), num_samples, skipped (counts, reasons, examples), options,
  protocol: {the parts of `hf_vitrobust.analysis.protocols` (preprocessing, class_mask, mce, release_encoding),
  meaning, released_size, class_subset, score, baseline, models: {model key: the preprocessing that ran, its
  input size, and why it differs from the one requested}}}};
- metrics: {model key: {benchmark: metric dict}}; probes: {model key: {probe: merged probe dict}};
- predictions: {model key: {benchmark: relative path of the per-sample parquet}}; figures: {name: relative path};
- timing: {model key: {benchmark or "probe:<name>": seconds}}; summary: {model key: {headline: value}};
- intervals: {model key: {headline: `metrics.intervals.Interval` dict + samples_needed}} (`analysis.uncertainty`;
  absent in runs written before it: `vitrobust report` recomputes them from the predictions files); uncertainty:
  the settings they ran with; comparisons (runs of several models): every pair's paired differences, Holm-corrected;
  benchmarks.<name>.subset: {kind: "first" | "random" | "all", limit, seed, per_cell};
- reproduction (runs made by `vitrobust reproduce`): {paper, pair, leg, models: {model key: [{role, model_key,
  stand_in, why}]}}, the paper models each model stands for (`analysis.published_vs_ours`, `analysis.findings`).
- analysis (`analysis.analyze`, `ANALYSIS_KEY`): {confidence_level, published: the published numbers of the run's
  models beside ours with their verdicts, findings: [{paper, pair, origin, checks}], effective_robustness (only where
  a model has imagenet-val and a natural shift: `analysis.effective_robustness`, {fits, models})}; absent in runs
  written before it (`vitrobust report` computes it from the predictions files).
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..data import BENCHMARKS
from ..probes.base import json_safe
from ..probes.display import number
from ..probes.spec import probe_of

SCHEMA = "hf_vitrobust.results"
SCHEMA_VERSION = 2


def check_schema(results: dict[str, Any], where: str = "results") -> None:
    """Raise ValueError when `results` is not a results.json this version can read."""
    if results.get("schema") != SCHEMA:
        raise ValueError(f"{where}: not an hf_vitrobust results file (schema {results.get('schema')!r}).")
    version = results.get("schema_version")
    if not isinstance(version, int) or version > SCHEMA_VERSION:
        raise ValueError(
            f"{where}: schema version {version!r} is newer than this hf_vitrobust reads ({SCHEMA_VERSION}); "
            "upgrade hf_vitrobust."
        )


def benchmark_kind(results: Mapping[str, Any], name: str) -> str:
    """The kind of benchmark `name` in a results.json dict: as recorded (`benchmarks.<name>.kind`), else (runs written
    before the kind was recorded, which still have schema version 2: the key is an addition that older readers
    ignore) the registered benchmark's, else "other"."""
    recorded = ((results.get("benchmarks") or {}).get(name) or {}).get("kind")
    if isinstance(recorded, str) and recorded:
        return recorded
    benchmark = BENCHMARKS.get(name, None)
    return "other" if benchmark is None else benchmark.kind


def fill_benchmark_kinds(results: dict[str, Any]) -> dict[str, Any]:
    """Write the kind of every benchmark entry of `results` that lacks one (see `benchmark_kind`); returns it."""
    for name, entry in (results.get("benchmarks") or {}).items():
        if isinstance(entry, dict) and not entry.get("kind"):
            entry["kind"] = benchmark_kind(results, name)
    return results


def holds_result(metrics: Mapping[str, Any]) -> bool:
    """Whether a model's metric dict of a benchmark holds results: not skipped, and not empty ("no samples")."""
    if not metrics or "skipped" in metrics:
        return False
    return not (metrics.get("num_samples") == 0 and "note" in metrics)


# ---------------------------------------------------------------------------------------------------------------
# Reading results: loading, merging and per-model views (shared by the report, the figures and the model card)


RESULTS_FILE = "results.json"

# Sections of results.json keyed by model key (renamed together when a key is disambiguated).
_MODEL_KEYED_SECTIONS = ("metrics", "probes", "predictions", "timing", "summary", "intervals")


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
        copied = fill_benchmark_kinds(copy.deepcopy(dict(result)))
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


@dataclass(frozen=True)
class ModelView:
    """One model of one run: `key` is its column label, unique over all the runs shown together."""

    key: str
    info: Mapping[str, Any]
    run: int
    metrics: Mapping[str, Mapping[str, Any]]
    probes: Mapping[str, Mapping[str, Any]]
    #: benchmark -> the kind of this model's result of it (results.json's "kind"; "other" where it holds none).
    kinds: Mapping[str, str] = field(default_factory=dict)
    #: headline name (as in "summary") -> its interval dict (`metrics.intervals.Interval.to_dict()`).
    intervals: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)


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
            metrics = (result.get("metrics") or {}).get(key) or {}
            views.append(
                ModelView(
                    key=renamed.get(key, key),
                    info=infos.get(key, {"key": key}),
                    run=run,
                    metrics=metrics,
                    probes=(result.get("probes") or {}).get(key) or {},
                    intervals=(result.get("intervals") or {}).get(key) or {},
                    kinds={
                        bench: benchmark_kind(result, bench) if holds_result(values) else "other"
                        for bench, values in metrics.items()
                    },
                )
            )
    return views


def ordered_union(groups: Sequence[Sequence[str]]) -> list[str]:
    """The names of every group, each once, in order of first appearance."""
    return list(dict.fromkeys(name for group in groups for name in group))


def probe_kind(name: str, data: Mapping[str, Any]) -> str | None:
    """The probe task a probe dict comes from: its results.json name, or its `probe` field."""
    spec = probe_of(name, data)
    return None if spec is None else spec.name


def benchmark_names(results: Sequence[Mapping[str, Any]], views: Sequence[ModelView]) -> list[str]:
    """Benchmarks in suite order (results' "benchmarks"), then any only found in metrics."""
    return ordered_union(
        [list(result.get("benchmarks") or {}) for result in results] + [list(v.metrics) for v in views]
    )


def probe_names(views: Sequence[ModelView]) -> list[str]:
    return ordered_union([list(v.probes) for v in views])


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


def summary_table(results: dict[str, Any]) -> str:
    """The run's headline numbers, one column per model, as a plain-text table: "x [lo, hi]" where the run holds
    the number's interval (results.json "intervals")."""
    models = [m["key"] for m in results.get("models", [])]
    rows: list[str] = []
    for key in models:
        for metric in results.get("summary", {}).get(key, {}):
            if metric not in rows:
                rows.append(metric)
    intervals = results.get("intervals") or {}

    def cell(key: str, metric: str) -> str:
        value = results["summary"].get(key, {}).get(metric)
        record = (intervals.get(key) or {}).get(metric)
        if value is None:
            return "-"
        if record and record.get("low") is not None and record.get("high") is not None:
            return f"{value:.3f} [{record['low']:.3f}, {record['high']:.3f}]"
        return f"{value:.3f}"

    cells_by_model = {key: {metric: cell(key, metric) for metric in rows} for key in models}
    width = max([len(r) for r in rows] + [10])
    columns = [max([len(k), 10, *(len(c) for c in cells_by_model[k].values())]) for k in models]
    lines = ["  ".join([" " * width] + [k.rjust(c) for k, c in zip(models, columns, strict=True)])]
    for metric in rows:
        cells = []
        for key, c in zip(models, columns, strict=True):
            cells.append(cells_by_model[key][metric].rjust(c))
        lines.append("  ".join([metric.ljust(width), *cells]))
    return "\n".join(lines)


__all__ = [
    "RESULTS_FILE",
    "SCHEMA",
    "SCHEMA_VERSION",
    "ModelView",
    "benchmark_kind",
    "benchmark_names",
    "check_schema",
    "corruption_top1_by_severity",
    "fill_benchmark_kinds",
    "holds_result",
    "json_safe",
    "load_results",
    "masked_top1_percent",
    "merge_results",
    "model_views",
    "ordered_union",
    "probe_kind",
    "probe_names",
    "run_names",
    "severity5_top1",
    "summary_table",
    "unique_model_keys",
]
