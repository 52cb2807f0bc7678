# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The interpolation protocol part (`analysis.protocols.INTERPOLATION_PROTOCOLS`) as `hf_vitrobust.evaluation`
applies it: each name feeds the model the pixels of its reference kernel (PIL itself for the antialiased ones; for
TensorFlow's bilinear, block means worked by hand), a suite's pairing sets it per model, and a run records it in
results.json without changing the default task ids."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import yaml
from PIL import Image
from torch import nn

from hf_vitrobust.analysis.pairings import Pairing
from hf_vitrobust.data import get_benchmark
from hf_vitrobust.evaluation.config import EvaluationConfig
from hf_vitrobust.evaluation.model_input import model_input
from hf_vitrobust.evaluation.runner import evaluate
from hf_vitrobust.evaluation.store import resume_refusal
from hf_vitrobust.hub.eval_results import recorded_protocol, task_id
from hf_vitrobust.models import Classifier, Preprocessing

IMAGENET_A = get_benchmark("imagenet-a")
SIDE = 8  # the model's input; the image below is twice that on each side


def bicubic_cnn() -> Classifier:
    """A 1000-class CNN that runs at 8x8 pixels and names bicubic as its own kernel (as timm's ViTs do)."""
    torch.manual_seed(0)
    module = nn.Sequential(nn.Conv2d(3, 4, 3), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 1000))
    preprocessing = Preprocessing(input_size=SIDE, interpolation="bicubic", mean=(0.5,) * 3, std=(0.5,) * 3)
    return Classifier(module.eval(), preprocessing, name="bicubic-cnn")


def image() -> Image.Image:
    return Image.fromarray(np.random.default_rng(0).integers(0, 256, (2 * SIDE, 2 * SIDE, 3), dtype=np.uint8))


def pil_reference(resample: Image.Resampling) -> torch.Tensor:
    """PIL's own resize of the image to the model's side, in [0, 1]."""
    resized = np.asarray(image().resize((SIDE, SIDE), resample), dtype=np.float32) / 255.0
    return torch.from_numpy(resized).permute(2, 0, 1)


def tf_reference() -> torch.Tensor:
    """TensorFlow's bilinear at exactly half the size, worked by hand: output pixel i samples the input at
    (i + 0.5) * 2 - 0.5 = 2i + 0.5, halfway between pixels 2i and 2i + 1 on each axis, so each output pixel is the
    mean of a 2x2 block (no antialiasing: PIL's bilinear weighs 4x4 pixels 1/8, 3/8, 3/8, 1/8 instead)."""
    pixels = np.asarray(image(), dtype=np.float64) / 255.0
    blocks = pixels.reshape(SIDE, 2, SIDE, 2, 3).mean(axis=(1, 3))
    return torch.from_numpy(blocks).permute(2, 0, 1).float()


@pytest.mark.parametrize(
    ("interpolation", "kernel", "reference"),
    [
        ("model-own", "pil-bicubic", lambda: pil_reference(Image.Resampling.BICUBIC)),
        ("pil-bilinear", "pil-bilinear", lambda: pil_reference(Image.Resampling.BILINEAR)),
        ("tf-bilinear", "tf-bilinear", tf_reference),
    ],
)
def test_each_interpolation_feeds_its_reference_kernel(interpolation, kernel, reference):
    chosen = model_input(IMAGENET_A, "native-resize", bicubic_cnn(), interpolation=interpolation)
    pixels = chosen.classifier.preprocessing.image_to_tensor(image())
    torch.testing.assert_close(pixels, reference(), atol=1e-6, rtol=0)
    recorded = chosen.to_dict()
    assert (recorded["interpolation"], recorded["kernel"], recorded["applied"]) == (
        interpolation,
        kernel,
        "native-resize",
    )


def test_the_kernels_differ_where_the_image_shrinks():
    """The three kernels are not the same pixels (else the part would be pointless), by more than 8-bit rounding."""
    own, pil, tf = (
        pil_reference(Image.Resampling.BICUBIC),
        pil_reference(Image.Resampling.BILINEAR),
        tf_reference(),
    )
    assert (own - pil).abs().max() > 2 / 255 and (pil - tf).abs().max() > 2 / 255


def test_a_pairing_sets_the_kernel_unless_the_benchmark_names_another():
    pairing = Pairing("squash-224", "paul-chen pairing: squash-224; resized with tf-bilinear", "tf-bilinear")
    cnn = bicubic_cnn()
    assert model_input(IMAGENET_A, "native-resize", cnn, pairing=pairing).kernel == "tf-bilinear"
    named = model_input(IMAGENET_A, "native-resize", cnn, pairing=pairing, interpolation="pil-bilinear")
    assert named.kernel == "pil-bilinear"
    assert model_input(IMAGENET_A, "native-resize", cnn, pairing=Pairing("native-resize", "x")).kernel == (
        "pil-bicubic"
    )
    # Nothing is resized as released: the part does not apply.
    released = model_input(get_benchmark("imagenet-c"), "as-released", Classifier(
        cnn.module, Preprocessing(input_size=224, mean=(0.5,) * 3, std=(0.5,) * 3), name="c"
    ), interpolation="tf-bilinear")  # fmt: skip
    assert released.kernel == "none"
    with pytest.raises(ValueError, match="known: model-own, pil-bilinear, tf-bilinear"):
        model_input(IMAGENET_A, "native-resize", cnn, interpolation="tf-bicubic")


def _run(tmp_path, protocol: dict | None) -> dict:
    entry = {"source": "builtin", "limit": 2, **({"protocol": protocol} if protocol else {})}
    suite = {"name": "interpolation", "batch_size": 2, "chunk_size": 2, "benchmarks": {"imagenet-val": entry}}
    tmp_path.mkdir(parents=True)
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(suite))
    config = {"suite": str(path), "output": tmp_path / "run", "progress": False, "report": False}
    return evaluate(EvaluationConfig(models=["builtin:efficientnet_lite0"], **config))


def test_a_run_records_the_part_and_only_a_chosen_one_enters_the_task_id(tmp_path):
    benchmark = get_benchmark("imagenet-val")
    for protocol, kernel, task in (
        (None, "pil-bicubic", "imagenet-val.accuracy"),  # EfficientNet-Lite0's own (timm's bicubic)
        ({"interpolation": "tf-bilinear"}, "tf-bilinear", "imagenet-val.accuracy.interpolation=tf-bilinear"),
    ):
        results = _run(tmp_path / kernel, protocol)
        key = results["models"][0]["key"]
        record = results["benchmarks"]["imagenet-val"]["protocol"]
        assert record["interpolation"] == (protocol or {}).get("interpolation", "model-own")
        assert record["models"][key]["kernel"] == kernel
        assert record["image_bytes"] == "not the benchmark"  # the bundled photos
        assert task_id(benchmark, "accuracy", recorded_protocol(benchmark, record, key)) == task


def test_a_run_folder_from_before_the_part_resumes_under_the_default(tmp_path):
    """run.json of an earlier version recorded no interpolation: it ran model-own, so it resumes as that and only
    as that."""
    recorded = {
        "protocols": {"imagenet-val": {"preprocessing": "model-native", "interpolation": "model-own"}}
    }
    previous = {"schema_version": 2, "protocols": {"imagenet-val": {"preprocessing": "model-native"}}}
    assert resume_refusal(tmp_path, previous, recorded, True, 2) is None
    other = {"protocols": {"imagenet-val": {"preprocessing": "model-native", "interpolation": "tf-bilinear"}}}
    refusal = resume_refusal(tmp_path, previous, other, True, 2)
    assert refusal is not None and "tf-bilinear" in refusal
