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
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, NamedTuple

import numpy as np
import torch
import torch.nn.functional as F
from torch.func import functional_call, grad, jvp

from ..corruptions.randomness import normal, sample_keys
from ..models.classifier import Classifier
from .augmentation import augment_batch, check_augmentation, soft_target_cross_entropy
from .base import (
    DEFAULT_BATCH_SIZE,
    ProbeResult,
    batch_slices,
    check_batch_size,
    check_seed,
    eval_mode,
    new_axes,
    prepare_inputs,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes

HVPMethod = Literal["forward_over_reverse", "reverse_over_reverse"]
_HVP_METHODS = ("forward_over_reverse", "reverse_over_reverse")
EigenMethod = Literal["lanczos", "power", "pyhessian"]
EIGEN_METHODS: tuple[str, ...] = ("lanczos", "power", "pyhessian")
Regularizer = Literal["half-squared-norm", "sum-of-norms"]
REGULARIZERS: tuple[str, ...] = ("half-squared-norm", "sum-of-norms")
_DEFAULT_ITERATIONS = {"lanczos": 20, "power": 20, "pyhessian": 100}  # pyhessian: PyHessian's maxIter default
_STREAM = "hessian_spectrum/start"
_DENSITY_STREAM = "hessian_spectrum/density"
_PYHESSIAN_STREAM = "hessian_spectrum/pyhessian-start"
_AUGMENTATION_STREAM = "hessian_spectrum/augmentation"
# PyHessian's `normalization` divides by (norm + 1e-6) and its stopping rule by (|eigenvalue| + 1e-6).
_PYHESSIAN_EPS = 1e-6

Params = dict[str, torch.Tensor]
Matvec = Callable[[torch.Tensor], torch.Tensor]


# ---------------------------------------------------------------------------------------- Hessian-vector products
def hessian_vector_product(
    loss_fn: Callable[[Params], torch.Tensor],
    params: Mapping[str, torch.Tensor],
    vector: Mapping[str, torch.Tensor],
    *,
    method: HVPMethod = "reverse_over_reverse",
) -> Params:
    """H v for the Hessian H of the scalar `loss_fn(params)` with respect to `params` (a dict of tensors), with
    `vector` a dict of the same shapes. One-off; for many products at the same point use `HessianOperator`."""
    return HessianOperator(loss_fn, params, method=method).apply(vector)


class HessianOperator:
    """The parameter Hessian of `loss_fn` at `params` as a linear operator on dicts or flat vectors.

    method "forward_over_reverse": jvp(grad(loss)) per product (torch.func; no graph kept between products).
    method "reverse_over_reverse": the gradient is computed once with `create_graph=True`, then each product is a
    backward pass through that graph (double backward; memory for the retained graph).
    `shift` adds shift * v to every product (the Hessian of (shift / 2) ||w||^2: weight decay).
    `norm_penalty` c adds the Hessian of c * sum_p ||p|| (Park & Kim's `ops/norm.py` `l2`, unsquared Frobenius norms
    per tensor): c (v_p - p <p, v_p> / ||p||^2) / ||p|| for each tensor p. A tensor of norm 0, where the norm has no
    second derivative, contributes nothing.
    """

    def __init__(
        self,
        loss_fn: Callable[[Params], torch.Tensor],
        params: Mapping[str, torch.Tensor],
        *,
        method: HVPMethod = "reverse_over_reverse",
        shift: float = 0.0,
        norm_penalty: float = 0.0,
    ) -> None:
        if method not in _HVP_METHODS:
            raise ValueError(f"method must be one of {_HVP_METHODS}, got {method!r}.")
        if not params:
            raise ValueError("No parameters to differentiate.")
        self.loss_fn = loss_fn
        self.method = method
        self.shift = float(shift)
        self.norm_penalty = float(norm_penalty)
        self.names = list(params)
        self.params = {name: tensor.detach() for name, tensor in params.items()}
        self._norms = (
            {name: float(torch.linalg.vector_norm(tensor)) for name, tensor in self.params.items()}
            if self.norm_penalty
            else {}
        )
        self.shapes = [self.params[name].shape for name in self.names]
        self.sizes = [self.params[name].numel() for name in self.names]
        self.numel = sum(self.sizes)
        self._grads: tuple[torch.Tensor, ...] | None = None
        self._leaves: list[torch.Tensor] | None = None

    @property
    def device(self) -> torch.device:
        return self.params[self.names[0]].device

    @property
    def dtype(self) -> torch.dtype:
        return self.params[self.names[0]].dtype

    def flatten(self, tensors: Mapping[str, torch.Tensor]) -> torch.Tensor:
        return torch.cat([tensors[name].reshape(-1) for name in self.names])

    def unflatten(self, flat: torch.Tensor) -> Params:
        parts = flat.split(self.sizes)
        return {
            name: part.view(shape) for name, part, shape in zip(self.names, parts, self.shapes, strict=True)
        }

    def apply(self, vector: Mapping[str, torch.Tensor]) -> Params:
        """H v (+ shift v) for a dict `vector` shaped like the parameters."""
        missing = [name for name in self.names if name not in vector]
        if missing:
            raise ValueError(f"vector lacks entries for parameters {missing[:5]}.")
        tangent = {name: vector[name].to(self.params[name]) for name in self.names}
        if self.method == "forward_over_reverse":
            _, product = jvp(grad(self.loss_fn), (self.params,), (tangent,))
            product = dict(product)
        else:
            if self._grads is None:
                leaves = {name: tensor.clone().requires_grad_(True) for name, tensor in self.params.items()}
                with torch.enable_grad():
                    loss = self.loss_fn(leaves)
                    self._leaves = [leaves[name] for name in self.names]
                    self._grads = torch.autograd.grad(loss, self._leaves, create_graph=True)
            assert self._leaves is not None
            products = torch.autograd.grad(
                self._grads,
                self._leaves,
                grad_outputs=[tangent[name] for name in self.names],
                retain_graph=True,
                allow_unused=True,
            )
            product = {
                name: torch.zeros_like(tangent[name]) if value is None else value
                for name, value in zip(self.names, products, strict=True)
            }
        if self.shift:
            product = {name: product[name] + self.shift * tangent[name] for name in self.names}
        if self.norm_penalty:
            product = {name: product[name] + self._norm_hvp(name, tangent[name]) for name in self.names}
        return {name: product[name].detach() for name in self.names}

    def _norm_hvp(self, name: str, tangent: torch.Tensor) -> torch.Tensor:
        """norm_penalty * (d^2 ||p|| / dp^2) v for the tensor `name` (0 where ||p|| = 0)."""
        norm = self._norms[name]
        if norm == 0:
            return torch.zeros_like(tangent)
        point = self.params[name]
        radial = torch.sum(point * tangent) / norm**2
        return (self.norm_penalty / norm) * (tangent - radial * point)

    def matvec(self, flat: torch.Tensor) -> torch.Tensor:
        """H v on a flat vector of `numel` entries (parameter order of `params`)."""
        return self.flatten(self.apply(self.unflatten(flat)))


# ---------------------------------------------------------------------------------------- eigen-solvers
class LanczosResult(NamedTuple):
    """Ritz values (m,) ascending, float64, and their Ritz weights (m,) (squared first components of the
    tridiagonal's eigenvectors; they sum to 1: one stochastic Lanczos quadrature sample of the spectral density)."""

    ritz_values: torch.Tensor
    ritz_weights: torch.Tensor


def lanczos(matvec: Matvec, start: torch.Tensor, iterations: int) -> LanczosResult:
    """`iterations` steps of Lanczos with full reorthogonalisation on the symmetric operator `matvec` from the
    vector `start` (normalised here). Stops early when the Krylov space is exhausted (then the Ritz values are
    exact eigenvalues). Memory: the basis, iterations x len(start) entries."""
    if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 1:
        raise ValueError(f"iterations must be a positive int, got {iterations!r}.")
    if start.ndim != 1 or start.numel() == 0:
        raise ValueError(f"start must be a non-empty 1-D vector, got shape {tuple(start.shape)}.")
    norm = start.norm()
    if not torch.isfinite(norm) or norm == 0:
        raise ValueError("start must be a finite, non-zero vector.")
    steps = min(iterations, start.numel())
    basis = torch.empty(steps, start.numel(), dtype=start.dtype, device=start.device)
    alphas: list[float] = []
    betas: list[float] = []
    vector = start / norm
    for step in range(steps):
        basis[step] = vector
        w = matvec(vector)
        alpha = torch.dot(w, vector)
        alphas.append(float(alpha))
        # Full reorthogonalisation against the whole basis, twice ("twice is enough").
        for _ in range(2):
            w = w - basis[: step + 1].T @ (basis[: step + 1] @ w)
        if step == steps - 1:
            break
        beta = w.norm()
        scale = max(abs(a) for a in alphas) + (max(betas) if betas else 0.0)
        if not torch.isfinite(beta):
            raise FloatingPointError("Lanczos produced a non-finite vector (non-finite loss or Hessian).")
        if float(beta) <= 1e-6 * max(scale, 1e-30):
            break  # invariant subspace: the Ritz values are eigenvalues
        betas.append(float(beta))
        vector = w / beta
    size = len(alphas)
    tridiagonal = torch.diag(torch.tensor(alphas, dtype=torch.float64))
    if size > 1:
        off = torch.tensor(betas[: size - 1], dtype=torch.float64)
        tridiagonal += torch.diag(off, 1) + torch.diag(off, -1)
    values, vectors = torch.linalg.eigh(tridiagonal)
    return LanczosResult(values, vectors[0] ** 2)


def power_iteration(
    matvec: Matvec,
    start: torch.Tensor,
    *,
    top_k: int = 1,
    iterations: int = 100,
    tol: float = 1e-3,
    largest: bool = True,
) -> torch.Tensor:
    """The `top_k` algebraically largest (`largest=True`) or smallest eigenvalues of a symmetric operator, by power
    iteration with deflation as PyHessian's `eigenvalues` (which returns the largest in magnitude instead).

    A first power iteration finds the dominant magnitude s; the iteration then runs on H + s I (largest) or
    s I - H (smallest), whose spectra are non-negative, so the dominant eigenvalue is the wanted end. Each
    eigenvalue stops at relative change < tol or after `iterations` products. Returns (top_k,) float64, in
    order (descending for largest, ascending for smallest).
    """
    if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= start.numel():
        raise ValueError(f"top_k must be an int in [1, {start.numel()}], got {top_k!r}.")
    if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 1:
        raise ValueError(f"iterations must be a positive int, got {iterations!r}.")

    def dominant(op: Matvec, found: list[torch.Tensor]) -> tuple[float, torch.Tensor]:
        vector = start.clone()
        for previous in found:
            vector -= torch.dot(vector, previous) * previous
        vector = vector / vector.norm()
        value = 0.0
        for _ in range(iterations):
            w = op(vector)
            for previous in found:
                w -= torch.dot(w, previous) * previous
            new_value = float(torch.dot(w, vector))
            norm = w.norm()
            if norm == 0:
                return 0.0, vector
            vector = w / norm
            converged = abs(new_value - value) <= tol * (abs(value) + 1e-6)
            value = new_value
            if converged:
                break
        return value, vector

    magnitude, _ = dominant(matvec, [])
    shift = abs(magnitude)
    sign = 1.0 if largest else -1.0

    def shifted(vector: torch.Tensor) -> torch.Tensor:
        return sign * matvec(vector) + shift * vector

    found: list[torch.Tensor] = []
    values: list[float] = []
    for _ in range(top_k):
        value, vector = dominant(shifted, found)
        found.append(vector)
        values.append(sign * (value - shift))
    return torch.tensor(values, dtype=torch.float64)


class PowerIterationResult(NamedTuple):
    """`pyhessian_eigenvalues`' output: eigenvalues (k,) float64 in the order found (descending magnitude once
    converged), signs kept; eigenvectors (k, n) unit vectors in the operator's dtype; steps (k,) int64 operator
    products spent on each (`iterations` where the stopping rule never fired)."""

    eigenvalues: torch.Tensor
    eigenvectors: torch.Tensor
    steps: torch.Tensor


def _pyhessian_normalise(vector: torch.Tensor) -> torch.Tensor:
    return vector / (float(vector.norm()) + _PYHESSIAN_EPS)


def pyhessian_eigenvalues(
    matvec: Matvec,
    start: torch.Tensor | Callable[[int], torch.Tensor],
    *,
    top_k: int = 1,
    iterations: int = 100,
    tol: float = 1e-3,
) -> PowerIterationResult:
    """The `top_k` eigenvalues of largest magnitude of a symmetric operator, with their signs, by the power iteration
    with deflation of PyHessian's `hessian.eigenvalues(maxIter=iterations, tol=tol, top_n=top_k)` (Yao et al. 2020),
    the method of Park & Kim's Hessian spectra (xxxnell/how-do-vits-work issue #12).

    Eigenvalue j starts from its own vector, `start(j)` (or row j of a (top_k, n) tensor: PyHessian draws a fresh
    one per eigenvalue), divided by (norm + 1e-6). Each step orthogonalises the vector against the eigenvectors found
    so far (one Gram-Schmidt pass, in order) and divides by (norm + 1e-6), takes w = H v and the estimate <w, v>, and
    moves to w / (||w|| + 1e-6). It stops when an estimate changes by less than tol relative to the previous one,
    |old - new| / (|old| + 1e-6) < tol, and then keeps the previous estimate, as PyHessian does, or after
    `iterations` products. The eigenvector kept is the last normalised product.
    """
    if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 1:
        raise ValueError(f"iterations must be a positive int, got {iterations!r}.")
    if not isinstance(tol, int | float) or not math.isfinite(tol) or tol < 0:
        raise ValueError(f"tol must be a finite float >= 0, got {tol!r}.")
    if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
        raise ValueError(f"top_k must be a positive int, got {top_k!r}.")
    if isinstance(start, torch.Tensor) and (start.ndim != 2 or start.shape[0] < top_k):
        raise ValueError(f"start must be a (top_k, n) tensor or a callable, got shape {tuple(start.shape)}.")

    found: list[torch.Tensor] = []
    values: list[float] = []
    steps: list[int] = []
    for rank in range(top_k):
        vector = start[rank] if isinstance(start, torch.Tensor) else start(rank)
        if vector.ndim != 1 or (found and vector.shape != found[0].shape):
            raise ValueError(
                f"start vector {rank} must be 1-D of the operator's size, got {tuple(vector.shape)}."
            )
        if rank == 0 and not 1 <= top_k <= vector.numel():
            raise ValueError(f"top_k must be an int in [1, {vector.numel()}], got {top_k!r}.")
        vector = _pyhessian_normalise(vector)
        value: float | None = None
        taken = 0
        while taken < iterations:
            taken += 1
            for previous in found:
                vector = vector - torch.dot(vector, previous) * previous
            vector = _pyhessian_normalise(vector)
            product = matvec(vector)
            estimate = float(torch.dot(product, vector))
            if not math.isfinite(estimate):
                raise FloatingPointError(
                    "Power iteration produced a non-finite value (non-finite loss or Hessian)."
                )
            vector = _pyhessian_normalise(product)
            if value is not None and abs(value - estimate) / (abs(value) + _PYHESSIAN_EPS) < tol:
                break
            value = estimate
        assert value is not None
        values.append(value)
        found.append(vector)
        steps.append(taken)
    return PowerIterationResult(
        torch.tensor(values, dtype=torch.float64), torch.stack(found), torch.tensor(steps, dtype=torch.int64)
    )


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


@dataclass
class HessianSpectrumResult(ProbeResult):
    """Per-batch Hessian eigenvalues (Park & Kim 2022, Fig. 1 right / Fig. 4).

    eigenvalues: (batches, top_k) per batch's loss Hessian. Methods "lanczos" and "power": the algebraically
        largest eigenvalues, descending. Method "pyhessian" (Park & Kim's): the largest in magnitude, with their
        signs, in the order power iteration found them (descending magnitude once converged). Column 0 is the
        batch's maximum eigenvalue; Park & Kim's spectrum pools all top_k columns of all batches
        (`pooled_eigenvalues`).
    bottom_eigenvalues: (batches, top_k) the smallest (most negative) eigenvalues, ascending; negative values mark
        non-convex directions (the paper's point about ViTs). NaN for "pyhessian", which does not compute them (its
        negative eigenvalues appear in `eigenvalues` when they are among the largest in magnitude).
    batch_sizes: images per batch. method, iterations, weight_decay: how they were computed.
    density_nodes, density_weights: (batches, vectors * iterations) stochastic Lanczos quadrature nodes and weights
        (weights sum to 1 per batch), when `density=True`; else None.
    regularizer: "half-squared-norm" ((wd / 2) ||w||^2) or "sum-of-norms" (wd sum_p ||p||, Park & Kim's).
    augmentation: the training augmentation recipe applied to each batch (`augmentation.TRAINING_AUGMENTATIONS`), or
        None (the images as given, integer labels).
    tol: the power-iteration stopping tolerance (unused by "lanczos").
    power_steps: (batches, top_k) int64 Hessian-vector products each "pyhessian" eigenvalue took (`iterations`
        where the stopping rule never fired: not converged); None for the other methods.
    """

    eigenvalues: torch.Tensor
    bottom_eigenvalues: torch.Tensor
    batch_sizes: list[int]
    method: str
    iterations: int
    weight_decay: float
    density_nodes: torch.Tensor | None = None
    density_weights: torch.Tensor | None = None
    regularizer: str = "half-squared-norm"
    augmentation: str | None = None
    tol: float = 1e-3
    power_steps: torch.Tensor | None = None

    @classmethod
    def probe_name(cls) -> str:
        return "hessian_spectrum"

    @property
    def max_eigenvalues(self) -> torch.Tensor:
        """(batches,) each batch's largest eigenvalue."""
        return self.eigenvalues[:, 0]

    @property
    def min_eigenvalues(self) -> torch.Tensor:
        """(batches,) each batch's smallest eigenvalue (NaN for method "pyhessian")."""
        return self.bottom_eigenvalues[:, 0]

    @property
    def pooled_eigenvalues(self) -> torch.Tensor:
        """(batches * top_k,) float64: every batch's top_k eigenvalues in one list, batch by batch (NaN padding
        dropped): the sample of Park & Kim's "Hessian max eigenvalue spectrum" (issue #12: the top-5 eigenvalues of
        each mini-batch, gathered)."""
        values = self.eigenvalues.double().reshape(-1)
        return values[~torch.isnan(values)]

    def density(self, grid: torch.Tensor, sigma: float | None = None) -> torch.Tensor:
        """The SLQ spectral density on `grid`, averaged over batches: Gaussian kernels of width `sigma` (default
        1% of the nodes' range) at the nodes, weighted as PyHessian's `get_esd`. Needs `density=True`."""
        if self.density_nodes is None or self.density_weights is None:
            raise ValueError("No density was computed: run hessian_spectrum(..., density=True).")
        nodes = self.density_nodes.double()
        weights = self.density_weights.double()
        if sigma is None:
            finite = nodes[~torch.isnan(nodes)]
            sigma = max(float(finite.max() - finite.min()) * 0.01, 1e-12)
        grid = grid.double().to(nodes.device)
        kernel = torch.exp(-((grid[:, None, None] - nodes[None]) ** 2) / (2 * sigma**2))
        kernel = kernel / (sigma * math.sqrt(2 * math.pi))
        terms = torch.where(torch.isnan(nodes)[None], 0.0, kernel * weights[None])  # NaN: padding
        return terms.sum(-1).mean(-1)

    def plot(self, ax: Axes | None = None, kind: Literal["max", "density"] = "max") -> Axes:
        """kind "max": histogram of per-batch max (and min) eigenvalues, as the paper's Fig. 1 (right) / Fig. 4;
        kind "density": the SLQ eigenvalue density on a log scale (PyHessian's plot)."""
        ax = new_axes(ax)
        if kind == "density":
            nodes = self.density_nodes
            if nodes is None:
                raise ValueError("No density was computed: run hessian_spectrum(..., density=True).")
            finite = nodes[~torch.isnan(nodes)]
            low, high = float(finite.min()), float(finite.max())
            pad = 0.05 * (high - low) + 1e-12
            grid = torch.linspace(low - pad, high + pad, 400, dtype=torch.float64)
            values = self.density(grid).cpu().numpy()
            ax.semilogy(grid.numpy(), np.maximum(values, 1e-12))
            ax.set_xlabel("eigenvalue")
            ax.set_ylabel("density")
            return ax
        if kind != "max":
            raise ValueError(f"kind must be 'max' or 'density', got {kind!r}.")
        if self.method == "pyhessian":
            pooled = self.pooled_eigenvalues.cpu().numpy()
            bins = max(5, min(50, len(pooled)))
            ax.hist(
                pooled,
                bins=bins,
                density=True,
                alpha=0.7,
                label=f"top-{self.eigenvalues.shape[1]} eigenvalues",
            )
        else:
            maxima = self.max_eigenvalues.double().cpu().numpy()
            minima = self.min_eigenvalues.double().cpu().numpy()
            bins = max(5, min(50, len(maxima)))
            ax.hist(maxima, bins=bins, density=True, alpha=0.7, label="max eigenvalue")
            ax.hist(minima, bins=bins, density=True, alpha=0.7, label="min eigenvalue")
        ax.axvline(0.0, color="gray", linewidth=0.8)
        ax.set_xlabel("Hessian eigenvalue (per batch)")
        ax.set_ylabel("density")
        ax.legend(fontsize="small")
        return ax


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
    if method == "lanczos" and iterations < top_k:
        raise ValueError(f"Lanczos needs iterations >= top_k, got iterations={iterations}, top_k={top_k}.")
    if method != "lanczos" and density:
        raise ValueError("density=True needs method='lanczos' (stochastic Lanczos quadrature).")
    if not isinstance(weight_decay, int | float) or not math.isfinite(weight_decay) or weight_decay < 0:
        raise ValueError(f"weight_decay must be a finite float >= 0, got {weight_decay!r}.")
    if regularizer not in REGULARIZERS:
        raise ValueError(f"regularizer must be one of {REGULARIZERS}, got {regularizer!r}.")
    augmentation = check_augmentation(augmentation)
    if hvp not in _HVP_METHODS:
        raise ValueError(f"hvp must be one of {_HVP_METHODS}, got {hvp!r}.")
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


__all__ = [
    "EIGEN_METHODS",
    "REGULARIZERS",
    "HessianOperator",
    "HessianSpectrumResult",
    "LanczosResult",
    "PowerIterationResult",
    "classifier_loss",
    "hessian_spectrum",
    "hessian_vector_product",
    "lanczos",
    "power_iteration",
    "pyhessian_eigenvalues",
]
