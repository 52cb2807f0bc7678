"""The random blurs (motion_blur, glass_blur) against the reference `imagecorruptions` 1.1.2.

Given the reference's random draws (its motion angle, its glass offsets, patched into NumPy's generator), ours is
pixel-close to the reference; with draws from our own streams, SSIM / PSNR statistics match the reference's over
seeds. The "cifar" profile is checked against make_cifar_c.py's tables and algorithms.
"""

import numpy as np
import pytest
import skimage.data
import skimage.filters
import torch
from reference_corruptions import (
    assert_statistics_match,
    imagecorruptions,
    mean_ssim_psnr,
    reference_corrupt,
    reference_statistics,
)
from reference_corruptions import difference as _difference
from reference_corruptions import photo as _photo
from reference_corruptions import to_uint8 as _to_uint8

import hf_vitrobust.corruptions.motion_glass as motion_glass
from hf_vitrobust.corruptions import corrupt

NAMES = ("motion_blur", "glass_blur")
SEVERITIES = (1, 2, 3, 4, 5)


@pytest.fixture(scope="module")
def small_photos() -> torch.Tensor:
    """Two natural non-square photos, 48x64, for the slow per-pixel reference loop of glass_blur."""
    return torch.cat([_photo(skimage.data.rocket(), (48, 64)), _photo(skimage.data.coffee(), (48, 64))])


# ---------------------------------------------------------------- motion_blur


# Measured with torch 2.14 on CPU: mean |diff| <= 0.002 and max 1 (truncation ties) for every cell.
@pytest.mark.parametrize("severity", SEVERITIES)
def test_motion_blur_matches_reference_given_angle(photos, monkeypatch, severity):
    radius, sigma = motion_glass.MOTION_BLUR_PARAMS["imagenet"][severity - 1]
    for angle in (-44.3, -10.0, 0.0, 17.7, 44.9):
        monkeypatch.setattr(imagecorruptions.corruptions.np.random, "uniform", lambda *args, a=angle: a)
        reference = reference_corrupt(photos[:2], "motion_blur", severity)
        ours = motion_glass.motion_blur_with_angles(
            photos[:2].float() / 255, radius, sigma, torch.tensor([angle] * 2)
        )
        mean, worst = _difference(_to_uint8(ours), reference)
        assert mean <= 0.01 and worst <= 1, f"s{severity} angle {angle}: mean |diff| {mean:.4f}, max {worst}"


def test_motion_blur_angles_are_per_image(photos):
    """Two different angles in one batch give each image the blur of its own angle."""
    images = photos[:2].float() / 255
    both = motion_glass.motion_blur_with_angles(images, 15, 8, torch.tensor([-30.0, 30.0]))
    first = motion_glass.motion_blur_with_angles(images[:1], 15, 8, torch.tensor([-30.0]))
    second = motion_glass.motion_blur_with_angles(images[1:], 15, 8, torch.tensor([30.0]))
    torch.testing.assert_close(both, torch.cat([first, second]), rtol=0, atol=1e-6)
    swapped = motion_glass.motion_blur_with_angles(images[:1], 15, 8, torch.tensor([30.0]))
    assert (swapped - first).abs().mean() > 0.005


def test_motion_blur_stops_at_the_image_border(monkeypatch):
    """The reference drops the taps from the first one whose shift reaches the image size (a 32x32 image, 41 taps)."""
    image = torch.randint(
        0, 256, (1, 3, 32, 32), generator=torch.Generator().manual_seed(0), dtype=torch.uint8
    )
    monkeypatch.setattr(imagecorruptions.corruptions.np.random, "uniform", lambda *args: 20.0)
    reference = reference_corrupt(image, "motion_blur", 5)
    ours = motion_glass.motion_blur_with_angles(image.float() / 255, 20, 15, torch.tensor([20.0]))
    mean, worst = _difference(_to_uint8(ours), reference)
    assert mean <= 0.01 and worst <= 1, f"mean |diff| {mean:.4f}, max {worst}"


# ---------------------------------------------------------------- glass_blur


def _reference_shuffle_loop(x: np.ndarray, offsets: np.ndarray, max_delta: int) -> np.ndarray:
    """The reference's shuffle loop, with its (dy, dx) read from `offsets` (2, H, W) instead of np.random.randint."""
    x = x.copy()
    for h in range(x.shape[0] - max_delta, max_delta, -1):
        for w in range(x.shape[1] - max_delta, max_delta, -1):
            dy, dx = offsets[:, h, w]
            h_prime, w_prime = h + dy, w + dx
            x[h, w], x[h_prime, w_prime] = x[h_prime, w_prime], x[h, w]
    return x


@pytest.mark.parametrize("max_delta", [1, 2, 3, 4])
def test_glass_shuffle_is_the_reference_loop(max_delta):
    """Given the same offsets, the batched shuffle equals the reference's sequential loop exactly.

    The reference's `x[h, w], x[h', w'] = x[h', w'], x[h, w]` on NumPy views is a copy, not a swap: the result is
    no permutation (values are duplicated and lost), but every output pixel is a whole RGB pixel of the input.
    """
    generator = np.random.default_rng(max_delta)
    images = generator.integers(0, 256, (2, 40, 37, 3)).astype(np.uint8)
    offsets = generator.integers(-max_delta, max_delta, (2, 2, 40, 37))
    expected = np.stack(
        [_reference_shuffle_loop(x, o, max_delta) for x, o in zip(images, offsets, strict=True)]
    )
    sources = motion_glass.glass_shuffle_sources(torch.from_numpy(offsets), max_delta).numpy()
    ours = np.stack([x.reshape(-1, 3)[s].reshape(x.shape) for x, s in zip(images, sources, strict=True)])
    np.testing.assert_array_equal(ours, expected)
    # Whole RGB triplets move; with max_delta >= 2 some pixels copy a partner that the loop overwrote before (a
    # chain), so their source is neither themselves nor their direct partner.
    assert sources.min() >= 0 and sources.max() < 40 * 37
    assert (sources != np.arange(40 * 37)).mean() > 0.3
    rows, cols = np.arange(40)[:, None], np.arange(37)[None, :]
    direct = ((rows + offsets[:, 0]) * 37 + cols + offsets[:, 1]).reshape(2, -1)
    chained = (sources != direct) & (sources != np.arange(40 * 37))
    assert chained.any() == (max_delta >= 2)


def _patch_randint(monkeypatch, offsets: np.ndarray, max_delta: int) -> None:
    """Make the reference's np.random.randint(-d, d, size=(2,)) return (dx, dy) from `offsets` (P, 2, H, W) in its
    loop order: passes, then rows and columns from the bottom right."""
    height, width = offsets.shape[-2:]
    draws = [
        np.array([offsets[p, 1, h, w], offsets[p, 0, h, w]])
        for p in range(offsets.shape[0])
        for h in range(height - max_delta, max_delta, -1)
        for w in range(width - max_delta, max_delta, -1)
    ]
    iterator = iter(draws)
    monkeypatch.setattr(
        imagecorruptions.corruptions.np.random, "randint", lambda *args, **kwargs: next(iterator)
    )


# Measured with torch 2.14 on CPU: max |diff| 1 (truncation ties), mean <= 0.01.
@pytest.mark.parametrize("severity", SEVERITIES)
def test_glass_blur_matches_reference_given_offsets(small_photos, monkeypatch, severity):
    sigma, max_delta, iterations = motion_glass.GLASS_BLUR_PARAMS["imagenet"][severity - 1]
    for index, image in enumerate(small_photos):
        offsets = motion_glass.glass_offsets(7, torch.tensor([index]), max_delta, iterations, 48, 64)
        _patch_randint(monkeypatch, offsets[:, 0].numpy(), max_delta)
        reference = reference_corrupt(image[None], "glass_blur", severity)
        ours = _to_uint8(
            motion_glass.glass_blur_with_offsets(image[None].float() / 255, sigma, max_delta, offsets)
        )
        mean, worst = _difference(ours, reference)
        assert mean <= 0.02 and worst <= 1, f"s{severity} image {index}: mean |diff| {mean:.4f}, max {worst}"


def test_glass_offsets_are_uniform():
    offsets = motion_glass.glass_offsets(0, torch.arange(4), 3, 2, 64, 64)
    assert offsets.shape == (2, 4, 2, 64, 64)
    values, counts = offsets.unique(return_counts=True)
    assert values.tolist() == [-3, -2, -1, 0, 1, 2]  # np.random.randint(-3, 3): the upper bound is exclusive
    assert counts.min() / counts.max() > 0.95


# ---------------------------------------------------------------- statistics over seeds


# Measured (ours vs reference mean SSIM / PSNR over seeds) in the report of this module; both floors hold.
@pytest.mark.parametrize("severity", SEVERITIES)
def test_motion_blur_statistics(photos, severity):
    seeds = range(4)
    ours = np.array([mean_ssim_psnr(photos, corrupt(photos, "motion_blur", severity, seed=s)) for s in seeds])
    assert_statistics_match(ours, reference_statistics(photos, "motion_blur", severity, seeds))


@pytest.mark.slow
@pytest.mark.parametrize("severity", SEVERITIES)
def test_glass_blur_statistics(photos, severity):
    # A 128-pixel window of two photos: the reference shuffles pixels in a Python loop over every pixel (about 3 s
    # per 224-pixel image), and glass blur is local (a shift of at most 4 pixels), so the window keeps its statistics.
    images, seeds = photos[:2, :, 48:176, 48:176].contiguous(), range(2)
    ours = np.array([mean_ssim_psnr(images, corrupt(images, "glass_blur", severity, seed=s)) for s in seeds])
    assert_statistics_match(ours, reference_statistics(images, "glass_blur", severity, seeds))


# ---------------------------------------------------------------- CIFAR profile


def test_cifar_tables_are_make_cifar_c():
    # Source: hendrycks/robustness, ImageNet-C/create_c/make_cifar_c.py (motion_blur, glass_blur).
    assert motion_glass.MOTION_BLUR_PARAMS["cifar"] == ((6, 1), (6, 1.5), (6, 2), (8, 2), (9, 2.5))
    assert motion_glass.GLASS_BLUR_PARAMS["cifar"] == (
        (0.05, 1, 1),
        (0.25, 1, 1),
        (0.4, 1, 1),
        (0.25, 1, 2),
        (0.4, 1, 2),
    )
    # Source: imagecorruptions 1.1.2 corruptions.py (motion_blur, glass_blur).
    assert motion_glass.MOTION_BLUR_PARAMS["imagenet"] == ((10, 3), (15, 5), (15, 8), (15, 12), (20, 15))
    assert motion_glass.GLASS_BLUR_PARAMS["imagenet"] == (
        (0.7, 1, 2),
        (0.9, 2, 1),
        (1, 2, 3),
        (1.1, 3, 2),
        (1.5, 4, 2),
    )


@pytest.mark.parametrize("severity", SEVERITIES)
def test_cifar_motion_blur_is_the_reference_algorithm(tiny_photos, severity):
    """make_cifar_c.py blurs with ImageMagick (Wand); we run imagecorruptions' algorithm with the CIFAR table."""
    radius, sigma = motion_glass.MOTION_BLUR_PARAMS["cifar"][severity - 1]
    angles = (-40.0, 5.0, 33.0)
    reference = np.stack(
        [
            np.uint8(
                np.clip(
                    imagecorruptions.corruptions._motion_blur(x.permute(1, 2, 0).numpy(), radius, sigma, a),
                    0,
                    255,
                )
            )
            for x, a in zip(tiny_photos, angles, strict=True)
        ]
    )
    ours = motion_glass.motion_blur_with_angles(
        tiny_photos.float() / 255, radius, sigma, torch.tensor(angles)
    )
    mean, worst = _difference(_to_uint8(ours), torch.from_numpy(reference).permute(0, 3, 1, 2))
    assert mean <= 0.01 and worst <= 1, f"s{severity}: mean |diff| {mean:.4f}, max {worst}"
    assert (
        corrupt(tiny_photos, "motion_blur", severity).int() - tiny_photos.int()
    ).abs().float().mean() > 1.0


def _cifar_glass_reference(image: np.ndarray, severity: int, seed: int) -> np.ndarray:
    """make_cifar_c.py's glass_blur on one uint8 32x32x3 image, with NumPy's generator seeded by `seed`."""
    sigma, max_delta, iterations = ((0.05, 1, 1), (0.25, 1, 1), (0.4, 1, 1), (0.25, 1, 2), (0.4, 1, 2))[
        severity - 1
    ]
    np.random.seed(seed)
    x = np.uint8(skimage.filters.gaussian(image / 255.0, sigma=sigma, channel_axis=-1) * 255)
    for _ in range(iterations):
        for h in range(32 - max_delta, max_delta, -1):
            for w in range(32 - max_delta, max_delta, -1):
                dx, dy = np.random.randint(-max_delta, max_delta, size=(2,))
                h_prime, w_prime = h + dy, w + dx
                x[h, w], x[h_prime, w_prime] = x[h_prime, w_prime], x[h, w]
    return np.uint8(np.clip(skimage.filters.gaussian(x / 255.0, sigma=sigma, channel_axis=-1), 0, 1) * 255)


@pytest.mark.parametrize("severity", SEVERITIES)
def test_cifar_glass_blur_statistics(tiny_photos, severity):
    seeds = range(3)
    reference = np.array(
        [
            mean_ssim_psnr(
                tiny_photos,
                torch.from_numpy(
                    np.stack(
                        [_cifar_glass_reference(x.permute(1, 2, 0).numpy(), severity, s) for x in tiny_photos]
                    )
                ).permute(0, 3, 1, 2),
            )
            for s in seeds
        ]
    )
    ours = np.array(
        [mean_ssim_psnr(tiny_photos, corrupt(tiny_photos, "glass_blur", severity, seed=s)) for s in seeds]
    )
    assert_statistics_match(ours, reference)


def test_cifar_profile_is_the_default_for_32x32(tiny_photos):
    for name in NAMES:
        assert torch.equal(corrupt(tiny_photos, name, 3), corrupt(tiny_photos, name, 3, profile="cifar"))
        assert not torch.equal(
            corrupt(tiny_photos, name, 3), corrupt(tiny_photos, name, 3, profile="imagenet")
        )


# ---------------------------------------------------------------- determinism, dtypes


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_float_in_float_out(photos, name, dtype):
    images = photos[:1].to(dtype) / 255
    out = corrupt(images, name, 5)
    assert out.dtype == dtype and out.shape == images.shape
    assert out.min() >= 0 and out.max() <= 1
    assert (out - images).abs().mean() > 0.005
    as_uint8 = corrupt(photos[:1], name, 5)
    assert as_uint8.dtype == torch.uint8 and as_uint8.shape == photos[:1].shape
    assert torch.equal(as_uint8, _to_uint8(corrupt(photos[:1].float() / 255, name, 5)))
