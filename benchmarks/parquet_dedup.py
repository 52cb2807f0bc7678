# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""What a re-push of a predictions file uploads after a small change, written as `datasets` writes parquet (ours:
`hf_vitrobust.evaluation.parquet_options.write_parquet`, content-defined chunking and a page index) or as before
(`pq.write_table`).

A realistic ImageNet-C predictions table (`--rows`, 95 rows per clean image: 19 corruptions x 5 severities, no
logits) is written, then a second version after each change a re-run makes: a few predictions changed in place,
rows inserted in the middle (samples once skipped now read), rows inserted at the start, rows appended (a raised
--limit), and the same rows again. Each pair goes through Xet's own chunker and de-duplication (hf_xet, the client
`huggingface_hub` uploads with, into a local CAS folder: nothing leaves the machine): the second file's bytes that
Xet finds in the first are not uploaded again. Also reported: write time and file size. A third layout, our options
without dictionary encoding, is measured for comparison only (it is not what `datasets` or this package writes).

    python benchmarks/parquet_dedup.py --rows 1000000
"""

from __future__ import annotations

import argparse
import io
import json
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hf_vitrobust.analysis.predictions import PREDICTION_SCHEMA
from hf_vitrobust.constants import ALL_CORRUPTIONS
from hf_vitrobust.evaluation.parquet_options import parquet_write_options, row_group_rows, write_parquet


def predictions_table(rows: int, start: int = 0, seed: int = 0) -> pa.Table:
    """`rows` ImageNet-C predictions rows (positions `start`..), of `PREDICTION_SCHEMA`: per clean image its 95
    corrupted versions, a top-1 accuracy falling with severity, random confidences; seeded, so two calls with the
    same arguments give the same table."""
    rng = np.random.default_rng(seed)
    index = np.arange(start, start + rows)
    clean, severity = index // 95, index % 5 + 1
    corruption = pa.array(ALL_CORRUPTIONS).take(pa.array((index // 5) % len(ALL_CORRUPTIONS)))
    label = (clean * 7919) % 1000
    right = rng.random(rows) < 0.8 - 0.1 * severity
    prediction = np.where(right, label, rng.integers(0, 1000, rows))
    top5 = np.column_stack([prediction, rng.integers(0, 1000, (rows, 4))]).ravel()
    confidence = rng.random(rows, dtype=np.float32)
    image = pc.binary_join_element_wise(
        pc.utf8_lpad(pc.cast(pa.array(label), pa.string()), 8, "0"),
        pc.utf8_lpad(pc.cast(pa.array(clean + 1), pa.string()), 8, "0"),
        "/ILSVRC2012_val_",
    )
    image = pc.binary_join_element_wise("n", image, ".JPEG", "")
    severity_text = pc.cast(pa.array(severity), pa.string())
    metadata = pc.binary_join_element_wise(
        '{"corruption": "', corruption, '", "generated": true, "severity": ', severity_text, "}", ""
    )
    nulls = pa.nulls(rows)
    columns = {
        "shard": np.zeros(rows, np.int64),
        "position": index,
        "sample_id": pc.binary_join_element_wise(corruption, severity_text, image, "/"),
        "clean_sample_id": image,
        "label": label,
        "prediction": prediction,
        "top5": pa.FixedSizeListArray.from_arrays(pa.array(top5), 5).cast(pa.list_(pa.int64())),
        "confidence": confidence,
        "true_probability": np.where(right, confidence, confidence / 10),
        "subset_prediction": prediction,
        "ood_score": nulls,
        "corruption": corruption,
        "severity": severity,
        **{name: nulls for name in ("variant", "perturbation", "difficulty", "is_ood")},
        **{name: nulls for name in ("frame_predictions", "frame_top5", "logits")},
        "metadata": metadata,
    }
    return pa.table(columns).cast(PREDICTION_SCHEMA)


def with_logits(table: pa.Table) -> pa.Table:
    """`table` as a clean benchmark's predictions: 1000 seeded random logits a row (4 kB)."""
    logits = np.random.default_rng(0).standard_normal(table.num_rows * 1000).astype(np.float32)
    column = pa.FixedSizeListArray.from_arrays(pa.array(logits), 1000).cast(pa.list_(pa.float32()))
    return table.set_column(table.schema.get_field_index("logits"), "logits", column)


def second_versions(first: pa.Table) -> dict[str, pa.Table]:
    """The file after each change a re-run makes (the name says which)."""
    rows, middle = first.num_rows, first.num_rows // 2
    edited = first["prediction"].to_numpy().copy()
    edited[7::1000] = (edited[7::1000] + 1) % 1000  # one prediction in a thousand changed
    return {
        "same rows": first,
        "0.1% predictions changed": first.set_column(
            first.schema.get_field_index("prediction"), "prediction", pa.array(edited)
        ),
        "100 rows inserted mid-file": pa.concat_tables(
            [first.slice(0, middle), predictions_table(100, start=middle, seed=1), first.slice(middle)]
        ),
        "100 rows inserted at the start": pa.concat_tables([predictions_table(100, seed=2), first]),
        "1% rows appended": pa.concat_tables([first, predictions_table(rows // 100, start=rows, seed=3)]),
    }


def deduplicated(first: bytes, second: bytes, cas: Path) -> tuple[int, int]:
    """(bytes of `second`, bytes of it Xet had to store anew) after `first` went into the local CAS `cas`."""
    import hf_xet

    session = hf_xet.XetSession()
    metrics = []
    for name, data in (("first", first), ("second", second)):
        with session.new_upload_commit(endpoint=f"local://{cas}") as commit:
            upload = commit.start_upload_bytes(data, name=name)
        metrics.append(upload.result().dedup_metrics)
    return metrics[1].total_bytes, metrics[1].new_bytes


def _without_dictionary(where: io.BytesIO, table: pa.Table) -> None:
    options = parquet_write_options(table.schema) | {"use_dictionary": False}
    pq.write_table(table, where, row_group_size=row_group_rows(table), **options)


LAYOUTS: dict[str, Callable[[io.BytesIO, pa.Table], None]] = {
    "ours (datasets' options)": write_parquet,
    "before (pq.write_table)": lambda where, table: pq.write_table(table, where),
    "ours without dictionary (comparison)": _without_dictionary,
}


def chunk_write_seconds(repeats: int = 5) -> dict[str, dict[str, float]]:
    """Median seconds to write one chunk file of the paper suite (`chunk_size` 1024), per layout: an ImageNet-C
    chunk (1024 clean images x 95 rows) and a clean benchmark's chunk (1024 rows with logits)."""
    chunks = {
        "ImageNet-C chunk, 97,280 rows": predictions_table(1024 * 95),
        "clean chunk with logits, 1,024 rows": with_logits(predictions_table(1024)),
    }
    seconds: dict[str, dict[str, float]] = {}
    for chunk, table in chunks.items():
        for layout, write in list(LAYOUTS.items())[:2]:
            times = []
            for _ in range(repeats):
                began = time.perf_counter()
                write(io.BytesIO(), table)
                times.append(time.perf_counter() - began)
            seconds.setdefault(chunk, {})[layout] = float(np.median(times))
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="parquet-dedup-hf-") as home:
        os.environ.setdefault("HF_HOME", home)  # hf_xet's logs
        measure(args.rows, args.json)


def measure(rows: int, json_path: Path | None) -> None:
    """Run the measurements of the module docstring and print them (and write them to `json_path`)."""
    first = predictions_table(rows)
    versions = second_versions(first)
    print(f"{rows:,} ImageNet-C predictions rows; {len(versions)} second versions; Xet chunker: hf_xet")
    figures = {}
    for layout, write in LAYOUTS.items():
        buffer = io.BytesIO()
        began = time.perf_counter()
        write(buffer, first)
        seconds = time.perf_counter() - began
        written = buffer.getvalue()
        row = {"write_s": seconds, "size": len(written), "new_bytes": {}}
        for change, second in versions.items():
            other = io.BytesIO()
            write(other, second)
            with tempfile.TemporaryDirectory() as cas:
                total, new = deduplicated(written, other.getvalue(), Path(cas))
            row["new_bytes"][change] = (new, total)
        figures[layout] = row
        print(f"\n{layout}: write {seconds:.2f} s, {len(written) / 1e6:.1f} MB")
        for change, (new, total) in row["new_bytes"].items():
            print(
                f"  {change:32s} re-upload {new / 1e6:7.2f} MB of {total / 1e6:6.1f} MB ({new / total:6.1%})"
            )
    chunk_seconds = chunk_write_seconds()
    print("\nOne chunk file (median of 5 writes):")
    for chunk, per_layout in chunk_seconds.items():
        print(
            f"  {chunk:36s} " + ", ".join(f"{layout} {s * 1000:.0f} ms" for layout, s in per_layout.items())
        )
    if json_path:
        json_path.write_text(json.dumps({"files": figures, "chunk_write_s": chunk_seconds}, indent=2) + "\n")


if __name__ == "__main__":
    main()
