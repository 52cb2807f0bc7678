"""Time one ImageNet-C peer package, corruption by corruption; run with the peer's own venv python.

This file imports nothing from hf_vitrobust: it runs inside `.peer-venvs/<peer>/` (see install.sh), where only the
peer and its own dependencies are installed. `benchmarks/corruptions.py` calls it through a subprocess with the
same uint8 images it corrupts itself, and reads one JSON object per corruption from stdout:
    {"corruption": name, "seconds": [best seconds of severity 1, ..., 5], "images": N}
Each severity is timed over all N images (one `corrupt` call per image, the peers' API), best of `--rounds`.
Round r seeds NumPy's global generator (which all three peers draw from) with `--seed` + r before each severity's
timed loop, so two rounds give two seeds; `--outputs DIR` saves each round's outputs as
DIR/<corruption>-<severity>-seed<seed>.npy, for the caller's fidelity check.

    .peer-venvs/corrupt-tta/bin/python benchmarks/peers/peer_timing.py corrupt-tta --images photos.npy
"""

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

PEERS = ("imagecorruptions", "imagecorruptions-imaug", "corrupt-tta")


def load_peer(peer: str):
    """The peer's `corrupt(image, severity=..., corruption_name=...)` function (H, W, 3) uint8 -> array."""
    if peer == "corrupt-tta":
        import corrupt_tta

        return corrupt_tta.corrupt
    if peer == "imagecorruptions":
        # 1.1.2 on today's stack: scikit-image removed `gaussian(..., multichannel=True)` and NumPy 2 `np.float_`.
        import skimage.filters

        original = skimage.filters.gaussian

        def gaussian(image, *args, multichannel=None, **kwargs):
            if multichannel is not None:
                kwargs.setdefault("channel_axis", -1 if multichannel else None)
            return original(image, *args, **kwargs)

        skimage.filters.gaussian = gaussian
        if not hasattr(np, "float_"):
            np.float_ = np.float64
    import imagecorruptions  # both the release and the imaug fork import under this name

    return imagecorruptions.corrupt


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("peer", choices=PEERS)
    parser.add_argument("--images", required=True, type=Path, help=".npy of uint8 images (N, H, W, 3)")
    parser.add_argument("--corruption", action="append", required=True)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--outputs", type=Path, help="save every round's outputs here")
    args = parser.parse_args()
    try:
        import cv2

        cv2.setNumThreads(1)  # one core per process: OpenCV's own pool would otherwise use every core
    except ImportError:
        pass
    corrupt = load_peer(args.peer)
    images = np.load(args.images)
    for name in args.corruption:
        corrupt(images[0], severity=1, corruption_name=name)  # warm-up: lazy imports, numba compilation
        best = [float("inf")] * 5
        for round_index in range(args.rounds):
            seed = args.seed + round_index
            for severity in range(1, 6):
                np.random.seed(seed)
                start = time.perf_counter()
                outputs = [corrupt(image, severity=severity, corruption_name=name) for image in images]
                best[severity - 1] = min(best[severity - 1], time.perf_counter() - start)
                if args.outputs is not None:
                    args.outputs.mkdir(parents=True, exist_ok=True)
                    stacked = np.stack([np.uint8(np.clip(np.asarray(o), 0, 255)) for o in outputs])
                    np.save(args.outputs / f"{name}-{severity}-seed{seed}.npy", stacked)
        print(json.dumps({"corruption": name, "seconds": best, "images": len(images)}), flush=True)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
