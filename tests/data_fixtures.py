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

from hf_vitrobust.data.hub import CIFAR10_CLASSES, CIFAR100_CLASSES
from hf_vitrobust.data.protocols import imagenet_a_classes, imagenet_o_classes, imagenet_r_classes
from hf_vitrobust.models.imagenet import IMAGENET_CLASS_NAMES, IMAGENET_WNIDS


def image_bytes(value: int, fmt: str = "PNG", size: int = 6, mode: str = "RGB") -> bytes:
    """A solid image whose first channel is `value`."""
    colour: Any = (value, 10, 20) if mode == "RGB" else value
    buffer = io.BytesIO()
    PILImage.new(mode, (size, size), colour).save(buffer, fmt)
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
    """The 1000 class names as a ClassLabel needs them: unique, so ImageNet's second "crane" (517) carries its
    wnid. (How each Hub copy de-duplicates it is not known; the mapping accepts any suffix.)"""
    names = list(IMAGENET_CLASS_NAMES)
    names[517] = f"{names[517]} ({IMAGENET_WNIDS[517]})"
    return names


def _write_readme(repo: Path, configs: list[dict[str, Any]] | None) -> None:
    header = {"configs": configs} if configs else {}
    text = (
        "---\n" + yaml.safe_dump(header, sort_keys=False) + "---\n\nTest fixture.\n"
        if header
        else "Test fixture.\n"
    )
    (repo / "README.md").write_text(text, encoding="utf-8")


def write_parquet(path: Path, columns: dict[str, list], features: Any) -> Path:
    """Write one parquet shard the way `datasets` writes Hub shards."""
    from datasets import Dataset

    path.parent.mkdir(parents=True, exist_ok=True)
    Dataset.from_dict(columns, features=features).to_parquet(str(path))
    return path


def _images(values: list) -> list[dict[str, Any] | None]:
    return [
        None if v is None else {"bytes": v if isinstance(v, bytes) else image_bytes(v), "path": None}
        for v in values
    ]


def _push_to_hub_layout(repo: Path, split: str, columns: dict, features: Any) -> Path:
    write_parquet(repo / "data" / f"{split}-00000-of-00001.parquet", columns, features)
    _write_readme(
        repo, [{"config_name": "default", "data_files": [{"split": split, "path": f"data/{split}-*"}]}]
    )
    return repo


def tsomaros_imagenet_c(
    root: Path, corruption: str, severity: int, wnids: list[str], images: list | None = None
):
    """Tsomaros/ImageNet-C-{corruption}-severity_{s}: image, label = ClassLabel of the 1000 wnids, split validation."""
    from datasets import ClassLabel, Features, Image

    features = Features({"image": Image(), "label": ClassLabel(names=list(IMAGENET_WNIDS))})
    to_index = {w: i for i, w in enumerate(IMAGENET_WNIDS)}
    images = images if images is not None else list(range(len(wnids)))
    labels = [None if w is None else to_index[w] for w in wnids]
    repo = root / "Tsomaros" / f"ImageNet-C-{corruption}-severity_{severity}"
    return _push_to_hub_layout(repo, "validation", {"image": _images(images), "label": labels}, features)


def tta_imagenet_c(root: Path, cells: dict[tuple[str, int], list[int]]) -> Path:
    """WNJXYK/TTA-ImageNet-C: config = corruption, splits severity_1..5 at data/<c>/severity_<s>/*.parquet.
    Assumed columns: image, label = ClassLabel of the 1000 class names (unverified)."""
    from datasets import ClassLabel, Features, Image

    features = Features({"image": Image(), "label": ClassLabel(names=hub_imagenet_names())})
    repo = root / "WNJXYK" / "TTA-ImageNet-C"
    configs: dict[str, list] = {}
    for (corruption, severity), labels in sorted(cells.items()):
        shard = repo / "data" / corruption / f"severity_{severity}" / "part-0.parquet"
        write_parquet(shard, {"image": _images(list(range(len(labels)))), "label": labels}, features)
        configs.setdefault(corruption, []).append(
            {"split": f"severity_{severity}", "path": f"data/{corruption}/severity_{severity}/*.parquet"}
        )
    _write_readme(repo, [{"config_name": c, "data_files": files} for c, files in configs.items()])
    return repo


def tsomaros_imagenet_a(root: Path, subset_indices: list[int]) -> Path:
    """Tsomaros/imagenet-a: labels are 200-class indices (stored as plain integers here), split train."""
    from datasets import Features, Image, Value

    features = Features({"image": Image(), "label": Value("int64")})
    columns = {"image": _images(list(range(len(subset_indices)))), "label": subset_indices}
    return _push_to_hub_layout(root / "Tsomaros" / "imagenet-a", "train", columns, features)


def barkermrl_imagenet_a(root: Path, subset_indices: list[int], label_names: str = "names") -> Path:
    """barkermrl/imagenet-a: split train; the label feature is assumed to be a 200-class ClassLabel, named by
    class name ("names") or wnid ("wnids")."""
    from datasets import ClassLabel, Features, Image

    subset = imagenet_a_classes()
    if label_names == "wnids":
        names = list(subset.wnids)
    else:
        names = [IMAGENET_CLASS_NAMES[i] for i in subset.class_indices]
    features = Features({"image": Image(), "label": ClassLabel(names=names)})
    columns = {"image": _images(list(range(len(subset_indices)))), "label": subset_indices}
    repo = root / "barkermrl" / "imagenet-a"
    write_parquet(repo / "data" / "train-00000-of-00001-0123456789abcdef.parquet", columns, features)
    _write_readme(repo, None)
    return repo


def axiong_imagenet_r(root: Path, wnids: list[str | None]) -> Path:
    """axiong/imagenet-r: config test, split test at test/test-*; image, wnid (string), class_name (string)."""
    from datasets import Features, Image, Value

    features = Features({"image": Image(), "wnid": Value("string"), "class_name": Value("string")})
    names = {w: IMAGENET_CLASS_NAMES[i].split(",")[0] for i, w in enumerate(IMAGENET_WNIDS)}
    columns = {
        "image": _images(list(range(len(wnids)))),
        "wnid": wnids,
        "class_name": [names.get(w, "unknown") if w else None for w in wnids],
    }
    repo = root / "axiong" / "imagenet-r"
    write_parquet(repo / "test" / "test-00000-of-00001.parquet", columns, features)
    _write_readme(
        repo,
        [{"config_name": "test", "data_files": [{"split": "test", "path": "test/test-*"}], "default": True}],
    )
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


def nateraw_imagenet_sketch(root: Path, labels: list[int]) -> Path:
    """nateraw/imagenet-sketch at refs/convert/parquet: default/train/0000.parquet, image + ClassLabel of the
    1000 class names (assumed)."""
    from datasets import ClassLabel, Features, Image

    features = Features({"image": Image(), "label": ClassLabel(names=hub_imagenet_names())})
    repo = root / "nateraw" / "imagenet-sketch"
    columns = {"image": _images(list(range(len(labels)))), "label": labels}
    write_parquet(repo / "default" / "train" / "0000.parquet", columns, features)
    return repo


def randall_cifar_c(root: Path, which: str, rows: list[tuple[int, str, int]]) -> Path:
    """randall-lab/cifar{10,100}-c at refs/convert/parquet: default/test/0000.parquet with image, label,
    corruption_name, corruption_level (label as a plain int, as the card describes)."""
    from datasets import Features, Image, Value

    features = Features(
        {
            "image": Image(),
            "label": Value("int64"),
            "corruption_name": Value("string"),
            "corruption_level": Value("int64"),
        }
    )
    columns = {
        "image": _images(list(range(len(rows)))),
        "label": [r[0] for r in rows],
        "corruption_name": [r[1] for r in rows],
        "corruption_level": [r[2] for r in rows],
    }
    repo = root / "randall-lab" / which
    write_parquet(repo / "default" / "test" / "0000.parquet", columns, features)
    return repo


def ilsvrc_imagenet_1k(root: Path, labels: list[int], images: list | None = None) -> Path:
    """ILSVRC/imagenet-1k: split validation, image + ClassLabel of the 1000 class names in the standard order."""
    from datasets import ClassLabel, Features, Image

    features = Features({"image": Image(), "label": ClassLabel(names=hub_imagenet_names())})
    images = images if images is not None else list(range(len(labels)))
    columns = {"image": _images(images), "label": labels}
    return _push_to_hub_layout(root / "ILSVRC" / "imagenet-1k", "validation", columns, features)


def uoft_cifar(root: Path, which: str, labels: list[int]) -> Path:
    """uoft-cs/cifar10 (img, label) and uoft-cs/cifar100 (img, fine_label, coarse_label), split test."""
    from datasets import ClassLabel, Features, Image

    if which == "cifar10":
        features = Features({"img": Image(), "label": ClassLabel(names=list(CIFAR10_CLASSES))})
        columns = {"img": _images(list(range(len(labels)))), "label": labels}
    else:
        features = Features(
            {
                "img": Image(),
                "fine_label": ClassLabel(names=list(CIFAR100_CLASSES)),
                "coarse_label": ClassLabel(num_classes=20),
            }
        )
        columns = {
            "img": _images(list(range(len(labels)))),
            "fine_label": labels,
            "coarse_label": [0] * len(labels),
        }
    return _push_to_hub_layout(root / "uoft-cs" / which, "test", columns, features)


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
