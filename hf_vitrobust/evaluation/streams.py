# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""A benchmark's stream cut into chunks, and the worker that turns one chunk of raw samples into model pixels.

`StreamPlan` says what is chunked: the benchmark's own raw samples, or, for ImageNet-C / ImageNet-P generated on the
fly, the clean source's raw samples (each chunk of clean images is then corrupted by the generated source, so the
expensive corruption happens only in the process that owns the chunk). The stream is cut per shard of that source
(its files, `Source.shards()`), and `ReadAssignment` gives each process its own shards, so that a process reads only
the files it evaluates. `ChunkDataset` is an `IterableDataset`: DataLoader workers decode, corrupt and preprocess
chunks in parallel while the main process runs the model (and, with `StreamPlan.corruption_device`, corrupts them
on the model's device first). A worker hands each chunk over in pieces of about one model batch (`chunk_pieces`), as
soon as each is ready, so that the model starts on a chunk's first images while the worker makes the rest
(`evaluation/chunk_batches.py` puts the pieces back into the chunk's model batches).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import torch
from PIL import Image
from torch.utils.data import IterableDataset, get_worker_info

from ..analysis.protocols import IMAGE_LIST_FILES
from ..corruptions.export import stable_sample_index
from ..data import Benchmark, Source, load_benchmark
from ..data.balanced_batches import class_balanced_subset
from ..data.image_lists import file_name, image_list, listed_samples
from ..data.real_labels import check_real_labelled
from ..data.samples import InMemorySource, RawSample, Sample, SkipReport, decode_raw_sample
from ..models.classifier import Preprocessing
from .suite import SUBSETS, BenchmarkSpec


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
    corruption_device: where a generated benchmark's images are corrupted: None in the DataLoader workers (the
        CPU), else in the main process on this device (`GeneratedSource.generate_prepared`), after the workers
        decoded and prepared the clean images.

    The stream is cut per shard of `raw` (`Source.shards()`: its files): chunk (s, k) holds raw samples
    [k * chunk_size, (k + 1) * chunk_size) of shard s. The layout depends only on the shards, never on the
    number of processes or workers.
    """

    benchmark: Benchmark
    source: Source
    raw: Source
    chunk_size: int
    generated: Source | None = None
    options: dict[str, Any] = field(default_factory=dict)
    corruption_device: torch.device | None = None

    _expected: int | None = field(default=None, init=False, repr=False)
    _shards: tuple[str, ...] | None = field(default=None, init=False, repr=False)

    @property
    def positions_per_chunk(self) -> int:
        """Positions reserved per chunk in its shard: chunk k's samples take positions k * this + i."""
        return self.chunk_size * (self.generated.expansion if self.generated is not None else 1)

    def shards(self) -> tuple[str, ...]:
        """The raw source's shards (listed once)."""
        if self._shards is None:
            self._shards = tuple(self.raw.shards())
        return self._shards

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
    benchmark: Benchmark,
    source: Source,
    limit: int | None,
    chunk_size: int,
    options: dict[str, Any],
    corruption_device: torch.device | None = None,
    subset: str = "first",
    seed: int = 0,
) -> StreamPlan:
    """The plan of `source` (already resolved for `benchmark`), keeping the first `limit` images (`Source.limited`,
    per cell where `limits_per_cell(benchmark)`): clean images for a generated benchmark, images of each half for
    ImageNet-O, images of each cell for released ImageNet-C / -P / -9 (every corruption and severity stays
    present), stream samples otherwise. subset "random": a uniform random `limit` of them drawn with `seed`
    instead (`Source.sampled`); "class-balanced": `limit` drawn with `seed` class by class from the labels of every
    row (`data.balanced_batches.class_balanced_subset`). A generated benchmark's chunks are of clean images,
    `expansion` times fewer than `chunk_size`; `corruption_device` says where they are corrupted (see
    `StreamPlan`)."""
    if subset not in SUBSETS:
        raise ValueError(f"subset must be one of {', '.join(SUBSETS)}, got {subset!r}.")
    per_cell = limits_per_cell(benchmark)
    if limit is None:
        limited = source
    elif subset == "random":
        limited = source.sampled(limit, seed, per_cell=per_cell)
    elif subset == "class-balanced":
        if per_cell:
            raise ValueError(f"{benchmark.name}: a class-balanced subset is for a benchmark without cells.")
        limited = class_balanced_subset(source, limit, seed)
    else:
        limited = source.limited(limit, per_cell=per_cell)
    clean = limited.clean_source
    if clean is not None:
        clean_chunk = max(1, chunk_size // limited.expansion)
        return StreamPlan(benchmark, source, clean, clean_chunk, limited, options, corruption_device)
    return StreamPlan(benchmark, source, limited, chunk_size, options=options)


def chunked(raw: Iterator[RawSample], chunk_size: int) -> Iterator[tuple[int, list[tuple[int, RawSample]]]]:
    """(chunk index, [(position, raw sample)]) of consecutive `chunk_size` raw samples."""
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
    """One chunk, or one piece of a chunk, decoded and preprocessed: pixels (n, 3, h, w), or (n, T, 3, h, w) for
    sequences; sequences of different lengths (ImageNet-P's 41-frame translate beside 31-frame ones) stay a list of
    (T_i, 3, h, w). A chunk of a benchmark corrupted on the model's device arrives from the workers with its
    prepared clean samples in `clean` and no pixels yet (`finish_chunk` makes them).

    A chunk cut into pieces (`chunk_pieces`) comes as consecutive pieces of its samples, in order; every piece but
    the last has `last` False, and only the last carries the chunk's skip report and `num_positions`."""

    shard: int
    index: int
    positions: list[int]
    samples: list[Sample]  # images dropped (metadata, labels and ids only)
    pixels: torch.Tensor | list[torch.Tensor] | None
    skipped: dict[str, Any]
    clean: list[Sample] | None = None
    num_positions: int = 0  # positions its raw samples take, skipped ones included (for the progress bar)
    last: bool = True  # the chunk's last piece (a whole chunk is its own last piece)

    @property
    def key(self) -> tuple[int, int]:
        return (self.shard, self.index)


def _without_image(sample: Sample) -> Sample:
    return Sample(torch.empty(0, dtype=torch.uint8), sample.label, sample.sample_id, sample.metadata)


def check_piece_size(piece_size: Any) -> None:
    """A ValueError unless `piece_size` is None or a positive int."""
    if piece_size is not None and (
        isinstance(piece_size, bool) or not isinstance(piece_size, int) or piece_size < 1
    ):
        raise ValueError(f"piece_size must be None or a positive integer, got {piece_size!r}.")


def prepare_chunk(
    plan: StreamPlan,
    index: int,
    items: list[tuple[int, RawSample]],
    preprocessing: Preprocessing,
    shard: int = 0,
) -> ChunkInputs:
    """Decode (and corrupt, for a generated benchmark corrupted in the workers) one chunk, whole; bad samples are
    skipped and reported. For a benchmark corrupted on the model's device, only the clean images are decoded and
    prepared (`GeneratedSource.prepare_clean`); `finish_chunk` does the rest in the main process."""
    (chunk,) = chunk_pieces(plan, index, items, preprocessing, shard, piece_size=None)
    return chunk


def chunk_pieces(
    plan: StreamPlan,
    index: int,
    items: list[tuple[int, RawSample]],
    preprocessing: Preprocessing,
    shard: int = 0,
    piece_size: int | None = None,
) -> Iterator[ChunkInputs]:
    """One chunk as `prepare_chunk` makes it, handed over in consecutive pieces of `piece_size` samples (the last
    one shorter; None: the whole chunk in one piece), each made only when the previous one was taken: the images
    are decoded, generated (every cell of each generation batch, in the generated source's order) and preprocessed
    lazily, so that the first piece is ready after one piece's work rather than the whole chunk's. The samples,
    their order and their pixels are those of the whole chunk whatever `piece_size`. A chunk corrupted on the
    model's device comes whole (its clean images)."""
    check_piece_size(piece_size)
    report = SkipReport()
    num_positions = len(items) * (plan.positions_per_chunk // plan.chunk_size)
    if plan.generated is not None and plan.corruption_device is not None:
        kept = [sample for _, raw in items if (sample := decode_raw_sample(raw, report)) is not None]
        prepared = plan.generated.prepare_clean(kept, report)
        yield ChunkInputs(
            shard, index, [], [], None, report.to_dict(), clean=prepared, num_positions=num_positions
        )
        return
    decoded = _decoded_samples(plan, index, items, report)
    # The preprocessing's skips come after the decoding's and the generation's, as in a chunk made whole.
    preprocessing_report = SkipReport()
    while True:
        piece = list(itertools.islice(decoded, piece_size))
        positions, samples, pixels = _to_pixels(piece, preprocessing, preprocessing_report)
        if piece_size is None or len(piece) < piece_size:
            report.merge(preprocessing_report)
            yield ChunkInputs(
                shard, index, positions, samples, pixels, report.to_dict(), num_positions=num_positions
            )
            return
        yield ChunkInputs(shard, index, positions, samples, pixels, {}, last=False)


def _decoded_samples(
    plan: StreamPlan, index: int, items: list[tuple[int, RawSample]], report: SkipReport
) -> Iterator[tuple[int, Sample]]:
    """(position, decoded sample) of one chunk, lazily: its raw samples decoded one at a time, or, for a generated
    benchmark, its clean images decoded and then generated one generation batch at a time (generated sample j of
    chunk k at position k * positions_per_chunk + j). Skipped samples are recorded in `report`."""
    if plan.generated is None:
        for position, raw in items:
            sample = decode_raw_sample(raw, report)
            if sample is not None:
                yield position, sample
        return
    clean = InMemorySource(
        [sample for _, raw in items if (sample := decode_raw_sample(raw, report)) is not None]
    )
    base = index * plan.positions_per_chunk
    for offset, sample in enumerate(plan.generated.with_clean(clean).samples()):
        yield base + offset, sample
    report.merge(clean.report)


def finish_chunk(chunk: ChunkInputs, plan: StreamPlan, preprocessing: Preprocessing) -> ChunkInputs:
    """A chunk of prepared clean images (from the workers) corrupted on `plan.corruption_device` and turned into
    model pixels; any other chunk as it is."""
    if chunk.clean is None:
        return chunk
    assert plan.generated is not None and plan.corruption_device is not None
    report = SkipReport()
    report.skipped.update(chunk.skipped.get("skipped", {}))
    report.converted.update(chunk.skipped.get("converted_to_rgb", {}))
    report.examples.extend(chunk.skipped.get("examples", []))
    samples = plan.generated.generate_prepared(chunk.clean, plan.corruption_device)
    base = chunk.index * plan.positions_per_chunk
    kept = [(base + offset, sample) for offset, sample in enumerate(samples)]
    positions, kept_samples, pixels = _to_pixels(kept, preprocessing, report)
    return ChunkInputs(
        chunk.shard,
        chunk.index,
        positions,
        kept_samples,
        pixels,
        report.to_dict(),
        num_positions=chunk.num_positions,
    )


def _to_pixels(
    kept: list[tuple[int, Sample]], preprocessing: Preprocessing, report: SkipReport
) -> tuple[list[int], list[Sample], torch.Tensor | list[torch.Tensor] | None]:
    """The model pixels of decoded samples: (positions, samples without their images, pixels stacked when of one
    shape, a list otherwise, None when none is left); a sample the preprocessing fails on is skipped into
    `report`."""
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
    return positions, samples, stacked


@dataclass
class ShardEnd:
    """Yielded by a `ChunkDataset` after it read shard `shard` to its end: how many raw samples and chunks it
    had."""

    shard: int
    num_items: int
    num_chunks: int


@dataclass(frozen=True)
class ReadAssignment:
    """What one process reads of a stream of `num_shards` shards, and which of their chunks it computes.

    With at least as many shards as processes, process r reads the shards s with s % world_size == r and computes
    all their chunks: nothing of another process's shards is read. With fewer shards (one Hub split, a limited
    stream, a local folder) every process reads every shard and computes chunk (s, k) when (s + k) % world_size
    == r: sample-level interleaving, which costs nothing for sources whose raw samples name local files
    (`Source.reads_on_decode`) and world_size times the bytes of the stream otherwise.
    """

    num_shards: int
    rank: int
    world_size: int

    @property
    def by_shard(self) -> bool:
        return self.num_shards >= self.world_size

    @property
    def shards(self) -> list[int]:
        if self.by_shard:
            return [s for s in range(self.num_shards) if s % self.world_size == self.rank]
        return list(range(self.num_shards))

    def owns(self, shard: int, chunk: int) -> bool:
        return self.by_shard or (shard + chunk) % self.world_size == self.rank


def interleaving_cost(name: str, plan: StreamPlan, world_size: int, num_workers: int) -> str | None:
    """The warning for a stream that cannot be split by file among its readers (processes x DataLoader workers),
    saying what it costs; None when it can, or when reading costs nothing (`Source.reads_on_decode`)."""
    if plan.raw.reads_on_decode:
        return None
    num_shards = len(plan.shards())
    workers = max(1, num_workers)
    assignment = ReadAssignment(num_shards, 0, world_size)
    per_process = len(assignment.shards)
    if assignment.by_shard and per_process >= workers:
        return None
    if not assignment.by_shard:
        return (
            f"{name}: {num_shards} shard(s) for {world_size} processes: each process reads every shard and keeps "
            f"one chunk in {world_size}, so the stream's bytes are read {world_size * workers} times in all "
            f"(once per process and DataLoader worker) instead of once; a source of at least {world_size} files "
            "is split by file."
        )
    return (
        f"{name}: {per_process} shard(s) per process for {workers} DataLoader workers: each worker reads all of "
        f"its process's shards and keeps one chunk in {workers}, so they are read {workers} times; fewer "
        "--num-workers, or a source of more files, avoids it."
    )


class ChunkDataset(IterableDataset):
    """The chunks of `plan` that this process computes (`assignment`) and has not yet done (`done`), prepared, each
    in pieces of `piece_size` samples (`chunk_pieces`; None: whole); and a `ShardEnd` after each shard read. Shards
    in `complete` (every chunk on disk) are not read at all.

    With DataLoader workers, worker w reads every `num_workers`-th of the process's shards; when the process has
    fewer shards than workers, each worker reads them all and prepares every `num_workers`-th chunk."""

    def __init__(
        self,
        plan: StreamPlan,
        preprocessing: Preprocessing,
        assignment: ReadAssignment,
        done: set[tuple[int, int]] | None = None,
        complete: set[int] | None = None,
        piece_size: int | None = None,
    ) -> None:
        check_piece_size(piece_size)
        self.plan = plan
        self.preprocessing = preprocessing
        self.assignment = assignment
        self.done = set(done or ())
        self.complete = set(complete or ())
        self.piece_size = piece_size

    def prefetch_factor(self, chunks: int = 2) -> int:
        """A DataLoader `prefetch_factor` that lets each worker run `chunks` whole chunks ahead of the model, in
        pieces (the look-ahead, and the memory it holds, of `chunks` chunks prepared whole)."""
        if self.piece_size is None:
            return chunks
        return chunks * -(-self.plan.positions_per_chunk // self.piece_size)

    def __iter__(self) -> Iterator[ChunkInputs | ShardEnd]:
        info = get_worker_info()
        worker, workers = (0, 1) if info is None else (info.id, info.num_workers)
        shards = [s for s in self.assignment.shards if s not in self.complete]
        split = len(shards) >= workers
        selected = 0
        for shard in shards[worker::workers] if split else shards:
            num_items = num_chunks = 0
            for index, items in chunked(self.plan.raw.shard_raw_samples(shard), self.plan.chunk_size):
                num_chunks, num_items = index + 1, num_items + len(items)
                if not self.assignment.owns(shard, index) or (shard, index) in self.done:
                    continue
                if split or selected % workers == worker:
                    yield from chunk_pieces(
                        self.plan, index, items, self.preprocessing, shard, self.piece_size
                    )
                selected += 1
            yield ShardEnd(shard, num_items, num_chunks)


def read_places(
    plan: StreamPlan, preprocessing: Preprocessing, places: set[tuple[int, int]]
) -> dict[tuple[int, int], tuple[torch.Tensor, int, int]]:
    """(shard, position) -> (pixels, label, stable sample id) for the given places of the stream (the images a probe
    was given): only their shards are read, each up to its last wanted position, and only those samples decoded."""
    found: dict[tuple[int, int], tuple[torch.Tensor, int, int]] = {}
    by_shard: dict[int, set[int]] = {}
    for shard, position in places:
        by_shard.setdefault(shard, set()).add(position)
    for shard, wanted_positions in sorted(by_shard.items()):
        last = max(wanted_positions)
        for index, items in chunked(plan.raw.shard_raw_samples(shard), plan.chunk_size):
            wanted = [(p, raw) for p, raw in items if p in wanted_positions]
            if wanted:
                chunk = prepare_chunk(plan, index, wanted, preprocessing, shard)
                pixels = [] if chunk.pixels is None else chunk.pixels
                for position, sample, pixel in zip(chunk.positions, chunk.samples, pixels, strict=True):
                    found[(shard, position)] = (pixel, sample.label, stable_sample_index(sample.sample_id))
            if items[-1][0] >= last:
                break
    return found


def collate_identity(item: Any) -> Any:
    return item


class ListedSource(Source):
    """The raw samples of a local source whose file names a shipped image list names, in every cell, in the source's
    order: RobustBench's 5,000 images in each ImageNet-C corruption and severity (image_list "robustbench-5000").
    The list is matched by file name, so the source must be countable (local files); `check` refuses, before any
    image is decoded, one that is not or whose sample ids number rows (`data.image_lists.listed_samples`)."""

    def __init__(self, inner: Source, list_name: str) -> None:
        super().__init__()
        self.inner = inner
        self.list_name = list_name
        self.entries = image_list(list_name)
        self._names = frozenset(file_name(entry) for entry in self.entries)
        self.report = inner.report

    def check(self, where: str) -> None:
        """Refuse a source whose samples cannot be selected by file name, before any work."""
        self.inner.validate()
        if self.inner.clean_source is not None or not self.inner.countable:
            raise ValueError(
                f"{where}: the image list {self.list_name} selects images by file name in a local copy of the "
                "release (ImageNet-C's <corruption>/<severity>/<wnid>/<file>); this source "
                f"({self.inner.describe().get('kind')}) is a Hub stream or is generated here, so it cannot be used."
            )
        try:
            listed_samples(self.entries, [raw.sample_id for raw in self.inner.raw_samples()])
        except ValueError as error:
            raise ValueError(f"{where}: {error}") from None

    def validate(self) -> None:
        self.inner.validate()

    def _listed(self, raws: Iterator[RawSample]) -> Iterator[RawSample]:
        return (raw for raw in raws if file_name(str(raw.sample_id)) in self._names)

    def raw_samples(self) -> Iterator[RawSample]:
        return self._listed(self.inner.raw_samples())

    def shards(self) -> tuple[str, ...]:
        return self.inner.shards()

    def shard_raw_samples(self, index: int) -> Iterator[RawSample]:
        return self._listed(self.inner.shard_raw_samples(index))

    def describe(self) -> dict[str, Any]:
        return {**self.inner.describe(), "image_list": self.list_name, "num_listed": len(set(self.entries))}

    @property
    def countable(self) -> bool:
        return self.inner.countable

    @property
    def reads_on_decode(self) -> bool:
        return self.inner.reads_on_decode


def open_benchmark(
    spec: BenchmarkSpec, source: str | None, seed: int, protocol: Mapping[str, str] | None = None
) -> Source:
    """The source of one benchmark of a suite (not yet validated): `source` (from --data or the suite), else the
    benchmark's default. The default may not publish every part a suite asks for (the 4 extra ImageNet-C
    corruptions): those are left out and recorded in its description; a source the user names must hold them all.
    `protocol`'s release_encoding sets how generated ImageNet-C / ImageNet-P images are stored; under its labels
    "real" (ReaL) a source whose samples name no validation file is refused here (`check_real_labelled`); under an
    image_list other than "full" only the listed images are kept (`ListedSource`), a source that cannot be
    selected by file name refused here."""
    missing = "skip" if source is None else "error"
    encoding = (protocol or {}).get("release_encoding")
    opened = load_benchmark(
        spec.name, source, seed=seed, unavailable=missing, release_encoding=encoding, **spec.options
    )
    if (protocol or {}).get("labels") == "real":
        check_real_labelled(opened)
    listed = (protocol or {}).get("image_list", "full")
    if listed != "full":
        opened = ListedSource(opened, IMAGE_LIST_FILES[listed])
        opened.check(f"{spec.name}.image_list={listed}")
    return opened


__all__ = [
    "SUBSETS",
    "ChunkDataset",
    "ChunkInputs",
    "ListedSource",
    "ReadAssignment",
    "ShardEnd",
    "StreamPlan",
    "chunk_pieces",
    "chunked",
    "collate_identity",
    "finish_chunk",
    "interleaving_cost",
    "is_generated",
    "limits_per_cell",
    "open_benchmark",
    "plan_stream",
    "prepare_chunk",
    "read_places",
    "uint8_to_pixels",
]
