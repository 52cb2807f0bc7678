"""Cutout holes (Paul & Chen's occlusion) and band-passed noise (Park & Kim's Fig. 2b): the masked fraction counted
in pixels, the hole inside the image, the noise's spectrum inside its square annulus with the white noise's phase,
per-sample determinism, batch-size independence and seed dependence."""

import math
from fractions import Fraction

import numpy as np
import pytest
import torch

from hf_vitrobust.corruptions.frequency_noise import (
    REFERENCE_MAGNITUDE,
    add_band_noise,
    band_pass,
    band_pass_noise,
    frequency_radius,
    square_annulus_mask,
    white_sign_noise,
)
from hf_vitrobust.corruptions.occlusion import cutout, cutout_mask, hole_side

SIZES = [(32, 32), (224, 224), (31, 57), (64, 40)]
RATIOS = [0.05, 0.1, 0.2, 0.5]


def _black_boxes(masked: torch.Tensor) -> list[tuple[int, int, int, int, int]]:
    """(black pixel count, top, bottom, left, right) of each image's all-channel-zero pixels."""
    boxes = []
    for image in masked:
        black = (image == 0).all(dim=0)
        rows = black.any(dim=1).nonzero()[:, 0]
        cols = black.any(dim=0).nonzero()[:, 0]
        boxes.append((int(black.sum()), int(rows.min()), int(rows.max()), int(cols.min()), int(cols.max())))
    return boxes


# ----------------------------------------------------------------------------------------------- Cutout


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("ratio", RATIOS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.uint8])
def test_cutout_masks_the_ratio_in_pixels_with_one_square_inside(size, ratio, dtype):
    height, width = size
    white = torch.full((8, 3, height, width), 255 if dtype == torch.uint8 else 1.0, dtype=dtype)
    masked = cutout(white, ratio, seed=3)
    assert masked.dtype == dtype and masked.shape == white.shape
    side = hole_side(height, width, ratio)
    target = ratio * height * width
    # The closest square: off by at most half the gap to the next square.
    assert abs(side * side - target) <= side + 0.5
    assert abs(side * side / (height * width) - ratio) <= (side + 0.5) / (height * width)
    for count, top, bottom, left, right in _black_boxes(masked):
        assert count == side * side  # every hole pixel is inside the image: none was clipped away
        assert (bottom - top + 1, right - left + 1) == (side, side)  # one solid square
        assert min(top, left) >= 0 and bottom < height and right < width
    # Everything outside the hole is untouched.
    assert bool((masked[masked != 0] == white[masked != 0]).all())


def test_hole_positions_are_uniform_over_the_free_room():
    # An 8x8 image with a 4x4 hole (ratio 1/4) has 5 x 5 positions; 5000 images should fill each about equally.
    ids = torch.arange(5000)
    mask = cutout_mask(8, 8, 0.25, seed=0, sample_ids=ids)[:, 0]
    tops = mask.any(dim=2).float().argmax(dim=1)
    lefts = mask.any(dim=1).float().argmax(dim=1)
    counts = torch.bincount(tops * 5 + lefts, minlength=25).double()
    assert counts.numel() == 25 and bool((counts > 0).all())
    expected = 5000 / 25
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    assert chi2 < 60  # chi-square with 24 degrees of freedom: P(> 60) < 1e-4


def test_cutout_per_sample_determinism_batch_independence_and_seed():
    images = torch.rand(10, 3, 32, 40)
    ids = torch.tensor([7, 3, 99, 2**40 + 5, 0, 12, 13, 14, 15, 16])
    whole = cutout(images, 0.2, seed=5, sample_ids=ids)
    parts = torch.cat(
        [cutout(images[i : i + 3], 0.2, seed=5, sample_ids=ids[i : i + 3]) for i in range(0, 10, 3)]
    )
    assert torch.equal(whole, parts)
    # An image's hole depends on its own id only, not on its position in the batch.
    reversed_ = cutout(images.flip(0), 0.2, seed=5, sample_ids=ids.flip(0))
    assert torch.equal(reversed_.flip(0), whole)
    other_seed = cutout(images, 0.2, seed=6, sample_ids=ids)
    changed = [not torch.equal(a, b) for a, b in zip(other_seed, whole, strict=True)]
    assert sum(changed) >= 8
    # The same uniforms place every ratio's hole: the smaller hole's corner moves in proportion to the free room.
    # top = floor(u * room) with room = H - side + 1, so top / room is within 1 / room of the shared uniform u.
    positions = []
    for ratio in (0.05, 0.5):
        side = hole_side(32, 40, ratio)
        mask = cutout_mask(32, 40, ratio, seed=5, sample_ids=ids)[:, 0]
        tops = mask.any(dim=2).double().argmax(dim=1)
        positions.append((tops / (32 - side + 1), 1 / (32 - side + 1)))
    (small, small_step), (big, big_step) = positions
    assert bool(((small - big).abs() <= small_step + big_step).all())
    assert not torch.equal(small, big)


def test_cutout_uint8_and_float_agree_and_fill():
    images = torch.randint(1, 256, (4, 3, 33, 33), dtype=torch.uint8)
    as_uint8 = cutout(images, 0.1, seed=1)
    as_float = cutout(images.float() / 255, 0.1, seed=1)
    assert torch.equal(as_uint8 == 0, as_float == 0)
    kept = as_uint8 != 0
    assert torch.equal(as_uint8[kept], images[kept])  # bit for bit, no float round trip
    grey = cutout(images, 0.1, seed=1, fill=0.5)
    assert torch.equal(grey[~kept], torch.full_like(grey[~kept], 128))


def test_cutout_limits_and_errors():
    images = torch.rand(2, 3, 16, 16)
    assert torch.equal(cutout(images, 0.0), images)
    assert float(cutout(images, 1.0).abs().max()) == 0.0
    with pytest.raises(ValueError, match="ratio must be a number in"):
        cutout(images, 1.5)
    with pytest.raises(ValueError, match="shorter side"):
        cutout(torch.rand(1, 3, 16, 64), 0.5)
    with pytest.raises(ValueError, match="fill"):
        cutout(images, 0.1, fill=2.0)
    with pytest.raises(ValueError, match="sample_ids"):
        cutout(images, 0.1, sample_ids=[1, 2, 3])
    with pytest.raises(ValueError, match="3 channels"):
        cutout(torch.rand(2, 1, 16, 16), 0.1)


# ----------------------------------------------------------------------------------------------- band noise


def _reference_mask(height: int, width: int, frequency: str, bandwidth: str) -> np.ndarray:
    """The square annulus by exact rational arithmetic: radius max(|2k/H|, |2l/W|) in [f - w/2, f + w/2), with the
    Nyquist radius 1 included when the band reaches it."""
    low = Fraction(frequency) - Fraction(bandwidth) / 2
    high = Fraction(frequency) + Fraction(bandwidth) / 2

    def signed(index: int, n: int) -> int:  # numpy's fftfreq order: 0, 1, ..., then the negatives
        return index if index < (n + 1) // 2 else index - n

    mask = np.zeros((height, width), dtype=bool)
    for k in range(height):
        for m in range(width):
            radius = max(
                Fraction(2 * abs(signed(k, height)), height), Fraction(2 * abs(signed(m, width)), width)
            )
            mask[k, m] = low <= radius and (radius < high or (high >= 1 and radius <= 1))
    return mask


@pytest.mark.parametrize("size", [(32, 32), (40, 40), (15, 22)])
@pytest.mark.parametrize("frequency", ["0.1", "0.5", "0.9"])
def test_square_annulus_matches_exact_reference(size, frequency):
    # 40x40 puts radii exactly on the band edges (k/20 = 0.4, 0.6): the edge convention is tested too.
    mask = square_annulus_mask(*size, float(frequency), 0.2)
    assert np.array_equal(mask.numpy(), _reference_mask(*size, frequency, "0.2"))
    radius = frequency_radius(*size)
    assert float(radius.max()) <= 1.0 and float(radius[0, 0]) == 0.0
    # Symmetric under k -> -k, so the band-passed noise is real.
    flipped = torch.roll(mask.flip(0, 1), shifts=(1, 1), dims=(0, 1))
    assert torch.equal(flipped, mask)


@pytest.mark.parametrize("equal_energy", [False, True])
def test_band_noise_spectrum_lies_in_the_annulus_with_the_white_noise_phase(equal_energy):
    ids = torch.tensor([4, 8, 15])
    for size, frequency in [((32, 32), 0.3), ((24, 36), 0.7)]:
        noise = band_pass_noise(ids, size, frequency, seed=2, equal_energy=equal_energy).double()
        white = white_sign_noise(ids, (3, *size), seed=2, dtype=torch.float64)
        mask = square_annulus_mask(*size, frequency, 0.2)
        spectrum, white_spectrum = torch.fft.fft2(noise), torch.fft.fft2(white)
        scale = float(white_spectrum.abs().max())
        assert float(spectrum[..., ~mask].abs().max()) < 1e-5 * scale  # nothing outside the annulus
        inside, reference = spectrum[..., mask], white_spectrum[..., mask]
        # Inside: the white noise's coefficients times one positive factor per image (1 without rescaling), i.e.
        # the same phase and relative amplitudes.
        factor = (inside.abs().sum(dim=(-1, -2)) / reference.abs().sum(dim=(-1, -2)))[:, None, None]
        if not equal_energy:
            assert torch.allclose(factor, torch.ones_like(factor), atol=1e-6)
        assert torch.allclose(inside, reference * factor, atol=1e-5 * scale)


def test_band_pass_is_real_and_parseval_sets_its_energy():
    white = white_sign_noise(torch.arange(64), (3, 32, 32), seed=0, dtype=torch.float64)
    mask = square_annulus_mask(32, 32, 0.5, 0.2)
    full = torch.fft.ifft2(torch.fft.fft2(white) * mask)
    assert float(full.imag.abs().max()) < 1e-12  # a symmetric mask keeps the noise real
    noise = band_pass(white, 0.5)
    assert torch.allclose(noise, full.real)
    # White noise of unit variance keeps, on average, the fraction of the frequencies in the band.
    fraction = float(mask.double().mean())
    assert math.isclose(float(noise.square().mean()), fraction, rel_tol=0.05)
    # With equal energy, every image's noise has RMS 1 exactly.
    equal = band_pass_noise(torch.arange(5), (32, 32), 0.2, equal_energy=True)
    assert torch.allclose(equal.square().mean(dim=(1, 2, 3)), torch.ones(5), atol=1e-5)


def test_white_sign_noise_is_balanced_plus_minus_one():
    noise = white_sign_noise(torch.arange(20), (3, 16, 16), seed=9)
    assert set(noise.unique().tolist()) == {-1.0, 1.0}
    assert abs(float(noise.mean())) < 0.03  # 15360 signs: std of the mean 0.008


def test_add_band_noise_determinism_batch_independence_seed_and_magnitude():
    images = torch.rand(7, 3, 32, 32)
    ids = torch.tensor([10, 11, 12, 2**33, 14, 15, 16])
    whole = add_band_noise(images, 0.4, seed=1, sample_ids=ids, clip=False)
    parts = torch.cat(
        [
            add_band_noise(images[i : i + 2], 0.4, seed=1, sample_ids=ids[i : i + 2], clip=False)
            for i in range(0, 7, 2)
        ]
    )
    assert torch.equal(whole, parts)
    other = add_band_noise(images, 0.4, seed=2, sample_ids=ids, clip=False)
    assert all(not torch.allclose(a, b) for a, b in zip(other, whole, strict=True))
    # The added noise is the unit band noise times the per-channel magnitude (default: 0.7 x ImageNet std).
    unit = band_pass_noise(ids, (32, 32), 0.4, seed=1)
    expected = images + torch.tensor(REFERENCE_MAGNITUDE).view(1, 3, 1, 1) * unit
    assert torch.allclose(whole, expected, atol=1e-6)
    scaled = add_band_noise(images, 0.4, magnitude=(0.0, 0.1, 0.2), seed=1, sample_ids=ids, clip=False)
    assert torch.equal(scaled[:, 0], images[:, 0])
    assert torch.allclose(scaled - images, torch.tensor([0.0, 0.1, 0.2]).view(1, 3, 1, 1) * unit, atol=1e-6)
    # Clipping, and uint8 in, uint8 out.
    loud = add_band_noise(images, 0.9, magnitude=3.0, clip=False)
    assert float(loud.min()) < 0 and float(loud.max()) > 1
    clipped = add_band_noise(images, 0.9, magnitude=3.0)
    assert float(clipped.min()) >= 0 and float(clipped.max()) <= 1
    as_uint8 = add_band_noise((images * 255).to(torch.uint8), 0.4, seed=1)
    assert as_uint8.dtype == torch.uint8 and as_uint8.shape == images.shape


def test_band_noise_errors():
    images = torch.rand(2, 3, 32, 32)
    with pytest.raises(ValueError, match="frequency must lie in"):
        add_band_noise(images, 1.2)
    with pytest.raises(ValueError, match="bandwidth must lie in"):
        add_band_noise(images, 0.5, bandwidth=0.0)
    with pytest.raises(ValueError, match="No frequency of a 2x2 image"):
        add_band_noise(torch.rand(1, 3, 2, 2), 0.5)
    with pytest.raises(ValueError, match="magnitude must be"):
        add_band_noise(images, 0.5, magnitude=(0.1, 0.2))
    with pytest.raises(ValueError, match="magnitude must be"):
        add_band_noise(images, 0.5, magnitude=-1.0)
    with pytest.raises(ValueError, match="real tensor"):
        band_pass(torch.zeros(4, 4, dtype=torch.complex64), 0.5)
