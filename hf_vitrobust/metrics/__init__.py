# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Robustness metrics: ImageNet-C mCE, ImageNet-P flip rates, ImageNet-O AUPR, masked (ImageNet-A/R) accuracy,
calibration and the ImageNet-9 background gap; and the aggregation step of each probe (occlusion curve, Fourier
heat map, loss progression, frequency-noise accuracy), so a probe's figure can be recomputed from its records.

Each metric is a pure function here (numpy / scikit-learn only: no model, no data loading, no `evaluate`). The
`evaluate` modules in the repository's top-level `metrics/<name>/` folder are thin wrappers around them; they ship
inside the wheel as `hf_vitrobust/evaluate_metrics/<name>/` and `load(name)` loads that copy through `evaluate`.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

from ..registry import Registry
from .background_gap import (
    IMAGENET_TO_IN9,
    IN9_CLASSES,
    VARIANTS,
    BackgroundGapResult,
    background_gap,
    imagenet_to_in9,
)
from .calibration import DEFAULT_NUM_BINS, CalibrationResult, calibration_bins, calibration_metrics
from .flip_rate import (
    NOISE_PERTURBATIONS,
    PERTURBATIONS,
    TEST_PERTURBATIONS,
    VALIDATION_PERTURBATIONS,
    FlipRateResult,
    flip_rates,
    top5_distance,
)
from .fourier_heatmap import FourierHeatmapMetricResult, fourier_error_map
from .frequency_noise import FrequencyNoiseAccuracyResult, frequency_noise_accuracy
from .loss_progression import LossProgressionResult, loss_progression
from .masked_accuracy import MaskedAccuracyResult, masked_accuracy, masked_topk_predictions
from .mce import (
    ALEXNET_CLEAN_ERROR,
    ALEXNET_CORRUPTION_ERRORS,
    EXTRA_CORRUPTIONS,
    SEVERITIES,
    STANDARD_CORRUPTIONS,
    CorruptionErrorResult,
    corruption_cell_errors,
    corruption_error_from_cells,
    corruption_error_from_counts,
    mean_corruption_error,
)
from .occlusion_accuracy import OcclusionAccuracyResult, occlusion_accuracy
from .ood import OODDetectionResult, ood_detection_metrics, ood_scores_from_logits

# Metric name (the `evaluate` module's folder) -> the package function it wraps.
METRICS: Registry[Callable[..., Any]] = Registry("metric")
METRICS.register("mce", mean_corruption_error)
METRICS.register("flip_rate", flip_rates)
METRICS.register("ood_aupr", ood_detection_metrics)
METRICS.register("masked_accuracy", masked_accuracy)
METRICS.register("calibration", calibration_metrics)
METRICS.register("background_gap", background_gap)
# Probe aggregations: per-sample probe records -> the reported figure.
METRICS.register("occlusion_accuracy", occlusion_accuracy)
METRICS.register("fourier_heatmap", fourier_error_map)
METRICS.register("frequency_noise", frequency_noise_accuracy)
METRICS.register("loss_progression", loss_progression)
METRIC_NAMES = METRICS.names()


def evaluate_module_path(name: str) -> Path:
    """The folder of the `evaluate` wrapper `name` inside the installed package (a wheel or an editable install)."""
    METRICS.get(name)  # an unknown name: a ValueError with the closest names
    path = Path(str(resources.files("hf_vitrobust").joinpath("evaluate_metrics", name)))
    if not (path / f"{name}.py").is_file():
        raise FileNotFoundError(
            f"The evaluate module {name!r} is not installed at {path}; reinstall hf_vitrobust."
        )
    return path


def load(name: str, **kwargs: Any):
    """`evaluate.load` of the shipped metric `name` (offline: no Hub access). Keyword arguments go to `evaluate.load`."""
    import evaluate

    return evaluate.load(str(evaluate_module_path(name)), **kwargs)


__all__ = [
    "ALEXNET_CLEAN_ERROR",
    "ALEXNET_CORRUPTION_ERRORS",
    "DEFAULT_NUM_BINS",
    "EXTRA_CORRUPTIONS",
    "IMAGENET_TO_IN9",
    "IN9_CLASSES",
    "METRICS",
    "METRIC_NAMES",
    "NOISE_PERTURBATIONS",
    "PERTURBATIONS",
    "SEVERITIES",
    "STANDARD_CORRUPTIONS",
    "TEST_PERTURBATIONS",
    "VALIDATION_PERTURBATIONS",
    "VARIANTS",
    "BackgroundGapResult",
    "CalibrationResult",
    "CorruptionErrorResult",
    "FlipRateResult",
    "FourierHeatmapMetricResult",
    "FrequencyNoiseAccuracyResult",
    "LossProgressionResult",
    "MaskedAccuracyResult",
    "OODDetectionResult",
    "OcclusionAccuracyResult",
    "background_gap",
    "calibration_bins",
    "calibration_metrics",
    "corruption_cell_errors",
    "corruption_error_from_cells",
    "corruption_error_from_counts",
    "evaluate_module_path",
    "flip_rates",
    "fourier_error_map",
    "frequency_noise_accuracy",
    "imagenet_to_in9",
    "load",
    "loss_progression",
    "masked_accuracy",
    "masked_topk_predictions",
    "mean_corruption_error",
    "occlusion_accuracy",
    "ood_detection_metrics",
    "ood_scores_from_logits",
    "top5_distance",
]
