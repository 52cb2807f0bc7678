# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Rank 0's merge of a benchmark's chunk files into its predictions file, one chunk at a time.

The chunks are appended in stream order (shard by shard, chunk by chunk) to one parquet writer, so the merge holds
one chunk in memory, whatever the length of the stream. The merged file is then read back once (`read_merged`, the
columns the analysis needs), and that read is checked: no sample evaluated twice, rows in stream order.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..analysis.predictions import PREDICTION_SCHEMA, chunk_skips, with_derived_columns
from ..atomic_files import atomic_path
from ..data import SkipReport
from ..data.samples import MAX_REPORTED_SKIPS
from .store import ChunkStore


def merge_stream_chunks(name: str, store: ChunkStore, num_shards: int, path: Path) -> tuple[SkipReport, int]:
    """Every chunk of every shard of `store`, in order, written to `path` (atomically); returns the merged skip
    report and the number of raw samples the stream had. Fails loudly on a shard no process finished, a chunk never
    written (`read_merged` checks for a sample evaluated twice or rows out of order)."""
    ends = [store.shard_end(shard) for shard in range(num_shards)]
    unfinished = [shard for shard, end in enumerate(ends) if end is None]
    if unfinished:
        raise RuntimeError(f"{name}: shards {unfinished[:10]} of {num_shards} were never read to their end.")
    done = store.done_indices()
    missing = [(s, k) for s, end in enumerate(ends) for k in range(end["num_chunks"]) if (s, k) not in done]
    if missing:
        raise RuntimeError(f"{name}: chunks {missing[:10]} (shard, chunk) were never written.")
    report = SkipReport()
    num_items = 0
    with atomic_path(path) as temporary, pq.ParquetWriter(temporary, PREDICTION_SCHEMA) as writer:
        for shard, end in enumerate(ends):
            num_items += end["num_items"]
            for index in range(end["num_chunks"]):
                table = pq.read_table(store.path((shard, index)))
                skips = chunk_skips(table)
                report.skipped.update(skips.get("skipped", {}))
                report.converted.update(skips.get("converted_to_rgb", {}))
                room = MAX_REPORTED_SKIPS - len(report.examples)
                report.examples.extend(skips.get("examples", [])[: max(room, 0)])
                writer.write_table(
                    with_derived_columns(table.replace_schema_metadata(None)).cast(PREDICTION_SCHEMA)
                )
    return report, num_items


def read_merged(name: str, path: Path, columns: list[str]) -> pa.Table:
    """The merged predictions file's `columns` (shard, position and sample_id always among them), read once and
    checked (`check_merged`)."""
    needed = ["shard", "position", "sample_id"]
    table = pq.read_table(path, columns=list(dict.fromkeys([*columns, *needed])))
    check_merged(name, table)
    return table.select(columns)


def check_merged(name: str, table: pa.Table) -> None:
    """No sample id twice, and rows in stream order (shard, then position within it)."""
    ids = table.column("sample_id")
    if len(pc.unique(ids)) != len(ids):
        counts = pc.value_counts(ids)
        twice = [c["values"] for c in counts.to_pylist() if c["counts"] > 1][:5]
        raise RuntimeError(f"{name}: samples evaluated twice: {twice}.")
    shard = table.column("shard").to_numpy()
    position = table.column("position").to_numpy()
    if len(shard) > 1:
        step_shard = shard[1:] - shard[:-1]
        step_position = position[1:] - position[:-1]
        if (step_shard < 0).any() or ((step_shard == 0) & (step_position <= 0)).any():
            raise RuntimeError(f"{name}: the merged predictions are out of stream order.")


__all__ = ["check_merged", "merge_stream_chunks", "read_merged"]
