# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Feature-map statistics of Park & Kim, "How do vision transformers work?" (ICLR 2022): the Fourier spectrum of
the feature maps (Fig. 2a, Fig. 8) and their spatial variance (Fig. 9).

Park & Kim find that multi-head self-attentions (MSAs) act as low-pass filters and ensemble (aggregate) feature
maps, while convolutions act as high-pass filters and diversify them: in a ViT the high-frequency amplitude and the
feature map variance fall after every MSA, in a ResNet they rise in every stage.

Which feature maps (`layers`):
- None (default): `Classifier.feature_maps` at its `layer_names()`, the embedding and every layer or stage output;
  a list of names picks any of those or any `named_modules()` name.
- "residual-sums" (`RESIDUAL_SUMS`, Park & Kim's granularity): `Classifier.residual_sum_maps`, the embedding and
  every residual sum, i.e. after the attention residual and after the MLP residual of every ViT-style block, after
  every ResNet / BiT / AlterNet block (`hf_vitrobust.models.residual_units.find_residual_sums`). Their notebooks
  split each timm ViT block into `x + attn(norm1(x))` and `x + mlp(norm2(x))`; only at this granularity does
  Fig. 8's alternation show (MSAs lower the high-frequency amplitude, MLPs raise it).

Both probes bring every map to (N, C, h, w): CNN maps already are; token features (N, tokens, dim) are reshaped to
the patch grid after dropping the class / distillation / register tokens (see `spatial_feature_map`).

Which frequencies (`frequency_bins` of `feature_fourier`), for a square map of side h:
- "nyquist" (default): k = 0 .. h // 2 along the diagonal, so an even side ends at the (pi, pi) corner.
- "park-kim-notebook": `fourier_analysis.ipynb`'s half diagonal of the shifted spectrum, k = 0 .. ceil(h / 2) - 1:
  for even h it stops one bin short of (pi, pi), at k = h / 2 - 1; for odd h both choices coincide. On white
  noise the (pi, pi) bin alone (a real-valued DFT coefficient, like the zero frequency) reads log(2) / 2 ~ 0.35
  lower than its complex neighbours, so the two choices differ by about that much even without any filtering.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from ..models.cam_targets import TokenLayout, aspect_ratio_grid, token_layout
from ..models.classifier import Classifier
from ..models.residual_units import ResidualSum
from .base import (
    DEFAULT_BATCH_SIZE,
    ProbeInputs,
    ProbeResult,
    batch_slices,
    check_batch_size,
    check_seed,
    new_axes,
    prepare_inputs,
)
from .display import (
    SeriesData,
    bounds_at,
    curve_bounds,
    depth_figure,
    fmt_count,
    fmt_number_interval,
    number,
)
from .spec import (
    PER_IMAGE,
    ProbeFigure,
    ProbeFinding,
    ProbeNotApplicable,
    ProbeSpec,
    interval_entry,
    mean_curve,
    merged_per_image,
    per_image_of,
    per_image_record,
    register_probe,
    same_setting,
    sample_std,
    summed_values,
    total_images,
    weighted_mean,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

# The official notebook adds this before the logarithm so that zero amplitudes stay finite.
LOG_AMPLITUDE_EPS = 1e-6
# `layers` value for Park & Kim's granularity: the embedding and every residual sum.
RESIDUAL_SUMS = "residual-sums"
# `frequency_bins` values: ours (through the Nyquist corner) and the official notebook's half diagonal.
NYQUIST_BINS = "nyquist"
NOTEBOOK_BINS = "park-kim-notebook"
FREQUENCY_BINS = (NYQUIST_BINS, NOTEBOOK_BINS)


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


def check_frequency_bins(frequency_bins: str) -> str:
    """`frequency_bins` if it is one of `FREQUENCY_BINS`, else a ValueError naming them."""
    if frequency_bins not in FREQUENCY_BINS:
        raise ValueError(f"frequency_bins must be one of {FREQUENCY_BINS}, got {frequency_bins!r}.")
    return frequency_bins


def diagonal_indices(
    height: int, width: int, frequency_bins: str = NYQUIST_BINS
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Integer DFT indices (rows, cols) along the spectrum's diagonal from frequency 0 to the highest, and each
    point's frequency in units of pi (along the height axis).

    "nyquist", square maps of side h: indices k = 0 .. h // 2 on both axes, frequency 2k/h, so an even side ends
    at exactly (pi, pi), the checkerboard. Non-square maps: min(h, w) // 2 + 1 points spread evenly on each axis.

    "park-kim-notebook" (`fourier_analysis.ipynb`: `torch.roll` by (h // 2, w // 2), then `diag()[h // 2:]`),
    square maps: k = 0 .. ceil(h / 2) - 1, i.e. up to h / 2 - 1 for even h and h // 2 (as "nyquist") for odd h.
    Non-square maps (which the notebook's square reshape never makes): ceil(min(h, w) / 2) points spread evenly
    up to ceil(h / 2) - 1 and ceil(w / 2) - 1."""
    check_frequency_bins(frequency_bins)
    if frequency_bins == NOTEBOOK_BINS:
        points = (min(height, width) + 1) // 2
        last_row, last_col = (height + 1) // 2 - 1, (width + 1) // 2 - 1
    else:
        points = min(height, width) // 2 + 1
        last_row, last_col = height // 2, width // 2
    steps = torch.arange(points, dtype=torch.float64) / max(points - 1, 1)
    rows = torch.round(steps * last_row).long()
    cols = torch.round(steps * last_col).long()
    return rows, cols, rows.double() * 2 / height


def log_amplitude_diagonal(maps: torch.Tensor, frequency_bins: str = NYQUIST_BINS) -> torch.Tensor:
    """Per image, the channel-mean log amplitude log(|FFT2(map)| + 1e-6) along the spectrum's diagonal (N, points).

    The official code (`fourier_analysis.ipynb`) rolls the spectrum by half its size and takes the half diagonal
    from the centre, i.e. the unshifted spectrum at k = 0 .. ceil(h / 2) - 1 ("park-kim-notebook"). The default
    "nyquist" reads k = 0 .. h // 2: the same values plus, for even sides, the exact (pi, pi) corner (a
    checkerboard's frequency) that the notebook's half diagonal stops one bin short of (see `diagonal_indices`)."""
    height, width = maps.shape[-2:]
    rows, cols, _ = diagonal_indices(height, width, frequency_bins)
    spectrum = torch.fft.fft2(maps.to(torch.float64))
    log_amplitude = torch.log(spectrum.abs() + LOG_AMPLITUDE_EPS)
    return log_amplitude[:, :, rows.to(maps.device), cols.to(maps.device)].mean(dim=1)


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


@dataclass
class FeatureFourierResult(ProbeResult):
    """Relative log amplitudes of the Fourier-transformed feature maps, per layer (Park & Kim 2022, Fig. 2a, 8).

    layers: layer names, shallow to deep; shapes: each layer's (C, h, w).
    frequencies: per layer, the diagonal frequencies (units of pi) of its profile, 0 .. 1.
    profiles: per layer, the mean log amplitude at each frequency minus the value at frequency 0.
    delta_log_amplitude: per layer, the profile's last value: log amplitude at the highest frequency (pi for
        even-sided maps under "nyquist", (h - 2) / h pi under "park-kim-notebook") minus that at 0; higher = more
        high-frequency content. Maps with no frequency above 0 (1 x 1, or 2 x 2 under the notebook bins) get NaN.
    num_images: how many images were averaged.
    frequency_bins: which diagonal points were read ("nyquist" or "park-kim-notebook", see `diagonal_indices`).
    """

    layers: list[str]
    shapes: list[list[int]]
    frequencies: list[list[float]]
    profiles: list[list[float]]
    delta_log_amplitude: list[float]
    num_images: int
    frequency_bins: str = NYQUIST_BINS

    @classmethod
    def probe_name(cls) -> str:
        return "feature_fourier"

    def plot(self, ax: Axes | None = None) -> Axes:
        """Δ log amplitude at the highest frequency versus normalised depth (`draw_feature_fourier`, the report's
        curve; Park & Kim Fig. 8)."""
        ax = new_axes(ax)
        draw_feature_fourier({"": {"delta_log_amplitude": list(self.delta_log_amplitude)}}, ax=ax)
        ax.set_xlabel("Normalized depth")
        ax.set_ylabel(r"$\Delta$ log amplitude (high freq.)")
        if (legend := ax.get_legend()) is not None:
            legend.remove()
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
    layers: Sequence[str] | str | None = None,
    limit: int | None = None,
    frequency_bins: str = NYQUIST_BINS,
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
            outputs), or "residual-sums" for Park & Kim's points: the embedding and every residual sum (two per
            ViT block, one per ResNet / BiT / AlterNet block; `classifier.residual_sums()`).
        limit: read at most this many images of a dataset.
        frequency_bins: "nyquist" (default: k = 0 .. h // 2, up to (pi, pi)) or "park-kim-notebook" (the
            notebook's k = 0 .. ceil(h / 2) - 1); see `diagonal_indices`.
    """
    check_seed(seed)
    check_batch_size(batch_size)
    check_frequency_bins(frequency_bins)
    layers = _check_layers(layers)
    inputs = prepare_inputs(classifier, images, labels, limit=limit, require_labels=False)
    sums, shapes = log_amplitude_sums(classifier, inputs.pixels, layers, batch_size, frequency_bins)
    return feature_fourier_result(sums, shapes, len(inputs), frequency_bins)


def log_amplitude_sums(
    classifier: Classifier,
    pixels: torch.Tensor,
    layers: Sequence[str] | str | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    frequency_bins: str = NYQUIST_BINS,
) -> tuple[dict[str, torch.Tensor], dict[str, list[int]]]:
    """What `feature_fourier` averages: per layer (in network order), the sum over the images of `pixels` of the
    channel-mean log amplitude diagonal (points,) float64, and the layer's map shape (C, h, w).

    Sums over disjoint sets of images add up, so a probe split into chunks can be merged exactly with
    `feature_fourier_result` (given the same `frequency_bins`)."""
    sums, _, shapes, _ = log_amplitude_moments(classifier, pixels, layers, batch_size, frequency_bins)
    return sums, shapes


def log_amplitude_moments(
    classifier: Classifier,
    pixels: torch.Tensor,
    layers: Sequence[str] | str | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    frequency_bins: str = NYQUIST_BINS,
) -> tuple[dict[str, torch.Tensor], dict[str, float], dict[str, list[int]], torch.Tensor]:
    """`log_amplitude_sums` and, per layer, the sum over the images of the square of each image's Δ log amplitude
    (its diagonal's last value minus its first; NaN for a one-point diagonal): (sums, delta square sums, shapes,
    deltas), what the Student-t interval of `delta_log_amplitude` over images needs; `deltas` (images, layers),
    float64 on the CPU, holds every image's Δ log amplitude at every layer, for paired comparisons of models."""
    check_frequency_bins(frequency_bins)
    layers = _check_layers(layers)
    sums: dict[str, torch.Tensor] = {}
    squares: dict[str, torch.Tensor] = {}
    shapes: dict[str, list[int]] = {}
    deltas: dict[str, list[torch.Tensor]] = {}
    for _, maps in _feature_batches(classifier, pixels, layers, batch_size):
        for name, value in maps.items():
            diagonal = log_amplitude_diagonal(value, frequency_bins)
            batch_sum = diagonal.sum(dim=0)
            sums[name] = sums[name] + batch_sum if name in sums else batch_sum
            if diagonal.shape[1] > 1:
                delta = (diagonal[:, -1] - diagonal[:, 0]).double()
                batch_squares = (delta * delta).sum()
            else:
                delta = torch.full((len(diagonal),), math.nan, dtype=torch.float64, device=diagonal.device)
                batch_squares = torch.tensor(math.nan, dtype=torch.float64, device=diagonal.device)
            squares[name] = squares[name] + batch_squares if name in squares else batch_squares
            deltas.setdefault(name, []).append(delta.cpu())
            shapes[name] = list(value.shape[1:])
    per_image = torch.stack([torch.cat(deltas[name]) for name in sums], dim=1) if sums else torch.zeros(0, 0)
    return sums, {name: float(value) for name, value in squares.items()}, shapes, per_image


def feature_fourier_result(
    sums: dict[str, torch.Tensor],
    shapes: dict[str, list[int]],
    num_images: int,
    frequency_bins: str = NYQUIST_BINS,
) -> FeatureFourierResult:
    """The `FeatureFourierResult` of `num_images` images from their `log_amplitude_sums` (layers in dict order;
    `frequency_bins` as they were computed with)."""
    check_frequency_bins(frequency_bins)
    if num_images < 1:
        raise ValueError(f"num_images must be positive, got {num_images!r}.")
    names = list(sums)
    frequencies, profiles, deltas = [], [], []
    for name in names:
        mean = (sums[name] / num_images).cpu()
        profile = mean - mean[0]
        _, _, freqs = diagonal_indices(*shapes[name][-2:], frequency_bins)
        frequencies.append(freqs.tolist())
        profiles.append(profile.tolist())
        deltas.append(float(profile[-1]) if profile.numel() > 1 else math.nan)
    return FeatureFourierResult(
        names, [list(shapes[n]) for n in names], frequencies, profiles, deltas, num_images, frequency_bins
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
        """Feature map variance versus normalised depth (`draw_feature_variance`, the report's curve; Park & Kim
        Fig. 9)."""
        ax = new_axes(ax)
        draw_feature_variance({"": {"variance": list(self.variance)}}, ax=ax)
        ax.set_xlabel("Normalized depth")
        ax.set_ylabel("Feature map variance")
        ax.set_ylim(bottom=0.0)
        if (legend := ax.get_legend()) is not None:
            legend.remove()
        return ax


def feature_variance(
    classifier: Classifier,
    images: torch.Tensor | Iterable[object],
    labels: torch.Tensor | Sequence[int] | None = None,
    *,
    seed: int = 0,
    batch_size: int = DEFAULT_BATCH_SIZE,
    layers: Sequence[str] | str | None = None,
    limit: int | None = None,
) -> FeatureVarianceResult:
    """Spatial variance of the feature maps per layer (Park & Kim 2022, Fig. 9: MSAs reduce it, Convs raise it).

    For each layer, as the official `featuremap_variance.ipynb`: every channel's variance over the spatial
    positions of its (h, w) map (unbiased, `torch.var` default), averaged over channels and images. Token features
    are first put on the patch grid without the class token. Arguments as in `feature_fourier` (`layers`
    "residual-sums": the notebook's points, the embedding and every residual sum); the result does not depend on
    `batch_size`.
    """
    return _feature_variance(
        classifier, images, labels, seed=seed, batch_size=batch_size, layers=layers, limit=limit
    )[0]


def _feature_variance(
    classifier: Classifier,
    images: torch.Tensor | Iterable[object],
    labels: torch.Tensor | Sequence[int] | None = None,
    *,
    seed: int = 0,
    batch_size: int = DEFAULT_BATCH_SIZE,
    layers: Sequence[str] | str | None = None,
    limit: int | None = None,
) -> tuple[FeatureVarianceResult, list[float]]:
    """`feature_variance`, with per layer the sum over the images of the square of each image's variance (NaN for
    1 x 1 maps), what the Student-t interval of the variance over images needs."""
    check_seed(seed)
    check_batch_size(batch_size)
    layers = _check_layers(layers)
    inputs = prepare_inputs(classifier, images, labels, limit=limit, require_labels=False)
    sums: dict[str, torch.Tensor] = {}
    squares: dict[str, torch.Tensor] = {}
    shapes: dict[str, list[int]] = {}
    for _, maps in _feature_batches(classifier, inputs.pixels, layers, batch_size):
        for name, value in maps.items():
            flat = value.to(torch.float64).flatten(2)
            if flat.shape[-1] > 1:
                per_image = flat.var(dim=-1).mean(dim=1)
                batch_sum, batch_squares = per_image.sum(), (per_image * per_image).sum()
            else:
                batch_sum = torch.tensor(math.nan, dtype=torch.float64, device=value.device)
                batch_squares = batch_sum
            sums[name] = sums[name] + batch_sum if name in sums else batch_sum
            squares[name] = squares[name] + batch_squares if name in squares else batch_squares
            shapes[name] = list(value.shape[1:])
    names = list(sums)
    variances = [float(sums[name] / len(inputs)) for name in names]
    result = FeatureVarianceResult(names, [shapes[n] for n in names], variances, len(inputs))
    return result, [float(squares[name]) for name in names]


# ------------------------------------------------------------------------------------------------ the probes' specs
# Feature Fourier: a partial holds the per-layer sums of the per-image log-amplitude profiles
# (`log_amplitude_sums`); the merge divides by the total and subtracts the zero frequency. Feature variance: a
# partial holds its chunk's mean variances and its image count; the merge takes the count-weighted mean. Both also
# hold, per layer, the sum over images of the square of the per-image value ("delta_square_sum",
# "variance_square_sum"), added up by the merge: the Student-t intervals over images of `delta_log_amplitude` and
# `variance`. Feature Fourier's "per_image" keeps each image's sample id and its Δ log amplitude at every layer
# (rounded to PER_IMAGE_DECIMALS decimals), for paired comparisons of two models on the same images.
PER_IMAGE_DECIMALS = 6


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


def _fourier_partial(classifier: Classifier, inputs: ProbeInputs, seed: int, params: dict) -> dict:
    batch_size = check_batch_size(params.get("batch_size", DEFAULT_BATCH_SIZE))
    frequency_bins = check_frequency_bins(params.get("frequency_bins", NYQUIST_BINS))
    sums, squares, shapes, deltas = log_amplitude_moments(
        classifier,
        inputs.pixels,
        check_task_layers(params.get("layers"), residual_sums=True),
        batch_size,
        frequency_bins,
    )
    layers = list(sums)
    return {
        "layers": layers,
        "shapes": [list(shapes[name]) for name in layers],
        "sums": [sums[name].cpu() for name in layers],
        "frequency_bins": frequency_bins,
        "delta_square_sum": [squares[name] for name in layers],
        PER_IMAGE: per_image_record(
            inputs.sample_ids, delta_log_amplitude=torch.round(deltas, decimals=PER_IMAGE_DECIMALS)
        ),
    }


def _fourier_merge(partials: list) -> dict:
    layers = same_setting(partials, "layers")
    shapes = same_setting(partials, "shapes")
    # Partials saved before the option existed hold the only bins there were then.
    frequency_bins = same_setting([{"frequency_bins": NYQUIST_BINS, **p} for p in partials], "frequency_bins")
    sums = {name: sum(p["sums"][i] for p in partials) for i, name in enumerate(layers)}
    result = feature_fourier_result(
        sums, dict(zip(layers, shapes, strict=True)), total_images(partials), frequency_bins
    )
    merged = result.to_dict()
    merged.pop("probe")
    merged["delta_square_sum"] = summed_values(partials, "delta_square_sum")
    merged[PER_IMAGE] = merged_per_image(partials)
    return merged


def _variance_partial(classifier: Classifier, inputs: ProbeInputs, seed: int, params: dict) -> dict:
    result, squares = _feature_variance(classifier, inputs.pixels, None, seed=seed, **params)
    return {
        "layers": list(result.layers),
        "shapes": [list(shape) for shape in result.shapes],
        "variance": torch.tensor(result.variance, dtype=torch.float64),
        "variance_square_sum": squares,
    }


def _variance_merge(partials: list) -> dict:
    return {
        "layers": same_setting(partials, "layers"),
        "shapes": same_setting(partials, "shapes"),
        "variance": weighted_mean(partials, "variance"),
        "num_images": total_images(partials),
        "variance_square_sum": summed_values(partials, "variance_square_sum"),
    }


def _layer_mean_intervals(key: str, squares_key: str) -> Callable[[Mapping[str, Any], float], dict[str, Any]]:
    """The intervals function of a per-layer mean over images (`key`) from its per-layer sum of squares."""

    def intervals(probe: Mapping[str, Any], confidence_level: float) -> dict[str, Any]:
        mean, squares, count = probe.get(key), probe.get(squares_key), probe.get("num_images")
        curve = None
        if mean is not None and squares is not None and count is not None and len(mean) == len(squares):
            curve = mean_curve(mean, sample_std(mean, squares, count), count, confidence_level)
        return interval_entry(confidence_level, {key: curve})

    return intervals


def _last_finite(probe: Mapping[str, Any], key: str) -> str:
    """The last layer's finite value of `key`, with its interval where the dict has one."""
    values = list(probe.get(key) or [])
    last = next((i for i in range(len(values) - 1, -1, -1) if number(values[i]) is not None), None)
    if last is None:
        return fmt_number_interval(None, None, None)
    return fmt_number_interval(values[last], *bounds_at(curve_bounds(probe, key), last))


def mean_delta_log_amplitude(probe: Mapping[str, Any]) -> tuple[list, np.ndarray]:
    """Each image's high-frequency Δ log amplitude averaged over the layers (the area under Park & Kim's Fig. 2a
    curve at evenly spaced depths; layers without a frequency above 0 left out), from the per-image record: what
    "MSAs lower the high-frequency Δ log amplitude" compares image by image."""
    record = per_image_of(probe)
    deltas = np.asarray(record["delta_log_amplitude"], dtype=np.float64)
    if deltas.ndim != 2 or not np.isfinite(deltas).any(axis=0).any():
        raise LookupError("the feature-Fourier record has no layer with a frequency above 0")
    return record["keys"], np.nanmean(deltas[:, np.isfinite(deltas).any(axis=0)], axis=1)


def _fourier_headline(probe: Mapping[str, Any]) -> dict[str, str]:
    deltas = probe.get("delta_log_amplitude") or []
    return {
        "Δ log amplitude, last layer": _last_finite(probe, "delta_log_amplitude"),
        "layers": fmt_count(len(deltas) or None),
    }


def _variance_headline(probe: Mapping[str, Any]) -> dict[str, str]:
    return {"variance, last layer": _last_finite(probe, "variance")}


def draw_feature_fourier(data: SeriesData, ax: Axes | None = None) -> Figure | None:
    """Δ log amplitude at the highest frequency against normalised depth, one line per model (on `ax`: one)."""
    return depth_figure(
        data, "delta_log_amplitude", "Δ log amplitude (high freq.)", "Feature-map Fourier analysis", ax=ax
    )


def draw_feature_variance(data: SeriesData, ax: Axes | None = None) -> Figure | None:
    """Feature-map variance against normalised depth, one line per model (on `ax`: one)."""
    return depth_figure(data, "variance", "feature map variance", "Feature-map variance", ax=ax)


FOURIER_SPEC = register_probe(
    ProbeSpec(
        name="feature_fourier",
        probe=feature_fourier,
        result_type=FeatureFourierResult,
        selection="random",
        chunk_size=64,
        needs_labels=False,
        partial_fn=_fourier_partial,
        merge_fn=_fourier_merge,
        uses_labels=False,
        applicable_fn=features_applicable,
        choices={"frequency_bins": FREQUENCY_BINS},
        headline=_fourier_headline,
        findings=(
            ProbeFinding(
                "low-pass",
                "park-kim",
                "MSAs lower the high-frequency Δ log amplitude",
                "Park & Kim, Fig. 2a and Fig. 8 (MSAs are low-pass filters)",
                "high-frequency Δ log amplitude of the feature maps, mean over layers",
                -1,
                mean_delta_log_amplitude,
            ),
        ),
        intervals_fn=_layer_mean_intervals("delta_log_amplitude", "delta_square_sum"),
        summary_row="Δ log amplitude, last layer",
        figures={
            "feature_fourier": ProbeFigure(
                draw_feature_fourier,
                "Δ log amplitude of the feature maps at the highest frequency against normalised depth "
                "(Park & Kim Fig. 2a / Fig. 8).",
            )
        },
    )
)
VARIANCE_SPEC = register_probe(
    ProbeSpec(
        name="feature_variance",
        probe=feature_variance,
        result_type=FeatureVarianceResult,
        selection="random",
        chunk_size=64,
        needs_labels=False,
        partial_fn=_variance_partial,
        merge_fn=_variance_merge,
        uses_labels=False,
        applicable_fn=features_applicable,
        headline=_variance_headline,
        intervals_fn=_layer_mean_intervals("variance", "variance_square_sum"),
        figures={
            "feature_variance": ProbeFigure(
                draw_feature_variance, "Feature-map variance against normalised depth (Park & Kim Fig. 9)."
            )
        },
    )
)


__all__ = [
    "FOURIER_SPEC",
    "FREQUENCY_BINS",
    "NOTEBOOK_BINS",
    "NYQUIST_BINS",
    "RESIDUAL_SUMS",
    "VARIANCE_SPEC",
    "FeatureFourierResult",
    "FeatureVarianceResult",
    "check_frequency_bins",
    "check_task_layers",
    "diagonal_indices",
    "draw_feature_fourier",
    "draw_feature_variance",
    "feature_fourier",
    "feature_fourier_result",
    "feature_variance",
    "features_applicable",
    "log_amplitude_diagonal",
    "log_amplitude_moments",
    "log_amplitude_sums",
    "spatial_feature_map",
]
