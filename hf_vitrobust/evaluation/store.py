# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The run folder on disk: every file is written atomically (`hf_vitrobust.atomic_files`), so a kill or a full disk
never leaves a truncated one. The chunk files of a stream are the unit of resume: a chunk whose file exists is done.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import torch

from ..atomic_files import atomic_path, write_text_atomic


def write_json_atomic(path: Path, value: Any) -> None:
    """JSON in the dict's own key order (a report read back from the file lays out exactly as the first one) with a
    final newline; NaN is refused (results must be valid JSON for any reader)."""
    write_text_atomic(path, json.dumps(value, indent=2, allow_nan=False) + "\n")


def write_parquet_atomic(path: Path, table: pa.Table) -> None:
    with atomic_path(path) as temporary:
        pq.write_table(table, temporary)


def save_tensors_atomic(path: Path, value: dict[str, Any]) -> None:
    """A dict of tensors, numbers, strings, lists and dicts, readable with `torch.load(weights_only=True)`."""
    with atomic_path(path) as temporary:
        torch.save(value, temporary)


def load_tensors(path: Path) -> dict[str, Any]:
    return torch.load(path, map_location="cpu", weights_only=True)


class ChunkStore:
    """The chunk files of one stream (a model's benchmark or probe): `<root>/chunk-<k>.<suffix>`, and a marker per
    rank saying how many chunks the stream had when that rank finished reading it."""

    def __init__(self, root: Path, suffix: str) -> None:
        self.root = Path(root)
        self.suffix = suffix

    def path(self, index: int) -> Path:
        return self.root / f"chunk-{index:06d}.{self.suffix}"

    def is_done(self, index: int) -> bool:
        return self.path(index).is_file()

    def done_indices(self) -> set[int]:
        if not self.root.is_dir():
            return set()
        return {
            int(p.name[len("chunk-") : -len(self.suffix) - 1])
            for p in self.root.glob(f"chunk-*.{self.suffix}")
        }

    def mark_complete(self, rank: int, num_chunks: int, num_items: int) -> None:
        write_json_atomic(
            self.root / f"complete-rank{rank}.json", {"num_chunks": num_chunks, "num_items": num_items}
        )

    def completion(self, rank: int) -> dict[str, int] | None:
        path = self.root / f"complete-rank{rank}.json"
        return json.loads(path.read_text()) if path.is_file() else None

    def missing(self, num_chunks: int) -> list[int]:
        done = self.done_indices()
        return [index for index in range(num_chunks) if index not in done]


__all__ = [
    "ChunkStore",
    "load_tensors",
    "save_tensors_atomic",
    "write_json_atomic",
    "write_parquet_atomic",
]
