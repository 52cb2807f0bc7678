# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Where a model attends: attention rollout for ViTs and MSA maps for AlterNet.

Paul & Chen (AAAI 2022, "Vision Transformers are Robust Learners", Sec. "Attention maps"; notebook
`analysis/attention_maps/Visualizing_ViT.ipynb` of sayakpaul/robustness-vit) show attention rollout maps of ViTs
next to Grad-CAM maps of BiT (`gradcam`): the ViT maps cover the object more widely. Attention rollout (Abnar &
Zuidema, ACL 2020, Sec. 3, Eq. 1) follows the information from the input patches to the classification token
through every layer:

* per layer, fuse the heads of the softmax attention A_l (N, heads, T, T): their mean (default), max or min;
* optionally set the smallest `discard_ratio` of the fused weights of each image to zero, except the first
  token's attention to itself (the noise filter of Gildenblat's `vit-explain`, which Paul & Chen's notebook
  uses with mean fusion and discard_ratio=0.9; the default 0 is Abnar & Zuidema's plain rollout);
* add the residual connection and renormalise the rows: Â_l = (A_l + I) / rowsum(A_l + I), which is
  0.5 A_l + 0.5 I for row-stochastic A_l, as in Abnar & Zuidema (`normalization="rows"`, the default);
  `normalization="paul-chen-notebook"` instead reproduces the notebook's (and vit-explain's) division without
  `keepdim`, which divides column j by the sum of row j (see `attention_rollout`);
* multiply through the layers, later layers on the left: R_L = Â_L Â_{L-1} ... Â_1.

The map of an image is the row of the token the head reads, over the patch tokens only (all prefix tokens
skipped: CLS, DeiT's distillation token, register tokens), put on the patch grid. For a CLS-token model that is
row 0 (also for distilled DeiT, whose head also reads the distillation token). For a model whose head pools the
patch tokens (a global-average-pool ViT, no CLS readout), it is the mean of the patch-query rows, i.e. the
attention the pooled representation gives to each patch. Which case applies is measured, not assumed: see
`hf_vitrobust.models.cam_targets.head_reads_class_token`. `method="attention"` gives the same readout of each
layer's fused raw attention instead (Abnar & Zuidema's "raw attention" baseline; `maps` is the last layer's).

AlterNet (Park & Kim, ICLR 2022) attends inside non-overlapping windows of a CNN feature map, so its attention has
no CLS token and no path to roll out. Its "MSA map" is defined here, per MSA block, as the mean attention each
position receives from the queries of its own window, averaged over heads and queries: a (N, H', W') map at that
stage's resolution, which sums to 1 over each window (uniform attention gives the constant 1 / window area).
`maps` is the deepest MSA block's map; `per_layer` holds every block's.

Every map is divided by its per-image maximum (so it lies in [0, 1]; an all-zero map stays zero), after bilinear
upsampling to the input size when `upsample=True`. Maps are computed in eval mode with the training flags
restored afterwards, and never depend on the batch size.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import torch
import torch.nn.functional as F

from ..models.cam_targets import TokenLayout, head_reads_class_token, token_layout
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
    prepare_inputs,
)
from .display import SeriesData, overlays
from .param_checks import boolean, calls, non_negative_int
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

HEAD_FUSIONS = ("mean", "max", "min")
METHODS = ("rollout", "attention", "msa")
# "rows": Â = (A + I) / rowsum(A + I). "paul-chen-notebook": Paul & Chen's notebook (vit-explain's vit_rollout.py),
# `a = (A + I) / 2; a = a / a.sum(dim=-1)`, whose (T,) row sums broadcast over the last axis: column j / rowsum j.
ROLLOUT_NORMALIZATIONS = ("rows", "paul-chen-notebook")


def _check_head_fusion(head_fusion: str) -> str:
    if head_fusion not in HEAD_FUSIONS:
        raise ValueError(f"head_fusion must be one of {HEAD_FUSIONS}, got {head_fusion!r}.")
    return head_fusion


def _check_discard_ratio(discard_ratio: float) -> float:
    if isinstance(discard_ratio, bool) or not isinstance(discard_ratio, int | float):
        raise ValueError(f"discard_ratio must be a float in [0, 1), got {discard_ratio!r}.")
    if not 0.0 <= float(discard_ratio) < 1.0:
        raise ValueError(f"discard_ratio must be in [0, 1), got {discard_ratio!r}.")
    return float(discard_ratio)


def _check_normalization(normalization: str) -> str:
    if not isinstance(normalization, str) or normalization not in ROLLOUT_NORMALIZATIONS:
        raise ValueError(f"normalization must be one of {ROLLOUT_NORMALIZATIONS}, got {normalization!r}.")
    return normalization


def fuse_heads(attention: torch.Tensor, head_fusion: str = "mean") -> torch.Tensor:
    """(N, heads, T, T) -> (N, T, T) by the mean, max or min over heads; (N, T, T) is returned unchanged."""
    _check_head_fusion(head_fusion)
    if attention.ndim == 3:
        return attention
    if attention.ndim != 4:
        raise ValueError(f"attention must be (N, heads, T, T) or (N, T, T), got {tuple(attention.shape)}.")
    if head_fusion == "mean":
        return attention.mean(dim=1)
    if head_fusion == "max":
        return attention.amax(dim=1)
    return attention.amin(dim=1)


def _discard(fused: torch.Tensor, discard_ratio: float) -> torch.Tensor:
    """Zero the `int(T * T * discard_ratio)` smallest weights of each image's (T, T) matrix (stable order on ties),
    keeping entry (0, 0), the first token's attention to itself, as vit-explain does."""
    n, tokens, _ = fused.shape
    count = int(tokens * tokens * discard_ratio)
    if count == 0:
        return fused
    flat = fused.reshape(n, -1)
    order = torch.sort(flat, dim=-1, stable=True).indices[:, :count]
    kept = flat.scatter(1, order, 0.0)
    kept[:, 0] = flat[:, 0]
    return kept.view(n, tokens, tokens)


def attention_rollout(
    attentions: Sequence[torch.Tensor],
    *,
    head_fusion: str = "mean",
    discard_ratio: float = 0.0,
    cumulative: bool = False,
    normalization: str = "rows",
) -> torch.Tensor | list[torch.Tensor]:
    """Attention rollout (Abnar & Zuidema 2020, Eq. 1) of a network's attention weights, first layer first.

    attentions: per layer (N, heads, T, T) softmax weights (or (N, T, T) already fused), rows summing to 1.
    Returns R_L (N, T, T) = Â_L ... Â_1 with Â_l = (fuse(A_l) + I) / rowsum; R[n, i, j] is how much of token j
    of the input reaches token i of the last layer. With `cumulative`, the list [R_1, ..., R_L]. Computed in
    float64 for float64 input, else float32.

    discard_ratio: per layer and image, the `int(T * T * discard_ratio)` smallest fused weights are set to zero,
    except entry (0, 0) (vit-explain's `flat.topk(int(flat.size(-1) * discard_ratio), -1, False)` over the
    flattened (T, T) matrix, `indices = indices[indices != 0]`, `flat[0, indices] = 0`; ties at the threshold,
    which topk leaves unspecified, are broken in flattened order here).

    normalization: "rows" (default) renormalises the rows as above. "paul-chen-notebook" reproduces the `rollout`
    function of Paul & Chen's `analysis/attention_maps/Visualizing_ViT.ipynb` (sayakpaul/robustness-vit, copied
    from jacobgil/vit-explain's `vit_rollout.py`): `a = (attention_heads_fused + 1.0*I)/2; a = a / a.sum(dim=-1)`.
    Without `keepdim` the row sums s (T,) broadcast over the last axis, so Â[i, j] = (A + I)[i, j] / s[j] with
    s[j] = rowsum_j(A + I) (the /2 cancels): column j is divided by the sum of row j, and the rows of Â no longer
    sum to 1. It equals "rows" whenever every row
    of A + I has the same sum (row-stochastic attention without discarding); it differs once discarding (or
    max/min fusion) leaves unequal row sums, as in the notebook's discard_ratio=0.9. The notebook runs one image
    at a time (its `flat[0, indices] = 0` touches image 0 only); here every image of the batch gets that
    per-image computation.
    """
    _check_head_fusion(head_fusion)
    discard_ratio = _check_discard_ratio(discard_ratio)
    _check_normalization(normalization)
    attentions = list(attentions)
    if not attentions:
        raise ValueError("attention_rollout needs at least one layer of attention.")
    shape = None
    rollouts: list[torch.Tensor] = []
    result = None
    for index, attention in enumerate(attentions):
        if not isinstance(attention, torch.Tensor) or attention.ndim not in (3, 4):
            raise ValueError(f"Layer {index}: attention must be a (N, heads, T, T) or (N, T, T) tensor.")
        if attention.shape[-1] != attention.shape[-2]:
            raise ValueError(
                f"Layer {index}: attention must be square over tokens, got {tuple(attention.shape)}."
            )
        work = torch.float64 if attention.dtype == torch.float64 else torch.float32
        fused = fuse_heads(attention.to(work), head_fusion)
        if shape is None:
            shape = fused.shape
        elif fused.shape != shape:
            raise ValueError(
                f"Layer {index}: attention of shape {tuple(fused.shape)} after head fusion, but earlier layers "
                f"give {tuple(shape)}; rollout needs every layer to attend over the same tokens."
            )
        fused = _discard(fused, discard_ratio)
        eye = torch.eye(fused.shape[-1], dtype=work, device=fused.device)
        augmented = fused + eye
        if normalization == "rows":
            augmented = augmented / augmented.sum(dim=-1, keepdim=True)
        else:  # "paul-chen-notebook": (T,) row sums broadcast as a row vector, column j / rowsum j
            augmented = augmented / augmented.sum(dim=-1).unsqueeze(-2)
        result = augmented if result is None else augmented @ result.to(work)
        rollouts.append(result)
    return rollouts if cumulative else rollouts[-1]


def token_readout(matrix: torch.Tensor, layout: TokenLayout, class_token: bool) -> torch.Tensor:
    """(N, T, T) rollout or attention -> (N, h, w) on the patch grid: the CLS row (row 0) over the patch columns
    when `class_token`, else the mean over the patch-query rows; prefix-token columns are always skipped."""
    if matrix.ndim != 3 or matrix.shape[-1] != layout.num_tokens or matrix.shape[-2] != layout.num_tokens:
        raise ValueError(
            f"Expected (N, {layout.num_tokens}, {layout.num_tokens}), got {tuple(matrix.shape)}."
        )
    prefix = layout.num_prefix_tokens
    if class_token:
        if prefix == 0:
            raise ValueError("class_token=True needs a prefix (CLS) token.")
        row = matrix[:, 0, prefix:]
    else:
        row = matrix[:, prefix:, prefix:].mean(dim=1)
    return row.reshape(matrix.shape[0], *layout.grid)


def window_grid(num_windows: int, input_size: tuple[int, int]) -> tuple[int, int]:
    """(rows, cols) of `num_windows` windows tiling a feature map with the input's aspect ratio."""
    height, width = input_size
    rows = round(math.sqrt(num_windows * height / width))
    if rows < 1 or num_windows % rows or rows * width != (num_windows // rows) * height:
        raise ValueError(f"{num_windows} windows do not tile a feature map of aspect {height}:{width}.")
    return rows, num_windows // rows


def msa_map(attention: torch.Tensor, input_size: tuple[int, int]) -> torch.Tensor:
    """AlterNet MSA map: (N, windows, heads, w*w, w*w) -> (N, rows*w, cols*w), the mean attention each position
    receives from the queries of its window, averaged over heads and queries.

    Windows are in row-major order over the feature map and tokens in row-major order inside a window (as
    `AlterNetWindowAttention` lays them out); the window grid takes the aspect ratio of `input_size`.
    """
    if not isinstance(attention, torch.Tensor) or attention.ndim != 5:
        raise ValueError(
            f"MSA attention must be (N, windows, heads, area, area), got {getattr(attention, 'shape', None)}."
        )
    n, windows, _, area, keys = attention.shape
    side = math.isqrt(area)
    if keys != area or side * side != area:
        raise ValueError(f"MSA attention must attend within square windows, got {tuple(attention.shape)}.")
    rows, cols = window_grid(windows, input_size)
    work = torch.float64 if attention.dtype == torch.float64 else torch.float32
    received = attention.to(work).mean(dim=(2, 3))  # (N, windows, keys)
    received = received.view(n, rows, cols, side, side).permute(0, 1, 3, 2, 4)
    return received.reshape(n, rows * side, cols * side)


def normalize_maps(maps: torch.Tensor) -> torch.Tensor:
    """Each map (N, ...) divided by its maximum, so it lies in [0, 1]; all-zero maps stay zero."""
    maps = maps.clamp_min(0)
    peak = maps.flatten(1).amax(dim=1).view(-1, *([1] * (maps.ndim - 1)))
    return torch.where(peak > 0, maps / peak.clamp_min(torch.finfo(maps.dtype).tiny), torch.zeros_like(maps))


def _finish(maps: torch.Tensor, size: tuple[int, int] | None) -> torch.Tensor:
    if size is not None and tuple(maps.shape[-2:]) != size:
        maps = F.interpolate(maps.unsqueeze(1), size=size, mode="bilinear", align_corners=False).squeeze(1)
    return normalize_maps(maps).float().cpu()


@contextlib.contextmanager
def _eval_mode(classifier: Classifier) -> Iterator[None]:
    """`eval_mode` without gradients: attention maps are read, never differentiated."""
    with eval_mode(classifier), torch.no_grad():
        yield


@dataclass
class AttentionMapsResult(ProbeResult):
    """Attention maps of a batch of images.

    maps: (N, h, w) in [0, 1], the final map (rollout through all layers / last layer's raw attention / deepest
    MSA block), at the input size when upsampled, on the CPU. per_layer: every layer's map (rollout up to that layer for
    "rollout"); at its own grid unless upsampled. method: "rollout", "attention" or "msa". readout: "cls" (the
    CLS row), "mean_query" (mean over patch queries, no CLS readout) or "window_mean" (AlterNet). image: the first
    input image (3, H, W), for the overlay.
    """

    maps: torch.Tensor
    per_layer: dict[str, torch.Tensor]
    method: str
    readout: str
    head_fusion: str
    discard_ratio: float
    upsampled: bool
    num_prefix_tokens: int | None
    model: str
    image: torch.Tensor = field(repr=False)
    normalization: str = "rows"

    @classmethod
    def probe_name(cls) -> str:
        return "attention_maps"

    def plot(self, ax: Axes | None = None) -> Axes:
        """The first image with its map as a semi-transparent heat map (`draw_attention`, the report's panel), as
        Paul & Chen's attention figure."""
        ax = new_axes(ax, figsize=(3.5, 3.5))
        maps = self.maps[:1].detach().float().cpu().numpy()
        draw_attention({"": {"maps": maps, "image": self.image.detach().float().cpu().numpy()}}, ax=ax)
        ax.set_title(f"{self.model}: attention {self.method}")
        return ax


def attention_maps(
    classifier: Classifier,
    images: torch.Tensor | Iterable[Any],
    labels: torch.Tensor | Sequence[int] | None = None,
    *,
    seed: int = 0,
    batch_size: int = DEFAULT_BATCH_SIZE,
    method: str | None = None,
    head_fusion: str = "mean",
    discard_ratio: float = 0.0,
    normalization: str = "rows",
    upsample: bool = True,
    limit: int | None = None,
) -> AttentionMapsResult:
    """Attention rollout maps (ViT, DeiT; transformers or timm) or MSA maps (AlterNet) of `images`.

    method: "rollout" (default for token attention), "attention" (each layer's raw attention, no rollout) or
        "msa" (default and only choice for AlterNet's windowed attention). head_fusion: "mean", "max" or "min"
        over heads. discard_ratio: fraction of each layer's smallest fused weights dropped before rollout.
        normalization: "rows" (default) or "paul-chen-notebook" (Paul & Chen's notebook's column-j-by-row-j-sum
        division, see `attention_rollout`); only the rollout uses it. Paul & Chen's maps: head_fusion="mean",
        discard_ratio=0.9, normalization="paul-chen-notebook".
        upsample: bilinear to the input size (else each map stays on its patch / stage grid).
    labels and seed are accepted for the common probe signature; the maps are deterministic and use neither.
    Raises ValueError for models without attention (CNNs): use `gradcam` there.
    """
    check_seed(seed)
    check_batch_size(batch_size)
    _check_head_fusion(head_fusion)
    discard_ratio = _check_discard_ratio(discard_ratio)
    _check_normalization(normalization)
    if method is not None and method not in METHODS:
        raise ValueError(f"method must be one of {METHODS} or None, got {method!r}.")
    if not isinstance(upsample, bool):
        raise ValueError(f"upsample must be a bool, got {upsample!r}.")
    inputs = prepare_inputs(classifier, images, labels, limit=limit, require_labels=False)
    if not classifier.has_attention:
        raise ValueError(
            f"attention_maps needs a model with self-attention (ViT, DeiT, AlterNet); {classifier.name!r} "
            f"({type(classifier.module).__name__}) reports no attention weights. Use gradcam for CNNs."
        )
    size = classifier.input_size if upsample else None
    final_parts: list[torch.Tensor] = []
    layer_parts: dict[str, list[torch.Tensor]] = {}
    readout = ""
    prefix: int | None = None
    with _eval_mode(classifier):
        for part in batch_slices(len(inputs), batch_size):
            attentions = classifier.attention_maps(inputs.pixels[part])
            if not attentions:
                raise ValueError(f"{classifier.name}: the model returned no attention weights.")
            names = list(attentions)
            tensors = [attentions[name] for name in names]
            if all(t.ndim == 5 for t in tensors):
                chosen = "msa" if method is None else method
                if chosen != "msa":
                    raise ValueError(
                        f"{classifier.name} has windowed (AlterNet-style) attention with no CLS token to roll "
                        "out to; use method='msa' (or None)."
                    )
                per_layer = [msa_map(t, classifier.input_size) for t in tensors]
                final, readout = per_layer[-1], "window_mean"
            elif all(t.ndim == 4 for t in tensors):
                chosen = "rollout" if method is None else method
                if chosen == "msa":
                    raise ValueError(
                        f"{classifier.name} has token attention; use method='rollout' or 'attention'."
                    )
                if prefix is None:
                    layout = token_layout(classifier, int(tensors[0].shape[-1]))
                    prefix = layout.num_prefix_tokens
                    class_token = bool(head_reads_class_token(classifier)) and prefix > 0
                    readout = "cls" if class_token else "mean_query"
                if chosen == "rollout":
                    matrices = attention_rollout(
                        tensors,
                        head_fusion=head_fusion,
                        discard_ratio=discard_ratio,
                        cumulative=True,
                        normalization=normalization,
                    )
                else:
                    matrices = [_discard(fuse_heads(t.float(), head_fusion), discard_ratio) for t in tensors]
                per_layer = [token_readout(m, layout, class_token) for m in matrices]
                final = per_layer[-1]
            else:
                shapes = {name: tuple(t.shape) for name, t in attentions.items()}
                raise ValueError(f"{classifier.name}: unsupported attention layout {shapes}.")
            method = chosen
            final_parts.append(_finish(final, size))
            for name, layer_map in zip(names, per_layer, strict=True):
                layer_parts.setdefault(name, []).append(_finish(layer_map, size))
    return AttentionMapsResult(
        maps=torch.cat(final_parts),
        per_layer={name: torch.cat(parts) for name, parts in layer_parts.items()},
        method=str(method),
        readout=readout,
        head_fusion=head_fusion,
        discard_ratio=discard_ratio,
        upsampled=upsample,
        num_prefix_tokens=prefix,
        model=classifier.name,
        image=inputs.pixels[0].detach().cpu(),
        normalization=normalization,
    )


# ------------------------------------------------------------------------------------------------ the probe's spec
# Per-image maps (N, h, w) are too large to keep for every image: the merged dict keeps the maps of the first
# `max_maps` images (default 8) and the per-layer maps of the first `max_layer_maps` (default 1), rounded to 4
# decimals, and the mean map over all images. The input image of the overlay plot is not kept (the runner knows
# the images by position).
def _partial(classifier: Classifier, inputs: ProbeInputs, seed: int, params: dict) -> dict:
    max_maps, max_layer_maps = int(params["max_maps"]), int(params["max_layer_maps"])
    result: AttentionMapsResult = attention_maps(
        classifier, inputs.pixels, None, seed=seed, **probe_kwargs(params, ("max_maps", "max_layer_maps"))
    )
    return {
        "maps": result.maps[:max_maps].float().cpu(),
        "map_sum": result.maps.double().sum(dim=0).cpu(),
        "per_layer": {name: maps[:max_layer_maps].float().cpu() for name, maps in result.per_layer.items()},
        "method": result.method,
        "readout": result.readout,
        "head_fusion": result.head_fusion,
        "discard_ratio": result.discard_ratio,
        "normalization": result.normalization,
        "upsampled": result.upsampled,
        "num_prefix_tokens": result.num_prefix_tokens,
        "model": result.model,
        "max_maps": max_maps,
        "max_layer_maps": max_layer_maps,
    }


def _merge(partials: list) -> dict:
    max_maps, max_layer_maps = same_setting(partials, "max_maps"), same_setting(partials, "max_layer_maps")
    layers = list(partials[0]["per_layer"])
    return {
        "maps": rounded_maps(torch.cat([p["maps"] for p in partials])[:max_maps]),
        "per_layer": {
            name: rounded_maps(torch.cat([p["per_layer"][name] for p in partials])[:max_layer_maps])
            for name in layers
        },
        "mean_map": rounded_maps(sum(p["map_sum"] for p in partials) / total_images(partials)),
        "method": same_setting(partials, "method"),
        "readout": same_setting(partials, "readout"),
        "head_fusion": same_setting(partials, "head_fusion"),
        "discard_ratio": same_setting(partials, "discard_ratio"),
        "normalization": same_setting(partials, "normalization"),
        "upsampled": same_setting(partials, "upsampled"),
        "num_prefix_tokens": same_setting(partials, "num_prefix_tokens"),
        "model": same_setting(partials, "model"),
    }


def _applicable(classifier: Classifier, params: dict) -> None:
    if not classifier.has_attention:
        raise ProbeNotApplicable(
            f"attention maps need a model with self-attention (ViT, DeiT, AlterNet); {classifier.name!r} has none "
            "(use gradcam)."
        )


def draw_attention(data: SeriesData, ax: Axes | None = None) -> Figure | None:
    """The first attention map of each model (over its input image when the dict has one; on `ax`: one model)."""
    return overlays(data, "maps", "Attention maps", ax=ax)


SPEC = register_probe(
    ProbeSpec(
        name="attention",
        value_checks={
            "discard_ratio": calls(_check_discard_ratio),
            "upsample": boolean,
            "max_maps": non_negative_int,
            "max_layer_maps": non_negative_int,
        },
        probe=attention_maps,
        result_type=AttentionMapsResult,
        selection="first",
        chunk_size=32,
        needs_labels=False,
        partial_fn=_partial,
        merge_fn=_merge,
        uses_labels=False,
        default_params={"max_maps": 8, "max_layer_maps": 1},
        extra_params=("max_maps", "max_layer_maps"),
        applicable_fn=_applicable,
        choices={
            "normalization": ROLLOUT_NORMALIZATIONS,
            "method": (None, *METHODS),
            "head_fusion": HEAD_FUSIONS,
        },
        headline=method_headline,
        figures={"attention": ProbeFigure(draw_attention, "Attention map of the first probe image.")},
    )
)


__all__ = [
    "ROLLOUT_NORMALIZATIONS",
    "SPEC",
    "AttentionMapsResult",
    "attention_maps",
    "attention_rollout",
    "draw_attention",
    "fuse_heads",
    "msa_map",
    "normalize_maps",
    "token_readout",
]
