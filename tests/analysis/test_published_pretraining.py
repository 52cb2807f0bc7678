# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Paul & Chen's pre-training study as published rows: ViT-B/16 pre-trained on ImageNet-21k against ImageNet-1k
only, on ImageNet-A, -R (top-1) and -O (AUPR), each with the paper as its source; the ImageNet-1k-only numbers
agree with the notebook rows they round."""

from __future__ import annotations

import pytest

from hf_vitrobust.analysis.published import published_numbers

IN21K, IN1K = "vit-b16-in21k-pretraining-study", "vit-b16-augreg-in1k"


def _study() -> dict[tuple[str, str], float]:
    rows = [r for r in published_numbers("paul-chen") if r.row_id.endswith("/paper-pretraining")]
    for row in rows:
        assert row.read_from == "paper-text" and row.source_url == "https://arxiv.org/abs/2105.07581"
        assert not row.source_repo and "Pre-training study" in row.where
    return {(r.model_key, r.benchmark): r.value for r in rows}


def test_the_six_pretraining_numbers_are_published_rows():
    assert _study() == {
        (IN21K, "imagenet-a"): 21.75,
        (IN21K, "imagenet-r"): 41.82,
        (IN21K, "imagenet-o"): 54.61,
        (IN1K, "imagenet-a"): 8.63,
        (IN1K, "imagenet-r"): 28.21,
        (IN1K, "imagenet-o"): 26.25,
    }


@pytest.mark.parametrize("benchmark", ["imagenet-a", "imagenet-r"])
def test_the_in1k_numbers_round_the_notebooks(benchmark):
    paper = _study()[(IN1K, benchmark)]
    [notebook] = [
        r
        for r in published_numbers("paul-chen")
        if r.row_id == f"paul-chen/{benchmark}/top1/{IN1K}" and r.read_from == "notebook-output"
    ]
    assert round(notebook.value, 2) == paper
