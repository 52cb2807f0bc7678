"""Which files each process of a run opens: a `sitecustomize` module, put on PYTHONPATH of the processes a test
launches, installs an audit hook (`sys.addaudithook`, event "open") that records every file opened under one folder
and writes the list, per rank, when the process exits. Python's own `open` raises the event, and so does every
read of a local file by `datasets` streaming (it opens parquet files through Python file objects) and by PIL."""

from __future__ import annotations

import json
from pathlib import Path

SITECUSTOMIZE = """
import atexit, json, os, sys

_root = os.environ.get("READ_COUNTING_ROOT")
_out = os.environ.get("READ_COUNTING_OUT")
if _root and _out:
    _root = os.path.realpath(_root)
    _opened = []

    def _hook(event, args):
        if event == "open" and args and isinstance(args[0], (str, bytes, os.PathLike)):
            try:
                path = os.path.realpath(os.fsdecode(args[0]))
            except (TypeError, ValueError):
                return
            if path.startswith(_root + os.sep):
                _opened.append(os.path.relpath(path, _root))

    def _write():
        rank = os.environ.get("RANK", "single")
        os.makedirs(_out, exist_ok=True)
        with open(os.path.join(_out, f"opened-rank{rank}.json"), "w") as handle:
            json.dump(_opened, handle)

    sys.addaudithook(_hook)
    atexit.register(_write)
"""


def counting_environment(folder: Path, data_root: Path, out: Path) -> dict[str, str]:
    """Writes the `sitecustomize` into `folder`; the variables that make launched processes count what they open
    under `data_root` into `out/opened-rank<R>.json` (PYTHONPATH must then start with `folder`)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")
    return {"READ_COUNTING_ROOT": str(data_root), "READ_COUNTING_OUT": str(out)}


def opened_by_rank(out: Path) -> dict[str, list[str]]:
    """rank -> the files under the data root that process opened, in order (repeats kept)."""
    return {
        path.stem[len("opened-rank") :]: json.loads(path.read_text())
        for path in sorted(out.glob("opened-*.json"))
    }
