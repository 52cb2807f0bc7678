# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The report's part of each benchmark kind: its Summary rows and its section (tables and figures), one function
each, which `analysis.kinds` names in the kind's entry."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ..analysis.headlines import (
    AUPR,
    BG_GAP,
    ECE,
    MCE,
    MEAN_ERROR,
    MEAN_TOP1,
    MFR,
    SEVERITY5_TOP1,
    TOP1,
    headline_name,
)
from ..analysis.protocols import CLASS_MASK_PROTOCOLS
from ..analysis.results import (
    ModelView,
    corruption_top1_by_severity,
    masked_top1_percent,
    ordered_union,
    severity5_top1,
)
from ..constants import ALL_CORRUPTIONS
from ..data import BENCHMARKS
from ..probes.display import MISSING, fmt_count, fmt_number, fmt_percent, number
from .blocks import (
    Block,
    Paragraph,
    Row,
    figure_blocks,
    model_table,
    named_value_table,
    number_at,
    percent_at,
    plain_text,
    read_path,
)
from .figures import FigureFile, benchmark_figure_name

# ---------------------------------------------------------------------------------------------------------------
# Derived numbers (the runner stores most; these fall back to the raw tables when it did not)


#: A Summary row of a benchmark: (label, formatter of its metric dict, the name of the headline whose interval the
#: cell shows: `headline_name`).
SummaryRow = tuple[str, Callable[[Mapping[str, Any]], str], str]


def mean_top1(metrics: Mapping[str, Any]) -> float | None:
    if number(metrics.get("mean_top1")) is not None:
        return float(metrics["mean_top1"])
    cells = [v for table in corruption_top1_by_severity(metrics).values() for v in table.values()]
    return float(np.mean(cells)) if cells else None


def severity5_mean(metrics: Mapping[str, Any]) -> float | None:
    if number(metrics.get("severity5_top1")) is not None:
        return float(metrics["severity5_top1"])
    values = list(severity5_top1(metrics).values())
    return float(np.mean(values)) if values else None


def contrast_s5(metrics: Mapping[str, Any]) -> float | None:
    if number(metrics.get("contrast_s5_top1")) is not None:
        return float(metrics["contrast_s5_top1"])
    return severity5_top1(metrics).get("contrast")


def schema_1_masked_top1(metrics: Mapping[str, Any], field: str = "top1") -> str:
    """ImageNet-A/R top-k of a run that recorded one class mask only (schema 1: the 200-class argmax)."""
    return MISSING if "protocols" in metrics else fmt_percent(masked_top1_percent(metrics, field))


# ---------------------------------------------------------------------------------------------------------------
# Sections


def clean_section(bench: str, views: Sequence[ModelView], figures: Mapping[str, FigureFile]) -> list[Block]:
    """Top-1/top-5 and calibration, one column per model."""
    rows: list[Row] = [
        ("top-1 (%)", percent_at("top1")),
        ("top-5 (%)", percent_at("top5")),
        ("ECE (%)", percent_at("calibration", "ece", scale=100)),
        ("max calibration error (%)", percent_at("calibration", "max_calibration_error", scale=100)),
        ("NLL (nats)", number_at("calibration", "nll")),
        ("Brier score", number_at("calibration", "brier")),
        ("samples", lambda m: fmt_count(m.get("num_samples", read_path("calibration", "num_samples")(m)))),
    ]
    table = model_table(views, lambda v: v.metrics.get(bench), rows, "metric")
    return [table] if table else []


def corruption_section(
    bench: str, views: Sequence[ModelView], figures: Mapping[str, FigureFile]
) -> list[Block]:
    """mCE under both protocols, the papers' means, and the per-corruption and per-severity tables."""

    def data(v: ModelView) -> Mapping[str, Any] | None:
        return v.metrics.get(bench) if v.kinds.get(bench) == "corruption" else None

    # The papers' names go only where their numbers were made: Park & Kim's mean over the cells of the Hendrycks
    # corruptions (ImageNet-C, CIFAR-C), Paul & Chen's severity-5 figures of ImageNet-C (the benchmark normalised by
    # AlexNet); other corruption benchmarks (C-bar, 3DCC) get the plain quantity.
    benchmark = BENCHMARKS.get(bench) if bench in BENCHMARKS else None
    hendrycks = benchmark is not None and tuple(benchmark.corruptions) == tuple(ALL_CORRUPTIONS)
    park_kim = " — Park & Kim" if hendrycks else ""
    paul_chen = " — Paul & Chen Fig. {}" if hendrycks and benchmark.alexnet_baseline else ""
    rows: list[Row] = [
        ("mCE (%, AlexNet-normalised: alexnet-15)", percent_at("mce")),
        (
            "mCE (%, unnormalised mean over every corruption present: unnormalized-19)",
            percent_at("protocols", "unnormalized-19", "mce"),
        ),
        (
            "corruptions absent from unnormalized-19",
            lambda m: (
                ", ".join(read_path("protocols", "unnormalized-19", "absent_corruptions")(m) or []) or MISSING
            ),
        ),
        ("relative mCE (%)", percent_at("relative_mce")),
        ("unnormalised mCE (%)", percent_at("unnormalized_mce")),
        ("mean corruption accuracy, standard corruptions (%)", percent_at("mean_corruption_accuracy")),
        (f"mean top-1 over all cells present (%){park_kim}", lambda m: fmt_percent(mean_top1(m))),
        ("mean error over all cells present (%) — ImageNet-C-bar's overall-avg", percent_at("mean_error")),
        ("severity-5 mean top-1 (%)" + paul_chen.format(2), lambda m: fmt_percent(severity5_mean(m))),
        ("contrast, severity 5, top-1 (%)" + paul_chen.format(3), lambda m: fmt_percent(contrast_s5(m))),
        ("clean error (%)", percent_at("clean_error")),
        ("samples", lambda m: fmt_count(m.get("num_samples"))),
        ("missing cells", lambda m: fmt_count(len(m.get("missing_cells") or []))),
    ]
    blocks: list[Block] = []
    if table := model_table(views, data, rows, "metric"):
        blocks.append(table)
    partial = [v.key for v in views if (data(v) or {}).get("missing_cells")]
    if partial:
        blocks.append(
            Paragraph(
                f"Partial ImageNet-C for {', '.join(partial)}: some standard corruption/severity cells are missing, "
                "so mCE and the means cover only the cells present and are not comparable to published values."
            )
        )

    def ce(v: ModelView) -> Mapping[str, Any] | None:
        metrics = data(v)
        if not metrics:
            return None
        extra = {f"{name} (extra)": value for name, value in (metrics.get("extra_ce") or {}).items()}
        return {**(metrics.get("ce") or {}), **extra}

    for values, first, title in (
        (ce, "corruption", "Corruption error CE per corruption (%)"),
        (
            lambda v: (data(v) or {}).get("error_by_corruption"),
            "corruption",
            "Mean error per corruption over its severities present (%)",
        ),
        (lambda v: (data(v) or {}).get("relative_ce"), "corruption", "Relative CE per corruption (%)"),
        (
            lambda v: _in_table_order(severity5_top1(data(v) or {})),
            "corruption",
            "Top-1 at severity 5 per corruption (%)",
        ),
        (
            lambda v: _by_severity(data(v) or {}),
            "severity",
            "Mean top-1 per severity over the corruptions present (%)",
        ),
        (
            lambda v: (data(v) or {}).get("top1_by_corruption"),
            "corruption",
            "Mean top-1 per corruption over its severities present (%)",
        ),
        (lambda v: (data(v) or {}).get("top1_by_group"), "group", "Mean top-1 per corruption group (%)"),
    ):
        if table := named_value_table(views, values, first, fmt_percent, title):
            blocks.append(table)
    blocks += figure_blocks(benchmark_figure_name(bench, "ce"), figures)
    blocks += figure_blocks(benchmark_figure_name(bench, "severity"), figures)
    return blocks


def _in_table_order(values: Mapping[str, Any]) -> dict[str, Any]:
    """Corruptions in the ImageNet-C table's order (noise, blur, weather, digital, then the extra ones)."""
    order = {name: i for i, name in enumerate(ALL_CORRUPTIONS)}
    return dict(sorted(values.items(), key=lambda item: order.get(item[0], len(order))))


def _by_severity(metrics: Mapping[str, Any]) -> dict[str, float]:
    """Mean top-1 (%) over the corruptions present, per severity."""
    table = corruption_top1_by_severity(metrics)
    levels = sorted({level for cells in table.values() for level in cells})
    return {str(level): float(np.mean([c[level] for c in table.values() if level in c])) for level in levels}


def perturbation_section(
    bench: str, views: Sequence[ModelView], figures: Mapping[str, FigureFile]
) -> list[Block]:
    """Flip rates and top-5 distances, overall and per perturbation."""

    def data(v: ModelView) -> Mapping[str, Any] | None:
        return v.metrics.get(bench) if v.kinds.get(bench) == "perturbation" else None

    rows: list[Row] = [
        ("difficulty", lambda m: fmt_count(m.get("difficulty"))),
        ("mFR, AlexNet-normalised (%)", percent_at("mfr")),
        ("mT5D, AlexNet-normalised (%)", percent_at("mt5d")),
        ("mFR, unnormalised (mean flip probability, %)", percent_at("mfr_unnormalized", scale=100)),
        ("mT5D, unnormalised (top-5 distance, ranks)", number_at("mt5d_unnormalized")),
        ("validation mFR, unnormalised (%)", percent_at("validation_mfr_unnormalized", scale=100)),
        ("validation mT5D, unnormalised (ranks)", number_at("validation_mt5d_unnormalized")),
        ("sequences", lambda m: fmt_count(sum((m.get("num_sequences") or {}).values()) or None)),
        ("missing test perturbations", lambda m: ", ".join(m.get("missing_perturbations") or []) or "none"),
    ]
    blocks: list[Block] = []
    if table := model_table(views, data, rows, "metric"):
        blocks.append(table)
    for field, cell, title in (
        ("flip_probability", lambda x: fmt_percent(x, 100), "Flip probability per perturbation (%)"),
        ("top5_distance", fmt_number, "Top-5 distance per perturbation (ranks)"),
    ):
        if table := named_value_table(
            views, lambda v, f=field: (data(v) or {}).get(f), "perturbation", cell, title
        ):
            blocks.append(table)
    blocks += figure_blocks(benchmark_figure_name(bench, "flip"), figures)
    return blocks


def _metric_table(bench: str, views: Sequence[ModelView], rows: Sequence[Row]) -> list[Block]:
    table = model_table(views, lambda v: v.metrics.get(bench), rows, "metric")
    return [table] if table else []


def masked_section(bench: str, views: Sequence[ModelView], figures: Mapping[str, FigureFile]) -> list[Block]:
    """ImageNet-A/R: top-1/top-5 under both class masks."""
    rows: list[Row] = [
        (f"{part} (%, {mask}: {meaning})", percent_at("protocols", mask, part))
        for mask, meaning in CLASS_MASK_PROTOCOLS.items()
        for part in ("top1", "top5")
    ]
    rows += [
        ("headline class mask", lambda m: str(m.get("class_mask") or MISSING)),
        ("top-1 (%, within the set's classes)", schema_1_masked_top1),
        ("top-5 (%, within the set's classes)", lambda m: schema_1_masked_top1(m, "top5")),
        ("classes", lambda m: fmt_count(m.get("num_classes"))),
        ("samples", lambda m: fmt_count(m.get("num_samples"))),
    ]
    return _metric_table(bench, views, rows)


def ood_section(bench: str, views: Sequence[ModelView], figures: Mapping[str, FigureFile]) -> list[Block]:
    """ImageNet-O: AUPR, AUROC, FPR at 95 % TPR and the two halves' sizes."""
    rows: list[Row] = [
        ("AUPR (%)", percent_at("aupr", scale=100)),
        ("AUROC (%)", percent_at("auroc", scale=100)),
        ("FPR at 95 % TPR (%)", percent_at("fpr_at_95_tpr", scale=100)),
        ("OOD samples", lambda m: fmt_count(m.get("num_ood"))),
        ("in-distribution samples", lambda m: fmt_count(m.get("num_in_distribution"))),
    ]
    return _metric_table(bench, views, rows)


def background_section(
    bench: str, views: Sequence[ModelView], figures: Mapping[str, FigureFile]
) -> list[Block]:
    """ImageNet-9: top-1 per variant and BG-gap."""
    variants = ordered_union([list((v.metrics.get(bench) or {}).get("accuracy") or {}) for v in views])
    rows: list[Row] = [(f"{name} top-1 (%)", percent_at("accuracy", name, scale=100)) for name in variants]
    rows.append(("BG-gap = mixed_same − mixed_rand (pp)", percent_at("bg_gap", scale=100)))
    rows.append(("samples", lambda m: fmt_count(sum((m.get("num_samples") or {}).values()) or None)))
    return _metric_table(bench, views, rows)


def other_section(bench: str, views: Sequence[ModelView], figures: Mapping[str, FigureFile]) -> list[Block]:
    """A metric dict of no known kind: every key, as it is."""
    keys = ordered_union([list(v.metrics.get(bench) or {}) for v in views])
    return _metric_table(bench, views, [(key, lambda m, key=key: plain_text(m.get(key))) for key in keys])


# ---------------------------------------------------------------------------------------------------------------
# Summary rows: (label, formatter of the benchmark's metric dict, the headline whose interval the cell shows)


def clean_rows(bench: str) -> list[SummaryRow]:
    return [
        (f"{bench} top-1 (%)", percent_at("top1"), headline_name(bench, TOP1)),
        (f"{bench} ECE (%)", percent_at("calibration", "ece", scale=100), headline_name(bench, ECE)),
    ]


def corruption_rows(bench: str) -> list[SummaryRow]:
    return [
        (
            f"{bench} mCE (%, lower is better; alexnet-15)",
            percent_at("mce"),
            headline_name(bench, MCE, "alexnet-15"),
        ),
        (
            f"{bench} mCE (%, unnormalized-19)",
            percent_at("protocols", "unnormalized-19", "mce"),
            headline_name(bench, MCE, "unnormalized-19"),
        ),
        (f"{bench} mean error (%)", percent_at("mean_error"), headline_name(bench, MEAN_ERROR)),
        (f"{bench} mean top-1 (%)", lambda m: fmt_percent(mean_top1(m)), headline_name(bench, MEAN_TOP1)),
        (
            f"{bench} severity-5 mean top-1 (%)",
            lambda m: fmt_percent(severity5_mean(m)),
            headline_name(bench, SEVERITY5_TOP1),
        ),
    ]


def masked_rows(bench: str) -> list[SummaryRow]:
    rows: list[SummaryRow] = [
        (
            f"{bench} top-1 (%, {mask})",
            percent_at("protocols", mask, "top1"),
            headline_name(bench, TOP1, mask),
        )
        for mask in CLASS_MASK_PROTOCOLS
    ]
    return [*rows, (f"{bench} top-1 (%)", schema_1_masked_top1, headline_name(bench, TOP1))]


def ood_rows(bench: str) -> list[SummaryRow]:
    return [(f"{bench} AUPR (%)", percent_at("aupr", scale=100), headline_name(bench, AUPR))]


def perturbation_rows(bench: str) -> list[SummaryRow]:
    return [
        (
            f"{bench} mFR, unnormalised (%)",
            percent_at("mfr_unnormalized", scale=100),
            headline_name(bench, MFR),
        )
    ]


def background_rows(bench: str) -> list[SummaryRow]:
    return [(f"{bench} BG-gap (pp)", percent_at("bg_gap", scale=100), headline_name(bench, BG_GAP))]


def no_rows(bench: str) -> list[SummaryRow]:
    return []


__all__ = [
    "SummaryRow",
    "background_rows",
    "background_section",
    "clean_rows",
    "clean_section",
    "corruption_rows",
    "corruption_section",
    "masked_rows",
    "masked_section",
    "no_rows",
    "ood_rows",
    "ood_section",
    "other_section",
    "perturbation_rows",
    "perturbation_section",
]
