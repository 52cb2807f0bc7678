# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The pieces of the training recipe: warmup + cosine schedule, mixup/cutmix targets, their loss, and SAM."""

import math
from collections.abc import Callable, Iterable

import torch
import torch.nn.functional as F


def warmup_cosine_factor(step: int, warmup_steps: int, total_steps: int, min_ratio: float = 0.0) -> float:
    """Learning-rate multiplier at optimizer step `step` (0-based): linear warmup, then cosine decay.

    Warmup rises as `(step + 1) / (warmup_steps + 1)`, so the first step already moves the weights; from
    `warmup_steps` on, the factor follows `min_ratio + (1 - min_ratio) * (1 + cos(pi * t)) / 2` with t going
    from 0 at the end of warmup to 1 at the last step (`total_steps - 1`) (Loshchilov & Hutter 2017).
    """
    if step < warmup_steps:
        return (step + 1) / (warmup_steps + 1)
    decay_steps = total_steps - 1 - warmup_steps
    progress = min(1.0, (step - warmup_steps) / decay_steps) if decay_steps > 0 else 1.0
    return min_ratio + (1.0 - min_ratio) * 0.5 * (1.0 + math.cos(math.pi * progress))


def warmup_cosine_schedule(
    optimizer: torch.optim.Optimizer, warmup_steps: int, total_steps: int, min_ratio: float = 0.0
) -> torch.optim.lr_scheduler.LambdaLR:
    """A LambdaLR stepping `warmup_cosine_factor` once per optimizer step."""
    if total_steps <= 0:
        raise ValueError(f"total_steps must be positive, got {total_steps}.")
    if not 0 <= warmup_steps < total_steps:
        raise ValueError(f"warmup_steps must be in [0, total_steps={total_steps}), got {warmup_steps}.")
    return torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: warmup_cosine_factor(step, warmup_steps, total_steps, min_ratio)
    )


def soft_target_cross_entropy(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean over the batch of `-sum_c targets_c * log_softmax(logits)_c` (targets: (N, C) rows summing to 1)."""
    return torch.sum(-targets * F.log_softmax(logits.float(), dim=-1), dim=-1).mean()


class MixCriterion:
    """Mixes a batch (mixup / cutmix, via timm's `Mixup`) and scores logits against the resulting targets.

    With both alphas zero, batches pass through unchanged and the loss is cross-entropy with label smoothing.
    Otherwise targets are the smoothed one-hot labels mixed with the same coefficient as the images (timm's
    convention: smoothing `eps` puts `1 - eps + eps / C` on the class and `eps / C` elsewhere). The random
    draws come from NumPy's global generator (timm's choice), so seed it for reproducible runs.
    """

    def __init__(
        self,
        num_classes: int,
        mixup_alpha: float = 0.0,
        cutmix_alpha: float = 0.0,
        prob: float = 1.0,
        switch_prob: float = 0.5,
        label_smoothing: float = 0.0,
    ) -> None:
        self.num_classes = num_classes
        self.label_smoothing = label_smoothing
        self.mixup = None
        if mixup_alpha > 0 or cutmix_alpha > 0:
            from timm.data import Mixup

            self.mixup = Mixup(
                mixup_alpha=mixup_alpha,
                cutmix_alpha=cutmix_alpha,
                prob=prob,
                switch_prob=switch_prob,
                mode="batch",
                label_smoothing=label_smoothing,
                num_classes=num_classes,
            )

    @property
    def mixes(self) -> bool:
        return self.mixup is not None

    def mix(self, pixels: torch.Tensor, labels: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(pixels, integer labels) -> (mixed pixels, targets): soft (N, C) targets when mixing, else labels."""
        if self.mixup is None:
            return pixels, labels
        if pixels.shape[0] % 2:
            raise ValueError(f"mixup/cutmix need an even batch size, got {pixels.shape[0]}.")
        return self.mixup(pixels, labels)

    def __call__(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        if targets.ndim == 2:
            return soft_target_cross_entropy(logits, targets)
        return F.cross_entropy(logits.float(), targets, label_smoothing=self.label_smoothing)


def _at_least_float32(tensor: torch.Tensor) -> torch.Tensor:
    return tensor if tensor.dtype in (torch.float32, torch.float64) else tensor.float()


class SAM:
    """Sharpness-aware minimisation (Foret et al., ICLR 2021, Alg. 1) around any optimizer.

    One update takes two gradients: at the weights `w` (then `first_step` moves to `w + e`, with
    `e = rho * g / ||g||_2` over all parameters) and at `w + e` (then `second_step` returns to `w` and lets
    the base optimizer step with the gradient taken at `w + e`). The base optimizer keeps its own state,
    learning-rate schedule and mixed-precision handling (it may be accelerate's prepared optimizer).
    """

    def __init__(self, optimizer: torch.optim.Optimizer, rho: float = 0.05) -> None:
        if not rho > 0:
            raise ValueError(f"rho must be positive, got {rho}.")
        self.optimizer = optimizer
        self.rho = rho
        self._perturbations: list[tuple[torch.Tensor, torch.Tensor]] = []

    @property
    def param_groups(self) -> list[dict]:
        return self.optimizer.param_groups

    def _params(self) -> Iterable[torch.Tensor]:
        for group in self.optimizer.param_groups:
            for param in group["params"]:
                if param.grad is not None:
                    yield param

    @torch.no_grad()
    def first_step(self, zero_grad: bool = True) -> None:
        """Ascend to `w + rho * g / ||g||`. A non-finite gradient (fp16 overflow) leaves the weights at `w`."""
        if self._perturbations:
            raise RuntimeError("SAM.first_step called twice without second_step.")
        params = list(self._params())
        if not params:
            return
        grads = [_at_least_float32(p.grad) for p in params]
        norm = torch.linalg.vector_norm(
            torch.stack([torch.linalg.vector_norm(g).to(grads[0].dtype) for g in grads])
        )
        if not torch.isfinite(norm) or norm == 0:
            self._perturbations = [(p, torch.zeros_like(p)) for p in params]
        else:
            scale = self.rho / (norm + 1e-12)
            for param, grad in zip(params, grads, strict=True):
                perturbation = (grad * scale).to(param.dtype)
                param.add_(perturbation)
                self._perturbations.append((param, perturbation))
        if zero_grad:
            self.optimizer.zero_grad(set_to_none=True)

    @torch.no_grad()
    def restore(self) -> None:
        """Go back to `w`, keeping the gradients (taken at `w + e`) for the base optimizer."""
        for param, perturbation in self._perturbations:
            param.sub_(perturbation)
        self._perturbations = []

    def second_step(self, zero_grad: bool = True) -> None:
        """Return to `w` and take the base optimizer's step with the gradient at `w + e`."""
        self.restore()
        self.optimizer.step()
        if zero_grad:
            self.optimizer.zero_grad(set_to_none=True)

    def step(self, closure: Callable[[], torch.Tensor]) -> torch.Tensor:
        """A full SAM update; `closure` runs forward + backward and returns the loss (called twice)."""
        loss = closure()
        self.first_step(zero_grad=True)
        closure()
        self.second_step(zero_grad=True)
        return loss

    def zero_grad(self, set_to_none: bool = True) -> None:
        self.optimizer.zero_grad(set_to_none=set_to_none)


__all__ = [
    "SAM",
    "MixCriterion",
    "soft_target_cross_entropy",
    "warmup_cosine_factor",
    "warmup_cosine_schedule",
]
