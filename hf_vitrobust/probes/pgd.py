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
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import torch
import torch.nn.functional as F

from ..corruptions.randomness import uniform
from ..metrics.loss_progression import loss_progression
from ..models.classifier import Classifier
from .base import (
    DEFAULT_BATCH_SIZE,
    ProbeResult,
    batch_slices,
    check_batch_size,
    check_eval_classifier,
    check_seed,
    new_axes,
    predict_logits,
    prepare_inputs,
)

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from matplotlib.axes import Axes

PGDMethod = Literal["adam", "sign"]
_METHODS = ("adam", "sign")
PGDRecord = Literal["every-step", "paul-chen-notebook"]
RECORDS = ("every-step", "paul-chen-notebook")
PGDProjection = Literal["ball-and-box", "ball"]
_PROJECTIONS = ("ball-and-box", "ball")
# Paul & Chen's ViT notebook: eps 0.002 and lr 1e-3 on inputs in [-1, 1], i.e. half of each on pixels in [0, 1]
# (the same iterates up to Adam's eps 1e-8, which acts on gradients twice as large there).
PAPER_EPS = 0.001
PAPER_LR = 0.0005
ADAM_BETAS = (0.9, 0.999)
ADAM_EPS = 1e-8
RANDOM_START_STREAM = "pgd/random-start"


def _check_positive(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < math.inf:
        raise ValueError(f"{name} must be a positive finite number, got {value!r}.")
    return float(value)


def _check_attack(
    classifier: Classifier, method: str, eps: float, step_size: float | None, steps: int
) -> float:
    """Validate the attack parameters; returns the step size (the default of the method when None)."""
    check_eval_classifier(classifier)
    if method not in _METHODS:
        raise ValueError(f"method must be one of {_METHODS}, got {method!r}.")
    _check_positive(eps, "eps")
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise ValueError(f"steps must be a positive int, got {steps!r}.")
    if step_size is None:
        return PAPER_LR if method == "adam" else 2.5 * float(eps) / steps
    return _check_positive(step_size, "step_size")


def _cross_entropy(classifier: Classifier, pixels: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    return F.cross_entropy(classifier(pixels).float(), labels, reduction="none")


def pgd_attack(
    classifier: Classifier,
    pixels: torch.Tensor,
    labels: torch.Tensor,
    *,
    method: PGDMethod = "adam",
    eps: float = PAPER_EPS,
    step_size: float | None = None,
    steps: int = 10,
    init: torch.Tensor | None = None,
    projection: PGDProjection = "ball-and-box",
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """An untargeted L-inf attack on one batch of pixels (N, 3, H, W) in [0, 1] with labels (N,).

    Returns (adversarial pixels, losses (N, steps + 1), predictions (N,) on the adversarial pixels): losses[:, t]
    is the per-image cross-entropy after t updates (t = 0: the clean or randomly started image, t = steps: the
    returned adversarial image).

    method: "adam" (the paper's Adam on delta, lr = step_size, default 5e-4) or "sign" (sign-gradient PGD,
        alpha = step_size, default 2.5 eps / steps as Madry et al.).
    init: a starting perturbation (N, 3, H, W) (the random start), clipped like torchattacks: the start is
        clamp(x + init, 0, 1).
    projection: for "adam", where delta goes after each update: "ball-and-box" (the exact projection onto the
        eps-ball and the pixel box) or "ball" (clamped to [-eps, eps] only, Paul & Chen's notebook
        `delta.data.clamp_(-EPS[1], EPS[1])`; the model sees clamp(x + delta, 0, 1)). They part only where a
        pixel reaches the box and torch.clamp passes the gradient at its bounds (subgradient 1, torch before the
        minimum-norm fix; with gradient 0 there, both give the same iterates). "sign" always clips the image to
        the box (torchattacks) and accepts "ball-and-box" only.
    """
    step_size = _check_attack(classifier, method, eps, step_size, steps)
    if projection not in _PROJECTIONS:
        raise ValueError(f"projection must be one of {_PROJECTIONS}, got {projection!r}.")
    if method == "sign" and projection != "ball-and-box":
        raise ValueError('projection "ball" is the notebook\'s Adam attack; method "sign" clips to the box.')
    if not isinstance(pixels, torch.Tensor) or pixels.ndim != 4 or not pixels.is_floating_point():
        raise ValueError("pixels must be a float (N, 3, H, W) tensor in [0, 1].")
    labels = torch.as_tensor(labels, dtype=torch.int64, device=pixels.device)
    if labels.shape != (pixels.shape[0],):
        raise ValueError(f"labels must have shape ({pixels.shape[0]},), got {tuple(labels.shape)}.")
    if init is not None and init.shape != pixels.shape:
        raise ValueError(
            f"init must have the shape of pixels {tuple(pixels.shape)}, got {tuple(init.shape)}."
        )
    clean = pixels.detach()
    adversarial = clean.clone() if init is None else (clean + init.to(clean)).clamp(0.0, 1.0)
    losses = torch.empty(clean.shape[0], steps + 1, dtype=torch.float32, device=clean.device)
    if method == "sign":
        for t in range(steps):
            adversarial.requires_grad_(True)
            with torch.enable_grad():
                loss = _cross_entropy(classifier, adversarial, labels)
                (grad,) = torch.autograd.grad(loss.sum(), adversarial)
            losses[:, t] = loss.detach()
            # torchattacks.PGD's operations, in its order.
            adversarial = adversarial.detach() + step_size * grad.sign()
            delta = torch.clamp(adversarial - clean, min=-eps, max=eps)
            adversarial = torch.clamp(clean + delta, min=0.0, max=1.0).detach()
    else:
        if projection == "ball":
            lower = torch.full_like(clean, -eps)
            upper = torch.full_like(clean, eps)
        else:
            lower = (-clean).clamp(min=-eps)
            upper = (1.0 - clean).clamp(max=eps)
        delta = adversarial - clean
        first = torch.zeros_like(clean)
        second = torch.zeros_like(clean)
        beta1, beta2 = ADAM_BETAS
        for t in range(steps):
            delta.requires_grad_(True)
            with torch.enable_grad():
                loss = _cross_entropy(classifier, (clean + delta).clamp(0.0, 1.0), labels)
                # Adam minimises -CE; the sum keeps each image's gradient its own.
                (grad,) = torch.autograd.grad(-loss.sum(), delta)
            losses[:, t] = loss.detach()
            delta = delta.detach()
            # torch.optim.Adam's update (non-amsgrad, no weight decay), elementwise, so per image.
            first.lerp_(grad, 1.0 - beta1)
            second.mul_(beta2).addcmul_(grad, grad, value=1.0 - beta2)
            correction1 = 1.0 - beta1 ** (t + 1)
            correction2 = 1.0 - beta2 ** (t + 1)
            denominator = (second.sqrt() / math.sqrt(correction2)).add_(ADAM_EPS)
            delta.addcdiv_(first, denominator, value=-step_size / correction1)
            delta = torch.minimum(torch.maximum(delta, lower), upper)
        adversarial = (clean + delta).clamp(0.0, 1.0)
    with torch.no_grad():
        logits = classifier(adversarial).float()
    losses[:, steps] = F.cross_entropy(logits, labels, reduction="none")
    return adversarial, losses, logits.argmax(dim=1)


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
        """The mean loss per attack step with a band of one standard deviation (Paul & Chen's figure)."""
        ax = new_axes(ax)
        mean = self.loss_mean.detach().cpu().double().numpy()
        std = self.loss_std.detach().cpu().double().numpy()
        step_axis = np.arange(len(mean))
        label = f"{self.method}, eps {self.eps:g}"
        (line,) = ax.plot(step_axis, mean, marker="o", markersize=3, label=label)
        ax.fill_between(step_axis, mean - std, mean + std, color=line.get_color(), alpha=0.25, linewidth=0)
        ax.set_xlabel("attack step")
        notebook = self.record == "paul-chen-notebook"
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
    """
    seed = check_seed(seed)
    check_batch_size(batch_size)
    step_size = _check_attack(classifier, method, eps, step_size, steps)
    if not isinstance(random_start, bool):
        raise ValueError(f"random_start must be a bool, got {random_start!r}.")
    if record not in RECORDS:
        raise ValueError(f"record must be one of {RECORDS}, got {record!r}.")
    notebook = record == "paul-chen-notebook"
    if notebook and (method != "adam" or random_start):
        raise ValueError(
            'record "paul-chen-notebook" is the notebook\'s Adam attack from delta = 0: it needs method "adam" '
            f"and random_start False, got method {method!r} and random_start {random_start!r}."
        )
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
            projection="ball" if notebook else "ball-and-box",
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


__all__ = ["PAPER_EPS", "PAPER_LR", "RECORDS", "PGDLossResult", "pgd_attack", "pgd_loss_progression"]
