# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""ImageNet-V2 (hf_vitrobust.data.imagenet_v2): each test set end to end through `evaluate()` on a tiny copy laid out
like the release (class folders named by ImageNet-1k index), the Hub copy's archives, and the refusals."""

import io
import tarfile
from pathlib import Path

import numpy as np
import pytest
import torch
from benchmark_runs import evaluate_benchmark
from data_fixtures import random_blocks_png
from PIL import Image
from probe_models import save_tiny_vit
from torchvision.datasets import ImageFolder

from hf_vitrobust.data import SchemaError, load_benchmark
from hf_vitrobust.data.imagenet_v2 import IMAGENET_V2_VARIANTS, release_archive, release_folder
from hf_vitrobust.data.webdataset import clip_imagenet_names
from hf_vitrobust.models import load_classifier


def _write_set(folder: Path, files: dict[int, list[bytes]]) -> None:
    for label, images in files.items():
        (folder / str(label)).mkdir(parents=True)
        for i, data in enumerate(images):
            (folder / str(label) / f"{i:02x}{label}.jpeg").write_bytes(data)


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    """A tiny 1000-class ViT and the three test sets' folders: each holds two images labelled with the model's
    argmax (right), one labelled 10, one labelled 2 and a copy of the first labelled 100 (wrong unless the argmax is
    that class); folders "2", "10" and "100" sort as strings in another order than as numbers."""
    root = tmp_path_factory.mktemp("imagenetv2")
    model = save_tiny_vit(root / "tiny-vit-1k", num_labels=1000)
    images = [random_blocks_png(seed) for seed in range(12)]
    classifier = load_classifier(model)
    with torch.no_grad():
        argmax = classifier(classifier.preprocess([Image.open(io.BytesIO(b)).convert("RGB") for b in images]))
    argmax = argmax.argmax(-1).tolist()
    made = {}
    for v, variant in enumerate(IMAGENET_V2_VARIANTS):
        picks = images[4 * v : 4 * v + 4]
        files: dict[int, list[bytes]] = {}
        for label, data in zip([*argmax[4 * v : 4 * v + 2], 10, 2], picks, strict=True):
            files.setdefault(label, []).append(data)
        files.setdefault(100, []).append(picks[0])
        _write_set(root / "release" / release_folder(variant), files)
        made[variant] = files
    return {"root": root, "model": model, "made": made}


@pytest.mark.parametrize("variant", IMAGENET_V2_VARIANTS)
def test_each_test_set_end_to_end_top1_top5_from_the_logits(release, variant, tmp_path):
    entry = {"source": str(release["root"] / "release"), "variant": variant}
    results, frame = evaluate_benchmark(tmp_path, release["model"], "imagenet-v2", entry)
    key = results["models"][0]["key"]
    # Each image's label is its folder's integer, never its rank among the folder names.
    expected = {
        f"{label}/{i:02x}{label}.jpeg": label
        for label, files in release["made"][variant].items()
        for i in range(len(files))
    }
    assert dict(zip(frame["sample_id"], frame["label"], strict=True)) == expected
    logits = np.stack(frame["logits"].to_numpy())
    labels = frame["label"].to_numpy()
    order = np.argsort(-logits, axis=1, kind="stable")
    metrics = results["metrics"][key]["imagenet-v2"]
    assert metrics["top1"] == pytest.approx(100 * np.mean(order[:, 0] == labels))
    assert metrics["top5"] == pytest.approx(100 * np.mean((order[:, :5] == labels[:, None]).any(1)))
    assert 0 < metrics["top1"] < 100
    source = results["benchmarks"]["imagenet-v2"]["source"]
    assert source["variant"] == variant and source["location"].endswith(release_folder(variant))
    assert (
        source["row_counts"][variant]["found"] == len(frame) and "partial local copy" in source["warnings"][0]
    )


def test_folder_names_are_indices_not_sorted_ranks(release):
    folder = release["root"] / "release" / release_folder("matched-frequency")
    naive = ImageFolder(str(folder)).class_to_idx  # what a sorted class-folder reader would give
    assert naive["10"] == 0 and naive["100"] == 1  # "10" < "100" < "2" as strings
    labels = {s.sample_id.split("/")[0]: s.label for s in load_benchmark("imagenet-v2", folder)}
    assert labels and all(label == int(name) for name, label in labels.items())


def test_hub_copy_archives_read_like_the_folders(release, tmp_path):
    hub = tmp_path / "vaishaal" / "ImageNetV2"
    hub.mkdir(parents=True)
    for variant in IMAGENET_V2_VARIANTS:
        with tarfile.open(hub / release_archive(variant), "w:gz") as tar:
            folder = release["root"] / "release" / release_folder(variant)
            tar.add(folder, arcname=release_folder(variant))
    for variant in ("matched-frequency", "threshold-0.7"):
        archive = {(s.sample_id, s.label) for s in load_benchmark("imagenet-v2", hub, variant=variant)}
        folder = release["root"] / "release"
        assert archive == {
            (s.sample_id, s.label) for s in load_benchmark("imagenet-v2", folder, variant=variant)
        }
    source = load_benchmark("imagenet-v2", hub)
    source.validate()
    assert source.describe()["file"] == "imagenetv2-matched-frequency.tar.gz"


def _webdataset(root: Path, samples: list[tuple[bytes, str]], shards: int = 2, names: int = 1000) -> Path:
    """A copy laid out as clip-benchmark/wds_imagenetv2: test/nshards.txt, test/<i>.tar of s%07d.webp + .cls
    (webdataset_builder.py's keys), classnames.txt (the first `names` of CLIP's 1000 ImageNet names)."""
    (root / "test").mkdir(parents=True)
    (root / "test" / "nshards.txt").write_text(f"{shards}\n")
    (root / "classnames.txt").write_text("".join(f"{name}\n" for name in clip_imagenet_names()[:names]))
    for shard in range(shards):
        with tarfile.open(root / "test" / f"{shard}.tar", "w") as tar:
            for index in range(shard, len(samples), shards):
                webp = io.BytesIO()
                Image.open(io.BytesIO(samples[index][0])).convert("RGB").save(
                    webp, format="webp", lossless=True
                )
                for extension, data in (("webp", webp.getvalue()), ("cls", samples[index][1].encode())):
                    info = tarfile.TarInfo(f"s{index:07d}.{extension}")
                    info.size = len(data)
                    tar.addfile(info, io.BytesIO(data))
    return root


def test_clip_benchmark_webdataset_copy_reads_the_same_labels_and_pixels(release, tmp_path):
    folder = release["root"] / "release" / release_folder("matched-frequency")
    expected = list(load_benchmark("imagenet-v2", folder))
    hub = _webdataset(
        tmp_path / "clip-benchmark" / "wds_imagenetv2",
        [((folder / s.sample_id).read_bytes(), str(s.label)) for s in expected],
    )
    source = load_benchmark("imagenet-v2", hub)
    read = list(source)
    assert len(read) == len(expected)
    for sample in read:  # shard i holds keys i, i + 2, ...; key s%07d is the index the export wrote
        original = expected[int(sample.sample_id.split("/s")[1])]
        assert sample.label == original.label and torch.equal(sample.image, original.image)  # lossless webp
    assert source.shards() == ("test/0.tar", "test/1.tar")
    assert source.describe()["row_counts"]["matched-frequency"]["found"] == len(expected)
    with pytest.raises(SchemaError, match="matched-frequency only, not top-images"):
        load_benchmark("imagenet-v2", hub, variant="top-images")
    one = (folder / expected[0].sample_id).read_bytes()
    short = _webdataset(tmp_path / "short", [(one, "3")], shards=1, names=999)
    with pytest.raises(SchemaError, match="names 999 classes"):
        load_benchmark("imagenet-v2", short).validate()
    bad = _webdataset(tmp_path / "bad", [(one, "1000")], shards=1)
    with pytest.raises(SchemaError, match="'1000' is not an ImageNet-V2 class"):
        load_benchmark("imagenet-v2", bad).validate()


def test_refusals(release, tmp_path):
    root = release["root"] / "release"
    with pytest.raises(SchemaError, match="is ImageNet-V2 matched-frequency, not the top-images"):
        load_benchmark(
            "imagenet-v2", root / release_folder("matched-frequency"), variant="top-images"
        ).validate()
    wnids = tmp_path / "by-wnid"
    (wnids / "n01440764").mkdir(parents=True)
    with pytest.raises(SchemaError, match="neither an ImageNet-V2 test set folder"):
        load_benchmark("imagenet-v2", wnids).validate()
    (tmp_path / "bad" / "1000").mkdir(parents=True)
    (tmp_path / "bad" / "7").mkdir(parents=True)
    with pytest.raises(SchemaError, match="'1000' is not an ImageNet-V2 class folder"):
        load_benchmark("imagenet-v2", tmp_path / "bad").validate()
    merged = tmp_path / "merged"
    _write_set(merged, {5: [random_blocks_png(k) for k in range(11)]})
    with pytest.raises(SchemaError, match="class 5 holds 11 images"):
        load_benchmark("imagenet-v2", merged).validate()
    truncated = tmp_path / release_archive("matched-frequency")
    with tarfile.open(truncated, "w:gz") as tar:
        tar.add(root / release_folder("matched-frequency"), arcname=release_folder("matched-frequency"))
    truncated.write_bytes(truncated.read_bytes()[:-40])
    with pytest.raises(SchemaError, match="truncated download"):
        load_benchmark("imagenet-v2", truncated).validate()
    with pytest.raises(ValueError, match="one ImageNet-V2 test set per entry"):
        load_benchmark("imagenet-v2", root, variant=["matched-frequency", "top-images"])
    with pytest.raises(ValueError, match=r"unknown ImageNet-V2 test set 'threshold-0\.8'"):
        load_benchmark("imagenet-v2", root, variant="threshold-0.8")
