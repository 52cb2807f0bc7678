# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Feature-map statistics of Park & Kim, "How do vision transformers work?" (ICLR 2022): the Fourier spectrum of
the feature maps (Fig. 2a, Fig. 8) and their spatial variance (Fig. 9).

Park & Kim find that multi-head self-attentions (MSAs) act as low-pass filters and ensemble (aggregate) feature
maps, while convolutions act as high-pass filters and diversify them: in a ViT the high-frequency amplitude and the
feature map variance fall after every MSA, in a ResNet they rise in every stage.

Feature maps come from `Classifier.feature_maps` (by default its `layer_names()`: the embedding and every layer or
stage output; any `named_modules()` name can be asked for). Both probes bring every map to (N, C, h, w): CNN maps
already are; token features (N, tokens, dim) are reshaped to the patch grid after dropping the class / distillation
/ register tokens (see `spatial_feature_map`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch

from ..models.cam_targets import token_layout
from ..models.classifier import Classifier
from .base import (
    DEFAULT_BATCH_SIZE,
    ProbeResult,
    batch_slices,
    check_batch_size,
    check_seed,
    new_axes,
    prepare_inputs,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes

# The official notebook adds this before the logarithm so that zero amplitudes stay finite.
LOG_AMPLITUDE_EPS = 1e-6


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


def diagonal_indices(height: int, width: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Integer DFT indices (rows, cols) along the spectrum's diagonal from frequency 0 to the highest, and each
    point's frequency in units of pi (along the height axis).

    Square maps of side h: indices k = 0 .. h // 2 on both axes, frequency 2k/h, so an even side ends at
    exactly (pi, pi), the checkerboard. Non-square maps: min(h, w) // 2 + 1 points spread evenly on each axis."""
    points = min(height, width) // 2 + 1
    steps = torch.arange(points, dtype=torch.float64) / max(points - 1, 1)
    rows = torch.round(steps * (height // 2)).long()
    cols = torch.round(steps * (width // 2)).long()
    return rows, cols, rows.double() * 2 / height


def log_amplitude_diagonal(maps: torch.Tensor) -> torch.Tensor:
    """Per image, the channel-mean log amplitude log(|FFT2(map)| + 1e-6) along the spectrum's diagonal (N, points).

    The official code (`fourier_analysis.ipynb`) rolls the spectrum by half its size and takes the half diagonal
    from the centre, i.e. the unshifted spectrum at k = 0 .. ceil(h / 2) - 1. Reading k = 0 .. h // 2 gives the same
    values, plus, for even sides, the exact (pi, pi) corner (a checkerboard's frequency) that the notebook's half
    diagonal stops one bin short of."""
    height, width = maps.shape[-2:]
    rows, cols, _ = diagonal_indices(height, width)
    spectrum = torch.fft.fft2(maps.to(torch.float64))
    log_amplitude = torch.log(spectrum.abs() + LOG_AMPLITUDE_EPS)
    return log_amplitude[:, :, rows.to(maps.device), cols.to(maps.device)].mean(dim=1)


def _feature_batches(
    classifier: Classifier, pixels: torch.Tensor, layers: Sequence[str] | None, batch_size: int
) -> Iterable[tuple[slice, dict[str, torch.Tensor]]]:
    for part in batch_slices(pixels.shape[0], batch_size):
        with torch.no_grad():
            maps = classifier.feature_maps(pixels[part], layers)
        yield (
            part,
            {name: spatial_feature_map(value, classifier, name) for name, value in maps.items()},
        )


def _check_layers(layers: Sequence[str] | None) -> list[str] | None:
    if layers is None:
        return None
    if isinstance(layers, str):
        raise TypeError("layers must be a sequence of names, not a single string.")
    layers = list(layers)
    if not layers:
        raise ValueError("layers is empty.")
    return layers


def _depth_axis(count: int) -> np.ndarray:
    """Normalised depth 0 .. 1 of `count` layers (Park & Kim's x axis)."""
    return np.linspace(0.0, 1.0, count) if count > 1 else np.zeros(count)


@dataclass
class FeatureFourierResult(ProbeResult):
    """Relative log amplitudes of the Fourier-transformed feature maps, per layer (Park & Kim 2022, Fig. 2a, 8).

    layers: layer names, shallow to deep; shapes: each layer's (C, h, w).
    frequencies: per layer, the diagonal frequencies (units of pi) of its profile, 0 .. 1.
    profiles: per layer, the mean log amplitude at each frequency minus the value at frequency 0.
    delta_log_amplitude: per layer, the profile's last value: log amplitude at the highest frequency (pi for
        even-sided maps) minus that at 0; higher = more high-frequency content. Maps of 1 x 1 have no
        frequency above 0 and get NaN.
    num_images: how many images were averaged.
    """

    layers: list[str]
    shapes: list[list[int]]
    frequencies: list[list[float]]
    profiles: list[list[float]]
    delta_log_amplitude: list[float]
    num_images: int

    @classmethod
    def probe_name(cls) -> str:
        return "feature_fourier"

    def plot(self, ax: Axes | None = None) -> Axes:
        """Δ log amplitude at the highest frequency versus normalised depth (Park & Kim Fig. 8)."""
        ax = new_axes(ax)
        ax.plot(_depth_axis(len(self.layers)), np.array(self.delta_log_amplitude, dtype=float), marker="o")
        ax.set_xlabel("Normalized depth")
        ax.set_ylabel(r"$\Delta$ log amplitude (high freq.)")
        ax.set_title("Feature-map Fourier analysis")
        return ax

    def plot_profiles(self, ax: Axes | None = None) -> Axes:
        """Every layer's relative log amplitude against frequency, deeper layers darker (Park & Kim Fig. 2a)."""
        from matplotlib import colormaps

        ax = new_axes(ax)
        cmap = colormaps["plasma_r"]
        for i, (freqs, profile) in enumerate(zip(self.frequencies, self.profiles, strict=True)):
            ax.plot(freqs, profile, color=cmap(i / max(len(self.layers) - 1, 1)), label=self.layers[i])
        ax.set_xlim(0.0, 1.0)
        ax.set_xlabel(r"Frequency ($\times\pi$)")
        ax.set_ylabel(r"$\Delta$ log amplitude")
        return ax


def feature_fourier(
    classifier: Classifier,
    images: torch.Tensor | Iterable[object],
    labels: torch.Tensor | Sequence[int] | None = None,
    *,
    seed: int = 0,
    batch_size: int = DEFAULT_BATCH_SIZE,
    layers: Sequence[str] | None = None,
    limit: int | None = None,
) -> FeatureFourierResult:
    """Δ log amplitude of the Fourier-transformed feature maps per layer (Park & Kim 2022, Fig. 2a and 8).

    For each layer, as in the official `fourier_analysis.ipynb`: the 2D FFT of every channel's feature map, its
    log amplitude log(|F| + 1e-6), averaged over channels and images, read along the diagonal of the spectrum from
    frequency 0 to the highest, minus the value at frequency 0. The last point (frequency pi for even-sided maps)
    is `delta_log_amplitude`: MSAs lower it (low-pass), convolutions raise it (high-pass).

    Args:
        classifier: any `Classifier`; images: pixels in [0, 1] or a dataset (see `prepare_inputs`); labels unused.
        seed: unused (the probe is deterministic), validated for the common signature.
        batch_size: images per forward pass; the result does not depend on it.
        layers: names for `classifier.feature_maps` (default: `classifier.layer_names()`, the stage or layer
            outputs). Park & Kim plot every residual block: `[u.block for u in classifier.residual_units()]`
            gives each block's output for ResNets and AlterNets.
        limit: read at most this many images of a dataset.
    """
    check_seed(seed)
    check_batch_size(batch_size)
    layers = _check_layers(layers)
    inputs = prepare_inputs(classifier, images, labels, limit=limit, require_labels=False)
    sums, shapes = log_amplitude_sums(classifier, inputs.pixels, layers, batch_size)
    return feature_fourier_result(sums, shapes, len(inputs))


def log_amplitude_sums(
    classifier: Classifier,
    pixels: torch.Tensor,
    layers: Sequence[str] | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
) -> tuple[dict[str, torch.Tensor], dict[str, list[int]]]:
    """What `feature_fourier` averages: per layer (in network order), the sum over the images of `pixels` of the
    channel-mean log amplitude diagonal (points,) float64, and the layer's map shape (C, h, w).

    Sums over disjoint sets of images add up, so a probe split into chunks can be merged exactly with
    `feature_fourier_result`."""
    sums: dict[str, torch.Tensor] = {}
    shapes: dict[str, list[int]] = {}
    for _, maps in _feature_batches(classifier, pixels, layers, batch_size):
        for name, value in maps.items():
            batch_sum = log_amplitude_diagonal(value).sum(dim=0)
            sums[name] = sums[name] + batch_sum if name in sums else batch_sum
            shapes[name] = list(value.shape[1:])
    return sums, shapes


def feature_fourier_result(
    sums: dict[str, torch.Tensor], shapes: dict[str, list[int]], num_images: int
) -> FeatureFourierResult:
    """The `FeatureFourierResult` of `num_images` images from their `log_amplitude_sums` (layers in dict order)."""
    if num_images < 1:
        raise ValueError(f"num_images must be positive, got {num_images!r}.")
    names = list(sums)
    frequencies, profiles, deltas = [], [], []
    for name in names:
        mean = (sums[name] / num_images).cpu()
        profile = mean - mean[0]
        _, _, freqs = diagonal_indices(*shapes[name][-2:])
        frequencies.append(freqs.tolist())
        profiles.append(profile.tolist())
        deltas.append(float(profile[-1]) if profile.numel() > 1 else math.nan)
    return FeatureFourierResult(
        names, [list(shapes[n]) for n in names], frequencies, profiles, deltas, num_images
    )


@dataclass
class FeatureVarianceResult(ProbeResult):
    """Feature map variance per layer (Park & Kim 2022, Fig. 9).

    layers: layer names, shallow to deep; shapes: each layer's (C, h, w).
    variance: per layer, the variance over the h x w spatial positions (unbiased, as the official
        `featuremap_variance.ipynb`'s `latent.var(dim=[-1, -2])`), averaged over channels and images; NaN for 1 x 1
        maps (a variance over one position is undefined).
    num_images: how many images were averaged.
    """

    layers: list[str]
    shapes: list[list[int]]
    variance: list[float]
    num_images: int

    @classmethod
    def probe_name(cls) -> str:
        return "feature_variance"

    def plot(self, ax: Axes | None = None) -> Axes:
        """Feature map variance versus normalised depth (Park & Kim Fig. 9)."""
        ax = new_axes(ax)
        ax.plot(_depth_axis(len(self.layers)), np.array(self.variance, dtype=float), marker="o")
        ax.set_xlabel("Normalized depth")
        ax.set_ylabel("Feature map variance")
        ax.set_ylim(bottom=0.0)
        return ax


def feature_variance(
    classifier: Classifier,
    images: torch.Tensor | Iterable[object],
    labels: torch.Tensor | Sequence[int] | None = None,
    *,
    seed: int = 0,
    batch_size: int = DEFAULT_BATCH_SIZE,
    layers: Sequence[str] | None = None,
    limit: int | None = None,
) -> FeatureVarianceResult:
    """Spatial variance of the feature maps per layer (Park & Kim 2022, Fig. 9: MSAs reduce it, Convs raise it).

    For each layer, as the official `featuremap_variance.ipynb`: every channel's variance over the spatial
    positions of its (h, w) map (unbiased, `torch.var` default), averaged over channels and images. Token features
    are first put on the patch grid without the class token. Arguments as in `feature_fourier`; the result does
    not depend on `batch_size`.
    """
    check_seed(seed)
    check_batch_size(batch_size)
    layers = _check_layers(layers)
    inputs = prepare_inputs(classifier, images, labels, limit=limit, require_labels=False)
    sums: dict[str, torch.Tensor] = {}
    shapes: dict[str, list[int]] = {}
    for _, maps in _feature_batches(classifier, inputs.pixels, layers, batch_size):
        for name, value in maps.items():
            flat = value.to(torch.float64).flatten(2)
            if flat.shape[-1] > 1:
                batch_sum = flat.var(dim=-1).mean(dim=1).sum()
            else:
                batch_sum = torch.tensor(math.nan, dtype=torch.float64, device=value.device)
            sums[name] = sums[name] + batch_sum if name in sums else batch_sum
            shapes[name] = list(value.shape[1:])
    names = list(sums)
    variances = [float(sums[name] / len(inputs)) for name in names]
    return FeatureVarianceResult(names, [shapes[n] for n in names], variances, len(inputs))


__all__ = [
    "FeatureFourierResult",
    "FeatureVarianceResult",
    "diagonal_indices",
    "feature_fourier",
    "feature_fourier_result",
    "feature_variance",
    "log_amplitude_diagonal",
    "log_amplitude_sums",
    "spatial_feature_map",
]
