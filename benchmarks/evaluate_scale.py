# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Memory, time and reads of the evaluation runner as the stream grows (issue 18, point 4).

A synthetic ImageNet-C-like source is written once into `--workdir`: local parquet files in the
Tsomaros/ImageNet-C schema (columns image = `datasets.Image`, label = ClassLabel of the 1000 wnids), written the
way the Hub's files are (`Dataset.from_dict(..., features=...).to_parquet(...)`: the features ride in the
schema metadata), in the folder
layout `<corruption>/<severity>/validation-0000K-of-0000N.parquet` that `ParquetSource` reads (one part per
file). 5 corruptions x 2 severities = 10 cells, `--rows-per-file` seeded random 32x32 JPEGs per file.

Each size is a folder of its own holding the first size / (10 x rows per file) files of every cell (hard links to
the same files), and each run reads its folder whole, without `--limit`: the stream grows, nothing else changes.
(A limit on ImageNet-C is per cell and stops a one-cell part after that many rows; it would measure the limit's
reading, not a longer stream.)

The model is a seeded, randomly initialised one-layer ViT (32x32, patch 8, width 16, 1000 labels) saved with
`save_pretrained`, so the forward pass is small and the runner's own work dominates. Every (processes, size) runs
the real runner (`hf_vitrobust.evaluate`, report off) in a fresh process (`--processes 2`: `accelerate launch
--multi_gpu` with ACCELERATE_USE_CPU=1, two CPU processes). Each process reports:

- wall: seconds of the `evaluate()` call (source checks, model loading, stream, merge, metrics, results.json);
- model: seconds inside `Classifier.forward` (wrapped in that process), and overhead = (wall - model) / the
  samples this process classified;
- peak RSS: `ru_maxrss` of the process, its RSS before `evaluate()`, and the largest RSS seen at a forward call
  (the streaming phase); with --num-workers also `RUSAGE_CHILDREN` (the largest child: a forked child's figure
  starts from the parent's RSS at the fork);
- reads: the data files opened (a `sys.addaudithook` "open" hook installed before anything is imported, counting
  paths under the data folder), their size, the bytes read through those Python file objects (how `datasets`
  streams local parquet), and `rchar` of /proc/self/io over the `evaluate()` call (every byte
  the process read, data files or not). With --num-workers the stream is read in the DataLoader workers, whose
  reads these counts of the main process do not include: measure reads with 0 workers (the default).

    OMP_NUM_THREADS=1 python benchmarks/evaluate_scale.py --workdir /tmp/scale --processes 1 2 --json scale.json

`--rank0-sizes` measures rank 0 after the stream instead (issue 36, point 4): the merge, metrics, intervals and
analysis of a generated ImageNet-C's predictions, on chunk files written directly (no model, no stream; see
`_rank0`), with `--compare` another checkout measured alike, in alternate runs:

    OMP_NUM_THREADS=1 python benchmarks/evaluate_scale.py --workdir /tmp/scale --rank0-sizes 10000 100000 1000000
"""

from __future__ import annotations

import argparse
import builtins
import itertools
import json
import os
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

CORRUPTIONS = ("gaussian_noise", "shot_noise", "motion_blur", "fog", "pixelate")
SEVERITIES = (3, 5)
IMAGE_SIZE = 32
#: Bump when the data or model written into the workdir changes: a cached copy of another version is rebuilt.
LAYOUT_VERSION = 1


# ---------------------------------------------------------------------------------------------------------------
# The measured process (one rank): installed before any other import, so every open of a data file is seen.


def _child(spec_path: str) -> None:
    spec = json.loads(Path(spec_path).read_text())
    root = os.path.join(os.path.abspath(spec["data"]), "")  # with a trailing separator: n5000/ is not n50000/
    opened: dict[str, int] = {}

    def audit(event: str, args: tuple) -> None:
        if event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
            path = os.fsdecode(args[0])
            if os.path.abspath(path).startswith(root):
                opened[path] = opened.get(path, 0) + 1

    sys.addaudithook(audit)
    # Bytes read from data files through Python file objects (how `datasets` streams local parquet: its `xopen`
    # calls the builtin open, and pyarrow reads that file object). pyarrow opening a path natively is not seen
    # here (nor by the audit hook); rchar below counts every read.
    read_bytes: dict[str, int] = {}
    builtin_open = builtins.open

    class Counted:
        def __init__(self, file: Any, path: str) -> None:
            self._file, self._path = file, path

        def read(self, *args: Any) -> bytes:
            data = self._file.read(*args)
            read_bytes[self._path] = read_bytes.get(self._path, 0) + len(data)
            return data

        def readinto(self, buffer: Any) -> int:
            count = self._file.readinto(buffer) or 0
            read_bytes[self._path] = read_bytes.get(self._path, 0) + count
            return count

        def __getattr__(self, name: str) -> Any:
            return getattr(self._file, name)

        def __iter__(self) -> Any:
            return iter(self._file)

        def __enter__(self) -> Counted:
            return self

        def __exit__(self, *exc: Any) -> Any:
            return self._file.__exit__(*exc)

    def counting_open(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        opened_file = builtin_open(file, mode, *args, **kwargs)
        if isinstance(file, (str, os.PathLike)) and "b" in mode and "r" in mode:
            path = os.path.abspath(os.fspath(file))
            if path.startswith(root):
                return Counted(opened_file, path)
        return opened_file

    builtins.open = counting_open
    import torch

    from hf_vitrobust.evaluation.config import EvaluationConfig
    from hf_vitrobust.evaluation.runner import evaluate
    from hf_vitrobust.models.classifier import Classifier

    torch.set_num_threads(spec["threads"])
    page = os.sysconf("SC_PAGE_SIZE")
    statm = os.open("/proc/self/statm", os.O_RDONLY)
    forward = {"seconds": 0.0, "calls": 0, "images": 0, "max_rss": 0}
    original = Classifier.forward

    def timed_forward(self: Any, pixels: torch.Tensor) -> torch.Tensor:
        rss = int(os.pread(statm, 64, 0).split()[1]) * page
        forward["max_rss"] = max(forward["max_rss"], rss)
        start = time.perf_counter()
        logits = original(self, pixels)
        forward["seconds"] += time.perf_counter() - start
        forward["calls"] += 1
        forward["images"] += int(pixels.shape[0])
        return logits

    Classifier.forward = timed_forward
    rss_before = int(os.pread(statm, 64, 0).split()[1]) * page
    maxrss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    rchar_before = _rchar()
    opened_before, read_before = dict(opened), dict(read_bytes)
    load_before = os.getloadavg()[0]
    start = time.perf_counter()
    results = evaluate(
        EvaluationConfig(
            models=[spec["model"]],
            suite=spec["suite"],
            output=spec["output"],
            batch_size=spec["batch_size"],
            num_workers=spec["num_workers"],
            report=False,
            progress=False,
        )
    )
    wall = time.perf_counter() - start
    rchar = _rchar() - rchar_before
    rank = int(os.environ.get("RANK", "0"))
    files = {p: n - opened_before.get(p, 0) for p, n in opened.items() if n > opened_before.get(p, 0)}
    benchmark = results.get("benchmarks", {}).get("imagenet-c", {})
    record = {
        "rank": rank,
        "world_size": int(os.environ.get("WORLD_SIZE", "1")),
        "hf_vitrobust": sys.modules["hf_vitrobust"].__file__,
        "wall_seconds": wall,
        "stream_seconds": next(iter(results.get("timing", {}).values()), {}).get("imagenet-c"),
        "num_samples": benchmark.get("num_samples"),
        "model_seconds": forward["seconds"],
        "forward_calls": forward["calls"],
        "images_forwarded": forward["images"],
        "rss_before_bytes": rss_before,
        "maxrss_before_bytes": maxrss_before,
        "max_rss_at_forward_bytes": forward["max_rss"],
        "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        "peak_rss_children_bytes": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024,
        "rchar_bytes": rchar,
        "data_files_opened": len(files),
        "data_file_opens": sum(files.values()),
        "data_file_bytes": sum(os.path.getsize(p) for p in files),
        "data_bytes_read": sum(read_bytes.values()) - sum(read_before.values()),
        "load_average_1min": [load_before, os.getloadavg()[0]],
        "data_files": sorted(os.path.relpath(p, root) for p in files),
    }
    Path(spec["records"], f"rank{rank}.json").write_text(json.dumps(record, indent=1))


def _rchar() -> int:
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise RuntimeError("/proc/self/io has no rchar line")


# ---------------------------------------------------------------------------------------------------------------
# The data and the model, built once into the workdir.


def _write_files(store: Path, files_per_cell: int, rows_per_file: int, seed: int) -> None:
    """Every cell's `files_per_cell` parquet files of `rows_per_file` unique seeded JPEGs and random labels."""
    import io

    import numpy as np
    from datasets import ClassLabel, Dataset, Features, Image, disable_progress_bars
    from PIL import Image as PILImage

    from hf_vitrobust.models.imagenet import IMAGENET_WNIDS

    disable_progress_bars()
    features = Features({"image": Image(), "label": ClassLabel(names=list(IMAGENET_WNIDS))})
    for c, corruption in enumerate(CORRUPTIONS):
        for s, severity in enumerate(SEVERITIES):
            for k in range(files_per_cell):
                rng = np.random.default_rng([seed, c, s, k])
                coarse = rng.integers(0, 256, size=(rows_per_file, 8, 8, 3), dtype=np.uint8)
                images = []
                for pixels in coarse:
                    buffer = io.BytesIO()
                    small = PILImage.fromarray(pixels).resize((IMAGE_SIZE, IMAGE_SIZE), PILImage.BILINEAR)
                    small.save(buffer, format="JPEG", quality=85)
                    images.append({"bytes": buffer.getvalue(), "path": None})
                labels = rng.integers(0, 1000, size=rows_per_file).tolist()
                path = (
                    store / corruption / str(severity) / f"validation-{k:05d}-of-{files_per_cell:05d}.parquet"
                )
                path.parent.mkdir(parents=True, exist_ok=True)
                Dataset.from_dict({"image": images, "label": labels}, features=features).to_parquet(str(path))


def _save_model(folder: Path, seed: int) -> None:
    """A seeded one-layer 32x32 ViT with 1000 labels and its image processor, saved with save_pretrained."""
    import torch
    from transformers import ViTConfig, ViTForImageClassification, ViTImageProcessor

    torch.manual_seed(seed)
    config = ViTConfig(
        image_size=IMAGE_SIZE,
        patch_size=8,
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        num_labels=1000,
    )
    ViTForImageClassification(config).save_pretrained(folder)
    ViTImageProcessor(size={"height": IMAGE_SIZE, "width": IMAGE_SIZE}).save_pretrained(folder)


def prepare(workdir: Path, sizes: list[int], rows_per_file: int, seed: int) -> tuple[dict[int, Path], Path]:
    """The data folder of each size and the model folder, written once (cached by their parameters)."""
    cells = len(CORRUPTIONS) * len(SEVERITIES)
    per_file = cells * rows_per_file
    bad = [n for n in sizes if n % per_file]
    if bad:
        raise SystemExit(f"sizes must be multiples of {cells} cells x {rows_per_file} rows per file: {bad}")
    files_per_cell = max(sizes) // per_file
    wanted = {
        "version": LAYOUT_VERSION,
        "rows_per_file": rows_per_file,
        "files_per_cell": files_per_cell,
        "seed": seed,
        "corruptions": list(CORRUPTIONS),
        "severities": list(SEVERITIES),
        "image_size": IMAGE_SIZE,
    }
    marker = workdir / "built.json"
    store, model = workdir / "files", workdir / "model"
    if not marker.is_file() or json.loads(marker.read_text()) != wanted:
        shutil.rmtree(workdir / "data", ignore_errors=True)
        shutil.rmtree(store, ignore_errors=True)
        shutil.rmtree(model, ignore_errors=True)
        start = time.perf_counter()
        _write_files(store, files_per_cell, rows_per_file, seed)
        _save_model(model, seed)
        marker.write_text(json.dumps(wanted))
        print(
            f"built {max(sizes)} images in {files_per_cell * cells} files in {time.perf_counter() - start:.1f} s"
        )
    folders = {}
    for size in sizes:
        folder = workdir / "data" / f"n{size}"
        if not folder.is_dir():
            for corruption in CORRUPTIONS:
                for severity in SEVERITIES:
                    cell = store / corruption / str(severity)
                    target = folder / corruption / str(severity)
                    target.mkdir(parents=True)
                    for file in sorted(cell.glob("*.parquet"))[: size // per_file]:
                        os.link(file, target / file.name)
        folders[size] = folder
    return folders, model


# ---------------------------------------------------------------------------------------------------------------
# The driver: one fresh process (or process group) per size.


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def run_one(workdir: Path, data: Path, model: Path, processes: int, args: argparse.Namespace) -> dict:
    """One run of the runner over `data` on `processes` processes: each rank's record, and the launch's wall."""
    name = f"p{processes}-{data.name}"
    run = workdir / "runs" / name
    shutil.rmtree(run, ignore_errors=True)
    (run / "records").mkdir(parents=True)
    suite = {
        "name": "scale",
        "description": "evaluate_scale benchmark",
        "batch_size": args.batch_size,
        "chunk_size": args.chunk_size,
        "benchmarks": {"imagenet-c": {"source": str(data)}},
    }
    (run / "suite.json").write_text(json.dumps(suite))
    spec = {
        "data": str(data),
        "model": str(model),
        "suite": str(run / "suite.json"),
        "output": str(run / "output"),
        "records": str(run / "records"),
        "batch_size": args.batch_size,
        "num_workers": args.num_workers,
        "threads": args.threads,
    }
    (run / "spec.json").write_text(json.dumps(spec))
    script = [str(Path(__file__).resolve()), "--child", str(run / "spec.json")]
    env = {
        **os.environ,
        "OMP_NUM_THREADS": str(args.threads),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
    }
    if processes == 1:
        command = [sys.executable, *script]
    else:
        env["ACCELERATE_USE_CPU"] = "1"
        command = [
            str(Path(sys.executable).parent / "accelerate"),
            "launch",
            "--multi_gpu",
            "--num_processes",
            str(processes),
            "--num_machines",
            "1",
            "--mixed_precision",
            "no",
            "--dynamo_backend",
            "no",
            "--main_process_port",
            str(_free_port()),
            *script,
        ]
    start = time.perf_counter()
    subprocess.run(command, env=env, check=True)
    launch = time.perf_counter() - start
    records = [json.loads((run / "records" / f"rank{r}.json").read_text()) for r in range(processes)]
    total = records[0]["num_samples"]
    return {"processes": processes, "size": total, "launch_seconds": launch, "ranks": records}


def table(runs: list[dict], workers: bool = False) -> str:
    """Every run's figures, one row per rank, as a markdown table; then the overhead per added sample between
    consecutive sizes (which leaves out the fixed costs: source checks, model loading, process start). Overhead is
    per sample that rank classified. `workers`: add the largest DataLoader worker's peak RSS."""
    header = [
        "procs", "samples", "rank", "wall s", "samples/s", "model s", "overhead ms/sample", "RSS before MiB",
        "RSS streaming MiB", "peak RSS MiB", "peak - before MiB", "data files opened (opens)", "data MiB read",
        "rchar MiB", "load avg",
    ] + (["worker peak RSS MiB"] if workers else [])  # fmt: skip
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for run in runs:
        for rank in run["ranks"]:
            mine = rank["images_forwarded"]
            overhead = (rank["wall_seconds"] - rank["model_seconds"]) / mine * 1000
            peak = rank["peak_rss_bytes"]
            cells = [
                run["processes"], run["size"], rank["rank"], f"{rank['wall_seconds']:.1f}",
                f"{run['size'] / rank['wall_seconds']:.0f}", f"{rank['model_seconds']:.1f}", f"{overhead:.3f}",
                _mib(rank["rss_before_bytes"]), _mib(rank["max_rss_at_forward_bytes"]), _mib(peak),
                _mib(peak - rank["rss_before_bytes"]), f"{rank['data_files_opened']} ({rank['data_file_opens']})",
                f"{rank['data_bytes_read'] / 2**20:.1f}", _mib(rank["rchar_bytes"]),
                "-".join(f"{x:.1f}" for x in rank["load_average_1min"]),
            ] + ([_mib(rank["peak_rss_children_bytes"])] if workers else [])  # fmt: skip
            lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    notes = []
    for processes in sorted({run["processes"] for run in runs}):
        mine = sorted((r for r in runs if r["processes"] == processes), key=lambda r: r["size"])
        for small, large in itertools.pairwise(mine):
            for a, b in zip(small["ranks"], large["ranks"], strict=True):
                extra = b["images_forwarded"] - a["images_forwarded"]
                outside = (b["wall_seconds"] - b["model_seconds"]) - (a["wall_seconds"] - a["model_seconds"])
                notes.append(
                    f"{processes} process(es), rank {a['rank']}, {small['size']} -> {large['size']} samples: "
                    f"{outside / extra * 1000:.3f} ms outside the model per added sample of this rank"
                )
    return "\n".join([*lines, "", *notes])


# ---------------------------------------------------------------------------------------------------------------
# Rank 0 after the stream (issue 36, point 4): the merge, the metrics, the intervals, the analysis.
#
# The chunk files are written directly (`_write_chunks`, a process of its own: its memory is not measured), as the
# stream's processes leave them: a generated ImageNet-C, 15 standard corruptions x 5 severities of `size // 75`
# clean images, each row made by `prediction_rows` from seeded random logits (1000 classes, the label's logit raised
# for 60 % of the clean images), with its sample, clean image and metadata JSON. The measured process (`_rank0`)
# then does what the runner's rank 0 does after the stream, with the package's own functions: the merge
# (`merge_stream_chunks`), the check and read-back, the metrics and headlines, and `analyze` (intervals at 1000
# resamples, comparisons, published numbers, findings). The model and the stream are not run.


def _write_chunks(spec_path: str) -> None:
    """The chunk files of one generated ImageNet-C stream (one shard) and its end marker."""
    import numpy as np
    import torch

    from hf_vitrobust.analysis.predictions import prediction_rows, to_table
    from hf_vitrobust.constants import SEVERITIES, STANDARD_CORRUPTIONS
    from hf_vitrobust.data import get_benchmark
    from hf_vitrobust.data.samples import Sample
    from hf_vitrobust.evaluation.store import ChunkStore, write_parquet_atomic

    spec = json.loads(Path(spec_path).read_text())
    benchmark, store = get_benchmark("imagenet-c"), ChunkStore(Path(spec["store"]), "parquet")
    cells = [(c, s) for c in STANDARD_CORRUPTIONS for s in SEVERITIES]
    num_clean, per_chunk, empty = spec["num_clean"], spec["clean_per_chunk"], torch.empty(0)
    position, num_chunks = 0, 0
    for first in range(0, num_clean, per_chunk):
        rng = np.random.default_rng([spec["seed"], first])
        images = range(first, min(first + per_chunk, num_clean))
        labels = rng.integers(0, 1000, size=len(images))
        right = rng.random(len(images)) < 0.6
        samples = []
        for image, label in zip(images, labels, strict=True):
            clean = f"val/ILSVRC2012_val_{image + 1:08d}.JPEG"
            for corruption, severity in cells:
                metadata = {"corruption": corruption, "severity": severity, "clean_sample_id": clean}
                metadata.update({"generated": True, "source": "generated:synthetic"})
                samples.append(Sample(empty, int(label), f"{corruption}/{severity}/{clean}", metadata))
        logits = torch.from_numpy(rng.standard_normal((len(samples), 1000), dtype=np.float32))
        rows = torch.arange(len(samples))
        boost = torch.from_numpy(np.repeat(np.where(right, 4.0, 0.0), len(cells)).astype(np.float32))
        logits[rows, torch.from_numpy(np.repeat(labels, len(cells)))] += boost
        positions = list(range(position, position + len(samples)))
        columns = prediction_rows(benchmark, positions, samples, logits, False, 0)
        skipped = {"skipped": {}, "examples": [], "converted_to_rgb": {}}
        write_parquet_atomic(store.path((0, num_chunks)), to_table(columns, skipped, len(samples)))
        position += len(samples)
        num_chunks += 1
    store.mark_shard(0, num_chunks, position)


def _rank0(spec_path: str) -> None:
    """Rank 0's work after the stream, on the chunk files of `spec["store"]`, measured (see the section above).
    Versions before the batched read (`merged_predictions` absent) read the merged file back into one frame."""
    spec = json.loads(Path(spec_path).read_text())
    page = os.sysconf("SC_PAGE_SIZE")

    def rss() -> int:
        return int(Path("/proc/self/statm").read_text().split()[1]) * page

    from hf_vitrobust.analysis.analyze import analyze
    from hf_vitrobust.analysis.kinds import benchmark_metrics, summary_headlines
    from hf_vitrobust.analysis.predictions import PREDICTION_SCHEMA
    from hf_vitrobust.analysis.results import json_safe
    from hf_vitrobust.data import get_benchmark
    from hf_vitrobust.evaluation import stream_merge
    from hf_vitrobust.evaluation.store import ChunkStore

    benchmark, key = get_benchmark("imagenet-c"), "synthetic"
    output = Path(spec["output"])
    path = output / "predictions" / key / "imagenet-c.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    before, phases, marks = rss(), {}, {}
    start = time.perf_counter()
    _report, num_items = stream_merge.merge_stream_chunks(
        "imagenet-c", ChunkStore(Path(spec["store"]), "parquet"), 1, path
    )
    phases["merge_s"], marks["after_merge"] = time.perf_counter() - start, rss()
    if hasattr(stream_merge, "merged_predictions"):
        predictions = stream_merge.merged_predictions("imagenet-c", path)
        num_samples = predictions.num_rows
    else:
        columns = [column for column in PREDICTION_SCHEMA.names if column != "metadata"]
        predictions = stream_merge.read_merged("imagenet-c", path, columns).to_pandas()
        num_samples = len(predictions)
    phases["read_s"], marks["after_read"] = time.perf_counter() - start - phases["merge_s"], rss()
    metrics = json_safe(benchmark_metrics(benchmark, predictions, None, None))
    protocol = {"mce": "alexnet-15", "preprocessing": "none", "release_encoding": "none"}
    results = {
        "schema_version": 1,
        "seed": 0,
        "suite": {"name": "scale", "model_pairs": []},
        "models": [{"key": key, "spec": key}],
        "benchmarks": {
            "imagenet-c": {
                "kind": benchmark.kind,
                "generated": True,
                "num_samples": num_samples,
                "num_source_items": num_items,
                "subset": {"kind": "all", "limit": None},
                "protocol": protocol,
            }
        },
        "metrics": {key: {"imagenet-c": metrics}},
        "summary": {key: summary_headlines(benchmark, metrics)},
        "predictions": {key: {"imagenet-c": str(path.relative_to(output))}},
        "uncertainty": {"confidence_level": 0.95, "num_resamples": 1000, "proportion_method": "wilson"},
    }
    phases["metrics_s"], marks["after_metrics"] = time.perf_counter() - start - sum(phases.values()), rss()
    analyze([results], frames={key: {"imagenet-c": predictions}}).store([results])
    phases["analysis_s"] = time.perf_counter() - start - sum(phases.values())
    record = {
        "hf_vitrobust": sys.modules["hf_vitrobust"].__file__,
        "num_samples": num_samples,
        "wall_seconds": time.perf_counter() - start,
        **phases,
        "rss_before_bytes": before,
        **{f"rss_{name}_bytes": value for name, value in marks.items()},
        "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        "load_average_1min": os.getloadavg()[0],
        "summary": results["summary"][key],
        "intervals": results["intervals"][key],
        "metrics": metrics,
    }
    Path(spec["record"]).write_text(json.dumps(json_safe(record), indent=1))


def run_rank0(workdir: Path, size: int, args: argparse.Namespace, package: Path | None) -> dict:
    """The chunk files of `size` samples (written once, cached), then rank 0's work on them in a fresh process,
    with the package of this checkout or of `package` (another checkout, to compare)."""
    num_clean = size // 75
    store = workdir / "rank0" / f"n{num_clean * 75}" / "chunks"
    if not (store / "done").is_file():
        shutil.rmtree(store, ignore_errors=True)
        store.mkdir(parents=True)
        spec = {
            "store": str(store),
            "num_clean": num_clean,
            "clean_per_chunk": args.clean_per_chunk,
            "seed": 0,
        }
        (store.parent / "write.json").write_text(json.dumps(spec))
        subprocess.run(
            [sys.executable, __file__, "--write-chunks", str(store.parent / "write.json")], check=True
        )
        (store / "done").write_text("")
    name = "this" if package is None else package.name
    run = store.parent / f"run-{name}"
    shutil.rmtree(run, ignore_errors=True)
    run.mkdir()
    spec = {"store": str(store), "output": str(run / "output"), "record": str(run / "record.json")}
    (run / "spec.json").write_text(json.dumps(spec))
    env = {**os.environ, "OMP_NUM_THREADS": str(args.threads), "HF_HUB_OFFLINE": "1"}
    if package is not None:
        env["PYTHONPATH"] = str(package)
    subprocess.run([sys.executable, __file__, "--rank0", str(run / "spec.json")], env=env, check=True)
    return {"package": name, **json.loads((run / "record.json").read_text())}


def rank0_table(records: list[dict]) -> str:
    """Rank 0's figures per (package, size) as a markdown table, and whether the results equal across packages."""
    header = [
        "package", "samples", "wall s", "merge s", "read s", "metrics s", "analysis s", "RSS before MiB",
        "RSS after read MiB", "peak RSS MiB", "peak - before MiB", "load avg",
    ]  # fmt: skip
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in records:
        cells = [
            r["package"], r["num_samples"], f"{r['wall_seconds']:.1f}", f"{r['merge_s']:.1f}", f"{r['read_s']:.1f}",
            f"{r['metrics_s']:.1f}", f"{r['analysis_s']:.1f}", _mib(r["rss_before_bytes"]),
            _mib(r["rss_after_read_bytes"]), _mib(r["peak_rss_bytes"]), _mib(r["peak_rss_bytes"] - r["rss_before_bytes"]),
            f"{r['load_average_1min']:.1f}",
        ]  # fmt: skip
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    notes = []
    for size in sorted({r["num_samples"] for r in records}):
        same = [r for r in records if r["num_samples"] == size]
        if len(same) > 1:
            keys = ("summary", "intervals", "metrics")
            equal = all(
                json.dumps([s[k] for k in keys]) == json.dumps([same[0][k] for k in keys]) for s in same
            )
            notes.append(
                f"{size} samples: summary, metrics and intervals {'equal' if equal else 'DIFFER'} across packages"
            )
    return "\n".join([*lines, "", *notes])


def _mib(value: float) -> str:
    return f"{value / 2**20:.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--workdir", type=Path, default=None, help="where the data and model are cached")
    parser.add_argument("--sizes", type=int, nargs="+", default=[5000, 20000, 50000])
    parser.add_argument("--processes", type=int, nargs="+", default=[1], help="e.g. 1 2: each size in each")
    parser.add_argument("--rows-per-file", type=int, default=500)
    parser.add_argument("--chunk-size", type=int, default=256)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--num-workers", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1, help="torch / OpenMP threads per process")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, default=None, help="write every rank's record here")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument(
        "--rank0-sizes", type=int, nargs="+", default=None,
        help="measure rank 0 after the stream instead (issue 36): e.g. 10000 100000 1000000 samples",
    )  # fmt: skip
    parser.add_argument(
        "--clean-per-chunk", type=int, default=64, help="clean images per chunk file (x 75 rows)"
    )
    parser.add_argument("--compare", type=Path, default=None, help="another checkout's root, measured alike")
    parser.add_argument("--write-chunks", help=argparse.SUPPRESS)
    parser.add_argument("--rank0", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child)
        return
    if args.write_chunks:
        _write_chunks(args.write_chunks)
        return
    if args.rank0:
        _rank0(args.rank0)
        return
    if args.rank0_sizes:
        workdir = (args.workdir or Path(tempfile.mkdtemp())).resolve()
        records = []
        for size in sorted(set(args.rank0_sizes)):
            for package in (None, args.compare) if args.compare else (None,):
                records.append(run_rank0(workdir, size, args, package))
                print(f"done: {records[-1]['package']}, {records[-1]['num_samples']} samples", flush=True)
        print(rank0_table(records))
        if args.json is not None:
            args.json.write_text(json.dumps(records, indent=1))
        return
    temporary = None
    if args.workdir is None:
        temporary = tempfile.TemporaryDirectory()
        args.workdir = Path(temporary.name)
    workdir = args.workdir.resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    folders, model = prepare(workdir, sorted(set(args.sizes)), args.rows_per_file, args.seed)
    runs = []
    for processes in args.processes:
        for size in sorted(set(args.sizes)):
            runs.append(run_one(workdir, folders[size], model, processes, args))
            print(
                f"done: {processes} process(es), {size} samples, {runs[-1]['launch_seconds']:.1f} s",
                flush=True,
            )
    where = runs[0]["ranks"][0]["hf_vitrobust"]
    print(
        f"\nhf_vitrobust from {where}; {args.threads} thread(s) per process; chunk {args.chunk_size}, batch "
        f"{args.batch_size}, {args.num_workers} DataLoader workers; total {time.perf_counter() - started:.0f} s\n"
    )
    print(table(runs, workers=args.num_workers > 0))
    if args.json is not None:
        settings = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items() if k != "child"}
        args.json.write_text(
            json.dumps({"settings": settings, "hf_vitrobust": where, "runs": runs}, indent=1)
        )
    if temporary is not None:
        temporary.cleanup()


if __name__ == "__main__":
    main()
