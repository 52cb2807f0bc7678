# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Robustness to noise frequency: how much accuracy random noise costs when it is confined to one frequency band.

Park & Kim ("How Do Vision Transformers Work?", ICLR 2022, Fig. 2b) add random noise band-passed to frequencies
near f (0.1 pi ... 0.9 pi) and plot the change in accuracy against f: ViT loses most to low-frequency noise, ResNet
to high-frequency noise, consistent with self-attention acting as a low-pass filter and convolutions as high-pass
filters. The noise is `hf_vitrobust.corruptions.frequency_noise`: white sign noise of amplitude eps, kept in a band
of frequencies with its phase. The aggregation is `hf_vitrobust.metrics.frequency_noise`.

The code behind Fig. 2b was never released (xxxnell/how-do-vits-work issue #23); the first author's description
(issue #44) is sign noise of eps 0.7 added to the normalised image, band-passed by `ops/adversarial.py`'s
`FreqAttack._fourier_mask` (half-width 0.2 rad: a full width of about 0.127 pi). `band="park-kim"` is that band
exactly, the `mechanisms` suite's choice; `band="square-annulus"` (the default) is our symmetric band of full width
`bandwidth` (0.2 pi by default).

eps is stated in the units of the authors' normalised inputs, whose models all use the ImageNet std: the noise in
pixels is `epsilon * (0.229, 0.224, 0.225)` for every model (`epsilon_units="imagenet-std"`, the default), so that a
ViT normalised with std 0.5 and a ResNet normalised with the ImageNet std get the same noise; the result records it
as `pixel_magnitude`. `epsilon_units="model-std"` scales by each classifier's own std instead (the same noise in
every model's normalised space, not the same image).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from ..corruptions.frequency_noise import (
    BANDS,
    DEFAULT_BANDWIDTH,
    DEFAULT_FREQUENCIES,
    IMAGENET_STD,
    PARK_KIM_HALF_WIDTH,
    REFERENCE_EPSILON,
    add_band_noise,
    band_mask,
)
from ..metrics.frequency_noise import frequency_noise_accuracy
from ..models.classifier import Classifier
from .base import (
    DEFAULT_BATCH_SIZE,
    ProbeInputs,
    ProbeResult,
    batch_slices,
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
    fmt_percent_interval,
    line_figure,
)
from .intervals import interval_entry, paired_accuracy_curves
from .param_checks import boolean, fraction, non_negative_number, number_in, sequence_of
from .per_image import PER_IMAGE, merged_per_image, per_image_of, per_image_record
from .spec import (
    ProbeFigure,
    ProbeFinding,
    ProbeSpec,
    register_probe,
    same_setting,
    summed_counts,
    total_images,
    weighted_mean,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

#: How `epsilon` becomes pixels: times the ImageNet std (the authors' normalisation, the same noise for every
#: model) or times the classifier's own std.
EPSILON_UNITS = ("imagenet-std", "model-std")


@dataclass
class FrequencyNoiseResult(ProbeResult):
    """Per band centre (ascending, units of pi): top-1 accuracy under the noise and its drop from the clean
    accuracy (`clean_accuracy - accuracy`, fractions; positive = the noise hurts), with the noise's settings."""

    frequencies: list[float]
    clean_accuracy: float
    accuracy: list[float]
    accuracy_drop: list[float]
    bandwidth: float
    epsilon: float
    equal_energy: bool
    num_samples: int
    seed: int
    band: str = "square-annulus"
    epsilon_units: str = "imagenet-std"
    pixel_magnitude: list[float] | None = None

    @classmethod
    def probe_name(cls) -> str:
        return "frequency_noise"

    def plot(self, ax: Axes | None = None) -> Axes:
        """Accuracy drop (percentage points, clean minus noisy: positive = worse) against the noise frequency
        (`draw_frequency_noise`, the report's curve; Fig. 2b plots it negated)."""
        ax = new_axes(ax)
        series = {"frequencies": list(self.frequencies), "accuracy_drop": list(self.accuracy_drop)}
        draw_frequency_noise({"": series}, ax=ax)
        ticks = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
        ax.set_xticks(ticks, [f"{t:.1f}\u03c0" for t in ticks])
        ax.set_xlim(0.0, 1.0)
        ax.set_xlabel("noise frequency")
        ax.set_ylabel("top-1 drop, clean \u2212 noisy (pp)")
        ax.set_title(f"Band-passed noise, \u03b5 = {self.epsilon:g} (clean {self.clean_accuracy:.1%})")
        if (legend := ax.get_legend()) is not None:
            legend.remove()
        return ax


def _check_frequencies(
    frequencies: Sequence[float], bandwidth: float, size: tuple[int, int], band: str
) -> list[float]:
    if isinstance(frequencies, str | bytes) or not isinstance(frequencies, Sequence | np.ndarray):
        raise ValueError(
            f"frequencies must be a sequence of band centres in units of pi, got {frequencies!r}."
        )
    if len(frequencies) == 0:
        raise ValueError("frequencies is empty.")
    checked = [float(f) if isinstance(f, np.floating) else f for f in frequencies]
    if len(set(checked)) != len(checked):
        raise ValueError(f"frequencies must be distinct, got {list(frequencies)!r}.")
    for frequency in checked:
        band_mask(
            *size, frequency, bandwidth, band=band
        )  # bad values or an empty band fail before model work
    return sorted(float(f) for f in checked)


def frequency_noise(
    classifier: Classifier,
    images: torch.Tensor | Iterable[Any],
    labels: torch.Tensor | Sequence[int] | None = None,
    *,
    seed: int = 0,
    batch_size: int = DEFAULT_BATCH_SIZE,
    frequencies: Sequence[float] = DEFAULT_FREQUENCIES,
    bandwidth: float = DEFAULT_BANDWIDTH,
    epsilon: float = REFERENCE_EPSILON,
    equal_energy: bool = False,
    clip: bool = False,
    band: str = "square-annulus",
    epsilon_units: str = "imagenet-std",
    limit: int | None = None,
    sample_ids: torch.Tensor | Sequence[int] | None = None,
) -> FrequencyNoiseResult:
    """Accuracy drop of `classifier` under random noise band-passed to each frequency (Park & Kim, Fig. 2b).

    images, labels: as `prepare_inputs` (pixels in [0, 1] or a dataset; at most `limit` images); labels required.
    frequencies: band centres in units of pi (default 0.1 ... 0.9).
    band: "square-annulus" (default; full width `bandwidth` in units of pi, default 0.2, i.e. [f - 0.1 pi,
        f + 0.1 pi) by the max-norm of the 2D frequency) or "park-kim" (the authors' `_fourier_mask`, half-width
        0.2 rad; `bandwidth` is then not used; square images of even side).
    epsilon: amplitude of the white sign noise before band-passing, in normalised input units (0.7, Park & Kim's
        value). With `equal_energy`, the RMS of each image's band-passed noise instead, so every band carries the
        same energy.
    epsilon_units: "imagenet-std" (default: pixels = epsilon * ImageNet std, the same noise for every model) or
        "model-std" (epsilon * the classifier's std).
    clip: clamp noisy pixels to [0, 1]; off by default, as Park & Kim add the noise to normalised images.
    seed: with each image's sample id, draws its white noise (the same for every band; independent of
        `batch_size`).
    sample_ids: (N,) integer ids that key each image's noise (default: as `prepare_inputs`), so that a subset of
        the images gets the noise it gets among all of them.
    """
    return _frequency_noise(
        classifier,
        images,
        labels,
        seed=seed,
        batch_size=batch_size,
        frequencies=frequencies,
        bandwidth=bandwidth,
        epsilon=epsilon,
        equal_energy=equal_energy,
        clip=clip,
        band=band,
        epsilon_units=epsilon_units,
        limit=limit,
        sample_ids=sample_ids,
    )[0]


def _frequency_noise(
    classifier: Classifier,
    images: torch.Tensor | Iterable[Any],
    labels: torch.Tensor | Sequence[int] | None = None,
    *,
    seed: int = 0,
    batch_size: int = DEFAULT_BATCH_SIZE,
    frequencies: Sequence[float] = DEFAULT_FREQUENCIES,
    bandwidth: float = DEFAULT_BANDWIDTH,
    epsilon: float = REFERENCE_EPSILON,
    equal_energy: bool = False,
    clip: bool = False,
    band: str = "square-annulus",
    epsilon_units: str = "imagenet-std",
    limit: int | None = None,
    sample_ids: torch.Tensor | Sequence[int] | None = None,
) -> tuple[FrequencyNoiseResult, torch.Tensor, torch.Tensor]:
    """`frequency_noise`, with the per-image correctness behind it: (result, clean (N,) bool, noisy (bands, N)
    bool), on the CPU."""
    seed = check_seed(seed)
    if (
        isinstance(epsilon, bool)
        or not isinstance(epsilon, int | float)
        or not math.isfinite(epsilon)
        or epsilon < 0
    ):
        raise ValueError(f"epsilon must be a non-negative number, got {epsilon!r}.")
    if band not in BANDS:
        raise ValueError(f"band must be one of {', '.join(BANDS)}, got {band!r}.")
    if epsilon_units not in EPSILON_UNITS:
        raise ValueError(f"epsilon_units must be one of {', '.join(EPSILON_UNITS)}, got {epsilon_units!r}.")
    inputs = prepare_inputs(classifier, images, labels, limit=limit, sample_ids=sample_ids)
    band_centres = _check_frequencies(frequencies, bandwidth, tuple(inputs.pixels.shape[-2:]), band)
    std = IMAGENET_STD if epsilon_units == "imagenet-std" else classifier.preprocessing.std
    magnitude = [float(epsilon) * s for s in std]
    clean_correct = []
    for part in batch_slices(len(inputs), batch_size):
        batch = inputs.select(part)
        clean_correct.append(
            (predict_logits(classifier, batch.pixels, batch_size).argmax(-1) == batch.labels).cpu()
        )
    clean_records = torch.cat(clean_correct)
    clean_accuracy = float(clean_records.double().mean())
    record_frequencies, correct = [], []
    for frequency in band_centres:
        for part in batch_slices(len(inputs), batch_size):
            batch = inputs.select(part)
            noisy = add_band_noise(
                batch.pixels,
                frequency,
                magnitude=magnitude,
                bandwidth=bandwidth,
                seed=seed,
                sample_ids=batch.sample_ids,
                equal_energy=equal_energy,
                clip=clip,
                band=band,
            )
            correct.append((predict_logits(classifier, noisy, batch_size).argmax(-1) == batch.labels).cpu())
            record_frequencies.append(torch.full((len(batch),), frequency, dtype=torch.float64))
    noisy_records = torch.cat(correct)
    curve = frequency_noise_accuracy(
        torch.cat(record_frequencies).numpy(), noisy_records.numpy(), clean_accuracy=clean_accuracy
    )
    result = FrequencyNoiseResult(
        frequencies=curve.frequencies,
        clean_accuracy=clean_accuracy,
        accuracy=curve.accuracy,
        accuracy_drop=curve.accuracy_drop,
        bandwidth=2 * PARK_KIM_HALF_WIDTH / math.pi if band == "park-kim" else float(bandwidth),
        epsilon=float(epsilon),
        equal_energy=bool(equal_energy),
        num_samples=len(inputs),
        seed=seed,
        band=band,
        epsilon_units=epsilon_units,
        pixel_magnitude=magnitude,
    )
    # The records are frequency-major (every image at the first band, then the next band, ...).
    return result, clean_records, noisy_records.view(len(band_centres), len(inputs))


# ------------------------------------------------------------------------------------------------ the probe's spec
# Merge: the accuracies are count-weighted means of the chunks' means. The counts add up: "num_clean_correct",
# "num_correct" per band (Wilson intervals of the accuracies) and "num_discordant" per band, the images whose
# correctness the noise changes, which is the sum of squares of the per-image differences clean - noisy (0 or
# +-1) behind the accuracy drop, so the drop gets the paired Student-t interval over images. "per_image" keeps
# each image's sample id, its clean correctness and its correctness under every band (0/1), for paired comparisons
# of two models.
def _partial(classifier: Classifier, inputs: ProbeInputs, seed: int, params: dict) -> dict:
    result, clean, noisy = _frequency_noise(
        classifier, inputs.pixels, inputs.labels, seed=seed, sample_ids=inputs.sample_ids, **params
    )
    return {
        "frequencies": list(result.frequencies),
        "clean_accuracy": float(result.clean_accuracy),
        "accuracy": torch.tensor(result.accuracy, dtype=torch.float64),
        "bandwidth": result.bandwidth,
        "epsilon": result.epsilon,
        "equal_energy": result.equal_energy,
        "seed": result.seed,
        "band": result.band,
        "epsilon_units": result.epsilon_units,
        "pixel_magnitude": list(result.pixel_magnitude or []),
        "num_clean_correct": int(clean.sum()),
        "num_correct": noisy.sum(dim=1).tolist(),
        "num_discordant": (noisy != clean[None, :]).sum(dim=1).tolist(),
        PER_IMAGE: per_image_record(
            inputs.sample_ids, clean=clean.to(torch.int8), correct=noisy.T.to(torch.int8)
        ),
    }


def _merge(partials: list) -> dict:
    clean = weighted_mean(partials, "clean_accuracy")
    accuracy = weighted_mean(partials, "accuracy")
    return {
        "frequencies": same_setting(partials, "frequencies"),
        "clean_accuracy": float(clean),
        "accuracy": accuracy,
        "accuracy_drop": clean - accuracy,
        "bandwidth": same_setting(partials, "bandwidth"),
        "epsilon": same_setting(partials, "epsilon"),
        "equal_energy": same_setting(partials, "equal_energy"),
        "num_samples": total_images(partials),
        "seed": same_setting(partials, "seed"),
        "band": same_setting(partials, "band"),
        "epsilon_units": same_setting(partials, "epsilon_units"),
        "pixel_magnitude": same_setting(partials, "pixel_magnitude"),
        "num_clean_correct": summed_counts(partials, "num_clean_correct", "clean_accuracy"),
        "num_correct": summed_counts(partials, "num_correct", "accuracy"),
        "num_discordant": summed_counts(partials, "num_discordant"),
        PER_IMAGE: merged_per_image(partials),
    }


def highest_band_drop(probe: Mapping[str, Any]) -> tuple[list, np.ndarray]:
    """Each image's correctness change (clean minus noisy, -1, 0 or 1) under the highest frequency band, from the
    per-image record: what "ViT less hurt than the CNN by high-frequency noise" compares image by image."""
    record = per_image_of(probe)
    clean = np.asarray(record["clean"], dtype=np.float64)
    noisy = np.asarray(record["correct"], dtype=np.float64)
    if noisy.ndim != 2 or noisy.shape[1] == 0 or noisy.shape[0] != clean.size:
        raise LookupError("the frequency-noise record has no band")
    return record["keys"], clean - noisy[:, -1]


def _intervals(probe: Mapping[str, Any], confidence_level: float) -> dict[str, Any]:
    """Wilson intervals of the clean and noisy accuracies (from their counts, or accuracy x images) and the
    paired Student-t interval of the accuracy drop (from the discordant counts, where the dict has them)."""
    count = probe.get("num_samples", probe.get("num_images"))
    return interval_entry(confidence_level, paired_accuracy_curves(probe, count, "clean", confidence_level))


def _headline(probe: Mapping[str, Any]) -> dict[str, str]:
    clean = bounds_at(curve_bounds(probe, "clean_accuracy"))
    out = {"clean top-1 (%)": fmt_percent_interval(probe.get("clean_accuracy"), *clean, 100)}
    drops = curve_bounds(probe, "accuracy_drop")
    for i, (frequency, drop) in enumerate(
        zip(probe.get("frequencies") or [], probe.get("accuracy_drop") or [], strict=False)
    ):
        out[f"accuracy drop (pp) at {fmt_number(frequency)}π"] = fmt_percent_interval(
            drop, *bounds_at(drops, i), 100
        )
    return out


def _drop_band(probe: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray] | None:
    bounds = curve_bounds(probe, "accuracy_drop")
    return None if bounds is None else (100 * bounds[0], 100 * bounds[1])


def draw_frequency_noise(data: SeriesData, ax: Axes | None = None) -> Figure | None:
    """The top-1 accuracy drop (pp, clean minus noisy: positive = the noise hurts, the sign of the report's rows)
    under band-passed noise against its frequency, one line per model (on `ax`: one), with the band of its paired
    interval over images where the dict has one. Park & Kim's Fig. 2b plots the same curve negated."""
    figure = line_figure(
        data,
        lambda p: (p.get("frequencies"), 100 * as_float_array(p.get("accuracy_drop"))),
        "noise frequency (× π)",
        "top-1 drop, clean − noisy (pp)",
        "Band-passed noise",
        ax=ax,
        band=_drop_band,
    )
    if figure is not None:
        (ax or figure.axes[0]).axhline(0.0, color="gray", linewidth=0.8)
    return figure


def _joint_check(params: Mapping[str, Any], input_size: tuple[int, int] | None) -> None:
    """Every band keeps at least one frequency of the model's input (and Park & Kim's bands need square inputs
    of even side)."""
    if input_size is not None:
        _check_frequencies(params["frequencies"], params["bandwidth"], input_size, params["band"])


SPEC = register_probe(
    ProbeSpec(
        name="frequency_noise",
        value_checks={
            "frequencies": sequence_of(fraction, distinct=True),
            "bandwidth": number_in(0.0, 2.0, low_open=True),
            "epsilon": non_negative_number,
            "equal_energy": boolean,
            "clip": boolean,
        },
        joint_check=_joint_check,
        probe=frequency_noise,
        result_type=FrequencyNoiseResult,
        selection="random",
        chunk_size=100,
        needs_labels=True,
        partial_fn=_partial,
        merge_fn=_merge,
        choices={"epsilon_units": EPSILON_UNITS, "band": BANDS},
        headline=_headline,
        intervals_fn=_intervals,
        findings=(
            ProbeFinding(
                "high-frequency-noise",
                "park-kim",
                "ViT less hurt than the CNN by high-frequency noise",
                "Park & Kim, Fig. 2b (frequency-band noise)",
                "top-1 drop (points) under noise of the highest frequency band",
                -1,
                highest_band_drop,
                scale=100.0,
            ),
        ),
        figures={
            "frequency_noise": ProbeFigure(
                draw_frequency_noise,
                "Top-1 accuracy drop under band-passed noise (percentage points, clean minus noisy: positive = "
                "the noise hurts) against its frequency (Park & Kim Fig. 2b, which plots it negated).",
            )
        },
    )
)


__all__ = [
    "EPSILON_UNITS",
    "SPEC",
    "FrequencyNoiseResult",
    "draw_frequency_noise",
    "frequency_noise",
]
