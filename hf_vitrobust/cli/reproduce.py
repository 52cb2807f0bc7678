# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""`vitrobust reproduce PAPER [--pair VIT_KEY/CNN_KEY] [--vit SPEC] [--cnn SPEC] [--data B=S]... [--offline |
--stand-in SPEC] [--plan [--json]] [--check-other-protocols] [--output DIR] [--limit N] ...`: a paper's suite run on one of its model pairs
(`hf_vitrobust.evaluation.reproduce`), the published numbers beside ours, and the paper's findings checked on the
pair. The flags of a run are evaluate's (`common.add_run_arguments`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from .common import (
    MODEL_SPEC_HELP,
    CLIError,
    add_plan_arguments,
    add_report_arguments,
    add_run_arguments,
    add_uncertainty_arguments,
    check_launcher_precision,
    check_plan_arguments,
    parse_data,
    print_plan,
    uncertainty_kwargs,
)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    from ..analysis.published import PAPERS
    from ..analysis.published_vs_ours import PAPER_SUITES
    from ..evaluation.reproduce import DEFAULT_PAIRS

    suites = "; ".join(f"{paper}: `{suite}`" for paper, suite in PAPER_SUITES.items())
    default_pairs = ", ".join(f"{pair} for {paper}" for paper, pair in DEFAULT_PAIRS.items())
    reproduce = subparsers.add_parser(
        "reproduce",
        help="run a paper's suite on one of its model pairs and put the published numbers beside ours",
        description=(
            f"Run the paper's suite ({suites}) on a model pair with the checkpoint and protocol of each published "
            "number (hf_vitrobust/assets/published/published.csv), one run per checkpoint under DIR/legs/, and write "
            "DIR/report.md, report.html and reproduction.json: every published number beside ours with its interval "
            "and a verdict (equal, within k images, outside by k images, within or outside the sampling interval of a "
            "random sample, approximate where a protocol part is unnamed, not comparable and why), and the paper's findings "
            "checked on the pair with paired intervals."
        ),
    )
    reproduce.add_argument("paper", choices=tuple(PAPERS), help="whose published numbers")
    reproduce.add_argument(
        "--pair",
        help="VIT_KEY/CNN_KEY: a named pair of the paper's suite (--list-pairs), or any two model keys of the "
        f"published table with --vit and --cnn (default: {default_pairs})",
    )
    reproduce.add_argument(
        "--vit", metavar="SPEC", help=f"the ViT's spec, over the pair's: {MODEL_SPEC_HELP}"
    )
    reproduce.add_argument("--cnn", metavar="SPEC", help="the CNN's spec, over the pair's (the same forms)")
    reproduce.add_argument(
        "--stand-in",
        metavar="SPEC",
        help="run this model in place of every checkpoint (every published number is then not comparable)",
    )
    reproduce.add_argument(
        "--offline",
        action="store_true",
        help="the offline default: the builtin model stands in for both models, on the bundled photos (ImageNet-C/-P "
        "generated from them); benchmarks without an offline copy are left out and say so",
    )
    add_run_arguments(
        reproduce,
        ["--data"],
        helps={"--data": "where a benchmark's data comes from, as for evaluate (repeatable)"},
    )
    add_plan_arguments(reproduce, "print the runs it would make, and stop")
    reproduce.add_argument(
        "--list-pairs", action="store_true", help="print the paper's named pairs, and stop"
    )
    reproduce.add_argument("--output", default="vitrobust-reproduction", help="folder (default: %(default)s)")
    add_run_arguments(
        reproduce,
        [
            "--limit",
            "--subset",
            "--batch-size",
            "--precision",
            "--num-workers",
            "--num-threads",
            "--device",
            "--seed",
            "--resume",
        ],
        helps={
            "--limit": "{} (a dry run)",
            "--subset": "which images --limit keeps",
            "--num-workers": "DataLoader workers (default: %(default)s)",
            "--resume": "continue each run where it stopped",
        },
    )
    add_report_arguments(reproduce)
    add_uncertainty_arguments(reproduce, "the intervals of ours, of the comparisons and of the findings")
    add_run_arguments(reproduce, ["--quiet"])
    reproduce.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from ..evaluation.config import EvaluationError
    from ..evaluation.reproduce import pair_names, plan_reproduction, run_reproduction
    from ..report.reproduction_sections import verdict_sentence

    check_plan_arguments(args)
    if args.list_pairs:
        print("\n".join(pair_names(args.paper)))
        return 0
    try:
        plan = plan_reproduction(
            args.paper,
            args.pair,
            vit=args.vit,
            cnn=args.cnn,
            stand_in=args.stand_in,
            data=parse_data(args.data),
            offline=args.offline,
        )
    except ValueError as err:
        raise CLIError(str(err)) from err
    if args.plan:
        print_plan(plan, args.json)
        return 0
    check_launcher_precision(args.precision)
    options = {
        "limit": args.limit,
        "subset": args.subset,
        "batch_size": args.batch_size,
        "precision": args.precision,
        "num_workers": args.num_workers,
        "num_threads": args.num_threads,
        "resume": args.resume,
        "seed": args.seed,
        "device": args.device,
        "progress": not args.quiet,
        **uncertainty_kwargs(args),
    }
    try:
        record = run_reproduction(
            plan, args.output, check_other_protocols=args.check_other_protocols, **options
        )
    except (EvaluationError, ValueError) as err:
        raise CLIError(str(err)) from err
    if not args.quiet:
        print(verdict_sentence(record["published"]))
        for group in record["findings"]:
            verdicts = ", ".join(f"{c['claim']}: {c['verdict']}" for c in group["checks"])
            print(f"findings on {group['pair']}: {verdicts}")
        print(f"report: {Path(args.output) / 'report.md'} and {Path(args.output) / 'reproduction.json'}")
    return 0
