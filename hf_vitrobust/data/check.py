# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""A quick look at a benchmark source before a long run: `check_source("imagenet-a", "barkermrl/imagenet-a")`.

For each part of the source (a Hub split, one corruption/severity repository or config, a parquet file, a folder)
it reports what `validate()` found (features, schema, label mode, the known and the found row count) and decodes
the first few samples, printing their labels with the class names of the benchmark's label space. Any mismatch
(a schema error, a row count that differs from the benchmark's, a part whose first samples do not decode, parts
the source does not publish) is listed in `problems`; `vitrobust check-data` exits non-zero when there is one.
A user with Hub access confirms a source in seconds this way: only the first rows of each part are read.
"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from .datasets_source import DatasetsSource
from .loading import Benchmark, ImageNetOSource, get_benchmark, load_benchmark
from .samples import NO_LABEL, RawSample, SchemaError, SkipReport, Source, decode_raw_sample


@dataclass
class PartCheck:
    """What the first rows of one part of a source hold."""

    name: str
    location: str
    features: str | None = None
    rows: dict[str, Any] | None = None
    labels: list[str] = field(default_factory=list)
    image_sizes: list[tuple[int, ...]] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


@dataclass
class SourceCheck:
    """The result of `check_source`: the resolved source, each part's first rows, and every mismatch found."""

    benchmark: str
    source: str
    description: dict[str, Any] = field(default_factory=dict)
    schema: str | None = None
    label_mode: str | None = None
    parts: list[PartCheck] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems and not any(part.problems for part in self.parts)

    def to_text(self) -> str:
        """A plain-text report, one block per part, ending with OK or the list of mismatches."""
        head = f"{self.benchmark} from {self.source}"
        kind = self.description.get("kind")
        if kind:
            head += f" ({kind}"
            head += f", schema {self.schema}, label mode {self.label_mode})" if self.schema else ")"
        lines = [head]
        lines += [f"  note: {note}" for note in self.notes]
        for part in self.parts:
            lines.append(f"  part {part.name}: {part.location}")
            if part.features:
                lines.append(f"    features: {part.features}")
            if part.rows:
                found = part.rows.get("found")
                lines.append(
                    f"    rows: {part.rows['expected']} expected, "
                    + (
                        f"{found} found ({part.rows.get('counted_from')})"
                        if found is not None
                        else "not counted"
                    )
                )
            if part.image_sizes:
                sizes = ", ".join("x".join(map(str, size)) for size in part.image_sizes)
                lines.append(f"    first images (C x H x W): {sizes}")
            if part.labels:
                lines.append(f"    first labels: {'; '.join(part.labels)}")
            if part.skipped:
                lines.append(f"    skipped among the first rows: {part.skipped}")
            lines += [f"    MISMATCH: {problem}" for problem in part.problems]
        lines += [f"  MISMATCH: {problem}" for problem in self.problems]
        count = sum(len(part.problems) for part in self.parts) + len(self.problems)
        lines.append(
            f"OK: {len(self.parts)} part(s) checked, no mismatch"
            if self.ok
            else f"{count} mismatch(es) found"
        )
        return "\n".join(lines)


def _label_text(benchmark: Benchmark, label: int) -> str:
    if label == NO_LABEL:
        return "no label (out-of-distribution)"
    names = benchmark.class_names
    name = names[label] if 0 <= label < len(names) else "outside the label space"
    return f"{label} {name}"


def _features_text(features: Any) -> str:
    from datasets import ClassLabel, Image, Value

    pieces = []
    for column, feature in (features or {}).items():
        if isinstance(feature, ClassLabel):
            head = ", ".join(feature.names[:3])
            pieces.append(f"{column}: ClassLabel({feature.num_classes} names: {head}, ...)")
        elif isinstance(feature, Value):
            pieces.append(f"{column}: {feature.dtype}")
        elif isinstance(feature, Image):
            pieces.append(f"{column}: Image")
        elif isinstance(feature, dict):
            pieces.append(f"{column}: struct({', '.join(feature)})")
        else:
            pieces.append(f"{column}: {type(feature).__name__}")
    return "; ".join(pieces)


def _first_samples(raw: Iterator[RawSample], count: int, part: PartCheck, benchmark: Benchmark) -> None:
    report = SkipReport()
    decoded = 0
    for item in itertools.islice(raw, count):
        sample = decode_raw_sample(item, report)
        if sample is None:
            continue
        decoded += 1
        part.image_sizes.append(tuple(sample.image.shape))
        part.labels.append(_label_text(benchmark, sample.label))
    part.skipped = dict(report.skipped)
    if decoded == 0:
        part.problems.append(
            f"none of the first {count} rows gave a usable sample ({part.skipped or 'no rows'})"
        )


def _check_datasets_source(
    source: DatasetsSource, benchmark: Benchmark, count: int, out: SourceCheck
) -> None:
    """Each part on its own, so that one missing or wrong part does not hide what the others hold."""
    for index, part in enumerate(source.parts):
        key = part.key or part.load_kwargs.get("split", "")
        where = ", ".join(
            f"{name} {part.load_kwargs[arg]}"
            for arg, name in (("name", "config"), ("split", "split"), ("revision", "revision"))
            if part.load_kwargs.get(arg) is not None
        )
        check = PartCheck(str(key or "default"), f"{part.load_kwargs.get('path')} ({where})")
        out.parts.append(check)
        try:
            check.features = _features_text(source.part_features(index))
        except SchemaError as error:
            check.problems.append(str(error))
            continue
        if source.schema is not None:
            out.schema, out.label_mode = source.schema.name, source.schema.label_mode
        check.rows = source.row_counts.get(key)
        if check.rows and "mismatch" in check.rows:
            check.problems.append(check.rows["mismatch"])
        _first_samples(source.part_raw_samples(index), count, check, benchmark)


def _check_any(source: Source, benchmark: Benchmark, count: int, out: SourceCheck, name: str) -> None:
    """Check one source (recursing into ImageNet-O's halves and into a generated source's clean images)."""
    if isinstance(source, ImageNetOSource):
        _check_any(source.ood, benchmark, count, out, "ood")
        if source.in_distribution is not None:
            _check_any(source.in_distribution, get_benchmark("imagenet-val"), count, out, "in-distribution")
        else:
            out.notes.append(
                "no in-distribution half: AUPR needs in_distribution= (ImageNet validation images)"
            )
        return
    clean = source.clean_source
    if clean is not None:
        # A generated source names what it makes of each clean image in its provenance (corruptions of ImageNet-C
        # and CIFAR-C, perturbations of ImageNet-P).
        described = source.describe()
        made = described.get("corruptions") or described.get("perturbations") or ()
        out.notes.append(f"generated on the fly from the clean source below: {', '.join(made)}")
        _check_any(clean, get_benchmark(benchmark.generated_from or benchmark.name), count, out, name)
        return
    unavailable = source.describe().get("unavailable")
    if unavailable:
        out.problems.append(unavailable["reason"])
    if isinstance(source, DatasetsSource) and source.parts:
        _check_datasets_source(source, benchmark, count, out)
        return
    try:
        source.validate()
    except (SchemaError, ValueError, OSError) as error:
        out.problems.append(str(error))
        return
    described = source.describe()
    check = PartCheck(name, str(described.get("location", described.get("kind"))))
    _first_samples(source.raw_samples(), count, check, benchmark)
    out.parts.append(check)


def missing_local_path(source: str | os.PathLike) -> str | None:
    """The path a source names when it is written as a local path that does not exist, else None. Path-like: it
    starts with /, ./, ../ or ~, or holds a path separator without being shaped like a Hub id "org/name" (with an
    optional :config and @revision); "generated:<clean source>" is judged by its clean source."""
    text = os.fspath(source).removeprefix("generated:")
    if not text or text == "builtin":
        return None
    separators = {os.sep, "/"} | ({os.altsep} if os.altsep else set())
    hub_shaped = re.fullmatch(r"[\w.-]+/[\w.-]+(:[\w.-]+)?(@[\w./-]+)?", text) is not None
    path_like = text.startswith(("/", "./", "../", "~")) or (
        any(sep in text for sep in separators) and not hub_shaped
    )
    if path_like and not os.path.exists(os.path.expanduser(text)):
        return text
    return None


def check_source(
    benchmark: str,
    source: str | os.PathLike | None = None,
    *,
    rows: int = 5,
    split: str | None = None,
    corruptions: Sequence[str] | None = None,
    severities: Sequence[int] | None = None,
    variant: str | Sequence[str] | None = None,
    schema: str | None = None,
    in_distribution: str | os.PathLike | None = None,
) -> SourceCheck:
    """Resolve `source` for `benchmark` (None: its default) and read the first `rows` samples of each of its
    parts: features, label mode, row counts, decoded labels with their class names, and every mismatch."""
    if rows < 1:
        raise ValueError(f"rows must be at least 1, got {rows}")
    bench = get_benchmark(benchmark)
    shown = os.fspath(source) if source is not None else f"{bench.default_source} (the default)"
    out = SourceCheck(bench.name, shown)
    missing = missing_local_path(source) if source is not None else None
    if missing is not None:
        out.problems.append(f"no such folder: {missing}")
        return out
    try:
        resolved = load_benchmark(
            bench.name,
            source,
            split=split,
            corruptions=corruptions,
            severities=severities,
            variant=variant,
            schema=schema,
            in_distribution=in_distribution,
        )
    except (SchemaError, ValueError, OSError) as error:
        out.problems.append(str(error))
        return out
    out.description = resolved.describe()
    _check_any(resolved, bench, rows, out, "all")
    return out


__all__ = ["PartCheck", "SourceCheck", "check_source", "missing_local_path"]
