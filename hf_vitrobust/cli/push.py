# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""`vitrobust push`: publish to the Hub (`hf_vitrobust.hub`), one thing per call.

vitrobust push [--checkpoint DIR] [--results DIR]... REPO [--dry-run --output STAGE]
vitrobust push --metric NAME REPO | vitrobust push --space REPO [--results DIR]...
vitrobust push --predictions DATASET_REPO --results DIR... [REPO [--checkpoint DIR]] [--dry-run --output STAGE]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from .common import CLIError


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    push = subparsers.add_parser(
        "push",
        help="publish a checkpoint and/or evaluation results, a metric or the Space to the Hub",
        description=(
            "Stage exactly the folder to upload (checkpoint files, results.json, predictions, figures, report, and a "
            "model card rendered from model_cards/ with model-index results, and .eval_results/<run>.yaml with the "
            "headlines of the repository's own model) and upload it with HfApi.create_repo + upload_folder. The "
            "token comes from HF_TOKEN or the stored login and is never printed."
        ),
    )
    push.add_argument(
        "repo", nargs="?", help="the Hub repository, org/name (may be left out with --predictions alone)"
    )
    push.add_argument("--checkpoint", help="a checkpoint folder (from `vitrobust train` or save_pretrained)")
    push.add_argument("--results", action="append", help="an evaluation run folder (repeatable)")
    push.add_argument("--metric", help="publish this shipped metric as an evaluate metric Space (e.g. mce)")
    push.add_argument(
        "--space", action="store_true", help="deploy the Gradio Space (with a wheel of this package)"
    )
    push.add_argument(
        "--predictions",
        metavar="DATASET_REPO",
        help="publish the --results runs' per-sample predictions as this dataset repo (one config per benchmark, "
        "one split per model; docs/publishing.md); with REPO too, the model repo follows and its card links it",
    )
    push.add_argument("--private", action="store_true", help="create the repository private")
    push.add_argument("--dry-run", action="store_true", help="stage only: write the folder, upload nothing")
    push.add_argument("--output", help="where to stage (required with --dry-run)")
    push.add_argument(
        "--image-size",
        type=int,
        metavar="N",
        help="the checkpoint's evaluation input size, for one that records no image processor (with --image-mean, "
        "--image-std): resize the shorter side, center-crop N",
    )
    push.add_argument(
        "--image-mean",
        type=float,
        nargs=3,
        metavar=("R", "G", "B"),
        help="its normalisation mean (0-1 scale)",
    )
    push.add_argument(
        "--image-std", type=float, nargs=3, metavar=("R", "G", "B"), help="its normalisation std (0-1 scale)"
    )
    push.set_defaults(handler=run)


def _print_pushed(pushed: list) -> None:
    """One line per pushed repo (with the staged files of a dry run); never the token."""
    for stage, result in pushed:
        if result.dry_run:
            print(
                f"dry run: staged {len(result.files)} files in {stage} for {result.repo_type} {result.repo_id}; "
                "nothing uploaded"
            )
            for name in result.files:
                print(f"  {name}")
        else:
            print(f"pushed {len(result.files)} files to {result.url}")


def _push_predictions(args: argparse.Namespace) -> int:
    """`push --predictions DATASET_REPO --results RUN...`: the runs' per-sample predictions as a dataset repo; with
    a model REPO too, that model repo is pushed after it and its card links the dataset. A dry run stages the
    dataset in --output (both: --output/predictions and --output/model)."""
    from ..hub import ImageProcessorSpec, push_predictions

    if args.metric or args.space:
        raise CLIError("--predictions publishes evaluation runs; leave out --metric and --space")
    if not args.results:
        raise CLIError("--predictions needs the run folder(s) with --results RUN")
    if args.dry_run and not args.output:
        raise CLIError("--dry-run needs --output STAGE (the folder that would be uploaded)")
    try:
        pushed = push_predictions(
            [Path(r) for r in args.results],
            args.predictions,
            model_repo=args.repo,
            checkpoint=Path(args.checkpoint) if args.checkpoint else None,
            image_processor=ImageProcessorSpec.from_flags(args.image_size, args.image_mean, args.image_std),
            output=Path(args.output) if args.output else None,
            private=args.private,
            dry_run=args.dry_run,
        )
    except (ValueError, FileNotFoundError, RuntimeError) as err:
        raise CLIError(str(err)) from err
    _print_pushed(pushed)
    return 0


def run(args: argparse.Namespace) -> int:
    import tempfile

    from ..hub import ImageProcessorSpec, push, stage_metric, stage_model, stage_space

    if args.predictions:
        return _push_predictions(args)
    if not args.repo:
        raise CLIError("give the repository to push to (org/name)")
    # The Space may carry results (its leaderboard); a checkpoint upload may carry results too.
    chosen = [bool(args.metric), bool(args.space), bool(args.checkpoint or (args.results and not args.space))]
    if sum(chosen) != 1:
        raise CLIError(
            "push one thing: --checkpoint and/or --results, or --metric NAME, or --space [--results DIR]"
        )
    if args.metric and args.results:
        raise CLIError("--metric publishes a metric module alone; leave out --results")
    if args.dry_run and not args.output:
        raise CLIError("--dry-run needs --output STAGE (the folder that would be uploaded)")
    results = [Path(r) for r in args.results or ()]
    try:
        with tempfile.TemporaryDirectory(prefix="vitrobust-push-") as scratch:
            stage = Path(args.output) if args.output else Path(scratch) / "stage"
            if args.metric:
                stage_metric(stage, args.metric, repo_id=args.repo)
                repo_type = "space"
            elif args.space:
                stage_space(stage, results=results)
                repo_type = "space"
            else:
                checkpoint = Path(args.checkpoint) if args.checkpoint else None
                stage_model(
                    stage,
                    checkpoint,
                    results,
                    repo_id=args.repo,
                    image_processor=ImageProcessorSpec.from_flags(
                        args.image_size, args.image_mean, args.image_std
                    ),
                )
                repo_type = "model"
            pushed = push(stage, args.repo, repo_type=repo_type, private=args.private, dry_run=args.dry_run)
    except (ValueError, FileNotFoundError, RuntimeError) as err:
        raise CLIError(str(err)) from err
    _print_pushed([(stage, pushed)])
    return 0
