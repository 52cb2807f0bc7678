# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The feature maps the feature probes read (`features.py`: Fourier spectrum and variance; `similarity.py`: CKA),
as (N, C, h, w): a classifier's layer outputs or, at Park & Kim's granularity (`RESIDUAL_SUMS`), its residual sums,
token features put on the patch grid (`spatial_feature_map`); and the checks of a probe's `layers` and of whether a
classifier has feature maps to read (`features_applicable`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import torch

from ..models.cam_targets import TokenLayout, aspect_ratio_grid, token_layout
from ..models.classifier import Classifier
from ..models.residual_units import ResidualSum
from .base import batch_slices
from .spec import ProbeNotApplicable

# `layers` value for Park & Kim's granularity: the embedding and every residual sum.
RESIDUAL_SUMS = "residual-sums"


def spatial_feature_map(features: torch.Tensor, classifier: Classifier, layer: str = "") -> torch.Tensor:
    """A feature map as (N, C, h, w): NCHW maps unchanged; ViT tokens (N, tokens, dim) put on the patch grid (row
    major, as patch embeddings flatten it) without the leading class / distillation / register tokens, as Park & Kim
    drop the class token before their Fourier and variance analyses. The token layout comes from the adapter
    (`hf_vitrobust.models.cam_targets.token_layout`: the model's patch size, else the input's aspect ratio)."""
    if features.ndim == 4:
        return features
    if features.ndim == 3:
        return token_layout(classifier, int(features.shape[1])).to_grid(features)
    raise ValueError(
        f"Layer {layer!r}: expected a feature map (N, C, H, W) or tokens (N, tokens, dim), got shape "
        f"{tuple(features.shape)}."
    )


def _residual_sum_map(features: torch.Tensor, point: ResidualSum, classifier: Classifier) -> torch.Tensor:
    """`spatial_feature_map` of a residual sum, with the class-token count the model declares where it has one
    that the token layout cannot infer (timm PiT)."""
    if features.ndim != 3 or point.num_prefix_tokens is None:
        return spatial_feature_map(features, classifier, point.name)
    patches = int(features.shape[1]) - point.num_prefix_tokens
    height, width = classifier.input_size
    grid = aspect_ratio_grid(patches, height, width)
    if grid is None:
        raise ValueError(
            f"Layer {point.name!r}: cannot place {patches} patch tokens on a {height}x{width} image's grid."
        )
    return TokenLayout(point.num_prefix_tokens, grid).to_grid(features)


def _feature_batches(
    classifier: Classifier, pixels: torch.Tensor, layers: Sequence[str] | str | None, batch_size: int
) -> Iterable[tuple[slice, dict[str, torch.Tensor]]]:
    points = {point.name: point for point in classifier.residual_sums()} if layers == RESIDUAL_SUMS else {}
    for part in batch_slices(pixels.shape[0], batch_size):
        with torch.no_grad():
            if layers == RESIDUAL_SUMS:
                maps = classifier.residual_sum_maps(pixels[part])
                spatial = {
                    name: _residual_sum_map(value, points[name], classifier) for name, value in maps.items()
                }
            else:
                maps = classifier.feature_maps(pixels[part], layers)
                spatial = {name: spatial_feature_map(value, classifier, name) for name, value in maps.items()}
        yield part, spatial


def _check_layers(layers: Sequence[str] | str | None) -> list[str] | str | None:
    if layers is None or layers == RESIDUAL_SUMS:
        return layers
    if isinstance(layers, str):
        raise TypeError(
            f"layers must be None, {RESIDUAL_SUMS!r} or a sequence of names, not a single string ({layers!r})."
        )
    layers = list(layers)
    if not layers:
        raise ValueError("layers is empty.")
    return layers


def _depth_axis(count: int) -> np.ndarray:
    """Normalised depth 0 .. 1 of `count` layers (Park & Kim's x axis)."""
    return np.linspace(0.0, 1.0, count) if count > 1 else np.zeros(count)


def check_task_layers(layers: Any, residual_sums: bool = False) -> list[str] | str | None:
    """A runner probe's `layers`: None, a non-empty list of names, or (where `residual_sums`: the feature probes)
    "residual-sums"."""
    if layers is None or (residual_sums and layers == RESIDUAL_SUMS):
        return layers
    if isinstance(layers, str) or not isinstance(layers, Sequence) or not layers:
        also = f", or {RESIDUAL_SUMS!r}" if residual_sums else ""
        raise ValueError(f"layers must be a non-empty list of layer names{also}, got {layers!r}.")
    return [str(name) for name in layers]


def features_applicable(classifier: Classifier, params: dict) -> None:
    """`ProbeNotApplicable` when the classifier has no residual sums (layers "residual-sums") or no feature layers
    (layers None) to read."""
    if params.get("layers") == RESIDUAL_SUMS:
        try:
            classifier.residual_sums()
        except (ValueError, TypeError) as err:
            raise ProbeNotApplicable(f"{classifier.name!r} has no known residual sums: {err}") from err
    elif params.get("layers") is None:
        try:
            names = classifier.layer_names()
        except (ValueError, TypeError, NotImplementedError) as err:
            raise ProbeNotApplicable(f"{classifier.name!r} reports no feature layers: {err}") from err
        if not names:
            raise ProbeNotApplicable(f"{classifier.name!r} reports no feature layers.")


__all__ = ["RESIDUAL_SUMS", "check_task_layers", "features_applicable", "spatial_feature_map"]
