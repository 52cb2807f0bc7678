# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""2-D loss landscapes along filter-normalised random directions (Li et al., "Visualizing the Loss Landscape of
Neural Nets", NeurIPS 2018, Sec. 4; as Park & Kim, ICLR 2022, Fig. 1 left).

The loss is evaluated at theta + x d1 + y d2 on a grid of (x, y), where d1 and d2 are Gaussian random directions
in weight space, each *filter-normalised* (Li et al., Eq. 1): for every parameter tensor with two or more
dimensions and each filter i (the slice along dimension 0: an output channel of a convolution, an output row of
a linear layer), d_i <- d_i / ||d_i|| * ||theta_i||, so that a step of 1 has the scale of the weights themselves
and scale-invariant networks (BatchNorm, LayerNorm) compare fairly. One-dimensional parameters (biases,
BatchNorm/LayerNorm scales and shifts) get a zero direction, as Li et al. and Park & Kim's `ignore_bn`.
Park & Kim additionally zero the directions of position embeddings and relative position tables for ViTs
(`exclude=("pos_embed", "relative_position")` here reproduces that). Note: Park & Kim's code normalises with
`torch.norm(d, dim=0)` (one norm per position across filters); we follow Li et al.'s per-filter definition.

The model is evaluated with `torch.func.functional_call` on perturbed parameter dicts, so it is never modified;
eval mode (BatchNorm running statistics, no dropout) is used. The loss at each grid point is the mean
cross-entropy over all given images (plus (wd / 2) ||theta + x d1 + y d2||^2 with `weight_decay=wd`, the "NLL +
L2" Park & Kim plot; their notebook adds wd * sum_p ||p||_2 instead), together with the accuracy. Both are
averages over images, so they do not depend on `batch_size`.

The random directions come from the counter-based normal stream of `hf_vitrobust.corruptions.randomness` keyed by
(seed, direction index): the same seed gives the same directions on every device, and no global RNG is touched.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch
import torch.nn.functional as F
from torch.func import functional_call

from ..corruptions.randomness import normal
from ..models.classifier import Classifier
from .base import (
    DEFAULT_BATCH_SIZE,
    ProbeResult,
    batch_slices,
    check_batch_size,
    check_seed,
    eval_mode,
    new_axes,
    prepare_inputs,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes

_STREAM = "loss_landscape/direction"


def filter_normalized_direction(
    params: dict[str, torch.Tensor], *, seed: int = 0, index: int = 0, exclude: Sequence[str] = ()
) -> dict[str, torch.Tensor]:
    """A random Gaussian direction shaped like `params`, filter-normalised (Li et al. 2018, Eq. 1): each filter
    (slice along dim 0) of a >= 2-D parameter has the norm of the same filter of the parameter; 1-D parameters and
    parameters whose name matches a regular expression in `exclude` get zeros. `index` selects the direction
    (0 and 1 for the two axes of a landscape)."""
    seed = check_seed(seed)
    if not params:
        raise ValueError("No parameters.")
    patterns = [re.compile(pattern) for pattern in exclude]
    first = next(iter(params.values()))
    total = sum(p.numel() for p in params.values())
    ids = torch.tensor([index], dtype=torch.int64, device=first.device)
    flat = normal(seed, ids, _STREAM, (total,), dtype=torch.float32)[0]
    directions: dict[str, torch.Tensor] = {}
    offset = 0
    for name, param in params.items():
        raw = flat[offset : offset + param.numel()].view(param.shape)
        offset += param.numel()
        if param.ndim < 2 or any(pattern.search(name) for pattern in patterns):
            directions[name] = torch.zeros_like(param)
            continue
        weight = param.detach().float()
        raw_norm = raw.flatten(1).norm(dim=1).view(-1, *([1] * (param.ndim - 1)))
        weight_norm = weight.flatten(1).norm(dim=1).view(-1, *([1] * (param.ndim - 1)))
        directions[name] = (raw * (weight_norm / raw_norm.clamp_min(1e-12))).to(param.dtype)
    return directions


@dataclass
class LossLandscapeResult(ProbeResult):
    """The loss surface of Li et al. (2018) / Park & Kim (2022, Fig. 1 left).

    x: (nx,) and y: (ny,) step sizes along the two directions; loss and accuracy: (ny, nx), entry [i, j] at
    (x[j], y[i]) (numpy meshgrid "xy" order); center_loss: the model's own loss (x = y = 0, when the grid holds
    0 it equals the loss there); weight_decay: the L2 coefficient included in `loss`; num_images: images used.
    """

    x: torch.Tensor
    y: torch.Tensor
    loss: torch.Tensor
    accuracy: torch.Tensor
    center_loss: float
    weight_decay: float
    num_images: int

    @classmethod
    def probe_name(cls) -> str:
        return "loss_landscape"

    def plot(self, ax: Axes | None = None) -> Axes:
        """Contour plot of the loss surface (Park & Kim Fig. 1 left, seen from above)."""
        ax = new_axes(ax)
        xs, ys = np.meshgrid(self.x.double().cpu().numpy(), self.y.double().cpu().numpy())
        loss = self.loss.double().cpu().numpy()
        finite = np.isfinite(loss)
        levels = 20 if finite.sum() > 1 and np.ptp(loss[finite]) > 0 else 1
        contours = ax.contour(xs, ys, np.where(finite, loss, np.nan), levels=levels, cmap="viridis")
        ax.clabel(contours, inline=True, fontsize=6, fmt="%.2f")
        ax.plot([0.0], [0.0], marker="+", color="black")
        ax.set_xlabel("direction 1")
        ax.set_ylabel("direction 2")
        ax.set_aspect("equal", adjustable="box")
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
) -> LossLandscapeResult:
    """Loss and accuracy on a grid of theta + x d1 + y d2 (filter-normalised random d1, d2; see the module docstring).

    Args:
        classifier, images, labels: the model and labelled images (see `prepare_inputs`).
        seed: keys the two random directions.
        batch_size: images per forward pass (does not change the result).
        resolution: grid points per axis (int) or (nx, ny); Park & Kim use 21 x 21 on [-1, 1]^2.
        x_range, y_range: the (low, high) steps along directions 1 and 2.
        weight_decay: wd >= 0 adds (wd / 2) ||weights||^2 to the loss at every grid point.
        exclude: regular expressions of parameter names whose direction is zero (besides all 1-D parameters).
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
    if isinstance(exclude, str):
        raise ValueError("exclude must be a sequence of regular expressions, not a single string.")
    inputs = prepare_inputs(classifier, images, labels)
    assert inputs.labels is not None
    params = {name: p.detach() for name, p in classifier.named_parameters()}
    if not params:
        raise ValueError(f"{classifier.name} has no parameters.")
    buffers = dict(classifier.named_buffers())
    direction_x = filter_normalized_direction(params, seed=seed, index=0, exclude=exclude)
    direction_y = filter_normalized_direction(params, seed=seed, index=1, exclude=exclude)
    slices = list(batch_slices(len(inputs), batch_size))

    def evaluate(values: dict[str, torch.Tensor]) -> tuple[float, float]:
        total_loss = torch.zeros((), dtype=torch.float64, device=inputs.pixels.device)
        correct = torch.zeros((), dtype=torch.int64, device=inputs.pixels.device)
        for part in slices:
            logits = functional_call(
                classifier, (values, buffers), (inputs.pixels[part],), strict=False
            ).float()
            target = inputs.labels[part]
            total_loss += F.cross_entropy(logits, target, reduction="sum").double()
            correct += (logits.argmax(-1) == target).sum()
        loss = float(total_loss) / len(inputs)
        if weight_decay:
            loss += 0.5 * weight_decay * float(sum(v.double().pow(2).sum() for v in values.values()))
        return loss, float(correct) / len(inputs)

    loss_grid = torch.empty(len(ys), len(xs), dtype=torch.float64)
    accuracy_grid = torch.empty(len(ys), len(xs), dtype=torch.float64)
    with eval_mode(classifier):
        center_loss, _ = evaluate(params)
        for i, step_y in enumerate(ys.tolist()):
            for j, step_x in enumerate(xs.tolist()):
                moved = {
                    name: params[name] + step_x * direction_x[name] + step_y * direction_y[name]
                    for name in params
                }
                loss_grid[i, j], accuracy_grid[i, j] = evaluate(moved)
    return LossLandscapeResult(
        x=xs,
        y=ys,
        loss=loss_grid,
        accuracy=accuracy_grid,
        center_loss=center_loss,
        weight_decay=float(weight_decay),
        num_images=len(inputs),
    )


__all__ = ["LossLandscapeResult", "filter_normalized_direction", "loss_landscape"]
