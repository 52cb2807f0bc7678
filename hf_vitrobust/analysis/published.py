# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The papers' published numbers, shipped as data: `hf_vitrobust/assets/published/published.csv`.

Each row is one number that Paul & Chen (AAAI 2022) or Park & Kim (ICLR 2022) published, read from their official
repositories (a notebook's output cell, a results CSV, a plot) or from the paper, with its source (repository, file
and commit, or the paper's page), how it was read and to what precision, the model it is of (and the Hub or timm id
that holds the same weights, the closest one, or none), the benchmark, metric, condition and protocol (the names of
docs/protocols.md). The folder's README.md describes every column and every source.

`published_numbers()` reads and checks the table once; `check_published` is the check (every row has a source, the
names are known, no two rows contradict each other), run by the tests on the shipped file.
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

#: The papers of the table, by the name `vitrobust reproduce` takes.
PAPERS: dict[str, str] = {
    "paul-chen": "Paul & Chen, Vision Transformers are Robust Learners (AAAI 2022)",
    "park-kim": "Park & Kim, How Do Vision Transformers Work? (ICLR 2022)",
}
MODEL_MATCHES = ("same-weights", "closest", "none")
IMAGE_SETS = ("all", "subset-of-all", "published-list", "unpublished-list", "unknown")
READ_FROM = ("notebook-output", "readme-table", "plot", "results-csv", "paper-table", "paper-text")
NO_PUBLIC_EQUIVALENT = "no public equivalent"
#: The condition keys, in the order a row writes them.
CONDITION_KEYS = ("dataset", "corruption", "severity", "variant", "ratio", "x", "y")
_COMMIT = re.compile(r"[0-9a-f]{40}")
_SLUG = re.compile(r"[a-z0-9][a-z0-9._/=;-]*")


@dataclass(frozen=True)
class PublishedNumber:
    """One published number (one row of published.csv); the columns are described in the folder's README.md."""

    row_id: str
    paper: str
    where: str
    model: str
    model_key: str
    model_id: str
    model_match: str
    benchmark: str
    metric: str
    condition: str
    protocol: str
    value: float
    unit: str
    images: int | None
    image_set: str
    source_repo: str
    source_file: str
    source_commit: str
    source_url: str
    read_from: str
    location: str
    reading_precision: float
    note: str

    @property
    def conditions(self) -> dict[str, str]:
        """The condition as a mapping: "corruption=contrast;severity=5" -> {"corruption": "contrast", ...}."""
        return parse_pairs(self.condition)

    @property
    def protocol_parts(self) -> dict[str, str]:
        """The protocol as a mapping: "class_mask=paul-chen-1000;preprocessing=native-resize" -> {...}."""
        return parse_pairs(self.protocol)

    @property
    def source(self) -> str:
        """Where the number was read, in one line: "owner/repo @ commit: file (location)" or the paper's page."""
        if self.source_repo:
            return f"{self.source_repo} @ {self.source_commit[:7]}: {self.source_file} ({self.location})"
        return f"{self.source_url} ({self.location})"

    @property
    def has_public_weights(self) -> bool:
        return self.model_match == "same-weights" and self.model_id != NO_PUBLIC_EQUIVALENT

    def describe(self) -> str:
        """The number in words: "imagenet-a top-1 % (class_mask=paul-chen-1000; ...)"."""
        text = f"{self.benchmark} {self.metric}"
        if self.condition:
            text += f" [{self.condition.replace(';', ', ')}]"
        return text


def parse_pairs(text: str) -> dict[str, str]:
    """ "a=1;b=2" -> {"a": "1", "b": "2"}; ValueError on a malformed or repeated pair."""
    pairs: dict[str, str] = {}
    if not text:
        return pairs
    for item in text.split(";"):
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise ValueError(f"expected key=value pairs joined by ';', got {text!r}")
        if key.strip() in pairs:
            raise ValueError(f"{key.strip()!r} is given twice in {text!r}")
        pairs[key.strip()] = value.strip()
    return pairs


_COLUMNS = tuple(field.name for field in fields(PublishedNumber))


def _row(record: Mapping[str, str], where: str) -> PublishedNumber:
    missing = [name for name in _COLUMNS if name not in record]
    if missing:
        raise ValueError(f"{where}: missing column(s) {missing}.")
    values: dict[str, Any] = {name: (record[name] or "").strip() for name in _COLUMNS}
    try:
        values["value"] = float(values["value"])
        values["reading_precision"] = float(values["reading_precision"] or 0.0)
        values["images"] = int(values["images"]) if values["images"] else None
    except ValueError as error:
        raise ValueError(f"{where} ({values['row_id']}): {error}") from None
    return PublishedNumber(**values)


def read_published(path: Path | str) -> tuple[PublishedNumber, ...]:
    """The rows of a published-numbers CSV, checked (`check_published`); ValueError naming the row at fault."""
    path = Path(path)
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        if tuple(reader.fieldnames or ()) != _COLUMNS:
            raise ValueError(f"{path}: the header must be {','.join(_COLUMNS)}, got {reader.fieldnames}.")
        rows = tuple(_row(record, f"{path}, line {reader.line_num}") for record in reader)
    check_published(rows)
    return rows


def _check_row(row: PublishedNumber) -> list[str]:
    """What is wrong with one row, in words (empty when nothing)."""
    problems = []
    if not _SLUG.fullmatch(row.row_id):
        problems.append("row_id is not a lower-case slug")
    if row.paper not in PAPERS:
        problems.append(f"paper {row.paper!r} is not one of {list(PAPERS)}")
    if not row.model or not _SLUG.fullmatch(row.model_key) or "/" in row.model_key:
        problems.append("model and a slug model_key (without '/') are required")
    if row.model_match not in MODEL_MATCHES:
        problems.append(f"model_match {row.model_match!r} is not one of {MODEL_MATCHES}")
    if (row.model_match == "none") != (row.model_id == NO_PUBLIC_EQUIVALENT):
        problems.append(f"model_match 'none' goes with model_id {NO_PUBLIC_EQUIVALENT!r}, and only it")
    if row.image_set not in IMAGE_SETS:
        problems.append(f"image_set {row.image_set!r} is not one of {IMAGE_SETS}")
    if row.read_from not in READ_FROM:
        problems.append(f"read_from {row.read_from!r} is not one of {READ_FROM}")
    if not row.benchmark or not row.metric or not row.unit or not row.where or not row.location:
        problems.append("benchmark, metric, unit, where and location are required")
    if not math.isfinite(row.value) or not (
        math.isfinite(row.reading_precision) and row.reading_precision >= 0
    ):
        problems.append("value and reading_precision must be finite, reading_precision >= 0")
    if row.images is not None and row.images < 1:
        problems.append("images must be a positive count")
    if row.source_repo:
        if not row.source_file or not _COMMIT.fullmatch(row.source_commit):
            problems.append("a repository source needs source_file and a full 40-hex source_commit")
    elif not row.source_url.startswith(("https://", "http://")):
        problems.append("a row needs a source: source_repo with file and commit, or a source_url")
    if row.read_from.startswith("paper") != (not row.source_repo):
        problems.append("paper-table/paper-text rows cite the paper's page; the others a repository file")
    try:
        conditions = row.conditions
        row.protocol_parts  # noqa: B018 (parsed for the check)
    except ValueError as error:
        problems.append(str(error))
    else:
        unknown = [key for key in conditions if key not in CONDITION_KEYS]
        if unknown:
            problems.append(f"condition keys {unknown} are not among {CONDITION_KEYS}")
        order = [CONDITION_KEYS.index(key) for key in conditions if key in CONDITION_KEYS]
        if order != sorted(order):
            problems.append(f"condition keys must come in the order {CONDITION_KEYS}")
    return problems


def contradictions(rows: Sequence[PublishedNumber]) -> list[tuple[PublishedNumber, PublishedNumber]]:
    """Pairs of rows that state the same number (paper, model, benchmark, metric, condition, protocol) with values
    farther apart than their two reading precisions allow."""
    groups: dict[tuple[str, ...], list[PublishedNumber]] = {}
    for row in rows:
        key = (row.paper, row.model_key, row.benchmark, row.metric, row.condition, row.protocol)
        groups.setdefault(key, []).append(row)
    found = []
    for group in groups.values():
        for i, first in enumerate(group):
            for second in group[i + 1 :]:
                allowed = first.reading_precision + second.reading_precision
                if abs(first.value - second.value) > allowed + 1e-9 * max(abs(first.value), 1.0):
                    found.append((first, second))
    return found


def check_published(rows: Iterable[PublishedNumber]) -> None:
    """ValueError listing every row with a problem: a missing source, an unknown name, a malformed condition or
    protocol, a repeated row_id, or two rows that contradict each other (`contradictions`)."""
    rows = list(rows)
    problems = [f"{row.row_id}: {problem}" for row in rows for problem in _check_row(row)]
    seen: set[str] = set()
    for row in rows:
        if row.row_id in seen:
            problems.append(f"{row.row_id}: row_id repeated")
        seen.add(row.row_id)
    problems += [
        f"{a.row_id} ({a.value:g}) and {b.row_id} ({b.value:g}) state the same number differently"
        for a, b in contradictions(rows)
    ]
    if problems:
        shown = "\n  ".join(problems[:20])
        more = f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else ""
        raise ValueError(f"The published-numbers table has {len(problems)} problem(s):\n  {shown}{more}")


def published_path() -> Path:
    """The shipped table's path."""
    return Path(str(resources.files("hf_vitrobust").joinpath("assets", "published", "published.csv")))


@cache
def _shipped() -> tuple[PublishedNumber, ...]:
    return read_published(published_path())


def published_numbers(paper: str | None = None) -> tuple[PublishedNumber, ...]:
    """The shipped published numbers (of one paper, `paul-chen` or `park-kim`, or of both)."""
    if paper is not None and paper not in PAPERS:
        raise ValueError(f"Unknown paper {paper!r}; the table has {', '.join(PAPERS)}.")
    return tuple(row for row in _shipped() if paper is None or row.paper == paper)


def model_keys(paper: str | None = None) -> tuple[str, ...]:
    """The model keys of the published numbers, in the table's order."""
    return tuple(dict.fromkeys(row.model_key for row in published_numbers(paper)))


__all__ = [
    "CONDITION_KEYS",
    "IMAGE_SETS",
    "MODEL_MATCHES",
    "NO_PUBLIC_EQUIVALENT",
    "PAPERS",
    "READ_FROM",
    "PublishedNumber",
    "check_published",
    "contradictions",
    "model_keys",
    "parse_pairs",
    "published_numbers",
    "published_path",
    "read_published",
]
