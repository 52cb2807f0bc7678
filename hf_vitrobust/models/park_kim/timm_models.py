# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Park & Kim's CIFAR-100 ViT-Ti, PiT-Ti and Swin-Ti: timm models built with the exact arguments of the
how-do-vits-work README, and their state dicts brought from the timm they were saved with to the installed one.

The checkpoints were published in March 2022 (README commit 8752f4e), when timm was at 0.5.4. Between that layout and
timm 1.x, checked key by key and logit by logit against timm 0.5.4 itself (0.5.4 installed beside 1.0.31, random
weights, the same inputs: ViT and PiT within 1.2e-6, Swin exactly):
  - ViT: nothing changed.
  - PiT: the pooling layer between stages i and i + 1 moved from the end of stage i (`transformers.{i}.pool`) to the
    start of stage i + 1 (`transformers.{i+1}.pool`); its weights are the same.
  - Swin: likewise the patch merging (`layers.{i}.downsample` -> `layers.{i+1}.downsample`); the head became
    `head.fc`; `relative_position_index` and the shifted windows' `attn_mask` are no longer saved (timm 1.x computes
    them). Those two stored buffers are constants of the architecture: they are compared with what timm computes
    and a difference is refused, so a checkpoint of another window or image size cannot load silently.
A state dict already in timm 1.x's layout loads as it is.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import torch
from torch import nn

#: The constructor arguments of the README (num_classes=100 for CIFAR-100).
TIMM_ARCHITECTURES: dict[str, tuple[str, dict]] = {
    "vit-ti": (
        "timm.models.vision_transformer.VisionTransformer",
        {"img_size": 32, "patch_size": 2, "embed_dim": 192, "depth": 12, "num_heads": 3, "qkv_bias": False},
    ),
    "pit-ti": (
        "timm.models.pit.PoolingVisionTransformer",
        {
            "img_size": 32,
            "patch_size": 2,
            "stride": 1,
            "base_dims": [32, 32, 32],
            "depth": [2, 6, 4],
            "heads": [2, 4, 8],
            "mlp_ratio": 4,
        },
    ),
    "swin-ti": (
        "timm.models.swin_transformer.SwinTransformer",
        {
            "img_size": 32,
            "patch_size": 1,
            "window_size": 4,
            "embed_dim": 96,
            "depths": (2, 2, 6, 2),
            "num_heads": (3, 6, 12, 24),
            "qkv_bias": False,
        },
    ),
}
_SWIN_CONSTANTS = ("relative_position_index", "attn_mask")


def build_timm_model(architecture: str, num_classes: int = 100) -> nn.Module:
    """The timm model of `architecture` ("vit-ti", "pit-ti" or "swin-ti") with Park & Kim's arguments, random
    weights."""
    import importlib

    if architecture not in TIMM_ARCHITECTURES:
        raise ValueError(
            f"Unknown timm architecture {architecture!r}; choose one of {sorted(TIMM_ARCHITECTURES)}."
        )
    path, kwargs = TIMM_ARCHITECTURES[architecture]
    module_name, class_name = path.rsplit(".", 1)
    model_class = getattr(importlib.import_module(module_name), class_name)
    return model_class(num_classes=num_classes, **kwargs)


def _one_stage_later(match: re.Match) -> str:
    return f"{match[1]}.{int(match[2]) + 1}.{match[3]}"


def _rename_timm_054_key(architecture: str, key: str) -> str:
    if architecture == "pit-ti":
        return re.sub(r"^(transformers)\.(\d+)\.(pool\.)", _one_stage_later, key)
    if architecture == "swin-ti":
        key = re.sub(r"^(layers)\.(\d+)\.(downsample\.)", _one_stage_later, key)
        return re.sub(r"^head\.(weight|bias)$", r"head.fc.\1", key)
    return key


def to_current_timm_layout(
    architecture: str, state_dict: Mapping[str, torch.Tensor], model: nn.Module
) -> dict[str, torch.Tensor]:
    """`state_dict` in the layout of the installed timm's `model` (see the module docstring). A state dict already in
    that layout is returned as it is; Swin's stored constants must equal the model's."""
    expected = model.state_dict()
    if set(state_dict) == set(expected):
        return dict(state_dict)
    buffers = dict(model.named_buffers())
    converted = {}
    for key, tensor in state_dict.items():
        if architecture == "swin-ti" and key.endswith(_SWIN_CONSTANTS):
            ours = buffers.get(key)
            if ours is None or ours.shape != tensor.shape or not torch.equal(ours.to(tensor.dtype), tensor):
                raise ValueError(
                    f"The checkpoint's {key} is not the one of Park & Kim's Swin-Ti (img_size 32, patch_size 1, "
                    "window_size 4): it is another Swin."
                )
            continue
        converted[_rename_timm_054_key(architecture, key)] = tensor
    return converted


__all__ = ["TIMM_ARCHITECTURES", "build_timm_model", "to_current_timm_layout"]
