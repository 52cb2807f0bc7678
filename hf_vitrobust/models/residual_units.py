# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The residual units of a network, and a context that switches some of them off (the lesion study).

A residual unit is one branch `f` of `x + f(x)`: in a ViT, every layer has two (the MSA unit and the MLP unit); in
a ResNet or AlterNet, every block has one (a conv unit or an MSA unit). Park & Kim ("How do vision transformers
work?", ICLR 2022, Sec. 4.2, Fig. 11-12) remove one unit at a time from a trained network, i.e. make its branch
output zero so that the block becomes the identity (plus its projecting shortcut, where it has one), and measure
how much the accuracy drops: removing an MSA unit near the end of a stage hurts more than removing a conv unit.

Every unit is lesioned by a forward hook on one module, the last operation of its branch before the residual sum,
whose output the hook replaces by zeros:

- AlterNet (`hf_vitrobust.models.alternet`): each `AlterNetPreActivationLayer` returns
  `drop_path(branch) + shortcut`; the hook zeroes its `drop_path` module (an `Identity` or `AlterNetDropPath`).
  `AlterNetAttentionLayer` -> kind "msa"; basic and bottleneck layers -> "conv".
- transformers ViT / DeiT (`ViTLayer`, `DeiTLayer`): the MSA unit zeroes the first tensor of the `attention`
  submodule's output (a tuple (output, weights)); the MLP unit zeroes the `mlp` submodule (transformers >= 5). In
  the transformers < 5 layout, where `ViTOutput` adds the residual inside its forward (`dense`, `dropout`,
  `+ input_tensor`), the MLP unit makes `output` return its `input_tensor` argument unchanged instead.
- timm `VisionTransformer` blocks (`Block`, `ResPostBlock`): `x + drop_path1(...attn...)` and
  `x + drop_path2(...mlp...)`; the hooks zero `drop_path1` ("msa") and `drop_path2` ("mlp").
- Park & Kim's ResNet (`hf_vitrobust.models.park_kim`): each `ParkKimResNetLayer` returns
  `relu(drop_path(branch) + shortcut)`; the hook zeroes its `drop_path` module. Kind "conv".
- timm ResNet (`BasicBlock`, `Bottleneck`): the branch ends with `bn2` / `bn3`, then an optional squeeze-excitation
  or attention module `se`, then an optional drop path; the hook zeroes `se` when there is one (so that any kind of
  attention module, multiplicative or not, contributes nothing), else the last batch norm. Kind "conv".

Hooks are removed when the context exits, also on an exception.

`find_residual_sums` lists the points where each branch has just been added to its shortcut (the feature maps
Park & Kim's `fourier_analysis.ipynb` and `featuremap_variance.ipynb` analyse: for a timm ViT they split every
block into `x + attn(norm1(x))` and `x + mlp(norm2(x))`), and `recording_residual_sums` captures them in one
forward pass. A ViT-style block has two sums, read as the input of the module that opens its MLP branch (the
second norm of pre-norm blocks: `norm2`, `layernorm_after`; `mlp` of timm's post-norm `ResPostBlock`) and as the
block's output; a ResNet, BiT or AlterNet block has one, its output. Besides the families above it knows
transformers Swin (`SwinLayer`), ResNet and BiT layers, timm Swin (`SwinTransformerBlock`) and timm ResNetV2 (BiT)
blocks; timm PiT is built of timm ViT blocks.
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from .alternet.modeling_alternet import AlterNetAttentionLayer, AlterNetPreActivationLayer
from .park_kim.modeling_park_kim_resnet import ParkKimResNetLayer

UNIT_KINDS = ("msa", "mlp", "conv")

SUPPORTED_ARCHITECTURES = (
    "AlterNet (AlterNetBasicLayer, AlterNetBottleNeckLayer, AlterNetAttentionLayer)",
    "transformers ViT / DeiT (ViTLayer, DeiTLayer)",
    "timm VisionTransformer (Block, ResPostBlock)",
    "timm ResNet (BasicBlock, Bottleneck)",
    "Park & Kim's ResNet (ParkKimResNetLayer)",
)

_TRANSFORMERS_VIT_LAYERS = frozenset({"ViTLayer", "DeiTLayer"})
# Pre-norm transformers blocks whose attention sum is the input of `layernorm_after`.
_TRANSFORMERS_PRENORM_LAYERS = frozenset({"ViTLayer", "DeiTLayer", "SwinLayer"})
# transformers CNN blocks that return their residual sum (BiT's non-pre-activation layer after a final ReLU).
_TRANSFORMERS_CNN_LAYERS = frozenset(
    {"ResNetBasicLayer", "ResNetBottleNeckLayer", "BitPreActivationBottleneckLayer", "BitBottleneckLayer"}
)
_STAGES = re.compile(r"(?:^|\.)stages\.(\d+)\.")  # AlterNet, timm stage lists: 0-based
_RESNET_LAYERS = re.compile(r"(?:^|\.)layer(\d+)\.")  # ResNet layer1..layer4: 1-based


@dataclass(frozen=True)
class ResidualUnit:
    """One residual branch that `lesioned` can switch off.

    name: readable, unique id: the branch's module path ("vit.layers.3.attention", "blocks.3.mlp") or, for
        one-branch blocks, the block's path ("layer1.0", "alternet.encoder.stages.1.layers.1").
    kind: "msa" (self-attention), "mlp" or "conv".
    module: path (in `named_modules()`) of the module the lesion hooks.
    block: path of the residual block that holds the unit.
    stage: 0-based stage of multi-stage networks (AlterNet, ResNet), None for single-stage ViTs.
    index: 0-based position of the block in network order (a ViT layer's MSA and MLP units share it).
    action: "zero" (the hooked module's output, or the first tensor of a tuple output, becomes zeros) or "skip"
        (the hooked module returns its residual input: transformers < 5 `ViTOutput`).
    """

    name: str
    kind: str
    module: str
    block: str
    stage: int | None
    index: int
    action: str = "zero"


def _join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


def _stage(path: str) -> int | None:
    match = _STAGES.search(path + ".")
    if match:
        return int(match.group(1))
    match = _RESNET_LAYERS.search(path + ".")
    return int(match.group(1)) - 1 if match else None


def _timm_classes() -> tuple[tuple[type, ...], tuple[type, ...]]:
    """(timm ViT block classes, timm ResNet block classes); empty when timm is not installed."""
    try:
        from timm.models.resnet import BasicBlock, Bottleneck
        from timm.models.vision_transformer import Block, ResPostBlock
    except ImportError:  # pragma: no cover - timm is a dependency of the package
        return (), ()
    return (Block, ResPostBlock), (BasicBlock, Bottleneck)


def _block_units(path: str, block: nn.Module, index: int) -> list[ResidualUnit] | None:
    """The units of `block` if it is a supported residual block, else None."""
    vit_blocks, resnet_blocks = _timm_classes()
    stage = _stage(path)
    if isinstance(block, AlterNetPreActivationLayer):
        kind = "msa" if isinstance(block, AlterNetAttentionLayer) else "conv"
        return [ResidualUnit(path, kind, _join(path, "drop_path"), path, stage, index)]
    if isinstance(block, ParkKimResNetLayer):
        return [ResidualUnit(path, "conv", _join(path, "drop_path"), path, stage, index)]
    if type(block).__name__ in _TRANSFORMERS_VIT_LAYERS and isinstance(
        getattr(block, "attention", None), nn.Module
    ):
        attention = ResidualUnit(_join(path, "attention"), "msa", _join(path, "attention"), path, None, index)
        if isinstance(getattr(block, "mlp", None), nn.Module):  # transformers >= 5
            mlp = ResidualUnit(_join(path, "mlp"), "mlp", _join(path, "mlp"), path, None, index)
        elif isinstance(
            getattr(block, "output", None), nn.Module
        ):  # transformers < 5: ViTOutput adds the residual
            mlp = ResidualUnit(_join(path, "output"), "mlp", _join(path, "output"), path, None, index, "skip")
        else:
            return None
        return [attention, mlp]
    if vit_blocks and isinstance(block, vit_blocks):
        return [
            ResidualUnit(_join(path, "attn"), "msa", _join(path, "drop_path1"), path, None, index),
            ResidualUnit(_join(path, "mlp"), "mlp", _join(path, "drop_path2"), path, None, index),
        ]
    if resnet_blocks and isinstance(block, resnet_blocks):
        if isinstance(getattr(block, "se", None), nn.Module):
            hooked = "se"
        else:
            hooked = "bn3" if isinstance(getattr(block, "bn3", None), nn.Module) else "bn2"
        return [ResidualUnit(path, "conv", _join(path, hooked), path, stage, index)]
    return None


def find_residual_units(module: nn.Module) -> list[ResidualUnit]:
    """Every residual unit of `module`, in network order (the order of `named_modules()`).

    Raises ValueError when the architecture has none that this module knows how to lesion (see
    `SUPPORTED_ARCHITECTURES`).
    """
    if not isinstance(module, nn.Module):
        raise TypeError(f"module must be a torch.nn.Module, got {type(module).__name__}.")
    units: list[ResidualUnit] = []
    matched: list[str] = []
    for path, child in module.named_modules():
        if any(path.startswith(prefix + ".") for prefix in matched):
            continue
        found = _block_units(path, child, len(matched))
        if found is not None:
            matched.append(path)
            units.extend(found)
    if not units:
        raise ValueError(
            f"{type(module).__name__} has no residual units that can be lesioned; supported architectures: "
            f"{'; '.join(SUPPORTED_ARCHITECTURES)}."
        )
    return units


def _zero_output(_module: nn.Module, _args: Any, output: Any) -> Any:
    if isinstance(output, torch.Tensor):
        return torch.zeros_like(output)
    if isinstance(output, tuple) and output and isinstance(output[0], torch.Tensor):
        return (torch.zeros_like(output[0]), *output[1:])
    raise TypeError(f"Cannot lesion a module whose output is a {type(output).__name__}.")


def _return_residual(_module: nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any], _output: Any) -> Any:
    """transformers < 5 `ViTOutput.forward(hidden_states, input_tensor)`: return input_tensor (branch = 0)."""
    return args[1] if len(args) > 1 else kwargs["input_tensor"]


def resolve_units(module: nn.Module, units: Sequence[str | ResidualUnit]) -> list[ResidualUnit]:
    """The `ResidualUnit`s of `module` named by `units` (names or units), de-duplicated, in network order."""
    if isinstance(units, str | ResidualUnit):
        raise TypeError("units must be a sequence of unit names, not a single one; wrap it in a list.")
    available = find_residual_units(module)
    by_name = {unit.name: unit for unit in available}
    wanted: set[str] = set()
    unknown: list[object] = []
    for unit in units:
        name = unit.name if isinstance(unit, ResidualUnit) else unit
        if (
            not isinstance(name, str)
            or name not in by_name
            or (isinstance(unit, ResidualUnit) and by_name[name] != unit)
        ):
            stale = isinstance(unit, ResidualUnit) and unit.name in by_name
            unknown.append(
                f"{unit.name} (a different unit of that name)" if stale else getattr(unit, "name", unit)
            )
        else:
            wanted.add(name)
    if unknown:
        raise ValueError(
            f"Unknown residual units {unknown} for {type(module).__name__}; available: {list(by_name)}."
        )
    return [unit for unit in available if unit.name in wanted]


@contextlib.contextmanager
def lesioned(module: nn.Module, units: Sequence[str | ResidualUnit]) -> Iterator[None]:
    """A context in which the named residual units contribute nothing: each branch's output is zero, so its block
    computes only its shortcut (Park & Kim 2022, Sec. 4.2 lesion study). An empty `units` lesions nothing.
    Unknown names raise ValueError before any hook is registered; every hook is removed on exit."""
    selected = resolve_units(module, units)
    modules = dict(module.named_modules())
    handles: list[torch.utils.hooks.RemovableHandle] = []
    try:
        for unit in selected:
            target = modules[unit.module]
            if unit.action == "skip":
                handles.append(target.register_forward_hook(_return_residual, with_kwargs=True))
            else:
                hook: Callable[..., Any] = _zero_output
                handles.append(target.register_forward_hook(hook))
        yield
    finally:
        for handle in handles:
            handle.remove()


# ---------------------------------------------------------------------------------------------- residual sums
SUM_KINDS = ("embedding", "msa", "mlp", "conv")

SUM_ARCHITECTURES = (
    "AlterNet (AlterNetBasicLayer, AlterNetBottleNeckLayer, AlterNetAttentionLayer)",
    "transformers ViT / DeiT / Swin (ViTLayer, DeiTLayer, SwinLayer)",
    "transformers ResNet / BiT (ResNetBasicLayer, ResNetBottleNeckLayer, BitPreActivationBottleneckLayer, "
    "BitBottleneckLayer)",
    "timm VisionTransformer / DeiT / PiT (Block, ResPostBlock), timm Swin (SwinTransformerBlock)",
    "timm ResNet (BasicBlock, Bottleneck), timm ResNetV2 / BiT (PreActBasic, PreActBottleneck, Bottleneck)",
    "Park & Kim's ResNet (ParkKimResNetLayer)",
)


@dataclass(frozen=True)
class ResidualSum:
    """A point of the forward pass where a residual branch has just been added to its shortcut (or, for kind
    "embedding", the input of the first residual block: the patch embedding or stem output).

    name: "<block>:<kind>" ("blocks.3:msa", "blocks.3:mlp", "layer1.0:conv"), "<first block>:input" for the
        embedding; the colon keeps these names apart from module names.
    kind: "embedding", "msa" (after the attention residual), "mlp" (after the MLP residual) or "conv".
    module: path (in `named_modules()`) of the module whose input ("input": its first argument) or output
        ("output": the first tensor of its output) holds the sum, see `read`.
    block, stage, index: as in `ResidualUnit` (the embedding has the first block's).
    channels_last: the captured tensor is (N, H, W, C) (timm Swin blocks); `recording_residual_sums` returns it
        as (N, C, H, W).
    num_prefix_tokens: for token sums whose class-token count the patch size cannot tell (timm PiT, whose
        overlapping patch embedding makes more patches than input size / patch size): how many leading tokens
        are not patches; None elsewhere.
    """

    name: str
    kind: str
    module: str
    read: str
    block: str
    stage: int | None
    index: int
    channels_last: bool = False
    num_prefix_tokens: int | None = None


def _pit_prefixes(module: nn.Module) -> dict[str, int]:
    """Path -> class-token count of every timm PiT (`PoolingVisionTransformer`) in `module`."""
    try:
        from timm.models.pit import PoolingVisionTransformer
    except ImportError:  # pragma: no cover - timm is a dependency of the package
        return {}
    return {
        path: int(child.cls_token.shape[1])
        for path, child in module.named_modules()
        if isinstance(child, PoolingVisionTransformer)
    }


def _timm_sum_classes() -> tuple[tuple[type, ...], tuple[type, ...], tuple[type, ...], tuple[type, ...]]:
    """(timm pre-norm ViT blocks, post-norm ViT blocks, Swin blocks, CNN blocks); empty when timm is missing."""
    try:
        from timm.models import resnetv2
        from timm.models.resnet import BasicBlock, Bottleneck
        from timm.models.swin_transformer import SwinTransformerBlock
        from timm.models.vision_transformer import Block, ResPostBlock
    except ImportError:  # pragma: no cover - timm is a dependency of the package
        return (), (), (), ()
    cnn = (BasicBlock, Bottleneck, resnetv2.PreActBasic, resnetv2.PreActBottleneck, resnetv2.Bottleneck)
    return (Block,), (ResPostBlock,), (SwinTransformerBlock,), cnn


def _block_sums(path: str, block: nn.Module, index: int) -> list[ResidualSum] | None:
    """The residual sums of `block` if it is a supported residual block, else None."""
    prenorm, postnorm, swin, cnn = _timm_sum_classes()
    stage = _stage(path)

    def one(kind: str, module: str, read: str, channels_last: bool = False) -> ResidualSum:
        return ResidualSum(f"{path}:{kind}", kind, module, read, path, stage, index, channels_last)

    if isinstance(block, AlterNetPreActivationLayer):
        return [one("msa" if isinstance(block, AlterNetAttentionLayer) else "conv", path, "output")]
    if isinstance(block, ParkKimResNetLayer):
        return [one("conv", path, "output")]
    name = type(block).__name__
    if name in _TRANSFORMERS_PRENORM_LAYERS and isinstance(
        getattr(block, "layernorm_after", None), nn.Module
    ):
        return [one("msa", _join(path, "layernorm_after"), "input"), one("mlp", path, "output")]
    if name in _TRANSFORMERS_CNN_LAYERS or (cnn and isinstance(block, cnn)):
        return [one("conv", path, "output")]
    if prenorm and isinstance(block, prenorm):
        return [one("msa", _join(path, "norm2"), "input"), one("mlp", path, "output")]
    if postnorm and isinstance(block, postnorm):
        return [one("msa", _join(path, "mlp"), "input"), one("mlp", path, "output")]
    if swin and isinstance(block, swin):
        # timm Swin blocks take and return (N, H, W, C) and flatten to tokens (N, H * W, C) before norm2.
        return [one("msa", _join(path, "norm2"), "input"), one("mlp", path, "output", channels_last=True)]
    return None


def find_residual_sums(module: nn.Module) -> list[ResidualSum]:
    """The embedding (input of the first residual block) and every residual sum of `module`, in network order:
    two per ViT-style block (after the attention and after the MLP residual), one per ResNet, BiT or AlterNet
    block. These are the feature maps of Park & Kim's `fourier_analysis.ipynb` / `featuremap_variance.ipynb`
    (their `blocks` list: the embedding, then `Residual(norm1, attn)` and `Residual(norm2, mlp)` per ViT block, or
    every ResNet block).

    Raises ValueError when `module` has no block this module knows (see `SUM_ARCHITECTURES`).
    """
    if not isinstance(module, nn.Module):
        raise TypeError(f"module must be a torch.nn.Module, got {type(module).__name__}.")
    sums: list[ResidualSum] = []
    matched: list[str] = []
    pits = _pit_prefixes(module)
    for path, child in module.named_modules():
        if any(path.startswith(prefix + ".") for prefix in matched):
            continue
        found = _block_sums(path, child, len(matched))
        if found is not None:
            prefix = next((n for root, n in pits.items() if not root or path.startswith(root + ".")), None)
            if prefix is not None:
                found = [dataclasses.replace(point, num_prefix_tokens=prefix) for point in found]
            if not matched:
                first = found[0]
                sums.append(
                    ResidualSum(
                        f"{path}:input",
                        "embedding",
                        path,
                        "input",
                        path,
                        first.stage,
                        0,
                        found[-1].channels_last,
                        first.num_prefix_tokens,
                    )
                )
            matched.append(path)
            sums.extend(found)
    if not sums:
        raise ValueError(
            f"{type(module).__name__} has no residual blocks whose sums can be recorded; supported architectures: "
            f"{'; '.join(SUM_ARCHITECTURES)}."
        )
    return sums


def _first_argument(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    if args:
        return args[0]
    return kwargs.get("hidden_states", next(iter(kwargs.values()), None))


@contextlib.contextmanager
def recording_residual_sums(
    module: nn.Module, sums: Sequence[ResidualSum] | None = None
) -> Iterator[dict[str, torch.Tensor]]:
    """A context that records the tensor at each residual sum (default: every one of `find_residual_sums`) in
    the forward passes run inside it: it yields a dict, filled by forward hooks, sum name -> tensor (the first
    call of each module; channels-last maps permuted to (N, C, H, W)). The forward pass is unchanged; every hook
    is removed on exit."""
    selected = find_residual_sums(module) if sums is None else list(sums)
    modules = dict(module.named_modules())
    unknown = [s.module for s in selected if s.module not in modules]
    if unknown:
        raise ValueError(f"{type(module).__name__} has no modules {unknown}.")
    captured: dict[str, torch.Tensor] = {}

    def keep(point: ResidualSum, value: Any) -> None:
        tensor = _first_tensor(value)
        if tensor is not None and point.name not in captured:
            captured[point.name] = tensor.permute(0, 3, 1, 2) if point.channels_last else tensor

    def input_hook(point: ResidualSum) -> Callable[..., None]:
        def hook(_module: nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
            keep(point, _first_argument(args, kwargs))

        return hook

    def output_hook(point: ResidualSum) -> Callable[..., None]:
        def hook(_module: nn.Module, _args: Any, output: Any) -> None:
            keep(point, output)

        return hook

    handles: list[torch.utils.hooks.RemovableHandle] = []
    try:
        for point in selected:
            target = modules[point.module]
            if point.read == "input":
                handles.append(target.register_forward_pre_hook(input_hook(point), with_kwargs=True))
            else:
                handles.append(target.register_forward_hook(output_hook(point)))
        yield captured
    finally:
        for handle in handles:
            handle.remove()


def _first_tensor(value: Any) -> torch.Tensor | None:
    if isinstance(value, torch.Tensor):
        return value
    if isinstance(value, tuple | list) and value and isinstance(value[0], torch.Tensor):
        return value[0]
    return None


__all__ = [
    "SUM_ARCHITECTURES",
    "SUM_KINDS",
    "SUPPORTED_ARCHITECTURES",
    "UNIT_KINDS",
    "ResidualSum",
    "ResidualUnit",
    "find_residual_sums",
    "find_residual_units",
    "lesioned",
    "recording_residual_sums",
    "resolve_units",
]
