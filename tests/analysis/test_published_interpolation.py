# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Interpolation and image bytes in `hf_vitrobust.analysis`: a published number made with TensorFlow's bilinear
resize compares only with a run that resized so; a run that read a re-encoded copy, or a Hub copy of unknown bytes,
gets an approximate verdict; the table names each notebook's kernel; the `paul-chen` pairing carries it; and a
results.json from before the part reads as the default."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from reproduction_runs import Model, accuracy_frame, occlusion_probe, published_row, write_run

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
    # torchvision on PIL; the holed occlusion images were resized to 8 bits before the hole: CutOut_ViT with
    # albumentations' Resize (OpenCV, rounded), CutOut_BiT with tf.image.resize cast to uint8 (truncated).
    assert (
        kernels["paul-chen/imagenet-a/top1/vit-l16"]
        == kernels["paul-chen/imagenet-o/aupr/bit-m-r101x3"]
        == ("tf-bilinear")
    )
    assert kernels["paul-chen/occlusion/top1/vit-l16-224/ratio-0"] == "pil-bilinear"
    assert kernels["paul-chen/occlusion/top1/bit-m-r101x3/ratio-0"] == "tf-bilinear"
    for ratio in ("0.05", "0.1", "0.2", "0.5"):
        assert kernels[f"paul-chen/occlusion/top1/vit-l16-224/ratio-{ratio}"] == "cv2-bilinear-uint8"
        assert kernels[f"paul-chen/occlusion/top1/bit-m-r101x3/ratio-{ratio}"] == "tf-bilinear-uint8"
    assert "other" not in kernels.values()
    assert kernels["paul-chen/pgd/fooled/vit-l16-224"] == "pil-bilinear"


def test_the_paul_chen_pairing_carries_the_kernel():
    bit = model_pairing("paul-chen", "timm/resnetv2_101x3_bit.goog_in21k_ft_in1k", {})
    assert {
        name: bit[name].interpolation for name in ("imagenet-a", "imagenet-r", "imagenet-o", "imagenet-val")
    } == (dict.fromkeys(("imagenet-a", "imagenet-r", "imagenet-o", "imagenet-val"), "tf-bilinear"))
    assert bit["imagenet-a"].why.endswith("; resized with tf-bilinear")
    vit_384 = model_pairing("paul-chen", SPEC, {})
    assert vit_384["imagenet-a"].interpolation == "tf-bilinear"
    # ViT-L/16 at 224 on imagenet-val: PIL for the clean and PGD images (the holed ones' 8-bit resize is theirs
    # only, left out of the pairing: `reproduce` gives them a leg of their own).
    vit_224 = model_pairing("paul-chen", "google/vit-large-patch16-224", {})
    assert vit_224["imagenet-val"].interpolation == "pil-bilinear"


def test_a_pairing_names_how_many_published_rows_back_it():
    """BiT-M R101x3 has one published ImageNet-O number and two ImageNet-A numbers (counted here from the table)."""
    spec = "timm/resnetv2_101x3_bit.goog_in21k_ft_in1k"
    own = [row for row in published_numbers("paul-chen") if row.model_id == spec]
    assert [row.row_id for row in own if row.benchmark == "imagenet-o"] == [
        "paul-chen/imagenet-o/aupr/bit-m-r101x3"
    ]
    assert len([row for row in own if row.benchmark == "imagenet-a"]) == 2
    bit = model_pairing("paul-chen", spec, {})
    assert bit["imagenet-o"].why == (
        "paul-chen pairing: squash-224, as the published numbers of its weights "
        "(1 row: paul-chen/imagenet-o/aupr/bit-m-r101x3); resized with tf-bilinear"
    )
    assert "(2 rows, e.g. paul-chen/imagenet-a/top1/bit-m-r101x3)" in bit["imagenet-a"].why


def _occlusion_model(folder, spec: str, applied: str, kernel: str, correct: int) -> RunModel:
    """A run of the occlusion probe on the published list, `correct` of its 1,000 entries right at ratio 0.05."""
    probe = occlusion_probe({0.0: 900, 0.05: correct})
    frame = accuracy_frame(np.arange(1000) < 900)
    model = Model(
        spec,
        {"imagenet-val": frame},
        probes={"occlusion": probe},
        applied={"imagenet-val": applied},
        kernels={"imagenet-val": kernel},
    )
    result = merge_results(load_results([write_run(folder, [model])]))[0]
    return RunModel(result, result["models"][0]["key"])


@pytest.mark.parametrize(
    ("row_id", "applied", "kernel", "other"),
    [
        (
            "paul-chen/occlusion/top1/vit-l16-224/ratio-0.05",
            "native-resize",
            "cv2-bilinear-uint8",
            "pil-bilinear",
        ),
        (
            "paul-chen/occlusion/top1/bit-m-r101x3/ratio-0.05",
            "squash-224",
            "tf-bilinear-uint8",
            "tf-bilinear",
        ),
    ],
)
def test_a_holed_occlusion_row_compares_only_under_its_8_bit_kernel(tmp_path, row_id, applied, kernel, other):
    """The shipped rows (823 and 760 of the 1,000 listed entries): a run that resized with the row's 8-bit kernel
    compares; one with the clean images' kernel is another protocol."""
    [row] = [row for row in published_numbers("paul-chen") if row.row_id == row_id]
    published = round(row.value * 10)  # per cent of 1,000 entries
    same = compare_published(
        row, _occlusion_model(tmp_path / "same", row.model_id, applied, kernel, published), SETTINGS
    )
    assert (same.verdict, same.reasons) == ("equal", ())
    near = compare_published(
        row, _occlusion_model(tmp_path / "near", row.model_id, applied, kernel, published - 3), SETTINGS
    )
    assert near.verdict == "outside by 3 images" and near.counts.ours == published - 3
    clean = compare_published(
        row, _occlusion_model(tmp_path / "clean", row.model_id, applied, other, published), SETTINGS
    )
    assert clean.verdict == "not comparable"
    assert clean.reasons == (("other protocol", f"interpolation {kernel} published, {other} here"),)
