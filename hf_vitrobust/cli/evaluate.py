# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""`vitrobust evaluate [--model SPEC]... [--suite NAME|FILE] [--data BENCHMARK=SOURCE]... [--protocol ...]...
[--limit N] [--output DIR] [--plan [--json]] [--check-other-protocols] ...`: one run of a suite
(`hf_vitrobust.evaluation`), with results, figures and report; `--plan` prints what each model would be fed
(`evaluation.plan`) and stops.

Also runs under `accelerate launch -m hf_vitrobust evaluate ...` (one process per GPU). The flags map one to one
onto `EvaluationConfig`, which checks them before any work.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

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
    parse_protocols,
    print_plan,
    uncertainty_kwargs,
)

if TYPE_CHECKING:
    from ..evaluation.config import EvaluationConfig


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    from ..constants import DEFAULT_MODEL
    from ..evaluation.config import EvaluationConfig
    from ..evaluation.suite import SUITE_NAMES

    defaults = EvaluationConfig
    evaluate = subparsers.add_parser(
        "evaluate",
        help="evaluate models on a robustness suite (benchmarks and probes), with results and a report",
        description=(
            "Evaluate one or more models on a suite of benchmarks and probes and write DIR/results.json, per-sample "
            "predictions (parquet), figures and report.md/report.html. With no arguments: the offline demo (the "
            "builtin EfficientNet-Lite0 on the bundled photos, ImageNet-C and -P generated on the fly, probes). "
            "Runs distributed under `accelerate launch -m hf_vitrobust evaluate ...`."
        ),
    )
    evaluate.add_argument(
        "--model",
        action="append",
        metavar="SPEC",
        help=f"{MODEL_SPEC_HELP}; repeat for several models (default: the suite's models, else {DEFAULT_MODEL})",
    )
    others = ", ".join(name for name in SUITE_NAMES if name != defaults.suite)
    evaluate.add_argument(
        "--suite",
        default=defaults.suite,
        help=f"{defaults.suite} (default, offline), {others}, or the path of a YAML/JSON suite file",
    )
    add_run_arguments(evaluate, ["--data"])
    evaluate.add_argument(
        "--protocol",
        action="append",
        metavar="BENCHMARK.PART=NAME",
        help="an evaluation protocol choice over the suite's (docs/protocols.md), e.g. "
        "imagenet-c.preprocessing=native-resize, imagenet-a.class_mask=paul-chen-1000, imagenet-c.mce=unnormalized-19, "
        "imagenet-c.release_encoding=none, imagenet-p.release_encoding=h264 (repeatable)",
    )
    add_run_arguments(
        evaluate,
        ["--limit", "--subset", "--batch-size", "--precision", "--compile", "--num-workers", "--num-threads"],
        helps={"--precision": "{}: autocast of the benchmark passes"},
    )
    evaluate.add_argument("--output", default=defaults.output, help="run folder (default: %(default)s)")
    add_run_arguments(evaluate, ["--resume", "--seed", "--device", "--corruption-device"])
    add_uncertainty_arguments(evaluate, "recorded in results.json; `vitrobust report` can recompute them")
    evaluate.add_argument(
        "--no-report", action="store_true", help="write results.json only (no report, figures)"
    )
    add_report_arguments(evaluate)
    add_plan_arguments(
        evaluate,
        "print, per model and benchmark, the resolved protocol (each part and where it came from: default, "
        "suite, pairing, --protocol), the input geometry (resize, crop, interpolation, mean/std), the images and "
        "the source, and per probe the images' benchmark; read from configs only (no weights, no download, no run "
        "folder), and stop",
    )
    add_run_arguments(evaluate, ["--quiet"])
    evaluate.set_defaults(handler=run)


def config_from_args(args: argparse.Namespace) -> EvaluationConfig:
    """The `EvaluationConfig` of `vitrobust evaluate`'s parsed arguments (checked by its `resolve`): shared with
    `vitrobust jobs run -- evaluate ...`, which resolves it before it builds a wheel or submits anything."""
    from ..evaluation.config import EvaluationConfig

    return EvaluationConfig(
        models=args.model or (),
        suite=args.suite,
        data=parse_data(args.data),
        protocols=parse_protocols(args.protocol),
        limit=args.limit,
        subset=args.subset,
        batch_size=args.batch_size,
        precision=args.precision,
        compile=args.compile,
        num_workers=args.num_workers,
        num_threads=args.num_threads,
        output=args.output,
        resume=args.resume,
        seed=args.seed,
        device=args.device,
        progress=not args.quiet,
        report=not args.no_report,
        corruption_device=args.corruption_device,
        check_other_protocols=args.check_other_protocols,
        **uncertainty_kwargs(args),
    )


def run(args: argparse.Namespace) -> int:
    from ..evaluation.config import EvaluationError
    from ..evaluation.runner import evaluate

    check_plan_arguments(args)
    config = config_from_args(args)
    if args.plan:
        from ..evaluation.plan import plan_evaluation

        try:
            plan = plan_evaluation(config)
        except EvaluationError as err:
            raise CLIError(str(err)) from err
        print_plan(plan, args.json)
        return 0
    check_launcher_precision(args.precision)
    try:
        evaluate(config)
    except EvaluationError as err:
        raise CLIError(str(err)) from err
    return 0
