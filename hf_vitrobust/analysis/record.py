# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Building a run's results record (results.json, its schema in `results`): the record a run starts with, each
benchmark's entry, and the environment and provenance they name."""

from __future__ import annotations

import datetime as _datetime
import platform
import re
import sys
from collections.abc import Iterable, Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

import torch

from ..data import Benchmark
from ..probes.base import json_safe
from .results import SCHEMA, SCHEMA_VERSION

_LIBRARIES = ("torch", "torchvision", "transformers", "timm", "accelerate", "datasets", "evaluate", "numpy")


def utc_now() -> str:
    return _datetime.datetime.now(_datetime.UTC).isoformat(timespec="seconds")


def environment(device: torch.device, num_processes: int) -> dict[str, Any]:
    """The software and hardware a run used (no host names, paths or user names)."""
    versions = {}
    for name in _LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    devices = []
    if device.type == "cuda" and torch.cuda.is_available():
        devices = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(terse=True),
        "machine": platform.machine(),
        "libraries": versions,
        "cuda": torch.version.cuda if torch.cuda.is_available() else None,
        "device_type": device.type,
        "devices": devices,
        "num_processes": num_processes,
        "cpu_threads": torch.get_num_threads(),
    }


def _git(root: Path, *args: str) -> str | None:
    import subprocess

    try:
        done = subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def provenance() -> dict[str, Any]:
    """The source tree the package was imported from: {"hf_vitrobust_version", "git_commit", "git_dirty"}.

    git_commit is `git rev-parse HEAD` of the folder above the package when that folder is the top of a git
    checkout, and git_dirty whether `git status --porcelain` lists anything there; both None otherwise (an
    installed wheel, no git). Never raises.
    """
    from .. import __version__

    root = Path(__file__).resolve().parents[2]
    commit, dirty = None, None
    top = _git(root, "rev-parse", "--show-toplevel")
    try:
        is_checkout = top is not None and Path(top).resolve() == root
    except (OSError, ValueError):
        is_checkout = False
    if is_checkout:
        commit = _git(root, "rev-parse", "HEAD") or None
        status = _git(root, "status", "--porcelain") if commit else None
        dirty = None if status is None else bool(status)
    return {"hf_vitrobust_version": __version__, "git_commit": commit, "git_dirty": dirty}


def model_key(spec: str, taken: Iterable[str] = ()) -> str:
    """A file-name-safe, unique key for a model spec ("google/vit-base-patch16-224" -> "google_vit-base-patch16-224")."""
    key = re.sub(r"[^A-Za-z0-9._-]+", "_", spec).strip("._") or "model"
    taken = set(taken)
    candidate, counter = key, 2
    while candidate in taken:
        candidate, counter = f"{key}-{counter}", counter + 1
    return candidate


def new_record(
    *,
    version: str,
    suite: Mapping[str, Any],
    seed: int,
    settings: Mapping[str, Any],
    device: torch.device,
    num_processes: int,
    models: list[dict[str, Any]],
    uncertainty: Mapping[str, Any],
) -> dict[str, Any]:
    """The results record a run starts with (complete False; every per-model section empty)."""
    return {
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "created": utc_now(),
        "hf_vitrobust_version": version,
        "complete": False,
        "suite": dict(suite),
        "seed": seed,
        "settings": settings,
        "environment": environment(device, num_processes),
        "provenance": provenance(),
        "models": models,
        "benchmarks": {},
        "metrics": {},
        "probes": {},
        "predictions": {},
        "figures": {},
        "timing": {},
        "summary": {},
        "uncertainty": dict(uncertainty),
        "intervals": {},
    }


def benchmark_record(
    benchmark: Benchmark,
    source: Mapping[str, Any],
    *,
    num_samples: int,
    num_source_items: int,
    skipped: Mapping[str, Any],
    options: Mapping[str, Any],
    protocol: Mapping[str, Any],
    subset: Mapping[str, Any],
) -> dict[str, Any]:
    """A benchmark's entry of results.json "benchmarks" (see the schema in `results`)."""
    return {
        "task": benchmark.task,
        "kind": benchmark.kind,
        "label_space": benchmark.label_space,
        "source": dict(source),
        "generated": bool(source.get("generated", False)),
        "num_samples": num_samples,
        "num_source_items": num_source_items,
        "skipped": dict(skipped),
        "options": json_safe(dict(options)),
        "protocol": json_safe(dict(protocol)),
        "subset": dict(subset),
    }


def predictions_path(model_key: str, benchmark: str) -> str:
    """Where a model's predictions of a benchmark are kept, relative to the run folder."""
    return f"predictions/{model_key}/{benchmark}.parquet"


__all__ = [
    "benchmark_record",
    "environment",
    "model_key",
    "new_record",
    "predictions_path",
    "provenance",
    "utc_now",
]
