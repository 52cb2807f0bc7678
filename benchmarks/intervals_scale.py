# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Time and memory of the headline intervals at ImageNet scale (issue 19).

Synthetic per-sample predictions in the runner's columns, seeded, with a per-image difficulty so that the errors of
one clean image are correlated across its cells (as they are for a real model):

- ImageNet-C, generated layout: `--clean-images` clean images x 15 corruptions x 5 severities (50,000: 3.75 M rows),
  the cluster key in "clean_sample_id";
- ImageNet-C, released folder layout: the same, with the cluster key derived from the sample ids
  (`<corruption>/<severity>/<wnid>/<file>`), row by row;
- ImageNet-val: 50,000 images (Wilson, and the ECE bootstrap from 1000-class logits at `--ece-images`);
- ImageNet-O: 2,000 OOD + 2,000 in-distribution images (the stratified AUPR bootstrap).

For each: seconds of `headline_estimators` (building the unit tables) and of `intervals_of` (the bootstrap, 1000
resamples), and the peak RSS growth of the process (`ru_maxrss`).

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/intervals_scale.py --clean-images 50000
"""

from __future__ import annotations

import argparse
import json
import resource
import time

import numpy as np
import pandas as pd

from hf_vitrobust.analysis.kinds import headline_estimators
from hf_vitrobust.analysis.uncertainty import UncertaintySettings, intervals_of
from hf_vitrobust.constants import STANDARD_CORRUPTIONS
from hf_vitrobust.data import get_benchmark


def _rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def imagenet_c_frame(clean_images: int, released: bool, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    difficulty = rng.normal(size=clean_images)
    rows = []
    names = np.asarray(STANDARD_CORRUPTIONS)
    corruption = np.repeat(names, 5 * clean_images)
    severity = np.tile(np.repeat(np.arange(1, 6), clean_images), len(names))
    image = np.tile(np.arange(clean_images), 5 * len(names))
    logit = 1.0 - 0.4 * severity + difficulty[image]
    wrong = rng.random(len(image)) > 1.0 / (1.0 + np.exp(-logit))
    files = np.char.add(
        np.char.add("n01440764/ILSVRC2012_val_", np.char.zfill(image.astype(str), 8)), ".JPEG"
    )
    ids = np.char.add(
        np.char.add(np.char.add(corruption, "/"), severity.astype(str)), np.char.add("/", files)
    )
    rows = {
        "sample_id": ids,
        "clean_sample_id": None if released else files,
        "label": np.zeros(len(image), dtype=np.int64),
        "prediction": wrong.astype(np.int64),
        "corruption": corruption,
        "severity": severity,
    }
    return pd.DataFrame(rows)


def imagenet_val_frame(images: int, ece_images: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 1000, images)
    correct = rng.random(images) < 0.8
    frame = pd.DataFrame(
        {
            "sample_id": np.char.add("val/", np.arange(images).astype(str)),
            "label": labels,
            "prediction": np.where(correct, labels, (labels + 1) % 1000),
        }
    )
    logits = rng.normal(size=(images, 1000)).astype(np.float32)
    logits[np.arange(images), frame["prediction"].to_numpy()] += 4.0
    frame["logits"] = [row for row in logits] if images <= ece_images else None
    return frame


def imagenet_o_frame(per_half: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    is_ood = np.r_[np.ones(per_half, bool), np.zeros(per_half, bool)]
    return pd.DataFrame(
        {
            "sample_id": np.arange(2 * per_half).astype(str),
            "label": np.where(is_ood, -1, 0),
            "ood_score": rng.normal(size=2 * per_half) + 0.6 * is_ood,
            "is_ood": is_ood,
        }
    )


def measure(name: str, benchmark: str, frame: pd.DataFrame, settings: UncertaintySettings) -> dict:
    before = _rss_mib()
    start = time.perf_counter()
    estimators = headline_estimators(get_benchmark(benchmark), frame)
    built = time.perf_counter()
    intervals = intervals_of({name: (estimator, None) for name, estimator in estimators.items()}, settings)
    done = time.perf_counter()
    record = {
        "case": name,
        "rows": len(frame),
        "build_s": round(built - start, 2),
        "bootstrap_s": round(done - built, 2),
        "peak_rss_growth_mib": round(_rss_mib() - before, 1),
        "intervals": {
            k: [round(v["estimate"], 3), round(v["low"], 3), round(v["high"], 3)]
            for k, v in intervals.items()
        },
    }
    print(json.dumps(record), flush=True)
    return record


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--clean-images", type=int, default=50_000)
    parser.add_argument("--ece-images", type=int, default=10_000)
    parser.add_argument("--num-resamples", type=int, default=1000)
    parser.add_argument("--json", help="write the records here")
    args = parser.parse_args()
    settings = UncertaintySettings(num_resamples=args.num_resamples)
    records = [
        measure("imagenet-val (Wilson)", "imagenet-val", imagenet_val_frame(50_000, 0), settings),
        measure(
            f"imagenet-val with logits ({args.ece_images} images, ECE bootstrap)",
            "imagenet-val",
            imagenet_val_frame(args.ece_images, args.ece_images),
            settings,
        ),
        measure("imagenet-o (2k + 2k, stratified AUPR)", "imagenet-o", imagenet_o_frame(2000), settings),
        measure(
            f"imagenet-c generated ({args.clean_images} clean images)",
            "imagenet-c",
            imagenet_c_frame(args.clean_images, released=False),
            settings,
        ),
        measure(
            f"imagenet-c released layout ({args.clean_images} clean images)",
            "imagenet-c",
            imagenet_c_frame(args.clean_images, released=True),
            settings,
        ),
    ]
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(records, handle, indent=1)


if __name__ == "__main__":
    main()
