# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Benchmarks on the Hugging Face Hub, read through `datasets.load_dataset(..., streaming=True)`.

Every Hub copy of an ImageNet variant labels its images differently: a ClassLabel of the 1000 wnids, a
ClassLabel of the 1000 human-readable names, 200-class indices of ImageNet-A/R, a plain `wnid` string column, or
no label at all. Each known repository therefore has a declarative `HubSchema` (like timm's pretrained-config
registry): which config/split/revision to read, which columns hold the image, the label, the corruption and the
severity, and how to map the label onto the benchmark's label space - always through the wnid or a verified
class-name list, never by position alone.

`validate()` reads only the `features` of each part (the parquet schema / dataset card), so a wrong repository
or column fails before any image is read. The image column is cast to `Image(decode=False)` and decoded by
`Source.samples()`, because one truncated file inside a `datasets` stream otherwise ends the whole stream.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..models.imagenet import (
    IMAGENET_CLASS_NAMES,
    IMAGENET_NUM_CLASSES,
    IMAGENET_WNIDS,
    imagenet_wnid_to_index,
)
from .protocols import ClassSubset, imagenet_a_classes, imagenet_o_classes, imagenet_r_classes
from .samples import NO_LABEL, RawSample, SchemaError, Source

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
#: - "subset_index": 200-class numbering of the benchmark's `ClassSubset` (int, or a ClassLabel of wnids/names).
#: - "wnid_column": a string column of wnids.
#: - "cifar10" / "cifar100": CIFAR's own label indices (a ClassLabel's names are verified).
#: - "none": no label; every image is out-of-distribution (ImageNet-O).
LABEL_MODES = ("wnid_names", "imagenet_names", "subset_index", "wnid_column", "cifar10", "cifar100", "none")

_WNID = re.compile(r"^n\d{8}$")
_WNID_IN_NAME = re.compile(r"\bn\d{8}\b")


def _normalise_name(name: str) -> str:
    return " ".join(str(name).replace("_", " ").lower().split())


def normalise_corruption(name: str) -> str:
    """A corruption name in the reference's spelling: "Gaussian Noise" / "gaussian-noise" -> "gaussian_noise"."""
    return "_".join(str(name).replace("-", " ").lower().split())


@dataclass(frozen=True)
class HubSchema:
    """How one Hub repository (or family of repositories) stores a benchmark.

    repo: the repository id users type; with `repo_template`, the id of the whole family (e.g. the 75
        Tsomaros ImageNet-C repositories are "Tsomaros/ImageNet-C").
    repo_template / config_template / split_template: how corruption and severity select a repository, a
        config or a split ("{corruption}", "{severity}"), when the repository splits them that way.
    revision: the git revision to read, e.g. "refs/convert/parquet" for repositories that used a loading script
        (datasets >= 4 refuses to run those).
    data_files: explicit `data_files` for `load_dataset` (the parquet-converter branch has no dataset card).
    corruption_column / severity_column: per-row metadata columns, when the repository keeps all corruptions in
        one split.
    confirmed: which facts were checked on the dataset card/viewer; anything else is a documented guess.
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
    repo_template: str | None = None
    config_template: str | None = None
    split_template: str | None = None
    corruption_column: str | None = None
    severity_column: str | None = None
    class_subset: Callable[[], ClassSubset] | None = None
    fixed_metadata: tuple[tuple[str, Any], ...] = ()
    confirmed: str = ""

    def __post_init__(self) -> None:
        if self.label_mode not in LABEL_MODES:
            raise ValueError(f"{self.name}: label_mode must be one of {LABEL_MODES}, got {self.label_mode!r}")

    @property
    def splits_by_corruption(self) -> bool:
        return any(t is not None for t in (self.repo_template, self.config_template, self.split_template))


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
    """Map class names onto ImageNet-1k indices: a name that agrees with the class expected at its position keeps
    it (this resolves ImageNet's duplicate names, e.g. the two "crane"s); any other name must match exactly one
    candidate class by a wnid inside it, else by full name, else by first name. Raises SchemaError naming the first name that cannot be mapped."""
    full = {i: _normalise_name(IMAGENET_CLASS_NAMES[i]) for i in candidates}
    first = {i: _normalise_name(IMAGENET_CLASS_NAMES[i].split(",")[0]) for i in candidates}
    indices = []
    for position, name in enumerate(names):
        key = _normalise_name(name)
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


class LabelMap:
    """Turns one label value of a schema's label column into a benchmark label: `(label, None)` or
    `(None, reason)`. Built from the column's `datasets` feature; raises SchemaError for a column that cannot
    be mapped."""

    def __init__(self, schema: HubSchema, feature: Any, what: str) -> None:
        self.mode = schema.label_mode
        self.table: list[int] | None = None
        self.wnids: dict[str, int] | None = None
        kind = _feature_kind(feature) if feature is not None else None
        subset = schema.class_subset() if schema.class_subset is not None else None
        allowed = set(subset.wnids) if subset is not None else None
        if self.mode == "none":
            return
        if self.mode == "wnid_column":
            if kind != "string":
                raise SchemaError(f"{what}: the label column must hold wnid strings, found {feature}.")
            self.wnids = imagenet_wnid_to_index()
            self.allowed = allowed
            return
        if self.mode in ("cifar10", "cifar100"):
            classes = CIFAR10_CLASSES if self.mode == "cifar10" else CIFAR100_CLASSES
            if kind == "class_label":
                names = [_normalise_name(n) for n in feature.names]
                if names != [_normalise_name(n) for n in classes]:
                    raise SchemaError(
                        f"{what}: label names {feature.names[:4]}... are not {self.mode}'s classes."
                    )
            elif kind != "int":
                raise SchemaError(f"{what}: the label column must hold class indices, found {feature}.")
            self.table = list(range(len(classes)))
            return
        if self.mode in ("wnid_names", "imagenet_names"):
            if kind != "class_label":
                raise SchemaError(f"{what}: the label column must be a ClassLabel, found {feature}.")
            names = list(feature.names)
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
        if subset is None:
            raise SchemaError(f"{what}: label_mode 'subset_index' needs a class subset.")
        if kind == "int":
            self.table = list(subset.class_indices)
        elif kind == "class_label":
            names = list(feature.names)
            if len(names) != len(subset):
                raise SchemaError(
                    f"{what}: expected {len(subset)} classes of {subset.name}, found {len(names)}."
                )
            if all(_WNID.match(n) for n in names):
                self.table = _wnids_to_indices(names, allowed, what)
            else:
                self.table = _names_to_indices(names, subset.class_indices, subset.class_indices, what)
        else:
            raise SchemaError(f"{what}: the label column must hold class indices, found {feature}.")

    def __call__(self, value: Any) -> tuple[int | None, str | None]:
        if self.mode == "none":
            return NO_LABEL, None
        if value is None:
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


# ---------------------------------------------------------------------------------------------------------------
# Sources


@dataclass(frozen=True)
class _Part:
    """One `load_dataset` call: a repository (or local folder), config and split, with the metadata that holds
    for all its rows and a key that prefixes its sample ids."""

    load_kwargs: dict[str, Any]
    metadata: dict[str, Any]
    key: str


class _DatasetsSource(Source):
    """Shared by HubSource and ParquetSource: load each part lazily, check its features, map its rows.

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
        self._checked: list[tuple[Any, LabelMap]] | None = None

    def _load(self, part: _Part) -> Any:
        from datasets import load_dataset

        try:
            return load_dataset(**part.load_kwargs, streaming=self.streaming)
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

    def validate(self) -> None:
        if self._checked is not None:
            return
        if not self.parts:
            raise SchemaError(
                f"{self.describe()['location']}: nothing matches corruptions={self.corruptions}, "
                f"severities={self.severities}."
            )
        checked = []
        for part in self.parts:
            dataset = self._load(part)
            what = f"{part.load_kwargs.get('path')}" + (f" [{part.key}]" if part.key else "")
            if self.schema is None:
                self.schema = self._detect(dataset.features, what)
            label_map = self._check(self.schema, dataset.features, what)
            checked.append((dataset, label_map))
        self._checked = checked
        if self.schema.label_mode == "wnid_column":
            self._peek_first_label()

    def _peek_first_label(self) -> None:
        # A string wnid column cannot be checked from the features: read one row, so that a dataset of the wrong
        # label space fails here instead of skipping every sample.
        assert self._checked is not None and self.schema is not None
        dataset, label_map = self._checked[0]
        for row in dataset.select_columns([self.schema.label_column]).take(1):
            value = row[self.schema.label_column]
            if label_map(value)[0] is None:
                raise SchemaError(
                    f"{self.parts[0].load_kwargs.get('path')}: unknown wnid {value!r} in the first row."
                )

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
        from datasets import Image

        schema = self.schema
        assert self._checked is not None and schema is not None
        fixed = dict(schema.fixed_metadata)
        for part, (dataset, label_map) in zip(self.parts, self._checked, strict=True):
            columns = [schema.image_column]
            columns += [
                c for c in (schema.label_column, schema.corruption_column, schema.severity_column) if c
            ]
            if schema.label_mode == "none" and schema.label_column not in dataset.features:
                columns = [c for c in columns if c != schema.label_column]
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
                    self.report.skip(
                        sample_id, reason, f"label {row.get(schema.label_column)!r} is not mappable"
                    )
                    continue
                if budget is not None:
                    budget -= 1
                yield RawSample(data=data, label=label, sample_id=sample_id, metadata=metadata)


def _default_corruptions() -> tuple[str, ...]:
    from ..corruptions import STANDARD_CORRUPTIONS

    return STANDARD_CORRUPTIONS


class HubSource(_DatasetsSource):
    """A benchmark on the Hub, or a local copy of a Hub repository (a folder laid out like the repository, read
    through the same `load_dataset(folder)` packaged-builder path).

    path: "org/name" (optionally with a local folder in front); for a repository family (Tsomaros ImageNet-C,
        WNJXYK/TTA-ImageNet-C) the family id selects all requested corruptions x severities.
    schema: a `HubSchema` or its name; by default the one whose repository `path` names, else the first of
        `candidates` whose columns and labels fit the dataset's features.
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
    ) -> None:
        self.path = path.rstrip("/")
        if isinstance(schema, str):
            schema = get_hub_schema(schema)
        matched = match_schema(self.path, None if schema is None else [schema])
        if schema is None and matched is not None:
            schema = matched.schema
        self.revision = revision if revision is not None else (schema.revision if schema else None)
        parts = _hub_parts(self.path, schema, matched, config, split, self.revision, corruptions, severities)
        super().__init__(
            schema,
            parts,
            corruptions=corruptions,
            severities=severities,
            candidates=candidates,
            streaming=streaming,
        )

    def describe(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "location": self.path,
            "revision": self.revision,
            "schema": self.schema.name if self.schema else None,
            "parts": [p.key or p.load_kwargs.get("split") for p in self.parts],
            "generated": False,
        }


def _hub_parts(
    path: str,
    schema: HubSchema | None,
    matched: SchemaMatch | None,
    config: str | None,
    split: str | None,
    revision: str | None,
    corruptions: Sequence[str] | None,
    severities: Sequence[int] | None,
) -> list[_Part]:
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
        return [_Part(kwargs(path, config, split or "train"), {}, "")]
    default_split = split or schema.split
    default_config = config if config is not None else schema.config
    if matched is None or not matched.family:
        metadata = dict(matched.metadata) if matched is not None else {}
        return [_Part(kwargs(path, default_config, default_split), metadata, "")]
    chosen = (
        [normalise_corruption(c) for c in corruptions] if corruptions is not None else _default_corruptions()
    )
    levels = [int(s) for s in severities] if severities is not None else [1, 2, 3, 4, 5]
    parts = []
    for corruption in chosen:
        for severity in levels:
            fill = {"corruption": corruption, "severity": severity}
            repo = path
            if schema.repo_template is not None:
                repo = matched.prefix + schema.repo_template.format(**fill)
            config_name = schema.config_template.format(**fill) if schema.config_template else default_config
            split_name = schema.split_template.format(**fill) if schema.split_template else default_split
            parts.append(_Part(kwargs(repo, config_name, split_name), fill, f"{corruption}/{severity}"))
    return parts


class ParquetSource(_DatasetsSource):
    """Local parquet files in a Hub schema (a downloaded copy), read with `load_dataset("parquet", ...)`.

    path: a .parquet file or a folder searched recursively, files in sorted order. Corruption and severity come
    from the schema's columns, else from the path (a Tsomaros repository name, or `<corruption>/<severity>` /
    `<corruption>/severity_<s>` folders), else from `metadata`.
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
    ) -> None:
        self.path = os.fspath(path)
        if isinstance(schema, str):
            schema = get_hub_schema(schema)
        matched = _match_path_or_parent(self.path)
        if schema is None and matched is not None:
            schema = matched.schema
        files = _parquet_files(self.path)
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
        return {
            "kind": self.kind,
            "location": self.path,
            "revision": None,
            "schema": self.schema.name if self.schema else None,
            "files": len(self.parts),
            "generated": False,
        }


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
# The registry of known Hub repositories

_TSOMAROS_C = "Tsomaros/ImageNet-C-{corruption}-severity_{severity}"

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
    """The registered schemas of one benchmark, in registration order (the first is its default source)."""
    return tuple(s for s in HUB_SCHEMAS.values() if s.benchmark == benchmark)


for _schema in (
    HubSchema(
        name="ilsvrc-imagenet-1k",
        benchmark="imagenet-val",
        repo="ILSVRC/imagenet-1k",
        split="validation",
        label_mode="imagenet_names",
        confirmed="Gated. Unverified here: image + ClassLabel of the 1000 class names; names are verified "
        "against the standard list before any index is used.",
    ),
    HubSchema(
        name="tsomaros-imagenet-c",
        benchmark="imagenet-c",
        repo="Tsomaros/ImageNet-C",
        repo_template=_TSOMAROS_C,
        split="validation",
        label_mode="wnid_names",
        confirmed="Dataset card: image, label = ClassLabel of the 1000 wnids; split validation; "
        "data/validation-*.parquet.",
    ),
    HubSchema(
        name="wnjxyk-tta-imagenet-c",
        benchmark="imagenet-c",
        repo="WNJXYK/TTA-ImageNet-C",
        config_template="{corruption}",
        split="severity_1",
        split_template="severity_{severity}",
        label_mode="imagenet_names",
        confirmed="Dataset card: config = corruption, splits severity_1..5 (data/<corruption>/severity_<s>/). "
        "Unverified: column names (image, label) and the label feature.",
    ),
    HubSchema(
        name="barkermrl-imagenet-a",
        benchmark="imagenet-a",
        repo="barkermrl/imagenet-a",
        split="train",
        label_mode="subset_index",
        class_subset=imagenet_a_classes,
        confirmed="Files: data/train-0000{0,1}-of-00002-*.parquet, split train, 7.5k rows. Unverified: the label "
        "feature (200-class ClassLabel assumed; wnid or class names are both mapped and checked).",
    ),
    HubSchema(
        name="tsomaros-imagenet-a",
        benchmark="imagenet-a",
        repo="Tsomaros/imagenet-a",
        split="train",
        label_mode="subset_index",
        class_subset=imagenet_a_classes,
        confirmed="Viewer: one split train, 7.5k rows; labels are 200-class indices. Unverified: int vs ClassLabel.",
    ),
    HubSchema(
        name="axiong-imagenet-r",
        benchmark="imagenet-r",
        repo="axiong/imagenet-r",
        config="test",
        split="test",
        label_column="wnid",
        label_mode="wnid_column",
        class_subset=imagenet_r_classes,
        confirmed="Dataset card: config test, split test, features image, wnid (string), class_name (string).",
    ),
    HubSchema(
        name="voxel51-imagenet-o",
        benchmark="imagenet-o",
        repo="Voxel51/ImageNet-O",
        split="train",
        data_files={"train": "data/*"},
        label_column=None,
        label_mode="none",
        class_subset=imagenet_o_classes,
        fixed_metadata=(("is_ood", True),),
        confirmed="Files: FiftyOne layout, images under data/ (+ samples.json); read as an imagefolder of "
        "data/*. Every image is out-of-distribution; no in-distribution half.",
    ),
    HubSchema(
        name="nateraw-imagenet-sketch",
        benchmark="imagenet-sketch",
        repo="nateraw/imagenet-sketch",
        revision="refs/convert/parquet",
        data_files={"train": "default/train/*.parquet"},
        split="train",
        label_mode="imagenet_names",
        confirmed="refs/convert/parquet: default/train/00NN.parquet (the repo has a loading script). "
        "Unverified: the label feature (a 1000-class ClassLabel of names or wnids assumed, verified in order).",
    ),
    HubSchema(
        name="randall-lab-cifar10-c",
        benchmark="cifar10-c",
        repo="randall-lab/cifar10-c",
        revision="refs/convert/parquet",
        data_files={"test": "default/test/*.parquet"},
        split="test",
        label_mode="cifar10",
        corruption_column="corruption_name",
        severity_column="corruption_level",
        confirmed="Card: image, label (0..9), corruption_name, corruption_level (1..5), split test; the repo is "
        "a loading script. Unverified: that the parquet conversion exists at default/test/.",
    ),
    HubSchema(
        name="randall-lab-cifar100-c",
        benchmark="cifar100-c",
        repo="randall-lab/cifar100-c",
        revision="refs/convert/parquet",
        data_files={"test": "default/test/*.parquet"},
        split="test",
        label_mode="cifar100",
        corruption_column="corruption_name",
        severity_column="corruption_level",
        confirmed="Unverified: assumed to mirror randall-lab/cifar10-c (label, corruption_name, corruption_level).",
    ),
    HubSchema(
        name="uoft-cs-cifar10",
        benchmark="cifar10",
        repo="uoft-cs/cifar10",
        split="test",
        image_column="img",
        label_mode="cifar10",
        confirmed="Columns img, label (ClassLabel of the 10 names), split test.",
    ),
    HubSchema(
        name="uoft-cs-cifar100",
        benchmark="cifar100",
        repo="uoft-cs/cifar100",
        split="test",
        image_column="img",
        label_column="fine_label",
        label_mode="cifar100",
        confirmed="Columns img, fine_label (ClassLabel of the 100 fine names), coarse_label, split test.",
    ),
):
    register_hub_schema(_schema)
