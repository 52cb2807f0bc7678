# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The ImageNet-C mCE of any image classifier, with the corruptions generated on the fly, on any number of processes.

    accelerate launch examples/imagenet_c_mce.py --model timm/vit_base_patch16_224 --data generated:ILSVRC/imagenet-1k

Each process reads the clean stream, decodes every N-th batch of clean images, corrupts and classifies it; the main
process gathers one row per sample and scores them with `hf_vitrobust.metrics.mean_corruption_error`. The protocol
is the package's default: clean images resized to 256 and cropped to 224, corrupted, saved as JPEG 85 (as
make_imagenet_c.py), then fed as they are; the clean error (relative mCE) uses the model's own transform.
"""

import argparse
import itertools
import json
from dataclasses import replace

import torch
from accelerate import Accelerator
from accelerate.utils import gather_object
from PIL import Image
from tqdm.auto import tqdm

from hf_vitrobust import load_classifier
from hf_vitrobust.data import load_benchmark
from hf_vitrobust.data.samples import InMemorySource, decode_raw_sample
from hf_vitrobust.metrics import SEVERITIES, STANDARD_CORRUPTIONS, mean_corruption_error


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="ImageNet-C mCE, corruptions generated on the fly.")
    parser.add_argument("--model", default="builtin:efficientnet_lite0", help="Hub id, timm/<name>, ...")
    parser.add_argument("--data", default="generated:builtin", help='"generated:<clean ImageNet-val source>"')
    parser.add_argument("--limit", type=int, default=None, help="clean images (each one in every cell)")
    parser.add_argument("--batch-size", type=int, default=16, help="clean images per batch")
    parser.add_argument(
        "--corruptions", nargs="+", default=STANDARD_CORRUPTIONS, choices=STANDARD_CORRUPTIONS
    )
    parser.add_argument("--severities", nargs="+", type=int, default=list(SEVERITIES))
    parser.add_argument("--seed", type=int, default=0, help="seeds the random corruptions")
    parser.add_argument("--output", default=None, help="a JSON file for the numbers")
    return parser.parse_args()


@torch.no_grad()
def predict(classifier, samples, batch_size: int) -> list[tuple]:
    """(sample id, top-1 prediction, label, corruption, severity) of each decoded sample."""
    rows = []
    for start in range(0, len(samples), batch_size):
        part = samples[start : start + batch_size]
        images = [Image.fromarray(sample.image.permute(1, 2, 0).numpy()) for sample in part]
        pixels = classifier.preprocessing.to_tensor(images).to(classifier.device)
        predictions = classifier(pixels).argmax(dim=-1).tolist()
        for sample, prediction in zip(part, predictions, strict=True):
            meta = sample.metadata
            rows.append(
                (sample.sample_id, prediction, sample.label, meta.get("corruption"), meta.get("severity"))
            )
    return rows


def main() -> None:
    args = parse_args()
    accelerator = Accelerator()
    source = load_benchmark(
        "imagenet-c", args.data, corruptions=args.corruptions, severities=args.severities, seed=args.seed
    )
    if source.clean_source is None:
        raise SystemExit(f"{args.data!r} is not generated on the fly; pass --data generated:<clean source>.")
    if args.limit is not None:
        source = source.limited(args.limit, per_cell=True)  # the first `limit` clean images, in every cell
    classifier = load_classifier(args.model, device=accelerator.device)
    own = classifier.preprocessing
    if classifier.accepts_input_size((224, 224)):  # as released: the 224-pixel images fed as they are
        fed = replace(own, input_size=(224, 224), resize_size=None, crop_pct=None, crop_only=True)
    else:  # a model fixed to its own size (a ViT at 384) gets them resized to it, as the package's runner does
        fed = replace(own, resize_size=own.input_size, crop_pct=None)
    corrupted_input = classifier.with_preprocessing(fed)

    clean, clean_rows, corrupted_rows = source.clean_source, [], []
    raw = clean.raw_samples()
    batches = iter(lambda: list(itertools.islice(raw, args.batch_size)), [])  # until the stream ends
    what = f"batches of {args.batch_size} clean images x {len(args.corruptions) * len(args.severities)} cells"
    for index, batch in enumerate(tqdm(batches, what, unit="batch", disable=not accelerator.is_main_process)):
        if index % accelerator.num_processes != accelerator.process_index:
            continue  # another process's batch: never decoded here
        decoded = [sample for item in batch if (sample := decode_raw_sample(item, clean.report)) is not None]
        clean_rows += predict(classifier, decoded, args.batch_size)
        corrupted = list(source.with_clean(InMemorySource(decoded)).samples())
        corrupted_rows += predict(corrupted_input, corrupted, args.batch_size)

    # Every row once (keyed by its sample id), in the same order whatever the number of processes.
    images_per_process = gather_object([len(clean_rows)])
    clean_rows = sorted(dict((row[0], row) for row in gather_object(clean_rows)).values())
    corrupted_rows = sorted(dict((row[0], row) for row in gather_object(corrupted_rows)).values())
    accelerator.end_training()  # every process leaves the process group before it exits
    if not accelerator.is_main_process:
        return
    _, *columns = zip(*corrupted_rows, strict=True)  # predictions, labels, corruptions, severities
    _, clean_predicted, clean_labels, _, _ = zip(*clean_rows, strict=True)
    clean = {"clean_predictions": clean_predicted, "clean_references": clean_labels}
    result = mean_corruption_error(*columns, allow_partial=True, **clean)  # the means cover the cells present
    print(
        f"{args.model}: mCE {result.mce:.2f} % (relative {result.relative_mce:.2f} %), clean error "
        f"{result.clean_error:.2f} %, over {len(result.ce)} corruptions x {len(args.severities)} severities, "
        f"{len(clean_rows)} images, {accelerator.num_processes} process(es)"
    )
    if args.output:
        numbers = {"model": args.model, "data": args.data, "images_per_process": images_per_process}
        with open(args.output, "w", encoding="utf-8") as handle:
            json.dump({**numbers, **result.to_dict()}, handle, indent=2)


if __name__ == "__main__":
    main()
