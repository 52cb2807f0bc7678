"""`corrupt`: validation before any work, dtype handling, profiles, and the registry."""

import ast
import re
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import hf_vitrobust.corruptions as corruptions_package
from hf_vitrobust.corruptions import (
    CORRUPTIONS,
    EXTRA_CORRUPTIONS,
    STANDARD_CORRUPTIONS,
    corrupt,
    get_corruption,
    registered_corruptions,
)
from hf_vitrobust.corruptions.base import from_unit_float, resolve_profile, to_unit_float


@pytest.fixture
def images() -> torch.Tensor:
    return torch.randint(
        0, 256, (2, 3, 40, 48), dtype=torch.uint8, generator=torch.Generator().manual_seed(0)
    )


@pytest.mark.parametrize("severity", [0, 6, -1, 2.0, True, "3"])
def test_severity_outside_one_to_five(images, severity):
    with pytest.raises(ValueError, match="severity must be an integer from 1 to 5"):
        corrupt(images, "contrast", severity)


def test_unknown_name_suggests_the_closest():
    with pytest.raises(
        ValueError, match=r"Unknown corruption 'gausian_blur'\. Did you mean 'gaussian_blur'\?"
    ):
        get_corruption("gausian_blur")


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (torch.zeros(3, 40, 40), r"shape \(N, 3, H, W\)"),
        (torch.zeros(1, 1, 40, 40), "3 channels"),
        (torch.zeros(1, 3, 40, 40, dtype=torch.int32), "uint8 .* or float"),
        (torch.zeros(1, 3, 16, 40), "at least 32x32, got 16x40"),
    ],
)
def test_bad_images(bad, message):
    with pytest.raises(ValueError, match=message):
        corrupt(bad, "contrast", 1)


def test_bad_sample_ids_and_seed(images):
    with pytest.raises(ValueError, match="sample_ids must be 2 integers"):
        corrupt(images, "contrast", 1, sample_ids=[0, 1, 2])
    with pytest.raises(ValueError, match="seed must be an int"):
        corrupt(images, "contrast", 1, seed=1.5)


def test_profiles():
    assert resolve_profile(None, 32, 32) == "cifar"
    assert resolve_profile(None, 224, 224) == "imagenet"
    assert resolve_profile("imagenet", 32, 32) == "imagenet"
    with pytest.raises(ValueError, match="Unknown profile 'tiny'"):
        resolve_profile("tiny", 32, 32)


def test_uint8_round_trip_truncates_like_the_reference():
    pixels = torch.tensor([0, 1, 127, 254, 255], dtype=torch.uint8).view(1, 1, 1, 5).expand(1, 3, 1, 5)
    assert torch.equal(from_unit_float(to_unit_float(pixels), pixels), pixels)
    # np.uint8(x * 255) truncates: 0.999 * 255 = 254.7 -> 254.
    assert from_unit_float(torch.full((1, 3, 1, 1), 0.999), pixels).flatten()[0] == 254
    assert from_unit_float(torch.full((1, 3, 1, 1), 1.5), pixels).flatten()[0] == 255


@pytest.mark.parametrize("name", registered_corruptions())
def test_every_registered_corruption_keeps_dtype_shape_and_device(images, name):
    as_float = images.float() / 255
    for batch in (images, as_float, as_float.double()):
        out = corrupt(batch, name, 3)
        assert out.dtype == batch.dtype and out.shape == batch.shape and out.device == batch.device
        if batch.is_floating_point():
            assert out.min() >= 0 and out.max() <= 1


def test_all_nineteen_corruptions_in_the_reference_order():
    assert len(STANDARD_CORRUPTIONS) == 15 and len(EXTRA_CORRUPTIONS) == 4
    assert CORRUPTIONS == STANDARD_CORRUPTIONS + EXTRA_CORRUPTIONS
    assert set(registered_corruptions()) == set(CORRUPTIONS)
    assert (
        CORRUPTIONS[:3] == ("gaussian_noise", "shot_noise", "impulse_noise") and CORRUPTIONS[-1] == "saturate"
    )


CORRUPTION_MODULES = sorted(
    p.stem for p in Path(corruptions_package.__file__).parent.glob("*.py") if p.stem != "__init__"
)
# Host-side by design: file I/O (export), PIL's codec and resampling tables (digital), the frost photographs (weather).
HOST_MODULES = {"export", "digital", "weather"}
# NumPy only for parameter tables computed once on the host (np.arange's rounding of zoom factors, PIL's weights).
NUMPY_MODULES = {"blur", "digital", "weather"}
# CPU fast paths through OpenCV (a declared dependency, >= 5): only for CPU tensors, with the torch path kept for every
# other device and tested equal to it within the CUDA tolerance (test_corruptions_cpu_fast_paths.py).
OPENCV_MODULES = {"blur", "geometric", "spatter"}


@pytest.mark.parametrize("module", CORRUPTION_MODULES)
def test_corruption_code_needs_no_reference_package_and_stays_on_the_device(module):
    """Corruptions are tensor operations: torch and torchvision (plus the host-side exceptions above), never the
    reference packages or their dependencies, and no host round trips outside the host-side modules (the OpenCV
    fast paths read CPU tensors' memory through `.numpy()`, which copies nothing and never leaves the CPU)."""
    source = (Path(corruptions_package.__file__).parent / f"{module}.py").read_text()
    allowed = {"torch", "torchvision"} | set(sys.stdlib_module_names)
    allowed |= {"numpy"} if module in NUMPY_MODULES else set()
    allowed |= {"PIL", "datasets"} if module in HOST_MODULES else set()
    allowed |= {"cv2", "numpy"} if module in OPENCV_MODULES else set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            roots = [alias.name.split(".")[0] for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            roots = [node.module.split(".")[0]]
        else:
            continue
        assert set(roots) <= allowed, f"{module} imports {roots}"
    if module not in HOST_MODULES:
        host_calls = (".cpu()", ".item()") if module in OPENCV_MODULES else (".cpu()", ".numpy()", ".item()")
        for forbidden in host_calls:
            assert forbidden not in source, forbidden


RANDOM_CORRUPTIONS = {
    "gaussian_noise",
    "shot_noise",
    "impulse_noise",
    "speckle_noise",
    "glass_blur",
    "motion_blur",
    "snow",
    "frost",
    "fog",
    "elastic_transform",
    "spatter",
}


@pytest.mark.parametrize("size", ["imagenet", "cifar"])
@pytest.mark.parametrize("name", registered_corruptions())
def test_every_corruption_is_deterministic_per_sample_and_truncates_to_uint8(photos, tiny_photos, name, size):
    """One check for every registered corruption and both profiles: the same (seed, sample ids) give the same
    images, an image's output does not depend on the batch it is in or the batch order, uint8 output is the float
    output truncated (the reference's np.uint8(x * 255)), float64 input gives float64 output close to float32's,
    and random corruptions depend on the seed and the sample id (also past 32 bits) while the others ignore them."""
    pixels = photos if size == "imagenet" else tiny_photos
    images = pixels.float() / 255
    ids = torch.tensor([5, 17, 2**40 + 3])
    together = corrupt(images, name, 4, seed=3, sample_ids=ids)
    assert together.min() >= 0 and together.max() <= 1
    assert torch.equal(together, corrupt(images, name, 4, seed=3, sample_ids=ids))
    alone = torch.cat(
        [corrupt(image[None], name, 4, seed=3, sample_ids=ids[i : i + 1]) for i, image in enumerate(images)]
    )
    torch.testing.assert_close(together, alone, rtol=0, atol=1e-6)
    uint8_alone = [
        corrupt(pixels[i : i + 1], name, 4, seed=3, sample_ids=ids[i : i + 1]) for i in range(len(ids))
    ]
    as_uint8 = corrupt(pixels, name, 4, seed=3, sample_ids=ids)
    assert torch.equal(torch.cat(uint8_alone), as_uint8)
    uint8_reversed = corrupt(pixels.flip(0), name, 4, seed=3, sample_ids=ids.flip(0))
    assert torch.equal(uint8_reversed, as_uint8.flip(0))
    reversed_order = corrupt(images.flip(0), name, 4, seed=3, sample_ids=ids.flip(0)).flip(0)
    torch.testing.assert_close(together, reversed_order, rtol=0, atol=1e-6)
    assert torch.equal(as_uint8, (together * 255).floor().clamp(0, 255).to(torch.uint8))
    as_double = corrupt(images.double(), name, 4, seed=3, sample_ids=ids)
    assert as_double.dtype == torch.float64 and (as_double - together.double()).abs().mean() < 1e-3
    # Random corruptions draw from (seed, sample id); the others ignore both.
    other_seed = corrupt(images, name, 4, seed=4, sample_ids=ids)
    other_ids = corrupt(images, name, 4, seed=3, sample_ids=ids + 1)
    twins = corrupt(images[:1].expand(2, -1, -1, -1), name, 4, seed=3, sample_ids=torch.tensor([0, 1]))
    if name in RANDOM_CORRUPTIONS:
        assert (together - other_seed).abs().mean() > 1e-3 and (together - other_ids).abs().mean() > 1e-3
        assert not torch.equal(twins[0], twins[1])
    else:
        assert torch.equal(together, other_seed) and torch.equal(together, other_ids)
        assert torch.equal(twins[0], twins[1])


def test_uint8_conversion_is_the_references_truncation():
    """`from_unit_float` to uint8 is NumPy's `np.uint8(np.clip(x, 0, 1) * 255)`, on values in and out of [0, 1]."""
    values = torch.cat(
        [torch.linspace(-0.5, 1.5, 20001), torch.rand(100_000, generator=torch.Generator().manual_seed(1))]
    )
    values = torch.cat([values, torch.arange(256) / 255.0, torch.tensor([-0.0, 1.0, 0.9999999])])
    like = torch.zeros(1, dtype=torch.uint8)
    expected = np.uint8(np.clip(values.numpy().astype(np.float32), 0, 1) * np.float32(255))
    assert np.array_equal(from_unit_float(values, like).numpy(), expected)


def _uint8_cases(photos: torch.Tensor) -> list[torch.Tensor]:
    """Photos plus the pixels where colour formulas have edge cases: black, grey, white, one channel largest or
    several tied, and every level in each channel; and an empty batch."""
    levels = torch.arange(256, dtype=torch.uint8)
    ramps = torch.stack([levels, levels.flip(0), levels.roll(85)]).view(1, 3, 1, 256).expand(1, 3, 32, 256)
    special = torch.tensor(
        [
            [0, 0, 0],
            [255, 255, 255],
            [128, 128, 128],
            [255, 255, 0],
            [0, 255, 255],
            [1, 0, 0],
            [200, 17, 200],
        ],
        dtype=torch.uint8,
    )
    edges = special.T.reshape(1, 3, 1, 7).repeat(1, 1, 40, 6)
    noise = torch.randint(
        0, 256, (2, 3, 36, 44), dtype=torch.uint8, generator=torch.Generator().manual_seed(2)
    )
    return [photos, ramps.contiguous(), edges, noise, photos[:0]]


@pytest.mark.parametrize(
    "name", [n for n in registered_corruptions() if get_corruption(n).uint8_fn is not None]
)
def test_uint8_routes_equal_the_float_route(photos, name):
    """A corruption's uint8 CPU route gives exactly what its float function gives after the uint8 conversion."""
    corruption = get_corruption(name)
    for images in _uint8_cases(photos):
        ids = torch.arange(len(images)) + 11
        for profile in ("imagenet", "cifar"):
            for severity in (1, 2, 3, 4, 5):
                try:
                    generic = from_unit_float(
                        corruption.fn(to_unit_float(images), severity, profile, 5, ids), images
                    )
                except ValueError as refusal:  # e.g. cifar frost on images larger than its photographs
                    with pytest.raises(ValueError, match=re.escape(str(refusal))):
                        corrupt(images, name, severity, seed=5, sample_ids=ids, profile=profile)
                    continue
                fast = corrupt(images, name, severity, seed=5, sample_ids=ids, profile=profile)
                assert torch.equal(fast, generic), (name, profile, severity, tuple(images.shape))
