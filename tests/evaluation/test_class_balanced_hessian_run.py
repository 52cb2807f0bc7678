# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""A run whose training benchmark keeps a class-balanced subset of the whole source (`subset: class-balanced`) and
whose Hessian probe cuts it into class-balanced mini-batches: on a class-sorted image folder, the benchmark keeps
the same number of images of every class, and two forward batch sizes give the same Hessian batches and numbers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import yaml
from data_fixtures import image_bytes, image_folder
from probe_models import save_vit_folder, tiny_vit_model

from hf_vitrobust.data import BENCHMARKS, load_benchmark
from hf_vitrobust.data.balanced_batches import class_balanced_order
from hf_vitrobust.evaluation.config import EvaluationConfig
from hf_vitrobust.evaluation.runner import evaluate
from hf_vitrobust.evaluation.streams import plan_stream
from hf_vitrobust.models.imagenet import imagenet_wnid_to_index

WNIDS = sorted(imagenet_wnid_to_index())[:4]


def _run(tmp_path, name: str, model: str, folder, batch_size: int) -> tuple[dict, pd.DataFrame]:
    suite = {
        "name": "hessian-batches",
        "benchmarks": {"imagenet-train": {"source": str(folder), "limit": 16, "subset": "class-balanced"}},
        "probes": {
            "hessian": {
                "benchmark": "imagenet-train",
                "num_images": 8,
                "params": {"batch_size": 4, "top_k": 2, "iterations": 2},
            }
        },
    }
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(suite))
    output = tmp_path / name
    config = EvaluationConfig(
        models=[model], suite=str(path), output=output, progress=False, report=False, batch_size=batch_size
    )
    results = evaluate(config)
    key = results["models"][0]["key"]
    return results, pd.read_parquet(output / "predictions" / key / "imagenet-train.parquet")


def test_class_balanced_subset_and_batches_do_not_depend_on_the_forward_batch_size(tmp_path):
    files = {
        f"{wnid}/{wnid}_{k}.png": image_bytes(20 * c + k) for c, wnid in enumerate(WNIDS) for k in range(7)
    }
    folder = image_folder(tmp_path / "train", files)
    vit = tiny_vit_model(patch_size=8, hidden_size=8, intermediate_size=16)
    model = save_vit_folder(tmp_path / "vit", vit)
    first, predictions = _run(tmp_path, "forward-2", model, folder, 2)
    second, _ = _run(tmp_path, "forward-5", model, folder, 5)
    # The benchmark kept 4 images of each of the 4 classes, the first 16 of the whole folder's order.
    assert np.bincount(predictions["label"].to_numpy() - predictions["label"].min()).tolist() == [4, 4, 4, 4]
    ids = [f"{wnid}/{wnid}_{k}.png" for wnid in WNIDS for k in range(7)]
    labels = np.repeat([imagenet_wnid_to_index()[wnid] for wnid in WNIDS], 7)
    expected = {ids[p] for p in class_balanced_order(ids, labels, first["seed"])[:16]}
    assert set(predictions["sample_id"]) == expected
    key = first["models"][0]["key"]
    hessian, again = first["probes"][key]["hessian"], second["probes"][key]["hessian"]
    assert hessian["batches"] == "class-balanced" and len(hessian["batch_seeds"]) == 2
    assert hessian["batch_seeds"] == again["batch_seeds"]
    assert hessian["eigenvalues"] == again["eigenvalues"]


def test_a_benchmark_with_cells_is_refused_before_any_work():
    generated = load_benchmark("imagenet-c", "generated:builtin", corruptions=["fog"], severities=[1])
    with pytest.raises(
        ValueError, match="imagenet-c: a class-balanced subset is for a benchmark without cells"
    ):
        plan_stream(BENCHMARKS["imagenet-c"], generated, 4, 8, {}, subset="class-balanced")
