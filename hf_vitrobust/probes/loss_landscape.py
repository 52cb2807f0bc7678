# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""2-D loss landscapes along normalised random directions (Li et al., "Visualizing the Loss Landscape of Neural
Nets", NeurIPS 2018, Sec. 4; Park & Kim, "How Do Vision Transformers Work?", ICLR 2022, Fig. 1 left).

The loss is evaluated at theta + x d1 + y d2 on a grid of (x, y), where d1 and d2 are Gaussian random directions
in weight space, rescaled so that a step of 1 has the scale of the weights themselves (scale-invariant networks,
BatchNorm or LayerNorm, then compare fairly). Two rescalings (`normalization=`):

- "filter" (the default): Li et al.'s filter normalisation (their Eq. 1). For every parameter with two or more
  dimensions and each filter i (the slice along dimension 0: an output channel of a convolution, an output row of
  a linear layer), d_i <- d_i / ||d_i|| * ||theta_i||.
- "park-kim": Park & Kim's code (xxxnell/how-do-vits-work `ops/loss_landscapes.py`, `create_bases`), which takes
  the norm along dimension 0 instead: d <- ||theta||_dim0 / (||d||_dim0 + 1e-7) * d, one norm per position
  across the filters (per (input channel, kh, kw) of a convolution, per input column of a linear layer, and
  |theta| elementwise for a (1, T, D) position embedding). It runs over the model's state_dict, so persistent
  floating-point buffers of two or more dimensions are moved too.

Tensors with fewer than two dimensions (biases, norm scales and shifts, running statistics) get a zero direction in
both, as Li et al. and Park & Kim's `ignore_bn`; so do tensors whose name matches a regular expression of
`exclude` (Park & Kim's `ignore_kw`, called with `PARK_KIM_EXCLUDE` = ("pos_embed", "relative_position") for
ViTs). transformers names its position embeddings "position_embeddings": a pattern matching "pos_embed" matches them.

The loss at a grid point is the NLL plus an L2 term, Park & Kim's "NLL + L2" (their README calls NLL without L2,
on clean data, incorrect): `l2_term="half-squared"` (the default) adds (wd / 2) ||theta + x d1 + y d2||^2 with
`weight_decay=wd`; `l2_term="park-kim"` adds wd * sum_p ||p||_2, the sum of the unsquared norms of the parameter
tensors at the moved point (their `ops/norm.py` `l2`, plotted by losslandscape.ipynb as NLL + weight_decay * l2).

`augmentation=` evaluates on training-augmented images (`hf_vitrobust.probes.augmentation`, Park & Kim's recipe:
timm's per-image transforms, then Mixup/CutMix with label smoothing per mini-batch); the NLL is then the soft-target
cross-entropy and the accuracy is taken against the argmax of the soft targets (their `ops/tests.py` `test`). Park
& Kim iterate their shuffled, augmenting training DataLoader afresh at every grid point, so every point sees a new
augmentation: `augmentation_draw="per-point"` (the default) draws it keyed by (seed, grid point, the mini-batch's
sample ids); "fixed" uses one augmented set, keyed by (seed, the mini-batch's sample ids), for the centre and every
point, a smoother surface from few images. Mixup pairs the images of one mini-batch, so with an augmentation the
numbers depend on `batch_size` (Park & Kim: 96); the grouping into batches is fixed here, where their loader
reshuffled it at every point.

`loss_average="images"` (the default) averages the NLL over images; "batches" averages the per-batch mean NLLs
(their `ops/meters.py` `AverageMeter`, which gives a smaller last batch the weight of a full one, so it depends on
`batch_size`). The accuracy is a mean over images in both.

The model is evaluated with `torch.func.functional_call` on perturbed parameter dicts, so it is never modified;
eval mode (BatchNorm running statistics, no dropout) is used, as their `test`. The grid is in numpy meshgrid "xy"
order, the order in which Park & Kim visit it (y outer, x inner). The random directions come from the
counter-based normal stream of `hf_vitrobust.corruptions.randomness` keyed by (seed, direction index): the same
seed gives the same directions on every device, and no global RNG is touched.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
import torch.nn.functional as F
from torch.func import functional_call

from ..models.classifier import Classifier
from .augmentation import TRAINING_AUGMENTATIONS, augment_batch, check_augmentation, soft_target_cross_entropy
from .base import (
    DEFAULT_BATCH_SIZE,
    ProbeInputs,
    ProbeResult,
    batch_slices,
    check_batch_size,
    check_seed,
    eval_mode,
    json_safe,
    new_axes,
    prepare_inputs,
)
from .display import SeriesData, as_float_array, fmt_number, panels_or_axes
from .loss_landscape_directions import (
    NORMALIZATIONS,
    _check_choice,
    _compile_exclude,
    filter_normalized_direction,
    landscape_tensors,
)
from .loss_landscape_metrics import (
    L1_METRIC,
    ORIGIN_METRICS,
    concatenate_batches,
    merge_origin,
    origin_batch_statistics,
    origin_value,
    unit_standard_error,
)
from .param_checks import (
    non_negative_number,
    number_in,
    one_or_pair,
    ordered_pair,
    positive_int,
    regular_expressions,
)
from .spec import (
    ProbeFigure,
    ProbeSpec,
    ProbeValue,
    grid_index,
    register_probe,
    same_setting,
    total_images,
    weighted_mean,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

L2_TERMS = ("half-squared", "park-kim")
AUGMENTATION_DRAWS = ("per-point", "fixed")
LOSS_AVERAGES = ("images", "batches")


def _augmentation_seed(seed: int, point: str, batch_tag: str) -> int:
    key = f"{seed}/{point}/{batch_tag}"
    return int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "big") >> 11


@dataclass
class LossLandscapeResult(ProbeResult):
    """The loss surface of Li et al. (2018) / Park & Kim (2022, Fig. 1 left).

    x: (nx,) and y: (ny,) step sizes along the two directions; loss and accuracy: (ny, nx), entry [i, j] at
    (x[j], y[i]) (numpy meshgrid "xy" order); loss = NLL + weight_decay * l2; center_loss: the model's own loss
    (x = y = 0; with augmentation_draw "per-point" it is a draw of its own, else it equals the grid's 0 point);
    weight_decay: the L2 coefficient included in `loss`; num_images: images used. l2: (ny, nx) the L2 term per unit
    weight decay at each point ((1/2) ||theta||^2 for l2_term "half-squared", sum_p ||p||_2 for "park-kim"), so
    NLL + wd' * l2 can be recomputed for another wd'; normalization, l2_term, augmentation, augmentation_draw,
    loss_average, batch_size: the settings (see `loss_landscape`). origin: at the grid point x = y = 0 (None where
    the grid has none), the per-batch counts and sums of Park & Kim's other metrics (top-5, ECE, Brier, confusion
    matrices: `loss_landscape_metrics`); origin_l1: the sum of the parameter tensors' L1 norms there.
    nll_square_sum: (ny, nx) the sum over the averaging units (images, or batches' means) of their squared NLL,
    from which the merged probe's `loss_standard_error` is computed.
    """

    x: torch.Tensor
    y: torch.Tensor
    loss: torch.Tensor
    accuracy: torch.Tensor
    center_loss: float
    weight_decay: float
    num_images: int
    l2: torch.Tensor | None = None
    normalization: str = "filter"
    l2_term: str = "half-squared"
    augmentation: str | None = None
    augmentation_draw: str = "per-point"
    loss_average: str = "images"
    batch_size: int | None = None
    origin: dict[str, torch.Tensor] | None = None
    origin_l1: float | None = None
    nll_square_sum: torch.Tensor | None = None

    @classmethod
    def probe_name(cls) -> str:
        return "loss_landscape"

    def to_dict(self) -> dict[str, Any]:
        """Every field as the runner's merge writes it: the origin's per-batch statistics summed with their jackknife
        standard errors, and the loss's standard error instead of the squares it is computed from."""
        data = super().to_dict()
        data.pop("nll_square_sum")
        data["origin"] = None if self.origin is None else json_safe(merge_origin([self.origin]))
        batches = math.ceil(self.num_images / self.batch_size) if self.batch_size else self.num_images
        units = batches if self.loss_average == "batches" else self.num_images
        squares = [None if self.nll_square_sum is None else self.nll_square_sum]
        nll = self.loss - self.weight_decay * (self.l2 if self.l2 is not None else 0.0)
        data["loss_standard_error"] = json_safe(unit_standard_error(squares, nll.double(), units))
        return data

    def plot(self, ax: Axes | None = None) -> Axes:
        """Contour plot of the loss surface (`draw_loss_landscape`, the report's panel; Park & Kim Fig. 1 left,
        seen from above)."""
        ax = new_axes(ax)
        surface = {name: getattr(self, name).double().cpu().numpy() for name in ("x", "y", "loss")}
        draw_loss_landscape({"": surface}, ax=ax)
        return ax


def _axis(values: tuple[float, float], points: int, what: str) -> torch.Tensor:
    if len(values) != 2 or not all(isinstance(v, int | float) and math.isfinite(v) for v in values):
        raise ValueError(f"{what} must be a (low, high) pair of finite numbers, got {values!r}.")
    if values[0] > values[1]:
        raise ValueError(f"{what} must have low <= high, got {values!r}.")
    return torch.linspace(float(values[0]), float(values[1]), points, dtype=torch.float64)


@torch.no_grad()
def loss_landscape(
    classifier: Classifier,
    images: torch.Tensor | object,
    labels: torch.Tensor | list[int] | None = None,
    *,
    seed: int = 0,
    batch_size: int = DEFAULT_BATCH_SIZE,
    resolution: int | tuple[int, int] = 21,
    x_range: tuple[float, float] = (-1.0, 1.0),
    y_range: tuple[float, float] = (-1.0, 1.0),
    weight_decay: float = 0.0,
    exclude: Sequence[str] = (),
    normalization: str = "filter",
    l2_term: str = "half-squared",
    augmentation: str | None = None,
    augmentation_draw: str = "per-point",
    loss_average: str = "images",
    sample_ids: torch.Tensor | Sequence[int] | None = None,
) -> LossLandscapeResult:
    """Loss and accuracy on a grid of theta + x d1 + y d2 (normalised random d1, d2; see the module docstring).

    Park & Kim's protocol: normalization="park-kim", l2_term="park-kim", weight_decay=0.05 (cifar100_vit.yaml, used
    for the ResNet too), exclude=PARK_KIM_EXCLUDE, augmentation="park-kim-cifar100" (or "-imagenet") on training
    images, augmentation_draw="per-point", loss_average="batches", batch_size=96, resolution=21 on [-1, 1]^2.

    Args:
        classifier, images, labels: the model and labelled images (see `prepare_inputs`).
        seed: keys the two random directions and the augmentation.
        batch_size: images per forward pass; changes the result only with an augmentation (Mixup pairs images of a
            mini-batch) or loss_average="batches".
        resolution: grid points per axis (int) or (nx, ny); Park & Kim use 21 x 21 on [-1, 1]^2.
        x_range, y_range: the (low, high) steps along directions 1 and 2.
        weight_decay: wd >= 0, the coefficient of the L2 term added to the NLL at every point.
        exclude: regular expressions of tensor names whose direction is zero (besides all < 2-D tensors).
        normalization: "filter" (Li et al., per filter) or "park-kim" (their norm along dim 0, over the state_dict).
        l2_term: "half-squared" ((1/2) ||theta||^2) or "park-kim" (sum of the parameter tensors' L2 norms).
        augmentation: None (the images as given, integer labels) or a `TRAINING_AUGMENTATIONS` recipe.
        augmentation_draw: "per-point" (a fresh augmentation at every grid point) or "fixed" (one for all).
        loss_average: "images" (mean NLL over images) or "batches" (mean of the per-batch mean NLLs).
        sample_ids: (N,) integer ids keying each image's augmentation (default: as `prepare_inputs`).
    """
    seed = check_seed(seed)
    check_batch_size(batch_size)
    if isinstance(resolution, int) and not isinstance(resolution, bool):
        resolution = (resolution, resolution)
    if (
        not isinstance(resolution, tuple | list)
        or len(resolution) != 2
        or any(isinstance(r, bool) or not isinstance(r, int) or r < 1 for r in resolution)
    ):
        raise ValueError(f"resolution must be a positive int or a (nx, ny) pair of them, got {resolution!r}.")
    xs = _axis(tuple(x_range), resolution[0], "x_range")
    ys = _axis(tuple(y_range), resolution[1], "y_range")
    if not isinstance(weight_decay, int | float) or not math.isfinite(weight_decay) or weight_decay < 0:
        raise ValueError(f"weight_decay must be a finite float >= 0, got {weight_decay!r}.")
    _compile_exclude(exclude)
    _check_choice(normalization, NORMALIZATIONS, "normalization")
    _check_choice(l2_term, L2_TERMS, "l2_term")
    _check_choice(augmentation_draw, AUGMENTATION_DRAWS, "augmentation_draw")
    _check_choice(loss_average, LOSS_AVERAGES, "loss_average")
    augmentation = check_augmentation(augmentation)
    inputs = prepare_inputs(classifier, images, labels, sample_ids=sample_ids)
    assert inputs.labels is not None
    tensors = landscape_tensors(classifier, normalization)
    param_names = [name for name, _ in classifier.named_parameters()]
    if not param_names:
        raise ValueError(f"{classifier.name} has no parameters.")
    params = {name: tensors[name] for name in param_names}
    buffers = dict(classifier.named_buffers())
    direction_x = filter_normalized_direction(
        tensors, seed=seed, index=0, exclude=exclude, normalization=normalization
    )
    direction_y = filter_normalized_direction(
        tensors, seed=seed, index=1, exclude=exclude, normalization=normalization
    )
    # Buffers whose direction is not zero (park-kim: >= 2-D floating-point persistent buffers).
    moved_buffers = [name for name in tensors if name not in params and tensors[name].ndim >= 2]
    slices = list(batch_slices(len(inputs), batch_size))
    if augmentation is not None:
        batch_tags = [",".join(str(i) for i in inputs.sample_ids[part].tolist()) for part in slices]

    def batches(point: str) -> list[tuple[torch.Tensor, torch.Tensor]]:
        if augmentation is None:
            return [(inputs.pixels[part], inputs.labels[part]) for part in slices]
        return [
            augment_batch(
                inputs.pixels[part],
                inputs.labels[part],
                recipe=augmentation,
                seed=_augmentation_seed(seed, point, tag),
                num_classes=classifier.num_classes,
                sample_ids=inputs.sample_ids[part],
            )
            for part, tag in zip(slices, batch_tags, strict=True)
        ]

    def l2_of(values: dict[str, torch.Tensor]) -> float:
        if l2_term == "half-squared":
            return float(sum(v.double().pow(2).sum() for v in values.values()))
        return float(sum(torch.linalg.vector_norm(v.double()) for v in values.values()))

    def evaluate(
        values: dict[str, torch.Tensor],
        state: dict[str, torch.Tensor],
        data: list,
        origin: list | None = None,
    ) -> tuple[float, float, float, float]:
        total_loss = torch.zeros((), dtype=torch.float64, device=inputs.pixels.device)
        # The sum of squares of the NLL of each averaging unit (an image, or a batch's mean): with the number of
        # units and the mean, the standard error of the mean, summed over chunks whatever their split.
        total_square = torch.zeros((), dtype=torch.float64, device=inputs.pixels.device)
        correct = torch.zeros((), dtype=torch.int64, device=inputs.pixels.device)
        for pixels, target in data:
            logits = functional_call(classifier, (values, state), (pixels,), strict=False).float()
            if target.ndim == 1:
                per_image = F.cross_entropy(logits, target, reduction="none").double()
                hard = target
            else:
                per_image = soft_target_cross_entropy(logits, target, reduction="none").double()
                hard = target.argmax(-1)
            unit_losses = per_image if loss_average == "images" else per_image.mean().reshape(1)
            total_loss += unit_losses.sum()
            total_square += unit_losses.pow(2).sum()
            correct += (logits.argmax(-1) == hard).sum()
            if origin is not None:
                origin.append(origin_batch_statistics(logits, hard))
        loss = float(total_loss) / (len(inputs) if loss_average == "images" else len(data))
        nll_square_sum = float(total_square)
        squared_or_norms = l2_of(values)
        if l2_term == "half-squared":
            if weight_decay:
                loss += 0.5 * weight_decay * squared_or_norms
            l2 = 0.5 * squared_or_norms
        else:
            l2 = squared_or_norms
            loss += weight_decay * l2
        return loss, float(correct) / len(inputs), l2, nll_square_sum

    def moved(
        tensor: torch.Tensor, dx: torch.Tensor, dy: torch.Tensor, step_x: float, step_y: float
    ) -> torch.Tensor:
        if normalization == "filter":
            return tensor + step_x * dx + step_y * dy
        return tensor + (step_x * dx + step_y * dy)  # Park & Kim's order: ws0 + (x b1 + y b2)

    fixed = batches("fixed") if augmentation is not None and augmentation_draw == "fixed" else None
    loss_grid = torch.empty(len(ys), len(xs), dtype=torch.float64)
    accuracy_grid = torch.empty(len(ys), len(xs), dtype=torch.float64)
    l2_grid = torch.empty(len(ys), len(xs), dtype=torch.float64)
    square_grid = torch.empty(len(ys), len(xs), dtype=torch.float64)
    origin: list[dict[str, torch.Tensor]] | None = None
    origin_l1 = None
    with eval_mode(classifier):
        center_data = fixed if fixed is not None else batches("center")
        center_loss, *_ = evaluate(params, buffers, center_data)
        for i, step_y in enumerate(ys.tolist()):
            for j, step_x in enumerate(xs.tolist()):
                values = {
                    name: moved(params[name], direction_x[name], direction_y[name], step_x, step_y)
                    for name in params
                }
                state = dict(buffers)
                for name in moved_buffers:
                    state[name] = moved(tensors[name], direction_x[name], direction_y[name], step_x, step_y)
                data = fixed if fixed is not None else batches(str(i * len(xs) + j))
                at_origin = abs(step_x) <= 1e-9 and abs(step_y) <= 1e-9  # as `grid_index` finds it
                if at_origin:
                    origin = []
                    origin_l1 = float(sum(torch.linalg.vector_norm(v.double(), 1) for v in values.values()))
                point = evaluate(values, state, data, origin if at_origin else None)
                loss_grid[i, j], accuracy_grid[i, j], l2_grid[i, j], square_grid[i, j] = point
    return LossLandscapeResult(
        x=xs,
        y=ys,
        loss=loss_grid,
        accuracy=accuracy_grid,
        center_loss=center_loss,
        weight_decay=float(weight_decay),
        num_images=len(inputs),
        l2=l2_grid,
        normalization=normalization,
        l2_term=l2_term,
        augmentation=augmentation,
        augmentation_draw=augmentation_draw,
        loss_average=loss_average,
        batch_size=batch_size,
        origin=None if origin is None else concatenate_batches(origin),
        origin_l1=origin_l1,
        nll_square_sum=square_grid,
    )


# ------------------------------------------------------------------------------------------------ the probe's spec
# The augmentation of each mini-batch is keyed by its sample ids, so a chunk's numbers do not depend on the
# process that runs it; with batch_size set, a chunk is one mini-batch (the spec's chunk_param), so Mixup pairs
# and per-batch means are those of the one-call probe (Park & Kim: 96); without it, chunks of 64.
_AUGMENTATIONS = (None, *TRAINING_AUGMENTATIONS)


def _partial(classifier: Classifier, inputs: ProbeInputs, seed: int, params: dict) -> dict:
    result: LossLandscapeResult = loss_landscape(
        classifier, inputs.pixels, inputs.labels, seed=seed, sample_ids=inputs.sample_ids, **params
    )
    return {
        "x": result.x.cpu(),
        "y": result.y.cpu(),
        "loss": result.loss.cpu(),
        "accuracy": result.accuracy.cpu(),
        "center_loss": float(result.center_loss),
        "weight_decay": result.weight_decay,
        "l2": result.l2.cpu(),
        "normalization": result.normalization,
        "l2_term": result.l2_term,
        "augmentation": result.augmentation,
        "augmentation_draw": result.augmentation_draw,
        "loss_average": result.loss_average,
        "batch_size": result.batch_size,
        "num_batches": math.ceil(len(inputs) / result.batch_size),
        "origin": result.origin,
        "origin_l1": result.origin_l1,
        "nll_square_sum": result.nll_square_sum.cpu(),
    }


def _merge(partials: list) -> dict:
    # The L2 term is the same for every chunk, so a weighted mean of (NLL + term) is (mean NLL + term). The NLL of
    # loss_average "images" is a mean over images (weights: image counts), of "batches" a mean of per-batch means
    # (weights: batch counts). Partials written before these settings existed get today's defaults.
    defaults = {
        "l2": None,
        "normalization": "filter",
        "l2_term": "half-squared",
        "augmentation": None,
        "augmentation_draw": "per-point",
        "loss_average": "images",
        "batch_size": None,
        "origin": None,
        "origin_l1": None,
        "nll_square_sum": None,
    }
    partials = [{**defaults, **partial} for partial in partials]
    loss_average = same_setting(partials, "loss_average")
    if loss_average == "batches":
        batches = sum(int(p["num_batches"]) for p in partials)
        loss = sum(torch.as_tensor(p["loss"], dtype=torch.float64) * int(p["num_batches"]) for p in partials)
        center = sum(float(p["center_loss"]) * int(p["num_batches"]) for p in partials)
        loss, center_loss = loss / batches, center / batches
    else:
        loss, center_loss = weighted_mean(partials, "loss"), float(weighted_mean(partials, "center_loss"))
    has_l2 = all(p["l2"] is not None for p in partials)
    units = sum(int(p["num_batches"] if loss_average == "batches" else p["num_images"]) for p in partials)
    l2 = weighted_mean(partials, "l2") if has_l2 else None
    nll = loss if l2 is None else loss - float(same_setting(partials, "weight_decay")) * torch.as_tensor(l2)
    return {
        "loss_standard_error": unit_standard_error([p["nll_square_sum"] for p in partials], nll, units),
        "x": same_setting(partials, "x"),
        "y": same_setting(partials, "y"),
        "loss": loss,
        "accuracy": weighted_mean(partials, "accuracy"),
        "center_loss": center_loss,
        "weight_decay": same_setting(partials, "weight_decay"),
        "num_images": total_images(partials),
        "l2": l2,
        "normalization": same_setting(partials, "normalization"),
        "l2_term": same_setting(partials, "l2_term"),
        "augmentation": same_setting(partials, "augmentation"),
        "augmentation_draw": same_setting(partials, "augmentation_draw"),
        "loss_average": loss_average,
        "batch_size": same_setting(partials, "batch_size"),
        "origin": merge_origin([p["origin"] for p in partials]),
        "origin_l1": same_setting(partials, "origin_l1"),
    }


#: The published metrics of a grid point: Park & Kim's "loss" (NLL + wd x l2, what their notebook plots), NLL, top-1
#: and l2 (their `ops/norm.py` sum of the parameter tensors' L2 norms, column "l2" of their results CSVs).
_POINT_METRICS = {"loss": "loss", "NLL": "loss", "top-1 %": "accuracy", "sum of parameter L2 norms": "l2"}


def published_value(probe: Mapping[str, Any], metric: str, condition: Mapping[str, str]) -> ProbeValue:
    """The loss (NLL + weight_decay x l2), the NLL, the top-1 (%) or the sum of the parameter L2 norms at a grid
    point, with the correct count of a top-1 and the chunks' standard error of a loss or NLL (zero for the l2,
    which no image changes); at the origin also Park & Kim's other metrics (`loss_landscape_metrics.origin_value`)."""
    if metric in ORIGIN_METRICS or metric == L1_METRIC:
        if not {"x", "y"} <= set(condition) or any(abs(float(condition[a])) > 1e-9 for a in ("x", "y")):
            raise LookupError(f"the loss landscape records {metric!r} at its origin (x = y = 0) only")
        return origin_value(probe, metric)
    if metric not in _POINT_METRICS or not {"x", "y"} <= set(condition):
        raise LookupError(
            f"the loss landscape holds {', '.join(_POINT_METRICS)} per grid point, not {metric!r}"
        )
    if metric == "sum of parameter L2 norms" and probe.get("l2_term") != "park-kim":
        raise LookupError(f"this loss landscape's l2 is {probe.get('l2_term')}, not the sum of the L2 norms")
    row = grid_index(probe.get("y") or [], float(condition["y"]))
    column = grid_index(probe.get("x") or [], float(condition["x"]))

    def at(name: str) -> float:
        return float(np.asarray(probe[name], dtype=np.float64)[row, column])

    value = at(_POINT_METRICS[metric])
    if metric == "NLL":
        value -= float(probe.get("weight_decay") or 0.0) * at("l2")
    images = None if probe.get("num_images") is None else int(probe["num_images"])
    if metric == "top-1 %":
        return ProbeValue(100.0 * value, images, None if images is None else round(value * images))
    spread = 0.0 if metric == "sum of parameter L2 norms" else None
    if spread is None and probe.get("loss_standard_error") is not None:
        spread = at("loss_standard_error")
    return ProbeValue(value, images, standard_error=spread)


def _headline(probe: Mapping[str, Any]) -> dict[str, str]:
    loss = as_float_array(probe.get("loss"))
    finite = loss[np.isfinite(loss)] if loss.size else loss
    return {
        "center loss": fmt_number(probe.get("center_loss")),
        "max loss on the grid": fmt_number(finite.max() if finite.size else None),
    }


def draw_loss_landscape(data: SeriesData, ax: Axes | None = None) -> Figure | None:
    """Each model's loss surface as contours around the trained weights (+), one panel per model (on `ax`: one)."""
    surfaces = {}
    for key, probe in data.items():
        x, y, loss = (as_float_array(probe.get(name)) for name in ("x", "y", "loss"))
        if loss.ndim == 2 and loss.shape == (y.size, x.size) and loss.size > 1 and np.isfinite(loss).any():
            surfaces[key] = (x, y, loss)
    if not surfaces:
        return None
    figure, axes = panels_or_axes(len(surfaces), ax)
    for panel, (key, (x, y, loss)) in zip(axes, surfaces.items(), strict=True):
        xs, ys = np.meshgrid(x, y)
        finite = loss[np.isfinite(loss)]
        levels = 15 if np.ptp(finite) > 0 and min(loss.shape) > 1 else None
        if levels is None:
            panel.plot(x if x.size > 1 else y, loss.ravel(), marker="o")
        else:
            contours = panel.contour(xs, ys, loss, levels=levels, cmap="viridis")
            panel.clabel(contours, inline=True, fontsize=6, fmt="%.2f")
            panel.plot([0.0], [0.0], marker="+", color="black")
            panel.set_aspect("equal", adjustable="box")
        panel.set_title(key, fontsize="medium")
        panel.set_xlabel("direction 1")
        panel.set_ylabel("direction 2")
    if ax is None:
        figure.suptitle("Loss landscape")
    return figure


SPEC = register_probe(
    ProbeSpec(
        name="loss_landscape",
        value_checks={
            "resolution": one_or_pair(positive_int),
            "x_range": ordered_pair(number_in()),
            "y_range": ordered_pair(number_in()),
            "weight_decay": non_negative_number,
            "exclude": regular_expressions,
        },
        probe=loss_landscape,
        result_type=LossLandscapeResult,
        selection="random",
        chunk_size=64,
        needs_labels=True,
        partial_fn=_partial,
        merge_fn=_merge,
        chunk_param="batch_size",
        chunk_default=64,
        choices={
            "normalization": NORMALIZATIONS,
            "l2_term": L2_TERMS,
            "augmentation": _AUGMENTATIONS,
            "augmentation_draw": AUGMENTATION_DRAWS,
            "loss_average": LOSS_AVERAGES,
        },
        headline=_headline,
        value_of=published_value,
        summary_row="center loss",
        figures={
            "loss_landscape": ProbeFigure(
                draw_loss_landscape,
                "Loss landscape along two filter-normalised random directions (Li et al.; Park & Kim Fig. 1).",
            )
        },
    )
)


__all__ = [
    "AUGMENTATION_DRAWS",
    "L2_TERMS",
    "LOSS_AVERAGES",
    "SPEC",
    "LossLandscapeResult",
    "draw_loss_landscape",
    "loss_landscape",
]
