# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Benchmarks on the Hugging Face Hub, read through `datasets.load_dataset(..., streaming=True)`.

Every Hub copy of an ImageNet variant labels its images differently: a ClassLabel of the 1000 wnids, a
ClassLabel of the 1000 human-readable names, 200-class indices of ImageNet-A/R, a plain `wnid` string column, a
plain integer, or no label at all. Each known repository therefore has a declarative `HubSchema` (like timm's
pretrained-config registry): which config/split/revision to read, which columns hold the image, the label, the
corruption and the severity, how to map the label onto the benchmark's label space (always through the wnid or a
verified class-name list, never by position alone), what is known to exist (splits, corruption cells, row counts)
and the evidence for each fact. The registered repositories themselves, with that evidence, are in `hub_datasets`.

`validate()` runs before any image is decoded: it reads the `features` of each part (the parquet schema / dataset
card), checks the columns and the label names, reads the first batch of labels (their range must fit the label
mode; a split without labels is refused), and compares the row count with the known one where the card declares
it or the files show it. The image column is cast to `Image(decode=False)` and decoded by `Source.samples()`,
because one truncated file inside a `datasets` stream otherwise ends the whole stream.
"""

from __future__ import annotations

import functools
import logging
import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..models.imagenet import (
    IMAGENET_CLASS_NAMES,
    IMAGENET_NUM_CLASSES,
    IMAGENET_WNIDS,
    imagenet_wnid_to_index,
)
from .decoding import IMAGE_FILE_EXTENSIONS
from .protocols import ClassSubset
from .samples import NO_LABEL, RawSample, SchemaError, Source

logger = logging.getLogger(__name__)

#: CIFAR-10's classes in label order (Krizhevsky 2009, `batches.meta`).
CIFAR10_CLASSES: tuple[str, ...] = (
    "airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck",
)  # fmt: skip

#: CIFAR-100's 100 fine classes in label order (alphabetical, as in `meta["fine_label_names"]`).
CIFAR100_CLASSES: tuple[str, ...] = (
    "apple", "aquarium_fish", "baby", "bear", "beaver", "bed", "bee", "beetle", "bicycle", "bottle", "bowl", "boy",
    "bridge", "bus", "butterfly", "camel", "can", "castle", "caterpillar", "cattle", "chair", "chimpanzee", "clock",
    "cloud", "cockroach", "couch", "crab", "crocodile", "cup", "dinosaur", "dolphin", "elephant", "flatfish",
    "forest", "fox", "girl", "hamster", "house", "kangaroo", "keyboard", "lamp", "lawn_mower", "leopard", "lion",
    "lizard", "lobster", "man", "maple_tree", "motorcycle", "mountain", "mouse", "mushroom", "oak_tree", "orange",
    "orchid", "otter", "palm_tree", "pear", "pickup_truck", "pine_tree", "plain", "plate", "poppy", "porcupine",
    "possum", "rabbit", "raccoon", "ray", "road", "rocket", "rose", "sea", "seal", "shark", "shrew", "skunk",
    "skyscraper", "snail", "snake", "spider", "squirrel", "streetcar", "sunflower", "sweet_pepper", "table", "tank",
    "telephone", "television", "tiger", "tractor", "train", "trout", "tulip", "turtle", "wardrobe", "whale",
    "willow_tree", "wolf", "woman", "worm",
)  # fmt: skip

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

#: Labels read from each part before any image is decoded: their range is checked against the label mode.
FIRST_BATCH_ROWS = 32

_WNID = re.compile(r"^n\d{8}$")
_WNID_IN_NAME = re.compile(r"\bn\d{8}\b")


def _normalise_name(name: str) -> str:
    return " ".join(str(name).replace("_", " ").lower().split())


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
class ClassNameVariant:
    """A Hub copy's spelling of a class name that differs from the shipped class list, accepted deliberately.

    label_space: "imagenet-1k" or "cifar100". spelling: as the copy writes it. index: the class it names.
    evidence: where the spelling was seen. A name that is neither a class nor a registered variant stays an error.
    """

    label_space: str
    spelling: str
    index: int
    evidence: Evidence


#: label space -> normalised spelling -> variant; filled by `hub_datasets`.
CLASS_NAME_VARIANTS: dict[str, dict[str, ClassNameVariant]] = {}


def register_class_name_variant(variant: ClassNameVariant) -> ClassNameVariant:
    """Accept `variant.spelling` as the name of class `variant.index` of its label space."""
    table = CLASS_NAME_VARIANTS.setdefault(variant.label_space, {})
    key = _normalise_name(variant.spelling)
    if key in table:
        raise ValueError(
            f"{variant.label_space} class name variant {variant.spelling!r} is already registered."
        )
    table[key] = variant
    return variant


def _variant_index(label_space: str, name: str) -> int | None:
    variant = CLASS_NAME_VARIANTS.get(label_space, {}).get(_normalise_name(name))
    return None if variant is None else variant.index


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
UNSTREAMABLE_REPOS: dict[str, UnstreamableRepo] = {}


def register_unstreamable_repo(entry: UnstreamableRepo) -> UnstreamableRepo:
    """Refuse `entry.repo` (with its alternative) before any download."""
    key = entry.repo.lower()
    if key in UNSTREAMABLE_REPOS:
        raise ValueError(f"{entry.repo!r} is already registered as unstreamable.")
    UNSTREAMABLE_REPOS[key] = entry
    return entry


def check_streamable(repo: str) -> None:
    """Raise SchemaError, naming what to use instead, for a Hub id that is known not to stream."""
    entry = UNSTREAMABLE_REPOS.get(repo.rstrip("/").lower())
    if entry is not None:
        raise SchemaError(f"{entry.repo} cannot be streamed: {entry.reason}. Use instead: {entry.instead}.")


# ---------------------------------------------------------------------------------------------------------------
# Label mapping


def _feature_kind(feature: Any) -> str:
    from datasets import ClassLabel, Value

    if isinstance(feature, ClassLabel):
        return "class_label"
    if isinstance(feature, Value):
        if feature.dtype.startswith(("int", "uint")):
            return "int"
        if feature.dtype in ("string", "large_string"):
            return "string"
    return type(feature).__name__


def _same_class(key: str, full: str, first: str) -> bool:
    # A copy may have made ImageNet's duplicate names unique ("crane" -> "crane 2", "crane (n03126707)").
    return key in (full, first) or key.startswith((first + " ", first + "("))


def _names_to_indices(
    names: Sequence[str], expected: Sequence[int], candidates: Sequence[int], what: str
) -> list[int]:
    """Map class names onto ImageNet-1k indices: a registered variant spelling (`crane2`) names its class; a name
    that agrees with the class expected at its position keeps it (this resolves ImageNet's duplicate names, e.g. the
    two "crane"s); any other name must match exactly one candidate class by a wnid inside it, else by full name,
    else by first name. Raises SchemaError naming the first name that cannot be mapped."""
    full = {i: _normalise_name(IMAGENET_CLASS_NAMES[i]) for i in candidates}
    first = {i: _normalise_name(IMAGENET_CLASS_NAMES[i].split(",")[0]) for i in candidates}
    indices = []
    for position, name in enumerate(names):
        key = _normalise_name(name)
        variant = _variant_index("imagenet-1k", name)
        if variant is not None and variant in full:
            indices.append(variant)
            continue
        guess = expected[position] if position < len(expected) else None
        if guess is not None and guess in full and _same_class(key, full[guess], first[guess]):
            indices.append(guess)
            continue
        wnid = _WNID_IN_NAME.search(str(name))
        found = [i for i in candidates if wnid and IMAGENET_WNIDS[i] == wnid.group(0)]
        found = (
            found or [i for i in candidates if key == full[i]] or [i for i in candidates if key == first[i]]
        )
        if len(found) != 1:
            problem = "matches no" if not found else f"matches {len(found)}"
            raise SchemaError(f"{what}: label name {name!r} (class {position}) {problem} ImageNet-1k class.")
        indices.append(found[0])
    if len(set(indices)) != len(indices):
        raise SchemaError(f"{what}: two label names map onto the same ImageNet-1k class.")
    return indices


def _wnids_to_indices(wnids: Sequence[str], allowed: set[str] | None, what: str) -> list[int]:
    to_index = imagenet_wnid_to_index()
    unknown = [w for w in wnids if w not in to_index]
    if unknown:
        raise SchemaError(f"{what}: unknown wnid {unknown[0]!r} ({len(unknown)} unknown in all).")
    if allowed is not None:
        outside = [w for w in wnids if w not in allowed]
        if outside:
            raise SchemaError(f"{what}: wnid {outside[0]!r} is not one of the benchmark's classes.")
    return [to_index[w] for w in wnids]


def _cifar_table(mode: str, names: Sequence[str], what: str) -> list[int]:
    """CIFAR label names must be CIFAR's classes in order; a registered variant (uoft-cs/cifar100's `cra`) counts
    as the class it names."""
    classes = CIFAR10_CLASSES if mode == "cifar10" else CIFAR100_CLASSES
    canonical = [_normalise_name(n) for n in classes]
    for position, name in enumerate(names):
        variant = _variant_index(mode, name)
        key = _normalise_name(classes[variant]) if variant is not None else _normalise_name(name)
        if position >= len(canonical) or key != canonical[position]:
            raise SchemaError(
                f"{what}: label name {name!r} (class {position}) is not {mode}'s class "
                f"{classes[position] if position < len(classes) else '(none)'!r}."
            )
    if len(names) != len(classes):
        raise SchemaError(f"{what}: expected the {len(classes)} classes of {mode}, found {len(names)} names.")
    return list(range(len(classes)))


class LabelMap:
    """Turns one label value of a schema's label column into a benchmark label: `(label, None)` or
    `(None, reason)`. Built from the column's `datasets` feature; raises SchemaError for a column that cannot
    be mapped."""

    def __init__(self, schema: HubSchema, feature: Any, what: str) -> None:
        self.mode = schema.label_mode
        self.table: list[int] | None = None
        self.wnids: dict[str, int] | None = None
        self.allowed: set[str] | None = None
        self.space = schema.benchmark
        kind = _feature_kind(feature) if feature is not None else None
        subset = schema.class_subset() if schema.class_subset is not None else None
        allowed = set(subset.wnids) if subset is not None else None
        if self.mode == "none":
            if kind == "class_label" and subset is not None:
                # ImageNet-O's folders name classes of its mask (a partial copy, some of them): a copy of another
                # dataset fails here.
                _wnids_to_indices(list(feature.names), allowed, what)
            return
        if self.mode == "subset_index":
            if subset is None:
                raise SchemaError(f"{what}: label_mode 'subset_index' needs a class subset.")
            self.space = subset.name
        if self.mode == "wnid_column":
            if kind != "string":
                raise SchemaError(f"{what}: the label column must hold wnid strings, found {feature}.")
            self.wnids = imagenet_wnid_to_index()
            self.allowed = allowed
            return
        if kind == "int":
            if not schema.int_labels:
                raise SchemaError(
                    f"{what}: the label column holds plain integers ({feature}), but {schema.name} stores a "
                    "ClassLabel whose names are checked before any index is used; a plain integer cannot be "
                    "checked. Pass schema= with a schema whose dataset really stores integers."
                )
            if self.mode in ("cifar10", "cifar100"):
                self.table = list(range(len(CIFAR10_CLASSES if self.mode == "cifar10" else CIFAR100_CLASSES)))
            elif self.mode == "subset_index":
                self.table = list(subset.class_indices)
            else:
                self.table = list(range(IMAGENET_NUM_CLASSES))
            return
        if kind != "class_label":
            raise SchemaError(f"{what}: the label column must be a ClassLabel, found {feature}.")
        names = list(feature.names)
        if self.mode in ("cifar10", "cifar100"):
            self.table = _cifar_table(self.mode, names, what)
            return
        if self.mode in ("wnid_names", "imagenet_names"):
            if all(_WNID.match(n) for n in names):
                self.table = _wnids_to_indices(names, allowed, what)
            elif self.mode == "wnid_names":
                bad = next(n for n in names if not _WNID.match(n))
                raise SchemaError(f"{what}: expected wnid label names, found {bad!r}.")
            else:
                if len(names) != IMAGENET_NUM_CLASSES:
                    raise SchemaError(
                        f"{what}: expected the 1000 ImageNet-1k classes, found {len(names)} names."
                    )
                everything = range(IMAGENET_NUM_CLASSES)
                self.table = _names_to_indices(names, list(everything), everything, what)
            return
        # subset_index
        if len(names) != len(subset):
            raise SchemaError(f"{what}: expected {len(subset)} classes of {subset.name}, found {len(names)}.")
        if all(_WNID.match(n) for n in names):
            self.table = _wnids_to_indices(names, allowed, what)
        else:
            self.table = _names_to_indices(names, subset.class_indices, subset.class_indices, what)

    def __call__(self, value: Any) -> tuple[int | None, str | None]:
        if self.mode == "none":
            return NO_LABEL, None
        if value is None or (isinstance(value, int) and not isinstance(value, bool) and value < 0):
            return None, "missing_label"
        if self.wnids is not None:
            index = self.wnids.get(str(value))
            if index is None or (self.allowed is not None and value not in self.allowed):
                return None, "unknown_wnid"
            return index, None
        assert self.table is not None
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < len(self.table):
            return None, "unknown_label"
        return self.table[value], None

    def check_first_batch(self, values: Sequence[Any], what: str) -> None:
        """The first rows' labels must fit the label mode, before any image is decoded: a label outside the
        column's classes (e.g. an ImageNet-1k index where 200-class numbers are expected) or a first batch without
        any label (an unlabelled split: ILSVRC/imagenet-1k's test split is all -1) raises SchemaError."""
        if self.mode == "none":
            return
        if not values:
            raise SchemaError(f"{what}: the split holds no rows.")
        reasons = [self(value)[1] for value in values]
        if all(reason == "missing_label" for reason in reasons):
            raise SchemaError(
                f"{what}: none of the first {len(values)} rows has a label (all None or -1): an unlabelled split "
                "(ILSVRC/imagenet-1k's test split has label -1 throughout). Use a labelled split."
            )
        bad = [
            value
            for value, reason in zip(values, reasons, strict=True)
            if reason not in (None, "missing_label")
        ]
        if not bad:
            return
        if self.wnids is not None:
            raise SchemaError(
                f"{what}: unknown wnid {bad[0]!r} in the first {len(values)} rows (not a class of {self.space})."
            )
        assert self.table is not None
        hint = ""
        if self.mode == "subset_index" and all(isinstance(v, int) and v < IMAGENET_NUM_CLASSES for v in bad):
            hint = (
                f": the column looks like ImageNet-1k indices, not the {len(self.table)}-class numbering of "
                f"{self.space}"
            )
        raise SchemaError(
            f"{what}: label {bad[0]!r} in the first {len(values)} rows is outside the {len(self.table)} classes "
            f"the label column can hold{hint}."
        )


# ---------------------------------------------------------------------------------------------------------------
# Sources


@dataclass(frozen=True)
class _Part:
    """One `load_dataset` call: a repository (or local folder), config and split, with the metadata that holds
    for all its rows and a key that prefixes its sample ids."""

    load_kwargs: dict[str, Any]
    metadata: dict[str, Any]
    key: str

    @property
    def local(self) -> bool:
        path = self.load_kwargs.get("path")
        return path == "parquet" or os.path.isdir(str(path))


def _resolved(dataset: Any) -> Any:
    """A streamed dataset with its features: a dataset that declares none (no card features, a format without a
    schema) gets them from its first row, which is what `datasets` itself does before `map`."""
    return dataset if dataset.features is not None else dataset._resolve_features()


class DatasetsSource(Source):
    """What HubSource and ParquetSource share: load each part lazily, check its features, first labels and row
    count, map its rows.

    `rows_per_cell_part`: when set (by `CellLimitedSource`), a part that holds one corruption/severity cell (a
    Tsomaros repository, a WNJXYK split) stops being read after that many samples, instead of streaming the rest.
    """

    kind = "datasets"
    rows_per_cell_part: int | None = None

    def __init__(
        self,
        schema: HubSchema | None,
        parts: list[_Part],
        *,
        corruptions: Sequence[str] | None = None,
        severities: Sequence[int] | None = None,
        candidates: Sequence[HubSchema] = (),
        streaming: bool = True,
    ) -> None:
        super().__init__()
        self.schema = schema
        self.corruptions = None if corruptions is None else [normalise_corruption(c) for c in corruptions]
        self.severities = None if severities is None else [int(s) for s in severities]
        # A part whose name fixes another corruption/severity than the ones asked for is left out; with none left,
        # validate() says so instead of streaming nothing.
        self.parts = [p for p in parts if self._wanted(p.metadata)]
        self.candidates = tuple(candidates)
        self.streaming = streaming
        self.row_counts: dict[str, dict[str, Any]] = {}
        self.warnings: list[str] = []
        self._checked: dict[int, tuple[Any, LabelMap]] = {}

    def _load(self, part: _Part) -> Any:
        from datasets import load_dataset

        try:
            return _resolved(load_dataset(**part.load_kwargs, streaming=self.streaming))
        except SchemaError:
            raise
        except Exception as error:  # a missing repo/config/split or unreadable files: a schema problem
            where = part.load_kwargs.get("path")
            raise SchemaError(
                f"cannot load {where} ({part.key or 'default'}): {type(error).__name__}: {error}"
            ) from error

    def _check(self, schema: HubSchema, features: Any, what: str) -> LabelMap:
        if features is None:
            raise SchemaError(f"{what}: the dataset declares no features; cannot check its schema.")
        columns = [schema.image_column]
        if schema.label_mode != "none" and schema.label_column is not None:
            columns.append(schema.label_column)
        columns += [c for c in (schema.corruption_column, schema.severity_column) if c is not None]
        missing = [c for c in columns if c not in features]
        if missing:
            raise SchemaError(
                f"{what}: missing column {missing[0]!r}; the dataset has columns {sorted(features)}."
            )
        from datasets import Image

        image = features[schema.image_column]
        if not isinstance(image, Image) and not (isinstance(image, dict) and "bytes" in image):
            raise SchemaError(f"{what}: column {schema.image_column!r} is not an image ({image}).")
        label = features.get(schema.label_column) if schema.label_column else None
        return LabelMap(schema, label, what)

    def _detect(self, features: Any, what: str) -> HubSchema:
        problems = []
        for schema in self.candidates:
            try:
                self._check(schema, features, what)
                return schema
            except SchemaError as error:
                problems.append(f"{schema.name}: {error}")
        raise SchemaError(
            f"{what}: no known schema fits these features ({features}).\n" + "\n".join(problems)
        )

    def _describe_part(self, part: _Part) -> str:
        return f"{part.load_kwargs.get('path')}" + (f" [{part.key}]" if part.key else "")

    def validate(self) -> None:
        if not self.parts:
            raise SchemaError(
                f"{self.describe()['location']}: nothing matches corruptions={self.corruptions}, "
                f"severities={self.severities}."
            )
        for index in range(len(self.parts)):
            self.validate_part(index)

    def validate_part(self, part_index: int) -> tuple[Any, LabelMap]:
        """Load and check one part (once): columns, label names, first labels, row count. Returns its dataset
        and label map. `validate()` checks every part; `vitrobust check-data` checks them one by one."""
        if part_index in self._checked:
            return self._checked[part_index]
        part = self.parts[part_index]
        dataset = self._load(part)
        what = self._describe_part(part)
        if self.schema is None:
            self.schema = self._detect(dataset.features, what)
        label_map = self._check(self.schema, dataset.features, what)
        self._check_first_batch(dataset, label_map, what)
        self._check_row_count(part, dataset, what)
        self._checked[part_index] = (dataset, label_map)
        return dataset, label_map

    def part_features(self, part_index: int) -> Any:
        """The `datasets` features of one part, as its check read them."""
        return self.validate_part(part_index)[0].features

    def _check_first_batch(self, dataset: Any, label_map: LabelMap, what: str) -> None:
        assert self.schema is not None
        column = self.schema.label_column
        if label_map.mode == "none" or column is None:
            return
        values = [row[column] for row in dataset.select_columns([column]).take(FIRST_BATCH_ROWS)]
        label_map.check_first_batch(values, what)

    def _expected_rows(self, part: _Part) -> int | None:
        """The known row count of a part (None: not known, or a part that is not a whole split)."""
        return None

    def _check_row_count(self, part: _Part, dataset: Any, what: str) -> None:
        """A part's row count, where the card declares it or the files show it, must be the known one: on the Hub
        a mismatch is a SchemaError (the copy is not the benchmark: e.g. an image folder that `datasets` reads only
        in part); for a local copy, which may be a deliberate subset, it is recorded as a warning."""
        expected = self._expected_rows(part)
        if expected is None:
            return
        found, how = _count_rows(part, dataset, self.schema)
        entry: dict[str, Any] = {"expected": expected, "found": found, "counted_from": how}
        self.row_counts[part.key or part.load_kwargs.get("split", "")] = entry
        if found is None or found == expected:
            return
        entry["mismatch"] = f"{found} rows ({how}), but the benchmark has {expected}"
        if not part.local:
            raise SchemaError(f"{what}: {entry['mismatch']}: this copy is incomplete or another dataset.")
        self.warnings.append(f"{what}: {entry['mismatch']} (a partial local copy?).")
        logger.warning("%s", self.warnings[-1])

    def _wanted(self, metadata: dict[str, Any]) -> bool:
        if (
            self.corruptions is not None
            and "corruption" in metadata
            and metadata["corruption"] not in self.corruptions
        ):
            return False
        return not (
            self.severities is not None
            and "severity" in metadata
            and metadata["severity"] not in self.severities
        )

    def raw_samples(self) -> Iterator[RawSample]:
        self.validate()
        for index in range(len(self.parts)):
            yield from self.part_raw_samples(index)

    def part_raw_samples(self, part_index: int) -> Iterator[RawSample]:
        """The raw samples of one part, in its order (what `raw_samples` chains over every part)."""
        from datasets import Image

        dataset, label_map = self.validate_part(part_index)
        schema = self.schema
        assert schema is not None
        part = self.parts[part_index]
        fixed = dict(schema.fixed_metadata)
        columns = [schema.image_column]
        columns += [c for c in (schema.label_column, schema.corruption_column, schema.severity_column) if c]
        columns = [c for c in columns if c in dataset.features]
        rows = dataset.select_columns(columns).cast_column(schema.image_column, Image(decode=False))
        prefix = f"{part.key}/" if part.key else ""
        one_cell = "corruption" in part.metadata and "severity" in part.metadata
        budget = self.rows_per_cell_part if one_cell else None
        for index, row in enumerate(rows):
            if budget is not None and budget <= 0:
                break
            metadata = {**fixed, **part.metadata}
            if schema.corruption_column:
                metadata["corruption"] = normalise_corruption(row[schema.corruption_column])
            if schema.severity_column:
                metadata["severity"] = int(row[schema.severity_column])
            if not self._wanted(metadata):
                continue
            sample_id = f"{prefix}row-{index:06d}"
            data = row[schema.image_column]
            if data is None or (
                isinstance(data, dict) and data.get("bytes") is None and not data.get("path")
            ):
                self.report.skip(sample_id, "missing_image", "the row has no image")
                continue
            label, reason = label_map(row.get(schema.label_column) if schema.label_column else None)
            if reason is not None and reason != "missing_label":
                self.report.skip(sample_id, reason, f"label {row.get(schema.label_column)!r} is not mappable")
                continue
            if budget is not None:
                budget -= 1
            yield RawSample(data=data, label=label, sample_id=sample_id, metadata=metadata)

    def _checks_description(self) -> dict[str, Any]:
        described: dict[str, Any] = {}
        if self.row_counts:
            described["row_counts"] = dict(self.row_counts)
        if self.warnings:
            described["warnings"] = list(self.warnings)
        if self.schema is not None and self.schema.class_sorted:
            described["row_order"] = "grouped by class: a limit keeps the first classes of each part only"
        return described


def _count_rows(part: _Part, dataset: Any, schema: HubSchema | None) -> tuple[int | None, str]:
    """(rows, how they were counted) of one part: the split size the dataset card declares; else, for a local copy
    or an image-folder repository, its resolved data files (one row per image file, or the parquet footers)."""
    split = part.load_kwargs.get("split")
    splits = getattr(getattr(dataset, "info", None), "splits", None) or {}
    declared = splits.get(split) if split is not None else None
    if declared is not None and declared.num_examples:
        return int(declared.num_examples), "declared in the dataset card"
    imagefolder = schema is not None and schema.layout == "imagefolder"
    if not (part.local or imagefolder):
        return None, "not declared by the dataset card"
    from datasets import load_dataset_builder

    kwargs = {k: v for k, v in part.load_kwargs.items() if k != "split"}
    try:
        builder = load_dataset_builder(**kwargs)
        files = list((builder.config.data_files or {}).get(split) or [])
    except Exception as error:  # the listing failed: the count stays unknown, the stream still works
        return None, f"files not listed ({type(error).__name__})"
    images = [f for f in files if str(f).lower().endswith(IMAGE_FILE_EXTENSIONS)]
    if imagefolder or (images and len(images) == len(files)):
        return len(images), "image files"
    parquet = [str(f) for f in files if str(f).endswith(".parquet")]
    if parquet and len(parquet) == len(files) and all(os.path.isfile(f) for f in parquet):
        import pyarrow.parquet as pq

        return sum(pq.ParquetFile(f).metadata.num_rows for f in parquet), "parquet footers"
    return None, "not counted"


class HubSource(DatasetsSource):
    """A benchmark on the Hub, or a local copy of a Hub repository (a folder laid out like the repository, read
    through the same `load_dataset(folder)` packaged-builder path).

    path: "org/name" (optionally with a local folder in front); for a repository family (Tsomaros ImageNet-C,
        WNJXYK/TTA-ImageNet-C) the family id selects all requested corruptions x severities.
    schema: a `HubSchema` or its name; by default the one whose repository `path` names, else the first of
        `candidates` whose columns and labels fit the dataset's features.
    unavailable: what to do with requested corruption/severity parts that a family is not known to publish on
        the Hub: "error" (SchemaError naming what to use instead) or "skip" (left out, and recorded in
        `describe()["unavailable"]`: what a suite's default source does).
    """

    kind = "hub"

    def __init__(
        self,
        path: str,
        schema: HubSchema | str | None = None,
        *,
        revision: str | None = None,
        config: str | None = None,
        split: str | None = None,
        corruptions: Sequence[str] | None = None,
        severities: Sequence[int] | None = None,
        candidates: Sequence[HubSchema] = (),
        streaming: bool = True,
        unavailable: str = "error",
    ) -> None:
        if unavailable not in ("error", "skip"):
            raise ValueError(f"unavailable must be 'error' or 'skip', got {unavailable!r}")
        self.path = path.rstrip("/")
        if not os.path.exists(self.path):
            check_streamable(self.path)
        if isinstance(schema, str):
            schema = get_hub_schema(schema)
        matched = match_schema(self.path, None if schema is None else [schema])
        if schema is None and matched is not None:
            schema = matched.schema
        self.revision = revision if revision is not None else (schema.revision if schema else None)
        parts, missing = _hub_parts(
            self.path, schema, matched, config, split, self.revision, corruptions, severities
        )
        self.unavailable: dict[str, Any] = {}
        if missing:
            assert schema is not None
            message = _unpublished_message(self.path, schema, missing)
            if unavailable == "error":
                raise SchemaError(message)
            self.unavailable = {"cells": [f"{c}/{s}" for c, s in missing], "reason": message}
            logger.warning("%s", message)
        super().__init__(
            schema,
            parts,
            corruptions=corruptions,
            severities=severities,
            candidates=candidates,
            streaming=streaming,
        )

    def _expected_rows(self, part: _Part) -> int | None:
        if self.schema is None:
            return None
        return self.schema.expected_rows(part.load_kwargs.get("split", self.schema.split))

    def describe(self) -> dict[str, Any]:
        described = {
            "kind": self.kind,
            "location": self.path,
            "revision": self.revision,
            "schema": self.schema.name if self.schema else None,
            "parts": [p.key or p.load_kwargs.get("split") for p in self.parts],
            "generated": False,
            **self._checks_description(),
        }
        if self.unavailable:
            described["unavailable"] = dict(self.unavailable)
        return described


def _unpublished_message(path: str, schema: HubSchema, missing: Sequence[tuple[str, int]]) -> str:
    cells = ", ".join(f"{c}/{s}" for c, s in missing[:8]) + (
        f" (+{len(missing) - 8} more)" if len(missing) > 8 else ""
    )
    corruptions = sorted({c for c, _ in schema.cells or ()})
    holders = [
        other.repo
        for other in hub_schemas_for(schema.benchmark)
        if other is not schema and other.cells is not None and set(missing) <= set(other.cells)
    ]
    instead = [*holders, "a local folder of the release", "generated:<clean source>"]
    single = (
        f"; a single repository id (e.g. {schema.repo_template.format(corruption=missing[0][0], severity=missing[0][1])}) "
        "is read as given"
        if schema.repo_template
        else ""
    )
    return (
        f"{path} is not known to publish {cells} (its published pages show {', '.join(corruptions)} only, "
        f"see docs/hub_datasets.md); use {' or '.join(instead)}{single}."
    )


def _hub_parts(
    path: str,
    schema: HubSchema | None,
    matched: SchemaMatch | None,
    config: str | None,
    split: str | None,
    revision: str | None,
    corruptions: Sequence[str] | None,
    severities: Sequence[int] | None,
) -> tuple[list[_Part], list[tuple[str, int]]]:
    """The parts to load, and the requested (corruption, severity) cells a family is not known to publish."""
    on_hub = not os.path.exists(path) and (matched is None or not matched.prefix)

    def kwargs(repo: str, config_name: str | None, split_name: str) -> dict[str, Any]:
        out: dict[str, Any] = {"path": repo, "split": split_name}
        if config_name is not None:
            out["name"] = config_name
        if revision is not None and not os.path.isdir(repo):
            out["revision"] = revision
        if schema is not None and schema.data_files is not None:
            out["data_files"] = dict(schema.data_files)
        return out

    if schema is None:
        return [_Part(kwargs(path, config, split or "train"), {}, "")], []
    default_split = split or schema.split
    default_config = config if config is not None else schema.config
    if matched is None or not matched.family:
        if on_hub and schema.splits and default_split not in schema.splits and schema.split_template is None:
            raise SchemaError(
                f"{path} publishes the splits {', '.join(schema.splits)}; there is no split {default_split!r}."
            )
        metadata = dict(matched.metadata) if matched is not None else {}
        return [_Part(kwargs(path, default_config, default_split), metadata, "")], []
    chosen = (
        [normalise_corruption(c) for c in corruptions] if corruptions is not None else _default_corruptions()
    )
    levels = [int(s) for s in severities] if severities is not None else [1, 2, 3, 4, 5]
    known = set(schema.cells) if on_hub and schema.cells is not None else None
    parts, missing = [], []
    for corruption in chosen:
        for severity in levels:
            if known is not None and (corruption, severity) not in known:
                missing.append((corruption, severity))
                continue
            fill = {"corruption": corruption, "severity": severity}
            repo = path
            if schema.repo_template is not None:
                repo = matched.prefix + schema.repo_template.format(**fill)
            config_name = schema.config_template.format(**fill) if schema.config_template else default_config
            split_name = schema.split_template.format(**fill) if schema.split_template else default_split
            parts.append(_Part(kwargs(repo, config_name, split_name), fill, f"{corruption}/{severity}"))
    return parts, missing


def _default_corruptions() -> tuple[str, ...]:
    from ..corruptions import STANDARD_CORRUPTIONS

    return STANDARD_CORRUPTIONS


class ParquetSource(DatasetsSource):
    """Local parquet files in a Hub schema (a downloaded copy), read with `load_dataset("parquet", ...)`.

    path: a .parquet file or a folder searched recursively, files in sorted order. Corruption and severity come
    from the schema's columns, else from the path (a Tsomaros repository name, or `<corruption>/<severity>` /
    `<corruption>/severity_<s>` folders), else from `metadata`.
    split: keep only the files whose names say this split or no split (`split_named_by`: a downloaded repository
        holds `data/train-*.parquet` beside `data/validation-*.parquet`); a SchemaError when none is left. None:
        every file.
    """

    kind = "parquet"

    def __init__(
        self,
        path: str | os.PathLike,
        schema: HubSchema | str | None = None,
        *,
        corruptions: Sequence[str] | None = None,
        severities: Sequence[int] | None = None,
        candidates: Sequence[HubSchema] = (),
        metadata: dict[str, Any] | None = None,
        streaming: bool = True,
        split: str | None = None,
    ) -> None:
        self.path = os.fspath(path)
        self.split = split
        if isinstance(schema, str):
            schema = get_hub_schema(schema)
        matched = _match_path_or_parent(self.path)
        if schema is None and matched is not None:
            schema = matched.schema
        files = _parquet_files(self.path)
        self.other_split_files = 0
        if split is not None:
            files, self.other_split_files = _files_of_split(self.path, files, split)
        parts = []
        for file in files:
            relative = (
                os.path.relpath(file, self.path) if os.path.isdir(self.path) else os.path.basename(file)
            )
            found = {**_metadata_from_path(file), **(matched.metadata if matched else {}), **(metadata or {})}
            parts.append(_Part({"path": "parquet", "data_files": [file], "split": "train"}, found, relative))
        super().__init__(
            schema,
            parts,
            corruptions=corruptions,
            severities=severities,
            candidates=candidates,
            streaming=streaming,
        )

    def describe(self) -> dict[str, Any]:
        described = {
            "kind": self.kind,
            "location": self.path,
            "revision": None,
            "schema": self.schema.name if self.schema else None,
            "files": len(self.parts),
            "generated": False,
            **self._checks_description(),
        }
        if self.split is not None:
            described["split"] = self.split
            described["files_of_other_splits"] = self.other_split_files
        return described


def _match_path_or_parent(path: str) -> SchemaMatch | None:
    """`match_schema` on a path or the nearest folder above it (a file inside a downloaded repository)."""
    current = os.path.abspath(path)
    while True:
        matched = match_schema(current)
        if matched is not None:
            return matched
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


@functools.cache
def _split_of_word() -> dict[str, str]:
    """Each word a file or folder name uses for a split -> the split, as `datasets` reads them
    (`datasets.data_files.SPLIT_KEYWORDS`: a word delimited by "-", ".", "_", " " or digits, e.g.
    "train-00000-of-00294.parquet"). Imported on first use: the package does not import `datasets` on import."""
    from datasets.data_files import SPLIT_KEYWORDS

    return {word: str(split) for split, words in SPLIT_KEYWORDS.items() for word in words}


def split_named_by(name: str) -> str | None:
    """The split ("train", "validation", "test") a file or folder name says, by `datasets`' split keywords; None
    when it says none, or several."""
    words = _split_of_word()
    found = {words[w] for w in re.split(r"[-._ 0-9]+", name.lower()) if w in words}
    return found.pop() if len(found) == 1 else None


def _files_of_split(root: str, files: list[str], split: str) -> tuple[list[str], int]:
    """The parquet files of `split`: those whose name, else nearest folder at or under `root`, says it or says no
    split; and how many were left out. Raises SchemaError when none is left."""
    wanted = _split_of_word().get(split.lower())
    if wanted is None:  # a split no file name can say (a config's own split name): nothing to filter by
        return files, 0
    base = os.path.dirname(root) if os.path.isfile(root) else root
    kept, others = [], {}
    for file in files:
        names = [os.path.basename(root.rstrip(os.sep)), *os.path.relpath(file, base).split(os.sep)]
        said = next((s for s in map(split_named_by, reversed(names)) if s is not None), None)
        if said is None or said == wanted:
            kept.append(file)
        else:
            others[said] = others.get(said, 0) + 1
    if not kept:
        found = ", ".join(f"{n} of split {s}" for s, n in sorted(others.items()))
        raise SchemaError(
            f"{root}: no parquet file of split {split!r}; the files name other splits ({found})."
        )
    return kept, len(files) - len(kept)


def _parquet_files(path: str) -> list[str]:
    if os.path.isfile(path):
        return [path]
    if not os.path.isdir(path):
        raise SchemaError(f"{path}: no such file or folder.")
    files = []
    for folder, dirs, names in os.walk(path):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        files += [os.path.join(folder, n) for n in sorted(names) if n.endswith(".parquet")]
    if not files:
        raise SchemaError(f"{path}: no .parquet files.")
    return sorted(files)


def _metadata_from_path(path: str) -> dict[str, Any]:
    from ..corruptions import EXTRA_CORRUPTIONS, STANDARD_CORRUPTIONS

    known = set(STANDARD_CORRUPTIONS + EXTRA_CORRUPTIONS)
    pieces = path.replace(os.sep, "/").split("/")
    found: dict[str, Any] = {}
    for i, piece in enumerate(pieces[:-1]):
        if piece in known:
            found["corruption"] = piece
            level = (
                re.fullmatch(r"(?:severity_?)?([1-5])", pieces[i + 1]) if i + 1 < len(pieces) - 1 else None
            )
            if level:
                found["severity"] = int(level.group(1))
    return found


# ---------------------------------------------------------------------------------------------------------------
# The registry of known Hub repositories (the entries, with their evidence, are in `hub_datasets`)

HUB_SCHEMAS: dict[str, HubSchema] = {}


def register_hub_schema(schema: HubSchema) -> HubSchema:
    """Add a schema to `HUB_SCHEMAS` (the name must be new)."""
    if schema.name in HUB_SCHEMAS:
        raise ValueError(f"Hub schema {schema.name!r} is already registered.")
    HUB_SCHEMAS[schema.name] = schema
    return schema


def get_hub_schema(name: str) -> HubSchema:
    try:
        return HUB_SCHEMAS[name]
    except KeyError:
        raise ValueError(f"Unknown Hub schema {name!r}; known: {', '.join(sorted(HUB_SCHEMAS))}") from None


def hub_schemas_for(benchmark: str) -> tuple[HubSchema, ...]:
    """The registered schemas of one benchmark, in registration order."""
    return tuple(s for s in HUB_SCHEMAS.values() if s.benchmark == benchmark)
