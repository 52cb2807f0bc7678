"""Attack-probe speed: our DeepFool against foolbox's, our PGD against torchattacks', on EfficientNet-Lite0.

DeepFool: `hf_vitrobust.probes.deepfool.deepfool` (L2, 50 steps, 10 candidates, overshoot 0.02) against
foolbox 3.3.4's `L2DeepFoolAttack` with the same settings, both in one batch, on the same photos (the package's two
bundled photos and six scikit-image photos at 224 px, labels = the model's clean predictions). Reports s/image,
success counts and the mean L2 norm over the successful images for both, and our "vmap" gradient mode.

PGD: our sign-gradient PGD (`pgd_attack(method="sign")`, which also records the loss at every step) against
torchattacks 3.5.1's `PGD` without random start, same eps / alpha / steps, s/batch and the largest difference
between the two adversarial batches. The paper's Adam variant is timed too.

The implementations alternate over `rounds` rounds so that drift in the machine's speed hits them alike; the
best round counts. The whole run takes about two minutes on 2 quiet CPU threads.

    python benchmarks/probes_attacks.py --threads 2
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from typing import Any

import foolbox
import numpy as np
import skimage.data
import torch
import torchattacks
from PIL import Image

from hf_vitrobust.models import load_classifier
from hf_vitrobust.models.builtin import bundled_photos
from hf_vitrobust.probes.deepfool import deepfool
from hf_vitrobust.probes.pgd import pgd_attack

SKIMAGE_PHOTOS = ("astronaut", "rocket", "immunohistochemistry", "hubble_deep_field", "colorwheel", "retina")
PGD_EPS = 1 / 255
PGD_ALPHA = 0.25 / 255
PGD_STEPS = 10


def photos(classifier: Any, count: int) -> torch.Tensor:
    """`count` pixel tensors (count, 3, 224, 224): the bundled photos, then scikit-image's, via classifier.preprocess."""
    images = [Image.open(path) for path in bundled_photos()]
    images += [Image.fromarray(np.asarray(getattr(skimage.data, name)())[..., :3]) for name in SKIMAGE_PHOTOS]
    return classifier.preprocess(images[:count])


def timed(fn: Callable[[], Any], device: str) -> tuple[float, Any]:
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    start = time.perf_counter()
    out = fn()
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    return time.perf_counter() - start, out


def run(device: str = "cpu", threads: int = 2, images: int = 8, rounds: int = 2) -> dict[str, Any]:
    """Time both attacks, ours against the reference, and return the numbers (seconds, norms, counts)."""
    torch.set_num_threads(threads)
    classifier = load_classifier("builtin:efficientnet_lite0").to(device).eval()
    pixels = photos(classifier, images).to(device)
    with torch.no_grad():
        labels = classifier(pixels).argmax(dim=1)
    fmodel = foolbox.PyTorchModel(classifier, bounds=(0, 1), device=device)
    fb_attack = foolbox.attacks.L2DeepFoolAttack(steps=50, candidates=10, overshoot=0.02)
    ta_attack = torchattacks.PGD(
        classifier, eps=PGD_EPS, alpha=PGD_ALPHA, steps=PGD_STEPS, random_start=False
    )

    def ours_deepfool(mode: str) -> Callable[[], Any]:
        return lambda: deepfool(classifier, pixels, labels, batch_size=images, gradients=mode)

    def foolbox_deepfool() -> Any:
        raw, _, success = fb_attack(fmodel, pixels, labels, epsilons=None)
        return raw, success

    def ours_pgd(method: str) -> Callable[[], Any]:
        step = PGD_ALPHA if method == "sign" else PGD_EPS / 2
        return lambda: pgd_attack(
            classifier, pixels, labels, method=method, eps=PGD_EPS, step_size=step, steps=PGD_STEPS
        )

    jobs: dict[str, Callable[[], Any]] = {
        "deepfool_ours": ours_deepfool("loop"),
        "deepfool_ours_vmap": ours_deepfool("vmap"),
        "deepfool_foolbox": foolbox_deepfool,
        "pgd_ours_sign": ours_pgd("sign"),
        "pgd_ours_adam": ours_pgd("adam"),
        "pgd_torchattacks": lambda: ta_attack(pixels, labels),
    }
    best = dict.fromkeys(jobs, float("inf"))
    outputs: dict[str, Any] = {}
    for _ in range(rounds):
        for name, job in jobs.items():
            seconds, outputs[name] = timed(job, device)
            best[name] = min(best[name], seconds)

    def norms(adversarial: torch.Tensor, success: torch.Tensor) -> dict[str, Any]:
        l2 = (adversarial - pixels).flatten(1).norm(dim=1)
        return {
            "successes": int(success.sum()),
            "mean_l2": float(l2[success].mean()) if bool(success.any()) else None,
        }

    ours_adv, ours_success, iterations = outputs["deepfool_ours"]
    fb_adv, fb_success = outputs["deepfool_foolbox"]
    pgd_adv = outputs["pgd_ours_sign"][0]
    return {
        "device": device,
        "threads": threads,
        "images": images,
        "rounds": rounds,
        "deepfool": {
            "ours_s_per_image": best["deepfool_ours"] / images,
            "ours_vmap_s_per_image": best["deepfool_ours_vmap"] / images,
            "foolbox_s_per_image": best["deepfool_foolbox"] / images,
            "speedup_vs_foolbox": best["deepfool_foolbox"] / best["deepfool_ours"],
            "ours": norms(ours_adv, ours_success),
            "foolbox": norms(fb_adv, fb_success.to(pixels.device)),
            "ours_iterations": iterations.tolist(),
        },
        "pgd": {
            "eps": PGD_EPS,
            "alpha": PGD_ALPHA,
            "steps": PGD_STEPS,
            "ours_sign_s_per_batch": best["pgd_ours_sign"],
            "ours_adam_s_per_batch": best["pgd_ours_adam"],
            "torchattacks_s_per_batch": best["pgd_torchattacks"],
            "time_ratio_vs_torchattacks": best["pgd_ours_sign"] / best["pgd_torchattacks"],
            "max_abs_diff_vs_torchattacks": float((pgd_adv - outputs["pgd_torchattacks"]).abs().max()),
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--images", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    print(json.dumps(run(args.device, args.threads, args.images, args.rounds), indent=2))


if __name__ == "__main__":
    main()
