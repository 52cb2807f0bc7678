# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The report's "Data sources" section: what each benchmark's images were, in words (the sample photos bundled with
hf_vitrobust, a local folder, a Hub dataset and its split, or generated on the fly from one of those), read from the
source description the run recorded (`Source.describe()`, results.json `benchmarks.<name>.source`), with the
samples and the skipped images."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..analysis.results import run_names
from ..constants import is_hub_id
from ..probes.display import MISSING, fmt_count
from .blocks import Block, Heading, Table

#: A Hub repository id, "org/name" (a source that read a local copy records its path instead).
#: Sources read with `datasets` from a Hub id or a local copy of one.
_HUB_KINDS = ("hub", "datasets")
#: Local sources other than a Hub copy: the words for what they read.
_LOCAL_KINDS = {
    "image_folder": "a local image folder",
    "parquet": "local parquet files",
    "cifar-c-arrays": "local CIFAR-C arrays",
    "imagenet-p-videos": "local ImageNet-P videos",
}


def _revision(source: Mapping[str, Any]) -> str:
    return f" @ {source['revision']}" if source.get("revision") else ""


def _hub_text(source: Mapping[str, Any]) -> str:
    location = str(source.get("location") or MISSING)
    parts = [str(part) for part in source.get("parts") or [] if part]
    if len(parts) == 1:
        split = f", split {parts[0]}"
    elif parts:
        split = f", {len(parts)} parts ({parts[0]} … {parts[-1]})"
    else:
        split = ""
    where = "a Hub dataset" if is_hub_id(location) else "a local copy of a Hub dataset"
    return f"{where}: {location}{split}{_revision(source)}"


def describe_source(source: Mapping[str, Any]) -> str:
    """What a recorded source's images are, in words: "the sample photos bundled with hf_vitrobust (29 photos: ...)",
    "a local image folder: /data/imagenet-r", "a Hub dataset: org/name, split validation @ rev", "GENERATED on the
    fly (not the released files) from <its clean source, in words>"; a kind this does not know: "<kind>: <location>"."""
    kind = source.get("kind")
    location = str(source.get("location") or MISSING)
    if source.get("generated"):
        clean = source.get("clean")
        if isinstance(clean, Mapping) and clean:
            origin = f" from {describe_source(clean)}"
        else:
            origin = f" from {location}" if source.get("location") else ""
        return f"GENERATED on the fly (not the released files){origin}"
    if kind == "builtin-photos":
        count = f"{fmt_count(source['count'])} photos: " if source.get("count") is not None else ""
        return f"the sample photos bundled with hf_vitrobust ({count}{location}{_revision(source)})"
    if kind in _HUB_KINDS:
        return _hub_text(source)
    if kind in _LOCAL_KINDS:
        split = f", split {source['split']}" if source.get("split") else ""
        return f"{_LOCAL_KINDS[kind]}: {location}{split}"
    if kind == "imagenet-o":
        halves = [
            f"{name}: {describe_source(source[key])}"
            for name, key in (("OOD", "ood"), ("in-distribution", "in_distribution"))
            if isinstance(source.get(key), Mapping)
        ]
        return "; ".join(halves) or location
    if kind == "in-memory":
        return "images given in memory"
    return f"{kind or 'source'}: {location}{_revision(source)}"


def _data_text(bench: Mapping[str, Any]) -> str:
    """A benchmark's data: its source in words (MISSING for a run that recorded neither source nor generation),
    with the parts its source does not publish."""
    source = bench.get("source") or {}
    generated = bench.get("generated", source.get("generated"))
    if not source and generated is None:
        return MISSING
    data = describe_source({**source, "generated": generated})
    cells = (source.get("unavailable") or {}).get("cells") or []
    if cells:
        corruptions = ", ".join(dict.fromkeys(cell.split("/")[0] for cell in cells))
        data += f"; not published by the source, left out: {len(cells)} parts ({corruptions})"
    return data


def _skipped_text(bench: Mapping[str, Any]) -> str:
    skipped = bench.get("skipped") or {}
    count = int(skipped.get("num_skipped") or 0)
    reasons = ", ".join(f"{reason}: {n}" for reason, n in (skipped.get("skipped") or {}).items())
    text = f"{count} ({reasons})" if count and reasons else str(count)
    converted = skipped.get("converted_to_rgb") or {}
    if converted:
        text += "; converted to RGB: " + ", ".join(f"{mode}: {n}" for mode, n in converted.items())
    return text


def data_source_blocks(results: Sequence[Mapping[str, Any]]) -> list[Block]:
    """The "Data sources" section: per run and benchmark, what its data was, its samples and skipped images."""
    rows = []
    several = len(results) > 1
    for run, result in zip(run_names(results), results, strict=True):
        for name, bench in (result.get("benchmarks") or {}).items():
            row = [name, _data_text(bench), fmt_count(bench.get("num_samples")), _skipped_text(bench)]
            rows.append(([run] if several else []) + row)
    if not rows:
        return []
    headers = (["run"] if several else []) + ["benchmark", "data", "samples", "skipped (reasons)"]
    return [Heading(2, "Data sources"), Table(headers, rows, numeric=False)]


__all__ = ["data_source_blocks", "describe_source"]
