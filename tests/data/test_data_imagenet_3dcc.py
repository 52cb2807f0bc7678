# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""ImageNet-3DCC from a folder laid out like its release (`ImageNet-3DCC/<corruption>/<severity>/<wnid>/<file>`, as
tools/download_imagenet_3dcc.sh unpacks it and RobustBench's load_imagenet3dcc reads it), end to end through
`evaluate()`: the labels come from the wnid folders, and the headline mean top-1 and the per-cell and
per-corruption tables are recomputed here from the stored predictions. "generated:" is refused with what the
generator needs, and a bad corruption name or severity with the valid ones, before any work."""

import csv
import io
import json
from importlib import resources

import numpy as np
import pandas as pd
import pytest
import torch
import yaml
from benchmark_runs import block_jpeg, corruption_release, evaluate_benchmark
from PIL import Image

from hf_vitrobust.data import get_benchmark, load_benchmark
from hf_vitrobust.data.image_lists import image_list
from hf_vitrobust.evaluation.config import EvaluationConfig, EvaluationError
from hf_vitrobust.evaluation.runner import evaluate
from hf_vitrobust.models import load_classifier
from hf_vitrobust.models.imagenet import IMAGENET_WNIDS
from hf_vitrobust.report.document import render_markdown

# The release's 12 folder names (EPFL-VILAB/3DCommonCorruptions tools/download_imagenet_3dcc.sh), written out here.
RELEASE_CORRUPTIONS = {
    "near_focus", "far_focus", "fog_3d", "flash", "color_quant", "low_light", "xy_motion_blur", "z_motion_blur",
    "iso_noise", "bit_error", "h265_abr", "h265_crf",
}  # fmt: skip
CELLS = [(c, s) for c in ("fog_3d", "near_focus") for s in (1, 3)]


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> dict:
    """A tiny ViT and a 2 x 2-cell ImageNet-3DCC folder: per cell three images, filed under the model's own argmax
    class (right) or another class (wrong); cell k holds k % 3 wrong ones, so the cells differ."""
    root = tmp_path_factory.mktemp("3dcc")
    return corruption_release(root, "ImageNet-3DCC", CELLS, model_seed=5, wrong_offset=7)


def test_the_benchmark_has_the_release_corruptions_and_severities():
    benchmark = get_benchmark("imagenet-3dcc")
    assert set(benchmark.corruptions) == RELEASE_CORRUPTIONS and len(benchmark.corruptions) == 12
    assert benchmark.severities == (1, 2, 3, 4, 5)
    assert benchmark.kind == "corruption" and benchmark.label_space == "imagenet-1k"
    assert benchmark.folder_layout == "corruption_severity" and benchmark.released_size == 224
    assert not benchmark.alexnet_baseline and benchmark.default_source is None


def test_evaluate_scores_the_release_folder_with_the_mean_top1_recomputed(release):
    entry = {"source": release["folder"], "corruptions": ["fog_3d", "near_focus"], "severities": [1, 3]}
    results, frame = evaluate_benchmark(
        release["root"] / "e2e", release["model"], "imagenet-3dcc", entry, {"batch_size": 8}, report=False
    )
    key = results["models"][0]["key"]
    assert len(frame) == 12
    # Labels: the ImageNet-1k index of each file's wnid folder.
    wnids = frame["sample_id"].astype(str).str.split("/").str[2]
    assert (frame["label"].to_numpy() == [IMAGENET_WNIDS.index(w) for w in wnids]).all()
    # Independent re-derivation of the cell table and the headline from the stored predictions.
    right = frame["prediction"].to_numpy() == frame["label"].to_numpy()
    by_cell = (
        100.0
        * pd.Series(right).groupby([frame["corruption"].to_numpy(), frame["severity"].to_numpy()]).mean()
    )
    assert sorted(by_cell.index) == sorted(CELLS)
    assert by_cell.nunique() == 3  # 100, 66.7 and 33.3 %: the cells differ
    assert results["benchmarks"]["imagenet-3dcc"]["kind"] == "corruption"
    metrics = results["metrics"][key]["imagenet-3dcc"]
    assert metrics["top1_by_cell"] == pytest.approx({f"{c}/{s}": by_cell[(c, s)] for c, s in CELLS})
    assert metrics["mean_top1"] == pytest.approx(by_cell.mean())
    by_corruption = {c: by_cell[c].mean() for c in ("near_focus", "fog_3d")}
    assert metrics["top1_by_corruption"] == pytest.approx(by_corruption)
    # fog_3d is the "weather" group's only corruption, near_focus one of "depth of field"'s two (the other absent).
    assert metrics["top1_by_group"] == pytest.approx(
        {"depth of field": by_corruption["near_focus"], "weather": by_corruption["fog_3d"]}
    )
    assert list(metrics["top1_by_group"]) == ["depth of field", "weather"]  # the release's group order
    [summary] = results["summary"].values()
    assert summary == pytest.approx({"imagenet-3dcc mean top-1 %": by_cell.mean()})
    report = render_markdown([results], {})  # the report's text, without drawing its figures
    assert "Mean top-1 per corruption group (%)" in report
    assert f"| weather | {by_corruption['fog_3d']:.2f}" in report
    # The papers' names stay on their own benchmarks: the mean over the cells is not "Park & Kim" here.
    assert f"| mean top-1 over all cells present (%) | {by_cell.mean():.2f} |" in report
    assert "Park & Kim" not in report and "Paul & Chen" not in report


def test_generated_is_refused_with_what_the_generator_needs(tmp_path, release):
    with pytest.raises(ValueError, match="imagenet-3dcc cannot be generated") as refused:
        load_benchmark("imagenet-3dcc", "generated:builtin", corruptions=["fog_3d"])
    assert "depth map" in str(refused.value) and "reshading" in str(refused.value)
    suite = tmp_path / "generated.yaml"
    entry = {"source": "generated:builtin", "corruptions": ["fog_3d"]}
    suite.write_text(yaml.safe_dump({"name": "g", "benchmarks": {"imagenet-3dcc": entry}}))
    output = tmp_path / "run"
    with pytest.raises((EvaluationError, ValueError), match="cannot be generated"):
        evaluate(
            EvaluationConfig(
                models=[release["model"]], suite=str(suite), output=output, progress=False, report=False
            )
        )
    assert not (output / "predictions").exists()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"corruptions": ["fog"]}, r"unknown corruption 'fog'\. Did you mean 'fog_3d'\?.*Known: near_focus"),
        ({"corruptions": "standard"}, r"unknown corruption 'standard'.*\(or all\)"),
        ({"severities": [6]}, r"severities must be integers in 1\.\.5"),
    ],
)
def test_a_bad_corruption_or_severity_is_refused_with_the_valid_ones(release, options, message):
    with pytest.raises(ValueError, match=message):
        load_benchmark("imagenet-3dcc", release["folder"], **options)


def test_a_folder_of_imagenet_c_corruptions_is_refused_with_the_3dcc_names(tmp_path):
    (tmp_path / "fog" / "1" / "n01440764").mkdir(parents=True)
    (tmp_path / "fog" / "1" / "n01440764" / "a.JPEG").write_bytes(block_jpeg(0))
    with pytest.raises(ValueError, match="'fog' is not a corruption of this benchmark; known: near_focus"):
        list(load_benchmark("imagenet-3dcc", str(tmp_path)).samples())


UNLISTED = "ILSVRC2012_val_00000293.JPEG"  # not one of RobustBench's 5,000


def _alexnet_3dcc() -> dict[str, list[float]]:
    path = resources.files("hf_vitrobust.metrics") / "robustbench_alexnet_imagenet_3dcc_accuracies.csv"
    rows = csv.DictReader(path.read_text(encoding="utf-8").splitlines())
    return {row["corruption"]: [float(row[str(s)]) for s in range(1, 6)] for row in rows}


def test_robustbench_5000_scores_its_listed_images_with_its_3dcc_columns(tmp_path, release):
    """All 60 cells, each with one listed file (of the model's argmax class in two cells of three, so right; else
    another class's, so wrong) and one unlisted file of the argmax class: only the listed ones are scored, and
    RobustBench's corruptions_acc_3d and corruptions_mce_3d are recomputed here from the predictions."""
    classifier = load_classifier(release["model"])
    images = [block_jpeg(seed) for seed in range(6)]
    with torch.no_grad():
        pixels = classifier.preprocess([Image.open(io.BytesIO(b)).convert("RGB") for b in images])
        argmax = classifier(pixels).argmax(1).tolist()
    entries = image_list("robustbench-imagenet-c-5000")
    by_wnid: dict[str, str] = {}
    for entry in entries:
        by_wnid.setdefault(entry.split("/")[0], entry)
    folder = tmp_path / "ImageNet-3DCC"
    for cell, (corruption, severity) in enumerate(
        (c, s) for c in sorted(RELEASE_CORRUPTIONS) for s in range(1, 6)
    ):
        k = cell % len(images)
        own = IMAGENET_WNIDS[argmax[k]]
        listed = by_wnid[own] if cell % 3 and own in by_wnid else entries[1000 + cell]
        for relative in (listed, f"{own}/{UNLISTED}"):
            path = folder / corruption / str(severity) / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(images[k])
    suite = tmp_path / "rb.yaml"
    entry = {"source": str(folder), "corruptions": "all", "protocol": {"image_list": "robustbench-5000"}}
    suite.write_text(yaml.safe_dump({"name": "rb", "batch_size": 64, "benchmarks": {"imagenet-3dcc": entry}}))
    output = tmp_path / "run"
    config = EvaluationConfig(
        models=[release["model"]], suite=str(suite), output=output, progress=False, report=False
    )
    evaluate(config)
    results = json.loads((output / "results.json").read_text())
    [key] = [path.name for path in (output / "predictions").iterdir()]
    frame = pd.read_parquet(output / "predictions" / key / "imagenet-3dcc.parquet")
    assert len(frame) == 60 and not frame["sample_id"].astype(str).str.endswith(UNLISTED).any()
    right = frame["prediction"].to_numpy() == frame["label"].to_numpy()
    accuracy = pd.Series(right).groupby([frame["corruption"].to_numpy(), frame["severity"].to_numpy()]).mean()
    alexnet = _alexnet_3dcc()
    assert set(alexnet) == RELEASE_CORRUPTIONS
    names = sorted(RELEASE_CORRUPTIONS)
    model = np.array([[accuracy[(c, s)] for s in range(1, 6)] for c in names])
    errors = np.array([[1.0 - alexnet[c][s - 1] for s in range(1, 6)] for c in names])
    expected_acc = 100.0 * model.mean()
    expected_mce = 100.0 * np.mean((1.0 - model).sum(axis=1) / errors.sum(axis=1))
    assert 0.0 < expected_acc < 100.0
    [summary] = results["summary"].values()
    assert summary["imagenet-3dcc corruptions accuracy % (robustbench-5000)"] == pytest.approx(expected_acc)
    assert summary["imagenet-3dcc mCE % (robustbench AlexNet)"] == pytest.approx(expected_mce)
    assert summary["imagenet-3dcc mean top-1 %"] == pytest.approx(expected_acc)  # the same 60 cells
    [intervals] = results["intervals"].values()
    interval = intervals["imagenet-3dcc mCE % (robustbench AlexNet)"]
    assert interval["estimate"] == pytest.approx(expected_mce) and interval["unit"] == "clean image"
    assert results["benchmarks"]["imagenet-3dcc"]["protocol"]["image_list"] == "robustbench-5000"
