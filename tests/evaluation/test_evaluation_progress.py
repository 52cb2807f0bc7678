"""The run's progress bar (`hf_vitrobust.evaluation.progress`): it counts the samples of every process, skipped
samples as done, starts a resumed run at what is on disk, and ends at 100 %; the terminal names the skipped
samples and where they are listed."""

import json
import re
import subprocess
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from launch import accelerate_launch, cpu_environment

from hf_vitrobust.data.builtin import builtin_photos_dir, read_manifest
from hf_vitrobust.evaluation import runner as runner_module
from hf_vitrobust.evaluation.config import EvaluationConfig
from hf_vitrobust.evaluation.progress import RunProgress, chunk_positions, done_positions, skipped_lines
from hf_vitrobust.evaluation.runner import evaluate

ROOT = Path(__file__).resolve().parents[2]
MODEL = "builtin:efficientnet_lite0"
# 4 files (one truncated) read as ImageNet val, and generated into 2 corruptions x 2 severities: 4 + 4 * 4.
CELLS = 2 * 2
TOTAL = 4 + 4 * CELLS


def test_the_count_is_the_sum_over_processes(tmp_path):
    main = RunProgress(tmp_path, 0, 3, total=100, enabled=True)
    other = RunProgress(tmp_path, 2, 3, total=None, enabled=True)
    assert main.bar is not None and other.bar is None  # only the main process draws
    other.add(7)
    main.add(5)
    assert main.bar.n == 12 and main.total_across_processes() == 12  # rank 1 has written nothing yet: 0
    other.add(30)
    main.add(1)
    assert main.bar.n == 43 and main.bar.total == 100
    # A resumed process starts its count again at zero, whatever an earlier run left.
    assert RunProgress(tmp_path, 2, 3, total=None, enabled=False).count == 0
    assert main.total_across_processes() == 6
    main.close()


def test_a_process_that_finishes_last_is_counted_when_the_bar_closes(tmp_path):
    """The main process's last chunk comes before the other's: the bar, read again after the barrier (close, or
    the next stream's describe), still ends at 100 %."""
    main = RunProgress(tmp_path, 0, 2, total=10, enabled=True)
    other = RunProgress(tmp_path, 1, 2, total=None, enabled=False)
    main.add(4)
    other.add(6)  # after the main process's last add: not yet on its bar
    assert main.bar.n == 4
    main.describe("model next-benchmark")
    assert main.bar.n == 10
    main.close()
    assert main.bar.n == main.bar.total == 10


def test_samples_done_earlier_count_in_the_position_not_the_rate(tmp_path):
    progress = RunProgress(tmp_path, 0, 1, total=40, enabled=True)
    progress.add_done_earlier(30)
    progress.add(10)
    bar = progress.bar
    assert (bar.initial, bar.n, bar.total) == (30, 40, 40)
    # tqdm's rate is (n - initial) / elapsed: the 10 samples of this run only, in 2 s.
    assert bar.format_dict["rate"] is None
    assert bar.format_meter(**{**bar.format_dict, "elapsed": 2.0}).count("5.00sample/s") == 1
    progress.close()


def test_one_process_writes_no_counter_file(tmp_path):
    progress = RunProgress(tmp_path / "work", 0, 1, total=None, enabled=False)
    progress.add(4)
    assert progress.total_across_processes() == 4 and not (tmp_path / "work").exists()


def _chunk(path: Path, rows: int, metadata: dict[bytes, bytes]) -> Path:
    table = pa.table({"position": list(range(rows))}).replace_schema_metadata(metadata)
    pq.write_table(table, path)
    return path


def test_chunk_positions_are_read_from_the_footer_or_counted(tmp_path):
    # Recorded: 2 rows kept of 8 positions (a generated chunk of 2 clean images, one of them unreadable, x 4).
    recorded = _chunk(tmp_path / "a.parquet", 2, {b"hf_vitrobust.positions": b"8"})
    # An older chunk file: its rows plus its skipped samples.
    skips = {"skipped": {"truncated": 1, "undecodable": 2}, "examples": []}
    older = _chunk(tmp_path / "b.parquet", 3, {b"hf_vitrobust.skipped": json.dumps(skips).encode()})
    assert chunk_positions(recorded) == 8 and chunk_positions(older) == 3 + 3
    assert done_positions([recorded, older]) == 14 and done_positions([]) == 0


def test_skipped_lines_name_the_counts_and_the_list():
    results = {
        "benchmarks": {
            "imagenet-val": {"skipped": {"num_skipped": 0, "skipped": {}, "examples": []}},
            "imagenet-r": {
                "skipped": {
                    "num_skipped": 3,
                    "skipped": {"undecodable": 1, "truncated": 2},
                    "examples": [{"sample_id": str(i)} for i in range(3)],
                }
            },
        }
    }
    assert skipped_lines(results, Path("run/results.json")) == [
        "imagenet-r: 3 sample(s) skipped (truncated 2, undecodable 1); 3 listed in run/results.json under "
        "benchmarks.imagenet-r.skipped.examples"
    ]


def _folder_with_a_bad_file(root: Path) -> Path:
    """An ImageNet validation folder (<wnid>/<file>) of three bundled photos and one truncated JPEG."""
    folder = root / "val"
    rows = read_manifest(builtin_photos_dir())[:3]
    for row in rows:
        (folder / row["wnid"]).mkdir(parents=True, exist_ok=True)
        (folder / row["wnid"] / row["file"]).write_bytes((builtin_photos_dir() / row["file"]).read_bytes())
    data = (builtin_photos_dir() / rows[0]["file"]).read_bytes()
    (folder / rows[0]["wnid"] / "broken.jpg").write_bytes(data[: len(data) // 3])
    return folder


def _suite(tmp_path: Path) -> Path:
    folder = _folder_with_a_bad_file(tmp_path)
    suite = {
        "name": "bad",
        "description": "one bad file, read and generated",
        "batch_size": 4,
        "chunk_size": 2,
        "benchmarks": {
            "imagenet-val": {"source": str(folder)},
            "imagenet-c": {
                "source": f"generated:{folder}",
                "corruptions": ["gaussian_noise", "contrast"],
                "severities": [1, 5],
            },
        },
    }
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(suite))
    return path


@pytest.fixture
def bars(monkeypatch) -> list[RunProgress]:
    """Every RunProgress a run makes, kept to be looked at after the run."""
    made: list[RunProgress] = []

    class Recorded(RunProgress):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            made.append(self)

    monkeypatch.setattr(runner_module, "RunProgress", Recorded)
    return made


def test_skipped_samples_count_as_done_and_the_summary_names_them(tmp_path, bars, capsys):
    output = tmp_path / "out"
    results = evaluate(
        EvaluationConfig(models=[MODEL], suite=str(_suite(tmp_path)), output=output, report=False)
    )
    assert results["benchmarks"]["imagenet-val"]["num_samples"] == 3  # the truncated file was skipped...
    assert results["benchmarks"]["imagenet-c"]["num_samples"] == 3 * CELLS
    bar = bars[0].bar
    assert bar.n == bar.total == TOTAL  # ...and its 1 + 4 positions counted as done: the bar ends at 100 %
    captured = capsys.readouterr()
    assert "100%" in captured.err.split("\r")[-1] or f"{TOTAL}/{TOTAL}" in captured.err
    results_path = output / "results.json"
    for name, count in (("imagenet-val", 1), ("imagenet-c", 1)):
        line = f"{name}: {count} sample(s) skipped (truncated {count}); 1 listed in {results_path} under "
        assert line + f"benchmarks.{name}.skipped.examples" in captured.out
    listed = json.loads(results_path.read_text())["benchmarks"]["imagenet-val"]["skipped"]["examples"]
    assert listed[0]["sample_id"].endswith("broken.jpg")


def test_a_resumed_run_starts_at_what_is_done_and_ends_at_100(tmp_path, bars):
    suite, output = _suite(tmp_path), tmp_path / "out"
    config = dict(models=[MODEL], suite=str(suite), output=output, report=False)
    evaluate(EvaluationConfig(**config, progress=False))
    work = output / ".work" / "builtin_efficientnet_lite0" / "benchmarks"
    # Chunks of 2 images (val) and of 1 clean image x 4 cells (generated): one of each is lost, as in a killed run.
    val_chunks = sorted((work / "imagenet-val").glob("chunk-*.parquet"))
    c_chunks = sorted((work / "imagenet-c").glob("chunk-*.parquet"))
    assert len(val_chunks) == 2 and len(c_chunks) == 4
    val_chunks[-1].unlink()
    c_chunks[0].unlink()
    evaluate(EvaluationConfig(**config, resume=True))
    bar = bars[-1].bar
    assert bar.initial == TOTAL - 2 - CELLS
    assert bar.n == bar.total == TOTAL


@pytest.mark.slow
def test_two_processes_end_at_100(tmp_path):
    """`accelerate launch` with 2 CPU processes (the recipe of NOTES.md): the main process's bar counts both
    processes' samples, skipped ones included, and ends at TOTAL/TOTAL."""
    output = tmp_path / "two"
    command = accelerate_launch("evaluate", "--suite", str(_suite(tmp_path)), "--model", MODEL, "--output",
                                str(output), "--no-report")  # fmt: skip
    completed = subprocess.run(
        command, env=cpu_environment(PYTHONPATH=str(ROOT)), capture_output=True, text=True, timeout=600
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    frames = [
        frame for frame in re.split(r"[\r\n]", completed.stderr) if "sample/s" in frame or "sample" in frame
    ]
    counts = [re.search(r"(\d+)/(\d+) \[", frame) for frame in frames]
    last = [match.groups() for match in counts if match][-1]
    assert last == (str(TOTAL), str(TOTAL))
    assert "imagenet-val: 1 sample(s) skipped" in completed.stdout
