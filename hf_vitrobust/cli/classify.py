# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""`vitrobust classify IMAGE... [--model SPEC] [--top-k 5] [--device cpu] [--batch-size 32]`: the top-k classes of
images, one table per image. An image that cannot be read is skipped, counted and named at the end; the exit
status is non-zero only when none can be read."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..constants import DEFAULT_MODEL
from .common import MODEL_SPEC_HELP, CLIError

if TYPE_CHECKING:
    from PIL import Image


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    classify = subparsers.add_parser(
        "classify", help="print the top-k classes of images", description="Print the top-k classes of images."
    )
    classify.add_argument("images", nargs="+", metavar="IMAGE", help="image files (any format PIL reads)")
    classify.add_argument(
        "--model",
        default=DEFAULT_MODEL,
        help=f"{MODEL_SPEC_HELP} (default: {DEFAULT_MODEL})",
    )
    classify.add_argument("--top-k", type=int, default=5, help="number of classes to show (default: 5)")
    classify.add_argument("--device", default="cpu", help="torch device, e.g. cpu or cuda (default: cpu)")
    classify.add_argument("--batch-size", type=int, default=32, help="images per forward pass (default: 32)")
    classify.set_defaults(handler=run)


def _open_image(path: str) -> Image.Image:
    """Open and decode an image, applying its EXIF orientation (as cameras and viewers do); a CLIError says why an
    image cannot be read."""
    from PIL import Image, ImageOps, UnidentifiedImageError

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


def _open_images(paths: list[str]) -> tuple[list[tuple[str, Image.Image]], list[str]]:
    """The images that open, with their paths, and why each of the others does not (as an evaluation skips and
    counts a bad sample); all of them failing is an error."""
    opened, skipped = [], []
    for path in paths:
        try:
            opened.append((path, _open_image(path)))
        except CLIError as err:
            skipped.append(str(err))
    if not opened:
        raise CLIError("no image could be read:\n  " + "\n  ".join(skipped))
    return opened, skipped


def _format_table(title: str, rows: list[tuple[int, int, float, str]]) -> str:
    header = ("rank", "class", "probability", "label")
    lines = [title, f"  {header[0]:>4}  {header[1]:>5}  {header[2]:>11}  {header[3]}"]
    lines += [f"  {rank:>4}  {index:>5}  {prob:>11.4f}  {label}" for rank, index, prob, label in rows]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    import torch

    from ..models.loading import load_classifier

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
    opened, skipped = _open_images(args.images)  # before loading the model: all bad is an error now
    paths, images = [path for path, _ in opened], [image for _, image in opened]
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
            tables.append(_format_table(paths[start + offset], rows))
    print(
        f"model: {classifier.name}  (input {classifier.input_size[0]}x{classifier.input_size[1]}, "
        f"{classifier.num_classes} classes)\n"
    )
    print("\n\n".join(tables))
    if skipped:
        print(f"skipped {len(skipped)} of {len(args.images)} images:", *skipped, sep="\n  ", file=sys.stderr)
    return 0
