# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The building blocks of the report: the document's blocks (headings, paragraphs, tables, figures) and the two
table shapes (one row per metric, one row per name), shared by `report` and the benchmark kinds' sections
(`benchmark_sections`). Numbers are formatted by `hf_vitrobust.probes.display`, as in the probes' own rows."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..analysis.results import ModelView, ordered_union
from ..probes.display import MISSING, fmt_number, fmt_percent
from .figures import FigureFile


def plain_text(value: Any) -> str:
    """A value of an unrecognised metric dict: numbers formatted, text as it is, containers summarised."""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping | list):
        return f"({len(value)} entries)"
    return fmt_number(value)


# ---------------------------------------------------------------------------------------------------------------
# The document: blocks rendered to Markdown and to HTML


@dataclass(frozen=True)
class Heading:
    level: int
    text: str


@dataclass(frozen=True)
class Paragraph:
    text: str


@dataclass(frozen=True)
class Table:
    headers: list[str]
    rows: list[list[str]]
    title: str | None = None
    numeric: bool = True  # right-align every column but the first


@dataclass(frozen=True)
class FigureBlock:
    name: str
    path: str
    caption: str


Block = Heading | Paragraph | Table | FigureBlock
Row = tuple[str, Callable[[Mapping[str, Any]], str]]


def model_table(
    views: Sequence[ModelView],
    data: Callable[[ModelView], Mapping[str, Any] | None],
    rows: Sequence[Row],
    first: str,
) -> Table | None:
    """One row per (label, formatter), one column per model that has data; rows empty for every model dropped."""
    columns = [(v.key, data(v)) for v in views]
    columns = [(key, value) for key, value in columns if value]
    if not columns:
        return None
    body = []
    for label, cell in rows:
        cells = [cell(value) for _, value in columns]
        if any(c != MISSING for c in cells):
            body.append([label, *cells])
    if not body:
        return None
    return Table([first, *(key for key, _ in columns)], body)


def named_value_table(
    views: Sequence[ModelView],
    values: Callable[[ModelView], Mapping[str, Any] | None],
    first: str,
    cell: Callable[[Any], str],
    title: str | None = None,
) -> Table | None:
    """Rows = the union of the names (in order), columns = models: e.g. CE per corruption."""
    columns = [(v.key, values(v)) for v in views]
    columns = [(key, value) for key, value in columns if value]
    if not columns:
        return None
    names = ordered_union([list(value) for _, value in columns])
    rows = [[str(name), *(cell(value.get(name)) for _, value in columns)] for name in names]
    return Table([first, *(key for key, _ in columns)], rows, title)


def read_path(*path: str) -> Callable[[Mapping[str, Any]], Any]:
    """A reader of the value at `path` in a nested metric dict (None where any step is missing)."""

    def read(data: Mapping[str, Any]) -> Any:
        for key in path:
            if not isinstance(data, Mapping):
                return None
            data = data.get(key)
        return data

    return read


def percent_at(*path: str, scale: float = 1.0) -> Callable[[Mapping[str, Any]], str]:
    """A table cell: the value at `path` as a percentage (`scale` 100 for fractions)."""
    return lambda d: fmt_percent(read_path(*path)(d), scale)


def number_at(*path: str) -> Callable[[Mapping[str, Any]], str]:
    """A table cell: the value at `path` as a number."""
    return lambda d: fmt_number(read_path(*path)(d))


def figure_blocks(name: str, figures: Mapping[str, FigureFile]) -> list[Block]:
    """The figure `name` as a block, when it was drawn, captioned with the levels of its error bars."""
    if name not in figures:
        return []
    return [FigureBlock(name, figures[name].path, figures[name].caption)]


__all__ = [
    "Block",
    "FigureBlock",
    "Heading",
    "Paragraph",
    "Row",
    "Table",
    "figure_blocks",
    "model_table",
    "named_value_table",
    "number_at",
    "percent_at",
    "plain_text",
    "read_path",
]
