# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Interpolation and image bytes in `hf_vitrobust.analysis`: a published number made with TensorFlow's bilinear
resize compares only with a run that resized so; a run that read a re-encoded copy, or a Hub copy of unknown bytes,
gets an approximate verdict; the table names each notebook's kernel; the `paul-chen` pairing carries it; and a
results.json from before the part reads as the default."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from reproduction_runs import Model, accuracy_frame, published_row, write_run

from hf_vitrobust.analysis.pairings import model_pairing
from hf_vitrobust.analysis.protocols import default_protocol, source_image_bytes
from hf_vitrobust.analysis.published import published_numbers
from hf_vitrobust.analysis.published_vs_ours import compare_published
from hf_vitrobust.analysis.results import load_results, merge_results
from hf_vitrobust.analysis.run_models import RunModel
from hf_vitrobust.analysis.uncertainty import UncertaintySettings
from hf_vitrobust.data import get_benchmark

SETTINGS = UncertaintySettings(confidence_level=0.95, num_resamples=100, seed=0)
SPEC = "google/vit-large-patch16-384"
N, K = 200, 60
OLD_RUN = Path(__file__).resolve().parents[1] / "fixtures" / "old_run_6f0f446" / "run"


def _model(folder, kernel: str = "tf-bilinear", **info) -> RunModel:
    frame = accuracy_frame(np.arange(N) < K)
    model = Model(
        SPEC, {"imagenet-a": frame}, applied={"imagenet-a": "native-resize"}, kernels={"imagenet-a": kernel}
    )
    result = merge_results(load_results([write_run(folder, [model], benchmark_info={"imagenet-a": info})]))[0]
    return RunModel(result, result["models"][0]["key"])


def _row(**changes):
    return published_row(**{"value": 100.0 * K / N, "images": N, **changes})


def test_a_tf_bilinear_number_compares_only_with_a_tf_bilinear_run(tmp_path):
    row = _row()
    assert row.protocol_parts["interpolation"] == "tf-bilinear"
    own = compare_published(row, _model(tmp_path / "own", kernel="pil-bicubic"), SETTINGS)
    assert own.verdict == "not comparable"
    assert own.reasons == (("other protocol", "interpolation tf-bilinear published, pil-bicubic here"),)
    tf = compare_published(row, _model(tmp_path / "tf"), SETTINGS)
    assert (tf.verdict, tf.reasons) == ("equal", ())
    # "model-own" on a bilinear model is PIL's bilinear: it compares with a pil-bilinear number.
    pil_row = _row(
        protocol="class_mask=paul-chen-1000;interpolation=pil-bilinear;preprocessing=native-resize"
    )
    pil = compare_published(pil_row, _model(tmp_path / "pil", kernel="pil-bilinear"), SETTINGS)
    assert pil.verdict == "equal"
    # A row that names no kernel where its preprocessing resizes: approximate; as released nothing is resized.
    unnamed_row = _row(protocol="class_mask=paul-chen-1000;preprocessing=native-resize")
    unnamed = compare_published(unnamed_row, _model(tmp_path / "unnamed"), SETTINGS)
    assert unnamed.verdict == "approximate: equal (unnamed: interpolation)"
    as_released = compare_published(
        _row(benchmark="imagenet-9", protocol="preprocessing=as-released"),
        _model(tmp_path / "nine"),
        SETTINGS,
    )
    assert "interpolation" not in as_released.unnamed


@pytest.mark.parametrize(
    ("info", "verdict"),
    [
        ({}, "equal"),  # a local copy of the release, read file by file
        ({"protocol": {"models": {}, "image_bytes": "re-encoded"}}, "approximate: equal (re-encoded copy)"),
        # A record from before `image_bytes`: read from its source, a registered Hub copy whose pages do not say.
        (
            {"source": {"kind": "hub", "schema": "barkermrl-imagenet-a", "generated": False}},
            "approximate: equal (copy of unknown image bytes)",
        ),
    ],
)
def test_a_copy_that_is_not_the_release_makes_the_verdict_approximate(tmp_path, info, verdict):
    comparison = compare_published(_row(), _model(tmp_path / "run", **info), SETTINGS)
    assert (comparison.verdict, comparison.kind) == (verdict, "equal")


def test_image_bytes_of_sources():
    assert source_image_bytes({"kind": "hub", "schema": "uoft-cs-cifar10"})[0] == "re-encoded"
    assert source_image_bytes({"kind": "parquet", "schema": "axiong-imagenet-r"})[0] == "unknown"
    assert source_image_bytes({"kind": "hub", "schema": None})[0] == "unknown"
    assert source_image_bytes({"kind": "image_folder"})[0] == "release"
    assert source_image_bytes({"kind": "generated-corruptions", "generated": True})[0] == "generated"


def test_an_old_results_json_reads_as_the_default():
    """The fixture run (commit 6f0f446) recorded no interpolation, no kernel and no image bytes."""
    result = merge_results(load_results([OLD_RUN]))[0]
    model = RunModel(result, result["models"][0]["key"])
    protocol = {**default_protocol(get_benchmark("imagenet-val")), **model.applied_protocol("imagenet-val")}
    assert protocol["interpolation"] == "model-own"
    assert model.resize_kernel("imagenet-val") == "pil-bicubic"  # EfficientNet-Lite0's own, PIL antialiased
    assert model.resize_kernel("imagenet-c") == "none"  # as released: cropped, not resized
    assert model.image_bytes("imagenet-val") == "not the benchmark"  # the bundled photos


def test_the_table_names_each_notebooks_kernel():
    rows = published_numbers()
    kernels = {row.row_id: row.protocol_parts.get("interpolation") for row in rows}
    # Every number whose preprocessing resizes names its kernel.
    resizing = [row for row in rows if row.protocol_parts.get("preprocessing") not in (None, "as-released")]
    assert resizing and all(kernels[row.row_id] for row in resizing)
    # vit_jax's input pipeline and the BiT-M notebooks: tf.image.resize; CutOut_ViT's clean images and PGD_ViT:
    # torchvision on PIL; the holed occlusion images were resized to 8 bits (albumentations / a uint8 cast): other.
    assert (
        kernels["paul-chen/imagenet-a/top1/vit-l16"]
        == kernels["paul-chen/imagenet-o/aupr/bit-m-r101x3"]
        == ("tf-bilinear")
    )
    assert kernels["paul-chen/occlusion/top1/vit-l16-224/ratio-0"] == "pil-bilinear"
    assert kernels["paul-chen/occlusion/top1/bit-m-r101x3/ratio-0"] == "tf-bilinear"
    assert kernels["paul-chen/occlusion/top1/vit-l16-224/ratio-0.5"] == "other"
    assert kernels["paul-chen/pgd/fooled/vit-l16-224"] == "pil-bilinear"


def test_the_paul_chen_pairing_carries_the_kernel():
    bit = model_pairing("paul-chen", "timm/resnetv2_101x3_bit.goog_in21k_ft_in1k", {})
    assert {
        name: bit[name].interpolation for name in ("imagenet-a", "imagenet-r", "imagenet-o", "imagenet-val")
    } == (dict.fromkeys(("imagenet-a", "imagenet-r", "imagenet-o", "imagenet-val"), "tf-bilinear"))
    assert bit["imagenet-a"].why.endswith("; resized with tf-bilinear")
    vit_384 = model_pairing("paul-chen", SPEC, {})
    assert vit_384["imagenet-a"].interpolation == "tf-bilinear"
    # ViT-L/16 at 224 on imagenet-val: PIL for the clean and PGD images (the holed ones, resized to 8 bits, match
    # no kernel of ours and are left out).
    vit_224 = model_pairing("paul-chen", "google/vit-large-patch16-224", {})
    assert vit_224["imagenet-val"].interpolation == "pil-bilinear"
