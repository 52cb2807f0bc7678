# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The fixed table behind a model card's `model-index` (docs/publishing.md, "Model-index").

`dataset.type` of a benchmark's results is decided by where its images came from (results.json's
`benchmarks.<name>.source`):

- streamed from the Hub (source kind "hub", "datasets" or "parquet" with a Hub id as location): that Hub id, e.g.
  "ILSVRC/imagenet-1k" for imagenet-val (the ids each benchmark streams by default are its `Benchmark.hub_sources`,
  listed in docs/hub_datasets.md);
- generated here (ImageNet-C/-P/CIFAR-C corrupted on the fly): "hf_vitrobust/<benchmark>-generated", with
  `dataset.args.generated: true` and a name that says so;
- anything else (a local folder or file, the photos bundled with hf_vitrobust): "hf_vitrobust/<benchmark>-local",
  with `dataset.args.local: true`: our own name, never a Hub id the data may not match.

`metric.type` of each number is fixed per benchmark task by `metric_table`; values keep results.json's units, which
the metric names state. The first rows of each table are the headline numbers of the papers.

`interval_headline` names the interval (results.json "intervals", named as its "summary") of a model-index value,
and the factor from the interval's units (percent, points) to the value's (a fraction where the metric name says
so): the card's text gives each such value with its interval; the model-index itself holds the plain numbers.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

OWN_NAMESPACE = "hf_vitrobust"
HUB_KINDS = ("hub", "datasets", "parquet")
_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$")

# Benchmark metric (key path in its metric dict) -> (model-index metric type, display name).
CLASSIFICATION_METRICS = (
    (("top1",), "accuracy", "Top-1 accuracy (%)"),
    (("top5",), "top_5_accuracy", "Top-5 accuracy (%)"),
    (("calibration", "ece"), "ece", "Expected calibration error (fraction, 15 bins)"),
    # ImageNet-A/R: both class-mask protocols (docs/protocols.md); "top1" above is the run's headline one.
    (
        ("protocols", "hendrycks-200", "top1"),
        "accuracy",
        "Top-1 over the set's 200 classes (%, hendrycks-200)",
    ),
    (("protocols", "paul-chen-1000", "top1"), "accuracy", "Top-1 over all 1000 classes (%, paul-chen-1000)"),
)
CORRUPTION_METRICS = (
    (("mce",), "mce", "mCE (%, AlexNet-normalised, lower is better)"),
    (
        ("protocols", "unnormalized-19", "mce"),
        "mce",
        "Unnormalised mean corruption error over every corruption (%, unnormalized-19, lower is better)",
    ),
    (("relative_mce",), "relative_mce", "Relative mCE (%, lower is better)"),
    (("mean_top1",), "accuracy", "Mean top-1 over corruptions and severities (%)"),
    (("severity5_top1",), "accuracy_severity_5", "Mean top-1 at severity 5 (%)"),
)
SEQUENCE_METRICS = (
    (("mfr",), "mfr", "mFR (%, AlexNet-normalised, lower is better)"),
    (("mfr_unnormalized",), "flip_probability", "Mean flip probability (fraction, lower is better)"),
    (("mt5d_unnormalized",), "top_5_distance", "Mean top-5 distance (lower is better)"),
)
OOD_METRICS = (
    (("aupr",), "aupr", "AUPR, OOD images positive (fraction)"),
    (("auroc",), "roc_auc", "AUROC (fraction)"),
    (("fpr_at_95_tpr",), "fpr_at_95_tpr", "FPR at 95% TPR (fraction, lower is better)"),
)


# Key path -> (the interval's name after "<benchmark> ", factor from its units to the model-index value's).
_INTERVALS = {
    ("calibration", "ece"): ("ECE %", 0.01),
    ("mce",): ("mCE % (alexnet-15)", 1.0),
    ("protocols", "unnormalized-19", "mce"): ("mCE % (unnormalized-19)", 1.0),
    ("relative_mce",): ("relative mCE %", 1.0),
    ("mean_top1",): ("mean top-1 %", 1.0),
    ("severity5_top1",): ("severity-5 mean top-1 %", 1.0),
    ("mfr_unnormalized",): ("mFR unnormalised %", 0.01),
    ("aupr",): ("AUPR %", 0.01),
    ("bg_gap",): ("BG-gap (points)", 0.01),
}


def interval_headline(
    benchmark: str, path: tuple[str, ...], metrics: Mapping[str, Any]
) -> tuple[str, float] | None:
    """The name of the interval (in results.json "intervals") of the model-index value at `path` of a benchmark's
    metric dict, and the factor from the interval's units to the value's; None where no interval describes it.

    Top-1 is named by the class mask it was scored under (ImageNet-A/R, "<benchmark> top-1 % (<class_mask>)"), as
    `evaluation.scoring.masked_headline` names it: the headline "top1" by the run's class mask, each protocol's by
    its own (a run holds the interval of its headline class mask only)."""
    mask = metrics.get("class_mask")
    if path == ("top1",):
        return (f"{benchmark} top-1 % ({mask})" if mask else f"{benchmark} top-1 %"), 1.0
    if len(path) == 3 and path[0] == "protocols" and path[2] == "top1":
        return f"{benchmark} top-1 % ({path[1]})", 1.0
    if path in _INTERVALS:
        name, factor = _INTERVALS[path]
        return f"{benchmark} {name}", factor
    return None


def is_hub_id(value: Any) -> bool:
    """Whether `value` reads as a Hub repository id, "org/name"."""
    return isinstance(value, str) and bool(_HUB_ID.match(value))


def is_own_type(dataset_type: str) -> bool:
    """Whether a `dataset.type` is our own name (generated or local data), not a Hub dataset."""
    return dataset_type.startswith(f"{OWN_NAMESPACE}/")


def _streamed_from(source: Mapping[str, Any]) -> str | None:
    """The Hub id a source streamed its images from, else None (imagenet-o: its OOD half's)."""
    if source.get("kind") == "imagenet-o" and isinstance(source.get("ood"), Mapping):
        source = source["ood"]
    location = source.get("location")
    return location if source.get("kind") in HUB_KINDS and is_hub_id(location) else None


def dataset_entry(benchmark: str, info: Mapping[str, Any]) -> dict[str, Any]:
    """The model-index `dataset` of a benchmark's results (`info`: results.json's `benchmarks.<name>`)."""
    source = info.get("source") or {}
    generated = bool(info.get("generated") or source.get("generated"))
    if generated:
        clean = source.get("clean") if isinstance(source.get("clean"), Mapping) else {}
        made_from = _streamed_from(clean) or clean.get("kind") or "a clean source"
        dataset: dict[str, Any] = {
            "type": f"{OWN_NAMESPACE}/{benchmark}-generated",
            "name": f"{benchmark} (generated by hf_vitrobust from {made_from}; not the released files)",
            "args": {
                "generated": True,
                "clean_source": made_from,
                **{
                    key: source[key]
                    for key in ("corruptions", "severities", "perturbations", "difficulty", "seed")
                    if source.get(key) is not None
                },
            },
        }
    else:
        hub_id = _streamed_from(source)
        if hub_id is not None:
            dataset = {"type": hub_id, "name": f"{benchmark} ({hub_id})"}
            if source.get("revision"):
                dataset["revision"] = str(source["revision"])
        else:
            kind = source.get("kind") or "local"
            name = (
                f"{benchmark} (the photos bundled with hf_vitrobust; a demo sample)"
                if kind == "builtin-photos"
                else f"{benchmark} (a local copy, {kind}; not read from the Hub)"
            )
            dataset = {
                "type": f"{OWN_NAMESPACE}/{benchmark}-local",
                "name": name,
                "args": {"local": True, "kind": kind},
            }
    if info.get("num_samples") is not None:
        dataset.setdefault("args", {})["num_samples"] = info["num_samples"]
    return dataset


def metric_table(info: Mapping[str, Any], metrics: Mapping[str, Any]) -> tuple:
    """The (key path, metric type, metric name) rows of a benchmark's metric dict, by its task."""
    task = info.get("task")
    if task == "sequence":
        return SEQUENCE_METRICS
    if task == "ood":
        return OOD_METRICS
    if task == "background":
        variants = sorted((metrics.get("accuracy") or {}).keys())
        return (
            (("bg_gap",), "bg_gap", "BG-gap (fraction, mixed_same - mixed_rand)"),
            *((("accuracy", v), "accuracy", f"Top-1 on {v} (fraction)") for v in variants),
        )
    if "mean_top1" in metrics or "mce" in metrics:
        return CORRUPTION_METRICS
    return CLASSIFICATION_METRICS


__all__ = [
    "CLASSIFICATION_METRICS",
    "CORRUPTION_METRICS",
    "OOD_METRICS",
    "SEQUENCE_METRICS",
    "dataset_entry",
    "interval_headline",
    "is_hub_id",
    "is_own_type",
    "metric_table",
]
