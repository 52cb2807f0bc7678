# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Which images a run's sample ids of a benchmark stand for, and whether two runs saw the same ones.

A paired comparison of two models (`uncertainty.compare_models`) matches their predictions by sample id. Within
one run that is the same image by construction. Across runs (`vitrobust report` of several folders) it is the same
image only when both read the same files, or both generated their images on the fly with the same recipe: the
same seed, crop, release encoding and engine give the same pixels for the same sample id
(`data.generated`; `vitrobust corrupt` writes exactly those pixels, but a run that reads its folder reads files,
and nothing in the files says how they were made). A generated run against a run of files, or two generated runs
of different seeds, see different noise for one sample id: their predictions are not paired.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# What decides a generated image beyond its clean image and cell (see GeneratedCorruptionSource.describe and
# GeneratedPerturbationSource.describe).
GENERATION_KEYS = (
    "kind",
    "seed",
    "sample_seed",
    "resize",
    "crop",
    "release_encoding",
    "profile",
    "difficulty",
    "frames",
    "engine",
)


def benchmark_images(info: Mapping[str, Any]) -> dict[str, Any]:
    """What the images behind a run's sample ids of one benchmark are, from its results.json entry
    (`benchmarks.<name>`): {"images": "files"}, or {"images": "generated", <each GENERATION_KEYS the run recorded>}."""
    source = info.get("source") or {}
    if not info.get("generated", source.get("generated", False)):
        return {"images": "files"}
    return {"images": "generated", **{key: source[key] for key in GENERATION_KEYS if key in source}}


def images_differ(first: Mapping[str, Any], second: Mapping[str, Any]) -> str | None:
    """Why the same sample id need not be the same image in two runs (`benchmark_images` of each), or None."""
    if dict(first) == dict(second):
        return None
    if first.get("images") != second.get("images"):
        return (
            "one run generated its images on the fly, the other read files: the same sample id is not the same "
            "image (its noise differs)"
        )
    changed = ", ".join(
        f"{key} {first.get(key)!r} vs {second.get(key)!r}"
        for key in sorted(set(first) | set(second))
        if first.get(key) != second.get(key)
    )
    return (
        f"the runs generated their images differently ({changed}): the same sample id is not the same image"
    )


__all__ = ["GENERATION_KEYS", "benchmark_images", "images_differ"]
