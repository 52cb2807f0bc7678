# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Occlusion sweep: accuracy and confidence as a growing black square hides more of each image.

Paul & Chen ("Vision Transformers are Robust Learners", AAAI 2022, Cutout masking analysis) mask one square region
covering a fraction r of each image (r = 0.05, 0.1, 0.2, 0.5) with zeros and report the top-1 accuracy: ViT-L/16
keeps more of its clean accuracy than BiT as r grows (their notebooks, on 1000 ImageNet validation images: 83.0 % ->
60.4 % for ViT-L/16 and 79.0 % -> 52.0 % for BiT-M-R101x3 from r = 0 to r = 0.5; accuracy over all the listed
images at each ratio, not relative to the clean accuracy). The aggregation is
`hf_vitrobust.metrics.occlusion_accuracy`.

Confidence: Paul & Chen's masking notebooks compute only the accuracy; where their code speaks of a prediction's
confidence (analysis/attention_maps) it is the maximum softmax probability. The sweep reports that mean, and
also the mean softmax probability of the true class.

The hole (`hole`):
- "exact-area" (default): `hf_vitrobust.corruptions.occlusion.cutout`, a square of side round(sqrt(r H W))
  (the integer whose square is closest to r H W) wholly inside the image, so every image loses `side**2` pixels.
- "albumentations-1": the rule of the notebooks' `A.Cutout(num_holes=1, max_h_size=s, max_w_size=s)` with
  s = int(sqrt(r H W)) (floored), identical in albumentations 0.4.6 to 1.3.1 (Cutout was removed in 1.4.0):
  a centre (y, x) uniform over {0..H} x {0..W} (`random.randint` includes both ends), the hole's top-left at
  (y - s // 2, x - s // 2) clipped to >= 0 (a hole across the top or left edge is pushed inside), and its
  bottom-right at top-left + s clipped to (H, W) (a hole across the bottom or right edge is cut). At r = 0.5 of
  224 x 224 (s = 158) the masked area averages 0.413 of the image (0.047, 0.090, 0.177 at r = 0.05, 0.1,
  0.2); "exact-area" masks 0.498 (0.050, 0.100, 0.199).
Both rules draw their position from the same two uniforms of the counter-based "cutout" stream keyed by (seed,
sample id), not from Python's `random`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import torch

from ..corruptions.base import check_images, check_sample_ids
from ..corruptions.occlusion import (
    DEFAULT_RATIOS,
    STREAM,
    box_masks,
    check_fill,
    check_ratio,
    cutout,
    fill_holes,
    hole_side,
)
from ..corruptions.randomness import uniform
from ..data.image_lists import IMAGE_LISTS, check_image_list, file_name, image_list
from ..metrics.occlusion_accuracy import occlusion_accuracy
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
    MISSING,
    SeriesData,
    as_float_array,
    bounds_at,
    curve_bounds,
    fmt_percent,
    fmt_percent_interval,
    line_figure,
)
from .intervals import counts_from_means, interval_entry, proportion_curve
from .param_checks import calls, sequence_of
from .per_image import PER_IMAGE, merged_per_image, per_image_of, per_image_record
from .spec import (
    IMAGE_LIST_SELECTION,
    ProbeFigure,
    ProbeFinding,
    ProbeSpec,
    ProbeValue,
    grid_index,
    probe_kwargs,
    register_probe,
    same_setting,
    summed_counts,
    total_images,
    weighted_mean,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

HoleRule = Literal["exact-area", "albumentations-1"]
HOLE_RULES: tuple[str, ...] = ("exact-area", "albumentations-1")


@dataclass
class OcclusionResult(ProbeResult):
    """Per masking ratio (ascending): top-1 accuracy, mean maximum softmax probability (`confidence`) and mean
    softmax probability of the true class, all fractions, over `num_samples` images; `hole`: the hole rule."""

    ratios: list[float]
    accuracy: list[float]
    confidence: list[float]
    true_class_probability: list[float]
    num_samples: int
    seed: int
    hole: str = "exact-area"

    @classmethod
    def probe_name(cls) -> str:
        return "occlusion_sweep"

    def plot(self, ax: Axes | None = None) -> Axes:
        """Accuracy (the report's curve, `draw_occlusion`) and mean confidence (%) against the masked share of the
        image (%)."""
        ax = new_axes(ax)
        draw_occlusion({"top-1 accuracy": {"ratios": self.ratios, "accuracy": self.accuracy}}, ax=ax)
        masked = [100 * r for r in self.ratios]
        ax.plot(
            masked, [100 * c for c in self.confidence], marker="s", linestyle="--", label="mean confidence"
        )
        ax.set_ylabel("%")
        ax.set_title(f"Cutout occlusion ({self.num_samples} images)")
        ax.legend()
        return ax


def check_hole(hole: str) -> str:
    """A hole rule's name (`HOLE_RULES`); anything else is a ValueError naming them."""
    if hole not in HOLE_RULES:
        raise ValueError(f"hole must be one of {HOLE_RULES}, got {hole!r}.")
    return hole


def albumentations_hole_side(height: int, width: int, ratio: float) -> int:
    """The side of Paul & Chen's Cutout hole: int(sqrt(ratio * H * W)), the square root floored (their notebooks'
    `max_h_size=int(np.sqrt(224 * 224 * factor))`), so the hole's area is at most the ratio's."""
    return int(math.sqrt(height * width * check_ratio(ratio)))


def albumentations_centres(
    height: int, width: int, *, seed: int = 0, sample_ids: torch.Tensor
) -> torch.Tensor:
    """Hole centres (N, 2) int64 (row y, column x), uniform over {0..H} x {0..W} as albumentations'
    `random.randint(0, H)`, `random.randint(0, W)`, from the "cutout" stream keyed by (seed, sample id)."""
    u = uniform(seed, sample_ids, STREAM, (2,), torch.float64)
    rows = (u[:, 0] * (height + 1)).floor().long().clamp_(0, height)
    cols = (u[:, 1] * (width + 1)).floor().long().clamp_(0, width)
    return torch.stack((rows, cols), dim=1)


def albumentations_cutout_mask(height: int, width: int, side: int, centres: torch.Tensor) -> torch.Tensor:
    """Boolean masks (N, 1, H, W) of albumentations 1.x's Cutout hole of `side` at each centre (N, 2) (y, x).

    As `Cutout.get_params_dependent_on_targets` (albumentations 0.4.6-1.3.1): y1 = clip(y - side // 2, 0, H),
    y2 = clip(y1 + side, 0, H), the same for x; the hole is rows y1..y2-1, columns x1..x2-1.
    """
    if isinstance(side, bool) or not isinstance(side, int) or side < 0:
        raise ValueError(f"side must be a non-negative int, got {side!r}.")
    if centres.ndim != 2 or centres.shape[1] != 2 or centres.is_floating_point():
        raise ValueError(
            f"centres must be an (N, 2) integer tensor of (row, column), got {tuple(centres.shape)}."
        )
    y, x = centres[:, 0].long(), centres[:, 1].long()
    if bool(((y < 0) | (y > height) | (x < 0) | (x > width)).any()):
        raise ValueError(f"centres must lie in [0, {height}] x [0, {width}].")
    top = (y - side // 2).clamp(0, height)
    bottom = (top + side).clamp(max=height)
    left = (x - side // 2).clamp(0, width)
    right = (left + side).clamp(max=width)
    return box_masks(height, width, top, bottom, left, right)


def albumentations_cutout(
    images: torch.Tensor,
    ratio: float,
    *,
    seed: int = 0,
    sample_ids: Sequence[int] | torch.Tensor | None = None,
    fill: float = 0.0,
) -> torch.Tensor:
    """Paul & Chen's Cutout (their notebooks' albumentations `Cutout(num_holes=1, max_h_size=s, max_w_size=s)`,
    s = int(sqrt(ratio H W))), one hole per image placed from our seeded stream (`albumentations_centres`).

    images: (N, 3, H, W) uint8 or float in [0, 1]; same dtype and device out. fill: the hole's value in [0, 1]
    (0 = black, albumentations' default; `round(fill * 255)` for uint8). Pixels outside the hole are unchanged.
    """
    check_images(images, min_size=1, name="albumentations_cutout")
    ids = check_sample_ids(seed, sample_ids, images)
    check_fill(fill)
    height, width = images.shape[-2:]
    side = albumentations_hole_side(height, width, ratio)
    centres = albumentations_centres(height, width, seed=seed, sample_ids=ids)
    return fill_holes(images, albumentations_cutout_mask(height, width, side, centres), fill)


def _check_ratios(ratios: Sequence[float], input_size: tuple[int, int], hole: str) -> list[float]:
    if isinstance(ratios, str | bytes) or not isinstance(ratios, Sequence | np.ndarray) or len(ratios) == 0:
        raise ValueError(f"ratios must be a non-empty sequence of fractions in [0, 1], got {ratios!r}.")
    checked = [check_ratio(float(r) if isinstance(r, np.floating) else r) for r in ratios]
    if len(set(checked)) != len(checked):
        raise ValueError(f"ratios must be distinct, got {list(ratios)!r}.")
    if hole == "exact-area":
        for ratio in checked:
            hole_side(*input_size, ratio)  # a hole that cannot fit is an error before any model work
    return sorted(checked)


def occlusion_sweep(
    classifier: Classifier,
    images: torch.Tensor | Iterable[Any],
    labels: torch.Tensor | Sequence[int] | None = None,
    *,
    seed: int = 0,
    batch_size: int = DEFAULT_BATCH_SIZE,
    ratios: Sequence[float] = DEFAULT_RATIOS,
    limit: int | None = None,
    sample_ids: torch.Tensor | Sequence[int] | None = None,
    hole: HoleRule = "exact-area",
) -> OcclusionResult:
    """Top-1 accuracy and mean confidence of `classifier` with one black square hole covering each ratio of the
    image area (Paul & Chen, AAAI 2022, Cutout).

    images, labels: as `prepare_inputs` (pixels in [0, 1] at the classifier's input size, or a dataset; at most
        `limit` images); labels are required.
    ratios: masked fractions in [0, 1]; 0 gives the clean accuracy. Default (0, 0.05, 0.1, 0.2, 0.5).
    seed: with each image's sample id, places its hole; the same position (relative to the free room) for every
        ratio, and independent of `batch_size`.
    sample_ids: (N,) integer ids that key each image's hole (default: as `prepare_inputs`), so that a subset of
        the images gets the holes it gets among all of them.
    hole: "exact-area" (default, ours: side round(sqrt(r H W)), wholly inside) or "albumentations-1" (Paul &
        Chen's notebooks: side floor(sqrt(r H W)), centre anywhere, cut at the bottom and right edges).
    """
    return _occlusion_sweep(
        classifier,
        images,
        labels,
        seed=seed,
        batch_size=batch_size,
        ratios=ratios,
        limit=limit,
        sample_ids=sample_ids,
        hole=hole,
    )[0]


def _occlusion_sweep(
    classifier: Classifier,
    images: torch.Tensor | Iterable[Any],
    labels: torch.Tensor | Sequence[int] | None = None,
    *,
    seed: int = 0,
    batch_size: int = DEFAULT_BATCH_SIZE,
    ratios: Sequence[float] = DEFAULT_RATIOS,
    limit: int | None = None,
    sample_ids: torch.Tensor | Sequence[int] | None = None,
    hole: HoleRule = "exact-area",
) -> tuple[OcclusionResult, torch.Tensor, torch.Tensor]:
    """`occlusion_sweep`, with what a paired comparison of two models needs: the images' sample ids (N,) and
    whether each image is classified correctly at each ratio, (N, ratios) bool, on the CPU."""
    seed = check_seed(seed)
    hole = check_hole(hole)
    inputs = prepare_inputs(classifier, images, labels, limit=limit, sample_ids=sample_ids)
    ratio_list = _check_ratios(ratios, tuple(inputs.pixels.shape[-2:]), hole)
    mask_fn = cutout if hole == "exact-area" else albumentations_cutout
    record_ratios, correct, confidence, true_probability = [], [], [], []
    for ratio in ratio_list:
        for part in batch_slices(len(inputs), batch_size):
            batch = inputs.select(part)
            masked = mask_fn(batch.pixels, ratio, seed=seed, sample_ids=batch.sample_ids)
            probabilities = predict_logits(classifier, masked, batch_size).softmax(dim=-1)
            top, prediction = probabilities.max(dim=-1)
            correct.append((prediction == batch.labels).cpu())
            confidence.append(top.cpu())
            true_probability.append(probabilities.gather(1, batch.labels[:, None])[:, 0].cpu())
            record_ratios.append(torch.full((len(batch),), ratio, dtype=torch.float64))
    ratio_records = torch.cat(record_ratios).numpy()
    correct_records = torch.cat(correct).numpy()
    curve = occlusion_accuracy(ratio_records, correct_records, torch.cat(confidence).double().numpy())
    truth = occlusion_accuracy(ratio_records, correct_records, torch.cat(true_probability).double().numpy())
    result = OcclusionResult(
        ratios=curve.ratios,
        accuracy=curve.accuracy,
        confidence=curve.mean_confidence,
        true_class_probability=truth.mean_confidence,
        num_samples=len(inputs),
        seed=seed,
        hole=hole,
    )
    # The records are ratio-major (every image at the first ratio, then the next, ...), ratios ascending.
    return result, inputs.sample_ids.cpu(), torch.cat(correct).view(len(ratio_list), len(inputs)).T


# ------------------------------------------------------------------------------------------------ the probe's spec
# Merge: the means over images are count-weighted means of the chunks' means; "num_correct" (correct images per
# ratio) adds up, and gives the accuracies' Wilson intervals over images; "per_image" keeps each image's sample id
# and 0/1 correctness at every ratio (ascending), which paired comparisons of two models need.
# Task setting "image_list": run on the entries of a shipped list (Paul & Chen's "paul-chen-occlusion-1k"), matched
# by file name, instead of a random draw. Each entry is one evaluation, duplicates included (their notebooks scored
# all 1,000 entries of a list of 991 distinct images), keyed by its index in the list: its own hole.
_TASK_KEYS = ("image_list",)


def _image_list(params: Mapping[str, Any]) -> str | None:
    name = params.get("image_list")
    return None if name is None else check_image_list(name)


def _selection(params: Mapping[str, Any]) -> str:
    name = _image_list(params)
    return "random" if name is None else IMAGE_LIST_SELECTION + name


def _listed(counts: np.ndarray | None) -> list | None:
    return None if counts is None else counts.tolist()


def _partial(classifier: Classifier, inputs: ProbeInputs, seed: int, params: dict) -> dict:
    result, keys, correct = _occlusion_sweep(
        classifier,
        inputs.pixels,
        inputs.labels,
        seed=seed,
        sample_ids=inputs.sample_ids,
        **probe_kwargs(params, _TASK_KEYS),
    )
    return {
        PER_IMAGE: per_image_record(keys, correct=correct.to(torch.int8)),
        "ratios": list(result.ratios),
        "accuracy": torch.tensor(result.accuracy, dtype=torch.float64),
        "confidence": torch.tensor(result.confidence, dtype=torch.float64),
        "true_class_probability": torch.tensor(result.true_class_probability, dtype=torch.float64),
        "seed": result.seed,
        "hole": result.hole,
        "image_list": _image_list(params),
        "num_correct": _listed(counts_from_means(result.accuracy, result.num_samples)),
    }


def _merge(partials: list) -> dict:
    merged = {
        "ratios": same_setting(partials, "ratios"),
        "accuracy": weighted_mean(partials, "accuracy"),
        "confidence": weighted_mean(partials, "confidence"),
        "true_class_probability": weighted_mean(partials, "true_class_probability"),
        "num_samples": total_images(partials),
        "seed": same_setting(partials, "seed"),
        "hole": same_setting(partials, "hole"),
    }
    name = same_setting(partials, "image_list")
    if name is not None:
        # Each entry is one evaluation; "not_evaluated": entries whose image the data lacks (or beyond num_images).
        entries = image_list(name)
        merged["image_list"] = {
            "name": name,
            "listed": len(entries),
            "unique": len({file_name(entry) for entry in entries}),
            "not_evaluated": len(entries) - merged["num_samples"],
        }
    merged["num_correct"] = summed_counts(partials, "num_correct", "accuracy")
    merged[PER_IMAGE] = merged_per_image(partials)
    return merged


def _intervals(probe: Mapping[str, Any], confidence_level: float) -> dict[str, Any]:
    """Wilson intervals of the accuracy per ratio, from the correct counts (or accuracy x images)."""
    count = probe.get("num_samples", probe.get("num_images"))
    correct = probe.get("num_correct")
    if correct is None:
        correct = counts_from_means(probe.get("accuracy"), count)
    return interval_entry(confidence_level, {"accuracy": proportion_curve(correct, count, confidence_level)})


def _headline(probe: Mapping[str, Any]) -> dict[str, str]:
    bounds = curve_bounds(probe, "accuracy")
    return {
        f"top-1 (%) at {fmt_percent(ratio, 100, 0)} % masked": fmt_percent_interval(
            accuracy, *bounds_at(bounds, i), 100
        )
        for i, (ratio, accuracy) in enumerate(
            zip(probe.get("ratios") or [], probe.get("accuracy") or [], strict=False)
        )
    }


def _accuracy_band(probe: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray] | None:
    bounds = curve_bounds(probe, "accuracy")
    return None if bounds is None else (100 * bounds[0], 100 * bounds[1])


def masked_curve_height(probe: Mapping[str, Any]) -> tuple[list, np.ndarray]:
    """Each image's top-1 (0/1) averaged over the masked ratios (r > 0), from the per-image record: the height of
    its occlusion curve, what "ViT's occlusion curve above BiT's" compares image by image."""
    record = per_image_of(probe)
    ratios = np.asarray(probe.get("ratios") or [], dtype=np.float64)
    correct = np.asarray(record["correct"], dtype=np.float64)
    masked = ratios > 0
    if not masked.any() or correct.ndim != 2 or correct.shape[1] != ratios.size:
        raise LookupError("the occlusion record has no masked ratio")
    return record["keys"], correct[:, masked].mean(axis=1)


def published_value(probe: Mapping[str, Any], metric: str, condition: Mapping[str, str]) -> ProbeValue:
    """The top-1 (%) at a masking ratio, with its count of correct images (Paul & Chen's Cutout table)."""
    if metric != "top-1 %" or "ratio" not in condition:
        raise LookupError(f"the occlusion probe holds top-1 % per ratio, not {metric!r} {dict(condition)}")
    index = grid_index(probe.get("ratios") or [], float(condition["ratio"]))
    images = int(probe.get("num_samples", probe.get("num_images")) or 0)
    correct = probe.get("num_correct")
    successes = (
        int(correct[index]) if correct is not None else round(float(probe["accuracy"][index]) * images)
    )
    return ProbeValue(100.0 * successes / images, images, successes)


def _at_largest_ratio(rows: Mapping[str, str]) -> str:
    accuracies = [label for label in rows if label.startswith("top-1")]
    return rows[accuracies[-1]] if accuracies else MISSING


def draw_occlusion(data: SeriesData, ax: Axes | None = None) -> Figure | None:
    """Top-1 accuracy (%) against the masked share of the image (%), one line per model (on `ax`: one model), with
    the band of its interval over images where the dict has one."""
    figure = line_figure(
        data,
        lambda p: (100 * as_float_array(p.get("ratios")), 100 * as_float_array(p.get("accuracy"))),
        "masked image area (%)",
        "top-1 accuracy (%)",
        "Occlusion (random patch drop)",
        ax=ax,
        band=_accuracy_band,
    )
    if figure is not None:
        (ax or figure.axes[0]).set_ylim(0, 100)
    return figure


def _joint_check(params: Mapping[str, Any], input_size: tuple[int, int] | None) -> None:
    """Under the exact-area rule, every ratio's square hole fits the model's input."""
    if input_size is not None:
        _check_ratios(params["ratios"], input_size, params["hole"])


SPEC = register_probe(
    ProbeSpec(
        name="occlusion",
        value_checks={"ratios": sequence_of(calls(check_ratio), distinct=True)},
        joint_check=_joint_check,
        probe=occlusion_sweep,
        result_type=OcclusionResult,
        selection="random",
        chunk_size=100,
        needs_labels=True,
        partial_fn=_partial,
        merge_fn=_merge,
        extra_params=_TASK_KEYS,
        selection_fn=_selection,
        choices={"hole": HOLE_RULES, "image_list": (None, *IMAGE_LISTS)},
        headline=_headline,
        intervals_fn=_intervals,
        summary_row="top-1 (%) at the largest ratio",
        summary_value=_at_largest_ratio,
        value_of=published_value,
        findings=(
            ProbeFinding(
                "occlusion",
                "paul-chen",
                "ViT's occlusion curve above BiT's",
                "Paul & Chen, Sec. 4 (image masking, Cutout)",
                "top-1 % averaged over the masked ratios of the occlusion probe",
                +1,
                masked_curve_height,
                scale=100.0,
            ),
        ),
        figures={
            "occlusion": ProbeFigure(
                draw_occlusion,
                "Top-1 accuracy (%) against the masked share of the image (Paul & Chen, random patch drop).",
            )
        },
    )
)


__all__ = [
    "HOLE_RULES",
    "SPEC",
    "OcclusionResult",
    "albumentations_centres",
    "albumentations_cutout",
    "albumentations_cutout_mask",
    "albumentations_hole_side",
    "check_hole",
    "draw_occlusion",
    "masked_curve_height",
    "occlusion_sweep",
]
