# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Counter-based random numbers, one independent stream per (seed, sample id, purpose), batched on tensors.

Random corruptions must give a sample the same corruption whatever the batch size, the batch order, the device or
the number of processes. A stateful generator cannot do that for a batch without a loop over images. Here every
random number is a pure function of (seed, sample id, stream name, element index): a 32-bit integer hash
(Wellons' "lowbias32", applied in a keyed cascade) evaluated elementwise, so a whole batch draws its numbers in
one vectorised pass, with identical bits on the CPU and on CUDA.

The hash runs on int32 tensors holding 32-bit patterns: multiplication wraps modulo 2**32 (two's complement, on
every backend torch supports) and right shifts are made logical by masking. `hash32` is checked bit for bit
against a plain-Python reference in the tests.
"""

import hashlib
import math
from collections.abc import Sequence

import torch

_MASK32 = 0xFFFFFFFF
# lowbias32's multipliers, the second written as the signed int32 with the same bits.
_MULTIPLIER_1 = 0x7FEB352D
_MULTIPLIER_2 = 0x846CA68B - (1 << 32)


def _shift_right(x: torch.Tensor, bits: int) -> torch.Tensor:
    """Logical right shift of int32 bit patterns."""
    return (x >> bits) & ((1 << (32 - bits)) - 1)


def _xorshift_(x: torch.Tensor, bits: int, scratch: torch.Tensor) -> None:
    """x ^= x >>> bits, in place on int32 bit patterns; `scratch` (x's shape) is overwritten."""
    torch.bitwise_right_shift(x, bits, out=scratch)
    scratch.bitwise_and_((1 << (32 - bits)) - 1)
    x.bitwise_xor_(scratch)


def _hash_int32_(x: torch.Tensor, scratch: torch.Tensor) -> torch.Tensor:
    """lowbias32 of int32 bit patterns, in place (no temporary the size of x: on the CPU, fresh large buffers
    cost more than the arithmetic)."""
    _xorshift_(x, 16, scratch)
    x.mul_(_MULTIPLIER_1)
    _xorshift_(x, 15, scratch)
    x.mul_(_MULTIPLIER_2)
    _xorshift_(x, 16, scratch)
    return x


def _hash_int32(x: torch.Tensor) -> torch.Tensor:
    return _hash_int32_(x.clone(), torch.empty_like(x))


def _to_int32(x: torch.Tensor) -> torch.Tensor:
    """int64 values in [0, 2**32) -> int32 tensors with the same low 32 bits."""
    return torch.where(x >= 1 << 31, x - (1 << 32), x).to(torch.int32)


def _to_unsigned(x: torch.Tensor) -> torch.Tensor:
    """int32 bit patterns -> int64 values in [0, 2**32)."""
    return x.to(torch.int64) & _MASK32


def hash32(x: torch.Tensor) -> torch.Tensor:
    """lowbias32 (C. Wellons, "Hash Prospector"): a bijective 32-bit avalanche hash, on int64 tensors in [0, 2**32)."""
    return _to_unsigned(_hash_int32(_to_int32(x)))


def _stream_constant(stream: str) -> int:
    """A fixed 32-bit constant per stream name, so that different purposes draw unrelated numbers."""
    return int.from_bytes(hashlib.blake2b(stream.encode(), digest_size=4).digest(), "little")


def _keys_of_streams(seed: int, sample_ids: torch.Tensor, streams: Sequence[str]) -> torch.Tensor:
    """`sample_keys` of several streams, (S, N) int64, in one cascade over all of them."""
    if sample_ids.is_floating_point():
        raise ValueError("sample_ids must be integers.")
    ids = sample_ids.to(torch.int64)
    seed_low, seed_high = seed & _MASK32, (seed >> 32) & _MASK32
    constants = torch.tensor([_stream_constant(stream) for stream in streams], dtype=torch.int64)
    key = hash32((ids & _MASK32) ^ constants.to(ids.device)[:, None])
    key = hash32(key ^ ((ids >> 32) & _MASK32) ^ seed_low)
    return hash32(key ^ seed_high)


def sample_keys(seed: int, sample_ids: torch.Tensor, stream: str) -> torch.Tensor:
    """Per-sample 32-bit keys (N,), int64: a hash of (seed, sample id, stream name)."""
    return _keys_of_streams(seed, sample_ids, [stream])[0]


def _bits(keys: torch.Tensor, counters: torch.Tensor) -> torch.Tensor:
    """int32 bit patterns of element `counters` (int32) in the streams of `keys` (int32), broadcast together:
    lowbias32(lowbias32(counter ^ key) ^ (key >>> 7) ^ 0x5BD1E995), in one fresh buffer hashed in place."""
    x = torch.bitwise_xor(counters, keys)
    scratch = torch.empty_like(x)
    _hash_int32_(x, scratch)
    x.bitwise_xor_(_shift_right(keys, 7) ^ 0x5BD1E995)
    return _hash_int32_(x, scratch)


def _stream_bits(seed: int, sample_ids: torch.Tensor, stream: str, shape: tuple[int, ...]) -> torch.Tensor:
    keys = _to_int32(sample_keys(seed, sample_ids, stream)).view(-1, *([1] * len(shape)))
    numel = math.prod(shape)
    counters = torch.arange(numel, device=sample_ids.device, dtype=torch.int32).view(shape)
    return _bits(keys, counters)


def _bits_to_uniform(bits: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """Open-interval uniforms: all 32 bits in float64, (b + 0.5) / 2**32, the top 24 (a float32 mantissa)
    otherwise, (b >>> 8 + 0.5) / 2**24 with the sum rounded to float32. Consumes `bits` (int32, overwritten).

    Every step is exact or rounds as the formula does: scaling by a power of two is exact, and in float64 the
    signed pattern's (b - 2**32 + 0.5) / 2**32, in (-1/2, 0), plus 1 is exactly the unsigned one's.
    """
    if dtype == torch.float64:
        uniforms = bits.to(torch.float64).add_(0.5).mul_(2.0**-32)
        return uniforms.add_(uniforms < 0)
    bits.bitwise_right_shift_(8).bitwise_and_((1 << 24) - 1)
    return bits.to(torch.float32).add_(0.5).mul_(2.0**-24).to(dtype)


def bits_at_most(probability: torch.Tensor) -> torch.Tensor:
    """How many 32-bit integers b have a float64 uniform (b + 0.5) / 2**32 (`uniform`'s mapping) at most
    `probability`, elementwise (int64): `random_bits < bits_at_most(p)` is the event `uniform <= p`, decided exactly
    on the integers. (b + 0.5 <= p * 2**32, a power-of-two scaling, exact: b <= floor(p * 2**32 - 0.5).)"""
    return torch.floor(probability.to(torch.float64) * 2.0**32 - 0.5).to(torch.int64) + 1


def random_bits(seed: int, sample_ids: torch.Tensor, stream: str, shape: tuple[int, ...]) -> torch.Tensor:
    """Uniform 32-bit integers in [0, 2**32), int64 tensor of shape (N, *shape): element j of sample i depends only
    on (seed, sample_ids[i], stream, j)."""
    return _to_unsigned(_stream_bits(seed, sample_ids, stream, shape))


def random_bits_int32(
    seed: int, sample_ids: torch.Tensor, stream: str, shape: tuple[int, ...]
) -> torch.Tensor:
    """`random_bits` as int32 tensors holding the same 32-bit patterns (b - 2**32 where b >= 2**31): half the
    memory of int64 and no conversion pass. Compare them as unsigned with `signed_order_` and `ordered_below`."""
    return _stream_bits(seed, sample_ids, stream, shape)


def signed_order_(bits: torch.Tensor) -> torch.Tensor:
    """int32 bit patterns of unsigned b -> the int32 values b - 2**31 (the sign bit flipped, in place), whose
    signed order is the unsigned order of b."""
    return bits.bitwise_xor_(-(1 << 31))


def ordered_below(ordered: torch.Tensor, bound: int) -> torch.Tensor:
    """`b < bound` for values `ordered` = b - 2**31 from `signed_order_`, bound in [0, 2**32] (`bits_at_most`)."""
    if not 0 <= bound <= 1 << 32:
        raise ValueError(f"bound must lie in [0, 2**32], got {bound}.")
    if bound == 1 << 32:
        return torch.ones_like(ordered, dtype=torch.bool)
    return ordered < bound - (1 << 31)


def uniform(
    seed: int,
    sample_ids: torch.Tensor,
    stream: str,
    shape: tuple[int, ...],
    dtype: torch.dtype = torch.float32,
) -> torch.Tensor:
    """Uniform numbers in the open interval (0, 1), shape (N, *shape)."""
    return _bits_to_uniform(_stream_bits(seed, sample_ids, stream, shape), dtype)


def uniform_streams(
    seed: int,
    sample_ids: torch.Tensor,
    streams: Sequence[tuple[str, tuple[int, ...]]],
    dtype: torch.dtype = torch.float32,
) -> list[torch.Tensor]:
    """`uniform(seed, sample_ids, stream, shape, dtype)` for each (stream, shape), the same numbers drawn in one
    pass over all the streams' elements: for algorithms that draw many small blocks (a plasma fractal's levels),
    where per-call overhead would dominate."""
    keys = _to_int32(_keys_of_streams(seed, sample_ids, [stream for stream, _ in streams]))  # (S, N)
    device = sample_ids.device
    sizes = [math.prod(shape) for _, shape in streams]
    which = torch.repeat_interleave(
        torch.arange(len(sizes), device=device), torch.tensor(sizes, device=device)
    )
    counters = torch.cat([torch.arange(size, device=device, dtype=torch.int32) for size in sizes])
    element_keys = torch.index_select(keys.T, 1, which)  # (N, total): each element's stream key
    uniforms = _bits_to_uniform(_bits(element_keys, counters), dtype)
    blocks = torch.split(uniforms, sizes, dim=1)
    return [block.reshape(-1, *shape) for block, (_, shape) in zip(blocks, streams, strict=True)]


def _bits_at(
    seed: int, sample_ids: torch.Tensor, stream: str, sample_index: torch.Tensor, element_index: torch.Tensor
) -> torch.Tensor:
    keys = _to_int32(sample_keys(seed, sample_ids, stream))[sample_index]
    return _bits(keys, element_index.to(torch.int32))


def random_bits_at(
    seed: int, sample_ids: torch.Tensor, stream: str, sample_index: torch.Tensor, element_index: torch.Tensor
) -> torch.Tensor:
    """The integers `random_bits(seed, sample_ids, stream, shape)` holds at (sample_index, flat element_index),
    drawn for those elements only."""
    return _to_unsigned(_bits_at(seed, sample_ids, stream, sample_index, element_index))


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
    return _bits_to_uniform(_bits_at(seed, sample_ids, stream, sample_index, element_index), dtype)


def normal(
    seed: int,
    sample_ids: torch.Tensor,
    stream: str,
    shape: tuple[int, ...],
    dtype: torch.dtype = torch.float32,
) -> torch.Tensor:
    """Standard normal numbers, shape (N, *shape), by the Box-Muller transform; each pair of uniforms (one from a
    radius stream, one from an angle stream) gives two normals, for elements 2k and 2k + 1."""
    numel = math.prod(shape)
    pairs = (numel + 1) // 2
    work = torch.float64 if dtype == torch.float64 else torch.float32
    radius = uniform(seed, sample_ids, stream + "/box-muller-radius", (pairs,), work)
    radius.log_().mul_(-2.0).sqrt_()
    angle = uniform(seed, sample_ids, stream + "/box-muller-angle", (pairs,), work).mul_(2.0 * torch.pi)
    # Written straight into their interleaved places; cos and sin run on contiguous buffers (their vectorised
    # kernels), and products round the same wherever they are stored.
    normals = torch.empty(radius.shape[0], pairs, 2, dtype=work, device=radius.device)
    trig = torch.cos(angle)
    torch.mul(radius, trig, out=normals[..., 0])
    torch.sin(angle, out=trig)
    torch.mul(radius, trig, out=normals[..., 1])
    return normals.view(-1, 2 * pairs)[:, :numel].reshape(-1, *shape).to(dtype)


__all__ = [
    "bits_at_most",
    "hash32",
    "normal",
    "ordered_below",
    "random_bits",
    "random_bits_at",
    "random_bits_int32",
    "sample_keys",
    "signed_order_",
    "uniform",
    "uniform_at",
    "uniform_streams",
]
