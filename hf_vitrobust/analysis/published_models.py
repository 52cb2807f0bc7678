# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Which published models a run holds: a model that `vitrobust reproduce` recorded as standing for a paper's model
(results.json "reproduction"), or a model whose spec loads the table's `model_id` of a same-weights row (the same
spec, or another form of the same release: `models.checkpoint_identity`; `analysis.published_vs_ours` compares
their numbers)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..models.loading import checkpoint_identity
from .published import PAPERS, PublishedNumber, published_numbers


@dataclass(frozen=True)
class Identified:
    """A published model found in the runs: the paper, its key, the run models that stand for it (merged-result
    index, model key), whether they stand in for it (a reproduction with another checkpoint on purpose), and
    whether a reproduction named it (then every one of its published numbers is shown)."""

    paper: str
    model_key: str
    candidates: tuple[tuple[int, str], ...]
    stand_in: bool = False
    reproduction: bool = False
    role: str | None = None


def reproduction_entries(result: Mapping[str, Any]) -> dict[str, list[Mapping[str, Any]]]:
    """The paper models each model of a run stands for (results.json "reproduction", written by `vitrobust
    reproduce`), by the model's key in `result` (merged or not): key -> [{"role", "model_key", "model",
    "stand_in", ...}, ...] (one model may stand for both members of a pair)."""
    record = result.get("reproduction") or {}
    by_run_key = record.get("models") or {}
    out: dict[str, list[Mapping[str, Any]]] = {}
    for model in result.get("models") or []:
        given = by_run_key.get(str(model.get("run_key") or model.get("key")))
        entries = [given] if isinstance(given, Mapping) else list(given or [])
        out[str(model["key"])] = [{**entry, "paper": record.get("paper")} for entry in entries if entry]
    return out


def identify_models(results: Sequence[Mapping[str, Any]]) -> list[Identified]:
    """The published models the runs hold (see the module docstring), in the order first met."""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    by_id: dict[str, list[PublishedNumber]] = {}
    for row in published_numbers():
        if row.has_public_weights:
            by_id.setdefault(row.model_id, []).append(row)

    def entry_of(paper: str, key: str) -> dict[str, Any]:
        return found.setdefault(
            (paper, key), {"candidates": [], "stand_in": False, "reproduction": False, "role": None}
        )

    for index, result in enumerate(results):
        recorded = reproduction_entries(result)
        for model in result.get("models") or []:
            key = str(model["key"])
            given = [g for g in recorded.get(key, []) if g.get("paper") in PAPERS and g.get("model_key")]
            for member in given:
                entry = entry_of(str(member["paper"]), str(member["model_key"]))
                entry.update(reproduction=True, role=member.get("role"))
                entry["stand_in"] = entry["stand_in"] or bool(member.get("stand_in"))
                entry["candidates"].append((index, key))
            if given:
                continue
            for row in by_id.get(checkpoint_identity(str(model.get("spec"))), []):
                entry = entry_of(row.paper, row.model_key)
                if (index, key) not in entry["candidates"]:
                    entry["candidates"].append((index, key))
    return [
        Identified(
            paper, key, tuple(entry["candidates"]), entry["stand_in"], entry["reproduction"], entry["role"]
        )
        for (paper, key), entry in found.items()
    ]


__all__ = ["Identified", "identify_models", "reproduction_entries"]
