# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""ImageNet-ReaL (hf_vitrobust.data.real_labels): the shipped label file, the multi-label top-k rule against hand
counts, the "labels: real" protocol of imagenet-val end to end through `evaluate()`, and the refused sources."""

import gzip
import io
import json
from importlib import resources

import numpy as np
import pandas as pd
import pytest
import torch
import yaml
from data_fixtures import random_blocks_png
from PIL import Image
from probe_models import save_tiny_vit

from hf_vitrobust.data import SchemaError, load_benchmark
from hf_vitrobust.data.real_labels import (
    check_real_labelled,
    imagenet_real_labels,
    real_labels_of,
    real_topk_correct,
    validation_image_number,
)
from hf_vitrobust.evaluation.config import EvaluationConfig
from hf_vitrobust.evaluation.runner import EvaluationError, evaluate
from hf_vitrobust.models import load_classifier
from hf_vitrobust.models.imagenet import IMAGENET_WNIDS


def _shipped() -> list[list[int]]:
    """real.json as shipped, read here without the module under test."""
    path = resources.files("hf_vitrobust") / "assets" / "image_lists" / "imagenet_real_labels.json.gz"
    return json.loads(gzip.decompress(path.read_bytes()))


def test_shipped_file_is_real_json():
    labels = _shipped()
    # Facts of reassessed-imagenet's real.json (README: 50,000 lists, empty ones left out; the paper's 46,837).
    assert len(labels) == 50_000 and sum(1 for entry in labels if entry) == 46_837
    assert labels[:4] == [[], [970, 795], [230, 231], [809]]
    table = imagenet_real_labels()
    assert [sorted(int(c) for c in row if c >= 0) for row in table[:4]] == [[], [795, 970], [230, 231], [809]]
    assert validation_image_number("n01440764/ILSVRC2012_val_00000293.JPEG") == 293
    assert validation_image_number("ILSVRC2012_val_00050001.JPEG") is None
    assert validation_image_number("row-000293") is None


def test_topk_rule_against_a_hand_count():
    sets = np.array([[3, 7, -1], [-1, -1, -1], [5, -1, -1], [1, 2, 4], [9, -1, -1]])
    topk = np.array([[7, 0, 1], [3, 4, 5], [4, 5, 6], [0, 3, 2], [8, 6, 0]])
    top1, top3, scored = real_topk_correct(topk, sets)
    # by hand: image 0's argmax 7 is a label; image 1 has none (left out); image 2's 5 is second; image 3's 2 is
    # third; image 4 misses.
    assert top1.tolist() == [True, False, False, False, False]
    assert top3.tolist() == [True, False, True, True, False]
    assert scored.tolist() == [True, False, True, True, True]
    assert top1[scored].mean() == pytest.approx(1 / 4) and top3[scored].mean() == pytest.approx(3 / 4)


def test_real_protocol_end_to_end_against_a_hand_count(tmp_path):
    """Four images: two whose validation file's ReaL set holds the model's argmax (right under ReaL), each filed
    under another class (wrong under the original label), one whose set does not hold it, and file 1, which has no
    ReaL label (left out). By hand: ReaL top-1 2/3, original top-1 0/4."""
    model = save_tiny_vit(tmp_path / "tiny-vit-1k", num_labels=1000)
    images = [random_blocks_png(seed) for seed in range(4)]
    classifier = load_classifier(model)
    with torch.no_grad():
        logits = classifier(classifier.preprocess([Image.open(io.BytesIO(b)).convert("RGB") for b in images]))
    argmax = logits.argmax(-1).tolist()
    shipped = _shipped()
    right = [n for n in range(2, 50_001) if argmax[0] in shipped[n - 1]]
    numbers = [
        right[0],
        next(n for n in range(2, 50_001) if argmax[1] in shipped[n - 1] and n != right[0]),
        next(
            n
            for n in range(2, 50_001)
            if shipped[n - 1] and argmax[2] not in shipped[n - 1] and n not in right[:2]
        ),
        1,
    ]
    assert len(set(numbers)) == 4
    val = tmp_path / "val"
    for i, (number, data) in enumerate(zip(numbers, images, strict=True)):
        wrong = (argmax[i] + 1) % 1000  # filed under a class that is not the argmax
        folder = val / IMAGENET_WNIDS[wrong]
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"ILSVRC2012_val_{number:08d}.JPEG").write_bytes(data)
    suite = {
        "name": "real",
        "benchmarks": {"imagenet-val": {"source": str(val), "protocol": {"labels": "real"}}},
    }
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(suite))
    results = evaluate(
        EvaluationConfig(
            models=[model], suite=str(tmp_path / "suite.yaml"), output=tmp_path / "run", progress=False
        )
    )
    key = results["models"][0]["key"]
    metrics = results["metrics"][key]["imagenet-val"]
    assert metrics["labels"] == "real"
    assert metrics["top1"] == pytest.approx(100 * 2 / 3)
    assert metrics["num_scored"] == 3 and metrics["num_left_out"] == 1
    assert metrics["protocols"]["imagenet"]["top1"] == pytest.approx(0.0)
    frame = pd.read_parquet(tmp_path / "run" / "predictions" / key / "imagenet-val.parquet")
    assert frame["prediction"].tolist() == [
        argmax[numbers.index(validation_image_number(s))] for s in frame["sample_id"]
    ]
    assert results["benchmarks"]["imagenet-val"]["protocol"]["labels"] == "real"
    assert results["summary"][key]["imagenet-val top-1 % (real)"] == pytest.approx(100 * 2 / 3)


def test_sources_without_validation_file_names_are_refused(tmp_path):
    with pytest.raises(SchemaError, match="numbers its rows"):
        real_labels_of(["00000/row-000001", "00000/row-000002"])
    with pytest.raises(SchemaError, match=r"name no ImageNet validation file \('chelsea"):
        check_real_labelled(load_benchmark("imagenet-val", "builtin"))
    model = save_tiny_vit(tmp_path / "tiny-vit-1k", num_labels=1000)
    suite = {
        "name": "real",
        "benchmarks": {"imagenet-val": {"source": "builtin", "protocol": {"labels": "real"}}},
    }
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(suite))
    with pytest.raises(EvaluationError, match="name no ImageNet validation file"):
        evaluate(
            EvaluationConfig(models=[model], suite=str(tmp_path / "suite.yaml"), output=tmp_path / "run")
        )
    assert not (tmp_path / "run" / "predictions").exists()
