# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Resume and merge bookkeeping: a shard is complete only when its end marker exists and every one of its chunks
is on disk, and the merged predictions refuse a sample evaluated twice even when the rows are in stream order."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hf_vitrobust.evaluation.store import ChunkStore, write_parquet_atomic
from hf_vitrobust.evaluation.stream_merge import check_merged_file, merged_predictions


def _chunk(store: ChunkStore, shard: int, index: int) -> None:
    write_parquet_atomic(store.path((shard, index)), pa.table({"x": [shard, index]}))


def test_a_shard_is_complete_only_with_every_chunk(tmp_path):
    store = ChunkStore(tmp_path / "stream", "parquet")
    # Shard 0 was read to its end in 3 chunks; chunks 0 and 2 are on disk, chunk 1 is not.
    store.mark_shard(0, num_chunks=3, num_items=30)
    _chunk(store, 0, 0)
    _chunk(store, 0, 2)
    # Shard 1: its only chunk is on disk, and its marker too. Shard 2: a chunk, but never read to its end.
    store.mark_shard(1, num_chunks=1, num_items=4)
    _chunk(store, 1, 0)
    _chunk(store, 2, 0)
    # Shard 3: read to its end, no samples, no chunks.
    store.mark_shard(3, num_chunks=0, num_items=0)
    done = store.done_indices()
    assert done == {(0, 0), (0, 2), (1, 0), (2, 0)}
    assert store.complete_shards(4, done) == {1, 3}
    _chunk(store, 0, 1)
    assert store.complete_shards(4, store.done_indices()) == {0, 1, 3}


def _merged(sample_ids, shards, positions) -> pa.Table:
    return pa.table(
        {
            "sample_id": sample_ids,
            "shard": pa.array(shards, pa.int64()),
            "position": pa.array(positions, pa.int64()),
            "prediction": pa.array(range(len(sample_ids)), pa.int64()),
        }
    )


def _written(tmp_path, sample_ids, shards, positions):
    path = tmp_path / "merged.parquet"
    pq.write_table(_merged(sample_ids, shards, positions), path)
    return path


@pytest.mark.parametrize("batch_rows", [1, 2, 3, 65_536])
def test_a_sample_evaluated_twice_is_refused_in_stream_order(tmp_path, batch_rows):
    """The same image read from two shards: the rows are in stream order, only the duplicate check sees it, in
    whichever batches of the file the two rows lie."""
    twice = _written(tmp_path, ["a.JPEG", "b.JPEG", "a.JPEG"], [0, 0, 1], [0, 1, 0])
    with pytest.raises(RuntimeError, match=r"imagenet-val: samples evaluated twice: \['a.JPEG'\]"):
        check_merged_file("imagenet-val", twice, batch_rows)
    with pytest.raises(RuntimeError, match="evaluated twice"):
        merged_predictions("imagenet-val", twice)
    once = _written(tmp_path, ["a.JPEG", "b.JPEG", "c.JPEG"], [0, 0, 1], [0, 1, 0])
    check_merged_file("imagenet-val", once, batch_rows)
    assert merged_predictions("imagenet-val", once).frame(["prediction"])["prediction"].tolist() == [0, 1, 2]


@pytest.mark.parametrize("batch_rows", [1, 2, 65_536])
def test_rows_out_of_stream_order_are_refused(tmp_path, batch_rows):
    for shards, positions in (([0, 0, 1], [1, 0, 0]), ([1, 0, 0], [0, 0, 1]), ([0, 0, 0], [0, 1, 1])):
        with pytest.raises(RuntimeError, match="out of stream order"):
            check_merged_file("x", _written(tmp_path, ["a", "b", "c"], shards, positions), batch_rows)


def test_hash_collisions_are_told_apart_from_samples_evaluated_twice(tmp_path, monkeypatch):
    """Every id hashed alike (a forced collision): the ids are compared in full, and only a real repeat is refused."""
    import pandas as pd

    monkeypatch.setattr(
        pd.util, "hash_array", lambda values, categorize=False: np.zeros(len(values), np.uint64)
    )
    check_merged_file("x", _written(tmp_path, ["a", "b", "c"], [0, 0, 0], [0, 1, 2]), 2)
    with pytest.raises(RuntimeError, match=r"evaluated twice: \['b'\]"):
        check_merged_file("x", _written(tmp_path, ["a", "b", "c", "b"], [0, 0, 0, 1], [0, 1, 2, 0]), 2)
