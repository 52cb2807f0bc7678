# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Numbers from what a run recorded: the results record and its schema, the predictions files, protocols, the
benchmark kinds' scoring and estimators, intervals and paired comparisons, the papers' published numbers beside
ours, and their findings. Nothing here draws or runs a model.

    from hf_vitrobust.analysis import analyze, load_results
    analysis = analyze(load_results(["runs/demo/results.json"]))
"""

from .findings import FINDINGS, Finding, findings_for
from .kinds import BENCHMARK_KINDS, BenchmarkKind
from .published import PublishedNumber, published_numbers
from .published_vs_ours import published_comparisons
from .results import SCHEMA, SCHEMA_VERSION, check_schema, load_results, merge_results, summary_table

__all__ = [
    "BENCHMARK_KINDS",
    "FINDINGS",
    "SCHEMA",
    "SCHEMA_VERSION",
    "BenchmarkKind",
    "Finding",
    "PublishedNumber",
    "check_schema",
    "findings_for",
    "load_results",
    "merge_results",
    "published_comparisons",
    "published_numbers",
    "summary_table",
]
