# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The linear algebra of `hessian_spectrum`: Hessian-vector products of a loss over a dict of parameters
(`hessian_vector_product`, `HessianOperator`) and the eigenvalue methods that use them (`lanczos`,
`power_iteration`, PyHessian's `pyhessian_eigenvalues`). `hf_vitrobust.probes.hessian` re-exports every name.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Literal, NamedTuple

import torch
from torch.func import grad, jvp

HVPMethod = Literal["forward_over_reverse", "reverse_over_reverse"]
HVP_METHODS = ("forward_over_reverse", "reverse_over_reverse")

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
        if method not in HVP_METHODS:
            raise ValueError(f"method must be one of {HVP_METHODS}, got {method!r}.")
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


__all__ = [
    "HVPMethod",
    "HessianOperator",
    "LanczosResult",
    "Matvec",
    "Params",
    "PowerIterationResult",
    "hessian_vector_product",
    "lanczos",
    "power_iteration",
    "pyhessian_eigenvalues",
]
