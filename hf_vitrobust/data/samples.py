# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""What every benchmark source yields: `Sample`s in one label space, and a `SkipReport` of what it could not use.

A source (Hub dataset, image folder, parquet files, CIFAR-C arrays, ImageNet-P videos, generated corruptions)
turns its own schema into `RawSample`s: undecoded image data plus the label already mapped into the benchmark's
label space. `Source.samples()` decodes them with `decode_image` and skips, counts and reports the ones it cannot
use, so that one bad file never ends a long evaluation and nothing already computed is lost.
"""

from __future__ import annotations

import abc
import hashlib
import heapq
import itertools
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from .decoding import BadSampleError, decode_image

#: Label of a sample that has no class in the benchmark's label space (an ImageNet-O image, an unlabeled image).
NO_LABEL = -1

#: How many skipped samples a report names individually; the rest are only counted.
MAX_REPORTED_SKIPS = 50


class SchemaError(ValueError):
    """A data source whose schema or layout cannot be used; raised before any work starts."""


@dataclass(frozen=True)
class Sample:
    """One decoded sample.

    image: uint8 (3, H, W) RGB, or (T, 3, H, W) for an ImageNet-P sequence, on the CPU.
    label: class index in the benchmark's label space (ImageNet-1k index for the ImageNet variants, 0..9 or 0..99
        for CIFAR), or `NO_LABEL`.
    sample_id: unique and stable within the benchmark (it seeds generated corruptions and keys resumed runs).
    metadata: JSON-safe facts about the sample: corruption, severity, perturbation, difficulty, variant, is_ood.
    """

    image: torch.Tensor
    label: int
    sample_id: str
    metadata: dict[str, Any] = field(default_factory=dict)


class DeferredData(abc.ABC):
    """Raw data that is read only when the sample is decoded (an ImageNet-P video file): listing a stream of these
    reads nothing, so a process opens only the files of its own chunks."""

    @abc.abstractmethod
    def load(self) -> Any:
        """What `decode_image` or the sequence check accepts; raises `BadSampleError` for unusable data."""


@dataclass(frozen=True)
class RawSample:
    """A sample before decoding: `data` is whatever `decode_image` accepts (bytes, a path, a dict with
    "bytes"/"path" as the `datasets` Image feature stores it, a PIL image, an HWC uint8 array or a tensor), or
    an already decoded (T, 3, H, W) uint8 tensor for sequences, or a `DeferredData` that loads one of these.
    `label` is None when the source has no label for it.
    """

    data: Any
    label: int | None
    sample_id: str
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class SkipReport:
    """Samples a stream skipped, counted by reason ("undecodable", "truncated", "not_an_image",
    "missing_label", ...), with the first `MAX_REPORTED_SKIPS` named; and images decoded only after a conversion
    to RGB, counted by source mode ("CMYK", "P", "I;16", ...)."""

    skipped: Counter = field(default_factory=Counter)
    examples: list[dict[str, str]] = field(default_factory=list)
    converted: Counter = field(default_factory=Counter)

    @property
    def num_skipped(self) -> int:
        return sum(self.skipped.values())

    def skip(self, sample_id: str, reason: str, message: str) -> None:
        self.skipped[reason] += 1
        if len(self.examples) < MAX_REPORTED_SKIPS:
            self.examples.append({"sample_id": sample_id, "reason": reason, "message": message})

    def merge(self, other: SkipReport) -> None:
        """Add another report's counts (e.g. from another process) to this one."""
        self.skipped.update(other.skipped)
        self.converted.update(other.converted)
        room = MAX_REPORTED_SKIPS - len(self.examples)
        self.examples.extend(other.examples[: max(room, 0)])

    def to_dict(self) -> dict[str, Any]:
        return {
            "num_skipped": self.num_skipped,
            "skipped": dict(sorted(self.skipped.items())),
            "examples": list(self.examples),
            "converted_to_rgb": dict(sorted(self.converted.items())),
        }


class Source(abc.ABC):
    """A place a benchmark's samples come from. Subclasses map their schema onto `RawSample`s.

    `validate()` checks the schema (columns, label names, files) and raises `SchemaError` naming the problem; it
    runs before any sample is produced, so a wrong source fails in seconds, not an hour into a run.
    `describe()` is the JSON-safe provenance a results file records (kind, location, revision, whether the images
    are generated rather than released).

    What the runner needs to know of a source, each source states itself (the defaults fit a plain stream):

    - `clean_source`: the clean source that a generated source corrupts or perturbs on the fly (None for any other
      source); `with_clean(clean)` is the same generation over another clean source (the runner hands it one chunk
      of clean samples at a time).
    - `expansion`: how many samples one raw item becomes (a generated source's corruptions x severities, or its
      perturbations; 1 for any other source).
    - `limited(limit, per_cell=False)`: the one way a limit is applied; a source that can stop reading early
      (a Hub part holding one cell) overrides it. `sampled(limit, seed, per_cell=False)`: a seeded random subset
      instead of the first `limit` (it reads the whole stream, without decoding).
    - `countable` and `count_without_decoding()`: whether, and how many, raw samples there are without decoding
      anything (local files, the bundled photos), for a progress bar.
    - `shards()` and `shard_raw_samples(index)`: the pieces of the stream that can be read on their own (its files:
      parquet shards, CIFAR-C cells), in stream order; concatenated, their raw samples are `raw_samples()`. A
      process of a distributed run reads only its shards. The default is one shard, the whole stream.
    - `reads_on_decode`: whether a raw sample only names its data (a local file path) and decoding reads it. Then
      every process can list the whole stream for nothing, and one shard cut into chunks costs no extra bytes.
    """

    def __init__(self) -> None:
        self.report = SkipReport()

    @abc.abstractmethod
    def validate(self) -> None: ...

    @abc.abstractmethod
    def raw_samples(self) -> Iterator[RawSample]: ...

    def validate_shards(self, shards: Sequence[int]) -> None:
        """What a process of a distributed run checks before any work: enough to read `shards`, its own. By
        default all of `validate()`; a source of many parts (Hub repositories, parquet files) checks the first
        part (its schema decides how every part is read) and the parts of these shards, so that no process reads
        the first rows of files it will not read. Together the processes check every part."""
        self.validate()

    @abc.abstractmethod
    def describe(self) -> dict[str, Any]: ...

    def samples(self) -> Iterator[Sample]:
        """Decoded samples, in the source's order. Bad ones are skipped and counted in `self.report`."""
        self.validate()
        for raw in self.raw_samples():
            sample = decode_raw_sample(raw, self.report)
            if sample is not None:
                yield sample

    def __iter__(self) -> Iterator[Sample]:
        return self.samples()

    @property
    def clean_source(self) -> Source | None:
        """The clean source this source's samples are generated from (ImageNet-C / -P on the fly), else None."""
        return None

    @property
    def expansion(self) -> int:
        """How many samples this source makes of one raw item of `clean_source` (1 for a source of its own)."""
        return 1

    def with_clean(self, clean: Source) -> Source:
        """The same generation over `clean` instead of `clean_source`; only for a source that has a clean source."""
        raise TypeError(f"{type(self).__name__} is not generated from a clean source.")

    def limited(self, limit: int, per_cell: bool = False) -> Source:
        """A view of the first `limit` raw samples (one that then fails to decode still takes its place).

        per_cell: the first `limit` of every cell instead (a corruption and severity, a perturbation, a variant:
        `CellLimitedSource`), so that a metric computed over cells keeps all of them. Sources made of parts or of
        a clean source override this: ImageNet-O limits each of its halves, a generated source its clean images,
        a Hub source also stops reading a part that holds a single cell.
        """
        return CellLimitedSource(self, limit) if per_cell else LimitedSource(self, limit)

    def sampled(self, limit: int, seed: int, per_cell: bool = False) -> Source:
        """A view of a seeded uniform random subset of `limit` raw samples, in stream order (`SampledSource`: the
        same samples whatever the number of processes, batch or chunk size). It lists the whole stream, without
        decoding, to draw them.

        per_cell: `limit` of every cell instead, the same clean images in every cell where the sample ids name them
        (a released ImageNet-C folder). Sources made of parts or of a clean source override this as they override
        `limited`: ImageNet-O samples each of its halves, a generated source its clean images.
        """
        return SampledSource(self, limit, seed, per_cell)

    @property
    def countable(self) -> bool:
        """Whether listing the raw samples is cheap: nothing is downloaded, decoded or generated (local files)."""
        return False

    def count_without_decoding(self) -> int | None:
        """How many raw samples this source yields, where known without decoding any (by listing a countable
        source once, or from a limit: then at most that many); None otherwise (a Hub stream)."""
        return sum(1 for _ in self.raw_samples()) if self.countable else None

    def shards(self) -> tuple[str, ...]:
        """Names of the pieces of the stream that can be read on their own, in stream order (a file, a cell of
        arrays); the runner cuts each into chunks and gives each process its own. Default: one, the whole stream."""
        return ("",)

    def shard_raw_samples(self, index: int) -> Iterator[RawSample]:
        """The raw samples of shard `index` alone, reading nothing of the others; in order, the shards' raw samples
        are `raw_samples()`."""
        if index != 0:
            raise IndexError(f"{type(self).__name__} has one shard; there is no shard {index}.")
        return self.raw_samples()

    @property
    def reads_on_decode(self) -> bool:
        """Whether listing the raw samples reads no image data (each names a local file that decoding opens)."""
        return False


def decode_raw_sample(raw: RawSample, report: SkipReport) -> Sample | None:
    """Decode one raw sample, or record in `report` why it cannot be used and return None. What `Source.samples`
    does per sample; a runner that decodes only some of a stream's samples (its own shard) calls it directly."""
    if raw.label is None:
        report.skip(raw.sample_id, "missing_label", "the sample has no label")
        return None
    try:
        image = _decode(raw.data, report)
    except BadSampleError as error:
        report.skip(raw.sample_id, error.reason, str(error))
        return None
    return Sample(image=image, label=raw.label, sample_id=raw.sample_id, metadata=dict(raw.metadata))


def _decode(data: Any, report: SkipReport) -> torch.Tensor:
    if isinstance(data, DeferredData):
        data = data.load()
    if isinstance(data, torch.Tensor) and data.dim() == 4:
        if data.dtype != torch.uint8 or data.shape[1] != 3:
            raise BadSampleError(
                "bad_sequence", f"expected uint8 (T, 3, H, W) frames, got {tuple(data.shape)}"
            )
        return data
    decoded = decode_image(data)
    if decoded.converted_from is not None:
        report.converted[decoded.converted_from] += 1
    return decoded.image


class InMemorySource(Source):
    """Already decoded samples as a source: what a generated source (ImageNet-C/-P on the fly) corrupts when the
    runner hands it one chunk of clean samples at a time."""

    def __init__(self, samples: list[Sample], description: dict[str, Any] | None = None) -> None:
        super().__init__()
        self._samples = list(samples)
        self._description = dict(description or {"kind": "in-memory", "generated": False})

    def validate(self) -> None:
        pass

    def raw_samples(self) -> Iterator[RawSample]:
        for sample in self._samples:
            yield RawSample(sample.image, sample.label, sample.sample_id, dict(sample.metadata))

    def samples(self) -> Iterator[Sample]:
        return iter(self._samples)

    def describe(self) -> dict[str, Any]:
        return dict(self._description)

    @property
    def reads_on_decode(self) -> bool:
        return True


class _LimitedView(Source):
    """What the limited and sampled views share: the inner source, the limit, its checks and its skip report."""

    def __init__(self, inner: Source, limit: int) -> None:
        super().__init__()
        if limit < 0:
            raise ValueError(f"limit must be >= 0, got {limit}")
        self.inner = inner
        self.limit = limit
        self.report = inner.report

    def validate(self) -> None:
        self.inner.validate()

    @property
    def countable(self) -> bool:
        return self.inner.countable

    @property
    def reads_on_decode(self) -> bool:
        """A limited or sampled view is one shard (some samples of the inner stream), read as the inner source
        reads."""
        return self.inner.reads_on_decode


class LimitedSource(_LimitedView):
    """The first `limit` raw samples of another source (ones that then fail to decode included, so positions stay
    the same whatever fails to decode). Shares the inner source's skip report. What `Source.limited` makes."""

    def raw_samples(self) -> Iterator[RawSample]:
        return itertools.islice(self.inner.raw_samples(), self.limit)

    def describe(self) -> dict[str, Any]:
        return {
            **self.inner.describe(),
            "limit": self.limit,
            "subset": {"kind": "first", "limit": self.limit, "per_cell": False},
        }

    def count_without_decoding(self) -> int | None:
        """The limit (an upper bound: the inner source may hold fewer)."""
        return self.limit


class CellLimitedSource(_LimitedView):
    """The first `limit` raw samples of every cell of another source: a (corruption, severity) of ImageNet-C and
    CIFAR-C, a perturbation of ImageNet-P, a variant of ImageNet-9. `--limit` on a multi-cell benchmark thus keeps
    every cell (a complete mCE table on few images) instead of the first cells only. The rest of a full cell is
    passed over without decoding. Shares the inner source's skip report. What `Source.limited(limit,
    per_cell=True)` makes (a Hub source's own `limited` also stops reading a part that holds a single cell)."""

    CELL_KEYS = ("corruption", "severity", "perturbation", "difficulty", "variant")

    def raw_samples(self) -> Iterator[RawSample]:
        counts: dict[tuple[Any, ...], int] = {}
        for raw in self.inner.raw_samples():
            cell = tuple(raw.metadata.get(key) for key in self.CELL_KEYS)
            seen = counts.get(cell, 0)
            if seen < self.limit:
                counts[cell] = seen + 1
                yield raw

    def describe(self) -> dict[str, Any]:
        return {
            **self.inner.describe(),
            "limit_per_cell": self.limit,
            "subset": {"kind": "first", "limit": self.limit, "per_cell": True},
        }


def subset_hash(seed: int, key: str) -> int:
    """The 64-bit BLAKE2b hash of `key` keyed by `seed`: what orders the samples of a random subset."""
    digest = hashlib.blake2b(key.encode("utf-8"), digest_size=8, key=str(seed).encode("ascii")).digest()
    return int.from_bytes(digest, "big")


class SampledSource(_LimitedView):
    """A seeded uniform random subset of another source: `limit` raw samples drawn without replacement (all of
    them if there are fewer), yielded in stream order. What `Source.sampled` makes.

    The samples kept are those with the `limit` smallest `subset_hash(seed, key)` (bottom-k sampling: every subset
    of `limit` samples is equally likely), so the choice depends only on the seed and the keys, never on the number
    of processes, the batch size or the chunk size. The key is the sample id; with `per_cell`, the draw is made in
    every cell (`CellLimitedSource.CELL_KEYS`) and the key is the clean image a sample shows (`clean_image_key`,
    else the sample id), so that the cells of a released ImageNet-C folder keep the same clean images (the clusters
    of a cluster bootstrap).

    The whole inner stream is listed once, without decoding, and the kept raw samples (at most `limit` per cell)
    are held until it ends: a path for local files, the undecoded bytes for a Hub stream. Shares the inner
    source's skip report.
    """

    def __init__(self, inner: Source, limit: int, seed: int, per_cell: bool = False) -> None:
        super().__init__(inner, limit)
        self.seed = int(seed)
        self.per_cell = per_cell

    def _key(self, raw: RawSample) -> str:
        if self.per_cell:
            clean = clean_image_key(raw.sample_id, raw.metadata)
            if clean is not None:
                return clean
        return str(raw.sample_id)

    def raw_samples(self) -> Iterator[RawSample]:
        if self.limit == 0:
            return
        # Per cell (or for the whole stream), a max-heap of the kept samples' (hash, stream index), as negatives.
        heaps: dict[tuple[Any, ...], list[tuple[int, int, RawSample]]] = {}
        for index, raw in enumerate(self.inner.raw_samples()):
            cell = (
                tuple(raw.metadata.get(key) for key in CellLimitedSource.CELL_KEYS) if self.per_cell else ()
            )
            heap = heaps.setdefault(cell, [])
            item = (-subset_hash(self.seed, self._key(raw)), -index, raw)
            if len(heap) < self.limit:
                heapq.heappush(heap, item)
            elif item[:2] > heap[0][:2]:  # a smaller hash (or an equal one earlier in the stream)
                heapq.heapreplace(heap, item)
        kept = sorted((-negative_index, raw) for heap in heaps.values() for _, negative_index, raw in heap)
        for _, raw in kept:
            yield raw

    def describe(self) -> dict[str, Any]:
        subset = {"kind": "random", "limit": self.limit, "seed": self.seed, "per_cell": self.per_cell}
        return {**self.inner.describe(), "subset": subset}

    def count_without_decoding(self) -> int | None:
        """Per cell, the count of the view listed once where the inner source is countable (as
        `CellLimitedSource`), else None; otherwise the limit, or fewer where the inner source is known to hold
        fewer."""
        if self.per_cell:
            return super().count_without_decoding()
        inner = self.inner.count_without_decoding()
        return self.limit if inner is None else min(self.limit, inner)


#: The metadata keys that name a sample's cell, in the order their folders lead a released layout's sample ids.
CELL_ID_KEYS = ("corruption", "severity", "perturbation", "difficulty", "variant")


def clean_image_key(sample_id: str, metadata: Mapping[str, Any]) -> str | None:
    """The clean image a sample of a multi-cell benchmark shows, so that its cells can be grouped by image (the
    cluster of a cluster bootstrap, the pair of a paired statistic); None where nothing names it.

    - A generated sample: its `clean_sample_id`.
    - A released layout whose ids lead with the cell's folders (ImageNet-C `<corruption>/<severity>/<wnid>/<file>`,
      ImageNet-P `<perturbation>/<level>/...`, ImageNet-9 `<variant>/[val/]...`, CIFAR-C `<corruption>/<severity>/
      <row>`, whose cells hold the same test images in the same order): the id without those folders.
    - A Hub row id (`.../row-<n>`): None, since rows of different parts are not known to be the same image.
    """
    clean = metadata.get("clean_sample_id")
    if clean:
        return str(clean)
    parts = str(sample_id).split("/")
    cell_values = [str(metadata[key]) for key in CELL_ID_KEYS if metadata.get(key) is not None]
    stripped = 0
    while stripped < len(parts) - 1 and parts[stripped] in cell_values:
        stripped += 1
    if stripped == 0:
        return None
    rest = parts[stripped:]
    if rest[0] == "val" and len(rest) > 1:
        rest = rest[1:]
    if rest[-1].startswith("row-"):
        return None
    return "/".join(rest)
