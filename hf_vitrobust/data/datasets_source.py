# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""`DatasetsSource`: what the sources read through `datasets.load_dataset(..., streaming=True)` share (`HubSource`
in `hub`, `ParquetSource` in `hub_parquet`): each part (one `load_dataset` call) loaded lazily, its features, first
labels and row count checked, its rows mapped to samples.

`validate()` runs before any image is decoded: it reads the `features` of each part (the parquet schema / dataset
card), checks the columns and the label names, reads the first batch of labels (their range must fit the label
mode; a split without labels is refused), and compares the row count with the known one where the card declares
it or the files show it. The image column is cast to `Image(decode=False)` and decoded by `Source.samples()`,
because one truncated file inside a `datasets` stream otherwise ends the whole stream.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from .decoding import IMAGE_FILE_EXTENSIONS
from .hub_labels import LabelMap
from .hub_schemas import HubSchema, normalise_corruption
from .samples import RawSample, SchemaError, Source

logger = logging.getLogger(__name__)

#: Labels read from each part before any image is decoded: their range is checked against the label mode.
FIRST_BATCH_ROWS = 32


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

    `rows_per_cell_part`: when set (by `limited(limit, per_cell=True)`), a part that holds one corruption/severity
    cell (a Tsomaros repository, a WNJXYK split) stops being read after that many samples, instead of streaming the
    rest.
    """

    kind = "datasets"
    rows_per_cell_part: int | None = None
    #: The Hub id or local path the parts are read from (set by each subclass).
    path: str

    def limited(self, limit: int, per_cell: bool = False) -> Source:
        """`Source.limited`; per cell, this source also stops reading a part that holds a single cell after `limit`
        rows (it sets its own `rows_per_cell_part`)."""
        if per_cell:
            self.rows_per_cell_part = limit
        return super().limited(limit, per_cell)

    def sampled(self, limit: int, seed: int, per_cell: bool = False) -> Source:
        """`Source.sampled`. A random subset cannot stop reading early: every part is read to its end (its rows
        listed, images not decoded) before the first sample is yielded."""
        return super().sampled(limit, seed, per_cell)

    @property
    def countable(self) -> bool:
        """A local copy (a folder or parquet files) is listed without downloading anything; a Hub stream is not."""
        return os.path.exists(self.path)

    def count_without_decoding(self) -> int | None:
        """Rows of every part, from the parquet footers of local files or the benchmark's known split sizes, for a
        progress bar (no row is read; rows another option leaves out are counted); None where a part has neither."""
        import pyarrow.parquet as pq

        total = 0
        for part in self.parts:
            files = part.load_kwargs.get("data_files") if part.load_kwargs.get("path") == "parquet" else None
            expected = self._expected_rows(part)
            if files and all(os.path.isfile(f) for f in files):
                total += sum(pq.ParquetFile(f).metadata.num_rows for f in files)
            elif expected is not None:
                total += expected
            else:
                return None
        return total if self.rows_per_cell_part is None else None

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
        self._shards: list[tuple[str, int, int | None]] | None = None
        self._datasets: dict[int, Any] = {}

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

    def _loaded(self, part_index: int) -> Any:
        """Part `part_index` loaded (once), not yet checked: `load_dataset` lists its files."""
        if part_index not in self._datasets:
            self._datasets[part_index] = self._load(self.parts[part_index])
        return self._datasets[part_index]

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
        dataset = self._loaded(part_index)
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
        rows = dataset.select_columns([column])
        files = int(getattr(rows, "n_shards", 1) or 1)
        if self.streaming and files > 1:  # the first file's rows only: the check reads no other file
            rows = rows.shard(num_shards=files, index=0)
        values = [row[column] for row in rows.take(FIRST_BATCH_ROWS)]
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

    def validate_shards(self, shards: Sequence[int]) -> None:
        """The first part, and the parts of `shards`."""
        if not self.parts:
            self.validate()
        table = self._shard_table()
        for part_index in sorted({0} | {table[shard][1] for shard in shards}):
            self.validate_part(part_index)

    def _files_in_part(self, part_index: int) -> int:
        """How many files (`datasets` shards) of part `part_index` are read as shards of their own: a local
        parquet file is one; a Hub or folder part is split into its `n_shards` parquet files (loading it lists
        them), except an image-folder layout (one file per image: the part stays one shard)."""
        part = self.parts[part_index]
        if part.load_kwargs.get("path") == "parquet" and len(part.load_kwargs.get("data_files") or ()) == 1:
            return 1
        if not self.streaming or (self.schema is not None and self.schema.layout == "imagefolder"):
            return 1
        dataset = self._loaded(part_index)
        return max(1, int(getattr(dataset, "n_shards", 1) or 1))

    def _shard_table(self) -> list[tuple[str, int, int | None]]:
        """(name, part index, file index in the part or None for a whole part) of every shard, in stream order."""
        if self._shards is None:
            table: list[tuple[str, int, int | None]] = []
            for index, part in enumerate(self.parts):
                name = part.key or part.load_kwargs.get("split", "") or "train"
                files = self._files_in_part(index)
                if files == 1:
                    table.append((name, index, None))
                else:
                    table += [(f"{name}#{file:05d}", index, file) for file in range(files)]
            self._shards = table
        return self._shards

    def shards(self) -> tuple[str, ...]:
        """Each part (a repository, config and split; a local parquet file), and a part of several parquet files
        (a Hub ImageNet-C cell, a validation split) split into its files: `IterableDataset.shard(n_shards, k)`
        reads file k only."""
        return tuple(name for name, _, _ in self._shard_table())

    def shard_raw_samples(self, index: int) -> Iterator[RawSample]:
        table = self._shard_table()
        if not 0 <= index < len(table):
            raise IndexError(f"{self.path} has {len(table)} shards; there is no shard {index}.")
        _, part_index, file = table[index]
        return self._part_rows(part_index, [file])

    def part_raw_samples(self, part_index: int) -> Iterator[RawSample]:
        """The raw samples of one part, in its order (what `raw_samples` chains over every part)."""
        files = self._files_in_part(part_index)
        return self._part_rows(part_index, range(files) if files > 1 else [None])

    def label_rows(self) -> Iterator[tuple[str, int | None]]:
        """(sample id, label) of every raw sample, reading the label (and cell) columns only, not the images: what
        a class-balanced draw over the whole source reads first (`balanced_batches.source_labels`). Parquet parts
        (local files, Hub repositories and their parquet conversions) are loaded again with `columns=`, which
        the parquet reader pushes down (for the Hub: range requests of those column chunks); `select_columns` on a
        stream does not, so other layouts (image folders) read their rows as the image pass does. A row whose
        image is missing is listed here and skipped when its image is read."""
        self.validate()
        for index in range(len(self.parts)):
            files = self._files_in_part(index)
            for raw in self._part_rows(index, range(files) if files > 1 else [None], with_images=False):
                yield raw.sample_id, raw.label

    def _part_rows(
        self, part_index: int, files: Sequence[int | None], with_images: bool = True
    ) -> Iterator[RawSample]:
        """The raw samples of the given files of one part (None: the part as one stream). A part of several files
        numbers its rows per file ("<part>/<file index, 5 digits>/row-<row in the file>"), so that a file is read
        without counting the rows of the files before it. with_images False: the image column is not read (each
        raw sample's data is None)."""
        from datasets import Image

        dataset, label_map = self.validate_part(part_index)
        schema = self.schema
        assert schema is not None
        part = self.parts[part_index]
        fixed = dict(schema.fixed_metadata)
        columns = [schema.image_column] if with_images else []
        columns += [c for c in (schema.label_column, schema.corruption_column, schema.severity_column) if c]
        columns = [c for c in columns if c in dataset.features]
        if with_images:
            rows = dataset.select_columns(columns).cast_column(schema.image_column, Image(decode=False))
        else:
            rows = self._columns_only(part_index, columns) or dataset.select_columns(columns)
        prefix = f"{part.key}/" if part.key else ""
        one_cell = "corruption" in part.metadata and "severity" in part.metadata
        budget = self.rows_per_cell_part if one_cell else None
        num_files = self._files_in_part(part_index)
        for file in files:
            if file is None:
                file_rows, file_prefix = rows, prefix
            else:
                file_rows, file_prefix = rows.shard(num_shards=num_files, index=file), f"{prefix}{file:05d}/"
            for index, row in enumerate(file_rows):
                if budget is not None and budget <= 0:
                    return
                metadata = {**fixed, **part.metadata}
                if schema.corruption_column:
                    metadata["corruption"] = normalise_corruption(row[schema.corruption_column])
                if schema.severity_column:
                    metadata["severity"] = int(row[schema.severity_column])
                if not self._wanted(metadata):
                    continue
                sample_id = f"{file_prefix}row-{index:06d}"
                data = row[schema.image_column] if with_images else None
                if with_images and (
                    data is None
                    or (isinstance(data, dict) and data.get("bytes") is None and not data.get("path"))
                ):
                    self.report.skip(sample_id, "missing_image", "the row has no image")
                    continue
                label, reason = label_map(row.get(schema.label_column) if schema.label_column else None)
                if reason is not None and reason != "missing_label":
                    if with_images:  # the label pass leaves the counting to the pass that reads the images
                        self.report.skip(
                            sample_id, reason, f"label {row.get(schema.label_column)!r} is not mappable"
                        )
                    continue
                if budget is not None:
                    budget -= 1
                yield RawSample(data=data, label=label, sample_id=sample_id, metadata=metadata)

    def _columns_only(self, part_index: int, columns: list[str]) -> Any:
        """Part `part_index` loaded with only `columns` read from its files (the parquet builder's `columns`), or
        None where its builder has no such option (an image folder)."""
        part = self.parts[part_index]
        if self.schema is not None and self.schema.layout == "imagefolder":
            return None
        from datasets import load_dataset

        try:
            return load_dataset(**part.load_kwargs, columns=columns, streaming=self.streaming)
        except (TypeError, ValueError):
            return None

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


__all__ = ["FIRST_BATCH_ROWS", "DatasetsSource"]
