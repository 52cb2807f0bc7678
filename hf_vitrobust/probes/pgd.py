# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""How fast an L-inf attack raises the loss: the cross-entropy at each step of PGD (Paul & Chen, AAAI 2022).

Paul & Chen attack 100 ImageNet images that the model classifies correctly with a 10-step L-inf attack and plot
the cross-entropy at each step, mean and standard deviation over the images: a ViT's loss grows more slowly than
a BiT's, i.e. its loss surface around clean images is smoother. Their notebooks
(github.com/sayakpaul/robustness-vit, `analysis/pgd_attacks/`) optimise the perturbation delta with Adam (lr 1e-3)
on -CE and clamp it to the eps-ball after each step (eps 0.002), in the [-1, 1] input space of their ViT; in our
[0, 1] pixel space that is eps 0.001 and lr 5e-4, the defaults of `method="adam"`.

Two attacks, both batched and independent of the batch size (the loss is a per-image sum, so an image's gradient
never depends on the others; Adam's moments are elementwise):

- "adam": the paper's variant. Adam (Kingma & Ba, ICLR 2015, with torch.optim.Adam's defaults betas (0.9, 0.999)
  and eps 1e-8) descends -CE in delta; after each step delta is projected onto the intersection of the eps-ball
  and the pixel box, [max(-eps, -x), min(eps, 1 - x)] elementwise, which is the exact Euclidean projection (their
  BiT notebook added the clipped delta to itself instead).
- "sign": Madry et al. (ICLR 2018) L-inf PGD, x <- Proj(x + alpha sign(grad CE)), with torchattacks' operations,
  so that without random start it gives torchattacks.PGD's iterates.

The random start (optional, off by default as in the paper) is uniform in the eps-ball, drawn from the
counter-based streams keyed by (seed, sample id). The per-step losses become mean and std through the same code
as the `loss_progression` metric (`hf_vitrobust.metrics.loss_progression`).

What is recorded (`record`):

- "every-step" (default): the cross-entropy after t updates, t = 0..steps (the clean image and every iterate,
  the returned adversarial image included), of the first `num_images` correctly classified inputs, with the
  exact projection onto the eps-ball and the pixel box.
- "paul-chen-notebook": exactly the record of `analysis/pgd_attacks/PGD_ViT.ipynb` (sayakpaul/robustness-vit,
  commit b90ba6b7). Its attack (`generate_adversaries`) starts from delta = 0 with Adam (lr 1e-3 on its [-1, 1]
  inputs); each of its iterations feeds the clamped image x + delta to the model, takes the negated cross-entropy
  as the loss, steps Adam, clamps delta to [-eps, eps] and appends that loss,
  so it records -CE (negative values), computed BEFORE each of the `steps` Adam updates (t = 0..steps - 1; the
  loss of the final adversarial image is never recorded), and projects delta onto the eps-ball only (the model
  sees clamp(x + delta, 0, 1); delta itself may leave the pixel box). Its selection (`perturb_image`, then the
  loop over `HUNDRED_PATHS`): every image of a fixed list of 100 random validation images is attacked, and
  `if class_label == pred_label: all_losses.append(losses)` keeps the curves of the images whose prediction
  BEFORE the attack is correct; the success count is `pred_label != adv_label` over those. Here the list is the
  first `num_images` inputs; the correctness filter is applied before attacking (each image's attack is
  independent, so the kept curves are the same and the misclassified images are not attacked in vain).
- "paul-chen-bit-notebook": the record and selection of `PGD_BiT.ipynb` (same commit), whose attack differs from
  the ViT notebook's: Keras' Adam (lr 1e-3 on its [0, 1] inputs, epsilon 1e-7 on the uncorrected sqrt(v)), and
  after each step its cell 11 does `delta.assign_add(clip_eps(delta))` with EPS[0] = 0.001: it ADDS the clipped
  delta to itself instead of projecting, so nothing bounds delta: about +0.002 per pixel per step, |delta| about
  0.02 after 10 steps, against 0.001 in the ViT notebook. Their 72 of 79 BiT images fooled against 44 of 88 ViT
  images is largely this budget. Only this record reproduces their BiT rows; the fair comparison is one attack
  for both models ("every-step" or "paul-chen-notebook", eps 0.001 on [0, 1] pixels).

The "fig-13-pgd-loss-rise" finding ("BiT's loss rises faster than ViT's") compares each image's mean rise of the
cross-entropy per step (`loss_rise_per_image`). Its protocol is the paper's: the ViT notebook's record for the ViT,
the BiT notebook's for the BiT. A run that attacks both with one bounded attack is therefore another protocol.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import torch

from ..corruptions.randomness import uniform
from ..metrics.intervals import NON_NEGATIVE
from ..metrics.loss_progression import loss_progression
from ..models.classifier import Classifier
from .base import (
    DEFAULT_BATCH_SIZE,
    ProbeInputs,
    ProbeResult,
    batch_slices,
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
    colors,
    curve_bounds,
    fmt_count,
    fmt_number,
    fmt_number_interval,
    fmt_percent_interval,
    new_figure,
)
from .intervals import counts_from_means, interval_entry, mean_curve, proportion_curve
from .param_checks import boolean, optional, positive_int, positive_number
from .per_image import PER_IMAGE, merged_per_image, per_image_of, per_image_record
from .pgd_attacks import (
    BIT_NOTEBOOK_LR,
    METHODS,
    PAPER_EPS,
    PAPER_LR,
    PGDMethod,
    check_attack,
    pgd_attack,
)
from .spec import (
    ProbeFigure,
    ProbeFinding,
    ProbeNotApplicable,
    ProbeSpec,
    ProbeValue,
    ProtocolPart,
    register_probe,
    same_setting,
    total_images,
)

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

PGDRecord = Literal["every-step", "paul-chen-notebook", "paul-chen-bit-notebook"]
RECORDS = ("every-step", "paul-chen-notebook", "paul-chen-bit-notebook")
NOTEBOOK_RECORDS = RECORDS[1:]
# Each record's attack: the exact projection, the ViT notebook's eps-ball clamp, the BiT notebook's added clip.
_RECORD_PROJECTIONS = dict(zip(RECORDS, ("ball-and-box", "ball", "added-clip"), strict=True))
RANDOM_START_STREAM = "pgd/random-start"


def _check_record(record: str, method: str, random_start: bool) -> None:
    """Paul & Chen's notebook records are their Adam attacks from delta = 0."""
    if record in NOTEBOOK_RECORDS and (method != "adam" or random_start):
        raise ValueError(
            f'record "{record}" is the notebook\'s Adam attack from delta = 0: it needs method "adam" '
            f"and random_start false, got method {method!r} and random_start {random_start!r}."
        )


@dataclass
class PGDLossResult(ProbeResult):
    """Cross-entropy along an L-inf attack, per step.

    record "every-step": loss_mean, loss_std: (steps + 1,) mean and (population) std over the images of the
        cross-entropy after t updates, t = 0..steps; losses: (images, steps + 1) per image.
    record "paul-chen-notebook": the same of -CE before each update, t = 0..steps - 1: (steps,) and
        (images, steps), the values Paul & Chen's notebook appends.
    image_indices: which input images were attacked (in input order: "every-step" the first `num_images` the model
        classifies correctly; "paul-chen-notebook" the correctly classified ones among the first `num_images`);
        success_rate: fraction of them misclassified after the attack.
    """

    method: str
    eps: float
    step_size: float
    steps: int
    random_start: bool
    loss_mean: torch.Tensor
    loss_std: torch.Tensor
    losses: torch.Tensor
    image_indices: torch.Tensor
    num_images: int
    success_rate: float
    record: str = "every-step"

    @classmethod
    def probe_name(cls) -> str:
        return "pgd_loss_progression"

    def plot(self, ax: Axes | None = None) -> Axes:
        """The mean loss per attack step with a band of one standard deviation (`draw_pgd`, the report's curve;
        Paul & Chen's figure)."""
        ax = new_axes(ax)
        series = {
            "loss_mean": self.loss_mean.detach().cpu().double().numpy(),
            "loss_std": self.loss_std.detach().cpu().double().numpy(),
        }
        draw_pgd({f"{self.method}, eps {self.eps:g}": series}, ax=ax)
        notebook = self.record in NOTEBOOK_RECORDS
        ax.set_ylabel("-cross-entropy, before each step" if notebook else "cross-entropy")
        ax.set_title(f"PGD loss progression ({self.num_images} images)")
        ax.legend(loc="upper left")
        return ax


def pgd_loss_progression(
    classifier: Classifier,
    images: torch.Tensor | Iterable[Any],
    labels: torch.Tensor | Sequence[int] | None = None,
    *,
    seed: int = 0,
    batch_size: int = DEFAULT_BATCH_SIZE,
    method: PGDMethod = "adam",
    eps: float = PAPER_EPS,
    step_size: float | None = None,
    steps: int = 10,
    random_start: bool = False,
    num_images: int | None = 100,
    limit: int | None = None,
    sample_ids: torch.Tensor | Sequence[int] | None = None,
    record: PGDRecord = "every-step",
) -> PGDLossResult:
    """The cross-entropy at every step of an L-inf attack on the first `num_images` correctly classified images.

    images, labels: as `prepare_inputs` (labels required: the loss is the cross-entropy of the true class).
    method, eps, step_size, steps: see `pgd_attack`; the defaults are the paper's (Adam, eps 0.001 and lr 5e-4
        in [0, 1] pixels, 10 steps).
    random_start: start from a uniform point of the eps-ball, drawn per image from (seed, sample id).
    num_images: how many correctly classified images to attack (the first ones in input order; fewer if the
        inputs hold fewer; None: all of them). limit: read at most this many inputs.
    sample_ids: (N,) integer ids that key each image's random start (default: as `prepare_inputs`).
    record: "every-step" (default): CE after t = 0..steps updates, the first `num_images` correctly classified
        inputs, exact ball-and-box projection. "paul-chen-notebook": exactly the record of Paul & Chen's
        `analysis/pgd_attacks/PGD_ViT.ipynb` (see the module docstring): -CE before each of the `steps` updates,
        delta clamped to the eps-ball only, the correctly classified images among the first `num_images` inputs
        (the notebook's fixed list of 100); needs method "adam" and no random start, as the notebook.
        "paul-chen-bit-notebook": the same of `PGD_BiT.ipynb`, whose attack never bounds delta (step_size default
        1e-3, its lr): reproduces their BiT numbers, not a comparison at one budget.
    """
    seed = check_seed(seed)
    check_batch_size(batch_size)
    if record not in RECORDS:
        raise ValueError(f"record must be one of {RECORDS}, got {record!r}.")
    if step_size is None and record == "paul-chen-bit-notebook":
        step_size = BIT_NOTEBOOK_LR
    step_size = check_attack(classifier, method, eps, step_size, steps)
    if not isinstance(random_start, bool):
        raise ValueError(f"random_start must be a bool, got {random_start!r}.")
    notebook = record in NOTEBOOK_RECORDS
    _check_record(record, method, random_start)
    if num_images is not None and (
        isinstance(num_images, bool) or not isinstance(num_images, int) or num_images < 1
    ):
        raise ValueError(f"num_images must be a positive int or None, got {num_images!r}.")
    inputs = prepare_inputs(classifier, images, labels, limit=limit, sample_ids=sample_ids)
    if notebook and num_images is not None:
        # The notebook's fixed list (its 100 random paths): the first num_images inputs, then the correct ones.
        inputs = inputs.select(slice(0, num_images))
    # Correct on the clean image, before any attack (the notebook's `pred_label`).
    correct = predict_logits(classifier, inputs.pixels, batch_size).argmax(dim=1) == inputs.labels
    chosen = torch.nonzero(correct).squeeze(1)
    if not notebook:
        chosen = chosen[:num_images]
    if chosen.numel() == 0:
        raise ValueError("The model classifies none of the images correctly: nothing to attack.")
    selected = inputs.select(chosen)
    losses = []
    fooled = []
    for part in batch_slices(len(selected), batch_size):
        pixels, part_labels = selected.pixels[part], selected.labels[part]
        init = None
        if random_start:
            draws = uniform(seed, selected.sample_ids[part], RANDOM_START_STREAM, tuple(pixels.shape[1:]))
            init = (2.0 * draws - 1.0) * eps
        _, part_losses, predictions = pgd_attack(
            classifier,
            pixels,
            part_labels,
            method=method,
            eps=eps,
            step_size=step_size,
            steps=steps,
            init=init,
            projection=_RECORD_PROJECTIONS[record],
        )
        # The notebook appends `loss.item()` of loss = -CE, before each update: columns 0..steps - 1, negated.
        losses.append(-part_losses[:, :steps] if notebook else part_losses)
        fooled.append(predictions != part_labels)
    per_image = torch.cat(losses).cpu()
    step_ids = torch.arange(per_image.shape[1]).expand_as(per_image)
    curve = loss_progression(step_ids.reshape(-1).numpy(), per_image.reshape(-1).double().numpy())
    return PGDLossResult(
        method=method,
        eps=float(eps),
        step_size=step_size,
        steps=steps,
        random_start=random_start,
        loss_mean=torch.tensor(curve.loss_mean, dtype=torch.float64),
        loss_std=torch.tensor(curve.loss_std, dtype=torch.float64),
        losses=per_image,
        image_indices=chosen.cpu(),
        num_images=int(chosen.numel()),
        success_rate=float(torch.cat(fooled).float().mean()),
        record=record,
    )


# ------------------------------------------------------------------------------------------------ the probe's spec
# The runner selects correctly classified images; each chunk attacks all of its images that the model classifies
# correctly; the merge concatenates the per-image losses, recomputes their mean and (population) std through
# `metrics.loss_progression`, and the success rate from the fooled counts ("num_fooled"). `image_indices` become
# positions in the probe's selected image list, and "per_image" keys each row of the losses by its sample id (the
# Fig. 13 finding pairs two models' images by it). Intervals: the Student-t interval of the mean loss per step over
# the attacked images (their losses are kept) and the Wilson interval of the success rate.
_RUNNER_NUM_IMAGES = "the probe spec's num_images and the 'correct' selection choose the attacked images"


def _partial(classifier: Classifier, inputs: ProbeInputs, seed: int, params: dict) -> dict:
    batch_size = params.get("batch_size", DEFAULT_BATCH_SIZE)
    check_batch_size(batch_size)
    correct = predict_logits(classifier, inputs.pixels, batch_size).argmax(dim=1) == inputs.labels
    if not bool(correct.any()):
        # Nothing to attack in this chunk (the runner selects correct images; other precisions may disagree).
        return {
            "losses": None,
            "image_indices": torch.zeros(0, dtype=torch.int64),
            "num_fooled": 0,
            PER_IMAGE: per_image_record([]),
        }
    result: PGDLossResult = pgd_loss_progression(
        classifier,
        inputs.pixels,
        inputs.labels,
        seed=seed,
        sample_ids=inputs.sample_ids,
        num_images=None,
        **params,
    )
    return {
        "losses": result.losses.cpu(),
        "image_indices": result.image_indices.cpu(),
        "num_fooled": round(result.success_rate * result.num_images),
        PER_IMAGE: per_image_record(inputs.sample_ids[result.image_indices]),
        "method": result.method,
        "eps": result.eps,
        "step_size": result.step_size,
        "steps": result.steps,
        "random_start": result.random_start,
        "record": result.record,
    }


def _merge(partials: list) -> dict:
    offsets = np.cumsum([0] + [int(p["num_images"]) for p in partials])[:-1]
    attacked = [
        (p, int(offset)) for p, offset in zip(partials, offsets, strict=True) if p["losses"] is not None
    ]
    if not attacked:
        raise ProbeNotApplicable(
            "PGD: the model classifies none of the selected images correctly: nothing was attacked."
        )
    chosen = [p for p, _ in attacked]
    losses = torch.cat([p["losses"] for p in chosen])
    steps = same_setting(chosen, "steps")
    step_ids = torch.arange(losses.shape[1]).expand_as(losses)  # steps + 1 values, or steps for the notebook
    curve = loss_progression(step_ids.reshape(-1).numpy(), losses.reshape(-1).double().numpy())
    return {
        "method": same_setting(chosen, "method"),
        "eps": same_setting(chosen, "eps"),
        "step_size": same_setting(chosen, "step_size"),
        "steps": steps,
        "random_start": same_setting(chosen, "random_start"),
        "record": same_setting(chosen, "record"),
        "loss_mean": curve.loss_mean,
        "loss_std": curve.loss_std,
        "losses": losses,
        "image_indices": torch.cat([p["image_indices"] + offset for p, offset in attacked]),
        "num_images": int(losses.shape[0]),
        "success_rate": sum(int(p["num_fooled"]) for p in chosen) / int(losses.shape[0]),
        "num_selected": total_images(partials),
        "num_fooled": sum(int(p["num_fooled"]) for p in chosen),
        PER_IMAGE: merged_per_image(chosen),
    }


def _intervals(probe: Mapping[str, Any], confidence_level: float) -> dict[str, Any]:
    """The Student-t interval of the mean loss at each step over the attacked images (from their losses) and the
    Wilson interval of the success rate (from the fooled count, or rate x images)."""
    losses = as_float_array(probe.get("losses"))
    mean = as_float_array(probe.get("loss_mean"))
    count = probe.get("num_images")
    loss_curve = None
    if losses.ndim == 2 and losses.shape[1] == mean.size and mean.size and losses.shape[0] == count:
        std = losses.std(axis=0, ddof=1) if count > 1 else np.full(mean.size, np.nan)
        # A cross-entropy is >= 0; the notebook's record is its negation, <= 0.
        support = (None, 0.0) if probe.get("record") in NOTEBOOK_RECORDS else NON_NEGATIVE
        loss_curve = mean_curve(mean, std, count, confidence_level, support)
    fooled = probe.get("num_fooled")
    if fooled is None:
        fooled = counts_from_means(probe.get("success_rate"), count)
    return interval_entry(
        confidence_level,
        {"loss_mean": loss_curve, "success_rate": proportion_curve(fooled, count, confidence_level)},
    )


def _selection(params: Mapping[str, Any]) -> str:
    # The notebook attacks the correct images of a fixed random list (its random_hundred_paths_val.npy is not
    # published): here a random draw by the seed, of which the chunks attack the correct ones.
    return "random" if params.get("record") in NOTEBOOK_RECORDS else "correct"


def _headline(probe: Mapping[str, Any]) -> dict[str, str]:
    mean = as_float_array(probe.get("loss_mean"))
    std = as_float_array(probe.get("loss_std"))
    record = probe.get("record")
    loss_bounds = curve_bounds(probe, "loss_mean")
    notebook = record in NOTEBOOK_RECORDS
    out = {"loss recorded": f"−CE before each step ({record})" if notebook else "CE at t = 0..steps"}
    out["initial loss"] = fmt_number_interval(mean[0] if mean.size else None, *bounds_at(loss_bounds, 0))
    # One notation per cell, as every probe's: the mean with its interval; the images' spread in a row of its own.
    out["final loss (mean)"] = fmt_number_interval(
        mean[-1] if mean.size else None, *bounds_at(loss_bounds, mean.size - 1)
    )
    if std.size == mean.size and mean.size:
        out["final loss, std over the images"] = fmt_number(std[-1])
    success = bounds_at(curve_bounds(probe, "success_rate"))
    out["success rate (%)"] = fmt_percent_interval(probe.get("success_rate"), *success, 100)
    out["eps (L∞) / steps"] = f"{fmt_number(probe.get('eps'))} / {fmt_count(probe.get('steps'))}"
    if record == "paul-chen-bit-notebook":
        # Why their BiT curve and counts are not comparable to a bounded attack's.
        out["eps (L∞) / steps"] += (
            " (not enforced: the BiT notebook adds clip(δ) to δ, |δ| ≈ 0.02 after 10 steps)"
        )
    return out


def loss_rise_per_image(probe: Mapping[str, Any]) -> tuple[list, np.ndarray]:
    """Each attacked image's mean rise of the cross-entropy per attack step, (CE at the last recorded step - CE at
    the first) / (recorded steps - 1), from its row of "losses" (negated for the notebook records, which keep -CE):
    how fast the attack raises the loss, the quantity of Paul & Chen's Fig. 13 claim (BiT's rises faster)."""
    keys = per_image_of(probe)["keys"]
    losses = as_float_array(probe.get("losses"))
    if losses.ndim != 2 or losses.shape[0] != len(keys) or losses.shape[1] < 2:
        raise LookupError("the pgd record holds no per-image losses of two steps or more")
    cross_entropy = -losses if probe.get("record") in NOTEBOOK_RECORDS else losses
    return list(keys), (cross_entropy[:, -1] - cross_entropy[:, 0]) / (losses.shape[1] - 1)


def published_value(probe: Mapping[str, Any], metric: str, condition: Mapping[str, str]) -> ProbeValue:
    """The images attacked (those classified correctly first) and those the attack fooled, as counts (Paul & Chen's
    PGD notebooks print each image's prediction before and after)."""
    attacked = int(probe.get("num_images") or 0)
    if metric == "attacked (count)":
        return ProbeValue(float(attacked), attacked)
    if metric == "fooled (count)" and probe.get("num_fooled") is not None:
        return ProbeValue(float(probe["num_fooled"]), attacked)
    raise LookupError(f"the pgd probe holds the attacked and fooled counts, not {metric!r}")


def draw_pgd(data: SeriesData, ax: Axes | None = None) -> Figure | None:
    """The mean cross-entropy per attack step ± one standard deviation (band), one curve per model (on `ax`: one),
    with error bars of the mean's interval over images where the dict has one."""
    if ax is None:
        figure = new_figure(5.0, 3.6)
        ax = figure.add_subplot()
    drawn = 0
    for (key, probe), color in zip(data.items(), colors(len(data)), strict=True):
        mean = as_float_array(probe.get("loss_mean"))
        std = as_float_array(probe.get("loss_std"))
        if not mean.size:
            continue
        steps = np.arange(mean.size)
        ax.plot(steps, mean, marker="o", markersize=3, label=key, color=color)
        if std.shape == mean.shape:
            ax.fill_between(steps, mean - std, mean + std, color=color, alpha=0.2, linewidth=0)
        bounds = curve_bounds(probe, "loss_mean")
        if bounds is not None and bounds[0].shape == mean.shape and np.isfinite(bounds[0] + bounds[1]).any():
            below = np.nan_to_num(mean - bounds[0], nan=0.0)
            above = np.nan_to_num(bounds[1] - mean, nan=0.0)
            ax.errorbar(steps, mean, yerr=(below, above), fmt="none", ecolor=color, capsize=3, linewidth=1.0)
        drawn += 1
    if not drawn:
        return None
    ax.set_xlabel("attack step")
    ax.set_ylabel("cross-entropy")
    ax.set_title("PGD loss progression")
    ax.legend(fontsize="small")
    ax.grid(alpha=0.3)
    return ax.figure


def _joint_check(params: Mapping[str, Any], input_size: tuple[int, int] | None) -> None:
    """Paul & Chen's notebook records are their Adam attacks from delta = 0."""
    _check_record(params["record"], params["method"], params["random_start"])


SPEC = register_probe(
    ProbeSpec(
        name="pgd",
        value_checks={
            "eps": positive_number,
            "step_size": optional(positive_number),
            "steps": positive_int,
            "random_start": boolean,
        },
        joint_check=_joint_check,
        probe=pgd_loss_progression,
        result_type=PGDLossResult,
        selection="correct",
        chunk_size=25,
        needs_labels=True,
        partial_fn=_partial,
        merge_fn=_merge,
        excluded_params={"num_images": _RUNNER_NUM_IMAGES},
        selection_fn=_selection,
        choices={"record": RECORDS, "method": METHODS},
        headline=_headline,
        intervals_fn=_intervals,
        summary_row="final loss (mean)",
        value_of=published_value,
        findings=(
            ProbeFinding(
                "fig-13-pgd-loss-rise",
                "paul-chen",
                "BiT's loss rises faster than ViT's under PGD (the paper's BiT attack was unbounded)",
                "Paul & Chen, Fig. 13 (PGD loss progression), each notebook's attack: the ViT's delta within 0.001 per "
                "pixel, the BiT's never bounded (about 0.02 after 10 steps)",
                "mean rise of the cross-entropy per attack step, (last - first recorded) / (recorded steps - 1)",
                -1,
                loss_rise_per_image,
                # Both notebooks squash to 224: transforms.Resize((224, 224)) for ViT-L/16, tf.image.resize for BiT-M.
                protocol=(
                    ProtocolPart("record", vit="paul-chen-notebook", cnn="paul-chen-bit-notebook"),
                    ProtocolPart("step_size", vit=str(PAPER_LR), cnn=str(BIT_NOTEBOOK_LR)),
                    ProtocolPart("preprocessing", vit="native-resize", cnn="squash-224"),
                    ProtocolPart("eps"),
                    ProtocolPart("steps"),
                ),
            ),
        ),
        figures={
            "pgd_loss": ProbeFigure(
                draw_pgd,
                # One caption for every record: the rows of a paul-chen-bit-notebook run say that its delta is
                # never bounded (`_headline`), so a report of a bounded attack stays as it was.
                "Cross-entropy along the PGD attack, mean ± one standard deviation over the images (Paul & Chen).",
            )
        },
    )
)


__all__ = [
    "BIT_NOTEBOOK_LR",
    "NOTEBOOK_RECORDS",
    "PAPER_EPS",
    "PAPER_LR",
    "RECORDS",
    "SPEC",
    "PGDLossResult",
    "draw_pgd",
    "loss_rise_per_image",
    "pgd_attack",
    "pgd_loss_progression",
]
