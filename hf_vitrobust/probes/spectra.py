# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The orthonormal type-II 2D discrete cosine transform, in torch, for the spectra of adversarial perturbations.

Paul & Chen (AAAI 2022, the DeepFool energy-spectrum figure, following Ortiz-Jimenez et al., NeurIPS 2020) show
where the energy of DeepFool perturbations lies in the 2D DCT basis: ViTs' minimal perturbations spread over more
frequencies than CNNs'. The transform is two matrix products, `D_H @ x @ D_W^T`, with D the orthonormal DCT-II
matrix, so it runs batched on any device, is differentiable, and equals `scipy.fft.dctn(x, type=2, norm="ortho",
axes=(-2, -1))`. Orthonormality makes Parseval hold: the energy of a perturbation (its squared L2 norm) is the sum
of its squared DCT coefficients.
"""

from __future__ import annotations

import math

import torch


def dct_matrix(
    size: int, *, dtype: torch.dtype = torch.float32, device: torch.device | str | None = None
) -> torch.Tensor:
    """The orthonormal DCT-II matrix D (size, size): `D @ v` is the DCT of a vector v.

    D[k, i] = s_k cos(pi (2i + 1) k / (2 size)), with s_0 = sqrt(1 / size) and s_k = sqrt(2 / size) otherwise,
    so D is orthogonal (D @ D.T = I) and D.T is the inverse transform (the orthonormal DCT-III).
    """
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ValueError(f"size must be a positive int, got {size!r}.")
    k = torch.arange(size, dtype=torch.float64).unsqueeze(1)
    i = torch.arange(size, dtype=torch.float64).unsqueeze(0)
    matrix = torch.cos(math.pi * (2.0 * i + 1.0) * k / (2.0 * size)) * math.sqrt(2.0 / size)
    matrix[0] /= math.sqrt(2.0)
    return matrix.to(dtype=dtype, device=device)


def dct2(x: torch.Tensor) -> torch.Tensor:
    """The orthonormal 2D DCT-II over the last two dimensions of `x` (..., H, W), same shape and dtype.

    Computed in float64 for float64 input and in float32 otherwise.
    """
    if not isinstance(x, torch.Tensor) or x.ndim < 2:
        raise ValueError("dct2 needs a tensor with at least 2 dimensions (..., H, W).")
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    rows = dct_matrix(x.shape[-2], dtype=work, device=x.device)
    cols = dct_matrix(x.shape[-1], dtype=work, device=x.device)
    return (rows @ x.to(work) @ cols.T).to(x.dtype if x.is_floating_point() else work)


def idct2(coefficients: torch.Tensor) -> torch.Tensor:
    """The inverse of `dct2` (the orthonormal 2D DCT-III): `idct2(dct2(x)) == x`."""
    if not isinstance(coefficients, torch.Tensor) or coefficients.ndim < 2:
        raise ValueError("idct2 needs a tensor with at least 2 dimensions (..., H, W).")
    work = torch.float64 if coefficients.dtype == torch.float64 else torch.float32
    rows = dct_matrix(coefficients.shape[-2], dtype=work, device=coefficients.device)
    cols = dct_matrix(coefficients.shape[-1], dtype=work, device=coefficients.device)
    result = rows.T @ coefficients.to(work) @ cols
    return result.to(coefficients.dtype if coefficients.is_floating_point() else work)


def dct_energy_db(perturbations: torch.Tensor) -> torch.Tensor:
    """Average energy of perturbations (N, C, H, W) in the 2D DCT basis, in decibels (H, W).

    10 log10 of the squared DCT coefficients, summed over channels and averaged over images: the quantity of Paul
    & Chen's DeepFool spectrum figure (their notebook `analysis/spectral_decomposition/Disc_Regions.ipynb`), with
    the orthonormal DCT (theirs was unnormalised, which only shifts every value by a constant). Coefficients no
    perturbation touches give -inf.
    """
    if not isinstance(perturbations, torch.Tensor) or perturbations.ndim != 4:
        raise ValueError("perturbations must be a (N, C, H, W) tensor.")
    if perturbations.shape[0] == 0:
        raise ValueError("No perturbations given.")
    energy = dct2(perturbations.double()).square().sum(dim=1).mean(dim=0)
    return 10.0 * torch.log10(energy)


__all__ = ["dct2", "dct_energy_db", "dct_matrix", "idct2"]
