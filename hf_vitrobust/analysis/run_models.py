# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""One model of a run as the analysis reads it (`RunModel`): its metrics, probes and protocol from results.json,
its predictions read lazily and once (`RunModels` shares them between the intervals, the published numbers and the
findings), and its estimators: the headlines of its kind and the accuracy of a cell, a variant or a class mask."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..data import Benchmark
from ..metrics.estimators import Estimator, accuracy_estimator
from ..probes.spec import PROBES
from .kinds import get_benchmark_kind, headline_estimators
from .prediction_source import Predictions, PredictionsFile, as_predictions
from .protocols import default_protocol, resize_kernel, source_image_bytes
from .results import holds_result
from .scoring import clean_of_generated
from .uncertainty import cluster_keys, run_folder


@dataclass
class RunModel:
    """One model of one run (a merged results dict: keys may carry "@<run>"), with its predictions read lazily."""

    result: Mapping[str, Any]
    key: str
    #: benchmark -> its predictions (a file, or given in memory), None where the run has none
    _sources: dict[str, Predictions | None] = field(default_factory=dict, repr=False)

    @property
    def info(self) -> Mapping[str, Any]:
        return next((m for m in self.result.get("models") or [] if str(m.get("key")) == self.key), {})

    @property
    def spec(self) -> str:
        return str(self.info.get("spec") or self.key)

    @property
    def run_key(self) -> str:
        """The model's key in its own run (before `merge_results` renamed it)."""
        return str(self.info.get("run_key") or self.key)

    def metrics(self, benchmark: str) -> Mapping[str, Any] | None:
        found = ((self.result.get("metrics") or {}).get(self.key) or {}).get(benchmark)
        return found if found and holds_result(found) else None

    def probe(self, name: str) -> Mapping[str, Any] | None:
        found = ((self.result.get("probes") or {}).get(self.key) or {}).get(name)
        return found if isinstance(found, Mapping) and "skipped" not in found else None

    def probe_not_run(self, name: str) -> str | None:
        """Why the run recorded probe `name` as not run (it could not run on this model or its images), or None."""
        found = ((self.result.get("probes") or {}).get(self.key) or {}).get(name)
        return str(found["skipped"]) if isinstance(found, Mapping) and "skipped" in found else None

    def benchmark_info(self, benchmark: str) -> Mapping[str, Any]:
        return (self.result.get("benchmarks") or {}).get(benchmark) or {}

    def has(self, benchmark: str) -> bool:
        """Whether this model has results of a benchmark or a probe."""
        return (
            self.probe(benchmark) is not None
            if benchmark in PROBES.names()
            else bool(self.metrics(benchmark))
        )

    def source(self, benchmark: str) -> Predictions | None:
        """The model's predictions of a benchmark, not read yet (None when the run folder or the file is not
        there)."""
        if benchmark not in self._sources:
            folder = run_folder(self.result)
            relative = ((self.result.get("predictions") or {}).get(self.key) or {}).get(benchmark)
            path = None if folder is None or not relative else Path(folder) / relative
            self._sources[benchmark] = PredictionsFile(path) if path is not None and path.is_file() else None
        return self._sources[benchmark]

    def frame(self, benchmark: str) -> pd.DataFrame | None:
        """The model's predictions of a benchmark as one frame, read once (`Predictions.frame`; None when the run
        folder or the file is not there). A benchmark whose kind `reads_batches` is never read whole by the
        analysis."""
        source = self.source(benchmark)
        return None if source is None else source.frame()

    def predictions(self, benchmark: str) -> Predictions:
        """The model's predictions of a benchmark; LookupError (saying why) when the run has none."""
        if self.metrics(benchmark) is None:
            raise LookupError(f"no {benchmark} results in this run")
        source = self.source(benchmark)
        if source is None:
            raise LookupError(f"the {benchmark} predictions file of this run is not there")
        return source

    def _given(self, benchmark: Benchmark) -> pd.DataFrame | Predictions:
        """A benchmark's predictions as its kind reads them: in batches, or one frame (read once)."""
        if get_benchmark_kind(benchmark.kind).reads_batches:
            return self.source(benchmark.name)  # type: ignore[return-value]
        return self.frame(benchmark.name)  # type: ignore[return-value]

    def headlines(
        self, benchmark: Benchmark, protocol: Mapping[str, str] | None = None
    ) -> dict[str, Estimator]:
        """The model's headline estimators of a benchmark it has results of (LookupError otherwise); see
        `headlines_of`."""
        self.predictions(benchmark.name)
        return self.headlines_of(benchmark, protocol)

    def headlines_of(
        self, benchmark: Benchmark, protocol: Mapping[str, str] | None = None
    ) -> dict[str, Estimator]:
        """The model's headline estimators of a benchmark (`kinds.headline_estimators`, named as in
        results.json "summary") from its predictions file, under the benchmark's default protocol updated by
        `protocol`."""
        source = self.source(benchmark.name)
        if source is None:
            raise LookupError(f"the {benchmark.name} predictions file of this run is not there")
        given = self._given(benchmark)
        clean = clean_of_generated(
            given,
            self.frame(benchmark.clean) if benchmark.clean else None,
            bool(self.benchmark_info(benchmark.name).get("generated")),
        )
        return headline_estimators(
            benchmark, given, clean, {**default_protocol(benchmark), **(protocol or {})}
        )

    def accuracy(
        self,
        benchmark: Benchmark,
        *,
        metric: str = "top-1 %",
        class_mask: str | None = None,
        conditions: Mapping[str, str] | None = None,
    ) -> Estimator:
        """The model's top-1 (or "top-5 %") accuracy on a benchmark, per image (per clean image on a corruption
        cell), under a class mask ("hendrycks-200", or all classes) and on a cell or variant (`conditions`)."""
        conditions = conditions or {}
        cells = get_benchmark_kind(benchmark.kind).cells
        source = self.predictions(benchmark.name)
        if cells:  # that cell only is read
            _check_cell_named(conditions, metric, benchmark)
            frame = source.cell({column: conditions[column] for column in cells})
        else:
            frame = self.frame(benchmark.name)
        rows = _rows_of(conditions, metric, frame, benchmark)
        correct = _topk_correct(rows, metric, class_mask, benchmark)
        keys = cluster_keys(rows) if get_benchmark_kind(benchmark.kind).cells else None
        return accuracy_estimator(correct, rows["sample_id"].to_numpy() if keys is None else keys)

    def applied_protocol(self, benchmark: str) -> dict[str, str]:
        """The protocol parts the run used for this model on a benchmark: the preprocessing and interpolation it
        applied (a record from before the interpolation part has none: the default, "model-own", ran), and the
        benchmark's recorded parts (class mask, mCE, release encoding, image list)."""
        record = self.benchmark_info(benchmark).get("protocol") or {}
        parts = {
            part: str(record[part])
            for part in ("interpolation", "class_mask", "mce", "release_encoding", "image_list")
            if record.get(part)
        }
        given = (record.get("models") or {}).get(self.run_key) or {}
        if given.get("applied"):
            parts["preprocessing"] = str(given["applied"])
        if given.get("interpolation"):
            parts["interpolation"] = str(given["interpolation"])
        return parts

    def image_bytes(self, benchmark: str) -> str:
        """Whether the run read the release's files on a benchmark: the recorded `image_bytes`, else (a record from
        before it) what its recorded source gives (`protocols.source_image_bytes`)."""
        info = self.benchmark_info(benchmark)
        recorded = (info.get("protocol") or {}).get("image_bytes")
        return str(recorded) if recorded else source_image_bytes(info.get("source") or {})[0]

    def resize_kernel(self, benchmark: str) -> str | None:
        """The resize kernel this model saw on a benchmark (`protocols.resize_kernel` of its recorded
        preprocessing); None where the run recorded none."""
        record = self.benchmark_info(benchmark).get("protocol") or {}
        given = (record.get("models") or {}).get(self.run_key) or {}
        if given.get("kernel"):
            return str(given["kernel"])
        return resize_kernel(given["preprocessing"]) if given.get("preprocessing") else None


class RunModels:
    """The `RunModel` of each (merged-result index, model key) of some runs, made once, so that everything that
    reads a model's predictions (intervals, published numbers, findings) reads each file once. `frames`: model
    key -> benchmark -> predictions already in memory (the runner's), which are not read again."""

    def __init__(
        self,
        results: Sequence[Mapping[str, Any]],
        frames: Mapping[str, Mapping[str, pd.DataFrame | Predictions]] | None = None,
    ) -> None:
        self.results = results
        self.frames = frames or {}
        self._made: dict[tuple[int, str], RunModel] = {}

    def __call__(self, place: tuple[int, str]) -> RunModel:
        if place not in self._made:
            given = {name: as_predictions(p) for name, p in (self.frames.get(place[1]) or {}).items()}
            self._made[place] = RunModel(self.results[place[0]], place[1], given)  # type: ignore[arg-type]
        return self._made[place]


def _labelled(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[frame["label"] >= 0].reset_index(drop=True)


def _topk_correct(
    frame: pd.DataFrame, metric: str, class_mask: str | None, benchmark: Benchmark
) -> np.ndarray:
    """Whether each row's top-1 (top-5) prediction is its label, over all classes or under the 200-class mask."""
    labels = frame["label"].to_numpy()
    if (
        benchmark.class_subset is not None and benchmark.class_subset.groups
    ):  # ObjectNet: right within the group
        if metric == "top-5 %":
            raise LookupError(
                f"{benchmark.name} has no top-5: its protocol (imagenet-testbed) reports top-1 only"
            )
        return benchmark.class_subset.right_group(frame["subset_prediction"].to_numpy(), labels)
    masked = benchmark.class_subset is not None and class_mask == "hendrycks-200"
    if metric == "top-5 %":
        if not masked:
            return (np.stack(frame["top5"].to_numpy()) == labels[:, None]).any(axis=1)
        if "logits" not in frame or frame["logits"].isna().any():
            raise LookupError(
                "the top-5 under the 200-class mask needs the logits, which this run did not keep"
            )
        indices = np.asarray(benchmark.class_subset.class_indices)
        logits = np.stack(frame["logits"].to_numpy())[:, indices]
        top = indices[np.argsort(-logits, axis=1, kind="stable")[:, :5]]
        return (top == labels[:, None]).any(axis=1)
    column = "subset_prediction" if masked else "prediction"
    label_map = get_benchmark_kind(benchmark.kind).label_map
    if label_map is not None:
        return label_map(frame[column].to_numpy()) == labels
    return frame[column].to_numpy() == labels


def _check_cell_named(conditions: Mapping[str, str], metric: str, benchmark: Benchmark) -> None:
    """LookupError unless `conditions` name a cell of a benchmark whose kind reads accuracies per cell."""
    cells = get_benchmark_kind(benchmark.kind).cells
    if any(column not in conditions for column in cells):
        raise LookupError(f"{metric} of {benchmark.name} is read per cell: no {'/'.join(cells)} is named")


def _rows_of(
    conditions: Mapping[str, str], metric: str, frame: pd.DataFrame, benchmark: Benchmark
) -> pd.DataFrame:
    """The labelled predictions of a cell (its kind's `cells`: ImageNet-C's corruption and severity, or a variant),
    all of them otherwise."""
    kept = _labelled(frame)
    cells = get_benchmark_kind(benchmark.kind).cells
    if cells:
        _check_cell_named(conditions, metric, benchmark)
        for column in cells:
            values = kept[column]
            if pd.api.types.is_numeric_dtype(values):
                kept = kept[values.astype("Int64") == int(conditions[column])]
            else:
                kept = kept[values.astype(str) == str(conditions[column])]
    if "variant" in conditions:
        kept = kept[kept["variant"].astype(str) == conditions["variant"]]
    if kept.empty:
        named = ", ".join(f"{k}={v}" for k, v in conditions.items()) or "any sample"
        raise LookupError(f"this run has no {benchmark.name} predictions of {named}")
    return kept.reset_index(drop=True)


__all__ = ["RunModel", "RunModels"]
