# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The `vitrobust` command line.

    vitrobust classify IMAGE... [--model SPEC] [--top-k 5] [--device cpu]
    vitrobust corrupt SOURCE OUTPUT [--benchmark NAME] [--corruption NAME]... [--severity N]... [--format jpeg|parquet]
    vitrobust evaluate [--model SPEC]... [--suite demo|quick|paper|mechanisms|FILE] [--data BENCHMARK=SOURCE]...
                       [--limit N] [--batch-size N] [--precision fp32|bf16|fp16] [--compile] [--num-workers N]
                       [--output DIR] [--resume] [--seed N] [--protocol BENCHMARK.PART=NAME]... [--subset first|random]
                       [--confidence-level 0.95] [--num-resamples N] [--interval-method wilson|clopper-pearson]
                       [--target-half-width H]
    vitrobust report DIR [DIR ...] [--output DIR] [--confidence-level ...] (intervals and model comparisons
                       recomputed from the predictions files)
    vitrobust reproduce paul-chen|park-kim [--pair VIT_KEY/CNN_KEY] [--vit SPEC] [--cnn SPEC] [--data B=S]...
                       [--offline | --stand-in SPEC] [--plan] [--output DIR] [--limit N] ... (the published numbers
                       beside ours, and the paper's findings checked on the pair)
    vitrobust check-data BENCHMARK [SOURCE] [--rows N] [--split S] [--corruption NAME]... [--severity N]...
    vitrobust train [--model PRESET|SPEC] [--dataset digits|HUB_ID|PATH] [--epochs N] [--sam] ... [--output-dir DIR]
    vitrobust push [--checkpoint DIR] [--results DIR]... REPO [--dry-run --output STAGE]
    vitrobust push --metric NAME REPO | vitrobust push --space REPO [--results DIR]...
    vitrobust push --predictions DATASET_REPO --results DIR... [REPO [--checkpoint DIR]] [--dry-run --output STAGE]

`evaluate` and `train` also run under `accelerate launch -m hf_vitrobust ...` (one process per GPU).

`--model` takes every spec `load_classifier` accepts; the default is the offline builtin
EfficientNet-Lite0 with ImageNet-1k weights.
"""

import argparse
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from PIL import Image, ImageOps, UnidentifiedImageError

from .constants import DEFAULT_MODEL


class CLIError(Exception):
    """A user-facing error: printed as `vitrobust: error: ...` with exit status 2."""


def _open_image(path: str) -> Image.Image:
    """Open and decode an image, applying its EXIF orientation (as cameras and viewers do)."""
    file = Path(path)
    if not file.exists():
        raise CLIError(f"image not found: {path}")
    if not file.is_file():
        raise CLIError(f"not a file: {path}")
    try:
        with Image.open(file) as image:
            image.load()
            return ImageOps.exif_transpose(image)
    except UnidentifiedImageError as err:
        raise CLIError(f"not a readable image: {path}") from err
    except OSError as err:
        raise CLIError(f"cannot read image {path}: {err}") from err


def _format_table(title: str, rows: list[tuple[int, int, float, str]]) -> str:
    header = ("rank", "class", "probability", "label")
    lines = [title, f"  {header[0]:>4}  {header[1]:>5}  {header[2]:>11}  {header[3]}"]
    lines += [f"  {rank:>4}  {index:>5}  {prob:>11.4f}  {label}" for rank, index, prob, label in rows]
    return "\n".join(lines)


def _classify(args: argparse.Namespace) -> int:
    import torch

    from .models.classifier import load_classifier

    if args.top_k < 1:
        raise CLIError(f"--top-k must be at least 1, got {args.top_k}")
    if args.batch_size < 1:
        raise CLIError(f"--batch-size must be at least 1, got {args.batch_size}")
    try:
        device = torch.device(args.device)
    except RuntimeError as err:
        raise CLIError(f"invalid --device {args.device!r}: {err}") from err
    if device.type == "cuda" and not torch.cuda.is_available():
        raise CLIError("--device cuda was requested but CUDA is not available")
    images = [_open_image(path) for path in args.images]  # fail on a bad path before loading the model
    try:
        classifier = load_classifier(args.model, device=device)
    except (ValueError, OSError, RuntimeError) as err:
        raise CLIError(f"could not load model {args.model!r}: {err}") from err
    top_k = min(args.top_k, classifier.num_classes)
    tables = []
    for start in range(0, len(images), args.batch_size):
        batch = images[start : start + args.batch_size]
        top = classifier.predict_topk(classifier.preprocess(batch), k=top_k)
        for offset, (probs, indices, labels) in enumerate(
            zip(top.probabilities.tolist(), top.indices.tolist(), top.labels, strict=True)
        ):
            rows = [
                (rank + 1, idx, prob, label)
                for rank, (prob, idx, label) in enumerate(zip(probs, indices, labels, strict=True))
            ]
            tables.append(_format_table(args.images[start + offset], rows))
    print(
        f"model: {classifier.name}  (input {classifier.input_size[0]}x{classifier.input_size[1]}, "
        f"{classifier.num_classes} classes)\n"
    )
    print("\n\n".join(tables))
    return 0


NO_LABEL_FOLDER = "no_label"


def _class_folder_names(benchmark) -> tuple[str, ...]:
    """The `<class>` folder of each label of a benchmark's label space: the wnid for ImageNet-1k labels, the
    "NN_class" folder for ImageNet-9, the class name for CIFAR (the folders `ImageFolderSource` reads back)."""
    from .data import imagenet_9_folder_name
    from .models.imagenet import IMAGENET_WNIDS

    if benchmark.label_space == "imagenet-1k":
        return tuple(IMAGENET_WNIDS)
    if benchmark.label_space == "imagenet-9":
        return tuple(imagenet_9_folder_name(k) for k in range(benchmark.num_classes))
    return tuple(benchmark.class_names)


def _output_file_name(sample_id: str) -> str:
    """A file name from a sample id, unique as the id is: "train/row-000012" -> "train__row-000012.JPEG"."""
    from .corruptions.export import IMAGE_EXTENSIONS

    name = sample_id.strip("/").replace("/", "__")
    return name if name.lower().endswith(IMAGE_EXTENSIONS) else f"{name}.JPEG"


def _source_items(source, benchmark, resize: int | None, crop: int | None):
    """Adapt a data `Source` to the export writer's items: class folder from the label, the file named after the
    sample id, the corruption seeded by the stable hash of the sample id (as `GeneratedCorruptionSource` does)."""
    from functools import partial

    from .corruptions.export import ExportItem, resize_and_crop, stable_sample_index
    from .data import NO_LABEL

    folders = _class_folder_names(benchmark)
    for sample in source.samples():
        if sample.image.dim() != 3:
            source.report.skip(
                sample.sample_id, "not_an_image", "a video sequence cannot be corrupted as an image"
            )
            continue
        if sample.label == NO_LABEL:
            class_name = NO_LABEL_FOLDER
        elif 0 <= sample.label < len(folders):
            class_name = folders[sample.label]
        else:
            source.report.skip(
                sample.sample_id, "bad_label", f"label {sample.label} is outside {benchmark.name}"
            )
            continue
        yield ExportItem(
            class_name=class_name,
            file_name=_output_file_name(sample.sample_id),
            relative_path=sample.sample_id,
            sample_index=stable_sample_index(sample.sample_id),
            image=partial(resize_and_crop, sample.image, resize, crop),
        )


def _is_image_folder(path: str) -> bool:
    from .corruptions.export import list_image_folder

    try:
        list_image_folder(path)
    except ValueError:
        return False
    return True


def _corrupt(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from .corruptions import STANDARD_CORRUPTIONS, corrupt_image_folder, registered_corruptions
    from .corruptions.export import (
        IMAGENET_C_JPEG_QUALITY,
        check_export_request,
        list_image_folder,
        write_corrupted_images,
    )
    from .data import get_benchmark, resolve_source

    names = args.corruption or [name for name in STANDARD_CORRUPTIONS if name in registered_corruptions()]
    unknown = [name for name in names if name not in registered_corruptions()]
    if unknown:
        raise CLIError(f"unknown corruption(s) {unknown}; available: {', '.join(registered_corruptions())}")
    severities = args.severity or [1, 2, 3, 4, 5]
    try:
        benchmark = get_benchmark(args.benchmark)
        check_export_request(names, severities, args.batch_size, args.format, IMAGENET_C_JPEG_QUALITY)
    except ValueError as err:
        raise CLIError(str(err)) from err
    if benchmark.task == "sequence" or benchmark.generated_from is not None:
        raise CLIError(f"{benchmark.name} is not a clean image benchmark; corrupt its clean source instead")
    imagenet_sized = benchmark.label_space.startswith("imagenet")
    # CIFAR images are corrupted at 32x32, as the reference make_cifar_c.py does; ImageNet ones at the 224 crop.
    resize = None if args.no_resize or not imagenet_sized else 256
    crop = args.crop if args.crop is not None else (224 if imagenet_sized else None)
    options = dict(seed=args.seed, batch_size=args.batch_size, output_format=args.format, device=args.device)
    source = None
    try:
        if os.path.isdir(args.source) and _is_image_folder(args.source):
            # A <class>/<file> folder: the class folders keep their names (they are the labels).
            total = len(list_image_folder(args.source)) * len(names) * len(severities)
            with tqdm(total=total, unit="img", desc="corrupting", disable=args.quiet) as bar:
                report = corrupt_image_folder(
                    args.source, args.output, names, severities, resize=resize, crop=crop, progress=bar.update,
                    **options,
                )  # fmt: skip
        else:
            # Parquet files or a Hub dataset id, read through the data registry in the benchmark's label space.
            source = resolve_source(benchmark, args.source, split=args.split)
            source.validate()
            items = _source_items(source, benchmark, resize, crop)
            with tqdm(unit="img", desc="corrupting", disable=args.quiet) as bar:
                report = write_corrupted_images(
                    items, args.output, names, severities, progress=bar.update, **options
                )
    except (ValueError, OSError) as err:
        raise CLIError(str(err)) from err
    unreadable = list(report.bad_images)
    if source is not None:
        unreadable += [f"{skip['sample_id']} ({skip['reason']})" for skip in source.report.examples]
        count = len(report.bad_images) + source.report.num_skipped
    else:
        count = len(report.bad_images)
    print(
        f"wrote {report.written} images, kept {report.skipped_existing} already written, "
        f"skipped {count} unreadable" + "".join(f"\n  unreadable: {p}" for p in unreadable)
    )
    return 0


def _parse_data(values: Sequence[str] | None) -> dict[str, str]:
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


def _parse_protocols(values: Sequence[str] | None) -> dict[str, dict[str, str]]:
    from .evaluation.protocols import parse_protocol_option

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


def _uncertainty_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """The interval options given on the command line (those left out keep their defaults)."""
    given = {
        "confidence_level": args.confidence_level,
        "num_resamples": args.num_resamples,
        "interval_method": args.interval_method,
        "target_half_width": args.target_half_width,
    }
    return {key: value for key, value in given.items() if value is not None}


def _add_uncertainty_arguments(parser: argparse.ArgumentParser, defaults: str) -> None:
    group = parser.add_argument_group(
        "intervals", f"confidence intervals of the headline numbers ({defaults})"
    )
    group.add_argument("--confidence-level", type=float, help="the intervals' level, in (0, 1) (0.95)")
    group.add_argument("--num-resamples", type=int, help="bootstrap resamples (1000)")
    group.add_argument(
        "--interval-method", choices=["wilson", "clopper-pearson"], help="the interval of accuracies (wilson)"
    )
    group.add_argument(
        "--target-half-width",
        type=float,
        help="the half-width, in the headline's units, that 'samples needed' is computed for (1.0)",
    )


def _evaluate(args: argparse.Namespace) -> int:
    from .evaluation.runner import EvaluationConfig, EvaluationError, evaluate

    config = EvaluationConfig(
        models=args.model or (),
        suite=args.suite,
        data=_parse_data(args.data),
        protocols=_parse_protocols(args.protocol),
        limit=args.limit,
        subset=args.subset,
        batch_size=args.batch_size,
        precision=args.precision,
        compile=args.compile,
        num_workers=args.num_workers,
        output=args.output,
        resume=args.resume,
        seed=args.seed,
        device=args.device,
        progress=not args.quiet,
        report=not args.no_report,
        corruption_device=args.corruption_device,
        **_uncertainty_kwargs(args),
    )
    try:
        evaluate(config)
    except EvaluationError as err:
        raise CLIError(str(err)) from err
    return 0


def _check_data(args: argparse.Namespace) -> int:
    from .data.check import check_source

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


def _report(args: argparse.Namespace) -> int:
    from .evaluation.report import write_report
    from .evaluation.results import load_results, merge_results
    from .evaluation.uncertainty import UncertaintySettings, compare_models, recompute_intervals, run_settings

    try:
        runs = load_results([Path(d) for d in args.dirs])
        merged = merge_results(runs)
        given = _uncertainty_kwargs(args)
        settings = None
        if given:
            base = run_settings(merged[0]).to_dict()
            if "interval_method" in given:
                given["proportion_method"] = given.pop("interval_method")
            settings = UncertaintySettings.from_dict({**base, **given})
        # Intervals and comparisons come from the predictions files, so they follow the settings given here.
        estimators = recompute_intervals(merged, settings)
        if len(estimators) > 1:
            comparisons = compare_models(estimators, settings or run_settings(merged[0]))
            for result in merged:
                result.pop("comparisons", None)
            merged[0]["comparisons"] = comparisons
    except (ValueError, FileNotFoundError) as err:
        raise CLIError(str(err)) from err
    output = Path(args.output) if args.output else Path(args.dirs[0])
    written = write_report(merged, output)
    print(f"report: {written['markdown']} and {written['html']}")
    return 0


def _reproduce(args: argparse.Namespace) -> int:
    from .evaluation.reproduce import pair_names, plan_reproduction, run_reproduction
    from .evaluation.reproduction_report import verdict_sentence
    from .evaluation.runner import EvaluationError

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
            data=_parse_data(args.data),
            offline=args.offline,
        )
    except ValueError as err:
        raise CLIError(str(err)) from err
    if args.plan:
        print(plan.describe())
        return 0
    options = {
        "limit": args.limit,
        "subset": args.subset,
        "batch_size": args.batch_size,
        "precision": args.precision,
        "num_workers": args.num_workers,
        "resume": args.resume,
        "seed": args.seed,
        "device": args.device,
        "progress": not args.quiet,
        **_uncertainty_kwargs(args),
    }
    try:
        record = run_reproduction(plan, args.output, **options)
    except (EvaluationError, ValueError) as err:
        raise CLIError(str(err)) from err
    if not args.quiet:
        print(verdict_sentence(record["published"]))
        for group in record["findings"]:
            verdicts = ", ".join(f"{c['claim']}: {c['verdict']}" for c in group["checks"])
            print(f"findings on {group['pair']}: {verdicts}")
        print(f"report: {Path(args.output) / 'report.md'} and {Path(args.output) / 'reproduction.json'}")
    return 0


def _add_config_arguments(parser: argparse.ArgumentParser, config_class: type) -> None:
    """One --flag per field of a config dataclass (as transformers' HfArgumentParser): bools become on/off
    switches, None defaults take the type of the annotation; dict fields are Python-API only."""
    import dataclasses
    import typing

    hints = typing.get_type_hints(config_class)
    for item in dataclasses.fields(config_class):
        hint = hints[item.name]
        flag = "--" + item.name.replace("_", "-")
        default = item.default if item.default is not dataclasses.MISSING else None
        # Only the flags a user gives reach the config (SUPPRESS), so that a preset such as --paper-recipe keeps
        # its own values for the others.
        if hint is bool:
            parser.add_argument(
                flag,
                action=argparse.BooleanOptionalAction,
                default=argparse.SUPPRESS,
                help=f"(default: {default})",
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
            type=kind,
            default=argparse.SUPPRESS,
            metavar=item.name.upper(),
            help=f"(default: {default})",
        )


def _train(args: argparse.Namespace) -> int:
    import dataclasses

    from .training import TrainingConfig, train

    names = {f.name for f in dataclasses.fields(TrainingConfig)}
    values = {k: v for k, v in vars(args).items() if k in names}
    try:
        config = (
            TrainingConfig.paper_recipe(**values) if args.paper_recipe else TrainingConfig.from_dict(values)
        )
        result = train(config, log=None if args.quiet else print)
    except ValueError as err:
        raise CLIError(str(err)) from err
    if not args.quiet:
        print(f"checkpoint: {result.output_dir}")
    return 0


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
    from .hub import ImageProcessorSpec, push_predictions

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


def _push(args: argparse.Namespace) -> int:
    import tempfile

    from .hub import ImageProcessorSpec, push, stage_metric, stage_model, stage_space

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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="vitrobust", description="Robustness toolkit for image classifiers (transformers, timm)."
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    classify = subparsers.add_parser(
        "classify", help="print the top-k classes of images", description="Print the top-k classes of images."
    )
    classify.add_argument("images", nargs="+", metavar="IMAGE", help="image files (any format PIL reads)")
    classify.add_argument(
        "--model",
        default=DEFAULT_MODEL,
        help=f"a transformers folder or Hub id, timm/<name>, or builtin:<name> (default: {DEFAULT_MODEL})",
    )
    classify.add_argument("--top-k", type=int, default=5, help="number of classes to show (default: 5)")
    classify.add_argument("--device", default="cpu", help="torch device, e.g. cpu or cuda (default: cpu)")
    classify.add_argument("--batch-size", type=int, default=32, help="images per forward pass (default: 32)")
    classify.set_defaults(handler=_classify)

    corrupt = subparsers.add_parser(
        "corrupt",
        help="write a corrupted copy of an image folder, parquet files or a Hub dataset (ImageNet-C layout)",
        description=(
            "Corrupt every image of SOURCE (an image folder SOURCE/<class>/<file>, parquet files, or a Hub dataset "
            "read through the data registry in the label space of --benchmark) and write "
            "OUTPUT/<corruption>/<severity>/<class>/<file> as JPEG (quality 85), or parquet parts, as the released "
            "ImageNet-C: shorter side resized to 256, center crop 224 (CIFAR: 32x32 as is). Resumable: existing "
            "outputs are kept."
        ),
    )
    corrupt.add_argument(
        "source",
        help="image folder in the <class>/<file> layout, parquet file(s) or folder, or a Hub dataset id "
        "org/name[:config][@revision]",
    )
    corrupt.add_argument("output", help="output folder")
    corrupt.add_argument(
        "--corruption",
        action="append",
        help="a corruption name (repeatable; default: the standard 15 of ImageNet-C that are available)",
    )
    corrupt.add_argument("--severity", action="append", type=int, help="1-5 (repeatable; default: all five)")
    corrupt.add_argument("--seed", type=int, default=0, help="seed of the random corruptions (default: 0)")
    corrupt.add_argument("--batch-size", type=int, default=32, help="images per batch (default: 32)")
    corrupt.add_argument("--format", choices=("jpeg", "parquet"), default="jpeg", help="output format")
    corrupt.add_argument(
        "--benchmark",
        default="imagenet-val",
        help="the benchmark whose label space the source is in; <class> folders are its wnids (ImageNet), "
        "NN_class folders (imagenet-9) or class names (CIFAR) (default: imagenet-val)",
    )
    corrupt.add_argument("--split", help="the split of a Hub or parquet dataset (default: the benchmark's)")
    corrupt.add_argument(
        "--crop", type=int, help="center crop size (default: 224 for ImageNet, none for CIFAR's 32x32)"
    )
    corrupt.add_argument(
        "--no-resize", action="store_true", help="crop without resizing the shorter side to 256 (ImageNet)"
    )
    corrupt.add_argument("--device", default="cpu", help="torch device (default: cpu)")
    corrupt.add_argument("--quiet", action="store_true", help="no progress bar")
    corrupt.set_defaults(handler=_corrupt)

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
        help="a transformers folder or Hub id, timm/<name>, or builtin:<name>; repeat for several models "
        "(default: the suite's models, else builtin:efficientnet_lite0)",
    )
    evaluate.add_argument(
        "--suite",
        default="demo",
        help="demo (default, offline), quick, paper, mechanisms, or the path of a YAML/JSON suite file",
    )
    evaluate.add_argument(
        "--data",
        action="append",
        metavar="BENCHMARK=SOURCE",
        help="where a benchmark's data comes from: a Hub id, a local folder or parquet, generated:<clean source> "
        "(repeatable)",
    )
    evaluate.add_argument(
        "--protocol",
        action="append",
        metavar="BENCHMARK.PART=NAME",
        help="an evaluation protocol choice over the suite's (docs/protocols.md), e.g. "
        "imagenet-c.preprocessing=native-resize, imagenet-a.class_mask=paul-chen-1000, imagenet-c.mce=unnormalized-19, "
        "imagenet-c.release_encoding=none, imagenet-p.release_encoding=h264 (repeatable)",
    )
    evaluate.add_argument("--limit", type=int, help="at most this many images per benchmark")
    evaluate.add_argument(
        "--subset",
        choices=["first", "random"],
        help="which images --limit keeps (default: the suite's, else first). first: the first N of the stream; "
        "random: a seeded uniform random subset (the run's --seed), reads the whole stream without decoding",
    )
    evaluate.add_argument("--batch-size", type=int, help="images per forward pass (default: the suite's)")
    evaluate.add_argument(
        "--precision", default="fp32", help="fp32 (default), bf16 or fp16: autocast of the benchmark passes"
    )
    evaluate.add_argument("--compile", action="store_true", help="torch.compile the model for the benchmarks")
    evaluate.add_argument(
        "--num-workers", type=int, default=0, help="DataLoader workers decoding and corrupting (default: 0)"
    )
    evaluate.add_argument(
        "--output", default="vitrobust-results", help="run folder (default: vitrobust-results)"
    )
    evaluate.add_argument(
        "--resume", action="store_true", help="continue the run in --output where it stopped"
    )
    evaluate.add_argument("--seed", type=int, help="seed of every random choice (default: the suite's)")
    evaluate.add_argument("--device", help="torch device of a single process (default: cuda if available)")
    evaluate.add_argument(
        "--corruption-device",
        default="auto",
        choices=["auto", "workers", "device"],
        help="where generated ImageNet-C/-P images are corrupted: the DataLoader workers, the model's device, or "
        "auto (the device on a GPU, else the workers)",
    )
    _add_uncertainty_arguments(evaluate, "recorded in results.json; `vitrobust report` can recompute them")
    evaluate.add_argument(
        "--no-report", action="store_true", help="write results.json only (no report, figures)"
    )
    evaluate.add_argument("--quiet", action="store_true", help="no progress bars or summary")
    evaluate.set_defaults(handler=_evaluate)

    report = subparsers.add_parser(
        "report",
        help="rebuild (and merge) reports from existing results",
        description="Rebuild report.md and report.html from one or more run folders; several runs are merged side "
        "by side.",
    )
    report.add_argument("dirs", nargs="+", metavar="DIR", help="run folders (or results.json files)")
    report.add_argument("--output", help="where to write the report (default: the first DIR)")
    _add_uncertainty_arguments(
        report, "default: each run's own settings; recomputed from the predictions files"
    )
    report.set_defaults(handler=_report)

    reproduce = subparsers.add_parser(
        "reproduce",
        help="run a paper's suite on one of its model pairs and put the published numbers beside ours",
        description=(
            "Run the paper's suite (paul-chen: `paper`; park-kim: `mechanisms`) on a model pair with the checkpoint and "
            "protocol of each published number (hf_vitrobust/assets/published/published.csv), one run per checkpoint "
            "under DIR/legs/, and write DIR/report.md, report.html and reproduction.json: every published number beside "
            "ours with its interval and a verdict (equal, within the interval, outside it, not comparable and why), and "
            "the paper's findings checked on the pair with paired intervals."
        ),
    )
    reproduce.add_argument("paper", choices=["paul-chen", "park-kim"], help="whose published numbers")
    reproduce.add_argument(
        "--pair",
        help="VIT_KEY/CNN_KEY: a named pair of the paper's suite (--list-pairs), or any two model keys of the "
        "published table with --vit and --cnn (default: vit-l16/bit-m-r101x3 for paul-chen, deit-s/resnet-50 for "
        "park-kim)",
    )
    reproduce.add_argument("--vit", metavar="SPEC", help="the ViT's spec, over the pair's")
    reproduce.add_argument("--cnn", metavar="SPEC", help="the CNN's spec, over the pair's")
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
    reproduce.add_argument(
        "--data",
        action="append",
        metavar="BENCHMARK=SOURCE",
        help="where a benchmark's data comes from, as for evaluate (repeatable)",
    )
    reproduce.add_argument("--plan", action="store_true", help="print the runs it would make, and stop")
    reproduce.add_argument(
        "--list-pairs", action="store_true", help="print the paper's named pairs, and stop"
    )
    reproduce.add_argument(
        "--output", default="vitrobust-reproduction", help="folder (default: vitrobust-reproduction)"
    )
    reproduce.add_argument("--limit", type=int, help="at most this many images per benchmark (a dry run)")
    reproduce.add_argument("--subset", choices=["first", "random"], help="which images --limit keeps")
    reproduce.add_argument("--batch-size", type=int, help="images per forward pass (default: the suite's)")
    reproduce.add_argument("--precision", default="fp32", help="fp32 (default), bf16 or fp16")
    reproduce.add_argument("--num-workers", type=int, default=0, help="DataLoader workers (default: 0)")
    reproduce.add_argument("--device", help="torch device of a single process (default: cuda if available)")
    reproduce.add_argument("--seed", type=int, help="seed of every random choice (default: the suite's)")
    reproduce.add_argument("--resume", action="store_true", help="continue each run where it stopped")
    _add_uncertainty_arguments(reproduce, "the intervals of ours, of the comparisons and of the findings")
    reproduce.add_argument("--quiet", action="store_true", help="no progress bars or summary")
    reproduce.set_defaults(handler=_reproduce)

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
    check.add_argument("--severity", action="append", type=int, help="1-5 (repeatable)")
    check.add_argument("--variant", action="append", help="ImageNet-9 variant or ImageNet-P perturbation")
    check.add_argument(
        "--schema", help="a registered Hub schema name, for a source whose name does not say it"
    )
    check.add_argument("--in-distribution", help="imagenet-o: the in-distribution source ('default': ILSVRC)")
    check.set_defaults(handler=_check_data)

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
    from .training import TrainingConfig

    _add_config_arguments(train, TrainingConfig)
    train.add_argument(
        "--paper-recipe",
        action="store_true",
        help="start from Park & Kim's CIFAR recipe (300 epochs, AdamW 1.25e-4, RandAugment, mixup/cutmix, label "
        "smoothing, random erasing, stochastic depth, clipping); the flags given override it",
    )
    train.add_argument("--quiet", action="store_true", help="no per-epoch log")
    train.set_defaults(handler=_train)

    push = subparsers.add_parser(
        "push",
        help="publish a checkpoint and/or evaluation results, a metric or the Space to the Hub",
        description=(
            "Stage exactly the folder to upload (checkpoint files, results.json, predictions, figures, report, and a "
            "model card rendered from model_cards/ with model-index results) and upload it with HfApi.create_repo + "
            "upload_folder. The token comes from HF_TOKEN or the stored login and is never printed."
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
    push.set_defaults(handler=_push)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `vitrobust` and `python -m hf_vitrobust`; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.handler(args)
    except CLIError as err:
        parser.exit(2, f"{parser.prog} {args.command}: error: {err}\n")
