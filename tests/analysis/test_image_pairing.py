"""Paired comparisons across runs pair by sample id only where the same sample id is the same image (issue 38,
point 10): a run that generated ImageNet-C on the fly and a run of files, or two generated runs of different
seeds, are not paired; two generated runs of one recipe are."""

import numpy as np
from reproduction_runs import Model, cell_frame, write_run

from hf_vitrobust.analysis.analyze import analyze
from hf_vitrobust.analysis.image_identity import benchmark_images, images_differ
from hf_vitrobust.analysis.results import load_results, merge_results
from hf_vitrobust.analysis.uncertainty import UncertaintySettings

CELLS = [("gaussian_noise", 3), ("contrast", 3)]


def _generated(seed: int) -> dict:
    source = {
        "kind": "generated-corruptions",
        "generated": True,
        "seed": seed,
        "sample_seed": "seed + BLAKE2b-31 of the clean sample id (hf_vitrobust.corruptions.export)",
        "resize": 256,
        "crop": 224,
        "release_encoding": "jpeg-85",
        "engine": "hf_vitrobust.corruptions 0.1.0",
        "clean": {"kind": "local", "location": "/data/val"},
    }
    return {"imagenet-c": {"generated": True, "source": source}}


def _run(tmp_path, name: str, spec: str, seed: int, info: dict | None):
    rng = np.random.default_rng(seed)
    frame = cell_frame({cell: rng.random(40) < 0.6 for cell in CELLS})
    return write_run(tmp_path / name, [Model(spec, {"imagenet-c": frame})], benchmark_info=info)


def test_runs_are_paired_only_on_the_same_images(tmp_path):
    folders = [
        _run(tmp_path, "generated-0", "a/vit", 1, _generated(0)),
        _run(tmp_path, "files", "b/cnn", 2, None),
        _run(tmp_path, "generated-1", "c/mixer", 3, _generated(1)),
        _run(tmp_path, "generated-0-again", "d/deit", 4, _generated(0)),
    ]
    results = merge_results(load_results(folders))
    analysis = analyze(results, UncertaintySettings(num_resamples=50))
    rows = {(row["a"], row["b"]): row for row in analysis.comparisons["rows"] if "top-1" in row["headline"]}
    keys = [result["models"][0]["key"] for result in results]
    generated, files, other_seed, same_recipe = keys
    assert rows[(generated, files)]["skipped"].startswith(
        "one run generated its images on the fly, the other read files"
    )
    assert rows[(generated, other_seed)]["skipped"] == (
        "the runs generated their images differently (seed 0 vs 1): the same sample id is not the same image"
    )
    assert "skipped" not in rows[(generated, same_recipe)]
    paired = rows[(generated, same_recipe)]
    assert 0.0 <= paired["p_value"] <= 1.0 and paired["difference"]["num_samples"] == 80
    # Only the compared rows enter Holm's correction.
    assert analysis.comparisons["num_comparisons"] == sum(
        "p_value" in row for row in analysis.comparisons["rows"]
    )


def test_the_images_of_a_benchmark_entry():
    assert benchmark_images({"generated": False, "source": {"kind": "hub", "location": "x/y"}}) == {
        "images": "files"
    }
    described = benchmark_images(_generated(7)["imagenet-c"])
    assert described["images"] == "generated" and described["seed"] == 7 and "clean" not in described
    assert images_differ(described, dict(described)) is None
    assert "crop 224 vs 192" in images_differ(described, {**described, "crop": 192})
