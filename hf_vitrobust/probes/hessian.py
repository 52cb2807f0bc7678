# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Hessian eigenvalue spectra of the loss with respect to the weights (Park & Kim, "How Do Vision Transformers
Work?", ICLR 2022, Fig. 1 right and Fig. 4: "Hessian max eigenvalue spectra").

Park & Kim compute, for each mini-batch, the top Hessian eigenvalues of the training loss and show the spectrum
(the distribution over mini-batches) of the maximum eigenvalue: multi-head self-attention reduces the magnitude of
the eigenvalues (flatter loss), while ViTs also show *negative* eigenvalues (a non-convex loss) in small-data
regimes. They used PyHessian (Yao et al. 2020), which runs power iteration and stochastic Lanczos quadrature on
Hessian-vector products. This module does the same without materialising the Hessian:

- `hessian_vector_product` / `HessianOperator`: H v for the parameter Hessian of a loss, reverse-over-reverse
  (the default: the gradient is computed once with `create_graph=True`, then each product is one backward pass
  through that retained graph; measured the fastest in `benchmarks/probes_hessian.py`, at the cost of keeping the
  graph in memory) or forward-over-reverse (`torch.func.jvp` of `torch.func.grad`, a forward and backward pass
  with dual numbers per product, no graph kept).
- `lanczos`: the Lanczos tridiagonalisation with full reorthogonalisation. Its Ritz values approximate both ends
  of the spectrum at once (the top-k and the k most negative eigenvalues), and its Ritz weights (squared first
  components of the tridiagonal's eigenvectors) are one sample of stochastic Lanczos quadrature, the eigenvalue
  density estimate of PyHessian's `density` (Ghorbani et al. 2019).
- `power_iteration`: power iteration with deflation on shifted operators, for the algebraically largest (or
  smallest) eigenvalues.
- `pyhessian_eigenvalues`: the loop of PyHessian's `hessian.eigenvalues(maxIter, tol, top_n)`, the one Park & Kim
  used: the top_n eigenvalues largest in *magnitude*, each with its sign.

Two protocols, chosen by `method` and `regularizer` of `hessian_spectrum`:

- ours (the defaults, `method="lanczos"`, `regularizer="half-squared-norm"`): both algebraic ends of the
  spectrum from one Lanczos run; `weight_decay=wd` adds the Hessian of (wd / 2) ||w||^2, wd I, so every eigenvalue
  shifts by exactly wd.
- Park & Kim's (`method="pyhessian"`, `regularizer="sum-of-norms"`, `weight_decay=0.05`, `top_k=5`,
  `augmentation=` their training recipe, `batch_size=` their training batch: 96 for CIFAR-100, 128 for
  ImageNet): the author's description in xxxnell/how-do-vits-work issue #12 (the code is unreleased) is PyHessian's
  power iteration for the top-k (e.g. top-5) eigenvalues of each training mini-batch, under the training
  augmentation, gathered over batches (`HessianSpectrumResult.pooled_eigenvalues`), of "NLL + L2" (their README).
  The issue passes `weight_decay` to a modified PyHessian that is not published; the L2 taken here is the one their
  released code adds to the NLL, `ops/norm.py` `l2`: the sum over `model.parameters()` of each tensor's *unsquared*
  Frobenius norm, weighted by the config's weight decay (`losslandscape.ipynb`: loss = NLL + weight_decay * l2). Its
  Hessian, (I - p p^T / ||p||^2) / ||p|| for each tensor p, is not a constant shift: it adds curvature only across
  each tensor's direction, and its scale falls with the tensor's norm.

Both run in eval mode (BatchNorm running statistics, no dropout or drop path), as PyHessian's `hessian` sets
`model.eval()`, with the loss = mean cross-entropy over the batch (soft-target cross-entropy under an
augmentation's mixed, smoothed targets). Attention layers run on their explicit softmax(QK^T)V path
(`Classifier.differentiable_attention`), since fused kernels may lack second derivatives.

Which images form the batches of a run is the probe's `batches` param: "class-balanced" (the default) cuts the
benchmark's rows, put in `data.balanced_batches.class_balanced_order` with the run's seed, into batches of as many
classes as the batch size allows; with the benchmark's `subset: class-balanced` those rows are themselves drawn from
the labels of the whole source, so the batches come from the whole training set, as Park & Kim's `shuffle=True`
loader draws them, whatever the order of its rows. "random" is the earlier draw (uniform rows, kept in stream order).
Each batch's largest |eigenvalue| and share of negative eigenvalues among its top-k by magnitude, their intervals
over batches, and Park & Kim's two claims about them are in `hessian_statistics`.

Batch-size semantics: eigenvalues are a property of a batch's loss, so they depend on which images form a batch.
Results are deterministic given (seed, batch index): the same batches give the same numbers on a device. Across
devices they agree to floating-point rounding, and to about 1e-3 relative on CUDA, where PyTorch runs float32
convolutions in TF32 by default: set `torch.backends.cudnn.allow_tf32 = False` for full float32 there.
The start vectors of batch b are counter-based normal streams of `hf_vitrobust.corruptions.randomness` keyed by
(seed, b) (and, for `pyhessian`, by the eigenvalue's rank, as PyHessian draws a fresh one for each), and the
augmentation's seed is derived from (seed, b), so no global RNG is touched.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from typing import Any, Literal

import numpy as np
import torch
import torch.nn.functional as F
from torch.func import functional_call

from ..corruptions.randomness import normal, sample_keys
from ..models.classifier import Classifier
from .augmentation import TRAINING_AUGMENTATIONS, augment_batch, check_augmentation, soft_target_cross_entropy
from .base import (
    DEFAULT_BATCH_SIZE,
    ProbeInputs,
    batch_slices,
    check_batch_size,
    check_seed,
    eval_mode,
    prepare_inputs,
)
from .display import as_float_array, fmt_count, fmt_number, fmt_number_interval, fmt_percent_interval
from .hessian_methods import (
    HVP_METHODS,
    HessianOperator,
    HVPMethod,
    LanczosResult,
    Params,
    PowerIterationResult,
    hessian_vector_product,
    lanczos,
    power_iteration,
    pyhessian_eigenvalues,
)
from .hessian_result import HessianSpectrumResult, draw_hessian_density, draw_hessian_spectrum
from .hessian_statistics import HESSIAN_FINDINGS, hessian_intervals
from .param_checks import boolean, non_negative_number, optional, positive_int
from .spec import ProbeFigure, ProbeNotApplicable, ProbeSpec, chunk_seed, register_probe, same_setting

EigenMethod = Literal["lanczos", "power", "pyhessian"]
EIGEN_METHODS: tuple[str, ...] = ("lanczos", "power", "pyhessian")
Regularizer = Literal["half-squared-norm", "sum-of-norms"]
REGULARIZERS: tuple[str, ...] = ("half-squared-norm", "sum-of-norms")
_DEFAULT_ITERATIONS = {"lanczos": 20, "power": 20, "pyhessian": 100}  # pyhessian: PyHessian's maxIter default
_STREAM = "hessian_spectrum/start"
_DENSITY_STREAM = "hessian_spectrum/density"
_PYHESSIAN_STREAM = "hessian_spectrum/pyhessian-start"
_AUGMENTATION_STREAM = "hessian_spectrum/augmentation"


# ---------------------------------------------------------------------------------------- the probe
def classifier_loss(
    classifier: Classifier, pixels: torch.Tensor, labels: torch.Tensor
) -> tuple[Callable[[Params], torch.Tensor], Params]:
    """(loss_fn, params): loss_fn(params) = mean cross-entropy of `classifier` with its trainable parameters
    replaced by `params` (torch.func.functional_call; the model is not modified), on this batch. `labels` are class
    indices (N,), or soft targets (N, classes) float (an augmentation's mixed, smoothed targets: then the loss is
    `soft_target_cross_entropy`)."""
    params = {name: p.detach() for name, p in classifier.named_parameters() if p.requires_grad}
    if not params:
        raise ValueError(f"{classifier.name} has no trainable parameters.")
    buffers = dict(classifier.named_buffers())

    def loss_fn(values: Params) -> torch.Tensor:
        logits = functional_call(classifier, (values, buffers), (pixels,), strict=False)
        if labels.is_floating_point():
            return soft_target_cross_entropy(logits, labels)
        return F.cross_entropy(logits.to(torch.promote_types(logits.dtype, torch.float32)), labels)

    return loss_fn, params


def _start_vector(seed: int, index: int, stream: str, numel: int, like: torch.Tensor) -> torch.Tensor:
    ids = torch.tensor([index], dtype=torch.int64, device=like.device)
    return normal(seed, ids, stream, (numel,), dtype=like.dtype)[0]


def _pyhessian_start(seed: int, index: int, numel: int, like: torch.Tensor, rank: int) -> torch.Tensor:
    """The start vector of eigenvalue `rank` of batch `index` for "pyhessian" (one stream per rank)."""
    return _start_vector(seed, index, f"{_PYHESSIAN_STREAM}/{rank}", numel, like)


def _augmentation_seed(seed: int, index: int) -> int:
    """A 64-bit seed for batch `index`'s augmentation, from two counter-based keys of (seed, index)."""
    ids = torch.tensor([index], dtype=torch.int64)
    high = int(sample_keys(seed, ids, _AUGMENTATION_STREAM + "/high")[0])
    return (high << 32) | int(sample_keys(seed, ids, _AUGMENTATION_STREAM + "/low")[0])


def _check_method_settings(method: str, iterations: int, top_k: int, density: bool) -> None:
    """Lanczos keeps at most `iterations` Ritz values; the spectral density is Lanczos quadrature."""
    if method == "lanczos" and iterations < top_k:
        raise ValueError(f"Lanczos needs iterations >= top_k, got iterations={iterations}, top_k={top_k}.")
    if method != "lanczos" and density:
        raise ValueError("density true needs method 'lanczos' (stochastic Lanczos quadrature).")


def hessian_spectrum(
    classifier: Classifier,
    images: torch.Tensor | object,
    labels: torch.Tensor | list[int] | None = None,
    *,
    seed: int = 0,
    batch_size: int = DEFAULT_BATCH_SIZE,
    top_k: int = 1,
    iterations: int | None = None,
    method: EigenMethod = "lanczos",
    weight_decay: float = 0.0,
    regularizer: Regularizer = "half-squared-norm",
    augmentation: str | None = None,
    density: bool = False,
    density_vectors: int = 1,
    max_batches: int | None = None,
    hvp: HVPMethod = "reverse_over_reverse",
    tol: float = 1e-3,
) -> HessianSpectrumResult:
    """Top-k (and, for the algebraic methods, bottom-k) Hessian eigenvalues of the loss w.r.t. all trainable
    parameters, per mini-batch.

    Park & Kim's protocol (issue #12 of xxxnell/how-do-vits-work): `method="pyhessian"`,
    `regularizer="sum-of-norms"`, `weight_decay=0.05`, `top_k=5`, `augmentation="park-kim-cifar100"` (batch_size 96)
    or `"park-kim-imagenet"` (batch_size 128), on training images. The defaults are ours: Lanczos for both
    algebraic ends, no weight decay, no augmentation.

    Args:
        classifier, images, labels: the model and labelled images (see `prepare_inputs`).
        seed: keys the start vectors and the augmentation (with the batch index); same seed and batches -> same
            numbers.
        batch_size: images per batch; each batch gives one row of eigenvalues (Park & Kim's spectra are over
            mini-batches, so this is part of the measurement, not only of the memory budget).
        top_k: eigenvalues kept per batch (at each end for "lanczos" and "power").
        iterations: Lanczos steps (memory: iterations x parameters), or power-iteration products per eigenvalue at
            most; default 20, and 100 (PyHessian's `maxIter`) for "pyhessian".
        method: "lanczos" (both ends from one run; default), "power" (power iteration with deflation on shifted
            operators, for the algebraic ends; about 3 x top_k runs) or "pyhessian" (PyHessian's
            `hessian.eigenvalues`: the top_k largest in magnitude with their signs, `pyhessian_eigenvalues`;
            `bottom_eigenvalues` are NaN).
        weight_decay: wd >= 0, the weight of the L2 term of Park & Kim's "NLL + L2". Their configs/cifar100_vit.yaml
            and imagenet_vit.yaml ("used for both CNNs and ViTs") set wd = 0.05, and their classification.ipynb and
            losslandscape.ipynb load cifar100_vit.yaml for ResNet-50 as for ViT-Ti; 5e-4 is only in the
            *_general.yaml configs (SGD, weak augmentation, "rarely used in the paper").
        regularizer: the L2 term. "half-squared-norm" (default): (wd / 2) ||w||^2, which shifts every eigenvalue by
            wd. "sum-of-norms": wd * sum over parameter tensors of ||p|| (unsquared), Park & Kim's `ops/norm.py`
            `l2` as their losslandscape.ipynb adds it; its Hessian is not a shift (see the module docstring).
        augmentation: None (default: the images as given, integer labels, cross-entropy) or a recipe of
            `hf_vitrobust.probes.augmentation.TRAINING_AUGMENTATIONS`: each batch is augmented by `augment_batch`
            with a seed derived from (seed, batch index) and the images' sample ids of `prepare_inputs` (positions
            for a tensor, stable ids for a dataset), and the loss is the soft-target cross-entropy of its mixed,
            smoothed targets. (The runner's seed of each one-batch chunk already depends on its sample ids.)
        density: also return stochastic Lanczos quadrature nodes and weights (PyHessian's `density`), from
            `density_vectors` random start vectors per batch (the first is the eigenvalue run itself); "lanczos"
            only.
        max_batches: use only the first batches (after `batch_size` splitting).
        hvp: "reverse_over_reverse" (double backward through a retained gradient graph; default, the fastest per
            product in `benchmarks/probes_hessian.py`, and PyHessian's) or "forward_over_reverse" (torch.func jvp of
            grad; less memory, since no graph is kept between products).
        tol: relative tolerance of power iteration ("power", "pyhessian"; PyHessian's default 1e-3).
    """
    seed = check_seed(seed)
    check_batch_size(batch_size)
    if method not in EIGEN_METHODS:
        raise ValueError(f"method must be one of {EIGEN_METHODS}, got {method!r}.")
    if iterations is None:
        iterations = _DEFAULT_ITERATIONS[method]
    for name, value in (("top_k", top_k), ("iterations", iterations), ("density_vectors", density_vectors)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}.")
    _check_method_settings(method, iterations, top_k, density)
    if not isinstance(weight_decay, int | float) or not math.isfinite(weight_decay) or weight_decay < 0:
        raise ValueError(f"weight_decay must be a finite float >= 0, got {weight_decay!r}.")
    if regularizer not in REGULARIZERS:
        raise ValueError(f"regularizer must be one of {REGULARIZERS}, got {regularizer!r}.")
    augmentation = check_augmentation(augmentation)
    if hvp not in HVP_METHODS:
        raise ValueError(f"hvp must be one of {HVP_METHODS}, got {hvp!r}.")
    if not isinstance(tol, int | float) or not math.isfinite(tol) or tol < 0:
        raise ValueError(f"tol must be a finite float >= 0, got {tol!r}.")
    if max_batches is not None and (
        isinstance(max_batches, bool) or not isinstance(max_batches, int) or max_batches < 1
    ):
        raise ValueError(f"max_batches must be a positive int or None, got {max_batches!r}.")
    inputs = prepare_inputs(classifier, images, labels)
    assert inputs.labels is not None
    slices = list(batch_slices(len(inputs), batch_size))[:max_batches]
    penalty = {"shift": 0.0, "norm_penalty": 0.0}
    penalty["shift" if regularizer == "half-squared-norm" else "norm_penalty"] = float(weight_decay)

    tops: list[torch.Tensor] = []
    bottoms: list[torch.Tensor] = []
    nodes: list[torch.Tensor] = []
    weights: list[torch.Tensor] = []
    steps: list[torch.Tensor] = []
    with eval_mode(classifier), classifier.differentiable_attention():
        for index, part in enumerate(slices):
            pixels, targets = inputs.pixels[part], inputs.labels[part]
            if augmentation is not None:
                pixels, targets = augment_batch(
                    pixels,
                    targets,
                    recipe=augmentation,
                    seed=_augmentation_seed(seed, index),
                    num_classes=classifier.num_classes,
                    sample_ids=inputs.sample_ids[part],
                )
            loss_fn, params = classifier_loss(classifier, pixels, targets)
            operator = HessianOperator(loss_fn, params, method=hvp, **penalty)
            like = params[operator.names[0]]
            k = min(top_k, operator.numel)
            if method == "pyhessian":
                starts = functools.partial(_pyhessian_start, seed, index, operator.numel, like)
                run = pyhessian_eigenvalues(operator.matvec, starts, top_k=k, iterations=iterations, tol=tol)
                tops.append(_pad(run.eigenvalues, top_k))
                bottoms.append(_pad(run.eigenvalues[:0], top_k))
                used = torch.zeros(top_k, dtype=torch.int64)
                used[:k] = run.steps
                steps.append(used)
                continue
            start = _start_vector(seed, index, _STREAM, operator.numel, like)
            if method == "power":
                top = power_iteration(operator.matvec, start, top_k=k, iterations=iterations, tol=tol)
                bottom = power_iteration(
                    operator.matvec, start, top_k=k, iterations=iterations, tol=tol, largest=False
                )
            else:
                run = lanczos(operator.matvec, start, iterations)
                values = run.ritz_values
                top, bottom = values.flip(0)[:k], values[:k]
                if density:
                    runs = [run] + [
                        lanczos(
                            operator.matvec,
                            _start_vector(
                                seed, index * density_vectors + j, _DENSITY_STREAM, operator.numel, like
                            ),
                            iterations,
                        )
                        for j in range(1, density_vectors)
                    ]
                    nodes.append(_pad(torch.cat([r.ritz_values for r in runs]), density_vectors * iterations))
                    weights.append(
                        _pad(
                            torch.cat([r.ritz_weights for r in runs]) / density_vectors,
                            density_vectors * iterations,
                            0.0,
                        )
                    )
            tops.append(_pad(top, top_k))
            bottoms.append(_pad(bottom, top_k))
    return HessianSpectrumResult(
        eigenvalues=torch.stack(tops),
        bottom_eigenvalues=torch.stack(bottoms),
        batch_sizes=[part.stop - part.start for part in slices],
        method=method,
        iterations=iterations,
        weight_decay=float(weight_decay),
        density_nodes=torch.stack(nodes) if density else None,
        density_weights=torch.stack(weights) if density else None,
        regularizer=regularizer,
        augmentation=augmentation,
        tol=float(tol),
        power_steps=torch.stack(steps) if method == "pyhessian" else None,
    )


def _pad(values: torch.Tensor, size: int, fill: float = math.nan) -> torch.Tensor:
    """float64 (size,): `values` padded with `fill` (Lanczos stops early on tiny or degenerate problems)."""
    out = torch.full((size,), fill, dtype=torch.float64)
    out[: values.numel()] = values.detach().double().cpu()[:size]
    return out


# ------------------------------------------------------------------------------------------------ the probe's spec
# A chunk is one mini-batch (`batch_size` images); each chunk's start vectors come from `chunk_seed(seed,
# sample_ids)`, so the numbers do not depend on which process runs the chunk, and the merge stacks the per-batch
# eigenvalues in chunk order.
_AUGMENTATIONS = (None, *TRAINING_AUGMENTATIONS)
# How a run forms the mini-batches from its benchmark's rows (the probe's `batches` param):
# - "class-balanced" (default): `data.balanced_batches.class_balanced_order` with the run's seed, so each batch holds
#   as many classes as its size allows, whatever the rows' order; with the benchmark's `subset: class-balanced`,
#   drawn from the labels of the whole source.
# - "random": the draw of runs before it: a uniform draw of the benchmark's rows, kept in stream order and cut into
#   consecutive batches (of a class-sorted source, a batch then spans few classes).
BATCH_DRAWS = ("class-balanced", "random")
#: The draw of partials written before `batches` was recorded.
_EARLIER_BATCH_DRAW = "random"


def _selection(params: Mapping[str, Any]) -> str:
    return "class-balanced" if params.get("batches", BATCH_DRAWS[0]) == "class-balanced" else "random"


def _partial(classifier: Classifier, inputs: ProbeInputs, seed: int, params: dict) -> dict:
    batch_seed = chunk_seed(seed, inputs.sample_ids)
    params = {"batch_size": len(inputs), **params}
    batches = params.pop("batches", BATCH_DRAWS[0])
    result: HessianSpectrumResult = hessian_spectrum(
        classifier, inputs.pixels, inputs.labels, seed=batch_seed, **params
    )
    return {
        "eigenvalues": result.eigenvalues.cpu(),
        "bottom_eigenvalues": result.bottom_eigenvalues.cpu(),
        "batch_sizes": list(result.batch_sizes),
        "method": result.method,
        "iterations": result.iterations,
        "weight_decay": result.weight_decay,
        "density_nodes": None if result.density_nodes is None else result.density_nodes.cpu(),
        "density_weights": None if result.density_weights is None else result.density_weights.cpu(),
        "regularizer": result.regularizer,
        "augmentation": result.augmentation,
        "tol": result.tol,
        "power_steps": None if result.power_steps is None else result.power_steps.cpu(),
        "batch_seed": batch_seed,
        "batches": batches,
    }


def _merge(partials: list) -> dict:
    density = partials[0]["density_nodes"] is not None
    steps = partials[0]["power_steps"] is not None
    return {
        "eigenvalues": torch.cat([p["eigenvalues"] for p in partials]),
        "bottom_eigenvalues": torch.cat([p["bottom_eigenvalues"] for p in partials]),
        "batch_sizes": [size for p in partials for size in p["batch_sizes"]],
        "method": same_setting(partials, "method"),
        "iterations": same_setting(partials, "iterations"),
        "weight_decay": same_setting(partials, "weight_decay"),
        "density_nodes": torch.cat([p["density_nodes"] for p in partials]) if density else None,
        "density_weights": torch.cat([p["density_weights"] for p in partials]) if density else None,
        "regularizer": same_setting(partials, "regularizer"),
        "augmentation": same_setting(partials, "augmentation"),
        "tol": same_setting(partials, "tol"),
        "power_steps": torch.cat([p["power_steps"] for p in partials]) if steps else None,
        "batch_seeds": [p["batch_seed"] for p in partials for _ in p["batch_sizes"]],
        "batches": same_setting(
            [{"batches": p.get("batches", _EARLIER_BATCH_DRAW)} for p in partials], "batches"
        ),
    }


def _applicable(classifier: Classifier, params: dict) -> None:
    if not any(p.requires_grad for p in classifier.parameters()):
        raise ProbeNotApplicable(f"hessian: {classifier.name!r} has no trainable parameters.")


def _headline(probe: Mapping[str, Any]) -> dict[str, str]:
    top = as_float_array(probe.get("eigenvalues"))
    bottom = as_float_array(probe.get("bottom_eigenvalues"))
    top, bottom = top[np.isfinite(top)], bottom[np.isfinite(bottom)]
    share = (probe.get("intervals") or {}).get("negative_share") or {}
    magnitude = (probe.get("intervals") or {}).get("top_magnitude") or {}
    return {
        "top eigenvalue (max over batches)": fmt_number(top.max() if top.size else None),
        "most negative eigenvalue": fmt_number(bottom.min() if bottom.size else None),
        "largest eigenvalue magnitude, mean over batches": fmt_number_interval(
            magnitude.get("estimate"), magnitude.get("low"), magnitude.get("high")
        ),
        "negative share of the top-k by magnitude (%)": fmt_percent_interval(
            share.get("estimate"), share.get("low"), share.get("high"), 100
        ),
        "mini-batches": fmt_count(len(probe.get("batch_sizes") or []) or None),
        "batches drawn": str(probe.get("batches") or _EARLIER_BATCH_DRAW),
    }


def _image_count(probe: Mapping[str, Any]) -> int | None:
    return sum(probe.get("batch_sizes") or []) or None


def _joint_check(params: Mapping[str, Any], input_size: tuple[int, int] | None) -> None:
    """Lanczos keeps at most `iterations` Ritz values; the spectral density is Lanczos quadrature."""
    iterations = params["iterations"]
    if iterations is None:
        iterations = _DEFAULT_ITERATIONS[params["method"]]
    _check_method_settings(params["method"], iterations, params["top_k"], params["density"])


SPEC = register_probe(
    ProbeSpec(
        name="hessian",
        value_checks={
            "top_k": positive_int,
            "iterations": optional(positive_int),
            "weight_decay": non_negative_number,
            "density": boolean,
            "density_vectors": positive_int,
            "tol": non_negative_number,
        },
        joint_check=_joint_check,
        probe=hessian_spectrum,
        result_type=HessianSpectrumResult,
        selection="class-balanced",
        selection_fn=_selection,
        chunk_size=DEFAULT_BATCH_SIZE,
        needs_labels=True,
        partial_fn=_partial,
        merge_fn=_merge,
        excluded_params={"max_batches": "the probe spec's num_images sets the number of mini-batches"},
        extra_params=("batches",),
        chunk_param="batch_size",
        chunk_default=DEFAULT_BATCH_SIZE,
        applicable_fn=_applicable,
        choices={
            "method": EIGEN_METHODS,
            "regularizer": REGULARIZERS,
            "augmentation": _AUGMENTATIONS,
            "hvp": HVP_METHODS,
            "batches": BATCH_DRAWS,
        },
        headline=_headline,
        intervals_fn=hessian_intervals,
        findings=HESSIAN_FINDINGS,
        image_count=_image_count,
        summary_row="top eigenvalue (max over batches)",
        figures={
            "hessian_spectrum": ProbeFigure(
                draw_hessian_spectrum,
                "Hessian eigenvalues per mini-batch: largest (filled) and smallest (hatched); the red area "
                "marks negative eigenvalues, i.e. non-convex directions (Park & Kim Fig. 1 right / Fig. 4).",
            ),
            "hessian_density": ProbeFigure(
                draw_hessian_density, "Hessian eigenvalue density (stochastic Lanczos quadrature, log scale)."
            ),
        },
    )
)


__all__ = [
    "BATCH_DRAWS",
    "EIGEN_METHODS",
    "HVP_METHODS",
    "REGULARIZERS",
    "SPEC",
    "HVPMethod",
    "HessianOperator",
    "LanczosResult",
    "PowerIterationResult",
    "classifier_loss",
    "hessian_spectrum",
    "hessian_vector_product",
    "lanczos",
    "power_iteration",
    "pyhessian_eigenvalues",
]
