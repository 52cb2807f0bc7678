# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The `vitrobust` command line.

    vitrobust classify IMAGE... [--model SPEC] [--top-k 5] [--device cpu]
    vitrobust corrupt SOURCE OUTPUT [--corruption NAME]... [--severity N]... [--format jpeg|parquet]

`--model` takes every spec `load_classifier` accepts; the default is the offline builtin
EfficientNet-Lite0 with ImageNet-1k weights.
"""

import argparse
from collections.abc import Sequence
from pathlib import Path

from PIL import Image, ImageOps, UnidentifiedImageError

DEFAULT_MODEL = "builtin:efficientnet_lite0"


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


def _corrupt(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from .corruptions import STANDARD_CORRUPTIONS, corrupt_image_folder, registered_corruptions
    from .corruptions.export import list_image_folder

    names = args.corruption or [name for name in STANDARD_CORRUPTIONS if name in registered_corruptions()]
    unknown = [name for name in names if name not in registered_corruptions()]
    if unknown:
        raise CLIError(f"unknown corruption(s) {unknown}; available: {', '.join(registered_corruptions())}")
    severities = args.severity or [1, 2, 3, 4, 5]
    try:
        total = len(list_image_folder(args.source)) * len(names) * len(severities)
        with tqdm(total=total, unit="img", desc="corrupting", disable=args.quiet) as bar:
            report = corrupt_image_folder(
                args.source,
                args.output,
                names,
                severities,
                seed=args.seed,
                batch_size=args.batch_size,
                output_format=args.format,
                resize=None if args.no_resize else 256,
                crop=args.crop,
                device=args.device,
                progress=bar.update,
            )
    except ValueError as err:
        raise CLIError(str(err)) from err
    print(
        f"wrote {report.written} images, kept {report.skipped_existing} already written, "
        f"skipped {len(report.bad_images)} unreadable"
        + "".join(f"\n  unreadable: {p}" for p in report.bad_images)
    )
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
        help="write a corrupted copy of an image folder (ImageNet-C layout)",
        description=(
            "Corrupt every image of SOURCE/<class>/<file> and write OUTPUT/<corruption>/<severity>/<class>/<file> "
            "as JPEG (quality 85), or parquet parts, as the released ImageNet-C: shorter side resized to 256, "
            "center crop 224. Resumable: existing outputs are kept."
        ),
    )
    corrupt.add_argument("source", help="image folder in the <class>/<file> layout")
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
    corrupt.add_argument("--crop", type=int, default=224, help="center crop size (default: 224)")
    corrupt.add_argument(
        "--no-resize", action="store_true", help="crop without resizing the shorter side to 256"
    )
    corrupt.add_argument("--device", default="cpu", help="torch device (default: cpu)")
    corrupt.add_argument("--quiet", action="store_true", help="no progress bar")
    corrupt.set_defaults(handler=_corrupt)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `vitrobust` and `python -m hf_vitrobust`; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.handler(args)
    except CLIError as err:
        parser.exit(2, f"{parser.prog} {args.command}: error: {err}\n")
