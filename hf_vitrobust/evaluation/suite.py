# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Evaluation suites: which benchmarks and probes a run covers, with which options, sizes and seed.

A suite is a YAML (or JSON) file. Four ship with the package (`SUITE_NAMES`, in `suites/`):

- "paper": the protocol of Paul & Chen, "Vision Transformers are Robust Learners" (AAAI 2022);
- "mechanisms": the measurements of Park & Kim, "How Do Vision Transformers Work?" (ICLR 2022);
- "quick": every benchmark and every probe on a few hundred samples, a smoke check of a real model;
- "demo": the offline default, EfficientNet-Lite0 on the bundled photos, a few minutes on two CPU cores.

`load_suite("paper")` reads a shipped suite, `load_suite("my_suite.yaml")` a user's copy. Everything is checked
when the file is read, before any model or data is touched: benchmark names and their `load_benchmark` options
(corruption, perturbation and variant names, severities, difficulty), probe names and the probe functions' keyword
arguments. A mistake raises `ValueError` naming the file, the entry and the closest valid names.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..analysis.kinds import BENCHMARK_KINDS
from ..analysis.protocols import check_protocol
from ..analysis.published import PAPERS
from ..data import BENCHMARKS
from ..data.benchmarks import OPTION_NAMES
from ..registry import did_you_mean

SUITE_NAMES = ("paper", "mechanisms", "quick", "demo")
SUITES_DIR = Path(__file__).resolve().parent / "suites"

# Probe keyword arguments the runner sets itself, with the reason (the probe tasks add their own exclusions).
_RUNNER_ARGUMENTS = {
    "num_images": "set num_images on the probe entry, not under params",
    "seed": "the suite's seed (or --seed) seeds every probe",
    "limit": "num_images sets how many images the probe reads",
    "sample_ids": "the runner keys each image's randomness by its stream position",
}

_BENCHMARK_KEYS = ("source", "limit", "subset", "options", "report", "optional", "protocol")
#: How a limit chooses a benchmark's images: the first `limit` of the stream, or a seeded uniform random `limit`
#: (`Source.sampled`).
SUBSETS = ("first", "random", "class-balanced")
_PROBE_KEYS = ("benchmark", "num_images", "params")
_SUITE_KEYS = (
    "name", "description", "citations", "batch_size", "seed", "chunk_size", "models", "benchmarks", "probes",
    "model_pairs", "pairing", "path",
)  # fmt: skip


@dataclass(frozen=True)
class BenchmarkSpec:
    """One benchmark of a suite.

    name: a registered benchmark (`hf_vitrobust.data.BENCHMARKS`). source: its default source string (a Hub id,
    a local path, "generated:<clean source>", "builtin"); None for the benchmark's default Hub copy; `--data`
    overrides it. limit: read at most this many samples. options: `load_benchmark` keyword arguments, with shorthands
    expanded ("corruptions: all" -> the 19 names). report: free-form hints for the report (e.g. {"paper_figures":
    true}). optional: a benchmark that has no source (no Hub copy, none in the suite, no --data) is skipped and
    recorded as skipped instead of stopping the run before it starts. protocol: the suite's choices of the
    benchmark's evaluation protocol (`hf_vitrobust.analysis.protocols`: part -> name, e.g. {"class_mask":
    "paul-chen-1000"}); the parts not given keep their canonical default. subset: which samples a limit keeps,
    "first" (the first of the stream; also what None means), "random" (a uniform random sample drawn with the
    run's seed) or "class-balanced" (the labels of every row read first, then as many classes as the limit allows,
    drawn with the run's seed: `data.balanced_batches`); `--subset` overrides it.
    """

    name: str
    source: str | None = None
    limit: int | None = None
    options: dict[str, Any] = field(default_factory=dict)
    report: dict[str, Any] = field(default_factory=dict)
    optional: bool = False
    protocol: dict[str, str] = field(default_factory=dict)
    subset: str | None = None

    def to_dict(self) -> dict[str, Any]:
        written = {
            "source": self.source,
            "limit": self.limit,
            "optional": self.optional,
            "options": _plain(self.options),
            "report": _plain(self.report),
            "protocol": dict(self.protocol),
        }
        # Left out when not given, so that a suite of an earlier run (run.json's suite_contents) reads the same.
        if self.subset is not None:
            written["subset"] = self.subset
        return written


@dataclass(frozen=True)
class SuiteProbe:
    """One probe of a suite: the `probes.PROBES` entry `name` on `num_images` clean images of `benchmark`, with the
    probe function's keyword arguments `params`."""

    name: str
    benchmark: str = "imagenet-val"
    num_images: int = 100
    params: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "benchmark": self.benchmark,
            "num_images": self.num_images,
            "params": _plain(self.params),
        }


@dataclass(frozen=True)
class Suite:
    """A validated suite (see the module docstring). `path` is the file it was read from (not compared)."""

    name: str
    description: str
    path: str | None = field(default=None, compare=False)
    benchmarks: tuple[BenchmarkSpec, ...] = ()
    probes: tuple[SuiteProbe, ...] = ()
    batch_size: int = 64
    seed: int = 0
    chunk_size: int = 256
    models: tuple[str, ...] = ()
    citations: tuple[str, ...] = ()
    model_pairs: tuple[dict[str, str], ...] = ()
    #: A paper (`analysis.published.PAPERS`) whose per-model preprocessing fills in each benchmark that names none
    #: (`analysis.pairings.model_pairing`); None: every model gets the benchmark's protocol.
    pairing: str | None = None

    @property
    def benchmark_names(self) -> tuple[str, ...]:
        return tuple(spec.name for spec in self.benchmarks)

    @property
    def probe_names(self) -> tuple[str, ...]:
        return tuple(spec.name for spec in self.probes)

    def benchmark(self, name: str) -> BenchmarkSpec:
        """The suite's entry for benchmark `name`."""
        for spec in self.benchmarks:
            if spec.name == name:
                return spec
        raise KeyError(
            f"Suite {self.name!r} has no benchmark {name!r}; it has {', '.join(self.benchmark_names)}."
        )

    def probe(self, name: str) -> SuiteProbe:
        """The suite's entry for probe `name`."""
        for spec in self.probes:
            if spec.name == name:
                return spec
        raise KeyError(f"Suite {self.name!r} has no probe {name!r}; it has {', '.join(self.probe_names)}.")

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict that `load_suite` reads back into an equal suite (stored in results.json)."""
        written = {
            "name": self.name,
            "description": self.description,
            "path": self.path,
            "citations": list(self.citations),
            "batch_size": self.batch_size,
            "seed": self.seed,
            "chunk_size": self.chunk_size,
            "models": list(self.models),
            "benchmarks": {spec.name: spec.to_dict() for spec in self.benchmarks},
            "probes": {spec.name: spec.to_dict() for spec in self.probes},
            "model_pairs": [dict(pair) for pair in self.model_pairs],
        }
        if self.pairing is not None:  # written only where set, so older run folders' suites read back equal
            written["pairing"] = self.pairing
        return written


# ---------------------------------------------------------------------------------------------------------------
# Loading


def suite_path(name: str) -> Path:
    """The shipped YAML file of suite `name` (one of `SUITE_NAMES`)."""
    if name not in SUITE_NAMES:
        raise ValueError(
            f"Unknown suite {name!r}.{did_you_mean(name, SUITE_NAMES, n=3)} Shipped suites: {', '.join(SUITE_NAMES)}."
        )
    return SUITES_DIR / f"{name}.yaml"


def load_suite(name_or_path: str | os.PathLike) -> Suite:
    """A shipped suite by name ("paper", "mechanisms", "quick", "demo") or a user's .yaml/.yml/.json file, validated.

    Raises ValueError for an unknown suite name (with the closest one) and for any invalid entry of the file
    (naming the file, the entry and the closest valid names), before any work starts.
    """
    text = os.fspath(name_or_path)
    if text in SUITE_NAMES:
        path = suite_path(text)
    else:
        path = Path(text).expanduser()
        if not path.is_file():
            looks_like_file = (
                path.suffix.lower() in (".yaml", ".yml", ".json") or os.sep in text or "/" in text
            )
            if looks_like_file:
                raise ValueError(f"Suite file {text!r} does not exist.")
            raise ValueError(
                f"Unknown suite {text!r}.{did_you_mean(text, SUITE_NAMES, n=3)} Shipped suites: {', '.join(SUITE_NAMES)}; "
                "or give the path of a .yaml/.yml/.json suite file."
            )
    data = _read_file(path)
    return suite_from_dict(data, path=str(path), default_name=path.stem)


def suite_from_dict(data: Any, *, path: str | None = None, default_name: str | None = None) -> Suite:
    """Validate a suite given as a dict (a parsed file, or `Suite.to_dict()`); `path` names it in errors."""
    where = path or "suite"
    if not isinstance(data, dict):
        raise ValueError(
            f"{where}: a suite is a mapping of keys ({', '.join(_SUITE_KEYS)}), got {type(data).__name__}."
        )
    _check_keys(data, _SUITE_KEYS, where, "suite key")
    name = data.get("name", default_name)
    if not isinstance(name, str) or not name:
        raise ValueError(f"{where}: 'name' must be a non-empty string, got {name!r}.")
    description = data.get("description", "")
    if not isinstance(description, str):
        raise ValueError(f"{where}: 'description' must be a string, got {description!r}.")
    citations = data.get("citations") or ()
    citations = (citations,) if isinstance(citations, str) else citations
    if not isinstance(citations, list | tuple) or not all(isinstance(c, str) for c in citations):
        raise ValueError(f"{where}: 'citations' must be a string or a list of strings, got {citations!r}.")
    models = data.get("models") or ()
    models = (models,) if isinstance(models, str) else models
    if not isinstance(models, list | tuple) or not all(isinstance(m, str) and m for m in models):
        raise ValueError(f"{where}: 'models' must be a list of model specs (strings), got {models!r}.")
    benchmarks = data.get("benchmarks") or {}
    if not isinstance(benchmarks, dict):
        raise ValueError(f"{where}: 'benchmarks' must be a mapping of benchmark name -> options.")
    probes = data.get("probes") or {}
    if not isinstance(probes, dict):
        raise ValueError(f"{where}: 'probes' must be a mapping of probe name -> settings.")
    bench_specs = _benchmark_specs(benchmarks, where)
    probe_specs = tuple(
        _probe_spec(str(key), entry, {spec.name: spec for spec in bench_specs}, where)
        for key, entry in probes.items()
    )
    if len(set(spec.name for spec in probe_specs)) != len(probe_specs):
        raise ValueError(f"{where}: a probe is listed twice under 'probes'.")
    return Suite(
        name=name,
        description=description.strip(),
        path=path,
        benchmarks=bench_specs,
        probes=probe_specs,
        batch_size=_positive_int(data.get("batch_size", 64), f"{where}: batch_size"),
        seed=_seed(data.get("seed", 0), where),
        chunk_size=_positive_int(data.get("chunk_size", 256), f"{where}: chunk_size"),
        models=tuple(models),
        citations=tuple(c.strip() for c in citations),
        model_pairs=_model_pairs(data.get("model_pairs") or (), where),
        pairing=_pairing(data.get("pairing"), where),
    )


def _pairing(paper: Any, where: str) -> str | None:
    if paper is not None and paper not in PAPERS:
        raise ValueError(
            f"{where}: pairing {paper!r} is not a paper of the published table.{did_you_mean(str(paper), PAPERS)} "
            f"Papers: {', '.join(PAPERS)}."
        )
    return paper


def _read_file(path: Path) -> Any:
    suffix = path.suffix.lower()
    text = path.read_text(encoding="utf-8")
    if suffix == ".json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as error:
            raise ValueError(f"{path}: not valid JSON: {error}") from None
    if suffix in (".yaml", ".yml"):
        import yaml

        try:
            return yaml.safe_load(text)
        except yaml.YAMLError as error:
            raise ValueError(f"{path}: not valid YAML: {error}") from None
    raise ValueError(f"{path}: a suite file ends in .yaml, .yml or .json, got {path.suffix!r}.")


# ---------------------------------------------------------------------------------------------------------------
# Benchmarks


def _benchmark_specs(entries: dict[str, Any], where: str) -> tuple[BenchmarkSpec, ...]:
    specs: dict[str, BenchmarkSpec] = {}
    for key, entry in entries.items():
        name = str(key).strip().lower().replace("_", "-")
        if name not in BENCHMARKS:
            raise ValueError(
                f"{where}: benchmarks: unknown benchmark {key!r}.{did_you_mean(name, BENCHMARKS, n=3)} "
                f"Known: {', '.join(BENCHMARKS)}."
            )
        if name in specs:
            raise ValueError(f"{where}: benchmarks: {name!r} is listed twice.")
        specs[name] = _benchmark_spec(name, {} if entry is None else entry, f"{where}: benchmarks.{name}")
    return tuple(specs.values())


def _benchmark_spec(name: str, entry: Any, where: str) -> BenchmarkSpec:
    if not isinstance(entry, dict):
        raise ValueError(f"{where}: expected a mapping of settings, got {entry!r}.")
    # Options may sit at the top of the entry (as users write them) or under "options" (as to_dict writes them).
    nested = entry.get("options") or {}
    if not isinstance(nested, dict):
        raise ValueError(f"{where}: 'options' must be a mapping, got {nested!r}.")
    flat = {k: v for k, v in entry.items() if k not in _BENCHMARK_KEYS}
    _check_keys(flat, (*_BENCHMARK_KEYS, *OPTION_NAMES), where, "setting")
    _check_keys(nested, OPTION_NAMES, f"{where}.options", "option")
    duplicated = sorted(set(flat) & set(nested))
    if duplicated:
        raise ValueError(f"{where}: {duplicated[0]!r} is given both directly and under 'options'.")
    source = entry.get("source")
    if source is not None and (not isinstance(source, str) or not source):
        raise ValueError(f"{where}: 'source' must be a non-empty string or null, got {source!r}.")
    limit = entry.get("limit")
    if limit is not None:
        limit = _positive_int(limit, f"{where}: limit")
    subset = entry.get("subset")
    if subset is not None and subset not in SUBSETS:
        raise ValueError(
            f"{where}: 'subset' must be one of {', '.join(SUBSETS)}, got {subset!r}."
            + did_you_mean(str(subset), SUBSETS, n=1)
        )
    report = entry.get("report") or {}
    if not isinstance(report, dict) or not all(isinstance(k, str) for k in report):
        raise ValueError(f"{where}: 'report' must be a mapping with string keys, got {report!r}.")
    _check_json(report, f"{where}.report")
    benchmark = BENCHMARKS[name]
    if benchmark.kind not in BENCHMARK_KINDS:
        raise ValueError(
            f"{where}: the benchmark's kind {benchmark.kind!r} is not a registered BenchmarkKind."
            f"{did_you_mean(benchmark.kind, BENCHMARK_KINDS)} Known kinds: {', '.join(BENCHMARK_KINDS)}."
        )
    try:
        checked = benchmark.check_options({**nested, **flat}, source)
        benchmark.check_source(source)
    except ValueError as error:
        raise ValueError(f"{where}: {error}") from None
    optional = entry.get("optional", False)
    if not isinstance(optional, bool):
        raise ValueError(f"{where}: 'optional' must be true or false, got {optional!r}.")
    protocol = check_protocol(benchmark, entry.get("protocol") or {}, f"{where}.protocol")
    return BenchmarkSpec(
        name=name,
        source=source,
        limit=limit,
        subset=subset,
        options=_plain(checked),
        report=_plain(report),
        optional=optional,
        protocol=protocol,
    )


# ---------------------------------------------------------------------------------------------------------------
# Probes


def _probe_registry() -> Any:
    """`probes.PROBES`, imported on use: it pulls in every probe (and torch), which reading a suite file must not."""
    from ..probes.spec import PROBES

    return PROBES


def _probe_spec(key: str, entry: Any, benchmarks: dict[str, BenchmarkSpec], where: str) -> SuiteProbe:
    registry = _probe_registry()
    known = tuple(registry)
    name = key.strip().lower().replace("-", "_")
    if name not in known:
        raise ValueError(
            f"{where}: probes: unknown probe {key!r}.{did_you_mean(name, known, n=3)} Known: {', '.join(known)}."
        )
    task = registry[name]
    where = f"{where}: probes.{name}"
    entry = {} if entry is None else entry
    if not isinstance(entry, dict):
        raise ValueError(f"{where}: expected a mapping of settings, got {entry!r}.")
    _check_keys(entry, _PROBE_KEYS, where, "setting")
    if "num_images" not in entry:
        raise ValueError(f"{where}: 'num_images' is missing (how many images the probe reads).")
    num_images = _positive_int(entry["num_images"], f"{where}: num_images")
    bench = str(entry.get("benchmark") or "imagenet-val").strip().lower().replace("_", "-")
    if bench not in benchmarks:
        raise ValueError(
            f"{where}: the probe reads benchmark {bench!r}, which the suite does not list under 'benchmarks'"
            f".{did_you_mean(bench, benchmarks, n=3)} Listed: {', '.join(benchmarks) or 'none'}."
        )
    if BENCHMARKS[bench].task != "classification" or BENCHMARKS[bench].corruptions:
        raise ValueError(
            f"{where}: probes read clean labelled images; {bench} is not a clean classification benchmark "
            "(use e.g. imagenet-val, imagenet-train, imagenet-sketch, cifar10, cifar100 or cifar100-train)."
        )
    params = entry.get("params") or {}
    if not isinstance(params, dict):
        raise ValueError(
            f"{where}: 'params' must be a mapping of the probe's keyword arguments, got {params!r}."
        )
    _check_json(params, f"{where}.params")
    accepted = tuple(task.accepted_params)
    excluded = {**_RUNNER_ARGUMENTS, **dict(task.excluded_params)}
    for param in params:
        if param in excluded and param not in accepted:
            raise ValueError(f"{where}: params: {param!r} cannot be set here ({excluded[param]}).")
        if param not in accepted:
            raise ValueError(
                f"{where}: params: unknown parameter {param!r} of {task.probe.__name__}.{did_you_mean(param, accepted, n=3)} "
                f"Accepted: {', '.join(accepted)}."
            )
    try:
        task.check_params(dict(params))
    except ValueError as error:
        # `where` names the probe already.
        raise ValueError(f"{where}: params: {str(error).removeprefix(f'Probe {name!r}: ')}") from None
    return SuiteProbe(name=name, benchmark=bench, num_images=num_images, params=_plain(params))


# ---------------------------------------------------------------------------------------------------------------
# Small checks


def _check_keys(mapping: dict[str, Any], known: tuple[str, ...], where: str, kind: str) -> None:
    for key in mapping:
        if key not in known:
            raise ValueError(
                f"{where}: unknown {kind} {key!r}.{did_you_mean(str(key), known, n=3)} Known: {', '.join(known)}."
            )


def _positive_int(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{where} must be a positive integer, got {value!r}.")
    return value


def _seed(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{where}: seed must be an integer >= 0, got {value!r}.")
    return value


def _check_json(value: Any, where: str) -> None:
    """Values must survive JSON (they go to results.json): str, finite numbers, bools, null, lists, mappings."""
    if value is None or isinstance(value, str | bool | int):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{where}: {value!r} is not a finite number.")
        return
    if isinstance(value, list | tuple):
        for item in value:
            _check_json(item, where)
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise ValueError(f"{where}: mapping keys must be strings, got {key!r}.")
            _check_json(item, f"{where}.{key}")
        return
    raise ValueError(f"{where}: {value!r} ({type(value).__name__}) is not a JSON value.")


def _plain(value: dict[str, Any]) -> dict[str, Any]:
    """A deep copy in JSON's types (tuples become lists), so that a suite equals itself read back from JSON."""
    return json.loads(json.dumps(value))


def _model_pairs(pairs: Any, where: str) -> tuple[dict[str, str], ...]:
    """The suite's model pairs: mappings of strings (vit, cnn, note, and an optional name VIT_KEY/CNN_KEY, the
    models' keys in the published-numbers table, unique in the suite)."""
    if not isinstance(pairs, list | tuple) or not all(
        isinstance(pair, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in pair.items())
        for pair in pairs
    ):
        raise ValueError(
            f"{where}: 'model_pairs' must be a list of mappings of strings (vit, cnn, note, name)."
        )
    names = [pair["name"] for pair in pairs if "name" in pair]
    for name in names:
        keys = name.split("/")
        if len(keys) != 2 or not all(key and key == key.strip() for key in keys):
            raise ValueError(f"{where}: model_pairs: a pair's name is VIT_KEY/CNN_KEY, got {name!r}.")
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ValueError(f"{where}: model_pairs: the pair name(s) {repeated} are given more than once.")
    return tuple(dict(pair) for pair in pairs)


__all__ = [
    "SUBSETS",
    "SUITES_DIR",
    "SUITE_NAMES",
    "BenchmarkSpec",
    "Suite",
    "SuiteProbe",
    "load_suite",
    "suite_from_dict",
    "suite_path",
]
