# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The type-II 2D discrete cosine transform, in torch, for the spectra of adversarial perturbations.

Paul & Chen (AAAI 2022, the DeepFool energy-spectrum figure, following Ortiz-Jimenez et al., NeurIPS 2020) show
where the energy of DeepFool perturbations lies in the 2D DCT basis: ViTs' minimal perturbations spread over more
frequencies than CNNs'. The transform is two matrix products, `D_H @ x @ D_W^T`, so it runs batched on any device
and is differentiable. With the orthonormal DCT-II matrix D (the default, `norm="ortho"`) it equals
`scipy.fft.dctn(x, type=2, norm="ortho", axes=(-2, -1))` and Parseval holds: the energy of a perturbation (its
squared L2 norm) is the sum of its squared DCT coefficients. With `norm=None` it is the unnormalised DCT-II of
scipy and of `torch_dct.dct_2d(x)` (the package Paul & Chen's notebook uses), X_k = 2 sum_i x_i cos(pi (2i + 1) k
/ (2N)) along each axis.

The two normalisations do not differ by a constant. Along an axis of length N the orthonormal coefficient is the
unnormalised one times sqrt(1 / (2N)) for k >= 1 but times sqrt(1 / (4N)) for k = 0. In 2D (H, W) the squared
orthonormal coefficients are therefore the squared unnormalised ones divided by 4HW everywhere except in row 0
and column 0, where each zero index divides by a further 2: by 8HW on row 0 and on column 0 and by 16HW at the DC
coefficient (0, 0). In decibels the unnormalised spectrum is the orthonormal one plus 10 log10(4HW), plus
10 log10(2) = 3.01 dB more on row 0 and on column 0 and 6.02 dB more at (0, 0).
"""

from __future__ import annotations

import math
from typing import Literal

import torch

DCTNorm = Literal["ortho"] | None
_NORMS = ("ortho", None)

Spectrum = Literal["orthonormal", "paul-chen-notebook"]
SPECTRA: tuple[str, ...] = ("orthonormal", "paul-chen-notebook")
# Paul & Chen's notebook feeds its ViT and BiT inputs normalised with mean = std = 0.5, i.e. in [-1, 1]
# (foolbox bounds (-1, 1)): a perturbation d of [0, 1] pixels is the perturbation d / 0.5 = 2 d of their inputs.
NOTEBOOK_INPUT_SCALE = 2.0


def _check_norm(norm: object) -> None:
    if norm not in _NORMS:
        raise ValueError(f"norm must be one of {_NORMS}, got {norm!r}.")


def check_spectrum(spectrum: object) -> None:
    """Raise ValueError, naming the valid values, unless `spectrum` is one of `SPECTRA`."""
    if not isinstance(spectrum, str) or spectrum not in SPECTRA:
        raise ValueError(f"spectrum must be one of {SPECTRA}, got {spectrum!r}.")


def dct_matrix(
    size: int,
    *,
    dtype: torch.dtype = torch.float32,
    device: torch.device | str | None = None,
    norm: DCTNorm = "ortho",
) -> torch.Tensor:
    """The DCT-II matrix D (size, size): `D @ v` is the DCT of a vector v.

    norm="ortho": D[k, i] = s_k cos(pi (2i + 1) k / (2 size)), with s_0 = sqrt(1 / size) and s_k = sqrt(2 / size)
    otherwise, so D is orthogonal (D @ D.T = I) and D.T is the inverse transform (the orthonormal DCT-III).
    norm=None: D[k, i] = 2 cos(pi (2i + 1) k / (2 size)) for every k (scipy's and torch_dct's unnormalised DCT-II).
    """
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ValueError(f"size must be a positive int, got {size!r}.")
    _check_norm(norm)
    k = torch.arange(size, dtype=torch.float64).unsqueeze(1)
    i = torch.arange(size, dtype=torch.float64).unsqueeze(0)
    cosines = torch.cos(math.pi * (2.0 * i + 1.0) * k / (2.0 * size))
    if norm is None:
        return (2.0 * cosines).to(dtype=dtype, device=device)
    matrix = cosines * math.sqrt(2.0 / size)
    matrix[0] /= math.sqrt(2.0)
    return matrix.to(dtype=dtype, device=device)


def dct2(x: torch.Tensor, *, norm: DCTNorm = "ortho") -> torch.Tensor:
    """The 2D DCT-II over the last two dimensions of `x` (..., H, W), same shape and dtype.

    norm: "ortho" (orthonormal, the default) or None (unnormalised, as `torch_dct.dct_2d(x)`); see `dct_matrix`.
    Computed in float64 for float64 input and in float32 otherwise.
    """
    if not isinstance(x, torch.Tensor) or x.ndim < 2:
        raise ValueError("dct2 needs a tensor with at least 2 dimensions (..., H, W).")
    _check_norm(norm)
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    rows = dct_matrix(x.shape[-2], dtype=work, device=x.device, norm=norm)
    cols = dct_matrix(x.shape[-1], dtype=work, device=x.device, norm=norm)
    return (rows @ x.to(work) @ cols.T).to(x.dtype if x.is_floating_point() else work)


def idct2(coefficients: torch.Tensor) -> torch.Tensor:
    """The inverse of the orthonormal `dct2` (the orthonormal 2D DCT-III): `idct2(dct2(x)) == x`."""
    if not isinstance(coefficients, torch.Tensor) or coefficients.ndim < 2:
        raise ValueError("idct2 needs a tensor with at least 2 dimensions (..., H, W).")
    work = torch.float64 if coefficients.dtype == torch.float64 else torch.float32
    rows = dct_matrix(coefficients.shape[-2], dtype=work, device=coefficients.device)
    cols = dct_matrix(coefficients.shape[-1], dtype=work, device=coefficients.device)
    result = rows.T @ coefficients.to(work) @ cols
    return result.to(coefficients.dtype if coefficients.is_floating_point() else work)


def _check_perturbations(perturbations: object) -> None:
    if not isinstance(perturbations, torch.Tensor) or perturbations.ndim != 4:
        raise ValueError("perturbations must be a (N, C, H, W) tensor.")


def _squared_coefficients(perturbations: torch.Tensor, spectrum: str) -> torch.Tensor:
    """Squared float64 DCT coefficients (N, C, H, W) of [0, 1]-pixel perturbations under `spectrum`."""
    if spectrum == "orthonormal":
        return dct2(perturbations.double()).square()
    return dct2(NOTEBOOK_INPUT_SCALE * perturbations.double(), norm=None).square()


def dct_energy_sum(perturbations: torch.Tensor, *, spectrum: Spectrum = "orthonormal") -> torch.Tensor:
    """Energy of perturbations (N, C, H, W) in the 2D DCT basis, summed over images and channels: (H, W) float64.

    What `dct_energy_db` averages, as a sum, so that chunks of images can be added up before the mean; N = 0
    gives zeros. spectrum: as `dct_energy_db`.
    """
    _check_perturbations(perturbations)
    check_spectrum(spectrum)
    return _squared_coefficients(perturbations, spectrum).sum(dim=(0, 1))


def dct_energy_db(perturbations: torch.Tensor, *, spectrum: Spectrum = "orthonormal") -> torch.Tensor:
    """Average energy of [0, 1]-pixel perturbations (N, C, H, W) in the 2D DCT basis, in decibels (H, W).

    10 log10 of the squared DCT coefficients, summed over channels and averaged over images: the quantity of Paul
    & Chen's DeepFool spectrum figure (their notebook `analysis/spectral_decomposition/Disc_Regions.ipynb`,
    `10*np.log10((torch_dct.dct_2d(deltas) ** 2).sum(dim=1).mean(dim=0))`). Coefficients no perturbation touches
    give -inf.

    spectrum: "orthonormal" (the default): the orthonormal DCT of the [0, 1]-pixel perturbations (Parseval: the
        spectrum sums to the mean squared L2 norm). "paul-chen-notebook": the notebook's unnormalised DCT
        (`torch_dct.dct_2d` with norm=None) of the perturbations in their models' [-1, 1] input space, i.e. of
        2 x the pixel perturbations. The notebook spectrum is the orthonormal one plus 10 log10(16 HW) dB, plus
        a further 3.01 dB on row 0 and on column 0 and 6.02 dB at (0, 0) (see the module docstring): not a
        constant shift.
    """
    _check_perturbations(perturbations)
    check_spectrum(spectrum)
    if perturbations.shape[0] == 0:
        raise ValueError("No perturbations given.")
    energy = _squared_coefficients(perturbations, spectrum).sum(dim=1).mean(dim=0)
    return 10.0 * torch.log10(energy)


#: The low-frequency band of `low_frequency_share`: the lowest quarter of the DCT frequencies along each axis.
LOW_BAND_FRACTION = 0.25


def low_band_size(size: int, fraction: float = LOW_BAND_FRACTION) -> int:
    """How many of an axis' `size` DCT frequencies the low band holds: ceil(fraction x size), at least 1."""
    return max(1, math.ceil(fraction * size))


def low_frequency_share(perturbations: torch.Tensor, *, fraction: float = LOW_BAND_FRACTION) -> torch.Tensor:
    """The share of each perturbation's energy in low frequencies: (N,) float64 in [0, 1], NaN for a zero one.

    The squared orthonormal 2D DCT coefficients (k, l) of perturbations (N, C, H, W) with k < `low_band_size(H)` and
    l < `low_band_size(W)` (the lowest quarter of the frequencies along each axis by default), summed over channels,
    divided by the sum over every coefficient, which is the perturbation's squared L2 norm (Parseval). Paul & Chen's
    DeepFool figure shows CNN perturbations concentrated at the low frequencies of the DCT and a ViT's spread over
    the spectrum, as a picture only: this band is ours, one number per image that a paired comparison can test.
    """
    _check_perturbations(perturbations)
    if isinstance(fraction, bool) or not isinstance(fraction, int | float) or not 0 < fraction <= 1:
        raise ValueError(f"fraction must be a number in (0, 1], got {fraction!r}.")
    energy = dct2(perturbations.double()).square().sum(dim=1)
    rows, cols = low_band_size(energy.shape[-2], fraction), low_band_size(energy.shape[-1], fraction)
    low = energy[:, :rows, :cols].sum(dim=(1, 2))
    total = energy.sum(dim=(1, 2))
    return torch.where(total > 0, low / total, torch.full_like(total, math.nan))


__all__ = [
    "LOW_BAND_FRACTION",
    "NOTEBOOK_INPUT_SCALE",
    "SPECTRA",
    "Spectrum",
    "check_spectrum",
    "dct2",
    "dct_energy_db",
    "dct_energy_sum",
    "dct_matrix",
    "idct2",
    "low_band_size",
    "low_frequency_share",
]
