# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Fixed image lists that a paper's probe was run on, shipped as plain text, and selection by file name.

- "paul-chen-occlusion-1k": the 1000 ImageNet validation paths of Paul & Chen's Cutout notebooks
  (sayakpaul/robustness-vit, analysis/masking/IMAGENET_VAL_PATHS_1k.pkl), in the pickle's order: a draw with
  replacement (numpy.random.choice), so 991 distinct images. One "val/<wnid>/<file name>" a line.
- "robustbench-imagenet-c-5000": the 5,000 distinct ImageNet validation images RobustBench evaluates ImageNet-C on
  (robustbench/helper_files/imagenet_test_image_ids.txt, MIT), in its order, gzipped. One "<wnid>/<file name>" a
  line. `listed_samples` selects them in every corruption and severity cell of a local ImageNet-C folder.

The lists were converted once from the authors' pickles by `read_pickled_names`, which reads a pickle's opcodes
(`pickletools.genops`) and never runs it: nothing is imported, no callable is called. It accepts a plain list or
tuple of strings, and the one object the authors' file actually holds, a 1-D numpy array of fixed-width unicode
strings (numpy pickles it as `_reconstruct(ndarray, (0,), b"b")` followed by a BUILD of (shape, dtype, raw bytes)),
recognised by its exact structure; any other global, call or opcode is a ValueError.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import pickletools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

import numpy as np

IMAGE_LISTS = ("paul-chen-occlusion-1k", "robustbench-imagenet-c-5000")
_FILES = {
    "paul-chen-occlusion-1k": "paul-chen-occlusion-1k.txt",
    "robustbench-imagenet-c-5000": "robustbench-imagenet-c-5000.txt.gz",
}
_ROW_ID = re.compile(r"(^|/)row-\d+$")

# The only globals a numpy unicode array pickle names (numpy 1.x spells the module numpy.core, 2.x numpy._core).
_RECONSTRUCT = {("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "_reconstruct")}
_NDARRAY = ("numpy", "ndarray")
_DTYPE = ("numpy", "dtype")
_MARK = object()


@dataclass(frozen=True)
class _Global:
    """A global a pickle names: kept as its two strings, never imported."""

    module: str
    name: str


@dataclass
class _Call:
    """A REDUCE of an allowed global (never performed), with the state a later BUILD gives it."""

    target: tuple[str, str]
    args: tuple
    state: object = None


def _refuse(opcode: str, position: int, why: str) -> ValueError:
    return ValueError(
        f"Refusing the pickle: {opcode} at byte {position} ({why}); only lists of strings are read."
    )


def _pop_mark(stack: list) -> list:
    if _MARK not in stack:
        raise ValueError("Malformed pickle: no MARK on the stack.")
    at = len(stack) - 1 - stack[::-1].index(_MARK)
    items = stack[at + 1 :]
    del stack[at:]
    return items


def _numpy_strings(call: _Call) -> list[str]:
    """The strings of a `_reconstruct(ndarray, (0,), b"b")` call with a BUILD state (version, shape, dtype,
    is_fortran, raw bytes), where dtype is `dtype("U<n>", False, True)` with state (3, "<" or ">", None, None, None,
    4 n, 4, flags): 4-byte UTF-32 code points, NUL-padded to n characters."""
    if call.target not in _RECONSTRUCT or call.args != (_Global(*_NDARRAY), (0,), b"b"):
        raise ValueError(f"Refusing the pickle: a call of {call.target} that is not a numpy array.")
    state = call.state
    if not (isinstance(state, tuple) and len(state) == 5):
        raise ValueError(
            "Refusing the pickle: the numpy array has no (version, shape, dtype, order, data) state."
        )
    _, shape, dtype, fortran, data = state
    if not (isinstance(shape, tuple) and len(shape) == 1 and isinstance(shape[0], int)):
        raise ValueError(f"Refusing the pickle: a numpy array of shape {shape!r}; a 1-D list is expected.")
    if not (isinstance(dtype, _Call) and dtype.target == _DTYPE and isinstance(fortran, bool)):
        raise ValueError("Refusing the pickle: the numpy array's dtype is not a plain dtype.")
    kind, dtype_state = dtype.args[0] if dtype.args else None, dtype.state
    if not (isinstance(kind, str) and re.fullmatch(r"U\d+", kind) and isinstance(dtype_state, tuple)):
        raise ValueError(f"Refusing the pickle: dtype {kind!r}; only fixed-width unicode (U<n>) is read.")
    if len(dtype_state) < 7 or dtype_state[1] not in ("<", ">") or dtype_state[6] != 4:
        raise ValueError(f"Refusing the pickle: unicode dtype state {dtype_state!r} is not UTF-32.")
    itemsize, count = dtype_state[5], shape[0]
    if itemsize != 4 * int(kind[1:]) or not isinstance(data, bytes) or len(data) != itemsize * count:
        raise ValueError("Refusing the pickle: the array's data does not match its shape and dtype.")
    codec = "utf-32-le" if dtype_state[1] == "<" else "utf-32-be"
    return [data[i * itemsize : (i + 1) * itemsize].decode(codec).rstrip("\x00") for i in range(count)]


def _run_opcodes(data: bytes) -> object:
    """The object a pickle builds, with globals and calls kept symbolic (`_Global`, `_Call`)."""
    stack: list = []
    memo: dict[int, object] = {}
    result = None
    for opcode, arg, position in pickletools.genops(data):
        name = opcode.name
        if name in ("PROTO", "FRAME"):
            continue
        if name in ("BINUNICODE", "SHORT_BINUNICODE", "BINUNICODE8", "UNICODE"):
            stack.append(arg)
        elif name in ("BINBYTES", "SHORT_BINBYTES", "BINBYTES8"):
            stack.append(bytes(arg))
        elif name in ("BININT", "BININT1", "BININT2"):
            stack.append(arg)
        elif name in ("NEWTRUE", "NEWFALSE", "NONE"):
            stack.append({"NEWTRUE": True, "NEWFALSE": False, "NONE": None}[name])
        elif name == "MARK":
            stack.append(_MARK)
        elif name in ("EMPTY_LIST", "EMPTY_TUPLE"):
            stack.append([] if name == "EMPTY_LIST" else ())
        elif name in ("TUPLE1", "TUPLE2", "TUPLE3"):
            size = int(name[-1])
            if len(stack) < size:
                raise ValueError("Malformed pickle: stack underflow.")
            items = tuple(stack[-size:])
            del stack[-size:]
            stack.append(items)
        elif name in ("TUPLE", "LIST"):
            items = _pop_mark(stack)
            stack.append(tuple(items) if name == "TUPLE" else items)
        elif name in ("APPEND", "APPENDS"):
            items = [stack.pop()] if name == "APPEND" else _pop_mark(stack)
            if not stack or not isinstance(stack[-1], list):
                raise _refuse(name, position, "appending to something that is not a list")
            stack[-1].extend(items)
        elif name in ("BINPUT", "LONG_BINPUT", "PUT"):
            memo[int(arg)] = stack[-1]
        elif name == "MEMOIZE":
            memo[len(memo)] = stack[-1]
        elif name in ("BINGET", "LONG_BINGET", "GET"):
            if int(arg) not in memo:
                raise ValueError(f"Malformed pickle: memo key {arg} is not set.")
            stack.append(memo[int(arg)])
        elif name in ("GLOBAL", "STACK_GLOBAL"):
            if name == "GLOBAL":
                module, attribute = arg.split(" ", 1)
            else:
                module, attribute = stack[-2], stack[-1]
                del stack[-2:]
            allowed = _RECONSTRUCT | {_NDARRAY, _DTYPE}
            if (
                not (isinstance(module, str) and isinstance(attribute, str))
                or (module, attribute) not in allowed
            ):
                raise _refuse(name, position, f"global {module}.{attribute}")
            stack.append(_Global(module, attribute))
        elif name == "REDUCE":
            args, target = stack.pop(), stack.pop()
            if not isinstance(target, _Global) or (target.module, target.name) == _NDARRAY:
                raise _refuse(name, position, f"a call of {target!r}")
            if not isinstance(args, tuple):
                raise _refuse(name, position, "call arguments that are not a tuple")
            stack.append(_Call((target.module, target.name), args))
        elif name == "BUILD":
            state = stack.pop()
            if not stack or not isinstance(stack[-1], _Call) or stack[-1].state is not None:
                raise _refuse(name, position, "a BUILD of something other than a numpy array or dtype")
            stack[-1].state = state
        elif name == "STOP":
            if len(stack) != 1:
                raise ValueError("Malformed pickle: the stack does not end with one object.")
            result = stack.pop()
        else:
            raise _refuse(name, position, "an opcode a list of strings does not need")
    return result


def read_pickled_names(data: bytes) -> list[str]:
    """The strings of a pickled list of strings (or 1-D numpy unicode array), read without unpickling.

    Walks the opcodes with `pickletools.genops` on a small stack of plain values; GLOBAL names are kept as strings
    and never imported, and only numpy's array reconstruction and dtype may be REDUCEd (symbolically). Anything
    else (other globals, INST/OBJ/NEWOBJ, persistent ids, extensions, dicts) raises ValueError.
    """
    if not isinstance(data, bytes | bytearray):
        raise ValueError(f"data must be bytes, got {type(data).__name__}.")
    try:
        result = _run_opcodes(bytes(data))
    except IndexError:
        raise ValueError("Malformed pickle: stack underflow.") from None
    if isinstance(result, _Call):
        return _numpy_strings(result)
    if isinstance(result, list | tuple) and all(isinstance(item, str) for item in result):
        return list(result)
    raise ValueError(f"Refusing the pickle: it holds a {type(result).__name__}, not a list of strings.")


def convert_pickled_list(pickle_path: str | os.PathLike, text_path: str | os.PathLike) -> str:
    """Write the strings of `pickle_path` (read by `read_pickled_names`) to `text_path`, one a line, in order and
    with duplicates kept; returns the pickle's sha256 (hex), to record as the list's source."""
    data = Path(pickle_path).read_bytes()
    names = read_pickled_names(data)
    bad = [n for n in names if not n or "\n" in n or "\r" in n]
    if bad:
        raise ValueError(f"{pickle_path}: entries that cannot be one line each: {bad[:3]!r}.")
    Path(text_path).write_text("".join(f"{n}\n" for n in names), encoding="utf-8")
    return hashlib.sha256(data).hexdigest()


def check_image_list(name: str) -> str:
    """A known image list's name; anything else is a ValueError naming the known lists."""
    if name not in IMAGE_LISTS:
        raise ValueError(f"Unknown image list {name!r}; known lists: {list(IMAGE_LISTS)}.")
    return name


@cache
def image_list(name: str) -> tuple[str, ...]:
    """The entries of a shipped image list (`hf_vitrobust/assets/image_lists/`), in order, duplicates kept."""
    path = resources.files("hf_vitrobust") / "assets" / "image_lists" / _FILES[check_image_list(name)]
    data = path.read_bytes()
    if path.name.endswith(".gz"):
        data = gzip.decompress(data)
    return tuple(data.decode("utf-8").splitlines())


def file_name(entry: str) -> str:
    """The file name of a path or sample id ("val/n01440764/ILSVRC2012_val_00000293.JPEG" -> its last part)."""
    return str(entry).replace("\\", "/").rsplit("/", 1)[-1]


@dataclass(frozen=True)
class ListMatch:
    """Where a list's images are among a benchmark's samples.

    positions: (M,) int64 positions of the samples of the matched entries, in the list's order, one per entry: a
        list drawn with replacement names some images twice, and each entry is its own evaluation (Paul & Chen's
        notebooks scored all 1,000 entries of theirs, duplicates included). entries: the list entry of each;
        entry_indices: each one's index in the list (what keys an entry's own randomness, e.g. its Cutout hole).
    listed: the list's length; unique: its distinct file names; missing: the distinct file names no sample has.
    """

    positions: tuple[int, ...]
    entries: tuple[str, ...]
    entry_indices: tuple[int, ...]
    listed: int
    unique: int
    missing: tuple[str, ...]


def match_image_list(entries: Sequence[str], sample_ids: Sequence[str]) -> ListMatch:
    """Match a list's entries to samples by file name (the last "/" part of each sample id), every entry, so an
    image the list names twice is matched twice.

    Raises ValueError when two samples share a listed file name (ambiguous), or when no listed image is found and
    the sample ids carry no file names (Hub and parquet sources number their rows, "row-000123": there is nothing
    to match a file name against).
    """
    by_name: dict[str, int] = {}
    clashes: set[str] = set()
    for position, sample_id in enumerate(sample_ids):
        key = file_name(sample_id)
        if key in by_name:
            clashes.add(key)
        by_name[key] = position
    seen: set[str] = set()
    positions, matched, indices, missing = [], [], [], []
    for index, entry in enumerate(entries):
        key = file_name(entry)
        first = key not in seen
        seen.add(key)
        if key in clashes:
            raise ValueError(f"Listed image {key!r} matches several samples; cannot select by file name.")
        if key in by_name:
            positions.append(by_name[key])
            matched.append(entry)
            indices.append(index)
        elif first:
            missing.append(key)
    if not positions and entries:
        ids = [str(s) for s in sample_ids[:3]]
        if sample_ids and all(_ROW_ID.search(str(s)) for s in sample_ids):
            raise ValueError(
                "Cannot select images by file name: this source names its samples by row number "
                f"({ids}), as Hub and parquet sources do, so the original file names are not known. Use a local "
                "copy of the ImageNet validation set in class folders (<wnid>/ILSVRC2012_val_XXXXXXXX.JPEG)."
            )
        raise ValueError(
            f"None of the {len(seen)} listed images is among the samples (first sample ids: {ids})."
        )
    return ListMatch(
        tuple(positions), tuple(matched), tuple(indices), len(entries), len(seen), tuple(missing)
    )


def listed_samples(entries: Sequence[str], sample_ids: Sequence[str]) -> np.ndarray:
    """(N,) bool: which samples' file names a list names. Unlike `match_image_list` a file name may recur among
    the samples: an ImageNet-C folder holds each listed image once per corruption and severity, and RobustBench
    scores every cell on the same listed images (`robustbench.loaders.make_custom_dataset`).

    Raises ValueError, before any image is read, when the samples carry no file names (Hub and parquet sources
    number their rows) or when none of them is listed."""
    names = frozenset(file_name(entry) for entry in entries)
    ids = [str(s) for s in sample_ids]
    if ids and all(_ROW_ID.search(s) for s in ids):
        raise ValueError(
            "Cannot select images by file name: this source names its samples by row number "
            f"({ids[:3]}), as Hub and parquet sources do, so the original file names are not known. Use a local "
            "copy of the release laid out in folders (e.g. ImageNet-C's <corruption>/<severity>/<wnid>/<file>)."
        )
    selected = np.fromiter((file_name(s) in names for s in ids), dtype=bool, count=len(ids))
    if ids and not selected.any():
        raise ValueError(f"None of the {len(names)} listed images is among the samples (first: {ids[:3]}).")
    return selected


__all__ = [
    "IMAGE_LISTS",
    "ListMatch",
    "check_image_list",
    "convert_pickled_list",
    "file_name",
    "image_list",
    "listed_samples",
    "match_image_list",
    "read_pickled_names",
]
