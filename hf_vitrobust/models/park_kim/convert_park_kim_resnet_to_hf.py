# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Convert Park & Kim's ResNet state dicts (github xxxnell/how-do-vits-work, models/resnet.py) to
`ParkKimResNetForImageClassification`.

Their module names: `layer0` the stem (`layer0.0` conv, `layer0.1` BN), `layer1..4` the stages, in each block
`conv1..3` (Sequential conv, BN[, ReLU]) and `shortcut` (Sequential conv, BN; empty where the block keeps its shape),
`classifier.0.dense` the linear head. The empty `smooth1..4` Sequentials of `resnet_dnn_*` hold nothing. The mapping is
one-to-one: every tensor of theirs has exactly one place here and nothing is left over, which
`convert_park_kim_resnet_state_dict` checks.
"""

import re
from collections.abc import Mapping

import torch

from ..state_dict_checks import check_fits_model
from .configuration_park_kim_resnet import ParkKimResNetConfig
from .modeling_park_kim_resnet import ParkKimResNetForImageClassification

_BLOCK = r"^layer([1-9])\.(\d+)\."
# (their pattern, our name), first match wins; `\1`, `\2` of `_BLOCK` are the stage (1-based) and the block.
_KEY_RULES: list[tuple[str, str]] = [
    (r"^layer0\.0\.weight$", "resnet.embedder.embedder.convolution.weight"),
    (r"^layer0\.1\.(.+)$", r"resnet.embedder.embedder.normalization.\1"),
    (_BLOCK + r"shortcut\.0\.weight$", "shortcut.convolution.weight"),
    (_BLOCK + r"shortcut\.1\.(.+)$", r"shortcut.normalization.\3"),
    (_BLOCK + r"conv([1-3])\.0\.weight$", "layer.{conv}.convolution.weight"),
    (_BLOCK + r"conv([1-3])\.1\.(.+)$", r"layer.{conv}.normalization.\4"),
    (r"^classifier\.0\.dense\.(weight|bias)$", r"classifier.\1"),
]


def rename_park_kim_resnet_key(key: str) -> str:
    """Our parameter name (relative to `ParkKimResNetForImageClassification`) for one of their keys."""
    for pattern, replacement in _KEY_RULES:
        match = re.match(pattern, key)
        if match is None:
            continue
        if not pattern.startswith(_BLOCK):
            return match.expand(replacement)
        stage, block = int(match.group(1)) - 1, int(match.group(2))
        suffix = match.expand(replacement)
        if "{conv}" in suffix:
            suffix = suffix.replace("{conv}", str(int(match.group(3)) - 1))
        return f"resnet.encoder.stages.{stage}.layers.{block}.{suffix}"
    raise KeyError(f"Park & Kim ResNet key {key!r} matches no conversion rule.")


def convert_park_kim_resnet_state_dict(
    state_dict: Mapping[str, torch.Tensor], config: ParkKimResNetConfig
) -> dict[str, torch.Tensor]:
    """Rename their state dict and check it against `config`: the same keys, the same shapes, nothing left over."""
    converted = {rename_park_kim_resnet_key(key): value for key, value in state_dict.items()}
    with torch.device("meta"):
        check_fits_model(
            converted,
            ParkKimResNetForImageClassification(config),
            "The checkpoint is not this ResNet (another depth, stem or number of classes?).",
        )
    return converted


__all__ = ["convert_park_kim_resnet_state_dict", "rename_park_kim_resnet_key"]
