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

from ..metrics.intervals import NON_NEGATIVE, UNBOUNDED, Support
from ..models.classifier import Classifier
from .base import (
    DEFAULT_BATCH_SIZE,
    ProbeInputs,
    ProbeResult,
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
from .feature_maps import (
    RESIDUAL_SUMS,
    _check_layers,
    _feature_batches,
    check_task_layers,
    features_applicable,
)
from .feature_spectrum import (
    FREQUENCY_BINS,
    NYQUIST_BINS,
    check_frequency_bins,
    diagonal_indices,
    log_amplitude_moments,
    log_amplitude_sums,
)
from .intervals import interval_entry, mean_curve, sample_std
from .param_checks import calls
from .per_image import PER_IMAGE, merged_per_image, per_image_of, per_image_record
from .spec import (
    ProbeFigure,
    ProbeFinding,
    ProbeSpec,
    register_probe,
    same_setting,
    summed_values,
    total_images,
    weighted_mean,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


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
) -> tuple[FeatureVarianceResult, list[float], torch.Tensor]:
    """`feature_variance`, with per layer the sum over the images of the square of each image's variance (NaN for
    1 x 1 maps), what the Student-t interval of the variance over images needs, and each image's variance per layer
    (images, layers), float64 on the CPU."""
    check_seed(seed)
    check_batch_size(batch_size)
    layers = _check_layers(layers)
    inputs = prepare_inputs(classifier, images, labels, limit=limit, require_labels=False)
    per_layer: dict[str, list[torch.Tensor]] = {}
    shapes: dict[str, list[int]] = {}
    for _, maps in _feature_batches(classifier, inputs.pixels, layers, batch_size):
        for name, value in maps.items():
            flat = value.to(torch.float64).flatten(2)
            if flat.shape[-1] > 1:
                per_image = flat.var(dim=-1).mean(dim=1)
            else:
                per_image = torch.full((flat.shape[0],), math.nan, dtype=torch.float64, device=value.device)
            per_layer.setdefault(name, []).append(per_image.cpu())
            shapes[name] = list(value.shape[1:])
    names = list(per_layer)
    per_image_variance = torch.stack([torch.cat(per_layer[name]) for name in names], dim=1)
    variances = per_image_variance.mean(dim=0).tolist()
    squares = (per_image_variance * per_image_variance).sum(dim=0).tolist()
    result = FeatureVarianceResult(names, [shapes[n] for n in names], variances, len(inputs))
    return result, squares, per_image_variance


# ------------------------------------------------------------------------------------------------ the probes' specs
# Feature Fourier: a partial holds the per-layer sums of the per-image log-amplitude profiles
# (`log_amplitude_sums`); the merge divides by the total and subtracts the zero frequency. Feature variance: a
# partial holds its chunk's mean variances and its image count; the merge takes the count-weighted mean. Both also
# hold, per layer, the sum over images of the square of the per-image value ("delta_square_sum",
# "variance_square_sum"), added up by the merge: the Student-t intervals over images of `delta_log_amplitude` and
# `variance`. Feature Fourier's "per_image" keeps each image's sample id and its Δ log amplitude at every layer
# (rounded to PER_IMAGE_DECIMALS decimals), for paired comparisons of two models on the same images.
PER_IMAGE_DECIMALS = 6


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
    result, squares, per_image = _feature_variance(classifier, inputs.pixels, None, seed=seed, **params)
    return {
        "layers": list(result.layers),
        "shapes": [list(shape) for shape in result.shapes],
        "variance": torch.tensor(result.variance, dtype=torch.float64),
        "variance_square_sum": squares,
        PER_IMAGE: per_image_record(inputs.sample_ids, variance=per_image),
    }


def _variance_merge(partials: list) -> dict:
    return {
        "layers": same_setting(partials, "layers"),
        "shapes": same_setting(partials, "shapes"),
        "variance": weighted_mean(partials, "variance"),
        "num_images": total_images(partials),
        "variance_square_sum": summed_values(partials, "variance_square_sum"),
        PER_IMAGE: merged_per_image(partials),
    }


def variance_change(kind: str) -> Callable[[Mapping[str, Any]], tuple[list, np.ndarray]]:
    """The per-image quantity of Park & Kim's Fig. 9 claims at the residual sums of one `kind` ("msa", "conv"):
    each image's feature-map variance after each such residual sum minus at the point before it (the previous
    residual sum, or the embedding), averaged over those sums. A sum whose map differs in size from the point before
    is a subsampling step (Fig. 9's blue areas: a strided block, a Swin patch merging) and is left out, as is one
    on 1 x 1 maps (no spatial variance). Needs the
    probe run with layers "residual-sums" (the names "<block>:<kind>")."""

    def per_image(probe: Mapping[str, Any]) -> tuple[list, np.ndarray]:
        layers, shapes = list(probe.get("layers") or []), list(probe.get("shapes") or [])
        record = per_image_of(probe)
        variance = np.asarray(record["variance"], dtype=np.float64)
        picked = [
            i
            for i in range(1, len(layers))
            if str(layers[i]).endswith(f":{kind}")
            and list(shapes[i][-2:]) == list(shapes[i - 1][-2:])
            and int(np.prod(shapes[i][-2:])) > 1
        ]
        if not picked:
            raise LookupError(
                f"the feature-variance record has no {kind} residual sum that keeps its map size (run the probe "
                f"with layers: {RESIDUAL_SUMS})"
            )
        after = np.asarray(picked)
        return record["keys"], np.mean(variance[:, after] - variance[:, after - 1], axis=1)

    return per_image


def _layer_mean_intervals(
    key: str, squares_key: str, support: Support = UNBOUNDED
) -> Callable[[Mapping[str, Any], float], dict[str, Any]]:
    """The intervals function of a per-layer mean over images (`key`) from its per-layer sum of squares, clipped to
    the per-image values' `support`."""

    def intervals(probe: Mapping[str, Any], confidence_level: float) -> dict[str, Any]:
        mean, squares, count = probe.get(key), probe.get(squares_key), probe.get("num_images")
        curve = None
        if mean is not None and squares is not None and count is not None and len(mean) == len(squares):
            curve = mean_curve(mean, sample_std(mean, squares, count), count, confidence_level, support)
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
        value_checks={"layers": calls(lambda layers: check_task_layers(layers, residual_sums=True))},
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
        value_checks={"layers": calls(lambda layers: check_task_layers(layers, residual_sums=True))},
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
        intervals_fn=_layer_mean_intervals("variance", "variance_square_sum", NON_NEGATIVE),
        findings=(
            ProbeFinding(
                "msa-variance",
                "park-kim",
                "MSAs reduce the feature-map variance (within the ViT)",
                "Park & Kim, Fig. 9 (featuremap_variance.ipynb: ViT-Ti's MSA residual sums, gray areas)",
                "feature-map variance after each MSA residual sum minus before it, mean over the ViT's MSA sums",
                -1,
                variance_change("msa"),
                member="vit",
            ),
            ProbeFinding(
                "conv-variance",
                "park-kim",
                "Convolutions increase the feature-map variance (within the CNN)",
                "Park & Kim, Fig. 9 (featuremap_variance.ipynb: ResNet-50's blocks, white areas; subsampling "
                "blocks left out)",
                "feature-map variance after each conv block minus before it, mean over the CNN's blocks that keep "
                "the map size",
                +1,
                variance_change("conv"),
                member="cnn",
            ),
        ),
        figures={
            "feature_variance": ProbeFigure(
                draw_feature_variance, "Feature-map variance against normalised depth (Park & Kim Fig. 9)."
            )
        },
    )
)


__all__ = [
    "FOURIER_SPEC",
    "VARIANCE_SPEC",
    "FeatureFourierResult",
    "FeatureVarianceResult",
    "draw_feature_fourier",
    "draw_feature_variance",
    "feature_fourier",
    "feature_fourier_result",
    "feature_variance",
    "variance_change",
]
