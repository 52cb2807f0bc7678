# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The L-inf attacks of the PGD probe (`hf_vitrobust.probes.pgd`), on one batch of pixels in [0, 1].

- "sign": Madry et al. (ICLR 2018) PGD with torchattacks' operations.
- "adam": Paul & Chen's (AAAI 2022) Adam on delta, after each step projected onto the eps-ball and the pixel box
  ("ball-and-box", exact), onto the eps-ball only ("ball", their ViT notebook), or not projected at all
  ("added-clip", their BiT notebook's `delta.assign_add(clip_eps(delta))`, with Keras' Adam).
"""

from __future__ import annotations

import math
from typing import Any, Literal

import torch
import torch.nn.functional as F

from ..models.classifier import Classifier
from .base import check_eval_classifier

PGDMethod = Literal["adam", "sign"]
METHODS = ("adam", "sign")
PGDProjection = Literal["ball-and-box", "ball", "added-clip"]
PROJECTIONS = ("ball-and-box", "ball", "added-clip")
# Paul & Chen's ViT notebook: eps 0.002 and lr 1e-3 on inputs in [-1, 1], i.e. half of each on pixels in [0, 1]
# (the same iterates up to Adam's eps 1e-8, which acts on gradients twice as large there).
PAPER_EPS = 0.001
PAPER_LR = 0.0005
ADAM_BETAS = (0.9, 0.999)
ADAM_EPS = 1e-8
# Paul & Chen's BiT notebook: Keras' Adam, lr 1e-3 on [0, 1] inputs, epsilon 1e-7 added to the uncorrected sqrt(v).
BIT_NOTEBOOK_LR = 0.001
KERAS_ADAM_EPS = 1e-7


def _check_positive(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < math.inf:
        raise ValueError(f"{name} must be a positive finite number, got {value!r}.")
    return float(value)


def check_attack(
    classifier: Classifier, method: str, eps: float, step_size: float | None, steps: int
) -> float:
    """Validate the attack parameters; returns the step size (the default of the method when None)."""
    check_eval_classifier(classifier)
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}.")
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
        minimum-norm fix; with gradient 0 there, both give the same iterates), or "added-clip" (Paul & Chen's BiT
        notebook: Keras' Adam step, then delta += clamp(delta, -eps, eps), no bound). "sign" always clips the
        image to the box (torchattacks) and accepts "ball-and-box" only.
    """
    step_size = check_attack(classifier, method, eps, step_size, steps)
    if projection not in PROJECTIONS:
        raise ValueError(f"projection must be one of {PROJECTIONS}, got {projection!r}.")
    if method == "sign" and projection != "ball-and-box":
        raise ValueError(
            f'projection "{projection}" is a notebook\'s Adam attack; method "sign" clips to the box.'
        )
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
            if projection == "added-clip":
                # Keras' Adam: epsilon on the uncorrected sqrt(v), both corrections in the step size.
                step = -step_size * math.sqrt(correction2) / correction1
                delta.addcdiv_(first, second.sqrt().add_(KERAS_ADAM_EPS), value=step)
                delta = delta + delta.clamp(
                    -eps, eps
                )  # `delta.assign_add(clip_eps(delta))`: not a projection
                continue
            denominator = (second.sqrt() / math.sqrt(correction2)).add_(ADAM_EPS)
            delta.addcdiv_(first, denominator, value=-step_size / correction1)
            delta = torch.minimum(torch.maximum(delta, lower), upper)
        adversarial = (clean + delta).clamp(0.0, 1.0)
    with torch.no_grad():
        logits = classifier(adversarial).float()
    losses[:, steps] = F.cross_entropy(logits, labels, reduction="none")
    return adversarial, losses, logits.argmax(dim=1)


__all__ = [
    "ADAM_BETAS",
    "ADAM_EPS",
    "BIT_NOTEBOOK_LR",
    "KERAS_ADAM_EPS",
    "METHODS",
    "PAPER_EPS",
    "PAPER_LR",
    "PROJECTIONS",
    "PGDMethod",
    "PGDProjection",
    "check_attack",
    "pgd_attack",
]
