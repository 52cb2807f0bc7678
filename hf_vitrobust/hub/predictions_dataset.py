# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Per-sample predictions as a Hub dataset repo: one config per benchmark, one split per model.

`stage_predictions(stage, runs)` writes `data/<benchmark>/<split>.parquet` (the run's `predictions/<model
key>/<benchmark>.parquet`, columns of `PREDICTION_SCHEMA`) and a README.md whose YAML `configs:` section declares
every file (the Hub's manual configuration: `config_name`, `data_files: [{split, path}]`), so that the Hub's
parquet viewer and `datasets.load_dataset(folder_or_repo, benchmark)` read it without this package. The files are
written as `datasets` writes parquet (`evaluation.parquet_options`: content-defined chunking, a page index), so a
re-push uploads only the pages that changed. The card holds the schema, each run's protocols and its provenance.

Split names must match `\\w+(\\.\\w+)*` (`datasets`' rule): `split_name` maps a model key to one; see
docs/publishing.md ("Predictions datasets").
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from ..analysis.predictions import PREDICTION_SCHEMA, with_derived_columns
from ..analysis.results import load_results, merge_results
from ..evaluation.parquet_options import write_parquet
from .card_results import run_name
from .push import PushResult
from .staging import _check_apart, _prepare_stage, staged_files

DATA_FOLDER = "data"
SPLIT_PATTERN = re.compile(r"^\w+(\.\w+)*$")

#: The meaning of every column of `PREDICTION_SCHEMA` (the card's schema table; a test keeps the two equal).
COLUMN_DESCRIPTIONS: dict[str, str] = {
    "shard": "the shard (file, or CIFAR-C cell) of the benchmark's source the sample was read from",
    "position": "the sample's position in its shard (rows are in stream order: by shard, then position)",
    "sample_id": "the sample's id in its source (for a generated sample: `<corruption>/<severity>/<clean id>`)",
    "clean_sample_id": "the id of the clean sample a generated (corrupted) one was made of; null otherwise",
    "label": "the true class, an ImageNet-1k index (or the benchmark's label space); -1 where there is none",
    "prediction": "the top-1 class (argmax of the logits over all classes)",
    "top5": "the five highest-scoring classes, best first",
    "confidence": "the maximum softmax probability",
    "true_probability": "the softmax probability of the true class (NaN without a valid label)",
    "subset_prediction": "the argmax over the benchmark's class subset (ImageNet-A/R/O's 200 classes), as a "
    "1000-class index; equal to `prediction` where the benchmark has no subset",
    "ood_score": "ImageNet-O's anomaly score, minus the maximum softmax over its 200 classes; null elsewhere",
    "corruption": "the corruption (ImageNet-C) of the sample; null for clean samples",
    "severity": "the corruption's severity, 1 to 5; null for clean samples",
    "variant": "the ImageNet-9 variant (original, mixed_same, ...); null elsewhere",
    "perturbation": "the ImageNet-P perturbation of the sequence; null elsewhere",
    "difficulty": "the ImageNet-P difficulty level, where the perturbation has one; null elsewhere",
    "is_ood": "whether the sample is out-of-distribution (ImageNet-O's OOD detection); null elsewhere",
    "frame_predictions": "ImageNet-P: the top-1 class of every frame of the sequence (the generic columns "
    "describe its first, clean frame); null elsewhere",
    "frame_top5": "ImageNet-P: the top-5 classes of every frame; null elsewhere",
    "logits": "the full logits, for benchmarks not expanded by corruptions or perturbations (calibration and "
    "masked accuracy need them); null for ImageNet-C/-P",
    "metadata": "the sample's metadata as a JSON object (sorted keys), everything its source recorded",
}


def split_name(model_key: str) -> str:
    """The split name of a model key: each run of characters other than ASCII letters, digits and "_" (so "/",
    "-", ".", ":", "@" ...) becomes one "_", and "_" is stripped from both ends ("" gives "model").
    "timm/vit_base_patch16_224" -> "timm_vit_base_patch16_224"; "google_vit-base-patch16-224" ->
    "google_vit_base_patch16_224"; "builtin_efficientnet_lite0" stays as it is."""
    return re.sub(r"[^A-Za-z0-9_]+", "_", str(model_key)).strip("_") or "model"


def split_names(model_keys: Sequence[str]) -> dict[str, str]:
    """`split_name` of each key; ValueError when two different keys get the same split name (rename a model
    instead of letting one split silently take another's place)."""
    names: dict[str, str] = {}
    owners: dict[str, str] = {}
    for key in model_keys:
        name = split_name(key)
        if name in owners and owners[name] != key:
            raise ValueError(
                f"Model keys {owners[name]!r} and {key!r} both become split {name!r} (splits keep only ASCII "
                "letters, digits and '_'): give one of them another key."
            )
        owners[name] = key
        names[key] = name
    return names


def _normalized(path: Path) -> pa.Table:
    """A run's predictions parquet with exactly `PREDICTION_SCHEMA`'s columns (an old run gets "clean_sample_id"
    as `with_derived_columns` derives it); ValueError for a file with other columns."""
    table = with_derived_columns(pq.read_table(path))
    if set(table.schema.names) != set(PREDICTION_SCHEMA.names):
        extra = sorted(set(table.schema.names) - set(PREDICTION_SCHEMA.names))
        missing = sorted(set(PREDICTION_SCHEMA.names) - set(table.schema.names))
        raise ValueError(
            f"{path}: not a predictions file of this hf_vitrobust (extra {extra}, missing {missing})."
        )
    return table.select(PREDICTION_SCHEMA.names).cast(PREDICTION_SCHEMA).replace_schema_metadata(None)


def _collect(results: Sequence[Mapping[str, Any]]) -> tuple[dict[str, dict[str, Path]], dict[str, dict]]:
    """benchmark -> {model key: parquet path} (suite order, then model order) and model key -> its models entry
    (with "run": the run's name), over merged runs (a key found in several runs is "<key>@<run>")."""
    files: dict[str, dict[str, Path]] = {}
    models: dict[str, dict] = {}
    for result in results:
        folder = Path(str(result["_source"])).parent
        infos = {str(model["key"]): model for model in result.get("models") or []}
        predictions = result.get("predictions") or {}
        order = list(result.get("benchmarks") or {})
        for key, per_benchmark in predictions.items():
            models[key] = {**infos.get(key, {"key": key}), "run": run_name(result)}
            for benchmark in order + [b for b in per_benchmark if b not in order]:
                if benchmark not in per_benchmark:
                    continue
                path = folder / per_benchmark[benchmark]
                if not path.is_file():
                    raise FileNotFoundError(f"{result['_source']} names {path}, which does not exist.")
                files.setdefault(benchmark, {})[key] = path
    if not files:
        raise ValueError("The runs hold no per-sample predictions (results.json 'predictions' is empty).")
    return files, models


def _code(text: str, language: str = "") -> str:
    return f"```{language}\n{text.rstrip()}\n```"


def _card(
    configs: list[dict[str, Any]],
    rows: dict[str, dict[str, int]],
    splits: Mapping[str, str],
    models: Mapping[str, Mapping[str, Any]],
    results: Sequence[Mapping[str, Any]],
    repo_id: str | None,
) -> str:
    from .. import __version__

    benchmarks = [config["config_name"] for config in configs]
    title = f"Per-sample predictions ({repo_id.split('/')[-1]})" if repo_id else "Per-sample predictions"
    metadata = {
        "pretty_name": title,
        "task_categories": ["image-classification"],
        "tags": ["hf_vitrobust", "robustness", "predictions", *benchmarks],
        "configs": configs,
    }
    load_id = repo_id or "path/to/this/folder"
    first = configs[0]
    lines = [
        "---",
        yaml.safe_dump(metadata, sort_keys=False, allow_unicode=True, width=1000).strip(),
        "---",
        "",
        f"<!-- Staged by hf_vitrobust {__version__} (hf_vitrobust.hub.predictions_dataset). -->",
        "",
        f"# {metadata['pretty_name']}",
        "",
        "What each model said about every sample of each benchmark, written by `vitrobust evaluate`: any metric "
        "can be recomputed from these rows without the model. One config per benchmark, one split per model.",
        "",
        "## How to load",
        "",
        "No hf_vitrobust needed:",
        "",
        _code(
            "from datasets import load_dataset\n\n"
            f'rows = load_dataset("{load_id}", "{first["config_name"]}", split="{first["data_files"][0]["split"]}")',
            "python",
        ),
        "",
        "## Configs and splits",
        "",
        "| Config (benchmark) | Split (model) | Rows | File |",
        "|---|---|---:|---|",
    ]
    for config in configs:
        for entry in config["data_files"]:
            count = rows[config["config_name"]][entry["split"]]
            lines.append(f"| `{config['config_name']}` | `{entry['split']}` | {count} | `{entry['path']}` |")
    lines += [
        "",
        "## Split names",
        "",
        "A split name must match `\\w+(\\.\\w+)*`, so each model key becomes one: every run of characters other "
        "than ASCII letters, digits and `_` becomes one `_`, and `_` is stripped from both ends (two keys that "
        "would meet are refused). A model key found in more than one run is first made `<key>@<run folder>`.",
        "",
        "| Split | Model key | Model spec | Run |",
        "|---|---|---|---|",
    ]
    for key, split in splits.items():
        info = models[key]
        lines.append(f"| `{split}` | `{key}` | `{info.get('spec', key)}` | `{info['run']}` |")
    lines += ["", "## Schema", "", "| Column | Type | Meaning |", "|---|---|---|"]
    for field in PREDICTION_SCHEMA:
        lines.append(f"| `{field.name}` | `{field.type}` | {COLUMN_DESCRIPTIONS[field.name]} |")
    lines += ["", "## Runs: provenance and protocols", ""]
    for result in results:
        suite = result.get("suite") or {}
        lines += [
            f"### Run `{run_name(result)}`",
            "",
            f"- Suite: `{suite.get('name')}`"
            + (f" ({suite['description']})" if suite.get("description") else ""),
            f"- Seed: {result.get('seed')}",
            f"- hf_vitrobust version: {result.get('hf_vitrobust_version')}",
            f"- Created: {result.get('created')}",
            f"- Complete: {result.get('complete')}",
            "- Models:",
        ]
        for model in result.get("models") or []:
            lines.append(f"  - `{model.get('key')}`: spec `{model.get('spec')}` ({model.get('kind')})")
        lines += ["", "| Benchmark | Data source | Generated here | Samples |", "|---|---|---|---:|"]
        entries = result.get("benchmarks") or {}
        for name, info in entries.items():
            source = info.get("source") or {}
            where = source.get("location") or source.get("repo_id") or source.get("kind")
            revision = f" ({source['revision']})" if source.get("revision") else ""
            lines.append(
                f"| `{name}` | {source.get('kind')}: `{where}`{revision} | {bool(info.get('generated'))} | "
                f"{info.get('num_samples')} |"
            )
        for name, info in entries.items():
            if info.get("protocol") is not None:
                lines += ["", f"Protocol of `{name}` (results.json `benchmarks.{name}.protocol`):", ""]
                lines.append(_code(yaml.safe_dump(info["protocol"], sort_keys=False, width=1000), "yaml"))
        lines.append("")
    lines += [
        "The per-sample `label` column comes from each benchmark's data, under that data's own terms. Each run's "
        "full record (settings, environment, metrics) is its `results.json`, published with the model repo.",
        "",
    ]
    return "\n".join(lines)


def stage_predictions(
    stage: Path,
    results: Sequence[Path],
    *,
    repo_id: str | None = None,
    overwrite: bool = False,
) -> list[Path]:
    """Write exactly the folder a predictions dataset upload sends (`push(stage, repo_id, repo_type="dataset")`)
    and return its files: `data/<benchmark>/<split>.parquet` for every (model, benchmark) of the run folders
    `results` (or their results.json) and README.md (the configs, the split names, the schema, each run's
    protocols and provenance). A non-empty `stage` is refused unless `overwrite`, which empties it first."""
    if isinstance(results, str | Path):
        results = [results]
    merged = merge_results(load_results(list(results)))
    files, models = _collect(merged)
    splits = split_names(list(models))
    tables = {
        (b, key): _normalized(path) for b, per_model in files.items() for key, path in per_model.items()
    }
    _check_apart(Path(stage), [Path(str(r["_source"])).parent for r in merged])
    stage = _prepare_stage(Path(stage), overwrite)
    configs: list[dict[str, Any]] = []
    rows: dict[str, dict[str, int]] = {}
    for benchmark, per_model in files.items():
        data_files = []
        for key in per_model:
            relative = f"{DATA_FOLDER}/{benchmark}/{splits[key]}.parquet"
            (stage / relative).parent.mkdir(parents=True, exist_ok=True)
            table = tables[(benchmark, key)]
            write_parquet(stage / relative, table)
            data_files.append({"split": splits[key], "path": relative})
            rows.setdefault(benchmark, {})[splits[key]] = table.num_rows
        configs.append({"config_name": benchmark, "data_files": data_files})
    configs[0]["default"] = True
    used = {key: splits[key] for per_model in files.values() for key in per_model}
    card = _card(configs, rows, used, models, merged, repo_id)
    (stage / "README.md").write_text(card, encoding="utf-8")
    return staged_files(stage)


def predictions_manifest(stage: Path) -> dict[str, dict[str, str]]:
    """config -> {split: path} of a staged predictions dataset, read back from its README.md's `configs:`."""
    text = (Path(stage) / "README.md").read_text(encoding="utf-8")
    metadata = yaml.safe_load(text.split("---", 2)[1])
    return {c["config_name"]: {f["split"]: f["path"] for f in c["data_files"]} for c in metadata["configs"]}


def push_predictions(
    results: Sequence[Path],
    dataset_repo: str,
    *,
    model_repo: str | None = None,
    checkpoint: Path | None = None,
    image_processor: Any = None,
    output: Path | None = None,
    private: bool = False,
    dry_run: bool = False,
) -> list[tuple[Path, PushResult]]:
    """Stage (and, unless `dry_run`, upload) the runs' predictions as the dataset repo `dataset_repo`; with
    `model_repo`, then the model repo of `checkpoint` and the runs, whose card links the dataset. Stages go to
    `output` (both: `output/predictions` and `output/model`), else to a temporary folder. Returns (stage, result)
    per repo, in push order; everything is staged and checked before the first upload."""
    import tempfile

    from .push import push
    from .staging import stage_model

    results = [Path(result) for result in results]
    if not results:
        raise ValueError("Predictions come from evaluation runs: give at least one run folder.")
    if dry_run and output is None:
        raise ValueError("A dry run needs an output folder (the folder that would be uploaded).")
    pushed = []
    with tempfile.TemporaryDirectory(prefix="vitrobust-push-") as scratch:
        root = Path(output) if output is not None else Path(scratch)
        stages = {"predictions": root / "predictions" if model_repo or output is None else root}
        stage_predictions(stages["predictions"], results, repo_id=dataset_repo)
        targets = [("predictions", dataset_repo, "dataset")]
        if model_repo:
            stages["model"] = root / "model"
            stage_model(
                stages["model"],
                checkpoint,
                results,
                repo_id=model_repo,
                predictions_repo=dataset_repo,
                image_processor=image_processor,
            )
            targets.append(("model", model_repo, "model"))
        for part, repo, repo_type in targets:
            result = push(stages[part], repo, repo_type=repo_type, private=private, dry_run=dry_run)
            pushed.append((stages[part], result))
    return pushed


__all__ = [
    "COLUMN_DESCRIPTIONS",
    "SPLIT_PATTERN",
    "predictions_manifest",
    "push_predictions",
    "split_name",
    "split_names",
    "stage_predictions",
]
