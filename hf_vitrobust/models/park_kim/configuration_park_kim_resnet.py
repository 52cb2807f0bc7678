# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Configuration of Park & Kim's own ResNet (github xxxnell/how-do-vits-work, models/resnet.py, `resnet_dnn_*`).

Their ResNet is a post-activation ResNet (conv -> BN -> ReLU, the residual sum followed by ReLU) like torchvision's,
with two differences that matter for their CIFAR-100 checkpoint: the stem is one 3x3 stride-1 convolution without
max-pooling when `stem=False` (the CIFAR models, `configs/cifar100_*.yaml`: `stem: false`), and the head is global
average pooling and one linear layer (`classifier_block.GAPBlock`). The defaults give their `resnet_dnn_50` as
released for CIFAR-100 (`resnet_50_cifar100_691cc9a9e4.pth.tar`), except `num_labels`, which the converter sets.

This file imports only transformers (and `huggingface_hub`, which transformers requires) and the standard library, so
that it can be copied to the Hub as remote code.
"""

from typing import ClassVar

from huggingface_hub.dataclasses import strict
from transformers import PreTrainedConfig


@strict
class ParkKimResNetConfig(PreTrainedConfig):
    r"""
    Configuration of a [`ParkKimResNetModel`].

    Args:
        num_channels (`int`, defaults to 3): Number of input channels.
        embedding_size (`int`, defaults to 64): Width of the stem convolution.
        hidden_sizes (`list[int]`, defaults to `[64, 128, 256, 512]`): Base width of each stage; a stage outputs
            `hidden_sizes[i] * expansion` channels (expansion 4 for bottleneck, 1 for basic blocks).
        depths (`list[int]`, defaults to `[3, 4, 6, 3]`): Blocks per stage (`dnn_18`: 2, 2, 2, 2; `dnn_34` and
            `dnn_50`: 3, 4, 6, 3; `dnn_101`: 3, 4, 23, 3; `dnn_152`: 3, 8, 36, 3).
        layer_type (`str`, defaults to `"bottleneck"`): `"basic"` (ResNet-18/34) or `"bottleneck"` (50/101/152).
        stem_pool (`bool`, defaults to `False`): their `stem=True`, a 7x7/2 conv and a 3x3/2 max-pool (ImageNet); with
            `False` one 3x3/1 conv (CIFAR).
        drop_path_rate (`float`, defaults to 0.0): their `sd`, the stochastic depth of the last block, rising linearly
            from 0 over the block index; it has no weights and does nothing in evaluation.
        image_size (`int`, defaults to 32): Training resolution.
    """

    model_type = "park_kim_resnet"
    layer_types: ClassVar[list[str]] = ["basic", "bottleneck"]

    num_channels: int = 3
    embedding_size: int = 64
    hidden_sizes: list[int] | tuple[int, ...] = (64, 128, 256, 512)
    depths: list[int] | tuple[int, ...] = (3, 4, 6, 3)
    layer_type: str = "bottleneck"
    stem_pool: bool = False
    drop_path_rate: int | float = 0.0
    image_size: int = 32

    def __post_init__(self, **kwargs):
        self.hidden_sizes = list(self.hidden_sizes)
        self.depths = list(self.depths)
        self.validate_architecture()
        super().__post_init__(**kwargs)

    @property
    def expansion(self) -> int:
        """Channel expansion of the blocks: 4 for bottleneck, 1 for basic."""
        return 4 if self.layer_type == "bottleneck" else 1

    def validate_architecture(self) -> None:
        """Part of `@strict`-powered validation: a ValueError naming the field when the layout cannot be built."""
        if self.layer_type not in self.layer_types:
            raise ValueError(f"layer_type must be one of {self.layer_types}, got {self.layer_type!r}.")
        if len(self.hidden_sizes) != len(self.depths) or not self.depths:
            raise ValueError(
                f"hidden_sizes and depths need one entry per stage, got {self.hidden_sizes} and {self.depths}."
            )
        for name in ("hidden_sizes", "depths"):
            if min(getattr(self, name)) <= 0:
                raise ValueError(f"every entry of {name} must be positive, got {getattr(self, name)}.")
        for name in ("num_channels", "embedding_size", "image_size"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)}.")
        if not 0.0 <= self.drop_path_rate < 1.0:
            raise ValueError(f"drop_path_rate must be in [0, 1), got {self.drop_path_rate}.")


# `save_pretrained` copies this file beside the weights and writes `auto_map`, so that the folder loads with
# `trust_remote_code=True` where hf_vitrobust is not installed.
ParkKimResNetConfig.register_for_auto_class()

__all__ = ["ParkKimResNetConfig"]
