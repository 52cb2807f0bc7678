# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The training sets as benchmarks: imagenet-train (ILSVRC/imagenet-1k, split train) and cifar100-train
(uoft-cs/cifar100, split train), for the probes Park & Kim measure on training mini-batches (how-do-vits-work's
losslandscape.ipynb passes `dataset_train`, ops/datasets.py's `ImageFolder(<root>/imagenet/train)` or
`CIFAR100(train=True)`). They read the Hub copies and schemas of imagenet-val and cifar100 at their own split, from
the Hub, a local copy of the repository, its parquet files or an image folder; a suite scores imagenet-val and
imagenet-train side by side and a probe takes its images from the training set."""

import io
from pathlib import Path

import data_fixtures as fx
import numpy as np
import pandas as pd
import pytest
import torch
import yaml
from PIL import Image as PILImage
from probe_models import save_vit_folder, tiny_vit_model

from hf_vitrobust.analysis.protocols import default_protocol
from hf_vitrobust.data import (
    BENCHMARKS,
    HubSource,
    ImageFolderSource,
    ParquetSource,
    SchemaError,
    get_benchmark,
    load_benchmark,
)
from hf_vitrobust.evaluation.config import EvaluationConfig
from hf_vitrobust.evaluation.runner import evaluate
from hf_vitrobust.evaluation.streams import uint8_to_pixels
from hf_vitrobust.evaluation.suite import suite_from_dict
from hf_vitrobust.models import load_classifier
from hf_vitrobust.models.imagenet import IMAGENET_WNIDS
from hf_vitrobust.probes import feature_variance

#: Train and validation rows of the ILSVRC fixture: ImageNet-1k labels (517 is "crane2" in the Hub's ClassLabel)
#: and the red value of each solid image, so that a sample tells which split it came from.
TRAIN_LABELS, TRAIN_RED = [285, 0, 517, 134, 999, 7], [0, 1, 2, 3, 4, 5]
VAL_LABELS, VAL_RED = [1, 2, 3], [200, 201, 202]


def _noise_png(seed: int, size: int = 16) -> bytes:
    array = np.random.default_rng(seed).integers(0, 256, size=(size, size, 3), dtype=np.uint8)
    buffer = io.BytesIO()
    PILImage.fromarray(array).save(buffer, "PNG")
    return buffer.getvalue()


def _ilsvrc(root: Path, textured: bool = False) -> Path:
    """ILSVRC/imagenet-1k laid out as published (tests/data_fixtures.py), with a train AND a validation split; solid
    images of the red values above, or (`textured`) random-noise images, a different one per row."""
    from datasets import ClassLabel, Features, Image

    train = [_noise_png(v) for v in TRAIN_RED] if textured else TRAIN_RED
    repo = fx.ilsvrc_imagenet_1k(root, TRAIN_LABELS, images=train, split="train")
    features = Features({"image": Image(), "label": ClassLabel(names=fx.hub_imagenet_names())})
    val = [_noise_png(v) for v in VAL_RED] if textured else VAL_RED
    columns = {"image": fx._images(val), "label": VAL_LABELS}
    fx.write_parquet(repo / "data" / "validation-00000-of-00014.parquet", columns, features)
    return repo


def _uoft_cifar100(root: Path, train: list[int], test: list[int]) -> Path:
    """uoft-cs/cifar100 as published: config cifar100, cifar100/{train,test}-00000-of-00001.parquet, fine_label with
    "cra" for class 26 (the fixture of tests/data_fixtures.py, with the train split added)."""
    from datasets import ClassLabel, Features, Image

    features = Features(
        {
            "img": Image(),
            "fine_label": ClassLabel(names=fx.HUB_CIFAR100_NAMES),
            "coarse_label": ClassLabel(names=list(fx.CIFAR100_COARSE)),
        }
    )
    repo = root / "uoft-cs" / "cifar100"
    for split, labels, first in (("train", train, 0), ("test", test, 100)):
        columns = {
            "img": fx._images(list(range(first, first + len(labels)))),
            "fine_label": labels,
            "coarse_label": [0] * len(labels),
        }
        fx.write_parquet(repo / "cifar100" / f"{split}-00000-of-00001.parquet", columns, features)
    data_files = [{"split": s, "path": f"cifar100/{s}-*"} for s in ("train", "test")]
    fx._write_readme(repo, [{"config_name": "cifar100", "data_files": data_files, "default": True}])
    return repo


def test_both_training_sets_are_registered_in_their_label_spaces():
    imagenet, cifar = get_benchmark("imagenet-train"), get_benchmark("cifar100-train")
    assert (imagenet.num_classes, imagenet.label_space, imagenet.task) == (
        1000,
        "imagenet-1k",
        "classification",
    )
    assert (cifar.num_classes, cifar.label_space, cifar.task) == (100, "cifar100", "classification")
    assert imagenet.splits == cifar.splits == ("train",) and imagenet.split == cifar.split == "train"
    assert imagenet.class_subset is None and not imagenet.corruptions and imagenet.generated_from is None
    # The same Hub copies and schemas as the evaluation sets: the same label mapping, checks and row counts.
    assert imagenet.hub_schemas == BENCHMARKS["imagenet-val"].hub_schemas
    assert cifar.hub_schemas == BENCHMARKS["cifar100"].hub_schemas
    assert imagenet.hub_schemas[0].expected_rows("train") == 1_281_167
    assert cifar.hub_schemas[0].expected_rows("train") == 50_000
    assert (imagenet.released_size, cifar.released_size) == (None, 32)
    assert default_protocol(imagenet) == {"preprocessing": "model-native", "interpolation": "model-own"}
    assert default_protocol(cifar) == {"preprocessing": "as-released", "interpolation": "model-own"}


def test_the_default_hub_sources_read_the_train_split():
    """Offline: the source is only resolved. The schema's default split is validation (imagenet-val) / test
    (cifar100); the training sets ask for train."""
    imagenet = load_benchmark("imagenet-train")
    assert isinstance(imagenet, HubSource) and imagenet.schema.name == "ilsvrc-imagenet-1k"
    assert imagenet.parts[0].load_kwargs == {"path": "ILSVRC/imagenet-1k", "split": "train"}
    assert load_benchmark("imagenet-val").parts[0].load_kwargs["split"] == "validation"
    cifar = load_benchmark("cifar100-train")
    assert cifar.parts[0].load_kwargs == {"path": "uoft-cs/cifar100", "split": "train", "name": "cifar100"}
    assert load_benchmark("cifar100").parts[0].load_kwargs["split"] == "test"


def test_a_local_ilsvrc_copy_gives_imagenet_train_its_train_rows(tmp_path):
    repo = _ilsvrc(tmp_path / "hub")
    train = load_benchmark("imagenet-train", str(repo))
    assert isinstance(train, HubSource) and train.schema.name == "ilsvrc-imagenet-1k"
    samples = list(train)
    assert [s.label for s in samples] == TRAIN_LABELS
    assert [fx.red(s.image) for s in samples] == TRAIN_RED
    assert [s.sample_id for s in samples][:2] == ["row-000000", "row-000001"]
    assert train.describe()["parts"] == ["train"]
    # A local copy may be a subset: the known size is recorded with the found one, as a warning.
    assert train.row_counts["train"]["expected"] == 1_281_167 and train.row_counts["train"]["found"] == 6
    val = list(load_benchmark("imagenet-val", str(repo)))
    assert [s.label for s in val] == VAL_LABELS and [fx.red(s.image) for s in val] == VAL_RED


def test_parquet_files_of_the_repository_are_filtered_to_the_train_split(tmp_path):
    data = _ilsvrc(tmp_path / "hub") / "data"  # not a repository id: read as parquet files
    train = load_benchmark("imagenet-train", str(data))
    assert isinstance(train, ParquetSource) and train.schema.name == "ilsvrc-imagenet-1k"
    described = train.describe()
    assert (described["files"], described["files_of_other_splits"], described["split"]) == (1, 2, "train")
    samples = list(train)
    assert [s.label for s in samples] == TRAIN_LABELS and [fx.red(s.image) for s in samples] == TRAIN_RED
    # An evaluation set without split= still reads every file (train, validation and the unlabelled test rows).
    everything = load_benchmark("imagenet-val", str(data))
    assert len(everything.parts) == 3
    assert [fx.red(s.image) for s in load_benchmark("imagenet-val", str(data), split="validation")] == VAL_RED
    with pytest.raises(SchemaError, match=r"no parquet file of split 'train'.*1 of split validation"):
        load_benchmark("imagenet-train", str(data / "validation-00000-of-00014.parquet"))


def test_cifar100_train_reads_the_train_split_with_the_cra_spelling(tmp_path):
    repo = _uoft_cifar100(tmp_path / "hub", train=[26, 99, 0, 5], test=[1, 2])
    train = load_benchmark("cifar100-train", str(repo))
    assert train.schema.name == "uoft-cs-cifar100"
    assert train.parts[0].load_kwargs["split"] == "train" and train.parts[0].load_kwargs["name"] == "cifar100"
    samples = list(train)
    assert [s.label for s in samples] == [26, 99, 0, 5] and [fx.red(s.image) for s in samples] == [0, 1, 2, 3]
    assert [fx.red(s.image) for s in load_benchmark("cifar100", str(repo))] == [100, 101]
    files = load_benchmark("cifar100-train", str(repo / "cifar100"))
    assert isinstance(files, ParquetSource) and files.describe()["files_of_other_splits"] == 1
    assert [s.label for s in files] == [26, 99, 0, 5]


def test_image_folders_in_the_released_layouts(tmp_path):
    """ILSVRC's train release is <wnid>/<wnid>_<n>.JPEG; CIFAR exported as images is <class name>/<file>."""
    root = fx.image_folder(
        tmp_path / "train",
        {
            f"{IMAGENET_WNIDS[285]}/{IMAGENET_WNIDS[285]}_1.png": fx.image_bytes(1),
            f"{IMAGENET_WNIDS[0]}/{IMAGENET_WNIDS[0]}_2.png": fx.image_bytes(2),
        },
    )
    source = load_benchmark("imagenet-train", str(root))
    assert isinstance(source, ImageFolderSource)
    assert sorted((s.label, fx.red(s.image)) for s in source) == [(0, 2), (285, 1)]
    cifar = fx.image_folder(
        tmp_path / "cifar", {"crab/a.png": fx.image_bytes(3), "worm/b.png": fx.image_bytes(4)}
    )
    assert sorted(s.label for s in load_benchmark("cifar100-train", str(cifar))) == [26, 99]


def test_bad_sources_and_splits_fail_clearly(tmp_path):
    with pytest.raises(ValueError, match=r"reads only the 'train' split.*split='validation'.*imagenet-val"):
        load_benchmark("imagenet-train", split="validation")
    with pytest.raises(ValueError, match=r"split='test'.*Use cifar100"):
        load_benchmark("cifar100-train", split="test")
    assert load_benchmark("cifar100-train", split="train").parts[0].load_kwargs["split"] == "train"
    with pytest.raises(ValueError, match="cannot be generated"):
        load_benchmark("imagenet-train", "generated:builtin")
    with pytest.raises(SchemaError, match="imagenet-val only"):
        load_benchmark("imagenet-train", "builtin")
    # Another label space's copy is refused before anything is read: its labels are not ImageNet-1k indices.
    with pytest.raises(
        SchemaError, match=r"cifar100 label space.*imagenet-train is scored in the imagenet-1k"
    ):
        load_benchmark("imagenet-train", "uoft-cs/cifar100")
    repo = _ilsvrc(tmp_path / "hub")
    with pytest.raises(SchemaError, match=r"imagenet-1k label space.*cifar100-train"):
        load_benchmark("cifar100-train", str(repo))
    with pytest.raises(SchemaError, match=r"schema uoft-cs-cifar100.*imagenet-train"):
        load_benchmark("imagenet-train", str(repo), schema="uoft-cs-cifar100")


def test_a_suite_names_the_training_sets_and_refuses_their_other_splits():
    suite = suite_from_dict(
        {
            "name": "train-and-val",
            "benchmarks": {
                "imagenet-val": None,
                "imagenet_train": {"split": "train"},
                "cifar100-train": None,
            },
            "probes": {
                "hessian": {"benchmark": "imagenet-train", "num_images": 8},
                "feature_variance": {"benchmark": "cifar100_train", "num_images": 4},
            },
        }
    )
    assert suite.benchmark_names == ("imagenet-val", "imagenet-train", "cifar100-train")
    assert suite.probe("hessian").benchmark == "imagenet-train"
    assert suite.probe("feature_variance").benchmark == "cifar100-train"
    with pytest.raises(
        ValueError, match=r"benchmarks\.imagenet-train: imagenet-train reads only the 'train'"
    ):
        suite_from_dict({"name": "s", "benchmarks": {"imagenet-train": {"split": "validation"}}})


def _tiny_vit_1k(folder: Path) -> Path:
    save_vit_folder(folder, tiny_vit_model(patch_size=8))
    return folder


def test_a_run_scores_validation_and_training_sets_and_probes_the_training_images(tmp_path):
    """imagenet-val and imagenet-train from one local ILSVRC copy, through `evaluate`: each is scored on its own
    split (top-1 recomputed from the saved predictions), and feature_variance on all 6 training images equals the
    probe computed directly on them (not on the validation images)."""
    repo = _ilsvrc(tmp_path / "hub", textured=True)
    model = _tiny_vit_1k(tmp_path / "tiny-vit-1k")
    suite = {
        "name": "train-and-val",
        "batch_size": 4,
        "chunk_size": 4,
        "benchmarks": {"imagenet-val": {"source": str(repo)}, "imagenet-train": {"source": str(repo)}},
        "probes": {"feature_variance": {"benchmark": "imagenet-train", "num_images": len(TRAIN_LABELS)}},
    }
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(suite))
    output = tmp_path / "run"
    results = evaluate(EvaluationConfig(models=[str(model)], suite=str(path), output=output, progress=False))
    key = results["models"][0]["key"]
    for name, labels in (("imagenet-val", VAL_LABELS), ("imagenet-train", TRAIN_LABELS)):
        bench = results["benchmarks"][name]
        assert bench["num_samples"] == len(labels) and bench["protocol"]["preprocessing"] == "model-native"
        frame = pd.read_parquet(output / "predictions" / key / f"{name}.parquet")
        assert frame["label"].tolist() == labels
        top1 = 100.0 * float(np.mean(frame["prediction"].to_numpy() == np.asarray(labels)))
        assert results["metrics"][key][name]["top1"] == pytest.approx(top1)
        assert results["summary"][key][f"{name} top-1 %"] == pytest.approx(top1)
    assert results["benchmarks"]["imagenet-train"]["source"]["parts"] == ["train"]
    assert results["benchmarks"]["imagenet-val"]["source"]["parts"] == ["validation"]

    probe = results["probes"][key]["feature_variance"]
    assert probe["benchmark"] == "imagenet-train" and probe["num_images"] == len(TRAIN_LABELS)
    classifier = load_classifier(str(model))

    def direct(name: str) -> np.ndarray:
        images = [s.image for s in load_benchmark(name, str(repo))]
        pixels = torch.stack([uint8_to_pixels(classifier.preprocessing, image) for image in images])
        return np.asarray(feature_variance(classifier, pixels).variance, dtype=np.float64)

    run = np.asarray(probe["variance"], dtype=np.float64)
    expected, other = direct("imagenet-train"), direct("imagenet-val")
    np.testing.assert_allclose(run, expected, rtol=1e-5)
    assert (
        np.max(np.abs(other - expected) / np.abs(expected)) > 1e-2
    )  # the validation images give other values
