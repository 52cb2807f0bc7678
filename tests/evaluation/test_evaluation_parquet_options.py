"""hf_vitrobust.evaluation.parquet_options: predictions parquet written as `datasets` writes it.

The same rows, columns and schema as a plain `pq.write_table`; every column chunk has a page index; the file records
the chunker's parameters as `datasets` does (read from the installed `datasets`, and following it when its config
changes); a pyarrow without content-defined chunking writes fixed pages and records nothing. Content-defined
chunking is checked by what users get from it: after rows are inserted mid-file, Xet's own chunker (hf_xet, into a
local CAS folder) finds more of the second file in the first than it does for a plain write.
"""

import importlib.util
import io
import json
from pathlib import Path

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hf_vitrobust.analysis.predictions import PREDICTION_SCHEMA
from hf_vitrobust.evaluation import parquet_options
from hf_vitrobust.evaluation.parquet_options import CDC_METADATA_KEY, write_parquet

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "parquet_dedup.py"
_spec = importlib.util.spec_from_file_location("benchmark_parquet_dedup", _PATH)
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


@pytest.fixture(autouse=True)
def _probe_again():
    """Each test probes pyarrow afresh (one of them pretends it lacks content-defined chunking)."""
    parquet_options.content_defined_chunking.cache_clear()
    yield
    parquet_options.content_defined_chunking.cache_clear()


def _bytes(write, table: pa.Table) -> bytes:
    buffer = io.BytesIO()
    write(buffer, table)
    return buffer.getvalue()


def _plain(where, table: pa.Table) -> None:
    pq.write_table(table, where)


def test_same_rows_columns_and_schema_as_a_plain_write(tmp_path):
    skips = {b"hf_vitrobust.skipped": json.dumps({"skipped": {"corrupt": 2}}).encode()}
    table = bench.predictions_table(20_000).replace_schema_metadata(skips)
    write_parquet(tmp_path / "ours.parquet", table)
    pq.write_table(table, tmp_path / "plain.parquet")
    ours, plain = pq.read_table(tmp_path / "ours.parquet"), pq.read_table(tmp_path / "plain.parquet")
    assert ours.schema.equals(plain.schema, check_metadata=True) and ours.schema.metadata == skips
    assert ours.schema.remove_metadata().equals(PREDICTION_SCHEMA)
    assert ours.num_rows == 20_000 and ours.equals(plain, check_metadata=True)
    assert ours.to_pylist()[12_345] == table.slice(12_345, 1).to_pylist()[0]


def test_every_column_chunk_has_a_page_index_and_the_file_records_datasets_chunker(tmp_path):
    write_parquet(tmp_path / "ours.parquet", bench.predictions_table(5_000))
    pq.write_table(bench.predictions_table(5_000), tmp_path / "plain.parquet")
    ours, plain = pq.ParquetFile(tmp_path / "ours.parquet"), pq.ParquetFile(tmp_path / "plain.parquet")
    chunks = [ours.metadata.row_group(g).column(c) for g in range(ours.num_row_groups) for c in range(21)]
    assert len(chunks) == 21 * ours.num_row_groups and ours.metadata.num_columns == 21
    assert all(chunk.has_offset_index and chunk.has_column_index for chunk in chunks)
    assert {chunk.compression for chunk in chunks} == {"SNAPPY"}
    recorded = ours.metadata.metadata[CDC_METADATA_KEY.encode()]
    assert json.loads(recorded) == datasets.config.DEFAULT_CDC_OPTIONS
    assert json.loads(recorded) == {
        "min_chunk_size": 256 * 1024,
        "max_chunk_size": 1024 * 1024,
        "norm_level": 0,
    }
    # The plain write, for contrast: no page index, nothing recorded.
    assert not plain.metadata.row_group(0).column(0).has_offset_index
    assert CDC_METADATA_KEY.encode() not in plain.metadata.metadata


def _column_chunks(data: bytes) -> list[bytes]:
    """The bytes of every column chunk (dictionary page and data pages), row group by row group."""
    metadata = pq.ParquetFile(io.BytesIO(data)).metadata
    chunks = []
    for group in range(metadata.num_row_groups):
        for column in range(metadata.num_columns):
            chunk = metadata.row_group(group).column(column)
            start = chunk.dictionary_page_offset if chunk.has_dictionary_page else chunk.data_page_offset
            chunks.append(data[start : start + chunk.total_compressed_size])
    return chunks


@pytest.mark.parametrize("kind", ["imagenet-c rows", "rows with logits"])
def test_the_pages_are_byte_for_byte_those_datasets_writes(kind, monkeypatch):
    """`datasets.Dataset(table).to_parquet` writes the same row groups and the same bytes in every column chunk
    (it adds only its "huggingface" features metadata to the footer)."""
    monkeypatch.setattr(datasets.config, "MAX_ROW_GROUP_SIZE", "1MB")  # several row groups from a small table
    table = bench.predictions_table(20_000)
    if kind == "rows with logits":
        table = bench.with_logits(bench.predictions_table(600))
    theirs = io.BytesIO()
    datasets.Dataset(table).to_parquet(theirs)
    ours, theirs = _bytes(write_parquet, table), theirs.getvalue()
    groups = pq.ParquetFile(io.BytesIO(ours)).metadata.num_row_groups
    assert groups == pq.ParquetFile(io.BytesIO(theirs)).metadata.num_row_groups > 1
    assert _column_chunks(ours) == _column_chunks(theirs)
    assert _column_chunks(ours) != _column_chunks(_bytes(_plain, table))  # a plain write differs


def test_the_options_follow_datasets_config(tmp_path, monkeypatch):
    """A change of `datasets`' chunker parameters or row-group size reaches our files."""
    chunker = {"min_chunk_size": 64 * 1024, "max_chunk_size": 128 * 1024, "norm_level": 1}
    monkeypatch.setattr(datasets.config, "DEFAULT_CDC_OPTIONS", chunker)
    monkeypatch.setattr(datasets.config, "MAX_ROW_GROUP_SIZE", "1MB")
    table = bench.with_logits(
        bench.predictions_table(1_000)
    )  # about 4 MB uncompressed: 4 row groups of at most 1 MB
    write_parquet(tmp_path / "ours.parquet", table)
    file = pq.ParquetFile(tmp_path / "ours.parquet")
    assert json.loads(file.metadata.metadata[CDC_METADATA_KEY.encode()]) == chunker
    per_group = 1_000 * 1_000_000 // table.nbytes
    assert 200 < per_group < 250  # 4 kB of logits a row
    sizes = [file.metadata.row_group(g).num_rows for g in range(file.num_row_groups)]
    assert sizes == [per_group] * (1_000 // per_group) + [1_000 % per_group]
    assert file.read().equals(table)


def test_a_pyarrow_without_content_defined_chunking_writes_fixed_pages_and_records_none(
    tmp_path, monkeypatch
):
    """pyarrow before 21 refuses the keyword with this TypeError (seen with pyarrow 20.0.0); the file is then
    written with the rest of the options and says nothing of a chunker."""
    real = pq.ParquetWriter

    class OldParquetWriter(real):
        def __init__(self, *args, **kwargs):
            if "use_content_defined_chunking" in kwargs:
                raise TypeError(
                    "__cinit__() got an unexpected keyword argument 'use_content_defined_chunking'"
                )
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(pq, "ParquetWriter", OldParquetWriter)
    assert parquet_options.content_defined_chunking() is False
    assert "use_content_defined_chunking" not in parquet_options.parquet_write_options(PREDICTION_SCHEMA)
    table = bench.predictions_table(3_000)
    write_parquet(tmp_path / "ours.parquet", table)
    file = pq.ParquetFile(tmp_path / "ours.parquet")
    assert CDC_METADATA_KEY.encode() not in file.metadata.metadata
    assert all(file.metadata.row_group(0).column(c).has_offset_index for c in range(21))
    assert file.read().equals(table)


def test_content_defined_pages_let_xet_reuse_more_of_a_file_after_rows_are_inserted(tmp_path, monkeypatch):
    """100 rows inserted in the middle of 300,000 ImageNet-C rows (samples once skipped, now read): the share of
    the second file Xet finds in the first, with our options and with a plain write."""
    pytest.importorskip("hf_xet")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))  # hf_xet's logs
    first = bench.predictions_table(300_000)
    second = pa.concat_tables(
        [first.slice(0, 150_000), bench.predictions_table(100, start=150_000, seed=1), first.slice(150_000)]
    )
    reused = {}
    for name, write in (("ours", write_parquet), ("plain", _plain)):
        total, new = bench.deduplicated(_bytes(write, first), _bytes(write, second), tmp_path / f"cas-{name}")
        reused[name] = 1 - new / total
    assert reused["ours"] > 0.5 and reused["plain"] < 0.45 and reused["ours"] - reused["plain"] > 0.15, reused
