# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The evaluation runner: models x benchmarks x probes of a suite, on one CPU or many GPUs, with results, reports
and resume.

    from hf_vitrobust.evaluation import EvaluationConfig, evaluate
    results = evaluate(EvaluationConfig(models=["builtin:efficientnet_lite0"], suite="demo", output="runs/demo"))

The same runs from the command line as `vitrobust evaluate` and `accelerate launch -m hf_vitrobust evaluate`.
The papers' published numbers beside a run's, and `vitrobust reproduce`:

    from hf_vitrobust.evaluation import plan_reproduction, run_reproduction
    plan = plan_reproduction("paul-chen", "vit-l16/bit-m-r101x3", data={"imagenet-val": "/data/imagenet/val"})
    record = run_reproduction(plan, "runs/vit-l16-bit")   # record["published"], record["findings"]
"""

from .benchmark_kinds import BENCHMARK_KINDS, BenchmarkKind
from .findings import FINDINGS, Finding, findings_for
from .probe_tasks import PROBE_TASKS, ProbeNotApplicable, ProbeTask, get_probe_task, select_images
from .published import PublishedNumber, published_numbers
from .report import write_report
from .reproduce import plan_reproduction, run_reproduction
from .reproduction import published_comparisons
from .results import SCHEMA, SCHEMA_VERSION, check_schema, load_results, merge_results
from .runner import DEFAULT_MODEL, EvaluationConfig, EvaluationError, Runner, evaluate, summary_table
from .suite import SUITE_NAMES, BenchmarkSpec, Suite, SuiteProbe, load_suite, suite_path

__all__ = [
    "BENCHMARK_KINDS",
    "DEFAULT_MODEL",
    "FINDINGS",
    "PROBE_TASKS",
    "SCHEMA",
    "SCHEMA_VERSION",
    "SUITE_NAMES",
    "BenchmarkKind",
    "BenchmarkSpec",
    "EvaluationConfig",
    "EvaluationError",
    "Finding",
    "ProbeNotApplicable",
    "ProbeTask",
    "PublishedNumber",
    "Runner",
    "Suite",
    "SuiteProbe",
    "check_schema",
    "evaluate",
    "findings_for",
    "get_probe_task",
    "load_results",
    "load_suite",
    "merge_results",
    "plan_reproduction",
    "published_comparisons",
    "published_numbers",
    "run_reproduction",
    "select_images",
    "suite_path",
    "summary_table",
    "write_report",
]
