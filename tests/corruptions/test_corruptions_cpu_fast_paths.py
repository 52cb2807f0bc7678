"""The CPU fast paths of the blur and geometric corruptions against the torch paths that CUDA runs.

On CPU tensors, gaussian_blur, glass_blur's two blurs and elastic_transform's smoothing use cv2.sepFilter2D,
zoom_blur cv2.warpAffine, elastic_transform's resampling cv2.remap, and motion_blur sums its shifted copies
directly instead of by FFT. Each must give what the torch path gives on the same CPU, within the tolerance the CUDA
parity test (test_cuda_parity.py) allows between devices: no 8-bit value more than one level apart, and at least
99% of them identical.
"""

import cv2
import numpy as np
import pytest
import torch

import hf_vitrobust.corruptions.blur as blur
import hf_vitrobust.corruptions.motion_glass as motion_glass
import hf_vitrobust.corruptions.spatter as spatter_module
from hf_vitrobust.corruptions import corrupt
from hf_vitrobust.corruptions.randomness import random_bits

FAST_PATH_CORRUPTIONS = (
    "gaussian_blur",
    "zoom_blur",
    "glass_blur",
    "motion_blur",
    "elastic_transform",
    "spatter",
)
# test_cuda_parity.py's tolerance between devices.
MIN_IDENTICAL = 0.99


def _corrupt_all_severities(
    images: torch.Tensor, name: str, profile: str
) -> tuple[torch.Tensor, torch.Tensor]:
    """uint8 outputs at every severity, and the float output at severity 3."""
    ids = torch.tensor([5, 17, 2**40 + 3])
    levels = torch.stack(
        [corrupt(images, name, s, seed=3, sample_ids=ids, profile=profile) for s in (1, 2, 3, 4, 5)]
    )
    return levels, corrupt(images.float() / 255, name, 3, seed=3, sample_ids=ids, profile=profile)


@pytest.mark.parametrize("profile", ["imagenet", "cifar"])
@pytest.mark.parametrize("name", FAST_PATH_CORRUPTIONS)
def test_fast_path_matches_torch_path(photos, tiny_photos, name, profile):
    images = photos if profile == "imagenet" else tiny_photos
    fast, fast_float = _corrupt_all_severities(images, name, profile)
    with blur.torch_paths_only():
        generic, generic_float = _corrupt_all_severities(images, name, profile)
    difference = (fast.int() - generic.int()).abs()
    assert difference.max() <= 1, f"{name} {profile}: largest difference {difference.max().item()} levels"
    identical = (difference == 0).double().mean().item()
    assert identical >= MIN_IDENTICAL, f"{name} {profile}: only {identical:.4%} of the values identical"
    # Float rounding apart, the same numbers (elastic: float32 maps move a sample by at most 2**-17 pixel).
    torch.testing.assert_close(fast_float, generic_float, rtol=0, atol=1e-5)
    # The fast path is really taken: it rounds differently somewhere (glass_blur's blurs sum in float64 on both
    # paths, so their float32 results agree; spatter's cv2 water mask is exact, test below).
    if profile == "imagenet" and name not in ("glass_blur", "spatter"):
        assert not torch.equal(fast_float, generic_float)


def test_spatter_water_mask_takes_opencv_on_the_cpu_only(photos, monkeypatch):
    calls = []
    original = spatter_module._water_mask_opencv

    def counted(cv2_module, liquid_uint8):
        calls.append(len(liquid_uint8))
        return original(cv2_module, liquid_uint8)

    monkeypatch.setattr(spatter_module, "_water_mask_opencv", counted)
    corrupt(photos, "spatter", 1)  # severity 1 is water
    assert calls == [len(photos)]
    with blur.torch_paths_only():
        corrupt(photos, "spatter", 1)
    assert calls == [len(photos)]


def test_fast_paths_are_cpu_float_only():
    assert blur.opencv_for(torch.zeros(1, 3, 8, 8)) is cv2
    assert blur.opencv_for(torch.zeros(1, 3, 8, 8, dtype=torch.float64)) is cv2
    assert blur.opencv_for(torch.zeros(1, 3, 8, 8, dtype=torch.float16)) is None
    assert blur.opencv_for(torch.zeros(1, 3, 8, 8, dtype=torch.uint8)) is None
    assert blur.opencv_for(torch.zeros(1, 3, 8, 8, device="meta")) is None
    assert blur.takes_cpu_fast_path(torch.zeros(1, 3, 8, 8))
    with blur.torch_paths_only():
        assert blur.opencv_for(torch.zeros(1, 3, 8, 8)) is None
        assert not blur.takes_cpu_fast_path(torch.zeros(1, 3, 8, 8))
    assert blur.takes_cpu_fast_path(torch.zeros(1, 3, 8, 8))


def test_motion_tap_sum_stops_at_the_image_border():
    """On a 32x40 image with 41 taps, the shifts past the border are dropped on both paths."""
    images = torch.rand(3, 3, 32, 40, generator=torch.Generator().manual_seed(0))
    angles = torch.tensor([20.0, -44.0, 3.0])
    by_fft = motion_glass.motion_blur_with_angles(images, 20, 15, angles)
    by_taps = motion_glass.motion_blur_with_angles(images, 20, 15, angles, tap_sum_on_cpu=True)
    torch.testing.assert_close(by_taps, by_fft, rtol=0, atol=3e-6)
    with blur.torch_paths_only():
        assert torch.equal(
            motion_glass.motion_blur_with_angles(images, 20, 15, angles, tap_sum_on_cpu=True), by_fft
        )


def test_opencv_threads_follow_torch(tiny_photos):
    """A DataLoader worker runs torch with one thread; OpenCV must not start its own pool of more."""
    threads, opencv_threads = torch.get_num_threads(), cv2.getNumThreads()
    try:
        cv2.setNumThreads(2)
        torch.set_num_threads(1)
        corrupt(tiny_photos, "zoom_blur", 3)
        assert cv2.getNumThreads() == 1
    finally:
        torch.set_num_threads(threads)
        cv2.setNumThreads(opencv_threads)


def test_zoom_source_map_is_the_clipped_zoom_axis():
    """warpAffine's affine map reads, at every kept output index, the coordinate `clipped_zoom_axis` interpolates."""
    for size in (32, 200, 224, 256):
        for zoom in blur.zoom_factors("imagenet", 5) + blur.zoom_factors("cifar", 5):
            lower, weight = blur.clipped_zoom_axis(size, zoom, torch.device("cpu"))
            step, start = blur.zoom_source_map(size, zoom)
            coordinate = start + torch.arange(size, dtype=torch.float64) * step
            torch.testing.assert_close(lower + weight, coordinate, rtol=0, atol=1e-12)


def test_fft_length_has_no_prime_above_11():
    # By hand: 244 = 4 x 61 -> 245 = 5 x 7 x 7; 240 = 16 x 15 and 176 = 16 x 11 stay; 61 -> 63 = 7 x 9; 13 -> 14.
    assert [blur.fft_length(n) for n in (244, 240, 176, 61, 13, 1)] == [245, 240, 176, 63, 14, 1]


def _shuffle_loop(x: np.ndarray, offsets: np.ndarray, max_delta: int) -> np.ndarray:
    """The reference's glass-blur loop on one (H, W, C) image: visited pixels, bottom right first, copy their partner
    (on (H, W, C) arrays `x[h, w]` is a view, so the reference's tuple "swap" is a copy)."""
    x = x.copy()
    for h in range(x.shape[0] - max_delta, max_delta, -1):
        for w in range(x.shape[1] - max_delta, max_delta, -1):
            dy, dx = offsets[:, h, w]
            x[h, w], x[h + dy, w + dx] = x[h + dy, w + dx], x[h, w]
    return x


def test_glass_shuffle_resolves_chains_across_a_whole_row():
    """Every pixel copying its right neighbour, visited just before it: chains run the whole width (about 6 pointer
    jumping rounds); the rounds stop only when every chain has ended."""
    height, width, max_delta = 9, 70, 2
    offsets = np.zeros((1, 2, height, width), dtype=np.int64)
    offsets[:, 1] = 1
    image = np.arange(height * width).reshape(height, width, 1)
    expected = _shuffle_loop(image, offsets[0], max_delta)[..., 0]
    sources = motion_glass.glass_shuffle_sources(torch.from_numpy(offsets), max_delta)[0].numpy()
    np.testing.assert_array_equal(image.reshape(-1)[sources].reshape(height, width), expected)
    # Row 3's visited pixels all end at the first unvisited pixel right of them, column width - max_delta + 1.
    assert (expected[3, max_delta + 1 : width - max_delta + 1] == image[3, width - max_delta + 1, 0]).all()


@pytest.mark.parametrize("max_delta", [1, 2, 3, 4])
def test_glass_offsets_are_the_streams_modulo(max_delta):
    """The offsets are the stream's 32-bit integers modulo 2 max_delta, minus max_delta (Python's % per value),
    including the integers next to multiples of the modulus and the largest ones."""
    ids = torch.tensor([0, 7, 2**40 + 1])
    offsets = motion_glass.glass_offsets(5, ids, max_delta, 2, 24, 20)
    for i in range(2):
        bits = random_bits(5, ids, f"glass_blur/offsets/{i}", (2, 24, 20))
        expected = [b % (2 * max_delta) - max_delta for b in bits.flatten().tolist()]
        assert offsets[i].flatten().tolist() == expected
    edges = torch.tensor([0, 5, 6, 7, 2**32 - 7, 2**32 - 6, 2**32 - 2, 2**32 - 1, 3 * 2**30, 2**31 + 5])
    for modulus in (2, 6, 8):
        assert motion_glass._remainder(edges, modulus).tolist() == [e % modulus for e in edges.tolist()]


def _corrupt_in_forked_child(images: torch.Tensor, queue) -> None:
    torch.set_num_threads(1)  # as a DataLoader worker
    queue.put(corrupt(images, "glass_blur", 1).numpy())


def test_opencv_fast_paths_work_in_a_forked_child_after_the_parent_used_threads(photos):
    """A DataLoader worker forked after the parent ran OpenCV on several threads: OpenCV's pool does not survive
    fork, so resizing the inherited pool waited forever (a full-suite hang). The child must finish, with the
    parent's result."""
    import multiprocessing
    import queue as queue_module

    previous, previous_torch = cv2.getNumThreads(), torch.get_num_threads()
    torch.set_num_threads(2)  # the parent's corruptions set OpenCV to torch's thread count
    cv2.setNumThreads(2)
    try:
        corrupt(photos, "zoom_blur", 3)  # warpAffine on 2 threads: starts the pool's threads
        expected = corrupt(photos, "glass_blur", 1)
        context = multiprocessing.get_context("fork")
        queue = context.Queue()
        child = context.Process(target=_corrupt_in_forked_child, args=(photos, queue))
        child.start()
        try:
            result = queue.get(timeout=60)
        except queue_module.Empty:
            child.kill()
            raise AssertionError("the forked child hung in OpenCV") from None
        child.join(10)
        assert np.array_equal(result, expected.numpy())
        assert cv2.getNumThreads() == 2  # the parent's setting is back after the fork
    finally:
        cv2.setNumThreads(previous)
        torch.set_num_threads(previous_torch)
