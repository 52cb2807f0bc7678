# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The noise corruptions of ImageNet-C (Hendrycks & Dietterich, ICLR 2019): gaussian, shot, impulse and speckle.

Batched re-implementations of the reference functions (the `imagecorruptions` package for the "imagenet" profile,
`make_cifar_c.py` of hendrycks/robustness for the "cifar" profile). The reference draws its noise with NumPy's
global generator; here the same distributions come from the counter-based streams of `randomness`, so that an
image's noise depends only on (seed, its sample id), never on the batch. Poisson variates (shot noise) are sampled
exactly: by inversion for small rates and by Hörmann's transformed rejection (PTRS) for the others.
"""

import torch

from .base import register_corruption
from .randomness import normal, uniform, uniform_at

# Standard deviation of the additive noise. imagenet: imagecorruptions/corruptions.py `gaussian_noise`;
# cifar: ImageNet-C/create_c/make_cifar_c.py `gaussian_noise`.
GAUSSIAN_NOISE: dict[str, tuple[float, ...]] = {
    "imagenet": (0.08, 0.12, 0.18, 0.26, 0.38),
    "cifar": (0.04, 0.06, 0.08, 0.09, 0.10),
}

# Photon count scale: the output is Poisson(x * c) / c. imagenet: imagecorruptions/corruptions.py `shot_noise`;
# cifar: make_cifar_c.py `shot_noise`.
SHOT_NOISE: dict[str, tuple[float, ...]] = {
    "imagenet": (60, 25, 12, 5, 3),
    "cifar": (500, 250, 100, 75, 50),
}

# Fraction of values replaced by salt (1) or pepper (0). imagenet: imagecorruptions/corruptions.py
# `impulse_noise`; cifar: make_cifar_c.py `impulse_noise`.
IMPULSE_NOISE: dict[str, tuple[float, ...]] = {
    "imagenet": (0.03, 0.06, 0.09, 0.17, 0.27),
    "cifar": (0.01, 0.02, 0.03, 0.05, 0.07),
}

# Standard deviation of the multiplicative noise. imagenet: imagecorruptions/corruptions.py `speckle_noise`;
# cifar: make_cifar_c.py `speckle_noise`.
SPECKLE_NOISE: dict[str, tuple[float, ...]] = {
    "imagenet": (0.15, 0.2, 0.35, 0.45, 0.6),
    "cifar": (0.06, 0.1, 0.12, 0.16, 0.2),
}

# Rates below this are sampled by inversion, the others by PTRS (the split NumPy uses; PTRS needs rate >= 10).
PTRS_MIN_RATE = 10.0
# Inversion steps: for rates < 10, P(X > 64) < 1e-30, far below the smallest uniform gap (2**-32), so the CDF
# walk always ends before this many steps.
MAX_INVERSION_STEPS = 64
# PTRS rounds run while some element is still rejected (one round accepts > 90% of proposals for rates >= 10).
MAX_PTRS_ROUNDS = 64


def _poisson_by_inversion(rates: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """The smallest k with CDF(k) >= u, by a vectorised walk over k (1-D, rates < 10, float64).

    Each step works only on the elements whose walk is still going, so the cost follows the counts drawn.
    """
    counts = torch.zeros_like(rates)
    probability = torch.exp(-rates)
    cdf = probability.clone()
    index = torch.nonzero(u > cdf).squeeze(1)
    rates, u, probability, cdf = rates[index], u[index], probability[index], cdf[index]
    for k in range(1, MAX_INVERSION_STEPS + 1):
        if index.numel() == 0:
            break
        counts[index] = float(k)
        probability = probability * rates / k
        cdf = cdf + probability
        going = torch.nonzero(u > cdf).squeeze(1)
        index, rates, u, probability, cdf = (
            index[going],
            rates[going],
            u[going],
            probability[going],
            cdf[going],
        )
    return counts


def _ptrs_round(rates: torch.Tensor, u: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """One proposal of PTRS (Hörmann 1993, "The transformed rejection method for generating Poisson random
    variables"): returns (k, accepted), rates >= 10, float64."""
    sqrt_rate = torch.sqrt(rates)
    b = 0.931 + 2.53 * sqrt_rate
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2.0)
    u = u - 0.5
    us = 0.5 - u.abs()
    k = torch.floor((2.0 * a / us + b) * u + rates + 0.43)
    # The squeeze: a large central region is accepted without evaluating the density.
    quick = (us >= 0.07) & (v <= v_r)
    rejected = (k < 0) | ((us < 0.013) & (v > us))
    safe_k = k.clamp(min=0.0)
    log_density = -rates + safe_k * torch.log(rates) - torch.lgamma(safe_k + 1.0)
    accepted = torch.log(v) + torch.log(inv_alpha) - torch.log(a / (us * us) + b) <= log_density
    return k, quick | (~rejected & accepted)


def sample_poisson(rates: torch.Tensor, seed: int, sample_ids: torch.Tensor, stream: str) -> torch.Tensor:
    """Exact Poisson variates (float64, same shape as `rates`, (N, ...)) from counter-based uniform streams.

    Element j of sample i depends only on (seed, sample_ids[i], stream, j, its rate): rates below 10 by inversion
    of one uniform, the others by PTRS with two fresh uniforms per round (stream names per round). Both work on
    flat index lists of the elements still pending, drawing uniforms only for them (`uniform_at`).
    """
    flat_rates = rates.to(torch.float64).reshape(-1)
    per_sample = flat_rates.numel() // rates.shape[0]
    counts = torch.zeros_like(flat_rates)

    def draw(name: str, index: torch.Tensor) -> torch.Tensor:
        sample_index, element_index = index // per_sample, index % per_sample
        return uniform_at(seed, sample_ids, f"{stream}/{name}", sample_index, element_index, torch.float64)

    small = torch.nonzero(flat_rates < PTRS_MIN_RATE).squeeze(1)
    if small.numel():
        counts[small] = _poisson_by_inversion(flat_rates[small], draw("inversion", small))
    pending = torch.nonzero(flat_rates >= PTRS_MIN_RATE).squeeze(1)
    for round_index in range(MAX_PTRS_ROUNDS):
        if pending.numel() == 0:
            return counts.view(rates.shape)
        u, v = draw(f"ptrs-{round_index}/u", pending), draw(f"ptrs-{round_index}/v", pending)
        k, accepted = _ptrs_round(flat_rates[pending], u, v)
        counts[pending[accepted]] = k[accepted]
        pending = pending[~accepted]
    raise RuntimeError(f"Poisson sampling did not finish in {MAX_PTRS_ROUNDS} rounds.")  # p < 0.1 ** 64


@register_corruption("gaussian_noise")
def gaussian_noise(
    images: torch.Tensor, severity: int, profile: str, seed: int, sample_ids: torch.Tensor
) -> torch.Tensor:
    """Additive white noise: `clip(x + N(0, c), 0, 1)`, independent per pixel and channel."""
    scale = GAUSSIAN_NOISE[profile][severity - 1]
    noise = normal(seed, sample_ids, "gaussian_noise/noise", tuple(images.shape[1:]), images.dtype)
    return (images + scale * noise).clamp(0.0, 1.0)


@register_corruption("shot_noise")
def shot_noise(
    images: torch.Tensor, severity: int, profile: str, seed: int, sample_ids: torch.Tensor
) -> torch.Tensor:
    """Photon noise: `clip(Poisson(x * c) / c, 0, 1)`, independent per pixel and channel."""
    scale = float(SHOT_NOISE[profile][severity - 1])
    counts = sample_poisson(images.to(torch.float64) * scale, seed, sample_ids, "shot_noise/poisson")
    return (counts / scale).clamp(0.0, 1.0).to(images.dtype)


@register_corruption("impulse_noise")
def impulse_noise(
    images: torch.Tensor, severity: int, profile: str, seed: int, sample_ids: torch.Tensor
) -> torch.Tensor:
    """Salt-and-pepper noise, as skimage's `random_noise(mode="s&p", amount=c)` (salt_vs_pepper 0.5).

    Each value (pixel and channel alike) is flipped with probability c; a flipped value becomes salt (1) or
    pepper (0) with probability 0.5 each, independently.
    """
    amount = IMPULSE_NOISE[profile][severity - 1]
    shape = tuple(images.shape[1:])
    flipped = uniform(seed, sample_ids, "impulse_noise/flip", shape, torch.float64) <= amount
    salted = uniform(seed, sample_ids, "impulse_noise/salt", shape, torch.float64) <= 0.5
    impulses = salted.to(images.dtype)
    return torch.where(flipped, impulses, images)


@register_corruption("speckle_noise")
def speckle_noise(
    images: torch.Tensor, severity: int, profile: str, seed: int, sample_ids: torch.Tensor
) -> torch.Tensor:
    """Multiplicative noise: `clip(x + x * N(0, c), 0, 1)`, independent per pixel and channel."""
    scale = SPECKLE_NOISE[profile][severity - 1]
    noise = normal(seed, sample_ids, "speckle_noise/noise", tuple(images.shape[1:]), images.dtype)
    return (images + images * (scale * noise)).clamp(0.0, 1.0)
