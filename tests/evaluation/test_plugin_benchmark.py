"""A benchmark defined and registered here, of an existing kind, reaches results.json (with its kind), the report
(its section and Summary rows) with no other edit; and a results.json written before the kind was recorded renders
the same report."""

import copy
import json
import shutil

import pytest
import yaml

from hf_vitrobust.data import BENCHMARKS, Benchmark, BuiltinPhotosSource
from hf_vitrobust.evaluation import evaluate
from hf_vitrobust.evaluation.report import render_markdown
from hf_vitrobust.models.imagenet import IMAGENET_WNIDS

NAME = "plugin-photos"


@pytest.fixture(scope="module")
def plugin_benchmark():
    benchmark = Benchmark(
        name=NAME,
        description="A few of the bundled photos as an image folder, one folder per wnid.",
        citation="hf_vitrobust tests",
        task="classification",
        kind="clean",
        label_space="imagenet-1k",
    )
    BENCHMARKS.register(NAME, benchmark)
    yield benchmark
    BENCHMARKS.unregister(NAME)


@pytest.fixture(scope="module")
def plugin_run(plugin_benchmark, tmp_path_factory):
    folder = tmp_path_factory.mktemp("plugin-photos")
    for raw in list(BuiltinPhotosSource().raw_samples())[:4]:
        target = folder / IMAGENET_WNIDS[raw.label]
        target.mkdir(exist_ok=True)
        shutil.copy(raw.data, target / raw.sample_id.replace("/", "_"))
    suite = {
        "name": "plugin",
        "description": "a registered plug-in benchmark",
        "batch_size": 4,
        "chunk_size": 4,
        "models": ["builtin:efficientnet_lite0"],
        "benchmarks": {NAME: {"source": str(folder)}},
    }
    suite_file = tmp_path_factory.mktemp("suite") / "plugin.yaml"
    suite_file.write_text(yaml.safe_dump(suite))
    output = tmp_path_factory.mktemp("runs") / "plugin"
    results = evaluate(suite=str(suite_file), output=output, progress=False)
    return output, results


def test_plugin_benchmark_reaches_results_and_report(plugin_run):
    output, _ = plugin_run
    on_disk = json.loads((output / "results.json").read_text())
    entry = on_disk["benchmarks"][NAME]
    assert entry["kind"] == "clean" and entry["num_samples"] == 4
    metrics = on_disk["metrics"]["builtin_efficientnet_lite0"][NAME]
    assert metrics["num_samples"] == 4 and 0.0 <= metrics["top1"] <= 100.0
    assert f"{NAME} top-1 %" in on_disk["summary"]["builtin_efficientnet_lite0"]
    report = (output / "report.md").read_text()
    assert f"## Benchmark: {NAME}" in report
    assert f"{NAME} top-1 (%)" in report and f"{NAME} ECE (%)" in report  # its Summary rows


def test_old_results_without_kind_render_the_same_report(plugin_run):
    output, _ = plugin_run
    results = json.loads((output / "results.json").read_text())
    figures = results.get("figures") or {}
    old = copy.deepcopy(results)
    for entry in old["benchmarks"].values():
        del entry["kind"]
    assert render_markdown([old], figures) == render_markdown([results], figures)
    # An unknown benchmark of an old run is shown with the generic display, not guessed from its metric keys.
    unknown = copy.deepcopy(old)
    unknown["benchmarks"] = {"renamed": unknown["benchmarks"][NAME]}
    unknown["metrics"] = {key: {"renamed": value[NAME]} for key, value in unknown["metrics"].items()}
    text = render_markdown([unknown], figures)
    assert "## Benchmark: renamed" in text and "renamed top-1 (%)" not in text
