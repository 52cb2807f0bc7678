"""A probe defined and registered here, in the test module, reaches results.json, the report and the figures through
`evaluate` with no other edit: its `ProbeSpec` is all the runner, the report and the figures need."""

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pytest
import torch
import yaml
from transformers import ViTConfig, ViTForImageClassification, ViTImageProcessor

from hf_vitrobust.evaluation import evaluate
from hf_vitrobust.evaluation.runner import EvaluationConfig
from hf_vitrobust.probes import PROBES, ProbeResult, ProbeSpec, prepare_inputs, register_probe
from hf_vitrobust.probes.base import new_axes
from hf_vitrobust.probes.display import fmt_number, new_figure
from hf_vitrobust.probes.spec import ProbeFigure, total_images, weighted_mean

NAME = "toy_brightness"
FIGURE = "toy_brightness_bars"


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


SPEC = ProbeSpec(
    name=NAME,
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
    figures={FIGURE: ProbeFigure(draw_brightness, "Mean pixel value of the probe images (a plug-in probe).")},
)


@pytest.fixture
def registered():
    register_probe(SPEC)
    yield SPEC
    PROBES.unregister(NAME)


def _tiny_model(folder) -> None:
    torch.manual_seed(0)
    config = ViTConfig(
        image_size=32,
        patch_size=8,
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_labels=1000,
    )
    ViTForImageClassification(config).save_pretrained(folder)
    ViTImageProcessor(size={"height": 32, "width": 32}).save_pretrained(folder)


def test_a_registered_probe_reaches_results_report_and_figures(registered, tmp_path):
    _tiny_model(tmp_path / "model")
    suite = {
        "name": "plugin",
        "description": "a plug-in probe",
        "batch_size": 4,
        "chunk_size": 4,
        "models": [str(tmp_path / "model")],
        "benchmarks": {"imagenet-val": {"source": "builtin", "limit": 5}},
        "probes": {NAME: {"benchmark": "imagenet-val", "num_images": 5, "params": {"scale": 2.0}}},
    }
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(suite))
    output = tmp_path / "run"
    evaluate(EvaluationConfig(suite=str(tmp_path / "suite.yaml"), output=output, progress=False))

    results = json.loads((output / "results.json").read_text())
    [probe] = [probes[NAME] for probes in results["probes"].values()]
    assert probe["probe"] == "mean_brightness" and probe["num_images"] == 5
    assert 0.0 < probe["brightness"] < 2.0
    markdown = (output / "report.md").read_text()
    value = fmt_number(probe["brightness"])
    assert f"### Probe: {NAME}" in markdown
    assert f"| mean brightness | {value} |" in markdown
    assert f"| {NAME}: mean brightness | {value} |" in markdown  # the Summary row
    assert f"![{FIGURE}](figures/{FIGURE}.png)" in markdown
    assert "*Mean pixel value of the probe images (a plug-in probe).*" in markdown
    assert (output / "figures" / f"{FIGURE}.png").read_bytes().startswith(b"\x89PNG")
    # The same drawing code draws the result's own plot.
    ax = BrightnessResult(brightness=0.5, num_images=1).plot()
    assert [patch.get_height() for patch in ax.patches] == [0.5]


def test_unregistering_leaves_the_registry_as_it_was(registered):
    assert PROBES.get("mean_brightness") is SPEC  # the result's name is an alias
    PROBES.unregister(NAME)
    assert NAME not in PROBES and "mean_brightness" not in PROBES
    register_probe(SPEC)
