# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Training and evaluation data: scikit-learn's digits offline, or any image-classification dataset.

Both give torch datasets of `(normalised pixels (3, H, W), label)` at the model's input size. Evaluation
images go through the same resize and center crop as the saved image processor; training images add
RandAugment (before the resize, on the 8-bit image) and random erasing (after normalisation, as timm does).
"""

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from PIL import Image
from torch.utils.data import Dataset
from torchvision.transforms import v2

from ..models.preprocessing import Preprocessing
from .config import DIGITS, TrainingConfig

DIGITS_SPLIT_SEED = 0  # the digits train/test split never changes with the training seed
DIGITS_TEST_FRACTION = 0.2
_EVAL_SPLIT_NAMES = ("test", "validation", "valid", "val")


@dataclass
class TrainingData:
    """The two datasets of a run, the class names, and where they came from."""

    train: Dataset
    eval: Dataset
    id2label: dict[int, str]
    name: str
    eval_split: str

    @property
    def num_labels(self) -> int:
        return len(self.id2label)


def augmentation(config: TrainingConfig) -> Callable[[Any], Any] | None:
    """RandAugment for 8-bit images (PIL or uint8 tensors), or None when the recipe has none."""
    if not config.randaugment:
        return None
    return v2.RandAugment(num_ops=config.randaugment_ops, magnitude=config.randaugment_magnitude)


def _erasing(config: TrainingConfig) -> Callable[[torch.Tensor], torch.Tensor] | None:
    return v2.RandomErasing(p=config.random_erasing, value="random") if config.random_erasing > 0 else None


class _NormalizedDataset(Dataset):
    """Shared tail of both datasets: [0, 1] pixels -> normalised, optional random erasing."""

    def __init__(
        self,
        preprocessing: Preprocessing,
        augment: Callable[[Any], Any] | None,
        erase: Callable[[torch.Tensor], torch.Tensor] | None,
    ) -> None:
        self.preprocessing = preprocessing
        self.augment = augment
        self.erase = erase
        self.mean = torch.tensor(preprocessing.mean).view(3, 1, 1)
        self.std = torch.tensor(preprocessing.std).view(3, 1, 1)

    def _finish(self, pixels: torch.Tensor) -> torch.Tensor:
        pixels = (pixels - self.mean) / self.std
        return self.erase(pixels) if self.erase is not None else pixels


class TensorImageDataset(_NormalizedDataset):
    """uint8 images (N, 3, H, W) already at the input size, with integer labels."""

    def __init__(
        self,
        images: torch.Tensor,
        labels: torch.Tensor,
        preprocessing: Preprocessing,
        augment: Callable[[Any], Any] | None = None,
        erase: Callable[[torch.Tensor], torch.Tensor] | None = None,
    ) -> None:
        super().__init__(preprocessing, augment, erase)
        if images.dtype != torch.uint8 or images.ndim != 4 or images.shape[1] != 3:
            raise ValueError(f"images must be uint8 (N, 3, H, W), got {images.dtype} {tuple(images.shape)}.")
        self.images = images
        self.labels = labels.long()

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, index: int) -> tuple[torch.Tensor, int]:
        image = self.images[index]
        if self.augment is not None:
            image = self.augment(image)
        return self._finish(image.float() / 255.0), int(self.labels[index])


class HFImageDataset(_NormalizedDataset):
    """A `datasets.Dataset` with an image and a label column, decoded and resized per sample."""

    def __init__(
        self,
        dataset: Any,
        image_column: str,
        label_column: str,
        preprocessing: Preprocessing,
        augment: Callable[[Any], Any] | None = None,
        erase: Callable[[torch.Tensor], torch.Tensor] | None = None,
    ) -> None:
        super().__init__(preprocessing, augment, erase)
        self.dataset = dataset
        self.image_column = image_column
        self.label_column = label_column

    def __len__(self) -> int:
        return len(self.dataset)

    def __getitem__(self, index: int) -> tuple[torch.Tensor, int]:
        row = self.dataset[int(index)]
        image = row[self.image_column]
        if not isinstance(image, Image.Image):
            raise ValueError(f"Column {self.image_column!r} holds {type(image).__name__}, not an image.")
        image = image.convert("RGB")
        if self.augment is not None:
            image = self.augment(image)
        return self._finish(self.preprocessing.image_to_tensor(image)), int(row[self.label_column])


def digits_images(image_size: int) -> tuple[torch.Tensor, torch.Tensor]:
    """scikit-learn's 1,797 digits as uint8 RGB (N, 3, image_size, image_size), bilinearly upscaled, + labels."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    pixels = torch.from_numpy(digits.images.astype(np.float32) / 16.0).unsqueeze(1)  # values 0..16
    pixels = torch.nn.functional.interpolate(
        pixels, size=(image_size, image_size), mode="bilinear", align_corners=False
    )
    images = (pixels.clamp(0, 1) * 255).round().to(torch.uint8).expand(-1, 3, -1, -1).contiguous()
    return images, torch.from_numpy(digits.target).long()


def digits_split(labels: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """The fixed stratified 80/20 train/test indices of the digits (seed `DIGITS_SPLIT_SEED`)."""
    from sklearn.model_selection import train_test_split

    indices = np.arange(len(labels))
    train, test = train_test_split(
        indices, test_size=DIGITS_TEST_FRACTION, random_state=DIGITS_SPLIT_SEED, stratify=np.asarray(labels)
    )
    return np.sort(train), np.sort(test)


def _load_digits(config: TrainingConfig, preprocessing: Preprocessing) -> TrainingData:
    height, width = preprocessing.input_size
    if height != width:
        raise ValueError(f"The digits are square; the model takes {height}x{width} inputs.")
    images, labels = digits_images(height)
    train, test = digits_split(labels.tolist())
    train, test = train[: config.max_train_samples], test[: config.max_eval_samples]
    return TrainingData(
        train=TensorImageDataset(
            images[train], labels[train], preprocessing, augmentation(config), _erasing(config)
        ),
        eval=TensorImageDataset(images[test], labels[test], preprocessing),
        id2label={i: str(i) for i in range(10)},
        name=DIGITS,
        eval_split="test",
    )


def inspect_dataset(config: TrainingConfig) -> tuple[Any, Any, dict[int, str], str]:
    """Load a Hub / local dataset and check its columns: (train split, eval split, id2label, eval split name).

    Raises a ValueError naming the missing split or column (with the columns there are) before any training.
    """
    import datasets

    if config.dataset == DIGITS:
        raise ValueError("inspect_dataset reads Hub or local datasets; 'digits' needs no inspection.")
    try:
        loaded = datasets.load_dataset(config.dataset, config.dataset_config)
    except (FileNotFoundError, ValueError, ConnectionError, datasets.exceptions.DatasetNotFoundError) as err:
        where = "local path" if os.path.exists(config.dataset) else "Hub id or local path"
        raise ValueError(f"Cannot load dataset {config.dataset!r} (as a {where}): {err}") from err
    if not isinstance(loaded, datasets.DatasetDict):
        loaded = datasets.DatasetDict({config.train_split: loaded})
    if config.train_split not in loaded:
        raise ValueError(
            f"Dataset {config.dataset!r} has no split {config.train_split!r}; it has {sorted(loaded)}."
        )
    train = loaded[config.train_split]
    features = train.features
    columns = list(features)
    if config.image_column not in features:
        raise ValueError(
            f"Dataset {config.dataset!r} has no image column {config.image_column!r} (columns: {columns}); "
            "pass image_column=."
        )
    if not isinstance(features[config.image_column], datasets.Image):
        raise ValueError(
            f"Column {config.image_column!r} of {config.dataset!r} is {features[config.image_column]}, not an Image."
        )
    if config.label_column not in features:
        raise ValueError(
            f"Dataset {config.dataset!r} has no label column {config.label_column!r} (columns: {columns}); "
            "pass label_column= naming the integer class column."
        )
    label_feature = features[config.label_column]
    if isinstance(label_feature, datasets.ClassLabel):
        id2label = dict(enumerate(label_feature.names))
    elif isinstance(label_feature, datasets.Value) and label_feature.dtype.startswith(("int", "uint")):
        values = sorted(set(train[config.label_column]))
        if values and (values[0] < 0):
            raise ValueError(f"Label column {config.label_column!r} has negative values.")
        id2label = {i: str(i) for i in range(int(values[-1]) + 1 if values else 0)}
    else:
        raise ValueError(
            f"Label column {config.label_column!r} of {config.dataset!r} is {label_feature}, not integer classes."
        )
    if len(id2label) < 2:
        raise ValueError(
            f"Dataset {config.dataset!r} has {len(id2label)} class(es); classification needs 2+."
        )

    if config.eval_split is not None:
        if config.eval_split not in loaded:
            raise ValueError(
                f"Dataset {config.dataset!r} has no split {config.eval_split!r}; it has {sorted(loaded)}."
            )
        evaluation, eval_name = loaded[config.eval_split], config.eval_split
    else:
        present = [name for name in _EVAL_SPLIT_NAMES if name in loaded and name != config.train_split]
        if present:
            evaluation, eval_name = loaded[present[0]], present[0]
        else:
            stratify = config.label_column if isinstance(label_feature, datasets.ClassLabel) else None
            split = train.train_test_split(
                test_size=config.eval_fraction, seed=DIGITS_SPLIT_SEED, stratify_by_column=stratify
            )
            train, evaluation = split["train"], split["test"]
            eval_name = f"{config.train_split} (held-out {config.eval_fraction:g})"
    for name, part in (("eval", evaluation),):
        for column in (config.image_column, config.label_column):
            if column not in part.features:
                raise ValueError(f"The {name} split of {config.dataset!r} has no column {column!r}.")
    if config.max_train_samples is not None:
        train = train.select(range(min(config.max_train_samples, len(train))))
    if config.max_eval_samples is not None:
        evaluation = evaluation.select(range(min(config.max_eval_samples, len(evaluation))))
    if len(train) == 0 or len(evaluation) == 0:
        raise ValueError(f"Dataset {config.dataset!r}: empty train or eval split.")
    return train, evaluation, id2label, eval_name


def load_training_data(
    config: TrainingConfig,
    preprocessing: Preprocessing,
    inspected: tuple[Any, Any, dict[int, str], str] | None = None,
) -> TrainingData:
    """The datasets of `config` at `preprocessing`'s input size (pass `inspect_dataset`'s result to reuse it)."""
    if config.dataset == DIGITS:
        return _load_digits(config, preprocessing)
    train, evaluation, id2label, eval_name = inspected or inspect_dataset(config)
    columns = (config.image_column, config.label_column)
    return TrainingData(
        train=HFImageDataset(train, *columns, preprocessing, augmentation(config), _erasing(config)),
        eval=HFImageDataset(evaluation, *columns, preprocessing),
        id2label=id2label,
        name=config.dataset,
        eval_split=eval_name,
    )


def dataset_labels(config: TrainingConfig) -> dict[int, str]:
    """id2label of the configured dataset (digits: "0".."9")."""
    if config.dataset == DIGITS:
        return {i: str(i) for i in range(10)}
    return inspect_dataset(config)[2]


__all__ = [
    "DIGITS_SPLIT_SEED",
    "HFImageDataset",
    "TensorImageDataset",
    "TrainingData",
    "augmentation",
    "dataset_labels",
    "digits_images",
    "digits_split",
    "inspect_dataset",
    "load_training_data",
]
