# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The Fourier heat map (Yin et al., NeurIPS 2019, "A Fourier perspective on model robustness in computer vision",
Fourier heat maps), as Paul & Chen (AAAI 2022, "Vision Transformers are Robust Learners", Fourier heat maps)
use it to show that ViTs are less sensitive than CNNs to high-frequency perturbations.

For each frequency (i, j) of a centred window (default: 31x31 at 32 px, the central 63x63 at 224 px) every image
is perturbed with the unit-norm Fourier basis image U_ij scaled to L2 norm eps per channel with a random sign per
channel, clipped to [0, 1] (`hf_vitrobust.corruptions.fourier_basis`: eps = 4 at 32 px, 15.7 at 224 px, on [0, 1]
pixels before the model's normalisation, as in the reference implementation Paul & Chen used,
github.com/gatheluck/FourierHeatmap), and the map holds the top-1 error at each frequency.

How it is computed:
- Conjugate symmetry: U_{-i,-j} is U_ij (a cosine), and the sign streams are keyed by the canonical frequency of
  the pair, so perturbing at (-i, -j) gives exactly the image perturbed at (i, j). Only the canonical half of the
  window ((window**2 + 1) / 2 frequencies) goes through the model; the metric core mirrors it.
  `use_symmetry=False` evaluates every cell directly (the same numbers, twice the work).
- Batched over bases x images: the (frequency, image) pairs, frequency-major, are cut into batches of
  `batch_size` perturbed images, so a batch mixes frequencies when there are few images (the reference runs one
  pass over the data per frequency, with one data loader each).
- The sign of image k at frequency (i, j) comes from the counter-based stream keyed by the image's sample id:
  the map never depends on the batch size or order.

The records (frequency i, frequency j, correct) go to `hf_vitrobust.metrics.fourier_heatmap.fourier_error_map`,
the computation behind the `fourier_heatmap` evaluate module.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from ..corruptions.fourier_basis import (
    add_fourier_noise,
    check_eps,
    check_window,
    default_fourier_eps,
    fourier_basis,
    fourier_signs,
    half_window_frequencies,
    window_frequencies,
)
from ..metrics.fourier_heatmap import fourier_error_map
from ..metrics.intervals import UNIT_RANGE
from ..models.classifier import Classifier
from .base import (
    DEFAULT_BATCH_SIZE,
    ProbeInputs,
    ProbeResult,
    batch_slices,
    check_batch_size,
    check_eval_classifier,
    check_seed,
    new_axes,
    predict_logits,
    prepare_inputs,
)
from .display import (
    SeriesData,
    as_float_array,
    bounds_at,
    curve_bounds,
    fmt_number,
    fmt_percent,
    fmt_percent_interval,
    map_panels,
)
from .intervals import counts_from_means, interval_entry, mean_curve, proportion_curve, sample_std
from .param_checks import boolean, calls, int_at_least, optional
from .per_image import PER_IMAGE, merged_per_image, per_image_of, per_image_record
from .spec import (
    ProbeFigure,
    ProbeFinding,
    ProbeSpec,
    ProtocolPart,
    register_probe,
    same_setting,
    summed_counts,
    summed_values,
    total_images,
    weighted_mean,
)

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


@dataclass
class FourierHeatmapResult(ProbeResult):
    """A Fourier heat map.

    error_map: (window, window) top-1 error (fraction) under the perturbation at each frequency; row r holds the
        vertical frequency i = r - K, column c the horizontal frequency j = c - K (K = (window - 1) // 2), the
        zero frequency at the centre.
    frequencies: -K..K, the frequencies (cycles per image) of the rows and of the columns.
    eps: the L2 norm of each channel's perturbation, on [0, 1] pixels; window: the side of the map.
    clean_error: the top-1 error on the unperturbed images; num_images: how many images each cell averages.
    evaluated_cells: how many frequencies went through the model (half the window with `use_symmetry`).
    """

    error_map: np.ndarray
    frequencies: list[int]
    eps: float
    window: int
    clean_error: float
    num_images: int
    evaluated_cells: int
    seed: int

    @classmethod
    def probe_name(cls) -> str:
        return "fourier_heatmap"

    def error_at(self, i: int, j: int) -> float:
        """The error at frequency (i, j)."""
        half = (self.window - 1) // 2
        if max(abs(i), abs(j)) > half:
            raise ValueError(f"Frequency ({i}, {j}) lies outside the window (frequencies up to {half}).")
        return float(self.error_map[i + half, j + half])

    def plot(self, ax: Axes | None = None) -> Axes:
        """The heat map (`draw_fourier_heatmap`, the report's panel) with frequency axes, zero frequency at the
        centre, error on a 0-1 colour scale (jet), as in Yin et al.'s and Paul & Chen's Fourier heat maps."""
        ax = new_axes(ax, figsize=(4.5, 3.8))
        draw_fourier_heatmap({"": {"error_map": self.error_map}}, ax=ax)
        ax.set_xlabel("horizontal frequency j (cycles / image)")
        ax.set_ylabel("vertical frequency i (cycles / image)")
        ax.set_title(f"Fourier heat map, eps = {self.eps:g} (clean error {self.clean_error:.0%})")
        return ax


@torch.no_grad()
def fourier_heatmap(
    classifier: Classifier,
    images: torch.Tensor | Iterable[Any],
    labels: torch.Tensor | Sequence[int] | None = None,
    *,
    seed: int = 0,
    batch_size: int = DEFAULT_BATCH_SIZE,
    window: int | None = None,
    eps: float | None = None,
    use_symmetry: bool = True,
    limit: int | None = None,
    sample_ids: torch.Tensor | Sequence[int] | None = None,
) -> FourierHeatmapResult:
    """The Fourier heat map of `classifier` (Yin et al. 2019): top-1 error per perturbation frequency.

    Args:
        classifier: the model, in eval mode.
        images, labels: as `prepare_inputs` (float pixels in [0, 1] at the classifier's size, or a dataset);
            labels are required (the map is a test error).
        seed: keys the random signs (with each image's sample id).
        batch_size: perturbed images per forward pass (pairs of frequency and image); does not change the map.
        window: the side of the centred square of frequencies, odd; default min(63, widest), the widest being
            every non-Nyquist frequency (31 at 32 px).
        eps: the L2 norm of each channel's perturbation on [0, 1] pixels; default 4.0 at 32x32, 15.7 at 224x224
            (`default_fourier_eps`).
        use_symmetry: evaluate half of the window and mirror it (exactly the same map as evaluating all of it).
        limit: read at most this many images of a dataset.
        sample_ids: (N,) integer ids that key each image's signs (default: as `prepare_inputs`), so that a subset
            of the images gets the signs it gets among all of them.
    """
    return _fourier_heatmap(
        classifier,
        images,
        labels,
        seed=seed,
        batch_size=batch_size,
        window=window,
        eps=eps,
        use_symmetry=use_symmetry,
        limit=limit,
        sample_ids=sample_ids,
    )[0]


@torch.no_grad()
def _fourier_heatmap(
    classifier: Classifier,
    images: torch.Tensor | Iterable[Any],
    labels: torch.Tensor | Sequence[int] | None = None,
    *,
    seed: int = 0,
    batch_size: int = DEFAULT_BATCH_SIZE,
    window: int | None = None,
    eps: float | None = None,
    use_symmetry: bool = True,
    limit: int | None = None,
    sample_ids: torch.Tensor | Sequence[int] | None = None,
) -> tuple[FourierHeatmapResult, torch.Tensor, torch.Tensor]:
    """`fourier_heatmap`, with what it averages per image: (result, map error (N,) float64: each image's error
    averaged over the window's cells, mirrored cells included, clean correct (N,) bool), on the CPU."""
    check_eval_classifier(classifier)
    seed = check_seed(seed)
    check_batch_size(batch_size)
    size = classifier.input_size
    window = check_window(window, size)
    eps = default_fourier_eps(size) if eps is None else check_eps(eps)
    if not isinstance(use_symmetry, bool):
        raise ValueError(f"use_symmetry must be a bool, got {use_symmetry!r}.")
    inputs = prepare_inputs(classifier, images, labels, limit=limit, sample_ids=sample_ids)
    device = inputs.pixels.device
    cells = (half_window_frequencies if use_symmetry else window_frequencies)(window).to(device)
    num_images = len(inputs)
    correct = torch.empty(cells.shape[0] * num_images, dtype=torch.bool, device=device)
    for part in batch_slices(correct.numel(), batch_size):
        pair = torch.arange(part.start, part.stop, device=device)
        cell, image = pair // num_images, pair % num_images
        first = part.start // num_images
        last = (part.stop - 1) // num_images
        bases = fourier_basis(cells[first : last + 1], size, dtype=inputs.pixels.dtype)
        signs = fourier_signs(seed, inputs.sample_ids[image], cells[cell])
        perturbed = add_fourier_noise(inputs.pixels[image], bases[cell - first], eps, signs)
        correct[part] = classifier(perturbed).argmax(dim=1) == inputs.labels[image]
    clean = predict_logits(classifier, inputs.pixels, batch_size).argmax(dim=1) == inputs.labels
    records = cells.repeat_interleave(num_images, dim=0).cpu().numpy()
    summary = fourier_error_map(
        records[:, 0], records[:, 1], correct.cpu().numpy(), window=window, mirror=True
    )
    # Each evaluated cell stands for itself and, under the symmetry, for its mirror (the zero frequency is its own).
    weights = torch.ones(cells.shape[0], dtype=torch.float64)
    if use_symmetry:
        weights = torch.where((cells.cpu() == 0).all(dim=1), 1.0, 2.0).double()
    wrong = (~correct).cpu().view(cells.shape[0], num_images).double()
    image_errors = (weights @ wrong) / float(window * window)
    result = FourierHeatmapResult(
        error_map=summary.as_array(),
        frequencies=summary.frequencies,
        eps=eps,
        window=window,
        clean_error=float(1.0 - clean.double().mean()),
        num_images=num_images,
        evaluated_cells=int(cells.shape[0]),
        seed=seed,
    )
    return result, image_errors, clean.cpu()


# ------------------------------------------------------------------------------------------------ the probe's spec
# Merge: the error map and the clean error are count-weighted means of the chunks' means. The counts add up:
# "num_errors" per cell and "num_clean_errors" (Wilson intervals of the cells' and the clean error), and
# "map_error_square_sum", the sum over images of the square of each image's error averaged over the map (the
# Student-t interval of the map's mean error, "map_mean_error").
def _partial(classifier: Classifier, inputs: ProbeInputs, seed: int, params: dict) -> dict:
    result, image_errors, clean = _fourier_heatmap(
        classifier, inputs.pixels, inputs.labels, seed=seed, sample_ids=inputs.sample_ids, **params
    )
    errors = counts_from_means(result.error_map, result.num_images)
    return {
        PER_IMAGE: per_image_record(inputs.sample_ids, map_error=image_errors),
        "error_map": torch.as_tensor(np.asarray(result.error_map, dtype=np.float64)),
        "frequencies": list(result.frequencies),
        "eps": float(result.eps),
        "window": int(result.window),
        "clean_error": float(result.clean_error),
        "evaluated_cells": int(result.evaluated_cells),
        "seed": int(result.seed),
        "num_errors": None if errors is None else errors.tolist(),
        "num_clean_errors": int((~clean).sum()),
        "map_error_square_sum": float((image_errors * image_errors).sum()),
    }


def _merge(partials: list) -> dict:
    return {
        "error_map": weighted_mean(partials, "error_map"),
        "frequencies": same_setting(partials, "frequencies"),
        "eps": same_setting(partials, "eps"),
        "window": same_setting(partials, "window"),
        "clean_error": float(weighted_mean(partials, "clean_error")),
        "num_images": total_images(partials),
        "evaluated_cells": same_setting(partials, "evaluated_cells"),
        "seed": same_setting(partials, "seed"),
        "num_errors": summed_counts(partials, "num_errors", "error_map"),
        "num_clean_errors": summed_counts(partials, "num_clean_errors", "clean_error"),
        "map_error_square_sum": summed_values(partials, "map_error_square_sum"),
        PER_IMAGE: merged_per_image(partials),
    }


def map_error_per_image(probe: Mapping[str, Any]) -> tuple[list, np.ndarray]:
    """Each image's error (0..1) averaged over the map's cells, from the per-image record: how sensitive a model
    is across the spectrum, what Paul & Chen's Fig. 9 compares (`analysis.finding_sets`)."""
    record = per_image_of(probe)
    return record["keys"], np.asarray(record["map_error"], dtype=np.float64)


def _map_mean(probe: Mapping[str, Any]) -> float | None:
    """The mean error over the map's defined cells (the headline's), None without any."""
    error_map = as_float_array(probe.get("error_map"))
    finite = error_map[np.isfinite(error_map)] if error_map.size else error_map
    return float(finite.mean()) if finite.size else None


def _intervals(probe: Mapping[str, Any], confidence_level: float) -> dict[str, Any]:
    """Wilson intervals of every cell's error and of the clean error (from the error counts, or error x images),
    and the Student-t interval of the map's mean error over images (from its sum of squares)."""
    count = probe.get("num_images")
    errors = probe.get("num_errors")
    if errors is None:
        errors = counts_from_means(probe.get("error_map"), count)
    clean = probe.get("num_clean_errors")
    if clean is None:
        clean = counts_from_means(probe.get("clean_error"), count)
    mean, squares = _map_mean(probe), probe.get("map_error_square_sum")
    mean_error = None
    if mean is not None and squares is not None and count is not None:
        mean_error = mean_curve(mean, sample_std(mean, squares, count), count, confidence_level, UNIT_RANGE)
    return interval_entry(
        confidence_level,
        {
            "error_map": proportion_curve(errors, count, confidence_level),
            "clean_error": proportion_curve(clean, count, confidence_level),
            "map_mean_error": mean_error,
        },
    )


def _headline(probe: Mapping[str, Any]) -> dict[str, str]:
    error_map = as_float_array(probe.get("error_map"))
    finite = error_map[np.isfinite(error_map)] if error_map.size else error_map
    mean = bounds_at(curve_bounds(probe, "map_mean_error"))
    clean = bounds_at(curve_bounds(probe, "clean_error"))
    return {
        "mean error over the map (%)": fmt_percent_interval(_map_mean(probe), *mean, 100),
        "max error (%)": fmt_percent(finite.max() if finite.size else None, 100),
        "clean error (%)": fmt_percent_interval(probe.get("clean_error"), *clean, 100),
        "eps (L2)": fmt_number(probe.get("eps")),
    }


def draw_fourier_heatmap(data: SeriesData, ax: Axes | None = None) -> Figure | None:
    """One heat map per model on the 0-1 error scale, zero frequency at the centre (on `ax`: one model)."""

    def extent(values: np.ndarray) -> tuple[float, float, float, float]:
        half = (values.shape[0] - 1) // 2
        return (-half - 0.5, half + 0.5, half + 0.5, -half - 0.5)

    return map_panels(
        {key: as_float_array(p.get("error_map")) for key, p in data.items()},
        "Fourier heat map",
        "top-1 error",
        limits=(0.0, 1.0),
        extent=extent,
        labels=("horizontal frequency", "vertical frequency"),
        ax=ax,
    )


def _check_odd(window: Any) -> None:
    if window % 2 == 0:
        raise ValueError(f"must be odd (frequencies -K..K, window = 2K + 1), got {window!r}.")


def _joint_check(params: Mapping[str, Any], input_size: tuple[int, int] | None) -> None:
    """The window is no wider than the model input's distinct frequencies."""
    if input_size is not None:
        check_window(params["window"], input_size)


SPEC = register_probe(
    ProbeSpec(
        name="fourier_heatmap",
        value_checks={
            "window": optional(lambda window: (int_at_least(1)(window), _check_odd(window))),
            "eps": optional(calls(check_eps)),
            "use_symmetry": boolean,
        },
        joint_check=_joint_check,
        probe=fourier_heatmap,
        result_type=FourierHeatmapResult,
        selection="random",
        chunk_size=8,
        needs_labels=True,
        partial_fn=_partial,
        merge_fn=_merge,
        headline=_headline,
        intervals_fn=_intervals,
        summary_row="mean error over the map (%)",
        findings=(
            ProbeFinding(
                "fig-9-fourier-heatmap",
                "paul-chen",
                "ViT or BiT less sensitive than a plain ResNet-50 across the Fourier spectrum",
                "Paul & Chen, Fig. 9 (Fourier heat maps)",
                "top-1 error % under Fourier basis noise, each image's mean over the heat map",
                -1,
                map_error_per_image,
                scale=100.0,
                protocol=(ProtocolPart("eps"), ProtocolPart("window")),
                baseline="resnet-50",
            ),
        ),
        figures={
            "fourier_heatmap": ProbeFigure(
                draw_fourier_heatmap,
                "Fourier heat maps: top-1 error under a Fourier basis perturbation per frequency "
                "(same colour scale for every model; Yin et al., Paul & Chen).",
            )
        },
    )
)


__all__ = [
    "SPEC",
    "FourierHeatmapResult",
    "draw_fourier_heatmap",
    "fourier_heatmap",
    "map_error_per_image",
]
