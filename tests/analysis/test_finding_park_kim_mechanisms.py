# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Park & Kim's claims about one model by itself, checked by hf_vitrobust.analysis.findings on constructed run
records: MSAs reduce the feature-map variance within the ViT and convolutions raise it within the CNN (Fig. 9), and
removing the MSA at the end of a stage hurts more than removing another unit (the lesion study). Each on a record
where it holds and one where it fails, the expected quantity written out by hand."""

from __future__ import annotations

import numpy as np
import pytest
from reproduction_runs import Model, accuracy_frame, write_run

from hf_vitrobust.analysis.findings import AGAINST_ZERO, check_findings, findings_of, get_finding
from hf_vitrobust.analysis.results import load_results, merge_results
from hf_vitrobust.analysis.run_models import RunModel
from hf_vitrobust.analysis.uncertainty import UncertaintySettings
from hf_vitrobust.probes.display import MISSING
from hf_vitrobust.probes.lesion import end_of_stage_msa_excess
from hf_vitrobust.report.reproduction_sections import findings_table

SETTINGS = UncertaintySettings(confidence_level=0.95, num_resamples=300, seed=3)
VIT, CNN = "timm/deit_small_patch16_224.fb_in1k", "timm/resnet50.a1_in1k"
N = 60
KEYS = list(range(500, 500 + N))
#: Each image's variances are these profiles times its own scale (0.5 .. 1.5), so every change varies by image.
SCALES = np.linspace(0.5, 1.5, N)
VIT_LAYERS = ["blocks.0:input", "blocks.0:msa", "blocks.0:mlp", "blocks.1:msa", "blocks.1:mlp"]
CNN_LAYERS = [
    "layer1.0:input",
    "layer1.0:conv",
    "layer1.1:conv",
    "layer2.0:conv",
    "layer2.1:conv",
    "layer3.0:conv",
]
# layer2.0 halves the map (subsampling); layer3.0 keeps a 1 x 1 map, whose variance is undefined (NaN).
CNN_SHAPES = [[8, 8, 8], [8, 8, 8], [8, 8, 8], [16, 4, 4], [16, 4, 4], [16, 1, 1]]


def _variance(layers: list[str], profile: list[float], shapes: list[list[int]] | None = None) -> dict:
    per_image = SCALES[:, None] * np.asarray(profile)[None, :]
    return {
        "layers": layers,
        "shapes": shapes or [[4, 4, 4]] * len(layers),
        "variance": per_image.mean(axis=0).tolist(),
        "num_images": N,
        "benchmark": "imagenet-val",
        "per_image": {"keys": KEYS, "variance": per_image.tolist()},
    }


def _lesion(intact: np.ndarray, lesioned: np.ndarray, kinds, stages, indices) -> dict:
    return {
        "units": [f"u{i}" for i in range(len(kinds))],
        "kinds": list(kinds),
        "stages": list(stages),
        "indices": list(indices),
        "baseline_accuracy": float(intact.mean()),
        "accuracy": lesioned.mean(axis=0).tolist(),
        "num_images": len(intact),
        "benchmark": "imagenet-val",
        "per_image": {
            "keys": list(range(len(intact))),
            "correct": intact.astype(int).tolist(),
            "lesioned_correct": lesioned.astype(int).tolist(),
        },
    }


def _pair(tmp_path, vit_probes: dict, cnn_probes: dict) -> tuple[RunModel, RunModel]:
    models = [
        Model(
            spec,
            {"imagenet-val": accuracy_frame(np.ones(4, dtype=bool))},
            probes,
            {"imagenet-val": "model-native"},
        )
        for spec, probes in ((VIT, vit_probes), (CNN, cnn_probes))
    ]
    result = merge_results(load_results([write_run(tmp_path, models)]))[0]
    vit, cnn = (RunModel(result, model["key"]) for model in result["models"])
    return vit, cnn


def _check(vit: RunModel, cnn: RunModel, name: str):
    [check] = check_findings([vit], [cnn], [get_finding(name)], SETTINGS)
    return check


def test_fig_9_msas_reduce_and_convs_raise_the_feature_map_variance(tmp_path):
    msa, conv = get_finding("msa-variance"), get_finding("conv-variance")
    assert {msa, conv} <= set(findings_of("park-kim"))
    assert (msa.member, msa.direction, conv.member, conv.direction) == ("vit", -1, "cnn", +1)
    assert "Fig. 9" in msa.source and "Fig. 9" in conv.source
    # ViT: each MSA lowers the variance by 0.4 (1.0 -> 0.6, 1.2 -> 0.8), each MLP raises it; CNN: the blocks that keep
    # the map size raise it by 0.5, 0.5 and 0.4; layer2.0 subsamples (2.0 -> 0.5) and is left out: 1.4 / 3.
    vit, cnn = _pair(
        tmp_path / "holds",
        {"feature_variance": _variance(VIT_LAYERS, [1.0, 0.6, 1.2, 0.8, 1.5])},
        {"feature_variance": _variance(CNN_LAYERS, [1.0, 1.5, 2.0, 0.5, 0.9, np.nan], CNN_SHAPES)},
    )
    lowers, raises = _check(vit, cnn, "msa-variance"), _check(vit, cnn, "conv-variance")
    assert (lowers.verdict, raises.verdict) == ("holds", "holds")
    assert lowers.vit_value == pytest.approx(-0.4 * SCALES.mean()) and lowers.cnn is None
    assert raises.cnn_value == pytest.approx(1.4 / 3 * SCALES.mean()) and raises.vit is None
    assert lowers.test == AGAINST_ZERO and lowers.num_units == N
    assert lowers.difference["estimate"] == pytest.approx(lowers.vit_value)
    assert lowers.to_dict()["direction"] == "ViT's quantity below 0"
    assert raises.to_dict()["direction"] == "CNN's quantity above 0"
    # The report's Findings row: the ViT and its value, no CNN, the quantity against 0 with its interval.
    [row] = findings_table([lowers.to_dict()])
    assert row[2].startswith(f"{vit.key}: -")
    assert row[3] == MISSING and row[5].startswith(AGAINST_ZERO) and row[6] == "holds"
    # MSAs that raise the variance (0.6 -> 1.4, 1.2 -> 1.6) and conv blocks that lower it: both reversed.
    vit, cnn = _pair(
        tmp_path / "reversed",
        {"feature_variance": _variance(VIT_LAYERS, [1.0, 1.4, 1.2, 1.6, 1.5])},
        {"feature_variance": _variance(CNN_LAYERS, [2.0, 1.5, 1.0, 0.5, 0.3, np.nan], CNN_SHAPES)},
    )
    lowers, raises = _check(vit, cnn, "msa-variance"), _check(vit, cnn, "conv-variance")
    assert (lowers.verdict, raises.verdict) == ("reversed", "reversed")
    assert lowers.vit_value == pytest.approx(0.4 * SCALES.mean())
    assert raises.cnn_value == pytest.approx((-0.5 - 0.5 - 0.2) / 3 * SCALES.mean())  # layer2.0 left out
    # Had the subsampling block counted, the CNN of the first record would read (0.5 + 0.5 - 1.5 + 0.4) / 4 < 0.
    # A run of the default layers (stage outputs, no "<block>:<kind>" names) cannot tell an MSA from an MLP.
    vit, cnn = _pair(
        tmp_path / "stages",
        {"feature_variance": _variance(["stem", "stage1", "stage2"], [1.0, 0.5, 0.2])},
        {"feature_variance": _variance(["stem", "stage1", "stage2"], [1.0, 2.0, 3.0])},
    )
    unchecked = _check(vit, cnn, "msa-variance")
    assert unchecked.verdict == "not checked" and "layers: residual-sums" in unchecked.reason


def test_the_lesion_quantity_is_the_end_of_stage_msa_drop_minus_the_others():
    """Two stages of an AlterNet-like net (conv, MSA | conv, MSA, conv): the MSAs at the end of a stage are units 1
    only (stage 1 ends in a conv block, so its MSA is not at the end)."""
    intact = np.array([1, 1, 0])
    lesioned = np.array([[1, 0, 1, 1, 1], [0, 1, 1, 0, 1], [0, 0, 0, 0, 1]])
    keys, excess = end_of_stage_msa_excess(_lesion(intact, lesioned, *_alternet_like()))
    # Drops (intact - lesioned): image 0 [0, 1, 0, 0, 0]: 1 - 0 = 1; image 1 [1, 0, 0, 1, 0]: 0 - 2/4;
    # image 2 [0, 0, 0, 0, -1]: 0 - (-1/4).
    assert keys == [0, 1, 2]
    np.testing.assert_allclose(excess, [1.0, -0.5, 0.25])


def _alternet_like():
    return ["conv", "msa", "conv", "msa", "conv"], [0, 0, 1, 1, 1], [0, 1, 2, 3, 4]


def test_lesion_removing_the_end_of_stage_msa_hurts_more(tmp_path):
    finding = get_finding("end-of-stage-msa-lesion")
    assert finding in findings_of("park-kim") and finding.member == "vit" and finding.direction == +1
    # A 3-block ViT (one stage): units msa, mlp per block; its last block's MSA (unit 4) is at the end of the stage.
    kinds, stages, indices = ["msa", "mlp"] * 3, [None] * 6, [0, 0, 1, 1, 2, 2]
    rng = np.random.default_rng(0)
    n = 200
    intact = np.ones(n, dtype=bool)

    def lesioned(end_rate: float, other_rate: float) -> np.ndarray:
        wrong = rng.random((n, 6)) < other_rate
        wrong[:, 4] = rng.random(n) < end_rate
        return ~wrong

    hurts = lesioned(0.5, 0.05)
    vit, cnn = _pair(tmp_path / "holds", {"lesion": _lesion(intact, hurts, kinds, stages, indices)}, {})
    check = _check(vit, cnn, "end-of-stage-msa-lesion")
    assert check.verdict == "holds" and check.cnn is None and check.num_units == n
    drops = 1.0 - hurts.astype(float)
    expected = 100 * (drops[:, 4].mean() - np.delete(drops, 4, axis=1).mean())
    assert check.vit_value == pytest.approx(expected)
    spared = lesioned(0.02, 0.3)
    vit, cnn = _pair(tmp_path / "reversed", {"lesion": _lesion(intact, spared, kinds, stages, indices)}, {})
    assert _check(vit, cnn, "end-of-stage-msa-lesion").verdict == "reversed"
    # A CNN has no MSA unit: a ViT record of conv units only is not checked, and says why.
    convs = _lesion(intact, hurts[:, :3], ["conv"] * 3, [0, 0, 1], [0, 1, 2])
    vit, cnn = _pair(tmp_path / "convs", {"lesion": convs}, {})
    unchecked = _check(vit, cnn, "end-of-stage-msa-lesion")
    assert unchecked.verdict == "not checked" and "no MSA at the end of a stage" in unchecked.reason


def _cka(within: np.ndarray, across: np.ndarray, shapes: list[list[int]]) -> dict:
    """A merged cka dict of 4 layers whose minibatch k has self-HSIC 1 and cross-HSIC `within[k]` inside a stage,
    `across[k]` between stages (stages from the map sizes: layers 0-1 at 8x8, 2-3 at 4x4)."""
    same = np.array([[1, 1, 0, 0], [1, 1, 0, 0], [0, 0, 1, 1], [0, 0, 1, 1]], dtype=bool)
    crosses = [
        np.where(np.eye(4, dtype=bool), 1.0, np.where(same, w, a))
        for w, a in zip(within, across, strict=True)
    ]
    return {
        "layers": ["s0:input", "s0.b0:msa", "s1.b0:msa", "s1.b0:mlp"],
        "other_layers": ["s0:input", "s0.b0:msa", "s1.b0:msa", "s1.b0:mlp"],
        "shapes": shapes,
        "cka": np.mean(crosses, axis=0).tolist(),
        "num_images": 32 * len(within),
        "benchmark": "imagenet-val",
        "minibatch_hsic": {
            "keys": [32 * k for k in range(len(within))],
            "cross": [c.tolist() for c in crosses],
        },
    }


def test_cka_block_structure_of_a_multi_stage_vit(tmp_path):
    finding = get_finding("cka-block-structure")
    assert finding in findings_of("park-kim") and (finding.member, finding.direction) == ("vit", +1)
    two_stages = [[4, 8, 8], [4, 8, 8], [8, 4, 4], [8, 4, 4]]
    rng = np.random.default_rng(5)
    within, across = 0.8 + 0.05 * rng.standard_normal(12), 0.3 + 0.05 * rng.standard_normal(12)
    vit, cnn = _pair(tmp_path / "holds", {"cka": _cka(within, across, two_stages)}, {})
    check = _check(vit, cnn, "cka-block-structure")
    # Within minus across, minibatch by minibatch, averaged: the CKA is the cross-HSIC itself (self-HSIC 1).
    assert check.verdict == "holds" and check.num_units == 12
    assert check.vit_value == pytest.approx(np.mean(within - across))
    assert check.difference["unit"] == "minibatch"
    vit, cnn = _pair(tmp_path / "reversed", {"cka": _cka(across, within, two_stages)}, {})
    assert _check(vit, cnn, "cka-block-structure").verdict == "reversed"
    # A plain ViT keeps one map size: one stage, no block structure to measure.
    vit, cnn = _pair(tmp_path / "plain", {"cka": _cka(within, across, [[4, 8, 8]] * 4)}, {})
    plain = _check(vit, cnn, "cka-block-structure")
    assert plain.verdict == "not checked" and "one map size" in plain.reason
