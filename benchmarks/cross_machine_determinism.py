"""How far generated ImageNet-C moves when the CPU kernels change: the question behind "identical on one machine,
not guaranteed across machines" (issue 38, point 9).

A run's results do not depend on the batch size, the number of processes or a resume (tested). They can depend on
the floating-point kernels torch picks, which differ between CPUs (AVX2 or AVX-512 code paths, ATen's dispatch)
and with the thread count (how a reduction is split). This script emulates other machines on this one: it makes
the same generated ImageNet-C images (`generated:builtin`: the bundled photos, every corruption and severity, the
JPEG-85 round trip of the release) and the builtin EfficientNet-Lite0's top-1 on them, in fresh processes under
ATen's AVX2 and scalar kernels (`ATEN_CPU_CAPABILITY`), oneDNN held to SSE4.1 (`ONEDNN_MAX_CPU_ISA`), MKL held to
SSE4.2 in its reproducible mode (`MKL_ENABLE_INSTRUCTIONS`, `MKL_CBWR`), and 1 and 2 threads, and counts against
the first configuration: images whose uint8 pixels differ, the largest pixel difference, and top-1 predictions that
change. What it cannot emulate (another CPU vendor's MKL paths, AVX-512 on a CPU without it, other library builds)
stays untested.

    python benchmarks/cross_machine_determinism.py --photos 29
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import torch

CONFIGURATIONS = (
    {"env": {"ATEN_CPU_CAPABILITY": "avx2"}, "threads": 2},
    {"env": {"ATEN_CPU_CAPABILITY": "avx2"}, "threads": 1},
    {"env": {"ATEN_CPU_CAPABILITY": "default"}, "threads": 2},
    {"env": {"ONEDNN_MAX_CPU_ISA": "SSE41"}, "threads": 2},
    {"env": {"MKL_ENABLE_INSTRUCTIONS": "SSE4_2", "MKL_CBWR": "COMPATIBLE"}, "threads": 2},
)


def generate(photos: int, output: Path, threads: int) -> None:
    """One configuration (in its own process): every generated image of the first `photos` bundled photos, and the
    builtin model's top-1 on each, saved to `output`."""
    from hf_vitrobust.data.loading import load_benchmark
    from hf_vitrobust.models.loading import load_classifier

    torch.set_num_threads(threads)
    source = load_benchmark("imagenet-c", "generated:builtin", seed=0).limited(photos, per_cell=True)
    images = {sample.sample_id: sample.image for sample in source}
    classifier = load_classifier("builtin:efficientnet_lite0").eval()
    names = sorted(images)
    top1 = []
    with torch.inference_mode():
        for start in range(0, len(names), 64):
            batch = torch.stack([images[name] for name in names[start : start + 64]]).float() / 255
            top1 += classifier(batch).argmax(dim=1).tolist()
    torch.save({"names": names, "images": torch.stack([images[n] for n in names]), "top1": top1}, output)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--photos", type=int, default=29, help="bundled photos to corrupt (29: all)")
    parser.add_argument("--worker", nargs=2, metavar=("OUTPUT", "THREADS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        generate(args.photos, Path(args.worker[0]), int(args.worker[1]))
        return
    print(f"torch {torch.__version__}, CPU capability {torch.backends.cpu.get_cpu_capability()}")
    runs = []
    with tempfile.TemporaryDirectory() as folder:
        for index, configuration in enumerate(CONFIGURATIONS):
            output = Path(folder) / f"{index}.pt"
            env = {**os.environ, **configuration["env"], "HF_HUB_OFFLINE": "1"}
            command = [sys.executable, __file__, "--photos", str(args.photos)]
            command += ["--worker", str(output), str(configuration["threads"])]
            subprocess.run(command, env=env, check=True)
            runs.append(torch.load(output, weights_only=True))
    first = runs[0]
    print(f"{len(first['names'])} generated images of {args.photos} photos; against {CONFIGURATIONS[0]}:")
    for configuration, run in zip(CONFIGURATIONS[1:], runs[1:], strict=True):
        assert run["names"] == first["names"]
        delta = (run["images"].int() - first["images"].int()).abs()
        differ = delta.flatten(1).amax(dim=1) > 0
        flips = sum(a != b for a, b in zip(run["top1"], first["top1"], strict=True))
        summary = {
            "images with any pixel changed": int(differ.sum()),
            "pixels changed": int((delta > 0).sum()),
            "largest pixel change": int(delta.max()),
            "top-1 changed": int(flips),
            "corruptions with changes": sorted(
                {n.split("/")[0] for n, d in zip(run["names"], differ.tolist(), strict=True) if d}
            ),
        }
        print(json.dumps({"configuration": configuration, **summary}))


if __name__ == "__main__":
    main()
