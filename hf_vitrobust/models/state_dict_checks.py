# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The check every checkpoint converter ends with: the renamed tensors are exactly the model's, key for key and
shape for shape (AlterNet's official checkpoints, Park & Kim's ResNet)."""

from __future__ import annotations

from collections.abc import Mapping

import torch
from torch import nn


def check_fits_model(converted: Mapping[str, torch.Tensor], model: nn.Module, mismatch_hint: str) -> None:
    """Raise a ValueError unless `converted` has exactly the keys of `model`'s state dict (built on the meta device
    by the caller, so nothing is allocated) with the same shapes; `mismatch_hint` opens the message of a key
    mismatch and says what is likely wrong."""
    expected = model.state_dict()
    missing = sorted(set(expected) - set(converted))
    unexpected = sorted(set(converted) - set(expected))
    if missing or unexpected:
        raise ValueError(
            f"{mismatch_hint} "
            f"Missing: {missing[:8]}{' ...' if len(missing) > 8 else ''}; "
            f"unexpected: {unexpected[:8]}{' ...' if len(unexpected) > 8 else ''}."
        )
    for key, tensor in converted.items():
        if tuple(tensor.shape) != tuple(expected[key].shape):
            raise ValueError(
                f"Shape mismatch for {key}: checkpoint {tuple(tensor.shape)}, config {tuple(expected[key].shape)}."
            )


__all__ = ["check_fits_model"]
