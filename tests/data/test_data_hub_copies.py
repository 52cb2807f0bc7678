# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The Hub copies read from their own files (hf_vitrobust.data.webdataset, hub_copies): each clip-benchmark
WebDataset copy (ImageNet-A, -R, -O, -Sketch, -V2, ObjectNet) end to end through `evaluate()` on a tiny folder laid
out like its repository (test/nshards.txt, test/<i>.tar of s%07d.webp + .cls, classnames.txt), each metric
recomputed here from the stored logits; a wrong class-name file refused; and the refused repositories and splits
(parquet conversions' partial-*, MarMaster/corruption-*, Voxel51/ImageNet-A) refused before any model is loaded or
any data read."""

import io
import json
import tarfile
from pathlib import Path

import data_fixtures as fx
import numpy as np
import pytest
import torch
import yaml
from PIL import Image
from probe_models import save_tiny_vit
from sklearn.metrics import average_precision_score

from hf_vitrobust.data import SchemaError, hub_sources_markdown, load_benchmark
from hf_vitrobust.evaluation.config import EvaluationConfig
from hf_vitrobust.evaluation.runner import evaluate
from hf_vitrobust.models import load_classifier
from hf_vitrobust.models.imagenet import IMAGENET_WNIDS

TABLES = Path(__file__).parents[2] / "hf_vitrobust" / "assets" / "class_lists"
# CLIP_benchmark's en_classnames.json "imagenet1k", entries 0, 1, 6 (written out here, not read from the package).
CLIP_NAMES_BY_HAND = {0: "tench", 1: "goldfish", 6: "stingray"}


def _wnids(file: str) -> list[str]:
    return (TABLES / file).read_text().split()


def _clip_names() -> list[str]:
    names = (TABLES / "imagenet_1k_clip_names.txt").read_text().splitlines()
    assert len(names) == 1000 and all(names[i] == n for i, n in CLIP_NAMES_BY_HAND.items())
    return names


def _objectnet_groups() -> dict[str, list[int]]:
    """Folder -> ImageNet-1k indices of the 113 ObjectNet classes, from the release's JSON files shipped with the
    package, names matched against the 1000-class table (the hand derivation of test_data_objectnet)."""
    to_imagenet = json.loads((TABLES / "objectnet_to_imagenet_1k.json").read_text())
    folder_of = {
        v: k for k, v in json.loads((TABLES / "objectnet_folder_to_objectnet_label.json").read_text()).items()
    }
    names = [line.split("\t")[2] for line in (TABLES / "imagenet_1k.tsv").read_text().splitlines()[1:]]
    return {folder_of[c]: [names.index(n) for n in v.split("; ")] for c, v in to_imagenet.items()}


def write_webdataset(root: Path, samples: list[tuple[bytes, int]], names: list[str], shards: int = 2) -> Path:
    """A folder laid out like a clip-benchmark/wds_<name> repository: test/nshards.txt, test/<i>.tar holding keys
    s%07d (the sample's index) with a lossless .webp and its .cls class number, and classnames.txt."""
    (root / "test").mkdir(parents=True)
    (root / "test" / "nshards.txt").write_text(f"{shards}\n")
    (root / "classnames.txt").write_text("".join(f"{name}\n" for name in names))
    for shard in range(shards):
        with tarfile.open(root / "test" / f"{shard}.tar", "w") as tar:
            for index in range(shard, len(samples), shards):
                webp = io.BytesIO()
                Image.open(io.BytesIO(samples[index][0])).convert("RGB").save(
                    webp, format="webp", lossless=True
                )
                for extension, data in (("webp", webp.getvalue()), ("cls", str(samples[index][1]).encode())):
                    info = tarfile.TarInfo(f"s{index:07d}.{extension}")
                    info.size = len(data)
                    tar.addfile(info, io.BytesIO(data))
    return root


def _bordered(seed: int) -> tuple[bytes, np.ndarray]:
    """A 12x12 PNG: an 8x8 interior of random 2x2 blocks inside a 2-pixel red frame (ObjectNet's border), and the
    interior."""
    rng = np.random.default_rng(seed)
    inner = np.repeat(np.repeat(rng.integers(0, 200, size=(4, 4, 3), dtype=np.uint8), 2, 0), 2, 1)
    full = np.zeros((12, 12, 3), dtype=np.uint8)
    full[..., 0] = 255
    full[2:-2, 2:-2] = inner
    buffer = io.BytesIO()
    Image.fromarray(full).save(buffer, "PNG")
    return buffer.getvalue(), inner


@pytest.fixture(scope="module")
def copies(tmp_path_factory):
    """A tiny 1000-class ViT and a WebDataset copy of each benchmark: 4 images, the first two labelled with the
    class the benchmark's protocol makes the model predict (right), the others with another class (wrong)."""
    root = tmp_path_factory.mktemp("hub-copies")
    model = save_tiny_vit(root / "tiny-vit-1k", num_labels=1000)
    classifier = load_classifier(model)
    images = [fx.random_blocks_png(seed) for seed in range(4)]
    bordered = [_bordered(10 + seed) for seed in range(4)]

    def logits_of(data):
        with torch.no_grad():
            return classifier(classifier.preprocess([Image.open(io.BytesIO(b)).convert("RGB") for b in data]))

    logits = logits_of(images).numpy()
    names = _clip_names()
    made, labels = {}, {}
    for name, file in [("imagenet-a", "imagenet_a_wnids.txt"), ("imagenet-r", "imagenet_r_wnids.txt")]:
        classes = sorted(IMAGENET_WNIDS.index(w) for w in _wnids(file))  # the ImageFolder order: sorted wnids
        rank = logits[:, classes].argmax(1)
        numbers = [int(rank[0]), int(rank[1]), int(rank[2] + 1) % 200, int(rank[3] + 7) % 200]
        made[name] = write_webdataset(
            root / "clip-benchmark" / f"wds_{name}",
            list(zip(images, numbers, strict=True)),
            [names[c] for c in classes],
        )
        labels[name] = [classes[k] for k in numbers]
    o_classes = sorted(IMAGENET_WNIDS.index(w) for w in _wnids("imagenet_o_wnids.txt"))
    made["imagenet-o"] = write_webdataset(
        root / "clip-benchmark" / "wds_imagenet-o",
        list(zip(images, [0, 5, 199, 17], strict=True)),
        [names[c] for c in o_classes],
    )
    val = (
        root / "val"
    )  # the in-distribution half: ImageNet validation images in wnid folders, two of O's classes
    for k, data in [(3, fx.random_blocks_png(9)), (150, images[2])]:
        (val / IMAGENET_WNIDS[o_classes[k]]).mkdir(parents=True)
        (val / IMAGENET_WNIDS[o_classes[k]] / f"{k}.png").write_bytes(data)
    full = logits.argmax(1)
    for name, repo in [("imagenet-sketch", "wds_imagenet_sketch"), ("imagenet-v2", "wds_imagenetv2")]:
        numbers = [int(full[0]), int(full[1]), int(full[2] + 1) % 1000, int(full[3] + 3) % 1000]
        made[name] = write_webdataset(
            root / "clip-benchmark" / repo, list(zip(images, numbers, strict=True)), names
        )
        labels[name] = numbers
    groups = _objectnet_groups()
    folders = sorted(groups)  # CLIP_benchmark's label_map: the 113 folders sorted by name
    folder_names = json.loads((TABLES / "objectnet_folder_to_objectnet_label.json").read_text())
    objectnet_logits = logits_of([b for b, _ in bordered]).numpy()
    pooled = np.stack([objectnet_logits[:, groups[f]].max(1) for f in folders], 1)
    winner = pooled.argmax(1)
    numbers = [int(winner[0]), int(winner[1]), int(winner[2] + 1) % 113, int(winner[3] + 50) % 113]
    made["objectnet"] = write_webdataset(
        root / "clip-benchmark" / "wds_objectnet",
        [(b, k) for (b, _), k in zip(bordered, numbers, strict=True)],
        [folder_names[f].lower() for f in folders],
    )
    labels["objectnet"] = [min(groups[folders[k]]) for k in numbers]
    suite = {
        "name": "clip-benchmark-copies",
        "batch_size": 4,
        "benchmarks": {
            **{name: {"source": str(folder)} for name, folder in made.items() if name != "imagenet-o"},
            "imagenet-o": {"source": str(made["imagenet-o"]), "in_distribution": str(val)},
        },
    }
    (root / "suite.yaml").write_text(yaml.safe_dump(suite))
    config = EvaluationConfig(
        models=[model], suite=str(root / "suite.yaml"), output=root / "run", progress=False, report=False
    )
    results = evaluate(config)
    key = results["models"][0]["key"]
    return {
        "root": root,
        "made": made,
        "labels": labels,
        "results": results,
        "key": key,
        "groups": groups,
        "interiors": [inner for _, inner in bordered],
        "model": model,
    }


def _frame(copies, name):
    import pandas as pd

    return pd.read_parquet(copies["root"] / "run" / "predictions" / copies["key"] / f"{name}.parquet")


def _in_key_order(frame):
    """The frame's rows in the exporter's order (key s%07d is the sample's index), whatever the shard order."""
    return frame.assign(index=[int(s.split("/s")[1]) for s in frame["sample_id"]]).sort_values("index")


@pytest.mark.parametrize(
    ("name", "file"),
    [
        ("imagenet-a", "imagenet_a_wnids.txt"),
        ("imagenet-r", "imagenet_r_wnids.txt"),
        ("imagenet-sketch", None),
        ("imagenet-v2", None),
    ],
)
def test_each_copy_end_to_end_top1_recomputed_from_the_logits(copies, name, file):
    frame = _in_key_order(_frame(copies, name))
    labels = frame["label"].to_numpy()
    assert (
        labels.tolist() == copies["labels"][name]
    )  # .cls -> ImageNet-1k index, mapped as the exporter numbered
    logits = np.stack(frame["logits"].to_numpy())
    classes = (
        np.arange(1000) if file is None else np.array(sorted(IMAGENET_WNIDS.index(w) for w in _wnids(file)))
    )
    predicted = classes[logits[:, classes].argmax(1)]
    metrics = copies["results"]["metrics"][copies["key"]][name]
    assert metrics["top1"] == pytest.approx(100 * np.mean(predicted == labels)) == pytest.approx(50.0)
    source = copies["results"]["benchmarks"][name]["source"]
    assert (
        source["location"] == str(copies["made"][name].resolve())
        and copies["results"]["benchmarks"][name]["protocol"]["image_bytes"] == "re-encoded"
    )


def test_objectnet_copy_pooled_top1_and_its_border_cut(copies):
    frame = _in_key_order(_frame(copies, "objectnet"))
    assert frame["label"].tolist() == copies["labels"]["objectnet"]
    logits = np.stack(frame["logits"].to_numpy())
    groups = copies["groups"]
    winners = [min(groups[max(groups, key=lambda f: row[groups[f]].max())]) for row in logits]
    metrics = copies["results"]["metrics"][copies["key"]]["objectnet"]
    assert (
        metrics["top1"]
        == pytest.approx(100 * np.mean(np.array(winners) == frame["label"].to_numpy()))
        == 50.0
    )
    samples = sorted(load_benchmark("objectnet", copies["made"]["objectnet"]), key=lambda s: s.sample_id[-7:])
    for sample, inner in zip(samples, copies["interiors"], strict=True):
        assert torch.equal(
            sample.image, torch.from_numpy(inner).permute(2, 0, 1)
        )  # 12x12 -> its 8x8 interior
    assert copies["results"]["benchmarks"]["objectnet"]["source"]["border_removed_px"] == 2


def test_imagenet_o_copy_is_all_ood_aupr_recomputed(copies):
    frame = _frame(copies, "imagenet-o")
    is_ood = frame["is_ood"].to_numpy(dtype=bool)
    assert is_ood.tolist() == [True] * 4 + [False] * 2
    classes = sorted(IMAGENET_WNIDS.index(w) for w in _wnids("imagenet_o_wnids.txt"))
    logits = np.stack(frame["logits"].to_numpy()).astype(np.float64)[:, classes]
    probabilities = np.exp(logits - logits.max(1, keepdims=True))
    score = -(probabilities / probabilities.sum(1, keepdims=True)).max(1)
    metrics = copies["results"]["metrics"][copies["key"]]["imagenet-o"]
    assert metrics["aupr"] == pytest.approx(average_precision_score(is_ood, score))
    assert metrics["num_ood"] == 4 and metrics["num_in_distribution"] == 2


def test_a_class_name_file_of_another_numbering_is_refused_before_any_image(copies, tmp_path, monkeypatch):
    names = (copies["made"]["imagenet-a"] / "classnames.txt").read_text().splitlines()
    swapped = tmp_path / "clip-benchmark" / "wds_imagenet-a"
    swapped.mkdir(parents=True)
    (swapped / "test").symlink_to(copies["made"]["imagenet-a"] / "test")
    (swapped / "classnames.txt").write_text("\n".join([names[1], names[0], *names[2:]]) + "\n")
    monkeypatch.setattr(tarfile, "open", lambda *a, **k: pytest.fail("a shard was opened"))
    with pytest.raises(SchemaError, match=r"line 1 is 'goldfinch', but ImageNet-A's class 0 is 'stingray'"):
        load_benchmark("imagenet-a", swapped).validate()
    (swapped / "classnames.txt").write_text("\n".join(names[:199]) + "\n")
    with pytest.raises(SchemaError, match="names 199 classes, not ImageNet-A's 200"):
        load_benchmark("imagenet-a", swapped).validate()
    r_names = (copies["made"]["imagenet-r"] / "classnames.txt").read_text()
    (swapped / "classnames.txt").write_text(r_names)  # ImageNet-R's 200 names: another dataset
    with pytest.raises(SchemaError, match="another numbering or another dataset"):
        load_benchmark("imagenet-a", swapped).validate()


def test_a_short_hub_download_is_refused_and_another_benchmarks_copy_too(copies, monkeypatch):
    import huggingface_hub

    asked = {}

    def snapshot(repo, **kwargs):
        asked.update(repo=repo, **kwargs)
        return str(copies["made"]["imagenet-r"])

    monkeypatch.setattr(huggingface_hub, "snapshot_download", snapshot)
    with pytest.raises(
        SchemaError, match="clip-benchmark/wds_imagenet-r: 4 images, but ImageNet-R has 30000"
    ):
        load_benchmark("imagenet-r", "clip-benchmark/wds_imagenet-r").validate()
    assert asked == {
        "repo": "clip-benchmark/wds_imagenet-r",
        "repo_type": "dataset",
        "revision": None,
        "allow_patterns": ["test/*", "classnames.txt"],
    }
    with pytest.raises(SchemaError, match="wds_imagenet-a is a copy of imagenet-a, not of imagenet-r"):
        load_benchmark("imagenet-r", copies["made"]["imagenet-a"])


def _suite_run(tmp_path, monkeypatch, entry: dict, model: str, data: dict | None = None):
    """Evaluate a one-entry suite with every way to load a model or read data replaced by a failure: a refusal
    raised from it happened before any of them."""
    import datasets
    import huggingface_hub

    from hf_vitrobust.evaluation import plan, runner

    def forbidden(*args, **kwargs):
        pytest.fail("a model was loaded or data was read before the refusal")

    for module, name in [
        (plan, "load_classifier"),
        (runner, "load_classifier"),
        (datasets, "load_dataset"),
        (huggingface_hub, "snapshot_download"),
        (huggingface_hub, "hf_hub_download"),
        (tarfile, "open"),
    ]:
        monkeypatch.setattr(module, name, forbidden)
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump({"name": "refused", "benchmarks": entry}))
    config = EvaluationConfig(
        models=[model],
        suite=str(tmp_path / "suite.yaml"),
        data=data or {},
        output=tmp_path / "run",
        progress=False,
    )
    return evaluate(config)


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            {
                "objectnet": {
                    "source": "clip-benchmark/wds_objectnet@refs/convert/parquet",
                    "split": "partial-test",
                }
            },
            r"'partial-test' is a split of the Hub's parquet conversion that holds only part of the data",
        ),
        (
            {"imagenet-a": {"source": "{tmp}/clip-benchmark/wds_objectnet/default/partial-test"}},
            r"'partial-test' is a split of the Hub's parquet conversion",
        ),
        (
            {"imagenet-c": {"source": "MarMaster/corruption-fog"}},
            r"MarMaster/corruption-\* is not imagenet-c: a regenerated ImageNet-C, not the release.*severity its card "
            r"never states",
        ),
        (
            {"imagenet-c": {"source": "{tmp}/MarMaster/corruption-contrast"}},
            r"MarMaster/corruption-\* is not imagenet-c",
        ),
        (
            {"imagenet-a": {"source": "Voxel51/ImageNet-A"}},
            r"Voxel51/ImageNet-A is not imagenet-a: a FiftyOne export.*7,450 samples, not ImageNet-A's 7,500",
        ),
    ],
)
def test_refused_sources_are_refused_before_any_model_or_data(copies, tmp_path, monkeypatch, entry, message):
    ((name, options),) = entry.items()
    source = options["source"].replace("{tmp}", str(tmp_path))
    if source.startswith(str(tmp_path)):
        Path(source).mkdir(parents=True)
        if "partial-test" in source:
            fx.write_plain_parquet(Path(source) / "0000.parquet", {"label": [0]})
    with pytest.raises(ValueError, match=message):
        _suite_run(tmp_path, monkeypatch, {name: {**options, "source": source}}, copies["model"])


def test_the_sources_file_lists_every_file_copy_and_refusal():
    text = hub_sources_markdown()
    for repo in (
        "clip-benchmark/wds_imagenet-a",
        "clip-benchmark/wds_imagenet-r",
        "clip-benchmark/wds_imagenet-o",
        "clip-benchmark/wds_imagenet_sketch",
        "clip-benchmark/wds_imagenetv2",
        "clip-benchmark/wds_objectnet",
        "vaishaal/ImageNetV2",
        "MarMaster/corruption-*",
        "Voxel51/ImageNet-A",
    ):
        assert f"`{repo}`" in text, repo
    assert "`partial-*`" in text and "2.09 kB" in text and "7,450" in text


def test_a_refused_source_given_with_data_is_refused_before_any_model(copies, tmp_path, monkeypatch):
    entry = {"imagenet-c": {"source": "generated:builtin", "limit": 1}}
    with pytest.raises(ValueError, match=r"MarMaster/corruption-\* is not imagenet-c"):
        _suite_run(
            tmp_path, monkeypatch, entry, copies["model"], data={"imagenet-c": "MarMaster/corruption-fog"}
        )


def test_a_parquet_conversion_folder_holding_partial_splits_is_refused_and_other_folders_are_not(tmp_path):
    root = tmp_path / "converted"  # a refs/convert/parquet download (wds_objectnet's): default/partial-test/
    fx.write_plain_parquet(root / "default" / "partial-test" / "0000.parquet", {"label": [0]})
    with pytest.raises(SchemaError, match="'partial-test' is a split of the Hub's parquet conversion"):
        load_benchmark("imagenet-sketch", root)
    with pytest.raises(SchemaError, match="'partial-test' is a split"):
        load_benchmark("imagenet-sketch", root / "default" / "partial-test" / "0000.parquet")
    named = tmp_path / "partial-runs" / "sketch" / "n01440764"  # a user's folder name is not a split
    named.mkdir(parents=True)
    (named / "a.png").write_bytes(fx.random_blocks_png(0))
    assert [s.label for s in load_benchmark("imagenet-sketch", named.parent)] == [0]
