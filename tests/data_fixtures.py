# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Tiny offline copies of the Hub datasets and released folders the data package reads.

Parquet fixtures are written the way the Hub's files are (`Dataset.from_dict(...).cast_column(..., Image())
.to_parquet(...)`, so the Image/ClassLabel features ride in the parquet metadata), under a folder laid out like the
repository (`<root>/<org>/<name>/data/<split>-00000-of-00001.parquet`, and a README.md with the `configs` YAML
where the repository has one), so that `load_dataset(folder, ...)` takes the same packaged-builder path as
`load_dataset("org/name")`. Every image is a small solid colour whose red channel encodes the row number, so a
test can check which row a sample came from.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from PIL import Image as PILImage

from hf_vitrobust.data.class_lists import imagenet_a_classes, imagenet_o_classes, imagenet_r_classes
from hf_vitrobust.data.hub_labels import CIFAR10_CLASSES, CIFAR100_CLASSES
from hf_vitrobust.models.imagenet import IMAGENET_CLASS_NAMES, IMAGENET_WNIDS


def image_bytes(value: int, fmt: str = "PNG", size: int = 6, mode: str = "RGB") -> bytes:
    """A solid image whose first channel is `value`."""
    colour: Any = (value, 10, 20) if mode == "RGB" else value
    buffer = io.BytesIO()
    PILImage.new(mode, (size, size), colour).save(buffer, fmt)
    return buffer.getvalue()


def random_blocks_png(seed: int) -> bytes:
    """An 8x8 PNG of 2x2 blocks of random colours drawn from `seed`: images a tiny model tells apart."""
    rng = np.random.default_rng(seed)
    array = np.repeat(np.repeat(rng.integers(0, 256, size=(2, 2, 3), dtype=np.uint8), 4, 0), 4, 1)
    buffer = io.BytesIO()
    PILImage.fromarray(array).save(buffer, "PNG")
    return buffer.getvalue()


def truncated_jpeg() -> bytes:
    full = image_bytes(200, "JPEG", size=64)
    return full[: len(full) // 2]


def cmyk_jpeg() -> bytes:
    buffer = io.BytesIO()
    PILImage.new("CMYK", (6, 6), (0, 255, 0, 0)).save(buffer, "JPEG")
    return buffer.getvalue()


def sixteen_bit_png() -> bytes:
    buffer = io.BytesIO()
    PILImage.fromarray(np.full((6, 6), 65535, dtype=np.uint16)).save(buffer, "PNG")
    return buffer.getvalue()


def palette_png_with_transparency() -> bytes:
    image = PILImage.new("P", (6, 6), 0)
    image.putpalette([255, 0, 0, 0, 255, 0] + [0] * 762)
    buffer = io.BytesIO()
    image.save(buffer, "PNG", transparency=1)
    return buffer.getvalue()


def hub_imagenet_names() -> list[str]:
    """The 1000 class names of ILSVRC/imagenet-1k's ClassLabel (huggingface/datasets `imagenet-1k/classes.py`): the
    shipped table's names, with class 517 (the second "crane") spelled "crane2" so that the names are unique."""
    names = list(IMAGENET_CLASS_NAMES)
    names[517] = "crane2"
    return names


#: uoft-cs/cifar100's fine_label names: CIFAR-100's, with class 26 ("crab") spelled "cra".
HUB_CIFAR100_NAMES = [*CIFAR100_CLASSES[:26], "cra", *CIFAR100_CLASSES[27:]]

#: uoft-cs/cifar100's coarse_label names.
CIFAR100_COARSE = (
    "aquatic_mammals", "fish", "flowers", "food_containers", "fruit_and_vegetables", "household_electrical_devices",
    "household_furniture", "insects", "large_carnivores", "large_man-made_outdoor_things",
    "large_natural_outdoor_scenes", "large_omnivores_and_herbivores", "medium_mammals", "non-insect_invertebrates",
    "people", "reptiles", "small_mammals", "trees", "vehicles_1", "vehicles_2",
)  # fmt: skip


def _write_readme(
    repo: Path, configs: list[dict[str, Any]] | None, declared_rows: dict[str, int] | None = None
) -> None:
    """A dataset card: the `configs` YAML, and (`declared_rows`) a dataset_info with the split sizes."""
    header: dict[str, Any] = {}
    if declared_rows:
        splits = [{"name": name, "num_examples": rows} for name, rows in declared_rows.items()]
        header["dataset_info"] = {"splits": splits}
        if configs:
            header["dataset_info"]["config_name"] = configs[0]["config_name"]
    if configs:
        header["configs"] = configs
    text = (
        "---\n" + yaml.safe_dump(header, sort_keys=False) + "---\n\nTest fixture.\n"
        if header
        else "Test fixture.\n"
    )
    (repo / "README.md").write_text(text, encoding="utf-8")


def write_parquet(path: Path, columns: dict[str, list], features: Any) -> Path:
    """Write one parquet shard the way `datasets` writes Hub shards (the features ride in the schema metadata)."""
    from datasets import Dataset

    path.parent.mkdir(parents=True, exist_ok=True)
    Dataset.from_dict(columns, features=features).to_parquet(str(path))
    return path


def write_plain_parquet(path: Path, columns: dict[str, list]) -> Path:
    """Write a parquet file with plain pyarrow (no `datasets` features in its metadata): images read back as a
    {bytes, path} struct and integer labels as plain int64, as in a repository whose card declares no features."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table(columns), path)
    return path


def _images(values: list) -> list[dict[str, Any] | None]:
    return [
        None if v is None else {"bytes": v if isinstance(v, bytes) else image_bytes(v), "path": None}
        for v in values
    ]


def _push_to_hub_layout(
    repo: Path,
    split: str,
    columns: dict,
    features: Any,
    *,
    folder: str = "data",
    config: str = "default",
    declared_rows: dict[str, int] | None = None,
) -> Path:
    write_parquet(repo / folder / f"{split}-00000-of-00001.parquet", columns, features)
    data_files = [{"split": split, "path": f"{folder}/{split}-*"}]
    _write_readme(repo, [{"config_name": config, "data_files": data_files, "default": True}], declared_rows)
    return repo


def tsomaros_imagenet_c(
    root: Path, corruption: str, severity: int, wnids: list[str], images: list | None = None
):
    """Tsomaros/ImageNet-C-{corruption}-severity_{s}: image, label = ClassLabel of the 1000 wnids, split validation,
    data/validation-*.parquet."""
    from datasets import ClassLabel, Features, Image

    features = Features({"image": Image(), "label": ClassLabel(names=list(IMAGENET_WNIDS))})
    to_index = {w: i for i, w in enumerate(IMAGENET_WNIDS)}
    images = images if images is not None else list(range(len(wnids)))
    labels = [None if w is None else to_index[w] for w in wnids]
    repo = root / "Tsomaros" / f"ImageNet-C-{corruption}-severity_{severity}"
    return _push_to_hub_layout(repo, "validation", {"image": _images(images), "label": labels}, features)


def tta_imagenet_c(root: Path, cells: dict[tuple[str, int], list[int]], images: list | None = None) -> Path:
    """WNJXYK/TTA-ImageNet-C: config = corruption, splits severity_1..5 at data/<c>/severity_<s>/data-00000.parquet;
    the card declares no features: plain parquet with an image struct and a plain integer label (the ImageNet-1k
    index)."""
    repo = root / "WNJXYK" / "TTA-ImageNet-C"
    configs: dict[str, list] = {}
    for (corruption, severity), labels in sorted(cells.items()):
        shard = repo / "data" / corruption / f"severity_{severity}" / "data-00000.parquet"
        pictures = images[: len(labels)] if images is not None else list(range(len(labels)))
        write_plain_parquet(shard, {"image": _images(pictures), "label": labels})
        configs.setdefault(corruption, []).append(
            {"split": f"severity_{severity}", "path": f"data/{corruption}/severity_{severity}/*.parquet"}
        )
    _write_readme(repo, [{"config_name": c, "data_files": files} for c, files in configs.items()])
    return repo


def _imagenet_a_features(label_names: str = "wnids") -> Any:
    from datasets import ClassLabel, Features, Image

    subset = imagenet_a_classes()
    if label_names == "wnids":
        names = list(subset.wnids)
    else:
        names = [IMAGENET_CLASS_NAMES[i] for i in subset.class_indices]
    return Features({"image": Image(), "label": ClassLabel(names=names)})


def int_imagenet_a(root: Path, labels: list[int]):
    """A dataset no registered copy is: ImageNet-A's 200-class numbers stored as plain integers, at
    <root>/someone/imagenet-a-ints/train.parquet, with the schema that reads it."""
    from hf_vitrobust.data import HubSchema

    schema = HubSchema(
        name="test-int-imagenet-a",
        benchmark="imagenet-a",
        repo="someone/imagenet-a-ints",
        split="train",
        label_mode="subset_index",
        class_subset=imagenet_a_classes,
        int_labels=True,
    )
    repo = root / "someone" / "imagenet-a-ints"
    write_plain_parquet(repo / "train.parquet", {"image": _images(list(range(len(labels)))), "label": labels})
    return repo, schema


def tsomaros_imagenet_a(root: Path, subset_indices: list[int]) -> Path:
    """Tsomaros/imagenet-a: split train, label = ClassLabel of the 200 ImageNet-A wnids (200-class numbers)."""
    columns = {"image": _images(list(range(len(subset_indices)))), "label": subset_indices}
    return _push_to_hub_layout(root / "Tsomaros" / "imagenet-a", "train", columns, _imagenet_a_features())


def barkermrl_imagenet_a(
    root: Path, subset_indices: list[int], label_names: str = "wnids", images: list | None = None
) -> Path:
    """barkermrl/imagenet-a: split train in two hashed shards data/train-0000{0,1}-of-00002-<hash>.parquet, label =
    ClassLabel of the 200 ImageNet-A wnids ("names": the same classes by class name, as another copy may write)."""
    features = _imagenet_a_features(label_names)
    half = (len(subset_indices) + 1) // 2
    repo = root / "barkermrl" / "imagenet-a"
    for shard, (start, stop, digest) in enumerate(
        ((0, half, "ab6d3d8ffc378699"), (half, len(subset_indices), "121935bd0e031962"))
    ):
        pictures = images[start:stop] if images is not None else list(range(start, stop))
        columns = {"image": _images(pictures), "label": subset_indices[start:stop]}
        write_parquet(repo / "data" / f"train-{shard:05d}-of-00002-{digest}.parquet", columns, features)
    _write_readme(repo, None)
    return repo


def axiong_imagenet_r(
    root: Path, wnids: list[str | None], declared_rows: int | None = None, images: list | None = None
) -> Path:
    """axiong/imagenet-r: config test, split test at test/test-*; image, wnid (string), class_name (string).
    `declared_rows`: the card's split size (the real card declares 30,000)."""
    from datasets import Features, Image, Value

    features = Features({"image": Image(), "wnid": Value("string"), "class_name": Value("string")})
    names = {
        w: IMAGENET_CLASS_NAMES[i].split(",")[0].lower().replace(" ", "_")
        for i, w in enumerate(IMAGENET_WNIDS)
    }
    columns = {
        "image": _images(images if images is not None else list(range(len(wnids)))),
        "wnid": wnids,
        "class_name": [names.get(w, "unknown") if w else None for w in wnids],
    }
    repo = root / "axiong" / "imagenet-r"
    write_parquet(repo / "test" / "test-00000-of-00001.parquet", columns, features)
    _write_readme(
        repo,
        [{"config_name": "test", "data_files": [{"split": "test", "path": "test/test-*"}], "default": True}],
        None if declared_rows is None else {"test": declared_rows},
    )
    return repo


def cais_imagenet_o(root: Path, count: int, images: list | None = None) -> Path:
    """cais/imagenet-o: an image folder test/<wnid>/<name>_<confidence>.JPEG (the wnid of the ImageNet-O class the
    image was confused with), imagenet-o.tar and README.txt beside it."""
    repo = root / "cais" / "imagenet-o"
    wnids = imagenet_o_classes().wnids
    images = images if images is not None else list(range(count))
    for i, value in enumerate(images):
        folder = repo / "test" / wnids[i % len(wnids)]
        folder.mkdir(parents=True, exist_ok=True)
        data = value if isinstance(value, bytes) else image_bytes(value, "JPEG")
        (folder / f"thing_{i:03d}_0.99{i:02d}.JPEG").write_bytes(data)
    (repo / "imagenet-o.tar").write_bytes(b"not read")
    (repo / "README.txt").write_text("ImageNet-O: 2,000 natural adversarial examples.\n", encoding="utf-8")
    return repo


def voxel51_imagenet_o(root: Path, count: int) -> Path:
    """Voxel51/ImageNet-O: a FiftyOne export, images under data/ plus samples.json/metadata.json at the root."""
    repo = root / "Voxel51" / "ImageNet-O"
    (repo / "data").mkdir(parents=True)
    for i in range(count):
        (repo / "data" / f"img_{i:03d}.jpg").write_bytes(image_bytes(i, "JPEG"))
    (repo / "samples.json").write_text('{"samples": []}', encoding="utf-8")
    (repo / "fiftyone.yml").write_text("format: FiftyOneDataset\nname: ImageNet-O\n", encoding="utf-8")
    _write_readme(repo, None)
    return repo


def nateraw_imagenet_sketch(root: Path, labels: list[int], images: list | None = None) -> Path:
    """nateraw/imagenet-sketch at refs/convert/parquet: default/train/0000.parquet, image + the imagenet-1k
    ClassLabel list ("crane2" included), as the canonical ImageNet-Sketch loader writes it."""
    from datasets import ClassLabel, Features, Image

    features = Features({"image": Image(), "label": ClassLabel(names=hub_imagenet_names())})
    repo = root / "nateraw" / "imagenet-sketch"
    columns = {"image": _images(images if images is not None else list(range(len(labels)))), "label": labels}
    write_parquet(repo / "default" / "train" / "0000.parquet", columns, features)
    return repo


def randall_cifar_c(root: Path, which: str) -> Path:
    """randall-lab/cifar{10,100}-c as published: a loading script and a card, no data files."""
    repo = root / "randall-lab" / which
    repo.mkdir(parents=True)
    (repo / f"{which}.py").write_text("import datasets  # a loading script\n", encoding="utf-8")
    _write_readme(repo, None)
    return repo


def ilsvrc_imagenet_1k(
    root: Path, labels: list[int], images: list | None = None, split: str = "validation"
) -> Path:
    """ILSVRC/imagenet-1k: data/<split>-00000-of-00014.parquet, image + ClassLabel of the 1000 full class names
    ("crane2" for 517); the test split's labels are -1."""
    from datasets import ClassLabel, Features, Image

    features = Features({"image": Image(), "label": ClassLabel(names=hub_imagenet_names())})
    images = images if images is not None else list(range(len(labels)))
    repo = root / "ILSVRC" / "imagenet-1k"
    write_parquet(
        repo / "data" / f"{split}-00000-of-00014.parquet",
        {"image": _images(images), "label": labels},
        features,
    )
    data_files = [{"split": s, "path": f"data/{s}-*"} for s in ("train", "validation", "test")]
    _write_readme(repo, [{"config_name": "default", "data_files": data_files, "default": True}])
    for other in ("train", "validation", "test"):
        if not list((repo / "data").glob(f"{other}-*")):
            write_parquet(
                repo / "data" / f"{other}-00000-of-00014.parquet",
                {"image": _images([0]), "label": [-1 if other == "test" else 0]},
                features,
            )
    return repo


def uoft_cifar(root: Path, which: str, labels: list[int], images: list | None = None) -> Path:
    """uoft-cs/cifar10 (config plain_text: img, label) and uoft-cs/cifar100 (config cifar100: img, fine_label with
    "cra" for class 26, coarse_label), split test at <config>/test-00000-of-00001.parquet."""
    from datasets import ClassLabel, Features, Image

    images = images if images is not None else list(range(len(labels)))
    if which == "cifar10":
        features = Features({"img": Image(), "label": ClassLabel(names=list(CIFAR10_CLASSES))})
        columns = {"img": _images(images), "label": labels}
        config = "plain_text"
    else:
        features = Features(
            {
                "img": Image(),
                "fine_label": ClassLabel(names=HUB_CIFAR100_NAMES),
                "coarse_label": ClassLabel(names=list(CIFAR100_COARSE)),
            }
        )
        columns = {"img": _images(images), "fine_label": labels, "coarse_label": [0] * len(labels)}
        config = "cifar100"
    return _push_to_hub_layout(
        root / "uoft-cs" / which, "test", columns, features, folder=config, config=config
    )


def cifar_c_arrays(
    root: Path, corruptions: list[str], labels: list[int], images: np.ndarray | None = None
) -> Path:
    """The released CIFAR-10-C / CIFAR-100-C folder: <corruption>.npy (uint8 (5 n, 32, 32, 3), severity 1 first) and
    labels.npy (the n test labels repeated once per severity). Image k of severity s has red value 10 s + k."""
    root.mkdir(parents=True, exist_ok=True)
    n = len(labels)
    for corruption in corruptions:
        stack = np.zeros((5 * n, 32, 32, 3), dtype=np.uint8)
        for s in range(5):
            for k in range(n):
                stack[s * n + k] = images[k] if images is not None else 0
                if images is None:
                    stack[s * n + k, ..., 0] = 10 * (s + 1) + k
        np.save(root / f"{corruption}.npy", stack)
    np.save(root / "labels.npy", np.tile(np.asarray(labels, dtype=np.uint8), 5))
    return root


def imagenet_9_folder(root: Path, variants: dict[str, list[tuple[int, Any]]]) -> Path:
    """The backgrounds challenge release: <root>/<variant>/val/<NN_class>/<file>; `variants` maps a variant to its
    (ImageNet-9 class, image value or bytes) files."""
    from hf_vitrobust.data import imagenet_9_folder_name

    for variant, files in variants.items():
        for k, (in9, value) in enumerate(files):
            folder = root / variant / "val" / imagenet_9_folder_name(in9)
            folder.mkdir(parents=True, exist_ok=True)
            data = value if isinstance(value, bytes) else image_bytes(value)
            (folder / f"{variant}_{k:03d}.png").write_bytes(data)
    return root


def image_folder(root: Path, files: dict[str, bytes]) -> Path:
    """A folder tree from {"relative/path.ext": bytes}."""
    for relative, data in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


def first_wnids(subset_name: str, count: int) -> list[str]:
    subset = {"a": imagenet_a_classes, "r": imagenet_r_classes, "o": imagenet_o_classes}[subset_name]()
    return list(subset.wnids[:count])


def red(sample_image) -> int:
    """The red value of a fixture image's top-left pixel (its row number)."""
    return int(sample_image[0, 0, 0])
