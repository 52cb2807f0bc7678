# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Claims over a model set, checked over the models of a run (`analysis.finding_sets`): Paul & Chen's Table 7,
each attention CNN of the run against its plain ResNet-50 on ImageNet-A and -R, where it holds and where it fails;
the baseline is a plain ResNet-50 only; the analysis stores the set's checks beside the pairs'."""

from __future__ import annotations

import numpy as np
import pytest
from reproduction_runs import Model, accuracy_frame, cell_frame, write_run

from hf_vitrobust.analysis.analyze import analyze
from hf_vitrobust.analysis.finding_sets import (
    FINDING_SETS,
    finding_set_checks,
    is_park_kim_resnet50,
    is_plain_vit,
    is_resnet50,
)
from hf_vitrobust.analysis.results import load_results, merge_results
from hf_vitrobust.analysis.uncertainty import UncertaintySettings
from hf_vitrobust.report.document import write_report

SETTINGS = UncertaintySettings(confidence_level=0.95, num_resamples=300, seed=2)
N = 400
GERNET, SKRESNET, RESNET50 = "timm/gernet_s.idstcv_in1k", "timm/skresnet18.ra_in1k", "timm/resnet50.a1_in1k"


def _model(spec: str, a: float, r: float, seed: int) -> Model:
    flags = np.random.default_rng(seed).random((2, N))
    frames = {"imagenet-a": accuracy_frame(flags[0] < a), "imagenet-r": accuracy_frame(flags[1] < r)}
    return Model(spec, frames, applied=dict.fromkeys(frames, "squash-224"))


def _runs(tmp_path, models):
    return merge_results(load_results([write_run(tmp_path, models)]))


def test_table_7_over_the_models_of_a_run(tmp_path):
    results = _runs(
        tmp_path / "run",
        [
            _model(GERNET, 0.30, 0.60, 1),  # above the ResNet-50 on both: holds
            _model(SKRESNET, 0.02, 0.15, 2),  # below on both: reversed
            _model(RESNET50, 0.10, 0.35, 3),
            _model("timm/vit_base_patch16_224.augreg_in1k", 0.5, 0.5, 4),  # in no set
        ],
    )
    found = finding_set_checks(results, SETTINGS)
    by_member = {pairing.vit[0][1]: (pairing, checks) for pairing, checks in found}
    keys = {m["spec"]: m["key"] for m in results[0]["models"]}
    assert set(by_member) == {keys[GERNET], keys[SKRESNET]}
    for spec, verdict in ((GERNET, "holds"), (SKRESNET, "reversed")):
        pairing, checks = by_member[keys[spec]]
        assert pairing.origin == "model set" and pairing.cnn == ((0, keys[RESNET50]),)
        assert pairing.name == f"table-7: {keys[spec]} against {keys[RESNET50]}"
        assert [c.finding.name for c in checks] == ["table-7-imagenet-a", "table-7-imagenet-r"]
        assert [c.verdict for c in checks] == [verdict, verdict], spec
        assert all(c.finding.source == "Paul & Chen, Table 7" for c in checks)
    # The values are each model's top-1 over all 1000 classes, from its own predictions.
    gernet_a = by_member[keys[GERNET]][1][0]
    gernet, resnet = (np.random.default_rng(seed).random((2, N))[0] for seed in (1, 3))
    assert gernet_a.vit_value == pytest.approx(100 * (gernet < 0.30).mean(), abs=1e-12)
    assert gernet_a.cnn_value == pytest.approx(100 * (resnet < 0.10).mean(), abs=1e-12)
    # The analysis stores them beside the pairs' findings.
    analysis = analyze(results, SETTINGS)
    assert [g["origin"] for g in analysis.findings] == ["model set", "model set"]
    assert {g["pair"] for g in analysis.findings} == {pairing.name for pairing, _ in found}
    # The report titles each by its models, not as a pair.
    analysis.store(results)
    text = write_report(results, tmp_path / "report")["markdown"].read_text()
    for pairing, _ in found:
        assert f"models {pairing.name}" in text and f"pair {pairing.name}" not in text


def test_no_plain_resnet50_no_check_and_protocols_must_match(tmp_path):
    assert finding_set_checks(_runs(tmp_path / "none", [_model(GERNET, 0.3, 0.6, 1)]), SETTINGS) == []
    assert [s for s in ("timm/resnet50.a1_in1k", "microsoft/resnet-50") if is_resnet50(s)] == [
        "timm/resnet50.a1_in1k",
        "microsoft/resnet-50",
    ]
    assert not any(is_resnet50(s) for s in ("timm/resnet50d.ra2_in1k", "timm/skresnet50", "timm/seresnet50"))
    # A ResNet-50 given another preprocessing than the member: not checked (the notebooks squash all to 224).
    other = _model(RESNET50, 0.1, 0.35, 3)
    other.applied = {"imagenet-a": "model-native", "imagenet-r": "squash-224"}
    [(_, checks)] = finding_set_checks(
        _runs(tmp_path / "apart", [_model(GERNET, 0.3, 0.6, 1), other]), SETTINGS
    )
    assert [c.verdict for c in checks] == ["not checked", "holds"]
    assert checks[0].reason == "other protocol (preprocessing: ViT squash-224, CNN model-native)"
    assert "table-7" in FINDING_SETS.names()


def _heatmap(errors: np.ndarray, eps: float = 4.0) -> dict:
    """A fourier_heatmap probe dict whose images have these mean errors over the map."""
    return {
        "error_map": [[float(errors.mean())]],
        "eps": eps,
        "window": 3,
        "num_images": len(errors),
        "benchmark": "imagenet-val",
        "per_image": {"keys": list(range(500, 500 + len(errors))), "map_error": errors.tolist()},
    }


def test_fig_9_vit_and_bit_against_resnet50(tmp_path):
    rng = np.random.default_rng(9)
    vit, bit, resnet = (np.clip(m + 0.1 * rng.standard_normal(200), 0, 1) for m in (0.3, 0.8, 0.5))
    models = [
        Model("google/vit-base-patch16-224", probes={"fourier_heatmap": _heatmap(vit)}),
        Model("timm/resnetv2_50x1_bit.goog_in21k_ft_in1k", probes={"fourier_heatmap": _heatmap(bit)}),
        Model(RESNET50, probes={"fourier_heatmap": _heatmap(resnet)}),
    ]
    results = _runs(tmp_path / "fig9", models)
    found = {p.vit[0][1]: checks for p, checks in finding_set_checks(results, SETTINGS) if "fig-9" in p.name}
    keys = [m["key"] for m in results[0]["models"]]
    assert set(found) == set(keys[:2])
    [vit_check], [bit_check] = found[keys[0]], found[keys[1]]
    assert "Fig. 9" in vit_check.finding.source and vit_check.finding.direction == -1
    assert (
        vit_check.verdict == "holds" and bit_check.verdict == "reversed"
    )  # less sensitive holds; BiT here more
    assert vit_check.vit_value == pytest.approx(100 * vit.mean()) and vit_check.cnn_value == pytest.approx(
        100 * resnet.mean()
    )
    # Another perturbation size is another protocol.
    models[2].probes["fourier_heatmap"] = _heatmap(resnet, eps=2.0)
    other = finding_set_checks(_runs(tmp_path / "eps", models), SETTINGS)
    assert {c.reason for _, checks in other for c in checks} == {"other protocol (eps: ViT 4.0, CNN 2.0)"}


# ------------------------------------------------------------------------------- Park & Kim: AlterNet on CIFAR-100
ALTERNET, PK_RESNET, PK_VIT = "./checkpoints/alternet-50-cifar100", "park-kim:resnet-50", "park-kim:vit-ti"


def _cifar_model(spec: str, clean: float, corrupted: float, seed: int) -> Model:
    rng = np.random.default_rng(seed)
    cells = {(c, s): rng.random(N // 4) < corrupted for c in ("fog", "contrast") for s in (1, 5)}
    frames = {"cifar100": accuracy_frame(rng.random(N) < clean), "cifar100-c": cell_frame(cells)}
    return Model(spec, frames, applied=dict.fromkeys(frames, "as-released"))


def test_alternet_above_the_cnn_and_the_vit_on_cifar_100_where_a_run_holds_them(tmp_path):
    assert FINDING_SETS["alternet-above-cnn"].paper == FINDING_SETS["alternet-above-vit"].paper == "park-kim"
    assert is_park_kim_resnet50("https://github.com/x/resnet_50_cifar100_691cc9a9e4.pth.tar")
    assert not is_park_kim_resnet50("timm/seresnet50.a1_in1k") and not is_plain_vit("park-kim:pit-ti")
    results = _runs(
        tmp_path / "run",
        [
            _cifar_model(ALTERNET, 0.80, 0.60, 1),
            _cifar_model(PK_RESNET, 0.60, 0.40, 2),  # below the AlterNet on both: holds
            _cifar_model(PK_VIT, 0.95, 0.90, 3),  # above the AlterNet on both: reversed
        ],
    )
    keys = {m["spec"]: m["key"] for m in results[0]["models"]}
    found = {
        p.name: (p, checks) for p, checks in finding_set_checks(results, SETTINGS) if p.paper == "park-kim"
    }
    assert set(found) == {
        f"alternet-above-cnn: {keys[ALTERNET]} against {keys[PK_RESNET]}",
        f"alternet-above-vit: {keys[ALTERNET]} against {keys[PK_VIT]}",
    }
    cnn_checks = found[f"alternet-above-cnn: {keys[ALTERNET]} against {keys[PK_RESNET]}"][1]
    vit_checks = found[f"alternet-above-vit: {keys[ALTERNET]} against {keys[PK_VIT]}"][1]
    assert [c.finding.data for c in cnn_checks] == ["cifar100", "cifar100-c"]
    assert [c.verdict for c in cnn_checks] == ["holds", "holds"]
    assert [c.verdict for c in vit_checks] == ["reversed", "reversed"]
    # The values: each model's own top-1 from its predictions, and the mean over the 4 cells of CIFAR-100-C.
    rng = np.random.default_rng(1)
    cells = [rng.random(N // 4) < 0.60 for _ in range(4)]
    clean = rng.random(N) < 0.80
    assert cnn_checks[0].vit_value == pytest.approx(100 * clean.mean(), abs=1e-12)
    assert cnn_checks[1].vit_value == pytest.approx(100 * np.mean([c.mean() for c in cells]), abs=1e-9)
    # A run without an AlterNet holds neither set.
    alone = _runs(
        tmp_path / "no-alternet", [_cifar_model(PK_RESNET, 0.6, 0.4, 2), _cifar_model(PK_VIT, 0.9, 0.9, 3)]
    )
    assert not [p for p, _ in finding_set_checks(alone, SETTINGS) if p.paper == "park-kim"]
