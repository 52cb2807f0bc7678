# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""A run's headlines as the Hub's `.eval_results/*.yaml` entries (`huggingface_hub.EvalResultEntry`).

An entry has no model name and no protocol field, so the protocol travels in `notes`: segments joined by `" | "`,
the protocol segment first (`protocol_note`, read back by `protocol_from_notes`), then the interval and the run.
"""

from __future__ import annotations

from collections.abc import Mapping

NOTES_SEPARATOR = " | "
PROTOCOL_PREFIX = "protocol: "
#: The protocol parts in `analysis.protocols.protocol_parts` order (a test checks every benchmark against it).
PROTOCOL_PART_ORDER = ("preprocessing", "class_mask", "mce", "release_encoding")
_FORBIDDEN_IN_NAMES = (NOTES_SEPARATOR.strip(), ",", "=")


def protocol_note(protocol: Mapping[str, str]) -> str:
    """The protocol segment of an entry's notes: `"protocol: part=name, part=name"`, known parts in
    `protocol_parts` order, then any other part in the mapping's order. `protocol_from_notes` reads it back."""
    if not protocol:
        raise ValueError(
            "protocol_note: the protocol is empty; a benchmark has at least its preprocessing part."
        )
    for part, name in protocol.items():
        if (
            not isinstance(name, str)
            or not name
            or any(mark in f"{part}{name}" for mark in _FORBIDDEN_IN_NAMES)
        ):
            raise ValueError(
                f"protocol_note: {part}={name!r} cannot be written into notes; parts and names are non-empty "
                f"strings without {', '.join(repr(mark) for mark in _FORBIDDEN_IN_NAMES)}."
            )
    known = [part for part in PROTOCOL_PART_ORDER if part in protocol]
    others = [part for part in protocol if part not in PROTOCOL_PART_ORDER]
    return PROTOCOL_PREFIX + ", ".join(f"{part}={protocol[part]}" for part in known + others)


def protocol_from_notes(notes: str | None) -> dict[str, str] | None:
    """The protocol (part -> name) that `protocol_note` wrote into `notes`; None when no segment of `notes` is a
    protocol segment (notes written by other tools)."""
    for segment in (notes or "").split(NOTES_SEPARATOR):
        segment = segment.strip()
        if not segment.startswith(PROTOCOL_PREFIX):
            continue
        pairs = [pair.strip().partition("=") for pair in segment.removeprefix(PROTOCOL_PREFIX).split(",")]
        if all(part and sep and name for part, sep, name in pairs):
            return {part.strip(): name.strip() for part, _, name in pairs}
    return None


__all__ = ["protocol_from_notes", "protocol_note"]
