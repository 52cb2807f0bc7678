# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""`vitrobust report DIR [DIR ...] [--output DIR] [--confidence-level ...] [--check-other-protocols]`: report.md and
report.html rebuilt from run folders (several merged side by side), with the intervals, model comparisons and
findings recomputed from the predictions files (`hf_vitrobust.analysis.analyze`) under the settings given."""

from __future__ import annotations

import argparse
from pathlib import Path

from .common import CLIError, add_report_arguments, add_uncertainty_arguments, uncertainty_kwargs


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    report = subparsers.add_parser(
        "report",
        help="rebuild (and merge) reports from existing results",
        description="Rebuild report.md and report.html from one or more run folders; several runs are merged side "
        "by side.",
    )
    report.add_argument("dirs", nargs="+", metavar="DIR", help="run folders (or results.json files)")
    report.add_argument("--output", help="where to write the report (default: the first DIR)")
    add_report_arguments(report)
    add_uncertainty_arguments(
        report, "default: each run's own settings; recomputed from the predictions files"
    )
    report.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from ..analysis.analyze import analyze
    from ..analysis.results import load_results, merge_results
    from ..analysis.uncertainty import run_settings
    from ..report.document import write_report

    try:
        merged = merge_results(load_results([Path(d) for d in args.dirs]))
        given = uncertainty_kwargs(args)
        settings = run_settings(merged[0], **given) if given else None
        # Intervals and comparisons come from the predictions files, so they follow the settings given here.
        analyze(merged, settings, check_other_protocols=args.check_other_protocols).store(merged)
    except (ValueError, FileNotFoundError) as err:
        raise CLIError(str(err)) from err
    output = Path(args.output) if args.output else Path(args.dirs[0])
    written = write_report(merged, output)
    print(f"report: {written['markdown']} and {written['html']}")
    return 0
