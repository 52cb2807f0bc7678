# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""One run's settings (`EvaluationConfig`) and their checks (`EvaluationConfig.resolve`).

Every check that needs no data and no model runs here, before any work: the suite, the precision, the limits, the
subset rule, the seed, the interval settings, the benchmarks named by `data` and `protocols`, and each benchmark's
protocol. `resolve` returns a `ResolvedRun` with the suite's defaults filled in; the runner runs it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import torch

from ..analysis.pairings import Pairing, model_pairing
from ..analysis.protocols import benchmark_protocol
from ..analysis.uncertainty import DEFAULT_TARGET_HALF_WIDTH, UncertaintySettings
from ..constants import DEFAULT_MODEL
from ..data import BENCHMARKS, Benchmark, get_benchmark
from ..metrics.intervals import DEFAULT_CONFIDENCE_LEVEL, DEFAULT_NUM_RESAMPLES
from ..registry import did_you_mean
from .suite import SUBSETS, Suite, load_suite

PRECISIONS = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
#: Where generated ImageNet-C / -P images are corrupted.
CORRUPTION_DEVICES = ("auto", "workers", "device")


class EvaluationError(ValueError):
    """A run that cannot start: a bad option, name, source or label space; raised before any work."""


@dataclass(frozen=True)
class ResolvedRun:
    """A checked `EvaluationConfig` with the suite's defaults filled in: the suite, the seed, the interval settings,
    the batch and chunk sizes, the model specs, and each benchmark of the suite with its protocol."""

    suite: Suite
    seed: int
    uncertainty: UncertaintySettings
    batch_size: int
    chunk_size: int
    model_specs: list[str]
    benchmarks: dict[str, Benchmark]
    protocols: dict[str, dict[str, str]]
    #: model spec -> benchmark -> the preprocessing the suite's `pairing` paper gave that model there
    pairings: dict[str, dict[str, Pairing]] = field(default_factory=dict)

    def model_preprocessing(self, spec: str, benchmark: str) -> tuple[str, Pairing | None]:
        """The preprocessing model `spec` reads `benchmark` with: the suite's pairing for that model where it has
        one, else the benchmark's protocol; and the pairing that chose it (None for the benchmark's protocol)."""
        pairing = self.pairings.get(spec, {}).get(benchmark)
        return (
            (pairing.preprocessing, pairing)
            if pairing
            else (self.protocols[benchmark]["preprocessing"], None)
        )


@dataclass
class EvaluationConfig:
    """One run. Empty / None fields take the suite's values (models: the suite's, else the builtin model).

    data: benchmark name -> source string (Hub id, local path, "generated:<clean source>", "builtin"), overriding
        the suite's. limit: at most this many images per benchmark (clean images for generated ImageNet-C/-P, per
        half for ImageNet-O). subset: which images a limit keeps, "first" (the first of the stream) or "random" (a
        uniform random sample drawn with the run's seed, `Source.sampled`); None: each benchmark's suite entry's,
        else "first". precision: autocast dtype of the benchmark passes (probes run in float32). num_threads: torch's
        CPU threads during the run (restored afterwards; None keeps torch's setting): on a loaded machine, fewer
        threads than cores can be faster.
    confidence_level, num_resamples, interval_method ("wilson" or "clopper-pearson", for proportions),
        target_half_width: the intervals of the headline numbers (`analysis.uncertainty`); they are computed
        from the predictions, so `vitrobust report` can recompute them with other settings.
    protocols: benchmark name -> {protocol part: name} (`hf_vitrobust.analysis.protocols`), over the suite's
        choices, e.g. {"imagenet-c": {"preprocessing": "native-resize"}}.
    check_other_protocols: check the papers' findings also on pairs whose runs differ from the paper's protocol,
        their verdicts marked "under another protocol" (`analysis.findings.check_findings`); recorded with the
        findings in results.json and said in the report.
    """

    models: Sequence[str] = ()
    suite: str = "demo"
    data: Mapping[str, str] = field(default_factory=dict)
    protocols: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    limit: int | None = None
    subset: str | None = None
    batch_size: int | None = None
    precision: str = "fp32"
    compile: bool = False
    num_workers: int = 0
    num_threads: int | None = None
    output: str | os.PathLike = "vitrobust-results"
    resume: bool = False
    seed: int | None = None
    device: str | None = None
    report: bool = True
    progress: bool = True
    corruption_device: str = "auto"
    confidence_level: float = DEFAULT_CONFIDENCE_LEVEL
    num_resamples: int = DEFAULT_NUM_RESAMPLES
    interval_method: str = "wilson"
    target_half_width: float = DEFAULT_TARGET_HALF_WIDTH
    check_other_protocols: bool = False

    def resolve(self) -> ResolvedRun:
        """Check every setting (EvaluationError, naming the closest valid value) and fill in the suite's
        defaults."""
        try:
            suite = load_suite(self.suite)
        except (ValueError, FileNotFoundError) as error:
            raise EvaluationError(str(error)) from error
        _check_choice("precision", self.precision, PRECISIONS, 3)
        _check_positive("limit", self.limit)
        if self.subset is not None:
            _check_choice("subset", self.subset, SUBSETS, 1)
        _check_positive("batch_size", self.batch_size)
        _check_positive("num_workers", self.num_workers, minimum=0)
        _check_positive("num_threads", self.num_threads)
        if self.seed is not None:
            _check_positive("seed", self.seed, minimum=0)
        _check_choice("corruption_device", self.corruption_device, CORRUPTION_DEVICES, 2)
        seed = suite.seed if self.seed is None else self.seed
        try:
            uncertainty = UncertaintySettings(
                confidence_level=self.confidence_level,
                num_resamples=self.num_resamples,
                proportion_method=self.interval_method,
                seed=seed,
                target_half_width=self.target_half_width,
            )
        except ValueError as error:
            raise EvaluationError(str(error)) from error
        names = [spec.name for spec in suite.benchmarks]
        for name in self.data:
            if name not in names:
                raise EvaluationError(
                    f"--data {name}=...: "
                    + (
                        f"the suite {suite.name!r} has no benchmark {name!r}"
                        if name in BENCHMARKS
                        else f"unknown benchmark {name!r}"
                    )
                    + f" (its benchmarks: {', '.join(names)})."
                    + did_you_mean(name, names, n=3)
                )
        specs = list(self.models) or list(suite.models) or [DEFAULT_MODEL]
        if len(set(specs)) != len(specs):
            raise EvaluationError(f"A model is given twice: {specs}.")
        benchmarks = {spec.name: get_benchmark(spec.name) for spec in suite.benchmarks}
        for name in self.protocols:
            if name not in names:
                raise EvaluationError(
                    f"--protocol {name}.PART=NAME: the suite {suite.name!r} has no benchmark {name!r} (its "
                    f"benchmarks: {', '.join(names)})." + did_you_mean(name, names, n=3)
                )
        try:
            protocols = {
                spec.name: benchmark_protocol(
                    benchmarks[spec.name],
                    spec.protocol,
                    dict(self.protocols.get(spec.name, {})),
                    where=f"--protocol {spec.name}",
                )
                for spec in suite.benchmarks
            }
        except ValueError as error:
            raise EvaluationError(str(error)) from error
        return ResolvedRun(
            pairings=_pairings(
                suite, specs, {n for n, parts in self.protocols.items() if "preprocessing" in parts}
            ),
            suite=suite,
            seed=seed,
            uncertainty=uncertainty,
            batch_size=self.batch_size or suite.batch_size,
            chunk_size=suite.chunk_size,
            model_specs=specs,
            benchmarks=benchmarks,
            protocols=protocols,
        )


def _pairings(suite: Suite, specs: Sequence[str], chosen: set[str]) -> dict[str, dict[str, Pairing]]:
    """Per model spec, the suite's pairing for each benchmark whose preprocessing neither the suite's entry nor
    `--protocol` names (`chosen`: the benchmarks given a --protocol)."""
    if suite.pairing is None:
        return {}
    open_choice = {
        spec.name
        for spec in suite.benchmarks
        if "preprocessing" not in spec.protocol and spec.name not in chosen
    }
    probe_benchmarks = {probe.name: probe.benchmark for probe in suite.probes}
    pairings = {}
    for spec in specs:
        found = model_pairing(suite.pairing, spec, probe_benchmarks, suite.benchmark_names, suite.model_pairs)
        pairings[spec] = {name: pairing for name, pairing in found.items() if name in open_choice}
    return pairings


def _check_positive(name: str, value: int | None, minimum: int = 1) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < minimum):
        raise EvaluationError(f"{name} must be an integer >= {minimum}, got {value!r}.")


def _check_choice(name: str, value: str, choices: Sequence[str] | Mapping[str, object], n: int) -> None:
    if value not in choices:
        raise EvaluationError(
            f"{name} must be one of {', '.join(choices)}, got {value!r}." + did_you_mean(value, choices, n=n)
        )


__all__ = [
    "CORRUPTION_DEVICES",
    "DEFAULT_MODEL",
    "PRECISIONS",
    "EvaluationConfig",
    "EvaluationError",
    "ResolvedRun",
]
