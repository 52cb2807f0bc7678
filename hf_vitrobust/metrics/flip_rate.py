# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Prediction stability on ImageNet-P: flip probability and top-5 distance (Hendrycks & Dietterich, ICLR 2019, Sec. 4).

Following the reference evaluation (hendrycks/robustness `ImageNet-P/test.py`, `flip_prob` and `ranking_dist`):

* noise sequences (gaussian_noise, shot_noise, speckle_noise: the names containing "noise") compare every frame with
  the *first* frame, whatever the difficulty (a harder noise sequence is a different dataset);
* the other sequences compare frames `difficulty` apart: frame j with frame j + d (at d = 1, consecutive frames);
* a sequence's value is the mean over its comparisons, and a perturbation's value the mean over its sequences.

The top-5 distance of two frames is the reference's `dist(sigma, "top5")`: with r_k the rank (from 1) that the later
frame gives to the earlier frame's k-th ranked class (k = 1..5), capped at 6, T5D = sum_k |k - r_k|, so 0 means
the same top-5 in the same order. Only the two frames' top-5 lists are needed.

The paper's mFR and mT5D divide each perturbation's value by AlexNet's before averaging; AlexNet's per-perturbation
flip probabilities were not found in any citable, reachable source (hendrycks/robustness issue #49 points to a
spreadsheet), so the means here are *unnormalised* and say so in their names. Pass a `baseline` to normalise.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ..constants import NOISE_PERTURBATIONS, PERTURBATIONS, TEST_PERTURBATIONS, VALIDATION_PERTURBATIONS
from ..registry import check_known
from ._validation import as_index_array, as_string_list, check_same_length, json_float

TOP_K = 5


def is_noise_perturbation(name: str) -> bool:
    return name in NOISE_PERTURBATIONS


def _frame_pairs(num_frames: int, noise: bool, difficulty: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices (earlier, later) of the frames compared in one sequence."""
    later = np.arange(1, num_frames) if noise else np.arange(difficulty, num_frames)
    earlier = np.zeros_like(later) if noise else later - difficulty
    return earlier, later


def top5_distance(earlier: np.ndarray, later: np.ndarray) -> np.ndarray:
    """T5D between frame pairs given their top-5 class lists, (..., 5) each (best class first) -> (...)."""
    matches = earlier[..., :TOP_K, None] == later[..., None, :TOP_K]
    # 0-based rank in the later frame of each of the earlier frame's top-5 classes, capped at 5 (rank 6).
    rank = np.where(matches.any(-1), matches.argmax(-1), TOP_K)
    return np.abs(np.arange(TOP_K) - rank).sum(-1)


def sequence_stability(
    top_predictions: np.ndarray, perturbation: str, difficulty: int = 1
) -> tuple[np.ndarray, np.ndarray | None]:
    """Per-sequence flip probability and T5D of `(sequences, frames, k)` top-k class lists (k = 1 gives no T5D)."""
    _, num_frames, k = top_predictions.shape
    earlier, later = _frame_pairs(num_frames, is_noise_perturbation(perturbation), difficulty)
    first, second = top_predictions[:, earlier], top_predictions[:, later]
    flips = (first[..., 0] != second[..., 0]).mean(-1)
    distances = top5_distance(first, second).mean(-1) if k >= TOP_K else None
    return flips, distances


def per_sequence_stability(
    sequences: Sequence[Any], perturbations: Sequence[str], difficulty: int = 1
) -> tuple[np.ndarray, np.ndarray | None]:
    """Each sequence's flip probability and T5D, in the given order (what `flip_rates` averages per perturbation),
    batched per (perturbation, frame count): `sequences[i]` is a (frames, k) array of top-k class lists. The T5D is
    None when some sequence has only top-1 predictions. The unit values of the mFR / mT5D bootstraps."""
    arrays = [np.asarray(sequence, dtype=np.int64) for sequence in sequences]
    flips = np.empty(len(arrays))
    distances: np.ndarray | None = np.empty(len(arrays))
    groups: dict[tuple[str, int], list[int]] = {}
    for i, (name, sequence) in enumerate(zip(perturbations, arrays, strict=True)):
        groups.setdefault((str(name), len(sequence)), []).append(i)
    for (name, _), members in groups.items():
        flip, distance = sequence_stability(np.stack([arrays[i] for i in members]), name, difficulty)
        flips[members] = flip
        if distance is None:
            distances = None
        elif distances is not None:
            distances[members] = distance
    return flips, distances


@dataclass(frozen=True)
class FlipRateResult:
    """ImageNet-P stability at one difficulty. Flip probabilities are fractions; T5D is in rank units (0..15).

    `mfr_unnormalized` / `mt5d_unnormalized` average the 10 test perturbations (the validation ones are in
    `validation_*` only). `mfr` / `mt5d` (percent) are set only when a baseline (e.g. AlexNet's values) is given.
    `top5_distance` is empty when only top-1 predictions were given.
    """

    difficulty: int
    flip_probability: dict[str, float]
    top5_distance: dict[str, float]
    mfr_unnormalized: float | None
    mt5d_unnormalized: float | None
    validation_mfr_unnormalized: float | None
    validation_mt5d_unnormalized: float | None
    num_sequences: dict[str, int]
    mfr: float | None = None
    mt5d: float | None = None
    missing_perturbations: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _check_names(names: Sequence[str]) -> None:
    check_known(sorted(set(names) - set(PERTURBATIONS)), PERTURBATIONS, "ImageNet-P perturbation")


def _mean(values: Mapping[str, float], names: Sequence[str]) -> float | None:
    present = [values[name] for name in names if name in values]
    return json_float(np.mean(present)) if present else None


def flip_rates(
    predictions: Sequence[Any],
    perturbations: Sequence[str],
    difficulties: Sequence[int] | np.ndarray | int = 1,
    *,
    allow_partial: bool = False,
    baseline_flip_probability: Mapping[str, float] | None = None,
    baseline_top5_distance: Mapping[str, float] | None = None,
) -> FlipRateResult:
    """Flip probability and T5D per perturbation, and their means over the test perturbations.

    `predictions[i]` is sequence i's `(frames, k)` top-k class indices, best first (k >= 5 for T5D; k = 1 gives flip
    probabilities only). All sequences share one difficulty (1..3). Every test perturbation must be present unless
    `allow_partial=True`. A `baseline_*` mapping (perturbation -> the baseline model's value, e.g. AlexNet's) adds
    the normalised `mfr` / `mt5d` in percent: mean over the test perturbations of 100 * value / baseline.
    """
    names = as_string_list(perturbations, "perturbations")
    if isinstance(difficulties, int):
        difficulties = [difficulties] * len(names)
    levels = as_index_array(difficulties, "difficulties")
    check_same_length(predictions=predictions, perturbations=names, difficulties=levels)
    if not names:
        raise ValueError("No sequences given.")
    _check_names(names)
    if set(levels.tolist()) - {1, 2, 3}:
        raise ValueError(f"Difficulties must be in 1..3; got {sorted(set(levels.tolist()))}.")
    if len(set(levels.tolist())) != 1:
        raise ValueError(
            f"One difficulty per computation; got {sorted(set(levels.tolist()))}. Compute each apart."
        )
    difficulty = int(levels[0])

    sequences = [
        as_index_array(sequence, f"predictions[{i}]", ndim=2) for i, sequence in enumerate(predictions)
    ]
    ks = {sequence.shape[1] for sequence in sequences}
    if len(ks) != 1 or not (ks == {1} or min(ks) >= TOP_K):
        raise ValueError(
            f"Every sequence needs the same number k of top classes per frame, k = 1 or k >= 5; got {sorted(ks)}."
        )
    short = [
        i
        for i, sequence in enumerate(sequences)
        if sequence.shape[0] <= (1 if is_noise_perturbation(names[i]) else difficulty)
    ]
    if short:
        raise ValueError(f"Sequences {short[:10]} have too few frames to compare at difficulty {difficulty}.")

    # Batched per (perturbation, frame count): one vectorised comparison per group.
    groups: dict[tuple[str, int], list[int]] = {}
    for i, (name, sequence) in enumerate(zip(names, sequences, strict=True)):
        groups.setdefault((name, sequence.shape[0]), []).append(i)
    flips: dict[str, list[np.ndarray]] = {}
    distances: dict[str, list[np.ndarray]] = {}
    for (name, _), members in groups.items():
        flip, distance = sequence_stability(np.stack([sequences[i] for i in members]), name, difficulty)
        flips.setdefault(name, []).append(flip)
        if distance is not None:
            distances.setdefault(name, []).append(distance)

    ordered = [name for name in PERTURBATIONS if name in flips]
    flip_probability = {name: float(np.concatenate(flips[name]).mean()) for name in ordered}
    top5 = {name: float(np.concatenate(distances[name]).mean()) for name in ordered if name in distances}
    missing = [name for name in TEST_PERTURBATIONS if name not in flip_probability]
    if missing and not allow_partial:
        raise ValueError(
            f"Missing ImageNet-P test perturbations: {', '.join(missing)}. Pass allow_partial=True to average what is present."
        )

    def normalised(values: Mapping[str, float], baseline: Mapping[str, float] | None) -> float | None:
        if baseline is None:
            return None
        present = [name for name in TEST_PERTURBATIONS if name in values]
        absent = [name for name in present if name not in baseline]
        if absent:
            raise ValueError(f"The baseline lacks perturbation(s) {', '.join(absent)}.")
        return (
            json_float(np.mean([100.0 * values[name] / baseline[name] for name in present]))
            if present
            else None
        )

    return FlipRateResult(
        difficulty=difficulty,
        flip_probability=flip_probability,
        top5_distance=top5,
        mfr_unnormalized=_mean(flip_probability, TEST_PERTURBATIONS),
        mt5d_unnormalized=_mean(top5, TEST_PERTURBATIONS),
        validation_mfr_unnormalized=_mean(flip_probability, VALIDATION_PERTURBATIONS),
        validation_mt5d_unnormalized=_mean(top5, VALIDATION_PERTURBATIONS),
        num_sequences={name: int(sum(len(f) for f in flips[name])) for name in ordered},
        mfr=normalised(flip_probability, baseline_flip_probability),
        mt5d=normalised(top5, baseline_top5_distance) if top5 else None,
        missing_perturbations=missing,
    )
