"""A probe, a benchmark and a benchmark kind defined and registered here, in the test module, reach results.json,
the report and the figures through `evaluate` with no other edit: their `ProbeSpec`, `Benchmark` and
`BenchmarkKind` are all the runner, the report and the figures need. And a results.json written before the kind was
recorded renders the same report."""

import copy
import json
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pytest
import yaml
from probe_models import save_tiny_vit

from hf_vitrobust.analysis import scoring, uncertainty
from hf_vitrobust.analysis.analyze import analyze
from hf_vitrobust.analysis.findings import Finding, check_findings, headline_quantity
from hf_vitrobust.analysis.headlines import TOP1, headline_name
from hf_vitrobust.analysis.kinds import BENCHMARK_KINDS, BenchmarkKind, CardRow
from hf_vitrobust.analysis.results import load_results, merge_results
from hf_vitrobust.analysis.run_models import RunModels
from hf_vitrobust.data import BENCHMARKS, Benchmark, BuiltinPhotosSource
from hf_vitrobust.evaluation import evaluate
from hf_vitrobust.evaluation.config import EvaluationConfig
from hf_vitrobust.evaluation.suite import load_suite
from hf_vitrobust.hub import render_model_card
from hf_vitrobust.models.imagenet import IMAGENET_WNIDS
from hf_vitrobust.probes import PROBES, ProbeResult, ProbeSpec, prepare_inputs, register_probe
from hf_vitrobust.probes.base import new_axes
from hf_vitrobust.probes.display import fmt_number, fmt_percent, new_figure
from hf_vitrobust.probes.spec import ProbeFigure, total_images, weighted_mean
from hf_vitrobust.report.blocks import figure_blocks, model_table, percent_at
from hf_vitrobust.report.displays import BENCHMARK_DISPLAYS, BenchmarkDisplay
from hf_vitrobust.report.document import render_markdown
from hf_vitrobust.report.figures import FigureFile

PROBE = "toy_brightness"
PROBE_FIGURE = "toy_brightness_bars"
BENCHMARK = "plugin-photos"
KIND = "toy-clean"
KIND_FIGURE = "plugin-photos_toy_top1"


# ------------------------------------------------------------------------------------------------ the probe
@dataclass
class BrightnessResult(ProbeResult):
    """The mean pixel value (times `scale`) of the images, and how many there were."""

    brightness: float
    num_images: int

    @classmethod
    def probe_name(cls) -> str:
        return "mean_brightness"

    def plot(self, ax=None):
        ax = new_axes(ax)
        draw_brightness({"images": {"brightness": self.brightness}}, ax=ax)
        return ax


def mean_brightness(classifier, images, labels=None, *, seed: int = 0, sample_ids=None, scale: float = 1.0):
    inputs = prepare_inputs(classifier, images, labels, sample_ids=sample_ids, require_labels=False)
    return BrightnessResult(brightness=float(inputs.pixels.double().mean()) * scale, num_images=len(inputs))


def _partial(classifier, inputs, seed, params) -> dict:
    result = mean_brightness(classifier, inputs.pixels, seed=seed, sample_ids=inputs.sample_ids, **params)
    return {"brightness": result.brightness}


def _merge(partials) -> dict:
    return {"brightness": float(weighted_mean(partials, "brightness")), "num_images": total_images(partials)}


def _headline(probe: Mapping[str, Any]) -> dict[str, str]:
    return {"mean brightness": fmt_number(probe.get("brightness"))}


def draw_brightness(data, ax=None):
    if ax is None:
        ax = new_figure(4.0, 3.0).add_subplot()
    ax.bar(list(data), [float(probe["brightness"]) for probe in data.values()])
    ax.set_ylabel("mean pixel value")
    return ax.figure


PROBE_SPEC = ProbeSpec(
    name=PROBE,
    probe=mean_brightness,
    result_type=BrightnessResult,
    selection="first",
    chunk_size=2,
    needs_labels=False,
    uses_labels=False,
    partial_fn=_partial,
    merge_fn=_merge,
    headline=_headline,
    summary_row="mean brightness",
    figures={
        PROBE_FIGURE: ProbeFigure(draw_brightness, "Mean pixel value of the probe images (a plug-in probe).")
    },
)


# ------------------------------------------------------------------------------------------------ the kind
def _kind_rows(bench: str):
    return [(f"{bench} toy top-1 (%)", percent_at("top1"), headline_name(bench, TOP1))]


def _kind_section(bench, views, figures):
    table = model_table(
        views, lambda v: v.metrics.get(bench), [("toy top-1 (%)", percent_at("top1"))], "metric"
    )
    return [*([table] if table else []), *figure_blocks(f"{bench}_toy_top1", figures)]


def _kind_figures(bench, views):
    values = {v.key: v.metrics[bench]["top1"] for v in views if bench in v.metrics}
    figure = new_figure(4.0, 3.0)
    figure.add_subplot().bar(list(values), list(values.values()))
    return {f"{bench}_toy_top1": figure}


KIND_SPEC = BenchmarkKind(
    name=KIND,
    metrics=lambda benchmark, frame, clean, protocol: scoring.classification_metrics(
        benchmark, frame, protocol
    ),
    headline=scoring.clean_headline,
    estimators=uncertainty.accuracy_headlines,
    card_rows=lambda metrics: (CardRow(("top1",), "accuracy", "Toy top-1 accuracy (%)", TOP1),),
    quantities=(TOP1,),
)
DISPLAY_SPEC = BenchmarkDisplay(
    name=KIND, summary_rows=_kind_rows, section=_kind_section, figures=_kind_figures
)

BENCHMARK_SPEC = Benchmark(
    name=BENCHMARK,
    description="A few of the bundled photos as an image folder, one folder per wnid.",
    citation="hf_vitrobust tests",
    task="classification",
    kind=KIND,
    label_space="imagenet-1k",
)


@pytest.fixture(scope="module")
def plugins():
    register_probe(PROBE_SPEC)
    BENCHMARK_KINDS.register(KIND, KIND_SPEC)
    BENCHMARK_DISPLAYS.register(KIND, DISPLAY_SPEC)
    BENCHMARKS.register(BENCHMARK, BENCHMARK_SPEC)
    yield
    PROBES.unregister(PROBE)
    BENCHMARK_KINDS.unregister(KIND)
    BENCHMARK_DISPLAYS.unregister(KIND)
    BENCHMARKS.unregister(BENCHMARK)


@pytest.fixture(scope="module")
def plugin_run(plugins, tmp_path_factory):
    root = tmp_path_factory.mktemp("plugin")
    photos = root / "photos"
    for raw in list(BuiltinPhotosSource().raw_samples())[:4]:
        target = photos / IMAGENET_WNIDS[raw.label]
        target.mkdir(parents=True, exist_ok=True)
        shutil.copy(raw.data, target / raw.sample_id.replace("/", "_"))
    save_tiny_vit(root / "model")
    suite = {
        "name": "plugin",
        "description": "a plug-in probe on a plug-in benchmark of a plug-in kind",
        "batch_size": 4,
        "chunk_size": 4,
        "models": [str(root / "model")],
        "benchmarks": {BENCHMARK: {"source": str(photos)}},
        "probes": {PROBE: {"benchmark": BENCHMARK, "num_images": 3, "params": {"scale": 2.0}}},
    }
    (root / "suite.yaml").write_text(yaml.safe_dump(suite))
    output = root / "run"
    evaluate(EvaluationConfig(suite=str(root / "suite.yaml"), output=output, progress=False))
    return output


def test_the_plugins_reach_results_json(plugin_run):
    results = json.loads((plugin_run / "results.json").read_text())
    assert (
        results["benchmarks"][BENCHMARK]["kind"] == KIND
        and results["benchmarks"][BENCHMARK]["num_samples"] == 4
    )
    [metrics] = [per_model[BENCHMARK] for per_model in results["metrics"].values()]
    assert metrics["num_samples"] == 4 and 0.0 <= metrics["top1"] <= 100.0
    [probe] = [probes[PROBE] for probes in results["probes"].values()]
    assert (
        probe["probe"] == "mean_brightness" and probe["num_images"] == 3 and probe["benchmark"] == BENCHMARK
    )
    assert 0.0 < probe["brightness"] < 2.0
    assert set(results["figures"]) == {PROBE_FIGURE, KIND_FIGURE}


def test_the_plugins_reach_the_report_and_the_figures(plugin_run):
    results = json.loads((plugin_run / "results.json").read_text())
    [metrics] = [per_model[BENCHMARK] for per_model in results["metrics"].values()]
    [probe] = [probes[PROBE] for probes in results["probes"].values()]
    markdown = (plugin_run / "report.md").read_text()
    value, top1 = fmt_number(probe["brightness"]), fmt_percent(metrics["top1"])
    assert f"## Benchmark: {BENCHMARK}" in markdown and f"| toy top-1 (%) | {top1} |" in markdown
    interval = next(iter(results["intervals"].values()))[f"{BENCHMARK} top-1 %"]
    summary = f"| {BENCHMARK} toy top-1 (%) | {top1} [{interval['low']:.2f}, {interval['high']:.2f}] |"
    assert summary in markdown  # the kind's Summary row, with the interval its estimators gave
    assert f"### Probe: {PROBE}" in markdown and f"| mean brightness | {value} |" in markdown
    assert f"| {PROBE}: mean brightness | {value} |" in markdown  # the probe's Summary row
    for figure in (PROBE_FIGURE, KIND_FIGURE):
        assert f"![{figure}](figures/{figure}.png)" in markdown
        assert (plugin_run / "figures" / f"{figure}.png").read_bytes().startswith(b"\x89PNG")
    assert "*Mean pixel value of the probe images (a plug-in probe).*" in markdown
    # The same drawing code draws the result's own plot.
    ax = BrightnessResult(brightness=0.5, num_images=1).plot()
    assert [patch.get_height() for patch in ax.patches] == [0.5]


def test_old_results_without_kind_render_the_same_report(plugin_run):
    """Runs written before the kind was recorded get it from the benchmark registry by name; an unknown name gets
    the generic display, not a kind guessed from its metric keys."""
    results = json.loads((plugin_run / "results.json").read_text())
    figures = {name: FigureFile(path) for name, path in results["figures"].items()}
    old = copy.deepcopy(results)
    for entry in old["benchmarks"].values():
        del entry["kind"]
    assert render_markdown([old], figures) == render_markdown([results], figures)
    unknown = copy.deepcopy(old)
    unknown["benchmarks"] = {"renamed": unknown["benchmarks"][BENCHMARK]}
    unknown["metrics"] = {key: {"renamed": value[BENCHMARK]} for key, value in unknown["metrics"].items()}
    text = render_markdown([unknown], figures)
    assert "## Benchmark: renamed" in text and "renamed toy top-1 (%)" not in text and "| top1 |" in text


def test_a_plugin_kind_gets_intervals_card_rows_and_findings_quantities(plugin_run):
    """A kind defined here: its estimators give the run's interval, its card rows the model card's model-index row
    and interval, and a finding reads its declared quantity; no other module was edited."""
    results = json.loads((plugin_run / "results.json").read_text())
    [key] = results["metrics"]
    top1 = results["metrics"][key][BENCHMARK]["top1"]
    name = f"{BENCHMARK} top-1 %"  # spelled out: the kind's headline, independently of headline_name
    interval = results["intervals"][key][name]
    assert interval["estimate"] == pytest.approx(top1) and interval["low"] <= top1 <= interval["high"]
    assert interval["num_samples"] == 4
    card = render_model_card(results=[results])
    assert "name: Toy top-1 accuracy (%)" in card and f"value: {top1}" in card
    row = next(line for line in card.splitlines() if "| Toy top-1 accuracy (%) |" in line)
    assert f"| {BENCHMARK} |" in row and f"{top1:.2f} [{interval['low']:.2f}, {interval['high']:.2f}]" in row
    # A finding on the kind's quantity, checked on the model against itself: a difference of exactly 0.
    finding = Finding(
        "toy", "tests", "toy claim", "here", "toy top-1", +1, BENCHMARK, headline_quantity(BENCHMARK, TOP1)
    )
    merged = merge_results(load_results([plugin_run]))
    models = RunModels(merged)
    [check] = check_findings([models((0, key))], [models((0, key))], [finding], analyze(merged).settings)
    assert check.vit_value == pytest.approx(top1) and check.difference["estimate"] == 0.0
    with pytest.raises(ValueError, match="no headline quantity 'AUPR %'"):
        headline_quantity(BENCHMARK, "AUPR %")


def test_unregistering_leaves_the_registries_as_they_were(plugins):
    assert PROBES.get("mean_brightness") is PROBE_SPEC  # the result's name is an alias
    PROBES.unregister(PROBE)
    assert PROBE not in PROBES and "mean_brightness" not in PROBES
    register_probe(PROBE_SPEC)


def test_a_benchmark_of_an_unregistered_kind_is_refused_when_the_suite_is_read(plugins, tmp_path):
    BENCHMARKS.register(
        "typo-kind", Benchmark(**{**BENCHMARK_SPEC.__dict__, "name": "typo-kind", "kind": "toy-clen"})
    )
    try:
        suite = {"name": "typo", "models": ["builtin:efficientnet_lite0"], "benchmarks": {"typo-kind": {}}}
        (tmp_path / "suite.yaml").write_text(yaml.safe_dump(suite))
        with pytest.raises(
            ValueError, match=r"kind 'toy-clen' is not a registered BenchmarkKind\. Did you mean 'toy-clean'"
        ):
            load_suite(tmp_path / "suite.yaml")
    finally:
        BENCHMARKS.unregister("typo-kind")
