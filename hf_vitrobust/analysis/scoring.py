# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Benchmark metrics from a model's per-sample predictions (the parquet rows), with `hf_vitrobust.metrics`.

Everything here reads predictions only, never a model: the same functions recompute a finished run's metrics.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..data import Benchmark
from ..data.class_lists import ClassSubset
from ..data.real_labels import real_labels_of, real_topk_correct
from ..metrics import (
    background_gap,
    calibration_metrics,
    corruption_cell_errors,
    corruption_error_from_counts,
    flip_rates,
    masked_accuracy,
    ood_detection_metrics,
)
from ..metrics.robustbench import (
    ROBUSTBENCH_SEVERITIES,
    robustbench_alexnet_accuracies,
    robustbench_corruption_scores,
)
from .headlines import (
    AUPR,
    BG_GAP,
    CORRUPTIONS_ACCURACY,
    MCE,
    MEAN_ERROR,
    MEAN_TOP1,
    MFR,
    TOP1,
    headline_name,
)
from .prediction_source import Predictions, as_predictions
from .protocols import default_protocol


def _percent(value: float) -> float:
    return 100.0 * float(value)


def _logits(frame: pd.DataFrame) -> np.ndarray | None:
    if "logits" not in frame or frame["logits"].isna().any():
        return None
    return np.stack(frame["logits"].to_numpy()).astype(np.float64)


def _all_class_accuracy(labelled: pd.DataFrame, labels: np.ndarray) -> dict[str, float]:
    top5 = np.stack(labelled["top5"].to_numpy())
    return {
        "top1": _percent(np.mean(labelled["prediction"].to_numpy() == labels)),
        "top5": _percent(np.mean((top5 == labels[:, None]).any(axis=1))),
    }


def reassessed_accuracy(labelled: pd.DataFrame) -> dict[str, Any]:
    """ImageNet-ReaL top-1 / top-5 (percent) of validation predictions (Beyer et al. 2020; timm's --real-labels):
    right when a prediction is any of the image's ReaL labels, over the images that have one; how many were scored
    and left out (no ReaL label). Samples are matched by validation file name (`data.real_labels`)."""
    label_sets = real_labels_of(labelled["sample_id"], "ReaL labels: ")
    top1, top5, scored = real_topk_correct(np.stack(labelled["top5"].to_numpy()), label_sets)
    num_scored = int(scored.sum())
    return {
        "top1": _percent(np.mean(top1[scored])) if num_scored else None,
        "top5": _percent(np.mean(top5[scored])) if num_scored else None,
        "num_scored": num_scored,
        "num_left_out": int(len(labelled) - num_scored),
    }


def clean_of_generated(
    frame: pd.DataFrame | Predictions, clean: pd.DataFrame | Predictions | None, generated: bool
) -> pd.DataFrame | None:
    """The clean predictions a generated benchmark's relative mCE compares with: those of the clean images its
    samples were made of (a subset under --limit), else `clean` as it is (a clean benchmark is read whole)."""
    if clean is None:
        return None
    clean = as_predictions(clean).frame()
    if not generated:
        return clean
    return clean[clean["sample_id"].isin(as_predictions(frame).unique("clean_sample_id"))]


def classification_metrics(
    benchmark: Benchmark, frame: pd.DataFrame, protocol: dict[str, str] | None = None
) -> dict[str, Any]:
    """Top-1 / top-5 (percent) over the labelled samples, and calibration where the logits were kept.

    ImageNet-A/R are scored under both class-mask protocols (`protocols`): "hendrycks-200", the argmax over their
    200 classes, and "paul-chen-1000", the argmax over all 1000; `top1` / `top5` are those of `protocol`'s
    class_mask (default hendrycks-200)."""
    labelled = frame[frame["label"] >= 0]
    if labelled.empty:
        return {"num_samples": 0, "note": "no labelled samples"}
    labels = labelled["label"].to_numpy()
    logits = _logits(labelled)
    result: dict[str, Any] = {"num_samples": len(labelled)}
    if benchmark.class_subset is not None and benchmark.class_subset.groups:
        return {**result, **pooled_accuracy(benchmark.class_subset, labelled, labels)}
    if benchmark.class_subset is not None:
        chosen = (protocol or default_protocol(benchmark))["class_mask"]
        if logits is not None:
            masked = masked_accuracy(logits, labels, benchmark.class_subset.class_indices)
            subset = {
                "top1": _percent(masked.top1),
                "top5": None if masked.top5 is None else _percent(masked.top5),
            }
        else:
            subset = {
                "top1": _percent(np.mean(labelled["subset_prediction"].to_numpy() == labels)),
                "top5": None,
            }
        result["protocols"] = {
            "hendrycks-200": subset,
            "paul-chen-1000": _all_class_accuracy(labelled, labels),
        }
        result["class_mask"] = chosen
        result.update(result["protocols"][chosen])
        return result
    result.update(_all_class_accuracy(labelled, labels))
    if benchmark.reassessed_labels and (protocol or {}).get("labels") == "real":
        result["protocols"] = {
            "imagenet": _all_class_accuracy(labelled, labels),
            "real": reassessed_accuracy(labelled),
        }
        result["labels"] = "real"
        result.update(result["protocols"]["real"])
    if logits is not None and logits.shape[1] > int(labels.max()):
        result["calibration"] = calibration_metrics(logits, labels, from_logits=True).to_dict()
    return result


def pooled_accuracy(subset: ClassSubset, labelled: pd.DataFrame, labels: np.ndarray) -> dict[str, Any]:
    """ObjectNet's top-1 (percent): right when the argmax over `subset` (`subset_prediction`, the winner of the
    groups' maximum logits: imagenet-testbed's ObjectNet collapse) falls in the label's group. Never the 1000-way
    argmax (not ObjectNet's protocol)."""
    correct = subset.right_group(labelled["subset_prediction"].to_numpy(), labels)
    return {"top1": _percent(np.mean(correct)), "top5": None, "pooled": True}


def corruption_cell_counts(predictions: Predictions) -> tuple[dict[tuple[str, int], tuple[int, int]], int]:
    """(number wrong, number of samples) of the labelled rows per (corruption, severity) cell, in sorted order
    (`corruption_cell_errors`), and the number of labelled rows: counted batch by batch."""
    cells: dict[tuple[str, int], tuple[int, int]] = {}
    num_labelled = 0
    for batch in predictions.batches(["label", "prediction", "corruption", "severity"]):
        labelled = batch[batch["label"] >= 0]
        num_labelled += len(labelled)
        found = corruption_cell_errors(
            labelled["prediction"].to_numpy(),
            labelled["label"].to_numpy(),
            labelled["corruption"].astype(str).to_list(),
            labelled["severity"].to_numpy().astype(np.int64),
        )
        for key, (wrong, count) in found.items():
            before = cells.get(key, (0, 0))
            cells[key] = (before[0] + wrong, before[1] + count)
    return dict(sorted(cells.items())), num_labelled


def robustbench_scores(cells: dict[tuple[str, int], tuple[int, int]], alexnet_file: str) -> dict[str, Any]:
    """RobustBench's leaderboard columns (`metrics.robustbench`) from (wrong, count) per cell of a run on its
    5,000 images, against its AlexNet of `alexnet_file` (`Benchmark.robustbench_alexnet`); None for both, and the
    missing cells counted, unless all of its cells (ImageNet-C 15 x 5, ImageNet-3DCC 12 x 5) are present (a
    partial mean would not line up with the leaderboard)."""
    alexnet = robustbench_alexnet_accuracies(alexnet_file)
    wanted = [(c, s) for c in alexnet for s in ROBUSTBENCH_SEVERITIES]
    missing = [cell for cell in wanted if cell not in cells or cells[cell][1] == 0]
    if missing:
        return {"corruptions_acc": None, "corruptions_mce": None, "missing_cells": len(missing)}
    accuracies = {cell: 1.0 - cells[cell][0] / cells[cell][1] for cell in wanted}
    return {**robustbench_corruption_scores(accuracies, alexnet), "missing_cells": 0}


def corruption_metrics(
    benchmark: Benchmark,
    frame: pd.DataFrame | Predictions,
    clean_predictions: pd.DataFrame | None,
    protocol: dict[str, str] | None = None,
) -> dict[str, Any]:
    """ImageNet-C (CIFAR-C): mCE and relative mCE (AlexNet-normalised, ImageNet-C only), the per-cell errors, and
    the figures of the papers: Paul & Chen's mean top-1 at severity 5 over every corruption present (Fig. 2) and
    contrast at severity 5 (Fig. 3); Park & Kim's mean accuracy over all cells. A benchmark whose corruptions come
    in groups (ImageNet-3DCC) adds the mean top-1 per corruption and per group, each over the cells present.

    ImageNet-C's mCE comes under both protocols (`protocols`): "alexnet-15" (the canonical mCE) and
    "unnormalized-19" (ImageNet-C/test.py's printed mean over every corruption present, the extras included);
    `mce_protocol` names the headline one."""
    cells, num_labelled = corruption_cell_counts(as_predictions(frame))
    top1 = {key: 100.0 * (1.0 - wrong / count) for key, (wrong, count) in cells.items()}
    result: dict[str, Any] = {}
    if benchmark.alexnet_baseline:
        clean = {}
        if clean_predictions is not None:
            clean_rows = clean_predictions[clean_predictions["label"] >= 0]
            if not clean_rows.empty:
                clean = {
                    "clean_predictions": clean_rows["prediction"].to_numpy(),
                    "clean_references": clean_rows["label"].to_numpy(),
                }
        computed = corruption_error_from_counts(cells, allow_partial=True, **clean).to_dict()
        result.update(computed)
        absent = [name for name in benchmark.corruptions if name not in computed["unnormalized_corruptions"]]
        result["protocols"] = {
            "alexnet-15": {"mce": computed["mce"], "missing_cells": computed["missing_cells"]},
            "unnormalized-19": {
                "mce": computed["unnormalized_mce_all"],
                "corruptions": computed["unnormalized_corruptions"],
                "absent_corruptions": absent,
            },
        }
        result["mce_protocol"] = (protocol or default_protocol(benchmark))["mce"]
    if benchmark.robustbench_alexnet and (protocol or {}).get("image_list") == "robustbench-5000":
        result["image_list"] = "robustbench-5000"  # the default ("full") adds nothing
        result["robustbench"] = robustbench_scores(cells, benchmark.robustbench_alexnet)
    severity5 = {corruption: value for (corruption, severity), value in top1.items() if severity == 5}
    result["top1_by_cell"] = {f"{c}/{s}": value for (c, s), value in sorted(top1.items())}
    result["top1_by_corruption_s5"] = dict(sorted(severity5.items()))
    result["severity5_top1"] = float(np.mean(list(severity5.values()))) if severity5 else None
    result["contrast_s5_top1"] = severity5.get("contrast")
    result["mean_top1"] = float(np.mean(list(top1.values()))) if top1 else None
    if benchmark.mean_error_headline and top1:  # ImageNet-C-bar's overall and per-corruption mean errors
        result["mean_error"] = float(np.mean([100.0 - value for value in top1.values()]))
        result["error_by_corruption"] = {
            name: float(np.mean([100.0 - value for (c, _), value in top1.items() if c == name]))
            for name in benchmark.corruptions
            if any(c == name for c, _ in top1)
        }
    if benchmark.corruption_groups:  # ImageNet-3DCC: per corruption and per group, each a mean over its cells
        result["top1_by_corruption"] = _mean_over_cells(top1, {c: (c,) for c in benchmark.corruptions})
        result["top1_by_group"] = _mean_over_cells(top1, dict(benchmark.corruption_groups))
    result["num_samples"] = num_labelled
    return result


def _mean_over_cells(
    top1: dict[tuple[str, int], float], parts: dict[str, tuple[str, ...]]
) -> dict[str, float]:
    """The mean top-1 over the cells present of each part's corruptions, in the parts' order; absent parts left out."""
    means = {}
    for part, names in parts.items():
        values = [value for (corruption, _), value in top1.items() if corruption in names]
        if values:
            means[part] = float(np.mean(values))
    return means


def sequence_metrics(frame: pd.DataFrame) -> dict[str, Any]:
    """ImageNet-P flip probability and top-5 distance per perturbation (Hendrycks & Dietterich 2019)."""
    difficulties = frame["difficulty"].fillna(1).astype(int).unique()
    if len(difficulties) != 1:
        raise ValueError(f"ImageNet-P sequences of several difficulties in one run: {sorted(difficulties)}.")
    predictions = [np.asarray(list(top), dtype=np.int64) for top in frame["frame_top5"]]
    return flip_rates(
        predictions,
        frame["perturbation"].astype(str).to_list(),
        int(difficulties[0]),
        allow_partial=True,
    ).to_dict()


def ood_metrics(frame: pd.DataFrame) -> dict[str, Any]:
    """ImageNet-O AUPR (OOD images positive) of the score -max softmax over its 200 classes."""
    is_ood = frame["is_ood"].fillna(False).astype(bool).to_numpy()
    if is_ood.all() or not is_ood.any():
        return {
            "num_ood": int(is_ood.sum()),
            "num_in_distribution": int((~is_ood).sum()),
            "note": "AUPR needs both halves: give imagenet-o an in_distribution source (ImageNet validation).",
        }
    return ood_detection_metrics(frame["ood_score"].to_numpy(dtype=np.float64), is_ood).to_dict()


def background_metrics(frame: pd.DataFrame) -> dict[str, Any]:
    """ImageNet-9 accuracy per variant and BG-gap (Xiao et al. 2021)."""
    return background_gap(
        frame["prediction"].to_numpy(), frame["label"].to_numpy(), frame["variant"].astype(str).to_list()
    ).to_dict()


def _percent_or_none(value: float | None) -> float | None:
    return None if value is None else 100.0 * value


def clean_headline(benchmark: Benchmark, metrics: dict[str, Any], protocol: dict[str, str]) -> dict[str, Any]:
    """A clean benchmark's top-1, named "(real)" where it was scored against ReaL labels."""
    return {
        headline_name(benchmark.name, TOP1, "real" if metrics.get("labels") == "real" else None): metrics.get(
            "top1"
        )
    }


def masked_headline(
    benchmark: Benchmark, metrics: dict[str, Any], protocol: dict[str, str]
) -> dict[str, Any]:
    """ImageNet-A/R's top-1, named by the class mask of `protocol`."""
    if benchmark.class_subset is not None and "class_mask" in protocol:
        return {headline_name(benchmark.name, TOP1, protocol["class_mask"]): metrics.get("top1")}
    return clean_headline(benchmark, metrics, protocol)


def corruption_headline(
    benchmark: Benchmark, metrics: dict[str, Any], protocol: dict[str, str]
) -> dict[str, Any]:
    """Mean top-1 over the cells, and the mCE under every protocol it was computed under (ImageNet-C: both), the
    headline one first."""
    name = benchmark.name
    values = {headline_name(name, MEAN_TOP1): metrics.get("mean_top1")}
    if metrics.get("mean_error") is not None:  # the benchmark's own headline first
        values = {headline_name(name, MEAN_ERROR): metrics["mean_error"], **values}
    protocols = metrics.get("protocols") or {}
    if protocols and "mce" in protocol:
        first = protocol["mce"]
        for chosen in (first, *(p for p in protocols if p != first)):
            if protocols[chosen].get("mce") is not None:
                values[headline_name(name, MCE, chosen)] = protocols[chosen]["mce"]
    robustbench = metrics.get("robustbench") or {}
    if (
        robustbench.get("corruptions_acc") is not None
    ):  # named apart: never mixed with alexnet-15 on the full set
        values[headline_name(name, CORRUPTIONS_ACCURACY, "robustbench-5000")] = robustbench["corruptions_acc"]
        values[headline_name(name, MCE, "robustbench AlexNet")] = robustbench["corruptions_mce"]
    return values


def perturbation_headline(
    benchmark: Benchmark, metrics: dict[str, Any], protocol: dict[str, str]
) -> dict[str, Any]:
    """ImageNet-P's unnormalised mFR (percent)."""
    return {headline_name(benchmark.name, MFR): _percent_or_none(metrics.get("mfr_unnormalized"))}


def ood_headline(benchmark: Benchmark, metrics: dict[str, Any], protocol: dict[str, str]) -> dict[str, Any]:
    """ImageNet-O's AUPR (percent)."""
    return {headline_name(benchmark.name, AUPR): _percent_or_none(metrics.get("aupr"))}


def background_headline(
    benchmark: Benchmark, metrics: dict[str, Any], protocol: dict[str, str]
) -> dict[str, Any]:
    """ImageNet-9's BG-gap (points)."""
    return {headline_name(benchmark.name, BG_GAP): _percent_or_none(metrics.get("bg_gap"))}


__all__ = [
    "background_headline",
    "background_metrics",
    "classification_metrics",
    "clean_headline",
    "clean_of_generated",
    "corruption_cell_counts",
    "corruption_headline",
    "corruption_metrics",
    "masked_headline",
    "ood_headline",
    "ood_metrics",
    "perturbation_headline",
    "reassessed_accuracy",
    "robustbench_scores",
    "sequence_metrics",
]
