# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""One benchmark end to end through `evaluate()`: the run a benchmark's data tests make on their tiny local copy,
returning the results and the first model's stored predictions, so that each test recomputes the metric itself; and
the tiny release folder of a corruption benchmark (ImageNet-C-bar, ImageNet-3DCC) with a model that gets some cells
wrong."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch
import yaml
from PIL import Image
from probe_models import save_vit_folder, tiny_vit_model

from hf_vitrobust.evaluation.config import EvaluationConfig
from hf_vitrobust.evaluation.runner import evaluate
from hf_vitrobust.models import load_classifier
from hf_vitrobust.models.imagenet import IMAGENET_WNIDS


def evaluate_benchmark(
    output: Path,
    model: Any,
    benchmark: str,
    entry: dict[str, Any],
    suite_settings: dict[str, Any] | None = None,
    **config: Any,
) -> tuple[dict[str, Any], pd.DataFrame]:
    """Run `model` on a one-benchmark suite (`entry`: the suite's entry for `benchmark`, e.g. its source and
    options; `suite_settings`: other suite keys such as batch_size) into `output`/run; return the results (as
    results.json holds them) and the model's predictions parquet for the benchmark."""
    output.mkdir(parents=True, exist_ok=True)
    suite = output / "suite.yaml"
    document = {"name": f"{benchmark}-only", **(suite_settings or {}), "benchmarks": {benchmark: entry}}
    suite.write_text(yaml.safe_dump(document))
    settings = {"output": output / "run", "progress": False, **config}
    evaluate(EvaluationConfig(models=[model], suite=str(suite), **settings))
    results = json.loads((output / "run" / "results.json").read_text())
    key = results["models"][0]["key"]
    return results, pd.read_parquet(output / "run" / "predictions" / key / f"{benchmark}.parquet")


def block_jpeg(seed: int) -> bytes:
    """A 16x16 JPEG of four seeded colour blocks."""
    rng = np.random.default_rng(seed)
    array = np.repeat(np.repeat(rng.integers(0, 256, (2, 2, 3), dtype=np.uint8), 8, axis=0), 8, axis=1)
    buffer = io.BytesIO()
    Image.fromarray(array).save(buffer, "JPEG", quality=95)
    return buffer.getvalue()


def corruption_release(
    root: Path, folder_name: str, cells: list[tuple[str, int]], *, model_seed: int, wrong_offset: int
) -> dict[str, str]:
    """A tiny 1000-class ViT and a folder laid out like a corruption benchmark's release
    (`<folder_name>/<corruption>/<severity>/<wnid>/ILSVRC2012_val_*.JPEG`): per cell three images, filed under the
    model's own argmax class (right) or that class + `wrong_offset` (wrong); cell k holds k % 3 wrong ones, so the
    cells differ. Returns the model folder, the release folder and `root`."""
    model = tiny_vit_model(patch_size=8, num_labels=1000, seed=model_seed)
    with torch.no_grad():
        model.classifier.weight.mul_(20.0)
    save_vit_folder(root / "vit", model)
    images = [block_jpeg(seed) for seed in range(6)]
    classifier = load_classifier(str(root / "vit"))
    with torch.no_grad():
        pixels = classifier.preprocess([Image.open(io.BytesIO(b)).convert("RGB") for b in images])
        argmax = classifier(pixels).argmax(1).tolist()
    folder = root / folder_name
    for cell, (corruption, severity) in enumerate(cells):
        for k in range(3):
            image = (cell + k) % len(images)
            wrong = k < cell % 3
            wnid = IMAGENET_WNIDS[(argmax[image] + wrong_offset) % 1000 if wrong else argmax[image]]
            path = (
                folder / corruption / str(severity) / wnid / f"ILSVRC2012_val_{100 * cell + k + 1:08d}.JPEG"
            )
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(images[image])
    return {"root": root, "model": str(root / "vit"), "folder": str(folder)}
