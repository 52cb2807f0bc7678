# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Where to look inside a `Classifier` for class activation maps and attention maps, without a probe digging into
the model: which module produces a feature layer, how its tokens sit on the patch grid, and which tokens the
classification head reads.

Grad-CAM (Selvaraju et al., ICCV 2017, Eq. 1-2) needs a module whose output is a spatial feature map and whose
gradient carries class information. The adapter names its feature layers (`Classifier.layer_names()`):
timm and plain modules by module name, transformers models as "hidden_states.i", which is no module name.
`resolve_module_name` finds the module that returns that very tensor. `layer_tap` turns any module, including one
that returns a tuple (a transformers layer, an AlterNet stage), into a module whose output is exactly that
feature tensor, so hook-based tools (the `grad-cam` package) can hook it.

Two model-dependent choices for the default Grad-CAM layer (`cam_target(classifier)`):

* The deepest adapter feature layer with more than one spatial position. A 1x1 map (a ResNet's last stage on
  32x32 images) gives a constant CAM.
* When the head reads only the prefix tokens (a ViT or DeiT classifying from its CLS token), the gradient of
  the logits with respect to the patch tokens of the last block's output is exactly zero: the final norm is
  per token and the head never looks at the patches. Grad-CAM there is zero everywhere. Following the
  `pytorch-grad-cam` ViT recipe (target `blocks[-1].norm1`), the target becomes the first normalisation
  applied inside the last block: the pre-attention LayerNorm, whose patch tokens reach the CLS token through
  the last attention. Without such a norm, the previous feature layer is used.

Both choices come from an actual forward and backward pass on one fixed image, so they hold for any model
with these layouts, not only for the tested families.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from .classifier import Classifier, _first_tensor


@dataclass(frozen=True)
class TokenLayout:
    """How a token sequence (N, tokens, dim) maps onto the image: `num_prefix_tokens` leading tokens (CLS, DeiT's
    distillation token, register tokens) followed by `grid[0] * grid[1]` patch tokens in row-major order."""

    num_prefix_tokens: int
    grid: tuple[int, int]

    @property
    def num_tokens(self) -> int:
        return self.num_prefix_tokens + self.grid[0] * self.grid[1]

    def to_grid(self, tokens: torch.Tensor) -> torch.Tensor:
        """(N, tokens, dim) -> (N, dim, h, w): drop the prefix tokens, put the patch tokens on the grid."""
        if tokens.ndim != 3 or tokens.shape[1] != self.num_tokens:
            raise ValueError(
                f"Expected tokens of shape (N, {self.num_tokens}, dim) ({self.num_prefix_tokens} prefix + "
                f"{self.grid[0]}x{self.grid[1]} patches), got {tuple(tokens.shape)}."
            )
        patches = tokens[:, self.num_prefix_tokens :]
        return patches.transpose(1, 2).reshape(tokens.shape[0], tokens.shape[2], *self.grid)


@dataclass(frozen=True)
class CAMTarget:
    """The module Grad-CAM hooks and how to read its output.

    layer: what was asked for or chosen (an adapter layer name such as "hidden_states.2" / "layer4", or a module
        name). module_name: its name in `classifier.module.named_modules()`. token_layout: None when the output is
        a feature map (N, C, h, w), else how its tokens sit on the patch grid. reason: why this module.
    """

    layer: str
    module_name: str
    token_layout: TokenLayout | None
    reason: str


def _modules(classifier: Classifier) -> dict[str, nn.Module]:
    return {name: module for name, module in classifier.module.named_modules() if name}


def _patch_size(module: nn.Module) -> tuple[int, int] | None:
    """The patch size of a ViT-like model: timm's `patch_embed.patch_size`, transformers' `config.patch_size`."""
    size = getattr(getattr(module, "patch_embed", None), "patch_size", None)
    if size is None:
        size = getattr(getattr(module, "config", None), "patch_size", None)
    if isinstance(size, int) and not isinstance(size, bool):
        return (size, size)
    if isinstance(size, Sequence) and len(size) == 2 and all(isinstance(v, int) for v in size):
        return (int(size[0]), int(size[1]))
    return None


def aspect_ratio_grid(patches: int, height: int, width: int) -> tuple[int, int] | None:
    """The (rows, cols) grid of `patches` tokens with the aspect ratio of a height x width image, or None when
    none has exactly that ratio."""
    rows = round(math.sqrt(patches * height / width))
    if rows > 0 and patches % rows == 0 and rows * width == (patches // rows) * height:
        return rows, patches // rows
    return None


def token_layout(classifier: Classifier, num_tokens: int) -> TokenLayout:
    """The prefix-token count and patch grid of a token sequence of length `num_tokens` of this classifier.

    With a known patch size (timm `patch_embed.patch_size`, transformers `config.patch_size`) the grid is the input
    size divided by it and the prefix is what remains (1 for ViT, 2 for distilled DeiT, 1 + registers). Otherwise
    the grid is the smallest-prefix grid with the input's aspect ratio (unambiguous while the prefix holds fewer
    than about 2 * sqrt(patches) tokens).
    """
    height, width = classifier.input_size
    patch = _patch_size(classifier.module)
    if patch is not None and height % patch[0] == 0 and width % patch[1] == 0:
        grid = (height // patch[0], width // patch[1])
        prefix = num_tokens - grid[0] * grid[1]
        declared = getattr(classifier.module, "num_prefix_tokens", None)
        if prefix >= 0 and (not isinstance(declared, int) or declared == prefix):
            return TokenLayout(prefix, grid)
    for prefix in range(num_tokens):
        grid = aspect_ratio_grid(num_tokens - prefix, height, width)
        if grid is not None:
            return TokenLayout(prefix, grid)
    raise ValueError(
        f"{classifier.name}: cannot place {num_tokens} tokens on a patch grid of a {height}x{width} image."
    )


@contextlib.contextmanager
def layer_tap(classifier: Classifier, module_name: str) -> Iterator[nn.Module]:
    """A module whose forward hooks see exactly the feature tensor that `module_name` produces.

    Inside the context, every time the named module runs, its output tensor (the first tensor of a tuple or
    ModelOutput) is passed through the yielded `nn.Identity`, so hooks registered on the tap see that tensor,
    and gradient hooks on it see the gradient that flows back into the network. The tensor is not replaced: the
    forward pass is unchanged. The hook is removed on exit.
    """
    modules = _modules(classifier)
    if module_name not in modules:
        raise ValueError(f"{classifier.name}: no module named {module_name!r} in classifier.module.")
    tap = nn.Identity()

    def hook(_module: nn.Module, _args: Any, output: Any) -> None:
        tensor = _first_tensor(output)
        if tensor is not None:
            tap(tensor)

    handle = modules[module_name].register_forward_hook(hook)
    try:
        yield tap
    finally:
        handle.remove()


@contextlib.contextmanager
def _analysis_mode(classifier: Classifier) -> Iterator[None]:
    """Eval mode with gradients but frozen parameters (nothing written to `.grad`); every flag restored on exit."""
    modes = [(module, module.training) for module in classifier.modules()]
    flags = [(param, param.requires_grad) for param in classifier.parameters()]
    classifier.eval()
    try:
        for param, _ in flags:
            param.requires_grad_(False)
        with torch.enable_grad():
            yield
    finally:
        for param, flag in flags:
            param.requires_grad_(flag)
        for module, training in modes:
            module.training = training


def _probe_pixels(classifier: Classifier) -> torch.Tensor:
    """One fixed, non-constant image (smooth ramps per channel) for structure probing."""
    height, width = classifier.input_size
    rows = torch.linspace(0.1, 0.9, height).view(height, 1).expand(height, width)
    cols = torch.linspace(0.9, 0.2, width).view(1, width).expand(height, width)
    image = torch.stack([rows, cols, (rows + cols) / 2]).unsqueeze(0)
    return image.to(device=classifier.device, dtype=torch.float32)


def _capture(
    classifier: Classifier, module_names: Sequence[str], extra_flags: Mapping[str, bool] | None = None
) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor], list[str], Any]:
    """One forward pass on the probe image: every named module's first output tensor, d(sum of logits)/d(tensor),
    the order in which the modules ran, and the raw model output."""
    modules = _modules(classifier)
    outputs: dict[str, torch.Tensor] = {}
    order: list[str] = []

    def make_hook(name: str) -> Callable[..., None]:
        def hook(_module: nn.Module, _args: Any, output: Any) -> None:
            tensor = _first_tensor(output)
            if tensor is not None and name not in outputs:
                outputs[name] = tensor
                order.append(name)

        return hook

    handles = [modules[name].register_forward_hook(make_hook(name)) for name in dict.fromkeys(module_names)]
    with _analysis_mode(classifier):
        pixels = _probe_pixels(classifier).requires_grad_(True)
        try:
            raw = classifier._call(classifier._normalize(pixels), **(extra_flags or {}))
        finally:
            for handle in handles:
                handle.remove()
        logits = classifier._logits(raw)
        tensors = [outputs[name] for name in order if outputs[name].requires_grad]
        grads = torch.autograd.grad(logits.float().sum(), tensors, allow_unused=True) if tensors else ()
    gradients = {
        name: torch.zeros_like(tensor) if grad is None else grad
        for (name, tensor), grad in zip(
            ((n, outputs[n]) for n in order if outputs[n].requires_grad), grads, strict=True
        )
    }
    return outputs, gradients, order, raw


def resolve_module_names(classifier: Classifier, layers: Sequence[str]) -> list[str]:
    """The `classifier.module.named_modules()` names whose outputs are the feature tensors `layers`.

    A module name is returned as is. An adapter name that is not a module ("hidden_states.i" of a transformers
    model) is matched by identity: the outermost module whose output (a tensor or a tuple, not a whole
    ModelOutput) is that very hidden-state tensor. One forward pass on a probe image resolves them all.
    """
    modules = _modules(classifier)
    pending = [layer for layer in dict.fromkeys(layers) if layer not in modules]
    resolved = {layer: layer for layer in layers if layer in modules}
    if pending:
        names = classifier.layer_names()
        unknown = [layer for layer in pending if layer not in names]
        if unknown:
            raise ValueError(
                f"{classifier.name}: unknown layer {unknown[0]!r}; use one of {names} or a name from "
                "classifier.module.named_modules()."
            )
        if classifier.kind != "transformers":
            raise ValueError(f"{classifier.name}: layer {pending[0]!r} is not a module and cannot be hooked.")
        raw_outputs: dict[str, Any] = {}

        def make_hook(name: str) -> Callable[..., None]:
            def hook(_module: nn.Module, _args: Any, output: Any) -> None:
                raw_outputs.setdefault(name, output)

            return hook

        handles = [module.register_forward_hook(make_hook(name)) for name, module in modules.items()]
        try:
            with classifier._probing():
                out = classifier._call(
                    classifier._normalize(_probe_pixels(classifier)), output_hidden_states=True
                )
        finally:
            for handle in handles:
                handle.remove()
        hidden_states = getattr(out, "hidden_states", None) or ()
        for layer in pending:
            hidden = hidden_states[names.index(layer)]
            # named_modules order lists parents before children, so the first match is the outermost module.
            for name in modules:
                output = raw_outputs.get(name)
                if output is not None and not isinstance(output, Mapping) and _first_tensor(output) is hidden:
                    resolved[layer] = name
                    break
            else:
                raise ValueError(
                    f"{classifier.name}: no module returns the tensor {layer!r}; pass a module name from "
                    "classifier.module.named_modules() as the layer."
                )
    return [resolved[layer] for layer in layers]


def resolve_module_name(classifier: Classifier, layer: str) -> str:
    """The module name whose output is the feature tensor `layer` (see `resolve_module_names`)."""
    return resolve_module_names(classifier, [layer])[0]


def _layout_of(classifier: Classifier, tensor: torch.Tensor, name: str) -> TokenLayout | None:
    if tensor.ndim == 4:
        return None
    if tensor.ndim == 3:
        return token_layout(classifier, int(tensor.shape[1]))
    raise ValueError(
        f"{classifier.name}: layer {name!r} gives a tensor of shape {tuple(tensor.shape)}; a CAM needs a feature "
        "map (N, C, h, w) or tokens (N, tokens, dim)."
    )


def _positions(tensor: torch.Tensor, layout: TokenLayout | None) -> int:
    return tensor.shape[-2] * tensor.shape[-1] if layout is None else layout.grid[0] * layout.grid[1]


def _is_norm(module: nn.Module) -> bool:
    return (
        isinstance(module, nn.LayerNorm | nn.GroupNorm | nn.RMSNorm)
        or "norm" in type(module).__name__.lower()
    )


def cam_target(classifier: Classifier, layer: str | None = None) -> CAMTarget:
    """The module a Grad-CAM of `classifier` hooks: `layer` when given (an adapter layer name or a module name),
    else the default described in the module docstring."""
    if layer is not None:
        if not isinstance(layer, str) or not layer:
            raise ValueError(f"layer must be a non-empty layer or module name, got {layer!r}.")
        module_name = resolve_module_name(classifier, layer)
        outputs, _, _, _ = _capture(classifier, [module_name])
        if module_name not in outputs:
            raise ValueError(f"{classifier.name}: module {module_name!r} gave no tensor in the forward pass.")
        layout = _layout_of(classifier, outputs[module_name], layer)
        return CAMTarget(layer, module_name, layout, "requested")
    names = classifier.layer_names()
    if not names:
        raise ValueError(f"{classifier.name}: the classifier reports no feature layers.")
    module_names = resolve_module_names(classifier, names)
    outputs, gradients, _, _ = _capture(classifier, module_names)
    chosen = None
    for index in range(len(names) - 1, -1, -1):
        tensor = outputs.get(module_names[index])
        if tensor is None or tensor.ndim not in (3, 4):
            continue
        layout = _layout_of(classifier, tensor, names[index])
        if _positions(tensor, layout) > 1 or chosen is None:
            chosen = index
            if _positions(tensor, layout) > 1:
                break
    if chosen is None:
        raise ValueError(f"{classifier.name}: none of the feature layers {names} is a spatial map or tokens.")
    name, module_name = names[chosen], module_names[chosen]
    tensor = outputs[module_name]
    layout = _layout_of(classifier, tensor, name)
    reason = "deepest feature layer" if chosen == len(names) - 1 else "deepest feature layer with >1 position"
    grad = gradients.get(module_name)
    if layout is None or grad is None or bool(grad[:, layout.num_prefix_tokens :].ne(0).any()):
        return CAMTarget(name, module_name, layout, reason)
    # The head reads only the prefix tokens: target the first normalisation inside this block.
    block = _modules(classifier)[module_name]
    norms = [f"{module_name}.{sub}" for sub, module in block.named_modules() if sub and _is_norm(module)]
    if norms:
        norm_outputs, _, order, _ = _capture(classifier, norms)
        for norm in order:
            if norm_outputs[norm].shape == tensor.shape:
                return CAMTarget(
                    norm,
                    norm,
                    layout,
                    f"the head reads only the prefix tokens of {name!r}: first normalisation of that block",
                )
    if chosen > 0:
        previous = names[chosen - 1]
        previous_module = module_names[chosen - 1]
        previous_layout = _layout_of(classifier, outputs[previous_module], previous)
        return CAMTarget(
            previous,
            previous_module,
            previous_layout,
            f"the head reads only the prefix tokens of {name!r}: the layer before it",
        )
    return CAMTarget(name, module_name, layout, reason)


def head_reads_class_token(classifier: Classifier) -> bool | None:
    """Whether the classification head reads only the prefix (CLS) tokens of the deepest token layer: True for a
    CLS-token ViT/DeiT, False for a global-average-pool ViT, None when the deepest feature layer is not tokens."""
    names = classifier.layer_names()
    if not names:
        return None
    module_name = resolve_module_name(classifier, names[-1])
    outputs, gradients, _, _ = _capture(classifier, [module_name])
    tensor = outputs.get(module_name)
    if tensor is None or tensor.ndim != 3:
        return None
    layout = token_layout(classifier, int(tensor.shape[1]))
    grad = gradients.get(module_name)
    if layout.num_prefix_tokens == 0:
        return False
    return grad is None or not bool(grad[:, layout.num_prefix_tokens :].ne(0).any())


__all__ = [
    "CAMTarget",
    "TokenLayout",
    "cam_target",
    "head_reads_class_token",
    "layer_tap",
    "resolve_module_name",
    "resolve_module_names",
    "token_layout",
]
