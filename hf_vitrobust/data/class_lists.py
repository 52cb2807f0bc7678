# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The class lists that define the ImageNet variants' protocols, read from the tables this package ships
(`hf_vitrobust/assets/class_lists/`, sources and commits in `SOURCES.md` there).

- ImageNet-A and ImageNet-R (Hendrycks et al. 2021) cover 200 of the 1000 classes each; a 1000-class model is
  scored on its logits cut to those 200 classes before the argmax (the `mask` of the official eval scripts).
- ImageNet-O's mask is another 200 classes: its anomaly score is the negative max softmax over them, and its
  in-distribution half is the ImageNet validation images of those classes.
- ImageNet-9 (Xiao et al. 2021, backgrounds challenge) maps 370 of the 1000 classes onto 9 superclasses; a
  1000-class prediction outside them counts as wrong.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources

import numpy as np
import torch

from ..constants import IMAGENET_9_CLASSES, IMAGENET_9_VARIANTS  # noqa: F401 (re-exported: hf_vitrobust.data)
from ..constants import imagenet_to_imagenet_9 as imagenet_9_table
from ..models.imagenet import IMAGENET_NUM_CLASSES, IMAGENET_WNIDS, imagenet_wnid_to_index


def _class_list_file(name: str):
    return resources.files("hf_vitrobust") / "assets" / "class_lists" / name


@dataclass(frozen=True)
class ClassSubset:
    """A subset of the ImageNet-1k classes, in ImageNet-1k index order.

    `class_indices[k]` is the ImageNet-1k index of the subset's class k: position k is how the 200-class
    releases (and 200-way heads) number their classes, since their folders sort in the same wnid order.
    `groups`, where given (ObjectNet), partitions the wnids into the classes the benchmark scores: a prediction is
    right when it falls in the group of its label (the maximum logit over each group, `data.objectnet`).
    """

    name: str
    wnids: tuple[str, ...]
    groups: tuple[tuple[str, ...], ...] = ()

    @property
    def group_of(self) -> torch.Tensor:
        """An int64 (1000,) tensor: the smallest ImageNet-1k index of each class's group (itself without groups)."""
        to_index = imagenet_wnid_to_index()
        group_of = torch.arange(IMAGENET_NUM_CLASSES)
        for group in self.groups:
            indices = [to_index[wnid] for wnid in group]
            group_of[indices] = min(indices)
        return group_of

    def right_group(self, predicted: np.ndarray, labels: np.ndarray) -> np.ndarray:
        """Whether each ImageNet-1k prediction falls in its label's group (ObjectNet's top-1: the argmax over the
        subset, i.e. over the maxima of the groups, is right when its group is the label's), as a bool array."""
        group_of = self.group_of.numpy()
        return group_of[np.asarray(predicted)] == group_of[np.asarray(labels)]

    @property
    def class_indices(self) -> tuple[int, ...]:
        to_index = imagenet_wnid_to_index()
        return tuple(to_index[wnid] for wnid in self.wnids)

    @property
    def mask(self) -> torch.Tensor:
        """A bool (1000,) tensor, True on the subset's classes."""
        mask = torch.zeros(IMAGENET_NUM_CLASSES, dtype=torch.bool)
        mask[list(self.class_indices)] = True
        return mask

    def to_imagenet_index(self, subset_index: int) -> int:
        """The ImageNet-1k index of the subset's class number `subset_index` (0..len-1)."""
        if not 0 <= subset_index < len(self.wnids):
            raise ValueError(f"{self.name} has {len(self.wnids)} classes; got class number {subset_index}.")
        return self.class_indices[subset_index]

    def __len__(self) -> int:
        return len(self.wnids)


@cache
def _read_subset(name: str, file_name: str) -> ClassSubset:
    wnids = tuple(_class_list_file(file_name).read_text(encoding="utf-8").split())
    unknown = sorted(set(wnids) - set(IMAGENET_WNIDS))
    if unknown or len(set(wnids)) != len(wnids):
        raise ImportError(f"{file_name}: unknown or repeated wnids {unknown[:5]}")
    order = imagenet_wnid_to_index()
    if list(wnids) != sorted(wnids, key=order.__getitem__):
        raise ImportError(f"{file_name} must list its wnids in ImageNet-1k index order.")
    return ClassSubset(name=name, wnids=wnids)


def imagenet_a_classes() -> ClassSubset:
    """The 200 ImageNet-A classes (hendrycks/natural-adv-examples)."""
    return _read_subset("imagenet-a", "imagenet_a_wnids.txt")


def imagenet_r_classes() -> ClassSubset:
    """The 200 ImageNet-R classes (hendrycks/imagenet-r)."""
    return _read_subset("imagenet-r", "imagenet_r_wnids.txt")


def imagenet_o_classes() -> ClassSubset:
    """The 200 classes of ImageNet-O's score mask and of its in-distribution half (hendrycks/natural-adv-examples)."""
    return _read_subset("imagenet-o", "imagenet_o_wnids.txt")


# ImageNet-9's superclasses and test-set variants (IMAGENET_9_CLASSES, IMAGENET_9_VARIANTS): `hf_vitrobust.constants`.


@cache
def imagenet_to_imagenet_9() -> torch.Tensor:
    """An int64 (1000,) tensor: the ImageNet-9 superclass of each ImageNet-1k class, or -1 for none."""
    return torch.tensor(imagenet_9_table(), dtype=torch.long)


def imagenet_9_folder_name(in9_index: int) -> str:
    """The test-set folder of an ImageNet-9 class, e.g. 0 -> "00_dog"."""
    return f"{in9_index:02d}_{IMAGENET_9_CLASSES[in9_index]}"
