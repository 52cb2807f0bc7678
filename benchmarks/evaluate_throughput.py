"""Throughput of the evaluation runner.

1. Clean accuracy: `vitrobust evaluate` (the runner: chunked stream, per-sample predictions, atomic chunk files,
   merge and metrics) against a plain torch loop (a Dataset of the files, a DataLoader and the model, with the same
   preprocessing) on the same model and the same local ImageNet-layout folder. The goal is a ratio >= 0.9.
2. ImageNet-C generated on the fly ("generated:<folder>") against reading the same corruptions stored as JPEG
   files in the released layout (written first with `vitrobust corrupt`), same model, same images. After a warm-up
   run, `--rounds` rounds alternate generated, stored, generated, stored, ... (on a shared machine, the two sides of
   a round see the same load); each round gives ratio = generated images/s / stored images/s, and the script
   prints every round, the median and the spread. Per side it also prints where the time goes: the share of the
   stream time the main process spends in the model (`Runner._classify`, wrapped here; the rest is waiting for
   the DataLoader workers and writing chunks), and CPU milliseconds per image of the main process and of the
   workers (getrusage of this process and of its reaped children).

The folder holds the bundled photos (copied `--copies` times under new names). Every run is in this process, on
the same threads; the runner's time is the benchmark's stream time in results.json (model loading excluded, as for
the loop). `--model` takes any model spec: `timm/random-init:vit_base_patch16_224` is a ViT-B/16 with random weights
(nothing downloaded); `--skip-clean` leaves out part 1.

    python benchmarks/evaluate_throughput.py --copies 8 --batch-size 32 --num-workers 1
    python benchmarks/evaluate_throughput.py --skip-clean --model timm/random-init:vit_base_patch16_224 --copies 1
"""

import argparse
import json
import resource
import statistics
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
from hf_vitrobust.evaluation.runner import Runner, evaluate
from hf_vitrobust.models import load_classifier

MODEL = "builtin:efficientnet_lite0"
#: Seconds the main process spent in the model during the current run (`Runner._classify`, wrapped in `main`).
MODEL_SECONDS = [0.0]


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


def plain_loop(root: Path, batch_size: int, num_workers: int, model: str = MODEL) -> tuple[float, int]:
    classifier = load_classifier(model).to(memory_format=torch.channels_last)  # as the runner does
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


def runner(
    suite: dict, output: Path, batch_size: int, num_workers: int, name: str, model: str = MODEL
) -> tuple[float, int]:
    path = output.with_suffix(".json")
    path.write_text(json.dumps(suite))
    results = evaluate(
        EvaluationConfig(
            models=[model],
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


def profiled_runner(suite: dict, output: Path, args: argparse.Namespace) -> dict[str, float]:
    """One run of the runner on ImageNet-C: its stream seconds and images, the seconds in the model, and the CPU
    seconds of this process and of the DataLoader workers (children reaped during the run)."""
    MODEL_SECONDS[0] = 0.0
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    seconds, images = runner(suite, output, args.batch_size, args.num_workers, "imagenet-c", args.model)
    own_after, children_after = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return {
        "seconds": seconds,
        "images": images,
        "model": MODEL_SECONDS[0],
        "main_cpu": own_after.ru_utime + own_after.ru_stime - own.ru_utime - own.ru_stime,
        "worker_cpu": children_after.ru_utime
        + children_after.ru_stime
        - children.ru_utime
        - children.ru_stime,
    }


def time_the_model() -> None:
    """Wrap `Runner._classify` so that `MODEL_SECONDS` adds up the seconds the main process spends in the model."""
    classify = Runner._classify

    def timed(self: Runner, model: torch.nn.Module, pixels: torch.Tensor) -> torch.Tensor:
        start = time.perf_counter()
        try:
            return classify(self, model, pixels)
        finally:
            MODEL_SECONDS[0] += time.perf_counter() - start

    Runner._classify = timed  # type: ignore[method-assign]


def suite(benchmarks: dict, chunk_size: int) -> dict:
    return {
        "name": "throughput",
        "description": "benchmark",
        "chunk_size": chunk_size,
        "benchmarks": benchmarks,
    }


def clean_accuracy(folder: Path, count: int, tmp: Path, args: argparse.Namespace) -> None:
    """Part 1: the runner against a plain torch loop on the clean folder."""
    plain_loop(
        folder, args.batch_size, args.num_workers, args.model
    )  # warm-up: weights, allocator, page cache
    loop = min(
        plain_loop(folder, args.batch_size, args.num_workers, args.model)[0] for _ in range(args.repeats)
    )
    clean_suite = suite({"imagenet-val": {"source": str(folder)}}, args.chunk_size)
    timed = [
        runner(clean_suite, tmp / f"clean{i}", args.batch_size, args.num_workers, "imagenet-val", args.model)
        for i in range(args.repeats)
    ]
    ours = min(t for t, _ in timed)
    assert all(n == count for _, n in timed), timed
    print("\n| clean accuracy, local folder | images | seconds | images/s |")
    print("|---|---|---|---|")
    print(f"| plain torch loop (DataLoader + model) | {count} | {loop:.2f} | {count / loop:.1f} |")
    print(f"| `vitrobust evaluate` runner | {count} | {ours:.2f} | {count / ours:.1f} |")
    print(f"\nratio runner / plain loop: {loop / ours:.3f}")


def generated_against_stored(folder: Path, tmp: Path, args: argparse.Namespace) -> None:
    """Part 2: generated ImageNet-C against the same corruptions stored as JPEG files, in alternating rounds."""
    stored = tmp / "imagenet-c"
    command = [sys.executable, "-m", "hf_vitrobust", "corrupt", str(folder), str(stored), "--quiet"]
    for name in args.corruptions:
        command += ["--corruption", name]
    subprocess.run([*command, "--severity", str(args.severity)], check=True)
    options = {"corruptions": args.corruptions, "severities": [args.severity]}
    sides = {
        "generated": suite({"imagenet-c": {"source": f"generated:{folder}", **options}}, args.chunk_size),
        "stored": suite({"imagenet-c": {"source": str(stored), **options}}, args.chunk_size),
    }
    time_the_model()
    profiled_runner(sides["stored"], tmp / "warm-up", args)  # weights, allocator, page cache
    print(
        f"\nImageNet-C ({', '.join(args.corruptions)}, severity {args.severity}), {args.model}, "
        f"batch {args.batch_size}, chunk {args.chunk_size}, {args.num_workers} DataLoader workers, "
        f"{torch.get_num_threads()} threads"
    )
    print(
        "| round | side | images | seconds | images/s | in the model | main CPU ms/img | workers CPU ms/img |"
    )
    print("|---|---|---|---|---|---|---|---|")
    ratios = []
    for round_ in range(args.rounds):
        rates = {}
        for side, side_suite in sides.items():
            run = profiled_runner(side_suite, tmp / f"{side}{round_}", args)
            rates[side] = run["images"] / run["seconds"]
            print(
                f"| {round_ + 1} | {side} | {run['images']} | {run['seconds']:.2f} | {rates[side]:.2f} | "
                f"{run['model'] / run['seconds']:.0%} | {1000 * run['main_cpu'] / run['images']:.1f} | "
                f"{1000 * run['worker_cpu'] / run['images']:.1f} |",
                flush=True,
            )
        ratios.append(rates["generated"] / rates["stored"])
    print(f"\nratio generated / stored per round: {', '.join(f'{r:.3f}' for r in ratios)}")
    print(f"median {statistics.median(ratios):.3f}, min {min(ratios):.3f}, max {max(ratios):.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--copies", type=int, default=8, help="copies of the 29 bundled photos (default 8: 232)"
    )
    parser.add_argument("--model", default=MODEL, help=f"a model spec (default {MODEL})")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--num-workers", type=int, default=1)
    parser.add_argument("--chunk-size", type=int, default=256)
    parser.add_argument("--corruptions", nargs="+", default=["gaussian_noise", "contrast"])
    parser.add_argument("--severity", type=int, default=3)
    parser.add_argument(
        "--repeats", type=int, default=2, help="part 1: timed repeats of each side (best is kept)"
    )
    parser.add_argument("--rounds", type=int, default=3, help="part 2: alternating generated/stored rounds")
    parser.add_argument("--skip-clean", action="store_true", help="run part 2 only")
    args = parser.parse_args()
    for name in ("copies", "batch_size", "chunk_size", "repeats", "rounds"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.num_workers < 0:
        parser.error("--num-workers must be at least 0")
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        folder, count = make_folder(tmp / "val", args.copies)
        if not args.skip_clean:
            clean_accuracy(folder, count, tmp, args)
        generated_against_stored(folder, tmp, args)


if __name__ == "__main__":
    main()
