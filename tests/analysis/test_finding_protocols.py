# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Findings know their protocol (`analysis.findings.protocol_of`): a pair whose runs differ from the paper's
protocol parts is not checked, unless asked (`check_other_protocols`, `vitrobust report --check-other-protocols`),
and then its verdict says "under another protocol". And Paul & Chen's Fig. 2 finding: the top-1 at severity 5
averaged over the corruptions, on constructed pairs where it holds and where it is reversed."""

from __future__ import annotations

import numpy as np
import pytest
from reproduction_runs import Model, accuracy_frame, cell_frame, write_run

from hf_vitrobust.analysis.findings import check_findings, get_finding
from hf_vitrobust.analysis.results import load_results, merge_results
from hf_vitrobust.analysis.run_models import RunModel
from hf_vitrobust.analysis.uncertainty import UncertaintySettings
from hf_vitrobust.cli import main as cli_main

SETTINGS = UncertaintySettings(confidence_level=0.95, num_resamples=300, seed=5)
VIT, CNN = "google/vit-large-patch16-224", "timm/resnetv2_101x3_bit.goog_in21k_ft_in1k"
N = 300
CORRUPTIONS = ("contrast", "fog", "gaussian_noise")


def _flags(rate: float, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).random(N) < rate


def _model(spec: str, a: float, severity5: dict[str, float], seed: int, applied: dict[str, str]) -> Model:
    cells = {(c, 5): _flags(rate, seed + i) for i, (c, rate) in enumerate(severity5.items())}
    cells[("contrast", 3)] = _flags(1.0 - severity5["contrast"], seed + 9)  # another severity: not read
    frames = {"imagenet-a": accuracy_frame(_flags(a, seed + 10)), "imagenet-c": cell_frame(cells)}
    return Model(spec, frames, applied=applied)


def _run(tmp_path, vit: Model, cnn: Model):
    folder = write_run(tmp_path, [vit, cnn], suite=SUITE)
    result = merge_results(load_results([folder]))[0]
    return folder, [RunModel(result, model["key"]) for model in result["models"]]


SUITE = {"name": "paper", "model_pairs": [{"name": "vit-l16/bit-m-r101x3", "vit": VIT, "cnn": CNN}]}
PAPERS = {VIT: {"imagenet-a": "native-resize"}, CNN: {"imagenet-a": "squash-224"}}
VIT_C = {"contrast": 0.2, "fog": 0.7, "gaussian_noise": 0.6}
CNN_C = {"contrast": 0.5, "fog": 0.4, "gaussian_noise": 0.3}


def test_a_finding_under_another_protocol_is_not_checked_unless_asked(tmp_path):
    # Both models at their own transform on ImageNet-A (the `paper` suite before its pairing): not the notebooks'.
    native = {"imagenet-a": "model-native"}
    _, (vit, cnn) = _run(
        tmp_path / "native", _model(VIT, 0.3, VIT_C, 0, native), _model(CNN, 0.1, CNN_C, 20, native)
    )
    _, (paper_vit, paper_cnn) = _run(
        tmp_path / "paper", _model(VIT, 0.3, VIT_C, 0, PAPERS[VIT]), _model(CNN, 0.1, CNN_C, 20, PAPERS[CNN])
    )
    names = [get_finding("imagenet-a"), get_finding("contrast-severity-5")]
    wanted = "preprocessing: ViT model-native, CNN model-native here; the paper's ViT native-resize, CNN squash-224"
    [skipped, contrast] = check_findings([vit], [cnn], names, SETTINGS)
    assert (skipped.verdict, skipped.reason, skipped.other_protocol) == (
        "not checked",
        f"other protocol ({wanted})",
        wanted,
    )
    assert skipped.difference is None and skipped.p_holm is None
    assert skipped.protocol == {
        "vit": {"preprocessing": "model-native"},
        "cnn": {"preprocessing": "model-native"},
    }
    assert (
        contrast.verdict == "holds" and contrast.other_protocol is None
    )  # both as the run gave them: shared

    [marked, _] = check_findings([vit], [cnn], names, SETTINGS, check_other_protocols=True)
    [matched, _] = check_findings([paper_vit], [paper_cnn], names, SETTINGS)
    assert matched.verdict == "holds" and matched.other_protocol is None and matched.reason is None
    assert marked.verdict == "holds under another protocol" and marked.other_protocol == wanted
    # Checked as any other: ViT minus CNN from the predictions, in Holm's correction.
    a, b = vit.frame("imagenet-a"), cnn.frame("imagenet-a")
    right = [100 * (f["prediction"] == f["label"]).mean() for f in (a, b)]
    assert marked.difference["estimate"] == pytest.approx(right[0] - right[1], abs=1e-12)
    assert marked.difference == matched.difference and marked.p_holm is not None
    assert marked.to_dict()["other_protocol"] == wanted


def test_parts_the_two_runs_must_share(tmp_path):
    # ImageNet-C: the paper names no preprocessing per role; the two models must have had the same one.
    apart = {VIT: {"imagenet-c": "as-released"}, CNN: {"imagenet-c": "native-resize"}}
    _, (vit, cnn) = _run(
        tmp_path, _model(VIT, 0.3, VIT_C, 0, apart[VIT]), _model(CNN, 0.1, CNN_C, 20, apart[CNN])
    )
    finding = get_finding("imagenet-c-severity-5")
    assert [part.part for part in finding.protocol] == ["preprocessing", "release_encoding"]
    [check] = check_findings([vit], [cnn], [finding], SETTINGS)
    assert check.verdict == "not checked"
    assert check.reason == "other protocol (preprocessing: ViT as-released, CNN native-resize)"
    [marked] = check_findings([vit], [cnn], [finding], SETTINGS, check_other_protocols=True)
    assert marked.verdict == "holds under another protocol"  # the ViT's mean: 50 %, the CNN's 40 %


def test_fig2_mean_top1_at_severity_5_holds_and_reverses(tmp_path):
    both = {"imagenet-c": "as-released"}
    finding = get_finding("imagenet-c-severity-5")
    assert "Fig. 2" in finding.source and finding.direction == +1
    _, (vit, cnn) = _run(
        tmp_path / "holds", _model(VIT, 0.3, VIT_C, 0, both), _model(CNN, 0.1, CNN_C, 20, both)
    )
    [holds] = check_findings([vit], [cnn], [finding], SETTINGS)
    assert holds.verdict == "holds" and holds.num_units == N
    # The mean over the three corruptions of each one's top-1 at severity 5 (severity 3 is not read).
    frame = vit.frame("imagenet-c")
    five = frame[frame["severity"] == 5]
    per_corruption = [(f["prediction"] == f["label"]).mean() for _, f in five.groupby("corruption")]
    assert len(per_corruption) == 3
    assert holds.vit_value == pytest.approx(100 * np.mean(per_corruption), abs=1e-9)
    # The ViT below on average (though above on contrast): reversed.
    _, (low_vit, high_cnn) = _run(
        tmp_path / "reversed", _model(VIT, 0.3, CNN_C, 20, both), _model(CNN, 0.1, VIT_C, 0, both)
    )
    [reversed_] = check_findings([low_vit], [high_cnn], [finding], SETTINGS)
    assert reversed_.verdict == "reversed"
    assert reversed_.vit_value == pytest.approx(holds.cnn_value) and reversed_.cnn_value == pytest.approx(
        holds.vit_value
    )


def test_the_report_command_checks_other_protocols_when_asked(tmp_path):
    native = {"imagenet-a": "model-native"}
    folder, _ = _run(
        tmp_path / "run", _model(VIT, 0.3, VIT_C, 0, native), _model(CNN, 0.1, CNN_C, 20, native)
    )
    assert (
        cli_main(["report", str(folder), "--output", str(tmp_path / "plain"), "--num-resamples", "200"]) == 0
    )
    plain = (tmp_path / "plain" / "report.md").read_text()
    assert "not checked: other protocol (preprocessing: ViT model-native, CNN model-native here" in plain
    row = next(line for line in plain.splitlines() if line.startswith("| ViT above BiT on ImageNet-A"))
    assert row.rstrip(" |").endswith("| not checked")
    assert "`vitrobust report --check-other-protocols` checks them" in plain
    assert (
        cli_main(
            [
                "report",
                str(folder),
                "--output",
                str(tmp_path / "asked"),
                "--num-resamples",
                "200",
                "--check-other-protocols",
            ]
        )
        == 0
    )
    asked = (tmp_path / "asked" / "report.md").read_text()
    row = next(line for line in asked.splitlines() if line.startswith("| ViT above BiT on ImageNet-A"))
    assert row.rstrip(" |").endswith("holds under another protocol")
    assert "here they were checked as asked" in asked and "--check-other-protocols` checks them" not in asked
