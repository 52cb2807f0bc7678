"""The benchmarks/ scripts' own logic. The ImageNet-C peer benchmark's verdicts: which peer counts as faithful, and the whole-set rate.

`benchmarks/corruptions.py` picks, per corruption, the fastest peer that is faithful to the reference; a wrong
verdict would pick the wrong yardstick. The expectations here are computed by hand from constructed images.
"""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

_PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "corruptions.py"
_spec = importlib.util.spec_from_file_location("benchmark_corruptions", _PATH)
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def _images(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    smooth = rng.integers(40, 200, size=(3, 8, 8, 3)).repeat(8, 1).repeat(8, 2)
    return smooth.astype(np.uint8)  # (3, 64, 64, 3), blocks of 8x8


def _outputs(images: np.ndarray, names: list[str], shift: int = 0) -> dict:
    shifted = np.clip(images.astype(np.int16) + shift, 0, 255).astype(np.uint8)
    return {(name, severity): shifted for name in names for severity in range(1, 6)}


def test_reference_itself_is_faithful_and_a_shift_beyond_two_levels_is_not():
    clean = _images(0)
    blurred = (clean.astype(np.float64) * 0.9 + 12).astype(np.uint8)  # stands in for a corrupted image
    names = ["brightness"]  # deterministic: the mean-absolute-difference rule applies
    reference = {key: [value, value] for key, value in _outputs(blurred, names).items()}
    same = bench.fidelity(clean, _outputs(blurred, names), reference, names)["brightness"]
    assert same["faithful"] and same["mean_abs_diff"] == 0.0 and same["ssim_gap"] == 0.0
    # +1 grey level everywhere: within the tests' 2-level allowance (mean abs diff exactly 1).
    one = bench.fidelity(clean, _outputs(blurred, names, shift=1), reference, names)["brightness"]
    assert one["faithful"] and one["mean_abs_diff"] == pytest.approx(1.0)
    # +5 grey levels: mean abs diff 5 > 2, so not faithful whatever SSIM says.
    five = bench.fidelity(clean, _outputs(blurred, names, shift=5), reference, names)["brightness"]
    assert not five["faithful"] and five["mean_abs_diff"] == pytest.approx(5.0)


def test_random_corruptions_are_judged_by_statistics_with_the_reference_spread():
    clean = _images(1)
    names = ["shot_noise"]  # random: no pixel rule, only SSIM / PSNR against the reference's seeds
    rng = np.random.default_rng(2)

    def noisy(scale: float) -> np.ndarray:
        noise = rng.normal(0, scale, size=clean.shape)
        return np.clip(clean + noise, 0, 255).astype(np.uint8)

    reference = {(n, s): [noisy(10), noisy(10)] for n in names for s in range(1, 6)}
    like = bench.fidelity(clean, {(n, s): noisy(10) for n in names for s in range(1, 6)}, reference, names)
    far = bench.fidelity(clean, {(n, s): noisy(40) for n in names for s in range(1, 6)}, reference, names)
    assert like["shot_noise"]["faithful"]
    # Noise of 40 levels against 10: PSNR drops by about 20 log10(4) = 12 dB, far beyond 1 dB.
    assert not far["shot_noise"]["faithful"] and far["shot_noise"]["psnr_gap"] > 10
    assert far["shot_noise"]["mean_abs_diff"] == 0.0  # not computed for random corruptions


def test_whole_set_rate_is_the_harmonic_combination():
    # 1 image through both corruptions takes 1/100 + 1/400 s = 0.0125 s, so 2 corruptions / 0.0125 s = 160.
    assert bench.whole_set({"a": 100.0, "b": 400.0}, ["a", "b"]) == pytest.approx(160.0)
