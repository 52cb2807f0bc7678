"""Atomic files of a run folder: a failing write (full disk, kill) leaves the previous complete file and no debris;
chunk bookkeeping for resume."""

import errno
import json
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch

from hf_vitrobust import atomic_files
from hf_vitrobust.evaluation import store
from hf_vitrobust.evaluation.store import (
    ChunkStore,
    load_tensors,
    save_tensors_atomic,
    write_json_atomic,
    write_parquet_atomic,
)


def test_json_round_trip_and_refuses_nan(tmp_path):
    path = tmp_path / "results.json"
    write_json_atomic(path, {"b": [1, 2.5], "a": None})
    assert json.loads(path.read_text()) == {"a": None, "b": [1, 2.5]}
    with pytest.raises(ValueError):
        write_json_atomic(path, {"x": float("nan")})
    assert json.loads(path.read_text()) == {"a": None, "b": [1, 2.5]}  # the failed write changed nothing


def test_full_disk_keeps_the_previous_file_and_leaves_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "results.json"
    write_json_atomic(path, {"complete": True, "value": 1})

    def no_space(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(atomic_files.os, "fsync", no_space)
    with pytest.raises(OSError, match="No space left"):
        write_json_atomic(path, {"complete": True, "value": 2, "padding": "x" * 100_000})
    assert json.loads(path.read_text()) == {"complete": True, "value": 1}
    assert sorted(os.listdir(tmp_path)) == ["results.json"]


def test_interrupted_write_leaves_the_previous_file(tmp_path, monkeypatch):
    """A kill in the middle of writing (simulated by an exception from the writer) never exposes a partial file."""
    path = tmp_path / "chunk-000000.parquet"
    table = pa.table({"x": [1, 2, 3]})
    write_parquet_atomic(path, table)

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(store, "write_parquet", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_parquet_atomic(path, pa.table({"x": [4]}))
    assert pq.read_table(path).equals(table)
    assert sorted(os.listdir(tmp_path)) == ["chunk-000000.parquet"]


def test_tensors_load_with_weights_only(tmp_path):
    path = tmp_path / "chunk-000001.pt"
    value = {"sums": torch.arange(4.0), "count": 3, "names": ["a", "b"], "nested": {"x": 1.5}}
    save_tensors_atomic(path, value)
    loaded = load_tensors(path)
    assert (
        torch.equal(loaded["sums"], value["sums"]) and loaded["names"] == ["a", "b"] and loaded["count"] == 3
    )


def test_chunk_store_bookkeeping(tmp_path):
    chunks = ChunkStore(tmp_path / "stream", "parquet")
    assert chunks.done_indices() == set() and chunks.missing(3) == [0, 1, 2]
    for index in (0, 2):
        write_parquet_atomic(chunks.path(index), pa.table({"x": [index]}))
    (tmp_path / "stream" / ".chunk-000001.parquet.abc.tmp").write_bytes(
        b"partial"
    )  # debris of a kill: ignored
    assert chunks.done_indices() == {0, 2} and chunks.missing(3) == [1]
    assert chunks.is_done(2) and not chunks.is_done(1)
    chunks.mark_complete(rank=1, num_chunks=3, num_items=11)
    assert chunks.completion(1) == {"num_chunks": 3, "num_items": 11} and chunks.completion(0) is None
