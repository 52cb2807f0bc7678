# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Rank 0's merge of a benchmark's chunk files into its predictions file, one chunk at a time.

The chunks are appended in stream order (shard by shard, chunk by chunk) to one parquet writer (configured as
`datasets` writes parquet: `parquet_options`), so the merge holds one chunk in memory, whatever the length of the
stream. The merged file is then checked in batches
(`merged_predictions`: no sample evaluated twice, rows in stream order) and handed on unread: the metrics, the
intervals and the probes' image selection read it by column and in batches (`analysis.prediction_source`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from ..analysis.prediction_source import BATCH_ROWS, PredictionsFile
from ..analysis.predictions import PREDICTION_SCHEMA, chunk_skips, with_derived_columns
from ..atomic_files import atomic_path
from ..data import SkipReport
from ..data.samples import MAX_REPORTED_SKIPS
from .parquet_options import parquet_writer, row_group_rows
from .store import ChunkStore


def merge_stream_chunks(name: str, store: ChunkStore, num_shards: int, path: Path) -> tuple[SkipReport, int]:
    """Every chunk of every shard of `store`, in order, written to `path` (atomically); returns the merged skip
    report and the number of raw samples the stream had. Fails loudly on a shard no process finished, a chunk never
    written (`merged_predictions` checks for a sample evaluated twice or rows out of order)."""
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
    with atomic_path(path) as temporary, parquet_writer(temporary, PREDICTION_SCHEMA) as writer:
        for shard, end in enumerate(ends):
            num_items += end["num_items"]
            for index in range(end["num_chunks"]):
                table = pq.read_table(store.path((shard, index)))
                skips = chunk_skips(table)
                report.skipped.update(skips.get("skipped", {}))
                report.converted.update(skips.get("converted_to_rgb", {}))
                room = MAX_REPORTED_SKIPS - len(report.examples)
                report.examples.extend(skips.get("examples", [])[: max(room, 0)])
                merged = with_derived_columns(table.replace_schema_metadata(None)).cast(PREDICTION_SCHEMA)
                writer.write_table(merged, row_group_size=row_group_rows(merged))
    return report, num_items


def merged_predictions(name: str, path: Path) -> PredictionsFile:
    """The merged predictions file, checked (`check_merged_file`), to be read by column and in batches: the
    metrics, the intervals and the probes' image selection never hold a whole generated ImageNet-C."""
    check_merged_file(name, path)
    return PredictionsFile(path)


def check_merged_file(name: str, path: Path, batch_rows: int = BATCH_ROWS) -> None:
    """`check_merged` of a predictions file, read in batches of its shard, position and sample id columns: what it
    holds is 8 bytes a row (a 64-bit hash of each sample id; ids whose hashes collide are compared in full)."""
    hashes, out_of_order, previous = [], False, None
    with pq.ParquetFile(path) as file:
        for batch in file.iter_batches(batch_size=batch_rows, columns=["shard", "position", "sample_id"]):
            ids = batch.column("sample_id").to_numpy(zero_copy_only=False).astype(object)
            hashes.append(pd.util.hash_array(ids, categorize=False))
            shard, position = batch.column("shard").to_numpy(), batch.column("position").to_numpy()
            if previous is not None:  # the step from the last row of the batch before
                shard, position = np.r_[previous[0], shard], np.r_[previous[1], position]
            out_of_order = out_of_order or _out_of_order(shard, position)
            if len(shard):
                previous = (shard[-1], position[-1])
    hashed = np.sort(np.concatenate(hashes)) if hashes else np.zeros(0, np.uint64)
    repeated = set(hashed[1:][hashed[1:] == hashed[:-1]].tolist())
    if repeated:
        counts: dict[str, int] = {}
        with pq.ParquetFile(path) as file:
            for batch in file.iter_batches(batch_size=batch_rows, columns=["sample_id"]):
                ids = batch.column("sample_id").to_numpy(zero_copy_only=False).astype(object)
                for sample_id, value in zip(ids, pd.util.hash_array(ids, categorize=False), strict=True):
                    if int(value) in repeated:
                        counts[sample_id] = counts.get(sample_id, 0) + 1
        twice = [sample_id for sample_id, count in counts.items() if count > 1][:5]
        if twice:
            raise RuntimeError(f"{name}: samples evaluated twice: {twice}.")
    if out_of_order:
        raise RuntimeError(f"{name}: the merged predictions are out of stream order.")


def _out_of_order(shard: np.ndarray, position: np.ndarray) -> bool:
    """Whether rows are not in stream order (shard, then position within it, strictly increasing)."""
    if len(shard) < 2:
        return False
    step_shard = shard[1:] - shard[:-1]
    step_position = position[1:] - position[:-1]
    return bool((step_shard < 0).any() or ((step_shard == 0) & (step_position <= 0)).any())


__all__ = ["check_merged_file", "merge_stream_chunks", "merged_predictions"]
