# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Multi-node runs and resume (issue 18, point 3) on the builtin EfficientNet-Lite0 and the bundled photos:
- two `accelerate launch` processes on this machine, machines 0 and 1 of a 2-machine run with one CPU process each
  (`--num_machines 2 --machine_rank R --main_process_ip 127.0.0.1`), give the results of one process, and each
  sample is classified once, by one of the two machines;
- ranks SIGKILLed at different points of such a run, then `resume=True` in one process, end with the results of an
  uninterrupted run: every chunk file finished before the kill is kept as it was (same bytes, same mtime) and the
  model classifies exactly the samples of the chunks that were missing;
- `--resume` with a changed seed, precision or suite is refused before any work, with an error naming the setting.

Every process runs on one thread, as the in-process reference does: a CPU kernel's float reductions depend on its
thread count, not on the number of processes.
"""

import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
import torch
import yaml
from launch import (
    accelerate_launch_machine,
    assert_intervals_identical,
    assert_results_close,
    cpu_environment,
    free_port,
)

from hf_vitrobust.evaluation.config import EvaluationConfig, EvaluationError
from hf_vitrobust.evaluation.runner import evaluate

MODEL = "builtin:efficientnet_lite0"
KEY = "builtin_efficientnet_lite0"
REPO = Path(__file__).resolve().parents[2]

# 8 clean photos, then 6 photos x 2 corruptions x 2 severities (in this order: the suite file keeps it): 32 samples
# in several chunks per rank, and one probe.
SUITE = {
    "name": "multinode",
    "description": "a few photos, two corruptions, one probe",
    "batch_size": 8,
    "seed": 5,
    "chunk_size": 4,
    "models": [MODEL],
    "benchmarks": {
        "imagenet-val": {"source": "builtin", "limit": 8},
        "imagenet-c": {
            "source": "generated:builtin",
            "limit": 6,
            "corruptions": ["gaussian_noise", "contrast"],
            "severities": [1, 5],
        },
    },
    "probes": {"occlusion": {"benchmark": "imagenet-val", "num_images": 4, "params": {"ratios": [0.0, 0.2]}}},
}
NUM_SAMPLES = 8 + 6 * 2 * 2

# `python -m hf_vitrobust` with a hook on the runner's model call: it records the number of images this rank
# classifies (written at a clean exit), and SIGKILLs the rank at the start of its n-th model call where DIE_AT
# ("rank:n,...") names it, i.e. after its first n - 1 chunks were classified and written.
RANK_HOOK = """
import json
import os
import signal
import sys
from pathlib import Path

from hf_vitrobust.cli import main
from hf_vitrobust.evaluation.runner import Runner

rank = int(os.environ["RANK"])
die_at = dict(tuple(map(int, item.split(":"))) for item in os.environ.get("DIE_AT", "").split(",") if item)
classified = []
original = Runner._classify


def counted(self, model, pixels):
    if len(classified) + 1 == die_at.get(rank):
        os.kill(os.getpid(), signal.SIGKILL)
    classified.append(len(pixels))
    return original(self, model, pixels)


Runner._classify = counted
status = main(sys.argv[1:])
Path(os.environ["COUNT_DIR"], f"rank{rank}.json").write_text(json.dumps(classified))
sys.exit(status)
"""


def _predictions(output: Path, benchmark: str) -> pd.DataFrame:
    return pd.read_parquet(output / "predictions" / KEY / f"{benchmark}.parquet")


def _float_values(column: pd.Series) -> np.ndarray:
    return np.stack([np.nan if value is None else np.asarray(value, dtype=np.float64) for value in column])


def _assert_same_results(reference: Path, output: Path) -> None:
    """The run in `output` has the reference's per-sample predictions (identical ids, labels, classes, top-5;
    confidences and logits within 1e-6) and its metrics, probe results and benchmark records (within 1e-6)."""
    for benchmark in SUITE["benchmarks"]:
        a, b = _predictions(reference, benchmark), _predictions(output, benchmark)
        assert list(a.columns) == list(b.columns) and len(a) == len(b)
        floats = [c for c in a.columns if a[c].dtype.kind == "f" or c == "logits"]
        pd.testing.assert_frame_equal(a.drop(columns=floats), b.drop(columns=floats))
        for column in floats:
            np.testing.assert_allclose(
                _float_values(a[column]), _float_values(b[column]), rtol=1e-6, atol=1e-6, err_msg=column
            )
    one = json.loads((reference / "results.json").read_text())
    other = json.loads((output / "results.json").read_text())
    assert other["complete"] is True
    for part in ("metrics", "probes", "benchmarks"):
        assert_results_close(one[part], other[part], part)
    assert_intervals_identical(one, other)


def _chunk_files(output: Path) -> dict[Path, tuple[str, int]]:
    """Every benchmark chunk file of the run folder -> (sha256 of its bytes, its mtime in ns)."""
    return {
        path: (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns)
        for path in sorted((output / ".work").glob("*/benchmarks/*/chunk-*.parquet"))
    }


def _launch_two_machines(
    suite_file: Path, output: Path, logs: Path, die_at: str = ""
) -> tuple[list[int], list[str], dict[int, list[int]]]:
    """Machines 0 and 1 of a 2-machine run, each one launcher with one CPU process, started together on this
    machine: (their exit codes, their logs, rank -> sizes of the batches it classified, for ranks that exited)."""
    logs.mkdir(parents=True, exist_ok=True)
    hook = logs / "rank_hook.py"
    hook.write_text(RANK_HOOK)
    environment = cpu_environment(
        PYTHONPATH=str(REPO), PYTHONUNBUFFERED="1", COUNT_DIR=str(logs), DIE_AT=die_at
    )
    arguments = ("evaluate", "--suite", str(suite_file), "--output", str(output), "--quiet")
    port = free_port()
    launchers = []
    try:
        for machine in (0, 1):
            command = accelerate_launch_machine(
                *arguments, machine_rank=machine, main_process_port=port, program=(str(hook),)
            )
            with (logs / f"machine{machine}.log").open("w") as log:
                launchers.append(
                    subprocess.Popen(
                        command, env=environment, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
                    )
                )
        codes = [launcher.wait(timeout=400) for launcher in launchers]
    finally:
        for launcher in launchers:  # a launcher still running (a timeout): end it and its worker
            if launcher.poll() is None:
                os.killpg(launcher.pid, signal.SIGKILL)
                launcher.wait()
    texts = [(logs / f"machine{machine}.log").read_text() for machine in (0, 1)]
    counts = {
        rank: json.loads((logs / f"rank{rank}.json").read_text())
        for rank in (0, 1)
        if (logs / f"rank{rank}.json").is_file()
    }
    return codes, texts, counts


def _one_thread_evaluate(config: EvaluationConfig) -> dict:
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return evaluate(config)
    finally:
        torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def suite_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("suite") / "multinode.yaml"
    path.write_text(yaml.safe_dump(SUITE, sort_keys=False))
    return path


@pytest.fixture(scope="module")
def reference_run(suite_file, tmp_path_factory) -> Path:
    """The uninterrupted 1-process run, on one thread; started with resume=True on an empty folder, as the README's
    Slurm script starts a run (so that its restarts need no other command line)."""
    output = tmp_path_factory.mktemp("runs") / "one-process"
    _one_thread_evaluate(EvaluationConfig(suite=str(suite_file), output=output, resume=True, progress=False))
    return output


@pytest.mark.slow
def test_two_machines_match_one_process(reference_run, suite_file, tmp_path):
    output = tmp_path / "two-machines"
    codes, logs, counts = _launch_two_machines(suite_file, output, tmp_path / "logs")
    assert codes == [0, 0], "\n".join(log[-3000:] for log in logs)
    run = json.loads((output / "results.json").read_text())
    assert run["settings"]["num_processes"] == 2 and run["settings"]["device"].startswith("cpu")
    # Both machines classified images, and together every sample exactly once.
    assert sum(counts[0]) > 0 and sum(counts[1]) > 0
    assert sum(counts[0]) + sum(counts[1]) == NUM_SAMPLES
    _assert_same_results(reference_run, output)


@pytest.mark.slow
def test_ranks_killed_at_different_points_resume_to_identical_results(
    reference_run, suite_file, tmp_path, count_classified
):
    output = tmp_path / "killed"
    # Rank 1 dies at the start of its 3rd model call, rank 0 at the start of its 4th: each after writing chunks of
    # its own, both in ImageNet-C's stream (the second), before its barrier. A rank that ended otherwise (at the
    # barrier, when the other one had died) would show no SIGKILL in its launcher's log.
    codes, logs, counts = _launch_two_machines(suite_file, output, tmp_path / "logs", die_at="0:4,1:3")
    assert codes[0] != 0 and codes[1] != 0 and counts == {}
    for log in logs:
        assert "SIGKILL" in log, log[-3000:]
    assert (
        not (output / "results.json").is_file()
        or not json.loads((output / "results.json").read_text())["complete"]
    )
    before = _chunk_files(output)
    assert len(before) == 2 + 3  # the chunks of rank 1's first 2 model calls and of rank 0's first 3

    _one_thread_evaluate(EvaluationConfig(suite=str(suite_file), output=output, resume=True, progress=False))

    after = _chunk_files(output)
    assert set(before) < set(after)
    for path, recorded in before.items():  # reused as they were: not rewritten, not even with equal bytes
        assert after[path] == recorded, path
    missing = sum(pq.read_metadata(path).num_rows for path in set(after) - set(before))
    assert 0 < missing < NUM_SAMPLES
    assert sum(count_classified) == missing  # the model saw only the samples of the missing chunks
    assert sum(pq.read_metadata(path).num_rows for path in after) == NUM_SAMPLES
    assert json.loads((output / "results.json").read_text())["settings"]["num_processes"] == 1
    _assert_same_results(reference_run, output)


def _changed_suite(path: Path, **changes) -> str:
    path.write_text(yaml.safe_dump({**SUITE, **changes}, sort_keys=False))
    return str(path)


CHANGES = {
    "seed": lambda folder: {"seed": 6},
    "precision": lambda folder: {"precision": "bf16"},
    "suite": lambda folder: {"suite": _changed_suite(folder / "renamed.yaml", name="multinode-renamed")},
    # The same name, another corruption: the chunks on disk hold gaussian_noise, the suite asks for shot_noise.
    "suite contents": lambda folder: {
        "suite": _changed_suite(
            folder / "same-name.yaml",
            benchmarks={
                **SUITE["benchmarks"],
                "imagenet-c": {
                    **SUITE["benchmarks"]["imagenet-c"],
                    "corruptions": ["shot_noise", "contrast"],
                },
            },
        )
    },
}


@pytest.mark.parametrize("change", list(CHANGES))
def test_resume_with_a_changed_setting_is_refused(
    reference_run, suite_file, tmp_path, count_classified, change
):
    """Against a copy of the finished reference run: the error names the changed setting, and the
    folder is left as it was, with no image classified."""
    output = tmp_path / "run"
    shutil.copytree(reference_run, output)
    kept = {path: path.read_bytes() for path in (output / "results.json", output / ".work" / "run.json")}
    settings = {"suite": str(suite_file), **CHANGES[change](tmp_path)}
    setting = change.split()[0]
    with pytest.raises(EvaluationError, match="--resume") as refused:
        evaluate(EvaluationConfig(output=output, resume=True, progress=False, **settings))
    assert re.search(rf"\b{setting}\b", str(refused.value)), str(refused.value)
    assert count_classified == []
    assert {path: path.read_bytes() for path in kept} == kept


def test_resume_of_a_finished_run_classifies_nothing(reference_run, suite_file, tmp_path, count_classified):
    """The control of the refusals: the same settings resume, reuse every chunk, and give the same results."""
    output = tmp_path / "run"
    shutil.copytree(reference_run, output)
    before = _chunk_files(output)
    _one_thread_evaluate(
        EvaluationConfig(suite=str(suite_file), output=output, resume=True, report=False, progress=False)
    )
    assert count_classified == []
    assert _chunk_files(output) == before
    _assert_same_results(reference_run, output)
