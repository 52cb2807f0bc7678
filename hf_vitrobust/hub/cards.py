# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Model cards: one renderer, fed by the Jinja templates of the top-level `model_cards/` folder (shipped in the
wheel as `hf_vitrobust/model_card_templates/`), for `vitrobust train` (a checkpoint's card) and `vitrobust push`
(a checkpoint and/or evaluation results).

The YAML metadata follows the Hub's model card spec: license, library_name, pipeline_tag, tags, datasets and a
`model-index` holding one eval result per (model, benchmark, metric) of every results.json given, so that
`huggingface_hub.ModelCard(text).data.eval_results` lists them all; its `dataset.type` and `metric.type` come from
the fixed table of `hf_vitrobust.hub.model_index` (docs/publishing.md, "Model-index"). A staged card also lists the
repository's `.eval_results/` entries (`hf_vitrobust.hub.eval_results`), or says why there are none. The card's
"Reproduce" section holds the one `vitrobust evaluate` command that reproduces each run (`reproduce_command`).

Where a run holds the confidence intervals of its numbers (results.json "intervals"), the card's text gives each
model-index value that has one with its interval, "x [lo, hi]" (`interval_rows`); the model-index values stay
plain numbers, as the Hub's schema has them. A run without intervals renders as before.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from huggingface_hub import EvalResultEntry

from ..analysis.analyze import ANALYSIS_KEY, analyze, stored_analysis
from ..analysis.results import benchmark_kind, merge_results
from .card_results import (
    card_dataset,
    eval_results,
    finite_number,
    format_cell,
    interval_rows,
    model_names,
    run_name,
)
from .model_index import is_hub_id, is_own_type

TEMPLATES = "model_card_templates"
MODEL_CARD_TEMPLATE = "model_card.md.j2"
METRIC_SPACE_TEMPLATE = "metric_space.md.j2"

_CITATIONS = {
    "paul2022": """@inproceedings{paul2022vision,
  title     = {Vision Transformers are Robust Learners},
  author    = {Paul, Sayak and Chen, Pin-Yu},
  booktitle = {Proceedings of the AAAI Conference on Artificial Intelligence},
  volume    = {36},
  number    = {2},
  pages     = {2071--2081},
  year      = {2022}
}""",
    "park2022": """@inproceedings{park2022how,
  title     = {How Do Vision Transformers Work?},
  author    = {Park, Namuk and Kim, Songkuk},
  booktitle = {International Conference on Learning Representations},
  year      = {2022}
}""",
    "hendrycks2019": """@inproceedings{hendrycks2019benchmarking,
  title     = {Benchmarking Neural Network Robustness to Common Corruptions and Perturbations},
  author    = {Hendrycks, Dan and Dietterich, Thomas},
  booktitle = {International Conference on Learning Representations},
  year      = {2019}
}""",
}


def templates_dir() -> Path:
    """The card templates: `model_cards/` of a checkout, `hf_vitrobust/model_card_templates/` of a wheel."""
    path = Path(str(resources.files("hf_vitrobust").joinpath(TEMPLATES)))
    if not (path / MODEL_CARD_TEMPLATE).is_file():
        raise FileNotFoundError(
            f"The model card templates are not installed at {path}; reinstall hf_vitrobust."
        )
    return path


class _Dumper(yaml.SafeDumper):
    """YAML without anchors and aliases (shared dicts are written out in full, as the Hub's examples are)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _yaml(data: Mapping[str, Any]) -> str:
    return yaml.dump(dict(data), Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=1000).strip()


def _render(template: str, **variables: Any) -> str:
    import jinja2

    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,  # Markdown, not HTML
    )
    return environment.get_template(template).render(**variables)


def suite_argument(result: Mapping[str, Any]) -> str:
    """`--suite` of a run: a shipped suite's name, else the path of the suite file it read."""
    suite = result.get("suite") or {}
    name = str((result.get("settings") or {}).get("suite") or suite.get("name") or "demo")
    path = suite.get("path")
    if not path:
        return name
    file = Path(str(path))
    if file.stem == name and file.parent.parts[-2:] == ("evaluation", "suites"):
        return name
    return str(path)


def reproduce_command(
    result: Mapping[str, Any], *, model_specs: Mapping[str, str] | None = None, suite: str | None = None
) -> str:
    """The `vitrobust evaluate` command that reproduces a results.json's numbers: its models' specs (each replaced
    by `model_specs[spec]` where given, e.g. a checkpoint folder by the repository it is pushed to), the suite's
    name or file (`suite` where given: the suite file staged with the run), the data sources that were given, the
    protocol choices the suite does not make, the image limit and precision when set, and the seed."""
    import shlex

    settings = result.get("settings") or {}
    model_specs = model_specs or {}
    specs = [str(model.get("spec")) for model in result.get("models") or [] if model.get("spec")]
    words = ["vitrobust", "evaluate"]
    for spec in specs:
        words += ["--model", model_specs.get(spec, spec)]
    words += ["--suite", suite or suite_argument(result)]
    for benchmark, source in sorted((settings.get("data") or {}).items()):
        words += ["--data", f"{benchmark}={source}"]
    declared = (result.get("suite") or {}).get("benchmarks") or {}
    for benchmark, protocol in (settings.get("protocols") or {}).items():
        pinned = (declared.get(benchmark) or {}).get("protocol") or {}
        for part, choice in (protocol or {}).items():
            if pinned.get(part) != choice:
                words += ["--protocol", f"{benchmark}.{part}={choice}"]
    if settings.get("limit") is not None:
        words += ["--limit", str(settings["limit"])]
    if settings.get("precision") not in (None, "fp32"):
        words += ["--precision", str(settings["precision"])]
    seed = result.get("seed", settings.get("seed"))
    if seed is not None:
        words += ["--seed", str(seed)]
    return shlex.join(words)


def provenance_note(result: Mapping[str, Any]) -> str:
    """The package version and git commit a run was computed with: "hf_vitrobust 0.1.0, commit <sha>", with
    "(uncommitted changes)" for a dirty checkout, or "commit unknown" where results.json records none."""
    recorded = result.get("provenance") or {}
    version = (
        recorded.get("hf_vitrobust_version") or result.get("hf_vitrobust_version") or "(version unknown)"
    )
    commit = recorded.get("git_commit")
    if not commit:
        return f"hf_vitrobust {version}, commit unknown"
    dirty = " (uncommitted changes)" if recorded.get("git_dirty") else ""
    return f"hf_vitrobust {version}, commit {commit}{dirty}"


def _percent(accuracy: Any) -> float | None:
    """An accuracy in percent: the trainer records fractions."""
    value = finite_number(accuracy)
    return None if value is None else float(100 * value if value <= 1 else value)


def _training_section(summary: Mapping[str, Any]) -> dict[str, Any]:
    recipe = summary.get("recipe") or {}
    history = []
    for row in summary.get("history") or []:
        values = [
            row.get("epoch"),
            row.get("train_loss"),
            _percent(row.get("eval_accuracy")),
            row.get("seconds"),
        ]
        history.append([format_cell(value) for value in values])
    accuracy = _percent(summary.get("eval_accuracy"))
    return {
        "recipe": [(str(key), format_cell(value)) for key, value in recipe.items()],
        "history": history,
        "eval_accuracy": None if accuracy is None else format_cell(accuracy),
        "wall_seconds": format_cell(finite_number(summary.get("wall_seconds"))),
        "epochs": summary.get("epochs"),
    }


def _dataset_name(summary: Mapping[str, Any]) -> str | None:
    dataset = summary.get("dataset")
    if isinstance(dataset, Mapping):
        dataset = dataset.get("id") or dataset.get("name") or dataset.get("path")
    return None if dataset is None else str(dataset)


def _packages(summary: Mapping[str, Any] | None) -> list[str]:
    """What a user needs to load and run the checkpoint without hf_vitrobust (timm for a TimmWrapper folder)."""
    kind = f"{(summary or {}).get('model_type', '')} {(summary or {}).get('architecture', '')}".lower()
    timm = "timm" in kind
    return ["transformers", "torch", *(["timm"] if timm else []), "pillow"]


def _is_alternet(summary: Mapping[str, Any]) -> bool:
    text = f"{summary.get('architecture', '')} {summary.get('preset', '')} {summary.get('model_type', '')}"
    return "alternet" in text.lower()


def _results_sections(
    results: Sequence[Mapping[str, Any]],
    names: Mapping[tuple[int, str], str],
    model_specs: Mapping[str, str] | None = None,
    suite_files: Mapping[str, str] | None = None,
):
    sections = []
    for position, result in enumerate(results):
        summary = result.get("summary") or {}
        headlines = list(dict.fromkeys(h for per_model in summary.values() for h in per_model))
        rows = [
            [names.get((position, key), key), *(format_cell(per_model.get(h)) for h in headlines)]
            for key, per_model in summary.items()
        ]
        benchmarks = []
        for benchmark, info in (result.get("benchmarks") or {}).items():
            dataset = card_dataset(benchmark, info)
            benchmarks.append(
                [
                    benchmark,
                    dataset["name"],
                    "yes" if info.get("generated") else "no",
                    format_cell(info.get("num_samples")),
                ]
            )
        suite = result.get("suite") or {}
        keyed_names = {key: names.get((position, key), key) for key in result.get("metrics") or {}}
        intervals, interval_notes = interval_rows(result, keyed_names)
        sections.append(
            {
                "run": run_name(result),
                "suite": suite.get("name"),
                "description": " ".join(str(suite.get("description") or "").split()),
                "created": result.get("created"),
                "version": result.get("hf_vitrobust_version"),
                "command": reproduce_command(
                    result, model_specs=model_specs, suite=(suite_files or {}).get(run_name(result))
                ),
                "provenance": provenance_note(result),
                "complete": result.get("complete", True),
                "headlines": headlines,
                "rows": rows,
                "intervals": intervals,
                "interval_notes": interval_notes,
                "benchmarks": benchmarks,
                "probes": sorted(
                    {p for per_model in (result.get("probes") or {}).values() for p in per_model}
                ),
            }
        )
    return sections


def _pushed_specs(own_specs: Sequence[str], repo_id: str | None) -> dict[str, str]:
    """The checkpoint folder's specs -> the repository it is pushed to (what a reader can run)."""
    return {spec: repo_id for spec in own_specs} if repo_id else {}


def _limitations(summary: Mapping[str, Any] | None, results: Sequence[Mapping[str, Any]]) -> list[str]:
    notes = []
    if summary is not None:
        dataset = _dataset_name(summary)
        if dataset == "digits":
            notes.append(
                "This is a toy model: trained on scikit-learn's 8x8 handwritten digits (1,797 images) upscaled, "
                "to show the training recipe end to end on a CPU. It is not an ImageNet model, and its numbers "
                "say nothing about AlterNet at scale."
            )
        elif dataset is not None:
            notes.append(
                f"Trained on `{dataset}` only: expect it to fail on images unlike that data, and check its "
                "robustness results below before relying on it."
            )
    kinds = {
        ((info.get("source") or {}).get("clean") or info.get("source") or {}).get("kind")
        for result in results
        for info in (result.get("benchmarks") or {}).values()
    }
    if any(info.get("generated") for r in results for info in (r.get("benchmarks") or {}).values()):
        notes.append(
            "Benchmarks marked *generated* were corrupted on the fly by hf_vitrobust's corruption engine from clean "
            "images, not read from the released ImageNet-C/-P files: close to, but not the official benchmarks."
        )
    if "builtin-photos" in kinds:
        notes.append(
            "Results on the photos bundled with hf_vitrobust (a few dozen images) demonstrate every output of a run; "
            "they are not a measurement."
        )
    if any(
        (m or {}).get("missing_cells")
        for r in results
        for per in (r.get("metrics") or {}).values()
        for m in per.values()
    ):
        notes.append("Some ImageNet-C cells were missing: those mCE values cover the cells present only.")
    return notes


def render_model_card(
    *,
    checkpoint: Mapping[str, Any] | None = None,
    results: Sequence[Mapping[str, Any]] = (),
    repo_id: str | None = None,
    license: str | None = None,
    own_specs: Sequence[str] = (),
    predictions_repo: str | None = None,
    suite_files: Mapping[str, str] | None = None,
    eval_result_files: Mapping[str, Sequence[EvalResultEntry]] | None = None,
) -> str:
    """A README.md (YAML metadata + Markdown) for a checkpoint and/or evaluation results.

    `checkpoint`: the training summary `vitrobust train` writes (`training_summary.json`), or any mapping with
    "architecture" (and optionally preset, dataset, recipe, history, eval_accuracy). `results`: results.json
    dicts (`hf_vitrobust.analysis.results.load_results`). `repo_id`: where it goes (load snippets and links).
    `license`: default apache-2.0 (weights trained here from scratch, and results made by hf_vitrobust), "other"
    for a checkpoint that started from pretrained weights. `own_specs`: model specs (e.g. the checkpoint's folder)
    that the results name this repository's model by; results of other models keep their own names.
    `predictions_repo`: the dataset repo holding the runs' per-sample predictions
    (`hf_vitrobust.hub.predictions_dataset`), linked from the card. `suite_files`: run name -> the path, in the
    repo, of the suite file staged with that run, which its reproduce command names. `eval_result_files`: the
    `.eval_results/` files staged beside the card (`eval_results.eval_result_files`), listed in a section of their
    own; an empty mapping says that no model of the runs is the repository's; None (not staged) adds nothing.
    """
    from .. import __version__

    if checkpoint is None and not results:
        raise ValueError("A model card needs a checkpoint summary, evaluation results, or both.")
    if isinstance(results, Mapping):
        results = [results]
    summary = dict(checkpoint) if checkpoint is not None else None
    repo_name = repo_id.split("/")[-1] if repo_id else None
    if summary is not None:
        model_name = repo_name or str(summary.get("preset") or summary.get("architecture") or "model")
    else:
        model_name = repo_name
    model_index = eval_results(results, model_name=model_name, repo_id=repo_id, own_specs=own_specs)
    names = model_names(results)

    if license is None:
        license = "other" if summary is not None and summary.get("pretrained") else "apache-2.0"
    tags = ["hf_vitrobust", "robustness", "image-classification", "vision"]
    if summary is not None and _is_alternet(summary):
        tags += ["alternet", "vision-transformer", "custom_code"]
    tags += sorted({b for r in results for b in (r.get("benchmarks") or {})})
    datasets = []
    trained_on = _dataset_name(summary) if summary is not None else None
    if is_hub_id(trained_on) and not Path(trained_on).exists():  # "org/name", not a local folder
        datasets.append(trained_on)
    datasets += [
        e["dataset"]["type"]
        for entry in model_index
        for e in entry["results"]
        if not is_own_type(e["dataset"]["type"])
    ]
    metadata: dict[str, Any] = {"license": license}
    if summary is not None:
        metadata["library_name"] = "transformers"
    metadata["pipeline_tag"] = "image-classification"
    metadata["tags"] = list(dict.fromkeys(tags))
    if datasets:
        metadata["datasets"] = list(dict.fromkeys(datasets))
    if model_index:
        metadata["model-index"] = model_index
    card_data = _yaml(metadata)

    # Hendrycks & Dietterich defined ImageNet-C/-P and CIFAR-C.
    uses_c_or_p = any(
        benchmark_kind(r, name) in ("corruption", "perturbation") or "cifar" in name
        for r in results
        for name in (r.get("benchmarks") or {})
    )
    analysis = _stored_analysis(results)
    reproduction = _reproduction_section(analysis)
    citations = [_CITATIONS["paul2022"], _CITATIONS["park2022"]]
    if uses_c_or_p:
        citations.append(_CITATIONS["hendrycks2019"])
    card = _render(
        MODEL_CARD_TEMPLATE,
        card_data=card_data,
        title=model_name or "Robustness results",
        repo_id=repo_id,
        load_id=repo_id or "path/to/this/folder",
        summary=summary,
        model_label=str((summary or {}).get("preset") or (summary or {}).get("architecture") or "model"),
        alternet=summary is not None and _is_alternet(summary),
        dataset=_dataset_name(summary) if summary is not None else None,
        labels=list((summary or {}).get("id2label", {}).values())[:20] if summary else [],
        num_labels=(summary or {}).get("num_labels"),
        training=_training_section(summary)
        if summary and (summary.get("recipe") or summary.get("history"))
        else None,
        runs=_results_sections(results, names, _pushed_specs(own_specs, repo_id), suite_files),
        reproduction=reproduction,
        effective_robustness=_effective_robustness_section(analysis),
        limitations=_limitations(summary, results),
        citations=citations,
        version=(summary or {}).get("hf_vitrobust_version") or __version__,
        packages=_packages(summary),
    )
    if eval_result_files is not None and results:
        card = _list_eval_results(card, eval_result_files)
    return card if not predictions_repo else _link_predictions(card, predictions_repo)


def _stored_analysis(results: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The runs' published numbers, findings and effective robustness: a single run's as its results.json keeps
    them (`ANALYSIS_KEY`, stored by the runner), the runs of several analysed once (`analyze`); None without runs."""
    if not results:
        return None
    merged = merge_results(results)
    if len(merged) == 1 and ANALYSIS_KEY in merged[0]:
        return stored_analysis(merged)
    return analyze(merged).reproduction()


def _effective_robustness_section(summary: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The card's "Effective robustness" table and note, the report's (`report.effective_robustness_section`);
    None where no model has an imagenet-val top-1 and a natural shift's."""
    from ..report.effective_robustness_section import effective_robustness_table

    table = effective_robustness_table(summary) if summary else None
    if table is None:
        return None
    headers, rows, note = table
    return {"headers": headers, "rows": rows, "note": note}


def _reproduction_section(summary: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The card's "Published vs ours" and "Findings" tables (`report.reproduction_sections`, the report's
    sections): None when the runs match no published number and hold no pair of a paper's comparison."""
    from ..report.reproduction_sections import (
        FINDINGS_HEADERS,
        PUBLISHED_HEADERS,
        findings_table,
        published_table,
        verdict_sentence,
    )

    if not summary or (not summary["published"] and not summary["findings"]):
        return None

    def cells(rows: list[list[str]]) -> list[list[str]]:
        return [[format_cell(cell) for cell in row] for row in rows]

    return {
        "level": f"{100 * summary['confidence_level']:g} %",
        "sentence": verdict_sentence(summary["published"]) if summary["published"] else None,
        "published_headers": PUBLISHED_HEADERS,
        "published": cells(published_table(summary["published"])),
        "findings_headers": FINDINGS_HEADERS,
        "findings": [
            {
                "title": f"{group['paper']}, pair {group['pair']}",
                "rows": cells(findings_table(group["checks"])),
            }
            for group in summary["findings"]
        ],
    }


def _list_eval_results(card: str, files: Mapping[str, Sequence[EvalResultEntry]]) -> str:
    """The card with a section listing the `.eval_results/` entries, before "## Limitations"."""
    lines = ["## Evaluation results (`.eval_results`)", ""]
    if not files:
        lines += [
            "This repository has no `.eval_results/` entries: an entry names no model, so only the headlines of this",
            "repository's own model go there, and these runs give none (`vitrobust push` logs why). The numbers above",
            "are published in the `model-index` only.",
            "",
        ]
    else:
        lines += [
            "This repository's own headline numbers in the Hub's evaluation-results format (the `model-index` above is",
            "kept for older tools and holds the same values). A task id names the benchmark, the metric and each",
            "protocol choice that is not the benchmark's default.",
            "",
            "| File | Dataset | Task | Value | Notes |",
            "|---|---|---|---:|---|",
        ]
        for path, entries in files.items():
            for entry in entries:
                cells = [f"`{path}`", f"`{entry.dataset_id}`", f"`{entry.task_id}`", format_cell(entry.value)]
                lines.append(f"| {' | '.join([*cells, format_cell(entry.notes)])} |")
        lines.append("")
    marker = "\n## Limitations\n"
    section = "\n".join(lines)
    if marker in card:
        return card.replace(marker, f"\n{section}{marker}", 1)
    return f"{card.rstrip()}\n\n{section}"


def _link_predictions(card: str, predictions_repo: str) -> str:
    """The card with a line linking the predictions dataset: before "## Robustness results", else at the end."""
    line = (
        f"Per-sample predictions: https://huggingface.co/datasets/{predictions_repo} (one config per benchmark, "
        "one split per model; `datasets.load_dataset`)."
    )
    marker = "\n## Robustness results\n"
    if marker in card:
        return card.replace(marker, f"\n{line}\n{marker}", 1)
    return f"{card.rstrip()}\n\n{line}\n"


def metric_space_readme(
    *, metadata: Mapping[str, Any], body: str, name: str, module_name: str, repo_id: str | None = None
) -> str:
    """README.md of a metric Space (`stage_metric`): the Space metadata, a how-to-load note and the metric card."""
    card_data = _yaml(metadata)
    return _render(
        METRIC_SPACE_TEMPLATE,
        card_data=card_data,
        name=name,
        module_name=module_name,
        load_id=repo_id or f"path/to/{module_name}",
        body=body.strip(),
    )


__all__ = [
    "metric_space_readme",
    "provenance_note",
    "render_model_card",
    "reproduce_command",
    "suite_argument",
    "templates_dir",
]
