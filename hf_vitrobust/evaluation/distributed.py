# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Who does which chunk: the process group of an `accelerate launch` / `torchrun` run, or one process.

Every benchmark stream is cut into chunks per shard of its source (its files: `Source.shards()`): chunk (s, k)
holds raw samples [k * C, (k + 1) * C) of shard s, whatever the number of processes (`streams.StreamPlan`). With
at least as many shards as processes, process r reads only the shards s with s % world_size == r and computes all
their chunks; with fewer, every process reads every shard and computes chunk (s, k) when (s + k) % world_size == r
(`streams.ReadAssignment`, which warns what that costs). Each process writes each chunk's output to the run folder;
after a barrier, rank 0 merges the chunks in order. So every sample goes to exactly one rank, nothing is gathered
twice (accelerate's `gather_for_metrics` duplicates samples of iterable datasets), and a run on 1 process computes
exactly the chunks a run on 8 processes computes. Probe chunks (lists of selected images) belong to rank k mod
world_size (`ProcessGroup.owns`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import torch


@dataclass
class ProcessGroup:
    """rank / world_size of this process, its device, and the collective operations the runner needs."""

    rank: int
    world_size: int
    device: torch.device
    _state: Any = None

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    def owns(self, chunk_index: int) -> bool:
        """Whether chunk `chunk_index` of a probe's images is this process's to compute."""
        return chunk_index % self.world_size == self.rank

    def barrier(self) -> None:
        if self.world_size > 1:
            self._state.wait_for_everyone()

    def broadcast(self, value: Any) -> Any:
        """Rank 0's `value` on every rank (a picklable object)."""
        if self.world_size == 1:
            return value
        from accelerate.utils import broadcast_object_list

        box = [value]
        broadcast_object_list(box, from_process=0)
        return box[0]


def _launched() -> bool:
    """Whether this process was started by `accelerate launch` or `torchrun` with more than one process."""
    return int(os.environ.get("WORLD_SIZE", "1")) > 1


def process_group(device: str | torch.device | None = None) -> ProcessGroup:
    """The current process group. Under `accelerate launch` / `torchrun` with several processes, accelerate's
    `PartialState` joins the group (NCCL on GPUs, gloo on CPUs); a single process needs no group at all.
    `device` overrides the device of a single process (e.g. "cpu" on a GPU machine)."""
    if _launched():
        from accelerate import PartialState
        from accelerate.utils import parse_flag_from_env

        # PartialState reads ACCELERATE_USE_CPU only through AcceleratorState: pass it on (and fall back to CPU
        # processes with gloo on a machine without CUDA).
        cpu = (
            (device is not None and torch.device(device).type == "cpu")
            or parse_flag_from_env("ACCELERATE_USE_CPU")
            or not torch.cuda.is_available()
        )
        state = PartialState(cpu=cpu)
        return ProcessGroup(state.process_index, state.num_processes, state.device, state)
    if device is None:
        device = "cuda" if torch.cuda.is_available() else "cpu"
    return ProcessGroup(0, 1, torch.device(device))


__all__ = ["ProcessGroup", "process_group"]
