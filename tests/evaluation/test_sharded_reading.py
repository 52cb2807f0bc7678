"""Each process of a distributed run reads only its own files (issue: evaluation at ImageNet scale).

Two `accelerate launch` CPU processes, each counting the files it opens with an audit hook (`read_counting`):
- a 6-file parquet copy of ImageNet validation and a Hub-layout ImageNet-C cell of 6 parquet files (one cell split
  within itself): each process opens its 3 files (plus the first, which `datasets` reads for the schema), together
  every file, and the predictions equal a 1-process run's;
- a folder of images and a released-layout ImageNet-C folder: each image file is opened by exactly one process;
- a source of one file (fewer shards than processes): the run warns what interleaving costs, and its predictions
  are still a 1-process run's.
The chunk layout itself (`ReadAssignment`, per-shard chunks) is checked without processes at the end.
"""

from __future__ import annotations

import collections
import itertools
import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
import yaml
from data_fixtures import hub_imagenet_names, image_bytes, write_parquet
from launch import accelerate_launch, cpu_environment
from probe_models import save_tiny_vit
from read_counting import counting_environment, opened_by_rank

from hf_vitrobust.data import get_benchmark, load_benchmark
from hf_vitrobust.evaluation.config import EvaluationConfig
from hf_vitrobust.evaluation.runner import evaluate
from hf_vitrobust.evaluation.streams import ReadAssignment, chunked, plan_stream
from hf_vitrobust.models.imagenet import IMAGENET_WNIDS

REPO_ROOT = Path(__file__).resolve().parents[2]
COLUMNS = ["shard", "position", "sample_id", "label", "prediction", "top5"]
ROWS_PER_FILE = 3


def _image_rows(start: int, count: int) -> dict[str, list]:
    return {
        "image": [{"bytes": image_bytes(start + i, size=12), "path": None} for i in range(count)],
        "label": [(start + i) * 37 % 1000 for i in range(count)],
    }


def _features(names: list[str] | None = None):
    """ILSVRC/imagenet-1k's features (ClassLabel of the class names), or, with `names`, another ClassLabel."""
    from datasets import ClassLabel, Features, Image

    return Features({"image": Image(), "label": ClassLabel(names=names or hub_imagenet_names())})


def _parquet_copies(root: Path) -> tuple[Path, Path]:
    """A local 6-file parquet copy of ImageNet validation, and a Tsomaros-layout ImageNet-C cell of 6 files."""
    val = root / "my-val"
    cell = root / "Tsomaros" / "ImageNet-C-snow-severity_2"
    for k in range(6):
        write_parquet(
            val / f"validation-{k:05d}-of-00006.parquet", _image_rows(10 * k, ROWS_PER_FILE), _features()
        )
        write_parquet(
            cell / "data" / f"validation-{k:05d}-of-00006.parquet",
            _image_rows(100 + 10 * k, ROWS_PER_FILE),
            _features(list(IMAGENET_WNIDS)),
        )
    card = {
        "configs": [
            {"config_name": "default", "data_files": [{"split": "validation", "path": "data/validation-*"}]}
        ]
    }
    (cell / "README.md").write_text(f"---\n{yaml.safe_dump(card)}---\n", encoding="utf-8")
    return val, cell


def _image_folders(root: Path) -> tuple[Path, Path]:
    """An ImageNet validation folder (<wnid>/<file>) of 7 images, and a released-layout ImageNet-C folder
    (<corruption>/<severity>/<wnid>/<file>) of 4 cells x 2 images."""
    val, released = root / "val-folder", root / "imagenet-c-folder"
    for i in range(7):
        folder = val / IMAGENET_WNIDS[i * 3]
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"img{i}.png").write_bytes(image_bytes(50 + i, size=12))
    for corruption, severity in itertools.product(("gaussian_noise", "contrast"), (1, 5)):
        for i in range(2):
            folder = released / corruption / str(severity) / IMAGENET_WNIDS[i]
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"c{i}.png").write_bytes(image_bytes(80 + i, size=32))
    return val, released


def _suite(path: Path, model: str, benchmarks: dict) -> Path:
    suite = {
        "name": path.stem,
        "batch_size": 4,
        "seed": 1,
        "chunk_size": 2,
        "models": [model],
        "benchmarks": benchmarks,
    }
    path.write_text(yaml.safe_dump(suite), encoding="utf-8")
    return path


def _predictions(output: Path, benchmark: str) -> pd.DataFrame:
    folder = output / "predictions"
    (model,) = [p for p in folder.iterdir() if p.is_dir()]
    return pd.read_parquet(model / f"{benchmark}.parquet")


def _one_process(suite: Path, output: Path) -> dict:
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return evaluate(EvaluationConfig(suite=str(suite), output=output, progress=False, report=False))
    finally:
        torch.set_num_threads(threads)


def _two_processes(tmp_path: Path, suite: Path, output: Path, data_root: Path) -> tuple[dict, str]:
    counts = tmp_path / "opened"
    hooks = tmp_path / "hooks"
    env = cpu_environment(
        PYTHONPATH=os.pathsep.join([str(hooks), str(REPO_ROOT)]),
        **counting_environment(hooks, data_root, counts),
    )
    command = accelerate_launch(
        "evaluate", "--suite", str(suite), "--output", str(output), "--quiet", "--no-report"
    )
    completed = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert completed.returncode == 0, completed.stderr[-3000:]
    opened = opened_by_rank(counts)
    assert opened.pop("single", []) == []  # the launcher itself reads no data
    assert set(opened) == {"0", "1"}, opened.keys()
    return opened, completed.stderr


def _assert_same_predictions(one: Path, two: Path, benchmark: str) -> None:
    a, b = _predictions(one, benchmark), _predictions(two, benchmark)
    assert len(a) > 0
    pd.testing.assert_frame_equal(a[COLUMNS], b[COLUMNS])
    np.testing.assert_allclose(a["confidence"], b["confidence"], atol=1e-6)


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory) -> str:
    return save_tiny_vit(tmp_path_factory.mktemp("model") / "vit")


def test_two_processes_read_disjoint_parquet_files(tiny_model, tmp_path):
    data = tmp_path / "data"
    val, cell = _parquet_copies(data)
    suite = _suite(
        tmp_path / "parquet.yaml",
        tiny_model,
        {
            "imagenet-val": {"source": str(val)},
            "imagenet-c": {"source": str(cell), "corruptions": ["snow"], "severities": [2]},
        },
    )
    one = tmp_path / "one"
    _one_process(suite, one)
    opened, _ = _two_processes(tmp_path, suite, tmp_path / "two", data)
    for benchmark, folder in (("imagenet-val", "my-val"), ("imagenet-c", "Tsomaros")):
        _assert_same_predictions(one, tmp_path / "two", benchmark)
        per_rank = {
            rank: {p for p in paths if p.startswith(folder) and p.endswith(".parquet")}
            for rank, paths in opened.items()
        }
        files = sorted(set.union(*per_rank.values()))
        assert len(files) == 6
        first = files[0]
        # Rank r owns files r, r + 2, r + 4; besides them it may open only the first file (the schema).
        for rank, seen in per_rank.items():
            own = set(files[int(rank) :: 2])
            assert own <= seen, (rank, sorted(seen))
            assert seen - own <= {first}, (rank, sorted(seen - own))
        # Every file's rows were read by exactly one process: its owner.
        shards = _predictions(tmp_path / "two", benchmark)["shard"].value_counts().sort_index()
        assert shards.tolist() == [ROWS_PER_FILE] * 6


def test_image_files_are_opened_by_one_process_each(tiny_model, tmp_path):
    data = tmp_path / "data"
    val, released = _image_folders(data)
    single = data / "one-file"
    write_parquet(single / "validation-00000-of-00001.parquet", _image_rows(200, 5), _features())
    suite = _suite(
        tmp_path / "folders.yaml",
        tiny_model,
        {
            "imagenet-val": {"source": str(val)},
            "imagenet-c": {
                "source": str(released),
                "corruptions": ["gaussian_noise", "contrast"],
                "severities": [1, 5],
            },
            "imagenet-sketch": {"source": str(single)},
        },
    )
    one = tmp_path / "one"
    _one_process(suite, one)
    opened, stderr = _two_processes(tmp_path, suite, tmp_path / "two", data)
    for benchmark in ("imagenet-val", "imagenet-c", "imagenet-sketch"):
        _assert_same_predictions(one, tmp_path / "two", benchmark)
    images = {rank: [p for p in paths if p.endswith(".png")] for rank, paths in opened.items()}
    counts = collections.Counter(p for paths in images.values() for p in paths)
    expected = {str(p.relative_to(data)) for p in data.rglob("*.png")}
    assert set(counts) == expected and set(counts.values()) == {1}, counts
    assert all(len(paths) >= 3 for paths in images.values())  # both processes did work
    # One parquet file for two processes: the run says that both read it, and what that costs.
    assert "imagenet-sketch: 1 shard(s) for 2 processes" in stderr
    assert opened["0"].count("one-file/validation-00000-of-00001.parquet") >= 1
    assert opened["1"].count("one-file/validation-00000-of-00001.parquet") >= 1


def test_chunk_layout_depends_only_on_the_files(tmp_path):
    """Chunk (s, k) holds rows [k C, (k + 1) C) of shard s for any number of processes; the processes' chunks
    partition the stream's, whether they split by shard or interleave."""
    val, _ = _parquet_copies(tmp_path)
    source = load_benchmark("imagenet-val", str(val))
    source.validate()
    plan = plan_stream(get_benchmark("imagenet-val"), source, None, 2, {})
    assert len(plan.shards()) == 6
    layout = {
        (shard, k): [raw.sample_id for _, raw in items]
        for shard in range(6)
        for k, items in chunked(plan.raw.shard_raw_samples(shard), plan.chunk_size)
    }
    assert [sample for key in sorted(layout) for sample in layout[key]] == [
        r.sample_id for r in source.raw_samples()
    ]
    assert layout[(3, 1)] == ["validation-00003-of-00006.parquet/row-000002"]
    for world in (1, 2, 4, 6, 8):
        owners = collections.Counter()
        for rank in range(world):
            assignment = ReadAssignment(6, rank, world)
            owners.update(key for key in layout if key[0] in assignment.shards and assignment.owns(*key))
        assert owners == collections.Counter(dict.fromkeys(layout, 1)), world
        assert ReadAssignment(6, 0, world).by_shard == (world <= 6)


def test_a_resumed_run_refuses_a_source_whose_files_changed(tiny_model, tmp_path):
    val, _ = _parquet_copies(tmp_path / "data")
    suite = _suite(tmp_path / "s.yaml", tiny_model, {"imagenet-val": {"source": str(val)}})
    output = tmp_path / "run"
    _one_process(suite, output)
    write_parquet(val / "validation-00006-of-00006.parquet", _image_rows(90, 2), _features())
    (output / "results.json").unlink()
    with pytest.raises(RuntimeError, match="files changed since the run started"):
        evaluate(EvaluationConfig(suite=str(suite), output=output, progress=False, report=False, resume=True))
    assert json.loads((output / ".work" / "run.json").read_text())["chunk_layout"] == "per-shard"
