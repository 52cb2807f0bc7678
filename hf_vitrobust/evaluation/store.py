# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The run folder on disk: every file is written atomically (`hf_vitrobust.atomic_files`), so a kill or a full disk
never leaves a truncated one. The chunk files of a stream are the unit of resume: a chunk whose file exists is done.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import torch

from ..analysis.protocols import LATER_PART_DEFAULTS
from ..atomic_files import atomic_path, write_text_atomic
from .parquet_options import write_parquet


def write_json_atomic(path: Path, value: Any) -> None:
    """JSON in the dict's own key order (a report read back from the file lays out exactly as the first one) with a
    final newline; NaN is refused (results must be valid JSON for any reader)."""
    write_text_atomic(path, json.dumps(value, indent=2, allow_nan=False) + "\n")


def write_parquet_atomic(path: Path, table: pa.Table) -> None:
    """`table` written as `datasets` writes parquet (`parquet_options.write_parquet`), atomically."""
    with atomic_path(path) as temporary:
        write_parquet(temporary, table)


def save_tensors_atomic(path: Path, value: dict[str, Any]) -> None:
    """A dict of tensors, numbers, strings, lists and dicts, readable with `torch.load(weights_only=True)`."""
    with atomic_path(path) as temporary:
        torch.save(value, temporary)


def load_tensors(path: Path) -> dict[str, Any]:
    return torch.load(path, map_location="cpu", weights_only=True)


# Suite keys that change no result of a benchmark or probe: a resumed run may change them freely.
_SUITE_PRESENTATION = frozenset(
    {"name", "description", "path", "citations", "batch_size", "model_pairs", "models"}
)


def stream_folders(work: Path, part: str, name: str) -> list[Path]:
    """Every model's folder of one stream of a run (`<work>/<model key>/<part>/<name>`, part "benchmarks" or
    "probes") that holds any file: the stream has started for that model."""
    return sorted(
        folder for folder in Path(work).glob(f"*/{part}/{name}") if folder.is_dir() and any(folder.iterdir())
    )


def suite_change_refusal(previous: dict[str, Any], current: dict[str, Any], work: Path) -> str | None:
    """Why a resumed run may not read the suite `current` where the run started with `previous`, or None.

    A benchmark or probe may be added, removed or changed as long as no model has started it (no file in its
    stream folders): a fixed setting of a step that never ran blocks nothing that did. A changed step that did
    start is refused, naming its folders (remove them to run it again under the new settings); so is a change of
    the suite's seed or chunk size, which every step's results depend on."""
    reasons = [
        f"the suite's {key} changed ({previous.get(key)!r} -> {current.get(key)!r})"
        for key in sorted(set(previous) | set(current))
        if key not in _SUITE_PRESENTATION | {"benchmarks", "probes"} and previous.get(key) != current.get(key)
    ]
    for part, what in (("benchmarks", "benchmark"), ("probes", "probe")):
        before, after = previous.get(part) or {}, current.get(part) or {}
        for name in sorted(set(before) | set(after)):
            if before.get(name) == after.get(name):
                continue
            started = stream_folders(work, part, name)
            if started:
                change = "added" if name not in before else "removed" if name not in after else "changed"
                folders = ", ".join(str(folder) for folder in started)
                reasons.append(
                    f"{what} {name} {change} after it ran (remove {folders} to run it again with the new settings)"
                )
    return "; ".join(reasons) or None


def resume_refusal(
    output: Path,
    previous: dict[str, Any] | None,
    recorded: dict[str, Any],
    resume: bool,
    schema_version: int,
    work: Path | None = None,
) -> str | None:
    """Why a run may not start in `output`, or None: a folder holding a run (`previous`, its run.json) without
    --resume; a run of another results schema version; --resume with settings that change results (each
    changed one named; a suite change only where `suite_change_refusal` refuses it, `work` being the run's work
    folder); results in a folder without a run.json."""
    if previous is None:
        if (output / "results.json").is_file() and not resume:
            return f"{output} already holds results; choose another --output folder."
        return None
    if not resume:
        return (
            f"{output} holds an earlier run: pass --resume to continue it, or choose another --output folder."
        )
    version = previous.get("schema_version", 1)  # run.json recorded no version before schema 2
    if version != schema_version:
        why = (
            " (it fed the pre-cropped benchmarks, ImageNet-C, -P, -9 and CIFAR, through each model's resize and "
            "crop, and recorded no protocols)"
            if version == 1
            else ""
        )
        return (
            f"{output} was started by an hf_vitrobust that wrote results schema version {version}{why}; this one "
            f"writes version {schema_version}, so the run cannot be continued. Start a new --output (`vitrobust "
            "report` reads folders of older versions)."
        )
    # Run folders of earlier versions recorded neither: their chunks are migrated (`ChunkStore.adopt_whole_stream`)
    # and their suite is known by name only.
    added_since = {"chunk_layout", "suite_contents"}
    # Folders from before a later protocol part (interpolation, labels, image_list) recorded none: they ran the
    # value every run had then, filled in wherever this run's record has the part.
    if isinstance(previous.get("protocols"), dict) and isinstance(recorded.get("protocols"), dict):

        def filled(name: str, parts: dict) -> dict:
            now = recorded["protocols"].get(name, {})
            return {**{part: value for part, value in LATER_PART_DEFAULTS.items() if part in now}, **parts}

        given = {name: filled(name, parts) for name, parts in previous["protocols"].items()}
        previous = {**previous, "protocols": given}
    changed = [
        key
        for key in recorded
        if previous.get(key) != recorded[key] and (key in previous or key not in added_since)
    ]
    suite_refusal = None
    if "suite_contents" in changed and work is not None:
        suite_refusal = suite_change_refusal(previous["suite_contents"], recorded["suite_contents"], work)
        if suite_refusal is None:
            changed.remove("suite_contents")
    if not changed:
        return None
    details = ", ".join(
        f"suite: {suite_refusal or 'the suite changed (benchmarks, options or probes)'}"
        if key == "suite_contents"
        else f"{key}: {previous.get(key)!r} -> {recorded[key]!r}"
        for key in changed
    )
    return f"--resume with different settings ({details}); use a new --output."


ChunkKey = int | tuple[int, int]


class ChunkStore:
    """The chunk files of one stream (a model's benchmark or probe): `<root>/chunk-<k>.<suffix>` for a probe's
    chunk k, `<root>/chunk-<s>-<k>.<suffix>` for chunk k of shard s of a benchmark; a marker per shard saying how
    many chunks and raw samples it had (written by a process that read it to its end); and the list of the stream's
    shards, so that a resumed run refuses a source whose files changed."""

    def __init__(self, root: Path, suffix: str) -> None:
        self.root = Path(root)
        self.suffix = suffix

    def path(self, key: ChunkKey) -> Path:
        parts = key if isinstance(key, tuple) else (key,)
        return self.root / ("chunk-" + "-".join(f"{part:06d}" for part in parts) + f".{self.suffix}")

    def is_done(self, key: ChunkKey) -> bool:
        return self.path(key).is_file()

    def done_indices(self) -> set[ChunkKey]:
        if not self.root.is_dir():
            return set()
        found: set[ChunkKey] = set()
        for path in self.root.glob(f"chunk-*.{self.suffix}"):
            parts = tuple(int(part) for part in path.name[len("chunk-") : -len(self.suffix) - 1].split("-"))
            found.add(parts[0] if len(parts) == 1 else parts)  # type: ignore[arg-type]
        return found

    def mark_complete(self, rank: int, num_chunks: int, num_items: int) -> None:
        """A probe's marker: how many chunks its stream had when process `rank` finished it."""
        write_json_atomic(
            self.root / f"complete-rank{rank}.json", {"num_chunks": num_chunks, "num_items": num_items}
        )

    def completion(self, rank: int) -> dict[str, int] | None:
        path = self.root / f"complete-rank{rank}.json"
        return json.loads(path.read_text()) if path.is_file() else None

    def _shard_marker(self, shard: int) -> Path:
        return self.root / f"shard-{shard:06d}.json"

    def mark_shard(self, shard: int, num_chunks: int, num_items: int) -> None:
        write_json_atomic(self._shard_marker(shard), {"num_chunks": num_chunks, "num_items": num_items})

    def shard_end(self, shard: int) -> dict[str, int] | None:
        """{"num_chunks", "num_items"} of a shard some process read to its end, else None."""
        path = self._shard_marker(shard)
        return json.loads(path.read_text()) if path.is_file() else None

    def complete_shards(self, num_shards: int, done: set[ChunkKey]) -> set[int]:
        """The shards whose every chunk is on disk (nothing of them needs reading again)."""
        complete = set()
        for shard in range(num_shards):
            end = self.shard_end(shard)
            if end is not None and all((shard, k) in done for k in range(end["num_chunks"])):
                complete.add(shard)
        return complete

    def check_shards(self, names: tuple[str, ...]) -> None:
        """Record the stream's shards, or, when a run recorded them, fail unless they are the same."""
        path = self.root / "shards.json"
        if path.is_file():
            recorded = tuple(json.loads(path.read_text())["shards"])
            if recorded != tuple(names):
                raise RuntimeError(
                    f"{self.root.name}: the source's files changed since the run started ({len(recorded)} shards "
                    f"then, {len(names)} now); resume into a new --output."
                )
            return
        write_json_atomic(path, {"shards": list(names)})

    def adopt_whole_stream(self, num_shards: int) -> None:
        """Chunks written by an earlier version, which cut the whole stream (`chunk-<k>`, one marker per rank), made
        this stream's: with one shard they are exactly chunks (0, k), so they are renamed (with the shard column
        added) and the markers become the shard's; with several, they cannot be, and the run is refused."""
        legacy = sorted(k for k in self.done_indices() if isinstance(k, int))
        markers = sorted(self.root.glob("complete-rank*.json")) if self.root.is_dir() else []
        if not legacy and not markers:
            return
        if num_shards != 1:
            raise RuntimeError(
                f"{self.root.name}: this run folder's chunks were cut from the whole stream by an earlier "
                f"hf_vitrobust; the source has {num_shards} shards, whose chunks are now cut per file: continue "
                "in a new --output."
            )
        from ..analysis.predictions import with_derived_columns

        for index in legacy:
            table = pq.read_table(self.path(index))
            table = with_derived_columns(table).replace_schema_metadata(table.schema.metadata)
            write_parquet_atomic(self.path((0, index)), table)
            self.path(index).unlink()
        ends = {(e["num_chunks"], e["num_items"]) for e in (json.loads(m.read_text()) for m in markers)}
        if len(ends) == 1:
            (num_chunks, num_items) = ends.pop()
            self.mark_shard(0, num_chunks, num_items)
        for marker in markers:
            marker.unlink()

    def missing(self, num_chunks: int) -> list[int]:
        done = self.done_indices()
        return [index for index in range(num_chunks) if index not in done]


__all__ = [
    "ChunkKey",
    "ChunkStore",
    "load_tensors",
    "resume_refusal",
    "save_tensors_atomic",
    "stream_folders",
    "suite_change_refusal",
    "write_json_atomic",
    "write_parquet_atomic",
]
