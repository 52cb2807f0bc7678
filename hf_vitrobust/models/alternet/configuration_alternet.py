# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""AlterNet model configuration.

AlterNet (Park & Kim, "How Do Vision Transformers Work?", ICLR 2022, Sec. 4) is a pre-activation ResNet whose
stage-ending conv blocks are replaced by windowed multi-head self-attention (MSA) blocks. Each stage ``i`` is
``[conv] * (depths[i] - 2 * attention_depths[i]) + [conv, msa] * attention_depths[i]``.

The config is a `@strict` dataclass, as transformers' own configs: its fields are type-checked on assignment and its
`validate_*` methods run after `__init__` and before every save.

This file imports only transformers (and `huggingface_hub`, which transformers requires) and the standard library, so
that it can be copied to the Hub as remote code.
"""

import copy
from typing import Any, ClassVar

from huggingface_hub.dataclasses import strict
from transformers import PreTrainedConfig

# The official ImageNet layouts (github xxxnell/how-do-vits-work, models/alternet.py: dnn_18 ... dnn_152) and the
# paper's CIFAR-100 model (Appendix B: MSAs at the end of stages 2-4, no stem pooling, 4x4 windows, stochastic
# depth 0.1), plus a tiny preset for tests (32x32 inputs).
ALTERNET_PRESETS: dict[str, dict[str, Any]] = {
    "alternet-18": {"layer_type": "basic", "depths": [2, 2, 2, 2], "attention_depths": [0, 1, 1, 1]},
    "alternet-34": {"layer_type": "basic", "depths": [3, 4, 6, 4], "attention_depths": [0, 1, 3, 2]},
    "alternet-50": {"layer_type": "bottleneck", "depths": [3, 4, 6, 4], "attention_depths": [0, 1, 3, 2]},
    "alternet-101": {"layer_type": "bottleneck", "depths": [3, 4, 23, 4], "attention_depths": [0, 1, 3, 2]},
    "alternet-152": {"layer_type": "bottleneck", "depths": [3, 8, 36, 4], "attention_depths": [0, 1, 3, 2]},
    "alternet-50-cifar": {
        "layer_type": "bottleneck",
        "depths": [3, 4, 6, 4],
        "attention_depths": [0, 1, 1, 2],
        "stem_pool": False,
        "window_sizes": [4, 4, 4, 4],
        "drop_path_rate": 0.1,
        "image_size": 32,
        "num_labels": 100,
    },
    "alternet-tiny": {
        "layer_type": "basic",
        "embedding_size": 8,
        "hidden_sizes": [8, 16, 24, 32],
        "depths": [1, 2, 2, 2],
        "attention_depths": [0, 1, 1, 1],
        "num_heads": [1, 2, 2, 4],
        "attention_head_size": 8,
        "window_sizes": [4, 4, 4, 4],
        "stem_pool": False,
        "image_size": 32,
        "num_labels": 10,
    },
}


@strict
class AlterNetConfig(PreTrainedConfig):
    r"""
    Configuration of an [`AlterNetModel`]. The defaults give the official AlterNet-50 ImageNet layout (dnn_50).

    Args:
        num_channels (`int`, defaults to 3): Number of input channels.
        embedding_size (`int`, defaults to 64): Width of the stem convolution.
        hidden_sizes (`list[int]`, defaults to `[64, 128, 256, 512]`): Base width of each stage. A stage outputs
            `hidden_sizes[i] * expansion` channels, with expansion 4 for bottleneck and 1 for basic blocks.
        strides (`list[int]`, defaults to `[1, 2, 2, 2]`): Stride of the first block of each stage.
        depths (`list[int]`, defaults to `[3, 4, 6, 4]`): Total number of blocks per stage (`n1`).
        attention_depths (`list[int]`, defaults to `[0, 1, 3, 2]`): Number of MSA blocks per stage (`n2`); each
            one follows a conv block at the end of the stage, so `2 * n2 <= n1`.
        num_heads (`list[int]`, defaults to `[3, 6, 12, 24]`): Attention heads per stage.
        attention_head_size (`int`, defaults to 64): Width of one head; an MSA block is `heads * 64` wide whatever
            the stage width, as in the official code.
        window_sizes (`list[int]`, defaults to `[7, 7, 7, 7]`): Side of the non-overlapping attention windows.
        layer_type (`str`, defaults to `"bottleneck"`): `"basic"` (AlterNet-18/34) or `"bottleneck"` (50/101/152).
        stem_pool (`bool`, defaults to `True`): 7x7/2 conv + 3x3/2 max-pool stem (ImageNet) if `True`, a 3x3/1
            conv stem (CIFAR) if `False`.
        drop_path_rate (`float`, defaults to 0.0): Stochastic depth of the last block; it rises linearly from 0
            over the block index.
        hidden_dropout_prob (`float`, defaults to 0.0): Dropout after the attention output projection.
        initializer_range (`float`, defaults to 0.02): Std of the relative position bias table at initialisation.
        image_size (`int`, defaults to 224): Training resolution, used by the saved image processor.

    The attention kernel is not a field: it is `attn_implementation` ("sdpa", the default, or "eager"), as for every
    transformers model (`from_pretrained(..., attn_implementation="eager")`, `model.set_attn_implementation("eager")`).
    """

    model_type = "alternet"
    layer_types: ClassVar[list[str]] = ["basic", "bottleneck"]

    num_channels: int = 3
    embedding_size: int = 64
    hidden_sizes: list[int] | tuple[int, ...] = (64, 128, 256, 512)
    strides: list[int] | tuple[int, ...] = (1, 2, 2, 2)
    depths: list[int] | tuple[int, ...] = (3, 4, 6, 4)
    attention_depths: list[int] | tuple[int, ...] = (0, 1, 3, 2)
    num_heads: list[int] | tuple[int, ...] = (3, 6, 12, 24)
    attention_head_size: int = 64
    window_sizes: list[int] | tuple[int, ...] = (7, 7, 7, 7)
    layer_type: str = "bottleneck"
    stem_pool: bool = True
    drop_path_rate: int | float = 0.0
    hidden_dropout_prob: int | float = 0.0
    initializer_range: int | float = 0.02
    image_size: int = 224

    def __post_init__(self, **kwargs):
        for name in ("hidden_sizes", "strides", "depths", "attention_depths", "num_heads", "window_sizes"):
            setattr(self, name, list(getattr(self, name)))
        self.check_architecture()
        super().__post_init__(**kwargs)

    @property
    def expansion(self) -> int:
        """Channel expansion of the blocks: 4 for bottleneck, 1 for basic."""
        return 4 if self.layer_type == "bottleneck" else 1

    @property
    def num_stages(self) -> int:
        return len(self.depths)

    def stage_out_channels(self, stage: int) -> int:
        return self.hidden_sizes[stage] * self.expansion

    def check_architecture(self) -> None:
        """Run the `validate_*` checks in order: a ValueError naming the field and the rule when the layout cannot be
        built. `__init__` calls it, so that a bad config is a plain ValueError when it is made (the `@strict` checks
        that follow, and those before each save, wrap the same errors in `StrictDataclassClassValidationError`)."""
        self.validate_layer_type()
        self.validate_architecture()
        self.validate_rates()

    def validate_layer_type(self) -> None:
        """Part of `@strict`-powered validation: `layer_type` is "basic" or "bottleneck"."""
        if self.layer_type not in self.layer_types:
            raise ValueError(f"layer_type must be one of {self.layer_types}, got {self.layer_type!r}.")

    def validate_architecture(self) -> None:
        """Part of `@strict`-powered validation: one entry per stage in every per-stage list, positive sizes, and
        room for each attention block's conv block in its stage."""
        per_stage = ("hidden_sizes", "strides", "depths", "attention_depths", "num_heads", "window_sizes")
        num_stages = len(self.depths)
        if num_stages == 0:
            raise ValueError("depths must name at least one stage, got an empty list.")
        for name in per_stage:
            if len(getattr(self, name)) != num_stages:
                raise ValueError(
                    f"{name} has {len(getattr(self, name))} entries but depths has {num_stages}: every per-stage "
                    f"list ({', '.join(per_stage)}) needs one entry per stage."
                )
        positive = ("hidden_sizes", "strides", "num_heads", "window_sizes")
        for name in positive:
            for stage, value in enumerate(getattr(self, name)):
                if value <= 0:
                    raise ValueError(f"{name}[{stage}] must be positive, got {value}.")
        for stage, (n1, n2) in enumerate(zip(self.depths, self.attention_depths, strict=True)):
            if n1 < 0:
                raise ValueError(f"depths[{stage}] must not be negative, got {n1}.")
            if n2 < 0:
                raise ValueError(f"attention_depths[{stage}] must not be negative, got {n2}.")
            if 2 * n2 > n1:
                raise ValueError(
                    f"attention_depths[{stage}]={n2} does not fit depths[{stage}]={n1}: each attention block follows "
                    f"a conv block, so 2 * attention_depths[{stage}] must be <= depths[{stage}]."
                )
        for name in ("num_channels", "embedding_size", "attention_head_size", "image_size"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)}.")

    def validate_rates(self) -> None:
        """Part of `@strict`-powered validation: the stochastic depth and dropout rates are in [0, 1)."""
        for name in ("drop_path_rate", "hidden_dropout_prob"):
            if not 0.0 <= getattr(self, name) < 1.0:
                raise ValueError(f"{name} must be in [0, 1), got {getattr(self, name)}.")

    @classmethod
    def from_preset(cls, name: str, **overrides: Any) -> "AlterNetConfig":
        """Build the config of a named layout (see `ALTERNET_PRESETS`), with optional field overrides."""
        if name not in ALTERNET_PRESETS:
            raise ValueError(f"Unknown AlterNet preset {name!r}; choose one of {sorted(ALTERNET_PRESETS)}.")
        return cls(**{**copy.deepcopy(ALTERNET_PRESETS[name]), **overrides})


# `save_pretrained` copies this file beside the weights and writes `auto_map`, so that the folder loads with
# `trust_remote_code=True` where hf_vitrobust is not installed.
AlterNetConfig.register_for_auto_class()

__all__ = ["ALTERNET_PRESETS", "AlterNetConfig"]
