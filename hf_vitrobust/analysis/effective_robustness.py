# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Effective robustness (Taori et al., "Measuring Robustness to Natural Distribution Shifts in Image
Classification", NeurIPS 2020): a model's top-1 under a natural shift minus the top-1 that a linear fit of standard
ImageNet-1k models predicts at its clean top-1.

The fit is the imagenet-testbed's: ordinary least squares of logit(shifted top-1) on logit(clean top-1), with
logit(p) = log(p / (1 - p)) for p = top-1 / 100 (`plotting/plotter.py`, `transform_acc(..., "logit")` and
`scipy.stats.linregress`), over the standard models of its published per-model accuracies (shipped as
`assets/testbed/testbed_top1.csv`; the selection rule is `fit_models`). ImageNet-A is fitted piecewise, split at
ResNet-50's clean top-1, as the testbed's ImageNet-A figure does: the set was filtered against ResNet-50.

The interval of a model's effective robustness accounts for both of its uncertainties, in one Monte Carlo: the
fit's (a bootstrap over the fit's models, as the testbed's `run_bootstrap_linreg`) and the run's own sampling (its
clean and shifted correct counts drawn from binomials over the images it scored).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..constants import STANDARD_CORRUPTIONS
from ..metrics.estimators import derived_seed

TESTBED_FILE = Path(__file__).resolve().parents[1] / "assets" / "testbed" / "testbed_top1.csv"
#: The clean benchmark every fit is against: the testbed's "val" column (full 1000-class ImageNet validation).
CLEAN_BENCHMARK = "imagenet-val"
#: The testbed's figures leave out models below this clean top-1 (`show_in_plot`: `df_row.val >= 55`).
MIN_CLEAN_TOP1 = 55.0
#: Models of these kinds in the testbed's names are left out of every fit (`use_for_line_fit`).
EXCLUDED_NAME_PARTS = ("aws", "batch64", "subsample")


@dataclass(frozen=True)
class TestbedShift:
    """One natural shift of the testbed: our benchmark name, how the report names it, the pivot of a piecewise
    fit (clean top-1, %; None for one line) and models the testbed leaves out of this shift's figure."""

    benchmark: str
    title: str
    pivot: float | None = None
    excluded_models: tuple[str, ...] = ()
    #: Where a run's metrics of the benchmark hold the top-1 the testbed's column means.
    top1_path: tuple[str, ...] = ("top1",)
    #: The test set a run must have evaluated (its "variant" option), where the benchmark has several.
    variant: str | None = None
    #: ImageNet-C: the mean top-1 over the 15 standard corruptions x 5 severities of the released files.
    released_corruption_mean: bool = False


#: ImageNet-A/R as the testbed scores them: the argmax over the set's 200 classes.
HENDRYCKS_200 = ("protocols", "hendrycks-200", "top1")

#: Our benchmark name -> its shift. The testbed columns behind each are in assets/testbed/README.md.
SHIFTS: dict[str, TestbedShift] = {
    shift.benchmark: shift
    for shift in (
        TestbedShift("imagenet-v2", "ImageNet-V2 (matched-frequency)", variant="matched-frequency"),
        # paper_imagenet_a.py, option no-subsample: two lines split at ResNet-50's val top-1, ResNet-50 left out.
        TestbedShift(
            "imagenet-a",
            "ImageNet-A (200 classes)",
            pivot=76.13,
            excluded_models=("resnet50",),
            top1_path=HENDRYCKS_200,
        ),
        TestbedShift("imagenet-r", "ImageNet-R (200 classes)", top1_path=HENDRYCKS_200),
        TestbedShift("imagenet-sketch", "ImageNet-Sketch"),
        TestbedShift("objectnet", "ObjectNet (113 classes)"),
        TestbedShift("imagenet-c", "ImageNet-C (released files, 15 x 5 mean)", released_corruption_mean=True),
    )
}


def logit_percent(top1: np.ndarray | float) -> np.ndarray:
    """The testbed's logit axis of a top-1 in percent: log(p / (1 - p)), p = top1 / 100."""
    p = np.asarray(top1, dtype=np.float64) / 100.0
    return np.log(p / (1.0 - p))


def inverse_logit_percent(z: np.ndarray | float) -> np.ndarray:
    """The top-1 in percent at logit `z` (the inverse of `logit_percent`)."""
    return 100.0 / (1.0 + np.exp(-np.asarray(z, dtype=np.float64)))


@functools.cache
def testbed_top1() -> pd.DataFrame:
    """The shipped per-model top-1 of the testbed (percent), indexed by its model names, with its model type."""
    return pd.read_csv(TESTBED_FILE, index_col="model")


def fit_models(shift: str, data: pd.DataFrame | None = None) -> pd.DataFrame:
    """The testbed models a shift's fit uses, with their clean and shifted top-1: type "standard" (trained on
    ImageNet-1k without a robustness intervention), no name part of `EXCLUDED_NAME_PARTS`, clean top-1 at least
    `MIN_CLEAN_TOP1`, both numbers present, and not one of the shift's `excluded_models`."""
    spec = _shift(shift)
    data = testbed_top1() if data is None else data
    names = data.index.str.lower()
    keep = (
        (data["testbed_type"] == "standard")
        & ~np.logical_or.reduce([names.str.contains(part) for part in EXCLUDED_NAME_PARTS])
        & (data[CLEAN_BENCHMARK] >= MIN_CLEAN_TOP1)
        & data[shift].notna()
        & ~names.isin(spec.excluded_models)
    )
    return data.loc[keep, [CLEAN_BENCHMARK, shift]]


@dataclass(frozen=True)
class FitSegment:
    """One line of a fit, in logit axes: slope and intercept (least squares on all its models) with their
    bootstrap percentile intervals, the number of models, and the clean top-1 range (%) it applies to."""

    slope: float
    intercept: float
    slope_interval: tuple[float, float]
    intercept_interval: tuple[float, float]
    num_models: int
    clean_range: tuple[float, float]


@dataclass(frozen=True)
class ShiftFit:
    """The testbed's fit of one shift: one segment, or two split at `pivot` (clean top-1, %)."""

    shift: str
    segments: tuple[FitSegment, ...]
    pivot: float | None
    confidence_level: float
    #: (resamples, segments, 2): each resample's slope and intercept per segment, for the Monte Carlo.
    resampled: np.ndarray

    def predict(self, clean_top1: np.ndarray | float, coefficients: np.ndarray | None = None) -> np.ndarray:
        """The predicted shifted top-1 (%) at `clean_top1` (%); `coefficients` (..., segments, 2) replace the fit's
        own (broadcast against `clean_top1`)."""
        own = np.array([[s.slope, s.intercept] for s in self.segments])
        coefficients = own if coefficients is None else coefficients
        clean = np.asarray(clean_top1, dtype=np.float64)
        lines = coefficients[..., 0] * logit_percent(clean)[..., None] + coefficients[..., 1]
        segment = np.zeros(clean.shape, dtype=int) if self.pivot is None else (clean > self.pivot).astype(int)
        return inverse_logit_percent(np.take_along_axis(lines, segment[..., None], axis=-1)[..., 0])

    def to_dict(self) -> dict[str, Any]:
        """The fit as results.json keeps it (no resamples)."""
        return {
            "shift": self.shift,
            "pivot": self.pivot,
            "confidence_level": self.confidence_level,
            "transform": "logit",
            "segments": [asdict(segment) for segment in self.segments],
        }


def _shift(shift: str) -> TestbedShift:
    if shift not in SHIFTS:
        raise ValueError(f"No testbed fit for {shift!r}; shifts with one: {sorted(SHIFTS)}.")
    return SHIFTS[shift]


def _least_squares(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Slope and intercept of y on x along the last axis, batched: (..., n) -> (..., 2)."""
    x_centred = x - x.mean(axis=-1, keepdims=True)
    y_centred = y - y.mean(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        slope = (x_centred * y_centred).sum(axis=-1) / (x_centred**2).sum(axis=-1)
    return np.stack([slope, y.mean(axis=-1) - slope * x.mean(axis=-1)], axis=-1)


def _percentile_interval(values: np.ndarray, confidence_level: float) -> tuple[float, float]:
    tail = 100.0 * (1.0 - confidence_level) / 2.0
    low, high = np.nanpercentile(values, [tail, 100.0 - tail])
    return float(low), float(high)


def fit_shift(
    shift: str, *, num_resamples: int = 1000, confidence_level: float = 0.95, seed: int = 0
) -> ShiftFit:
    """The testbed's linear fit in logit axes of `shift` (a key of `SHIFTS`), with percentile intervals of its
    slope and intercept from `num_resamples` bootstrap resamples of its models (seeded)."""
    if num_resamples < 1:
        raise ValueError(f"num_resamples must be a positive integer, got {num_resamples!r}.")
    spec = _shift(shift)
    models = fit_models(shift)
    parts = (
        [models]
        if spec.pivot is None
        else [models[models[CLEAN_BENCHMARK] < spec.pivot], models[models[CLEAN_BENCHMARK] > spec.pivot]]
    )
    rng = np.random.default_rng(derived_seed(seed, "effective-robustness", shift))
    segments, resampled = [], []
    for index, part in enumerate(parts):
        x, y = logit_percent(part[CLEAN_BENCHMARK].to_numpy()), logit_percent(part[shift].to_numpy())
        draws = rng.integers(0, len(x), size=(num_resamples, len(x)))
        coefficients = _least_squares(x[draws], y[draws])
        slope, intercept = _least_squares(x, y)
        low = 0.0 if index == 0 else spec.pivot
        high = 100.0 if index == len(parts) - 1 else spec.pivot
        segments.append(
            FitSegment(
                float(slope),
                float(intercept),
                _percentile_interval(coefficients[:, 0], confidence_level),
                _percentile_interval(coefficients[:, 1], confidence_level),
                len(x),
                (float(low), float(high)),
            )
        )
        resampled.append(coefficients)
    return ShiftFit(shift, tuple(segments), spec.pivot, confidence_level, np.stack(resampled, axis=1))


@dataclass(frozen=True)
class EffectiveRobustness:
    """A model's effective robustness on one shift, in percentage points, with its interval, and what it is made
    of: its clean and shifted top-1 (%), the images behind each, and the fit's prediction at its clean top-1."""

    shift: str
    clean_top1: float
    shift_top1: float
    predicted_top1: float
    value: float
    low: float
    high: float
    confidence_level: float
    clean_images: int
    shift_images: int


def effective_robustness(
    fit: ShiftFit,
    clean_correct: int,
    clean_images: int,
    shift_correct: int,
    shift_images: int,
    *,
    seed: int = 0,
) -> EffectiveRobustness:
    """Effective robustness of a model that got `clean_correct` of `clean_images` clean images and
    `shift_correct` of `shift_images` shifted ones right: shifted top-1 minus `fit`'s prediction at its clean top-1.

    Its interval comes from one draw per resample of the fit (`fit.resampled`): the clean and shifted counts drawn
    from binomials at the observed rates, the prediction made with that resample's line; the percentile interval
    of the differences. Rates of 0 or 1 are moved half an image inwards, where the logit is finite."""
    for name, correct, total in (
        ("clean", clean_correct, clean_images),
        ("shift", shift_correct, shift_images),
    ):
        if total < 1 or not 0 <= correct <= total:
            raise ValueError(
                f"{name}: need 0 <= correct <= images and images >= 1, got {correct} of {total}."
            )
    rng = np.random.default_rng(derived_seed(seed, "effective-robustness-draws", fit.shift))
    num = fit.resampled.shape[0]

    def top1(correct: np.ndarray | int, total: int) -> np.ndarray:
        return 100.0 * np.clip(np.asarray(correct, dtype=np.float64), 0.5, total - 0.5) / total

    clean, shifted = top1(clean_correct, clean_images), top1(shift_correct, shift_images)
    clean_draws = top1(rng.binomial(clean_images, clean / 100.0, num), clean_images)
    shift_draws = top1(rng.binomial(shift_images, shifted / 100.0, num), shift_images)
    differences = shift_draws - fit.predict(clean_draws, fit.resampled)
    predicted = float(fit.predict(clean))
    low, high = _percentile_interval(differences, fit.confidence_level)
    observed_shift = 100.0 * shift_correct / shift_images
    return EffectiveRobustness(
        fit.shift,
        100.0 * clean_correct / clean_images,
        observed_shift,
        predicted,
        observed_shift - predicted,
        low,
        high,
        fit.confidence_level,
        clean_images,
        shift_images,
    )


# ---------------------------------------------------------------------------------------------------------------
# The models of a run


def _counts(top1: Any, images: Any) -> tuple[int, int] | None:
    if not isinstance(top1, int | float) or not isinstance(images, int) or images < 1:
        return None
    return round(float(top1) * images / 100.0), images


def _clean_counts(metrics: Mapping[str, Any]) -> tuple[int, int] | None:
    """A model's (correct, images) on imagenet-val as the testbed scores it: ImageNet's own labels over every image.
    Under `labels: real` the headline top-1 is the ReaL one over the images that have a ReaL label; the scoring keeps
    the original-label top-1 over all images under `protocols.imagenet`, and that is the one read here."""
    original = (metrics.get("protocols") or {}).get("imagenet") or metrics
    return _counts(original.get("top1"), metrics.get("num_samples"))


def _shift_counts(
    result: Mapping[str, Any], shift: str, metrics: Mapping[str, Any]
) -> tuple[int, int] | None:
    """A model's (correct, images) on `shift` as the testbed scores it (`TestbedShift`): the recorded top-1 at
    `top1_path`, only for the test set `variant`; for `released_corruption_mean`, the mean over the 15 standard
    corruptions x 5 severities of the released files (every cell needed; its images counted as independent
    draws)."""
    spec = SHIFTS[shift]
    info = (result.get("benchmarks") or {}).get(shift) or {}
    variant = (info.get("options") or {}).get("variant")
    if spec.variant is not None and variant not in (None, spec.variant, [spec.variant]):
        return None
    if spec.released_corruption_mean:
        cells = metrics.get("top1_by_cell") or {}
        wanted = [f"{c}/{s}" for c in STANDARD_CORRUPTIONS for s in range(1, 6)]
        if info.get("generated", True) or not all(
            isinstance(cells.get(cell), int | float) for cell in wanted
        ):
            return None
        return _counts(float(np.mean([cells[cell] for cell in wanted])), metrics.get("num_samples"))
    top1: Any = metrics
    for part in spec.top1_path:
        top1 = top1.get(part) if isinstance(top1, Mapping) else None
    return _counts(top1, metrics.get("num_samples"))


def run_effective_robustness(
    results: Sequence[Mapping[str, Any]],
    *,
    num_resamples: int = 1000,
    confidence_level: float = 0.95,
    seed: int = 0,
) -> dict[str, Any]:
    """Effective robustness of every model of `results` (merged runs) that has a top-1 on imagenet-val and on a
    shift of `SHIFTS`: {"fits": shift -> `ShiftFit.to_dict()`, "models": [{"model": key, and the fields of its
    `EffectiveRobustness`}]}; an empty dict where no model has both."""
    fits: dict[str, ShiftFit] = {}
    rows: list[dict[str, Any]] = []
    for result in results:
        for key, benchmarks in (result.get("metrics") or {}).items():
            clean = _clean_counts(benchmarks.get(CLEAN_BENCHMARK) or {})
            for shift in SHIFTS:
                counts = _shift_counts(result, shift, benchmarks.get(shift) or {}) if clean else None
                if counts is None or clean is None:
                    continue
                if shift not in fits:
                    fits[shift] = fit_shift(
                        shift, num_resamples=num_resamples, confidence_level=confidence_level, seed=seed
                    )
                value = effective_robustness(fits[shift], *clean, *counts, seed=derived_seed(seed, key))
                rows.append({"model": key, **asdict(value)})
    if not rows:
        return {}
    return {"fits": {shift: fit.to_dict() for shift, fit in fits.items()}, "models": rows}


__all__ = [
    "CLEAN_BENCHMARK",
    "SHIFTS",
    "TESTBED_FILE",
    "EffectiveRobustness",
    "FitSegment",
    "ShiftFit",
    "TestbedShift",
    "effective_robustness",
    "fit_models",
    "fit_shift",
    "inverse_logit_percent",
    "logit_percent",
    "run_effective_robustness",
    "testbed_top1",
]
