# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""`vitrobust evaluate --plan`: what a run would feed each model, read from configs only, before anything runs.

`plan_evaluation(config)` resolves the run as the runner does (`EvaluationConfig.resolve`: the suite, `--protocol`,
the suite's `pairing`) and, for every model and benchmark, the resolved protocol (every part it has, and where each
came from: the benchmark's default, the suite's entry, the suite's pairing or `--protocol`), the concrete geometry
the preprocessing gives that model (`model_input`, the runner's own function: resize, crop, interpolation, mean and
std), the images a limit keeps and the source; for every probe, the benchmark whose images it reads at that geometry.

Nothing is downloaded and no weights are read: a model is built from its config on the meta device
(`config_classifier`), which is enough for its preprocessing and for whether it runs at another input size. A
transformers folder or cached Hub id needs its config.json and preprocessor_config.json, a timm model its config
(timm's registry, a timm folder or a cached timm Hub repo); the builtin models are local files and load as they are.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch

from ..analysis.record import model_key
from ..constants import LABEL_SPACE_CLASSES, is_hub_id
from ..models import Classifier, Preprocessing, load_classifier
from ..models.timm_loading import LOCAL_DIR, is_timm_folder, load_timm
from .config import EvaluationConfig, EvaluationError, ResolvedRun
from .model_input import model_input


def _not_cached(spec: str, error: Exception) -> EvaluationError:
    from huggingface_hub import constants

    why = "HF_HUB_OFFLINE is set" if constants.HF_HUB_OFFLINE else "the Hub could not be reached"
    return EvaluationError(
        f"Cannot plan model {spec!r}: its config.json and preprocessor_config.json are not in the local Hugging "
        f"Face cache and {why}. --plan reads configs only, never weights: fetch them once online (`hf download "
        f"{spec} config.json preprocessor_config.json`) or give a local model folder. ({type(error).__name__})"
    )


def config_classifier(spec: str) -> Classifier:
    """A `Classifier` of model `spec` built from its config alone, its module on the meta device (no weights read
    or downloaded): its preprocessing, class count and accepted input sizes are the loaded model's. Routes as
    `load_classifier`; builtin models (local files) are loaded. EvaluationError when the config cannot be read."""
    if spec.startswith("builtin:"):
        return load_classifier(spec)
    is_folder = os.path.isdir(spec)
    try:
        if spec.startswith("timm/") or (is_folder and is_timm_folder(Path(spec))):
            name = spec.removeprefix("timm/") if spec.startswith("timm/") else LOCAL_DIR + spec
            with torch.device("meta"):
                module, preprocessing, labels, _ = load_timm(name, None, {"pretrained": False})
            return Classifier(module, preprocessing, id2label=labels, name=spec, spec=spec)
        if is_folder or (is_hub_id(spec) and not os.path.exists(spec)):
            from transformers import AutoConfig, AutoImageProcessor, AutoModelForImageClassification

            try:
                config = AutoConfig.from_pretrained(spec)
                processor = AutoImageProcessor.from_pretrained(spec)
            except OSError as error:
                if is_folder:
                    raise EvaluationError(
                        f"Cannot plan model {spec!r}: {error} (a model folder needs config.json and "
                        "preprocessor_config.json)"
                    ) from error
                raise _not_cached(spec, error) from error
            with torch.device("meta"):
                module = AutoModelForImageClassification.from_config(config)
            return Classifier(module, Preprocessing.from_image_processor(processor), name=spec, spec=spec)
        return load_classifier(spec)  # not a model spec: its own error, before any loading
    except (ValueError, KeyError, RuntimeError) as error:
        if isinstance(error, EvaluationError):
            raise
        raise EvaluationError(f"Cannot plan model {spec!r}: {error}") from error


#: `Preprocessing.quantize` -> its resize in words (antialias off).
_NOT_ANTIALIASED = {
    None: "not antialiased (TF bilinear)",
    "opencv": "not antialiased (OpenCV's bilinear on 8 bits, rounded)",
    "truncate": "not antialiased (TF bilinear, truncated to 8 bits)",
}


def describe_geometry(preprocessing: Preprocessing | dict[str, Any]) -> str:
    """A preprocessing in words: the resize, the crop, the interpolation, mean and std ("resize to 224x224 (aspect
    ratio not kept), no crop; bilinear, antialiased; mean (0.5, 0.5, 0.5), std (0.5, 0.5, 0.5)")."""
    chosen = preprocessing if isinstance(preprocessing, Preprocessing) else Preprocessing(**preprocessing)
    height, width = chosen.input_size
    crop = f"centre crop {height}x{width}"
    if chosen.crop_only:
        geometry = f"no resize, {crop}"
    elif isinstance(chosen.resize_size, tuple):
        resized = "x".join(map(str, chosen.resize_size))
        kept = "no crop" if chosen.resize_size == chosen.input_size else crop
        geometry = f"resize to {resized} (aspect ratio not kept), {kept}"
    else:
        target = chosen.resize_target(height, width)
        how = f"crop_pct {chosen.crop_pct}" if chosen.crop_pct is not None else "resize_size"
        geometry = f"shorter side to {'x'.join(map(str, target))} ({how}), {crop}"
    kernel = "antialiased" if chosen.antialias else _NOT_ANTIALIASED[chosen.quantize]
    return f"{geometry}; {chosen.interpolation}, {kernel}; mean {chosen.mean}, std {chosen.std}"


@dataclass
class BenchmarkPlan:
    """How one model would read one benchmark: the protocol (part -> name) with each part's origin, the geometry
    (`Preprocessing.to_dict`), the images a limit keeps and the source; `skipped` says why it would not be scored."""

    name: str
    protocol: dict[str, str]
    origins: dict[str, str]
    applied: str | None = None
    input_size: list[int] = field(default_factory=list)
    preprocessing: dict[str, Any] = field(default_factory=dict)
    pairing: str | None = None
    note: str | None = None
    images: dict[str, Any] = field(default_factory=dict)
    source: str | None = None
    source_origin: str = "default"
    skipped: str | None = None


@dataclass
class ModelPlan:
    """One model of the planned run: its key and spec, its own preprocessing, its benchmarks and its probes."""

    key: str
    spec: str
    kind: str
    num_classes: int
    own_preprocessing: dict[str, Any]
    benchmarks: list[BenchmarkPlan] = field(default_factory=list)
    probes: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class EvaluationPlan:
    """What `vitrobust evaluate` would run (`plan_evaluation`): per model, per benchmark and per probe."""

    suite: str
    pairing: str | None
    seed: int
    models: list[ModelPlan]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def describe(self) -> str:
        """The plan in words, a model a paragraph, in the line format of `vitrobust reproduce --plan` (what
        `vitrobust evaluate --plan` prints)."""
        pairing = f" (pairing {self.pairing})" if self.pairing else ""
        lines = [f"suite {self.suite}{pairing}, seed {self.seed}: {len(self.models)} model(s)"]
        for model in self.models:
            own = describe_geometry(model.own_preprocessing)
            lines.append(
                f"model {model.key}: --model {model.spec} ({model.kind}, {model.num_classes} classes; own input: "
                f"{own})"
            )
            for bench in model.benchmarks:
                chosen = ", ".join(f"{part}={name}" for part, name in bench.protocol.items())
                lines.append(f"  benchmark {bench.name}: {chosen}")
                paired = [part for part, origin in bench.origins.items() if origin == "pairing"]
                origins = "; ".join(
                    f"{part} {origin}" + (f" ({bench.pairing})" if paired and part == paired[-1] else "")
                    for part, origin in bench.origins.items()
                )
                lines.append(f"    from: {origins}")
                if bench.skipped:
                    lines.append(f"    not scored: {bench.skipped}")
                    continue
                size = "x".join(map(str, bench.input_size))
                applied = "" if bench.applied == bench.protocol["preprocessing"] else f" ({bench.applied})"
                lines.append(f"    input {size}{applied}: {describe_geometry(bench.preprocessing)}")
                if bench.note:
                    lines.append(f"    note: {bench.note}")
                lines.append(f"    images: {_images(bench)}")
            for probe in model.probes:
                params = ", ".join(f"{k}={v}" for k, v in probe["params"].items()) or "the probe's defaults"
                size = "x".join(map(str, probe["input_size"])) if probe["input_size"] else "not scored"
                lines.append(
                    f"  probe {probe['name']} on {probe['benchmark']} (input {size}): {probe['num_images']} "
                    f"images, {params}"
                )
        return "\n".join(lines)


def _images(bench: BenchmarkPlan) -> str:
    kept = bench.images
    if kept["limit"] is None:
        which = "all"
    else:
        which = f"the {kept['subset']} {kept['limit']}" + (
            f" (seed {kept['seed']})" if kept["subset"] in ("random", "class-balanced") else ""
        )
    if bench.source is None:
        return f"{which}; no source: not run unless --data {bench.name}=SOURCE gives one (optional)"
    return f"{which}; source {bench.source} ({bench.source_origin})"


def _benchmark_plan(
    config: EvaluationConfig, resolved: ResolvedRun, classifier: Classifier, spec: str, name: str
) -> BenchmarkPlan:
    entry = resolved.suite.benchmark(name)
    benchmark = resolved.benchmarks[name]
    given = config.protocols.get(name, {})
    protocol = dict(resolved.protocols[name])
    preprocessing, pairing = resolved.model_preprocessing(spec, name)
    protocol["preprocessing"] = preprocessing
    origins = {
        part: "--protocol" if part in given else "suite" if part in entry.protocol else "default"
        for part in protocol
    }
    if pairing is not None:
        origins["preprocessing"] = "pairing"
    limit = config.limit if config.limit is not None else entry.limit
    subset = config.subset or entry.subset or "first"
    source, source_origin = config.data.get(name), "--data"
    if source is None:
        source, source_origin = entry.source, "suite"
    if source is None:
        source, source_origin = benchmark.default_source, "the benchmark's default"
    plan = BenchmarkPlan(
        name=name,
        protocol=protocol,
        origins=origins,
        pairing=pairing and pairing.why,
        images={
            "limit": limit,
            "subset": subset,
            "seed": resolved.seed if subset in ("random", "class-balanced") else None,
        },
        source=source,
        source_origin=source_origin,
    )
    needed = LABEL_SPACE_CLASSES[benchmark.label_space]
    if classifier.num_classes != needed and not (
        benchmark.label_space == "imagenet-9" and classifier.num_classes == 9
    ):
        plan.skipped = (
            f"{spec} predicts {classifier.num_classes} classes; {name} is scored in the {benchmark.label_space} "
            f"label space ({needed} classes)"
        )
        return plan
    options: dict[str, Any] = {"pairing": pairing}
    if "interpolation" in protocol:  # as the runner passes it
        options["interpolation"] = protocol["interpolation"]
    try:
        fed = model_input(benchmark, preprocessing, classifier, **options)
    except ValueError as error:
        raise EvaluationError(f"{name}: {error}") from error
    applied_kernel = getattr(fed, "interpolation", None)  # the pairing's kernel, where its rows name one
    if protocol.get("interpolation") not in (None, applied_kernel):
        protocol["interpolation"], plan.origins["interpolation"] = applied_kernel, "pairing"
    plan.applied, plan.note = fed.applied, fed.note
    plan.input_size, plan.preprocessing = list(fed.classifier.input_size), fed.preprocessing
    return plan


def plan_evaluation(config: EvaluationConfig) -> EvaluationPlan:
    """The plan of the run `config` describes (module docstring): resolved and checked as the run would be
    (EvaluationError for a bad option, a model whose config cannot be read, or a preprocessing a model cannot
    take), with nothing downloaded, no weights read and no run folder written."""
    resolved = config.resolve()
    models = []
    for spec in resolved.model_specs:
        classifier = config_classifier(spec)
        model = ModelPlan(
            key=model_key(spec, [m.key for m in models]),
            spec=spec,
            kind=classifier.kind,
            num_classes=classifier.num_classes,
            own_preprocessing=classifier.preprocessing.to_dict(),
        )
        for name in resolved.suite.benchmark_names:
            model.benchmarks.append(_benchmark_plan(config, resolved, classifier, spec, name))
        read = {bench.name: bench for bench in model.benchmarks}
        for probe in resolved.suite.probes:
            bench = read[probe.benchmark]
            model.probes.append(
                {
                    "name": probe.name,
                    "benchmark": probe.benchmark,
                    "num_images": probe.num_images,
                    "input_size": bench.input_size,
                    "params": dict(probe.params),
                }
            )
        models.append(model)
    return EvaluationPlan(resolved.suite.name, resolved.suite.pairing, resolved.seed, models)


__all__ = [
    "BenchmarkPlan",
    "EvaluationPlan",
    "ModelPlan",
    "config_classifier",
    "describe_geometry",
    "plan_evaluation",
]
