"""Counter-based random streams: per-sample, batch-invariant, and statistically sound."""

import hashlib
import math

import numpy as np
import pytest
import torch

from hf_vitrobust.corruptions.randomness import (
    bits_at_most,
    hash32,
    normal,
    ordered_below,
    random_bits,
    random_bits_at,
    random_bits_int32,
    sample_keys,
    signed_order_,
    uniform,
    uniform_at,
    uniform_streams,
)


def test_hash32_is_a_bijection_on_a_sample_and_matches_reference_values():
    x = torch.arange(0, 1 << 16, dtype=torch.int64)
    hashed = hash32(x)
    assert hashed.unique().numel() == x.numel()
    assert hashed.min() >= 0 and hashed.max() < 2**32

    # lowbias32 computed with plain Python integers.
    def reference(v: int) -> int:
        v ^= v >> 16
        v = (v * 0x7FEB352D) & 0xFFFFFFFF
        v ^= v >> 15
        v = (v * 0x846CA68B) & 0xFFFFFFFF
        return v ^ (v >> 16)

    for v in (0, 1, 12345, 2**31 + 7, 2**32 - 1):
        assert int(hash32(torch.tensor([v]))[0]) == reference(v)


def test_streams_do_not_depend_on_batch_composition():
    ids = torch.tensor([7, 3, 1000, 2**40])
    batch = uniform(5, ids, "noise", (4, 6))
    for position, sample_id in enumerate(ids.tolist()):
        alone = uniform(5, torch.tensor([sample_id]), "noise", (4, 6))
        assert torch.equal(batch[position], alone[0])
    reversed_batch = uniform(5, ids.flip(0), "noise", (4, 6))
    assert torch.equal(reversed_batch.flip(0), batch)


def test_seed_sample_and_stream_all_change_the_numbers():
    ids = torch.tensor([1, 2])
    base = random_bits(0, ids, "a", (1000,))
    assert not torch.equal(base[0], base[1])
    assert (random_bits(1, ids, "a", (1000,)) != base).float().mean() > 0.99
    assert (random_bits(0, ids, "b", (1000,)) != base).float().mean() > 0.99
    assert (random_bits(2**33, ids, "a", (1000,)) != base).float().mean() > 0.99
    assert sample_keys(0, ids, "a").unique().numel() == 2


def test_uniform_and_normal_statistics():
    ids = torch.arange(8)
    u = uniform(0, ids, "u", (50_000,), torch.float64)
    assert u.min() > 0 and u.max() < 1
    assert u.mean().item() == pytest.approx(0.5, abs=0.002)
    assert u.var().item() == pytest.approx(1 / 12, abs=0.001)
    counts = torch.histc(u.flatten(), bins=100, min=0, max=1)
    expected = u.numel() / 100
    chi_square = ((counts - expected) ** 2 / expected).sum().item()
    assert chi_square < 99 + 4 * math.sqrt(2 * 99)  # 99 degrees of freedom, about 4 sigma
    # Neighbouring elements and neighbouring samples are uncorrelated.
    assert abs(torch.corrcoef(torch.stack([u[0, :-1], u[0, 1:]]))[0, 1].item()) < 0.02
    assert abs(torch.corrcoef(u[:2])[0, 1].item()) < 0.02

    z = normal(0, ids, "z", (50_000,), torch.float64)
    assert z.mean().item() == pytest.approx(0.0, abs=0.01)
    assert z.std().item() == pytest.approx(1.0, abs=0.01)
    assert (z.abs() > 1.96).double().mean().item() == pytest.approx(0.05, abs=0.003)


def test_float_sample_ids_are_rejected():
    with pytest.raises(ValueError, match="integers"):
        sample_keys(0, torch.tensor([1.0]), "x")


def test_uniform_at_and_random_bits_at_draw_the_same_numbers_for_a_subset():
    ids = torch.tensor([4, 9, 2])
    grid = uniform(3, ids, "s", (5, 7), torch.float64)
    bits = random_bits(3, ids, "s", (5, 7))
    sample_index = torch.tensor([0, 2, 2, 1])
    element_index = torch.tensor([0, 34, 7, 12])
    subset = uniform_at(3, ids, "s", sample_index, element_index, torch.float64)
    assert torch.equal(subset, grid.view(3, -1)[sample_index, element_index])
    subset_bits = random_bits_at(3, ids, "s", sample_index, element_index)
    assert torch.equal(subset_bits, bits.view(3, -1)[sample_index, element_index])
    # the uniforms are the bits' (b + 0.5) / 2**32
    assert torch.equal(subset, (subset_bits.double() + 0.5) / 2**32)


def test_bits_at_most_decides_uniform_at_most_p_on_the_integers():
    ids = torch.tensor([3, 8])
    bits = random_bits(1, ids, "t", (50_000,))
    uniforms = uniform(1, ids, "t", (50_000,), torch.float64)
    probabilities = torch.tensor([0.0, 1e-9, 0.03, 0.5, 0.27 / 2, 1 - 2.0**-33, 1.0], dtype=torch.float64)
    for p in probabilities:
        assert torch.equal(bits < bits_at_most(p), uniforms <= p)
    # On the grid of uniforms itself: b's own uniform counts as "at most", the next one does not.
    b = torch.tensor([0, 12345, 2**32 - 1])
    assert torch.equal(bits_at_most((b.double() + 0.5) / 2**32), b + 1)


# ---------------------------------------------------------------------------------------------------------------
# The streams' bits, re-derived with plain Python integers (generated ImageNet-C depends on them staying put)


def _lowbias32(v: int) -> int:
    v ^= v >> 16
    v = (v * 0x7FEB352D) & 0xFFFFFFFF
    v ^= v >> 15
    v = (v * 0x846CA68B) & 0xFFFFFFFF
    return v ^ (v >> 16)


def _python_bits(seed: int, sample_id: int, stream: str, element: int) -> int:
    """The documented cascade: the sample's key from (seed, id, blake2b of the stream name), then
    lowbias32(lowbias32(element ^ key) ^ (key >> 7) ^ 0x5BD1E995)."""
    constant = int.from_bytes(hashlib.blake2b(stream.encode(), digest_size=4).digest(), "little")
    key = _lowbias32((sample_id & 0xFFFFFFFF) ^ constant)
    key = _lowbias32(key ^ ((sample_id >> 32) & 0xFFFFFFFF) ^ (seed & 0xFFFFFFFF))
    key = _lowbias32(key ^ ((seed >> 32) & 0xFFFFFFFF))
    return _lowbias32(_lowbias32(element ^ key) ^ (key >> 7) ^ 0x5BD1E995)


@pytest.mark.parametrize("shape", [(), (7,), (3, 5, 9)])
def test_stream_bits_and_uniforms_are_the_plain_python_cascade(shape):
    seed, ids, stream = 2**35 + 11, torch.tensor([0, 5, 2**33 + 7]), "pinned"
    numel = math.prod(shape)
    expected = [[_python_bits(seed, i, stream, j) for j in range(numel)] for i in ids.tolist()]
    bits = random_bits(seed, ids, stream, shape)
    assert bits.shape == (3, *shape) and bits.view(3, -1).tolist() == expected
    as_int32 = random_bits_int32(seed, ids, stream, shape)
    assert as_int32.dtype == torch.int32 and torch.equal(as_int32.long() & 0xFFFFFFFF, bits)
    # float64: (b + 0.5) / 2**32, exact; float32: the top 24 bits, (float32(b >> 8) + 0.5) / 2**24 in float32.
    u64 = uniform(seed, ids, stream, shape, torch.float64).view(3, -1).tolist()
    assert u64 == [[(b + 0.5) / 2**32 for b in row] for row in expected]
    top = np.array(expected, dtype=np.uint64).reshape(3, -1) >> np.uint64(8)
    u32 = (top.astype(np.float32) + np.float32(0.5)) / np.float32(2**24)
    np.testing.assert_array_equal(uniform(seed, ids, stream, shape).view(3, -1).numpy(), u32)


def test_normal_is_box_muller_of_its_two_uniform_streams():
    """Element 2k is r cos(t), 2k + 1 is r sin(t), r = sqrt(-2 log u) and t = 2 pi v from the radius and angle
    streams' float64 uniforms (re-derived here in NumPy; an odd count drops the last sine)."""
    ids, shape = torch.tensor([3, 8]), (5, 7)
    pairs = 18
    u = uniform(4, ids, "g/box-muller-radius", (pairs,), torch.float64).numpy()
    v = uniform(4, ids, "g/box-muller-angle", (pairs,), torch.float64).numpy()
    r, t = np.sqrt(-2.0 * np.log(u)), 2.0 * np.pi * v
    expected = np.stack([r * np.cos(t), r * np.sin(t)], axis=-1).reshape(2, -1)[:, :35].reshape(2, *shape)
    np.testing.assert_allclose(
        normal(4, ids, "g", shape, torch.float64).numpy(), expected, rtol=1e-13, atol=1e-13
    )
    # float32 draws the top 24 bits of the same streams: within float32 rounding of the float64 normals.
    ours32 = normal(4, ids, "g", shape, torch.float32).numpy()
    np.testing.assert_allclose(ours32, expected, rtol=0, atol=2e-5)


def test_signed_order_decides_unsigned_comparisons_on_int32_bits():
    ids = torch.tensor([1, 6])
    unsigned = random_bits(9, ids, "o", (20_000,))
    for bound in (0, 1, 12345, 2**31 - 1, 2**31, 2**31 + 1, 3 * 2**30, 2**32 - 1, 2**32):
        ordered = signed_order_(random_bits_int32(9, ids, "o", (20_000,)))
        assert torch.equal(ordered_below(ordered, bound), unsigned < bound), bound
    with pytest.raises(ValueError, match="bound"):
        ordered_below(ordered, 2**32 + 1)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_uniform_streams_are_the_streams_drawn_one_by_one(dtype):
    ids = torch.tensor([2, 9, 2**34])
    streams = [("a", ()), ("b", (3,)), ("c/step4/rows", (4, 5)), ("a/again", (2, 2, 2))]
    drawn = uniform_streams(7, ids, streams, dtype)
    assert len(drawn) == len(streams)
    for block, (stream, shape) in zip(drawn, streams, strict=True):
        assert torch.equal(block, uniform(7, ids, stream, shape, dtype)), stream
