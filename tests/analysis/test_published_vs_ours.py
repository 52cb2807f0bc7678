# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Published numbers beside ours (`evaluation.reproduction`), on synthetic runs whose per-sample predictions are
chosen: each verdict (equal, within k images, outside by k images, not comparable for every reason), the bound
for images the authors left out, the class masks and cells a number is read under, and which runs match which rows."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
from reproduction_runs import Model, accuracy_frame, cell_frame, occlusion_probe, published_row, write_run
from scipy.stats import binomtest

from hf_vitrobust.analysis.image_counts import dropped_images_bound
from hf_vitrobust.analysis.published import PublishedNumber
from hf_vitrobust.analysis.published_vs_ours import (
    compare_published,
    identify_models,
    our_number,
    published_comparisons,
    verdict_counts,
)
from hf_vitrobust.analysis.results import load_results, merge_results
from hf_vitrobust.analysis.run_models import RunModel
from hf_vitrobust.analysis.uncertainty import UncertaintySettings

SETTINGS = UncertaintySettings(confidence_level=0.95, num_resamples=400, seed=0)
SPEC = "google/vit-large-patch16-384"
N, K = 7500, 2108  # 28.1067 % correct


def published(**changes) -> PublishedNumber:
    """A published ImageNet-A top-1 of ViT-L/16, as the table states one."""
    return published_row(**{"value": 100.0 * K / N, "images": N, **changes})


def _correct(n: int, k: int, seed: int = 0) -> np.ndarray:
    correct = np.zeros(n, dtype=bool)
    correct[np.random.default_rng(seed).choice(n, k, replace=False)] = True
    return correct


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """A run of the published checkpoint on ImageNet-A under Paul & Chen's squash (native-resize)."""
    folder = tmp_path_factory.mktemp("published") / "run"
    frame = accuracy_frame(_correct(N, K))
    # Under the 200-class mask 300 more images are right (their wrong class is outside the 200).
    subset = frame["subset_prediction"].to_numpy().copy()
    subset[np.flatnonzero(frame["prediction"] != frame["label"])[:300]] = 7
    frame["subset_prediction"] = subset
    # 1,000 wrong images have the label second in their top-5.
    wrong = np.flatnonzero(frame["prediction"] != frame["label"])[:1000]
    frame["top5"] = [
        [p, 7, 2, 3, 4] if i in set(wrong.tolist()) else list(t)
        for i, (p, t) in enumerate(zip(frame["prediction"], frame["top5"], strict=True))
    ]
    write_run(folder, [Model(SPEC, {"imagenet-a": frame}, applied={"imagenet-a": "native-resize"})])
    return merge_results(load_results([folder]))[0]


def _model(result) -> RunModel:
    return RunModel(result, result["models"][0]["key"])


def test_our_number_is_the_accuracy_with_its_wilson_interval(run):
    ours = our_number(published(), _model(run), SETTINGS)
    reference = binomtest(K, N).proportion_ci(0.95, method="wilson")
    assert ours.value == pytest.approx(100 * K / N, abs=1e-12)
    assert (ours.interval.low, ours.interval.high) == pytest.approx(
        (100 * reference.low, 100 * reference.high)
    )
    assert ours.num_images == N
    masked = our_number(
        published(protocol="class_mask=hendrycks-200;preprocessing=native-resize"), _model(run), SETTINGS
    )
    assert masked.value == pytest.approx(100 * (K + 300) / N)
    top5 = our_number(published(metric="top-5 %"), _model(run), SETTINGS)
    assert top5.value == pytest.approx(100 * (K + 1000) / N)


def test_the_same_images_are_compared_as_counts(run):
    """Ours and theirs of the same 7,500 images: equal counts are "equal", one image more is "outside by 1 image";
    a plot reading (+-0.1 points = +-7.5 of 7,500 images) leaves a range of published counts."""
    model = _model(run)
    equal = compare_published(published(), model, SETTINGS)
    assert (equal.verdict, equal.kind, equal.reasons) == ("equal", "equal", ())
    assert (equal.counts.published, equal.counts.ours, equal.counts.ours_on_theirs) == ((K, K), K, (K, K))
    assert equal.difference == pytest.approx(0.0, abs=1e-9)
    one_more = compare_published(published(value=100.0 * (K + 1) / N), model, SETTINGS)
    assert (one_more.verdict, one_more.kind) == ("outside by 1 image", "outside")
    fewer = compare_published(published(value=100.0 * (K - 40) / N), model, SETTINGS)
    assert fewer.verdict == "outside by 40 images" and fewer.counts.difference == (-40, -40)
    # 100 (K + 5) / N +- 0.1 points: counts K - 2 .. K + 12 of 7,500.
    plot = compare_published(published(value=100.0 * (K + 5) / N, reading_precision=0.1), model, SETTINGS)
    assert plot.counts.published == (K - 2, K + 12)
    assert plot.verdict == "within 12 images"


def test_images_the_authors_dropped_are_bounded_by_our_accuracy(run):
    """Paul & Chen's ViT notebooks score 7,424 of the 7,500 images. Ours counts 2,108 of 7,500; on their 7,424 it
    counts 2,108 minus those of the 76 left out that it gets right: 2,032 to 2,108. The printed 28.098061680793762 %
    of ViT-L/16 is 2,086 of 7,424: within 54 images."""
    model = _model(run)
    row = published(images=7424, image_set="subset-of-all", value=28.098061680793762)
    notebook = compare_published(row, model, SETTINGS)
    assert notebook.counts.published == (2086, 2086)
    assert notebook.counts.ours_on_theirs == (2032, 2108)
    assert (notebook.verdict, notebook.kind, notebook.reasons) == ("within 54 images", "within", ())
    # The bound in points, from our own accuracy: +0.29 / -0.74, where the worst case 100 x 76 / 7424 is +-1.02.
    low, high = (100 * count / 7424 - 100 * K / N for count in dropped_images_bound(K, N, 7424))
    assert (round(high, 2), round(low, 2)) == (0.29, -0.74)
    assert (high, low) == pytest.approx((100 * (K / N) * 76 / 7424, -100 * (1 - K / N) * 76 / 7424))
    at_the_edge = compare_published(dataclasses.replace(row, value=100 * 2032 / 7424), model, SETTINGS)
    assert at_the_edge.verdict == "within 76 images"
    below = compare_published(dataclasses.replace(row, value=100 * 2031 / 7424), model, SETTINGS)
    assert below.verdict == "outside by 1 image"
    above = compare_published(dataclasses.replace(row, value=100 * 2110 / 7424), model, SETTINGS)
    assert above.verdict == "outside by 2 images"
    # Not equal while some images are left out, even at our count.
    assert compare_published(dataclasses.replace(row, value=100 * K / 7424), model, SETTINGS).verdict == (
        "within 76 images"
    )


def _reasons(comparison) -> list[str]:
    return [kind for kind, _ in comparison.reasons]


def test_not_comparable_names_every_reason(run, tmp_path):
    model = _model(run)
    other = compare_published(published(model_id="google/vit-large-patch16-224"), model, SETTINGS)
    assert other.verdict == "not comparable"
    assert _reasons(other) == ["other checkpoint"]
    assert "google/vit-large-patch16-224" in other.reason_text()
    none = compare_published(published(model_id="no public equivalent", model_match="none"), model, SETTINGS)
    assert _reasons(none) == ["other checkpoint"] and "no public copy" in none.reason_text()
    stand_in = compare_published(published(), model, SETTINGS, stand_in=True)
    assert _reasons(stand_in) == ["other checkpoint"] and "stands in for ViT-L_16" in stand_in.reason_text()
    protocol = compare_published(
        published(protocol="class_mask=paul-chen-1000;preprocessing=squash-224"), model, SETTINGS
    )
    assert _reasons(protocol) == ["other protocol"]
    assert "preprocessing squash-224 published, native-resize here" in protocol.reason_text()
    images = compare_published(published(images=7000), model, SETTINGS)
    assert (
        _reasons(images) == ["other images"] and "7,500 images here, 7,000 published" in images.reason_text()
    )
    unpublished = compare_published(published(image_set="unpublished-list", images=100), model, SETTINGS)
    assert _reasons(unpublished) == ["other images"]
    missing = compare_published(published(benchmark="imagenet-r"), model, SETTINGS)
    assert _reasons(missing) == ["not in this run"] and missing.ours.value is None
    # A subset of generated images with another checkpoint: every reason at once.
    folder = tmp_path / "subset"
    frame = accuracy_frame(_correct(100, 30))
    write_run(
        folder,
        [Model("timm/other", {"imagenet-a": frame}, applied={"imagenet-a": "model-native"})],
        benchmark_info={"imagenet-a": {"subset": {"kind": "first", "limit": 100}}},
    )
    everything = compare_published(published(), _model(merge_results(load_results([folder]))[0]), SETTINGS)
    assert _reasons(everything) == ["other checkpoint", "other protocol", "other images", "other images"]
    assert everything.verdict == "not comparable" and everything.ours.value == pytest.approx(30.0)


def test_a_cell_is_read_per_clean_image(tmp_path):
    correct = {
        ("contrast", 5): _correct(50, 12),
        ("contrast", 1): _correct(50, 40),
        ("fog", 5): _correct(50, 20),
    }
    folder = write_run(
        tmp_path / "c",
        [
            Model(
                "timm/vit_large_patch16_224",
                {"imagenet-c": cell_frame(correct)},
                applied={"imagenet-c": "as-released"},
            )
        ],
    )
    row = published(
        benchmark="imagenet-c",
        condition="corruption=contrast;severity=5",
        protocol="preprocessing=as-released",
        model_id="timm/vit_large_patch16_224",
        value=24.0,
        images=50,
    )
    comparison = compare_published(row, _model(merge_results(load_results([folder]))[0]), SETTINGS)
    assert comparison.verdict == "equal"
    assert comparison.ours.interval.unit == "sample" and comparison.ours.num_images == 50
    error = compare_published(
        dataclasses.replace(row, metric="error %", value=76.0),
        _model(merge_results(load_results([folder]))[0]),
        SETTINGS,
    )
    assert error.verdict == "equal"
    low, high = error.ours.interval.low, error.ours.interval.high
    assert low < 76.0 < high and high - 76.0 == pytest.approx(24.0 - comparison.ours.interval.low)


def test_occlusion_rows_read_the_probe_counts(tmp_path):
    probe = occlusion_probe({0.0: 830, 0.05: 820, 0.5: 600})
    frame = accuracy_frame(_correct(1000, 800))
    folder = write_run(
        tmp_path / "o",
        [Model("timm/vit_large_patch16_224", {"imagenet-val": frame}, probes={"occlusion": probe})],
    )
    model = _model(merge_results(load_results([folder]))[0])
    row = published(
        benchmark="occlusion",
        condition="ratio=0.5",
        protocol="hole=albumentations-1;image_list=paul-chen-occlusion-1k",
        model_id="timm/vit_large_patch16_224",
        value=60.4,
        images=1000,
        image_set="published-list",
    )
    comparison = compare_published(row, model, SETTINGS)
    assert comparison.verdict == "outside by 4 images"  # 604 of the published list's 1,000 against our 600
    assert comparison.counts.published == (604, 604) and comparison.counts.ours == 600
    reference = binomtest(600, 1000).proportion_ci(0.95, method="wilson")
    assert comparison.ours.interval.low == pytest.approx(100 * reference.low)
    exact = compare_published(dataclasses.replace(row, protocol="hole=exact-area"), model, SETTINGS)
    assert exact.verdict == "not comparable"
    assert "hole exact-area published, albumentations-1 here" in exact.reason_text()


def test_runs_match_rows_by_checkpoint_or_by_their_reproduction_record(run, tmp_path):
    # The published checkpoint's spec names the model: its numbers of the benchmarks the run has are shown.
    [found] = identify_models([run])
    assert (found.paper, found.model_key, found.reproduction, found.stand_in) == (
        "paul-chen",
        "vit-l16",
        False,
        False,
    )
    shown = published_comparisons([run], SETTINGS)
    assert {c.row.benchmark for c in shown} == {"imagenet-a"}
    assert {c.row.metric for c in shown} == {"top-1 %", "top-5 %"}
    notebook = next(c for c in shown if c.row.row_id == "paul-chen/imagenet-a/top1/vit-l16")
    # The shipped row: 2,086 of 7,424; ours 2,108 of 7,500, so 2,032 to 2,108 on their 7,424.
    assert notebook.row.images == 7424 and notebook.counts.published == (2086, 2086)
    assert notebook.verdict == "within 54 images"
    # Another checkpoint of no published number matches nothing.
    other = write_run(
        tmp_path / "other", [Model("timm/resnet50.a1_in1k", {"imagenet-a": accuracy_frame(_correct(20, 5))})]
    )
    assert identify_models(merge_results(load_results([other]))) == []
    folder = write_run(
        tmp_path / "stand-in",
        [Model("builtin:efficientnet_lite0", {"imagenet-a": accuracy_frame(_correct(20, 5))})],
        reproduction={
            "paper": "paul-chen",
            "pair": "vit-l16/bit-m-r101x3",
            "models": {
                "builtin_efficientnet_lite0": [
                    {"role": "vit", "model_key": "vit-l16", "stand_in": True},
                    {"role": "cnn", "model_key": "bit-m-r101x3", "stand_in": True},
                ]
            },
        },
    )
    merged = merge_results(load_results([folder]))
    found = {(i.model_key, i.stand_in, i.reproduction) for i in identify_models(merged)}
    assert found == {("vit-l16", True, True), ("bit-m-r101x3", True, True)}
    comparisons = published_comparisons(merged, SETTINGS)
    assert comparisons, "every published number of both models is listed in a reproduction"
    assert {c.verdict for c in comparisons} == {"not comparable"}
    assert all("other checkpoint" in _reasons(c) for c in comparisons)
    # Numbers of benchmarks the run lacks are listed, and say so.
    assert any("not in this run" in _reasons(c) for c in comparisons)


def test_loss_landscape_rows_read_the_grid_point_and_compare_list_parameters(tmp_path):
    """Park & Kim's landscape rows: the loss at (x, y) of the probe's grid, its parameters compared (the table writes
    a list parameter as "a,b"), and the images it read (the row's dataset)."""
    grid = np.linspace(-1, 1, 3)
    loss = np.arange(9, dtype=float).reshape(3, 3)  # entry [i, j] at (x[j], y[i])
    probe = {
        "x": grid.tolist(),
        "y": grid.tolist(),
        "loss": loss.tolist(),
        "accuracy": (loss / 10).tolist(),
        "num_images": 96,
        "normalization": "park-kim",
        "benchmark": "cifar100-train",
        "params": {"normalization": "park-kim", "exclude": ["pos_embed", "relative_position"]},
    }
    folder = write_run(
        tmp_path / "landscape",
        [
            Model(
                "timm/resnet50.a1_in1k",
                {"cifar100-train": accuracy_frame(_correct(96, 50))},
                probes={"loss_landscape": probe},
            )
        ],
    )
    model = _model(merge_results(load_results([folder]))[0])
    row = published(
        benchmark="loss_landscape",
        metric="loss",
        condition="dataset=cifar100-train;x=1.0;y=-1.0",
        protocol="exclude=pos_embed,relative_position;normalization=park-kim",
        model_id="no public equivalent",
        model_match="none",
        value=2.0,
        images=4992,
        image_set="unknown",
    )
    comparison = compare_published(row, model, SETTINGS)
    assert comparison.ours.value == 2.0 and comparison.ours.interval is None  # loss[0, 2]: y = -1, x = 1
    # 96 images here, 4,992 published; a point off the origin lies along the authors' unseeded directions
    assert _reasons(comparison) == ["other checkpoint", "other protocol", "other images"]
    assert "x=1.0, y=-1.0 lies along the authors' unseeded random directions" in comparison.reason_text()
    accuracy = our_number(dataclasses.replace(row, metric="top-1 %"), model, SETTINGS)
    assert accuracy.value == pytest.approx(20.0)
    elsewhere = compare_published(
        dataclasses.replace(row, condition="dataset=imagenet-train;x=1.0;y=-1.0"), model, SETTINGS
    )
    assert (
        "the probe read cifar100-train here, the published number imagenet-train" in elsewhere.reason_text()
    )
    other = compare_published(
        dataclasses.replace(row, protocol="exclude=pos_embed;normalization=park-kim"), model, SETTINGS
    )
    assert "exclude pos_embed published" in other.reason_text()
    missing = our_number(
        dataclasses.replace(row, condition="dataset=cifar100-train;x=0.5;y=0.0"), model, SETTINGS
    )
    assert missing.value is None and "0.5 is not among" in missing.missing


def test_imagenet_9_rows_read_each_variant_and_the_gap_per_foreground(tmp_path):
    """ImageNet-9: the 1000-way prediction mapped to the 9 superclasses, per variant; the BG-gap's images are the
    foregrounds (one per pair of backgrounds), as the notebooks count them."""
    from hf_vitrobust.metrics.background_gap import IMAGENET_TO_IN9

    dog, wrong = int(np.flatnonzero(IMAGENET_TO_IN9 == 0)[0]), int(np.flatnonzero(IMAGENET_TO_IN9 == -1)[0])
    rows = []
    for variant, right in (("original", 45), ("mixed_same", 40), ("mixed_rand", 30)):
        for i in range(50):
            prediction = dog if i < right else wrong
            rows.append(
                {
                    "sample_id": f"{variant}/val/00_dog/{i:04d}.JPEG",
                    "clean_sample_id": None,
                    "label": 0,
                    "prediction": prediction,
                    "subset_prediction": prediction,
                    "top5": [prediction, 1, 2, 3, 4],
                    "variant": variant,
                }
            )
    spec = "timm/resnetv2_101x3_bit.goog_in21k_ft_in1k"
    folder = write_run(
        tmp_path / "in9",
        [Model(spec, {"imagenet-9": pd.DataFrame(rows)}, applied={"imagenet-9": "as-released"})],
    )
    model = _model(merge_results(load_results([folder]))[0])
    base = published(
        benchmark="imagenet-9",
        model_id=spec,
        protocol="preprocessing=as-released",
        images=50,
        condition="variant=mixed_same",
        value=80.0,
    )
    assert compare_published(base, model, SETTINGS).verdict == "equal"
    gap = compare_published(
        dataclasses.replace(base, metric="BG-gap (points)", condition="", value=20.0), model, SETTINGS
    )
    assert gap.verdict == "equal" and gap.ours.num_images == 50 and gap.reasons == ()
    assert gap.ours.interval.low < 20.0 < gap.ours.interval.high


def test_published_numbers_and_findings_read_each_predictions_file_once(tmp_path):
    """A run of a pair's published checkpoints: the analysis (intervals, published numbers, findings) reads its
    ImageNet-A predictions once, one file a model."""
    from pathlib import Path

    import pyarrow.parquet as pq

    from hf_vitrobust.analysis.analyze import analyze

    cnn = "timm/resnetv2_101x3_bit.goog_in21k_ft_in1k"
    suite = {
        "name": "paper",
        "model_pairs": [{"name": "vit-l16/bit-m-r101x3", "vit": SPEC, "cnn": cnn, "note": "x"}],
    }
    folder = write_run(
        tmp_path / "pair",
        [
            Model(
                SPEC, {"imagenet-a": accuracy_frame(_correct(N, K))}, applied={"imagenet-a": "native-resize"}
            ),
            Model(
                cnn, {"imagenet-a": accuracy_frame(_correct(N, 780, 1))}, applied={"imagenet-a": "squash-224"}
            ),
        ],
        suite=suite,
    )
    merged = merge_results(load_results([folder]))
    opened = []
    reading = pq.read_table
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(
            pq, "read_table", lambda path, *a, **k: opened.append(Path(path)) or reading(path, *a, **k)
        )
        analysis = analyze(merged, SETTINGS)
        summary = analysis.reproduction()
    assert sorted(analysis.intervals) == sorted(
        merged[0]["predictions"]
    )  # both models' intervals, same reads
    assert len(summary["published"]) == 5 and summary["findings"][0]["checks"][0]["verdict"] == "holds"
    assert sorted(path.name for path in opened) == ["imagenet-a.parquet", "imagenet-a.parquet"]
    assert len(set(opened)) == 2


def test_a_random_sample_of_their_images_gets_the_sampling_interval(tmp_path):
    """400 of ImageNet-A's 7,500 images drawn at random (`--subset random-400`), 120 right: the published value of
    all 7,500 is placed by the Wilson interval of 120 / 400; a first-400 subset is no sample and not compared."""
    frame = accuracy_frame(_correct(400, 120))
    folder = write_run(
        tmp_path / "sample",
        [Model(SPEC, {"imagenet-a": frame}, applied={"imagenet-a": "native-resize"})],
        benchmark_info={"imagenet-a": {"subset": {"kind": "random", "limit": 400}}},
    )
    model = _model(merge_results(load_results([folder]))[0])
    wilson = binomtest(120, 400).proportion_ci(0.95, method="wilson")
    inside = compare_published(published(value=100 * wilson.high - 0.01), model, SETTINGS)
    assert (inside.verdict, inside.kind, inside.sampled, inside.counts) == (
        "within the interval",
        "within",
        True,
        None,
    )
    outside = compare_published(published(value=100 * wilson.high + 0.01), model, SETTINGS)
    assert (outside.verdict, outside.kind) == ("outside the interval", "outside")
    # A sample is compared with a published number of fewer images as well (their 7,424 of the 7,500).
    row = published(images=7424, image_set="subset-of-all", value=100 * wilson.low + 0.01)
    assert compare_published(row, model, SETTINGS).verdict == "within the interval"


def test_a_protocol_part_the_row_leaves_unnamed_makes_the_verdict_approximate(run):
    """A published ImageNet-A top-1 that does not say which argmax it took: ours is read under the default
    200-class mask (300 more right), and the verdict says it is approximate."""
    model = _model(run)
    squash = "interpolation=tf-bilinear;preprocessing=native-resize"
    unnamed = compare_published(published(protocol=squash), model, SETTINGS)
    assert unnamed.unnamed == ("class_mask",)
    assert unnamed.verdict == "approximate: outside by 300 images (unnamed: class_mask)"
    assert unnamed.kind == "outside"
    same = compare_published(published(protocol=squash, value=100 * (K + 300) / N), model, SETTINGS)
    assert (same.verdict, same.kind) == ("approximate: equal (unnamed: class_mask)", "equal")
    nothing_named = compare_published(published(protocol=""), model, SETTINGS)
    assert nothing_named.unnamed == ("preprocessing", "interpolation", "class_mask")
    # Both named: not approximate. The top-5 needs the mask as well; an AUPR does not.
    assert compare_published(published(), model, SETTINGS).unnamed == ()
    aupr = dataclasses.replace(published(protocol=squash), benchmark="imagenet-o", metric="AUPR %")
    assert compare_published(aupr, model, SETTINGS).unnamed == ()
    other = compare_published(published(model_id="google/vit-large-patch16-224"), model, SETTINGS)
    counts = verdict_counts([unnamed, same, nothing_named, other])
    assert counts == {"equal": 1, "within": 0, "outside": 2, "not comparable": 1}
