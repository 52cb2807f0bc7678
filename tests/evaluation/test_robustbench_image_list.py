# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""ImageNet-C's image_list protocol "robustbench-5000" end to end through `evaluate()`: on a released-layout folder
holding listed and unlisted files in each of RobustBench's 75 cells only the listed ones are scored, RobustBench's
two leaderboard columns (recomputed here from the predictions and RobustBench's AlexNet row) are headlines named
apart from alexnet-15, a Hub copy is refused before any work, and the default ("full") keeps every file, task ids
and notes as before."""

import csv
import io
import json
from importlib import resources

import data_fixtures as fx
import numpy as np
import pandas as pd
import pytest
import torch
import yaml
from PIL import Image
from probe_models import save_vit_folder, tiny_vit_model

from hf_vitrobust.data import get_benchmark
from hf_vitrobust.data.image_lists import image_list
from hf_vitrobust.evaluation.config import EvaluationConfig, EvaluationError
from hf_vitrobust.evaluation.runner import evaluate
from hf_vitrobust.hub.eval_results import recorded_protocol, task_id
from hf_vitrobust.models import load_classifier
from hf_vitrobust.models.imagenet import IMAGENET_WNIDS

# RobustBench's 15 corruptions (robustbench.data.CORRUPTIONS), written out here, not read from the package.
CORRUPTIONS = (
    "shot_noise",
    "motion_blur",
    "snow",
    "pixelate",
    "gaussian_noise",
    "defocus_blur",
    "brightness",
    "fog",
    "zoom_blur",
    "frost",
    "glass_blur",
    "impulse_noise",
    "contrast",
    "jpeg_compression",
    "elastic_transform",
)
UNLISTED = "ILSVRC2012_val_00000293.JPEG"


def _png(seed: int) -> bytes:
    rng = np.random.default_rng(seed)
    array = np.repeat(np.repeat(rng.integers(0, 256, (2, 2, 3), dtype=np.uint8), 4, axis=0), 4, axis=1)
    buffer = io.BytesIO()
    Image.fromarray(array).save(buffer, "PNG")
    return buffer.getvalue()


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> dict:
    """A tiny ViT and an ImageNet-C folder: per cell one listed file of the model's own argmax class (mostly
    right), one other listed file (mostly wrong) and one unlisted file of the argmax class (right, if scored)."""
    root = tmp_path_factory.mktemp("robustbench")
    model = tiny_vit_model(patch_size=8, num_labels=1000, seed=3)
    with torch.no_grad():
        model.classifier.weight.mul_(20.0)
    save_vit_folder(root / "vit", model)
    images = [_png(seed) for seed in range(16)]
    classifier = load_classifier(str(root / "vit"))
    with torch.no_grad():
        pixels = classifier.preprocess([Image.open(io.BytesIO(b)).convert("RGB") for b in images])
        argmax = classifier(pixels).argmax(1).tolist()
    entries = image_list("robustbench-imagenet-c-5000")
    assert not any(entry.endswith(UNLISTED) for entry in entries)
    by_wnid: dict[str, list[str]] = {}
    for entry in entries:
        by_wnid.setdefault(entry.split("/")[0], []).append(entry)
    files = {}
    for cell, (corruption, severity) in enumerate((c, s) for c in CORRUPTIONS for s in range(1, 6)):
        k = cell % len(images)
        wnid = IMAGENET_WNIDS[argmax[k]]
        own = by_wnid.get(wnid, [entries[cell]])[cell % len(by_wnid.get(wnid, [""]))]
        other = entries[100 + cell]
        for entry in {own, other}:
            files[f"{corruption}/{severity}/{entry}"] = images[k]
        files[f"{corruption}/{severity}/{wnid}/{UNLISTED}"] = images[k]
    fx.image_folder(root / "ImageNet-C", files)
    return {"root": root, "model": str(root / "vit"), "folder": str(root / "ImageNet-C")}


def _run(release: dict, name: str, protocol: dict | None = None) -> tuple[dict, pd.DataFrame]:
    entry = {"source": release["folder"], "corruptions": list(CORRUPTIONS)}
    if protocol:
        entry["protocol"] = protocol
    suite = release["root"] / f"{name}.yaml"
    suite.write_text(yaml.safe_dump({"name": name, "batch_size": 32, "benchmarks": {"imagenet-c": entry}}))
    output = release["root"] / name
    evaluate(
        EvaluationConfig(
            models=[release["model"]], suite=str(suite), output=output, progress=False, report=False
        )
    )
    results = json.loads((output / "results.json").read_text())
    [key] = [path.name for path in (output / "predictions").iterdir()]
    return results, pd.read_parquet(output / "predictions" / key / "imagenet-c.parquet")


@pytest.fixture(scope="module")
def runs(release) -> dict:
    return {
        "full": _run(release, "full"),
        "robustbench": _run(release, "robustbench", {"image_list": "robustbench-5000"}),
    }


def _alexnet() -> dict[str, list[float]]:
    path = resources.files("hf_vitrobust.metrics") / "robustbench_alexnet_imagenet_c_accuracies.csv"
    rows = csv.DictReader(path.read_text(encoding="utf-8").splitlines())
    return {row["corruption"]: [float(row[str(s)]) for s in range(1, 6)] for row in rows}


def test_only_listed_images_are_scored_and_the_leaderboard_columns_are_headlines(runs):
    results, frame = runs["robustbench"]
    listed = {entry.split("/")[1] for entry in image_list("robustbench-imagenet-c-5000")}
    names = frame["sample_id"].astype(str).str.rsplit("/", n=1).str[-1]
    assert len(frame) > 75 and names.isin(listed).all()
    _, full = runs["full"]
    assert len(full) == len(frame) + 75  # the unlisted file of every cell is scored only under "full"
    # Independent re-derivation: accuracy per cell from the predictions, RobustBench's formulas, its AlexNet row.
    right = frame["prediction"].to_numpy() == frame["label"].to_numpy()
    accuracy = pd.Series(right).groupby([frame["corruption"].to_numpy(), frame["severity"].to_numpy()]).mean()
    alexnet = _alexnet()
    assert set(alexnet) == set(CORRUPTIONS)
    model = np.array([[accuracy[(c, s)] for s in range(1, 6)] for c in CORRUPTIONS])
    errors = np.array([[1.0 - alexnet[c][s - 1] for s in range(1, 6)] for c in CORRUPTIONS])
    expected_acc = 100.0 * model.mean()
    expected_mce = 100.0 * np.mean((1.0 - model).sum(axis=1) / errors.sum(axis=1))
    assert 0.0 < expected_acc < 100.0  # some cells right, some wrong: the columns are not trivial
    [summary] = results["summary"].values()
    assert summary["imagenet-c corruptions accuracy % (robustbench-5000)"] == pytest.approx(expected_acc)
    assert summary["imagenet-c mCE % (robustbench AlexNet)"] == pytest.approx(expected_mce)
    # Both columns have an interval, resampled over the clean images as the run's other corruption headlines (its
    # coverage is tested on a fully crossed table in test_metrics_robustbench.py: here each clean image is in a
    # cell or two only).
    [intervals] = results["intervals"].values()
    for name, expected in (
        ("imagenet-c corruptions accuracy % (robustbench-5000)", expected_acc),
        ("imagenet-c mCE % (robustbench AlexNet)", expected_mce),
    ):
        interval = intervals[name]
        assert interval["estimate"] == pytest.approx(expected)
        assert interval["low"] <= interval["high"] and interval["unit"] == "clean image"
        assert interval["num_samples"] == len(frame)
    record = results["benchmarks"]["imagenet-c"]
    assert record["protocol"]["image_list"] == "robustbench-5000"
    assert record["source"]["image_list"] == "robustbench-imagenet-c-5000"
    # The default run has neither column and records "full".
    full_results, _ = runs["full"]
    [full_summary] = full_results["summary"].values()
    assert not any("robustbench" in name for name in full_summary)
    assert full_results["benchmarks"]["imagenet-c"]["protocol"]["image_list"] == "full"


def test_task_ids_and_notes_name_the_list_only_when_it_is_not_the_default(runs):
    benchmark = get_benchmark("imagenet-c")
    for name, expected in (("full", None), ("robustbench", "robustbench-5000")):
        results, _ = runs[name]
        record = results["benchmarks"]["imagenet-c"]["protocol"]
        [key] = record["models"]
        protocol = recorded_protocol(benchmark, record, key) or {}
        assert protocol.get("image_list") == expected
        suffix = task_id(benchmark, "mce", protocol)
        assert ("image_list=robustbench-5000" in suffix) == (expected is not None)


@pytest.mark.parametrize("kind", ["hub", "generated"])
def test_a_hub_or_generated_copy_with_the_list_is_refused_before_any_work(tmp_path, release, kind):
    if kind == "hub":
        source = str(fx.tsomaros_imagenet_c(tmp_path, "fog", 4, ["n01440764", "n02124075"]))
    else:
        source = "generated:builtin"
    suite = tmp_path / "hub.yaml"
    entry = {"source": source, "corruptions": ["fog"], "protocol": {"image_list": "robustbench-5000"}}
    suite.write_text(yaml.safe_dump({"name": "hub", "benchmarks": {"imagenet-c": entry}}))
    output = tmp_path / "run"
    config = EvaluationConfig(models=[release["model"]], suite=str(suite), output=output, progress=False)
    with pytest.raises((EvaluationError, ValueError), match="image_list=robustbench-5000") as refused:
        evaluate(config)
    assert ("row number" if kind == "hub" else "generated here") in str(refused.value)
    assert not (output / "predictions").exists()


def test_an_unknown_list_is_refused_with_the_known_ones(tmp_path, release):
    suite = tmp_path / "bad.yaml"
    entry = {"source": release["folder"], "protocol": {"image_list": "robustbench-500"}}
    suite.write_text(yaml.safe_dump({"name": "bad", "benchmarks": {"imagenet-c": entry}}))
    config = EvaluationConfig(models=[release["model"]], suite=str(suite), output=tmp_path / "out")
    with pytest.raises(EvaluationError, match="Known: full, robustbench-5000"):
        evaluate(config)
