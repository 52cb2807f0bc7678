# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""`HubSource`: a benchmark on the Hugging Face Hub (a Hub id, or a local copy laid out like the repository), read
through `datasets.load_dataset(..., streaming=True)` as a `DatasetsSource` (`datasets_source`, which also says what
`validate()` checks before any image is decoded); downloaded parquet files are read by `ParquetSource`
(`hub_parquet`).

How each known repository stores its benchmark is its `HubSchema` (`hub_schemas`); how its label column becomes a
benchmark label is `LabelMap` (`hub_labels`); the registered repositories, with the evidence for every fact, are in
`hub_datasets`. The names of those modules are importable from here too.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from typing import Any

from ..constants import STANDARD_CORRUPTIONS
from .datasets_source import DatasetsSource, _Part
from .hub_labels import (
    CIFAR10_CLASSES,
    CIFAR100_CLASSES,
    CLASS_NAME_VARIANTS,
    ClassNameVariant,
    LabelMap,
    register_class_name_variant,
)
from .hub_schemas import (
    HUB_SCHEMAS,
    LABEL_MODES,
    LAYOUTS,
    UNSTREAMABLE_REPOS,
    Evidence,
    HubSchema,
    SchemaMatch,
    UnstreamableRepo,
    check_complete_split,
    check_not_refused,
    check_streamable,
    get_hub_schema,
    hub_schemas_for,
    match_schema,
    normalise_corruption,
    register_hub_schema,
    register_unstreamable_repo,
)
from .samples import SchemaError

logger = logging.getLogger(__name__)


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
        check_not_refused(self.path)
        if split is not None:
            check_complete_split(split, self.path)
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
        [normalise_corruption(c) for c in corruptions] if corruptions is not None else STANDARD_CORRUPTIONS
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


__all__ = [
    "CIFAR10_CLASSES",
    "CIFAR100_CLASSES",
    "CLASS_NAME_VARIANTS",
    "HUB_SCHEMAS",
    "LABEL_MODES",
    "LAYOUTS",
    "UNSTREAMABLE_REPOS",
    "ClassNameVariant",
    "Evidence",
    "HubSchema",
    "HubSource",
    "LabelMap",
    "SchemaMatch",
    "UnstreamableRepo",
    "check_streamable",
    "get_hub_schema",
    "hub_schemas_for",
    "match_schema",
    "normalise_corruption",
    "register_class_name_variant",
    "register_hub_schema",
    "register_unstreamable_repo",
]
