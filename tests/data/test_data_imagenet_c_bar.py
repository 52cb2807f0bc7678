# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""ImageNet-C-bar: from a folder laid out like its release (`<corruption>/<1..5>/<wnid>/<file>`, the preprocessed
copy's layout in facebookresearch/augmentation-corruption's README) end to end through `evaluate()`, with the
headline mean error and the per-corruption errors recomputed here from the stored predictions as the repository's
test_c_bar.py computes them; generated on the fly (the same images whatever the batch size); bad names and
severities refused with the valid ones."""

import pandas as pd
import pytest
import torch
from benchmark_runs import block_jpeg, corruption_release, evaluate_benchmark

from hf_vitrobust.corruptions.c_bar import corrupt_c_bar
from hf_vitrobust.corruptions.export import resize_and_crop, stable_sample_index
from hf_vitrobust.data import get_benchmark, load_benchmark
from hf_vitrobust.data.c_bar_generated import CBarRecipe
from hf_vitrobust.data.generated import GeneratedSource
from hf_vitrobust.hub.card_results import eval_results
from hf_vitrobust.models.imagenet import IMAGENET_WNIDS
from hf_vitrobust.report.document import render_markdown

# The release's 10 folder names (the repository README's list), written out here.
RELEASE_CORRUPTIONS = {
    "blue_noise_sample", "brownish_noise", "caustic_refraction", "checkerboard_cutout", "cocentric_sine_waves",
    "inverse_sparkles", "perlin_noise", "plasma_noise", "single_frequency_greyscale", "sparkles",
}  # fmt: skip
CELLS = [(c, s) for c in ("sparkles", "plasma_noise") for s in (2, 5)]


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> dict:
    """A tiny ViT and a 2 x 2-cell ImageNet-C-bar folder: per cell three images, filed under the model's own argmax
    class (right) or another class (wrong); cell k holds k % 3 wrong ones, so the cells differ."""
    root = tmp_path_factory.mktemp("c_bar")
    return corruption_release(root, "imagenet-c-bar", CELLS, model_seed=6, wrong_offset=11)


def test_the_benchmark_has_the_release_corruptions_severities_and_size():
    benchmark = get_benchmark("imagenet-c-bar")
    assert set(benchmark.corruptions) == RELEASE_CORRUPTIONS and len(benchmark.corruptions) == 10
    assert benchmark.severities == (1, 2, 3, 4, 5) and benchmark.released_size == 224
    assert benchmark.kind == "corruption" and benchmark.label_space == "imagenet-1k"
    assert benchmark.folder_layout == "corruption_severity" and benchmark.generated_from == "imagenet-val"
    assert benchmark.mean_error_headline and not benchmark.alexnet_baseline


def test_evaluate_scores_the_release_folder_with_the_mean_error_recomputed(release):
    entry = {"source": release["folder"], "corruptions": ["sparkles", "plasma_noise"], "severities": [2, 5]}
    results, frame = evaluate_benchmark(
        release["root"] / "e2e", release["model"], "imagenet-c-bar", entry, {"batch_size": 8}, report=False
    )
    key = results["models"][0]["key"]
    assert len(frame) == 12
    wnids = frame["sample_id"].astype(str).str.split("/").str[2]
    assert (frame["label"].to_numpy() == [IMAGENET_WNIDS.index(w) for w in wnids]).all()
    # test_c_bar.py: the top-1 error of each cell, their mean per corruption and over every cell.
    wrong = frame["prediction"].to_numpy() != frame["label"].to_numpy()
    error = (
        100.0
        * pd.Series(wrong).groupby([frame["corruption"].to_numpy(), frame["severity"].to_numpy()]).mean()
    )
    assert sorted(error.index) == sorted(CELLS) and error.nunique() == 3  # 0, 33.3 and 66.7 %
    metrics = results["metrics"][key]["imagenet-c-bar"]
    assert metrics["mean_error"] == pytest.approx(error.mean())
    assert metrics["error_by_corruption"] == pytest.approx(
        {c: error[c].mean() for c in ("sparkles", "plasma_noise")}
    )
    assert list(metrics["error_by_corruption"]) == ["plasma_noise", "sparkles"]  # the benchmark's order
    [summary] = results["summary"].values()
    assert next(iter(summary)) == "imagenet-c-bar mean error %"
    assert summary["imagenet-c-bar mean error %"] == pytest.approx(error.mean())
    interval = results["intervals"][key]["imagenet-c-bar mean error %"]
    assert interval["low"] <= error.mean() <= interval["high"]
    [entry] = eval_results([results])  # the model card's model-index carries the headline
    [result] = entry["results"]
    rows = {row["type"]: row["value"] for row in result["metrics"]}
    assert rows["mean_error"] == pytest.approx(error.mean())
    report = render_markdown([results], {})
    assert "Mean error per corruption over its severities present (%)" in report
    assert f"| sparkles | {error['sparkles'].mean():.2f}" in report


def test_generated_images_do_not_depend_on_the_batch_size():
    clean = load_benchmark("imagenet-val", "builtin", limit=3)
    recipe = CBarRecipe(["checkerboard_cutout", "single_frequency_greyscale"], [3], seed=4)
    one, three = (list(GeneratedSource(clean, recipe, batch_size=size).samples()) for size in (1, 3))
    assert sorted(s.sample_id for s in one) == sorted(s.sample_id for s in three) and len(one) == 6
    by_id = {s.sample_id: s.image for s in three}
    for sample in one:
        assert torch.equal(sample.image, by_id[sample.sample_id]) and sample.image.shape == (3, 224, 224)
    # Each is the clean image resized and cropped as make_imagenet_c_bar.py does, corrupted, then JPEG 85.
    photo = next(iter(clean.samples()))
    crop = resize_and_crop(photo.image, 256, 224)[None]
    [made] = [s for s in one if s.sample_id == f"checkerboard_cutout/3/{photo.sample_id}"]
    corrupted = corrupt_c_bar(
        crop, "checkerboard_cutout", 3, seed=4, sample_ids=[stable_sample_index(photo.sample_id)]
    )
    assert (made.image.float() - corrupted[0].float()).abs().mean() < 3  # the JPEG round trip's loss only


def test_load_benchmark_generates_it_and_refuses_bad_names_and_severities(tmp_path):
    for k, wnid in enumerate(IMAGENET_WNIDS[:2]):  # a clean imagenet-val folder of two images
        (tmp_path / wnid).mkdir()
        (tmp_path / wnid / f"ILSVRC2012_val_{k + 1:08d}.JPEG").write_bytes(block_jpeg(k))
    source = load_benchmark(
        "imagenet-c-bar", f"generated:{tmp_path}", corruptions=["sparkles"], severities=[1]
    )
    samples = list(source.samples())
    assert [s.metadata["corruption"] for s in samples] == ["sparkles", "sparkles"]
    assert [s.label for s in samples] == [0, 1] and samples[0].image.shape == (3, 224, 224)
    assert source.describe()["kind"] == "generated-c-bar"
    with pytest.raises(
        ValueError, match=r"unknown corruption 'sparkle'\. Did you mean 'sparkles'.*Known: blue_noise"
    ):
        load_benchmark("imagenet-c-bar", "generated:builtin", corruptions=["sparkle"])
    with pytest.raises(ValueError, match=r"unknown corruption 'fog'.*Known: blue_noise_sample"):
        load_benchmark("imagenet-c-bar", "generated:builtin", corruptions=["fog"])
    with pytest.raises(ValueError, match=r"severities must be integers in 1\.\.5"):
        load_benchmark("imagenet-c-bar", "generated:builtin", severities=[6])


def test_the_generator_output_folders_named_by_parameter_are_read_as_severities(tmp_path):
    """make_imagenet_c_bar.py names each severity folder by its parameter ("{:.2f}" of imagenet_c_bar.csv:
    caustic_refraction's 2.35 ... 9.15); the README's preprocessed copy by 1..5. Both read as severities 1..5."""
    root = tmp_path / "ImageNet-C-Bar"
    for corruption, level in (
        ("caustic_refraction", "2.35"),
        ("caustic_refraction", "9.15"),
        ("sparkles", "2"),
    ):
        (root / corruption / level / IMAGENET_WNIDS[3]).mkdir(parents=True)
        (root / corruption / level / IMAGENET_WNIDS[3] / "ILSVRC2012_val_00000001.JPEG").write_bytes(
            block_jpeg(0)
        )
    samples = list(load_benchmark("imagenet-c-bar", str(root)).samples())
    cells = [(s.metadata["corruption"], s.metadata["severity"]) for s in samples]
    assert cells == [("caustic_refraction", 1), ("caustic_refraction", 5), ("sparkles", 2)]
    assert samples[1].sample_id == f"caustic_refraction/5/{IMAGENET_WNIDS[3]}/ILSVRC2012_val_00000001.JPEG"
    assert all(s.label == 3 for s in samples)
    only = load_benchmark("imagenet-c-bar", str(root), corruptions=["caustic_refraction"], severities=[5])
    assert [s.metadata["severity"] for s in only.samples()] == [5]
    (root / "sparkles" / "2.50").mkdir()
    with pytest.raises(
        ValueError, match=r"'2\.50' is not a severity of sparkles; expected 1\.\.5 or .*1\.00, 2\.00"
    ):
        list(load_benchmark("imagenet-c-bar", str(root)).samples())
