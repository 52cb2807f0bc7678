# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""`vitrobust train [--model PRESET|SPEC] [--dataset digits|HUB_ID|PATH] [--epochs N] [--sam] ... [--output DIR]`:
one flag per field of `TrainingConfig` (`hf_vitrobust.training`), each with the help its docstring gives the field.
Also runs under `accelerate launch -m hf_vitrobust train ...`."""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import re
import typing

from .common import CLIError, check_launcher_precision

#: Flags named otherwise than their field: the folder a command writes is `--output` in every command.
_FLAG_NAMES = {"output_dir": "--output"}


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    from ..training import TrainingConfig

    train = subparsers.add_parser(
        "train",
        help="train AlterNet (or any transformers / timm classifier) and write a checkpoint folder",
        description=(
            "Train a model with Park & Kim's recipe options (AdamW, warmup + cosine, RandAugment, mixup/cutmix, label "
            "smoothing, stochastic depth, gradient clipping, SAM) and write a transformers checkpoint folder with its "
            "model card. With no arguments: a tiny AlterNet on scikit-learn's digits, offline, in about a minute. "
            "Runs distributed under `accelerate launch -m hf_vitrobust train ...`."
        ),
    )
    _add_config_arguments(train, TrainingConfig)
    train.add_argument(
        "--paper-recipe",
        action="store_true",
        help="start from Park & Kim's CIFAR recipe (300 epochs, AdamW 1.25e-4, RandAugment, mixup/cutmix, label "
        "smoothing, random erasing, stochastic depth, clipping); the flags given override it",
    )
    train.add_argument("--quiet", action="store_true", help="no per-epoch log")
    train.set_defaults(handler=run)


def _add_config_arguments(parser: argparse.ArgumentParser, config_class: type) -> None:
    """One --flag per field of a config dataclass (as transformers' HfArgumentParser): bools become on/off
    switches, None defaults take the type of the annotation; dict fields are Python-API only."""
    hints = typing.get_type_hints(config_class)
    helps = field_helps(config_class)
    for item in dataclasses.fields(config_class):
        hint = hints[item.name]
        flag = _FLAG_NAMES.get(item.name, "--" + item.name.replace("_", "-"))
        default = item.default if item.default is not dataclasses.MISSING else None
        text = helps.get(item.name, "").replace("%", "%%")
        # Only the flags a user gives reach the config (SUPPRESS), so that a preset such as --paper-recipe keeps
        # its own values for the others.
        if hint is bool:
            parser.add_argument(
                flag,
                dest=item.name,
                action=argparse.BooleanOptionalAction,
                default=argparse.SUPPRESS,
                help=f"{text} (default: {default})",
            )
            continue
        if typing.get_origin(hint) in (dict, list, tuple):
            continue
        kinds = [a for a in typing.get_args(hint) if a is not type(None)] or [hint]
        kind = next((k for k in (int, float, str) if k in kinds), None)
        if kind is None:
            continue
        parser.add_argument(
            flag,
            dest=item.name,
            type=kind,
            default=argparse.SUPPRESS,
            metavar=flag[2:].replace("-", "_").upper(),
            help=f"{text} (default: {default})",
        )


def field_helps(config_class: type) -> dict[str, str]:
    """Each field's description in the "Args:" section of a dataclass's docstring ("a, b: text" describes both),
    so that a field is described once, for the Python API and the command line alike."""
    doc = inspect.getdoc(config_class) or ""
    _, _, section = doc.partition("Args:")
    helps: dict[str, str] = {}
    names: list[str] = []
    for line in section.splitlines():
        entry = re.fullmatch(r" {4}(\w+(?:, \w+)*): (.*)", line)
        if entry is not None:
            names = entry.group(1).split(", ")
            helps.update(dict.fromkeys(names, entry.group(2).strip()))
        elif line.startswith(" " * 8):
            helps.update({name: f"{helps[name]} {line.strip()}" for name in names})
        elif line.strip():
            break
    return helps


def run(args: argparse.Namespace) -> int:
    from ..training import TrainingConfig, train

    names = {f.name for f in dataclasses.fields(TrainingConfig)}
    values = {k: v for k, v in vars(args).items() if k in names}
    try:
        config = (
            TrainingConfig.paper_recipe(**values) if args.paper_recipe else TrainingConfig.from_dict(values)
        )
        check_launcher_precision(config.precision)
        result = train(config, log=None if args.quiet else print)
    except ValueError as err:
        raise CLIError(str(err)) from err
    if not args.quiet:
        print(f"checkpoint: {result.output_dir}")
    return 0
