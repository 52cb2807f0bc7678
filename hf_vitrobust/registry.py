# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""`Registry[T]`: the one way hf_vitrobust keeps a table of named things (corruptions, builtin models, Hub schemas,
benchmarks, probes, metrics), and `did_you_mean`, the one way it suggests a name.

A registry maps names to items in registration order. `register` adds an item (directly or as a decorator), with
optional aliases that `get` also resolves; `get` is the lookup every user-facing path goes through: an unknown name
raises `UnknownNameError` (a ValueError and a KeyError) that names the closest known names and lists them all.
Like `atomic_files` and `constants`, this module imports nothing of hf_vitrobust and nothing outside the standard
library, so every layer of the package may use it.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Generic, TypeVar, overload

T = TypeVar("T")
_MISSING: Any = object()


def close_matches(name: object, choices: Iterable[object], n: int = 1, cutoff: float = 0.6) -> list[str]:
    """The (at most `n`) known names closest to `name` (difflib's ratio >= `cutoff`), best first."""
    return difflib.get_close_matches(str(name), [str(choice) for choice in choices], n=n, cutoff=cutoff)


def did_you_mean(
    name: object,
    choices: Iterable[object],
    *,
    n: int = 1,
    cutoff: float = 0.6,
    display: Callable[[str], str] = repr,
) -> str:
    """The hint an error message ends with: " Did you mean 'x'?" (or "'x' or 'y'" for n > 1) for the names of
    `choices` closest to `name`, or "" when none is close."""
    matches = close_matches(name, choices, n=n, cutoff=cutoff)
    if not matches:
        return ""
    return f" Did you mean {' or '.join(display(match) for match in matches)}?"


def check_known(names: Iterable[object], known: Sequence[str], what: str) -> None:
    """Raise ValueError when any of `names` is not in `known`: "Unknown <what>(s): 'x' (did you mean 'y'?), 'z'.
    Known: a, b." (each unknown name once, in order of appearance)."""
    unknown = list(dict.fromkeys(str(name) for name in names if name not in known))
    if unknown:
        described = ", ".join(
            f"{name!r}"
            + (f" (did you mean {matches[0]!r}?)" if (matches := close_matches(name, known)) else "")
            for name in unknown
        )
        raise ValueError(f"Unknown {what}(s): {described}. Known: {', '.join(known)}.")


class UnknownNameError(KeyError, ValueError):
    """A name a registry does not hold. A ValueError (bad input) and a KeyError (a failed lookup) at once; its
    message is the plain text (not KeyError's quoted repr)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class Registry(Generic[T]):
    """Named items of one kind, in registration order.

    kind: what an item is, as an error message says it ("corruption", "builtin model", "probe").
    display: how a suggested name is written (e.g. `lambda n: f"'builtin:{n}'"`); repr by default.
    """

    def __init__(self, kind: str, *, display: Callable[[str], str] = repr) -> None:
        self.kind = kind
        self._display = display
        self._items: dict[str, T] = {}
        self._aliases: dict[str, str] = {}

    @overload
    def register(self, name: str, item: T, *, aliases: Sequence[str] = ..., replace: bool = ...) -> T: ...

    @overload
    def register(
        self, name: str, item: None = ..., *, aliases: Sequence[str] = ..., replace: bool = ...
    ) -> Callable[[T], T]: ...

    def register(
        self, name: str, item: T | None = None, *, aliases: Sequence[str] = (), replace: bool = False
    ) -> T | Callable[[T], T]:
        """Add `item` under `name` (and `aliases`), or return a decorator that does. A name or alias already taken
        is a ValueError unless `replace` (then the old entry and its aliases go)."""
        if not isinstance(name, str) or not name:
            raise ValueError(f"A {self.kind} name must be a non-empty string, got {name!r}.")

        def add(value: T) -> T:
            if replace:
                self.unregister(name, missing_ok=True)
            for key in (name, *aliases):
                if key in self._items or key in self._aliases:
                    raise ValueError(f"{self.kind.capitalize()} {key!r} is already registered.")
            self._items[name] = value
            self._aliases.update({alias: name for alias in aliases if alias != name})
            return value

        return add if item is None else add(item)

    def unregister(self, name: str, *, missing_ok: bool = False) -> None:
        """Remove `name` and its aliases (a plug-in registered for a test, say)."""
        if name not in self._items:
            if missing_ok:
                return
            self.get(name)
        del self._items[name]
        self._aliases = {alias: target for alias, target in self._aliases.items() if target != name}

    def canonical(self, name: object) -> str:
        """The registered name that `name` (a name or an alias) stands for; unknown names raise `UnknownNameError`."""
        if isinstance(name, str):
            if name in self._items:
                return name
            if name in self._aliases:
                return self._aliases[name]
        known = [*self._items, *self._aliases]
        matches = list(dict.fromkeys(self._aliases.get(m, m) for m in close_matches(name, known, n=3)))
        hint = f" Did you mean {self._display(matches[0])}?" if matches else ""
        available = ", ".join(self._items)
        raise UnknownNameError(f"Unknown {self.kind} {name!r}.{hint} Available: {available}.")

    def get(self, name: object, default: Any = _MISSING) -> T:
        """The item registered as `name` (or an alias). Unknown: `default` when given, else `UnknownNameError`
        with the closest names."""
        if default is not _MISSING and not (
            isinstance(name, str) and (name in self._items or name in self._aliases)
        ):
            return default
        return self._items[self.canonical(name)]

    def names(self) -> tuple[str, ...]:
        """Registered names (no aliases), in registration order."""
        return tuple(self._items)

    def items(self) -> Iterator[tuple[str, T]]:
        return iter(list(self._items.items()))

    def values(self) -> Iterator[T]:
        return iter(list(self._items.values()))

    def keys(self) -> tuple[str, ...]:
        return self.names()

    def __getitem__(self, name: str) -> T:
        return self.get(name)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and (name in self._items or name in self._aliases)

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {list(self._items)})"


__all__ = ["Registry", "UnknownNameError", "check_known", "close_matches", "did_you_mean"]
