# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Checks of a probe parameter's value, run when a suite is read, before any work (`ProbeSpec.value_checks`).

A probe function checks its arguments when it is called, but the runner calls it only after every benchmark of a
run: a value out of range found then costs the run. So each probe declares, for every parameter a suite may set,
a `ValueCheck`: a callable that raises ValueError (saying what the value must be and what it got) or returns
nothing. The builders below cover the common shapes; a probe module composes them with its own check functions
(e.g. `check_hole`), so the suite and the probe refuse the same values with the same words.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from typing import Any

ValueCheck = Callable[[Any], object]


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def int_at_least(minimum: int) -> ValueCheck:
    """An int >= `minimum` (1: a positive int)."""

    def check(value: Any) -> None:
        if not _is_int(value) or value < minimum:
            what = "a positive int" if minimum == 1 else f"an int >= {minimum}"
            raise ValueError(f"must be {what}, got {value!r}.")

    return check


positive_int = int_at_least(1)
non_negative_int = int_at_least(0)


def number_in(
    low: float = -math.inf, high: float = math.inf, *, low_open: bool = False, high_open: bool = False
) -> ValueCheck:
    """A finite real number in the interval from `low` to `high` (open at an end where `*_open`)."""
    left, right = "(" if low_open else "[", ")" if high_open else "]"
    if low == 0 and high == math.inf:
        what = "a finite number > 0" if low_open else "a finite number >= 0"
    else:
        what = f"a number in {left}{low:g}, {high:g}{right}"

    def check(value: Any) -> None:
        inside = _is_number(value) and (value > low if low_open else value >= low)
        inside = inside and (value < high if high_open else value <= high)
        if not inside:
            raise ValueError(f"must be {what}, got {value!r}.")

    return check


positive_number = number_in(0.0, low_open=True)
non_negative_number = number_in(0.0)
fraction = number_in(0.0, 1.0)


def boolean(value: Any) -> None:
    """true or false (YAML), not 0/1 or a string."""
    if not isinstance(value, bool):
        raise ValueError(f"must be true or false, got {value!r}.")


def text(value: Any) -> None:
    """A non-empty string (a layer or unit name, known only once the model is loaded)."""
    if not isinstance(value, str) or not value:
        raise ValueError(f"must be a non-empty string, got {value!r}.")


def optional(check: ValueCheck) -> ValueCheck:
    """None (null in YAML: the probe's default), or a value `check` accepts."""

    def checked(value: Any) -> None:
        if value is not None:
            check(value)

    return checked


def calls(function: Callable[[Any], object]) -> ValueCheck:
    """A probe module's own one-argument check function (it raises ValueError or TypeError), as a ValueCheck: the
    suite refuses what the probe refuses, in the probe's words."""

    def check(value: Any) -> None:
        try:
            function(value)
        except (TypeError, ValueError) as error:
            # "ratio must be ..." -> "must be ...": the caller names the parameter.
            message, named = re.subn(r"^\w+ (\([^)]*\) )?(must|needs)", r"\1\2", str(error))
            raise ValueError(message if named else f"is not accepted: {message}") from None

    return check


def sequence_of(element: ValueCheck, *, distinct: bool = False) -> ValueCheck:
    """A non-empty list whose every item `element` accepts (and, where `distinct`, no item twice)."""

    def check(value: Any) -> None:
        if isinstance(value, str | bytes | dict) or not isinstance(value, Sequence) or not value:
            raise ValueError(f"must be a non-empty list, got {value!r}.")
        for index, item in enumerate(value):
            try:
                element(item)
            except ValueError as error:
                raise ValueError(f"(item {index}) {error}") from None
        if distinct and len(set(value)) != len(value):
            raise ValueError(f"must hold distinct values, got {list(value)!r}.")

    return check


def regular_expressions(value: Any) -> None:
    """A list (possibly empty) of regular expressions."""
    if isinstance(value, str | bytes | dict) or not isinstance(value, Sequence):
        raise ValueError(f"must be a list of regular expressions, got {value!r}.")
    for pattern in value:
        if not isinstance(pattern, str):
            raise ValueError(f"must be a list of regular expressions, got {pattern!r} in it.")
        try:
            re.compile(pattern)
        except re.error as error:
            raise ValueError(f"holds {pattern!r}, which is not a regular expression ({error}).") from None


def ordered_pair(element: ValueCheck) -> ValueCheck:
    """A (low, high) pair of values `element` accepts, with low <= high (an axis range)."""

    def check(value: Any) -> None:
        if isinstance(value, str | bytes | dict) or not isinstance(value, Sequence) or len(value) != 2:
            raise ValueError(f"must be a (low, high) pair, got {value!r}.")
        for item in value:
            element(item)
        if value[0] > value[1]:
            raise ValueError(f"must have low <= high, got {list(value)!r}.")

    return check


def one_or_pair(element: ValueCheck) -> ValueCheck:
    """A value `element` accepts, or a pair of them (one per axis)."""

    def check(value: Any) -> None:
        if isinstance(value, Sequence) and not isinstance(value, str | bytes):
            if len(value) != 2:
                raise ValueError(f"must be one value or a pair, got {value!r}.")
            for item in value:
                element(item)
        else:
            element(value)

    return check


__all__ = [
    "ValueCheck",
    "boolean",
    "calls",
    "fraction",
    "int_at_least",
    "non_negative_int",
    "non_negative_number",
    "number_in",
    "one_or_pair",
    "optional",
    "ordered_pair",
    "positive_int",
    "positive_number",
    "regular_expressions",
    "sequence_of",
    "text",
]
