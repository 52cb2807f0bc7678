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


@pytest.fixture
def umask():
    """Set the process's umask for one test, and put the previous one back."""
    previous = os.umask(0o022)
    yield lambda mask: os.umask(mask)
    os.umask(previous)


@pytest.mark.parametrize(("mask", "mode"), [(0o022, 0o644), (0o027, 0o640), (0o077, 0o600), (0o002, 0o664)])
def test_written_files_honour_the_umask_as_open_does(tmp_path, umask, mask, mode):
    """The destination gets 0666 less the umask, the mode a plain `open` gives a new file (checked beside it),
    whatever the private mode of the temporary file it was written as."""
    umask(mask)
    assert atomic_files.current_umask() == mask
    write_text_atomic(tmp_path / "results.json", "{}\n")
    with open(tmp_path / "plain.json", "w") as handle:
        handle.write("{}\n")
    assert (tmp_path / "results.json").stat().st_mode & 0o777 == mode
    assert (tmp_path / "plain.json").stat().st_mode & 0o777 == mode


def test_the_temporary_file_stays_private_while_it_is_written(tmp_path, umask):
    umask(0o022)
    with atomic_path(tmp_path / "weights.safetensors") as temporary:
        temporary.write_bytes(b"partial")
        assert temporary.stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "weights.safetensors").stat().st_mode & 0o777 == 0o644


def test_the_umask_is_read_without_proc_too(tmp_path, umask, monkeypatch):
    """Where /proc/self/status is not there, the umask is read by setting it and putting it back."""
    umask(0o027)
    real = atomic_files.Path.read_text

    def no_proc(self, *args, **kwargs):
        if str(self) == "/proc/self/status":
            raise OSError("no /proc")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(atomic_files.Path, "read_text", no_proc)
    assert atomic_files.current_umask() == 0o027
    assert os.umask(0o027) == 0o027  # left as it was
