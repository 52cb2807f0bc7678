# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""`ParquetSource`: local parquet files in a Hub schema (a downloaded copy of a Hub repository), a `DatasetsSource`
read with `load_dataset("parquet", ...)`, and what it reads from the files' paths: the schema of the repository a
path lies in (`_match_path_or_parent`), the split a file or folder name says (`split_named_by`), and the
corruption and severity of `<corruption>/<severity>` folders."""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Sequence
from typing import Any

from ..constants import ALL_CORRUPTIONS
from .datasets_source import DatasetsSource, _Part
from .hub_schemas import HubSchema, SchemaMatch, check_complete_split, get_hub_schema, match_schema
from .samples import SchemaError


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
        for file in files:  # a parquet conversion's partial-<split>/ folder holds only part of the data
            check_complete_split(os.path.basename(os.path.dirname(os.path.abspath(file))), file)
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
    known = set(ALL_CORRUPTIONS)
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


__all__ = ["ParquetSource", "split_named_by"]
