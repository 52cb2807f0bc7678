"""Colour and digital corruptions (brightness, contrast, saturate, jpeg_compression, pixelate) against the reference.

"imagenet" profile: the `imagecorruptions` 1.1.2 package itself, on natural photos from scikit-image. "cifar"
profile: the parameter tables of hendrycks/robustness ImageNet-C/create_c/make_cifar_c.py, and outputs against
straightforward NumPy / scikit-image / PIL implementations of that file's functions.
"""

from io import BytesIO

import numpy as np
import pytest
import skimage.color
import skimage.data
import torch
from PIL import Image
from reference_corruptions import reference_corrupt

from hf_vitrobust.corruptions import corrupt
from hf_vitrobust.corruptions.color import BRIGHTNESS, CONTRAST, SATURATE, hsv_to_rgb, rgb_to_hsv
from hf_vitrobust.corruptions.digital import JPEG_QUALITY, PIXELATE, box_resize, nearest_resize, pixelate

NAMES = ("brightness", "contrast", "saturate", "jpeg_compression", "pixelate")
SEVERITIES = (1, 2, 3, 4, 5)
# Mean absolute difference allowed against the reference, on the 0-255 scale.
MAX_MEAN_ABS_DIFF = 2.0
# Contrast is the same arithmetic in float; pixelate reproduces Pillow's fixed-point resampling bit for bit.
# Brightness and saturate differ from the reference by one level in a few percent of pixels: float32 against
# the reference's float64, then truncation to uint8.
BIT_EXACT = ("contrast", "pixelate")
# torchvision's and Pillow's libjpeg builds agree bit for bit today; this leaves room for other builds.
JPEG_MAX_MEAN_ABS_DIFF = 0.5
TABLES = {
    "brightness": BRIGHTNESS,
    "contrast": CONTRAST,
    "saturate": SATURATE,
    "jpeg_compression": JPEG_QUALITY,
    "pixelate": PIXELATE,
}


def _photo(name: str, height: int, width: int) -> np.ndarray:
    """A scikit-image photo, centre-cropped to the aspect ratio height:width and resized, uint8 (H, W, 3)."""
    image = getattr(skimage.data, name)()
    rows, cols = image.shape[:2]
    if rows * width > cols * height:
        keep = cols * height // width
        image = image[(rows - keep) // 2 : (rows - keep) // 2 + keep]
    else:
        keep = rows * width // height
        image = image[:, (cols - keep) // 2 : (cols - keep) // 2 + keep]
    return np.asarray(Image.fromarray(image).resize((width, height), Image.BICUBIC))


def _batch(photos: list[np.ndarray]) -> torch.Tensor:
    return torch.from_numpy(np.stack(photos)).permute(0, 3, 1, 2).contiguous()


def _per_image_mean_abs_diff(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return (a.double() - b.double()).abs().mean(dim=(1, 2, 3))


def _mean_abs_diff(a: torch.Tensor, b: torch.Tensor) -> float:
    """The worst image's mean absolute difference."""
    return _per_image_mean_abs_diff(a, b).max().item()


@pytest.fixture(scope="module")
def square_photos() -> torch.Tensor:
    return _batch([_photo(name, 224, 224) for name in ("astronaut", "chelsea", "coffee", "rocket")])


@pytest.fixture(scope="module")
def wide_photo() -> torch.Tensor:
    return _batch([_photo("coffee", 200, 256)])


@pytest.fixture(scope="module")
def cifar_photos() -> torch.Tensor:
    return _batch([_photo(name, 32, 32) for name in ("astronaut", "chelsea", "coffee", "rocket")])


# ---------------------------------------------------------------------------------------------------------------
# "imagenet" profile against imagecorruptions


@pytest.mark.parametrize("severity", SEVERITIES)
@pytest.mark.parametrize("name", NAMES)
def test_matches_imagecorruptions(name, severity, square_photos, wide_photo):
    for photos in (square_photos, wide_photo):
        ours = corrupt(photos, name, severity)
        reference = reference_corrupt(photos, name, severity)
        assert ours.shape == reference.shape and ours.dtype == torch.uint8
        assert _mean_abs_diff(ours, reference) <= MAX_MEAN_ABS_DIFF, (name, severity)
        if name in BIT_EXACT:
            assert torch.equal(ours, reference), (name, severity)
        if name == "jpeg_compression":
            assert _mean_abs_diff(ours, reference) <= JPEG_MAX_MEAN_ABS_DIFF, severity


def test_fidelity_checks_can_fail(square_photos):
    """The tolerance separates severities: severity 1 of each corruption is far from the reference's severity 5."""
    for name in NAMES:
        mild = corrupt(square_photos, name, 1)
        distances = _per_image_mean_abs_diff(mild, reference_corrupt(square_photos, name, 5))
        assert (distances > MAX_MEAN_ABS_DIFF).all(), (name, distances)


def test_hsv_matches_skimage():
    """RGB <-> HSV as scikit-image, with its edge cases: grey, black, white, and ties between largest channels."""
    rng = np.random.default_rng(0)
    special = np.array(
        [[0, 0, 0], [1, 1, 1], [0.5, 0.5, 0.5], [1, 1, 0], [0, 1, 1], [1, 0, 1], [1, 0, 0], [0.2, 0.7, 0.7]]
    )
    rgb = np.concatenate([special, rng.random((4000, 3)), rng.integers(0, 256, (4000, 3)) / 255.0])
    expected_hsv = skimage.color.rgb2hsv(rgb[None])[0]
    ours = torch.from_numpy(rgb.T[None, :, None, :].copy())  # (1, 3, 1, P), float64
    hsv = rgb_to_hsv(ours)
    np.testing.assert_allclose(hsv[0, :, 0].numpy().T, expected_hsv, atol=1e-12)
    hsv_samples = np.concatenate([expected_hsv, rng.random((4000, 3)), [[0.9999999999, 0.5, 0.5]]])
    ours_rgb = hsv_to_rgb(torch.from_numpy(hsv_samples.T[None, :, None, :].copy()))
    np.testing.assert_allclose(
        ours_rgb[0, :, 0].numpy().T, skimage.color.hsv2rgb(hsv_samples[None])[0], atol=1e-12
    )


def test_pillow_resampling_exact():
    """BOX and NEAREST resizes equal Pillow's, for non-integer factors and odd sizes, down and up."""
    rng = np.random.default_rng(1)
    image = rng.integers(0, 256, (45, 67, 3), dtype=np.uint8)
    levels = torch.from_numpy(image).permute(2, 0, 1)[None].float()
    for height, width in ((13, 29), (31, 40), (44, 66), (90, 101)):
        expected = np.array(Image.fromarray(image).resize((width, height), Image.BOX))
        assert torch.equal(
            box_resize(levels, height, width)[0].permute(1, 2, 0), torch.from_numpy(expected).float()
        )
        expected = np.array(Image.fromarray(image).resize((width, height), Image.NEAREST))
        got = nearest_resize(levels, height, width)[0].permute(1, 2, 0)
        assert torch.equal(got, torch.from_numpy(expected).float())


# ---------------------------------------------------------------------------------------------------------------
# "cifar" profile against make_cifar_c.py


def test_cifar_tables_match_make_cifar_c():
    # hendrycks/robustness ImageNet-C/create_c/make_cifar_c.py, the `c = [...]` line of each function:
    assert CONTRAST["cifar"] == (0.75, 0.5, 0.4, 0.3, 0.15)  # line 334, contrast
    assert BRIGHTNESS["cifar"] == (0.05, 0.1, 0.15, 0.2, 0.3)  # line 342, brightness
    assert SATURATE["cifar"] == ((0.3, 0), (0.1, 0), (1.5, 0), (2, 0.1), (2.5, 0.2))  # line 353, saturate
    assert JPEG_QUALITY["cifar"] == (80, 65, 58, 50, 40)  # line 364, jpeg_compression
    assert PIXELATE["cifar"] == (0.95, 0.9, 0.85, 0.75, 0.65)  # line 374, pixelate
    # imagecorruptions 1.1.2 corruptions.py, for comparison:
    assert CONTRAST["imagenet"] == (0.4, 0.3, 0.2, 0.1, 0.05)
    assert BRIGHTNESS["imagenet"] == (0.1, 0.2, 0.3, 0.4, 0.5)
    assert SATURATE["imagenet"] == ((0.3, 0), (0.1, 0), (2, 0), (5, 0.1), (20, 0.2))
    assert JPEG_QUALITY["imagenet"] == (25, 18, 15, 10, 7)
    assert PIXELATE["imagenet"] == (0.6, 0.5, 0.4, 0.3, 0.25)


def _cifar_reference(image: np.ndarray, name: str, severity: int) -> np.ndarray:
    """make_cifar_c.py's function `name` on a uint8 (32, 32, 3) image, then np.uint8 as in its saving loop."""
    x = image / 255.0
    if name == "contrast":
        c = (0.75, 0.5, 0.4, 0.3, 0.15)[severity - 1]
        means = x.mean(axis=(0, 1), keepdims=True)
        out = np.clip((x - means) * c + means, 0, 1) * 255
    elif name in ("brightness", "saturate"):
        hsv = skimage.color.rgb2hsv(x)
        if name == "brightness":
            hsv[:, :, 2] = np.clip(hsv[:, :, 2] + (0.05, 0.1, 0.15, 0.2, 0.3)[severity - 1], 0, 1)
        else:
            scale, shift = ((0.3, 0), (0.1, 0), (1.5, 0), (2, 0.1), (2.5, 0.2))[severity - 1]
            hsv[:, :, 1] = np.clip(hsv[:, :, 1] * scale + shift, 0, 1)
        out = np.clip(skimage.color.hsv2rgb(hsv), 0, 1) * 255
    elif name == "jpeg_compression":
        buffer = BytesIO()
        Image.fromarray(image).save(buffer, "JPEG", quality=(80, 65, 58, 50, 40)[severity - 1])
        out = np.asarray(Image.open(buffer))
    else:
        c = (0.95, 0.9, 0.85, 0.75, 0.65)[severity - 1]
        small = Image.fromarray(image).resize((int(32 * c), int(32 * c)), Image.BOX)
        out = np.asarray(small.resize((32, 32), Image.BOX))
    return np.uint8(out)


@pytest.mark.parametrize("name", NAMES)
def test_cifar_profile_matches_make_cifar_c(name, cifar_photos):
    for severity in SEVERITIES:
        ours = corrupt(cifar_photos, name, severity)  # 32x32: the "cifar" profile by default
        assert torch.equal(ours, corrupt(cifar_photos, name, severity, profile="cifar"))
        expected = _batch(
            [_cifar_reference(image.permute(1, 2, 0).numpy(), name, severity) for image in cifar_photos]
        )
        assert _mean_abs_diff(ours, expected) <= MAX_MEAN_ABS_DIFF, (name, severity)
        if name in BIT_EXACT:
            assert torch.equal(ours, expected), (name, severity)
        if name == "jpeg_compression":
            assert _mean_abs_diff(ours, expected) <= JPEG_MAX_MEAN_ABS_DIFF, severity
        # The profiles differ where their tables do (saturate's severities 1 and 2 are shared), and pixelate
        # upscales differently.
        as_imagenet = corrupt(cifar_photos, name, severity, profile="imagenet")
        same_parameters = TABLES[name]["cifar"][severity - 1] == TABLES[name]["imagenet"][severity - 1]
        assert torch.equal(ours, as_imagenet) == same_parameters, (name, severity)


# ---------------------------------------------------------------------------------------------------------------
# dtype, determinism, batches, devices


@pytest.mark.parametrize("name", NAMES)
def test_dtypes_determinism_and_batch_invariance(name, cifar_photos, wide_photo):
    photos = cifar_photos[:3]
    as_float = photos.float() / 255.0
    out_float = corrupt(as_float, name, 3)
    assert out_float.dtype == torch.float32 and out_float.shape == photos.shape
    assert out_float.min() >= 0.0 and out_float.max() <= 1.0
    out_uint8 = corrupt(photos, name, 3)
    assert out_uint8.dtype == torch.uint8 and out_uint8.shape == photos.shape
    # uint8 output is the float output truncated, as the reference's np.uint8(x * 255).
    assert torch.equal(out_uint8, (out_float * 255).floor().to(torch.uint8))
    out_double = corrupt(as_float.double(), name, 3)
    assert out_double.dtype == torch.float64
    torch.testing.assert_close(out_double, out_float.double(), rtol=0, atol=1e-6)
    assert torch.equal(corrupt(photos, name, 3), out_uint8)  # deterministic
    singles = torch.cat([corrupt(photos[i : i + 1], name, 3) for i in range(len(photos))])
    assert torch.equal(singles, out_uint8)
    wide = corrupt(wide_photo.float() / 255.0, name, 2)
    assert wide.shape == wide_photo.shape and wide.min() >= 0.0 and wide.max() <= 1.0


@pytest.mark.parametrize("name", NAMES)
def test_changes_the_image(name, square_photos):
    photos = square_photos[:1]
    assert _mean_abs_diff(corrupt(photos, name, 5), photos) > 3.0


@pytest.mark.parametrize("profile", ["imagenet", "cifar"])
def test_brightness_is_the_exact_hsv_value_scaling(profile):
    """For uint8 input, brightness is floor(C * V' / V) exactly, in integers: skimage's hsv2rgb(rgb2hsv(x)) with
    V raised to V' = min(V + 255 * shift, 255) scales every channel C by V' / V; black becomes grey V'. Every pair
    (C <= V) appears, as green beside a red V, with blue 0 and blue = C."""
    value, level = np.meshgrid(np.arange(256), np.arange(256), indexing="ij")
    keep = level <= value
    pixels = np.stack([value[keep], level[keep], level[keep] * (value[keep] % 2)])  # (3, 32896)
    images = torch.from_numpy(pixels.astype(np.uint8)).view(1, 3, 128, 257)
    for severity in SEVERITIES:
        quarter_levels = round(
            BRIGHTNESS[profile][severity - 1] * 255 * 4
        )  # 255 * shift is a multiple of 1/4
        new_value4 = np.minimum(4 * pixels.max(0) + quarter_levels, 4 * 255)
        expected = np.where(
            pixels.max(0) > 0, pixels * new_value4 // np.maximum(4 * pixels.max(0), 1), new_value4 // 4
        )
        ours = corrupt(images, "brightness", severity, profile=profile).view(3, -1).numpy()
        np.testing.assert_array_equal(ours, expected.astype(np.uint8), err_msg=f"{profile} {severity}")
        as_float = corrupt(images.float() / 255, "brightness", severity, profile=profile)
        np.testing.assert_array_equal((as_float * 255).floor().view(3, -1).numpy(), expected)


@pytest.mark.parametrize("profile", ["imagenet", "cifar"])
def test_saturate_is_the_exact_hsv_saturation_change(profile):
    """For uint8 input, saturate is the floor of the exact HSV round trip, in integers. With S = D / V (D = V - min)
    and S' = min(S * scale + shift, 1), skimage's hsv2rgb keeps V, and the hue's sextant fraction puts every other
    channel at V - S' V (V - C) / D; with scale = a / 10 and shift = b / 10 that is
    V - min(aD + bV, 10V) (V - C) / (10 D). Grey pixels (hue 0) become (V, V (1 - S'), V (1 - S'))."""
    rng = np.random.default_rng(3)
    special = [
        [0, 255, 7, 200, 255, 3],
        [0, 255, 7, 10, 0, 2],
        [0, 255, 7, 10, 0, 3],
    ]  # black, white, grey, ties
    pixels = np.concatenate([rng.integers(0, 256, (3, 19994)), special], axis=1)
    images = torch.from_numpy(pixels.astype(np.uint8)).view(1, 3, 100, 200)
    value, delta = pixels.max(0), pixels.max(0) - pixels.min(0)
    for severity in SEVERITIES:
        scale, shift = SATURATE[profile][severity - 1]
        a, b = round(scale * 10), round(shift * 10)  # every entry of the tables is a tenth
        numerator = np.minimum(a * delta + b * value, 10 * value)
        moved = (10 * delta * value - numerator * (value - pixels)) // np.maximum(10 * delta, 1)
        grey = np.stack([value, value * (10 - b) // 10, value * (10 - b) // 10])
        expected = np.where(delta > 0, moved, grey)
        ours = corrupt(images, "saturate", severity, profile=profile).view(3, -1).numpy()
        np.testing.assert_array_equal(ours, expected.astype(np.uint8), err_msg=f"{profile} {severity}")
        as_float = corrupt(images.float() / 255, "saturate", severity, profile=profile)
        np.testing.assert_array_equal((as_float * 255).floor().view(3, -1).numpy(), expected)


@pytest.mark.parametrize("profile", ["imagenet", "cifar"])
def test_pixelate_pillow_route_equals_the_batched_emulation(profile):
    """uint8 images of at least 64 pixels a side go through Pillow itself on the CPU; the batched tensor
    emulation of Pillow (the float route, and the route on other devices) gives the same bits, for odd sizes and
    both upscalers."""
    generator = torch.Generator().manual_seed(4)
    for shape in ((2, 3, 67, 91), (1, 3, 130, 64), (3, 3, 64, 64)):
        images = torch.randint(0, 256, shape, dtype=torch.uint8, generator=generator)
        for severity in SEVERITIES:
            through_pillow = corrupt(images, "pixelate", severity, profile=profile)
            emulated = pixelate(images.float() / 255, severity, profile, 0, torch.arange(shape[0]))
            assert torch.equal(through_pillow, (emulated * 255).round().to(torch.uint8)), (shape, severity)
