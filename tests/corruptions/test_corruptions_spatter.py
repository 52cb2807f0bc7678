"""spatter against the reference `imagecorruptions` 1.1.2, make_cifar_c.py and the OpenCV functions it calls.

The OpenCV steps of the water mode (Canny, distanceTransform, equalizeHist) are checked against cv2 itself; the
whole corruption pixel by pixel against the reference run with its `np.random.normal` liquid layer replaced by
our draw; and mean SSIM / PSNR over seeds against the reference's own NumPy seeds.
"""

import cv2
import imagecorruptions.corruptions as reference_module
import numpy as np
import pytest
import torch
from reference_corruptions import (
    assert_statistics_match,
    mean_ssim_psnr,
    reference_corrupt,
    reference_statistics,
)
from reference_corruptions import difference as _difference
from skimage.filters import gaussian

import hf_vitrobust.corruptions.spatter as spatter_module
from hf_vitrobust.corruptions import corrupt
from hf_vitrobust.corruptions.randomness import normal

SEVERITIES = (1, 2, 3, 4, 5)
WATER_KERNEL = np.array([[-2, -1, 0], [-1, 1, 1], [0, 1, 2]])


def _liquid_layers(count: int) -> list[np.ndarray]:
    """uint8 liquid layers as the water mode makes them, over the sizes, spreads and blurs of both profiles."""
    rng = np.random.default_rng(0)
    layers = []
    for index in range(count):
        height, width = ((224, 224), (32, 32), (61, 48))[index % 3]
        std, sigma = ((0.3, 4), (0.3, 2), (0.1, 0.7), (0.3, 1), (0.1, 0.8))[index % 5]
        layer = gaussian(rng.normal(0.65, std, (height, width)), sigma=sigma)
        layer[layer < 0.68] = 0
        layers.append((layer * 255).astype(np.uint8))
    return layers


# ---------------------------------------------------------------------------------------------------------------
# The OpenCV steps against cv2


def test_canny_is_cv2_canny():
    for layer in _liquid_layers(15):
        expected = cv2.Canny(layer, 50, 150) > 0
        ours = spatter_module.canny(torch.from_numpy(layer.astype(np.int64))[None], 50, 150)[0].numpy()
        assert expected.any()
        assert (ours == expected).all(), (layer.shape, int((ours != expected).sum()))


def test_canny_hysteresis_follows_weak_chains():
    """A ramp whose strong edge sits at one end: the weak ridge is kept only through hysteresis."""
    layer = np.zeros((20, 40), np.uint8)
    layer[:, 20:] = 100
    layer[10:, 20:] = 140  # a stronger step on the lower half of the same vertical edge
    ours = spatter_module.canny(torch.from_numpy(layer.astype(np.int64))[None], 150, 450)[0].numpy()
    expected = cv2.Canny(layer, 150, 450) > 0
    assert (ours == expected).all()
    assert expected[:10].any() and expected[10:].any()  # the upper, weak part survives through its neighbour


def test_truncated_chamfer_distance_is_cv2_distance_transform():
    worst, truncated = 0.0, False
    for layer in _liquid_layers(15):
        edges = cv2.Canny(layer, 50, 150)
        expected = cv2.threshold(
            cv2.distanceTransform(255 - edges, cv2.DIST_L2, 5), 20, 20, cv2.THRESH_TRUNC
        )[1]
        ours = spatter_module.truncated_chamfer_distance(torch.from_numpy(edges > 0)[None])[0].numpy()
        assert ours.dtype == np.float32
        truncated |= bool(expected.max() == 20)
        difference = np.abs(ours - expected)
        # Equal-cost paths summed in float32 in another order than OpenCV's two passes: a few ulp at most.
        assert difference.max() <= 4e-6 and (difference > 0).mean() < 0.01, (
            difference.max(),
            difference.mean(),
        )
        worst = max(worst, float(difference.max()))
    assert worst > 0 and truncated  # float32 distances, not a rounded copy; the cap at 20 is reached


def test_chamfer_distance_is_not_euclidean():
    """cv2's DIST_L2 with mask 5 is the chamfer approximation: a lone zero pixel is at 1.4 diagonally (not 1.414)
    and 2.1969 a knight's move away (not 2.236)."""
    zero = torch.zeros(1, 9, 9, dtype=torch.bool)
    zero[0, 4, 4] = True
    distance = spatter_module.truncated_chamfer_distance(zero)[0]
    expected = cv2.distanceTransform(np.where(zero[0].numpy(), 0, 255).astype(np.uint8), cv2.DIST_L2, 5)
    torch.testing.assert_close(distance, torch.from_numpy(expected), rtol=0, atol=1e-6)
    assert abs(distance[5, 5].item() - 1.4) < 1e-6 and abs(distance[5, 6].item() - 2.1969) < 1e-6


def test_equalize_hist_is_cv2_equalize_hist():
    rng = np.random.default_rng(1)
    maps = [
        rng.integers(0, 21, (32, 32)).astype(np.uint8),
        rng.integers(3, 9, (32, 32)).astype(np.uint8),
        np.minimum(rng.geometric(0.2, (32, 32)) + 100, 255).astype(np.uint8),
        np.full((32, 32), 7, np.uint8),  # a single level: cv2 leaves it
        rng.integers(0, 256, (32, 32)).astype(np.uint8),
    ]
    ours = spatter_module.equalize_hist(torch.from_numpy(np.stack(maps).astype(np.int64)))
    for ours_map, gray in zip(ours.numpy(), maps, strict=True):
        assert (ours_map == cv2.equalizeHist(gray)).all()


@pytest.mark.parametrize("route", ["torch", "opencv"])
def test_water_mask_is_the_reference_pipeline(route):
    """Both routes: the torch re-implementation (what CUDA runs) and the CPU route through cv2 itself."""
    opencv = cv2 if route == "opencv" else None
    for layer in _liquid_layers(9):
        dist = cv2.distanceTransform(255 - cv2.Canny(layer, 50, 150), cv2.DIST_L2, 5)
        _, dist = cv2.threshold(dist, 20, 20, cv2.THRESH_TRUNC)
        dist = cv2.equalizeHist(cv2.blur(dist, (3, 3)).astype(np.uint8))
        dist = cv2.blur(cv2.filter2D(dist, cv2.CV_8U, WATER_KERNEL), (3, 3)).astype(np.float32)
        expected = layer * dist
        layers = torch.from_numpy(np.stack([layer, layer[::-1].copy()]).astype(np.int64))
        ours = spatter_module.water_mask(layers, opencv=opencv).numpy()
        assert ours.dtype == np.float32 and (ours[0] == expected).all()


# ---------------------------------------------------------------------------------------------------------------
# Pixel fidelity with the reference's liquid layer replaced by ours


def _feed_liquid(monkeypatch, seed: int, sample_id: int, shape: tuple[int, int]) -> None:
    """Patch np.random.normal to hand the reference our standard normal draws, scaled to its loc and scale."""
    draw = normal(seed, torch.tensor([sample_id]), "spatter/liquid", shape, torch.float64)[0].numpy()

    def fake_normal(size, loc, scale):
        assert tuple(size) == shape
        return draw * scale + loc

    monkeypatch.setattr(reference_module.np.random, "normal", fake_normal)


@pytest.mark.parametrize("severity", SEVERITIES)
def test_pixels_match_reference_with_our_draws(monkeypatch, photos, severity):
    ids = [4, 9, 1]
    ours = corrupt(photos, "spatter", severity, seed=5, sample_ids=ids)
    expected = []
    for image, sample_id in zip(photos, ids, strict=True):
        _feed_liquid(monkeypatch, 5, sample_id, (224, 224))
        expected.append(reference_corrupt(image[None], "spatter", severity))
    mean, worst = _difference(ours, torch.cat(expected))
    # Water (severities 1-3) is exact; mud rounds its float32 blur differently on a handful of pixels.
    assert worst <= 1 and mean < 1e-3, (mean, worst)
    assert (ours != photos).float().mean() > 0.01


# ---------------------------------------------------------------------------------------------------------------
# Statistical fidelity over seeds


@pytest.mark.slow
def test_statistics_match_imagecorruptions(photos):
    seeds = range(4)
    for severity in SEVERITIES:
        ours = np.array([mean_ssim_psnr(photos, corrupt(photos, "spatter", severity, seed=s)) for s in seeds])
        assert_statistics_match(ours, reference_statistics(photos, "spatter", severity, seeds))


def test_fidelity_checks_can_fail(photos):
    reference = reference_statistics(photos[:1], "spatter", 1, range(2))
    wrong = np.array(
        [mean_ssim_psnr(photos[:1], corrupt(photos[:1], "spatter", 5, seed=s)) for s in range(2)]
    )
    with pytest.raises(AssertionError):
        assert_statistics_match(wrong, reference)


# ---------------------------------------------------------------------------------------------------------------
# "cifar" profile against make_cifar_c.py


def test_cifar_tables_match_make_cifar_c():
    # hendrycks/robustness ImageNet-C/create_c/make_cifar_c.py, the `c = [...]` line of spatter:
    assert spatter_module.SPATTER["cifar"] == (
        (0.62, 0.1, 0.7, 0.7, 0.5, 0),
        (0.65, 0.1, 0.8, 0.7, 0.5, 0),
        (0.65, 0.3, 1, 0.69, 0.5, 0),
        (0.65, 0.1, 0.7, 0.69, 0.6, 1),
        (0.65, 0.1, 0.5, 0.68, 0.6, 1),
    )
    # imagecorruptions 1.1.2 corruptions.py, for comparison:
    assert spatter_module.SPATTER["imagenet"] == (
        (0.65, 0.3, 4, 0.69, 0.6, 0),
        (0.65, 0.3, 3, 0.68, 0.6, 0),
        (0.65, 0.3, 2, 0.68, 0.5, 0),
        (0.65, 0.3, 1, 0.65, 1.5, 1),
        (0.67, 0.4, 1, 0.65, 1.5, 1),
    )


def _cifar_reference(image: np.ndarray, severity: int, standard_normal: np.ndarray) -> np.ndarray:
    """make_cifar_c.py's spatter on one uint8 (32, 32, 3) image, its liquid layer loc + scale * `standard_normal`."""
    c = (
        (0.62, 0.1, 0.7, 0.7, 0.5, 0),
        (0.65, 0.1, 0.8, 0.7, 0.5, 0),
        (0.65, 0.3, 1, 0.69, 0.5, 0),
        (0.65, 0.1, 0.7, 0.69, 0.6, 1),
        (0.65, 0.1, 0.5, 0.68, 0.6, 1),
    )[severity - 1]
    x = np.array(image, dtype=np.float32) / 255.0
    liquid_layer = gaussian(standard_normal * c[1] + c[0], sigma=c[2])
    liquid_layer[liquid_layer < c[3]] = 0
    if c[5] == 0:
        liquid_layer = (liquid_layer * 255).astype(np.uint8)
        dist = cv2.distanceTransform(255 - cv2.Canny(liquid_layer, 50, 150), cv2.DIST_L2, 5)
        _, dist = cv2.threshold(dist, 20, 20, cv2.THRESH_TRUNC)
        dist = cv2.equalizeHist(cv2.blur(dist, (3, 3)).astype(np.uint8))
        dist = cv2.blur(cv2.filter2D(dist, cv2.CV_8U, WATER_KERNEL), (3, 3)).astype(np.float32)
        m = liquid_layer * dist
        m = m / np.max(m) * c[4]
        color = np.array([175, 238, 238], np.float32) / 255
        out = np.clip(x + m[..., None] * color, 0, 1)
    else:
        m = gaussian(np.where(liquid_layer > c[3], 1, 0).astype(np.float32), sigma=c[4])
        m[m < 0.8] = 0
        color = np.array([63, 42, 20], np.float32) / 255 * m[..., None]
        out = np.clip(x * (1 - m[..., None]) + color, 0, 1)
    return np.uint8(out * 255)


@pytest.mark.parametrize("severity", SEVERITIES)
def test_cifar_pixels_match_make_cifar_c_with_our_draws(tiny_photos, severity):
    ids = torch.tensor([3, 8, 11])
    ours = corrupt(tiny_photos, "spatter", severity, seed=7, sample_ids=ids)
    draws = normal(7, ids, "spatter/liquid", (32, 32), torch.float64).numpy()
    expected = [
        _cifar_reference(image.permute(1, 2, 0).numpy(), severity, draw)
        for image, draw in zip(tiny_photos, draws, strict=True)
    ]
    mean, worst = _difference(ours, torch.from_numpy(np.stack(expected)).permute(0, 3, 1, 2))
    assert worst <= 1 and mean < 0.01, (mean, worst)
    assert (ours != tiny_photos).any()


def test_cifar_statistics_match_make_cifar_c(tiny_photos):
    seeds = range(6)
    for severity in SEVERITIES:
        ours = np.array(
            [mean_ssim_psnr(tiny_photos, corrupt(tiny_photos, "spatter", severity, seed=s)) for s in seeds]
        )
        reference = []
        for seed in seeds:
            np.random.seed(seed)
            expected = [
                _cifar_reference(image.permute(1, 2, 0).numpy(), severity, np.random.normal(size=(32, 32)))
                for image in tiny_photos
            ]
            reference.append(
                mean_ssim_psnr(tiny_photos, torch.from_numpy(np.stack(expected)).permute(0, 3, 1, 2))
            )
        assert_statistics_match(ours, np.array(reference))


def test_cifar_profile_is_the_default_for_32x32(tiny_photos):
    assert torch.equal(
        corrupt(tiny_photos, "spatter", 2), corrupt(tiny_photos, "spatter", 2, profile="cifar")
    )
    assert not torch.equal(
        corrupt(tiny_photos, "spatter", 2), corrupt(tiny_photos, "spatter", 2, profile="imagenet")
    )


# ---------------------------------------------------------------------------------------------------------------
# Determinism, batch invariance, dtypes


@pytest.mark.parametrize("severity", (2, 5))
def test_determinism_and_batch_invariance(photos, severity):
    images = photos.float() / 255
    ids = torch.tensor([5, 17, 2])
    together = corrupt(images, "spatter", severity, seed=3, sample_ids=ids)
    assert torch.equal(together, corrupt(images, "spatter", severity, seed=3, sample_ids=ids))
    alone = torch.cat(
        [
            corrupt(image[None], "spatter", severity, seed=3, sample_ids=ids[i : i + 1])
            for i, image in enumerate(images)
        ]
    )
    torch.testing.assert_close(together, alone, rtol=0, atol=1e-6)
    reversed_order = corrupt(images.flip(0), "spatter", severity, seed=3, sample_ids=ids.flip(0)).flip(0)
    torch.testing.assert_close(together, reversed_order, rtol=0, atol=1e-6)
    assert (together - corrupt(images, "spatter", severity, seed=4, sample_ids=ids)).abs().mean() > 1e-3
    assert (together - corrupt(images, "spatter", severity, seed=3, sample_ids=ids + 1)).abs().mean() > 1e-3


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_float_in_float_out(photos, dtype):
    images = photos[:1].to(dtype) / 255
    for severity in (1, 5):
        out = corrupt(images, "spatter", severity)
        assert out.dtype == dtype and out.shape == images.shape
        assert out.min() >= 0 and out.max() <= 1
        assert (out - images).abs().mean() > 0.002
    as_uint8 = corrupt(photos[:1], "spatter", 5)
    assert as_uint8.dtype == torch.uint8 and as_uint8.shape == photos[:1].shape
    assert torch.equal(
        as_uint8, (corrupt(photos[:1].float() / 255, "spatter", 5) * 255).floor().to(torch.uint8)
    )


def test_no_liquid_adds_nothing(monkeypatch):
    """A liquid layer wholly below the threshold leaves the image as it is (the reference would divide by 0)."""
    images = torch.rand(2, 3, 32, 32, generator=torch.Generator().manual_seed(0))
    monkeypatch.setattr(
        spatter_module, "normal", lambda *args, **kwargs: torch.full((2, 32, 32), -10.0, dtype=torch.float64)
    )
    for severity in SEVERITIES:
        torch.testing.assert_close(corrupt(images, "spatter", severity), images, rtol=0, atol=0)
