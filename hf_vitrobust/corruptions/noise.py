# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The noise corruptions of ImageNet-C (Hendrycks & Dietterich, ICLR 2019): gaussian, shot, impulse and speckle.

Batched re-implementations of the reference functions (the `imagecorruptions` package for the "imagenet" profile,
`make_cifar_c.py` of hendrycks/robustness for the "cifar" profile). The reference draws its noise with NumPy's
global generator; here the same distributions come from the counter-based streams of `randomness`, so that an
image's noise depends only on (seed, its sample id), never on the batch. Poisson variates (shot noise) are sampled
exactly. Intensities on the 8-bit grid, which is every pixel of a decoded photo, are sampled by inversion through a
table of the 256 levels' CDFs (`photon_counts`). Any other rate is sampled by a walk over the CDF below rate 10 and
by Hörmann's transformed rejection (PTRS) above it (`sample_poisson`).
"""

import functools
from typing import NamedTuple

import torch

from .base import from_unit_float, register_corruption, to_unit_float
from .randomness import (
    bits_at_most,
    normal,
    ordered_below,
    random_bits_at,
    random_bits_int32,
    signed_order_,
    uniform_at,
)

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

# The stream of shot noise's Poisson draws (its table inversion draws from SHOT_STREAM + "/inversion").
SHOT_STREAM = "shot_noise/poisson"
# Rates below this are sampled by inversion, the others by PTRS (the split NumPy uses; PTRS needs rate >= 10).
PTRS_MIN_RATE = 10.0
# Inversion steps: for rates < 10, P(X > 64) < 1e-30, far below the smallest uniform gap (2**-32), so the CDF
# walk always ends before this many steps.
MAX_INVERSION_STEPS = 64
# PTRS rounds run while some element is still rejected (one round accepts > 90% of proposals for rates >= 10).
MAX_PTRS_ROUNDS = 64

# 8-bit images have 256 intensity levels, k / 255; so Poisson(x * photons) has only 256 distinct rates. Two
# roundings of them occur: k / 255 computed in float32 (uint8 through `to_unit_float`, also when later cast to
# float64) and in float64 (the ImageNet-P sequences' conversion). The inversion table has a block of rows for each.
EIGHT_BIT_LEVELS = 256
GRID_DTYPES = (torch.float32, torch.float64)
# The table inversion starts its search for a uniform in one of 2**GUIDE_BITS buckets per level (a guide table,
# Chen & Asau 1974), indexed by the uniform's top bits; a few comparisons then finish it.
GUIDE_BITS = 10
# Table inversion needs exp(-rate) to be a normal float64 (rate < 708); larger photon counts use `sample_poisson`.
MAX_TABLE_RATE = 700.0
# Terms of a table row: the CDF of rates <= 700 passes the largest uniform, 1 - 2**-33, within about 900 terms.
MAX_TABLE_TERMS = 2048
# The largest 32-bit integer a uniform is drawn from (`randomness.random_bits`).
_LARGEST_BITS = (1 << 32) - 1


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


def _sample_poisson_at(
    rates: torch.Tensor,
    index: torch.Tensor,
    per_sample: int,
    seed: int,
    sample_ids: torch.Tensor,
    stream: str,
) -> torch.Tensor:
    """Exact Poisson variates for the flat positions `index` of an (N, per_sample) batch, `rates` (float64) holding
    one rate per position: inversion below rate 10, PTRS above, with uniforms drawn for those positions only."""
    counts = torch.zeros_like(rates)

    def draw(name: str, where: torch.Tensor) -> torch.Tensor:
        position = index[where]
        sample_index, element_index = position // per_sample, position % per_sample
        return uniform_at(seed, sample_ids, f"{stream}/{name}", sample_index, element_index, torch.float64)

    small = torch.nonzero(rates < PTRS_MIN_RATE).squeeze(1)
    if small.numel():
        counts[small] = _poisson_by_inversion(rates[small], draw("inversion", small))
    pending = torch.nonzero(rates >= PTRS_MIN_RATE).squeeze(1)
    for round_index in range(MAX_PTRS_ROUNDS):
        if pending.numel() == 0:
            return counts
        u, v = draw(f"ptrs-{round_index}/u", pending), draw(f"ptrs-{round_index}/v", pending)
        k, accepted = _ptrs_round(rates[pending], u, v)
        counts[pending[accepted]] = k[accepted]
        pending = pending[~accepted]
    raise RuntimeError(f"Poisson sampling did not finish in {MAX_PTRS_ROUNDS} rounds.")  # p < 0.1 ** 64


def sample_poisson(rates: torch.Tensor, seed: int, sample_ids: torch.Tensor, stream: str) -> torch.Tensor:
    """Exact Poisson variates (float64, same shape as `rates`, (N, ...)) from counter-based uniform streams.

    Element j of sample i depends only on (seed, sample_ids[i], stream, j, its rate): rates below 10 by inversion
    of one uniform, the others by PTRS with two fresh uniforms per round (stream names per round). Both work on
    flat index lists of the elements still pending, drawing uniforms only for them (`uniform_at`).
    """
    flat_rates = rates.to(torch.float64).reshape(-1)
    index = torch.arange(flat_rates.numel(), device=flat_rates.device)
    per_sample = flat_rates.numel() // rates.shape[0]
    return _sample_poisson_at(flat_rates, index, per_sample, seed, sample_ids, stream).view(rates.shape)


class InversionTable(NamedTuple):
    """`_inversion_table`'s arrays, on one device."""

    thresholds: torch.Tensor
    guide: torch.Tensor
    bucket_counts: torch.Tensor


@functools.lru_cache(maxsize=16)
def _inversion_table(photons: float, device: torch.device) -> InversionTable:
    """Exact inversion of Poisson(level * photons) for the 8-bit levels of `GRID_DTYPES`, on `device` (computed on
    the CPU, cached per device: an ImageNet-P sequence draws 30 frames with the same table).

    One row per level and grid: row g * 256 + l is level l / 255 rounded to GRID_DTYPES[g]. A row of `thresholds`
    (int64, nondecreasing) holds, for k = 0, 1, ..., the smallest 32-bit integer b whose uniform (b + 0.5) / 2**32
    exceeds CDF(k), `bits_at_most(CDF(k))`. The CDF is summed by `_poisson_by_inversion`'s recurrence, so the count
    drawn by b, the number of a row's thresholds <= b, is that walk's "smallest k with CDF(k) >= u" without
    rounding anywhere. Every row ends with a threshold above the largest b.
    The b of bucket j (of 2**GUIDE_BITS per row) are j * 2**(32 - GUIDE_BITS) and the next ones up to the next
    bucket's: `guide[row, j]` (int32) is the count at the bucket's first b, where a search starts, and
    `bucket_counts[row, j]` (int32) the count that every b of the bucket draws, or -1 where a threshold lies inside
    the bucket and the count depends on more than the top bits.
    """
    levels = [
        (torch.arange(EIGHT_BIT_LEVELS, dtype=dtype) / 255.0).to(torch.float64) for dtype in GRID_DTYPES
    ]
    rates = torch.cat(levels) * photons
    probability = torch.exp(-rates)
    cdf = probability.clone()
    columns = [bits_at_most(cdf)]
    for k in range(1, MAX_TABLE_TERMS):
        if bool((columns[-1] > _LARGEST_BITS).all()):
            break
        probability = probability * rates / k
        cdf = cdf + probability
        columns.append(bits_at_most(cdf))
    else:
        columns.append(torch.full_like(columns[-1], _LARGEST_BITS + 1))
    thresholds = torch.stack(columns, dim=1)
    edges = (torch.arange(1 << GUIDE_BITS, dtype=torch.int64) << (32 - GUIDE_BITS)).expand(len(rates), -1)
    guide = torch.searchsorted(thresholds, edges.contiguous(), right=True, out_int32=True)
    # The count at a bucket's last b is the number of thresholds below the next bucket's first b.
    next_edges = (edges + (1 << (32 - GUIDE_BITS))).contiguous()
    last = torch.searchsorted(thresholds, next_edges, right=False, out_int32=True)
    bucket_counts = torch.where(last == guide, guide, -1)
    return InversionTable(thresholds.to(device), guide.to(device), bucket_counts.to(device))


def _invert_by_table(rows: torch.Tensor, bits: torch.Tensor, table: InversionTable) -> torch.Tensor:
    """Counts (int64) for flat table `rows` and their uniforms' 32-bit integers `bits` (int64): the guide's start,
    then one step per threshold passed, on the shrinking set of elements that passed one."""
    thresholds, guide = table.thresholds, table.guide
    row_start = rows * thresholds.shape[1]
    flat_thresholds = thresholds.reshape(-1)
    counts = guide.reshape(-1)[rows * guide.shape[1] + (bits >> (32 - GUIDE_BITS))].long()
    passed = flat_thresholds[row_start + counts] <= bits
    counts += passed
    pending = torch.nonzero(passed).squeeze(1)
    while pending.numel():
        at = counts[pending]
        passed = flat_thresholds[row_start[pending] + at] <= bits[pending]
        pending = pending[passed]
        counts[pending] = at[passed] + 1
    return counts


def _counts_on_grid(rows: torch.Tensor, bits: torch.Tensor, table: InversionTable) -> torch.Tensor:
    """`_invert_by_table`'s counts (int32) for flat int32 `rows` and int32 bit patterns `bits` (consumed): one
    lookup of the bucket's count by the top GUIDE_BITS bits; only elements whose bucket holds a threshold (a few
    percent) go through the search."""
    bucket = bits >> (32 - GUIDE_BITS)
    bucket.bitwise_and_((1 << GUIDE_BITS) - 1).add_(rows * (1 << GUIDE_BITS))
    counts = torch.index_select(table.bucket_counts.view(-1), 0, bucket)
    pending = torch.nonzero(counts < 0).squeeze(1)
    if pending.numel():
        unsigned = bits[pending].long() & _LARGEST_BITS
        counts[pending] = _invert_by_table(rows[pending].long(), unsigned, table).int()
    return counts


def _table_rows(intensities: torch.Tensor) -> torch.Tensor:
    """Each element's row of `_inversion_table` (flat int32), -1 where the intensity is on no 8-bit grid. A grid
    finer than the tensor's dtype is not looked at: its rounded values would not carry its rates."""
    flat = intensities.reshape(-1)
    levels = (flat * 255.0).round_().clamp_(0, EIGHT_BIT_LEVELS - 1).to(torch.int32)
    rows = None
    for block, dtype in enumerate(GRID_DTYPES):
        if torch.finfo(dtype).bits > torch.finfo(flat.dtype).bits:
            break
        grid = (torch.arange(EIGHT_BIT_LEVELS, dtype=dtype, device=flat.device) / 255.0).to(flat.dtype)
        on_grid = torch.index_select(grid, 0, levels) == flat
        if rows is None:
            if bool(on_grid.all()):  # the usual case, decoded images: every element on the first grid
                return levels
            rows = torch.where(on_grid, levels, -1)
        else:
            rows = torch.where((rows < 0) & on_grid, levels + block * EIGHT_BIT_LEVELS, rows)
        if not bool((rows < 0).any()):
            break
    return rows


def _photon_counts_int32(
    intensities: torch.Tensor, photons: float, seed: int, sample_ids: torch.Tensor, stream: str
) -> torch.Tensor | None:
    """`photon_counts` as flat int32 counts, for intensities on an 8-bit grid (dtype in GRID_DTYPES, photons at
    most MAX_TABLE_RATE); None when some intensity is off every grid."""
    rows = _table_rows(intensities)
    if bool((rows < 0).any()):
        return None
    bits = random_bits_int32(seed, sample_ids, f"{stream}/inversion", tuple(intensities.shape[1:]))
    return _counts_on_grid(rows, bits.view(-1), _inversion_table(float(photons), intensities.device))


def photon_counts(
    intensities: torch.Tensor, photons: float, seed: int, sample_ids: torch.Tensor, stream: str
) -> torch.Tensor:
    """Exact Poisson(intensities * photons) variates (float64, shape of `intensities`, (N, ...)): shot noise.

    Element j of sample i depends only on (seed, sample_ids[i], stream, j, its intensity). Intensities on an 8-bit
    grid (k / 255, what uint8 images become) are sampled by inversion of one uniform through a table of the
    levels' CDFs (`_inversion_table`): a lookup by the uniform's top bits, and a few comparisons for the elements
    whose bucket the lookup does not decide. Other intensities go through `sample_poisson`. Below rate 10 both
    invert the same uniforms by the same CDF sums, so they agree exactly; above it, grid intensities are inverted
    and the others go through PTRS.
    """
    if photons > MAX_TABLE_RATE or intensities.dtype not in GRID_DTYPES:
        return sample_poisson(intensities.to(torch.float64) * photons, seed, sample_ids, stream)
    counts = _photon_counts_int32(intensities, photons, seed, sample_ids, stream)
    if counts is not None:
        return counts.to(torch.float64).view(intensities.shape)
    rows = _table_rows(intensities).long()
    table = _inversion_table(float(photons), intensities.device)
    per_sample = rows.numel() // intensities.shape[0]
    counts = torch.empty(rows.shape, dtype=torch.float64, device=rows.device)
    on, off = torch.nonzero(rows >= 0).squeeze(1), torch.nonzero(rows < 0).squeeze(1)
    bits = random_bits_at(seed, sample_ids, f"{stream}/inversion", on // per_sample, on % per_sample)
    counts[on] = _invert_by_table(rows[on], bits, table).to(torch.float64)
    off_rates = intensities.reshape(-1)[off].to(torch.float64) * photons
    counts[off] = _sample_poisson_at(off_rates, off, per_sample, seed, sample_ids, stream)
    return counts.view(intensities.shape)


@register_corruption("gaussian_noise")
def gaussian_noise(
    images: torch.Tensor, severity: int, profile: str, seed: int, sample_ids: torch.Tensor
) -> torch.Tensor:
    """Additive white noise: `clip(x + N(0, c), 0, 1)`, independent per pixel and channel."""
    scale = GAUSSIAN_NOISE[profile][severity - 1]
    noise = normal(seed, sample_ids, "gaussian_noise/noise", tuple(images.shape[1:]), images.dtype)
    return noise.mul_(scale).add_(images).clamp_(0.0, 1.0)


def _shot_values(scale: float, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """clip(k / scale, 0, 1) in `dtype` for every count k a table inversion can draw (0..MAX_TABLE_TERMS)."""
    counts = torch.arange(MAX_TABLE_TERMS + 1, dtype=torch.float64, device=device)
    return (counts / scale).clamp_(0.0, 1.0).to(dtype)


def _shot_noise_uint8(
    images: torch.Tensor, severity: int, profile: str, seed: int, sample_ids: torch.Tensor
) -> torch.Tensor:
    """`shot_noise`'s uint8 CPU route: a uint8 level k is the float route's intensity k / 255, i.e. table row k, and
    each count's output level is looked up (`from_unit_float` of `_shot_values`), with no float pass per pixel."""
    scale = float(SHOT_NOISE[profile][severity - 1])
    if scale > MAX_TABLE_RATE:
        return from_unit_float(shot_noise(to_unit_float(images), severity, profile, seed, sample_ids), images)
    bits = random_bits_int32(seed, sample_ids, f"{SHOT_STREAM}/inversion", tuple(images.shape[1:]))
    table = _inversion_table(scale, images.device)
    counts = _counts_on_grid(images.reshape(-1).int(), bits.view(-1), table)
    levels = from_unit_float(_shot_values(scale, torch.float32, images.device), images)
    return torch.index_select(levels, 0, counts).view(images.shape)


@register_corruption("shot_noise", uint8_fn=_shot_noise_uint8)
def shot_noise(
    images: torch.Tensor, severity: int, profile: str, seed: int, sample_ids: torch.Tensor
) -> torch.Tensor:
    """Photon noise: `clip(Poisson(x * c) / c, 0, 1)`, independent per pixel and channel. On an 8-bit grid each
    count's value is looked up; uint8 CPU input takes `_shot_noise_uint8`."""
    scale = float(SHOT_NOISE[profile][severity - 1])
    if scale <= MAX_TABLE_RATE and images.dtype in GRID_DTYPES:
        counts = _photon_counts_int32(images, scale, seed, sample_ids, SHOT_STREAM)
        if counts is not None:
            values = _shot_values(scale, images.dtype, images.device)
            return torch.index_select(values, 0, counts).view(images.shape)
    counts = photon_counts(images, scale, seed, sample_ids, SHOT_STREAM)
    return (counts / scale).clamp(0.0, 1.0).to(images.dtype)


def _impulse_masks(
    shape: torch.Size, severity: int, profile: str, seed: int, sample_ids: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """(flipped, salted) bool masks of `impulse_noise`: u <= c and u <= c / 2, decided on the uniforms' integers."""
    amount = IMPULSE_NOISE[profile][severity - 1]
    ordered = signed_order_(random_bits_int32(seed, sample_ids, "impulse_noise/flip", tuple(shape[1:])))
    flipped = ordered_below(ordered, int(bits_at_most(torch.tensor(amount, dtype=torch.float64))))
    salted = ordered_below(ordered, int(bits_at_most(torch.tensor(amount / 2, dtype=torch.float64))))
    return flipped, salted


def _impulse_noise_uint8(
    images: torch.Tensor, severity: int, profile: str, seed: int, sample_ids: torch.Tensor
) -> torch.Tensor:
    """`impulse_noise`'s uint8 CPU route: untouched values keep their level (k / 255 converts back to k for every
    k), flipped ones become 0 or 255."""
    flipped, salted = _impulse_masks(images.shape, severity, profile, seed, sample_ids)
    return images.masked_fill(flipped, 0).masked_fill_(salted, 255)


@register_corruption("impulse_noise", uint8_fn=_impulse_noise_uint8)
def impulse_noise(
    images: torch.Tensor, severity: int, profile: str, seed: int, sample_ids: torch.Tensor
) -> torch.Tensor:
    """Salt-and-pepper noise, as skimage's `random_noise(mode="s&p", amount=c)` (salt_vs_pepper 0.5).

    Each value (pixel and channel alike) is flipped with probability c; a flipped value becomes salt (1) or
    pepper (0) with probability 0.5 each, independently. One uniform u per value decides both: u <= c flips it,
    and a flipped value is salt when u <= c / 2, which has exactly those probabilities. uint8 CPU input takes
    `_impulse_noise_uint8`, which sets the flipped levels without a float pass.
    """
    flipped, salted = _impulse_masks(images.shape, severity, profile, seed, sample_ids)
    return images.masked_fill(flipped, 0.0).masked_fill_(salted, 1.0)


@register_corruption("speckle_noise")
def speckle_noise(
    images: torch.Tensor, severity: int, profile: str, seed: int, sample_ids: torch.Tensor
) -> torch.Tensor:
    """Multiplicative noise: `clip(x + x * N(0, c), 0, 1)`, independent per pixel and channel."""
    scale = SPECKLE_NOISE[profile][severity - 1]
    noise = normal(seed, sample_ids, "speckle_noise/noise", tuple(images.shape[1:]), images.dtype)
    return noise.mul_(scale).mul_(images).add_(images).clamp_(0.0, 1.0)
