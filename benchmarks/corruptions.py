"""ImageNet-C corruption throughput: ours (`hf_vitrobust.corruptions.corrupt`, batched) against the reference.

For every registered corruption and severity, it measures images/s at 224x224 for ours (one batched call per
severity) and for the reference `imagecorruptions` 1.1.2 (its per-image NumPy loop), in the same run on the same
machine, on natural photos from scikit-image. It prints a table per corruption (all five severities together) and
the whole set, with the speed ratio. The reference needs two shims on today's stack; `tests/reference_corruptions.py`
applies them, and this script imports it from there.

`--vit-b16` also times a ViT-B/16 forward pass (timm's vit_base_patch16_224 with random weights, which cost the same
as trained ones; eval mode, inference mode, fp32 and bf16 autocast) on the same batch on the same device, and
prints each corruption's throughput as a multiple of the fp32 forward's: the issue's yardstick for on-the-fly
ImageNet-C on a GPU ("faster than a ViT-B/16 forward pass on the same images"). `--reference-images 0` skips the
reference.

    python benchmarks/corruptions.py --images 16 --reference-images 4
    python benchmarks/corruptions.py --device cuda --images 128 --reference-images 2 --vit-b16
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


def vit_b16_rates(images: torch.Tensor, repeats: int = 5) -> dict[str, float]:
    """Images/s of a ViT-B/16 forward pass on `images` (uint8, 224x224) in fp32 and under bf16 autocast, best of
    `repeats` after a warm-up; the input is normalised as the model expects, outside the timing."""
    import timm

    model = timm.create_model("vit_base_patch16_224", pretrained=False).to(images.device).eval()
    pixels = (images.float() / 255 - 0.5) / 0.5
    device = images.device.type
    rates = {}
    for precision, dtype in (("fp32", None), ("bf16", torch.bfloat16)):
        with (
            torch.inference_mode(),
            torch.autocast(device, dtype=dtype or torch.float32, enabled=dtype is not None),
        ):
            model(pixels)
            best = min(seconds(lambda: model(pixels), str(images.device)) for _ in range(repeats))
        rates[precision] = len(images) / best
    return rates


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
    parser.add_argument("--vit-b16", action="store_true", help="compare with a ViT-B/16 forward pass")
    args = parser.parse_args()

    names = args.corruption or list(CORRUPTIONS)
    ours_batch = photo_batch(args.images).to(args.device)
    reference_batch = photo_batch(args.reference_images)
    with_reference = args.reference_images > 0
    print(f"{len(names)} corruptions x 5 severities, 224x224, ours: batches of {args.images} on {args.device}, "
          f"reference: {args.reference_images} images per severity, {torch.get_num_threads()} torch threads")  # fmt: skip
    vit = vit_b16_rates(ours_batch) if args.vit_b16 else None
    if vit is not None:
        device_name = torch.cuda.get_device_name() if args.device.startswith("cuda") else args.device
        print(f"ViT-B/16 forward on {device_name}, batch {args.images}: fp32 {vit['fp32']:.1f} img/s, "
              f"bf16 autocast {vit['bf16']:.1f} img/s")  # fmt: skip
    header = f"{'corruption':<18} {'ours img/s':>11}"
    header += f" {'reference img/s':>16} {'speed-up':>9}" if with_reference else ""
    header += f" {'x ViT fp32':>11} {'x ViT bf16':>11}" if vit else ""
    print(header)

    def row(label: str, ours_rate: float, reference_rate: float) -> str:
        line = f"{label:<18} {ours_rate:>11.1f}"
        if with_reference:
            line += f" {reference_rate:>16.1f} {ours_rate / reference_rate:>8.1f}x"
        if vit:
            line += f" {ours_rate / vit['fp32']:>10.2f}x {ours_rate / vit['bf16']:>10.2f}x"
        return line

    ours_total = reference_total = 0.0
    for name in names:
        corrupt(ours_batch[:2], name, 1)  # warm-up: kernels, caches, lazy loads
        ours = sum(seconds(lambda s=s, n=name: corrupt(ours_batch, n, s), args.device) for s in range(1, 6))
        ours_total += ours / args.images
        reference = float("nan")
        if with_reference:
            np.random.seed(0)
            reference = sum(
                seconds(lambda s=s, n=name: reference_corrupt(reference_batch, n, s)) for s in range(1, 6)
            )
            reference_total += reference / args.reference_images
        print(row(name, 5 * args.images / ours, 5 * args.reference_images / reference))
    count = 5 * len(names)
    print(row("whole set", count / ours_total, count / reference_total if with_reference else float("nan")))


if __name__ == "__main__":
    main()
