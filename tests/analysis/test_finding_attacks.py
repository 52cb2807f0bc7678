# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Paul & Chen's Fig. 11 (DeepFool perturbations: BiT's concentrate in low frequencies, ViT's spread) and Fig. 13
(PGD: BiT's loss rises faster) as findings the attack probes declare, checked by hf_vitrobust.analysis.findings on
constructed run records: holds, reversed, not checked under another protocol, checked when asked and marked, and a
record made before the per-image quantities were kept (not checked, no crash)."""

from __future__ import annotations

import numpy as np
import pytest
from reproduction_runs import Model, accuracy_frame, write_run

from hf_vitrobust.analysis.findings import check_findings, findings_of, get_finding
from hf_vitrobust.analysis.results import load_results, merge_results
from hf_vitrobust.analysis.run_models import RunModel
from hf_vitrobust.analysis.uncertainty import UncertaintySettings

SETTINGS = UncertaintySettings(confidence_level=0.95, num_resamples=300, seed=3)
VIT, BIT = "google/vit-base-patch16-224", "timm/resnetv2_101x1_bit.goog_in21k_ft_in1k"
PAPERS = {VIT: "native-resize", BIT: "squash-224"}
N = 80
KEYS = list(range(100, 100 + N))


def _deepfool(shares: np.ndarray, steps: int = 50) -> dict:
    """A merged deepfool dict whose attacked images have these low-frequency shares (one unperturbed: None)."""
    values = [*shares.tolist(), None]
    return {
        "success": [True] * len(values),
        "steps": steps,
        "candidates": 10,
        "overshoot": 0.02,
        "spectrum": "paul-chen-notebook",
        "benchmark": "imagenet-val",
        "per_image": {"keys": [*KEYS, 999], "low_frequency_share": values},
    }


def _pgd(rise: np.ndarray, record: str, step_size: float) -> dict:
    """A merged pgd dict whose images' cross-entropy rises linearly by `rise` per step over 10 steps."""
    cross_entropy = 0.5 + rise[:, None] * np.arange(10)[None, :]
    notebook = record != "every-step"
    return {
        "record": record,
        "method": "adam",
        "eps": 0.001,
        "step_size": step_size,
        "steps": 10,
        "losses": (-cross_entropy if notebook else cross_entropy).tolist(),
        "num_images": N,
        "benchmark": "imagenet-val",
        "per_image": {"keys": KEYS},
    }


def _models(
    tmp_path, vit_probes: dict, bit_probes: dict, applied: dict | None = None
) -> tuple[RunModel, ...]:
    applied = applied or PAPERS
    models = [
        Model(
            spec,
            {"imagenet-val": accuracy_frame(np.ones(4, dtype=bool))},
            probes,
            {"imagenet-val": applied[spec]},
        )
        for spec, probes in ((VIT, vit_probes), (BIT, bit_probes))
    ]
    result = merge_results(load_results([write_run(tmp_path, models)]))[0]
    return tuple(RunModel(result, model["key"]) for model in result["models"])


def _shares(mean: float, seed: int) -> np.ndarray:
    return np.clip(mean + 0.05 * np.random.default_rng(seed).standard_normal(N), 0.0, 1.0)


def test_fig_11_deepfool_low_frequency_share(tmp_path):
    finding = get_finding("fig-11-deepfool-spectrum")
    assert finding in findings_of("paul-chen") and "Fig. 11" in finding.source and finding.direction == -1
    vit_shares, bit_shares = _shares(0.3, 1), _shares(0.7, 2)
    vit, bit = _models(
        tmp_path / "holds", {"deepfool": _deepfool(vit_shares)}, {"deepfool": _deepfool(bit_shares)}
    )
    [holds] = check_findings([vit], [bit], [finding], SETTINGS)
    assert holds.verdict == "holds" and holds.num_units == N  # the unperturbed image is left out
    assert holds.vit_value == pytest.approx(100 * vit_shares.mean(), abs=1e-9)
    assert holds.cnn_value == pytest.approx(100 * bit_shares.mean(), abs=1e-9)
    assert holds.protocol["cnn"] == {
        "preprocessing": "squash-224",
        "steps": "50",
        "overshoot": "0.02",
        "candidates": "10",
    }
    vit, bit = _models(
        tmp_path / "reversed", {"deepfool": _deepfool(bit_shares)}, {"deepfool": _deepfool(vit_shares)}
    )
    assert check_findings([vit], [bit], [finding], SETTINGS)[0].verdict == "reversed"
    # The two attacks must share their settings.
    vit, bit = _models(
        tmp_path / "steps", {"deepfool": _deepfool(vit_shares)}, {"deepfool": _deepfool(bit_shares, steps=20)}
    )
    [other] = check_findings([vit], [bit], [finding], SETTINGS)
    assert (other.verdict, other.reason) == ("not checked", "other protocol (steps: ViT 50, CNN 20)")
    [asked] = check_findings([vit], [bit], [finding], SETTINGS, check_other_protocols=True)
    assert asked.verdict == "holds under another protocol"


def test_fig_13_pgd_loss_rise_under_each_notebooks_attack(tmp_path):
    finding = get_finding("fig-13-pgd-loss-rise")
    assert finding in findings_of("paul-chen") and "Fig. 13" in finding.source and finding.direction == -1
    slow, fast = _shares(0.02, 3), _shares(0.2, 4)
    papers = (
        {"pgd": _pgd(slow, "paul-chen-notebook", 0.0005)},
        {"pgd": _pgd(fast, "paul-chen-bit-notebook", 0.001)},
    )
    vit, bit = _models(tmp_path / "paper", *papers)
    [holds] = check_findings([vit], [bit], [finding], SETTINGS)
    assert holds.verdict == "holds" and holds.other_protocol is None
    assert holds.vit_value == pytest.approx(slow.mean(), abs=1e-9)
    assert holds.cnn_value == pytest.approx(fast.mean(), abs=1e-9)
    vit, bit = _models(
        tmp_path / "reversed",
        {"pgd": _pgd(fast, "paul-chen-notebook", 0.0005)},
        {"pgd": _pgd(slow, "paul-chen-bit-notebook", 0.001)},
    )
    assert check_findings([vit], [bit], [finding], SETTINGS)[0].verdict == "reversed"
    # The suite's fair run, one bounded attack for both: not the paper's protocol, checked only when asked.
    fair = (
        {"pgd": _pgd(slow, "paul-chen-notebook", 0.0005)},
        {"pgd": _pgd(fast, "paul-chen-notebook", 0.0005)},
    )
    vit, bit = _models(tmp_path / "fair", *fair)
    [skipped] = check_findings([vit], [bit], [finding], SETTINGS)
    assert skipped.verdict == "not checked" and skipped.difference is None
    assert skipped.reason.startswith(
        "other protocol (record: ViT paul-chen-notebook, CNN paul-chen-notebook here; the paper's ViT "
        "paul-chen-notebook, CNN paul-chen-bit-notebook; step_size: ViT 0.0005, CNN 0.0005 here"
    )
    [marked] = check_findings([vit], [bit], [finding], SETTINGS, check_other_protocols=True)
    assert marked.verdict == "holds under another protocol"
    assert marked.difference["estimate"] == pytest.approx(slow.mean() - fast.mean(), abs=1e-9)
    # Another preprocessing for the BiT (its own 448 pixels): another protocol too.
    vit, bit = _models(tmp_path / "native", *papers, applied={VIT: "native-resize", BIT: "model-native"})
    [native] = check_findings([vit], [bit], [finding], SETTINGS)
    assert native.reason == (
        "other protocol (preprocessing: ViT native-resize, CNN model-native here; the paper's ViT native-resize, "
        "CNN squash-224)"
    )


def test_records_without_the_per_image_quantities_are_not_checked(tmp_path):
    old_deepfool = {key: value for key, value in _deepfool(_shares(0.3, 1)).items() if key != "per_image"}
    old_pgd = _pgd(_shares(0.02, 3), "paul-chen-notebook", 0.0005)
    old_pgd.pop("per_image")
    bit_pgd = _pgd(_shares(0.2, 4), "paul-chen-bit-notebook", 0.001)
    vit, bit = _models(
        tmp_path,
        {"deepfool": old_deepfool, "pgd": old_pgd},
        {"deepfool": _deepfool(_shares(0.7, 2)), "pgd": bit_pgd},
    )
    findings = [get_finding("fig-11-deepfool-spectrum"), get_finding("fig-13-pgd-loss-rise")]
    checks = check_findings([vit], [bit], findings, SETTINGS)
    assert [c.verdict for c in checks] == ["not checked", "not checked"]
    for check, probe in zip(checks, ("deepfool", "pgd"), strict=True):
        assert check.reason == (
            f"{vit.key}: {probe}: the probe kept no per-image record (a run made before it was recorded)"
        )
