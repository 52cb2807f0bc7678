# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""One progress bar for the whole run, counting the samples of every process.

Each process adds the samples it evaluated to a small counter file in the run folder after every chunk; the main
process's bar shows their sum, so its rate (samples per second) and ETA are the run's, across processes, even when
the processes read shards of different sizes. The total is the sum of every benchmark's expected samples over every
model; when one of them is unknown (a Hub stream without a declared size) the bar shows the count and rate only.
"""

from __future__ import annotations

import json
from pathlib import Path

from tqdm.auto import tqdm

from ..atomic_files import write_text_atomic


class RunProgress:
    """The run's samples, across processes: `add(n)` after each chunk this process evaluated."""

    def __init__(self, folder: Path, rank: int, world_size: int, total: int | None, enabled: bool) -> None:
        self.folder = Path(folder)
        self.rank = rank
        self.world_size = world_size
        self.count = 0
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
        """What the bar says is running (model and benchmark)."""
        if self.bar is not None:
            self.bar.set_description_str(text)

    def add(self, samples: int) -> None:
        self.count += samples
        if self.world_size > 1:
            write_text_atomic(self._path(self.rank), json.dumps({"samples": self.count}), durable=False)
        if self.bar is not None:
            self.bar.n = self.total_across_processes()
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
        if self.bar is not None:
            self.bar.close()


__all__ = ["RunProgress"]
