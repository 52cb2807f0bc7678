# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Park & Kim's training augmentation, for the probes that measure the *training* loss (Hessian spectra, loss
landscapes).

Park & Kim (ICLR 2022) compute Hessian spectra and loss landscapes of "NLL + L2 on augmented training data"; their
README calls NLL on clean data without the L2 term incorrect. Their data pipeline (xxxnell/how-do-vits-work
`ops/datasets.py`, configs `cifar100_vit.yaml` and `imagenet_vit.yaml`, the `Mixup` of losslandscape.ipynb) is:

- per image, timm's training transform: CIFAR-100 `RandomCrop(32, padding=4)` and a horizontal flip in place of
  the random resized crop, then RandAugment `rand-m9-n2-mstd1.0`; ImageNet a random resized crop (scale 0.08-1,
  random bilinear/bicubic), a flip, RandAugment `rand-m9-n2-mstd0.5` and random erasing (p 0.25, constant, i.e.
  the mean colour);
- per mini-batch, timm's `Mixup` in batch mode: mixup (alpha 1.0) or cutmix (alpha 0.8), each with probability
  0.5, on every batch, targets label-smoothed by 0.1 and mixed with the same weight as the images.

`augment_batch` runs the per-image part through timm's own transforms (the version installed here, not their
timm 0.5.4), on the probe's images as they reach the model (already resized to its input size, where their crop
cut the original file), and the mini-batch part as timm's `Mixup` draws it. timm's transforms draw from Python's,
NumPy's and torch's global generators: each image runs inside a context seeded from (seed, sample id) that
restores all three afterwards, and the mixing draws come from a NumPy `RandomState` of the caller's seed, so
nothing outside is disturbed and the same seed gives the same batch. An odd batch pairs its middle image with
itself (timm's `Mixup` refuses odd batches; its pairing by `flip(0)` is otherwise the same).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from ..constants import IMAGENET_DEFAULT_MEAN, IMAGENET_DEFAULT_STD
from ..corruptions.randomness import random_bits

_IMAGE_STREAM = "training_augmentation/image"


@dataclass(frozen=True)
class TrainingAugmentation:
    """One training recipe: the per-image timm transform and the mini-batch mixing of a published config."""

    name: str
    source: str
    mean: tuple[float, float, float]
    std: tuple[float, float, float]
    auto_augment: str
    random_erasing: float
    crop_padding: int | None  # RandomCrop(size, padding) + flip instead of the random resized crop
    mixup_alpha: float = 1.0
    cutmix_alpha: float = 0.8
    mix_prob: float = 1.0
    switch_prob: float = 0.5
    label_smoothing: float = 0.1

    def to_dict(self) -> dict:
        return dict(self.__dict__)


TRAINING_AUGMENTATION_RECIPES: dict[str, TrainingAugmentation] = {
    recipe.name: recipe
    for recipe in (
        TrainingAugmentation(
            name="park-kim-cifar100",
            source="how-do-vits-work configs/cifar100_vit.yaml, ops/datasets.py get_cifar100, losslandscape.ipynb",
            mean=(0.5071, 0.4867, 0.4408),
            std=(0.2675, 0.2565, 0.2761),
            auto_augment="rand-m9-n2-mstd1.0",
            random_erasing=0.0,
            crop_padding=4,
        ),
        TrainingAugmentation(
            name="park-kim-imagenet",
            source="how-do-vits-work configs/imagenet_vit.yaml, ops/datasets.py get_imagenet, losslandscape.ipynb",
            mean=IMAGENET_DEFAULT_MEAN,
            std=IMAGENET_DEFAULT_STD,
            auto_augment="rand-m9-n2-mstd0.5",
            random_erasing=0.25,
            crop_padding=None,
        ),
    )
}
TRAINING_AUGMENTATIONS: tuple[str, ...] = tuple(TRAINING_AUGMENTATION_RECIPES)


def check_augmentation(recipe: str | None) -> str | None:
    """`recipe` if it names a training augmentation (or is None: no augmentation), else a ValueError."""
    if recipe is None or recipe in TRAINING_AUGMENTATION_RECIPES:
        return recipe
    raise ValueError(f"augmentation must be None or one of {list(TRAINING_AUGMENTATIONS)}, got {recipe!r}.")


def soft_target_cross_entropy(
    logits: torch.Tensor, targets: torch.Tensor, reduction: str = "mean"
) -> torch.Tensor:
    """Mean over the batch (reduction "mean"; "none": per image) of -sum_c t_c log softmax(z)_c: the NLL of mixed,
    smoothed targets (timm's `SoftTargetCrossEntropy`, Park & Kim's loss under Mixup)."""
    if reduction not in ("mean", "none"):
        raise ValueError(f"reduction must be 'mean' or 'none', got {reduction!r}.")
    logits = logits if logits.dtype in (torch.float32, torch.float64) else logits.float()
    per_image = torch.sum(-targets.to(logits.dtype) * F.log_softmax(logits, dim=-1), dim=-1)
    return per_image.mean() if reduction == "mean" else per_image


@contextmanager
def _seeded_global_generators(seed: int) -> Iterator[None]:
    """Python's, NumPy's and torch's (CPU) global generators seeded with `seed` (< 2**32) inside, restored after."""
    python_state, numpy_state = random.getstate(), np.random.get_state()
    with torch.random.fork_rng(devices=[]):
        random.seed(seed)
        np.random.seed(seed)
        torch.manual_seed(seed)
        try:
            yield
        finally:
            random.setstate(python_state)
            np.random.set_state(numpy_state)


def _image_transform(recipe: TrainingAugmentation, size: tuple[int, int]) -> Callable:
    from timm.data.transforms_factory import transforms_imagenet_train
    from torchvision import transforms

    crop, rand_augment, finish = transforms_imagenet_train(
        img_size=size,
        hflip=0.5,
        color_jitter=0.0,
        auto_augment=recipe.auto_augment,
        interpolation="random",
        mean=recipe.mean,
        std=recipe.std,
        re_prob=recipe.random_erasing,
        re_mode="const",
        re_count=1,
        separate=True,
    )
    if recipe.crop_padding is not None:
        crop = transforms.Compose(
            [transforms.RandomCrop(size, padding=recipe.crop_padding), transforms.RandomHorizontalFlip(0.5)]
        )
    return transforms.Compose([crop, rand_augment, finish])


def _mix_batch(
    pixels: torch.Tensor, recipe: TrainingAugmentation, generator: np.random.RandomState
) -> tuple[torch.Tensor, float]:
    """timm `Mixup` in batch mode (`_params_per_batch`, `_mix_batch`, `cutmix_bbox_and_lam` with the area
    correction), drawing from `generator` in timm's order; each image is paired with the batch reversed."""
    lam, use_cutmix = 1.0, False
    if generator.rand() < recipe.mix_prob:
        use_cutmix = bool(generator.rand() < recipe.switch_prob)
        alpha = recipe.cutmix_alpha if use_cutmix else recipe.mixup_alpha
        lam = float(generator.beta(alpha, alpha))
    if lam == 1.0:
        return pixels, 1.0
    partner = pixels.flip(0)
    if not use_cutmix:
        return pixels * lam + partner * (1.0 - lam), lam
    height, width = pixels.shape[-2:]
    ratio = np.sqrt(1 - lam)
    cut_h, cut_w = int(height * ratio), int(width * ratio)
    cy, cx = generator.randint(0, height), generator.randint(0, width)
    top, bottom = np.clip(cy - cut_h // 2, 0, height), np.clip(cy + (cut_h + 1) // 2, 0, height)
    left, right = np.clip(cx - cut_w // 2, 0, width), np.clip(cx + (cut_w + 1) // 2, 0, width)
    mixed = pixels.clone()
    mixed[:, :, top:bottom, left:right] = partner[:, :, top:bottom, left:right]
    return mixed, 1.0 - float((bottom - top) * (right - left)) / float(height * width)


def mixed_targets(labels: torch.Tensor, num_classes: int, lam: float, smoothing: float) -> torch.Tensor:
    """timm's `mixup_target`: label-smoothed one-hot targets (1 - eps + eps/C on the class, eps/C elsewhere) mixed
    as lam * y + (1 - lam) * y reversed, the pairing of `_mix_batch`."""
    off = smoothing / num_classes
    one_hot = torch.full((labels.shape[0], num_classes), off, device=labels.device)
    one_hot.scatter_(1, labels.long().view(-1, 1), 1.0 - smoothing + off)
    return one_hot * lam + one_hot.flip(0) * (1.0 - lam)


def augment_batch(
    pixels: torch.Tensor,
    labels: torch.Tensor,
    *,
    recipe: str,
    seed: int,
    num_classes: int,
    sample_ids: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Park & Kim's training augmentation of one mini-batch (see the module docstring).

    pixels (N, 3, H, W) in [0, 1] and integer labels (N,) -> the augmented pixels in [0, 1] (same shape, dtype and
    device; the images pass through 8-bit PIL for timm's transforms) and soft targets (N, num_classes) float32.
    Each image's draws are keyed by (seed, sample id) (`sample_ids`, default the positions 0..N-1); the mixing
    draws by `seed`. The same arguments give the same batch on every device.
    """
    settings = TRAINING_AUGMENTATION_RECIPES[check_augmentation(recipe)]
    if pixels.ndim != 4 or pixels.shape[1] != 3:
        raise ValueError(f"pixels must be (N, 3, H, W), got shape {tuple(pixels.shape)}.")
    if labels.shape != (pixels.shape[0],):
        raise ValueError(f"labels must be ({pixels.shape[0]},), got shape {tuple(labels.shape)}.")
    if sample_ids is None:
        sample_ids = torch.arange(pixels.shape[0])
    from torchvision.transforms.functional import to_pil_image

    image_seeds = random_bits(seed, sample_ids.cpu(), _IMAGE_STREAM, (1,)).view(-1).tolist()
    transform = _image_transform(settings, tuple(pixels.shape[-2:]))
    uint8 = pixels.detach().clamp(0, 1).mul(255).round().to(torch.uint8).cpu()
    augmented = []
    for image, image_seed in zip(uint8, image_seeds, strict=True):
        with _seeded_global_generators(image_seed & 0xFFFFFFFF):
            augmented.append(transform(to_pil_image(image)))
    normalised = torch.stack(augmented)
    mean = torch.tensor(settings.mean).view(1, 3, 1, 1)
    std = torch.tensor(settings.std).view(1, 3, 1, 1)
    images = (normalised * std + mean).clamp(0, 1).to(device=pixels.device, dtype=pixels.dtype)
    generator = np.random.RandomState([seed & 0xFFFFFFFF, (seed >> 32) & 0xFFFFFFFF])
    images, lam = _mix_batch(images, settings, generator)
    return images, mixed_targets(labels, num_classes, lam, settings.label_smoothing).float()
