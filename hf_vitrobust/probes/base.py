# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The contract every probe shares: its inputs (a `Classifier`, images, labels, a seed) and its result type.

A probe takes images as a float tensor in [0, 1] (N, 3, H, W) at the classifier's input size, or as a dataset
(an iterable of `hf_vitrobust.data.Sample`, or of `datasets` rows with "image" and "label"), which is decoded and
preprocessed exactly as the classifier would preprocess it. `prepare_inputs` turns either into `ProbeInputs`:
pixels and labels on the classifier's device, and one integer id per image. Probes draw every random number
from the counter-based streams of `hf_vitrobust.corruptions.randomness`, keyed by (seed, image id), so an
image's hole, sign or noise never depends on the batch size, the batch order or the number of processes.

A result is a dataclass: `.to_dict()` gives JSON-safe values (tensors and arrays become lists, non-finite floats
become None) and `.plot(ax=None)` draws the paper's figure with matplotlib, on `ax` or on a new figure.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from PIL import Image

from ..corruptions.export import stable_sample_index
from ..data.samples import NO_LABEL, Sample
from ..models.classifier import Classifier

if TYPE_CHECKING:
    from matplotlib.axes import Axes

DEFAULT_BATCH_SIZE = 32


@dataclass(frozen=True)
class ProbeInputs:
    """What a probe works on: pixels (N, 3, H, W) float in [0, 1] and labels (N,) int64 on the classifier's device
    (labels may be None for probes that need none), and sample_ids (N,) int64 that key each image's randomness."""

    pixels: torch.Tensor
    labels: torch.Tensor | None
    sample_ids: torch.Tensor

    def __len__(self) -> int:
        return int(self.pixels.shape[0])

    def select(self, index: torch.Tensor | slice) -> ProbeInputs:
        """A subset (a slice, a boolean mask or integer indices), e.g. the correctly classified images."""
        labels = None if self.labels is None else self.labels[index]
        return ProbeInputs(self.pixels[index], labels, self.sample_ids[index])


def check_seed(seed: int) -> int:
    """A seed is a non-negative Python int (the counter-based streams take up to 64 bits)."""
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or not 0 <= int(seed) < 2**64:
        raise ValueError(f"seed must be an int in [0, 2**64), got {seed!r}.")
    return int(seed)


def check_batch_size(batch_size: int) -> int:
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive int, got {batch_size!r}.")
    return batch_size


def batch_slices(total: int, batch_size: int) -> Iterator[slice]:
    """Consecutive slices of at most `batch_size` covering range(total)."""
    check_batch_size(batch_size)
    for start in range(0, total, batch_size):
        yield slice(start, min(start + batch_size, total))


def _sample_to_pixels(classifier: Classifier, image: Any) -> torch.Tensor:
    """One image of a dataset (a uint8 CHW tensor, an HWC array or a PIL image) -> (3, H, W) classifier pixels."""
    if isinstance(image, torch.Tensor):
        if image.ndim != 3 or image.dtype != torch.uint8:
            raise ValueError(
                f"Dataset images must be uint8 (3, H, W) tensors, got {image.dtype} {tuple(image.shape)}."
            )
        image = Image.fromarray(image.permute(1, 2, 0).cpu().numpy())
    elif isinstance(image, np.ndarray):
        image = Image.fromarray(image)
    if not isinstance(image, Image.Image):
        raise TypeError(f"Cannot read a dataset image of type {type(image).__name__}.")
    return classifier.preprocessing.image_to_tensor(image)


def _rows(dataset: Iterable[Any], limit: int | None) -> Iterator[tuple[Any, int | None, int]]:
    """(image, label or None, integer sample id) from Samples or mapping rows, at most `limit` of them."""
    for position, row in enumerate(dataset):
        if limit is not None and position >= limit:
            return
        if isinstance(row, Sample):
            label = None if row.label == NO_LABEL else row.label
            yield row.image, label, stable_sample_index(row.sample_id)
        elif isinstance(row, Mapping) and "image" in row:
            label = row.get("label")
            yield row["image"], None if label is None else int(label), position
        else:
            raise TypeError(
                "A dataset for a probe must yield hf_vitrobust.data.Sample objects or mappings with an 'image' "
                f"(and 'label') field; got {type(row).__name__}."
            )


def prepare_inputs(
    classifier: Classifier,
    images: torch.Tensor | Iterable[Any],
    labels: torch.Tensor | Sequence[int] | None = None,
    *,
    limit: int | None = None,
    sample_ids: torch.Tensor | Sequence[int] | None = None,
    require_labels: bool = True,
) -> ProbeInputs:
    """Validate and gather a probe's inputs on the classifier's device (errors come before any model work).

    images: float pixels in [0, 1] (N, 3, H, W) at `classifier.input_size`, or a dataset (see the module
        docstring), of which the first `limit` rows are read and preprocessed.
    labels: (N,) class indices; for a dataset they default to the dataset's own labels.
    sample_ids: (N,) integer ids that key each image's randomness; by default the position (tensor input) or the
        stable hash of `Sample.sample_id` (the row position for plain rows).
    require_labels: probes that measure accuracy or a loss need labels; feature probes do not.
    """
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise ValueError(f"limit must be a positive int or None, got {limit!r}.")
    device = classifier.device
    if isinstance(images, torch.Tensor):
        if images.ndim != 4 or images.shape[1] != 3:
            raise ValueError(f"images must be a (N, 3, H, W) tensor, got shape {tuple(images.shape)}.")
        if not images.is_floating_point():
            raise ValueError(
                f"images must be float pixels in [0, 1], got dtype {images.dtype} (divide uint8 by 255)."
            )
        if tuple(images.shape[-2:]) != classifier.input_size:
            raise ValueError(
                f"images are {tuple(images.shape[-2:])} but {classifier.name} takes {classifier.input_size}; "
                "preprocess them with classifier.preprocess(...) or pass a dataset."
            )
        if images.numel() and (images.min() < 0 or images.max() > 1):
            raise ValueError("images must be pixels in [0, 1] (before the model's normalisation).")
        pixels = images[:limit].to(device=device, dtype=torch.float32)
        ids = torch.arange(pixels.shape[0], dtype=torch.int64)
        dataset_labels = None
    else:
        if isinstance(images, str | bytes):
            raise TypeError("images must be a tensor or a dataset, not a string.")
        rows = list(_rows(images, limit))
        if not rows:
            raise ValueError("The dataset gave no images.")
        pixels = torch.stack([_sample_to_pixels(classifier, image) for image, _, _ in rows]).to(device)
        ids = torch.tensor([sample_id for _, _, sample_id in rows], dtype=torch.int64)
        row_labels = [label for _, label, _ in rows]
        dataset_labels = None if any(label is None for label in row_labels) else row_labels
    n = pixels.shape[0]
    if n == 0:
        raise ValueError("No images given.")
    if labels is None:
        labels = dataset_labels
    label_tensor = None
    if labels is not None:
        label_tensor = torch.as_tensor(labels, dtype=torch.int64)
        if limit is not None and isinstance(images, torch.Tensor):
            label_tensor = label_tensor[:n]
        if label_tensor.shape != (n,):
            raise ValueError(
                f"labels must have shape ({n},) to match the images, got {tuple(label_tensor.shape)}."
            )
        if label_tensor.numel() and (label_tensor.min() < 0 or label_tensor.max() >= classifier.num_classes):
            raise ValueError(f"labels must be class indices in [0, {classifier.num_classes}).")
        label_tensor = label_tensor.to(device)
    elif require_labels:
        raise ValueError("This probe needs labels: pass labels=... or a dataset with labels.")
    if sample_ids is not None:
        ids = torch.as_tensor(sample_ids, dtype=torch.int64)
        if ids.shape != (n,):
            raise ValueError(f"sample_ids must have shape ({n},), got {tuple(ids.shape)}.")
        if ids.unique().numel() != n:
            raise ValueError("sample_ids must be unique.")
    return ProbeInputs(pixels, label_tensor, ids.to(device))


def check_eval_classifier(classifier: Classifier) -> None:
    """Refuse anything but a `Classifier` in eval mode: in training mode BatchNorm and dropout make an image's output
    depend on the other images of its batch and on chance, so attacks and sweeps would not be reproducible."""
    if not isinstance(classifier, Classifier):
        raise TypeError(f"classifier must be a hf_vitrobust Classifier, got {type(classifier).__name__}.")
    if classifier.training or classifier.module.training:
        raise ValueError(
            "The classifier is in training mode; call classifier.eval() first (BatchNorm and dropout would make "
            "an image's output depend on the other images of its batch and on chance)."
        )


@contextlib.contextmanager
def eval_mode(classifier: Classifier) -> Iterator[None]:
    """Eval mode (BatchNorm running statistics, no dropout) for the duration, then every module's own mode back."""
    modes = [(module, module.training) for module in classifier.modules()]
    classifier.eval()
    try:
        yield
    finally:
        for module, training in modes:
            module.training = training


@torch.no_grad()
def predict_logits(
    classifier: Classifier, pixels: torch.Tensor, batch_size: int = DEFAULT_BATCH_SIZE
) -> torch.Tensor:
    """Float32 logits (N, classes) in batches, without gradients."""
    outputs = [classifier(pixels[part]).float() for part in batch_slices(pixels.shape[0], batch_size)]
    return torch.cat(outputs)


def json_safe(value: Any) -> Any:
    """Tensors and arrays to nested lists, numpy scalars to Python numbers, non-finite floats to None, mapping keys to
    strings: a value `json.dumps(..., allow_nan=False)` accepts. Anything else is a TypeError, not a silent repr."""
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu().numpy()
    if isinstance(value, np.ndarray):
        return json_safe(value.tolist())
    if isinstance(value, np.generic):
        return json_safe(value.item())
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(key): json_safe(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(item) for item in value]
    if value is None or isinstance(value, bool | int | str):
        return value
    raise TypeError(f"Cannot make a {type(value).__name__} JSON-safe.")


@dataclass
class ProbeResult:
    """Base of every probe's result. Subclasses are dataclasses whose fields are the reported values."""

    def to_dict(self) -> dict[str, Any]:
        """Every field, JSON-safe (tensors and arrays as nested lists, NaN and inf as None), plus the probe name."""
        data = {field.name: json_safe(getattr(self, field.name)) for field in dataclasses.fields(self)}
        return {"probe": self.probe_name(), **data}

    @classmethod
    def probe_name(cls) -> str:
        """The probe's public function name, e.g. "occlusion_sweep"."""
        raise NotImplementedError(f"{cls.__name__} must define probe_name().")

    def plot(self, ax: Axes | None = None) -> Axes:
        """Draw the paper's figure for this result on `ax` (a new figure when None) and return the axes."""
        raise NotImplementedError(f"{type(self).__name__} must define plot().")


def new_axes(ax: Axes | None = None, figsize: tuple[float, float] = (4.5, 3.5)) -> Axes:
    """`ax`, or the axes of a new matplotlib `Figure` made without pyplot (no GUI backend, no global state):
    save it with `axes.figure.savefig(path)`."""
    if ax is not None:
        return ax
    from matplotlib.figure import Figure

    return Figure(figsize=figsize, layout="constrained").add_subplot()


__all__ = [
    "DEFAULT_BATCH_SIZE",
    "ProbeInputs",
    "ProbeResult",
    "batch_slices",
    "check_batch_size",
    "check_eval_classifier",
    "check_seed",
    "eval_mode",
    "json_safe",
    "new_axes",
    "predict_logits",
    "prepare_inputs",
]
