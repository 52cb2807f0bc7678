# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""`vitrobust corrupt SOURCE OUTPUT [--benchmark NAME] [--corruption NAME]... [--severity N]... [--format F]`: a
corrupted copy of an image folder, parquet files or a Hub dataset, in the layout of the released ImageNet-C.

An image folder goes to `corrupt_image_folder` as it is; any other source is read through the data registry in the
label space of `--benchmark` and adapted here into the export writer's items (`corruptions.export` knows nothing of
data sources).
"""

from __future__ import annotations

import argparse
import os

from .common import CLIError


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    from ..constants import SEVERITIES
    from ..corruptions.export import (
        IMAGENET_C_CROP,
        IMAGENET_C_JPEG_QUALITY,
        IMAGENET_C_RESIZE,
        OUTPUT_FORMATS,
    )

    severities = f"{SEVERITIES[0]}-{SEVERITIES[-1]}"
    corrupt = subparsers.add_parser(
        "corrupt",
        help="write a corrupted copy of an image folder, parquet files or a Hub dataset (ImageNet-C layout)",
        description=(
            "Corrupt every image of SOURCE (an image folder SOURCE/<class>/<file>, parquet files, or a Hub dataset "
            "read through the data registry in the label space of --benchmark) and write "
            f"OUTPUT/<corruption>/<severity>/<class>/<file> as JPEG (quality {IMAGENET_C_JPEG_QUALITY}), or parquet "
            f"parts, as the released ImageNet-C: shorter side resized to {IMAGENET_C_RESIZE}, center crop "
            f"{IMAGENET_C_CROP} (CIFAR: 32x32 as is). Resumable: existing outputs are kept."
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
    corrupt.add_argument(
        "--severity", action="append", type=int, help=f"{severities} (repeatable; default: all five)"
    )
    corrupt.add_argument("--seed", type=int, default=0, help="seed of the random corruptions (default: 0)")
    corrupt.add_argument("--batch-size", type=int, default=32, help="images per batch (default: 32)")
    corrupt.add_argument("--format", choices=OUTPUT_FORMATS, default="jpeg", help="output format")
    corrupt.add_argument(
        "--benchmark",
        default="imagenet-val",
        help="the benchmark whose label space the source is in; <class> folders are its wnids (ImageNet), "
        "NN_class folders (imagenet-9) or class names (CIFAR) (default: imagenet-val)",
    )
    corrupt.add_argument("--split", help="the split of a Hub or parquet dataset (default: the benchmark's)")
    corrupt.add_argument(
        "--crop",
        type=int,
        help=f"center crop size (default: {IMAGENET_C_CROP} for ImageNet, none for CIFAR's 32x32)",
    )
    corrupt.add_argument(
        "--no-resize",
        action="store_true",
        help=f"crop without resizing the shorter side to {IMAGENET_C_RESIZE} (ImageNet)",
    )
    corrupt.add_argument("--device", default="cpu", help="torch device (default: cpu)")
    corrupt.add_argument("--quiet", action="store_true", help="no progress bar")
    corrupt.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from ..constants import SEVERITIES
    from ..corruptions import STANDARD_CORRUPTIONS, corrupt_image_folder, registered_corruptions
    from ..corruptions.export import (
        IMAGENET_C_CROP,
        IMAGENET_C_JPEG_QUALITY,
        IMAGENET_C_RESIZE,
        check_export_request,
        list_image_folder,
        write_corrupted_images,
    )
    from ..data import get_benchmark, resolve_source
    from ..data.export import export_items, is_image_folder

    names = args.corruption or [name for name in STANDARD_CORRUPTIONS if name in registered_corruptions()]
    unknown = [name for name in names if name not in registered_corruptions()]
    if unknown:
        raise CLIError(f"unknown corruption(s) {unknown}; available: {', '.join(registered_corruptions())}")
    severities = args.severity or list(SEVERITIES)
    try:
        benchmark = get_benchmark(args.benchmark)
        check_export_request(names, severities, args.batch_size, args.format, IMAGENET_C_JPEG_QUALITY)
    except ValueError as err:
        raise CLIError(str(err)) from err
    if benchmark.task == "sequence" or benchmark.generated_from is not None:
        raise CLIError(f"{benchmark.name} is not a clean image benchmark; corrupt its clean source instead")
    imagenet_sized = benchmark.label_space.startswith("imagenet")
    # CIFAR images are corrupted at 32x32, as the reference make_cifar_c.py does; ImageNet ones at the 224 crop.
    resize = None if args.no_resize or not imagenet_sized else IMAGENET_C_RESIZE
    crop = args.crop if args.crop is not None else (IMAGENET_C_CROP if imagenet_sized else None)
    options = dict(seed=args.seed, batch_size=args.batch_size, output_format=args.format, device=args.device)
    source = None
    try:
        if os.path.isdir(args.source) and is_image_folder(args.source):
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
            items = export_items(source, benchmark, resize, crop)
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
