"""Counter-based random streams: per-sample, batch-invariant, and statistically sound."""

import math

import pytest
import torch

from hf_vitrobust.corruptions.randomness import (
    bits_at_most,
    hash32,
    normal,
    random_bits,
    random_bits_at,
    sample_keys,
    uniform,
    uniform_at,
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
