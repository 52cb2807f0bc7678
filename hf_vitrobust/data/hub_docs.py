# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""`docs/hub_datasets.md` from the registries: every Hub dataset hf_vitrobust reads (`hub_datasets`: through
`datasets`; `hub_copies`: from its own files) and every repository or split it refuses, each fact with its source and
date. A test keeps the file equal to `hub_sources_markdown()`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .hub_copies import READ_ON as COPIES_READ_ON
from .hub_datasets import HUB_IMAGE_BYTES, READ_ON
from .hub_labels import CLASS_NAME_VARIANTS
from .hub_schemas import HUB_SCHEMAS, REFUSED_REPOS, UNSTREAMABLE_REPOS
from .webdataset import HUB_FILE_COPIES


def _cell(text: str) -> str:
    """Text for a markdown table cell: pipes and angle brackets (`<corruption>`) escaped."""
    return text.replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def _evidence_rows(lead: list[str], confirmed: Sequence[Any], unverified: Sequence[str]) -> list[str]:
    """One table row per piece of evidence of a registry entry: the entry's own cells (`lead`) and what could not
    be verified on its first row only, blank on the rest; each row with the fact, its source and its date."""
    rows = []
    for k, evidence in enumerate(confirmed):
        first = k == 0
        cells = [
            *(cell if first else "" for cell in lead),
            _cell(evidence.fact),
            _cell(evidence.source),
            _cell(evidence.as_of),
            _cell("; ".join(unverified) or "nothing left unverified") if first else "",
        ]
        rows.append("| " + " | ".join(cells) + " |")
    return rows


def hub_sources_markdown() -> str:
    """`docs/hub_datasets.md`: every registered Hub dataset, class-name variant and unstreamable repository with
    what was verified, where, as of when, and what could not be verified."""
    lines = [
        "# Hub datasets: what was verified, and where",
        "",
        "Generated from the registries in `hf_vitrobust/data/hub_datasets.py` and `hub_copies.py` by "
        "`hub_sources_markdown()` "
        "(`python -c 'from hf_vitrobust.data import hub_sources_markdown as m; print(m(), end=\"\")' > "
        "docs/hub_datasets.md`); a test keeps the two equal.",
        f"Every fact was read on {READ_ON} (the file copies and refusals on {COPIES_READ_ON}) from stored copies of "
        "the public pages named (no live page, no "
        "download); the pages' own dates are given where they show them. Before a long run, "
        "`vitrobust check-data BENCHMARK SOURCE` confirms a source in seconds.",
        "",
        "## Schemas",
        "",
        "| Hub id | schema | benchmark | what was verified | source | as of | what could not be verified |",
        "|---|---|---|---|---|---|---|",
    ]
    for schema in HUB_SCHEMAS.values():
        lead = [f"`{schema.repo}`", f"`{schema.name}`", schema.benchmark]
        lines += _evidence_rows(lead, schema.confirmed, schema.unverified)
    lines += _file_copies()
    lines += [
        "",
        "## Image bytes: the release's files or a re-encoded copy",
        "",
        "Recorded in results.json per benchmark (`image_bytes`); a published number compared with a run that read "
        "re-encoded or unknown bytes is marked approximate.",
        "",
        "| schema | image bytes | why |",
        "|---|---|---|",
    ]
    for name in [*HUB_SCHEMAS, *(copy.name for copy in HUB_FILE_COPIES.values())]:
        value, why = HUB_IMAGE_BYTES.get(name, ("unknown", "not recorded for this schema"))
        lines.append(f"| `{name}` | {value} | {_cell(why)} |")
    lines += [
        "",
        "## Class-name spellings accepted deliberately",
        "",
        "| label space | spelling | class | source | as of |",
        "|---|---|---|---|---|",
    ]
    for table in CLASS_NAME_VARIANTS.values():
        for variant in table.values():
            lines.append(
                f"| {variant.label_space} | `{variant.spelling}` | {variant.index} | "
                f"{_cell(variant.evidence.fact)}; {_cell(variant.evidence.source)} | {_cell(variant.evidence.as_of)} |"
            )
    lines += [
        "",
        "Any other name that matches no class still fails with a `SchemaError` naming it.",
        "",
        "## Repositories that cannot be streamed",
        "",
        "| Hub id | benchmark | why | use instead | source | as of |",
        "|---|---|---|---|---|---|",
    ]
    for entry in UNSTREAMABLE_REPOS.values():
        for evidence in entry.confirmed:
            lines.append(
                f"| `{entry.repo}` | {entry.benchmark} | {_cell(entry.reason)}: {_cell(evidence.fact)} | "
                f"{_cell(entry.instead)} | {_cell(evidence.source)} | {_cell(evidence.as_of)} |"
            )
    lines += _refused()
    return "\n".join(lines) + "\n"


def _file_copies() -> list[str]:
    lines = [
        "",
        "## Copies read from their own files",
        "",
        "Downloaded with huggingface_hub (only the files named) or read from a local folder laid out like the "
        "repository. A WebDataset copy's `classnames.txt` must list the benchmark's classes in the copy's numbering, "
        "line by line (the CLIP names of `hf_vitrobust/assets/class_lists/imagenet_1k_clip_names.txt`, or ObjectNet's "
        "names), else it is refused before any image is read.",
        "",
        "| Hub id | schema | benchmark | layout | images | what was verified | source | as of | "
        "what could not be verified |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for copy in HUB_FILE_COPIES.values():
        images = f"{copy.num_rows:,}" if copy.num_rows is not None else "not checked"
        lead = [f"`{copy.repo}`", f"`{copy.name}`", copy.benchmark, copy.layout, images]
        lines += _evidence_rows(lead, copy.confirmed, copy.unverified)
    return lines


def _refused() -> list[str]:
    lines = [
        "",
        "## Repositories and splits refused",
        "",
        "Refused when a suite is read or a source is named, before any model is loaded or any data read.",
        "",
        "- Any split named `partial-*` (a path component or the split option): the Hub's parquet converter writes "
        "such a split when it converts only the first part of a large dataset (e.g. `clip-benchmark/wds_objectnet`'s "
        "`refs/convert/parquet` holds `default/partial-test` only), so it is not the whole benchmark.",
        "",
        "| Hub id | benchmark | why | use instead | what was verified | source | as of | what could not be verified |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for entry in REFUSED_REPOS.values():
        lead = [f"`{entry.pattern}`", entry.benchmark, _cell(entry.reason), _cell(entry.instead)]
        lines += _evidence_rows(lead, entry.confirmed, entry.unverified)
    return lines


__all__ = ["hub_sources_markdown"]
