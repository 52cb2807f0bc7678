# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The interpolation protocol part (`analysis.protocols.INTERPOLATION_PROTOCOLS`) as `hf_vitrobust.evaluation`
applies it: each name feeds the model the pixels of its reference kernel (PIL itself for the antialiased ones; for
TensorFlow's bilinear, block means worked by hand), a suite's pairing sets it per model, and a run records it in
results.json without changing the default task ids."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
import torch
import yaml
from PIL import Image
from torch import nn

from hf_vitrobust.analysis.pairings import Pairing
from hf_vitrobust.data import get_benchmark
from hf_vitrobust.evaluation.config import EvaluationConfig
from hf_vitrobust.evaluation.model_input import model_input, with_interpolation
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


def eight_bit(pixels: torch.Tensor) -> torch.Tensor:
    """Pixels in [0, 1] that must lie on the 8-bit grid -> their uint8 values (3, H, W) -> (H, W, 3)."""
    values = pixels * 255.0
    assert (values - values.round()).abs().max() < 1e-4
    return values.round().to(torch.uint8).permute(1, 2, 0)


def test_cv2_bilinear_uint8_is_opencvs_resize_of_the_uint8_array():
    """albumentations' Resize (CutOut_ViT): cv2.resize with INTER_LINEAR on the HWC uint8 array, the result 8-bit;
    at half the size and at a ratio that is no integer."""
    chosen = model_input(IMAGENET_A, "native-resize", bicubic_cnn(), interpolation="cv2-bilinear-uint8")
    assert (chosen.interpolation, chosen.kernel) == ("cv2-bilinear-uint8", "cv2-bilinear-uint8")
    array = np.asarray(image())
    reference = cv2.resize(array, (SIDE, SIDE), interpolation=cv2.INTER_LINEAR)
    pixels = chosen.classifier.preprocessing.image_to_tensor(image())
    assert torch.equal(eight_bit(pixels), torch.from_numpy(reference))
    odd = np.random.default_rng(1).integers(0, 256, (13, 11, 3), dtype=np.uint8)
    squash = Preprocessing(input_size=(5, 7), resize_size=(5, 7), interpolation="bilinear")
    resized = with_interpolation(squash, "cv2-bilinear-uint8").image_to_tensor(Image.fromarray(odd))
    expected = cv2.resize(odd, (7, 5), interpolation=cv2.INTER_LINEAR)
    assert torch.equal(eight_bit(resized), torch.from_numpy(expected))


def test_tf_bilinear_uint8_truncates_the_tf_kernel():
    """CutOut_BiT: tf.cast(tf.image.resize(uint8_image, size), tf.uint8). 4x4 -> 2x2 by hand: each output pixel is
    the mean of a 2x2 block (as `tf_reference`); the block 10, 11, 11, 11 gives 10.75, cast to 10 (rounding: 11)."""
    channel = np.array(
        [[10, 11, 200, 201], [11, 11, 201, 201], [0, 1, 255, 254], [2, 2, 254, 254]], dtype=np.uint8
    )
    block_means = np.array([[10.75, 200.75], [1.25, 254.25]])
    picture = Image.fromarray(np.repeat(channel[:, :, None], 3, axis=2))
    squash = Preprocessing(input_size=2, resize_size=(2, 2), interpolation="bilinear")
    truncated = with_interpolation(squash, "tf-bilinear-uint8")
    assert (truncated.antialias, truncated.quantize) == (False, "truncate")
    expected = np.array([[10, 200], [1, 254]], dtype=np.uint8)
    assert np.array_equal(np.floor(block_means), expected)
    assert torch.equal(
        eight_bit(truncated.image_to_tensor(picture)), torch.from_numpy(np.repeat(expected[:, :, None], 3, 2))
    )
    # The float kernel of the same image keeps the fractions; the larger image: every pixel floor(255 * mean) / 255.
    float_pixels = with_interpolation(truncated, "tf-bilinear").image_to_tensor(picture) * 255.0
    torch.testing.assert_close(float_pixels[0].double(), torch.from_numpy(block_means), atol=1e-4, rtol=0)
    chosen = model_input(IMAGENET_A, "native-resize", bicubic_cnn(), interpolation="tf-bilinear-uint8")
    assert chosen.kernel == "tf-bilinear-uint8"
    pixels = chosen.classifier.preprocessing.image_to_tensor(image())
    means = np.asarray(image(), dtype=np.float64).reshape(SIDE, 2, SIDE, 2, 3).mean(axis=(1, 3))  # quarters
    assert torch.equal(eight_bit(pixels), torch.from_numpy(np.floor(means).astype(np.uint8)))


def test_the_8_bit_kernels_take_a_bilinear_resize_without_antialiasing_of_8_bit_images():
    with pytest.raises(ValueError, match="quantize must be None or one of"):
        Preprocessing(interpolation="bilinear", antialias=False, quantize="round")
    with pytest.raises(ValueError, match="takes antialias=False"):
        Preprocessing(interpolation="bilinear", quantize="opencv")
    quantized = Preprocessing(input_size=2, resize_size=(2, 2), interpolation="bilinear", antialias=False)
    opencv = with_interpolation(quantized, "cv2-bilinear-uint8")
    assert Preprocessing(**opencv.to_dict()) == opencv and opencv.to_dict()["quantize"] == "opencv"
    sixteen_bit = Image.fromarray(np.full((4, 4), 1000, dtype=np.uint16))
    with pytest.raises(ValueError, match="resizes 8-bit images"):
        opencv.image_to_tensor(sixteen_bit)
    # Back to a float kernel, the 8-bit resize goes too.
    assert with_interpolation(opencv, "tf-bilinear").quantize is None
    assert with_interpolation(opencv, "pil-bilinear").quantize is None
