"""The deterministic blurs (gaussian_blur, defocus_blur, zoom_blur) against the reference `imagecorruptions` 1.1.2.

Fidelity is measured on natural photos at 224x224 and 200x256 ("imagenet" profile), and at 32x32 ("cifar" profile)
against the reference's algorithms run with the CIFAR tables of make_cifar_c.py.
"""

import math

import cv2
import numpy as np
import pytest
import skimage.data
import skimage.filters
import torch
from reference_corruptions import difference as _difference
from reference_corruptions import imagecorruptions, reference_corrupt
from reference_corruptions import photo as _photo

from hf_vitrobust.corruptions import blur, corrupt

BLURS = ("gaussian_blur", "defocus_blur", "zoom_blur")
SEVERITIES = (1, 2, 3, 4, 5)


@pytest.fixture(scope="module")
def wide_photo() -> torch.Tensor:
    """A natural non-square photo, 200x256."""
    return _photo(skimage.data.rocket(), (200, 256))


def test_reference_is_importable():
    assert "zoom_blur" in imagecorruptions.get_corruption_names("all")


# Measured with torch 2.14 on CPU: mean absolute difference <= 0.03 and max 1 (truncation ties) everywhere.
@pytest.mark.parametrize("severity", SEVERITIES)
@pytest.mark.parametrize("name", BLURS)
def test_fidelity_imagenet(photos, wide_photo, name, severity):
    for images in (photos, wide_photo):
        mean, worst = _difference(corrupt(images, name, severity), reference_corrupt(images, name, severity))
        assert mean <= 2.0, f"{name} s{severity} {tuple(images.shape[-2:])}: mean |diff| {mean:.3f}"
        assert worst <= 1, f"{name} s{severity} {tuple(images.shape[-2:])}: max |diff| {worst}"


def test_cifar_tables_are_make_cifar_c():
    # Source: hendrycks/robustness, ImageNet-C/create_c/make_cifar_c.py (gaussian_blur, defocus_blur, zoom_blur).
    assert blur.GAUSSIAN_BLUR_SIGMAS["cifar"] == (0.4, 0.6, 0.7, 0.8, 1)
    assert blur.DEFOCUS_BLUR_PARAMS["cifar"] == ((0.3, 0.4), (0.4, 0.5), (0.5, 0.6), (1, 0.2), (1.5, 0.1))
    assert blur.ZOOM_BLUR_RANGES["cifar"] == (
        (1, 1.06, 0.01),
        (1, 1.11, 0.01),
        (1, 1.16, 0.01),
        (1, 1.21, 0.01),
        (1, 1.26, 0.01),
    )
    # np.arange's float rounding keeps the end point here: 7 factors, 1.00 to 1.06.
    assert len(blur.zoom_factors("cifar", 1)) == 7


def _cifar_reference(image: np.ndarray, name: str, severity: int) -> np.ndarray:
    """make_cifar_c.py's algorithm for `name` on one uint8 (H, W, 3) image, built from the reference's helpers."""
    x = image / 255.0
    if name == "gaussian_blur":
        sigma = (0.4, 0.6, 0.7, 0.8, 1)[severity - 1]
        out = skimage.filters.gaussian(x, sigma=sigma, channel_axis=-1)
    elif name == "defocus_blur":
        radius, alias_blur = ((0.3, 0.4), (0.4, 0.5), (0.5, 0.6), (1, 0.2), (1.5, 0.1))[severity - 1]
        kernel = imagecorruptions.corruptions.disk(radius=radius, alias_blur=alias_blur)
        out = np.stack([cv2.filter2D(x[:, :, d], -1, kernel) for d in range(3)], axis=-1)
    else:
        factors = np.arange(1, (1.06, 1.11, 1.16, 1.21, 1.26)[severity - 1], 0.01)
        x = x.astype(np.float32)
        total = np.zeros_like(x)
        for zoom in factors:
            zoomed = imagecorruptions.corruptions.clipped_zoom(x, zoom)
            # make_cifar_c.py's clipped_zoom trims the zoomed crop centred.
            top = (zoomed.shape[0] - x.shape[0]) // 2
            left = (zoomed.shape[1] - x.shape[1]) // 2
            total += zoomed[top : top + x.shape[0], left : left + x.shape[1]]
        out = (x + total) / (len(factors) + 1)
    return np.uint8(np.clip(out, 0, 1) * 255)


@pytest.mark.parametrize("severity", SEVERITIES)
@pytest.mark.parametrize("name", BLURS)
def test_fidelity_cifar(tiny_photos, name, severity):
    reference = torch.from_numpy(
        np.stack([_cifar_reference(image.permute(1, 2, 0).numpy(), name, severity) for image in tiny_photos])
    ).permute(0, 3, 1, 2)
    ours = corrupt(tiny_photos, name, severity, profile="cifar")
    mean, worst = _difference(ours, reference)
    assert mean <= 2.0 and worst <= 1, f"{name} s{severity}: mean |diff| {mean:.3f}, max {worst}"
    assert (ours.int() - tiny_photos.int()).abs().float().mean() > 0.5  # a real blur, not the identity


def test_cifar_profile_is_the_default_for_32x32(tiny_photos):
    assert torch.equal(
        corrupt(tiny_photos, "zoom_blur", 3), corrupt(tiny_photos, "zoom_blur", 3, profile="cifar")
    )
    assert not torch.equal(
        corrupt(tiny_photos, "zoom_blur", 3), corrupt(tiny_photos, "zoom_blur", 3, profile="imagenet")
    )


@pytest.mark.parametrize("profile", ["imagenet", "cifar"])
def test_disk_kernel_is_the_reference_disk(profile):
    for radius, alias_blur in blur.DEFOCUS_BLUR_PARAMS[profile]:
        expected = imagecorruptions.corruptions.disk(radius=radius, alias_blur=alias_blur)
        ours = blur.disk_kernel(radius, alias_blur)
        assert ours.shape == expected.shape
        np.testing.assert_allclose(ours.numpy(), expected, rtol=0, atol=1e-6)
        assert math.isclose(float(ours.sum()), float(expected.sum()), abs_tol=1e-5)


@pytest.mark.parametrize("name", BLURS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_float_in_float_out(wide_photo, name, dtype):
    images = wide_photo.to(dtype) / 255
    out = corrupt(images, name, 5)
    assert out.dtype == dtype and out.shape == images.shape
    assert out.min() >= 0 and out.max() <= 1
    assert (out - images).abs().mean() > 0.005  # it does blur
    # The uint8 path is the float path, truncated as the reference's np.uint8(x * 255).
    as_uint8 = corrupt(wide_photo, name, 5)
    assert as_uint8.dtype == torch.uint8
    float_as_uint8 = (corrupt(wide_photo.float() / 255, name, 5) * 255).floor().to(torch.uint8)
    assert torch.equal(as_uint8, float_as_uint8)
