# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""What every benchmark source yields: `Sample`s in one label space, and a `SkipReport` of what it could not use.

A source (Hub dataset, image folder, parquet files, CIFAR-C arrays, ImageNet-P videos, generated corruptions)
turns its own schema into `RawSample`s: undecoded image data plus the label already mapped into the benchmark's
label space. `Source.samples()` decodes them with `decode_image` and skips, counts and reports the ones it cannot
use, so that one bad file never ends a long evaluation and nothing already computed is lost.
"""

from __future__ import annotations

import abc
from collections import Counter
from collections.abc import Iterator
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


@dataclass(frozen=True)
class RawSample:
    """A sample before decoding: `data` is whatever `decode_image` accepts (bytes, a path, a dict with
    "bytes"/"path" as the `datasets` Image feature stores it, a PIL image, an HWC uint8 array or a tensor), or
    an already decoded (T, 3, H, W) uint8 tensor for sequences. `label` is None when the source has no label for it.
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
    """

    def __init__(self) -> None:
        self.report = SkipReport()

    @abc.abstractmethod
    def validate(self) -> None: ...

    @abc.abstractmethod
    def raw_samples(self) -> Iterator[RawSample]: ...

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
