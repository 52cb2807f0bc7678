# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""ObjectNet (hf_vitrobust.data.objectnet) end to end through `evaluate()` on a tiny copy laid out like the release:
the 113-class mapping with logits pooled per ObjectNet class, the border cut off, the naive 1000-way scoring
refused."""

import json
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml
from benchmark_runs import evaluate_benchmark
from PIL import Image
from probe_models import save_vit_folder, tiny_vit_model

from hf_vitrobust.data import SchemaError, load_benchmark
from hf_vitrobust.evaluation.config import EvaluationConfig
from hf_vitrobust.evaluation.runner import evaluate

# ImageNet-1k indices of three ObjectNet classes as objectnet-template-pytorch (50cc886) writes them in
# mapping_files/imagenet_pytorch_id_to_objectnet_id.json: 409, 530 -> 1 (alarm clock); 954 -> 4 (banana);
# 444, 671 -> 17 (bicycle). Written out here, not read from the package.
HAND_GROUPS = {"alarm_clock": (409, 530), "banana": (954,), "bicycle": (444, 671)}
RED = (255, 0, 0)


def _bordered(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A 36x36 image: a 32x32 interior of 4x4 blocks of random colours inside a 2-pixel red frame (what
    ObjectNet's loader and the testbed crop), and that interior."""
    rng = np.random.default_rng(seed)
    inner = np.repeat(np.repeat(rng.integers(0, 200, size=(8, 8, 3), dtype=np.uint8), 4, 0), 4, 1)
    full = np.empty((36, 36, 3), dtype=np.uint8)
    full[:] = RED
    full[2:-2, 2:-2] = inner
    return full, inner


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    """`objectnet-1.0/images/<folder>/*.png` for three of the 113 classes (3 images each) and one class outside them
    (squeegee), the release's `mappings/`, and a tiny 1000-class ViT whose bias favours 530 (digital clock, the
    second ImageNet class of alarm clock) and 671 (mountain bike, the second of bicycle)."""
    root = tmp_path_factory.mktemp("objectnet")
    images = root / "objectnet-1.0" / "images"
    interiors = {}
    for c, folder in enumerate([*HAND_GROUPS, "squeegee"]):
        (images / folder).mkdir(parents=True)
        for i in range(3):
            full, inner = _bordered(10 * c + i)
            Image.fromarray(full).save(images / folder / f"{i}{c}.png")
            interiors[f"{folder}/{i}{c}.png"] = inner
    mappings = root / "objectnet-1.0" / "mappings"
    mappings.mkdir()
    shipped = Path(__file__).parents[2] / "hf_vitrobust" / "assets" / "class_lists"
    for release_name, shipped_name in [
        ("folder_to_objectnet_label.json", "objectnet_folder_to_objectnet_label.json"),
        ("objectnet_to_imagenet_1k.json", "objectnet_to_imagenet_1k.json"),
    ]:
        (mappings / release_name).write_text((shipped / shipped_name).read_text())
    model = tiny_vit_model(patch_size=8, hidden_size=16, intermediate_size=64, seed=3)
    with torch.no_grad():
        model.classifier.bias[[530, 671]] += 8.0
    return {"root": root, "model": save_vit_folder(root / "vit", model), "interiors": interiors}


def test_end_to_end_pooled_top1_against_a_hand_count(release, tmp_path):
    results, frame = evaluate_benchmark(
        tmp_path, release["model"], "objectnet", {"source": str(release["root"])}
    )
    key = results["models"][0]["key"]
    # Squeegee is not one of the 113: left out; each label is the smallest ImageNet index of its class.
    assert sorted(frame["sample_id"]) == sorted(
        k for k in release["interiors"] if not k.startswith("squeegee")
    )
    assert {
        sid.split("/")[0]: label for sid, label in zip(frame["sample_id"], frame["label"], strict=True)
    } == {
        "alarm_clock": 409,
        "banana": 954,
        "bicycle": 444,
    }
    # Hand count: the ObjectNet class with the largest maximum logit over its ImageNet classes, from the
    # release's own JSON files read here, ImageNet names matched against the 1000-class table.
    table = Path(__file__).parents[2] / "hf_vitrobust" / "assets" / "class_lists"
    to_imagenet = json.loads((table / "objectnet_to_imagenet_1k.json").read_text())
    folder_of = {
        v: k for k, v in json.loads((table / "objectnet_folder_to_objectnet_label.json").read_text()).items()
    }
    names = [line.split("\t")[2] for line in (table / "imagenet_1k.tsv").read_text().splitlines()[1:]]
    groups = {folder_of[c]: [names.index(n) for n in v.split("; ")] for c, v in to_imagenet.items()}
    assert {f: tuple(sorted(groups[f])) for f in HAND_GROUPS} == HAND_GROUPS
    logits = np.stack(frame["logits"].to_numpy())
    right = 0
    for sample_id, row in zip(frame["sample_id"], logits, strict=True):
        winner = max(groups, key=lambda folder: max(row[i] for i in groups[folder]))
        right += winner == sample_id.split("/")[0]
    metrics = results["metrics"][key]["objectnet"]
    assert metrics["top1"] == pytest.approx(100 * right / len(frame))
    # The bias makes the second ImageNet class of two groups win: a 1000-way argmax against the label is never right.
    assert metrics["top1"] > 0 and not (logits.argmax(1) == frame["label"].to_numpy()).any()
    # The interval's estimate is the same pooled top-1 (spelled out: the headline of a clean kind).
    interval = json.loads((tmp_path / "run" / "results.json").read_text())["intervals"][key][
        "objectnet top-1 %"
    ]
    assert interval["estimate"] == pytest.approx(metrics["top1"]) and interval["num_samples"] == len(frame)
    source = results["benchmarks"]["objectnet"]["source"]
    assert source["num_images"] == 9 and source["folders_left_out"] == 1 and source["border_removed_px"] == 2


def test_the_border_is_cut_before_the_model_sees_the_image(release):
    samples = {s.sample_id: s for s in load_benchmark("objectnet", str(release["root"] / "objectnet-1.0"))}
    assert len(samples) == 9
    for sample_id, sample in samples.items():
        assert tuple(sample.image.shape) == (3, 32, 32)
        assert torch.equal(sample.image, torch.from_numpy(release["interiors"][sample_id]).permute(2, 0, 1))


def test_naive_scoring_and_a_changed_mapping_are_refused(release, tmp_path):
    suite = {
        "name": "objectnet-naive",
        "benchmarks": {
            "objectnet": {"source": str(release["root"]), "protocol": {"class_mask": "paul-chen-1000"}}
        },
    }
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(suite))
    with pytest.raises(ValueError, match="1000-way argmax is not its protocol"):
        evaluate(
            EvaluationConfig(
                models=[release["model"]],
                suite=str(tmp_path / "suite.yaml"),
                output=tmp_path / "run",
                progress=False,
            )
        )
    changed = tmp_path / "objectnet-1.0"
    (changed / "images" / "banana").mkdir(parents=True)
    (changed / "mappings").mkdir()
    (changed / "mappings" / "objectnet_to_imagenet_1k.json").write_text(json.dumps({"Banana": "orange"}))
    with pytest.raises(SchemaError, match="differs from ObjectNet's mapping"):
        load_benchmark("objectnet", str(tmp_path)).validate()
