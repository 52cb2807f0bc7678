# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Lesion study of Park & Kim, "How do vision transformers work?" (ICLR 2022, Sec. 4.2, Fig. 11-12).

Switch off one residual unit at a time (its branch outputs zero, so its block passes only its shortcut) and measure
how much the accuracy drops. Park & Kim find that in a ResNet or AlterNet, removing an MSA unit near the end of a
stage costs more than removing a conv unit, and that in a ViT the early MSA units matter little: the evidence that
MSAs at the end of a stage play a particular role, which motivates AlterNet's design.

Residual units come from `Classifier.residual_units()` and are switched off with `Classifier.lesion(...)` (see
`hf_vitrobust.models.residual_units` for the supported architectures and where each unit is cut).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from ..models.classifier import Classifier
from .base import (
    DEFAULT_BATCH_SIZE,
    ProbeInputs,
    ProbeResult,
    check_batch_size,
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
    fmt_percent_interval,
    number,
    panels_or_axes,
)
from .intervals import interval_entry, paired_accuracy_curves
from .param_checks import optional, sequence_of, text
from .per_image import PER_IMAGE, merged_per_image, per_image_of, per_image_record
from .spec import (
    ProbeFigure,
    ProbeFinding,
    ProbeNotApplicable,
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

KIND_COLORS = {"msa": "tab:red", "mlp": "tab:green", "conv": "tab:blue"}


@dataclass
class LesionResult(ProbeResult):
    """Accuracy with each residual unit removed (Park & Kim 2022, Fig. 11-12).

    units, kinds, stages, indices: the lesioned units in network order (`ResidualUnit` name, kind "msa" / "mlp" /
        "conv", stage (None for ViTs) and block index).
    baseline_accuracy: top-1 accuracy of the intact model, in [0, 1].
    accuracy: top-1 accuracy with that one unit removed.
    accuracy_drop: baseline_accuracy - accuracy (positive = the unit matters).
    num_images: how many images were evaluated.
    """

    units: list[str]
    kinds: list[str]
    stages: list[int | None]
    indices: list[int]
    baseline_accuracy: float
    accuracy: list[float]
    accuracy_drop: list[float]
    num_images: int

    @classmethod
    def probe_name(cls) -> str:
        return "lesion_study"

    def plot(self, ax: Axes | None = None) -> Axes:
        """Accuracy drop (percentage points) per removed unit, in network order, coloured by kind (`draw_lesion`,
        the report's panel)."""
        ax = new_axes(ax, figsize=(max(4.5, 0.25 * len(self.units) + 1.5), 3.5))
        draw_lesion(
            {"Lesion study": {"accuracy_drop": list(self.accuracy_drop), "kinds": list(self.kinds)}}, ax=ax
        )
        positions = np.arange(len(self.units))
        ax.set_xlabel("Removed unit (depth)")
        ax.set_ylabel("Accuracy drop (%p)")
        ax.set_xticks(positions)
        ax.set_xticklabels([str(i) for i in positions], fontsize="small")
        return ax


def _correct(
    classifier: Classifier, pixels: torch.Tensor, labels: torch.Tensor, batch_size: int
) -> torch.Tensor:
    logits = predict_logits(classifier, pixels, batch_size)
    return (logits.argmax(dim=-1) == labels).cpu()


def lesion_study(
    classifier: Classifier,
    images: torch.Tensor | Iterable[object],
    labels: torch.Tensor | Sequence[int] | None = None,
    *,
    seed: int = 0,
    batch_size: int = DEFAULT_BATCH_SIZE,
    units: Sequence[str] | None = None,
    limit: int | None = None,
) -> LesionResult:
    """Top-1 accuracy drop when one residual unit at a time is removed (Park & Kim 2022, Fig. 11-12).

    Args:
        classifier: a `Classifier` whose architecture `Classifier.residual_units()` supports (AlterNet, transformers
            ViT/DeiT, timm ViT, timm ResNet); others raise ValueError.
        images, labels: pixels in [0, 1] with labels, or a labelled dataset.
        seed: unused (deterministic), validated for the common signature.
        batch_size: images per forward pass; the result does not depend on it.
        units: names of the units to remove one at a time (default: every unit, in network order).
        limit: read at most this many images of a dataset.
    """
    return _lesion_study(
        classifier, images, labels, seed=seed, batch_size=batch_size, units=units, limit=limit
    )[0]


def _lesion_study(
    classifier: Classifier,
    images: torch.Tensor | Iterable[object],
    labels: torch.Tensor | Sequence[int] | None = None,
    *,
    seed: int = 0,
    batch_size: int = DEFAULT_BATCH_SIZE,
    units: Sequence[str] | None = None,
    limit: int | None = None,
) -> tuple[LesionResult, torch.Tensor, torch.Tensor]:
    """`lesion_study`, with the per-image correctness behind it: (result, intact (N,) bool, lesioned (units, N)
    bool), on the CPU."""
    check_seed(seed)
    check_batch_size(batch_size)
    if isinstance(units, str):
        raise TypeError("units must be a sequence of unit names, not a single string.")
    available = classifier.residual_units()
    if units is None:
        selected = available
    else:
        wanted = list(units)
        if not wanted:
            raise ValueError("units is empty.")
        known = [unit.name for unit in available]
        unknown = [name for name in wanted if name not in known]
        if unknown:
            raise ValueError(f"Unknown residual units {unknown}; available: {known}.")
        selected = [unit for unit in available if unit.name in set(wanted)]
    inputs = prepare_inputs(classifier, images, labels, limit=limit)
    assert inputs.labels is not None
    intact = _correct(classifier, inputs.pixels, inputs.labels, batch_size)
    baseline = float(intact.double().mean())
    lesioned = []
    for unit in selected:
        with classifier.lesion([unit.name]):
            lesioned.append(_correct(classifier, inputs.pixels, inputs.labels, batch_size))
    accuracy = [float(correct.double().mean()) for correct in lesioned]
    result = LesionResult(
        units=[unit.name for unit in selected],
        kinds=[unit.kind for unit in selected],
        stages=[unit.stage for unit in selected],
        indices=[unit.index for unit in selected],
        baseline_accuracy=baseline,
        accuracy=accuracy,
        accuracy_drop=[baseline - value for value in accuracy],
        num_images=len(inputs),
    )
    stacked = torch.stack(lesioned) if lesioned else torch.zeros(0, len(inputs), dtype=torch.bool)
    return result, intact, stacked


# ------------------------------------------------------------------------------------------------ the probe's spec
# Merge: the accuracies (intact and per removed unit) are count-weighted means of the chunks' means. The counts add
# up: "num_baseline_correct", "num_correct" per unit (Wilson intervals of the accuracies) and "num_discordant" per
# unit, the images whose correctness the lesion changes: the sum of squares of the per-image differences
# intact - lesioned (0 or +-1), so the drop gets the paired Student-t interval over images.
def _partial(classifier: Classifier, inputs: ProbeInputs, seed: int, params: dict) -> dict:
    result, intact, lesioned = _lesion_study(classifier, inputs.pixels, inputs.labels, seed=seed, **params)
    return {
        "units": list(result.units),
        "kinds": list(result.kinds),
        "stages": list(result.stages),
        "indices": list(result.indices),
        "baseline_accuracy": float(result.baseline_accuracy),
        "accuracy": torch.tensor(result.accuracy, dtype=torch.float64),
        "num_baseline_correct": int(intact.sum()),
        "num_correct": lesioned.sum(dim=1).tolist(),
        "num_discordant": (lesioned != intact[None, :]).sum(dim=1).tolist(),
        PER_IMAGE: per_image_record(
            inputs.sample_ids, correct=intact.to(torch.int8), lesioned_correct=lesioned.T.to(torch.int8)
        ),
    }


def _merge(partials: list) -> dict:
    baseline = weighted_mean(partials, "baseline_accuracy")
    accuracy = weighted_mean(partials, "accuracy")
    return {
        "units": same_setting(partials, "units"),
        "kinds": same_setting(partials, "kinds"),
        "stages": same_setting(partials, "stages"),
        "indices": same_setting(partials, "indices"),
        "baseline_accuracy": float(baseline),
        "accuracy": accuracy,
        "accuracy_drop": baseline - accuracy,
        "num_images": total_images(partials),
        "num_baseline_correct": summed_counts(partials, "num_baseline_correct", "baseline_accuracy"),
        "num_correct": summed_counts(partials, "num_correct", "accuracy"),
        "num_discordant": summed_counts(partials, "num_discordant"),
        PER_IMAGE: merged_per_image(partials),
    }


def end_of_stage_msa_excess(probe: Mapping[str, Any]) -> tuple[list, np.ndarray]:
    """Each image's accuracy drop (0 or +-1) when an MSA unit at the end of a stage is removed, averaged over those
    units, minus its mean drop over every other unit: Park & Kim's lesion claim, image by image. An MSA unit is at
    the end of its stage when it belongs to the stage's last block (a single-stage ViT is one stage: its last
    block's MSA; an AlterNet stage ends in an MSA block)."""
    kinds, stages, indices = (list(probe.get(key) or []) for key in ("kinds", "stages", "indices"))
    record = per_image_of(probe)
    if "lesioned_correct" not in record:
        raise LookupError("the lesion record keeps no per-image correctness under each lesion")
    last_block: dict[Any, int] = {}
    for stage, index in zip(stages, indices, strict=True):
        last_block[stage] = max(index, last_block.get(stage, index))
    at_end = np.array(
        [
            kind == "msa" and index == last_block[stage]
            for kind, stage, index in zip(kinds, stages, indices, strict=True)
        ],
        dtype=bool,
    )
    if not at_end.any() or at_end.all():
        raise LookupError(
            "the lesioned units hold no MSA at the end of a stage, or nothing else to compare with"
        )
    drops = np.asarray(record["correct"], dtype=np.float64)[:, None] - np.asarray(
        record["lesioned_correct"], dtype=np.float64
    )
    return record["keys"], drops[:, at_end].mean(axis=1) - drops[:, ~at_end].mean(axis=1)


def _intervals(probe: Mapping[str, Any], confidence_level: float) -> dict[str, Any]:
    """Wilson intervals of the intact and lesioned accuracies (from their counts, or accuracy x images) and the
    paired Student-t interval of each unit's accuracy drop (from the discordant counts, where the dict has them)."""
    count = probe.get("num_images")
    return interval_entry(
        confidence_level, paired_accuracy_curves(probe, count, "baseline", confidence_level)
    )


def _applicable(classifier: Classifier, params: dict) -> None:
    try:
        units = classifier.residual_units()
    except (ValueError, TypeError) as err:
        raise ProbeNotApplicable(f"lesion: {err}") from err
    if not units:
        raise ProbeNotApplicable(f"lesion: {classifier.name!r} has no residual units to remove.")


def _headline(probe: Mapping[str, Any]) -> dict[str, str]:
    drops = probe.get("accuracy_drop") or []
    intact = bounds_at(curve_bounds(probe, "baseline_accuracy"))
    out = {"intact top-1 (%)": fmt_percent_interval(probe.get("baseline_accuracy"), *intact, 100)}
    if any(number(d) is not None for d in drops):
        biggest = int(np.nanargmax(as_float_array(drops)))
        units = probe.get("units") or []
        unit = f" ({units[biggest]})" if biggest < len(units) else ""
        bounds = bounds_at(curve_bounds(probe, "accuracy_drop"), biggest)
        out["biggest drop (pp)"] = f"{fmt_percent_interval(drops[biggest], *bounds, 100)}{unit}"
    return out


def draw_lesion(data: SeriesData, ax: Axes | None = None) -> Figure | None:
    """The accuracy drop (pp) per removed unit, coloured by kind, one panel per model (on `ax`: one model), with
    error bars of its paired interval over images where the dict has one."""
    from matplotlib.patches import Patch

    usable = {key: p for key, p in data.items() if p.get("accuracy_drop")}
    if not usable:
        return None
    longest = max(len(p["accuracy_drop"]) for p in usable.values())
    figure, axes = panels_or_axes(len(usable), ax, panel=(max(3.6, 0.22 * longest + 1.5), 3.2))
    for panel, (key, probe) in zip(axes, usable.items(), strict=True):
        drops = 100.0 * as_float_array(probe["accuracy_drop"])
        kinds = list(probe.get("kinds") or ["unit"] * drops.size)
        bounds = curve_bounds(probe, "accuracy_drop")
        errors = None
        if bounds is not None and bounds[0].shape == drops.shape:
            errors = np.nan_to_num(np.stack([drops - 100.0 * bounds[0], 100.0 * bounds[1] - drops]), nan=0.0)
        panel.bar(
            np.arange(drops.size),
            drops,
            color=[KIND_COLORS.get(k, "tab:gray") for k in kinds],
            yerr=errors,
            capsize=2 if errors is not None else 0,
            error_kw={"linewidth": 0.8},
        )
        panel.axhline(0.0, color="black", linewidth=0.8)
        panel.set_xlabel("removed unit (depth)")
        panel.set_ylabel("accuracy drop (pp)")
        panel.set_title(key, fontsize="medium")
        present = [k for k in KIND_COLORS if k in kinds]
        if present:
            panel.legend(
                handles=[Patch(color=KIND_COLORS[k], label=k.upper()) for k in present], fontsize="x-small"
            )
    if ax is None:
        figure.suptitle("Lesion study")
    return figure


SPEC = register_probe(
    ProbeSpec(
        name="lesion",
        value_checks={"units": optional(sequence_of(text, distinct=True))},
        probe=lesion_study,
        result_type=LesionResult,
        selection="random",
        chunk_size=100,
        needs_labels=True,
        partial_fn=_partial,
        merge_fn=_merge,
        applicable_fn=_applicable,
        headline=_headline,
        intervals_fn=_intervals,
        findings=(
            ProbeFinding(
                "end-of-stage-msa-lesion",
                "park-kim",
                "Removing an MSA at the end of a stage hurts more than removing another unit (within the ViT)",
                "Park & Kim, Sec. 4.2, lesion study (Fig. 11-12)",
                "top-1 drop (pp) when an MSA unit at the end of a stage is removed, mean over those units, minus "
                "the mean drop over every other unit",
                +1,
                end_of_stage_msa_excess,
                scale=100.0,
                member="vit",
            ),
        ),
        summary_row="biggest drop (pp)",
        figures={
            "lesion": ProbeFigure(
                draw_lesion,
                "Accuracy drop (percentage points) when one residual unit is removed (Park & Kim Fig. 11-12).",
            )
        },
    )
)


__all__ = [
    "KIND_COLORS",
    "SPEC",
    "LesionResult",
    "draw_lesion",
    "end_of_stage_msa_excess",
    "lesion_study",
]
