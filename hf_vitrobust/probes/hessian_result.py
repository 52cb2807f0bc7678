# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""`HessianSpectrumResult`, the result of the Hessian probe (`hessian.py`: `hessian_spectrum`), and its figures: the
histogram of each mini-batch's largest and smallest eigenvalues (`draw_hessian_spectrum`, Park & Kim Fig. 1 right /
Fig. 4) and the stochastic Lanczos quadrature eigenvalue density (`draw_hessian_density`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np
import torch

from .base import ProbeResult, new_axes
from .display import SeriesData, as_float_array, colors, new_figure

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


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
        """kind "max": histogram of per-batch max (and min) eigenvalues (`draw_hessian_spectrum`, the report's
        figure), as the paper's Fig. 1 (right) / Fig. 4; kind "density": the SLQ eigenvalue density on a log scale
        (`draw_hessian_density`, PyHessian's plot)."""
        ax = new_axes(ax)
        if kind not in ("max", "density"):
            raise ValueError(f"kind must be 'max' or 'density', got {kind!r}.")
        if kind == "density" and self.density_nodes is None:
            raise ValueError("No density was computed: run hessian_spectrum(..., density=True).")
        series = {
            "batches": {
                "method": self.method,
                "eigenvalues": self.eigenvalues.detach().double().cpu().numpy(),
                "bottom_eigenvalues": self.bottom_eigenvalues.detach().double().cpu().numpy(),
                "density_nodes": None
                if self.density_nodes is None
                else self.density_nodes.double().cpu().numpy(),
                "density_weights": (
                    None if self.density_weights is None else self.density_weights.double().cpu().numpy()
                ),
            }
        }
        (draw_hessian_density if kind == "density" else draw_hessian_spectrum)(series, ax=ax)
        return ax


def draw_hessian_spectrum(data: SeriesData, ax: Axes | None = None) -> Figure | None:
    """Histograms of each model's per-batch largest (filled) and smallest (hatched) eigenvalues; pyhessian's
    top-k of every batch are pooled (Park & Kim's issue #12). On `ax`: one model."""
    spectra = {}
    for key, probe in data.items():
        top = as_float_array(probe.get("eigenvalues"))
        bottom = as_float_array(probe.get("bottom_eigenvalues"))
        if probe.get("method") == "pyhessian":  # Park & Kim pool the top-k of every batch (their issue #12)
            top = top.ravel()
        else:
            top = top[:, 0] if top.ndim == 2 and top.shape[1] else top.ravel()
        bottom = bottom[:, 0] if bottom.ndim == 2 and bottom.shape[1] else bottom.ravel()
        top, bottom = top[np.isfinite(top)], bottom[np.isfinite(bottom)]
        if top.size or bottom.size:
            spectra[key] = (top, bottom)
    if not spectra:
        return None
    if ax is None:
        ax = new_figure(5.5, 3.8).add_subplot()
    everything = np.concatenate([np.concatenate(pair) for pair in spectra.values()])
    low, high = float(everything.min()), float(everything.max())
    pad = 0.05 * (high - low) + 1e-9
    bins = np.linspace(low - pad, high + pad, max(6, min(40, everything.size)))
    for (key, (top, bottom)), color in zip(spectra.items(), colors(len(spectra)), strict=True):
        if top.size:
            ax.hist(top, bins=bins, alpha=0.55, color=color, label=f"{key} max")
        if bottom.size:
            ax.hist(
                bottom, bins=bins, alpha=0.9, color=color, histtype="step", hatch="//", label=f"{key} min"
            )
    if low < 0:
        ax.axvspan(low - pad, 0.0, color="red", alpha=0.08, linewidth=0)
    ax.axvline(0.0, color="red", linewidth=0.8)
    ax.set_xlabel("Hessian eigenvalue (per mini-batch)")
    ax.set_ylabel("count")
    ax.set_title("Hessian eigenvalue spectrum")
    ax.legend(fontsize="x-small")
    return ax.figure


def _slq_density(nodes: np.ndarray, weights: np.ndarray, points: int = 400) -> tuple[np.ndarray, np.ndarray]:
    """The batch-averaged SLQ density on a grid, through `HessianSpectrumResult.density` (NaN nodes = padding)."""
    finite = nodes[np.isfinite(nodes)]
    low, high = float(finite.min()), float(finite.max())
    pad = 0.05 * (high - low) + 1e-12
    grid = torch.linspace(low - pad, high + pad, points, dtype=torch.float64)
    result = HessianSpectrumResult(
        eigenvalues=torch.zeros(nodes.shape[0], 1),
        bottom_eigenvalues=torch.zeros(nodes.shape[0], 1),
        batch_sizes=[],
        method="",
        iterations=0,
        weight_decay=0.0,
        density_nodes=torch.from_numpy(nodes),
        density_weights=torch.from_numpy(np.nan_to_num(weights)),
    )
    return grid.numpy(), result.density(grid).numpy()


def draw_hessian_density(data: SeriesData, ax: Axes | None = None) -> Figure | None:
    """Each model's SLQ eigenvalue density on a log scale (on `ax`: one model)."""
    densities = {}
    for key, probe in data.items():
        nodes = as_float_array(probe.get("density_nodes"))
        weights = as_float_array(probe.get("density_weights"))
        if nodes.ndim == 2 and nodes.shape == weights.shape and np.isfinite(nodes).any():
            densities[key] = (nodes, weights)
    if not densities:
        return None
    if ax is None:
        ax = new_figure(5.5, 3.8).add_subplot()
    for (key, (nodes, weights)), color in zip(densities.items(), colors(len(densities)), strict=True):
        grid, values = _slq_density(nodes, weights)
        floor = max(float(values.max()) * 1e-6, 1e-300)
        ax.semilogy(grid, np.maximum(values, floor), label=key, color=color)
    ax.axvline(0.0, color="red", linewidth=0.8)
    ax.set_xlabel("eigenvalue")
    ax.set_ylabel("density")
    ax.set_title("Hessian eigenvalue density")
    ax.legend(fontsize="small")
    return ax.figure


__all__ = ["HessianSpectrumResult", "draw_hessian_density", "draw_hessian_spectrum"]
