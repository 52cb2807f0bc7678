# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Every benchmark type through `evaluate()`, on fixtures laid out like the real repositories (names, columns and
label encodings as published; `docs/hub_datasets.md`): ImageNet-A (barkermrl's 200-class ClassLabel), -R
(axiong's wnid column), -O (cais's image folder with an ILSVRC in-distribution half), -9 (the release's variant
folders), generated -P, ImageNet-C (WNJXYK's integer labels), Sketch (nateraw's conversion, "crane2"), CIFAR-10-C
(the released .npy arrays) and CIFAR-100-C (generated from uoft-cs/cifar100, "cra").

Each test recomputes its benchmark's metrics from the saved per-sample predictions with its own code, following
the official definitions (the 200-class mask before the argmax; -max softmax over ImageNet-O's classes with the
OOD images positive; ImageNet-9's superclass map; ImageNet-P's flip probability and top-5 distance), and compares
them with results.json. The labels are chosen from the tiny model's own logits so that the protocol matters: a
1000-way argmax on ImageNet-A/R, or a flipped ImageNet-O score, gives other numbers."""

import io
from pathlib import Path

import data_fixtures as fx
import numpy as np
import pandas as pd
import pytest
import torch
import yaml
from PIL import Image
from probe_models import save_vit_folder, tiny_vit_model
from sklearn.metrics import average_precision_score

from hf_vitrobust.data import (
    imagenet_a_classes,
    imagenet_o_classes,
    imagenet_r_classes,
    imagenet_to_imagenet_9,
)
from hf_vitrobust.evaluation.config import EvaluationConfig
from hf_vitrobust.evaluation.runner import evaluate
from hf_vitrobust.models import load_classifier
from hf_vitrobust.models.imagenet import IMAGENET_WNIDS

PALETTE_SIZE = 60


def _png(colours: np.ndarray, size: int = 6) -> bytes:
    """A two-colour image: top half colours[0], bottom half colours[1]."""
    array = np.zeros((size, size, 3), dtype=np.uint8)
    array[: size // 2], array[size // 2 :] = colours[0], colours[1]
    buffer = io.BytesIO()
    Image.fromarray(array).save(buffer, "PNG")
    return buffer.getvalue()


def _tiny_vit(folder: Path, num_labels: int, seed: int) -> Path:
    model = tiny_vit_model(patch_size=8, num_labels=num_labels, seed=seed)
    with torch.no_grad():
        model.classifier.weight.mul_(20.0)  # spread the logits: more distinct argmaxes over the palette
    save_vit_folder(folder, model)
    return folder


def _logits(folder: Path, images: list[bytes]) -> torch.Tensor:
    classifier = load_classifier(str(folder))
    with torch.no_grad():
        return classifier(classifier.preprocess([Image.open(io.BytesIO(b)).convert("RGB") for b in images]))


def _predictions(output: Path, key: str, benchmark: str) -> pd.DataFrame:
    return pd.read_parquet(output / "predictions" / key / f"{benchmark}.parquet")


def _right_and_wrong(logits: torch.Tensor, classes: list[int], right: int, wrong: int) -> tuple[list, list]:
    """Images (indices) and labels: `right` images labelled with their argmax over `classes` where the 1000-way
    argmax differs from it (right only under the subset protocol), then `wrong` images labelled with another class."""
    sub = torch.tensor(classes)[logits[:, classes].argmax(-1)]
    full = logits.argmax(-1)
    rights = [i for i in range(len(logits)) if sub[i] != full[i]][:right]
    assert len(rights) == right, "the palette gives too few images right only under the subset protocol"
    others = [i for i in range(len(logits)) if i not in rights][:wrong]
    labels = [int(sub[i]) for i in rights]
    labels += [next(c for c in classes if c != sub[i] and c != full[i]) for i in others]
    return rights + others, labels


@pytest.fixture(scope="module")
def palette() -> list[bytes]:
    rng = np.random.default_rng(0)
    return [_png(rng.integers(0, 256, size=(2, 3))) for _ in range(PALETTE_SIZE)]


@pytest.fixture(scope="module")
def imagenet_run(tmp_path_factory, palette):
    """One run of a 1000-class tiny ViT on every ImageNet benchmark type, and what each fixture holds."""
    root = tmp_path_factory.mktemp("imagenet-benchmarks")
    model = _tiny_vit(root / "tiny-vit-1k", 1000, seed=0)
    logits = _logits(model, palette)
    full = logits.argmax(-1)
    made: dict = {}

    a_classes = list(imagenet_a_classes().class_indices)
    picks, labels = _right_and_wrong(logits, a_classes, right=3, wrong=3)
    numbers = [a_classes.index(label) for label in labels]  # barkermrl stores 200-class numbers
    fx.barkermrl_imagenet_a(root, numbers, images=[palette[i] for i in picks])
    made["imagenet-a"] = labels

    r_classes = list(imagenet_r_classes().class_indices)
    picks, labels = _right_and_wrong(logits, r_classes, right=2, wrong=3)
    fx.axiong_imagenet_r(root, [IMAGENET_WNIDS[c] for c in labels], images=[palette[i] for i in picks])
    made["imagenet-r"] = labels

    o_classes = list(imagenet_o_classes().class_indices)
    outside = next(i for i in range(1000) if i not in o_classes)
    fx.cais_imagenet_o(root, 4, images=palette[:4])
    in_labels = [o_classes[0], outside, o_classes[7], o_classes[199], outside, o_classes[50]]
    val = fx.ilsvrc_imagenet_1k(root, in_labels, images=palette[10:16])
    made["imagenet-o"] = {"in_distribution": [c for c in in_labels if c != outside]}

    in9 = imagenet_to_imagenet_9()[full]
    right9 = [i for i in range(PALETTE_SIZE) if in9[i] >= 0][:3]
    wrong9 = [i for i in range(PALETTE_SIZE) if in9[i] < 0][:5]
    assert len(right9) == 3, "the palette gives too few images in an ImageNet-9 superclass"

    def files(rights, wrongs):
        return [(int(in9[i]), palette[i]) for i in rights] + [(i % 9, palette[i]) for i in wrongs]

    variants = {
        "mixed_same": files(right9[:2], wrong9[:2]),
        "mixed_rand": files(right9[2:], wrong9[2:5]),
        "original": files(right9[:1], wrong9[:1]),
        "only_fg": files([], wrong9[3:4]),
    }
    fx.imagenet_9_folder(root / "bg_challenge", variants)

    c_labels = {("fog", 1): [int(full[i]) for i in range(3)] + [5, 6], ("snow", 1): [int(full[0]), 9]}
    fx.tta_imagenet_c(root, c_labels, images=palette[:5])
    made["imagenet-c"] = c_labels

    sketch_labels = [int(full[30]), int(full[31]), 517, 134]  # "crane2" must map to 517, "crane" to 134
    fx.nateraw_imagenet_sketch(root, sketch_labels, images=palette[30:34])
    made["imagenet-sketch"] = sketch_labels

    suite = {
        "name": "every-imagenet-benchmark",
        "description": "every ImageNet benchmark type on fixtures laid out like the real repositories",
        "batch_size": 7,
        "chunk_size": 5,
        "seed": 1,
        "benchmarks": {
            "imagenet-a": {"source": str(root / "barkermrl" / "imagenet-a")},
            "imagenet-r": {"source": str(root / "axiong" / "imagenet-r")},
            "imagenet-o": {"source": str(root / "cais" / "imagenet-o"), "in_distribution": str(val)},
            "imagenet-9": {"source": str(root / "bg_challenge"), "variant": list(variants)},
            "imagenet-p": {
                "source": "generated:builtin",
                "variant": ["gaussian_noise", "rotate"],
                "limit": 2,
            },
            "imagenet-c": {
                "source": str(root / "WNJXYK" / "TTA-ImageNet-C"),
                "corruptions": ["fog", "snow"],
                "severities": [1],
            },
            "imagenet-sketch": {"source": str(root / "nateraw" / "imagenet-sketch")},
        },
    }
    suite_file = root / "suite.yaml"
    suite_file.write_text(yaml.safe_dump(suite))
    output = root / "run"
    results = evaluate(
        EvaluationConfig(models=[str(model)], suite=str(suite_file), output=output, progress=False)
    )
    key = results["models"][0]["key"]
    return {"output": output, "results": results, "key": key, "made": made, "variants": variants}


def _metrics(run, name):
    return run["results"]["metrics"][run["key"]][name]


def _frame(run, name):
    return _predictions(run["output"], run["key"], name)


def _logits_of(frame: pd.DataFrame) -> np.ndarray:
    return np.stack(frame["logits"].to_numpy()).astype(np.float64)


@pytest.mark.parametrize(
    ("name", "subset"), [("imagenet-a", imagenet_a_classes), ("imagenet-r", imagenet_r_classes)]
)
def test_imagenet_a_and_r_are_scored_on_logits_cut_to_their_200_classes(imagenet_run, name, subset):
    frame = _frame(imagenet_run, name)
    labels = frame["label"].to_numpy()
    assert (
        labels.tolist() == imagenet_run["made"][name]
    )  # the fixture's labels, mapped into ImageNet-1k indices
    logits = _logits_of(frame)
    classes = np.asarray(subset().class_indices)
    cut = classes[np.argsort(-logits[:, classes], axis=1, kind="stable")]
    top1 = 100 * np.mean(cut[:, 0] == labels)
    top5 = 100 * np.mean((cut[:, :5] == labels[:, None]).any(1))
    metrics = _metrics(imagenet_run, name)
    assert metrics["top1"] == pytest.approx(top1) and metrics["top5"] == pytest.approx(top5)
    assert metrics["num_samples"] == len(labels)
    assert top1 > 100 * np.mean(logits.argmax(1) == labels)  # a 1000-way argmax would score lower
    assert frame["subset_prediction"].tolist() == cut[:, 0].tolist()


def test_imagenet_o_aupr_of_minus_max_softmax_over_its_classes_with_ood_positive(imagenet_run):
    frame = _frame(imagenet_run, "imagenet-o")
    is_ood = frame["is_ood"].to_numpy(dtype=bool)
    assert is_ood.tolist() == [True] * 4 + [False] * 4
    assert frame.loc[~is_ood, "label"].tolist() == imagenet_run["made"]["imagenet-o"]["in_distribution"]
    logits = _logits_of(frame)[:, list(imagenet_o_classes().class_indices)]
    probabilities = np.exp(logits - logits.max(1, keepdims=True))
    probabilities /= probabilities.sum(1, keepdims=True)
    score = -probabilities.max(1)
    aupr = average_precision_score(is_ood, score)
    metrics = _metrics(imagenet_run, "imagenet-o")
    assert metrics["aupr"] == pytest.approx(aupr)
    assert metrics["num_ood"] == 4 and metrics["num_in_distribution"] == 4
    assert aupr != pytest.approx(average_precision_score(is_ood, -score))  # the sign matters on these images
    assert frame["ood_score"].to_numpy() == pytest.approx(score, rel=1e-5)


def test_imagenet_9_accuracy_per_variant_and_bg_gap(imagenet_run):
    frame = _frame(imagenet_run, "imagenet-9")
    to_in9 = imagenet_to_imagenet_9().numpy()
    right = to_in9[frame["prediction"].to_numpy()] == frame["label"].to_numpy()
    accuracy = {v: float(np.mean(right[frame["variant"].to_numpy() == v])) for v in imagenet_run["variants"]}
    assert accuracy == {"mixed_same": 0.5, "mixed_rand": 0.25, "original": 0.5, "only_fg": 0.0}
    metrics = _metrics(imagenet_run, "imagenet-9")
    assert metrics["accuracy"] == pytest.approx(accuracy)
    assert metrics["bg_gap"] == pytest.approx(accuracy["mixed_same"] - accuracy["mixed_rand"])
    for variant, files in imagenet_run["variants"].items():  # a folder is read round-robin over its classes
        got = frame.loc[frame["variant"] == variant, "label"].tolist()
        assert sorted(got) == sorted(k for k, _ in files)


def _reference_t5d(earlier: list[int], later: list[int]) -> int:
    """hendrycks/robustness ImageNet-P `dist(sigma, 'top5')`: the rank (capped at 6) that the later frame gives to
    each of the earlier frame's top-5 classes, against its rank there."""
    ranks = [later.index(c) + 1 if c in later else 6 for c in earlier]
    return sum(abs(k + 1 - r) for k, r in enumerate(ranks))


def test_generated_imagenet_p_flip_probability_and_top5_distance(imagenet_run):
    frame = _frame(imagenet_run, "imagenet-p")
    assert sorted(frame["perturbation"].unique()) == ["gaussian_noise", "rotate"]
    flips, distances = {}, {}
    for name, rows in frame.groupby("perturbation"):
        per_sequence_flips, per_sequence_t5d = [], []
        for top5 in rows["frame_top5"]:
            top5 = [list(frame_top) for frame_top in top5]
            assert len(top5) == 31
            # Noise: every frame against the first; the others: consecutive frames (difficulty 1).
            pairs = (
                [(0, t) for t in range(1, 31)]
                if name == "gaussian_noise"
                else [(t - 1, t) for t in range(1, 31)]
            )
            per_sequence_flips.append(np.mean([top5[a][0] != top5[b][0] for a, b in pairs]))
            per_sequence_t5d.append(np.mean([_reference_t5d(top5[a], top5[b]) for a, b in pairs]))
        flips[name], distances[name] = np.mean(per_sequence_flips), np.mean(per_sequence_t5d)
    metrics = _metrics(imagenet_run, "imagenet-p")
    assert metrics["flip_probability"] == pytest.approx(flips)
    assert metrics["top5_distance"] == pytest.approx(distances)
    assert metrics["num_sequences"] == {"gaussian_noise": 2, "rotate": 2}


def test_released_imagenet_c_with_integer_labels_top1_per_cell(imagenet_run):
    frame = _frame(imagenet_run, "imagenet-c")
    made = imagenet_run["made"]["imagenet-c"]
    expected = {}
    for (corruption, severity), labels in made.items():
        rows = frame[(frame["corruption"] == corruption) & (frame["severity"] == severity)]
        assert rows["label"].tolist() == labels
        expected[f"{corruption}/{severity}"] = 100 * np.mean(
            rows["prediction"].to_numpy() == np.asarray(labels)
        )
    metrics = _metrics(imagenet_run, "imagenet-c")
    assert metrics["top1_by_cell"] == pytest.approx(expected)
    assert metrics["mean_top1"] == pytest.approx(np.mean(list(expected.values())))
    assert expected["fog/1"] == pytest.approx(60.0) and expected["snow/1"] == pytest.approx(50.0)
    source = imagenet_run["results"]["benchmarks"]["imagenet-c"]["source"]
    assert source["schema"] == "wnjxyk-tta-imagenet-c" and "grouped by class" in source["row_order"]


def test_imagenet_sketch_top1_top5_and_crane2(imagenet_run):
    frame = _frame(imagenet_run, "imagenet-sketch")
    labels = frame["label"].to_numpy()
    assert labels.tolist() == imagenet_run["made"]["imagenet-sketch"]
    order = np.argsort(-_logits_of(frame), axis=1, kind="stable")
    metrics = _metrics(imagenet_run, "imagenet-sketch")
    assert metrics["top1"] == pytest.approx(100 * np.mean(order[:, 0] == labels))
    assert metrics["top5"] == pytest.approx(100 * np.mean((order[:, :5] == labels[:, None]).any(1)))
    assert metrics["top1"] >= 50.0


@pytest.fixture(scope="module")
def cifar_run(tmp_path_factory):
    """A 10-class and a 100-class tiny ViT: CIFAR-10-C from the released arrays, CIFAR-100-C generated from a
    uoft-cs/cifar100 copy; each model skips the other's label space (recorded)."""
    root = tmp_path_factory.mktemp("cifar-benchmarks")
    ten = _tiny_vit(root / "tiny-vit-10", 10, seed=1)
    hundred = _tiny_vit(root / "tiny-vit-100", 100, seed=2)
    rng = np.random.default_rng(1)
    arrays = rng.integers(0, 256, size=(4, 32, 32, 3), dtype=np.uint8)
    fx.cifar_c_arrays(root / "CIFAR-10-C", ["fog", "contrast"], [3, 1, 4, 1], images=arrays)
    clean = [_png(rng.integers(0, 256, size=(2, 3)), size=32) for _ in range(3)]
    fx.uoft_cifar(root, "cifar100", [26, 99, 0], images=clean)
    suite = {
        "name": "cifar-c",
        "description": "CIFAR-10-C arrays and generated CIFAR-100-C",
        "batch_size": 8,
        "chunk_size": 6,
        "benchmarks": {
            "cifar10-c": {
                "source": str(root / "CIFAR-10-C"),
                "corruptions": ["fog", "contrast"],
                "severities": [1, 5],
            },
            "cifar100-c": {
                "source": f"generated:{root / 'uoft-cs' / 'cifar100'}",
                "corruptions": ["gaussian_noise", "fog"],
                "severities": [2, 4],
            },
        },
    }
    suite_file = root / "suite.yaml"
    suite_file.write_text(yaml.safe_dump(suite))
    output = root / "run"
    results = evaluate(
        EvaluationConfig(
            models=[str(ten), str(hundred)], suite=str(suite_file), output=output, progress=False
        )
    )
    return {"output": output, "results": results, "keys": [m["key"] for m in results["models"]]}


@pytest.mark.parametrize(("which", "model", "labels", "cells"), [
    ("cifar10-c", 0, [3, 1, 4, 1], ["contrast/1", "contrast/5", "fog/1", "fog/5"]),
    ("cifar100-c", 1, [26, 99, 0], ["fog/2", "fog/4", "gaussian_noise/2", "gaussian_noise/4"]),
])  # fmt: skip
def test_cifar_c_top1_per_cell_from_arrays_or_generated(cifar_run, which, model, labels, cells):
    key = cifar_run["keys"][model]
    frame = _predictions(cifar_run["output"], key, which)
    expected = {}
    for cell, rows in frame.groupby(frame["corruption"] + "/" + frame["severity"].astype(str)):
        assert rows["label"].tolist() == labels  # uoft-cs's "cra" is class 26
        expected[cell] = 100 * np.mean(rows["prediction"].to_numpy() == rows["label"].to_numpy())
    assert sorted(expected) == cells
    metrics = cifar_run["results"]["metrics"][key]
    assert metrics[which]["top1_by_cell"] == pytest.approx(expected)
    assert metrics[which]["mean_top1"] == pytest.approx(np.mean(list(expected.values())))
    other = "cifar100-c" if which == "cifar10-c" else "cifar10-c"
    assert "label space" in metrics[other]["skipped"]
    generated = cifar_run["results"]["benchmarks"][which]["generated"]
    assert generated is (which == "cifar100-c")
