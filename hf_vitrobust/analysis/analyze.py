# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Everything computed from what runs recorded, computed once: `analyze(results) -> Analysis`.

An `Analysis` holds the intervals of every model's headline numbers (`uncertainty`), the paired comparisons of
every pair of models, the published numbers beside ours (`published_vs_ours`) and the papers' findings checked on
every pair (`findings`) and over the models of the runs where a claim is about a model set (`finding_sets`), and the
effective robustness of every model with imagenet-val and a natural shift (`effective_robustness`). Each model's
predictions are read once for all of them (`RunModels`); the runner hands
over the frames it already holds, so a run reads no predictions file again.

The runner stores the analysis in results.json (`Analysis.store`: "intervals", "comparisons", "uncertainty" and
`ANALYSIS_KEY`); the report and the model card read it from there (`stored_analysis`), and `vitrobust report` and
`vitrobust reproduce` call `analyze` once on the runs they show.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ..data import BENCHMARKS
from ..probes.spec import probe_of
from .effective_robustness import run_effective_robustness
from .finding_sets import finding_set_checks
from .findings import findings_for
from .image_identity import benchmark_images
from .prediction_source import Predictions
from .published_vs_ours import published_comparisons
from .run_models import RunModels
from .uncertainty import (
    NotedEstimator,
    UncertaintySettings,
    compare_models,
    intervals_of,
    recorded_protocol,
    run_settings,
    subset_note,
)

#: Where results.json keeps the published numbers beside ours and the findings.
ANALYSIS_KEY = "analysis"


@dataclass
class Analysis:
    """The analysis of some runs (merged results: model keys are unique).

    intervals: model key -> headline -> interval dict (+ samples_needed); comparisons: every pair of models'
    paired differences (None with fewer than two models); published: the published numbers beside ours, as dicts;
    findings: [{paper, pair, origin, checks}]; check_other_protocols: whether the findings were checked on pairs
    whose runs differ from the paper's protocol (`findings.check_findings`)."""

    settings: UncertaintySettings
    intervals: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    comparisons: dict[str, Any] | None = None
    published: list[dict[str, Any]] = field(default_factory=list)
    findings: list[dict[str, Any]] = field(default_factory=list)
    check_other_protocols: bool = False
    #: `effective_robustness.run_effective_robustness`: {fits, models}; empty where no model has a shift's pair.
    effective_robustness: dict[str, Any] = field(default_factory=dict)

    def reproduction(self) -> dict[str, Any]:
        """The published numbers and findings, as results.json keeps them (`ANALYSIS_KEY`)."""
        stored = {
            "confidence_level": self.settings.confidence_level,
            "published": self.published,
            "findings": self.findings,
            "check_other_protocols": self.check_other_protocols,
        }
        if self.effective_robustness:
            stored["effective_robustness"] = self.effective_robustness
        return stored

    def store(self, results: Sequence[dict[str, Any]]) -> None:
        """Write the analysis into `results` (in place): each run's intervals of the models it holds, its settings,
        and, in the first run, the comparisons (replacing any run's own) and the published numbers and findings."""
        for result in results:
            held = set(result.get("predictions") or {})
            intervals = dict(result.get("intervals") or {})
            intervals.update({key: value for key, value in self.intervals.items() if key in held})
            result["intervals"] = intervals
            result["uncertainty"] = self.settings.to_dict()
            if self.comparisons is not None:
                result.pop("comparisons", None)
        if results:
            if self.comparisons is not None:
                results[0]["comparisons"] = self.comparisons
            results[0][ANALYSIS_KEY] = self.reproduction()


def _model_estimators(
    result: Mapping[str, Any], key: str, run_models: RunModels, index: int
) -> tuple[dict[str, NotedEstimator], dict[str, dict[str, Any]]]:
    """Every headline estimator of model `key` of a run, from its predictions: name -> (estimator, the subset's
    note); and name -> the images its sample ids stand for (`image_identity.benchmark_images`)."""
    model = run_models((index, key))
    out: dict[str, NotedEstimator] = {}
    images: dict[str, dict[str, Any]] = {}
    for name in (result.get("predictions") or {}).get(key) or {}:
        if name not in BENCHMARKS.names() or model.source(name) is None:
            continue
        benchmark = BENCHMARKS.get(name)
        info = model.benchmark_info(name)
        note = subset_note(info.get("subset"))
        for label, estimator in model.headlines_of(
            benchmark, recorded_protocol(result, name, benchmark)
        ).items():
            out[label] = (estimator, note)
            images[label] = benchmark_images(info)
    return out, images


def analyze(
    results: Sequence[Mapping[str, Any]],
    settings: UncertaintySettings | None = None,
    *,
    frames: Mapping[str, Mapping[str, pd.DataFrame | Predictions]] | None = None,
    check_other_protocols: bool = False,
) -> Analysis:
    """The analysis of merged `results` (`results.merge_results`), at `settings` (default: the first run's
    recorded ones; each run's own for its intervals). `frames`: model key -> benchmark -> the predictions the
    caller holds (a frame in memory, or the file it has written: `prediction_source.Predictions`), used instead of
    the run folder's files. `check_other_protocols`: check the findings on pairs whose runs differ from the paper's
    protocol too, their verdicts marked "under another protocol" (`findings.check_findings`).

    Given settings also recompute the probes' per-point intervals at their level (`ProbeSpec.probe_intervals`,
    from the stored counts), in place."""
    chosen = settings or run_settings(results[0])
    run_models = RunModels(results, frames)
    analysis = Analysis(chosen, check_other_protocols=check_other_protocols)
    built: dict[str, dict[str, NotedEstimator]] = {}
    images: dict[str, dict[str, dict[str, Any]]] = {}
    for index, result in enumerate(results):
        own = settings or run_settings(result)
        for key in result.get("predictions") or {}:
            estimators, images[key] = _model_estimators(result, key, run_models, index)
            if estimators:
                analysis.intervals[key] = intervals_of(estimators, own)
                built[key] = estimators
        if settings is not None:
            for probes in (result.get("probes") or {}).values():
                for name, probe in (probes or {}).items():
                    spec = probe_of(name, probe) if isinstance(probe, Mapping) else None
                    if spec is not None and "intervals" in probe:
                        probe["intervals"] = spec.probe_intervals(probe, settings.confidence_level)
    if len(built) > 1:
        analysis.comparisons = compare_models(built, chosen, images)
    analysis.published = [c.to_dict() for c in published_comparisons(results, chosen, run_models)]
    analysis.findings = [
        {
            "paper": pairing.paper,
            "pair": pairing.name,
            "origin": pairing.origin,
            "checks": [check.to_dict() for check in checks],
        }
        for find in (findings_for, finding_set_checks)
        for pairing, checks in find(results, chosen, run_models, check_other_protocols=check_other_protocols)
    ]
    analysis.effective_robustness = run_effective_robustness(
        results,
        num_resamples=chosen.num_resamples,
        confidence_level=chosen.confidence_level,
        seed=chosen.seed,
    )
    return analysis


def stored_analysis(results: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The published numbers and findings the (first) run stored (`ANALYSIS_KEY`); empty where it stored none."""
    if not results:
        return {
            "confidence_level": None,
            "published": [],
            "findings": [],
            "check_other_protocols": False,
            "effective_robustness": {},
        }
    stored = results[0].get(ANALYSIS_KEY) or {}
    return {
        "confidence_level": stored.get("confidence_level", run_settings(results[0]).confidence_level),
        "published": list(stored.get("published") or []),
        "findings": list(stored.get("findings") or []),
        "check_other_protocols": bool(stored.get("check_other_protocols")),
        "effective_robustness": dict(stored.get("effective_robustness") or {}),
    }


__all__ = ["ANALYSIS_KEY", "Analysis", "analyze", "stored_analysis"]
