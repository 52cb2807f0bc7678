# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""What a training run does: model, data, recipe, precision and where it writes, in one dataclass.

`TrainingConfig()` is the offline default: a tiny AlterNet on scikit-learn's digits (about a minute on a
2-core CPU). `TrainingConfig.paper_recipe(...)` gives the recipe Park & Kim use for AlterNet and ViTs on
CIFAR (github xxxnell/how-do-vits-work, configs/cifar100_vit.yaml): AdamW 1.25e-4, weight decay 0.05,
batch 96, 300 epochs with 5 warmup epochs and cosine decay, RandAugment m9 n2, mixup 0.8, cutmix 0.8,
label smoothing 0.1, random erasing 0.25, stochastic depth 0.1, gradient clipping at norm 1.
"""

import dataclasses
import os
from dataclasses import dataclass, field
from typing import Any

from ..registry import did_you_mean

PRECISIONS = ("fp32", "bf16", "fp16")
DIGITS = "digits"
DIGITS_IMAGE_SIZE = 16


@dataclass
class TrainingConfig:
    """A training run.

    Args:
        model: an AlterNet preset name (`hf_vitrobust.models.ALTERNET_PRESETS`, e.g. "alternet-tiny"), a
            transformers image-classification folder or Hub id, or "timm/<name>" (trained from scratch unless
            `pretrained`). The classification head is sized to the dataset's labels.
        model_overrides: extra `AlterNetConfig` fields for a preset (e.g. `{"window_sizes": [4, 4, 4, 2]}`).
        pretrained: for "timm/<name>": start from timm's pretrained weights (needs them cached or online).
        dataset: "digits" (scikit-learn's 8x8 digits upscaled to `image_size`, RGB, a fixed stratified 80/20
            split) or a Hub id / local path that `datasets.load_dataset` reads (a local image folder works).
        dataset_config: the dataset's configuration name, if it has several.
        train_split, eval_split: split names; `eval_split=None` takes "test" or "validation" when the dataset
            has one, else holds out `eval_fraction` of the train split (seeded, stratified).
        eval_fraction: the fraction of the train split held out for evaluation when there is no eval split.
        image_column, label_column: the columns holding the image and the integer class.
        max_train_samples, max_eval_samples: keep only the first N samples (quick runs).
        image_size: training resolution; None takes the model's (the preset's `image_size`), except on the
            digits, where None means 16 (the 8x8 digits hold no more detail, and 16 px trains about ten times
            faster than 32 on a CPU). AlterNet attention windows that do not tile a stage at this size shrink
            to fit (see `trainer.fit_window_sizes`) unless `model_overrides` sets `window_sizes`.
        epochs, batch_size: batch_size is per process.
        lr, weight_decay: AdamW's; lr is the peak after warmup.
        warmup_epochs, warmup_steps: linear warmup length (warmup_steps wins when set), then cosine decay
            to `min_lr` at the last step.
        min_lr: the learning rate the cosine decay ends at.
        label_smoothing, mixup_alpha, cutmix_alpha, mixup_prob, mixup_switch_prob: timm's Mixup (Zhang et
            al. 2018; Yun et al. 2019); a zero alpha disables that one.
        randaugment, randaugment_ops, randaugment_magnitude: torchvision's RandAugment (Cubuk et al. 2020).
        random_erasing: probability of torchvision's RandomErasing (Zhong et al. 2020) per image.
        drop_path_rate: stochastic depth (Huang et al. 2016) of the deepest block; None keeps the model's.
        grad_clip: max global gradient norm; None or 0 disables clipping.
        sam, sam_rho: sharpness-aware minimisation (Foret et al. 2021) with neighbourhood radius rho.
        precision: "fp32", "bf16" or "fp16" (accelerate's mixed precision; fp16 adds a gradient scaler).
        seed: model initialisation, shuffling and augmentation all derive from it.
        output_dir: the checkpoint folder written at the end (`--output` on the command line, as in every
            command); resumable states go to `output_dir/checkpoints`.
        resume: continue from the latest state in `output_dir/checkpoints` (error if there is none).
        keep_checkpoints: keep `output_dir/checkpoints` after a finished run (to extend it later).
        num_workers: DataLoader workers.
        num_threads: CPU threads of torch during the run (restored afterwards); None keeps torch's setting.
            Tiny models on a busy CPU often train several times faster with 1 thread than with 2.
        eval_batch_size: None uses 2 * batch_size.
    """

    model: str = "alternet-tiny"
    model_overrides: dict[str, Any] = field(default_factory=dict)
    pretrained: bool = False
    dataset: str = DIGITS
    dataset_config: str | None = None
    train_split: str = "train"
    eval_split: str | None = None
    eval_fraction: float = 0.2
    image_column: str = "image"
    label_column: str = "label"
    max_train_samples: int | None = None
    max_eval_samples: int | None = None
    image_size: int | None = None
    epochs: int = 6
    batch_size: int = 32
    eval_batch_size: int | None = None
    lr: float = 4e-3
    weight_decay: float = 0.05
    warmup_epochs: float = 1.0
    warmup_steps: int | None = None
    min_lr: float = 0.0
    label_smoothing: float = 0.0
    mixup_alpha: float = 0.0
    cutmix_alpha: float = 0.0
    mixup_prob: float = 1.0
    mixup_switch_prob: float = 0.5
    randaugment: bool = False
    randaugment_ops: int = 2
    randaugment_magnitude: int = 9
    random_erasing: float = 0.0
    drop_path_rate: float | None = None
    grad_clip: float | None = None
    sam: bool = False
    sam_rho: float = 0.05
    precision: str = "fp32"
    seed: int = 0
    output_dir: str | os.PathLike = "alternet-digits"
    resume: bool = False
    keep_checkpoints: bool = False
    num_workers: int = 0
    num_threads: int | None = None

    def __post_init__(self) -> None:
        self.output_dir = os.fspath(self.output_dir)
        self.validate()

    @classmethod
    def paper_recipe(cls, **overrides: Any) -> "TrainingConfig":
        """Park & Kim's CIFAR recipe for AlterNet and ViTs (configs/cifar100_vit.yaml), with overrides."""
        recipe: dict[str, Any] = {
            "epochs": 300,
            "batch_size": 96,
            "lr": 1.25e-4,
            "weight_decay": 0.05,
            "warmup_epochs": 5.0,
            "label_smoothing": 0.1,
            "mixup_alpha": 0.8,
            "cutmix_alpha": 0.8,
            "randaugment": True,
            "randaugment_ops": 2,
            "randaugment_magnitude": 9,
            "random_erasing": 0.25,
            "drop_path_rate": 0.1,
            "grad_clip": 1.0,
        }
        return cls(**{**recipe, **overrides})

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> "TrainingConfig":
        """Build from a mapping (a parsed CLI or YAML); unknown keys are an error naming the close field."""
        names = [f.name for f in dataclasses.fields(cls)]
        for key in values:
            if key not in names:
                raise ValueError(f"Unknown training option {key!r}.{did_you_mean(key, names)}")
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def resolved_image_size(self) -> int | None:
        """`image_size`, or the digits' 16 px default; None leaves the model's own size."""
        if self.image_size is None and self.dataset == DIGITS:
            return DIGITS_IMAGE_SIZE
        return self.image_size

    @property
    def is_alternet_preset(self) -> bool:
        from ..models import ALTERNET_PRESETS

        return self.model in ALTERNET_PRESETS

    def recipe(self) -> dict[str, Any]:
        """The optimisation settings, as written into `training_summary.json`."""
        keys = (
            "epochs",
            "batch_size",
            "lr",
            "weight_decay",
            "warmup_epochs",
            "warmup_steps",
            "min_lr",
            "label_smoothing",
            "mixup_alpha",
            "cutmix_alpha",
            "mixup_prob",
            "mixup_switch_prob",
            "randaugment",
            "randaugment_ops",
            "randaugment_magnitude",
            "random_erasing",
            "drop_path_rate",
            "grad_clip",
            "sam",
            "sam_rho",
            "precision",
            "seed",
        )
        values = {key: getattr(self, key) for key in keys}
        values["optimizer"] = "AdamW"
        values["schedule"] = "linear warmup + cosine decay"
        return values

    def validate(self) -> None:
        """Raise a ValueError naming the option for anything that cannot run; cheap (no model, no data)."""
        if not isinstance(self.model, str) or not self.model:
            raise ValueError(f"model must be a non-empty string, got {self.model!r}.")
        self._check_model_spec()
        if self.model_overrides and not self.is_alternet_preset:
            raise ValueError(f"model_overrides apply to AlterNet presets only, not to {self.model!r}.")
        if not isinstance(self.dataset, str) or not self.dataset:
            raise ValueError(f"dataset must be 'digits', a Hub id or a local path, got {self.dataset!r}.")
        positive_ints = ("epochs", "batch_size", "randaugment_ops")
        for name in positive_ints:
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"{name} must be a positive integer, got {value!r}.")
        for name in ("num_threads", "eval_batch_size", "max_train_samples", "max_eval_samples", "image_size"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value <= 0):
                raise ValueError(f"{name} must be a positive integer or None, got {value!r}.")
        if self.warmup_steps is not None and self.warmup_steps < 0:
            raise ValueError(f"warmup_steps must be >= 0, got {self.warmup_steps}.")
        if self.warmup_epochs < 0:
            raise ValueError(f"warmup_epochs must be >= 0, got {self.warmup_epochs}.")
        if not self.lr > 0:
            raise ValueError(f"lr must be positive, got {self.lr}.")
        if not 0 <= self.min_lr <= self.lr:
            raise ValueError(f"min_lr must be in [0, lr={self.lr}], got {self.min_lr}.")
        for name in ("weight_decay", "mixup_alpha", "cutmix_alpha", "sam_rho", "num_workers"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}.")
        if self.sam and not self.sam_rho > 0:
            raise ValueError(f"sam_rho must be positive when sam is on, got {self.sam_rho}.")
        for name in ("label_smoothing", "drop_path_rate"):
            value = getattr(self, name)
            if value is not None and not 0.0 <= value < 1.0:
                raise ValueError(f"{name} must be in [0, 1), got {value}.")
        for name in ("mixup_prob", "mixup_switch_prob", "random_erasing"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {getattr(self, name)}.")
        if not 0 <= self.randaugment_magnitude <= 30:
            raise ValueError(f"randaugment_magnitude must be in [0, 30], got {self.randaugment_magnitude}.")
        if not 0.0 < self.eval_fraction < 1.0:
            raise ValueError(f"eval_fraction must be in (0, 1), got {self.eval_fraction}.")
        if self.grad_clip is not None and self.grad_clip < 0:
            raise ValueError(f"grad_clip must be >= 0 or None, got {self.grad_clip}.")
        if self.precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {list(PRECISIONS)}, got {self.precision!r}.")
        if self.image_size is not None and self.image_size < 8:
            raise ValueError(f"image_size must be at least 8, got {self.image_size}.")

    def _check_model_spec(self) -> None:
        from ..models import ALTERNET_PRESETS

        spec = self.model
        if spec in ALTERNET_PRESETS:
            return
        if spec.startswith("timm/"):
            return  # checked against timm's registry when the model is built (before any data is read)
        if spec.startswith("builtin:"):
            raise ValueError(
                f"Cannot train {spec!r}: builtin models cannot be saved as a checkpoint folder; train an AlterNet "
                "preset, a transformers model or a timm model instead."
            )
        if os.path.isdir(spec):
            return
        looks_like_preset = spec.lower().startswith("alternet") or "/" not in spec
        if looks_like_preset:
            hint = did_you_mean(spec, ALTERNET_PRESETS, n=3, cutoff=0.5)
            raise ValueError(
                f"Unknown model {spec!r}.{hint} Use an AlterNet preset ({', '.join(sorted(ALTERNET_PRESETS))}), "
                "a transformers folder or Hub id 'org/name', or 'timm/<name>'."
            )


__all__ = ["DIGITS", "PRECISIONS", "TrainingConfig"]
