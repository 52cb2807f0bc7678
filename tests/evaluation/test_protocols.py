# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Evaluation protocols (`hf_vitrobust.analysis.protocols`, docs/protocols.md), each re-derived from the official
code it names:

- preprocessing: "as-released" is ImageNet-C/test.py's `CenterCrop(224), ToTensor()` (the pre-cropped images are
  not cropped again); "resize256-crop224" is the `Resize(256), CenterCrop(224)` of natural-adv-examples eval.py;
  "native-resize" a plain resize; the model's own transform stays "model-native";
- the release's JPEG round trip of generated ImageNet-C (make_imagenet_c.py: `save(quality=85, optimize=True)`);
- ImageNet-A/R under the 200-class argmax (Hendrycks' `indices_in_1k`) and the 1000-class argmax (Paul & Chen);
- mCE as AlexNet-normalised over 15 corruptions and as ImageNet-C/test.py's unnormalised mean over 19.
"""

import io
import json
import re
from pathlib import Path

import av
import data_fixtures as fx
import numpy as np
import pandas as pd
import pytest
import torch
import yaml
from PIL import Image
from probe_models import transformers_vit
from torch import nn
from torchvision import transforms as trn

from hf_vitrobust.analysis.kinds import benchmark_metrics
from hf_vitrobust.analysis.kinds import summary_headlines as headline
from hf_vitrobust.analysis.predictions import prediction_rows
from hf_vitrobust.analysis.protocols import (
    CLASS_MASK_PROTOCOLS,
    MCE_PROTOCOLS,
    PREPROCESSING_PROTOCOLS,
    RELEASE_ENCODING_PROTOCOLS,
    benchmark_protocol,
    check_protocol,
    default_protocol,
    parse_protocol_option,
    protocol_record,
)
from hf_vitrobust.analysis.scoring import corruption_metrics
from hf_vitrobust.corruptions import EXTRA_CORRUPTIONS, STANDARD_CORRUPTIONS, corrupt
from hf_vitrobust.corruptions.digital import jpeg_round_trip
from hf_vitrobust.corruptions.export import resize_and_crop, stable_sample_index
from hf_vitrobust.data import (
    BENCHMARKS,
    get_benchmark,
    load_benchmark,
)
from hf_vitrobust.data.generated import GeneratedCorruptionSource, GeneratedPerturbationSource
from hf_vitrobust.data.imagenet_p import decode_video, encode_video_as_released
from hf_vitrobust.data.samples import InMemorySource, Sample
from hf_vitrobust.evaluation.config import EvaluationConfig, EvaluationError
from hf_vitrobust.evaluation.model_input import model_input
from hf_vitrobust.evaluation.runner import Runner, evaluate
from hf_vitrobust.evaluation.suite import load_suite, suite_from_dict
from hf_vitrobust.metrics import mean_corruption_error
from hf_vitrobust.models import Classifier, Preprocessing

REPO = Path(__file__).resolve().parents[2]
IMAGENET_C = get_benchmark("imagenet-c")


def any_size_cnn(input_size: int, seed: int = 0, crop_pct: float | None = 0.875) -> Classifier:
    """A 1000-class convolutional classifier that runs at any size, with a timm-like 0.875 crop."""
    torch.manual_seed(seed)
    module = nn.Sequential(nn.Conv2d(3, 8, 3), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 1000))
    preprocessing = Preprocessing(input_size=input_size, crop_pct=crop_pct, mean=(0.5,) * 3, std=(0.5,) * 3)
    return Classifier(module.eval(), preprocessing, name="any-size-cnn")


def striped(height: int = 224, width: int = 224, stripe: int = 8) -> Image.Image:
    """A black image with a white stripe `stripe` pixels wide at its left edge."""
    array = np.zeros((height, width, 3), dtype=np.uint8)
    array[:, :stripe] = 255
    return Image.fromarray(array)


def photo(height: int, width: int, seed: int = 0) -> Image.Image:
    """A smooth random colour image (a JPEG's worth of structure, not white noise)."""
    rng = np.random.default_rng(seed)
    small = rng.integers(0, 256, size=(height // 8 + 1, width // 8 + 1, 3), dtype=np.uint8)
    return Image.fromarray(small).resize((width, height), Image.Resampling.BICUBIC)


def levels(pixels: torch.Tensor) -> torch.Tensor:
    """Float pixels in [0, 1] back to their 8-bit levels."""
    return (pixels * 255).round().to(torch.uint8)


def jpeg_file(image: Image.Image, quality: int = 85) -> Image.Image:
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG", quality=quality, optimize=True)
    buffer.seek(0)
    return Image.open(buffer).convert("RGB")


# ----------------------------------------------------------------------------------------------------- preprocessing


def test_the_left_edge_stripe_survives_as_released_and_is_cut_by_the_model_transform():
    """The measured bug: a 224 ImageNet-C image through a crop_pct-0.875 model transform loses 14 px per side."""
    classifier = any_size_cnn(224)
    image = striped()
    native = model_input(IMAGENET_C, "model-native", classifier).classifier.preprocessing.image_to_tensor(
        image
    )
    released = model_input(IMAGENET_C, "as-released", classifier).classifier.preprocessing.image_to_tensor(
        image
    )
    assert released[:, :, :8].min() == 1.0 and released[:, :, 8:].max() == 0.0
    assert native[:, :, :8].max() < 0.5  # the stripe is gone: resized to 256, then 16 px cut from each side


@pytest.mark.parametrize("size", [(224, 224), (240, 262)])
def test_as_released_is_the_reference_center_crop(size):
    """ImageNet-C/test.py: `trn.Compose([trn.CenterCrop(224), trn.ToTensor(), ...])`, no resize."""
    image = jpeg_file(photo(*size))
    reference = trn.Compose([trn.CenterCrop(224), trn.ToTensor()])(image)
    chosen = model_input(IMAGENET_C, "as-released", any_size_cnn(224))
    ours = chosen.classifier.preprocessing.image_to_tensor(image)
    assert chosen.applied == "as-released" and chosen.note is None
    assert torch.equal(levels(ours), levels(reference))  # the same 8-bit pixels (ToTensor divides, we scale)


def test_resize256_crop224_is_the_hendrycks_transform():
    """natural-adv-examples eval.py / imagenet-r eval.py: `Resize(256), CenterCrop(224), ToTensor()`."""
    image = photo(300, 410, seed=1)
    reference = trn.Compose([trn.Resize(256), trn.CenterCrop(224), trn.ToTensor()])(image)
    chosen = model_input(get_benchmark("imagenet-a"), "resize256-crop224", any_size_cnn(288))
    assert chosen.classifier.input_size == (224, 224)
    assert torch.equal(levels(chosen.classifier.preprocessing.image_to_tensor(image)), levels(reference))


def test_squash_224_is_the_bit_notebooks_resize_at_224_whatever_the_models_size():
    """Paul & Chen's BiT-M notebooks: `tf.image.resize(image, (224, 224))`, no crop, fed at 224 to the 448-pixel
    BiT-M models; a model fixed to another size is refused before any work."""
    image = photo(300, 200, seed=4)
    classifier = any_size_cnn(448).eval()
    chosen = model_input(get_benchmark("imagenet-a"), "squash-224", classifier)
    assert (chosen.applied, chosen.classifier.input_size) == ("squash-224", (224, 224))
    assert chosen.classifier.module is classifier.module
    reference = trn.ToTensor()(image.resize((224, 224), Image.Resampling.BICUBIC))
    ours = chosen.classifier.preprocessing.image_to_tensor(image)
    torch.testing.assert_close(ours, reference, atol=1 / 255, rtol=0)
    # The whole image is kept: a stripe at the left edge survives (a crop would cut it).
    striped = photo(300, 200, seed=5)
    striped.paste((255, 255, 255), (0, 0, 6, 300))
    assert levels(chosen.classifier.preprocessing.image_to_tensor(striped))[:, :, 0].min() >= 250
    # The view is in the model's mode: a probe that refuses training mode (PGD, DeepFool) runs on it.
    assert not chosen.classifier.training and not chosen.classifier.module.training
    with pytest.raises(ValueError, match="does not run at 224x224 pixels, which squash-224 feeds it"):
        model_input(get_benchmark("imagenet-a"), "squash-224", transformers_vit())


def test_native_resize_is_a_plain_resize_without_crop():
    image = photo(300, 200, seed=2)
    classifier = any_size_cnn(64)
    reference = trn.ToTensor()(image.resize((64, 64), Image.Resampling.BICUBIC))
    ours = model_input(IMAGENET_C, "native-resize", classifier).classifier.preprocessing.image_to_tensor(
        image
    )
    assert ours.shape == (3, 64, 64)
    torch.testing.assert_close(
        ours, reference, atol=1 / 255, rtol=0
    )  # PIL and torchvision's bicubic, rounding


def test_as_released_feeds_a_model_of_another_size_at_the_release_size_with_the_same_weights():
    """Paul & Chen feed the 224 ImageNet-C images to 448-pixel BiT-M models: the view keeps the weights."""
    classifier = any_size_cnn(256)
    chosen = model_input(IMAGENET_C, "as-released", classifier)
    assert chosen.applied == "as-released" and chosen.classifier.input_size == (224, 224)
    assert chosen.classifier.module is classifier.module
    assert "224x224" in chosen.note and "256x256" in chosen.note
    pixels = torch.rand(2, 3, 224, 224)
    with torch.no_grad():
        torch.testing.assert_close(chosen.classifier(pixels), classifier.module((pixels - 0.5) / 0.5))
    assert chosen.to_dict()["input_size"] == [224, 224]


def test_as_released_falls_back_to_native_resize_for_a_model_fixed_to_its_size():
    vit = transformers_vit()  # position embeddings for 32x32 only
    assert not vit.accepts_input_size((224, 224))
    chosen = model_input(IMAGENET_C, "as-released", vit)
    assert (chosen.requested, chosen.applied) == ("as-released", "native-resize")
    assert chosen.classifier.input_size == (32, 32) and "native-resize" in chosen.note
    assert tuple(chosen.preprocessing["resize_size"]) == (32, 32) and not chosen.preprocessing["crop_only"]


def test_resize256_crop224_refuses_a_model_that_cannot_run_at_224():
    with pytest.raises(ValueError, match="does not run at 224x224"):
        model_input(get_benchmark("imagenet-r"), "resize256-crop224", transformers_vit())


def test_a_protocol_changes_the_geometry_never_the_normalisation():
    classifier = any_size_cnn(224)
    other = Preprocessing(input_size=224, mean=(0.4,) * 3, std=(0.5,) * 3)
    with pytest.raises(ValueError, match="normalisation"):
        classifier.with_preprocessing(other)


def test_every_benchmark_has_a_valid_default_protocol():
    for benchmark in BENCHMARKS.values():
        protocol = default_protocol(benchmark)
        assert check_protocol(benchmark, protocol, "test") == protocol
        expected = "as-released" if benchmark.released_size else "model-native"
        assert protocol["preprocessing"] == expected
    released = {name for name, b in BENCHMARKS.items() if b.released_size}
    assert released == {
        "imagenet-c",
        "imagenet-c-bar",
        "imagenet-3dcc",
        "imagenet-p",
        "imagenet-9",
        "cifar10",
        "cifar100",
        "cifar100-train",
        "cifar10-c",
        "cifar100-c",
    }
    # The training sets default as their evaluation sets do: ImageNet's model-native, CIFAR's as-released at 32.
    own = {"interpolation": "model-own"}  # every model's own resize kernel, as before the part existed
    assert default_protocol(BENCHMARKS["imagenet-train"]) == {"preprocessing": "model-native", **own}
    assert default_protocol(BENCHMARKS["cifar100-train"]) == {"preprocessing": "as-released", **own}
    assert (
        protocol_record(BENCHMARKS["cifar100-train"], {"preprocessing": "as-released"}, {})["released_size"]
        == 32
    )


@pytest.mark.parametrize(
    ("benchmark", "protocol", "message"),
    [
        ("imagenet-a", {"preprocessing": "as-released"}, "not released pre-cropped"),
        ("imagenet-a", {"class_mas": "paul-chen-1000"}, "Did you mean 'class_mask'"),
        ("imagenet-val", {"class_mask": "paul-chen-1000"}, "has no protocol part"),
        ("imagenet-c", {"mce": "unnormalised-19"}, "Did you mean 'unnormalized-19'"),
        ("imagenet-c", {"preprocessing": "squash"}, "Known: model-native"),
        ("imagenet-c", {"mce": ["alexnet-15"]}, "unknown mce protocol"),
        ("imagenet-c", {"release_encoding": "h264"}, "has no 'h264' release encoding"),
        ("imagenet-p", {"release_encoding": "jpeg-85"}, "has no 'jpeg-85' release encoding"),
    ],
)
def test_bad_protocols_fail_naming_the_valid_ones(benchmark, protocol, message):
    with pytest.raises(ValueError, match=message):
        check_protocol(get_benchmark(benchmark), protocol, "here")
    entry = {"name": "s", "benchmarks": {benchmark: {"protocol": protocol}}}
    with pytest.raises(ValueError, match=message):
        suite_from_dict(entry)


def test_protocol_layers_defaults_suite_then_command_line():
    suite_choice = {"class_mask": "paul-chen-1000"}
    command_line = {"preprocessing": "resize256-crop224"}
    protocol = benchmark_protocol(get_benchmark("imagenet-a"), suite_choice, command_line)
    assert protocol == {
        "preprocessing": "resize256-crop224", "interpolation": "model-own", "class_mask": "paul-chen-1000",
    }  # fmt: skip
    assert parse_protocol_option("imagenet-c.mce=unnormalized-19") == ("imagenet-c", "mce", "unnormalized-19")
    with pytest.raises(ValueError, match=r"BENCHMARK\.PART=NAME"):
        parse_protocol_option("imagenet-c=native-resize")


def test_the_paper_suite_takes_paul_and_chens_choices_and_the_others_the_canonical_ones():
    paper = load_suite("paper")
    for name in ("imagenet-a", "imagenet-r"):
        assert paper.benchmark(name).protocol == {"class_mask": "paul-chen-1000"}
    assert paper.benchmark("imagenet-c").protocol == {"mce": "unnormalized-19"}
    for suite in ("mechanisms", "quick", "demo"):
        chosen = {spec.name: spec.protocol for spec in load_suite(suite).benchmarks if spec.protocol}
        # Park & Kim's ImageNet-C robustness resized the released images again (ops/datasets.py get_imagenetc).
        park_kim = {"imagenet-c": {"preprocessing": "resize256-crop224", "interpolation": "pil-bilinear"}}
        assert chosen == (park_kim if suite == "mechanisms" else {}), suite
    again = suite_from_dict(json.loads(json.dumps(paper.to_dict())))
    assert again == paper


# ----------------------------------------------------------------------------------------------- release encoding


@pytest.mark.parametrize("quality", [85, 25, 7])
@pytest.mark.parametrize("optimize", [True, False])
@pytest.mark.parametrize("size", [(224, 224), (37, 53)])
def test_jpeg_round_trip_is_pillows_save_and_reload(quality, optimize, size):
    images = [photo(*size, seed=s) for s in range(3)]
    noise = np.random.default_rng(9).integers(0, 256, size=(*size, 3), dtype=np.uint8)
    images.append(Image.fromarray(noise))
    batch = torch.stack([torch.from_numpy(np.array(image)).permute(2, 0, 1) for image in images])
    reference = []
    for image in images:
        buffer = io.BytesIO()
        image.save(buffer, format="JPEG", quality=quality, optimize=optimize)
        reference.append(torch.from_numpy(np.array(Image.open(buffer).convert("RGB"))).permute(2, 0, 1))
    assert torch.equal(jpeg_round_trip(batch, quality), torch.stack(reference))


def test_jpeg_round_trip_refuses_what_is_not_uint8_rgb():
    with pytest.raises(ValueError, match="uint8 RGB"):
        jpeg_round_trip(torch.zeros(1, 3, 8, 8), 85)
    with pytest.raises(ValueError, match="quality"):
        jpeg_round_trip(torch.zeros(1, 3, 8, 8, dtype=torch.uint8), 0)


def _clean_source(n: int = 2) -> InMemorySource:
    samples = []
    for i in range(n):
        image = torch.from_numpy(np.array(photo(256, 300, seed=10 + i))).permute(2, 0, 1).contiguous()
        samples.append(Sample(image, i, f"photo-{i}", {}))
    return InMemorySource(samples)


def test_generated_imagenet_c_is_saved_as_the_release_jpeg_unless_turned_off():
    """make_imagenet_c.py: `Image.fromarray(np.uint8(img)).save(save_path, quality=85, optimize=True)`."""
    released = GeneratedCorruptionSource(
        _clean_source(), corruptions=["contrast", "fog"], severities=[3], seed=4
    )
    in_memory = GeneratedCorruptionSource(
        _clean_source(), corruptions=["contrast", "fog"], severities=[3], seed=4, jpeg_quality=None
    )
    encoded = [sample.image for sample in released.samples()]
    computed = [sample.image for sample in in_memory.samples()]
    assert len(encoded) == len(computed) == 4
    for ours, raw in zip(encoded, computed, strict=True):
        reference = jpeg_file(Image.fromarray(raw.permute(1, 2, 0).numpy()))
        assert torch.equal(ours, torch.from_numpy(np.array(reference)).permute(2, 0, 1))
        assert not torch.equal(ours, raw)
    # The in-memory images are the corruption engine's output itself.
    crop = computed[0]
    assert crop.shape == (3, 224, 224)
    assert released.describe()["release_encoding"] == "jpeg-85"
    assert in_memory.describe()["release_encoding"] == "none"


def test_release_encoding_switch_of_generated_imagenet_c():
    on = load_benchmark("imagenet-c", "generated:builtin", corruptions=["fog"], severities=[1])
    off = load_benchmark(
        "imagenet-c", "generated:builtin", corruptions=["fog"], severities=[1], release_encoding="none"
    )
    assert (on.jpeg_quality, off.jpeg_quality) == (85, None)
    clean = _clean_source(1)
    (image,) = [
        s.image for s in GeneratedCorruptionSource(clean, ["fog"], [1], seed=0, jpeg_quality=None).samples()
    ]
    batch = torch.from_numpy(np.array(photo(256, 300, seed=10))).permute(2, 0, 1)
    expected = corrupt(
        resize_and_crop(batch, 256, 224)[None], "fog", 1, seed=0, sample_ids=[stable_sample_index("photo-0")]
    )
    assert torch.equal(image, expected[0])
    assert RELEASE_ENCODING_PROTOCOLS.keys() == {"jpeg-85", "h264", "none"}


def test_generated_cifar_c_is_kept_as_the_release_arrays_without_jpeg(tmp_path):
    """make_cifar_c.py: `np.save(..., np.array(cifar_c).astype(np.uint8))`: no JPEG step."""
    pictures = [fx.image_bytes(value, size=32) for value in (40, 200)]
    folder = fx.uoft_cifar(tmp_path, "cifar10", [3, 5], images=pictures)
    source = load_benchmark("cifar10-c", f"generated:{folder}", corruptions=["contrast"], severities=[2])
    assert (source.jpeg_quality, source.resize, source.crop) == (None, None, None)
    clean = list(load_benchmark("cifar10", str(folder)).samples())
    corrupted = list(source.samples())
    for sample, image in zip(clean, corrupted, strict=True):
        ids = [stable_sample_index(sample.sample_id)]
        assert torch.equal(image.image, corrupt(sample.image[None], "contrast", 2, seed=0, sample_ids=ids)[0])
    with pytest.raises(ValueError, match="release_encoding 'jpeg-85' is not one of none"):
        load_benchmark("cifar10-c", f"generated:{folder}", release_encoding="jpeg-85")
    assert "release_encoding" not in default_protocol(get_benchmark("cifar10-c"))


def test_generated_imagenet_p_through_the_release_h264_is_deterministic_and_decodes_as_released():
    """make_imagenet_p.py: `ffmpeg ... -vcodec libx264 -crf 20 -preset veryslow` (`-tune grain` for noise)."""
    kept = GeneratedPerturbationSource(_clean_source(1), perturbations=["rotate", "gaussian_noise"], seed=2)
    encoded = GeneratedPerturbationSource(
        _clean_source(1), perturbations=["rotate", "gaussian_noise"], seed=2, video_encoding="h264"
    )
    raw = {s.sample_id.split("/")[0]: s.image for s in kept.samples()}
    compressed = {s.sample_id.split("/")[0]: s.image for s in encoded.samples()}
    for name, frames in raw.items():
        video = encode_video_as_released(frames, name)
        assert video == encode_video_as_released(frames, name)  # the same bitstream every time
        assert torch.equal(compressed[name], decode_video(io.BytesIO(video)))
        assert compressed[name].shape == frames.shape and not torch.equal(compressed[name], frames)
        assert (
            compressed[name].float() - frames.float()
        ).abs().mean() < 8  # a compression, not another video
        with av.open(io.BytesIO(video)) as container:
            stream = container.streams.video[0]
            assert (stream.codec_context.name, stream.codec_context.pix_fmt) == ("h264", "yuv444p")
        # x264 writes its settings into the stream: veryslow's 16 references; crf 20, or grain's deadzones at 23.
        assert b"ref=16" in video and b"subme=10" in video
        settings = (
            (b"crf=23.0", b"deadzone=6,6") if name == "gaussian_noise" else (b"crf=20.0", b"deadzone=21,11")
        )
        assert all(setting in video for setting in settings), name
    assert encoded.describe()["release_encoding"] == "h264" and kept.describe()["release_encoding"] == "none"
    assert default_protocol(get_benchmark("imagenet-p"))["release_encoding"] == "none"


# ------------------------------------------------------------------------------------------------------ class masks


def _masked_frame(
    benchmark_name: str, n: int = 60, seed: int = 0
) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    benchmark = get_benchmark(benchmark_name)
    classes = np.asarray(benchmark.class_subset.class_indices)
    generator = torch.Generator().manual_seed(seed)
    logits = torch.randn(n, 1000, generator=generator) * 3
    # Labels: half the masked argmax (right under hendrycks-200), half the full argmax where it is in the set.
    masked = classes[logits[:, classes].argmax(-1).numpy()]
    full = logits.argmax(-1).numpy()
    labels = np.where(np.arange(n) % 2 == 0, masked, np.where(np.isin(full, classes), full, classes[3]))
    samples = [Sample(torch.empty(0), int(label), f"s{i}", {}) for i, label in enumerate(labels)]
    columns = prediction_rows(benchmark, list(range(n)), samples, logits, keep_logits=True)
    return pd.DataFrame(columns), logits.numpy().astype(np.float64), labels


@pytest.mark.parametrize("name", ["imagenet-a", "imagenet-r"])
def test_imagenet_a_and_r_under_both_class_masks(name):
    frame, logits, labels = _masked_frame(name)
    indices_in_1k = list(get_benchmark(name).class_subset.class_indices)
    # natural-adv-examples eval.py: output = net(data)[:, indices_in_1k]; pred = output.max(1)[1] (200-class numbers)
    sub = logits[:, indices_in_1k]
    target_200 = np.array([indices_in_1k.index(label) for label in labels])
    hendrycks_top1 = 100 * np.mean(sub.argmax(1) == target_200)
    hendrycks_top5 = 100 * np.mean((np.argsort(-sub, 1)[:, :5] == target_200[:, None]).any(1))
    # robustness-vit ImageNet-A/R notebooks: CategoricalAccuracy / TopKCategoricalAccuracy over the 1000 logits.
    paul_chen_top1 = 100 * np.mean(logits.argmax(1) == labels)
    paul_chen_top5 = 100 * np.mean((np.argsort(-logits, 1)[:, :5] == labels[:, None]).any(1))
    assert hendrycks_top1 != paul_chen_top1
    for mask in CLASS_MASK_PROTOCOLS:
        metrics = benchmark_metrics(
            get_benchmark(name), frame, protocol={"preprocessing": "model-native", "class_mask": mask}
        )
        assert metrics["protocols"]["hendrycks-200"]["top1"] == pytest.approx(hendrycks_top1)
        assert metrics["protocols"]["hendrycks-200"]["top5"] == pytest.approx(hendrycks_top5)
        assert metrics["protocols"]["paul-chen-1000"]["top1"] == pytest.approx(paul_chen_top1)
        assert metrics["protocols"]["paul-chen-1000"]["top5"] == pytest.approx(paul_chen_top5)
        assert metrics["class_mask"] == mask
        assert metrics["top1"] == metrics["protocols"][mask]["top1"]
        assert headline(get_benchmark(name), metrics, {"class_mask": mask}) == {
            f"{name} top-1 % ({mask})": metrics["top1"]
        }


# ------------------------------------------------------------------------------------------------------------- mCE


def _cells(seed: int, corruptions) -> dict:
    rng = np.random.default_rng(seed)
    return {(c, s): float(rng.uniform(0.2, 0.9)) for c in corruptions for s in range(1, 6)}


def _frame_from_cells(errors: dict, per_cell: int = 20) -> pd.DataFrame:
    rows = []
    for (corruption, severity), error in errors.items():
        wrong = round(error * per_cell)
        for i in range(per_cell):
            rows.append(
                {
                    "label": 1,
                    "prediction": 2 if i < wrong else 1,
                    "corruption": corruption,
                    "severity": severity,
                }
            )
    return pd.DataFrame(rows)


def test_unnormalized_19_is_the_mean_printed_by_imagenet_c_test_py():
    every = STANDARD_CORRUPTIONS + EXTRA_CORRUPTIONS
    frame = _frame_from_cells(_cells(0, every))
    # ImageNet-C/test.py: error_rates.append(np.mean(errs over severities 1..5)); print(100 * np.mean(error_rates)).
    errors = (
        frame.assign(wrong=frame.prediction != frame.label).groupby(["corruption", "severity"]).wrong.mean()
    )
    distortions = [
        "gaussian_noise", "shot_noise", "impulse_noise", "defocus_blur", "glass_blur", "motion_blur", "zoom_blur",
        "snow", "frost", "fog", "brightness", "contrast", "elastic_transform", "pixelate", "jpeg_compression",
        "speckle_noise", "gaussian_blur", "spatter", "saturate",
    ]  # fmt: skip
    error_rates = [np.mean([errors[d, s] for s in range(1, 6)]) for d in distortions]
    printed = 100 * np.mean(error_rates)
    metrics = corruption_metrics(IMAGENET_C, frame, None, {"mce": "unnormalized-19"})
    assert metrics["protocols"]["unnormalized-19"]["mce"] == pytest.approx(printed)
    assert metrics["protocols"]["unnormalized-19"]["absent_corruptions"] == []
    canonical = mean_corruption_error(frame.prediction, frame.label, frame.corruption, frame.severity)
    assert metrics["protocols"]["alexnet-15"]["mce"] == pytest.approx(canonical.mce)
    assert canonical.unnormalized_mce_all == pytest.approx(printed)
    assert metrics["mce_protocol"] == "unnormalized-19"
    summary = headline(IMAGENET_C, metrics, {"mce": "unnormalized-19"})
    assert list(summary)[1:] == ["imagenet-c mCE % (unnormalized-19)", "imagenet-c mCE % (alexnet-15)"]


def test_unnormalized_19_over_the_15_a_source_publishes_names_the_absent_ones():
    frame = _frame_from_cells(_cells(1, STANDARD_CORRUPTIONS))
    metrics = corruption_metrics(IMAGENET_C, frame, None)
    assert metrics["protocols"]["unnormalized-19"]["absent_corruptions"] == list(EXTRA_CORRUPTIONS)
    # Over the 15 standard corruptions with all five severities each, it is the standard cells' mean.
    assert metrics["protocols"]["unnormalized-19"]["mce"] == pytest.approx(metrics["unnormalized_mce"])
    assert list(MCE_PROTOCOLS) == ["alexnet-15", "unnormalized-19"]


# ------------------------------------------------------------------------------------------- runs record protocols


def _generated_suite(tmp_path: Path, protocol: dict | None = None) -> Path:
    entry = {"source": "generated:builtin", "corruptions": ["contrast"], "severities": [5], "limit": 2}
    if protocol:
        entry["protocol"] = protocol
    suite = {"name": "protocols", "batch_size": 8, "chunk_size": 8, "benchmarks": {"imagenet-c": entry}}
    path = tmp_path / f"suite-{len(list(tmp_path.iterdir()))}.yaml"
    path.write_text(yaml.safe_dump(suite))
    return path


@pytest.fixture(scope="module")
def builtin_model():
    from hf_vitrobust.models import load_classifier

    return load_classifier("builtin:efficientnet_lite0")


@pytest.mark.parametrize(
    ("preprocessing", "encoding"), [("as-released", "jpeg-85"), ("model-native", "none")]
)
def test_a_run_feeds_and_records_the_protocol_both_ways(tmp_path, builtin_model, preprocessing, encoding):
    suite = _generated_suite(tmp_path)
    protocols = {"imagenet-c": {"preprocessing": preprocessing, "release_encoding": encoding}}
    output = tmp_path / "run"
    results = evaluate(
        EvaluationConfig(suite=str(suite), output=output, protocols=protocols, progress=False, report=False)
    )
    key = results["models"][0]["key"]
    record = results["benchmarks"]["imagenet-c"]["protocol"]
    assert (record["preprocessing"], record["release_encoding"], record["mce"]) == (
        preprocessing,
        encoding,
        "alexnet-15",
    )
    assert record["models"][key]["applied"] == preprocessing and record["models"][key]["input_size"] == [
        224,
        224,
    ]
    assert results["schema_version"] == 2
    assert json.loads((output / ".work" / "run.json").read_text())["protocols"]["imagenet-c"] == {
        "preprocessing": preprocessing, "interpolation": "model-own", "mce": "alexnet-15",
        "release_encoding": encoding, "image_list": "full",
    }  # fmt: skip
    # The logits are the model's on the pixels the protocol makes of the generated images.
    source = load_benchmark(
        "imagenet-c", "generated:builtin", corruptions=["contrast"], severities=[5],
        release_encoding=encoding,
    )  # fmt: skip
    images = [sample.image for _, sample in zip(range(2), source.samples(), strict=False)]
    chosen = model_input(IMAGENET_C, preprocessing, builtin_model)
    pixels = torch.stack(
        [
            chosen.classifier.preprocessing.image_to_tensor(Image.fromarray(i.permute(1, 2, 0).numpy()))
            for i in images
        ]
    )
    with torch.no_grad():
        expected = chosen.classifier(pixels).argmax(-1).tolist()
    frame = pd.read_parquet(output / "predictions" / key / "imagenet-c.parquet")
    assert frame["prediction"].tolist() == expected


def test_resume_refuses_a_schema_1_folder(tmp_path):
    suite = _generated_suite(tmp_path)
    output = tmp_path / "old"
    (output / ".work").mkdir(parents=True)
    old = {
        "models": ["builtin:efficientnet_lite0"],
        "suite": "protocols",
        "data": {},
        "limit": None,
        "seed": 0,
    }
    (output / ".work" / "run.json").write_text(json.dumps(old))
    runner = Runner(EvaluationConfig(suite=str(suite), output=output, resume=True, progress=False))
    with pytest.raises(
        EvaluationError, match=r"schema version 1 \(it fed the pre-cropped.*Start a new --output"
    ):
        runner._prepare_folder()


def test_unknown_protocol_benchmarks_and_names_fail_before_any_work(tmp_path):
    suite = _generated_suite(tmp_path)
    with pytest.raises(EvaluationError, match="has no benchmark 'imagenet-a'"):
        Runner(EvaluationConfig(suite=str(suite), protocols={"imagenet-a": {"class_mask": "hendrycks-200"}}))
    with pytest.raises(EvaluationError, match="unknown preprocessing protocol"):
        Runner(EvaluationConfig(suite=str(suite), protocols={"imagenet-c": {"preprocessing": "crop"}}))


# ---------------------------------------------------------------------------------------------- docs/protocols.md


def test_protocols_doc_names_every_protocol_and_existing_tests():
    text = (REPO / "docs" / "protocols.md").read_text(encoding="utf-8")
    for names in (PREPROCESSING_PROTOCOLS, CLASS_MASK_PROTOCOLS, MCE_PROTOCOLS, RELEASE_ENCODING_PROTOCOLS):
        for name in names:
            assert f"`{name}`" in text, name
    tests = set()
    for path in (REPO / "tests").rglob("test_*.py"):
        tests |= {f"{path.name}::{m}" for m in re.findall(r"^def (test_\w+)", path.read_text(), re.M)}
    cited = set(re.findall(r"(test_\w+\.py::test_\w+)", text))
    assert cited, "docs/protocols.md cites no test"
    assert cited <= tests, sorted(cited - tests)
    # Every headline number of the shipped suites has a row (its summary name, without the model-specific part).
    for metric in ("top-1", "mCE", "mean top-1", "mFR", "AUPR", "BG-gap", "top-5", "ECE"):
        assert metric in text, metric


def test_the_report_shows_the_protocols_and_says_when_a_run_recorded_none(tmp_path):
    from hf_vitrobust.report.document import render_markdown

    suite = _generated_suite(tmp_path)
    results = evaluate(
        EvaluationConfig(suite=str(suite), output=tmp_path / "run", progress=False, report=False)
    )
    markdown = render_markdown([results], {})
    protocols = markdown.split("## Protocols", 1)[1].split("\n## ", 1)[0]
    assert "| imagenet-c | builtin_efficientnet_lite0 | as-released | 224×224 |" in protocols
    assert "mce: alexnet-15; release_encoding: jpeg-85" in protocols
    assert "mCE (%, lower is better; alexnet-15)" in markdown and "mCE (%, unnormalized-19)" in markdown
    old = {**results, "schema_version": 1}
    old["benchmarks"] = {
        name: {k: v for k, v in b.items() if k != "protocol"} for name, b in results["benchmarks"].items()
    }
    assert "results schema 1, which recorded no protocol" in render_markdown([old], {})


def test_model_cards_carry_both_class_masks_and_both_mces():
    from huggingface_hub import ModelCard

    from hf_vitrobust.hub import render_model_card

    frame, _, _ = _masked_frame("imagenet-a")
    masked = benchmark_metrics(
        get_benchmark("imagenet-a"),
        frame,
        protocol={"preprocessing": "model-native", "class_mask": "paul-chen-1000"},
    )
    corrupted = corruption_metrics(
        IMAGENET_C, _frame_from_cells(_cells(2, STANDARD_CORRUPTIONS + EXTRA_CORRUPTIONS)), None
    )
    results = {
        "schema": "hf_vitrobust.results",
        "schema_version": 2,
        "suite": {"name": "paper"},
        "models": [{"key": "m", "spec": "org/m", "name": "org/m"}],
        "benchmarks": {
            "imagenet-a": {
                "task": "classification",
                "source": {"kind": "hub", "location": "barkermrl/imagenet-a"},
            },
            "imagenet-c": {
                "task": "classification",
                "source": {"kind": "hub", "location": "WNJXYK/TTA-ImageNet-C"},
            },
        },
        "metrics": {"m": {"imagenet-a": masked, "imagenet-c": corrupted}},
        "_source": "/runs/r/results.json",
    }
    card = ModelCard(render_model_card(results=[results], repo_id="me/m"))
    values = {r.metric_name: r.metric_value for r in card.data.eval_results}
    assert values["Top-1 over the set's 200 classes (%, hendrycks-200)"] == pytest.approx(
        masked["protocols"]["hendrycks-200"]["top1"]
    )
    assert values["Top-1 over all 1000 classes (%, paul-chen-1000)"] == pytest.approx(
        masked["protocols"]["paul-chen-1000"]["top1"]
    )
    assert values["Top-1 accuracy (%)"] == pytest.approx(masked["protocols"]["paul-chen-1000"]["top1"])
    unnormalized = [name for name in values if "unnormalized-19" in name]
    assert len(unnormalized) == 1
    assert values[unnormalized[0]] == pytest.approx(corrupted["protocols"]["unnormalized-19"]["mce"])
    assert values["mCE (%, AlexNet-normalised, lower is better)"] == pytest.approx(corrupted["mce"])
