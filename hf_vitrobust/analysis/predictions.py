# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Per-sample predictions: what a model said about every sample, as the rows of a parquet file.

One row per sample (one per sequence for ImageNet-P), in stream order (by shard, then position within the shard),
with enough to recompute every metric later without the model: the top-1 and top-5 classes, the maximum softmax probability, the true class's
probability, the argmax over the benchmark's class subset (ImageNet-A/R/O), the ImageNet-O score, the sample's
corruption / severity / variant / perturbation, the clean sample a generated one was made of, and for benchmarks that are not expanded by corruptions the full
logits (calibration and masked accuracy need them).
"""

from __future__ import annotations

import json
import math
from typing import Any

import pyarrow as pa
import torch

from ..data import Benchmark
from ..data.samples import Sample

TOP_K = 5
#: The chunk file metadata key holding how many positions of the stream the chunk covered.
CHUNK_POSITIONS_KEY = "hf_vitrobust.positions"

PREDICTION_SCHEMA = pa.schema(
    [
        ("shard", pa.int64()),
        ("position", pa.int64()),
        ("sample_id", pa.string()),
        ("clean_sample_id", pa.string()),
        ("label", pa.int64()),
        ("prediction", pa.int64()),
        ("top5", pa.list_(pa.int64())),
        ("confidence", pa.float32()),
        ("true_probability", pa.float32()),
        ("subset_prediction", pa.int64()),
        ("ood_score", pa.float32()),
        ("corruption", pa.string()),
        ("severity", pa.int64()),
        ("variant", pa.string()),
        ("perturbation", pa.string()),
        ("difficulty", pa.int64()),
        ("is_ood", pa.bool_()),
        ("frame_predictions", pa.list_(pa.int64())),
        ("frame_top5", pa.list_(pa.list_(pa.int64()))),
        ("logits", pa.list_(pa.float32())),
        ("metadata", pa.string()),
    ]
)


def keeps_logits(benchmark: Benchmark, expanded: bool) -> bool:
    """Full logits are stored for clean, non-sequence benchmarks (calibration and masked accuracy need them); not
    for ImageNet-C/-P, generated or released (`expanded`: generated; a benchmark of corruption cells: released),
    which would multiply the file size by the number of corruptions."""
    return not expanded and not benchmark.corruptions and benchmark.task != "sequence"


def prediction_rows(
    benchmark: Benchmark,
    positions: list[int],
    samples: list[Sample],
    logits: torch.Tensor | list[torch.Tensor],
    keep_logits: bool,
    shard: int = 0,
) -> dict[str, list[Any]]:
    """Columns of `PREDICTION_SCHEMA` for one chunk of shard `shard` (`positions` are within the shard).
    `logits`: (n, classes), or (n, T, classes) for sequences, or a list of (T_i, classes) for sequences of
    different lengths."""
    if isinstance(logits, list):
        sequences = [sequence.detach().to(torch.float32).cpu() for sequence in logits]
        k = min(TOP_K, sequences[0].shape[-1])
        tops = [sequence.topk(k, dim=-1).indices for sequence in sequences]
        columns = prediction_rows(
            benchmark,
            positions,
            samples,
            torch.stack([sequence[:1] for sequence in sequences]),
            keep_logits,
            shard,
        )
        columns["frame_top5"] = [top.tolist() for top in tops]
        columns["frame_predictions"] = [top[:, 0].tolist() for top in tops]
        return columns
    logits = logits.detach().to(torch.float32).cpu()
    n = len(samples)
    columns: dict[str, list[Any]] = {name: [None] * n for name in PREDICTION_SCHEMA.names}
    columns["shard"] = [shard] * n
    columns["position"] = list(positions)
    columns["sample_id"] = [s.sample_id for s in samples]
    columns["label"] = [int(s.label) for s in samples]
    columns["metadata"] = [json.dumps(s.metadata, sort_keys=True, default=str) for s in samples]
    for key in (
        "clean_sample_id",
        "corruption",
        "severity",
        "variant",
        "perturbation",
        "difficulty",
        "is_ood",
    ):
        columns[key] = [s.metadata.get(key) for s in samples]
    k = min(TOP_K, logits.shape[-1])
    if benchmark.task == "sequence":
        top = logits.topk(k, dim=-1).indices  # (n, T, k)
        columns["frame_top5"] = top.tolist()
        columns["frame_predictions"] = top[..., 0].tolist()
        last = logits[:, 0]  # the clean first frame stands for the sequence in the generic columns
    else:
        last = logits
    probabilities = last.softmax(dim=-1)
    confidence, prediction = probabilities.max(dim=-1)
    columns["prediction"] = prediction.tolist()
    columns["top5"] = last.topk(k, dim=-1).indices.tolist()
    columns["confidence"] = confidence.tolist()
    labels = torch.tensor(columns["label"], dtype=torch.int64)
    valid = (labels >= 0) & (labels < last.shape[-1])
    true_probability = torch.full((n,), math.nan)
    if valid.any():
        true_probability[valid] = probabilities[valid, labels[valid]]
    columns["true_probability"] = true_probability.tolist()
    subset = benchmark.class_subset
    if subset is not None and last.shape[-1] == 1000:
        indices = torch.as_tensor(subset.class_indices, dtype=torch.int64)
        sub_logits = last[:, indices]
        # ObjectNet: the argmax over its 125 classes, named by its group (= the argmax of the group maxima)
        columns["subset_prediction"] = subset.group_of[indices[sub_logits.argmax(dim=-1)]].tolist()
        if benchmark.task == "ood":
            # Hendrycks et al. (2021): anomaly score = -max softmax over ImageNet-O's 200 classes.
            columns["ood_score"] = (-sub_logits.softmax(dim=-1).max(dim=-1).values).tolist()
    else:
        columns["subset_prediction"] = list(columns["prediction"])
    if keep_logits:
        columns["logits"] = last.tolist()
    return columns


def empty_columns() -> dict[str, list[Any]]:
    return {name: [] for name in PREDICTION_SCHEMA.names}


def to_table(
    columns: dict[str, list[Any]], skipped: dict[str, Any] | None = None, num_positions: int | None = None
) -> pa.Table:
    """A chunk's columns as a table; the chunk's skip report, and how many positions of the stream it covered
    (skipped samples included: what a resumed run's progress bar counts as done), ride in the schema metadata."""
    table = pa.table(columns, schema=PREDICTION_SCHEMA)
    metadata = {}
    if skipped is not None:
        metadata["hf_vitrobust.skipped"] = json.dumps(skipped)
    if num_positions is not None:
        metadata[CHUNK_POSITIONS_KEY] = str(num_positions)
    return table.replace_schema_metadata(metadata) if metadata else table


def with_derived_columns(table: pa.Table) -> pa.Table:
    """A chunk or predictions table with the "clean_sample_id" and "shard" columns. Tables written before the
    columns existed (an old run folder being resumed or published) get them as their runs made them: the clean id is
    the sample id after "<corruption>/<severity>/" for a generated sample (its metadata says "generated"), None for
    any other; the shard is 0 (those runs cut one whole stream, whose positions are in order). A table that has both
    is returned as it is.
    """
    if "shard" not in table.schema.names:  # written before streams were cut per shard: one stream, in order
        table = table.add_column(
            0, PREDICTION_SCHEMA.field("shard"), pa.array([0] * table.num_rows, pa.int64())
        )
    if "clean_sample_id" in table.schema.names:
        return table
    sample_ids = table.column("sample_id").to_pylist()
    generated = [
        bool(json.loads(text).get("generated")) if text else False
        for text in table.column("metadata").to_pylist()
    ]
    derived = [
        sample_id.split("/", 2)[-1] if made else None
        for sample_id, made in zip(sample_ids, generated, strict=True)
    ]
    index = PREDICTION_SCHEMA.get_field_index("clean_sample_id")
    return table.add_column(index, PREDICTION_SCHEMA.field(index), pa.array(derived, pa.string()))


def chunk_skips(table: pa.Table) -> dict[str, Any]:
    metadata = table.schema.metadata or {}
    raw = metadata.get(b"hf_vitrobust.skipped")
    return json.loads(raw) if raw else {"skipped": {}, "examples": [], "converted_to_rgb": {}}


__all__ = [
    "CHUNK_POSITIONS_KEY",
    "PREDICTION_SCHEMA",
    "TOP_K",
    "chunk_skips",
    "empty_columns",
    "keeps_logits",
    "prediction_rows",
    "to_table",
    "with_derived_columns",
]
