# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""`vitrobust jobs run --flavor FLAVOR [--push REPO] [--predictions DATASET_REPO] [--dry-run] [...] -- COMMAND
ARGS...`: `vitrobust evaluate|reproduce ARGS...` run as a Hugging Face Job (`hf_vitrobust.hub.jobs`), which pushes
its results when it ends.

The inner command is parsed by its own parser first, so a bad flag stops here, before a wheel is built or anything is
uploaded. A dry run prints the exact job spec as JSON (the token masked) and submits nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .common import CLIError


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    from ..hub.jobs import DEFAULT_TIMEOUT, RUN_COMMANDS

    jobs = subparsers.add_parser(
        "jobs",
        help="run evaluate or reproduce as a Hugging Face Job that pushes its results (docs/hf_jobs.md)",
        description="Run a vitrobust command on Hugging Face Jobs hardware, billed to you by the minute.",
    )
    actions = jobs.add_subparsers(dest="jobs_action", metavar="ACTION", required=True)
    run_parser = actions.add_parser(
        "run",
        help="submit one job (or print its spec with --dry-run)",
        description=(
            "Submit `vitrobust evaluate|reproduce ARGS...` as a uv job on FLAVOR. hf_vitrobust is installed from a "
            "wheel of this checkout, uploaded to wheels/<hash>/ of the pushed repo and mounted in the job (or from "
            "--package). When the run succeeds, the job runs `vitrobust push` of its --output: the model repo "
            "(results, card, .eval_results/) and/or the predictions dataset; a failed run pushes nothing and the "
            "job fails. The token (HF_TOKEN or the stored login) becomes the job's HF_TOKEN secret."
        ),
    )
    run_parser.add_argument(
        "--flavor",
        required=True,
        help="the hardware, e.g. a10g-small or h200 (`hf jobs hardware` lists them)",
    )
    run_parser.add_argument("--push", metavar="REPO", help="the model repo the job pushes its results to")
    run_parser.add_argument(
        "--predictions",
        metavar="DATASET_REPO",
        help="the dataset repo the job pushes per-sample predictions to",
    )
    run_parser.add_argument(
        "--timeout",
        default=DEFAULT_TIMEOUT,
        help="the job's time limit: seconds, or 90m, 2h, 1d (default: %(default)s)",
    )
    source = run_parser.add_mutually_exclusive_group()
    source.add_argument(
        "--wheel", help="an hf_vitrobust wheel to upload instead of building one from this checkout"
    )
    source.add_argument(
        "--package",
        help="install hf_vitrobust from this requirement instead (e.g. 'hf_vitrobust @ git+https://...'); "
        "nothing is uploaded",
    )
    run_parser.add_argument(
        "--with",
        dest="extra_dependencies",
        action="append",
        metavar="REQUIREMENT",
        help="one more requirement for the job's environment, resolved with hf_vitrobust's (repeatable), e.g. "
        "'torch==2.9.*' for a torch whose CUDA the flavor's driver runs",
    )
    run_parser.add_argument("--private", action="store_true", help="create the pushed repos private")
    run_parser.add_argument(
        "--namespace", help="the user or org that runs (and pays for) the job (default: yours)"
    )
    run_parser.add_argument(
        "--dry-run",
        action="store_true",
        help="print the job spec as JSON (token masked); upload and submit nothing",
    )
    run_parser.add_argument(
        "run_command", choices=RUN_COMMANDS, metavar="COMMAND", help="evaluate or reproduce"
    )
    run_parser.add_argument(
        "run_arguments",
        nargs=argparse.REMAINDER,
        metavar="ARGS",
        help="the command's own arguments, as for it",
    )
    run_parser.set_defaults(handler=run)


def _parse_inner(command: str, arguments: list[str]) -> argparse.Namespace:
    """The inner command's arguments, parsed by that command's own parser (argparse's error and exit 2 if bad)."""
    from . import evaluate, reproduce

    parser = argparse.ArgumentParser(prog="vitrobust")
    commands = parser.add_subparsers(dest="command", required=True)
    {"evaluate": evaluate, "reproduce": reproduce}[command].add_parser(commands)
    return parser.parse_args([command, *arguments])


def _inner_inputs(command: str, inner: argparse.Namespace) -> list[str]:
    """The inner command's model specs, suite and data sources: what must not name a local file."""
    from .common import parse_data

    values = list(parse_data(inner.data).values())
    if command == "evaluate":
        return [*(inner.model or ()), inner.suite, *values]
    return [spec for spec in (inner.vit, inner.cnn, inner.stand_in) if spec] + values


def _evaluated_models(command: str, inner: argparse.Namespace) -> list[str] | None:
    """The model specs the inner command runs (evaluate: --model, else its suite's; reproduce: the specs given), or
    None where they are only known once the run is planned. A bad suite name is refused here."""
    from ..evaluation.suite import load_suite

    if command == "reproduce":
        return [spec for spec in (inner.vit, inner.cnn, inner.stand_in) if spec] or None
    try:
        return list(inner.model or load_suite(inner.suite).models) or None
    except ValueError as err:
        raise CLIError(str(err)) from err


def run(args: argparse.Namespace) -> int:
    import tempfile

    from ..hub.jobs import JobError, build_job_spec, submit
    from ..hub.space import build_wheel

    inner = _parse_inner(args.run_command, args.run_arguments)
    if inner.plan or getattr(inner, "list_pairs", False):
        raise CLIError("--plan and --list-pairs only print: run them here, not as a job")
    if args.run_command == "evaluate":
        from ..evaluation.config import EvaluationError
        from .evaluate import config_from_args

        try:  # every setting checked here, as `vitrobust evaluate` would, not after the job installed its stack
            config_from_args(inner).resolve()
        except EvaluationError as err:
            raise CLIError(f"the job's evaluate would stop at once: {err}") from err
    try:
        with tempfile.TemporaryDirectory(prefix="vitrobust-job-") as scratch:
            options = dict(
                output=inner.output,
                flavor=args.flavor,
                push_repo=args.push,
                predictions_repo=args.predictions,
                package=args.package,
                timeout=args.timeout,
                private=args.private,
                namespace=args.namespace,
                inputs=_inner_inputs(args.run_command, inner),
                extra_dependencies=args.extra_dependencies or (),
            )
            # Everything but the wheel is checked before the wheel is built (tens of seconds).
            build_job_spec(
                args.run_command, args.run_arguments, wheel=None, **options | {"package": "hf_vitrobust"}
            )
            evaluated = _evaluated_models(args.run_command, inner)
            if args.push and evaluated and args.push not in evaluated:
                print(
                    f"note: {args.push} is not a model this run evaluates ({', '.join(evaluated)}): the job pushes "
                    "its results and card there, but no .eval_results/, which hold the repo's own model's results "
                    "(docs/publishing.md)",
                    file=sys.stderr,
                )
            wheel = Path(args.wheel) if args.wheel else None
            if wheel is None and args.package is None:
                print("building the hf_vitrobust wheel from this checkout", file=sys.stderr)
                wheel = build_wheel(Path(scratch))
            spec = build_job_spec(args.run_command, args.run_arguments, wheel=wheel, **options)
            if args.dry_run:
                print(json.dumps(spec.to_dict(), indent=2))
                return 0
            job = submit(spec)
    except (JobError, RuntimeError) as err:
        raise CLIError(str(err)) from err
    print(f"job {job.id} started: {job.url}")
    print(f"follow it: hf jobs logs -f {job.id}   its status: hf jobs inspect {job.id}")
    return 0
