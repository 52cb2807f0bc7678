"""fog and frost against the reference `imagecorruptions` 1.1.2 and make_cifar_c.py.

Pixel fidelity: the reference is run with its NumPy draws replaced by ours (monkeypatched `np.random.uniform` for
the plasma fractal, `np.random.randint` for the frost photograph and crop). Statistical fidelity: mean SSIM / PSNR
over seeds, ours against the reference's own NumPy seeds.
"""

import hashlib
from pathlib import Path

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
from reference_corruptions import photo as _photo

from hf_vitrobust.corruptions import corrupt, weather
from hf_vitrobust.corruptions.randomness import uniform

NAMES = ("fog", "frost")
SEVERITIES = (1, 2, 3, 4, 5)
REFERENCE_FROST_DIR = Path(reference_module.__file__).parent / "frost"


def _to_batch(arrays: list[np.ndarray]) -> torch.Tensor:
    return torch.from_numpy(np.stack(arrays)).permute(0, 3, 1, 2).contiguous()


# ---------------------------------------------------------------------------------------------------------------
# Shipped frost photographs


def test_frost_photographs_are_the_reference_files():
    shipped = Path(weather.__file__).parent / "frost"
    assert sorted(path.name for path in REFERENCE_FROST_DIR.iterdir()) == sorted(weather.FROST_FILES)
    for name in weather.FROST_FILES:
        ours = hashlib.sha256((shipped / name).read_bytes()).hexdigest()
        assert ours == hashlib.sha256((REFERENCE_FROST_DIR / name).read_bytes()).hexdigest(), name
    assert "Apache" in (shipped / "LICENSE.md").read_text()


@pytest.mark.parametrize("index", range(6))
def test_frost_photo_decodes_as_cv2(index):
    bgr = cv2.imread(str(REFERENCE_FROST_DIR / weather.FROST_FILES[index]))
    ours = weather.frost_photo(index)
    assert ours.dtype == torch.uint8 and ours.shape == (3, *bgr.shape[:2])
    assert torch.equal(ours, torch.from_numpy(bgr[..., ::-1].copy()).permute(2, 0, 1))


# ---------------------------------------------------------------------------------------------------------------
# Pixel fidelity with the reference's draws replaced by ours


def _feed_plasma_uniforms(monkeypatch, seed: int, sample_id: int, mapsize: int, stream: str) -> list:
    """Patch np.random.uniform to hand the reference's plasma_fractal our draws, in its order of calls."""
    queue = []
    step = mapsize
    while step >= 2:
        for part in ("squares", "rows", "columns"):
            name = weather.plasma_fractal_stream(stream, step, part)
            u = uniform(seed, torch.tensor([sample_id]), name, (mapsize // step,) * 2, torch.float64)[0]
            queue.append(u.numpy())
        step //= 2

    def fake_uniform(low, high, size):
        u = queue.pop(0)
        assert u.shape == tuple(size)
        return low + (high - low) * u

    monkeypatch.setattr(reference_module.np.random, "uniform", fake_uniform)
    return queue


def test_plasma_fractal_is_the_reference_fractal(monkeypatch):
    for mapsize, decay in ((32, 3.0), (256, 1.4)):
        ours = weather.plasma_fractal(mapsize, decay, 7, torch.tensor([3]), "test", torch.float64)[0]
        queue = _feed_plasma_uniforms(monkeypatch, 7, 3, mapsize, "test")
        expected = reference_module.plasma_fractal(mapsize=mapsize, wibbledecay=decay)
        assert not queue  # every draw consumed, in order
        np.testing.assert_allclose(ours.numpy(), expected, rtol=0, atol=1e-9)


# Measured: max |diff| 1 (truncation ties of float32 against the reference's float64).
@pytest.mark.parametrize("size", [(224, 224), (200, 256), (48, 100)])
def test_fog_pixels_match_reference_with_our_draws(monkeypatch, photos, size):
    images = torch.cat([_photo(image.permute(1, 2, 0).numpy(), size) for image in photos[:2]])
    mapsize = weather.next_power_of_2(max(size))
    for severity in SEVERITIES:
        ours = corrupt(images, "fog", severity, seed=11, sample_ids=[5, 9])
        expected = []
        for image, sample_id in zip(images, (5, 9), strict=True):
            _feed_plasma_uniforms(monkeypatch, 11, sample_id, mapsize, "fog/plasma")
            expected.append(reference_corrupt(image[None], "fog", severity)[0])
        mean, worst = _difference(ours, torch.stack(expected))
        assert mean < 0.01 and worst <= 1, f"fog s{severity} {size}: mean |diff| {mean:.4f}, max {worst}"


def _feed_randints(monkeypatch, values: list[int]) -> None:
    """Patch np.random.randint to return `values` in turn, checking each is within the reference's bounds."""
    queue = list(values)

    def fake_randint(low, high=None):
        low, high = (0, low) if high is None else (low, high)
        value = queue.pop(0)
        assert low <= value < high, (low, value, high)
        return value

    monkeypatch.setattr(reference_module.np.random, "randint", fake_randint)


# Sizes exercising every branch of the reference's frost rescaling (frost2 and frost3 are 315x560).
# Measured: max |diff| 1 (cv2's fixed-point bicubic against ours, and truncation ties).
@pytest.mark.parametrize("size", [(224, 224), (200, 256), (320, 300), (300, 600), (360, 640)])
def test_frost_pixels_match_reference_with_our_choices(monkeypatch, photos, size):
    image = _photo(photos[0].permute(1, 2, 0).numpy(), size)
    for index in range(weather.FROST_CHOICES):
        rescaled = weather.rescaled_frost_photo(index, "imagenet", *size)
        spans = (rescaled.shape[1] - size[0], rescaled.shape[2] - size[1])
        for top, left in ((0, 0), (spans[0] - 1, spans[1] - 1), (spans[0] // 3, spans[1] // 2)):
            severity = 1 + (top + left + index) % 5
            ours = weather.blend_frost(
                image.float() / 255, severity, "imagenet", torch.tensor([index]), torch.tensor([top]),
                torch.tensor([left]),
            )  # fmt: skip
            ours = (ours * 255).floor().to(torch.uint8)
            _feed_randints(monkeypatch, [index, top, left])
            mean, worst = _difference(ours, reference_corrupt(image, "frost", severity))
            assert mean < 0.05 and worst <= 1, f"frost {index} {size} ({top}, {left}): {mean:.4f}, {worst}"


def test_frost_rescaled_sizes_are_the_reference_sizes():
    for size in ((224, 224), (320, 300), (300, 600), (360, 640), (32, 32)):
        for index in range(6):
            bgr = cv2.imread(str(REFERENCE_FROST_DIR / weather.FROST_FILES[index]))
            height, width = bgr.shape[:2]
            scale = 1.0
            if height < size[0] or width < size[1]:
                scale = max(size[0] / height, size[1] / width)
            scale *= 1.1  # the reference's order of float operations
            expected = (int(np.ceil(height * scale)), int(np.ceil(width * scale)))
            assert tuple(weather.rescaled_frost_photo(index, "imagenet", *size).shape[1:]) == expected


# ---------------------------------------------------------------------------------------------------------------
# Statistical fidelity over seeds


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_statistics_match_imagecorruptions(name, photos):
    seeds = range(6)
    for severity in SEVERITIES:
        ours = np.array([mean_ssim_psnr(photos, corrupt(photos, name, severity, seed=s)) for s in seeds])
        assert_statistics_match(ours, reference_statistics(photos, name, severity, seeds))


def test_fidelity_checks_can_fail(photos):
    reference = reference_statistics(photos, "fog", 1, range(3))
    wrong = np.array([mean_ssim_psnr(photos, corrupt(photos, "fog", 5, seed=s)) for s in range(3)])
    with pytest.raises(AssertionError):
        assert_statistics_match(wrong, reference)


def test_frost_choices_are_the_reference_distribution():
    """Photograph uniform on 0..4 (frost6 never, as the reference's randint(5)); crops cover [0, span)."""
    ids = torch.arange(20000)
    index, top, left = weather.frost_choices("imagenet", 224, 224, 0, ids)
    counts = torch.bincount(index, minlength=6)
    assert counts[5] == 0
    assert ((counts[:5].double() / len(ids) - 0.2).abs() < 0.01).all(), counts
    sizes = torch.tensor([weather.rescaled_frost_photo(i, "imagenet", 224, 224).shape[1:] for i in range(5)])
    spans = sizes[index] - 224
    assert (top >= 0).all() and (left >= 0).all() and (top < spans[:, 0]).all() and (left < spans[:, 1]).all()
    # Uniform crop corners: the relative position has mean 1/2 and reaches both ends.
    relative = top.double() / (spans[:, 0] - 1)
    assert abs(relative.mean().item() - 0.5) < 0.01
    assert top.eq(0).any() and top.eq(spans[:, 0] - 1).any()


def test_fog_fractal_spectrum_matches_reference():
    """Variance of the fractal at each scale (block means) and its mean roughness, ours against the reference's,
    over 500 maps each (relative standard errors: 4% for 16x16 blocks, 1.5% below)."""
    mapsize, decay, count = 32, 1.7, 500
    ours = weather.plasma_fractal(mapsize, decay, 0, torch.arange(count), "spectrum", torch.float64).numpy()
    np.random.seed(0)
    reference = np.stack(
        [reference_module.plasma_fractal(mapsize=mapsize, wibbledecay=decay) for _ in range(count)]
    )
    for block, tolerance in ((16, 0.15), (8, 0.06), (4, 0.06), (1, 0.06)):

        def variance(maps: np.ndarray, block: int = block) -> float:
            blocks = maps.reshape(count, mapsize // block, block, mapsize // block, block).mean((2, 4))
            return blocks.var(axis=(1, 2)).mean()

        assert abs(variance(ours) / variance(reference) - 1) < tolerance, block
    roughness = [np.abs(np.diff(maps, axis=axis)).mean() for maps in (ours, reference) for axis in (1, 2)]
    assert abs(roughness[0] / roughness[2] - 1) < 0.03 and abs(roughness[1] / roughness[3] - 1) < 0.03


# ---------------------------------------------------------------------------------------------------------------
# "cifar" profile against make_cifar_c.py


def test_cifar_tables_match_make_cifar_c():
    # hendrycks/robustness ImageNet-C/create_c/make_cifar_c.py, the `c = [...]` lines of fog and frost:
    assert weather.FOG["cifar"] == ((0.2, 3), (0.5, 3), (0.75, 2.5), (1, 2), (1.5, 1.75))
    assert weather.FROST["cifar"] == ((1, 0.2), (1, 0.3), (0.9, 0.4), (0.85, 0.4), (0.75, 0.45))
    # imagecorruptions 1.1.2 corruptions.py, for comparison:
    assert weather.FOG["imagenet"] == ((1.5, 2), (2.0, 2), (2.5, 1.7), (2.5, 1.5), (3.0, 1.4))
    assert weather.FROST["imagenet"] == ((1, 0.4), (0.8, 0.6), (0.7, 0.7), (0.65, 0.7), (0.6, 0.75))


def _cifar_reference(image: np.ndarray, name: str, severity: int) -> np.ndarray:
    """make_cifar_c.py's fog or frost on one uint8 (32, 32, 3) image, with NumPy's global generator, np.uint8."""
    x = image / 255.0
    if name == "fog":
        c = ((0.2, 3), (0.5, 3), (0.75, 2.5), (1, 2), (1.5, 1.75))[severity - 1]
        max_val = x.max()
        x = x + c[0] * reference_module.plasma_fractal(mapsize=32, wibbledecay=c[1])[:32, :32][..., None]
        return np.uint8(np.clip(x * max_val / (max_val + c[0]), 0, 1) * 255)
    c = ((1, 0.2), (1, 0.3), (0.9, 0.4), (0.85, 0.4), (0.75, 0.45))[severity - 1]
    index = np.random.randint(5)
    frost = cv2.imread(str(REFERENCE_FROST_DIR / weather.FROST_FILES[index]))
    frost = cv2.resize(frost, (0, 0), fx=0.2, fy=0.2)
    top, left = np.random.randint(0, frost.shape[0] - 32), np.random.randint(0, frost.shape[1] - 32)
    frost = frost[top : top + 32, left : left + 32][..., [2, 1, 0]]
    return np.uint8(np.clip(c[0] * image + c[1] * frost, 0, 255))


@pytest.mark.parametrize("index", range(6))
def test_cifar_frost_rescale_is_cv2_resize(index):
    bgr = cv2.imread(str(REFERENCE_FROST_DIR / weather.FROST_FILES[index]))
    expected = cv2.resize(bgr, (0, 0), fx=0.2, fy=0.2)[..., ::-1].copy()
    assert torch.equal(
        weather.rescaled_frost_photo(index, "cifar", 32, 32), torch.from_numpy(expected).permute(2, 0, 1)
    )


def test_cifar_pixels_match_make_cifar_c_with_our_draws(monkeypatch, tiny_photos):
    image = tiny_photos[1:2]
    for severity in SEVERITIES:
        ours = corrupt(image, "fog", severity, seed=2, sample_ids=[4])
        _feed_plasma_uniforms(monkeypatch, 2, 4, 32, "fog/plasma")
        expected = _cifar_reference(image[0].permute(1, 2, 0).numpy(), "fog", severity)
        mean, worst = _difference(ours, _to_batch([expected]))
        assert worst <= 1 and mean < 0.02, f"fog s{severity}: {mean:.4f}, {worst}"
        index, top, left = weather.frost_choices("cifar", 32, 32, severity, torch.tensor([4]))
        ours = corrupt(image, "frost", severity, seed=severity, sample_ids=[4])
        _feed_randints(monkeypatch, [int(index), int(top), int(left)])
        expected = _cifar_reference(image[0].permute(1, 2, 0).numpy(), "frost", severity)
        mean, worst = _difference(ours, _to_batch([expected]))
        assert worst <= 1 and mean < 0.05, f"frost s{severity}: {mean:.4f}, {worst}"


@pytest.mark.parametrize("name", NAMES)
def test_cifar_profile_statistics_match_make_cifar_c(name, tiny_photos):
    seeds = range(8)
    for severity in SEVERITIES:
        ours = corrupt(tiny_photos, name, severity)  # 32x32: the "cifar" profile by default
        assert torch.equal(ours, corrupt(tiny_photos, name, severity, profile="cifar"))
        ours_rows = np.array(
            [mean_ssim_psnr(tiny_photos, corrupt(tiny_photos, name, severity, seed=s)) for s in seeds]
        )
        reference_rows = []
        for seed in seeds:
            np.random.seed(seed)
            expected = [
                _cifar_reference(image.permute(1, 2, 0).numpy(), name, severity) for image in tiny_photos
            ]
            reference_rows.append(mean_ssim_psnr(tiny_photos, _to_batch(expected)))
        assert_statistics_match(ours_rows, np.array(reference_rows))


def test_cifar_frost_refuses_images_larger_than_its_photographs(tiny_photos):
    with pytest.raises(ValueError, match="frost"):
        corrupt(torch.zeros(1, 3, 64, 64, dtype=torch.uint8), "frost", 1, profile="cifar")
    assert (
        corrupt(torch.zeros(1, 3, 62, 104, dtype=torch.uint8), "frost", 1, profile="cifar").shape[-1] == 104
    )
