# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""What several commands share: the user-facing error, the parsers of repeated options, the flags of a run, of its
findings (`--check-other-protocols`) and of a plan (`--plan`, `--json`).

`evaluate` and `reproduce` both run suites, so the flags of a run (`--limit`, `--subset`, `--precision`, ...) and of
its intervals (`--confidence-level`, ...) are declared once here, with their defaults and choices taken from
`EvaluationConfig`, `UncertaintySettings` and the registries; a command picks the flags it takes and may word a
help text for itself.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

#: The precisions `accelerate launch --mixed_precision X` (or an accelerate config) can ask a run for, by putting X in
#: the environment as ACCELERATE_MIXED_PRECISION; "no", the launcher's default, leaves the precision to the run.
LAUNCHER_PRECISIONS = ("bf16", "fp16")
#: What --model (and --vit/--cnn) accept: every form `models.load_classifier` reads.
MODEL_SPEC_HELP = (
    "a transformers folder or Hub id, timm/<name> (or timm/local-dir:<folder>, timm/hf-hub:<org/name>), "
    "builtin:<name>, or one of Park & Kim's CIFAR-100 checkpoints (its release URL, a file named as released, "
    "park-kim:<resnet-50|vit-ti|pit-ti|swin-ti>[:<path>])"
)


class CLIError(Exception):
    """A user-facing error: printed as `vitrobust COMMAND: error: ...` with exit status 2."""


def check_launcher_precision(precision: str) -> None:
    """Refuse, before any work, a run whose launcher asked for another precision than the run's `--precision`.

    `accelerate launch --mixed_precision bf16` (or an accelerate config saying so) sets ACCELERATE_MIXED_PRECISION,
    which a run would otherwise silently ignore. The run's precision is its own `--precision`, fp32 unless given,
    as the papers' numbers are: a launcher's request is never applied behind the run's back, and a disagreement
    stops it with the two ways out. When both agree (`--mixed_precision bf16 ... --precision bf16`) the run
    autocasts and records bf16 in its settings."""
    asked = os.environ.get("ACCELERATE_MIXED_PRECISION", "").strip().lower()
    if asked in ("", "no", precision):
        return
    if asked not in LAUNCHER_PRECISIONS:
        raise CLIError(
            f"accelerate launch --mixed_precision {asked} is not supported: launch with --mixed_precision no, or "
            "bf16 or fp16 together with the same --precision"
        )
    raise CLIError(
        f"accelerate launch --mixed_precision {asked} asks for {asked}, but this run's --precision is {precision} "
        f"(fp32 unless given, as the papers' numbers): pass --precision {asked} to run in {asked} (recorded in the "
        "run's settings), or launch with --mixed_precision no"
    )


def alternatives(names: Sequence[str], default: str) -> str:
    """ "fp32 (default), bf16 or fp16": the names of a registry in a help text, the default first."""
    rest = [name for name in names if name != default]
    text = f"{default} (default)"
    return f"{text}, {', '.join(rest[:-1])} or {rest[-1]}" if len(rest) > 1 else f"{text} or {rest[0]}"


def _run_flags() -> dict[str, dict[str, Any]]:
    """The flags of a run, shared by `evaluate` and `reproduce`, each declared once."""
    from ..evaluation.config import CORRUPTION_DEVICES, PRECISIONS, EvaluationConfig
    from ..evaluation.suite import SUBSETS

    defaults = EvaluationConfig
    return {
        "--data": dict(
            action="append",
            metavar="BENCHMARK=SOURCE",
            help="where a benchmark's data comes from: a Hub id, a local folder or parquet, generated:<clean "
            "source> (repeatable)",
        ),
        "--limit": dict(type=int, help="at most this many images per benchmark"),
        "--subset": dict(
            choices=SUBSETS,
            help="which images --limit keeps (default: the suite's, else first). first: the first N of the stream; "
            "random: a seeded uniform random subset (the run's --seed), reads the whole stream without decoding; "
            "class-balanced: as many classes as the limit allows (the run's --seed), from the labels of every row",
        ),
        "--batch-size": dict(type=int, help="images per forward pass (default: the suite's)"),
        "--precision": dict(
            default=defaults.precision, help=alternatives(tuple(PRECISIONS), defaults.precision)
        ),
        "--compile": dict(action="store_true", help="torch.compile the model for the benchmarks"),
        "--num-workers": dict(
            type=int,
            default=defaults.num_workers,
            help="DataLoader workers decoding and corrupting (default: %(default)s)",
        ),
        "--num-threads": dict(
            type=int,
            help="torch's CPU threads during the run (default: torch's setting; on a loaded machine fewer can be "
            "faster)",
        ),
        "--resume": dict(action="store_true", help="continue the run in --output where it stopped"),
        "--seed": dict(type=int, help="seed of every random choice (default: the suite's)"),
        "--device": dict(help="torch device of a single process (default: cuda if available)"),
        "--corruption-device": dict(
            default=defaults.corruption_device,
            choices=CORRUPTION_DEVICES,
            help="where generated ImageNet-C/-P images are corrupted: the DataLoader workers, the model's device, "
            "or auto (the device on a GPU, else the workers)",
        ),
        "--quiet": dict(action="store_true", help="no progress bars or summary"),
    }


def add_run_arguments(
    parser: argparse.ArgumentParser, flags: Sequence[str], helps: Mapping[str, str] | None = None
) -> None:
    """Add these flags of a run to `parser`, in this order. `helps` words a flag's help for the command: "{}" in
    it stands for the shared help text."""
    declared = _run_flags()
    for flag in flags:
        options = dict(declared[flag])
        if helps and flag in helps:
            options["help"] = helps[flag].format(options["help"])
        parser.add_argument(flag, **options)


def add_uncertainty_arguments(parser: argparse.ArgumentParser, defaults: str) -> None:
    """The interval settings (`UncertaintySettings`), in their own group described by `defaults`."""
    from ..analysis.uncertainty import UncertaintySettings
    from ..metrics.intervals import PROPORTION_METHODS

    settings = UncertaintySettings
    group = parser.add_argument_group(
        "intervals", f"confidence intervals of the headline numbers ({defaults})"
    )
    group.add_argument(
        "--confidence-level",
        type=float,
        help=f"the intervals' level, in (0, 1) ({settings.confidence_level})",
    )
    group.add_argument("--num-resamples", type=int, help=f"bootstrap resamples ({settings.num_resamples})")
    group.add_argument(
        "--interval-method",
        choices=PROPORTION_METHODS,
        help=f"the interval of accuracies ({settings.proportion_method})",
    )
    group.add_argument(
        "--target-half-width",
        type=float,
        help="the half-width, in the headline's units, that 'samples needed' is computed for "
        f"({settings.target_half_width})",
    )


def add_report_arguments(parser: argparse.ArgumentParser) -> None:
    """`--check-other-protocols`, for every command that writes a report with the papers' findings (`evaluate`,
    `reproduce`, `report`): the same option, wording and meaning everywhere."""
    parser.add_argument(
        "--check-other-protocols",
        action="store_true",
        help="check the papers' findings also on pairs whose runs differ from the paper's protocol (e.g. BiT-M not "
        "squashed to 224); their verdicts say 'under another protocol' (default: such a finding is not checked)",
    )


def add_plan_arguments(parser: argparse.ArgumentParser, plan_help: str) -> None:
    """`--plan` (what the command would run, and stop) and `--json` (the plan as JSON), for `evaluate` and
    `reproduce` alike."""
    parser.add_argument("--plan", action="store_true", help=plan_help)
    parser.add_argument("--json", action="store_true", help="with --plan: print the plan as JSON")


def check_plan_arguments(args: argparse.Namespace) -> None:
    """`--json` formats a plan: refuse it without `--plan` rather than ignore it."""
    if args.json and not args.plan:
        raise CLIError("--json prints the plan: give it with --plan")


def print_plan(plan: Any, as_json: bool) -> None:
    """Print a plan (`to_dict` and `describe`): as JSON or in words."""
    print(json.dumps(plan.to_dict(), indent=1) if as_json else plan.describe())


def uncertainty_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """The interval options given on the command line (those left out keep their defaults)."""
    given = {
        "confidence_level": args.confidence_level,
        "num_resamples": args.num_resamples,
        "interval_method": args.interval_method,
        "target_half_width": args.target_half_width,
    }
    return {key: value for key, value in given.items() if value is not None}


def parse_data(values: Sequence[str] | None) -> dict[str, str]:
    """`--data BENCHMARK=SOURCE`, repeated: benchmark name -> source."""
    data: dict[str, str] = {}
    for value in values or ():
        name, sep, source = value.partition("=")
        if not sep or not name.strip() or not source.strip():
            raise CLIError(
                f"--data takes BENCHMARK=SOURCE (e.g. imagenet-a=barkermrl/imagenet-a), got {value!r}"
            )
        if name.strip() in data:
            raise CLIError(f"--data gives {name.strip()!r} twice")
        data[name.strip()] = source.strip()
    return data


def parse_protocols(values: Sequence[str] | None) -> dict[str, dict[str, str]]:
    """`--protocol BENCHMARK.PART=NAME`, repeated: benchmark name -> {part: protocol name}."""
    from ..analysis.protocols import parse_protocol_option

    protocols: dict[str, dict[str, str]] = {}
    for value in values or ():
        try:
            benchmark, part, name = parse_protocol_option(value)
        except ValueError as err:
            raise CLIError(str(err)) from err
        if part in protocols.get(benchmark, {}):
            raise CLIError(f"--protocol gives {benchmark}.{part} twice")
        protocols.setdefault(benchmark, {})[part] = name
    return protocols
