# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""One writer per run folder: `RunLock`, the file `<output>/.work/lock` that rank 0 of a run holds from before it
writes anything until the run ends.

The lock is created with O_CREAT | O_EXCL, so of two runs started on one folder exactly one gets it; the other is
refused before any work, with the holder's process id, host and start time. A run that ends, normally or by an
error, removes its lock. A run that was killed (kill -9, a node lost) leaves it behind: on the same host a lock
whose process is gone is stale, and the next run takes it over (renaming it away first, so that of two runs taking
it over only one succeeds); a lock of another host cannot be checked from here, and the message says which file to
remove once that run is known to be dead. Workers of an `accelerate launch` whose launcher was killed keep running,
and so keep the lock of their rank 0: a `--resume` beside them is refused.
"""

from __future__ import annotations

import contextlib
import datetime as _datetime
import json
import os
import socket
from pathlib import Path
from typing import Any

LOCK_FILE = "lock"


class RunFolderBusy(RuntimeError):
    """Another run holds the run folder's lock."""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # a process of another user: it exists
        return True
    return True


class RunLock:
    """The lock of the run folder whose work folder is `work` (`<output>/.work`)."""

    def __init__(self, work: Path, output: Path) -> None:
        self.path = Path(work) / LOCK_FILE
        self.output = Path(output)
        self.held = False

    def holder(self) -> dict[str, Any] | None:
        """Who holds the lock ({pid, host, started}), or None where there is none (or it cannot be read)."""
        try:
            return json.loads(self.path.read_text())
        except (OSError, ValueError):
            return None

    def _is_stale(self, holder: dict[str, Any] | None) -> bool:
        if holder is None:  # unreadable: a writer killed between creating and filling it
            return True
        return holder.get("host") == socket.gethostname() and not _alive(int(holder.get("pid", -1)))

    def acquire(self) -> None:
        """Take the lock; RunFolderBusy naming the holder where a live run (or one of another host) has it."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        record = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "started": _datetime.datetime.now(_datetime.UTC).isoformat(timespec="seconds"),
        }
        for _ in range(2):
            try:
                descriptor = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                holder = self.holder()
                if not self._is_stale(holder):
                    raise RunFolderBusy(self._busy_message(holder)) from None
                # One of several takers renames it away and removes it; the others find it gone and try again.
                moved = self.path.with_name(f"{LOCK_FILE}.stale-{os.getpid()}")
                with contextlib.suppress(FileNotFoundError):
                    os.rename(self.path, moved)
                    moved.unlink()
                continue
            with os.fdopen(descriptor, "w") as handle:
                json.dump(record, handle)
            self.held = True
            return
        raise RunFolderBusy(self._busy_message(self.holder()))

    def release(self) -> None:
        """Remove the lock, if this run holds it."""
        if self.held:
            self.path.unlink(missing_ok=True)
            self.held = False

    def _busy_message(self, holder: dict[str, Any] | None) -> str:
        holder = holder or {}
        who = f"process {holder.get('pid', '?')} on {holder.get('host', '?')}, started {holder.get('started', '?')}"
        text = f"{self.output} is being written by another run ({who}): wait for it, or choose another --output folder."
        if holder.get("host") != socket.gethostname():
            text += f" If that run is dead, remove {self.path}."
        return text


__all__ = ["LOCK_FILE", "RunFolderBusy", "RunLock"]
