"""ImageNet-C corruption throughput: ours (`hf_vitrobust.corruptions.corrupt`, batched) against the reference.

For every registered corruption and severity, it measures images/s at 224x224 for ours (one batched call per
severity) and for the reference `imagecorruptions` 1.1.2 (its per-image NumPy loop), in the same run on the same
machine, on natural photos from scikit-image. It prints a table per corruption (all five severities together) and
the whole set, with the speed ratio. The reference needs two shims on today's stack; `tests/reference_corruptions.py`
applies them, and this script imports it from there.

    python benchmarks/corruptions.py --images 16 --reference-images 4
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import skimage.data
import torch
import torch.nn.functional as F

from hf_vitrobust.corruptions import CORRUPTIONS, corrupt

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from reference_corruptions import reference_corrupt  # after the path set-up above

PHOTOS = ("astronaut", "chelsea", "coffee", "rocket", "immunohistochemistry", "hubble_deep_field", "retina")


def photo_batch(count: int, size: int = 224) -> torch.Tensor:
    """`count` uint8 images (count, 3, size, size): scikit-image's colour photos, resized, cycled as needed."""
    images = []
    for name in PHOTOS:
        array = getattr(skimage.data, name)()
        tensor = torch.from_numpy(np.ascontiguousarray(array[..., :3])).permute(2, 0, 1)[None].float()
        images.append(
            F.interpolate(tensor, size=(size, size), mode="bilinear", antialias=True).round().byte()
        )
    batch = torch.cat(images)
    return batch[torch.arange(count) % len(batch)]


def seconds(fn, device: str = "cpu") -> float:
    start = time.perf_counter()
    fn()
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--images", type=int, default=16, help="images per batch for ours")
    parser.add_argument(
        "--reference-images", type=int, default=4, help="images per severity for the reference"
    )
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--corruption", action="append", help="only these (repeatable)")
    args = parser.parse_args()

    names = args.corruption or list(CORRUPTIONS)
    ours_batch = photo_batch(args.images).to(args.device)
    reference_batch = photo_batch(args.reference_images)
    print(f"{len(names)} corruptions x 5 severities, 224x224, ours: batches of {args.images} on {args.device}, "
          f"reference: {args.reference_images} images per severity, {torch.get_num_threads()} torch threads")  # fmt: skip
    print(f"{'corruption':<18} {'ours img/s':>11} {'reference img/s':>16} {'speed-up':>9}")
    ours_total = reference_total = 0.0
    for name in names:
        corrupt(ours_batch[:2], name, 1)  # warm-up: kernels, caches, lazy loads
        ours = sum(seconds(lambda s=s, n=name: corrupt(ours_batch, n, s), args.device) for s in range(1, 6))
        np.random.seed(0)
        reference = sum(
            seconds(lambda s=s, n=name: reference_corrupt(reference_batch, n, s)) for s in range(1, 6)
        )
        ours_rate = 5 * args.images / ours
        reference_rate = 5 * args.reference_images / reference
        ours_total += ours / args.images
        reference_total += reference / args.reference_images
        print(f"{name:<18} {ours_rate:>11.1f} {reference_rate:>16.1f} {ours_rate / reference_rate:>8.1f}x")
    count = 5 * len(names)
    print(f"{'whole set':<18} {count / ours_total:>11.1f} {count / reference_total:>16.1f} "
          f"{reference_total / ours_total:>8.1f}x")  # fmt: skip


if __name__ == "__main__":
    main()
