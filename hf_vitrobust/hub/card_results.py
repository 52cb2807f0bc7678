# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The results part of a model card: the `model-index` of evaluation results (`eval_results`, one row per
`BenchmarkKind.card_rows` row) and the values with their intervals (`interval_rows`), as stored in results.json."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..analysis.kinds import CardRow, get_benchmark_kind
from ..analysis.results import benchmark_kind
from .model_index import dataset_entry

TASK = {"type": "image-classification", "name": "Image Classification"}


def dig(mapping: Mapping[str, Any], path: Sequence[str]) -> Any:
    value: Any = mapping
    for key in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def finite_number(value: Any) -> float | int | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return value


def format_cell(value: Any) -> str:
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.4g}"
    if value is None:
        return "–"
    if isinstance(value, list | tuple):
        return ", ".join(format_cell(item) for item in value)
    return str(value).replace("|", "\\|")


def run_name(result: Mapping[str, Any]) -> str:
    """The name of a results run: its folder's name (results.json's parent), else its suite's name."""
    source = result.get("_source")
    if source:
        return Path(source).parent.name
    return str((result.get("suite") or {}).get("name") or "results")


def card_dataset(benchmark: str, info: Mapping[str, Any]) -> dict[str, Any]:
    """The model-index `dataset` of a benchmark: the fixed table of `hf_vitrobust.hub.model_index`."""
    return dataset_entry(benchmark, info)


def card_rows(result: Mapping[str, Any], benchmark: str, metrics: Mapping[str, Any]) -> tuple[CardRow, ...]:
    """The model-index rows of a benchmark's metric dict, by its kind (`BenchmarkKind.card_rows`)."""
    return get_benchmark_kind(benchmark_kind(result, benchmark)).card_rows(metrics)


def model_names(results: Sequence[Mapping[str, Any]]) -> dict[tuple[int, str], str]:
    names = {}
    for index, result in enumerate(results):
        by_key = {model.get("key"): model for model in result.get("models") or []}
        for key in result.get("metrics") or {}:
            model = by_key.get(key) or {}
            names[(index, key)] = str(model.get("name") or model.get("spec") or key)
    return names


def same_model(spec: Any, own: Sequence[str]) -> bool:
    """Whether a recorded model spec names one of `own` (specs of the pushed checkpoint): equal, or the same
    existing folder by another path."""
    if not isinstance(spec, str) or not spec:
        return False
    for candidate in own:
        if spec == candidate:
            return True
        try:
            if (
                Path(spec).expanduser().resolve() == Path(candidate).expanduser().resolve()
                and Path(spec).exists()
            ):
                return True
        except (OSError, ValueError):
            continue
    return False


def eval_results(
    results: Sequence[Mapping[str, Any]],
    *,
    model_name: str | None = None,
    repo_id: str | None = None,
    own_specs: Sequence[str] = (),
) -> list[dict[str, Any]]:
    """The `model-index` of `results`: one entry per evaluated model, with one result per benchmark holding every
    numeric metric of the benchmark (so one EvalResult per model x benchmark x metric). A model whose spec is
    `repo_id` or one of `own_specs` (the checkpoint's folder) is this repository's model: its entry is named
    `model_name`; any other keeps its own name (a card never credits another model's numbers to this one)."""
    names = model_names(results)
    own = [*own_specs, *([repo_id] if repo_id else [])]
    specs = {
        (position, model.get("key")): model.get("spec")
        for position, result in enumerate(results)
        for model in result.get("models") or []
    }
    index: dict[str, dict[str, Any]] = {}
    for position, result in enumerate(results):
        run = run_name(result)
        # The Hub requires a source's url with its name: name the run only where its file will be.
        source = None
        if repo_id:
            url = f"https://huggingface.co/{repo_id}/blob/main/results/{run}/results.json"
            source = {"name": f"hf_vitrobust results ({run})", "url": url}
        for key, per_benchmark in (result.get("metrics") or {}).items():
            is_own = model_name is not None and same_model(specs.get((position, key)), own)
            name = model_name if is_own else names[(position, key)]
            entry = index.setdefault(name, {"name": name, "results": []})
            for benchmark, metrics in per_benchmark.items():
                info = (result.get("benchmarks") or {}).get(benchmark) or {}
                rows = []
                for row in card_rows(result, benchmark, metrics):
                    value = finite_number(dig(metrics, row.path))
                    if value is not None:
                        rows.append({"type": row.type, "name": row.name, "value": value})
                if rows:
                    item = {"task": dict(TASK), "dataset": card_dataset(benchmark, info), "metrics": rows}
                    entry["results"].append({**item, "source": source} if source else item)
    return [entry for entry in index.values() if entry["results"]]


_METHOD_NAMES = {"wilson": "Wilson", "clopper-pearson": "Clopper-Pearson"}
#: An interval's unit -> what the card counts ("sample": each one an image of the benchmark).
_UNIT_NAMES = {"sample": "image"}
#: How close a model-index value and its interval's estimate (in the value's units) must be to be one number.
_SAME_NUMBER = 1e-6


def _counted(count: int, unit: str) -> str:
    unit = _UNIT_NAMES.get(unit, unit)
    return f"{count:,} {unit}{'' if count == 1 else 's'}"


def interval_description(record: Mapping[str, Any], bounds: str | None = None) -> str:
    """What an interval is, in words: "95 % Wilson interval, 29 images", or for the bootstrap "95 % percentile
    bootstrap interval over 29 clean images, 1,000 resamples"; with `bounds` ("[lo, hi]") after the word
    interval: "95 % Wilson interval [41.20, 43.51], 29 images"."""
    level = f"{100 * float(record['confidence_level']):g} %"
    method = str(record.get("method") or "")
    unit = str(record.get("unit") or "sample")
    units = record.get("num_units")
    interval = f"interval {bounds}" if bounds else "interval"
    if "bootstrap" in method and isinstance(units, int):
        text = f"{level} {method} {interval} over {_counted(units, unit)}"
        resamples = record.get("num_resamples")
        return f"{text}, {resamples:,} resamples" if isinstance(resamples, int) else text
    return f"{level} {_METHOD_NAMES.get(method, method)} {interval}, {_counted(int(record['num_samples']), unit)}"


def value_interval_bounds(record: Any, value: float, factor: float) -> str | None:
    """ "[lo, hi]" of the interval `record` (results.json "intervals") in a model-index value's units (`factor`
    from the interval's), where `record` is an interval of that same value; else None. Two decimals for a value in
    the interval's own units, four for a fraction."""
    from ..metrics.intervals import Interval

    if not isinstance(record, Mapping):
        return None
    try:
        interval = Interval.from_dict(dict(record)).scaled(factor)
    except (TypeError, ValueError):
        return None
    numbers = [
        finite_number(x)
        for x in (interval.estimate, interval.low, interval.high, record.get("confidence_level"))
    ]
    if any(x is None for x in numbers) or record.get("num_samples") is None:
        return None
    if not math.isclose(interval.estimate, value, rel_tol=_SAME_NUMBER, abs_tol=_SAME_NUMBER * factor):
        return None
    digits = 2 if factor == 1.0 else 4
    return f"[{interval.low:.{digits}f}, {interval.high:.{digits}f}]"


def _interval_cell(record: Any, value: float, factor: float) -> str | None:
    """ "value [lo, hi]" in the model-index value's units, where `record` is an interval of that same value."""
    bounds = value_interval_bounds(record, value, factor)
    if bounds is None:
        return None
    digits = 2 if factor == 1.0 else 4
    return f"{value:.{digits}f} {bounds}"


def interval_rows(result: Mapping[str, Any], names: Mapping[str, str]) -> tuple[list[list[str]], list[str]]:
    """The card's rows of a run's model-index values that have an interval: [model, benchmark, metric name,
    "value [lo, hi]", what the interval is], in the model-index's order; and the distinct caveats of those intervals
    (first-N subset, samples treated as independent). Both are empty where the run holds no intervals.

    `names`: model key -> the name the card shows. Values are in the model-index's units (a fraction where the
    metric name says so), the interval scaled to them."""
    intervals = result.get("intervals") or {}
    rows: list[list[str]] = []
    notes: list[str] = []
    for key, per_benchmark in (result.get("metrics") or {}).items():
        records = intervals.get(key) or {}
        if not records:
            continue
        for benchmark, metrics in per_benchmark.items():
            for row in card_rows(result, benchmark, metrics):
                value = finite_number(dig(metrics, row.path))
                named = row.interval_name(benchmark, metrics)
                if value is None or named is None:
                    continue
                record = records.get(named)
                cell = _interval_cell(record, float(value), row.factor)
                if cell is None:
                    continue
                rows.append(
                    [
                        names.get(key, key),
                        benchmark,
                        format_cell(row.name),
                        cell,
                        interval_description(record),
                    ]
                )
                if record.get("note") and record["note"] not in notes:
                    notes.append(str(record["note"]))
    return rows, notes


__all__ = [
    "TASK",
    "card_dataset",
    "card_rows",
    "dig",
    "eval_results",
    "finite_number",
    "format_cell",
    "interval_description",
    "interval_rows",
    "model_names",
    "run_name",
    "same_model",
    "value_interval_bounds",
]
