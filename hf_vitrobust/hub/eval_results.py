# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""A run's headlines as the Hub's evaluation results: `.eval_results/<run>.yaml` in the model repo, a list of
`huggingface_hub.EvalResultEntry` (docs/publishing.md, ".eval_results"). The card's `model-index` stays beside them
for older Hub tooling; the two carry the same numbers in the same units.

An entry names no model: it is a result of the repository it lives in. So only the repository's own model is ever
written (the model `card_results.same_model` identifies as the pushed checkpoint or the repo id); a run of other
models gives no entry. One entry per headline of results.json's `summary`:

- `dataset_id`: the model-index's `dataset.type` (`model_index.dataset_entry`): the Hub id streamed, or our marked
  `hf_vitrobust/<benchmark>-generated` / `-local`; `dataset_revision` where the source recorded one.
- `task_id`: `<benchmark>.<metric type>` and then `<part>=<name>` for every protocol part that is not the
  benchmark's default (`task_id`), so that numbers under different protocols never share (dataset_id, task_id),
  the pair the Hub's leaderboard ranks by.
- `value`: the model-index row's value of that headline (the same number, in the same units).
- `notes`: segments joined by `" | "`: the protocol (`protocol_note`, read back by `protocol_from_notes`), the
  interval where results.json holds one for that number, and the run.
- `source`: the predictions dataset (its config of the benchmark) when one is pushed, else the staged results.json.
- `date`: results.json's creation time.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from huggingface_hub import EvalResultEntry, eval_result_entries_to_yaml

from ..analysis.kinds import RUN_CLASS_MASK, CardRow
from ..analysis.protocols import LATER_PART_DEFAULTS, check_protocol, default_protocol, protocol_parts
from ..data import BENCHMARKS, Benchmark
from .card_results import (
    card_dataset,
    card_rows,
    dig,
    finite_number,
    interval_description,
    run_name,
    same_model,
    value_interval_bounds,
)

logger = logging.getLogger(__name__)

EVAL_RESULTS_FOLDER = ".eval_results"
NOTES_SEPARATOR = " | "
PROTOCOL_PREFIX = "protocol: "
RUN_PREFIX = "run: "
#: The protocol parts in `analysis.protocols.protocol_parts` order (a test checks every benchmark against it).
PROTOCOL_PART_ORDER = (
    "preprocessing",
    "interpolation",
    "class_mask",
    "mce",
    "release_encoding",
    "labels",
    "image_list",
)
_FORBIDDEN_IN_NAMES = (NOTES_SEPARATOR.strip(), ",", "=")


def protocol_note(protocol: Mapping[str, str]) -> str:
    """The protocol segment of an entry's notes: `"protocol: part=name, part=name"`, known parts in
    `protocol_parts` order, then any other part in the mapping's order. `protocol_from_notes` reads it back."""
    if not protocol:
        raise ValueError(
            "protocol_note: the protocol is empty; a benchmark has at least its preprocessing part."
        )
    for part, name in protocol.items():
        if (
            not isinstance(name, str)
            or not name
            or any(mark in f"{part}{name}" for mark in _FORBIDDEN_IN_NAMES)
        ):
            raise ValueError(
                f"protocol_note: {part}={name!r} cannot be written into notes; parts and names are non-empty "
                f"strings without {', '.join(repr(mark) for mark in _FORBIDDEN_IN_NAMES)}."
            )
    known = [part for part in PROTOCOL_PART_ORDER if part in protocol]
    others = [part for part in protocol if part not in PROTOCOL_PART_ORDER]
    return PROTOCOL_PREFIX + ", ".join(f"{part}={protocol[part]}" for part in known + others)


def protocol_from_notes(notes: str | None) -> dict[str, str] | None:
    """The protocol (part -> name) that `protocol_note` wrote into `notes`; None when no segment of `notes` is a
    protocol segment (notes written by other tools)."""
    for segment in (notes or "").split(NOTES_SEPARATOR):
        segment = segment.strip()
        if not segment.startswith(PROTOCOL_PREFIX):
            continue
        pairs = [pair.strip().partition("=") for pair in segment.removeprefix(PROTOCOL_PREFIX).split(",")]
        if all(part and sep and name for part, sep, name in pairs):
            return {part.strip(): name.strip() for part, _, name in pairs}
    return None


def _is_choice(benchmark: Benchmark, part: str, name: Any) -> bool:
    try:
        check_protocol(benchmark, {part: name}, where="results.json")
    except ValueError:
        return False
    return True


def recorded_protocol(benchmark: Benchmark, record: Any, model_key: str) -> dict[str, str] | None:
    """The protocol (part -> name) a model's numbers on `benchmark` were scored under, from results.json's
    `benchmarks.<name>.protocol`: the preprocessing the model was given (`models.<key>.applied`: a model that runs
    only at its own size gets native-resize for as-released), and every other part that was a choice for that data
    (a streamed release's encoding is not: it is left out). None where no protocol is recorded."""
    if not isinstance(record, Mapping):
        return None
    given = (record.get("models") or {}).get(model_key) or {}
    protocol = {}
    for part in protocol_parts(benchmark):
        # A model's own preprocessing (`applied`) and interpolation (a pairing may set it) before the benchmark's.
        name = given.get("applied" if part == "preprocessing" else part) or record.get(part)
        if LATER_PART_DEFAULTS.get(part) == name:
            continue  # every run before the part had it: the leaderboard (ranking within a protocol) still ranks both
        if _is_choice(benchmark, part, name):
            protocol[part] = name
    return protocol or None


def task_id(benchmark: Benchmark, metric_type: str, protocol: Mapping[str, str]) -> str:
    """`<benchmark>.<metric type>`, then `<part>=<name>` for each part of `protocol` that is not the benchmark's
    default, in `protocol_parts` order: "imagenet-c.mce", "imagenet-c.mce.mce=unnormalized-19",
    "imagenet-a.accuracy.class_mask=paul-chen-1000"."""
    defaults = default_protocol(benchmark)
    changed = [f"{part}={protocol[part]}" for part in protocol_parts(benchmark) if part in protocol]
    changed = [pair for pair in changed if pair not in {f"{part}={name}" for part, name in defaults.items()}]
    return ".".join([benchmark.name, metric_type, *changed])


def _headline_rows(
    result: Mapping[str, Any], benchmark: str, metrics: Mapping[str, Any], headlines: Sequence[str]
) -> list[tuple[str, CardRow]]:
    """(headline, the model-index row that holds its number) of each headline of `benchmark` that has one."""
    found = {}
    for row in card_rows(result, benchmark, metrics):
        name = row.interval_name(benchmark, metrics)
        if name in headlines and name not in found:
            found[name] = row
    return [(name, found[name]) for name in headlines if name in found]


def _headline_protocol(
    benchmark: Benchmark, protocol: Mapping[str, str], row: CardRow, metrics: Mapping[str, Any]
) -> dict[str, str]:
    """The run's protocol with the choice the headline was scored under (ImageNet-C's other mCE, ImageNet-A/R's
    other class mask) in place of the run's own."""
    choice = (
        (metrics.get("class_mask") or metrics.get("labels")) if row.choice == RUN_CLASS_MASK else row.choice
    )
    chosen = dict(protocol)
    for part in protocol_parts(benchmark):
        if choice and _is_choice(benchmark, part, choice):
            chosen[part] = choice
    return chosen


def _source(
    run: str, benchmark: str, repo_id: str | None, predictions_repo: str | None
) -> tuple[str | None, str | None]:
    if predictions_repo:
        url = f"https://huggingface.co/datasets/{predictions_repo}/viewer/{benchmark}"
        return url, f"hf_vitrobust predictions ({benchmark})"
    if repo_id:
        return (
            f"https://huggingface.co/{repo_id}/blob/main/results/{run}/results.json",
            f"hf_vitrobust results ({run})",
        )
    return None, None


def own_model_keys(result: Mapping[str, Any], own: Sequence[str]) -> list[str]:
    """The keys of a run's models that are this repository's (`same_model` of their spec and `own`)."""
    return [
        str(model.get("key")) for model in result.get("models") or [] if same_model(model.get("spec"), own)
    ]


def run_entries(
    result: Mapping[str, Any],
    *,
    repo_id: str | None = None,
    own_specs: Sequence[str] = (),
    predictions_repo: str | None = None,
    warn: bool = True,
) -> list[EvalResultEntry]:
    """The entries of one results.json dict: one per headline (results.json `summary`) of each of the repository's
    own models (its spec is `repo_id` or one of `own_specs`, the checkpoint's folder), benchmark by benchmark. The
    headlines of a benchmark that records no protocol give no entry (logged), nor does a headline that no
    model-index row holds (the card would not carry its number). `warn=False` for readers (the leaderboard), for
    whom a run without a protocol is expected, not a problem of the push."""
    own = [*own_specs, *([repo_id] if repo_id else [])]
    run = run_name(result)
    intervals = result.get("intervals") or {}
    entries = []
    for key in own_model_keys(result, own):
        headlines = list((result.get("summary") or {}).get(key) or {})
        for name, metrics in ((result.get("metrics") or {}).get(key) or {}).items():
            info = (result.get("benchmarks") or {}).get(name) or {}
            rows = _headline_rows(result, name, metrics, headlines) if name in BENCHMARKS.names() else []
            if not rows:
                continue
            benchmark = BENCHMARKS.get(name)
            protocol = recorded_protocol(benchmark, info.get("protocol"), key)
            if protocol is None:
                (logger.warning if warn else logger.debug)(
                    "Run %s: %s records no protocol; its headlines get no .eval_results entry.", run, name
                )
                continue
            dataset = card_dataset(name, info)
            url, source_name = _source(run, name, repo_id, predictions_repo)
            for headline, row in rows:
                value = finite_number(dig(metrics, row.path))
                if value is None:
                    continue
                chosen = _headline_protocol(benchmark, protocol, row, metrics)
                notes = [protocol_note(chosen)]
                record = (intervals.get(key) or {}).get(headline)
                bounds = value_interval_bounds(record, float(value), row.factor)
                if bounds is not None:
                    notes.append(interval_description(record, bounds))
                notes.append(f"{RUN_PREFIX}{run}")
                entries.append(
                    EvalResultEntry(
                        dataset_id=dataset["type"],
                        task_id=task_id(benchmark, row.type, chosen),
                        value=value,
                        dataset_revision=dataset.get("revision"),
                        date=str(result["created"]) if result.get("created") else None,
                        source_url=url,
                        source_name=source_name,
                        notes=NOTES_SEPARATOR.join(notes),
                    )
                )
    return entries


def eval_result_files(
    results: Sequence[Mapping[str, Any]],
    *,
    repo_id: str | None = None,
    own_specs: Sequence[str] = (),
    predictions_repo: str | None = None,
) -> dict[str, list[EvalResultEntry]]:
    """`.eval_results/<run>.yaml` (path in the repo) -> its entries, one file per run that holds a headline of the
    repository's own model; empty when none does. Logged: no own model in any run (`.eval_results` cannot name
    another model), and a (dataset id, task id) pair that two runs both give (the Hub ranks by that pair)."""
    own = [*own_specs, *([repo_id] if repo_id else [])]
    files = {}
    first_run: dict[tuple[str, str], str] = {}
    for result in results:
        entries = run_entries(result, repo_id=repo_id, own_specs=own_specs, predictions_repo=predictions_repo)
        run = run_name(result)
        for entry in entries:
            pair = (entry.dataset_id, entry.task_id)
            if first_run.setdefault(pair, run) != run:
                logger.warning(
                    "Runs %s and %s both give %s on %s: both entries are published; the Hub ranks one model's "
                    "results by (dataset, task), so push one run per protocol to keep one number.",
                    first_run[pair],
                    run,
                    entry.task_id,
                    entry.dataset_id,
                )
        if entries:
            files[f"{EVAL_RESULTS_FOLDER}/{run}.yaml"] = entries
    if results and not any(own_model_keys(result, own) for result in results):
        logger.warning(
            "No .eval_results entries: no model of these runs is this repository's own (%s); an entry names no "
            "model, so results of other models are published in the card's model-index only.",
            repo_id or "no repo id and no checkpoint given",
        )
    return files


def write_eval_results(stage: Path, files: Mapping[str, Sequence[EvalResultEntry]]) -> list[Path]:
    """Write each file of `eval_result_files` under `stage` as the Hub reads it
    (`eval_result_entries_to_yaml`, loaded back by `parse_eval_result_entries(yaml.safe_load(...))`)."""
    written = []
    for relative, entries in files.items():
        path = Path(stage) / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        data = eval_result_entries_to_yaml(list(entries))
        path.write_text(
            yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=1000), encoding="utf-8"
        )
        written.append(path)
    return written


__all__ = [
    "EVAL_RESULTS_FOLDER",
    "eval_result_files",
    "own_model_keys",
    "protocol_from_notes",
    "protocol_note",
    "recorded_protocol",
    "run_entries",
    "task_id",
    "write_eval_results",
]
