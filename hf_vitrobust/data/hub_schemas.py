# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""What hf_vitrobust knows of a benchmark's Hub repositories: the declarative `HubSchema` of each, its registry, and
the repositories that cannot be streamed.

Every Hub copy of an ImageNet variant labels its images differently: a ClassLabel of the 1000 wnids, a
ClassLabel of the 1000 human-readable names, 200-class indices of ImageNet-A/R, a plain `wnid` string column, a
plain integer, or no label at all. Each known repository therefore has a declarative `HubSchema` (like timm's
pretrained-config registry): which config/split/revision to read, which columns hold the image, the label, the
corruption and the severity, how to map the label onto the benchmark's label space (always through the wnid or a
verified class-name list, never by position alone: `hub_labels.LabelMap`), what is known to exist (splits,
corruption cells, row counts) and the evidence for each fact. `match_schema` finds the schema a Hub id or a local
copy's path names. The registered repositories themselves, with that evidence, are in `hub_datasets`; the sources
that read them are in `hub`.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..registry import Registry
from .class_lists import ClassSubset
from .samples import SchemaError

#: How a schema's label column maps onto the benchmark's label space.
#: - "wnid_names": a ClassLabel whose names are wnids -> ImageNet-1k index by wnid.
#: - "imagenet_names": a ClassLabel of the 1000 classes (wnids, or names verified against the standard list).
#: - "subset_index": 200-class numbering of the benchmark's `ClassSubset` (a ClassLabel of wnids/names).
#: - "wnid_column": a string column of wnids.
#: - "cifar10" / "cifar100": CIFAR's own label indices (a ClassLabel's names are verified).
#: - "none": no label; every image is out-of-distribution (ImageNet-O). A ClassLabel that is there (ImageNet-O's
#:   folders name the class each image was confused with) must name the benchmark's class subset, then is ignored.
#: A plain integer column is accepted only by a schema with `int_labels=True` (the dataset really stores one):
#: it is read as the label space's own index order (ImageNet-1k, CIFAR, or the subset's numbering).
LABEL_MODES = ("wnid_names", "imagenet_names", "subset_index", "wnid_column", "cifar10", "cifar100", "none")

#: File layouts of a repository: parquet shards, or one image file per row (`imagefolder`).
LAYOUTS = ("parquet", "imagefolder")


def normalise_corruption(name: str) -> str:
    """A corruption name in the reference's spelling: "Gaussian Noise" / "gaussian-noise" -> "gaussian_noise"."""
    return "_".join(str(name).replace("-", " ").lower().split())


@dataclass(frozen=True)
class Evidence:
    """One fact about a Hub dataset, where it was read (a public page, or `owner/repo@commit:path`) and when (the
    date of the page or commit where shown, and of the reading)."""

    fact: str
    source: str
    as_of: str


@dataclass(frozen=True)
class HubSchema:
    """How one Hub repository (or family of repositories) stores a benchmark, and what is known of it.

    repo: the repository id users type; with `repo_template`, the id of the whole family (e.g. the Tsomaros
        ImageNet-C repositories are "Tsomaros/ImageNet-C").
    repo_template / config_template / split_template: how corruption and severity select a repository, a
        config or a split ("{corruption}", "{severity}"), when the repository splits them that way.
    split: the split read by default; splits: every split the repository publishes (another split is refused
        before any download; empty: not checked).
    revision: the git revision to read, e.g. "refs/convert/parquet" for repositories that used a loading script
        (datasets >= 4 refuses to run those).
    data_files: explicit `data_files` for `load_dataset` (the parquet-converter branch has no dataset card).
    layout: "parquet" or "imagefolder" (one image file per row: the files give the row count).
    corruption_column / severity_column: per-row metadata columns, when the repository keeps all corruptions in
        one split.
    cells: for a family, the (corruption, severity) parts known to exist on the Hub (None: every requested one).
    num_rows: rows per split, "*" for every part of a family; compared with what the card declares or the files
        hold.
    int_labels: the label column really is a plain integer (no ClassLabel to check names against).
    class_sorted: rows are grouped by class, so the first N rows of a part cover few classes.
    confirmed: the facts verified, each with its source and date; unverified: what could not be verified.
    """

    name: str
    benchmark: str
    repo: str
    split: str
    label_mode: str
    label_column: str | None = "label"
    image_column: str = "image"
    config: str | None = None
    revision: str | None = None
    data_files: dict[str, str] | None = None
    layout: str = "parquet"
    repo_template: str | None = None
    config_template: str | None = None
    split_template: str | None = None
    corruption_column: str | None = None
    severity_column: str | None = None
    class_subset: Callable[[], ClassSubset] | None = None
    fixed_metadata: tuple[tuple[str, Any], ...] = ()
    splits: tuple[str, ...] = ()
    cells: tuple[tuple[str, int], ...] | None = None
    num_rows: Mapping[str, int] | None = None
    int_labels: bool = False
    class_sorted: bool = False
    confirmed: tuple[Evidence, ...] = ()
    unverified: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.label_mode not in LABEL_MODES:
            raise ValueError(f"{self.name}: label_mode must be one of {LABEL_MODES}, got {self.label_mode!r}")
        if self.layout not in LAYOUTS:
            raise ValueError(f"{self.name}: layout must be one of {LAYOUTS}, got {self.layout!r}")
        if self.splits and self.split_template is None and self.split not in self.splits:
            raise ValueError(f"{self.name}: the default split {self.split!r} is not one of {self.splits}.")

    @property
    def splits_by_corruption(self) -> bool:
        return any(t is not None for t in (self.repo_template, self.config_template, self.split_template))

    def expected_rows(self, split: str) -> int | None:
        """The known row count of one part: a split, or one corruption/severity part of a family."""
        if self.num_rows is None:
            return None
        return self.num_rows.get("*" if self.splits_by_corruption else split)


def _template_pattern(template: str) -> str:
    pieces = re.split(r"\{(\w+)\}", template)
    groups = {"corruption": r"(?P<corruption>[a-z_]+)", "severity": r"(?P<severity>[1-5])"}
    return "".join(re.escape(p) if i % 2 == 0 else groups[p] for i, p in enumerate(pieces))


def _match_at_end(pattern: str, spec: str) -> re.Match | None:
    return re.fullmatch(r"(?P<prefix>(?:.*/)?)" + pattern, spec, flags=re.IGNORECASE)


@dataclass(frozen=True)
class SchemaMatch:
    """A spec matched to a schema: `prefix` is the local folder above the repository id ("" on the Hub);
    `metadata` holds corruption/severity read from a single repository's name."""

    schema: HubSchema
    prefix: str
    family: bool
    metadata: dict[str, Any] = field(default_factory=dict)


def match_schema(spec: str, schemas: Sequence[HubSchema] | None = None) -> SchemaMatch | None:
    """The schema whose repository id `spec` names or ends with (a local copy laid out as `<dir>/<org>/<name>`)."""
    path = spec.replace(os.sep, "/").rstrip("/")
    for schema in HUB_SCHEMAS.values() if schemas is None else schemas:
        if schema.repo_template is not None:
            match = _match_at_end(_template_pattern(schema.repo_template), path)
            if match:
                metadata = {"corruption": match["corruption"].lower(), "severity": int(match["severity"])}
                return SchemaMatch(schema, match["prefix"], family=False, metadata=metadata)
        match = _match_at_end(re.escape(schema.repo), path)
        if match:
            return SchemaMatch(schema, match["prefix"], family=schema.splits_by_corruption)
    return None


# ---------------------------------------------------------------------------------------------------------------
# The registry of known Hub repositories (the entries, with their evidence, are in `hub_datasets`)

HUB_SCHEMAS: Registry[HubSchema] = Registry("Hub schema")


def register_hub_schema(schema: HubSchema) -> HubSchema:
    """Add a schema to `HUB_SCHEMAS` (the name must be new)."""
    return HUB_SCHEMAS.register(schema.name, schema)


def get_hub_schema(name: str) -> HubSchema:
    """The registered schema `name` (`UnknownNameError`, a ValueError, naming the closest ones)."""
    return HUB_SCHEMAS.get(name)


def hub_schemas_for(benchmark: str) -> tuple[HubSchema, ...]:
    """The registered schemas of one benchmark, in registration order."""
    return tuple(s for s in HUB_SCHEMAS.values() if s.benchmark == benchmark)


# ---------------------------------------------------------------------------------------------------------------
# Repositories that cannot be streamed


@dataclass(frozen=True)
class UnstreamableRepo:
    """A Hub repository `datasets` cannot stream (a loading script and no data files: datasets >= 4 refuses
    scripts), with what to use instead."""

    repo: str
    benchmark: str
    reason: str
    instead: str
    confirmed: tuple[Evidence, ...] = ()


#: Lower-case repository id -> entry; filled by `hub_datasets`.
UNSTREAMABLE_REPOS: Registry[UnstreamableRepo] = Registry("unstreamable repository")


def register_unstreamable_repo(entry: UnstreamableRepo) -> UnstreamableRepo:
    """Refuse `entry.repo` (with its alternative) before any download."""
    key = entry.repo.lower()
    if key in UNSTREAMABLE_REPOS:
        raise ValueError(f"{entry.repo!r} is already registered as unstreamable.")
    return UNSTREAMABLE_REPOS.register(key, entry)


def check_streamable(repo: str) -> None:
    """Raise SchemaError, naming what to use instead, for a Hub id that is known not to stream."""
    entry = UNSTREAMABLE_REPOS.get(repo.rstrip("/").lower(), None)
    if entry is not None:
        raise SchemaError(f"{entry.repo} cannot be streamed: {entry.reason}. Use instead: {entry.instead}.")


# ---------------------------------------------------------------------------------------------------------------
# Repositories and splits refused: they carry a benchmark's name but not the benchmark


@dataclass(frozen=True)
class RefusedRepo:
    """Hub repositories (an id, or a glob such as "MarMaster/corruption-*") that hold something other than the
    benchmark they are named after (a regenerated copy, an incomplete one), refused before any download with the
    reason and what to use instead; `confirmed` says what was verified and where, `unverified` what was not."""

    pattern: str
    benchmark: str
    reason: str
    instead: str
    confirmed: tuple[Evidence, ...] = ()
    unverified: tuple[str, ...] = ()


#: Lower-case repository id or glob -> entry; filled by `hub_copies`.
REFUSED_REPOS: Registry[RefusedRepo] = Registry("refused repository")

#: A split the Hub's parquet converter wrote for a dataset too large to convert whole: it holds only the rows of the
#: first part of the data (the converter's "partial-" prefix, e.g. clip-benchmark/wds_objectnet's partial-test).
PARTIAL_SPLIT = re.compile(r"partial-[\w.-]+", flags=re.IGNORECASE)


def register_refused_repo(entry: RefusedRepo) -> RefusedRepo:
    """Refuse every repository `entry.pattern` names, before any download."""
    return REFUSED_REPOS.register(entry.pattern.lower(), entry)


def check_complete_split(split: str, where: str = "") -> None:
    """Raise SchemaError for a parquet converter's `partial-*` split: it is not the whole benchmark."""
    if PARTIAL_SPLIT.fullmatch(split):
        raise SchemaError(
            f"{where + ': ' if where else ''}{split!r} is a split of the Hub's parquet conversion that holds only "
            "part of the data (the converter stops after the first part of a large dataset and names the split "
            "'partial-'); a score on it is not the benchmark's. Read the repository's own files (its main branch) "
            "or a local copy of the release."
        )


def check_not_refused(spec: str) -> None:
    """Raise SchemaError for a source naming a refused repository (its Hub id, or a local copy laid out as
    `<dir>/<org>/<name>`) or a local `partial-*` split folder of a parquet conversion (`<config>/partial-test/`, or
    one of its .parquet files), before any work."""
    local = os.path.exists(spec)
    path = spec.replace(os.sep, "/").rstrip("/")
    if not local:
        path = path.split("@", 1)[0].split(":", 1)[0]
    parts = path.split("/")
    repo = "/".join(parts[-2:]).lower()
    for key, entry in REFUSED_REPOS.items():
        if fnmatch.fnmatchcase(repo, key):
            raise SchemaError(
                f"{spec}: {entry.pattern} is not {entry.benchmark}: {entry.reason}. Use instead: {entry.instead}."
            )
    if local and os.path.isfile(spec) and spec.endswith(".parquet"):
        check_complete_split(parts[-2] if len(parts) > 1 else "", spec)
    elif local and os.path.isdir(spec) and any(name.endswith(".parquet") for name in os.listdir(spec)):
        check_complete_split(parts[-1], spec)


__all__ = [
    "HUB_SCHEMAS",
    "LABEL_MODES",
    "LAYOUTS",
    "PARTIAL_SPLIT",
    "REFUSED_REPOS",
    "UNSTREAMABLE_REPOS",
    "Evidence",
    "HubSchema",
    "RefusedRepo",
    "SchemaMatch",
    "UnstreamableRepo",
    "check_complete_split",
    "check_not_refused",
    "check_streamable",
    "get_hub_schema",
    "hub_schemas_for",
    "match_schema",
    "normalise_corruption",
    "register_hub_schema",
    "register_refused_repo",
    "register_unstreamable_repo",
]
