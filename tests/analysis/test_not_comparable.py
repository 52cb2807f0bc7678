# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Each reason a published number is "not comparable" with ours (`analysis.published_vs_ours.REASONS`), reached on
its own: every test starts from a row and a run that compare ("equal"), changes exactly one thing, and expects that
reason and no other."""

from __future__ import annotations

import numpy as np
import pytest
from reproduction_runs import Model, accuracy_frame, cell_frame, published_row, write_run

from hf_vitrobust.analysis.published import PublishedNumber
from hf_vitrobust.analysis.published_vs_ours import REASONS, compare_published
from hf_vitrobust.analysis.results import load_results, merge_results
from hf_vitrobust.analysis.run_models import RunModel
from hf_vitrobust.analysis.uncertainty import UncertaintySettings

SETTINGS = UncertaintySettings(confidence_level=0.95, num_resamples=200, seed=0)
SPEC = "google/vit-large-patch16-384"
N, K = 400, 120  # 30 % right


def published(**changes) -> PublishedNumber:
    """A published ImageNet-A top-1 of ViT-L/16 that the run below reproduces exactly."""
    return published_row(
        **{"row_id": "test/imagenet-a/top1/vit-l16", "value": 100.0 * K / N, "images": N, **changes}
    )


def _run(folder, models, **kwargs) -> RunModel:
    result = merge_results(load_results([write_run(folder, models, **kwargs)]))[0]
    return RunModel(result, result["models"][0]["key"])


def _a_run(folder, **info) -> RunModel:
    correct = np.arange(N) < K
    model = Model(SPEC, {"imagenet-a": accuracy_frame(correct)}, applied={"imagenet-a": "native-resize"})
    return _run(folder, [model], benchmark_info={"imagenet-a": info} if info else None)


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> RunModel:
    return _a_run(tmp_path_factory.mktemp("published") / "run")


def _only(comparison, kind: str, text: str) -> None:
    assert comparison.verdict == "not comparable"
    assert [k for k, _ in comparison.reasons] == [kind], comparison.reasons
    assert text in comparison.reason_text()


def test_the_starting_point_compares(model):
    comparison = compare_published(published(), model, SETTINGS)
    assert (comparison.verdict, comparison.reasons) == ("equal", ())
    assert comparison.ours.value == pytest.approx(30.0, abs=1e-12)


def test_the_reasons_are_the_documented_ones():
    assert REASONS == ("not in this run", "other checkpoint", "other protocol", "other images", "no interval")


# ------------------------------------------------------------------------------------------------ not in this run
def test_not_in_this_run(model):
    _only(
        compare_published(published(benchmark="imagenet-r"), model, SETTINGS), "not in this run", "imagenet-r"
    )


# ----------------------------------------------------------------------------------------------- other checkpoint
@pytest.mark.parametrize(
    ("changes", "stand_in", "text"),
    [
        ({"model_id": "google/vit-large-patch16-224"}, False, "google/vit-large-patch16-224"),
        ({"model_id": "no public equivalent", "model_match": "none"}, False, "no public copy"),
        ({}, True, "stands in for ViT-L_16"),
    ],
)
def test_other_checkpoint(model, changes, stand_in, text):
    comparison = compare_published(published(**changes), model, SETTINGS, stand_in=stand_in)
    _only(comparison, "other checkpoint", text)


# ------------------------------------------------------------------------------------------------- other protocol
def test_other_protocol_a_different_value(model):
    row = published(protocol="class_mask=paul-chen-1000;preprocessing=squash-224")
    _only(compare_published(row, model, SETTINGS), "other protocol", "preprocessing squash-224 published")


def test_other_protocol_a_part_the_run_never_recorded(model):
    """The run recorded no release encoding for ImageNet-A: a row that names one cannot be said to match it."""
    row = published(protocol="class_mask=paul-chen-1000;preprocessing=native-resize;release_encoding=jpeg-85")
    _only(
        compare_published(row, model, SETTINGS),
        "other protocol",
        "release_encoding jpeg-85 published, not recorded",
    )


def test_other_protocol_theirs_is_none_of_ours(model):
    row = published(protocol="class_mask=paul-chen-1000;preprocessing=other")
    _only(compare_published(row, model, SETTINGS), "other protocol", "theirs is none of this package's")


def _landscape_run(folder, weight_decay) -> RunModel:
    """A loss-landscape probe of a model with public weights; the loss at the origin (x=0, y=0) is 4.0 (a point
    off the origin lies along the authors' random directions: never comparable)."""
    grid = np.linspace(-1, 1, 3)
    loss = np.arange(9, dtype=float).reshape(3, 3)
    probe = {
        "x": grid.tolist(),
        "y": grid.tolist(),
        "loss": loss.tolist(),
        "accuracy": (loss / 10).tolist(),
        "num_images": 96,
        "benchmark": "cifar100-train",
        "params": {"normalization": "park-kim", "weight_decay": weight_decay},
    }
    frame = accuracy_frame(np.arange(96) < 50)
    return _run(
        folder, [Model("timm/resnet50.a1_in1k", {"cifar100-train": frame}, probes={"loss_landscape": probe})]
    )


def _landscape_row(**changes) -> PublishedNumber:
    fields = {
        "benchmark": "loss_landscape",
        "metric": "loss",
        "condition": "dataset=cifar100-train;x=0.0;y=0.0",
        "protocol": "normalization=park-kim;weight_decay=0.050",
        "model_key": "resnet50",
        "model_id": "timm/resnet50.a1_in1k",
        "value": 4.0,
        "images": 96,
        "image_set": "all",
    }
    return published(**{**fields, **changes})


def test_numeric_protocol_values_are_equal_only_as_numbers(tmp_path):
    """0.05 recorded and "0.050" published are the same; 0.0502 (0.4 % off) is another protocol."""
    same = compare_published(_landscape_row(), _landscape_run(tmp_path / "same", 0.05), SETTINGS)
    assert (same.verdict, same.reasons) == ("equal", ())
    near = compare_published(_landscape_row(), _landscape_run(tmp_path / "near", 0.0502), SETTINGS)
    _only(near, "other protocol", "weight_decay 0.050 published, 0.0502 here")


# --------------------------------------------------------------------------------------------------- other images
@pytest.mark.parametrize(
    ("info", "text"),
    [
        (
            {"subset": {"kind": "first", "limit": N}},
            f"a first-{N} subset of imagenet-a here, not a random sample",
        ),
        ({"source": {"kind": "builtin", "generated": False}}, "bundled demo photos"),
    ],
)
def test_other_images_of_the_run(tmp_path, info, text):
    _only(compare_published(published(), _a_run(tmp_path / "run", **info), SETTINGS), "other images", text)


@pytest.mark.parametrize(
    ("changes", "text"),
    [
        ({"images": 380}, "400 images here, 380 published"),
        ({"image_set": "unpublished-list", "images": 100}, "never published"),
    ],
)
def test_other_images_of_the_row(model, changes, text):
    _only(compare_published(published(**changes), model, SETTINGS), "other images", text)


def test_other_images_of_a_probe(tmp_path):
    model = _landscape_run(tmp_path / "run", 0.05)
    row = _landscape_row(condition="dataset=imagenet-train;x=0.0;y=0.0")
    _only(compare_published(row, model, SETTINGS), "other images", "the probe read cifar100-train here")


@pytest.mark.parametrize(
    "flags",
    [
        {"generated": True, "source": {"kind": "generated-corruptions", "generated": True}},
        {"generated": True},
        {"source": {"kind": "generated-corruptions", "generated": True}},
    ],
)
def test_generated_imagenet_c_is_other_images(tmp_path, flags):
    """ImageNet-C generated on the fly is not the released JPEGs the papers scored, whatever else matches."""
    correct = {("contrast", 5): np.arange(50) < 12, ("fog", 5): np.arange(50) < 20}
    spec = "timm/vit_large_patch16_224"
    models = [Model(spec, {"imagenet-c": cell_frame(correct)}, applied={"imagenet-c": "as-released"})]
    row = published(
        benchmark="imagenet-c",
        condition="corruption=contrast;severity=5",
        protocol="preprocessing=as-released",
        model_id=spec,
        value=24.0,
        images=50,
    )
    released = compare_published(row, _run(tmp_path / "released", models), SETTINGS)
    assert (released.verdict, released.reasons) == ("equal", ())
    generated = _run(tmp_path / "generated", models, benchmark_info={"imagenet-c": dict(flags)})
    _only(compare_published(row, generated, SETTINGS), "other images", "imagenet-c generated on the fly")


# ---------------------------------------------------------------------------------------------------- no interval
def test_no_interval(tmp_path):
    """A probe's loss has no interval: a published loss of images we do not know to be ours that differs from ours
    cannot be placed (of the same images it is "outside by 0.50 points")."""
    run = _landscape_run(tmp_path / "run", 0.05)
    same = compare_published(_landscape_row(value=4.5), run, SETTINGS)
    assert (same.verdict, same.kind, same.reasons) == ("outside by 0.50 points", "outside", ())
    comparison = compare_published(_landscape_row(value=4.5, image_set="unknown"), run, SETTINGS)
    _only(comparison, "no interval", "ours has no interval")
