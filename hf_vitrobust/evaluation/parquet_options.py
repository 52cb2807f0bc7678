# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Parquet written the way `datasets` writes it (`Dataset.to_parquet`, `push_to_hub`): content-defined chunking,
a page index, its per-column compression and dictionary options and its row-group size. A re-pushed predictions
file then shares most of its Xet chunks with the one already on the Hub (only the changed pages upload), and the
Hub's viewer reads pages through the index.

The settings are read from the installed `datasets` (`config.DEFAULT_CDC_OPTIONS`, `config.MAX_ROW_GROUP_SIZE`
through `arrow_writer.get_writer_batch_size_from_data_size`, `arrow_writer.get_parquet_column_options`), so they
follow it when it changes; a `datasets` without one of them leaves pyarrow's default for it (which is what
`datasets` passes today). A pyarrow without content-defined chunking (before 21) writes fixed-size pages. Each
file records its mode as `datasets` records it: the key-value metadata "content_defined_chunking" holds the
chunker's parameters as JSON, and is absent from a file of fixed-size pages.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import pyarrow as pa
import pyarrow.parquet as pq

#: The file key-value metadata `datasets` writes the chunker's parameters under.
CDC_METADATA_KEY = "content_defined_chunking"


@functools.cache
def content_defined_chunking() -> dict[str, int] | bool:
    """The `use_content_defined_chunking` value `datasets` passes (its `config.DEFAULT_CDC_OPTIONS`; True, pyarrow's
    own defaults, for a `datasets` without it), or False where the installed pyarrow cannot write content-defined
    chunks. Found by trying the option, not by reading a version."""
    from datasets import config

    options = getattr(config, "DEFAULT_CDC_OPTIONS", True)
    try:
        with pq.ParquetWriter(
            io.BytesIO(), pa.schema([("probe", pa.int64())]), use_content_defined_chunking=options
        ):
            pass
    except TypeError:  # a pyarrow that predates the option refuses the keyword
        return False
    return dict(options) if isinstance(options, dict) else True


def parquet_write_options(schema: pa.Schema) -> dict[str, Any]:
    """The keyword arguments of `pq.ParquetWriter` for a file of `schema`, as `datasets` passes them:
    content-defined chunking (where pyarrow has it), a page index, and its per-column compression and dictionary
    options (snappy and dictionary-encoded for every column of a predictions table)."""
    from datasets import Features, arrow_writer

    column_options = getattr(arrow_writer, "get_parquet_column_options", None)
    plain = schema.remove_metadata()
    columns = column_options(Features.from_arrow_schema(plain), plain) if column_options else {}
    chunking = content_defined_chunking()
    # Without it, the keyword is left out: a pyarrow that predates it refuses even `False`.
    chunker = {"use_content_defined_chunking": chunking} if chunking is not False else {}
    return {**chunker, "write_page_index": True, **columns}


def row_group_rows(table: pa.Table) -> int | None:
    """Rows per row group for `table`, as `datasets` sizes them (about `config.MAX_ROW_GROUP_SIZE` of uncompressed
    data, 100 MB), or None (pyarrow's default) for a `datasets` that does not say."""
    from datasets import arrow_writer

    from_size = getattr(arrow_writer, "get_writer_batch_size_from_data_size", None)
    return from_size(table.num_rows, table.nbytes) if from_size else None


@contextlib.contextmanager
def parquet_writer(where: str | Path | BinaryIO, schema: pa.Schema) -> Iterator[pq.ParquetWriter]:
    """A `pq.ParquetWriter` with `parquet_write_options(schema)`, for a file written table by table (one row group
    or more per `write_table`, so memory holds one table at a time). On a clean exit the chunking mode is recorded
    in the file's key-value metadata, as `datasets` does, and the file closed."""
    options = parquet_write_options(schema)
    with pq.ParquetWriter(where, schema, **options) as writer:
        yield writer
        if "use_content_defined_chunking" in options:
            chunking = options["use_content_defined_chunking"]
            writer.add_key_value_metadata({CDC_METADATA_KEY: json.dumps(chunking)})


def write_parquet(where: str | Path | BinaryIO, table: pa.Table) -> None:
    """`table` written to `where` as `datasets` would write it (`parquet_writer`, `row_group_rows`): the same rows,
    columns, schema and schema metadata as `pq.write_table` gives, in pages laid out for Xet de-duplication."""
    with parquet_writer(where, table.schema) as writer:
        writer.write_table(table, row_group_size=row_group_rows(table))


__all__ = [
    "CDC_METADATA_KEY",
    "content_defined_chunking",
    "parquet_write_options",
    "parquet_writer",
    "row_group_rows",
    "write_parquet",
]
