# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""results.json: what a run computed and everything needed to trust, reproduce and recompute it.

The schema is versioned ("hf_vitrobust.results", `SCHEMA_VERSION`); a reader refuses a newer version instead of
misreading it. Version 2 records each benchmark's evaluation protocol (`benchmarks.<name>.protocol`) and names the
protocol in the summary's headlines where there is a choice; version 1 runs fed the pre-cropped benchmarks through
each model's own resize and crop and recorded no protocol: reports still read them (and say so), `--resume`
refuses to continue them. Top-level keys:

- schema, schema_version, created (ISO-8601 UTC), hf_vitrobust_version, complete (False while a run is underway);
- suite (the suite's full definition), seed, settings (limit, batch size, precision, compile, workers,
  processes, chunk size, device), environment (Python, platform, library versions, devices);
- models: [{key, spec, name, kind, num_classes, input_size, num_parameters}];
- benchmarks: {name: {task, label_space, source (the source's provenance), generated (True for ImageNet-C/-P
  corrupted on the fly, False for the released files), num_samples, skipped (counts, reasons, examples), options,
  protocol: {the parts of `hf_vitrobust.evaluation.protocols` (preprocessing, class_mask, mce, release_encoding),
  meaning, released_size, class_subset, score, baseline, models: {model key: the preprocessing that ran, its
  input size, and why it differs from the one requested}}}};
- metrics: {model key: {benchmark: metric dict}}; probes: {model key: {probe: merged probe dict}};
- predictions: {model key: {benchmark: relative path of the per-sample parquet}}; figures: {name: relative path};
- timing: {model key: {benchmark or "probe:<name>": seconds}}; summary: {model key: {headline: value}}.
"""

from __future__ import annotations

import datetime as _datetime
import platform
import re
import sys
from collections.abc import Iterable
from importlib import metadata
from typing import Any

import torch

from ..probes.base import json_safe

SCHEMA = "hf_vitrobust.results"
SCHEMA_VERSION = 2

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


def model_key(spec: str, taken: Iterable[str] = ()) -> str:
    """A file-name-safe, unique key for a model spec ("google/vit-base-patch16-224" -> "google_vit-base-patch16-224")."""
    key = re.sub(r"[^A-Za-z0-9._-]+", "_", spec).strip("._") or "model"
    taken = set(taken)
    candidate, counter = key, 2
    while candidate in taken:
        candidate, counter = f"{key}-{counter}", counter + 1
    return candidate


def check_schema(results: dict[str, Any], where: str = "results") -> None:
    """Raise ValueError when `results` is not a results.json this version can read."""
    if results.get("schema") != SCHEMA:
        raise ValueError(f"{where}: not an hf_vitrobust results file (schema {results.get('schema')!r}).")
    version = results.get("schema_version")
    if not isinstance(version, int) or version > SCHEMA_VERSION:
        raise ValueError(
            f"{where}: schema version {version!r} is newer than this hf_vitrobust reads ({SCHEMA_VERSION}); "
            "upgrade hf_vitrobust."
        )


__all__ = ["SCHEMA", "SCHEMA_VERSION", "check_schema", "environment", "json_safe", "model_key", "utc_now"]
