# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Representation similarity between layers: linear centered kernel alignment (CKA).

Linear CKA (Kornblith et al., "Similarity of neural network representations revisited", ICML 2019) compares two
representations X (n, p) and Y (n, q) of the same n inputs through their Gram matrices K = X X^T, L = Y Y^T:
CKA = HSIC(K, L) / sqrt(HSIC(K, K) HSIC(L, L)). It is 1 for a layer and itself, and invariant to orthogonal
transforms and isotropic scaling of either representation.

For many images, Nguyen, Raghu & Kornblith ("Do wide and deep networks learn the same things?", ICLR 2021, Sec. 3.1)
use minibatch CKA: the unbiased HSIC estimator of Song et al. (2012),

    HSIC_1(K, L) = 1 / (n (n - 3)) [ tr(K~ L~) + (1^T K~ 1)(1^T L~ 1) / ((n - 1)(n - 2)) - 2 / (n - 2) 1^T K~ L~ 1 ],

with K~, L~ the Gram matrices with zeroed diagonals, summed over k minibatches:
CKA = sum_i HSIC_1(K_i, L_i) / sqrt(sum_i HSIC_1(K_i, K_i) sum_i HSIC_1(L_i, L_i)). Park & Kim ("How do vision
transformers work?", ICLR 2022) show such layer-by-layer heat maps to expose the block structure of multi-stage
models. Features are flattened per sample; spatial maps and ViT tokens are first brought to (N, C, h, w) without
the class token, exactly as for `feature_fourier`.

Numerics: CKA code that forms float32 Gram matrices of large activations, or divides by the zero self-HSIC of a
constant layer, returns NaN. Here features are centred per minibatch and the Gram matrices are computed in float64
(HSIC_1 is invariant to centring the features, and a constant layer then has an exactly zero Gram matrix); a layer
whose accumulated self-HSIC is not positive (constant or zero features) has CKA 0 with every layer, itself
included, instead of NaN.

The minibatch estimate depends on how the images are split (each HSIC_1 term only pairs images of one minibatch):
the split is `minibatch_size` consecutive images (fixed default, independent of the forward `batch_size`), with a
last remainder of fewer than 4 images merged into the previous minibatch. With at most `minibatch_size` images the
estimate is the full-batch unbiased CKA.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from ..models.classifier import Classifier
from .base import (
    DEFAULT_BATCH_SIZE,
    ProbeInputs,
    ProbeResult,
    batch_slices,
    check_batch_size,
    check_seed,
    new_axes,
    prepare_inputs,
)
from .display import SeriesData, as_float_array, fmt_number, map_panels
from .feature_maps import (
    RESIDUAL_SUMS,
    _check_layers,
    _feature_batches,
    check_task_layers,
    features_applicable,
)
from .param_checks import calls, int_at_least
from .spec import (
    ProbeFigure,
    ProbeFinding,
    ProbeNotApplicable,
    ProbeSpec,
    register_probe,
    same_setting,
    total_images,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

DEFAULT_MINIBATCH_SIZE = 256
MIN_MINIBATCH_SIZE = 4  # HSIC_1 divides by n (n - 3)


def centered_gram(features: torch.Tensor) -> torch.Tensor:
    """Linear-kernel Gram matrix (n, n) in float64 of features (n, ...) flattened per sample, after centring each
    feature over the n samples."""
    flat = features.reshape(features.shape[0], -1).to(torch.float64)
    flat = flat - flat.mean(dim=0, keepdim=True)
    return flat @ flat.T


def _hsic_terms(grams: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Flattened zero-diagonal Grams (L, n^2), their sums (L,) and row sums (L, n), for `unbiased_hsic`."""
    n = grams.shape[-1]
    eye = torch.eye(n, dtype=torch.bool, device=grams.device)
    tilde = grams.masked_fill(eye, 0.0)
    return tilde.flatten(1), tilde.sum(dim=(1, 2)), tilde.sum(dim=2)


def unbiased_hsic(grams_x: torch.Tensor, grams_y: torch.Tensor) -> torch.Tensor:
    """HSIC_1 (Song et al. 2012; Nguyen et al. 2021 Sec. 3.1) between every pair of Gram matrices: (Lx, n, n) and
    (Ly, n, n) -> (Lx, Ly), float64. Needs n >= 4."""
    n = grams_x.shape[-1]
    if n < MIN_MINIBATCH_SIZE:
        raise ValueError(f"The unbiased HSIC estimator needs at least {MIN_MINIBATCH_SIZE} samples, got {n}.")
    flat_x, sum_x, rows_x = _hsic_terms(grams_x.to(torch.float64))
    flat_y, sum_y, rows_y = _hsic_terms(grams_y.to(torch.float64))
    trace = flat_x @ flat_y.T  # tr(K~ L~) = sum(K~ * L~), both symmetric
    sums = sum_x[:, None] * sum_y[None, :] / ((n - 1) * (n - 2))
    cross = rows_x @ rows_y.T * (2.0 / (n - 2))  # 1^T K~ L~ 1 = (K~ 1) . (L~ 1)
    return (trace + sums - cross) / (n * (n - 3))


def cka_from_hsic(cross: torch.Tensor, self_x: torch.Tensor, self_y: torch.Tensor) -> torch.Tensor:
    """CKA (Lx, Ly) from accumulated HSIC sums: cross (Lx, Ly) / sqrt(self_x (Lx,) self_y (Ly,)), and 0 where a
    self-HSIC is not positive (constant features). Sums of `MinibatchCKA.hsic_sums` over disjoint minibatches
    give the minibatch CKA of all of them."""
    denominator = torch.sqrt(self_x.clamp_min(0.0)[:, None] * self_y.clamp_min(0.0)[None, :])
    valid = denominator > 0
    return torch.where(valid, cross / torch.where(valid, denominator, 1.0), 0.0)


def linear_cka(x: torch.Tensor, y: torch.Tensor, *, unbiased: bool = False) -> float:
    """Full-batch linear CKA between two representations of the same n inputs (features flattened per sample).

    unbiased=False: Kornblith et al. (2019), linear kernel, biased HSIC, ||Y^T X||_F^2 / (||X^T X||_F ||Y^T Y||_F)
    on centred features, computed from the Gram matrices. unbiased=True: the unbiased HSIC_1 of Nguyen et al.
    (2021) on one batch (needs n >= 4), i.e. what `MinibatchCKA` gives for a single minibatch.
    Constant or zero features give 0, not NaN.
    """
    if x.shape[0] != y.shape[0]:
        raise ValueError(f"x and y must hold the same samples, got {x.shape[0]} and {y.shape[0]}.")
    if x.shape[0] < 2:
        raise ValueError("linear_cka needs at least 2 samples.")
    gram_x, gram_y = centered_gram(x), centered_gram(y)
    if unbiased:
        hsic = unbiased_hsic(torch.stack([gram_x, gram_y]), torch.stack([gram_x, gram_y]))
        cka = cka_from_hsic(hsic[:1, 1:], hsic[0, 0:1], hsic[1, 1:2])
    else:
        cross = (gram_x * gram_y).sum().reshape(1, 1)
        cka = cka_from_hsic(cross, (gram_x * gram_x).sum().reshape(1), (gram_y * gram_y).sum().reshape(1))
    return float(cka[0, 0])


class MinibatchCKA:
    """Accumulates minibatch linear CKA (Nguyen et al. 2021, Sec. 3.1) between `num_x` layers and `num_y` layers
    (default: the same layers, giving the square layer-by-layer matrix).

    Call `update(features_x, features_y=None)` once per minibatch (each a sequence of (n, ...) tensors over the same
    n >= 4 images), then `compute()` for the (num_x, num_y) float64 CKA matrix.
    """

    def __init__(self, num_x: int, num_y: int | None = None) -> None:
        if num_x < 1 or (num_y is not None and num_y < 1):
            raise ValueError("MinibatchCKA needs at least one layer on each side.")
        self.num_x = num_x
        self.num_y = num_y
        self.num_minibatches = 0
        #: Each minibatch's cross HSIC_1 terms, in update order (the units of a bootstrap over minibatches).
        self.minibatch_cross: list[torch.Tensor] = []
        self._cross: torch.Tensor | None = None
        self._self_x: torch.Tensor | None = None
        self._self_y: torch.Tensor | None = None

    def update(
        self, features_x: Sequence[torch.Tensor], features_y: Sequence[torch.Tensor] | None = None
    ) -> None:
        """Add one minibatch's HSIC_1 terms."""
        if len(features_x) != self.num_x:
            raise ValueError(f"Expected {self.num_x} feature tensors, got {len(features_x)}.")
        if (features_y is None) != (self.num_y is None):
            raise ValueError("Pass features_y exactly when the accumulator was built with num_y.")
        grams_x = torch.stack([centered_gram(f) for f in features_x])
        if features_y is None:
            cross = unbiased_hsic(grams_x, grams_x)
            self_x = self_y = cross.diagonal().clone()
        else:
            if len(features_y) != self.num_y:
                raise ValueError(f"Expected {self.num_y} feature tensors for y, got {len(features_y)}.")
            grams_y = torch.stack([centered_gram(f) for f in features_y])
            if grams_y.shape[-1] != grams_x.shape[-1]:
                raise ValueError("features_x and features_y must hold the same images.")
            cross = unbiased_hsic(grams_x, grams_y)
            self_x = torch.diagonal(unbiased_hsic(grams_x, grams_x)).clone()
            self_y = torch.diagonal(unbiased_hsic(grams_y, grams_y)).clone()
        if self._cross is None:
            self._cross, self._self_x, self._self_y = cross, self_x, self_y
        else:
            self._cross = self._cross + cross
            self._self_x = self._self_x + self_x
            self._self_y = self._self_y + self_y
        self.minibatch_cross.append(cross)
        self.num_minibatches += 1

    @property
    def hsic_sums(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The accumulated (cross (num_x, num_y), self_x (num_x,), self_y (num_y,)) HSIC_1 sums, float64, for
        merging accumulators of disjoint minibatches (add them, then `cka_from_hsic`)."""
        if self._cross is None:
            raise ValueError("MinibatchCKA.hsic_sums before any update().")
        return self._cross, self._self_x, self._self_y

    def compute(self) -> torch.Tensor:
        """The (num_x, num_y) CKA matrix, float64; 0 for layers with constant features."""
        if self._cross is None:
            raise ValueError("MinibatchCKA.compute() before any update().")
        return cka_from_hsic(self._cross, self._self_x, self._self_y)


def minibatch_slices(total: int, minibatch_size: int) -> list[slice]:
    """Consecutive minibatches of `minibatch_size` images; a remainder of fewer than 4 joins the previous one."""
    slices = list(batch_slices(total, minibatch_size))
    if len(slices) > 1 and slices[-1].stop - slices[-1].start < MIN_MINIBATCH_SIZE:
        last = slices.pop()
        slices[-1] = slice(slices[-1].start, last.stop)
    return slices


@dataclass
class FeatureSimilarityResult(ProbeResult):
    """Layer-by-layer linear CKA (Nguyen et al. 2021 minibatch CKA; Park & Kim 2022 similarity heat maps).

    layers: the row layers (of `classifier`); other_layers: the column layers (of `other`, or the same layers).
    cka: (rows, columns) CKA matrix, symmetric with unit diagonal for one model (0 for constant layers).
    minibatch_size, num_minibatches, num_images: how the unbiased HSIC estimate was accumulated.
    """

    layers: list[str]
    other_layers: list[str]
    cka: list[list[float]]
    minibatch_size: int
    num_minibatches: int
    num_images: int

    @classmethod
    def probe_name(cls) -> str:
        return "feature_similarity"

    def plot(self, ax: Axes | None = None) -> Axes:
        """CKA heat map (`draw_cka`, the report's panel) on a 0-1 scale."""
        ax = new_axes(ax, figsize=(4.5, 4.0))
        draw_cka({"": {"cka": np.array(self.cka, dtype=float)}}, ax=ax)
        ax.set_xlabel("Layer" if self.other_layers == self.layers else "Layer (other model)")
        ax.set_ylabel("Layer")
        ax.set_title("Linear CKA")
        return ax


def _spatial_maps(
    classifier: Classifier, pixels: torch.Tensor, layers: list[str] | str | None, batch_size: int
) -> dict[str, torch.Tensor]:
    """Feature maps of `pixels` (one minibatch) as (N, C, h, w), computed in forward batches of `batch_size` and
    concatenated; `layers` "residual-sums": Park & Kim's points (the embedding and every residual sum)."""
    parts: dict[str, list[torch.Tensor]] = {}
    for _, maps in _feature_batches(classifier, pixels, layers, batch_size):
        for name, value in maps.items():
            parts.setdefault(name, []).append(value)
    return {name: torch.cat(values) for name, values in parts.items()}


def accumulate_minibatch_cka(
    classifier: Classifier,
    pixels: torch.Tensor,
    *,
    layers: Sequence[str] | None = None,
    minibatch_size: int = DEFAULT_MINIBATCH_SIZE,
    batch_size: int = DEFAULT_BATCH_SIZE,
    other: Classifier | None = None,
    other_layers: Sequence[str] | None = None,
) -> tuple[MinibatchCKA, list[str], list[str], list[list[int]]]:
    """The HSIC accumulation behind `feature_similarity` on pixels (N >= 4, on the classifier's device), split into
    `minibatch_slices(N, minibatch_size)`: (accumulator, row layer names, column layer names, each row layer's map
    shape (C, h, w)).

    Accumulators of disjoint runs can be merged by adding their `hsic_sums` (`cka_from_hsic`)."""
    if pixels.shape[0] < MIN_MINIBATCH_SIZE:
        raise ValueError(f"Minibatch CKA needs at least {MIN_MINIBATCH_SIZE} images, got {pixels.shape[0]}.")
    accumulator: MinibatchCKA | None = None
    names: list[str] = []
    other_names: list[str] = []
    shapes: list[list[int]] = []
    for part in minibatch_slices(pixels.shape[0], minibatch_size):
        maps = _spatial_maps(classifier, pixels[part], layers, batch_size)
        other_maps = None
        if other is not None:
            other_maps = _spatial_maps(other, pixels[part].to(other.device), other_layers, batch_size)
        if accumulator is None:
            names = list(maps)
            shapes = [list(maps[name].shape[1:]) for name in names]
            other_names = names if other_maps is None else list(other_maps)
            accumulator = MinibatchCKA(len(names), None if other_maps is None else len(other_names))
        accumulator.update(
            [maps[name] for name in names],
            None if other_maps is None else [other_maps[name].to(pixels.device) for name in other_names],
        )
    assert accumulator is not None
    return accumulator, names, other_names, shapes


def feature_similarity(
    classifier: Classifier,
    images: torch.Tensor | Iterable[object],
    labels: torch.Tensor | Sequence[int] | None = None,
    *,
    seed: int = 0,
    batch_size: int = DEFAULT_BATCH_SIZE,
    layers: Sequence[str] | None = None,
    minibatch_size: int = DEFAULT_MINIBATCH_SIZE,
    other: Classifier | None = None,
    other_layers: Sequence[str] | None = None,
    limit: int | None = None,
) -> FeatureSimilarityResult:
    """Minibatch linear CKA between the feature maps of every pair of layers (Nguyen et al. 2021, Sec. 3.1).

    Args:
        classifier: any `Classifier`; images: pixels in [0, 1] or a dataset; labels unused.
        seed: unused (deterministic), validated for the common signature.
        batch_size: images per forward pass; the result does not depend on it.
        layers: names for `classifier.feature_maps` (default: `classifier.layer_names()`).
        minibatch_size: images per HSIC minibatch (>= 4). The estimate depends on this split (see the module
            docstring); with at most `minibatch_size` images it is the full-batch unbiased CKA.
        other, other_layers: compare `classifier`'s layers with another classifier's (same input size) instead of
            with themselves.
        limit: read at most this many images of a dataset.
    """
    check_seed(seed)
    check_batch_size(batch_size)
    check_batch_size(minibatch_size)
    if minibatch_size < MIN_MINIBATCH_SIZE:
        raise ValueError(
            f"minibatch_size must be at least {MIN_MINIBATCH_SIZE} (unbiased HSIC), got {minibatch_size}."
        )
    layers = _check_layers(layers)
    other_layers = _check_layers(other_layers)
    if other is None and other_layers is not None:
        raise ValueError("other_layers needs other=... (another Classifier).")
    if other is not None and other.input_size != classifier.input_size:
        raise ValueError(
            f"other takes {other.input_size} images but classifier takes {classifier.input_size}; CKA compares "
            "representations of the same images."
        )
    inputs = prepare_inputs(classifier, images, labels, limit=limit, require_labels=False)
    if len(inputs) < MIN_MINIBATCH_SIZE:
        raise ValueError(f"feature_similarity needs at least {MIN_MINIBATCH_SIZE} images, got {len(inputs)}.")
    accumulator, names, other_names, _ = accumulate_minibatch_cka(
        classifier,
        inputs.pixels,
        layers=layers,
        minibatch_size=minibatch_size,
        batch_size=batch_size,
        other=other,
        other_layers=other_layers,
    )
    cka = accumulator.compute().cpu()
    return FeatureSimilarityResult(
        names,
        other_names,
        cka.tolist(),
        minibatch_size,
        accumulator.num_minibatches,
        len(inputs),
    )


# ------------------------------------------------------------------------------------------------ the probe's spec
# A chunk is one HSIC minibatch (`minibatch_size` images); partials hold the HSIC_1 sums of Nguyen et al.'s
# minibatch CKA and the merge adds them up before normalising. A last chunk of fewer than 4 images cannot form a
# minibatch: it is left out and counted in "unused_images" (the one-call probe would merge it into the previous
# minibatch instead). Each minibatch's cross terms are also kept with the sample id of its first image
# ("minibatch_hsic": the same for one chunk of several minibatches or one chunk each), with each layer's map shape:
# the units and the stages of Park & Kim's block-structure finding (`block_structure`).
def _partial(classifier: Classifier, inputs: ProbeInputs, seed: int, params: dict) -> dict:
    minibatch_size = check_batch_size(params.get("minibatch_size", DEFAULT_MINIBATCH_SIZE))
    if minibatch_size < MIN_MINIBATCH_SIZE:
        raise ValueError(
            f"minibatch_size must be at least {MIN_MINIBATCH_SIZE} (unbiased HSIC), got {minibatch_size}."
        )
    batch_size = check_batch_size(params.get("batch_size", DEFAULT_BATCH_SIZE))
    layers = check_task_layers(params.get("layers"), residual_sums=True)
    if len(inputs) < MIN_MINIBATCH_SIZE:
        return {"minibatch_size": minibatch_size, "unused_images": len(inputs), "cross": None}
    accumulator, names, other_names, shapes = accumulate_minibatch_cka(
        classifier, inputs.pixels, layers=layers, minibatch_size=minibatch_size, batch_size=batch_size
    )
    cross, self_x, self_y = accumulator.hsic_sums
    return {
        "layers": names,
        "other_layers": other_names,
        "shapes": shapes,
        "minibatch_keys": [
            int(inputs.sample_ids[part.start]) for part in minibatch_slices(len(inputs), minibatch_size)
        ],
        "minibatch_cross": [terms.cpu() for terms in accumulator.minibatch_cross],
        "cross": cross.cpu(),
        "self_x": self_x.cpu(),
        "self_y": self_y.cpu(),
        "num_minibatches": accumulator.num_minibatches,
        "minibatch_size": minibatch_size,
        "unused_images": 0,
    }


def _merge(partials: list) -> dict:
    used = [p for p in partials if p["cross"] is not None]
    if not used:
        raise ProbeNotApplicable(
            f"CKA needs a chunk of at least {MIN_MINIBATCH_SIZE} images; no chunk had that many."
        )
    cross = sum(p["cross"] for p in used)
    self_x = sum(p["self_x"] for p in used)
    self_y = sum(p["self_y"] for p in used)
    # Partials written before the shapes and minibatch terms were kept have no per-minibatch record.
    recorded = all("minibatch_keys" in p for p in used)
    minibatches = None
    if recorded:
        minibatches = {
            "keys": [key for p in used for key in p["minibatch_keys"]],
            "cross": [terms for p in used for terms in p["minibatch_cross"]],
        }
    return {
        "layers": same_setting(used, "layers"),
        "other_layers": same_setting(used, "other_layers"),
        "shapes": same_setting(used, "shapes") if recorded else None,
        "minibatch_hsic": minibatches,
        "cka": cka_from_hsic(cross, self_x, self_y),
        "minibatch_size": same_setting(partials, "minibatch_size"),
        "num_minibatches": sum(int(p["num_minibatches"]) for p in used),
        "num_images": total_images(used),
        "unused_images": sum(int(p["unused_images"]) for p in partials),
    }


def stages_by_map_size(shapes: Sequence[Sequence[int]]) -> np.ndarray:
    """Each layer's stage: the runs of consecutive layers whose maps share one spatial size (h, w), numbered from 0.
    A multi-stage network changes the size between stages (a strided block, a Swin patch merging, a PiT pooling), a
    plain ViT never, so this needs no knowledge of the architecture."""
    sizes = [tuple(shape[-2:]) for shape in shapes]
    return np.cumsum([0] + [int(a != b) for a, b in pairwise(sizes)])


def block_structure(probe: Mapping[str, Any]) -> tuple[list, np.ndarray]:
    """Park & Kim's block structure of the CKA map, per HSIC minibatch: the mean CKA between two
    layers of one stage minus the mean CKA between layers of different stages (`stages_by_map_size`), each
    minibatch's CKA from its own HSIC terms. Above 0: the layers of a stage resemble each other more than layers
    across stages, the block-diagonal heat map of a multi-stage model."""
    record, shapes = probe.get("minibatch_hsic"), probe.get("shapes")
    if not record or not shapes:
        raise LookupError(
            "the CKA record keeps no per-minibatch HSIC terms (a run made before they were kept)"
        )
    stage = stages_by_map_size(shapes)
    same = stage[:, None] == stage[None, :]
    within_pairs = same & ~np.eye(len(stage), dtype=bool)
    if stage[-1] == 0 or not within_pairs.any():
        raise LookupError(
            "the CKA layers span one map size, or no stage holds two layers: nothing to compare (a multi-stage "
            f"model with layers: {RESIDUAL_SUMS})"
        )
    cka = torch.stack(
        [
            cka_from_hsic(cross, cross.diagonal(), cross.diagonal())
            for cross in torch.as_tensor(record["cross"], dtype=torch.float64)
        ]
    ).numpy()
    return list(record["keys"]), cka[:, within_pairs].mean(axis=1) - cka[:, ~same].mean(axis=1)


def _headline(probe: Mapping[str, Any]) -> dict[str, str]:
    matrix = as_float_array(probe.get("cka"))
    if matrix.ndim == 2 and matrix.size > 1:
        off = matrix[~np.eye(*matrix.shape, dtype=bool)]
        return {"mean CKA between different layers": fmt_number(np.nanmean(off) if off.size else None)}
    return {}


def draw_cka(data: SeriesData, ax: Axes | None = None) -> Figure | None:
    """Each model's layer-by-layer CKA map on a 0-1 scale (on `ax`: one model)."""
    return map_panels(
        {key: as_float_array(p.get("cka")) for key, p in data.items()},
        "Linear CKA",
        "CKA",
        cmap="magma",
        limits=(0.0, 1.0),
        labels=("layer", "layer"),
        ax=ax,
    )


SPEC = register_probe(
    ProbeSpec(
        name="cka",
        value_checks={
            "layers": calls(lambda layers: check_task_layers(layers, residual_sums=True)),
            "minibatch_size": int_at_least(MIN_MINIBATCH_SIZE),
        },
        probe=feature_similarity,
        result_type=FeatureSimilarityResult,
        selection="random",
        chunk_size=DEFAULT_MINIBATCH_SIZE,
        needs_labels=False,
        partial_fn=_partial,
        merge_fn=_merge,
        uses_labels=False,
        excluded_params={
            "other": "comparing two models is not a runner probe",
            "other_layers": "comparing two models is not a runner probe",
        },
        chunk_param="minibatch_size",
        chunk_default=DEFAULT_MINIBATCH_SIZE,
        applicable_fn=features_applicable,
        headline=_headline,
        findings=(
            ProbeFinding(
                "cka-block-structure",
                "park-kim",
                "A multi-stage ViT's feature similarity has a block structure (within the ViT)",
                "Park & Kim, Sec. 4.1 (multi-stage networks behave like a series of small models: block-diagonal "
                "CKA maps of multi-stage models such as Swin and PiT)",
                "mean linear CKA between two layers of one stage (one map size) minus between layers of different "
                "stages, per HSIC minibatch",
                +1,
                block_structure,
                member="vit",
                unit="minibatch",
            ),
        ),
        figures={"cka": ProbeFigure(draw_cka, "Layer-by-layer linear CKA similarity.")},
    )
)


__all__ = [
    "DEFAULT_MINIBATCH_SIZE",
    "SPEC",
    "FeatureSimilarityResult",
    "MinibatchCKA",
    "accumulate_minibatch_cka",
    "block_structure",
    "centered_gram",
    "cka_from_hsic",
    "draw_cka",
    "feature_similarity",
    "linear_cka",
    "minibatch_slices",
    "stages_by_map_size",
    "unbiased_hsic",
]
