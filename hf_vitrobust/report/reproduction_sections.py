# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The "Published vs ours" and "Findings" sections of the report and the model card.

Both are computed once by `analysis.analyze` (`Analysis.reproduction()`: the published numbers beside ours and the
findings of every pair, as JSON-safe dicts), stored in results.json and in reproduction.json, and read here:
`published_table` and `findings_table` turn them into rows of text, the report's tables and the card's alike.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ..analysis.published import PAPERS
from ..analysis.published_vs_ours import VERDICTS
from ..metrics.intervals import PROPORTION_METHODS
from ..probes.display import MISSING
from .blocks import Block, Heading, Paragraph, Table

PUBLISHED_HEADERS = [
    "published number",
    "where published",
    "model (paper → ours)",
    "published",
    "ours [interval]",
    "ours − published",
    "verdict",
    "why / note",
]
FINDINGS_HEADERS = ["claim", "quantity", "ViT", "CNN", "ViT − CNN [interval]", "test: p (Holm)", "verdict"]


def _number(value: Any, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return MISSING
    return f"{float(value):.{digits}f}"


def _digits(unit: str, value: float) -> int:
    return 0 if unit == "count" else 2 if abs(value) >= 1 or value == 0 else 4


def _ours_cell(entry: Mapping[str, Any], digits: int) -> str:
    ours = entry.get("ours")
    if ours is None:
        return MISSING
    interval = entry.get("interval") or {}
    text = _number(ours, digits)
    if interval.get("low") is not None and interval.get("high") is not None:
        text += f" [{_number(interval['low'], digits)}, {_number(interval['high'], digits)}]"
    if entry.get("num_images"):
        images = int(entry["num_images"])
        # A proportion of some of the images (e.g. the accuracy of the confident ones) is over its own count.
        counted = interval.get("num_samples") if interval.get("method") in PROPORTION_METHODS else None
        share = f"{int(counted):,} of " if counted is not None and 0 < int(counted) < images else ""
        text += f" (n = {share}{images:,})"
    return text


def _published_cell(entry: Mapping[str, Any], digits: int) -> str:
    text = _number(entry["published"], digits)
    precision = float(entry.get("reading_precision") or 0.0)
    if entry.get("read_from") == "plot" and precision > 0:
        text += f" ± {_number(precision, digits)} (plot)"
    return text


def _why(entry: Mapping[str, Any]) -> str:
    reasons = entry.get("reasons") or []
    text = "; ".join(f"{r['kind']}: {r['detail']}" for r in reasons)
    counts = entry.get("counts")
    if counts:
        published, ours_on_theirs = counts["published"], counts["ours_on_theirs"]
        said = f"{_range(published)} of {counts['published_images']:,} published, {counts['ours']:,} of {counts['our_images']:,} here"
        if counts["published_images"] != counts["our_images"]:
            said += f" ({_range(ours_on_theirs)} on the {counts['published_images']:,} they scored)"
        text = f"{text}; {said}" if text else said
    if entry.get("sampled"):
        sampled = "a random sample of their images: the sampling interval"
        text = f"{text}; {sampled}" if text else sampled
    return text or "—"


def _range(bounds: Sequence[int]) -> str:
    return f"{bounds[0]:,}" if bounds[0] == bounds[1] else f"{bounds[0]:,}–{bounds[1]:,}"


def published_table(entries: Sequence[Mapping[str, Any]]) -> list[list[str]]:
    """One row of text per published number (see PUBLISHED_HEADERS)."""
    rows = []
    for entry in entries:
        unit = "count" if "(count)" in str(entry.get("metric")) else "%"
        digits = _digits(unit, float(entry["published"]))
        number = f"{entry['benchmark']} {entry['metric']}"
        if entry.get("condition"):
            number += f" [{str(entry['condition']).replace(';', ', ')}]"
        if entry.get("protocol"):
            number += f" ({str(entry['protocol']).replace(';', ', ')})"
        difference = entry.get("difference")
        rows.append(
            [
                number,
                str(entry.get("where") or MISSING),
                f"{entry['model_key']} → {entry['spec']}",
                _published_cell(entry, digits),
                _ours_cell(entry, digits),
                MISSING if difference is None else f"{difference:+.{digits}f}",
                str(entry["verdict"]),
                _why(entry),
            ]
        )
    return rows


def _model_value(model: str | None, value: Any) -> str:
    if model is None:
        return MISSING
    return f"{model}: {_number(value)}" if value is not None else model


def findings_table(checks: Sequence[Mapping[str, Any]]) -> list[list[str]]:
    """One row of text per finding (see FINDINGS_HEADERS)."""
    rows = []
    for check in checks:
        difference = check.get("difference") or {}
        if check.get("verdict") == "not checked":
            compared = f"not checked: {check.get('reason')}"
            test = MISSING
        else:
            compared = f"{_number(difference.get('estimate'))} [{_number(difference.get('low'))}, {_number(difference.get('high'))}]"
            compared += f" ({int(check.get('num_units') or 0):,} {difference.get('unit') or 'unit'}s)"
            test = (
                f"{check.get('test')}: {_number(check.get('p_value'), 4)} ({_number(check.get('p_holm'), 4)})"
            )
        rows.append(
            [
                f"{check['claim']} ({check['source']})",
                str(check["quantity"]),
                _model_value(check.get("vit"), check.get("vit_value")),
                _model_value(check.get("cnn"), check.get("cnn_value")),
                compared,
                test,
                str(check["verdict"]),
            ]
        )
    return rows


def _kind(entry: Mapping[str, Any]) -> str:
    return str(entry.get("verdict_kind") or entry["verdict"])


def verdict_sentence(entries: Sequence[Mapping[str, Any]]) -> str:
    """ "12 published numbers: 3 equal, 5 within, 1 outside, 3 not comparable; 4 approximate." """
    counts = {verdict: sum(_kind(e) == verdict for e in entries) for verdict in VERDICTS}
    parts = [f"{counts[v]} {v}" for v in VERDICTS if counts[v]]
    approximate = sum(str(e["verdict"]).startswith("approximate") for e in entries)
    tail = f"; {approximate} approximate" if approximate else ""
    return f"{len(entries)} published number{'s' if len(entries) != 1 else ''}: {', '.join(parts)}{tail}."


def _protocol_option(summary: Mapping[str, Any]) -> str:
    if summary.get("check_other_protocols"):
        return "here they were checked as asked, and their verdicts say 'under another protocol'"
    return "`vitrobust report --check-other-protocols` checks them, their verdicts marked 'under another protocol'"


def _level(summary: Mapping[str, Any]) -> str:
    return f"{100 * float(summary.get('confidence_level') or 0.95):g} %"


def reproduction_blocks(summary: Mapping[str, Any]) -> list[Block]:
    """The report's "Published vs ours" and "Findings" sections (nothing when the runs match no published number
    and hold no pair)."""
    blocks: list[Block] = []
    published = summary.get("published") or []
    if published:
        blocks += [
            Heading(2, "Published vs ours"),
            Paragraph(
                f"{verdict_sentence(published)} Each number the papers published for these models "
                "(hf_vitrobust/assets/published/published.csv: its source, how it was read, its protocol), beside ours "
                f"with its {_level(summary)} interval. Where ours and theirs score the same images an accuracy is compared as "
                "a count of images: equal (the same count), within k images (a difference the images the authors left "
                "out can explain, bounded by our own accuracy), outside by k images (at least k images differ). Where "
                "we score a random sample of their images: within or outside the sampling interval. Approximate: the "
                "published number leaves a protocol part unnamed. Not comparable: another checkpoint, another protocol, other "
                "images, or not in this run (the reasons are given)."
            ),
        ]
        for paper in dict.fromkeys(e["paper"] for e in published):
            entries = [e for e in published if e["paper"] == paper]
            blocks.append(Heading(3, PAPERS.get(paper, paper)))
            for benchmark in dict.fromkeys(e["benchmark"] for e in entries):
                chosen = [e for e in entries if e["benchmark"] == benchmark]
                blocks.append(
                    Table(PUBLISHED_HEADERS, published_table(chosen), title=benchmark, numeric=False)
                )
    findings = summary.get("findings") or []
    if findings:
        blocks += [
            Heading(2, "Findings"),
            Paragraph(
                "The papers' claims about ViTs against CNNs, checked on each pair of these runs: ViT minus CNN over the "
                f"images both saw, with its paired {_level(summary)} interval (one set of bootstrap weights for both "
                "models), McNemar's exact test for accuracies and the bootstrap's p-value otherwise, and Holm's "
                "correction over the findings of the pair. A finding holds when the interval lies wholly on the "
                "paper's side of 0 and the corrected p-value is below the level's alpha; reversed on the other side. "
                "Each finding names the protocol parts its quantity depends on (the preprocessing each model was "
                "given, as the paper's notebooks gave it): a pair whose runs differ from them is not checked "
                f"({_protocol_option(summary)}). A claim about a model set (Table 7: the attention CNNs against a "
                "plain ResNet-50) is checked for each model of the set in the ViT's column against the baseline in "
                "the CNN's."
            ),
        ]
        for group in findings:
            which = "models" if group.get("origin") == "model set" else "pair"
            title = f"{PAPERS.get(group['paper'], group['paper'])}: {which} {group['pair']}"
            blocks.append(
                Table(FINDINGS_HEADERS, findings_table(group["checks"]), title=title, numeric=False)
            )
            if any(c.get("vit") is not None and c.get("vit") == c.get("cnn") for c in group["checks"]):
                blocks.append(
                    Paragraph(
                        f"In pair {group['pair']} one model stands for both members (a stand-in run): its "
                        "differences are 0 by construction, and say nothing about the paper's models."
                    )
                )
    return blocks


__all__ = [
    "FINDINGS_HEADERS",
    "PUBLISHED_HEADERS",
    "findings_table",
    "published_table",
    "reproduction_blocks",
    "verdict_sentence",
]
