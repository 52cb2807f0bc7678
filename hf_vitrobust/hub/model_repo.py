# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Make a staged checkpoint folder self-contained: it must load and run where hf_vitrobust is not installed.

An AlterNet folder gets the remote-code files and `auto_map` (`configuration_alternet.py`, `modeling_alternet.py`:
what `model.save_pretrained` writes since the Auto-class registration), however it was written. Every folder needs
an image processor (`preprocessor_config.json`, or for timm the `pretrained_cfg` in config.json). One is added only
from what the checkpoint records (`training_summary.json`) or from what the user gives (`ImageProcessorSpec`):
never guessed, since a wrong mean or std gives wrong predictions without any error.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

PROCESSOR_FILE = "preprocessor_config.json"
# The AlterNet model code that a remote-code folder carries (hf_vitrobust/models/alternet/, copied verbatim).
ALTERNET_CODE_FILES = ("configuration_alternet.py", "modeling_alternet.py")
ALTERNET_AUTO_MAP = {
    "AutoConfig": "configuration_alternet.AlterNetConfig",
    "AutoModelForImageClassification": "modeling_alternet.AlterNetForImageClassification",
}


class StagingError(ValueError):
    """A checkpoint that cannot be staged as a self-contained model repo; the message says why."""


@dataclass(frozen=True)
class ImageProcessorSpec:
    """The evaluation preprocessing a user states for a checkpoint that records none (CLI: `--image-size N
    --image-mean R G B --image-std R G B`): resize the shorter side to `size / crop_pct`, center-crop `size`,
    scale to [0, 1], normalise with `mean`/`std`. `crop_pct` defaults to 0.875 at >= 224 px and 1.0 below (as
    AlterNet's own processor)."""

    size: int
    mean: tuple[float, float, float]
    std: tuple[float, float, float]
    crop_pct: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.size, int) or self.size <= 0:
            raise ValueError(f"image size must be a positive integer, not {self.size!r}.")
        for name in ("mean", "std"):
            values = tuple(float(v) for v in getattr(self, name))
            if len(values) != 3 or not all(math.isfinite(v) for v in values):
                raise ValueError(f"image {name} must be three finite numbers (R G B), not {values}.")
            object.__setattr__(self, name, values)
        if any(v <= 0 for v in self.std):
            raise ValueError(f"image std must be positive, not {self.std}.")
        if self.crop_pct is not None and not 0.0 < self.crop_pct <= 1.0:
            raise ValueError(f"crop_pct must be in (0, 1], got {self.crop_pct}.")

    @classmethod
    def from_flags(cls, size: int | None, mean: Any, std: Any) -> ImageProcessorSpec | None:
        """From `--image-size`, `--image-mean` and `--image-std`: None when none is given; all three, or a
        ValueError (half a processor would be a guess)."""
        given = [size is not None, mean is not None, std is not None]
        if not any(given):
            return None
        if not all(given):
            raise ValueError(
                "give the image processor in full: --image-size N --image-mean R G B --image-std R G B"
            )
        return cls(size, tuple(mean), tuple(std))

    @property
    def resolved_crop_pct(self) -> float:
        return self.crop_pct if self.crop_pct is not None else (0.875 if self.size >= 224 else 1.0)

    def processor_dict(self) -> dict[str, Any]:
        """The `preprocessor_config.json` of a ConvNextImageProcessor doing exactly this (what
        `hf_vitrobust.models.alternet.alternet_image_processor` builds; a test checks that the two agree)."""
        from transformers import ConvNextImageProcessor
        from transformers.image_utils import PILImageResampling

        processor = ConvNextImageProcessor(
            size={"shortest_edge": self.size},
            crop_pct=self.resolved_crop_pct,
            resample=PILImageResampling.BILINEAR,
            image_mean=list(self.mean),
            image_std=list(self.std),
            do_rescale=True,
            do_normalize=True,
        )
        return processor.to_dict()

    def timm_pretrained_cfg(self, num_classes: int | None) -> dict[str, Any]:
        """The same preprocessing as timm's `pretrained_cfg` (what TimmWrapperImageProcessor reads)."""
        return {
            "input_size": [3, self.size, self.size],
            "crop_pct": self.resolved_crop_pct,
            "crop_mode": "center",
            "interpolation": "bilinear",
            "mean": list(self.mean),
            "std": list(self.std),
            **({"num_classes": num_classes} if num_classes else {}),
        }


def checkpoint_kind(config: Mapping[str, Any]) -> str:
    """ "alternet", "timm" (a transformers TimmWrapper folder) or "transformers", from a config.json."""
    model_type = config.get("model_type")
    if model_type == "alternet":
        return "alternet"
    if model_type == "timm_wrapper":
        return "timm"
    return "transformers"


def _has_processor(checkpoint: Path, config: Mapping[str, Any], kind: str) -> bool:
    if (checkpoint / PROCESSOR_FILE).is_file():
        return True
    cfg = config.get("pretrained_cfg") or {}
    return kind == "timm" and bool(cfg.get("mean")) and bool(cfg.get("std"))


def _recorded_spec(summary: Mapping[str, Any] | None, config: Mapping[str, Any]) -> ImageProcessorSpec | None:
    """The preprocessing `training_summary.json` records, or None.

    A summary's `preprocessing` ({input_size, mean, std, crop_pct}) is read as written. A summary without it, of an
    AlterNet trained by `hf_vitrobust.training` (it records `recipe` and `image_size`), is read by the trainer's
    fixed AlterNet rule: transformers' ImageNet mean/std and the AlterNet processor at the config's image size.
    """
    if not summary:
        return None
    recorded = summary.get("preprocessing")
    if isinstance(recorded, Mapping) and recorded.get("mean") and recorded.get("std"):
        size = recorded.get("input_size") or summary.get("image_size")
        size = size[-1] if isinstance(size, Sequence) else size
        return ImageProcessorSpec(int(size), recorded["mean"], recorded["std"], recorded.get("crop_pct"))
    trained_here = "recipe" in summary and summary.get("image_size") and summary.get("hf_vitrobust_version")
    if checkpoint_kind(config) == "alternet" and summary.get("model_type") == "alternet" and trained_here:
        from transformers.image_utils import IMAGENET_DEFAULT_MEAN, IMAGENET_DEFAULT_STD

        return ImageProcessorSpec(int(config["image_size"]), IMAGENET_DEFAULT_MEAN, IMAGENET_DEFAULT_STD)
    return None


def plan_processor(
    checkpoint: Path,
    summary: Mapping[str, Any] | None,
    image_processor: ImageProcessorSpec | None,
) -> ImageProcessorSpec | None:
    """The processor to write into the stage (None: the checkpoint's own is kept), checked before anything is
    written. A user's `image_processor` replaces the checkpoint's. Raises StagingError when there is none at all."""
    config = json.loads((checkpoint / "config.json").read_text(encoding="utf-8"))
    if image_processor is not None:
        return image_processor
    if _has_processor(checkpoint, config, checkpoint_kind(config)):
        return None
    recorded = _recorded_spec(summary, config)
    if recorded is not None:
        return recorded
    raise StagingError(
        f"Checkpoint {checkpoint} has no image processor ({PROCESSOR_FILE}) and its training_summary.json records "
        "no preprocessing: give it with --image-size N --image-mean R G B --image-std R G B "
        "(ImageProcessorSpec). Refused rather than guessed: a guessed mean/std would silently give wrong predictions."
    )


def _alternet_code_dir() -> Path:
    return Path(str(resources.files("hf_vitrobust").joinpath("models", "alternet")))


def make_self_contained(stage: Path, kind: str, processor: ImageProcessorSpec | None) -> list[str]:
    """Complete the checkpoint copied into `stage`: AlterNet remote code + `auto_map` where missing, and the
    planned image processor. Returns the names of the files written or changed."""
    config_file = stage / "config.json"
    config = json.loads(config_file.read_text(encoding="utf-8"))
    changed: list[str] = []
    if kind == "alternet":
        for name in ALTERNET_CODE_FILES:
            source = (_alternet_code_dir() / name).read_text(encoding="utf-8")
            if not (stage / name).is_file() or (stage / name).read_text(encoding="utf-8") != source:
                (stage / name).write_text(source, encoding="utf-8")
                changed.append(name)
        auto_map = {**ALTERNET_AUTO_MAP, **(config.get("auto_map") or {})}
        if config.get("auto_map") != auto_map:
            config["auto_map"] = auto_map
            changed.append("config.json")
    if processor is not None:
        if kind == "timm":
            config["pretrained_cfg"] = {
                **(config.get("pretrained_cfg") or {}),
                **processor.timm_pretrained_cfg(config.get("num_classes") or config.get("num_labels")),
            }
            changed.append("config.json")
        else:
            text = json.dumps(processor.processor_dict(), indent=2, sort_keys=True) + "\n"
            (stage / PROCESSOR_FILE).write_text(text, encoding="utf-8")
            changed.append(PROCESSOR_FILE)
    if "config.json" in changed:
        config_file.write_text(json.dumps(config, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return list(dict.fromkeys(changed))


__all__ = [
    "ALTERNET_AUTO_MAP",
    "ALTERNET_CODE_FILES",
    "ImageProcessorSpec",
    "StagingError",
    "checkpoint_kind",
    "make_self_contained",
    "plan_processor",
]
