# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Confidence intervals and paired tests for the package's metrics: the statistics behind "x [lo, hi]".

- Proportions (top-1, top-5, per-point accuracies of a probe curve): the Wilson score interval, or the exact
  Clopper-Pearson interval on request, vectorised over arrays of counts (`proportion_interval`).
- Everything else (mCE, mFR, AUPR, BG-gap, ECE, differences between two models): the percentile bootstrap
  (`bootstrap_interval`) over resampling units (an image, a clean image with all its corruptions and severities, a
  sequence, a foreground image with all its backgrounds), optionally within strata (ImageNet-O's OOD and
  in-distribution halves are resampled separately). A statistic takes the resampling weights, an (b, units) array
  of how often each unit was drawn, so that cluster sums are one matrix product and no replicate loops in Python.
- Paired comparisons: McNemar's exact test on the discordant pairs of two models' correctness (`mcnemar_test`) and
  Holm's step-down correction over a family of comparisons (`holm_adjust`).
- `samples_needed`: how many samples a target half-width takes.

Two guards keep an interval from claiming more than the data allow. Each quantity has a support (`Support`: an
accuracy [0, 1], a norm or an error [0, inf)), and its bounds are clipped to it (`clip_to_support`); a percentile
bootstrap stays inside by construction, a Student-t interval need not. And where every bootstrap replicate is equal
(`replicates_identical`: every unit alike, e.g. 8 images all wrong on every cell) or a sample's standard deviation is
0, the spread seen is no evidence of certainty: the interval falls back to the range the quantity can take when a
share of the units up to `unit_share_bound` (the Wilson or Clopper-Pearson upper bound at 0 of n units) differs
from the units seen (docs/protocols.md, "Confidence intervals").

The draws are `numpy.random.Generator.integers(0, n, (b, n))` per stratum and batch, as `scipy.stats.bootstrap`
draws them, so with one batch (at most `MAX_DRAWS_PER_BATCH` indices) and the same Generator the replicates are
scipy's. Everything is seeded; nothing depends on the number of processes (intervals are computed once, on the
merged predictions, with units in a sorted order).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy.special import betaincinv, ndtri
from scipy.stats import binom

DEFAULT_CONFIDENCE_LEVEL = 0.95
DEFAULT_NUM_RESAMPLES = 1000
PROPORTION_METHODS = ("wilson", "clopper-pearson")
#: Bootstrap indices drawn at once (rows x all units, every stratum): 2**24 int64 (128 MiB), and as many float64
#: weights; larger draws are split into row batches.
MAX_DRAWS_PER_BATCH = 1 << 24
#: The same for one stratum (a cluster bootstrap over clean images, a proportion's samples), whose draws are the
#: same stream however the rows are cut (one `integers` call per batch; several strata interleave by batch): cut
#: finer, so that rank 0's memory stays flat from 1,000 to 50,000 clean images (8 MiB of indices, not 128).
MAX_DRAWS_ONE_STRATUM = 1 << 20

#: A statistic of resampled units: weights (b, units), how often each unit was drawn, -> (b,) values.
WeightedStatistic = Callable[[np.ndarray], np.ndarray]
#: The values a quantity can take, (low, high), None for an unbounded side: clipping bounds of its intervals.
Support = tuple[float | None, float | None]
UNBOUNDED: Support = (None, None)
NON_NEGATIVE: Support = (0.0, None)
UNIT_RANGE: Support = (0.0, 1.0)
#: Replicates whose spread is at most this share of their size (at least 1) count as all equal (float rounding of
#: a statistic that is constant over the resamples).
IDENTICAL_TOLERANCE = 1e-9
#: What a zero spread was: of a bootstrap's replicates, or of a mean's values.
EQUAL_REPLICATES = "every bootstrap replicate was equal"
EQUAL_VALUES = "every image gave the same value"


def check_confidence_level(confidence_level: float) -> float:
    """`confidence_level` as a float in (0, 1); anything else is a ValueError."""
    if isinstance(confidence_level, bool) or not isinstance(confidence_level, numbers.Real):
        raise ValueError(f"confidence_level must be a number in (0, 1), got {confidence_level!r}.")
    level = float(confidence_level)
    if not 0.0 < level < 1.0:
        raise ValueError(f"confidence_level must be in (0, 1), got {confidence_level!r}.")
    return level


def z_value(confidence_level: float) -> float:
    """The two-sided normal quantile of `confidence_level` (1.959964 for 0.95)."""
    return float(ndtri(0.5 + 0.5 * check_confidence_level(confidence_level)))


@dataclass(frozen=True)
class Interval:
    """A point estimate with its confidence interval.

    method: "wilson", "clopper-pearson" or "percentile bootstrap"; unit: what was resampled or counted ("sample",
    "clean image", "sequence", ...); num_samples: the samples behind the estimate; num_units: the resampling units
    (clusters); num_resamples / seed: the bootstrap's; note: a caveat the report prints (first-N subset, samples
    treated as independent); scale: the factor from the statistic's own units (100: a proportion in percent).
    """

    estimate: float | None
    low: float | None
    high: float | None
    confidence_level: float
    method: str
    num_samples: int
    unit: str = "sample"
    num_units: int | None = None
    num_resamples: int | None = None
    seed: int | None = None
    note: str | None = None
    scale: float = 1.0

    @property
    def half_width(self) -> float | None:
        """Half the interval's width (None where it is undefined)."""
        if self.low is None or self.high is None:
            return None
        return (self.high - self.low) / 2.0

    def contains(self, value: float) -> bool:
        """Whether `value` lies in [low, high]."""
        return self.low is not None and self.high is not None and self.low <= value <= self.high

    def scaled(self, factor: float) -> Interval:
        """The same interval in other units (e.g. x100 for percent); a negative factor swaps the bounds."""

        def times(value: float | None) -> float | None:
            return None if value is None else float(value) * factor

        low, high = times(self.low), times(self.high)
        if factor < 0:
            low, high = high, low
        return _replace(
            self, estimate=times(self.estimate), low=low, high=high, scale=self.scale * abs(factor)
        )

    def with_note(self, note: str | None) -> Interval:
        """The same interval with `note` added to its caveats."""
        if not note:
            return self
        return _replace(self, note=note if not self.note else f"{self.note}; {note}")

    def format(self, digits: int = 2) -> str:
        """ "x [lo, hi]" with `digits` decimals ("-" for a missing estimate)."""
        if self.estimate is None or not math.isfinite(self.estimate):
            return "-"
        if self.low is None or self.high is None:
            return f"{self.estimate:.{digits}f}"
        return f"{self.estimate:.{digits}f} [{self.low:.{digits}f}, {self.high:.{digits}f}]"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Interval:
        """The inverse of `to_dict` (unknown keys are ignored, so an older reader loads a newer record)."""
        fields = cls.__dataclass_fields__
        return cls(**{key: value for key, value in data.items() if key in fields})


def _replace(interval: Interval, **changes: Any) -> Interval:
    return Interval(**{**asdict(interval), **changes})


# ---------------------------------------------------------------------------------------------------- proportions
def _check_counts(successes: Any, trials: Any) -> tuple[np.ndarray, np.ndarray]:
    k = np.asarray(successes, dtype=np.float64)
    n = np.asarray(trials, dtype=np.float64)
    if (
        np.any(n < 0)
        or np.any(k < 0)
        or np.any(k > n)
        or np.any(k != np.round(k))
        or np.any(n != np.round(n))
    ):
        raise ValueError("successes and trials must be integer counts with 0 <= successes <= trials.")
    return np.broadcast_arrays(k, n)


def wilson_bounds(successes: Any, trials: Any, confidence_level: float = DEFAULT_CONFIDENCE_LEVEL):
    """Wilson score interval bounds (Wilson 1927; Newcombe 1998, method 3) of k successes in n trials, vectorised:
    (low, high) arrays of proportions; NaN where n = 0. At k = 0 the low bound is 0, at k = n the high bound is 1
    (as `scipy.stats.binomtest(k, n).proportion_ci(method="wilson")`)."""
    k, n = _check_counts(successes, trials)
    z = z_value(confidence_level)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = k / n
        denominator = 2.0 * (n + z * z)
        center = (2.0 * n * p + z * z) / denominator
        delta = z / denominator * np.sqrt(4.0 * n * p * (1.0 - p) + z * z)
        low = np.where(k == 0, 0.0, center - delta)
        high = np.where(k == n, 1.0, center + delta)
    empty = n == 0
    return np.where(empty, np.nan, low), np.where(empty, np.nan, high)


def clopper_pearson_bounds(successes: Any, trials: Any, confidence_level: float = DEFAULT_CONFIDENCE_LEVEL):
    """The exact (Clopper-Pearson 1934) interval bounds of k successes in n trials, vectorised: the Beta quantiles
    B(alpha/2; k, n-k+1) and B(1-alpha/2; k+1, n-k); NaN where n = 0."""
    k, n = _check_counts(successes, trials)
    alpha = 1.0 - check_confidence_level(confidence_level)
    with np.errstate(divide="ignore", invalid="ignore"):
        low = np.where(k == 0, 0.0, betaincinv(np.maximum(k, 1e-300), n - k + 1.0, alpha / 2.0))
        high = np.where(k == n, 1.0, betaincinv(k + 1.0, np.maximum(n - k, 1e-300), 1.0 - alpha / 2.0))
    empty = n == 0
    return np.where(empty, np.nan, low), np.where(empty, np.nan, high)


def proportion_bounds(
    successes: Any, trials: Any, confidence_level: float = DEFAULT_CONFIDENCE_LEVEL, method: str = "wilson"
):
    """(low, high) proportion bounds by `method` ("wilson" or "clopper-pearson"), vectorised."""
    if method == "wilson":
        return wilson_bounds(successes, trials, confidence_level)
    if method == "clopper-pearson":
        return clopper_pearson_bounds(successes, trials, confidence_level)
    raise ValueError(
        f"Unknown proportion interval method {method!r}; choose one of {list(PROPORTION_METHODS)}."
    )


def proportion_interval(
    successes: int,
    trials: int,
    confidence_level: float = DEFAULT_CONFIDENCE_LEVEL,
    method: str = "wilson",
    scale: float = 1.0,
    unit: str = "sample",
) -> Interval:
    """The interval of one proportion k / n, times `scale` (100: percent)."""
    low, high = proportion_bounds(successes, trials, confidence_level, method)
    estimate = successes / trials if trials else None
    return Interval(
        estimate=estimate,
        low=None if trials == 0 else float(low),
        high=None if trials == 0 else float(high),
        confidence_level=float(confidence_level),
        method=method,
        num_samples=int(trials),
        unit=unit,
    ).scaled(scale)


def check_interval_options(
    confidence_level: float | None, num_resamples: int, seed: int, interval_method: str
) -> float | None:
    """The interval options of the `evaluate` modules, checked before any work: the confidence level as a float
    (None: no intervals); a bad option is a ValueError naming it."""
    if interval_method not in PROPORTION_METHODS:
        raise ValueError(
            f"interval_method must be one of {list(PROPORTION_METHODS)}, got {interval_method!r}."
        )
    if (
        isinstance(num_resamples, bool)
        or not isinstance(num_resamples, numbers.Integral)
        or num_resamples < 1
    ):
        raise ValueError(f"num_resamples must be a positive integer, got {num_resamples!r}.")
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}.")
    return None if confidence_level is None else check_confidence_level(confidence_level)


def proportion_interval_dicts(
    successes: Any, trials: Any, confidence_level: float, method: str = "wilson", unit: str = "image"
) -> list[dict[str, Any]]:
    """One `Interval` dict per point of a curve of proportions successes / trials (fractions), e.g. the accuracy
    at each occlusion ratio or frequency band."""
    k = np.asarray(successes, dtype=np.float64)
    n = np.asarray(trials, dtype=np.int64)
    low, high = proportion_bounds(k, n, confidence_level, method)
    return [
        Interval(
            estimate=float(a / b),
            low=float(lo),
            high=float(hi),
            confidence_level=confidence_level,
            method=method,
            num_samples=int(b),
            unit=unit,
        ).to_dict()
        for a, b, lo, hi in zip(k, n, low, high, strict=True)
    ]


def clip_to_support(low: Any, high: Any, support: Support = UNBOUNDED) -> tuple[np.ndarray, np.ndarray]:
    """Bounds clipped to the quantity's support (a norm's low bound at 0, an accuracy's high bound at 1), vectorised;
    NaN stays NaN."""
    floor = -np.inf if support[0] is None else float(support[0])
    ceiling = np.inf if support[1] is None else float(support[1])
    return np.clip(np.asarray(low, dtype=np.float64), floor, ceiling), np.clip(
        np.asarray(high, dtype=np.float64), floor, ceiling
    )


def clipped_bounds(
    low: float | None, high: float | None, support: Support
) -> tuple[float | None, float | None]:
    """`clip_to_support` of one interval's bounds, None kept as None."""
    if low is None or high is None:
        return low, high
    clipped_low, clipped_high = clip_to_support(low, high, support)
    return float(clipped_low), float(clipped_high)


def replicates_identical(replicates: np.ndarray) -> bool:
    """Whether every finite bootstrap replicate is equal (to float rounding): the resamples saw no spread, as when
    every unit is alike."""
    finite = np.asarray(replicates, dtype=np.float64)
    finite = finite[np.isfinite(finite)]
    if finite.size == 0:
        return False
    spread = float(finite.max() - finite.min())
    return spread <= IDENTICAL_TOLERANCE * max(1.0, float(np.abs(finite).max()))


def unit_share_bound(
    num_units: Any, confidence_level: float = DEFAULT_CONFIDENCE_LEVEL, method: str = "wilson"
) -> np.ndarray:
    """The largest share of the population's units that may differ from n units seen all alike: the upper bound
    of a proportion at 0 successes of n, by `method` (Wilson z^2 / (n + z^2); Clopper-Pearson 1 - (alpha/2)^(1/n)),
    vectorised. A quantity that is a mean over units of a value in [a, b], seen equal to c on every unit, then lies
    in [c - eps (c - a), c + eps (b - c)]: at a = c = 0 this is the proportion's own interval at 0 of n."""
    n = np.asarray(num_units, dtype=np.float64)
    return proportion_bounds(np.zeros_like(n), n, confidence_level, method)[1]


def fallback_method(method: str, proportion_method: str) -> str:
    """The `method` an interval records when its zero spread fell back on `unit_share_bound`."""
    return f"{method} with {proportion_method} fallback"


def is_fallback(method: str) -> bool:
    """Whether an interval's `method` is a `fallback_method` (whose width shrinks as 1/n, not 1/sqrt(n))."""
    return method.endswith(" fallback")


def share_fallback_note(proportion_method: str, spread: str = EQUAL_REPLICATES) -> str:
    """The caveat of an interval whose zero `spread` fell back on `unit_share_bound`."""
    return (
        f"{spread} (the units all alike), so the bounds are the quantity's range when up to the "
        f"{proportion_method} upper bound at 0 of n units differ from them"
    )


def not_estimable_note(spread: str = EQUAL_REPLICATES) -> str:
    """The caveat of an interval left out because its zero `spread` has no bounded range to fall back on."""
    return f"{spread} and the quantity has no bounded range per unit, so its interval is not estimable"


# ------------------------------------------------------------------------------------------------------ bootstrap
def bootstrap_weights(
    num_units: int | Sequence[int], num_resamples: int, rng: np.random.Generator
) -> Iterator[np.ndarray]:
    """Batches of resampling weights (b, total units), float64: how often each unit was drawn in each replicate.

    `num_units` is a count, or one count per stratum: the units of stratum s are resampled among themselves
    (`rng.integers(0, n_s, (b, n_s))`, strata in order, as `scipy.stats.bootstrap` resamples its samples), and
    their weights sit in the columns of that stratum, in order."""
    strata = [int(num_units)] if np.ndim(num_units) == 0 else [int(n) for n in num_units]
    if num_resamples < 1:
        raise ValueError(f"num_resamples must be >= 1, got {num_resamples}.")
    if any(n < 1 for n in strata):
        raise ValueError(f"Every stratum needs at least one unit, got sizes {strata}.")
    total = sum(strata)
    # The batch (rows x all units) is bounded, not each stratum's draw: with many strata (cells of ImageNet-C
    # without clean keys) a per-stratum bound made batches of (2**24 / largest stratum) rows x every unit.
    budget = MAX_DRAWS_ONE_STRATUM if len(strata) == 1 else MAX_DRAWS_PER_BATCH
    rows_per_batch = max(1, budget // total)
    offsets = np.cumsum([0, *strata])
    done = 0
    while done < num_resamples:
        rows = min(rows_per_batch, num_resamples - done)
        weights = np.empty((rows, total), dtype=np.float64)
        for start, n in zip(offsets[:-1], strata, strict=True):
            drawn = rng.integers(0, n, (rows, n))
            row_base = (np.arange(rows, dtype=np.int64) * n)[:, None]
            counts = np.bincount((drawn + row_base).ravel(), minlength=rows * n)
            weights[:, start : start + n] = counts.reshape(rows, n)  # only this stratum's columns
        done += rows
        yield weights


def percentile_bounds(replicates: np.ndarray, confidence_level: float = DEFAULT_CONFIDENCE_LEVEL):
    """The percentile interval of bootstrap replicates: their (alpha/2, 1 - alpha/2) quantiles, linear
    interpolation (as `scipy.stats.bootstrap(method="percentile")`). Non-finite replicates (a statistic undefined
    on a degenerate resample) are dropped; (None, None) when none is left."""
    alpha = (1.0 - check_confidence_level(confidence_level)) / 2.0
    finite = replicates[np.isfinite(replicates)]
    if finite.size == 0:
        return None, None
    low, high = np.quantile(finite, [alpha, 1.0 - alpha])
    return float(low), float(high)


def bootstrap_replicates(
    statistic: WeightedStatistic,
    num_units: int | Sequence[int],
    num_resamples: int = DEFAULT_NUM_RESAMPLES,
    seed: int | np.random.Generator = 0,
) -> np.ndarray:
    """The statistic's (num_resamples,) bootstrap distribution, units resampled (within strata) with replacement."""
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    return np.concatenate(
        [np.asarray(statistic(w), dtype=np.float64) for w in bootstrap_weights(num_units, num_resamples, rng)]
    )


def bootstrap_interval(
    statistic: WeightedStatistic,
    num_units: int | Sequence[int],
    *,
    confidence_level: float = DEFAULT_CONFIDENCE_LEVEL,
    num_resamples: int = DEFAULT_NUM_RESAMPLES,
    seed: int = 0,
    num_samples: int | None = None,
    unit: str = "sample",
    scale: float = 1.0,
    support: Support = UNBOUNDED,
) -> Interval:
    """The percentile-bootstrap interval of `statistic`, whose estimate is the statistic at unit weights 1 (the
    sample itself), clipped to its `support`, times `scale`. Where every replicate is equal a statistic known only
    as a function of weights has no range to fall back on: its bounds are None, with a note
    (`metrics.estimators.Estimator` falls back on `unit_share_bound` where it knows the range)."""
    total = int(num_units) if np.ndim(num_units) == 0 else int(sum(num_units))
    estimate = float(np.asarray(statistic(np.ones((1, total))), dtype=np.float64)[0])
    replicates = bootstrap_replicates(statistic, num_units, num_resamples, seed)
    note = None
    if replicates_identical(replicates):
        low, high, note = None, None, not_estimable_note()
    else:
        low, high = clipped_bounds(*percentile_bounds(replicates, confidence_level), support)
    return Interval(
        estimate=estimate if math.isfinite(estimate) else None,
        low=low,
        high=high,
        confidence_level=float(confidence_level),
        method="percentile bootstrap",
        num_samples=total if num_samples is None else int(num_samples),
        unit=unit,
        num_units=total,
        num_resamples=int(num_resamples),
        seed=int(seed),
        note=note,
    ).scaled(scale)


def weighted_ratio(weights: np.ndarray, numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """(weights @ numerator) / (weights @ denominator): a resampled ratio of unit sums (an accuracy, an error of
    each cell); columns of `numerator`/`denominator` (units, cells) give one ratio each. NaN where the resample
    holds no denominator."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return (weights @ numerator) / (weights @ denominator)


# --------------------------------------------------------------------------------------------- paired comparisons
@dataclass(frozen=True)
class McNemarResult:
    """McNemar's exact test of two models on the same samples: `only_a` samples only model A got right, `only_b`
    only model B; p_value: the two-sided exact binomial p-value of the discordant pairs (1.0 without any)."""

    only_a: int
    only_b: int
    p_value: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def mcnemar_test(correct_a: Any, correct_b: Any) -> McNemarResult:
    """McNemar's exact test (McNemar 1947; the exact binomial form): under H0 the discordant pairs split 50/50.
    p = min(1, 2 * P[Bin(b + c, 1/2) <= min(b, c)])."""
    a = np.asarray(correct_a, dtype=bool)
    b = np.asarray(correct_b, dtype=bool)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"McNemar needs two 1-d arrays of the same samples, got {a.shape} and {b.shape}.")
    only_a = int(np.sum(a & ~b))
    only_b = int(np.sum(~a & b))
    discordant = only_a + only_b
    p_value = (
        1.0 if discordant == 0 else min(1.0, 2.0 * float(binom.cdf(min(only_a, only_b), discordant, 0.5)))
    )
    return McNemarResult(only_a, only_b, p_value)


def holm_adjust(p_values: Sequence[float]) -> list[float]:
    """Holm's (1979) step-down adjusted p-values, in the input order: the i-th smallest p times (m - i + 1),
    made monotone and capped at 1. A comparison is resolved at level alpha when its adjusted p is <= alpha."""
    p = np.asarray(p_values, dtype=np.float64)
    m = p.size
    if m == 0:
        return []
    order = np.argsort(p, kind="stable")
    adjusted = np.minimum(1.0, np.maximum.accumulate(p[order] * (m - np.arange(m))))
    out = np.empty(m)
    out[order] = adjusted
    return out.tolist()


def bootstrap_p_value(replicates: np.ndarray, null: float = 0.0) -> float:
    """The two-sided percentile-bootstrap p-value of H0: statistic = `null`: twice the smaller share of replicates
    on either side of it (the smallest level at which the percentile interval excludes `null`), capped at 1."""
    finite = replicates[np.isfinite(replicates)]
    if finite.size == 0:
        return 1.0
    below = (np.sum(finite < null) + 0.5 * np.sum(finite == null)) / finite.size
    return float(min(1.0, 2.0 * min(below, 1.0 - below)))


# --------------------------------------------------------------------------------------------- samples needed
def samples_needed(interval: Interval, target_half_width: float) -> int | None:
    """How many samples would give `interval`'s estimate a half-width of `target_half_width` (in the interval's
    units). Proportions: the normal approximation n = z^2 p (1 - p) / h^2 at the observed p; bootstrap intervals:
    the width shrinks as 1 / sqrt(n), so n = n_now (h_now / h)^2, counted in the interval's resampling units (clean
    images of ImageNet-C, sequences' clean images of ImageNet-P: what `--limit` counts), else in samples; a
    `fallback_method` interval (`unit_share_bound`, about z^2 / n wide) shrinks as 1 / n: n = n_now h_now / h.
    None where the interval is undefined, or degenerate (zero width) for a bootstrap."""
    if target_half_width <= 0:
        raise ValueError(f"target_half_width must be > 0, got {target_half_width}.")
    now = interval.half_width
    if interval.estimate is None or now is None:
        return None
    if interval.method in PROPORTION_METHODS:
        p = interval.estimate / interval.scale
        h = target_half_width / interval.scale
        z = z_value(interval.confidence_level)
        # At p = 0 or 1 the normal approximation says 1 sample; use p one quarter-sample away from the edge.
        edge = 1.0 / (4.0 * max(interval.num_samples, 1))
        p = min(max(p, edge), 1.0 - edge)
        return max(1, math.ceil(z * z * p * (1.0 - p) / (h * h)))
    if now <= 0:
        return None
    current = interval.num_samples if interval.num_units is None else interval.num_units
    power = 1 if is_fallback(interval.method) else 2
    return max(1, math.ceil(current * (now / target_half_width) ** power))


__all__ = [
    "DEFAULT_CONFIDENCE_LEVEL",
    "DEFAULT_NUM_RESAMPLES",
    "EQUAL_REPLICATES",
    "EQUAL_VALUES",
    "IDENTICAL_TOLERANCE",
    "MAX_DRAWS_ONE_STRATUM",
    "MAX_DRAWS_PER_BATCH",
    "NON_NEGATIVE",
    "PROPORTION_METHODS",
    "UNBOUNDED",
    "UNIT_RANGE",
    "Interval",
    "McNemarResult",
    "Support",
    "WeightedStatistic",
    "bootstrap_interval",
    "bootstrap_p_value",
    "bootstrap_replicates",
    "bootstrap_weights",
    "check_confidence_level",
    "check_interval_options",
    "clip_to_support",
    "clipped_bounds",
    "clopper_pearson_bounds",
    "fallback_method",
    "holm_adjust",
    "is_fallback",
    "mcnemar_test",
    "not_estimable_note",
    "percentile_bounds",
    "proportion_bounds",
    "proportion_interval",
    "proportion_interval_dicts",
    "replicates_identical",
    "samples_needed",
    "share_fallback_note",
    "unit_share_bound",
    "weighted_ratio",
    "wilson_bounds",
    "z_value",
]
