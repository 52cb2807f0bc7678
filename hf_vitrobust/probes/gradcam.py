# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Grad-CAM and its variants for any `Classifier`, through the `grad-cam` package (Gildenblat et al.).

Paul & Chen (AAAI 2022, "Vision Transformers are Robust Learners", Sec. "Attention maps"; notebook
`analysis/attention_maps/CAMs.ipynb` of sayakpaul/robustness-vit) contrast attention rollout maps of ViTs
(`attention_maps`) with Grad-CAM maps of BiT, for the true class, computed with this package. Grad-CAM
(Selvaraju et al., ICCV 2017, Eq. 1-2) weights each channel k of a feature layer A by the spatial mean of the
gradient of the class score, alpha_k = mean_ij dy_c / dA_ij^k, and keeps the positive part of the weighted sum,
ReLU(sum_k alpha_k A^k); the `grad-cam` package then min-max scales each map to [0, 1] and resizes it to the
input size. The variants (Grad-CAM++, XGradCAM, LayerCAM, HiResCAM,
EigenCAM, ScoreCAM, ...) are chosen by name.

The feature layer comes from the adapter (`hf_vitrobust.models.cam_targets.cam_target`): by default the
deepest of `classifier.layer_names()` with more than one position, or, when the head reads only the CLS token
of a ViT, the pre-attention norm of the last block (where patch tokens still carry gradient). These are the
layers of Paul & Chen's notebook: BiT's `stages[-1].blocks[-1]` (the last stage's output) and ViT's
`blocks[-1].norm1`. Token layers (N, tokens, dim) are brought to a feature map by `TokenReshape`: prefix tokens
(CLS, DeiT's distillation token, registers) are dropped and the patch tokens put on their (h, w) grid.

`grad-cam` calls `model(input)`: it gets the `Classifier` itself, pixels in [0, 1] in, logits out. Its hooks
are released when the call ends (also on errors), the model's training flags, `requires_grad` flags and
parameter gradients are restored, and no gradient is written into the parameters (they are frozen during the
call; the gradient flows from the input pixels). Each image's map depends only on that image.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from ..models.cam_targets import CAMTarget, TokenLayout, cam_target, layer_tap
from ..models.classifier import Classifier
from .base import (
    DEFAULT_BATCH_SIZE,
    ProbeInputs,
    ProbeResult,
    batch_slices,
    check_batch_size,
    check_seed,
    eval_mode,
    new_axes,
    predict_logits,
    prepare_inputs,
)
from .display import SeriesData, overlays
from .param_checks import boolean, calls, non_negative_int, optional, text
from .spec import (
    ProbeFigure,
    ProbeNotApplicable,
    ProbeSpec,
    method_headline,
    probe_kwargs,
    register_probe,
    rounded_maps,
    same_setting,
    total_images,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

# Normalised name -> class name in pytorch_grad_cam. Methods that ignore the target layer (FullGrad) or need
# model-specific extras (AblationCAM's ablation layer, FinerCAM's comparison targets) are left out.
CAM_METHODS = {
    "gradcam": "GradCAM",
    "gradcamplusplus": "GradCAMPlusPlus",
    "xgradcam": "XGradCAM",
    "layercam": "LayerCAM",
    "hirescam": "HiResCAM",
    "gradcamelementwise": "GradCAMElementWise",
    "eigencam": "EigenCAM",
    "eigengradcam": "EigenGradCAM",
    "scorecam": "ScoreCAM",
}
_INSTALL_HINT = "pip install grad-cam"


def cam_method_name(method: str) -> str:
    """The `pytorch_grad_cam` class name for a method name, case-, dash- and underscore-insensitive:
    "GradCAM", "grad-cam++", "gradcam_plusplus", "ScoreCAM", "eigen-cam", ..."""
    if not isinstance(method, str):
        raise ValueError(f"method must be a string, got {method!r}.")
    key = method.lower().replace("++", "plusplus").replace("-", "").replace("_", "").replace(" ", "")
    if key not in CAM_METHODS:
        raise ValueError(f"Unknown CAM method {method!r}; choose one of {sorted(set(CAM_METHODS.values()))}.")
    return CAM_METHODS[key]


class TokenReshape:
    """grad-cam's `reshape_transform` for token layers: (N, prefix + h*w, dim) -> (N, dim, h, w).

    The prefix tokens (CLS, distillation, registers) are dropped; the patch tokens, row-major, fill the grid.
    With `layout=None` a feature map (N, C, h, w) passes through. Either way the result is float32, so that
    grad-cam's numpy step also works for half-precision models.
    """

    def __init__(self, layout: TokenLayout | None) -> None:
        self.layout = layout

    def __call__(self, features: torch.Tensor) -> torch.Tensor:
        if self.layout is not None:
            features = self.layout.to_grid(features)
        elif features.ndim != 4:
            raise ValueError(f"Expected a feature map (N, C, h, w), got {tuple(features.shape)}.")
        return features.float()

    def __repr__(self) -> str:
        if self.layout is None:
            return "TokenReshape(None)"
        return f"TokenReshape(num_prefix_tokens={self.layout.num_prefix_tokens}, grid={self.layout.grid})"


def _import_cam_class(class_name: str) -> type:
    try:
        import pytorch_grad_cam
    except ImportError as err:  # pragma: no cover - the dev environment has it
        raise ImportError(f"gradcam needs the grad-cam package: {_INSTALL_HINT}.") from err
    return getattr(pytorch_grad_cam, class_name)


@contextlib.contextmanager
def _untouched(classifier: Classifier) -> Iterator[None]:
    """Eval mode and frozen parameters for the call; afterwards every module's mode, every `requires_grad` flag
    and every `.grad` as they were (grad-cam switches the model to eval and calls `model.zero_grad()`)."""
    params = [(param, param.requires_grad, param.grad) for param in classifier.parameters()]
    try:
        for param, _, _ in params:
            param.requires_grad_(False)
        with eval_mode(classifier), torch.enable_grad():
            yield
    finally:
        for param, flag, grad in params:
            param.requires_grad_(flag)
            param.grad = grad


def _target_classes(
    classifier: Classifier,
    pixels: torch.Tensor,
    labels: torch.Tensor | None,
    target_classes: torch.Tensor | Sequence[int] | None,
    batch_size: int,
) -> tuple[torch.Tensor, str]:
    n = pixels.shape[0]
    if target_classes is not None:
        classes = torch.as_tensor(target_classes, dtype=torch.int64).flatten().cpu()
        if classes.numel() == 1 and n > 1:
            classes = classes.expand(n).clone()
        if classes.shape != (n,):
            raise ValueError(
                f"target_classes must be one class or ({n},) classes, got {tuple(classes.shape)}."
            )
        if classes.min() < 0 or classes.max() >= classifier.num_classes:
            raise ValueError(f"target_classes must be class indices in [0, {classifier.num_classes}).")
        return classes, "given"
    if labels is not None:
        return labels.detach().cpu(), "labels"
    return predict_logits(classifier, pixels, batch_size).argmax(dim=-1).cpu(), "predictions"


@dataclass
class GradCAMResult(ProbeResult):
    """Class activation maps of a batch of images.

    cams: (N, H, W) in [0, 1] at the input size, on the CPU. method: the grad-cam class used. layer / module_name:
    the target layer (as asked or chosen) and its module; layer_reason: why it was chosen. target_classes: (N,)
    the explained class of each image; target_source: "given", "labels" or "predictions". image: the first input
    image (3, H, W), for the overlay.
    """

    cams: torch.Tensor
    method: str
    layer: str
    module_name: str
    layer_reason: str
    target_classes: torch.Tensor
    target_source: str
    model: str
    image: torch.Tensor = field(repr=False)

    @classmethod
    def probe_name(cls) -> str:
        return "gradcam"

    def plot(self, ax: Axes | None = None) -> Axes:
        """The first image with its CAM as a semi-transparent heat map (`draw_gradcam`, the report's panel), as
        Paul & Chen's Grad-CAM figure."""
        ax = new_axes(ax, figsize=(3.5, 3.5))
        cams = self.cams[:1].detach().float().cpu().numpy()
        draw_gradcam({"": {"cams": cams, "image": self.image.detach().float().cpu().numpy()}}, ax=ax)
        ax.set_title(f"{self.model}: {self.method} (class {int(self.target_classes[0])})")
        return ax


def gradcam(
    classifier: Classifier,
    images: torch.Tensor | Iterable[Any],
    labels: torch.Tensor | Sequence[int] | None = None,
    *,
    seed: int = 0,
    batch_size: int = DEFAULT_BATCH_SIZE,
    method: str = "GradCAM",
    layer: str | None = None,
    target_classes: torch.Tensor | Sequence[int] | int | None = None,
    eigen_smooth: bool = False,
    aug_smooth: bool = False,
    limit: int | None = None,
) -> GradCAMResult:
    """Grad-CAM (or a variant, by `method` name) of `images` for their target classes.

    Target classes: `target_classes` when given (one class for all or one per image), else `labels`, else the
    model's predictions. layer: an adapter layer name (`classifier.layer_names()`) or a module name; None for the
    adapter's default (see the module docstring). eigen_smooth / aug_smooth: grad-cam's principal-component and
    test-time-augmentation smoothing. seed is accepted for the common probe signature (the maps are
    deterministic).
    """
    check_seed(seed)
    check_batch_size(batch_size)
    class_name = cam_method_name(method)
    if not isinstance(eigen_smooth, bool) or not isinstance(aug_smooth, bool):
        raise ValueError("eigen_smooth and aug_smooth must be bools.")
    cam_class = _import_cam_class(class_name)
    from pytorch_grad_cam.utils.model_targets import ClassifierOutputTarget

    inputs = prepare_inputs(classifier, images, labels, limit=limit, require_labels=False)
    if isinstance(target_classes, int) and not isinstance(target_classes, bool):
        target_classes = [target_classes]
    target: CAMTarget = cam_target(classifier, layer)
    classes, source = _target_classes(classifier, inputs.pixels, inputs.labels, target_classes, batch_size)
    reshape = TokenReshape(target.token_layout)
    parts: list[torch.Tensor] = []
    with _untouched(classifier), layer_tap(classifier, target.module_name) as tap:
        cam = cam_class(model=classifier, target_layers=[tap], reshape_transform=reshape)
        try:
            for part in batch_slices(len(inputs), batch_size):
                pixels = inputs.pixels[part].detach().clone().requires_grad_(True)
                targets = [ClassifierOutputTarget(int(c)) for c in classes[part].tolist()]
                maps = cam(
                    input_tensor=pixels, targets=targets, eigen_smooth=eigen_smooth, aug_smooth=aug_smooth
                )
                parts.append(torch.from_numpy(np.ascontiguousarray(maps, dtype=np.float32)))
        finally:
            cam.activations_and_grads.release()
    cams = torch.cat(parts)
    expected = (len(inputs), *classifier.input_size)
    if tuple(cams.shape) != expected:
        raise ValueError(f"{class_name} returned maps of shape {tuple(cams.shape)}, expected {expected}.")
    return GradCAMResult(
        cams=cams,
        method=class_name,
        layer=target.layer,
        module_name=target.module_name,
        layer_reason=target.reason,
        target_classes=classes,
        target_source=source,
        model=classifier.name,
        image=inputs.pixels[0].detach().cpu(),
    )


# ------------------------------------------------------------------------------------------------ the probe's spec
# As for attention maps: the merged dict keeps the CAMs of the first `max_maps` images (default 8), rounded to 4
# decimals, and the mean CAM over all images.
def _partial(classifier: Classifier, inputs: ProbeInputs, seed: int, params: dict) -> dict:
    max_maps = int(params["max_maps"])
    target = params.get("target_classes")
    if target is not None and (isinstance(target, bool) or not isinstance(target, int)):
        raise ValueError(
            f"gradcam target_classes must be one class index for every image (or None), got {target!r}."
        )
    result: GradCAMResult = gradcam(
        classifier, inputs.pixels, inputs.labels, seed=seed, **probe_kwargs(params, ("max_maps",))
    )
    return {
        "cams": result.cams[:max_maps].float().cpu(),
        "cam_sum": result.cams.double().sum(dim=0).cpu(),
        "target_classes": result.target_classes.cpu(),
        "method": result.method,
        "layer": result.layer,
        "module_name": result.module_name,
        "layer_reason": result.layer_reason,
        "target_source": result.target_source,
        "model": result.model,
        "max_maps": max_maps,
    }


def _merge(partials: list) -> dict:
    max_maps = same_setting(partials, "max_maps")
    sources = sorted({p["target_source"] for p in partials})
    return {
        "cams": rounded_maps(torch.cat([p["cams"] for p in partials])[:max_maps]),
        "mean_cam": rounded_maps(sum(p["cam_sum"] for p in partials) / total_images(partials)),
        "method": same_setting(partials, "method"),
        "layer": same_setting(partials, "layer"),
        "module_name": same_setting(partials, "module_name"),
        "layer_reason": same_setting(partials, "layer_reason"),
        "target_classes": torch.cat([p["target_classes"] for p in partials]),
        "target_source": sources[0] if len(sources) == 1 else "+".join(sources),
        "model": same_setting(partials, "model"),
    }


def _applicable(classifier: Classifier, params: dict) -> None:
    try:
        import pytorch_grad_cam  # noqa: F401
    except ImportError as err:
        raise ProbeNotApplicable(f"gradcam needs the grad-cam package ({err}).") from err
    try:
        cam_target(classifier, params.get("layer"))
    except (ValueError, TypeError) as err:
        raise ProbeNotApplicable(f"gradcam: no target layer in {classifier.name!r}: {err}") from err


def draw_gradcam(data: SeriesData, ax: Axes | None = None) -> Figure | None:
    """The first CAM of each model (over its input image when the dict has one; on `ax`: one model)."""
    return overlays(data, "cams", "Grad-CAM", ax=ax)


SPEC = register_probe(
    ProbeSpec(
        name="gradcam",
        value_checks={
            "method": calls(cam_method_name),
            "layer": optional(text),
            "target_classes": optional(non_negative_int),
            "eigen_smooth": boolean,
            "aug_smooth": boolean,
            "max_maps": non_negative_int,
        },
        probe=gradcam,
        result_type=GradCAMResult,
        selection="first",
        chunk_size=32,
        needs_labels=False,
        partial_fn=_partial,
        merge_fn=_merge,
        default_params={"max_maps": 8},
        extra_params=("max_maps",),
        applicable_fn=_applicable,
        headline=method_headline,
        figures={"gradcam": ProbeFigure(draw_gradcam, "Grad-CAM map of the first probe image.")},
    )
)


__all__ = [
    "CAM_METHODS",
    "SPEC",
    "GradCAMResult",
    "TokenReshape",
    "cam_method_name",
    "draw_gradcam",
    "gradcam",
]
