# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""A benchmark's predictions as the analysis reads them: by column, in fixed-size batches, or one cell at a time.

A generated ImageNet-C has 3.75 M rows; as one pandas frame (object columns of strings and top-5 lists) that is
about 1.7 KiB a row, plus as much again in pyarrow buffers. `Predictions` reads a predictions parquet file
(`PredictionsFile`) in Arrow record batches of `BATCH_ROWS` rows and the columns asked for, so that what the reader
holds does not grow with the benchmark: the metrics and intervals of a kind with cells reduce the batches one at a
time (`kinds.BenchmarkKind.reads_batches`), and the accuracy of one cell reads that cell only (`cell`). Smaller
benchmarks are still read whole (`frame`). `FramePredictions` gives a frame already in memory the same interface
(tests, plug-ins), so that both go through the same code.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .predictions import with_derived_columns

#: Rows of one record batch: about 13 MiB of the columns ImageNet-C's metrics read.
BATCH_ROWS = 65_536
#: The columns the analysis reads (never the per-sample metadata JSON, the largest, which no metric reads).
PREDICTION_COLUMNS = (
    "sample_id",
    "clean_sample_id",
    "label",
    "prediction",
    "top5",
    "subset_prediction",
    "ood_score",
    "corruption",
    "severity",
    "variant",
    "perturbation",
    "difficulty",
    "is_ood",
    "frame_top5",
    "logits",
)


class Predictions(ABC):
    """A benchmark's predictions: `frame` (all rows), `batches` (`batch_rows`, default `BATCH_ROWS`, in file
    order), `cell` (the rows of one cell), `unique` (a column's distinct values). `columns` None means
    `PREDICTION_COLUMNS`."""

    num_rows: int
    names: tuple[str, ...]

    @abstractmethod
    def batches(
        self, columns: Sequence[str] | None = None, batch_rows: int | None = None
    ) -> Iterator[pd.DataFrame]:
        """The rows in order, `batch_rows` at a time, as frames of `columns`."""

    @abstractmethod
    def frame(self, columns: Sequence[str] | None = None) -> pd.DataFrame:
        """Every row, as one frame of `columns`."""

    @abstractmethod
    def cell(self, conditions: Mapping[str, Any]) -> pd.DataFrame:
        """The rows whose columns equal `conditions` (column -> value, compared as the column's type), in order."""

    def present(self, columns: Sequence[str] | None) -> list[str]:
        """`columns` (default `PREDICTION_COLUMNS`) that these predictions have, in that order."""
        return [c for c in (PREDICTION_COLUMNS if columns is None else columns) if c in self.names]

    def unique(self, column: str) -> set[Any]:
        """The distinct non-null values of `column`, read batch by batch."""
        found: set[Any] = set()
        for batch in self.batches([column]):
            found.update(batch[column].dropna().unique().tolist())
        return found


class FramePredictions(Predictions):
    """Predictions already in memory, behind the same interface as a file's."""

    def __init__(self, frame: pd.DataFrame) -> None:
        self._frame = frame
        self.num_rows = len(frame)
        self.names = tuple(frame.columns)

    def batches(
        self, columns: Sequence[str] | None = None, batch_rows: int | None = None
    ) -> Iterator[pd.DataFrame]:
        chosen, size = self.present(columns), batch_rows or BATCH_ROWS
        for start in range(0, self.num_rows, size):
            yield self._frame.iloc[start : start + size][chosen].reset_index(drop=True)

    def frame(self, columns: Sequence[str] | None = None) -> pd.DataFrame:
        return self._frame[self.present(columns)] if columns is not None else self._frame

    def cell(self, conditions: Mapping[str, Any]) -> pd.DataFrame:
        kept = self._frame
        for column, value in conditions.items():
            values = kept[column]
            if pd.api.types.is_numeric_dtype(values):
                kept = kept[values.astype("Int64") == int(value)]
            else:
                kept = kept[values.astype(str) == str(value)]
        return kept.reset_index(drop=True)


class PredictionsFile(Predictions):
    """A predictions parquet file, read in Arrow record batches, or whole once (`frame`). Files written before the
    "clean_sample_id" and "shard" columns existed get them as their runs made them
    (`predictions.with_derived_columns`), batch by batch."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        schema = pq.read_schema(self.path)
        self._stored = tuple(schema.names)
        # Derivable where the clean ids are there or the metadata they are derived from is.
        derivable = "clean_sample_id" in self._stored or "metadata" in self._stored
        self._derived = derivable and not {"clean_sample_id", "shard"} <= set(self._stored)
        self.names = tuple(
            dict.fromkeys([*self._stored, *(("clean_sample_id", "shard") if derivable else ())])
        )
        self.num_rows = pq.ParquetFile(self.path).metadata.num_rows
        self._whole: pd.DataFrame | None = None

    def _tables(self, columns: list[str], batch_rows: int | None) -> Iterator[pa.Table]:
        read = columns
        if self._derived:  # the derived columns need the sample id and metadata of the same rows
            wanted = [*columns, "sample_id", "clean_sample_id", "metadata"]
            read = [c for c in dict.fromkeys(wanted) if c in self._stored]
        with pq.ParquetFile(self.path) as file:
            for batch in file.iter_batches(batch_size=batch_rows or BATCH_ROWS, columns=read):
                table = pa.Table.from_batches([batch])
                yield with_derived_columns(table).select(columns) if self._derived else table

    def batches(
        self, columns: Sequence[str] | None = None, batch_rows: int | None = None
    ) -> Iterator[pd.DataFrame]:
        for table in self._tables(self.present(columns), batch_rows):
            yield table.to_pandas()

    def frame(self, columns: Sequence[str] | None = None) -> pd.DataFrame:
        """Every row, read once (every column but the metadata JSON) and kept: the metrics, the probes' image
        selection and the analysis of a benchmark read whole share one read."""
        if self._whole is None:
            kept = [name for name in self.names if name != "metadata"]
            if self._derived:
                self._whole = with_derived_columns(pq.read_table(self.path)).select(kept).to_pandas()
            else:
                self._whole = pq.read_table(self.path, columns=kept).to_pandas()
        return self._whole if columns is None else self._whole[self.present(columns)]

    def cell(self, conditions: Mapping[str, Any]) -> pd.DataFrame:
        tables = []
        for table in self._tables(self.present(None), None):
            keep = None
            for column, value in conditions.items():
                values = table.column(column)
                wanted = int(value) if pa.types.is_integer(values.type) else str(value)
                equal = pc.fill_null(pc.equal(values.cast(pa.string()) if isinstance(wanted, str) else values,
                                              wanted), False)  # fmt: skip
                keep = equal if keep is None else pc.and_(keep, equal)
            tables.append(table if keep is None else table.filter(keep))
        if not tables:
            return pq.read_table(self.path, columns=self.present(None)).slice(0, 0).to_pandas()
        return pa.concat_tables(tables).to_pandas()


def as_predictions(predictions: Predictions | pd.DataFrame) -> Predictions:
    """`predictions` as a `Predictions` (a frame is wrapped)."""
    return predictions if isinstance(predictions, Predictions) else FramePredictions(predictions)


__all__ = [
    "BATCH_ROWS",
    "PREDICTION_COLUMNS",
    "FramePredictions",
    "Predictions",
    "PredictionsFile",
    "as_predictions",
]
