"""hf_vitrobust.atomic_files: a write either completes (flushed, then renamed over the destination) or leaves the
previous file and no temporary file behind."""

import errno
import os

import pytest

from hf_vitrobust import atomic_files
from hf_vitrobust.atomic_files import atomic_path, write_bytes_atomic, write_text_atomic


def _count_fsyncs(monkeypatch) -> list[int]:
    calls: list[int] = []
    real_fsync = os.fsync

    def counting(descriptor: int) -> None:
        calls.append(descriptor)
        real_fsync(descriptor)

    monkeypatch.setattr(atomic_files.os, "fsync", counting)
    return calls


def test_writes_create_folders_flush_and_leave_only_the_destination(tmp_path, monkeypatch):
    fsyncs = _count_fsyncs(monkeypatch)
    destination = tmp_path / "a" / "b" / "report.md"
    write_text_atomic(destination, "héllo\n")
    assert destination.read_bytes() == "héllo\n".encode()
    assert len(fsyncs) == 1
    write_bytes_atomic(destination, b"\x00\x01", durable=False)
    assert destination.read_bytes() == b"\x00\x01" and len(fsyncs) == 1  # not durable: no fsync
    assert os.listdir(destination.parent) == ["report.md"]


def test_temporary_file_is_hidden_beside_the_destination(tmp_path):
    destination = tmp_path / "chunk-000003.parquet"
    with atomic_path(destination) as temporary:
        assert temporary.parent == tmp_path and temporary.name.startswith(".chunk-000003.parquet.")
        assert temporary.name.endswith(".tmp") and not destination.exists()
        temporary.write_bytes(b"new")
    assert destination.read_bytes() == b"new" and not temporary.exists()


@pytest.mark.parametrize("failure", ["writer", "fsync", "interrupt"])
def test_a_failed_write_keeps_the_previous_file_and_no_debris(tmp_path, monkeypatch, failure):
    destination = tmp_path / "results.json"
    write_text_atomic(destination, '{"complete": true}\n')
    if failure == "fsync":

        def no_space(descriptor: int) -> None:
            raise OSError(errno.ENOSPC, "No space left on device")

        monkeypatch.setattr(atomic_files.os, "fsync", no_space)
    expected = {"writer": ValueError, "fsync": OSError, "interrupt": KeyboardInterrupt}[failure]
    with pytest.raises(expected), atomic_path(destination) as temporary:
        temporary.write_text('{"complete": fa')  # half of the new content is on disk
        if failure == "writer":
            raise ValueError("writer failed")
        if failure == "interrupt":
            raise KeyboardInterrupt
    assert destination.read_text() == '{"complete": true}\n'
    assert os.listdir(tmp_path) == ["results.json"]
