# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""A benchmark's stream cut into chunks, and the worker that turns one chunk of raw samples into model pixels.

`StreamPlan` says what is chunked: the benchmark's own raw samples, or, for ImageNet-C / ImageNet-P generated on the
fly, the clean source's raw samples (each chunk of clean images is then corrupted by the generated source, so the
expensive corruption happens only in the process that owns the chunk). `ChunkDataset` is an `IterableDataset`:
DataLoader workers decode, corrupt and preprocess chunks in parallel while the main process runs the model.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import torch
from PIL import Image
from torch.utils.data import IterableDataset, get_worker_info

from ..data import Benchmark, Source
from ..data.samples import InMemorySource, RawSample, Sample, SkipReport, decode_raw_sample
from ..models.classifier import Preprocessing


def is_generated(source: Source) -> bool:
    """ImageNet-C / ImageNet-P corrupted on the fly from a clean source (`Source.clean_source` is set)."""
    return source.clean_source is not None


def limits_per_cell(benchmark: Benchmark) -> bool:
    """Whether a limit keeps that many images of every cell of `benchmark` rather than of its whole stream: of each
    corruption and severity (ImageNet-C, CIFAR-C), perturbation (ImageNet-P), variant (ImageNet-9), and of each of
    ImageNet-O's two halves, so the metric keeps every cell; a generated benchmark keeps that many clean images,
    each in every cell."""
    return bool(benchmark.corruptions or benchmark.variants) or benchmark.task == "ood"


@dataclass
class StreamPlan:
    """How one benchmark is read.

    source: the benchmark's full source (its `describe()` goes to results.json).
    raw: the source whose raw samples are chunked (the clean source of a generated benchmark, with the limit).
    chunk_size: raw samples per chunk.
    generated: the generated source that, given each chunk of clean samples (`Source.with_clean`), corrupts it;
        or None.
    """

    benchmark: Benchmark
    source: Source
    raw: Source
    chunk_size: int
    generated: Source | None = None
    options: dict[str, Any] = field(default_factory=dict)

    _expected: int | None = field(default=None, init=False, repr=False)

    @property
    def positions_per_chunk(self) -> int:
        """Stream positions reserved per chunk: chunk k's samples take positions k * this + i."""
        return self.chunk_size * (self.generated.expansion if self.generated is not None else 1)

    def expected_samples(self) -> int | None:
        """How many samples a progress bar should expect: from the limit, or by listing a local source once (cheap:
        nothing is decoded; the count is kept for the next model); None for a Hub stream without a limit (the bar
        then shows a count and a rate)."""
        if self._expected is None:
            count = self.raw.count_without_decoding()
            if count is not None:
                self._expected = count * (self.positions_per_chunk // self.chunk_size)
        return self._expected


def plan_stream(
    benchmark: Benchmark, source: Source, limit: int | None, chunk_size: int, options: dict[str, Any]
) -> StreamPlan:
    """The plan of `source` (already resolved for `benchmark`), keeping the first `limit` images (`Source.limited`,
    per cell where `limits_per_cell(benchmark)`): clean images for a generated benchmark, images of each half for
    ImageNet-O, images of each cell for released ImageNet-C / -P / -9 (every corruption and severity stays
    present), stream samples otherwise. A generated benchmark's chunks are of clean images, `expansion` times fewer
    than `chunk_size`."""
    limited = source if limit is None else source.limited(limit, per_cell=limits_per_cell(benchmark))
    clean = limited.clean_source
    if clean is not None:
        clean_chunk = max(1, chunk_size // limited.expansion)
        return StreamPlan(benchmark, source, clean, clean_chunk, limited, options)
    return StreamPlan(benchmark, source, limited, chunk_size, options=options)


def chunked(raw: Iterator[RawSample], chunk_size: int) -> Iterator[tuple[int, list[tuple[int, RawSample]]]]:
    """(chunk index, [(stream position, raw sample)]) of consecutive `chunk_size` raw samples."""
    numbered = enumerate(raw)
    for index in itertools.count():
        items = list(itertools.islice(numbered, chunk_size))
        if not items:
            return
        yield index, items


def uint8_to_pixels(preprocessing: Preprocessing, image: torch.Tensor) -> torch.Tensor:
    """A decoded uint8 (3, H, W) image -> the model's float (3, h, w) pixels in [0, 1], with the model's own resize
    and crop (through PIL, exactly as for a file on disk)."""
    return preprocessing.image_to_tensor(Image.fromarray(image.permute(1, 2, 0).numpy()))


@dataclass
class ChunkInputs:
    """One chunk, decoded and preprocessed: pixels (n, 3, h, w), or (n, T, 3, h, w) for sequences; sequences of
    different lengths in one chunk (ImageNet-P's 41-frame translate beside 31-frame ones) stay a list of
    (T_i, 3, h, w)."""

    index: int
    positions: list[int]
    samples: list[Sample]  # images dropped (metadata, labels and ids only)
    pixels: torch.Tensor | list[torch.Tensor] | None
    skipped: dict[str, Any]


def _without_image(sample: Sample) -> Sample:
    return Sample(torch.empty(0, dtype=torch.uint8), sample.label, sample.sample_id, sample.metadata)


def prepare_chunk(
    plan: StreamPlan, index: int, items: list[tuple[int, RawSample]], preprocessing: Preprocessing
) -> ChunkInputs:
    """Decode (and corrupt, for a generated benchmark) one chunk; bad samples are skipped and reported."""
    report = SkipReport()
    decoded = [(position, decode_raw_sample(raw, report)) for position, raw in items]
    kept = [(position, sample) for position, sample in decoded if sample is not None]
    if plan.generated is not None:
        clean = InMemorySource([sample for _, sample in kept])
        samples = list(plan.generated.with_clean(clean).samples())
        report.merge(clean.report)
        base = index * plan.positions_per_chunk
        kept = [(base + offset, sample) for offset, sample in enumerate(samples)]
    positions, pixels, samples = [], [], []
    for position, sample in kept:
        try:
            if sample.image.dim() == 4:
                pixel = torch.stack([uint8_to_pixels(preprocessing, frame) for frame in sample.image])
            else:
                pixel = uint8_to_pixels(preprocessing, sample.image)
        except (ValueError, RuntimeError, OSError) as error:
            report.skip(sample.sample_id, "preprocessing_failed", str(error))
            continue
        positions.append(position)
        pixels.append(pixel)
        samples.append(_without_image(sample))
    if not pixels:
        stacked = None
    elif len({pixel.shape for pixel in pixels}) == 1:
        stacked = torch.stack(pixels)
    else:
        stacked = pixels
    return ChunkInputs(index, positions, samples, stacked, report.to_dict())


@dataclass
class StreamEnd:
    """The last item of a `ChunkDataset`: how many raw samples and chunks the stream had."""

    num_items: int
    num_chunks: int


class ChunkDataset(IterableDataset):
    """The chunks of `plan` that `wanted(index)` selects (this rank's, not yet done), prepared; then a `StreamEnd`.
    With DataLoader workers, worker w prepares every `num_workers`-th of the selected chunks."""

    def __init__(self, plan: StreamPlan, preprocessing: Preprocessing, wanted: Callable[[int], bool]) -> None:
        self.plan = plan
        self.preprocessing = preprocessing
        self.wanted = wanted

    def __iter__(self) -> Iterator[ChunkInputs | StreamEnd]:
        info = get_worker_info()
        worker, workers = (0, 1) if info is None else (info.id, info.num_workers)
        selected = 0
        num_items = num_chunks = 0
        for index, items in chunked(self.plan.raw.raw_samples(), self.plan.chunk_size):
            num_chunks, num_items = index + 1, num_items + len(items)
            if not self.wanted(index):
                continue
            if selected % workers == worker:
                yield prepare_chunk(self.plan, index, items, self.preprocessing)
            selected += 1
        if worker == 0:
            yield StreamEnd(num_items, num_chunks)


def collate_identity(item: Any) -> Any:
    return item


__all__ = [
    "ChunkDataset",
    "ChunkInputs",
    "StreamEnd",
    "StreamPlan",
    "chunked",
    "collate_identity",
    "is_generated",
    "limits_per_cell",
    "plan_stream",
    "prepare_chunk",
    "uint8_to_pixels",
]
