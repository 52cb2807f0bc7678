# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The report's uncertainty sections: how the headline numbers' intervals were computed, the intervals the Summary does
not show (it shows the others beside their numbers), the samples a target half-width needs, and the paired
comparisons of models (`analysis.uncertainty`), as report blocks."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from ..analysis.results import ModelView
from ..metrics.intervals import Interval
from ..probes.display import MISSING
from .blocks import Block, Heading, Paragraph, Table, named_value_table

#: The key under which the report's Summary table hands each model's intervals to its row formatters.
INTERVALS = "\x00intervals"


def shows_interval(text: str, record: Mapping[str, Any] | None) -> bool:
    """Whether a Summary cell showing `text` gets the interval `record` appended: where the cell shows a number and
    the interval has both bounds."""
    return (
        text != MISSING and bool(record) and record.get("low") is not None and record.get("high") is not None
    )


def with_interval(text: str, record: Mapping[str, Any] | None) -> str:
    """A Summary cell with its interval appended ("75.86 [57.89, 87.78]") where `shows_interval`."""
    if not shows_interval(text, record):
        return text
    return f"{text} [{record['low']:.2f}, {record['high']:.2f}]"


def _interval_cell(record: Mapping[str, Any] | None) -> str:
    if not record or record.get("estimate") is None:
        return MISSING
    return Interval.from_dict(dict(record)).format(2)


def _needed_cell(record: Mapping[str, Any] | None) -> str:
    if not record or record.get("samples_needed") is None:
        return MISSING
    unit = "sample" if record.get("num_units") is None else str(record.get("unit") or "unit")
    needed = int(record["samples_needed"])
    return f"{needed:,} {unit}{'s' if needed != 1 else ''} (now {record.get('num_units') or record.get('num_samples')})"


def _settings(results: Sequence[Mapping[str, Any]]) -> Mapping[str, Any]:
    for result in results:
        if result.get("uncertainty"):
            return result["uncertainty"]
    return {}


def _method_text(views: Sequence[ModelView], settings: Mapping[str, Any]) -> str:
    level = 100 * float(settings.get("confidence_level", 0.95))
    methods = sorted({(r.get("method"), r.get("unit")) for v in views for r in v.intervals.values()})
    described = "; ".join(f"{method} over {unit}s" for method, unit in methods if method)
    return (
        f"The Summary shows each headline number with its {level:g} % confidence interval [low, high]; the table "
        "below holds those of the headlines it does not show. They are computed from the per-sample predictions "
        f"({described}; {settings.get('num_resamples', 1000)} bootstrap resamples, proportions by "
        f"{settings.get('proportion_method', 'wilson')}). ImageNet-C and -P resample clean images with all their "
        "corruptions, severities or sequences together; ImageNet-O resamples its OOD and in-distribution images "
        "separately; the BG-gap resamples foreground images with both backgrounds."
    )


def _notes(views: Sequence[ModelView]) -> list[str]:
    notes: dict[str, list[str]] = {}
    for view in views:
        for name, record in view.intervals.items():
            for note in str(record.get("note") or "").split("; "):
                if note and name not in notes.setdefault(note, []):
                    notes[note].append(name)
    return [f"{', '.join(names)}: {note}." for note, names in notes.items()]


def interval_blocks(
    results: Sequence[Mapping[str, Any]],
    views: Sequence[ModelView],
    shown: Mapping[str, Collection[str]] | None = None,
) -> list[Block]:
    """The "Uncertainty" section: how the intervals were computed, the intervals the Summary does not show
    (`shown`: model key -> the headline names whose interval its Summary column shows), their caveats, and the
    samples needed. No interval is printed both here and in the Summary."""
    if not any(v.intervals for v in views):
        return []
    settings = _settings(results)
    blocks: list[Block] = [Heading(2, "Uncertainty"), Paragraph(_method_text(views, settings))]
    in_summary = shown or {}

    def not_shown(view: ModelView) -> dict[str, Any]:
        return {name: r for name, r in view.intervals.items() if name not in in_summary.get(view.key, ())}

    level = 100 * float(settings.get("confidence_level", 0.95))
    title = f"Headlines not in the Summary, with their {level:g} % intervals"
    table = named_value_table(views, not_shown, "headline", _interval_cell, title=title)
    if table is not None:
        blocks.append(table)
    blocks += [Paragraph(f"Note: {text}") for text in _notes(views)]
    target = settings.get("target_half_width", 1.0)
    needed = named_value_table(
        views,
        lambda v: v.intervals,
        "headline",
        _needed_cell,
        title=f"Samples needed for a half-width of {target:g} (the headline's units)",
    )
    if needed is not None:
        blocks.append(
            Paragraph(
                f"How many samples would give each number a {settings.get('confidence_level', 0.95):g} interval of "
                f"half-width {target:g}: the normal approximation at the observed proportion for accuracies, "
                "1/sqrt(n) scaling of the bootstrap interval otherwise (counted in the resampling unit, which is "
                "what --limit counts)."
            )
        )
        blocks.append(needed)
    return blocks


def comparison_blocks(results: Sequence[Mapping[str, Any]], views: Sequence[ModelView]) -> list[Block]:
    """The "Comparisons" section: each pair of models on each shared headline (results.json "comparisons")."""
    found = [result["comparisons"] for result in results if result.get("comparisons")]
    if not found:
        return []
    comparisons = found[0]
    rows = []
    for row in comparisons.get("rows", []):
        if "skipped" in row:
            rows.append(
                [row["headline"], row["a"], row["b"], f"not compared: {row['skipped']}", "", "", "", ""]
            )
            continue
        difference = Interval.from_dict(row["difference"])
        rows.append(
            [
                row["headline"],
                row["a"],
                row["b"],
                difference.format(2),
                row["test"],
                f"{row['p_value']:.3g}",
                f"{row['p_holm']:.3g}",
                "yes" if row["resolved"] else "no",
            ]
        )
    if not rows:
        return []
    level = float(comparisons.get("confidence_level", 0.95))
    count = int(comparisons.get("num_comparisons", len(rows)))
    correction = (
        f"Holm's correction over the {count} comparisons controls the family-wise error at {100 * (1 - level):g} %"
        if comparisons.get("correction") == "holm"
        else "one comparison, so no correction"
    )
    text = (
        f"Model A minus model B over the samples both saw, with the paired-bootstrap {100 * level:g} % interval "
        "(both models resampled with the same weights). Accuracies are tested with McNemar's exact test, other "
        f"numbers with the paired bootstrap; {correction}. 'Resolved' means the corrected p-value is at most "
        f"{1 - level:g}."
    )
    headers = ["headline", "A", "B", "A - B [interval]", "test", "p", "p (Holm)", "resolved"]
    return [Heading(2, "Comparisons"), Paragraph(text), Table(headers, rows)]


__all__ = ["INTERVALS", "comparison_blocks", "interval_blocks", "shows_interval", "with_interval"]
