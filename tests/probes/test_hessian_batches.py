# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The Hessian probe's per-batch statistics and their interval over batches (`probes.hessian_statistics`), its
class-balanced batches in the runner (the same batches and numbers for 1 and 2 processes), and Park & Kim's two
Hessian findings on constructed pairs where each holds and where it is reversed."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch
from probe_models import PREPROCESSING, random_images
from reproduction_runs import Model, write_run
from scipy import stats
from torch import nn

from hf_vitrobust.analysis.findings import check_findings, get_finding
from hf_vitrobust.analysis.results import load_results, merge_results
from hf_vitrobust.analysis.run_models import RunModel
from hf_vitrobust.analysis.uncertainty import UncertaintySettings
from hf_vitrobust.evaluation.probe_images import select_probe_places
from hf_vitrobust.evaluation.suite import SuiteProbe
from hf_vitrobust.metrics.intervals import proportion_interval
from hf_vitrobust.models import Classifier
from hf_vitrobust.probes.hessian_statistics import (
    batch_interval,
    batch_negative_shares,
    batch_top_magnitudes,
    magnitude_eigenvalues,
)
from hf_vitrobust.probes.spec import PROBES

SETTINGS = UncertaintySettings(confidence_level=0.95, num_resamples=500, seed=3)


def _record(eigenvalues: np.ndarray, method: str = "pyhessian", **extra) -> dict:
    """A merged Hessian record of per-batch eigenvalues (batches, top_k), keyed by batch."""
    batches = len(eigenvalues)
    return {
        "probe": "hessian_spectrum",
        "method": method,
        "eigenvalues": eigenvalues.tolist(),
        "bottom_eigenvalues": np.full_like(eigenvalues, np.nan).tolist(),
        "batch_sizes": [128] * batches,
        "batch_seeds": [1000 + b for b in range(batches)],
        "regularizer": "sum-of-norms",
        "weight_decay": 0.05,
        "augmentation": None,
        "batches": "class-balanced",
        "benchmark": "imagenet-train",
        **extra,
    }


def _spectra(
    batches: int, magnitude: float, negative: float, seed: int, clustered: bool = False
) -> np.ndarray:
    """(batches, 5) eigenvalues by magnitude: |λ| ~ magnitude x U(0.5, 1), each negative with probability
    `negative` (clustered: all five of a batch share one sign)."""
    rng = np.random.default_rng(seed)
    sizes = -np.sort(-magnitude * rng.uniform(0.5, 1.0, (batches, 5)), axis=1)
    flips = rng.random((batches, 1) if clustered else (batches, 5)) < negative
    return np.where(flips, -sizes, sizes)


def test_per_batch_statistics_are_their_definitions():
    lanczos = _record(np.array([[5.0, 2.0], [1.0, 0.5]]), method="lanczos")
    lanczos["bottom_eigenvalues"] = [
        [-3.0, -1.0],
        [-4.0, 0.5],
    ]  # the second batch's 0.5 is found at both ends
    assert np.array_equal(magnitude_eigenvalues(lanczos), [[5.0, -3.0], [-4.0, 1.0]])
    assert batch_top_magnitudes(lanczos).tolist() == [5.0, 4.0]
    assert batch_negative_shares(lanczos).tolist() == [0.5, 0.5]
    pyhessian = _record(np.array([[4.0, -3.0, np.nan], [-2.0, -1.0, 0.5]]))
    assert batch_negative_shares(pyhessian) == pytest.approx([0.5, 2 / 3])
    assert batch_top_magnitudes(pyhessian).tolist() == [4.0, 2.0]


def test_the_interval_over_batches_covers_a_known_share():
    """Over 20 constructed runs of 60 batches with a true negative share of 0.3, the 95% bootstrap interval over
    batches covers 0.3 in nearly all (binomial: at least 16 of 20 is far inside its 95% range), and lies close to
    the Student-t interval over the batches' shares computed here."""
    covered = 0
    for seed in range(20):
        shares = batch_negative_shares(_record(_spectra(60, 1.0, 0.3, seed)))
        found = batch_interval(shares, 0.95)
        assert found["estimate"] == pytest.approx(shares.mean())
        covered += found["low"] <= 0.3 <= found["high"]
        half = stats.t.ppf(0.975, len(shares) - 1) * shares.std(ddof=1) / np.sqrt(len(shares))
        assert found["high"] - found["low"] == pytest.approx(2 * half, rel=0.25)
    assert covered >= 16


def test_eigenvalues_of_one_batch_are_one_unit():
    """Where a batch's five eigenvalues share their sign, the interval over batches is wider than a Wilson
    interval on the pooled counts, which would take the five as independent draws."""
    shares = batch_negative_shares(_record(_spectra(80, 1.0, 0.3, 5, clustered=True)))
    found = batch_interval(shares, 0.95)
    pooled = proportion_interval(round(float(shares.sum()) * 5), 5 * len(shares), 0.95, "wilson")
    assert (found["high"] - found["low"]) > 1.6 * (pooled.high - pooled.low)


def _pair(tmp_path, vit: dict, cnn: dict) -> list[RunModel]:
    models = [Model("vit-model", probes={"hessian": vit}), Model("cnn-model", probes={"hessian": cnn})]
    result = merge_results(load_results([write_run(tmp_path, models)]))[0]
    return [RunModel(result, model["key"]) for model in result["models"]]


def _verdicts(tmp_path, vit: dict, cnn: dict) -> dict[str, str]:
    names = ("hessian-magnitude", "hessian-negative-share")
    checks = check_findings(
        *([m] for m in _pair(tmp_path, vit, cnn)), [get_finding(n) for n in names], SETTINGS
    )
    return {check.finding.name: check.verdict for check in checks}


def test_the_hessian_findings_hold_and_reverse(tmp_path):
    # Park & Kim's sides: the ViT's eigenvalues smaller in magnitude, more of them negative.
    flat_negative = _record(_spectra(40, 2.0, 0.4, 1))
    sharp_positive = _record(_spectra(40, 20.0, 0.05, 2))
    holds = _verdicts(tmp_path / "holds", flat_negative, sharp_positive)
    assert holds == {"hessian-magnitude": "holds", "hessian-negative-share": "holds"}
    reversed_ = _verdicts(tmp_path / "reversed", sharp_positive, flat_negative)
    assert reversed_ == {"hessian-magnitude": "reversed", "hessian-negative-share": "reversed"}
    # Batches drawn another way, or another eigenvalue method: not the same measurement, not checked.
    other = _verdicts(tmp_path / "other", {**flat_negative, "batches": "random"}, sharp_positive)
    assert set(other.values()) == {"not checked"}


def test_the_hessian_findings_pair_batches_by_their_key(tmp_path):
    vit = _record(_spectra(30, 2.0, 0.4, 3))
    cnn = _record(_spectra(30, 20.0, 0.05, 4), batch_seeds=[5000 + b for b in range(30)])
    assert set(_verdicts(tmp_path, vit, cnn).values()) == {"not checked"}


# --------------------------------------------------------------------------------- the runner's class-balanced batches
class _Tiny(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.net = nn.Sequential(
            nn.AdaptiveAvgPool2d(2), nn.Flatten(), nn.Linear(12, 6), nn.Tanh(), nn.Linear(6, 4)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


def test_the_same_batches_and_numbers_for_one_and_two_processes():
    """24 rows of 4 classes, class-sorted, as the benchmark's predictions frame: the probe's selection cuts them into
    batches of 4 distinct classes; a frame written in another order (other chunks, processes or forward batch
    sizes) gives the same batches, and the chunks run by two ranks (even and odd) merge to the single process's
    record."""
    labels = np.repeat(np.arange(4), 6)
    frame = pd.DataFrame(
        {
            "sample_id": [f"row-{i:03d}" for i in range(24)],
            "label": labels,
            "prediction": labels,
            "shard": 0,
            "position": np.arange(24),
        }
    )
    probe = SuiteProbe("hessian", "imagenet-train", 16, {"batch_size": 4, "top_k": 2, "iterations": 4})
    places = select_probe_places([probe], {"imagenet-train": frame}, seed=5)["hessian"]
    shuffled = frame.sample(frac=1.0, random_state=1).reset_index(drop=True)
    again = select_probe_places([probe], {"imagenet-train": shuffled}, seed=5)["hessian"]
    assert again == places  # each row keeps its (shard, position) wherever the frame lists it
    batches = [places[i : i + 4] for i in range(0, 16, 4)]
    for batch in batches:
        assert sorted(labels[position] for _, position, _ in batch) == [0, 1, 2, 3]
    task = PROBES["hessian"]
    params = task.check_params(probe.params)
    classifier = Classifier(_Tiny().double(), PREPROCESSING, name="tiny").eval()
    pixels = random_images(24, seed=2).double()

    def run(batch):
        rows = [position for _, position, _ in batch]
        sample_ids = torch.tensor([int(frame["sample_id"][r][4:]) for r in rows])
        return task.run(classifier, pixels[rows], torch.as_tensor(labels[rows]), sample_ids, 5, params)

    one = task.merge([run(batch) for batch in batches])
    by_rank = {i: run(batch) for rank in (1, 0) for i, batch in enumerate(batches) if i % 2 == rank}
    two = task.merge([by_rank[i] for i in range(len(batches))])
    assert one == two
    assert one["batches"] == "class-balanced" and len(one["batch_seeds"]) == 4
    assert one["intervals"]["unit"] == "mini-batch"
    assert task.table(one)["batches drawn"] == "class-balanced"
