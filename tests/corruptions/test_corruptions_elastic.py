"""elastic_transform against the reference `imagecorruptions` 1.1.2 and make_cifar_c.py.

Given the reference's uniform draws (patched into NumPy's generator), ours is pixel-close to the reference; with
draws from our own streams, SSIM / PSNR statistics match the reference's over seeds. The "cifar" profile is checked
against make_cifar_c.py's table and its algorithm (random affine warp, then the displacement fields), run here in
NumPy / OpenCV / scipy as in that script.
"""

import cv2
import numpy as np
import pytest
import scipy.ndimage
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

import hf_vitrobust.corruptions.geometric as geometric
from hf_vitrobust.corruptions import corrupt
from hf_vitrobust.corruptions.randomness import uniform

SEVERITIES = (1, 2, 3, 4, 5)


@pytest.fixture(scope="module")
def wide_photos() -> torch.Tensor:
    """Two natural non-square photos, 96x160: sigma and noise amplitude are scaled per axis by the reference."""
    return torch.cat([_photo(skimage.data.rocket(), (96, 160)), _photo(skimage.data.coffee(), (96, 160))])


def _patch_uniform(monkeypatch, draws: list[np.ndarray]) -> None:
    """Make NumPy's np.random.uniform(low, high, size) return low + (high - low) * u for the next u of `draws`."""
    iterator = iter(draws)

    def fake_uniform(low, high, size):
        u = next(iterator)
        assert u.shape == tuple(size)
        return low + (high - low) * u

    monkeypatch.setattr(imagecorruptions.corruptions.np.random, "uniform", fake_uniform)


# ---------------------------------------------------------------- building blocks


@pytest.mark.parametrize("sigmas", [(0.37, 0.41), (2.24, 3.2), (6.4, 6.4), (12.0, 1.0)])
def test_smooth_field_is_skimage_gaussian_reflect(sigmas):
    """Separable Gaussian with scipy's "reflect" padding, radius int(3 sigma + 0.5), even past the image size."""
    noise = np.random.default_rng(0).uniform(-1, 1, (2, 21, 37))
    expected = np.stack([skimage.filters.gaussian(x, sigmas, mode="reflect", truncate=3) for x in noise])
    ours = geometric.smooth_field(torch.from_numpy(noise), *sigmas).numpy()
    np.testing.assert_allclose(ours, expected, rtol=0, atol=1e-12)


def test_bilinear_reflect_is_map_coordinates():
    """Bilinear sampling with scipy's "reflect" mode, coordinates far outside the image included."""
    generator = np.random.default_rng(1)
    image = generator.uniform(0, 1, (1, 3, 20, 23)).astype(np.float32)
    rows, cols = generator.uniform(-45, 65, (2, 1, 20, 23))
    expected = np.stack(
        [
            scipy.ndimage.map_coordinates(image[0, c], [rows[0], cols[0]], order=1, mode="reflect")
            for c in range(3)
        ]
    )
    ours = geometric._bilinear_gather(
        torch.from_numpy(image), torch.from_numpy(rows), torch.from_numpy(cols), "reflect"
    )
    np.testing.assert_allclose(ours[0].numpy(), expected, rtol=0, atol=1e-6)


@pytest.mark.parametrize("perturbation", [2.56, 10.0])
def test_affine_warp_is_opencv(perturbation):
    """getAffineTransform + warpAffine(BORDER_REFLECT_101, bilinear) of OpenCV, for a batch of two maps."""
    generator = np.random.default_rng(2)
    image = generator.uniform(0, 1, (32, 32, 3)).astype(np.float32)
    source = np.float32([[26, 26], [26, 6], [6, 6]])
    targets = source + generator.uniform(-perturbation, perturbation, (2, 3, 2)).astype(np.float32)
    matrices = geometric.affine_from_points(
        torch.from_numpy(source).expand(2, 3, 2), torch.from_numpy(targets)
    )
    ours = geometric.warp_affine_reflect101(
        torch.from_numpy(image).permute(2, 0, 1)[None].expand(2, 3, 32, 32), matrices
    )
    for i, target in enumerate(targets):
        matrix = cv2.getAffineTransform(source, target)
        np.testing.assert_allclose(matrices[i].numpy(), matrix, rtol=0, atol=1e-9)
        expected = cv2.warpAffine(image, matrix, (32, 32), borderMode=cv2.BORDER_REFLECT_101)
        np.testing.assert_allclose(ours[i].permute(1, 2, 0).numpy(), expected, rtol=0, atol=1e-5)


# ---------------------------------------------------------------- imagenet profile, given the reference's draws


def _imagenet_case(monkeypatch, images: torch.Tensor, severity: int, seed: int) -> tuple[float, int]:
    height, width = images.shape[-2:]
    ids = torch.arange(len(images))
    noise_x = uniform(seed, ids, "test/dx", (height, width), torch.float64)
    noise_y = uniform(seed, ids, "test/dy", (height, width), torch.float64)
    # The reference draws dx, then dy, per image.
    _patch_uniform(monkeypatch, [u.numpy() for pair in zip(noise_x, noise_y, strict=True) for u in pair])
    reference = reference_corrupt(images, "elastic_transform", severity)
    ours = geometric.elastic_transform_with_draws(
        images.float() / 255, severity, "imagenet", noise_x, noise_y
    )
    return _difference(_to_uint8(ours), reference)


# Measured with torch 2.14 on CPU: max |diff| 1 (truncation ties), mean < 0.001, every cell.
@pytest.mark.parametrize("severity", SEVERITIES)
def test_imagenet_matches_reference_given_draws(photos, wide_photos, monkeypatch, severity):
    for name, images in (("224x224", photos[:2]), ("96x160", wide_photos)):
        mean, worst = _imagenet_case(monkeypatch, images, severity, seed=severity)
        assert mean <= 0.01 and worst <= 1, f"s{severity} {name}: mean |diff| {mean:.4f}, max {worst}"


# ---------------------------------------------------------------- statistics over seeds


# Measured (ours vs reference mean SSIM / PSNR over seeds) in the report of this module; both floors hold.
@pytest.mark.parametrize("severity", SEVERITIES)
def test_imagenet_statistics(photos, severity):
    seeds = range(3)
    ours = np.array(
        [mean_ssim_psnr(photos, corrupt(photos, "elastic_transform", severity, seed=s)) for s in seeds]
    )
    assert_statistics_match(ours, reference_statistics(photos, "elastic_transform", severity, seeds))


# ---------------------------------------------------------------- CIFAR profile


def test_tables_are_the_references():
    # Source: hendrycks/robustness, ImageNet-C/create_c/make_cifar_c.py `elastic_transform` (IMSIZE = 32).
    expected_cifar = (
        (0.0, 0.0, 2.56),
        (1.6, 6.4, 2.24),
        (2.56, 1.92, 1.92),
        (3.2, 1.28, 1.6),
        (3.2, 0.96, 0.96),
    )
    np.testing.assert_allclose(geometric.ELASTIC_CIFAR_PARAMS, expected_cifar, rtol=1e-12)
    # Source: imagecorruptions 1.1.2 corruptions.py `elastic_transform` (alpha = 250 * (0.05, ..., 0.12)).
    np.testing.assert_allclose(
        geometric.ELASTIC_IMAGENET_ALPHAS, (12.5, 16.25, 21.25, 25.0, 30.0), rtol=1e-12
    )


def _cifar_reference(image: np.ndarray, severity: int) -> np.ndarray:
    """make_cifar_c.py's elastic_transform on one uint8 32x32x3 image, with NumPy's global generator, as uint8."""
    c = ((0, 0, 2.56), (1.6, 6.4, 2.24), (2.56, 1.92, 1.92), (3.2, 1.28, 1.6), (3.2, 0.96, 0.96))[
        severity - 1
    ]
    x = np.array(image, dtype=np.float32) / 255.0
    shape = x.shape
    center = np.float32(shape[:2]) // 2
    half = min(shape[:2]) // 3
    source = np.float32([center + half, [center[0] + half, center[1] - half], center - half])
    target = source + np.random.uniform(-c[2], c[2], size=source.shape).astype(np.float32)
    x = cv2.warpAffine(
        x, cv2.getAffineTransform(source, target), shape[:2][::-1], borderMode=cv2.BORDER_REFLECT_101
    )
    dx = (
        skimage.filters.gaussian(np.random.uniform(-1, 1, size=shape[:2]), c[1], mode="reflect", truncate=3)
        * c[0]
    ).astype(np.float32)
    dy = (
        skimage.filters.gaussian(np.random.uniform(-1, 1, size=shape[:2]), c[1], mode="reflect", truncate=3)
        * c[0]
    ).astype(np.float32)
    rows, cols, channels = np.meshgrid(np.arange(shape[0]), np.arange(shape[1]), np.arange(3), indexing="ij")
    indices = (rows + dy[..., None]).reshape(-1), (cols + dx[..., None]).reshape(-1), channels.reshape(-1)
    out = scipy.ndimage.map_coordinates(x, indices, order=1, mode="reflect").reshape(shape)
    return np.uint8(np.clip(out, 0, 1) * 255)


def _cifar_reference_batch(images: torch.Tensor, severity: int) -> torch.Tensor:
    outputs = [_cifar_reference(x.permute(1, 2, 0).numpy(), severity) for x in images]
    return torch.from_numpy(np.stack(outputs)).permute(0, 3, 1, 2)


# Measured with torch 2.14 / OpenCV 5.0 on CPU: max |diff| 1 (truncation ties), every cell.
@pytest.mark.parametrize("severity", SEVERITIES)
def test_cifar_matches_make_cifar_c_given_draws(tiny_photos, monkeypatch, severity):
    ids = torch.arange(len(tiny_photos))
    affine = uniform(severity, ids, "test/affine", (3, 2), torch.float64)
    noise_x = uniform(severity, ids, "test/dx", (32, 32), torch.float64)
    noise_y = uniform(severity, ids, "test/dy", (32, 32), torch.float64)
    # make_cifar_c.py draws the affine points, then dx, then dy, per image.
    _patch_uniform(
        monkeypatch, [u.numpy() for triple in zip(affine, noise_x, noise_y, strict=True) for u in triple]
    )
    reference = _cifar_reference_batch(tiny_photos, severity)
    ours = geometric.elastic_transform_with_draws(
        tiny_photos.float() / 255, severity, "cifar", noise_x, noise_y, affine
    )
    mean, worst = _difference(_to_uint8(ours), reference)
    assert mean <= 0.02 and worst <= 1, f"s{severity}: mean |diff| {mean:.4f}, max {worst}"


@pytest.mark.parametrize("severity", SEVERITIES)
def test_cifar_statistics(tiny_photos, severity):
    seeds = range(5)
    reference = []
    for s in seeds:
        np.random.seed(s)
        reference.append(mean_ssim_psnr(tiny_photos, _cifar_reference_batch(tiny_photos, severity)))
    ours = np.array(
        [
            mean_ssim_psnr(tiny_photos, corrupt(tiny_photos, "elastic_transform", severity, seed=s))
            for s in seeds
        ]
    )
    assert_statistics_match(ours, np.array(reference))


def test_cifar_profile_is_the_default_for_32x32(tiny_photos):
    default = corrupt(tiny_photos, "elastic_transform", 3)
    assert torch.equal(default, corrupt(tiny_photos, "elastic_transform", 3, profile="cifar"))
    assert not torch.equal(default, corrupt(tiny_photos, "elastic_transform", 3, profile="imagenet"))


# ---------------------------------------------------------------- determinism, dtypes


@pytest.mark.parametrize("profile", ["imagenet", "cifar"])
def test_determinism_and_batch_invariance(photos, profile):
    images = photos.float() / 255
    ids = torch.tensor([5, 17, 2])

    def run(batch: torch.Tensor, batch_ids: torch.Tensor, seed: int = 3) -> torch.Tensor:
        return corrupt(batch, "elastic_transform", 4, seed=seed, sample_ids=batch_ids, profile=profile)

    together = run(images, ids)
    torch.testing.assert_close(together, run(images, ids), rtol=0, atol=0)
    alone = torch.cat([run(image[None], ids[i : i + 1]) for i, image in enumerate(images)])
    torch.testing.assert_close(together, alone, rtol=0, atol=1e-6)
    torch.testing.assert_close(together, run(images.flip(0), ids.flip(0)).flip(0), rtol=0, atol=1e-6)
    assert (together - run(images, ids, seed=4)).abs().mean() > 1e-3
    assert (together - run(images, ids + 1)).abs().mean() > 1e-3


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_float_in_float_out(photos, dtype):
    images = photos[:1].to(dtype) / 255
    out = corrupt(images, "elastic_transform", 5)
    assert out.dtype == dtype and out.shape == images.shape
    assert out.min() >= 0 and out.max() <= 1
    assert (out - images).abs().mean() > 0.005
    as_uint8 = corrupt(photos[:1], "elastic_transform", 5)
    assert as_uint8.dtype == torch.uint8 and as_uint8.shape == photos[:1].shape
    assert torch.equal(as_uint8, _to_uint8(corrupt(photos[:1].float() / 255, "elastic_transform", 5)))
