# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The papers' findings checked on a pair (`evaluation.findings`), on constructed pairs where each claim is known
to hold, to be reversed, or to be unresolved: the paired interval, McNemar's test, Holm's correction, the verdict,
and the pairs a run holds (a reproduction's members, or a suite pair whose two specs ran)."""

from __future__ import annotations

import numpy as np
import pytest
from reproduction_runs import Model, accuracy_frame, cell_frame, write_run
from scipy.stats import binomtest

from hf_vitrobust.analysis.findings import (
    FINDINGS,
    Finding,
    check_findings,
    findings_for,
    findings_of,
    get_finding,
    pairings,
)
from hf_vitrobust.analysis.results import load_results, merge_results
from hf_vitrobust.analysis.run_models import RunModel
from hf_vitrobust.analysis.uncertainty import UncertaintySettings

SETTINGS = UncertaintySettings(confidence_level=0.95, num_resamples=500, seed=3)
VIT, CNN = "google/vit-large-patch16-224", "timm/resnetv2_101x3_bit.goog_in21k_ft_in1k"
PAIRED = ["imagenet-a", "contrast-severity-5", "occlusion", "low-pass"]


def _flags(n: int, rate: float, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).random(n) < rate


def _occlusion(curve: np.ndarray, ratios=(0.0, 0.1, 0.5)) -> dict:
    """An occlusion probe dict whose images are right at each ratio as `curve` (images, ratios) says."""
    return {
        "ratios": list(ratios),
        "accuracy": curve.mean(axis=0).tolist(),
        "num_correct": curve.sum(axis=0).astype(int).tolist(),
        "num_samples": len(curve),
        "benchmark": "imagenet-val",
        "per_image": {"keys": list(range(1000, 1000 + len(curve))), "correct": curve.astype(int).tolist()},
    }


def _fourier(deltas: np.ndarray) -> dict:
    return {
        "layers": [f"l{i}" for i in range(deltas.shape[1])],
        "delta_log_amplitude": deltas.mean(axis=0).tolist(),
        "num_images": len(deltas),
        "benchmark": "imagenet-val",
        "per_image": {"keys": list(range(1000, 1000 + len(deltas))), "delta_log_amplitude": deltas.tolist()},
    }


#: The preprocessing Paul & Chen's notebooks gave each role on ImageNet-A/R/O (their published rows' protocols).
PAPERS_RESIZE = {VIT: {"imagenet-a": "native-resize"}, CNN: {"imagenet-a": "squash-224"}}


def _model(
    spec: str,
    *,
    a: float,
    contrast: float,
    occlusion: float,
    delta: float,
    n: int,
    seed: int,
    applied: dict[str, str] | None = None,
) -> Model:
    rng = np.random.default_rng(seed)
    cells = {("contrast", 5): _flags(n, contrast, seed + 1), ("fog", 5): _flags(n, 0.5, seed + 2)}
    curve = np.stack(
        [_flags(n, 0.9, seed + 3), _flags(n, occlusion, seed + 4), _flags(n, occlusion, seed + 5)], 1
    )
    deltas = delta + 0.3 * rng.standard_normal((n, 4))
    return Model(
        spec,
        {"imagenet-a": accuracy_frame(_flags(n, a, seed + 6)), "imagenet-c": cell_frame(cells)},
        probes={"occlusion": _occlusion(curve), "feature_fourier": _fourier(deltas)},
        applied=PAPERS_RESIZE[spec] if applied is None else applied,
    )


def _pair(tmp_path, vit: Model, cnn: Model) -> list[RunModel]:
    folder = write_run(tmp_path / "pair", [vit, cnn])
    result = merge_results(load_results([folder]))[0]
    return [RunModel(result, model["key"]) for model in result["models"]]


def _checks(vit: RunModel, cnn: RunModel, names=PAIRED):
    return {
        c.finding.name: c for c in check_findings([vit], [cnn], [get_finding(n) for n in names], SETTINGS)
    }


def test_findings_that_hold_and_findings_reversed(tmp_path):
    # The paper's directions: ViT above on ImageNet-A and occlusion, below on contrast s5 and Δ log amplitude.
    papers = dict(a=0.30, contrast=0.10, occlusion=0.70, delta=-1.0, n=400, seed=0)
    other = dict(a=0.08, contrast=0.45, occlusion=0.45, delta=0.5, n=400, seed=10)
    vit, cnn = _pair(tmp_path / "holds", _model(VIT, **papers), _model(CNN, **other))
    holds = _checks(vit, cnn)
    assert {name: c.verdict for name, c in holds.items()} == dict.fromkeys(PAIRED, "holds")
    # The same predictions with the roles' numbers swapped (each role keeps the paper's preprocessing).
    reversed_ = _checks(*_pair(tmp_path / "reversed", _model(VIT, **other), _model(CNN, **papers)))
    assert {name: c.verdict for name, c in reversed_.items()} == dict.fromkeys(PAIRED, "reversed")
    for name, check in holds.items():
        assert check.difference["estimate"] == pytest.approx(check.vit_value - check.cnn_value), name
        assert reversed_[name].difference["estimate"] == pytest.approx(-check.difference["estimate"]), name
        assert check.p_value <= check.p_holm <= 1.0
    assert holds["imagenet-a"].test == "McNemar exact" and holds["occlusion"].test == "paired bootstrap"
    assert holds["imagenet-a"].num_units == 400


def _holm(p_values: list[float]) -> list[float]:
    """Holm (1979), written out: the i-th smallest of m p-values times (m - i + 1), running maximum, capped at 1."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted, running = [0.0] * len(p_values), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def test_the_paired_difference_and_tests_are_their_definitions(tmp_path):
    """ViT minus CNN, McNemar's exact p (the binomial test of the discordant images) and Holm's p, recomputed here
    from the predictions."""
    vit, cnn = _pair(
        tmp_path,
        _model(VIT, a=0.30, contrast=0.10, occlusion=0.7, delta=-1.0, n=300, seed=1),
        _model(CNN, a=0.20, contrast=0.40, occlusion=0.5, delta=0.5, n=300, seed=2),
    )
    checks = _checks(vit, cnn)
    a, b = vit.frame("imagenet-a"), cnn.frame("imagenet-a")
    assert list(a["sample_id"]) == list(b["sample_id"])
    right_a = (a["prediction"] == a["label"]).to_numpy()
    right_b = (b["prediction"] == b["label"]).to_numpy()
    check = checks["imagenet-a"]
    assert check.vit_value == pytest.approx(100 * right_a.mean(), abs=1e-12)
    assert check.cnn_value == pytest.approx(100 * right_b.mean(), abs=1e-12)
    assert check.difference["estimate"] == pytest.approx(100 * (right_a.mean() - right_b.mean()), abs=1e-12)
    assert check.difference["low"] < check.difference["estimate"] < check.difference["high"]
    only_a, only_b = int((right_a & ~right_b).sum()), int((~right_a & right_b).sum())
    assert check.p_value == pytest.approx(
        binomtest(min(only_a, only_b), only_a + only_b, 0.5).pvalue, rel=1e-9
    )
    # Contrast at severity 5: the images of that cell only.
    cell = {"vit": vit.frame("imagenet-c"), "cnn": cnn.frame("imagenet-c")}
    contrast = {n: f[(f["corruption"] == "contrast") & (f["severity"] == 5)] for n, f in cell.items()}
    right = {n: (f["prediction"] == f["label"]).to_numpy() for n, f in contrast.items()}
    assert checks["contrast-severity-5"].difference["estimate"] == pytest.approx(
        100 * (right["vit"].mean() - right["cnn"].mean()), abs=1e-12
    )
    assert [checks[n].p_holm for n in PAIRED] == pytest.approx(
        _holm([checks[n].p_value for n in PAIRED]), rel=1e-12
    )
    # The occlusion quantity is the mean top-1 over the masked ratios (0.1 and 0.5), in percent.
    probe = vit.probe("occlusion")
    curve = np.asarray(probe["per_image"]["correct"], dtype=float)
    assert checks["occlusion"].vit_value == pytest.approx(100 * curve[:, 1:].mean())


def test_a_small_difference_on_few_images_is_not_resolved(tmp_path):
    vit, cnn = _pair(
        tmp_path,
        _model(VIT, a=0.5, contrast=0.5, occlusion=0.6, delta=0.0, n=12, seed=4),
        _model(CNN, a=0.4, contrast=0.5, occlusion=0.5, delta=0.1, n=12, seed=5),
    )
    assert {c.verdict for c in _checks(vit, cnn).values()} == {"not resolved"}


def test_missing_data_and_disjoint_images_are_not_checked(tmp_path):
    full = _model(VIT, a=0.3, contrast=0.1, occlusion=0.7, delta=-1.0, n=50, seed=6)
    bare = Model(
        CNN,
        {"imagenet-a": accuracy_frame(_flags(50, 0.1, 7), prefix="elsewhere")},
        applied=PAPERS_RESIZE[CNN],
    )
    vit, cnn = _pair(tmp_path, full, bare)
    checks = _checks(vit, cnn)
    assert {c.verdict for c in checks.values()} == {"not checked"}
    assert checks["contrast-severity-5"].reason == "the CNN has no imagenet-c"
    assert "share no samples" in checks["imagenet-a"].reason
    assert all(c.p_holm is None for c in checks.values())


def test_pairs_come_from_reproductions_or_from_a_suites_named_pairs(tmp_path):
    suite = {
        "name": "paper",
        "model_pairs": [{"name": "vit-l16/bit-m-r101x3", "vit": VIT, "cnn": CNN, "note": "x"}],
    }
    folder = write_run(
        tmp_path / "suite",
        [
            _model(VIT, a=0.3, contrast=0.1, occlusion=0.7, delta=-1.0, n=200, seed=8),
            _model(CNN, a=0.1, contrast=0.4, occlusion=0.5, delta=0.5, n=200, seed=9),
        ],
        suite=suite,
    )
    merged = merge_results(load_results([folder]))
    [pairing] = pairings(merged)
    assert (pairing.paper, pairing.name, pairing.origin) == (
        "paul-chen",
        "vit-l16/bit-m-r101x3",
        "model_pairs",
    )
    [(pair, checks)] = findings_for(merged, SETTINGS)
    assert pair == pairings(merged)[0]
    assert [c.finding.name for c in checks] == [f.name for f in findings_of("paul-chen")]
    by_name = {c.finding.name: c.verdict for c in checks}
    assert {by_name[n] for n in ("imagenet-a", "contrast-severity-5", "occlusion")} == {"holds"}
    assert by_name["imagenet-r"] == "not checked"
    # Another suite's pairs are not the paper's; a run of only one member holds no pair.
    assert (
        pairings(
            merge_results(
                load_results(
                    [
                        write_run(
                            tmp_path / "one",
                            [_model(VIT, a=0.3, contrast=0.1, occlusion=0.7, delta=0, n=20, seed=1)],
                            suite=suite,
                        )
                    ]
                )
            )
        )
        == []
    )


def test_every_finding_names_its_paper_source_and_direction():
    every = findings_of("paul-chen") + findings_of("park-kim")
    assert [f.name for f in every] == list(FINDINGS.names())
    # The probes declare theirs (no module of evaluation/ names a probe).
    assert {
        f.name: f.data
        for f in every
        if f.data not in ("imagenet-a", "imagenet-r", "imagenet-o", "imagenet-c")
    } == {
        "occlusion": "occlusion",
        "low-pass": "feature_fourier",
        "high-frequency-noise": "frequency_noise",
        "fig-11-deepfool-spectrum": "deepfool",
        "fig-13-pgd-loss-rise": "pgd",
        "msa-variance": "feature_variance",
        "conv-variance": "feature_variance",
        "end-of-stage-msa-lesion": "lesion",
        "cka-block-structure": "cka",
        "hessian-magnitude": "hessian",
        "hessian-negative-share": "hessian",
    }
    for finding in every:
        assert isinstance(finding, Finding) and finding.direction in (-1, 1)
        assert finding.claim and finding.source and finding.quantity
    with pytest.raises(ValueError, match="direction"):
        from hf_vitrobust.analysis.findings import register_finding

        register_finding(Finding("x", "paul-chen", "c", "s", "q", 0, "imagenet-a", lambda m: None))
