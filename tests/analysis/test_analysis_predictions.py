# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""`prediction_rows` on constructed logits: the ImageNet-O score's sign (Hendrycks et al. 2021: anomaly score =
-max softmax over its 200 classes, OOD images positive), the subset argmax mapped to ImageNet-1k indices, the
frame top-5 lists best first, and the true-class probability of unlabelled samples."""

import math

import pytest
import torch

from hf_vitrobust.analysis.predictions import (
    PREDICTION_SCHEMA,
    prediction_rows,
    to_table,
    with_derived_columns,
)
from hf_vitrobust.data import NO_LABEL, get_benchmark
from hf_vitrobust.data.samples import Sample


def _samples(labels, metadata=None):
    return [
        Sample(torch.empty(0, dtype=torch.uint8), label, f"s{i}", dict((metadata or [{}] * len(labels))[i]))
        for i, label in enumerate(labels)
    ]


def test_imagenet_o_score_is_minus_the_max_softmax_over_its_200_classes():
    benchmark = get_benchmark("imagenet-o")
    classes = list(benchmark.class_subset.class_indices)
    outside = next(i for i in range(1000) if i not in classes)
    logits = torch.zeros(3, 1000)
    logits[0, classes[5]] = 12.0  # confident on an ImageNet-O class: in-distribution-like, low score
    logits[1, outside] = (
        50.0  # confident outside the 200 classes: the mask ignores it, flat over them: high score
    )
    logits[2, classes[0]] = 2.0
    columns = prediction_rows(
        benchmark, [0, 1, 2], _samples([NO_LABEL, NO_LABEL, 285]), logits, keep_logits=True
    )
    masked = logits[:, classes].softmax(-1).max(-1).values
    assert columns["ood_score"] == pytest.approx((-masked).tolist())
    assert columns["ood_score"][1] == pytest.approx(-1 / 200)  # uniform over the 200 classes
    assert columns["ood_score"][0] < columns["ood_score"][2] < columns["ood_score"][1]
    assert columns["prediction"] == [classes[5], outside, classes[0]]
    assert columns["subset_prediction"] == [classes[5], classes[0], classes[0]]


@pytest.mark.parametrize("name", ["imagenet-a", "imagenet-r"])
def test_subset_prediction_is_the_argmax_over_the_subset_in_imagenet_indices(name):
    benchmark = get_benchmark(name)
    classes = list(benchmark.class_subset.class_indices)
    outside = next(i for i in range(1000) if i not in classes)
    logits = torch.full((2, 1000), -5.0)
    logits[0, outside], logits[0, classes[199]] = 9.0, 4.0  # the 1000-way argmax is not a subset class
    logits[1, classes[3]], logits[1, classes[7]] = 1.0, 3.0
    columns = prediction_rows(
        benchmark, [0, 1], _samples([classes[199], classes[3]]), logits, keep_logits=True
    )
    assert columns["prediction"] == [outside, classes[7]]
    assert columns["subset_prediction"] == [classes[199], classes[7]]
    assert columns["top5"][0][:2] == [outside, classes[199]]
    assert columns["logits"][0] == logits[0].tolist()
    assert columns["ood_score"] == [None, None]


def test_frame_top5_lists_are_best_first_and_frame_zero_stands_for_the_sequence():
    benchmark = get_benchmark("imagenet-p")
    logits = torch.zeros(2, 3, 1000)
    for n in range(2):
        for t in range(3):
            for rank, cls in enumerate([10 * n + t, 500 + t, 7, 900 - n, 42]):
                logits[n, t, cls] = 10.0 - rank  # class 10n+t best, then 500+t, 7, 900-n, 42
    samples = _samples([3, 4], [{"perturbation": "rotate", "difficulty": 1}] * 2)
    columns = prediction_rows(benchmark, [0, 1], samples, logits, keep_logits=False)
    assert columns["frame_top5"] == [
        [[10 * n + t, 500 + t, 7, 900 - n, 42] for t in range(3)] for n in range(2)
    ]
    assert columns["frame_predictions"] == [[0, 1, 2], [10, 11, 12]]
    assert columns["prediction"] == [0, 10] and columns["top5"][1] == [10, 500, 7, 899, 42]
    assert columns["perturbation"] == ["rotate", "rotate"] and columns["logits"] == [None, None]


def test_true_probability_is_nan_without_a_label_and_the_softmax_of_the_label_otherwise():
    benchmark = get_benchmark("imagenet-val")
    logits = torch.randn(3, 1000, generator=torch.Generator().manual_seed(0))
    columns = prediction_rows(benchmark, [0, 1, 2], _samples([NO_LABEL, 285, 0]), logits, keep_logits=False)
    probabilities = logits.softmax(-1)
    assert math.isnan(columns["true_probability"][0])
    assert columns["true_probability"][1:] == pytest.approx(
        [float(probabilities[1, 285]), float(probabilities[2, 0])]
    )
    assert columns["confidence"] == pytest.approx(probabilities.max(-1).values.tolist())
    assert columns["label"] == [NO_LABEL, 285, 0] and columns["logits"] == [None] * 3
    assert columns["subset_prediction"] == columns["prediction"]  # no subset: the plain argmax


def test_the_clean_sample_id_column_and_old_chunks_without_it():
    benchmark = get_benchmark("imagenet-c")
    samples = _samples(
        [1, 2],
        [
            {"corruption": "fog", "severity": 3, "generated": True, "clean_sample_id": "n0/a.JPEG"},
            {"corruption": "fog", "severity": 3},
        ],
    )
    samples = [
        Sample(s.image, s.label, i, s.metadata)
        for s, i in zip(samples, ["fog/3/n0/a.JPEG", "fog/3/row-1"], strict=True)
    ]
    columns = prediction_rows(benchmark, [0, 1], samples, torch.zeros(2, 1000), keep_logits=False)
    table = to_table(columns)
    assert table.column("clean_sample_id").to_pylist() == ["n0/a.JPEG", None]
    assert with_derived_columns(table) is table
    # A chunk of a run folder written before the column: derived from the id, for generated samples only.
    old = table.drop_columns(["clean_sample_id"])
    upgraded = with_derived_columns(old)
    assert upgraded.schema.names == PREDICTION_SCHEMA.names and upgraded.equals(table)
    empty = to_table({name: [] for name in PREDICTION_SCHEMA.names}).drop_columns(["clean_sample_id"])
    assert with_derived_columns(empty).schema.names == PREDICTION_SCHEMA.names
