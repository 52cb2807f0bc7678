"""Fourier heat map speed: ours against a one-pass-per-frequency loop, as github.com/gatheluck/FourierHeatmap does.

Ours (`hf_vitrobust.probes.fourier_heatmap.fourier_heatmap`) evaluates the canonical half of the window
((w^2 + 1) / 2 frequencies; the other half is the same images, mirrored), preprocesses the images once, and batches
the (frequency, image) pairs, so one batch mixes frequencies when there are few images.

The reference loop, like gatheluck's `eval_fourier_heatmap`, builds each frequency's basis (irfftn of a one-hot
half spectrum, L2-normalised), then loops over the data in batches: random sign per image and channel, add, clamp
to [0, 1], predict, count the errors. It is timed over every frequency of the full window (the issue's baseline).
Two more figures come from the same kind of run:
  * gatheluck itself evaluates the half plane j >= 0 (w (w + 1) / 2 frequencies) and flips it: the time of those
    cells, summed per frequency from the full-window run, is `loop_half_plane_s`;
  * gatheluck's dataset decodes and preprocesses (Resize 256, CenterCrop 224, ToTensor) every image again on every
    pass: `loop_preprocessing_each_pass_s` runs the full-window loop from the PIL photos with the classifier's own
    preprocessing in each pass (its DataLoader worker start-up is still left out).
Each timing runs twice, interleaved, and the faster run counts (the machine may be shared).

Model: the builtin EfficientNet-Lite0 (real ImageNet weights, 224x224, offline) on scikit-image photos, labels
= its clean predictions, eps = 15.7. Reduced windows keep the run short on 2 CPU threads (the paper's central 63x63
window at 224 px is 3969 frequencies, 1985 for ours):
  * "full_batches": window 7 (49 frequencies, 25 for ours), 16 images, batch 16: both run full batches, so the
    gain is the symmetry (ours also predicts the clean images once, for its clean error: 1 / 26 of its work here,
    1 / 1986 with the paper's window);
  * "few_images": window 7, 4 images, batch 16: the reference can batch only the 4 images of one frequency, ours
    fills batches of 16 across frequencies. That pays where a larger batch is cheaper per image (a GPU); on a CPU
    EfficientNet-Lite0 is cheaper per image at batch 4 than at 16, so ours is also timed at batch 4
    (`ours_batch_4_s`).

    python benchmarks/probes_fourier.py --threads 2
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import skimage.data
import torch
from PIL import Image

from hf_vitrobust.corruptions.fourier_basis import (
    canonical_frequencies,
    default_fourier_eps,
    fourier_basis,
    window_frequencies,
)
from hf_vitrobust.models import load_classifier
from hf_vitrobust.probes.base import batch_slices
from hf_vitrobust.probes.fourier_heatmap import fourier_heatmap

PHOTOS = ("astronaut", "chelsea", "coffee", "rocket", "immunohistochemistry", "hubble_deep_field", "retina")
REPEATS = 2
SCENARIOS = {
    "full_batches": {
        "window": 7,
        "images": 16,
        "batch_size": 16,
        "also_ours_at": None,
        "preprocess_each_pass": True,
    },
    "few_images": {
        "window": 7,
        "images": 4,
        "batch_size": 16,
        "also_ours_at": 4,
        "preprocess_each_pass": False,
    },
}


def photos(count: int) -> list[Image.Image]:
    """`count` scikit-image colour photos (PIL, various sizes), cycled as needed."""
    images = [
        Image.fromarray(np.ascontiguousarray(getattr(skimage.data, name)()[..., :3])) for name in PHOTOS
    ]
    return [images[k % len(images)] for k in range(count)]


def reference_basis(frequency: tuple[int, int], size: int) -> torch.Tensor:
    """gatheluck's basis: irfftn of a one-hot (H, W // 2 + 1) spectrum, L2-normalised (j < 0 via its mirror)."""
    i, j = canonical_frequencies(torch.tensor([frequency]))[0].tolist()
    spectrum = torch.zeros(size, size // 2 + 1)
    spectrum[i % size, j] = 1.0
    basis = torch.fft.irfftn(spectrum, s=(size, size), dim=(-2, -1))
    return basis / basis.norm()


@torch.no_grad()
def reference_loop(
    classifier,
    data: torch.Tensor | list[Image.Image],
    labels: torch.Tensor,
    window: int,
    eps: float,
    batch_size: int,
    seed: int = 0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """One pass over the data per frequency of the full window; `data` is pixels, or PIL images preprocessed again
    in every pass (as a torchvision dataset does). Returns the error map and the seconds spent per cell."""
    size = classifier.input_size[0]
    half = (window - 1) // 2
    generator = torch.Generator().manual_seed(seed)
    errors = torch.zeros(window, window)
    cell_seconds = torch.zeros(window, window)
    for i, j in window_frequencies(window).tolist():
        start = time.perf_counter()
        basis = (reference_basis((i, j), size) * eps).to(classifier.device)
        wrong = 0
        for part in batch_slices(len(data), batch_size):
            if isinstance(data, torch.Tensor):
                images = data[part]
            else:
                images = classifier.preprocess(data[part]).to(classifier.device)
            signs = torch.randint(0, 2, (len(images), 3, 1, 1), generator=generator).to(images) * 2 - 1
            noisy = torch.clamp(images + signs * basis, 0.0, 1.0)
            wrong += int((classifier(noisy).argmax(dim=1) != labels[part]).sum())
        errors[i + half, j + half] = wrong / len(data)
        if classifier.device.type == "cuda":
            torch.cuda.synchronize()
        cell_seconds[i + half, j + half] = time.perf_counter() - start
    return errors, cell_seconds


def _timed(device: torch.device, fn, *args, **kwargs):
    start = time.perf_counter()
    result = fn(*args, **kwargs)
    if device.type == "cuda":
        torch.cuda.synchronize()
    return result, time.perf_counter() - start


def run(device: str, threads: int) -> dict:
    """Time ours and the reference loop in each scenario; speed-ups > 1 mean ours is faster."""
    torch.set_num_threads(threads)
    classifier = load_classifier("builtin:efficientnet_lite0", device=device)
    size = classifier.input_size[0]
    eps = default_fourier_eps(classifier.input_size)
    # Our basis is gatheluck's (same cosine, same normalisation), checked on the widest window used.
    frequencies = window_frequencies(max(s["window"] for s in SCENARIOS.values()))
    ours_basis = fourier_basis(frequencies, size)
    basis_gap = max(
        float((ours_basis[k] - reference_basis(tuple(f), size)).abs().max())
        for k, f in enumerate(frequencies.tolist())
    )
    figures: dict = {
        "model": "builtin:efficientnet_lite0 (224x224)",
        "device": str(classifier.device),
        "threads": threads,
        "eps": eps,
        "repeats": REPEATS,
        "max_basis_difference_vs_reference": basis_gap,
    }
    for name, setup in SCENARIOS.items():
        window, count, batch_size = setup["window"], setup["images"], setup["batch_size"]
        images = photos(count)
        pixels = classifier.preprocess(images).to(classifier.device)
        with torch.no_grad():
            labels = classifier(pixels).argmax(dim=1)  # also warms the model up
        times: dict[str, list[float]] = {
            "ours": [],
            "ours_small": [],
            "loop": [],
            "half_plane": [],
            "preprocessing": [],
        }
        for _ in range(REPEATS):
            ours, seconds = _timed(
                classifier.device,
                fourier_heatmap,
                classifier,
                pixels,
                labels,
                window=window,
                eps=eps,
                batch_size=batch_size,
            )
            times["ours"].append(seconds)
            if setup["also_ours_at"]:
                _, seconds = _timed(
                    classifier.device,
                    fourier_heatmap,
                    classifier,
                    pixels,
                    labels,
                    window=window,
                    eps=eps,
                    batch_size=setup["also_ours_at"],
                )
                times["ours_small"].append(seconds)
            (loop_map, cell_seconds), seconds = _timed(
                classifier.device, reference_loop, classifier, pixels, labels, window, eps, batch_size
            )
            times["loop"].append(seconds)
            times["half_plane"].append(float(cell_seconds[:, (window - 1) // 2 :].sum()))  # j >= 0
            if setup["preprocess_each_pass"]:
                _, seconds = _timed(
                    classifier.device, reference_loop, classifier, images, labels, window, eps, batch_size
                )
                times["preprocessing"].append(seconds)
        best = {key: min(values) for key, values in times.items() if values}
        figures[name] = {
            "window": window,
            "images": count,
            "batch_size": batch_size,
            "ours_frequencies": ours.evaluated_cells,
            "loop_frequencies": window * window,
            "ours_s": round(best["ours"], 2),
            "loop_full_window_s": round(best["loop"], 2),
            "loop_half_plane_s": round(best["half_plane"], 2),
            "speedup_vs_full_window_loop": round(best["loop"] / best["ours"], 2),
            "speedup_vs_half_plane_loop": round(best["half_plane"] / best["ours"], 2),
            "mean_error_ours": round(float(np.mean(ours.error_map)), 3),
            "mean_error_loop": round(float(loop_map.mean()), 3),
        }
        if "ours_small" in best:
            small = setup["also_ours_at"]
            figures[name][f"ours_batch_{small}_s"] = round(best["ours_small"], 2)
            figures[name][f"speedup_ours_batch_{small}_vs_full_window_loop"] = round(
                best["loop"] / best["ours_small"], 2
            )
            figures[name][f"speedup_ours_batch_{small}_vs_half_plane_loop"] = round(
                best["half_plane"] / best["ours_small"], 2
            )
        if "preprocessing" in best:
            figures[name]["loop_preprocessing_each_pass_s"] = round(best["preprocessing"], 2)
            figures[name]["speedup_vs_loop_preprocessing_each_pass"] = round(
                best["preprocessing"] / best["ours"], 2
            )
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=2, help="torch CPU threads")
    args = parser.parse_args()
    print(json.dumps(run(args.device, args.threads), indent=2))


if __name__ == "__main__":
    main()
