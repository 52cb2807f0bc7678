# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""One progress bar for the whole run, counting the samples of every process, and the run's closing lines.

Each process adds the positions of every chunk it evaluated (skipped samples included: they are done too) to a
small counter file in the run folder; the main process's bar shows their sum, so its rate (samples per second) and
ETA are the run's, across processes, even when the processes read shards of different sizes. The main process reads
the counters again after every barrier (`sync`), so that a process that finished after the main one's last chunk
is counted, and the bar ends at 100 %. A resumed run starts its bar at what the earlier run left on disk
(`add_done_earlier`, tqdm's `initial`: counted, but not in the rate). The total is the sum of every benchmark's
expected samples over every model; when one of them is unknown (a Hub stream without a declared size) the bar
shows the count and rate only.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from tqdm.auto import tqdm

from ..analysis.predictions import CHUNK_POSITIONS_KEY, chunk_skips
from ..atomic_files import write_text_atomic


class RunProgress:
    """The run's samples, across processes: `add(n)` after each chunk this process evaluated."""

    def __init__(self, folder: Path, rank: int, world_size: int, total: int | None, enabled: bool) -> None:
        self.folder = Path(folder)
        self.rank = rank
        self.world_size = world_size
        self.count = 0
        self.done_earlier = 0
        if world_size > 1:
            self.folder.mkdir(parents=True, exist_ok=True)
            write_text_atomic(self._path(rank), json.dumps({"samples": 0}), durable=False)
        self.bar = (
            tqdm(total=total, desc="evaluation", unit="sample", dynamic_ncols=True, smoothing=0.05)
            if enabled and rank == 0
            else None
        )

    def _path(self, rank: int) -> Path:
        return self.folder / f"progress-rank{rank}.json"

    def describe(self, text: str) -> None:
        """What the bar says is running (model and benchmark); the other processes' counts are read again."""
        if self.bar is not None:
            self.bar.set_description_str(text, refresh=False)
        self.sync()

    def add(self, samples: int) -> None:
        """`samples` more positions of a stream done by this process (evaluated or skipped)."""
        self.count += samples
        if self.world_size > 1:
            write_text_atomic(self._path(self.rank), json.dumps({"samples": self.count}), durable=False)
        self.sync()

    def add_done_earlier(self, samples: int) -> None:
        """Samples an earlier run of this folder already evaluated (`--resume`, main process): they count towards
        the bar's position, as tqdm's `initial`, and not towards its rate."""
        self.done_earlier += samples
        if self.bar is not None:
            self.bar.initial += samples
        self.sync()

    def position(self) -> int:
        """What the bar shows: every process's count plus what earlier runs did."""
        return self.done_earlier + self.total_across_processes()

    def sync(self) -> None:
        """Show the counts as they are on disk now (after a barrier, every process's final count of the stream)."""
        if self.bar is not None:
            self.bar.n = self.position()
            self.bar.refresh()

    def total_across_processes(self) -> int:
        """This process's count plus the last count each other process wrote."""
        total = self.count
        for rank in range(self.world_size):
            if rank == self.rank:
                continue
            try:
                total += int(json.loads(self._path(rank).read_text())["samples"])
            except (OSError, ValueError, KeyError):
                continue
        return total

    def close(self) -> None:
        """The final count (every process has passed the run's last barrier), then the bar closes."""
        self.sync()
        if self.bar is not None:
            self.bar.close()


def chunk_positions(path: Path) -> int:
    """How many positions of its stream one chunk file covered, skipped samples included (read from its footer, no
    rows are read). Chunk files of versions that did not record it count their rows and their skipped samples."""
    schema = pq.read_schema(path)
    metadata = schema.metadata or {}
    recorded = metadata.get(CHUNK_POSITIONS_KEY.encode())
    if recorded is not None:
        return int(recorded)
    skips = chunk_skips(schema.empty_table())
    return pq.read_metadata(path).num_rows + sum(skips.get("skipped", {}).values())


def done_positions(paths: Iterable[Path]) -> int:
    """The positions covered by chunk files already on disk (what a resumed run does not compute again)."""
    return sum(chunk_positions(path) for path in paths)


def skipped_lines(results: dict[str, Any], results_path: Path) -> list[str]:
    """The terminal's lines on skipped samples: per benchmark that skipped any, how many and why, and where the
    run lists them (results.json, benchmarks.<name>.skipped.examples: the first of them, with their reasons)."""
    lines = []
    for name, record in results.get("benchmarks", {}).items():
        skipped = record.get("skipped") or {}
        count = int(skipped.get("num_skipped", 0))
        if count == 0:
            continue
        reasons = ", ".join(f"{reason} {n}" for reason, n in sorted(skipped.get("skipped", {}).items()))
        listed = len(skipped.get("examples", []))
        lines.append(
            f"{name}: {count} sample(s) skipped ({reasons}); {listed} listed in {results_path} under "
            f"benchmarks.{name}.skipped.examples"
        )
    return lines


__all__ = ["RunProgress", "chunk_positions", "done_positions", "skipped_lines"]
