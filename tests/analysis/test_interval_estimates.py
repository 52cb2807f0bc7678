# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Every interval of results.json "intervals" belongs to its headline: at its estimate it is the metric its name
says, recomputed here from the chosen predictions by the metric's own definition, for every benchmark kind
(`analysis.kinds.BENCHMARK_KINDS`) and under both class masks of ImageNet-A/R.

The expectations are written out by hand from the papers' definitions (no function of the package computes them):
top-1 and ECE (Guo et al. 2017, 15 equal-width bins), ImageNet-A/R's top-1 under the 200-class mask or over all
1000 classes (Hendrycks et al. 2021; Paul & Chen's notebooks), ImageNet-C's AlexNet-normalised mCE, relative mCE,
unnormalised mean error, mean top-1 and severity-5 top-1 (Hendrycks & Dietterich 2019), ImageNet-P's flip
probability (ImageNet-P/test.py: noise sequences against their first frame), ImageNet-O's AUPR (average precision,
OOD positive) and ImageNet-9's BG-gap (Xiao et al. 2021), paired by foreground image."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pandas as pd
import pytest
from reproduction_runs import Model, write_run

from hf_vitrobust.analysis.analyze import analyze
from hf_vitrobust.analysis.kinds import BENCHMARK_KINDS
from hf_vitrobust.analysis.results import load_results, merge_results
from hf_vitrobust.analysis.uncertainty import UncertaintySettings

SETTINGS = UncertaintySettings(confidence_level=0.95, num_resamples=60, seed=1)
SPEC = "timm/resnet18.a1_in1k"  # no published numbers: the analysis computes intervals only

# AlexNet's top-1 errors on ImageNet-C, severities 1-5, from the table of hendrycks/robustness's README (commit
# 76d93933, also hard-coded in AugMix's imagenet.py), and its clean error, 43.5 % (Hendrycks & Dietterich 2019).
ALEXNET = {
    "gaussian_noise": (0.69528, 0.82542, 0.93554, 0.98138, 0.99452),
    "contrast": (0.64548, 0.76150, 0.88874, 0.97760, 0.99270),
}
ALEXNET_CLEAN = 0.435
WNID = "n01440764"


def _clean_frame(n: int, rng: np.random.Generator) -> pd.DataFrame:
    """imagenet-val: 5 classes of logits, label = the image's index mod 5; the prediction is the argmax."""
    logits = rng.normal(0.0, 1.5, size=(n, 5))
    labels = np.arange(n) % 5
    return pd.DataFrame(
        {
            "sample_id": [f"{WNID}/ILSVRC2012_val_{i:08d}.JPEG" for i in range(n)],
            "clean_sample_id": [None] * n,
            "label": labels,
            "prediction": logits.argmax(axis=1),
            "top5": [list(np.argsort(-row)) for row in logits],
            "logits": [row.tolist() for row in logits],
        }
    )


def _corruption_frame(wrong: dict[tuple[str, int], np.ndarray]) -> pd.DataFrame:
    """A released ImageNet-C folder: ids <corruption>/<severity>/<wnid>/<file>, the clean images of imagenet-val."""
    rows = []
    for (corruption, severity), flags in wrong.items():
        for i, is_wrong in enumerate(flags):
            rows.append(
                {
                    "sample_id": f"{corruption}/{severity}/{WNID}/ILSVRC2012_val_{i:08d}.JPEG",
                    "clean_sample_id": None,
                    "label": 3,
                    "prediction": 4 if is_wrong else 3,
                    "corruption": corruption,
                    "severity": severity,
                }
            )
    return pd.DataFrame(rows)


def _sequence_frame(tops: dict[str, list[list[int]]]) -> pd.DataFrame:
    """ImageNet-P: per perturbation, one top-1 class per frame of each sequence (top-5 padded with 900+)."""
    rows = []
    for perturbation, sequences in tops.items():
        for i, frames in enumerate(sequences):
            rows.append(
                {
                    "sample_id": f"{perturbation}/{WNID}/seq_{i}.mp4",
                    "clean_sample_id": f"{WNID}/ILSVRC2012_val_{i:08d}.JPEG",
                    "label": 3,
                    "prediction": frames[0],
                    "perturbation": perturbation,
                    "difficulty": 1,
                    "frame_top5": [[top, 901, 902, 903, 904] for top in frames],
                }
            )
    return pd.DataFrame(rows)


def _ood_frame(scores: np.ndarray, is_ood: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "sample_id": [f"{'ood' if o else 'val'}/{i:05d}.JPEG" for i, o in enumerate(is_ood)],
            "clean_sample_id": [None] * len(scores),
            "label": np.full(len(scores), -1),
            "prediction": np.zeros(len(scores), dtype=np.int64),
            "is_ood": is_ood,
            "ood_score": scores,
        }
    )


def _background_frame(right: dict[str, np.ndarray]) -> pd.DataFrame:
    """ImageNet-9: every image a dog (superclass 0); right = ImageNet class 151 (Chihuahua, a dog in Xiao et al.'s
    in_to_in9.json), wrong = class 0 (tench, their fish). The same foreground files in every variant."""
    rows = []
    for variant, flags in right.items():
        for i, ok in enumerate(flags):
            rows.append(
                {
                    "sample_id": f"{variant}/val/00_dog/fg_{i:04d}.JPEG",
                    "clean_sample_id": None,
                    "label": 0,
                    "prediction": 151 if ok else 0,
                    "variant": variant,
                }
            )
    return pd.DataFrame(rows)


def _masked_frame(label: np.ndarray, prediction: np.ndarray, subset: np.ndarray, prefix: str) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "sample_id": [f"{prefix}/{i:05d}.JPEG" for i in range(len(label))],
            "clean_sample_id": [None] * len(label),
            "label": label,
            "prediction": prediction,
            "subset_prediction": subset,
        }
    )


def _ece(logits: np.ndarray, labels: np.ndarray, bins: int = 15) -> float:
    """Guo et al.'s ECE, percent: bins (k/15, (k+1)/15], sum over bins of |accuracy - confidence| x share."""
    shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
    probabilities = shifted / shifted.sum(axis=1, keepdims=True)
    confidence = probabilities.max(axis=1)
    correct = probabilities.argmax(axis=1) == labels
    total = 0.0
    for k in range(bins):
        inside = (confidence > k / bins) & (confidence <= (k + 1) / bins)
        if inside.any():
            total += abs(correct[inside].mean() - confidence[inside].mean()) * inside.mean()
    return 100.0 * total


def _average_precision(scores: np.ndarray, positive: np.ndarray) -> float:
    """Precision at the rank of each positive (scores all distinct, highest first), averaged over the positives."""
    order = np.argsort(-scores)
    hits = positive[order]
    precision_at = np.cumsum(hits) / np.arange(1, len(hits) + 1)
    return float(precision_at[hits].mean())


@pytest.fixture(scope="module", params=["hendrycks-200", "paul-chen-1000"])
def analysed(request, tmp_path_factory):
    """One model with predictions of every kind of benchmark; ImageNet-A/R recorded under the class mask given."""
    mask = request.param
    rng = np.random.default_rng(7)
    n = 6
    clean = _clean_frame(n, rng)
    # Clean error 2/6 on the clean images of the corruptions (not 1/2, so that error and accuracy differ).
    clean["prediction"] = np.where(np.arange(n) < 2, (clean["label"] + 1) % 5, clean["label"])
    cells = {
        (c, s): rng.random(n) < (0.15 * s if c != "contrast" else 0.1 + 0.12 * s)
        for c in ("gaussian_noise", "contrast", "speckle_noise")
        for s in (1, 2, 3, 4, 5)
    }
    cells["contrast", 5][:] = [True, True, True, True, True, False]  # some cell must not be all wrong
    sequences = {
        # gaussian_noise (a noise sequence) is compared with its first frame, rotate frame by frame.
        "gaussian_noise": [[1, 1, 2, 2, 1], [3, 3, 3, 3, 3], [5, 6, 6, 6, 6]],
        "rotate": [[1, 2, 1, 2, 1], [3, 3, 3, 4, 4], [7, 7, 7, 7, 7]],
    }
    scores = rng.permutation(40).astype(np.float64) / 7.0
    is_ood = np.zeros(40, dtype=bool)
    is_ood[rng.choice(40, 15, replace=False)] = True
    background = {
        "original": np.array([1, 1, 1, 1, 1, 0, 1, 1], dtype=bool),
        "mixed_same": np.array([1, 1, 1, 0, 1, 0, 1, 1], dtype=bool),
        "mixed_rand": np.array([1, 0, 0, 0, 1, 0, 1, 0], dtype=bool),
    }
    masked = {}
    for name in ("imagenet-a", "imagenet-r"):
        label = rng.integers(0, 1000, 30)
        prediction = np.where(rng.random(30) < 0.3, label, (label + 1) % 1000)
        # Under the mask, 8 more images are right (their wrong class was outside the 200) and 2 fewer.
        subset = prediction.copy()
        subset[np.flatnonzero(prediction != label)[:8]] = label[np.flatnonzero(prediction != label)[:8]]
        subset[np.flatnonzero(prediction == label)[:2]] = (
            label[np.flatnonzero(prediction == label)[:2]] + 2
        ) % 1000
        masked[name] = _masked_frame(label, prediction, subset, name)
    frames = {
        "imagenet-val": clean,
        "imagenet-c": _corruption_frame(cells),
        "imagenet-p": _sequence_frame(sequences),
        "imagenet-o": _ood_frame(scores, is_ood),
        "imagenet-9": _background_frame(background),
        **masked,
    }
    info = {name: {"protocol": {"class_mask": mask, "models": {}}} for name in ("imagenet-a", "imagenet-r")}
    folder = write_run(tmp_path_factory.mktemp(mask) / "run", [Model(SPEC, frames)], benchmark_info=info)
    results = merge_results(load_results([folder]))
    analysis = analyze(results, SETTINGS)
    key = results[0]["models"][0]["key"]
    return mask, frames, cells, sequences, analysis.intervals[key]


def _expected(mask, frames, cells, sequences) -> dict[str, float]:
    """Every headline of the run, by its definition."""
    clean = frames["imagenet-val"]
    labels = clean["label"].to_numpy()
    clean_error = float(np.mean(clean["prediction"].to_numpy() != labels))
    error = {cell: float(np.mean(flags)) for cell, flags in cells.items()}
    severities = (1, 2, 3, 4, 5)
    ce = {c: 100 * sum(error[c, s] for s in severities) / sum(ALEXNET[c]) for c in ALEXNET}
    relative = {
        c: 100
        * sum(error[c, s] - clean_error for s in severities)
        / sum(a - ALEXNET_CLEAN for a in ALEXNET[c])
        for c in ALEXNET
    }
    corruptions = ("gaussian_noise", "contrast", "speckle_noise")
    flips = {
        "gaussian_noise": [np.mean([f != seq[0] for f in seq[1:]]) for seq in sequences["gaussian_noise"]],
        "rotate": [np.mean([b != a for a, b in pairwise(seq)]) for seq in sequences["rotate"]],
    }
    ood = frames["imagenet-o"]
    background = frames["imagenet-9"]
    right = background["prediction"] == 151

    expected = {
        "imagenet-val top-1 %": 100 * float(np.mean(clean["prediction"].to_numpy() == labels)),
        "imagenet-val ECE %": _ece(np.stack(clean["logits"].to_numpy()), labels),
        "imagenet-c mean top-1 %": float(np.mean([100 * (1 - e) for e in error.values()])),
        "imagenet-c mCE % (alexnet-15)": float(np.mean(list(ce.values()))),
        "imagenet-c mCE % (unnormalized-19)": 100
        * float(np.mean([np.mean([error[c, s] for s in severities]) for c in corruptions])),
        "imagenet-c relative mCE %": float(np.mean(list(relative.values()))),
        "imagenet-c severity-5 mean top-1 %": float(np.mean([100 * (1 - error[c, 5]) for c in corruptions])),
        "imagenet-p mFR unnormalised %": 100 * float(np.mean([np.mean(v) for v in flips.values()])),
        "imagenet-o AUPR %": 100
        * _average_precision(ood["ood_score"].to_numpy(), ood["is_ood"].to_numpy(dtype=bool)),
        "imagenet-9 BG-gap (points)": 100
        * float(
            right[background["variant"] == "mixed_same"].mean()
            - right[background["variant"] == "mixed_rand"].mean()
        ),
    }
    column = "subset_prediction" if mask == "hendrycks-200" else "prediction"
    for name in ("imagenet-a", "imagenet-r"):
        frame = frames[name]
        expected[f"{name} top-1 % ({mask})"] = 100 * float(np.mean(frame[column] == frame["label"]))
    return expected


def test_every_interval_is_its_headline_at_the_estimate(analysed):
    mask, frames, cells, sequences, intervals = analysed
    expected = _expected(mask, frames, cells, sequences)
    assert sorted(intervals) == sorted(expected)
    for name, value in expected.items():
        assert intervals[name]["estimate"] == pytest.approx(value, rel=1e-12, abs=1e-12), name


def test_the_class_masks_give_different_numbers(analysed):
    """The fixture's predictions tell the masks apart, so a headline read under the wrong one would fail above."""
    _, frames, *_ = analysed
    for name in ("imagenet-a", "imagenet-r"):
        frame = frames[name]
        masked = np.mean(frame["subset_prediction"] == frame["label"])
        assert masked != np.mean(frame["prediction"] == frame["label"])


def test_intervals_are_resampled_by_the_units_of_their_kind(analysed):
    """The BG-gap pairs both backgrounds of one foreground (8 foreground images, not 16 samples); ImageNet-C and
    -P resample clean images; accuracies and AUPR images."""
    *_, intervals = analysed
    gap = intervals["imagenet-9 BG-gap (points)"]
    assert (gap["unit"], gap["num_units"]) == ("foreground image", 8)
    assert gap["note"] is None or "independent" not in gap["note"]
    for name in (
        "imagenet-c mCE % (alexnet-15)",
        "imagenet-c relative mCE %",
        "imagenet-p mFR unnormalised %",
    ):
        assert (intervals[name]["unit"], intervals[name]["num_units"]) == (
            "clean image",
            6 if "-c" in name else 3,
        )
    assert intervals["imagenet-o AUPR %"]["num_units"] == 40


def test_every_kind_is_covered():
    """The run above holds a benchmark of every registered kind (a new kind needs its line here)."""
    covered = {"clean", "masked", "corruption", "perturbation", "ood", "background"}
    assert set(BENCHMARK_KINDS.names()) == covered
