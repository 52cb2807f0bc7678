"""hf_vitrobust.evaluation.run_lock: one writer per run folder. A second run on a folder that a live run writes is
refused before any work, naming the holder; a killed run's lock is taken over on its host; a finished or failed run
leaves none."""

import json
import multiprocessing
import os
import socket

import pytest

from hf_vitrobust.evaluation.config import EvaluationConfig, EvaluationError
from hf_vitrobust.evaluation.run_lock import LOCK_FILE, RunFolderBusy, RunLock
from hf_vitrobust.evaluation.runner import evaluate

SUITE = {
    "name": "tiny-lock",
    "batch_size": 4,
    "seed": 0,
    "chunk_size": 4,
    "models": ["builtin:efficientnet_lite0"],
    "benchmarks": {"imagenet-val": {"source": "builtin", "limit": 2}},
}


def _dead_pid() -> int:
    """The id of a process that has exited."""
    process = multiprocessing.get_context("spawn").Process(target=os.getpid)
    process.start()
    process.join()
    return process.pid


def test_one_holder_at_a_time_and_release(tmp_path):
    first, second = RunLock(tmp_path / ".work", tmp_path), RunLock(tmp_path / ".work", tmp_path)
    first.acquire()
    holder = json.loads((tmp_path / ".work" / LOCK_FILE).read_text())
    assert holder["pid"] == os.getpid() and holder["host"] == socket.gethostname()
    with pytest.raises(RunFolderBusy, match=rf"being written by another run \(process {os.getpid()} on "):
        second.acquire()
    first.release()
    assert not (tmp_path / ".work" / LOCK_FILE).exists()
    second.acquire()
    second.release()


def test_a_killed_runs_lock_is_taken_over_on_its_host(tmp_path):
    lock = tmp_path / ".work" / LOCK_FILE
    lock.parent.mkdir()
    lock.write_text(json.dumps({"pid": _dead_pid(), "host": socket.gethostname(), "started": "then"}))
    taker = RunLock(tmp_path / ".work", tmp_path)
    taker.acquire()
    assert json.loads(lock.read_text())["pid"] == os.getpid()
    assert sorted(p.name for p in lock.parent.iterdir()) == [LOCK_FILE]  # no stale copy left behind
    taker.release()
    lock.write_text("")  # a writer killed between creating and filling it
    taker.acquire()
    taker.release()


def test_another_hosts_lock_is_respected_and_named(tmp_path):
    lock = tmp_path / ".work" / LOCK_FILE
    lock.parent.mkdir()
    lock.write_text(json.dumps({"pid": 1, "host": "other-node", "started": "2026-12-03T00:00:00+00:00"}))
    with pytest.raises(RunFolderBusy, match=rf"process 1 on other-node.*If that run is dead, remove {lock}"):
        RunLock(tmp_path / ".work", tmp_path).acquire()


def test_a_run_on_a_held_folder_is_refused_before_any_work_and_leaves_no_lock(tmp_path):
    (tmp_path / "suite.json").write_text(json.dumps(SUITE))
    output = tmp_path / "run"
    holder = RunLock(output / ".work", output)
    holder.acquire()
    with pytest.raises(EvaluationError, match="being written by another run"):
        evaluate(
            EvaluationConfig(suite=str(tmp_path / "suite.json"), output=output, progress=False, report=False)
        )
    assert not (output / "predictions").exists() and not (output / ".work" / "run.json").exists()
    holder.release()
    evaluate(
        EvaluationConfig(suite=str(tmp_path / "suite.json"), output=output, progress=False, report=False)
    )
    assert (output / "results.json").is_file() and not (output / ".work" / LOCK_FILE).exists()
    # A run that fails after taking the lock (here: refused for not resuming) leaves none either.
    with pytest.raises(EvaluationError, match="holds an earlier run"):
        evaluate(
            EvaluationConfig(suite=str(tmp_path / "suite.json"), output=output, progress=False, report=False)
        )
    assert not (output / ".work" / LOCK_FILE).exists()
