# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The per-image record of a merged probe dict (`PER_IMAGE`): the images' sample ids and one value per image, what a
paired comparison of two models on the same images needs. A probe's partials carry `per_image_record(...)` and its
merge concatenates them in chunk order (`merged_per_image`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch

#: The key of a merged probe dict's per-image record: {"keys": [sample id, ...], <value>: [per-image value, ...]},
#: what a paired comparison of two models on the same images needs (`analysis.findings`).
PER_IMAGE = "per_image"


def per_image_record(sample_ids: torch.Tensor | Sequence[int], **values: torch.Tensor) -> dict[str, list]:
    """A partial's per-image record: the images' stable sample ids (the runner's keys, the same in every run of
    the same data) and, per name, one value (or one row of values) per image, as plain lists."""
    record: dict[str, list] = {"keys": torch.as_tensor(sample_ids).cpu().tolist()}
    for name, value in values.items():
        value = torch.as_tensor(value).cpu()
        if len(value) != len(record["keys"]):
            raise ValueError(f"per-image {name!r} has {len(value)} rows for {len(record['keys'])} images.")
        record[name] = value.tolist()
    return record


def per_image_of(probe: Mapping[str, Any]) -> Mapping[str, list]:
    """A merged probe dict's per-image record; LookupError when it has none (a run made before it was kept)."""
    record = probe.get(PER_IMAGE)
    if not record:
        raise LookupError("the probe kept no per-image record (a run made before it was recorded)")
    return record


def merged_per_image(partials: Sequence[Mapping[str, Any]]) -> dict[str, list] | None:
    """The partials' per-image records concatenated in chunk order; None when some partial has none (written
    before it was recorded)."""
    records = [partial.get(PER_IMAGE) for partial in partials]
    if not records or any(record is None for record in records):
        return None
    return {name: [item for record in records for item in record[name]] for name in records[0]}


__all__ = ["PER_IMAGE", "merged_per_image", "per_image_of", "per_image_record"]
