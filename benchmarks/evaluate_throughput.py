"""Throughput of the evaluation runner.

1. Clean accuracy: `vitrobust evaluate` (the runner: chunked stream, per-sample predictions, atomic chunk files,
   merge and metrics) against a plain torch loop (a Dataset of the files, a DataLoader and the model, with the same
   preprocessing) on the same model and the same local ImageNet-layout folder. The goal is a ratio >= 0.9.
2. ImageNet-C generated on the fly ("generated:<folder>") against reading the same corruptions stored as JPEG
   files in the released layout (written first with `vitrobust corrupt`).

The folder holds the bundled photos (copied `--copies` times under new names). Both sides run in this process, on
the same threads, after a warm-up pass; the runner's time is the benchmark's stream time in results.json (model
loading excluded, as for the loop).

    python benchmarks/evaluate_throughput.py --copies 8 --batch-size 32 --num-workers 1
"""

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch
from PIL import Image
from torch.utils.data import DataLoader, Dataset

from hf_vitrobust.data.builtin import builtin_photos_dir, read_manifest
from hf_vitrobust.evaluation.config import EvaluationConfig
from hf_vitrobust.evaluation.runner import evaluate
from hf_vitrobust.models import load_classifier

MODEL = "builtin:efficientnet_lite0"


def make_folder(root: Path, copies: int) -> tuple[Path, int]:
    """An ImageNet validation folder <wnid>/<file> of the bundled photos, each copied `copies` times."""
    rows = read_manifest(builtin_photos_dir())
    for copy in range(copies):
        for row in rows:
            target = root / row["wnid"]
            target.mkdir(parents=True, exist_ok=True)
            (target / f"{copy:02d}_{row['file']}").write_bytes(
                (builtin_photos_dir() / row["file"]).read_bytes()
            )
    return root, copies * len(rows)


class FolderDataset(Dataset):
    def __init__(self, root: Path, preprocessing) -> None:
        self.files = sorted(root.glob("*/*.jpg"))
        self.preprocessing = preprocessing

    def __len__(self) -> int:
        return len(self.files)

    def __getitem__(self, index: int) -> torch.Tensor:
        with Image.open(self.files[index]) as image:
            return self.preprocessing.image_to_tensor(image.convert("RGB"))


def plain_loop(root: Path, batch_size: int, num_workers: int) -> tuple[float, int]:
    classifier = load_classifier(MODEL).to(memory_format=torch.channels_last)  # as the runner does
    loader = DataLoader(
        FolderDataset(root, classifier.preprocessing), batch_size=batch_size, num_workers=num_workers
    )
    count = 0
    start = time.perf_counter()
    with torch.inference_mode():
        for pixels in loader:
            classifier(pixels.contiguous(memory_format=torch.channels_last)).argmax(dim=-1)
            count += pixels.shape[0]
    return time.perf_counter() - start, count


def runner(suite: dict, output: Path, batch_size: int, num_workers: int, name: str) -> tuple[float, int]:
    path = output.with_suffix(".json")
    path.write_text(json.dumps(suite))
    results = evaluate(
        EvaluationConfig(
            models=[MODEL],
            suite=str(path),
            output=output,
            batch_size=batch_size,
            num_workers=num_workers,
            report=False,
            progress=False,
        )
    )
    key = results["models"][0]["key"]
    return results["timing"][key][name], results["benchmarks"][name]["num_samples"]


def suite(benchmarks: dict, chunk_size: int) -> dict:
    return {
        "name": "throughput",
        "description": "benchmark",
        "chunk_size": chunk_size,
        "benchmarks": benchmarks,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--copies", type=int, default=8, help="copies of the 29 bundled photos (default 8: 232)"
    )
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--num-workers", type=int, default=1)
    parser.add_argument("--chunk-size", type=int, default=256)
    parser.add_argument("--corruptions", nargs="+", default=["gaussian_noise", "contrast"])
    parser.add_argument("--severity", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=2, help="timed repeats of each side (best is kept)")
    args = parser.parse_args()
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        folder, count = make_folder(tmp / "val", args.copies)
        plain_loop(folder, args.batch_size, args.num_workers)  # warm-up: weights cache, allocator, page cache
        loop = min(plain_loop(folder, args.batch_size, args.num_workers)[0] for _ in range(args.repeats))
        clean_suite = suite({"imagenet-val": {"source": str(folder)}}, args.chunk_size)
        timed = [
            runner(clean_suite, tmp / f"clean{i}", args.batch_size, args.num_workers, "imagenet-val")
            for i in range(args.repeats)
        ]
        ours = min(t for t, _ in timed)
        assert all(n == count for _, n in timed), timed
        print("\n| clean accuracy, local folder | images | seconds | images/s |")
        print("|---|---|---|---|")
        print(f"| plain torch loop (DataLoader + model) | {count} | {loop:.2f} | {count / loop:.1f} |")
        print(f"| `vitrobust evaluate` runner | {count} | {ours:.2f} | {count / ours:.1f} |")
        print(f"\nratio runner / plain loop: {loop / ours:.3f}")

        stored = tmp / "imagenet-c"
        command = [sys.executable, "-m", "hf_vitrobust", "corrupt", str(folder), str(stored), "--quiet"]
        for name in args.corruptions:
            command += ["--corruption", name]
        subprocess.run([*command, "--severity", str(args.severity)], check=True)
        options = {"corruptions": args.corruptions, "severities": [args.severity]}
        generated = runner(
            suite({"imagenet-c": {"source": f"generated:{folder}", **options}}, args.chunk_size),
            tmp / "generated",
            args.batch_size,
            args.num_workers,
            "imagenet-c",
        )
        read = runner(
            suite({"imagenet-c": {"source": str(stored), **options}}, args.chunk_size),
            tmp / "stored",
            args.batch_size,
            args.num_workers,
            "imagenet-c",
        )
        print(
            f"\n| ImageNet-C ({', '.join(args.corruptions)}, severity {args.severity}) | images | seconds | images/s |"
        )
        print("|---|---|---|---|")
        for label, (seconds, images) in (("generated on the fly", generated), ("stored JPEG files", read)):
            print(f"| {label} | {images} | {seconds:.2f} | {images / seconds:.1f} |")


if __name__ == "__main__":
    main()
