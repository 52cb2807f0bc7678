# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Synthetic run folders for the published-vs-ours and findings tests: a results.json with the keys those read
(models, benchmarks with their protocol and source, metrics, predictions, probes) and per-sample predictions
written as the runner writes them, with the correctness each test chooses."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from hf_vitrobust.analysis.published import PublishedNumber
from hf_vitrobust.analysis.record import model_key
from hf_vitrobust.analysis.results import SCHEMA, SCHEMA_VERSION


def accuracy_frame(correct: Sequence[bool], prefix: str = "img", label: int = 7) -> pd.DataFrame:
    """Predictions of a clean benchmark: label `label` everywhere, right where `correct` says (prediction
    `label`, else `label + 1`), the top-5 holding the label for every right one."""
    correct = np.asarray(correct, dtype=bool)
    prediction = np.where(correct, label, label + 1)
    return pd.DataFrame(
        {
            "sample_id": [f"{prefix}/{i:05d}.JPEG" for i in range(len(correct))],
            "clean_sample_id": [None] * len(correct),
            "label": np.full(len(correct), label, dtype=np.int64),
            "prediction": prediction.astype(np.int64),
            "subset_prediction": prediction.astype(np.int64),
            "top5": [[int(p), 1, 2, 3, 4] for p in prediction],
        }
    )


def cell_frame(correct_by_cell: Mapping[tuple[str, int], Sequence[bool]], label: int = 7) -> pd.DataFrame:
    """Predictions of a released ImageNet-C folder: sample ids `<corruption>/<severity>/<wnid>/<file>`, the same
    clean files in every cell."""
    rows = []
    for (corruption, severity), correct in correct_by_cell.items():
        for i, right in enumerate(correct):
            rows.append(
                {
                    "sample_id": f"{corruption}/{severity}/n01440764/ILSVRC2012_val_{i:08d}.JPEG",
                    "clean_sample_id": None,
                    "label": label,
                    "prediction": label if right else label + 1,
                    "subset_prediction": label if right else label + 1,
                    "top5": [label if right else label + 1, 1, 2, 3, 4],
                    "corruption": corruption,
                    "severity": severity,
                }
            )
    return pd.DataFrame(rows)


@dataclass
class Model:
    """One model of a synthetic run: its spec, predictions per benchmark, probe dicts, and per benchmark the
    preprocessing it got and the resize kernel it saw (default "tf-bilinear": Paul & Chen's notebooks' kernel, as
    the default published row names it)."""

    spec: str
    frames: dict[str, pd.DataFrame] = field(default_factory=dict)
    probes: dict[str, dict[str, Any]] = field(default_factory=dict)
    applied: dict[str, str] = field(default_factory=dict)
    kernels: dict[str, str] = field(default_factory=dict)


def write_run(
    folder: Path,
    models: Sequence[Model],
    *,
    suite: Mapping[str, Any] | None = None,
    benchmark_info: Mapping[str, Mapping[str, Any]] | None = None,
    reproduction: Mapping[str, Any] | None = None,
    seed: int = 0,
) -> Path:
    """A run folder holding results.json and the models' predictions (parquet)."""
    folder.mkdir(parents=True, exist_ok=True)
    keys: list[str] = []
    results: dict[str, Any] = {
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "complete": True,
        "seed": seed,
        "suite": dict(suite or {"name": "synthetic", "model_pairs": []}),
        "models": [],
        "benchmarks": {},
        "metrics": {},
        "probes": {},
        "predictions": {},
        "uncertainty": {"confidence_level": 0.95, "num_resamples": 400, "proportion_method": "wilson"},
    }
    for model in models:
        key = model_key(model.spec, keys)
        keys.append(key)
        results["models"].append({"key": key, "spec": model.spec, "name": model.spec})
        for benchmark, frame in model.frames.items():
            path = Path("predictions") / key / f"{benchmark}.parquet"
            (folder / path).parent.mkdir(parents=True, exist_ok=True)
            frame.to_parquet(folder / path)
            results["predictions"].setdefault(key, {})[benchmark] = str(path)
            results["metrics"].setdefault(key, {})[benchmark] = {"num_samples": len(frame)}
            info = results["benchmarks"].setdefault(
                benchmark,
                {
                    "kind": None,
                    "generated": False,
                    # A local copy of the release, read file by file (its image bytes are the release's).
                    "source": {"kind": "image_folder", "generated": False},
                    "subset": {"kind": "all", "limit": None},
                    "protocol": {"models": {}},
                    **dict((benchmark_info or {}).get(benchmark) or {}),
                },
            )
            kernel = model.kernels.get(benchmark, "tf-bilinear")
            info["protocol"]["models"][key] = {
                "applied": model.applied.get(benchmark, "model-native"),
                "interpolation": kernel if kernel in ("tf-bilinear", "pil-bilinear") else "model-own",
                "kernel": kernel,
            }
        if model.probes:
            results["probes"][key] = {name: dict(probe) for name, probe in model.probes.items()}
    for info in results["benchmarks"].values():
        if info.get("kind") is None:
            info.pop("kind")
    if reproduction is not None:
        results["reproduction"] = dict(reproduction)
    (folder / "results.json").write_text(json.dumps(results))
    return folder


def published_row(**changes: Any) -> PublishedNumber:
    """A published number as a row of published.csv states one: by default Paul & Chen's ImageNet-A top-1 of
    ViT-L/16 (the notebook's 1000-class mask, squash and TF bilinear resize), on 7,500 images; `changes` replace
    any column."""
    row = PublishedNumber(
        row_id="paul-chen/imagenet-a/top1/vit-l16",
        paper="paul-chen",
        where="test",
        model="ViT-L_16",
        model_key="vit-l16",
        model_id="google/vit-large-patch16-384",
        model_match="same-weights",
        benchmark="imagenet-a",
        metric="top-1 %",
        condition="",
        protocol="class_mask=paul-chen-1000;interpolation=tf-bilinear;preprocessing=native-resize",
        value=100.0 * 2108 / 7500,
        unit="%",
        images=7500,
        image_set="all",
        source_repo="sayakpaul/robustness-vit",
        source_file="x.ipynb",
        source_commit="b90ba6b7a365ee9a30b583211f6681d33e9fddf0",
        source_url="",
        read_from="notebook-output",
        location="cell 1",
        reading_precision=5e-6,
        note="",
    )
    return dataclasses.replace(row, **changes)


#: Park & Kim's loss-landscape protocol as their published rows' protocol column states it (losslandscape.ipynb on
#: CIFAR-100 with their training augmentation), as the loss_landscape probe takes it.
PARK_KIM_LANDSCAPE_PARAMS = {
    "augmentation": "park-kim-cifar100",
    "augmentation_draw": "per-point",
    "batch_size": 96,
    "exclude": ["pos_embed", "relative_position"],
    "l2_term": "park-kim",
    "loss_average": "batches",
    "normalization": "park-kim",
    "resolution": 21,
    "weight_decay": 0.05,
}


def occlusion_probe(correct_by_ratio: Mapping[float, int], num_images: int = 1000) -> dict[str, Any]:
    """The occlusion probe's record of a run on Paul & Chen's published image list (the notebooks' one-hole Cutout):
    `correct_by_ratio` maps each masked ratio to the number of the `num_images` images right at it."""
    ratios = sorted(correct_by_ratio)
    return {
        "ratios": ratios,
        "accuracy": [correct_by_ratio[ratio] / num_images for ratio in ratios],
        "num_correct": [correct_by_ratio[ratio] for ratio in ratios],
        "num_samples": num_images,
        "num_images": num_images,
        "hole": "albumentations-1",
        "image_list": {"name": "paul-chen-occlusion-1k"},
        "benchmark": "imagenet-val",
        "params": {"hole": "albumentations-1", "image_list": "paul-chen-occlusion-1k"},
    }


__all__ = [
    "PARK_KIM_LANDSCAPE_PARAMS",
    "Model",
    "accuracy_frame",
    "cell_frame",
    "occlusion_probe",
    "published_row",
    "write_run",
]
