# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The report of one or more evaluation runs: report.md and a self-contained report.html (figures inlined).

Models of every run are shown side by side, one column per model: a summary table (each headline with its interval),
the uncertainty section (how the intervals were computed, and those of the headlines the summary does not show), the
data sources (what each benchmark's images were), one table per benchmark (clean accuracy and calibration, ImageNet-C
mCE and Paul & Chen's severity-5 numbers, ImageNet-P flip rates, ImageNet-A/R/O, ImageNet-9) and the probes' headline
numbers, with the figures of `figures.py`; where the runs hold models the papers published numbers for, or a pair of a
paper's comparison, the published numbers beside ours and the papers' findings checked on the pair
(`report.reproduction_sections`). Units are stated in every row label; percentages carry two decimals. report.html
wraps every table in a horizontally scrolling box, so that a wide table never widens the page.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..analysis.analyze import stored_analysis
from ..analysis.results import (
    ModelView,
    benchmark_names,
    merge_results,
    model_views,
    ordered_union,
    probe_kind,
    probe_names,
    run_names,
)
from ..atomic_files import write_text_atomic
from ..probes.display import MISSING, fmt_count, fmt_number, number
from ..probes.spec import get_probe
from .blocks import (
    Block,
    FigureBlock,
    Heading,
    Paragraph,
    Row,
    Table,
    figure_blocks,
    model_table,
    named_value_table,
)
from .displays import get_display
from .effective_robustness_section import effective_robustness_blocks
from .figure_set import write_figures
from .figures import FigureFile
from .interval_sections import (
    INTERVALS,
    comparison_blocks,
    interval_blocks,
    shows_interval,
    with_interval,
)
from .reproduction_sections import reproduction_blocks
from .source_sections import data_source_blocks

# ---------------------------------------------------------------------------------------------------------------
# Loading and merging


def _probe_values(kind: str, probe: Mapping[str, Any]) -> dict[str, Any]:
    """The headline numbers of one probe dict: label (with unit) -> formatted value (its spec's `table`)."""
    return get_probe(kind).table(probe)


# ---------------------------------------------------------------------------------------------------------------
# Sections


def _header(results: Sequence[Mapping[str, Any]]) -> list[Block]:
    suites = ordered_union([[str((r.get("suite") or {}).get("name") or MISSING)] for r in results])
    blocks: list[Block] = [Heading(1, f"hf_vitrobust report — suite {', '.join(suites)}")]
    columns = [f"run {name}" for name in run_names(results)] if len(results) > 1 else ["value"]

    def env(result: Mapping[str, Any], key: str) -> str:
        environment = result.get("environment") or {}
        value = environment.get(key, (environment.get("libraries") or {}).get(key))
        return MISSING if value in (None, "") else str(value)

    def device(result: Mapping[str, Any]) -> str:
        settings = result.get("settings") or {}
        devices = (result.get("environment") or {}).get("devices") or []
        parts = [str(settings.get("device") or MISSING)]
        if devices and [str(d) for d in devices] != parts:
            parts.append(f"({', '.join(map(str, devices))})")
        return " ".join(parts)

    def setting(key: str) -> Callable[[Mapping[str, Any]], str]:
        return lambda r: MISSING if (r.get("settings") or {}).get(key) is None else str(r["settings"][key])

    fields: list[tuple[str, Callable[[Mapping[str, Any]], str]]] = [
        ("suite", lambda r: str((r.get("suite") or {}).get("name") or MISSING)),
        ("created (UTC)", lambda r: str(r.get("created") or MISSING)),
        ("hf_vitrobust", lambda r: str(r.get("hf_vitrobust_version") or MISSING)),
        ("device", device),
        ("torch", lambda r: env(r, "torch")),
        ("CUDA", lambda r: env(r, "cuda")),
        ("transformers / timm", lambda r: f"{env(r, 'transformers')} / {env(r, 'timm')}"),
        ("python / platform", lambda r: f"{env(r, 'python')} / {env(r, 'platform')}"),
        ("seed", lambda r: MISSING if r.get("seed") is None else str(r["seed"])),
        ("precision", setting("precision")),
        ("batch size", setting("batch_size")),
        ("processes", setting("num_processes")),
        ("sample limit", lambda r: str((r.get("settings") or {}).get("limit") or "none")),
    ]
    rows = [[label, *(read(r) for r in results)] for label, read in fields]
    blocks.append(Table(["", *columns], rows, numeric=False))
    descriptions = [str((r.get("suite") or {}).get("description") or "") for r in results]
    if any(descriptions):
        blocks.append(Paragraph(" ".join(dict.fromkeys(d for d in descriptions if d))))
    return blocks


def _protocol_text(record: Mapping[str, Any]) -> str:
    parts = [
        f"{part}: {record[part]}" for part in ("class_mask", "mce", "release_encoding") if record.get(part)
    ]
    for key in ("score", "baseline"):
        if record.get(key):
            parts.append(f"{key}: {record[key]}")
    return "; ".join(parts) or MISSING


def _protocols(results: Sequence[Mapping[str, Any]]) -> list[Block]:
    """Which protocol each benchmark ran under, per model (docs/protocols.md); schema-1 runs recorded none."""
    runs = run_names(results)
    rows, old = [], []
    for run, result in zip(runs, results, strict=True):
        if int(result.get("schema_version") or 1) < 2:
            old.append(run)
            continue
        for name, bench in (result.get("benchmarks") or {}).items():
            record = bench.get("protocol") or {}
            for model, given in (record.get("models") or {}).items():
                size = given.get("input_size")
                applied = str(given.get("applied") or MISSING)
                if given.get("requested") and given.get("requested") != applied:
                    applied += f" (asked: {given['requested']})"
                row = [
                    name,
                    model,
                    applied,
                    "×".join(map(str, size)) if size else MISSING,
                    _protocol_text(record),
                    " ".join(str(given[k]) for k in ("pairing", "note") if given.get(k)),
                ]
                rows.append(([run] if len(results) > 1 else []) + row)
    blocks: list[Block] = []
    if rows or old:
        blocks.append(Heading(2, "Protocols"))
    if rows:
        headers = (["run"] if len(results) > 1 else []) + [
            "benchmark",
            "model",
            "preprocessing",
            "input",
            "scoring",
            "note",
        ]
        blocks.append(Table(headers, rows, numeric=False))
    if old:
        blocks.append(
            Paragraph(
                f"{', '.join(old)}: results schema 1, which recorded no protocol. Such runs fed ImageNet-C, -P, -9 "
                "and CIFAR through each model's own resize and crop (not as released), scored ImageNet-A/R with "
                "the 200-class argmax and generated ImageNet-C without the release's JPEG step."
            )
        )
    return blocks


def _weights_dtype(info: Mapping[str, Any]) -> str:
    """The dtype a model ran in, and the one its weights were stored in where that differs ("float32, stored
    bfloat16")."""
    run, stored = info.get("run_dtype"), info.get("stored_dtype")
    if not run:
        return MISSING
    return f"{run}, stored {stored}" if stored and stored != run else str(run)


def _models(views: Sequence[ModelView], results: Sequence[Mapping[str, Any]]) -> list[Block]:
    runs = run_names(results)
    # Runs written before the dtypes were recorded keep their table as it was.
    dtypes = any(v.info.get("run_dtype") for v in views)
    rows = []
    for v in views:
        info = v.info
        size = info.get("input_size")
        params = number(info.get("num_parameters"))
        row = [
            v.key,
            str(info.get("name") or MISSING),
            str(info.get("spec") or MISSING),
            str(info.get("kind") or MISSING),
            fmt_count(info.get("num_classes")),
            "×".join(map(str, size)) if size else MISSING,
            MISSING if params is None else f"{params / 1e6:.2f}",
        ]
        row += [_weights_dtype(info)] if dtypes else []
        rows.append(row + ([runs[v.run]] if len(results) > 1 else []))
    headers = ["model", "name", "spec", "kind", "classes", "input", "parameters (M)"] + (
        ["weights"] if dtypes else []
    )
    return [Heading(2, "Models"), Table(headers + (["run"] if len(results) > 1 else []), rows, numeric=False)]


def _summary(
    views: Sequence[ModelView], benchmarks: Sequence[str], probes: Sequence[str]
) -> tuple[list[Block], dict[str, set[str]]]:
    """The Summary table: each benchmark display's headline rows, each with its interval where the run holds one,
    and each probe's summary row. Also returns model key -> the names of the headlines whose interval it shows,
    which the Uncertainty section then leaves out (no number twice)."""
    rows: list[Row] = []
    shown: dict[str, set[str]] = {v.key: set() for v in views}
    for bench in benchmarks:
        kinds = {v.kinds.get(bench, "other") for v in views if bench in v.metrics}
        display = get_display(next(iter(kinds)) if len(kinds) == 1 else "other")
        for label, read, name in display.summary_rows(bench):
            for v in views:
                if bench in v.metrics and shows_interval(read(v.metrics[bench]), v.intervals.get(name)):
                    shown[v.key].add(name)

            def cell(
                metrics: Mapping[str, Any], bench: str = bench, read: Callable = read, name: str = name
            ) -> str:
                return with_interval(read(metrics.get(bench) or {}), metrics[INTERVALS].get(name))

            rows.append((label, cell))
    for name in probes:
        kinds = {probe_kind(name, v.probes[name]) for v in views if name in v.probes}
        kind = next(iter(kinds)) if len(kinds) == 1 else None
        spec = None if kind is None else get_probe(kind)
        if spec is None or spec.summary_row is None:
            continue
        rows.append(
            (
                f"{name}: {spec.summary_row}",
                lambda metrics, name=name, spec=spec: spec.summary_cell(metrics.get(name)),
            )
        )
    table = model_table(views, lambda v: {**v.metrics, **v.probes, INTERVALS: v.intervals}, rows, "headline")
    if table is None:
        return [], {}
    return [Heading(2, "Summary"), table], shown


def _benchmark_sections(
    benchmarks: Sequence[str], views: Sequence[ModelView], figures: Mapping[str, FigureFile]
) -> list[Block]:
    """One section per benchmark, shown by the display of the kind most of the models' results of it have; a
    kind's group figure follows the last benchmark of that kind."""
    blocks: list[Block] = []
    placed: set[str] = set()
    for index, bench in enumerate(benchmarks):
        kinds = [v.kinds.get(bench, "other") for v in views if bench in v.metrics]
        if not kinds:
            continue
        kind = max(dict.fromkeys(kinds), key=kinds.count)
        display = get_display(kind)
        blocks.append(Heading(2, f"Benchmark: {bench}"))
        blocks += display.section(bench, views, figures)
        last_of_kind = all(v.kinds.get(b) != kind for b in benchmarks[index + 1 :] for v in views)
        if display.group_figure is not None and last_of_kind and display.group_figure[0] not in placed:
            blocks += figure_blocks(display.group_figure[0], figures)
            placed.add(display.group_figure[0])
    return blocks


def _probe_sections(
    names: Sequence[str], views: Sequence[ModelView], figures: Mapping[str, FigureFile]
) -> list[Block]:
    blocks: list[Block] = []
    placed: set[str] = set()
    for name in names:
        kinds = [probe_kind(name, v.probes[name]) for v in views if name in v.probes]
        kind = kinds[0] if kinds else None
        if kind is None:
            continue
        blocks.append(Heading(3, f"Probe: {name}"))
        benchmarks = ordered_union(
            [[str(v.probes[name]["benchmark"])] for v in views if v.probes.get(name, {}).get("benchmark")]
        )
        if benchmarks:
            blocks.append(Paragraph(f"Images from: {', '.join(benchmarks)}."))
        if table := named_value_table(
            views,
            lambda v, n=name, k=kind: _probe_values(k, v.probes[n]) if n in v.probes else None,
            "value",
            str,
        ):
            blocks.append(table)
        for figure in get_probe(kind).figures:
            if figure not in placed:
                blocks += figure_blocks(figure, figures)
                placed.add(figure)
    return [Heading(2, "Probes"), *blocks] if blocks else []


def _timing(results: Sequence[Mapping[str, Any]], views: Sequence[ModelView]) -> list[Block]:
    by_key = {}
    for v in views:
        timing = (results[v.run].get("timing") or {}).get(v.key)
        if timing:
            by_key[v.key] = timing
    table = named_value_table(
        [v for v in views if v.key in by_key],
        lambda v: by_key.get(v.key),
        "step",
        fmt_number,
        "Wall time (s)",
    )
    return [Heading(2, "Timing"), table] if table else []


def build_document(results: Sequence[Mapping[str, Any]], figures: Mapping[str, FigureFile]) -> list[Block]:
    """The report as a list of blocks (headings, paragraphs, tables, figures), for both renderers, from analysed
    runs: the intervals, comparisons, published numbers and findings they hold (`analysis.analyze`)."""
    merged = merge_results(results)
    views = model_views(merged)
    benchmarks = benchmark_names(merged, views)
    probes = probe_names(views)
    blocks: list[Block] = _header(merged)
    summary, shown = _summary(views, benchmarks, probes)
    blocks += summary
    blocks += interval_blocks(merged, views, shown)
    blocks += comparison_blocks(merged, views)
    blocks += reproduction_blocks(stored_analysis(merged))
    blocks += data_source_blocks(merged)
    blocks += _protocols(merged)
    blocks += _models(views, merged)
    blocks += _benchmark_sections(benchmarks, views, figures)
    blocks += effective_robustness_blocks(stored_analysis(merged), figures)
    blocks += _probe_sections(probes, views, figures)
    blocks += _timing(merged, views)
    shown = {block.name for block in blocks if isinstance(block, FigureBlock)}
    others = [
        FigureBlock(name, figure.path, figure.caption)
        for name, figure in figures.items()
        if name not in shown
    ]
    if others:
        blocks += [Heading(2, "Other figures"), *others]
    return blocks


# ---------------------------------------------------------------------------------------------------------------
# Rendering


def _md_cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render_markdown(results: Sequence[Mapping[str, Any]], figures: Mapping[str, FigureFile]) -> str:
    """report.md: GitHub-flavoured Markdown, figures linked by their relative paths."""
    lines: list[str] = []
    for block in build_document(results, figures):
        if isinstance(block, Heading):
            lines += [f"{'#' * block.level} {block.text}", ""]
        elif isinstance(block, Paragraph):
            lines += [block.text, ""]
        elif isinstance(block, Table):
            if block.title:
                lines += [f"**{block.title}**", ""]
            lines.append("| " + " | ".join(_md_cell(h) for h in block.headers) + " |")
            align = "---:" if block.numeric else "---"
            lines.append("|" + "|".join(["---", *[align] * (len(block.headers) - 1)]) + "|")
            lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in block.rows]
            lines.append("")
        else:
            lines += [f"![{block.name}]({block.path})", "", f"*{block.caption}*", ""]
    return "\n".join(lines).rstrip() + "\n"


_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 2em auto; max-width: 1200px;
       padding: 0 1em; color: #222; line-height: 1.45; }
h1 { border-bottom: 2px solid #444; padding-bottom: .2em; }
h2 { border-bottom: 1px solid #ccc; padding-bottom: .15em; margin-top: 1.8em; }
.table-scroll { overflow-x: auto; max-width: 100%; margin: .6em 0 1.2em; }
table { border-collapse: collapse; font-size: 14px; }
caption { caption-side: top; text-align: left; font-weight: 600; padding: .2em 0; }
th, td { border: 1px solid #ccc; padding: 3px 8px; }
th { background: #f0f0f0; }
td { text-align: right; font-variant-numeric: tabular-nums; }
td:first-child, th:first-child, table.text td { text-align: left; }
td { white-space: nowrap; }
table.text td, td.long, th { white-space: normal; min-width: 12em; max-width: 32em; overflow-wrap: anywhere; }
figure { margin: 1em 0 1.6em; }
figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-size: 13px; color: #555; }
"""


#: A numeric table's cells up to this many characters (a number with its interval) stay on one line; longer ones
#: (a list of names) wrap.
_ONE_LINE = 40


def _html_cell(text: str) -> str:
    return (
        f"<td>{html.escape(text)}</td>"
        if len(text) <= _ONE_LINE
        else f'<td class="long">{html.escape(text)}</td>'
    )


def render_html(
    results: Sequence[Mapping[str, Any]], figures: Mapping[str, FigureFile], base_dir: Path
) -> str:
    """report.html: one self-contained page (inline CSS, the PNGs as base64 data URIs; nothing is fetched). Each table
    sits in a box that scrolls sideways (`.table-scroll`, overflow-x: auto): a wide table scrolls instead of widening
    the page; a number with its interval stays on one line, and long cells wrap.

    `base_dir` is the folder the figures' relative paths start from."""
    escape = html.escape
    suites = ordered_union([[str((r.get("suite") or {}).get("name") or "")] for r in results])
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>hf_vitrobust report {escape(', '.join(s for s in suites if s))}</title>",
        f"<style>{_CSS}</style></head><body>",
    ]
    for block in build_document(results, figures):
        if isinstance(block, Heading):
            parts.append(f"<h{block.level}>{escape(block.text)}</h{block.level}>")
        elif isinstance(block, Paragraph):
            parts.append(f"<p>{escape(block.text)}</p>")
        elif isinstance(block, Table):
            parts.append(
                '<div class="table-scroll">' + ("<table>" if block.numeric else '<table class="text">')
            )
            if block.title:
                parts.append(f"<caption>{escape(block.title)}</caption>")
            parts.append(
                "<thead><tr>" + "".join(f"<th>{escape(h)}</th>" for h in block.headers) + "</tr></thead>"
            )
            parts.append("<tbody>")
            for row in block.rows:
                cells = [f"<th>{escape(row[0])}</th>", *(_html_cell(c) for c in row[1:])]
                parts.append("<tr>" + "".join(cells) + "</tr>")
            parts.append("</tbody></table></div>")
        else:
            path = Path(base_dir) / block.path
            if not path.is_file():
                raise FileNotFoundError(f"Figure {block.name!r} is missing: {path}.")
            data = base64.b64encode(path.read_bytes()).decode("ascii")
            parts.append(
                f'<figure><img alt="{escape(block.name)}" src="data:image/png;base64,{data}">'
                f"<figcaption>{escape(block.caption)}</figcaption></figure>"
            )
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def write_report(results: Mapping[str, Any] | Sequence[Mapping[str, Any]], out_dir: Path) -> dict[str, Any]:
    """Write `out_dir/figures/*.png`, `out_dir/report.md` and the self-contained `out_dir/report.html` of analysed
    runs (`analysis.analyze`, `Analysis.store`): the report shows what they hold and computes nothing of its own.

    Returns {"figures": name -> relative path, "markdown": Path, "html": Path}. Schema problems raise ValueError
    before anything is written."""
    merged = merge_results([results] if isinstance(results, Mapping) else results)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    figures = write_figures(merged, out_dir)
    markdown, page = out_dir / "report.md", out_dir / "report.html"
    write_text_atomic(markdown, render_markdown(merged, figures))
    write_text_atomic(page, render_html(merged, figures, out_dir))
    paths = {name: figure.path for name, figure in figures.items()}
    return {"figures": paths, "markdown": markdown, "html": page}


__all__ = [
    "build_document",
    "render_html",
    "render_markdown",
    "write_report",
]
