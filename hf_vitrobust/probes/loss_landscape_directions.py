# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The random directions of the loss landscape probe (`loss_landscape.py`): Gaussian directions in weight space from
the counter-based normal stream keyed by (seed, direction index) (`random_direction`), rescaled to the scale of the
weights by Li et al.'s filter normalisation or Park & Kim's `normalize_filter` (`normalize_direction`,
`NORMALIZATIONS`), with zero directions for tensors of fewer than two dimensions and for those `exclude` names
(`PARK_KIM_EXCLUDE`), and the tensors a landscape moves (`landscape_tensors`)."""

from __future__ import annotations

import re
from collections.abc import Sequence

import torch

from ..corruptions.randomness import normal
from ..models.classifier import Classifier
from .base import check_seed

_STREAM = "loss_landscape/direction"
NORMALIZATIONS = ("filter", "park-kim")
# The `kws` of Park & Kim's losslandscape.ipynb.
PARK_KIM_EXCLUDE = ("pos_embed", "relative_position")
# Other libraries' names of a tensor that `exclude` patterns see as well (transformers' absolute position embeddings).
_NAME_ALIASES = (("position_embeddings", "pos_embed"),)
# Park & Kim's normalize_filter adds this to the direction's norm.
_PARK_KIM_EPS = 1e-7


def _check_choice(value: str, choices: tuple[str, ...], what: str) -> str:
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{what} must be one of {list(choices)}, got {value!r}.")
    return value


def _compile_exclude(exclude: Sequence[str]) -> list[re.Pattern]:
    if isinstance(exclude, str):
        raise ValueError("exclude must be a sequence of regular expressions, not a single string.")
    return [re.compile(pattern) for pattern in exclude]


def _excluded(name: str, patterns: list[re.Pattern]) -> bool:
    names = [name] + [name.replace(old, new) for old, new in _NAME_ALIASES if old in name]
    return any(pattern.search(candidate) for pattern in patterns for candidate in names)


def random_direction(
    tensors: dict[str, torch.Tensor], *, seed: int = 0, index: int = 0
) -> dict[str, torch.Tensor]:
    """A float32 standard-normal tensor shaped like each of `tensors` (in their order), from the counter-based
    stream keyed by (seed, index): the raw basis that `normalize_direction` rescales."""
    seed = check_seed(seed)
    if not tensors:
        raise ValueError("No parameters.")
    first = next(iter(tensors.values()))
    total = sum(t.numel() for t in tensors.values())
    ids = torch.tensor([index], dtype=torch.int64, device=first.device)
    flat = normal(seed, ids, _STREAM, (total,), dtype=torch.float32)[0]
    raw: dict[str, torch.Tensor] = {}
    offset = 0
    for name, tensor in tensors.items():
        raw[name] = flat[offset : offset + tensor.numel()].view(tensor.shape)
        offset += tensor.numel()
    return raw


def normalize_direction(
    raw: dict[str, torch.Tensor],
    weights: dict[str, torch.Tensor],
    *,
    normalization: str = "filter",
    exclude: Sequence[str] = (),
) -> dict[str, torch.Tensor]:
    """Rescale a raw direction to the scale of `weights` (see the module docstring): "filter" is Li et al.'s Eq. 1
    (per filter, the slice along dim 0); "park-kim" their `normalize_filter` (the norm along dim 0, + 1e-7). Tensors
    with fewer than two dimensions and those whose name matches a regular expression of `exclude` get zeros (their
    `ignore_bn`, `ignore_kw`). Returns a direction in each weight's dtype."""
    _check_choice(normalization, NORMALIZATIONS, "normalization")
    patterns = _compile_exclude(exclude)
    if raw.keys() != weights.keys():
        raise ValueError("raw and weights must have the same names.")
    directions: dict[str, torch.Tensor] = {}
    for name, param in weights.items():
        direction = raw[name]
        if direction.shape != param.shape:
            raise ValueError(f"{name}: direction {tuple(direction.shape)} vs weight {tuple(param.shape)}.")
        if param.ndim < 2 or _excluded(name, patterns):
            directions[name] = torch.zeros_like(param)
            continue
        weight = param.detach().float()
        if normalization == "filter":
            raw_norm = direction.flatten(1).norm(dim=1).view(-1, *([1] * (param.ndim - 1)))
            weight_norm = weight.flatten(1).norm(dim=1).view(-1, *([1] * (param.ndim - 1)))
            directions[name] = (direction * (weight_norm / raw_norm.clamp_min(1e-12))).to(param.dtype)
        else:
            direction = direction.float()
            weight_norm = torch.linalg.vector_norm(weight, dim=0, keepdim=True)
            raw_norm = torch.linalg.vector_norm(direction, dim=0, keepdim=True)
            directions[name] = (weight_norm / (raw_norm + _PARK_KIM_EPS) * direction).to(param.dtype)
    return directions


def filter_normalized_direction(
    params: dict[str, torch.Tensor],
    *,
    seed: int = 0,
    index: int = 0,
    exclude: Sequence[str] = (),
    normalization: str = "filter",
) -> dict[str, torch.Tensor]:
    """A random Gaussian direction shaped like `params` (`random_direction`), normalised (`normalize_direction`:
    Li et al.'s per-filter Eq. 1 by default, or Park & Kim's "park-kim"). `index` selects the direction (0 and 1
    for the two axes of a landscape)."""
    raw = random_direction(params, seed=seed, index=index)
    return normalize_direction(raw, params, normalization=normalization, exclude=exclude)


def landscape_tensors(classifier: Classifier, normalization: str = "filter") -> dict[str, torch.Tensor]:
    """The tensors a landscape moves, detached: the parameters ("filter"), or for "park-kim" the model's state_dict
    entries (in its order) that are parameters or floating-point persistent buffers, as Park & Kim's `create_bases`
    (tied aliases and integer buffers, whose direction would be zero or truncated, are left out)."""
    _check_choice(normalization, NORMALIZATIONS, "normalization")
    params = {name: p.detach() for name, p in classifier.named_parameters()}
    if normalization == "filter":
        return params
    buffers = dict(classifier.named_buffers())
    tensors: dict[str, torch.Tensor] = {}
    for name in classifier.state_dict():
        if name in params:
            tensors[name] = params[name]
        elif name in buffers and buffers[name].is_floating_point():
            tensors[name] = buffers[name].detach()
    return tensors


__all__ = [
    "NORMALIZATIONS",
    "PARK_KIM_EXCLUDE",
    "filter_normalized_direction",
    "landscape_tensors",
    "normalize_direction",
    "random_direction",
]
