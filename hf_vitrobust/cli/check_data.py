# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""`vitrobust check-data BENCHMARK [SOURCE] [--rows N] [--split S] [--corruption NAME]... [--severity N]...`: the
first rows of every part of a benchmark source read and checked (`hf_vitrobust.data.check`); exit status 1 on any
mismatch."""

from __future__ import annotations

import argparse

from .common import CLIError


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    from ..constants import SEVERITIES

    check = subparsers.add_parser(
        "check-data",
        help="read the first rows of every part of a benchmark source and report any mismatch",
        description=(
            "Resolve SOURCE for BENCHMARK (default: the benchmark's default source) and read the first rows of each "
            "part (a split, a corruption/severity repository or config, a file, a folder): features, schema, label "
            "mode, the known and the found row count, and the first decoded labels with their class names. Exits "
            "with 1 on any mismatch, before a long run finds it."
        ),
    )
    check.add_argument("benchmark", help="a benchmark name (imagenet-val, imagenet-c, imagenet-a, ...)")
    check.add_argument(
        "source",
        nargs="?",
        help="a Hub id org/name[:config][@revision], a local path or generated:<clean source>",
    )
    check.add_argument("--rows", type=int, default=5, help="rows read per part (default: 5)")
    check.add_argument("--split", help="the split to read (default: the schema's)")
    check.add_argument("--corruption", action="append", help="ImageNet-C/CIFAR-C corruption (repeatable)")
    check.add_argument(
        "--severity", action="append", type=int, help=f"{SEVERITIES[0]}-{SEVERITIES[-1]} (repeatable)"
    )
    check.add_argument("--variant", action="append", help="ImageNet-9 variant or ImageNet-P perturbation")
    check.add_argument(
        "--schema", help="a registered Hub schema name, for a source whose name does not say it"
    )
    check.add_argument("--in-distribution", help="imagenet-o: the in-distribution source ('default': ILSVRC)")
    check.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from ..data.check import check_source

    try:
        result = check_source(
            args.benchmark,
            args.source,
            rows=args.rows,
            split=args.split,
            corruptions=args.corruption,
            severities=args.severity,
            variant=args.variant,
            schema=args.schema,
            in_distribution=args.in_distribution,
        )
    except ValueError as err:
        raise CLIError(str(err)) from err
    print(result.to_text())
    return 0 if result.ok else 1
