# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The `vitrobust` command line: one module per command, each with its `add_parser` and its handler `run`.

    vitrobust classify IMAGE...            top-k classes of images                     (classify.py)
    vitrobust corrupt SOURCE OUTPUT        an ImageNet-C style corrupted copy          (corrupt.py)
    vitrobust evaluate [--suite ...]       one run of a suite, results and report      (evaluate.py)
    vitrobust report DIR [DIR ...]         reports rebuilt (and merged) from runs      (report.py)
    vitrobust reproduce PAPER              a paper's numbers beside ours               (reproduce.py)
    vitrobust check-data BENCHMARK [SRC]   the first rows of a benchmark source        (check_data.py)
    vitrobust train [...]                  a checkpoint trained with Park & Kim's recipe (train.py)
    vitrobust push [...] REPO              a checkpoint, results, metric or Space to the Hub (push.py)
    vitrobust jobs run [...] COMMAND ...   evaluate or reproduce as a Hugging Face Job   (jobs.py)

Flags shared by several commands (the flags of a run, the interval settings) are declared once, in `common.py`,
with their choices taken from the package's registries. A command parses and prints; the work is the library's.
`evaluate` and `train` also run under `accelerate launch -m hf_vitrobust ...` (one process per GPU).

`--model` takes every spec `load_classifier` accepts; the default is the offline builtin
EfficientNet-Lite0 with ImageNet-1k weights.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from . import check_data, classify, corrupt, evaluate, jobs, push, report, reproduce, train
from .common import CLIError

#: The commands, in the order `vitrobust --help` lists them.
COMMANDS = (classify, corrupt, evaluate, report, reproduce, check_data, train, push, jobs)

__all__ = ["COMMANDS", "CLIError", "build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    from .. import __version__

    parser = argparse.ArgumentParser(
        prog="vitrobust", description="Robustness toolkit for image classifiers (transformers, timm)."
    )
    parser.add_argument(
        "--version", action="version", version=f"%(prog)s {__version__}", help="print the version and exit"
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command in COMMANDS:
        command.add_parser(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `vitrobust` and `python -m hf_vitrobust`; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.handler(args)
    except CLIError as err:
        parser.exit(2, f"{parser.prog} {args.command}: error: {err}\n")
