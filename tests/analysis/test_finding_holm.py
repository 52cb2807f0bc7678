# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Holm's correction gates a finding's verdict: a difference whose paired interval clears 0 "holds" when it is
checked alone, and is "not resolved" when checked with three others of the same strength, since Holm's adjusted
p-value (Holm 1979: the i-th smallest of m p-values times m - i + 1, made monotone) then exceeds alpha."""

from __future__ import annotations

import numpy as np
import pytest
from reproduction_runs import Model, accuracy_frame, write_run
from scipy.stats import binomtest

from hf_vitrobust.analysis.findings import Finding, check_findings
from hf_vitrobust.analysis.results import load_results, merge_results
from hf_vitrobust.analysis.run_models import RunModel
from hf_vitrobust.analysis.uncertainty import UncertaintySettings
from hf_vitrobust.data import BENCHMARKS

SETTINGS = UncertaintySettings(confidence_level=0.95, num_resamples=1000, seed=2)
N = 200
ONLY_VIT, ONLY_CNN = 15, 4  # the discordant images: right for one model only


def _finding(index: int) -> Finding:
    return Finding(
        name=f"test-top1-{index}",
        paper="paul-chen",
        claim="ViT above the CNN on clean top-1",
        source="a test",
        quantity="imagenet-val top-1 %",
        direction=+1,
        data="imagenet-val",
        estimator=lambda model: model.accuracy(BENCHMARKS.get("imagenet-val")),
    )


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    both = np.arange(N) < 100  # 100 images right for both
    vit = both | ((np.arange(N) >= 100) & (np.arange(N) < 100 + ONLY_VIT))
    cnn = both | ((np.arange(N) >= 150) & (np.arange(N) < 150 + ONLY_CNN))
    folder = write_run(
        tmp_path_factory.mktemp("holm") / "pair",
        [
            Model("google/vit-base-patch16-224", {"imagenet-val": accuracy_frame(vit)}),
            Model("timm/resnet50.a1_in1k", {"imagenet-val": accuracy_frame(cnn)}),
        ],
    )
    result = merge_results(load_results([folder]))[0]
    return [RunModel(result, model["key"]) for model in result["models"]]


def test_holm_gates_the_verdict(pair):
    vit, cnn = pair
    # McNemar's exact p of 15 against 4 discordant images, by the binomial test: 0.0192.
    p = binomtest(ONLY_CNN, ONLY_VIT + ONLY_CNN, 0.5).pvalue
    assert 0.01 < p < 0.05 / 2

    [alone] = check_findings([vit], [cnn], [_finding(0)], SETTINGS)
    assert alone.difference["estimate"] == pytest.approx(100 * (ONLY_VIT - ONLY_CNN) / N, abs=1e-12)
    assert alone.difference["low"] > 0
    assert alone.p_value == pytest.approx(p, rel=1e-9) and alone.p_holm == pytest.approx(p, rel=1e-9)
    assert alone.verdict == "holds"

    four = check_findings([vit], [cnn], [_finding(i) for i in range(4)], SETTINGS)
    for check in four:
        assert check.difference["low"] > 0, "the interval alone would let the finding hold"
        assert check.p_value == pytest.approx(p, rel=1e-9)
        assert check.p_holm == pytest.approx(4 * p, rel=1e-9) and check.p_holm > 0.05
        assert check.verdict == "not resolved"
