# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""How the evaluation runner picks a probe's images (`select_images`, `select_probe_places`).

Each probe's `ProbeSpec` (how it runs on a chunk, how chunks merge, its report rows and figures) lives in its own
module of `hf_vitrobust.probes` and is registered in `hf_vitrobust.probes.PROBES`; this module keeps the runner's
side: which of a benchmark's clean samples a probe reads.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..analysis.prediction_source import Predictions, as_predictions
from ..data.balanced_batches import class_balanced_order
from ..data.image_lists import check_image_list, file_name, image_list, match_image_list
from ..models.imagenet import imagenet_wnid_to_index
from ..probes.base import check_seed
from ..probes.spec import (
    IMAGE_LIST_SELECTION,
    get_probe,
)

SELECTIONS = ("random", "correct", "first", "class-balanced")


# ------------------------------------------------------------------------------------------------ image selection
def _hash_rank(seed: int, sample_id: str) -> int:
    digest = hashlib.blake2b(f"{seed}/{sample_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def select_images(
    selection: str,
    num_images: int | None,
    sample_ids: Sequence[str],
    labels: np.ndarray | Sequence[int] | None = None,
    predictions: np.ndarray | Sequence[int] | None = None,
    seed: int = 0,
) -> np.ndarray:
    """Positions (int64) of a probe's images among a benchmark's clean samples (fewer if fewer are available).

    "random": `num_images` drawn uniformly without replacement: the samples ranked by a keyed hash (BLAKE2b of
        f"{seed}/{sample_id}"), the smallest taken, returned in ascending position. Which samples are drawn depends
        only on the seed and the set of sample ids, not on their order, the batch size or the number of processes.
    "correct": the first `num_images` positions whose prediction equals the label (labels >= 0), in stream order.
    "first": the first `num_images` positions.
    "class-balanced": the first `num_images` of `data.balanced_batches.class_balanced_order` (seeded, round-robin
        over the classes; labelled samples only), in that order: consecutive chunks are mini-batches of as many
        classes as their size allows (the Hessian probe's batches), whatever the row order, processes or batch size.
    "image-list:<name>": the sample of each entry of the list, by file name (`select_listed_images`), in its order.
    num_images None: every eligible sample.
    """
    if not (isinstance(selection, str) and selection.startswith(IMAGE_LIST_SELECTION)) and (
        selection not in SELECTIONS
    ):
        raise ValueError(f"selection must be one of {SELECTIONS}, got {selection!r}.")
    if num_images is not None and (
        isinstance(num_images, bool) or not isinstance(num_images, int | np.integer)
    ):
        raise ValueError(f"num_images must be a positive int or None, got {num_images!r}.")
    if num_images is not None and num_images < 1:
        raise ValueError(f"num_images must be a positive int or None, got {num_images!r}.")
    check_seed(seed)
    if selection.startswith(IMAGE_LIST_SELECTION):
        return select_listed_images(selection[len(IMAGE_LIST_SELECTION) :], num_images, sample_ids, labels)
    ids = [str(sample_id) for sample_id in sample_ids]
    n = len(ids)
    count = n if num_images is None else min(int(num_images), n)
    if selection == "first":
        return np.arange(count, dtype=np.int64)
    if selection == "class-balanced":
        if labels is None:
            raise ValueError('selection "class-balanced" needs the labels.')
        return class_balanced_order(ids, labels, seed)[:count]
    if selection == "random":
        ranks = sorted(
            range(n), key=lambda position: (_hash_rank(seed, ids[position]), ids[position], position)
        )
        return np.sort(np.asarray(ranks[:count], dtype=np.int64))
    if labels is None or predictions is None:
        raise ValueError('selection "correct" needs the labels and the model\'s predictions.')
    labels = np.asarray(labels)
    predictions = np.asarray(predictions)
    if labels.shape != (n,) or predictions.shape != (n,):
        raise ValueError(
            f"labels and predictions must have shape ({n},), got {labels.shape} and {predictions.shape}."
        )
    correct = np.flatnonzero((labels >= 0) & (predictions == labels))
    return correct[:count].astype(np.int64)


def select_listed_images(
    list_name: str,
    num_images: int | None,
    sample_ids: Sequence[str],
    labels: np.ndarray | Sequence[int] | None = None,
) -> np.ndarray:
    """Positions (int64) of the samples a shipped image list names, one per entry in the list's order (an image
    listed twice comes twice), the first `num_images` of them (None: all); see `select_listed_entries`."""
    return select_listed_entries(list_name, num_images, sample_ids, labels)[0]


def select_listed_entries(
    list_name: str,
    num_images: int | None,
    sample_ids: Sequence[str],
    labels: np.ndarray | Sequence[int] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(positions, entry indices), both (M,) int64: the sample of each matched entry of a shipped image list,
    matched by file name, in the list's order, and the entry's index in the list (the first `num_images`; None:
    all). Each entry is its own evaluation, duplicates included, as Paul & Chen's notebooks scored their list; the
    entry index keys its randomness, so an image listed twice gets two Cutout holes.

    A protocol may fix its images by such a list (Paul & Chen's notebooks did); the list's entries are
    "val/<wnid>/ILSVRC2012_val_XXXXXXXX.JPEG" and a sample matches by the last part of its sample id (local
    ImageNet folders keep the file names). Listed images the data lacks are counted in a warning (and the merged
    result's "image_list"), not silently dropped. Raises ValueError for an unknown list, for sources whose sample
    ids carry no file names (Hub and parquet rows, "row-000123"), and when a matched sample's label is not the
    class of the list's <wnid> (another data set).
    """
    entries = image_list(check_image_list(list_name))
    ids = [str(sample_id) for sample_id in sample_ids]
    match = match_image_list(entries, ids)
    if match.missing:
        logging.getLogger(__name__).warning(
            "Image list %r: %d of its %d images are not in the data (e.g. %s); the probe runs on the other %d.",
            list_name,
            len(match.missing),
            match.unique,
            ", ".join(match.missing[:3]),
            len(match.positions),
        )
    positions = np.asarray(match.positions, dtype=np.int64)
    indices = np.asarray(match.entry_indices, dtype=np.int64)
    if labels is not None:
        to_index = imagenet_wnid_to_index()
        labels = np.asarray(labels)
        wnids = [(entry.split("/")[-2:-1] or [""])[0] for entry in match.entries]
        listed = np.asarray([to_index.get(wnid, -1) for wnid in wnids], dtype=np.int64)
        found = labels[positions]
        wrong = np.flatnonzero((found >= 0) & (listed >= 0) & (found != listed))
        if len(wrong):
            first = int(wrong[0])
            raise ValueError(
                f"Image list {list_name!r}: {len(wrong)} matched samples have another label than the list's class "
                f"(e.g. {file_name(match.entries[first])}: label {int(found[first])}, listed as {wnids[first]} = "
                f"{int(listed[first])}); is this ImageNet-1k validation?"
            )
    if num_images is not None:
        positions, indices = positions[: int(num_images)], indices[: int(num_images)]
    return positions, indices


#: The prediction columns the image selection reads.
SELECTION_COLUMNS = ("sample_id", "label", "prediction", "shard", "position")


def select_probe_places(
    probes: Sequence[Any], frames: Mapping[str, pd.DataFrame | Predictions], seed: int
) -> dict[str, list[tuple[int, int]]]:
    """Probe name -> the (shard, position, key) of its images, chosen by `select_images` from the clean predictions
    of its benchmark (`frames`: benchmark -> predictions, a frame or the file, of which only `SELECTION_COLUMNS` are
    read); probes whose benchmark was not run are left out. key: what keys the image's randomness in the probe,
    None for the sample's own id; an image-list selection gives each entry's index in the list, so an image listed
    twice is two evaluations with their own randomness."""
    selections = {}
    read: dict[str, pd.DataFrame] = {}
    for spec in probes:
        if spec.benchmark not in frames:
            continue
        if spec.benchmark not in read:
            read[spec.benchmark] = as_predictions(frames[spec.benchmark]).frame(SELECTION_COLUMNS)
        frame = read[spec.benchmark]
        selection = get_probe(spec.name).selection_for(spec.params)
        ids, labels = frame["sample_id"].tolist(), frame["label"].to_numpy()
        if selection.startswith(IMAGE_LIST_SELECTION):
            check_seed(seed)
            selected, indices = select_listed_entries(
                selection[len(IMAGE_LIST_SELECTION) :], spec.num_images, ids, labels
            )
            keys = indices.tolist()
        else:
            selected = select_images(
                selection, spec.num_images, ids, labels, frame["prediction"].to_numpy(), seed
            )
            keys = [None] * len(selected)
        rows = np.asarray(selected, dtype=np.int64)
        shards, positions = (
            frame["shard"].to_numpy()[rows].tolist(),
            frame["position"].to_numpy()[rows].tolist(),
        )
        selections[spec.name] = list(zip(shards, positions, keys, strict=True))
    return selections


def keyed_rows(
    found: Mapping[tuple[int, int], tuple[Any, int, int]], places: Sequence[Sequence[Any]]
) -> list[tuple[Any, int, int]]:
    """(pixels, label, key) of each (shard, position, key) place that `found` holds (`read_places`' (pixels,
    label, sample id) per place), in order: the key is the sample id unless the place gives one (a list's entry)."""
    rows = []
    for shard, position, key in places:
        if (shard, position) in found:
            pixels, label, sample_id = found[(shard, position)]
            rows.append((pixels, label, sample_id if key is None else int(key)))
    return rows


__all__ = [
    "SELECTIONS",
    "SELECTION_COLUMNS",
    "keyed_rows",
    "select_images",
    "select_listed_entries",
    "select_listed_images",
    "select_probe_places",
]
