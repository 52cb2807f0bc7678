# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Training: AlterNet (or any transformers / timm classifier) with Park & Kim's recipe, under accelerate.

`train(TrainingConfig(...))` writes a transformers checkpoint folder (safetensors, config, image processor,
remote code for AlterNet, `training_summary.json`, README.md model card).
"""

from .config import PRECISIONS, TrainingConfig
from .data import TrainingData, digits_images, digits_split, inspect_dataset, load_training_data
from .recipe import SAM, MixCriterion, soft_target_cross_entropy, warmup_cosine_factor, warmup_cosine_schedule
from .trainer import SUMMARY_FILE, TrainingResult, build_model, train

__all__ = [
    "PRECISIONS",
    "SAM",
    "SUMMARY_FILE",
    "MixCriterion",
    "TrainingConfig",
    "TrainingData",
    "TrainingResult",
    "build_model",
    "digits_images",
    "digits_split",
    "inspect_dataset",
    "load_training_data",
    "soft_target_cross_entropy",
    "train",
    "warmup_cosine_factor",
    "warmup_cosine_schedule",
]
