# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""ObjectNet (Barbu et al., "ObjectNet: A large-scale bias-controlled dataset for pushing the limits of object
recognition models", NeurIPS 2019) scored on the 113 of its 313 classes that overlap ImageNet-1k.

The mapping is ObjectNet's own (`mappings/folder_to_objectnet_label.json` and `objectnet_to_imagenet_1k.json` of
the release), shipped here as the imagenet-testbed copies them (modestyachts/imagenet-testbed at 0170eec,
`src/eval_settings/objectnet_metadata/`, MIT): 113 ObjectNet classes, each mapped to 1, 2 or 3 ImageNet classes
(125 in all, no two ObjectNet classes sharing one). An ObjectNet class is scored by the maximum logit over its
ImageNet classes, as the testbed's `accuracy_topk_subselected_and_collapsed` does; the argmax over the 125 classes
followed by the class's group is the same top-1 (its `objectnet_accuracy`). A plain 1000-way argmax against one
ImageNet class is not ObjectNet's protocol (a naive mapping gives 0.3 %, objectnet-template-pytorch #13).

The release is `objectnet-1.0/images/<folder>/<file>.png` with `objectnet-1.0/mappings/`; folders outside the 113
are left out. Each image carries a red border (the licence: images posted online keep "their 1 pixel red border").
ObjectNet's own loader (objectnet-template-pytorch at 50cc886, `objectnet_pytorch_dataloader.py`:
`img.crop((2, 2, width - 2, height - 2))`) and the testbed (`crop_image`, `border=2`) both cut 2 pixels from each
side: `BORDER`, removed here before any model transform.

Licence of the images: "a license derived from Creative Commons Attribution 4.0" with two added clauses (release
README, objectnet.dev): ObjectNet may never be used to tune the parameters of any model (evaluation only: no
training or fine-tuning), and images posted to the web keep their red border.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from functools import cache
from typing import Any

import torch

from ..models.imagenet import IMAGENET_CLASS_NAMES, IMAGENET_WNIDS
from .class_lists import ClassSubset, _class_list_file
from .decoding import IMAGE_FILE_EXTENSIONS, decode_image
from .local import ImageFolderSource, _ClassFolder, _files, _subdirs
from .samples import DeferredData, RawSample, SchemaError

#: Pixels cut from each side of a release image (ObjectNet's loader and the testbed crop 2).
BORDER = 2
#: The images in the 113 overlapping folders as FLYP #7 counted them (not 50,000); not checked on a release here.
REPORTED_IMAGES_113 = 50_273
FOLDER_TO_LABEL_FILE = "objectnet_folder_to_objectnet_label.json"
TO_IMAGENET_FILE = "objectnet_to_imagenet_1k.json"
_RELEASE_MAPPINGS = {
    "folder_to_objectnet_label.json": FOLDER_TO_LABEL_FILE,
    "objectnet_to_imagenet_1k.json": TO_IMAGENET_FILE,
}


@cache
def objectnet_classes() -> tuple[tuple[str, str, tuple[int, ...]], ...]:
    """(folder, ObjectNet class name, its ImageNet-1k indices) of the 113 overlapping classes, by folder name."""
    folders = json.loads(_class_list_file(FOLDER_TO_LABEL_FILE).read_text(encoding="utf-8"))
    to_imagenet = json.loads(_class_list_file(TO_IMAGENET_FILE).read_text(encoding="utf-8"))
    folder_of = {label: folder for folder, label in folders.items()}
    index_of = {name: i for i, name in enumerate(IMAGENET_CLASS_NAMES)}
    classes = []
    for label, names in to_imagenet.items():
        indices = tuple(sorted(index_of[name] for name in names.split("; ")))
        classes.append((folder_of[label], label, indices))
    return tuple(sorted(classes))


@cache
def objectnet_class_subset() -> ClassSubset:
    """The 125 ImageNet-1k classes of the 113 ObjectNet classes, grouped by ObjectNet class (`ClassSubset.groups`)."""
    groups = tuple(indices for _, _, indices in objectnet_classes())
    indices = sorted(i for group in groups for i in group)
    return ClassSubset(
        name="objectnet-113",
        wnids=tuple(IMAGENET_WNIDS[i] for i in indices),
        groups=tuple(tuple(IMAGENET_WNIDS[i] for i in group) for group in groups),
    )


def pool_logits(logits: torch.Tensor, groups: tuple[tuple[int, ...], ...]) -> torch.Tensor:
    """(N, 1000) logits -> (N, len(groups)): each group's maximum logit (imagenet-testbed's ObjectNet collapse)."""
    columns = torch.tensor([i for group in groups for i in group], dtype=torch.int64)
    owner = torch.repeat_interleave(torch.arange(len(groups)), torch.tensor([len(g) for g in groups]))
    pooled = torch.full((logits.shape[0], len(groups)), -torch.inf, dtype=logits.dtype)
    return pooled.scatter_reduce(1, owner.expand(logits.shape[0], -1), logits[:, columns], "amax")


class _BorderCropped(DeferredData):
    """A release image with `BORDER` pixels cut from each side, read only when decoded."""

    def __init__(self, path: str) -> None:
        self.path = path

    def load(self) -> Any:
        image = decode_image(self.path).image
        return image[:, BORDER:-BORDER, BORDER:-BORDER].contiguous()


class ObjectNetSource(ImageFolderSource):
    """ObjectNet's 113 overlapping classes from the release folder (`objectnet-1.0`, or a folder holding it).

    Each image's label is the smallest ImageNet-1k index of its ObjectNet class (the class's group in
    `objectnet_class_subset`). Where the release's `mappings/` files are present they must equal the shipped ones.
    """

    kind = "objectnet_folder"

    def __init__(self, root: str | os.PathLike) -> None:
        super().__init__(root, layout="classes", labels="wnid", metadata={})
        self.folder = self.root
        self.counts: dict[str, int] = {}
        self.left_out: list[str] = []

    def validate(self) -> None:
        if self._folders is not None:
            return
        release = self.root
        if os.path.isdir(os.path.join(release, "objectnet-1.0")):
            release = os.path.join(release, "objectnet-1.0")
        self.folder = os.path.join(release, "images")
        if not os.path.isdir(self.folder):
            raise SchemaError(f"{self.root}: no objectnet-1.0/images folder (ObjectNet's release layout).")
        for release_name, shipped in _RELEASE_MAPPINGS.items():
            path = os.path.join(release, "mappings", release_name)
            if os.path.isfile(path):
                with open(path, encoding="utf-8") as file:
                    if json.load(file) != json.loads(_class_list_file(shipped).read_text(encoding="utf-8")):
                        raise SchemaError(
                            f"{path}: differs from ObjectNet's mapping shipped with hf_vitrobust."
                        )
        label_of = {folder: min(indices) for folder, _, indices in objectnet_classes()}
        present = _subdirs(self.folder)
        self.left_out = [name for name in present if name not in label_of]
        folders = [
            _ClassFolder(os.path.join(self.folder, name), label_of[name], {}, f"{name}/")
            for name in present
            if name in label_of
        ]
        if not folders:
            raise SchemaError(f"{self.folder}: none of ObjectNet's 113 ImageNet-overlapping class folders.")
        self.counts = {
            os.path.basename(f.path): sum(
                1 for name, _ in _files(f.path) if name.lower().endswith(IMAGE_FILE_EXTENSIONS)
            )
            for f in folders
        }
        self._folders = folders

    def raw_samples(self) -> Iterator[RawSample]:
        for sample in super().raw_samples():
            yield RawSample(_BorderCropped(sample.data), sample.label, sample.sample_id, sample.metadata)

    def describe(self) -> dict[str, Any]:
        self.validate()
        return {
            **super().describe(),
            "kind": self.kind,
            "location": os.path.abspath(self.folder),
            "labels": "ObjectNet folder -> the smallest ImageNet-1k index of its class (mapping: ObjectNet's)",
            "border_removed_px": BORDER,
            "num_classes": len(self.counts),
            "num_images": sum(self.counts.values()),
            "reported_images_113": REPORTED_IMAGES_113,
            "folders_left_out": len(self.left_out),
        }
