# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""`--check-other-protocols` on `vitrobust evaluate` and `vitrobust reproduce`, as on `vitrobust report`: a finding
whose two runs differ from the paper's protocol is checked anyway, its verdict says "under another protocol",
results.json records that the option was on, and the report says so. Without it the finding is not checked
(tests/analysis/test_finding_protocols.py covers `report`)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import yaml
from PIL import Image
from probe_models import save_tiny_vit
from reproduction_runs import Model, accuracy_frame, write_run

from hf_vitrobust.cli import main
from hf_vitrobust.data.class_lists import imagenet_a_classes
from hf_vitrobust.report.document import render_markdown

FINDING = "| ViT above BiT on ImageNet-A"


def _finding_row(report: str) -> str:
    return next(line for line in report.splitlines() if line.startswith(FINDING))


def test_evaluate_passes_the_option_to_its_report(tmp_path):
    folder_a = tmp_path / "imagenet-a"
    for value, wnid in enumerate(imagenet_a_classes().wnids[:3]):
        (folder_a / wnid).mkdir(parents=True)
        Image.new("RGB", (36, 32), (40 * value, 90, 200)).save(folder_a / wnid / "x.png")
    vit = save_tiny_vit(tmp_path / "vit")
    suite = {
        "name": "paper",  # the suite's name says whose findings apply (Paul & Chen's)
        "batch_size": 4,
        "chunk_size": 4,
        "benchmarks": {"imagenet-a": {"source": str(folder_a)}},
        # The tiny ViT stands for both models of the paper's pair (one model keeps the run short), read with its own
        # transform on ImageNet-A, not the notebooks' squashes: another protocol.
        "model_pairs": [{"name": "vit-l16/bit-m-r101x3", "vit": vit, "cnn": vit}],
    }
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(suite))
    output = tmp_path / "run"
    args = [
        "evaluate",
        "--suite",
        str(tmp_path / "suite.yaml"),
        "--model",
        vit,
        "--no-report",
    ]
    args += ["--output", str(output), "--quiet", "--num-resamples", "100", "--check-other-protocols"]
    assert main(args) == 0
    results = json.loads((output / "results.json").read_text())
    assert results["analysis"]["check_other_protocols"] is True
    (group,) = [g for g in results["analysis"]["findings"] if g["pair"] == "vit-l16/bit-m-r101x3"]
    (check,) = [c for c in group["checks"] if c["claim"] == "ViT above BiT on ImageNet-A"]
    assert check["verdict"] == "not resolved under another protocol"  # the same model on both sides
    # The report (its text; the figures are left out to keep the test fast) reads what the run stored.
    report = render_markdown([results], {})
    assert _finding_row(report).rstrip(" |").endswith("under another protocol")
    assert "here they were checked as asked" in report


def test_reproduce_passes_the_option_to_its_report(tmp_path, monkeypatch):
    """The legs are constructed runs (on ImageNet-A, read with each model's own transform, the ViT legs right on
    three images in four, the BiT-M leg on the fourth): what `vitrobust reproduce` does with them is real."""

    def constructed_leg(config):
        spec = config.models[0]
        leg = json.loads(Path(config.suite).read_text())
        frames = {}
        if "imagenet-a" in leg["benchmarks"]:
            every_fourth = np.arange(60) % 4 == 0
            frames["imagenet-a"] = accuracy_frame(~every_fourth if "vit" in spec else every_fourth)
        write_run(Path(config.output), [Model(spec, frames)], suite={"name": "paper", "model_pairs": []})

    monkeypatch.setattr("hf_vitrobust.evaluation.reproduce.evaluate", constructed_leg)
    plain, asked = tmp_path / "plain", tmp_path / "asked"
    assert main(["reproduce", "paul-chen", "--output", str(plain), "--quiet", "--num-resamples", "100"]) == 0
    assert main([*map(str, ["reproduce", "paul-chen", "--output", asked, "--quiet", "--num-resamples", "100"]),
                 "--check-other-protocols"]) == 0  # fmt: skip
    records = [json.loads((folder / "reproduction.json").read_text()) for folder in (plain, asked)]
    assert [record["check_other_protocols"] for record in records] == [False, True]
    plain_row, asked_row = (_finding_row((folder / "report.md").read_text()) for folder in (plain, asked))
    assert plain_row.rstrip(" |").endswith("| not checked")
    assert asked_row.rstrip(" |").endswith("holds under another protocol")
    assert "here they were checked as asked" in (asked / "report.md").read_text()
