# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The quantities the papers' findings read (`analysis.findings`): builders of a model's quantity as an `Estimator`
over its units (a top-1 of a benchmark, a headline of its kind, a mean over corruptions, a probe's per-image
value), raising `MissingData` with the reason when a model lacks what the quantity needs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd

from ..data import BENCHMARKS
from ..metrics.estimators import UNIT_RANGE, Estimator, mean_estimator
from ..probes.spec import ProbeFinding
from .headlines import headline_name
from .kinds import get_benchmark_kind
from .protocols import protocol_parts
from .run_models import RunModel


class MissingData(LookupError):
    """A model lacks what a finding reads; the message says what."""


def accuracy_quantity(benchmark: str, **options: Any) -> Callable[[RunModel], Estimator]:
    """A top-1 of `RunModel.accuracy` (options: class_mask, conditions: a cell or a variant)."""
    return lambda model: model.accuracy(BENCHMARKS.get(benchmark), **options)


def headline_quantity(
    benchmark: str, quantity: str, choice: str | None = None
) -> Callable[[RunModel], Estimator]:
    """The estimator of a headline `quantity` of `benchmark` (scored under the protocol `choice`, where it has one),
    as its kind builds it (`BenchmarkKind.estimators`; its units: clean images, OOD and in-distribution images,
    foreground images, ...), by `RunModel.headlines`. The quantity must be one its kind declares
    (`BenchmarkKind.quantities`)."""
    kind = get_benchmark_kind(BENCHMARKS.get(benchmark).kind)
    if quantity not in kind.quantities:
        raise ValueError(
            f"{benchmark} ({kind.name}) has no headline quantity {quantity!r}; its kind's: {list(kind.quantities)}."
        )
    name = headline_name(benchmark, quantity, choice)
    part = next((p for p in protocol_parts(BENCHMARKS.get(benchmark)) if p in ("class_mask", "mce")), None)
    protocol = {part: choice} if choice and part else None

    def build(model: RunModel) -> Estimator:
        found = model.headlines(BENCHMARKS.get(benchmark), protocol)
        if name not in found:
            raise MissingData(f"no {name} in this run")
        return found[name]

    return build


def mean_over_corruptions(benchmark: str, severity: str) -> Callable[[RunModel], Estimator]:
    """Top-1 % at one severity averaged over the run's corruptions, per clean image (each image's share of the
    corruptions it survives; the images every corruption holds), bootstrapped over the images: Paul & Chen's
    Fig. 2 quantity, the mean of the per-corruption accuracies."""

    def build(model: RunModel) -> Estimator:
        data = BENCHMARKS.get(benchmark)
        corruptions = sorted(model.predictions(benchmark).unique("corruption"))
        per_corruption = {}
        for corruption in corruptions:
            found = model.accuracy(data, conditions={"corruption": corruption, "severity": severity})
            per_corruption[corruption] = pd.Series(found.data["correct"], index=found.keys)
        correct = pd.DataFrame(per_corruption).dropna()
        if correct.empty:
            raise MissingData(f"no {benchmark} image holds every corruption at severity {severity}")
        return mean_estimator(
            correct.mean(axis=1).to_numpy(), correct.index.to_numpy(), scale=100.0, value_range=UNIT_RANGE
        )

    return build


def probe_quantity(probe: str, finding: ProbeFinding) -> Callable[[RunModel], Estimator]:
    """A probe finding's quantity of one model: the mean over its images (or the finding's other units) of the
    probe's per-image values."""

    def build(model: RunModel) -> Estimator:
        found = model.probe(probe)
        if found is None:
            raise MissingData(f"no {probe} probe in this run")
        try:
            keys, values = finding.per_image(found)
        except LookupError as error:
            raise MissingData(f"{probe}: {error}") from None
        return mean_estimator(values, keys, unit=finding.unit, scale=finding.scale)

    return build


__all__ = [
    "MissingData",
    "accuracy_quantity",
    "headline_quantity",
    "mean_over_corruptions",
    "probe_quantity",
]
