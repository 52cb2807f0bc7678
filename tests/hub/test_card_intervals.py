# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The model card gives each model-index value that has a confidence interval (results.json "intervals") with it,
"x [lo, hi]", in the value's own units; the model-index YAML keeps the plain numbers; and a run without intervals
renders byte for byte the card it rendered before intervals existed (`BEFORE_INTERVALS`, rendered from the
pre-intervals run folder `tests/fixtures/old_run_6f0f446/run` by the renderer of commit b621b28)."""

import copy
from pathlib import Path

import pytest
import yaml
from huggingface_hub import ModelCard

from hf_vitrobust import __version__
from hf_vitrobust.analysis.kinds import headline_estimators
from hf_vitrobust.analysis.results import load_results
from hf_vitrobust.analysis.uncertainty import UncertaintySettings, intervals_of, read_predictions
from hf_vitrobust.data import BENCHMARKS
from hf_vitrobust.hub import render_model_card
from hf_vitrobust.metrics.intervals import Interval

RUN = Path(__file__).resolve().parents[1] / "fixtures" / "old_run_6f0f446" / "run"
REPO_ID = "me/robustness"
MODEL = "builtin:efficientnet_lite0"
KEY = "builtin_efficientnet_lite0"

# (benchmark, model-index metric name) -> (the interval's name in results.json, factor to the value's units).
# Written out here, independently of hf_vitrobust.hub.model_index.interval_headline.
WITH_INTERVALS = {
    ("imagenet-val", "Top-1 accuracy (%)"): ("imagenet-val top-1 %", 1.0),
    ("imagenet-val", "Expected calibration error (fraction, 15 bins)"): ("imagenet-val ECE %", 0.01),
    ("imagenet-c", "mCE (%, AlexNet-normalised, lower is better)"): ("imagenet-c mCE % (alexnet-15)", 1.0),
    (
        "imagenet-c",
        "Unnormalised mean corruption error over every corruption (%, unnormalized-19, lower is better)",
    ): ("imagenet-c mCE % (unnormalized-19)", 1.0),
    ("imagenet-c", "Mean top-1 over corruptions and severities (%)"): ("imagenet-c mean top-1 %", 1.0),
    ("imagenet-c", "Mean top-1 at severity 5 (%)"): ("imagenet-c severity-5 mean top-1 %", 1.0),
    ("imagenet-p", "Mean flip probability (fraction, lower is better)"): (
        "imagenet-p mFR unnormalised %",
        0.01,
    ),
}
# Model-index metric name -> the summary's name of the same number and the factor from the summary's units.
SUMMARY_NAMES = {
    ("imagenet-val", "Top-1 accuracy (%)"): ("imagenet-val top-1 %", 1.0),
    ("imagenet-c", "mCE (%, AlexNet-normalised, lower is better)"): ("imagenet-c mCE % (alexnet-15)", 1.0),
    (
        "imagenet-c",
        "Unnormalised mean corruption error over every corruption (%, unnormalized-19, lower is better)",
    ): ("imagenet-c mCE % (unnormalized-19)", 1.0),
    ("imagenet-c", "Mean top-1 over corruptions and severities (%)"): ("imagenet-c mean top-1 %", 1.0),
    ("imagenet-p", "Mean flip probability (fraction, lower is better)"): (
        "imagenet-p mFR unnormalised %",
        0.01,
    ),
}


def _old_run() -> dict:
    return load_results(RUN)[0]


@pytest.fixture(scope="module")
def run_with_intervals() -> dict:
    """The pre-intervals run with the intervals of its headline numbers computed from its own predictions."""
    result = _old_run()
    settings = UncertaintySettings(num_resamples=200, seed=3)
    intervals = {}
    for name, relative in result["predictions"][KEY].items():
        frame = read_predictions(RUN / relative)
        estimators = headline_estimators(BENCHMARKS.get(name), frame)
        intervals.update(intervals_of({label: (e, None) for label, e in estimators.items()}, settings))
    result["intervals"] = {KEY: intervals}
    result["uncertainty"] = settings.to_dict()
    return result


def _front_matter(card: str) -> str:
    return card.split("\n---\n", 1)[0]


def _model_index_values(card: str) -> dict[tuple[str, str], object]:
    values = {}
    for result in yaml.safe_load(_front_matter(card).removeprefix("---\n"))["model-index"][0]["results"]:
        benchmark = result["dataset"]["type"].split("/")[-1].rsplit("-", 1)[0]
        for metric in result["metrics"]:
            values[(benchmark, metric["name"])] = metric["value"]
    return values


def _interval_lines(card: str) -> list[str]:
    return [line for line in card.splitlines() if line.startswith(f"| {MODEL} | ") and "[" in line]


def test_the_card_gives_each_model_index_value_with_its_interval(run_with_intervals):
    card = render_model_card(results=[run_with_intervals], repo_id=REPO_ID)
    values = _model_index_values(card)
    lines = _interval_lines(card)
    records = run_with_intervals["intervals"][KEY]
    assert len(lines) == len(WITH_INTERVALS) == 7
    for (benchmark, metric), (name, factor) in WITH_INTERVALS.items():
        record = records[name]
        digits = 2 if factor == 1.0 else 4
        low, high = record["low"] * factor, record["high"] * factor
        text = f"{values[(benchmark, metric)]:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"
        matching = [line for line in lines if f"| {benchmark} | {metric} | {text} |" in line]
        assert len(matching) == 1, (benchmark, metric, text)
    top1 = records["imagenet-val top-1 %"]
    assert top1["num_samples"] == 6
    expected = f"83.33 [{top1['low']:.2f}, {top1['high']:.2f}] | 95 % Wilson interval, 6 images |"
    assert f"| {MODEL} | imagenet-val | Top-1 accuracy (%) | {expected}" in card
    mce = records["imagenet-c mCE % (alexnet-15)"]
    assert (
        f"| 100.50 [{mce['low']:.2f}, {mce['high']:.2f}] | 95 % percentile bootstrap interval over 3 clean images, "
        "200 resamples |" in card
    )
    # Values without an interval (top-5, the mean top-5 distance) are in the model-index but not in these rows.
    assert ("imagenet-val", "Top-5 accuracy (%)") in values
    assert not [line for line in lines if "Top-5" in line or "top-5 distance" in line]


def test_the_model_index_keeps_plain_numbers_equal_to_the_summary(run_with_intervals):
    with_intervals = render_model_card(results=[run_with_intervals], repo_id=REPO_ID)
    without = render_model_card(results=[_old_run()], repo_id=REPO_ID)
    assert _front_matter(with_intervals) == _front_matter(without)
    values = _model_index_values(with_intervals)
    summary = run_with_intervals["summary"][KEY]
    for where, (name, factor) in SUMMARY_NAMES.items():
        assert type(values[where]) is float
        assert values[where] == pytest.approx(summary[name] * factor, rel=1e-12)
    eval_results = ModelCard(with_intervals).data.eval_results
    assert len(eval_results) == len(values) == 10
    assert all(type(result.metric_value) is float for result in eval_results)


def test_a_run_without_intervals_renders_the_card_it_rendered_before():
    expected = BEFORE_INTERVALS.replace("@VERSION@", __version__)
    assert render_model_card(results=[_old_run()], repo_id=REPO_ID) == expected
    empty = {**_old_run(), "intervals": {}}
    assert render_model_card(results=[empty], repo_id=REPO_ID) == expected


def test_removing_the_intervals_gives_the_old_text(run_with_intervals):
    expected = BEFORE_INTERVALS.replace("@VERSION@", __version__)
    removed = {key: value for key, value in run_with_intervals.items() if key != "intervals"}
    assert "uncertainty" in removed
    assert render_model_card(results=[removed], repo_id=REPO_ID) == expected
    # With them, the card is the old one plus one block: the intervals table, just before the benchmarks table.
    lines = render_model_card(results=[run_with_intervals], repo_id=REPO_ID).splitlines()
    start = lines.index(
        "The model-index values with their confidence intervals (results.json `intervals`; the metadata holds the values"
    )
    end = lines.index("| Benchmark | Data | Generated here | Samples |")
    # The table is followed by one paragraph per caveat: the severity-5 top-1 and the mFR of these 3 clean images
    # fell back on the share bound (every resample equal; docs/protocols.md, "Units all alike").
    notes = [line for line in lines[start:end] if line.startswith("Note: ")]
    assert len(notes) == 1 and "every bootstrap replicate was equal" in notes[0]
    assert end - start == 2 + 1 + 2 + len(WITH_INTERVALS) + 1 + 2 * len(notes)
    assert lines[:start] + lines[end:] == expected.splitlines()


def _interval(estimate: float, low: float, high: float, method: str = "percentile bootstrap") -> dict:
    return Interval(
        estimate, low, high, 0.9, method, 40, unit="image", num_units=40, num_resamples=500
    ).to_dict()


def test_masked_top1_is_matched_by_its_class_mask_and_fractions_are_scaled():
    result = copy.deepcopy(_old_run())
    result["benchmarks"] = {
        "imagenet-a": {"task": "classification", "source": {"kind": "local"}, "num_samples": 40},
        "imagenet-o": {"task": "ood", "source": {"kind": "local"}, "num_samples": 40},
    }
    protocols = {
        "hendrycks-200": {"top1": 40.0, "top5": 70.0},
        "paul-chen-1000": {"top1": 30.0, "top5": 55.0},
    }
    result["metrics"] = {
        KEY: {
            "imagenet-a": {
                "num_samples": 40,
                "top1": 40.0,
                "top5": 70.0,
                "class_mask": "hendrycks-200",
                "protocols": protocols,
            },
            "imagenet-o": {"aupr": 0.8125, "auroc": 0.75, "fpr_at_95_tpr": 0.5},
        }
    }
    result["summary"] = {KEY: {"imagenet-a top-1 % (hendrycks-200)": 40.0, "imagenet-o AUPR %": 81.25}}
    result["intervals"] = {
        KEY: {
            "imagenet-a top-1 % (hendrycks-200)": _interval(40.0, 26.5, 55.25, "wilson"),
            # The other class mask's interval goes with that protocol's top-1 only.
            "imagenet-a top-1 % (paul-chen-1000)": _interval(30.0, 18.0, 45.0, "wilson"),
            "imagenet-o AUPR %": {**_interval(81.25, 70.5, 90.0), "note": "first-N subset of the stream"},
        }
    }
    card = render_model_card(results=[result], repo_id=REPO_ID)
    lines = _interval_lines(card)
    assert lines == [
        f"| {MODEL} | imagenet-a | Top-1 accuracy (%) | 40.00 [26.50, 55.25] | 90 % Wilson interval, 40 images |",
        f"| {MODEL} | imagenet-a | Top-1 over the set's 200 classes (%, hendrycks-200) | 40.00 [26.50, 55.25] | "
        "90 % Wilson interval, 40 images |",
        f"| {MODEL} | imagenet-a | Top-1 over all 1000 classes (%, paul-chen-1000) | 30.00 [18.00, 45.00] | "
        "90 % Wilson interval, 40 images |",
        f"| {MODEL} | imagenet-o | AUPR, OOD images positive (fraction) | 0.8125 [0.7050, 0.9000] | "
        "90 % percentile bootstrap interval over 40 images, 500 resamples |",
    ]
    assert "\nNote: first-N subset of the stream.\n" in card
    # An interval whose estimate is not the card's value is not printed next to it.
    result["intervals"][KEY]["imagenet-o AUPR %"] = _interval(79.0, 70.5, 90.0)
    assert [
        line for line in _interval_lines(render_model_card(results=[result])) if "imagenet-o" in line
    ] == []


# The card of tests/fixtures/old_run_6f0f446/run for "me/robustness", as rendered before intervals existed.
BEFORE_INTERVALS = """---
license: apache-2.0
pipeline_tag: image-classification
tags:
- hf_vitrobust
- robustness
- image-classification
- vision
- imagenet-c
- imagenet-p
- imagenet-val
model-index:
- name: builtin:efficientnet_lite0
  results:
  - task:
      type: image-classification
      name: Image Classification
    dataset:
      type: hf_vitrobust/imagenet-val-local
      name: imagenet-val (the photos bundled with hf_vitrobust; a demo sample)
      args:
        local: true
        kind: builtin-photos
        num_samples: 6
    metrics:
    - type: accuracy
      name: Top-1 accuracy (%)
      value: 83.33333333333334
    - type: top_5_accuracy
      name: Top-5 accuracy (%)
      value: 100.0
    - type: ece
      name: Expected calibration error (fraction, 15 bins)
      value: 0.3427327456197202
    source:
      name: hf_vitrobust results (run)
      url: https://huggingface.co/me/robustness/blob/main/results/run/results.json
  - task:
      type: image-classification
      name: Image Classification
    dataset:
      type: hf_vitrobust/imagenet-c-generated
      name: imagenet-c (generated by hf_vitrobust from builtin-photos; not the released files)
      args:
        generated: true
        clean_source: builtin-photos
        corruptions:
        - gaussian_noise
        - contrast
        severities:
        - 1
        - 5
        seed: 3
        num_samples: 12
    metrics:
    - type: mce
      name: mCE (%, AlexNet-normalised, lower is better)
      value: 100.49575366787428
    - type: mce
      name: Unnormalised mean corruption error over every corruption (%, unnormalized-19, lower is better)
      value: 83.33333333333333
    - type: relative_mce
      name: Relative mCE (%, lower is better)
      value: 127.44553892690278
    - type: accuracy
      name: Mean top-1 over corruptions and severities (%)
      value: 16.666666666666668
    - type: accuracy_severity_5
      name: Mean top-1 at severity 5 (%)
      value: 0.0
    source:
      name: hf_vitrobust results (run)
      url: https://huggingface.co/me/robustness/blob/main/results/run/results.json
  - task:
      type: image-classification
      name: Image Classification
    dataset:
      type: hf_vitrobust/imagenet-p-generated
      name: imagenet-p (generated by hf_vitrobust from builtin-photos; not the released files)
      args:
        generated: true
        clean_source: builtin-photos
        perturbations:
        - gaussian_noise
        difficulty: 1
        seed: 3
        num_samples: 2
    metrics:
    - type: flip_probability
      name: Mean flip probability (fraction, lower is better)
      value: 0.03333333333333333
    - type: top_5_distance
      name: Mean top-5 distance (lower is better)
      value: 1.5666666666666667
    source:
      name: hf_vitrobust results (run)
      url: https://huggingface.co/me/robustness/blob/main/results/run/results.json
---

<!-- This card was rendered by hf_vitrobust @VERSION@ from the templates in model_cards/ (hf_vitrobust.hub.cards). -->

# robustness

Robustness results computed with hf_vitrobust, which studies the robustness of Vision Transformers (Paul & Chen, AAAI 2022; Park & Kim, ICLR 2022). Each run's `results.json`
(everything needed to trust, reproduce and recompute it), per-sample predictions, figures and report are in
`results/<run>/`.

## Robustness results

### Run `run` (suite `old-run`)
a run folder written before issue 17 (tests/fixtures/old_run); a few photos and every kind of output

| Model | imagenet-val top-1 % | imagenet-c mean top-1 % | imagenet-c mCE % (alexnet-15) | imagenet-c mCE % (unnormalized-19) | imagenet-p mFR unnormalised % |
|---|---:|---:|---:|---:|---:|
| builtin:efficientnet_lite0 | 83.33 | 16.67 | 100.5 | 83.33 | 3.333 |

| Benchmark | Data | Generated here | Samples |
|---|---|---|---:|
| imagenet-val | imagenet-val (the photos bundled with hf_vitrobust; a demo sample) | no | 6 |
| imagenet-c | imagenet-c (generated by hf_vitrobust from builtin-photos; not the released files) | yes | 12 |
| imagenet-p | imagenet-p (generated by hf_vitrobust from builtin-photos; not the released files) | yes | 2 |

Probes: feature_variance, fourier_heatmap, frequency_noise, occlusion, pgd.
Details: [`results/run/`](results/run/) (results.json, report, per-sample predictions, figures).
Computed 2026-12-02T02:36:43+00:00 with hf_vitrobust 0.1.0, commit unknown. The command that reproduces these numbers (with that
version and commit of hf_vitrobust installed from its checkout):

```bash
vitrobust evaluate --model builtin:efficientnet_lite0 --suite /tmp/oldrun/suite.yaml --protocol imagenet-val.preprocessing=model-native --protocol imagenet-c.preprocessing=as-released --protocol imagenet-c.mce=alexnet-15 --protocol imagenet-c.release_encoding=jpeg-85 --protocol imagenet-p.preprocessing=as-released --protocol imagenet-p.release_encoding=none --seed 3
```

## Limitations

- Benchmarks marked *generated* were corrupted on the fly by hf_vitrobust's corruption engine from clean images, not read from the released ImageNet-C/-P files: close to, but not the official benchmarks.
- Results on the photos bundled with hf_vitrobust (a few dozen images) demonstrate every output of a run; they are not a measurement.
- Some ImageNet-C cells were missing: those mCE values cover the cells present only.
- Robustness numbers depend on the exact data, preprocessing and metric protocol: compare models only within one
  results table (same run), never across papers' numbers without checking the protocol.

## Citation

```bibtex
@inproceedings{paul2022vision,
  title     = {Vision Transformers are Robust Learners},
  author    = {Paul, Sayak and Chen, Pin-Yu},
  booktitle = {Proceedings of the AAAI Conference on Artificial Intelligence},
  volume    = {36},
  number    = {2},
  pages     = {2071--2081},
  year      = {2022}
}
```

```bibtex
@inproceedings{park2022how,
  title     = {How Do Vision Transformers Work?},
  author    = {Park, Namuk and Kim, Songkuk},
  booktitle = {International Conference on Learning Representations},
  year      = {2022}
}
```

```bibtex
@inproceedings{hendrycks2019benchmarking,
  title     = {Benchmarking Neural Network Robustness to Common Corruptions and Perturbations},
  author    = {Hendrycks, Dan and Dietterich, Thomas},
  booktitle = {International Conference on Learning Representations},
  year      = {2019}
}
```

"""
