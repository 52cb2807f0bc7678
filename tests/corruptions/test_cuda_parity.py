"""CUDA against CPU, for every registered corruption (both profiles) and every ImageNet-P perturbation.

The corruptions draw their randomness from counter-based streams (identical bits on both devices) and keep
TF32 out of their convolutions and matrix products (`corruptions.blur.device_exact_dtype`), so CUDA may differ from
the CPU only by float rounding in elementwise maths (exp, log, cos, lgamma, resampling weights): a rare value one
8-bit level apart. These tests need a GPU; CI has none, so they are skipped there and run by
`benchmarks/gpu/run.sh` on a GPU machine. `tests/test_device_placement.py` checks, without a GPU, that no CPU
tensor meets a CUDA one on these paths.
"""

import pytest
import torch

from hf_vitrobust.corruptions import corrupt, registered_corruptions
from hf_vitrobust.corruptions.perturbations import PERTURBATIONS, perturbation_sequence

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

# The share of 8-bit values that must be identical on both devices; the rest may differ by one level.
MIN_IDENTICAL = 0.99


def assert_levels_match(on_gpu: torch.Tensor, on_cpu: torch.Tensor) -> None:
    assert on_gpu.device.type == "cuda" and on_gpu.dtype == on_cpu.dtype == torch.uint8
    on_gpu = on_gpu.cpu()
    difference = (on_gpu.int() - on_cpu.int()).abs()
    assert difference.max() <= 1, f"largest difference {difference.max().item()} levels"
    identical = (difference == 0).double().mean().item()
    assert identical >= MIN_IDENTICAL, f"only {identical:.4%} of the values identical"


@pytest.mark.parametrize("profile", ["imagenet", "cifar"])
@pytest.mark.parametrize("name", registered_corruptions())
def test_corruption_on_cuda_matches_cpu(name, profile, photos, tiny_photos):
    images = photos if profile == "imagenet" else tiny_photos
    ids = torch.tensor([5, 17, 2**40 + 3])
    for severity in (1, 5):
        on_cpu = corrupt(images, name, severity, seed=3, sample_ids=ids, profile=profile)
        on_gpu = corrupt(images.cuda(), name, severity, seed=3, sample_ids=ids.cuda(), profile=profile)
        assert_levels_match(on_gpu, on_cpu)


@pytest.mark.parametrize("name", PERTURBATIONS)
def test_perturbation_sequence_on_cuda_matches_cpu(name, photos):
    sources = torch.nn.functional.interpolate(photos.float(), size=(256, 256), mode="bilinear").round().byte()
    on_cpu = perturbation_sequence(sources[:2], name, seed=1, sample_ids=[4, 9])
    on_gpu = perturbation_sequence(sources[:2].cuda(), name, seed=1, sample_ids=[4, 9])
    assert on_gpu.shape == on_cpu.shape
    assert_levels_match(on_gpu, on_cpu)
