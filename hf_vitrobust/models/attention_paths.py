# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""An explicit, twice-differentiable attention path for Hessian-vector products.

Curvature probes (Park & Kim, ICLR 2022, Fig. 1 and Fig. 4: Hessian eigenvalue spectra) differentiate the loss
twice with respect to the weights. Fused attention kernels are fast but often have no second derivative:

- CPU, torch 2.14: `F.scaled_dot_product_attention` without a mask dispatches to
  `_scaled_dot_product_flash_attention_for_cpu`, whose backward has no derivative ("derivative for
  aten::_scaled_dot_product_flash_attention_for_cpu_backward is not implemented") and which has no forward-mode
  AD formula either, so neither double backward nor `torch.func.jvp(grad(...))` works. This is the path that
  transformers' "sdpa" ViT and timm's fused attention take. With a float `attn_mask` (AlterNet's relative
  position bias) the CPU dispatcher picks the composite math path, which is twice differentiable.
- CUDA: the flash and memory-efficient kernels have no double backward at all.

`differentiable_attention(module)` switches every attention layer it knows to the explicit
softmax(QK^T / sqrt(d) + B) V computation for the duration of a `with` block and restores the previous setting on
exit (also on error):

- transformers models whose config uses a fused implementation ("sdpa", "flash_attention_2", ...), AlterNet
  among them, go through `set_attn_implementation("eager")`;
- modules with a boolean `fused_attn` attribute (timm's `Attention` family) get `fused_attn = False`;
- any remaining `F.scaled_dot_product_attention` call (a custom module this function does not know) is restricted
  to the math backend with `torch.nn.attention.sdpa_kernel`, which is composite and twice differentiable.

The explicit path computes the same function, so values agree with the fused path up to float rounding.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from torch import nn
from torch.nn.attention import SDPBackend, sdpa_kernel

_EAGER = "eager"


def _switch_transformers(module: nn.Module, stack: contextlib.ExitStack) -> None:
    """Set every transformers sub-model with a fused attention implementation to "eager", restoring it on exit."""
    from transformers import PreTrainedModel

    for model in module.modules():
        if not isinstance(model, PreTrainedModel):
            continue
        config = getattr(model, "config", None)
        current = getattr(config, "_attn_implementation", None)
        if current in (None, _EAGER) or not hasattr(model, "set_attn_implementation"):
            continue
        model.set_attn_implementation(_EAGER)
        stack.callback(model.set_attn_implementation, current)


def _switch_fused_flags(module: nn.Module, stack: contextlib.ExitStack) -> None:
    """timm-style `fused_attn` flags (timm's attention modules) -> False meanwhile."""
    switched = [
        m for m in module.modules() if isinstance(getattr(m, "fused_attn", None), bool) and m.fused_attn
    ]
    for attention in switched:
        attention.fused_attn = False

    def restore() -> None:
        for attention in switched:
            attention.fused_attn = True

    stack.callback(restore)


@contextlib.contextmanager
def differentiable_attention(module: nn.Module) -> Iterator[None]:
    """A context in which every attention layer of `module` computes softmax(QK^T)V explicitly (see the module
    docstring), so that Hessian-vector products (double backward or forward-over-reverse) work on ViTs, timm
    models and AlterNet alike. Settings are restored on exit, in reverse order."""
    if not isinstance(module, nn.Module):
        raise TypeError(f"differentiable_attention needs an nn.Module, got {type(module).__name__}.")
    with contextlib.ExitStack() as stack:
        _switch_transformers(module, stack)
        _switch_fused_flags(module, stack)
        stack.enter_context(sdpa_kernel(SDPBackend.MATH))
        yield


__all__ = ["differentiable_attention"]
