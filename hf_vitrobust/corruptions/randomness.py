# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Counter-based random numbers, one independent stream per (seed, sample id, purpose), batched on tensors.

Random corruptions must give a sample the same corruption whatever the batch size, the batch order, the device or
the number of processes. A stateful generator cannot do that for a batch without a loop over images. Here every
random number is a pure function of (seed, sample id, stream name, element index): a 32-bit integer hash
(Wellons' "lowbias32", applied in a keyed cascade) evaluated elementwise on int64 tensors, so a whole batch draws
its numbers in one vectorised pass, on the CPU and on CUDA alike, with identical results on both.

All arithmetic stays below 2**49 in int64 (32-bit products are split into 16-bit halves), so nothing relies on
signed-overflow wrapping.
"""

import hashlib

import torch

_MASK32 = 0xFFFFFFFF


def _mul32(x: torch.Tensor, constant: int) -> torch.Tensor:
    """(x * constant) mod 2**32 for x in [0, 2**32), without int64 overflow."""
    low, high = constant & 0xFFFF, constant >> 16
    return (x * low + (((x * high) & 0xFFFF) << 16)) & _MASK32


def hash32(x: torch.Tensor) -> torch.Tensor:
    """lowbias32 (C. Wellons, "Hash Prospector"): a bijective 32-bit avalanche hash, on int64 tensors in [0, 2**32)."""
    x = x ^ (x >> 16)
    x = _mul32(x, 0x7FEB352D)
    x = x ^ (x >> 15)
    x = _mul32(x, 0x846CA68B)
    return x ^ (x >> 16)


def _stream_constant(stream: str) -> int:
    """A fixed 32-bit constant per stream name, so that different purposes draw unrelated numbers."""
    return int.from_bytes(hashlib.blake2b(stream.encode(), digest_size=4).digest(), "little")


def sample_keys(seed: int, sample_ids: torch.Tensor, stream: str) -> torch.Tensor:
    """Per-sample 32-bit keys (N,) for one stream: a hash of (seed, sample id, stream name)."""
    if sample_ids.is_floating_point():
        raise ValueError("sample_ids must be integers.")
    ids = sample_ids.to(torch.int64)
    seed_low, seed_high = seed & _MASK32, (seed >> 32) & _MASK32
    key = hash32((ids & _MASK32) ^ _stream_constant(stream))
    key = hash32(key ^ ((ids >> 32) & _MASK32) ^ seed_low)
    return hash32(key ^ seed_high)


def _bits(keys: torch.Tensor, counters: torch.Tensor) -> torch.Tensor:
    return hash32(hash32(counters ^ keys) ^ (keys >> 7) ^ 0x5BD1E995)


def random_bits(seed: int, sample_ids: torch.Tensor, stream: str, shape: tuple[int, ...]) -> torch.Tensor:
    """Uniform 32-bit integers, int64 tensor of shape (N, *shape): element j of sample i depends only on
    (seed, sample_ids[i], stream, j)."""
    keys = sample_keys(seed, sample_ids, stream).view(-1, *([1] * len(shape)))
    numel = 1
    for size in shape:
        numel *= size
    counters = torch.arange(numel, device=sample_ids.device, dtype=torch.int64).view(shape)
    return _bits(keys, counters)


def uniform_at(
    seed: int,
    sample_ids: torch.Tensor,
    stream: str,
    sample_index: torch.Tensor,
    element_index: torch.Tensor,
    dtype: torch.dtype = torch.float32,
) -> torch.Tensor:
    """The numbers `uniform(seed, sample_ids, stream, shape)` holds at (sample_index, flat element_index), drawn
    for those elements only: for algorithms that keep working on a shrinking subset (rejection sampling)."""
    keys = sample_keys(seed, sample_ids, stream)[sample_index]
    return ((_bits(keys, element_index).to(torch.float64) + 0.5) / 2.0**32).to(dtype)


def uniform(
    seed: int,
    sample_ids: torch.Tensor,
    stream: str,
    shape: tuple[int, ...],
    dtype: torch.dtype = torch.float32,
) -> torch.Tensor:
    """Uniform numbers in the open interval (0, 1), shape (N, *shape)."""
    bits = random_bits(seed, sample_ids, stream, shape)
    return ((bits.to(torch.float64) + 0.5) / 2.0**32).to(dtype)


def normal(
    seed: int,
    sample_ids: torch.Tensor,
    stream: str,
    shape: tuple[int, ...],
    dtype: torch.dtype = torch.float32,
) -> torch.Tensor:
    """Standard normal numbers, shape (N, *shape), by the Box-Muller transform of two uniform streams."""
    u1 = uniform(seed, sample_ids, stream + "/box-muller-radius", shape, torch.float64)
    u2 = uniform(seed, sample_ids, stream + "/box-muller-angle", shape, torch.float64)
    return (torch.sqrt(-2.0 * torch.log(u1)) * torch.cos(2.0 * torch.pi * u2)).to(dtype)


__all__ = ["hash32", "normal", "random_bits", "sample_keys", "uniform", "uniform_at"]
