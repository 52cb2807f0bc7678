# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""What the Space does to an image and reads from a model: the perturbations (an ImageNet-C corruption, a Cutout
hole, Fourier-basis noise), the top-5 predictions, and where the model looks (attention rollout or Grad-CAM)."""

from __future__ import annotations

import numpy as np
import torch
from app_inputs import UserError
from PIL import Image

from hf_vitrobust.corruptions import CORRUPTIONS, corrupt, cutout, fourier_noise
from hf_vitrobust.models import Classifier

TOP_K = 5
# Yin et al. (2019)'s L2 norm of a Fourier-basis perturbation of a 224x224 ImageNet image.
DEFAULT_FOURIER_EPS = 15.7
# Frequencies |i|, |j| <= 111 are distinct at 224x224; larger inputs reach further, smaller ones are checked.
MAX_FREQUENCY = 111

PERTURBATIONS = (
    ("ImageNet-C corruption", "corruption"),
    ("Cutout occlusion", "cutout"),
    ("Fourier-basis noise", "fourier"),
)


def perturb(
    pixels: torch.Tensor,
    kind: str,
    *,
    corruption: str,
    severity: int,
    ratio: float,
    frequency: tuple[int, int],
    eps: float,
    seed: int,
) -> tuple[torch.Tensor, str]:
    """The perturbed pixels (1, 3, H, W) in [0, 1] and a short description of the perturbation."""
    if kind == "corruption":
        if corruption not in CORRUPTIONS:
            raise UserError(f"Unknown corruption {corruption!r}; choose one of {', '.join(CORRUPTIONS)}.")
        description = f"{corruption}, severity {int(severity)}"
        return corrupt(pixels, corruption, int(severity), seed=seed), description
    if kind == "cutout":
        return cutout(pixels, float(ratio), seed=seed), f"Cutout of {float(ratio):.0%} of the image"
    if kind == "fourier":
        limit = (min(pixels.shape[-2:]) - 1) // 2
        if max(abs(frequency[0]), abs(frequency[1])) > limit:
            raise UserError(
                f"Frequencies of a {pixels.shape[-2]}x{pixels.shape[-1]} input go up to {limit} in each direction."
            )
        return fourier_noise(pixels, frequency, float(eps), seed=seed), (
            f"Fourier basis at frequency ({frequency[0]}, {frequency[1]}), L2 norm {float(eps):g}"
        )
    raise UserError(f"Unknown perturbation {kind!r}; choose one of {[value for _, value in PERTURBATIONS]}.")


def explain(classifier: Classifier, pixels: torch.Tensor) -> tuple[torch.Tensor, str]:
    """Maps (N, H, W) in [0, 1]: attention rollout (Abnar & Zuidema 2020) for models with self-attention (AlterNet:
    its MSA maps), else Grad-CAM (Selvaraju et al. 2017) of each image's predicted class."""
    from hf_vitrobust.probes import attention_maps, gradcam

    if classifier.has_attention:
        result = attention_maps(classifier, pixels)
        name = "attention rollout" if result.method == "rollout" else f"attention ({result.method})"
        return result.maps, name
    result = gradcam(classifier, pixels)
    return result.cams, f"Grad-CAM (layer {result.layer})"


def overlay(pixels: torch.Tensor, heat: torch.Tensor, alpha: float = 0.5) -> Image.Image:
    """An image (3, H, W) in [0, 1] blended with a heat map (H, W) in [0, 1] drawn in the jet colour map."""
    from matplotlib import colormaps

    image = pixels.detach().float().cpu().permute(1, 2, 0).clamp(0, 1).numpy()
    colours = colormaps["jet"](heat.detach().float().cpu().clamp(0, 1).numpy())[..., :3]
    blended = (1 - alpha) * image + alpha * colours
    return Image.fromarray((blended * 255).round().astype(np.uint8))


def to_pil(pixels: torch.Tensor) -> Image.Image:
    """Pixels (3, H, W) in [0, 1] as an 8-bit RGB image, what the UI shows of what the model sees."""
    array = (pixels.detach().float().cpu().clamp(0, 1) * 255).round().to(torch.uint8)
    return Image.fromarray(array.permute(1, 2, 0).numpy())


def top_k(classifier: Classifier, pixels: torch.Tensor, k: int = TOP_K) -> list[dict[str, float]]:
    """Per image, {class name: probability} of the k most likely classes (names made unique for gr.Label)."""
    top = classifier.predict_topk(pixels, k=min(k, classifier.num_classes))
    tables = []
    for names, indices, probabilities in zip(
        top.labels, top.indices.tolist(), top.probabilities.tolist(), strict=True
    ):
        table: dict[str, float] = {}
        for name, index, probability in zip(names, indices, probabilities, strict=True):
            table[name if name not in table else f"{name} ({index})"] = float(probability)
        tables.append(table)
    return tables
