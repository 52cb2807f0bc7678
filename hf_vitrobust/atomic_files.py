# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Files written atomically: a reader sees the previous complete file or the new complete one, never a partial one.

New content goes to a temporary name in the destination's own folder (the same file system), is flushed to disk,
and is renamed over the destination (`os.replace` is atomic on POSIX and Windows). On any error, a kill included,
the destination is untouched; on an error the temporary file is removed too. Every module that writes a file a
later run reads back (run folders, exported data sets, checkpoints, cached weights) writes it through here. This
module imports nothing from the package, so any layer may use it.

The temporary file is private while it is written (`tempfile.mkstemp` creates it with mode 0600); before the rename
it gets the mode a plain `open` would have given the destination, 0666 less the process's umask, so colleagues on a
shared file system read what a run wrote as they read any other file of its owner.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path


def current_umask() -> int:
    """The process's umask, read without changing it where the system says it (Linux's /proc/self/status); else by
    setting it and putting it back at once."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_path(destination: str | os.PathLike, durable: bool = True) -> Iterator[Path]:
    """A temporary path for `destination`'s new content, for any writer that takes a path; it replaces
    `destination` when the block ends without an error.

    `durable` flushes the file to disk (fsync) before the rename, so that a power cut cannot leave the new name on
    an empty file. Bulk writers of many small files that can be regenerated may turn it off for speed; the rename
    still protects them from kills.
    """
    destination = Path(destination)
    destination.parent.mkdir(parents=True, exist_ok=True)
    descriptor, name = tempfile.mkstemp(prefix=f".{destination.name}.", suffix=".tmp", dir=destination.parent)
    os.close(descriptor)
    temporary = Path(name)
    try:
        yield temporary
        if durable:
            with open(temporary, "r+b") as handle:
                os.fsync(handle.fileno())
        os.chmod(temporary, 0o666 & ~current_umask())
        os.replace(temporary, destination)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def write_bytes_atomic(destination: str | os.PathLike, data: bytes, durable: bool = True) -> None:
    with atomic_path(destination, durable) as temporary:
        temporary.write_bytes(data)


def write_text_atomic(destination: str | os.PathLike, text: str, durable: bool = True) -> None:
    write_bytes_atomic(destination, text.encode("utf-8"), durable)


__all__ = ["atomic_path", "current_umask", "write_bytes_atomic", "write_text_atomic"]
