# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Evaluation protocols: the choices behind each benchmark number, named, chosen per benchmark, and recorded.

Where the canonical protocol and a paper's own code differ, both are offered under a name (docs/protocols.md has
the sources). A benchmark's protocol has up to four parts:

- preprocessing (every benchmark): how an image becomes the model's input.
  - "model-native": the model's own evaluation transform (resize, centre crop to its input size: timm's
    validate.py, transformers' image processors). For a 224-pixel model with crop_pct 0.875 it is the
    `Resize(256), CenterCrop(224)` of the Hendrycks scripts (natural-adv-examples eval.py, imagenet-r eval.py).
  - "as-released": no resize. Images released already cropped (ImageNet-C, -P and -9 at 224, CIFAR at 32) are
    centre-cropped to that size, a no-op on the released files, as ImageNet-C/test.py's `CenterCrop(224)`, and
    fed at that size to any model that runs at it (Paul & Chen feed the 224-pixel images to their 448-pixel
    BiT-M models). A model that runs only at its own size (a ViT with fixed position embeddings) gets
    "native-resize" instead, recorded as such.
  - "native-resize": a plain resize to the model's input size (aspect ratio not kept), no crop: the squash resize
    of Paul & Chen's TF notebooks (ImageNet-A/R/O at 384 pixels for vit_jax, 224 for BiT-M).
  - "resize256-crop224": the Hendrycks scripts' transform whatever the model (shorter side 256 bilinear, centre
    crop 224), for models that run at 224.
  - "squash-224": a plain resize to 224 x 224 (aspect ratio not kept), no crop, fed at 224 whatever the model's own
    size: Paul & Chen's BiT-M notebooks (TF-Hub models, `tf.image.resize(image, (224, 224))`), for models that run
    at 224. For a 224-pixel model it is "native-resize".
  - "park-kim-notebook": Park & Kim's feature-map input (how-do-vits-work `fourier_analysis.ipynb`, cell 9, behind
    their Fig. 2a and 8): PIL's `Image.resize((224, 224))` (bicubic, Pillow's default since 7.0; aspect ratio not
    kept, no crop) and ImageNet's mean/std whatever the model's own normalisation (timm's `vit_tiny_patch16_224`
    has 0.5/0.5), for models that run at 224.
- interpolation (every benchmark; it bears only where the preprocessing resizes): the resize kernel.
  - "model-own": the kernel the preprocessing names (the model's own from its timm data config or image
    processor; bilinear for resize256-crop224), by PIL with antialiasing, as timm and transformers resize.
  - "pil-bilinear": PIL's antialiased bilinear whatever the model: torchvision's `Resize` on PIL images, as the
    Hendrycks scripts and Paul & Chen's PyTorch notebooks (CutOut_ViT, PGD_ViT) resized.
  - "tf-bilinear": TensorFlow 2's `tf.image.resize` bilinear (half-pixel centres, no antialiasing, the float
    result not rounded): Paul & Chen's TF notebooks and vit_jax's input pipeline (`models.preprocessing.
    tf_bilinear_resize`).
  A suite's pairing may set it per model (`analysis.pairings`). What a model saw is recorded as its kernel
  (`resize_kernel`): "pil-<mode>", "tf-bilinear", or "none" where nothing was resized.
- class_mask (ImageNet-A, ImageNet-R): which argmax makes the headline top-1; both are always reported.
  - "hendrycks-200": the argmax over the set's 200 classes (natural-adv-examples eval.py `indices_in_1k`,
    imagenet-r eval.py `imagenet_r_mask`; timm's `--valid-labels`).
  - "paul-chen-1000": the argmax over all 1000 classes, a class outside the 200 counting as wrong (the
    robustness-vit ImageNet-A/R notebooks: no mask).
- mce (ImageNet-C): which mean makes the headline; both are always reported.
  - "alexnet-15": the mean over the 15 standard corruptions of sum_s E / sum_s E_AlexNet (Hendrycks & Dietterich
    2019; AugMix's imagenet.py).
  - "unnormalized-19": the mean over every corruption (19 in a full run) of its mean error over the severities,
    what ImageNet-C/test.py prints as "mCE (unnormalized by AlexNet errors)", reused by Paul & Chen.
- release_encoding (generated ImageNet-C and ImageNet-P, `hf_vitrobust.data.RELEASE_ENCODINGS`): ImageNet-C
  "jpeg-85", the released files' JPEG round trip (make_imagenet_c.py, the default), or "none" (the "in-memory"
  ImageNet-C); ImageNet-P "none" (the default) or "h264", the release's libx264 compression (make_imagenet_p.py),
  approximated and slow (about 3 s per sequence).
- labels (the ImageNet validation set, `Benchmark.reassessed_labels`): "imagenet", the original label, or "real",
  the ReaL label sets of Beyer et al. 2020 (`hf_vitrobust.data.real_labels`): right when the prediction is any of
  the image's labels, images without one left out (timm's `--real-labels`). Matched by validation file name, so a
  source that numbers its rows is refused before any work.
- image_list (ImageNet-C, ImageNet-3DCC: `Benchmark.robustbench_alexnet`): which of each cell's images are
  scored. "full", every image of the folder, or
  "robustbench-5000", RobustBench's 5,000 validation images (`data.image_list("robustbench-imagenet-c-5000")`)
  in every cell, selected by file name in a local released folder (a source that numbers its rows is refused
  before any work); with all its cells present (75; 3DCC 60) its two leaderboard columns are added
  (`metrics.robustbench`).

Recorded, not chosen: `image_bytes`, whether the images read were the release's own files ("release"), a copy that
re-encoded them ("re-encoded") or a Hub copy whose pages do not say ("unknown"); per registered Hub source in
`hf_vitrobust.data.HUB_IMAGE_BYTES`, read by `source_image_bytes`.

`benchmark_protocol` resolves a benchmark's protocol from its defaults, the suite's `protocol:` entry and the
command line's `--protocol`; `evaluation.model_input` applies the preprocessing part to one model.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..data import RELEASE_ENCODINGS, Benchmark
from ..data.hub_datasets import HUB_IMAGE_BYTES
from ..registry import did_you_mean

#: Park & Kim's feature-map preprocessing (`fourier_analysis.ipynb`), the input of their Fig. 2a and 8.
PARK_KIM_NOTEBOOK = "park-kim-notebook"
PREPROCESSING_PROTOCOLS: dict[str, str] = {
    "model-native": "the model's own evaluation transform (resize and centre crop to its input size)",
    "as-released": "no resize: the centre crop to the release's size, fed at that size",
    "native-resize": "a plain resize to the model's input size (aspect ratio not kept), no crop",
    "resize256-crop224": "shorter side to 256 (bilinear), centre crop 224, fed at 224 (the Hendrycks scripts)",
    "squash-224": "a plain resize to 224x224 (aspect ratio not kept), fed at 224 (Paul & Chen's BiT-M notebooks)",
    PARK_KIM_NOTEBOOK: "PIL bicubic resize to 224x224 (no crop) and ImageNet mean/std whatever the model's own "
    "(Park & Kim's fourier_analysis.ipynb)",
}
INTERPOLATION_PROTOCOLS: dict[str, str] = {
    "model-own": "the preprocessing's own kernel (the model's, from its config), by PIL with antialiasing",
    "pil-bilinear": "PIL's antialiased bilinear whatever the model (torchvision Resize on PIL images)",
    "tf-bilinear": "TensorFlow 2's tf.image.resize bilinear: half-pixel centres, no antialiasing, float result",
    "cv2-bilinear-uint8": "OpenCV's INTER_LINEAR resize of the uint8 image, rounded to 8 bits (albumentations' Resize)",
    "tf-bilinear-uint8": "tf-bilinear of the uint8 image cast back to uint8, truncated (tf.cast(..., tf.uint8))",
}
#: `Preprocessing.quantize` -> the interpolation protocol of that 8-bit resize.
_QUANTIZED_KERNELS = {"opencv": "cv2-bilinear-uint8", "truncate": "tf-bilinear-uint8"}
#: The default of the interpolation part: the kernel every run before the part existed used.
DEFAULT_INTERPOLATION = "model-own"
CLASS_MASK_PROTOCOLS: dict[str, str] = {
    "hendrycks-200": "argmax over the benchmark's 200 classes (natural-adv-examples / imagenet-r eval.py)",
    "paul-chen-1000": "argmax over all 1000 classes; one outside the 200 is wrong (robustness-vit notebooks)",
}
MCE_PROTOCOLS: dict[str, str] = {
    "alexnet-15": "mean over the 15 standard corruptions of the AlexNet-normalised corruption error",
    "unnormalized-19": "mean over every corruption (19 in full) of its mean error over severities, unnormalised",
}
RELEASE_ENCODING_PROTOCOLS: dict[str, str] = {
    "jpeg-85": "each generated image saved as JPEG quality 85 (optimize) and decoded, as make_imagenet_c.py",
    "h264": "each generated sequence encoded with make_imagenet_p.py's libx264 settings and decoded (approximate)",
    "none": "generated images kept as computed (no compression)",
}
#: The values of the recorded `image_bytes` (see `source_image_bytes`).
IMAGE_BYTES = ("release", "re-encoded", "unknown", "generated", "not the benchmark")
#: Source kinds that read the release's own files as the user's copy holds them (a folder, CIFAR-C's arrays,
#: ImageNet-P's videos).
_RELEASE_FILE_KINDS = ("image_folder", "cifar-c-arrays", "imagenet-p-videos")
#: ImageNet-O's score in the reference and in Paul & Chen's notebooks alike (recorded, not a choice).
OOD_SCORE_PROTOCOL = "-max softmax over the logits of ImageNet-O's 200 classes (mask before the softmax)"

LABELS_PROTOCOLS: dict[str, str] = {
    "imagenet": "the original ILSVRC-2012 validation label, one per image",
    "real": "ReaL label sets (Beyer et al. 2020): any of them is right; images without one left out (timm)",
}

IMAGE_LIST_PROTOCOLS: dict[str, str] = {
    "full": "every image of each corruption and severity cell",
    "robustbench-5000": "RobustBench's 5,000 validation images in every cell (its ImageNet-C and -3DCC leaderboards)",
}
#: An image_list protocol -> the shipped image list it selects (`hf_vitrobust.data.image_list`).
IMAGE_LIST_FILES = {"robustbench-5000": "robustbench-imagenet-c-5000"}

#: Parts added after runs first recorded their protocols, with the value every run before each part had: an old
#: run folder resumes as that value (`evaluation.store`), and notes leave it out (`hub.eval_results`).
LATER_PART_DEFAULTS = {"interpolation": DEFAULT_INTERPOLATION, "labels": "imagenet", "image_list": "full"}

_CHOICES = {
    "preprocessing": PREPROCESSING_PROTOCOLS,
    "interpolation": INTERPOLATION_PROTOCOLS,
    "class_mask": CLASS_MASK_PROTOCOLS,
    "mce": MCE_PROTOCOLS,
    "release_encoding": RELEASE_ENCODING_PROTOCOLS,
    "labels": LABELS_PROTOCOLS,
    "image_list": IMAGE_LIST_PROTOCOLS,
}


def protocol_parts(benchmark: Benchmark) -> tuple[str, ...]:
    """The protocol parts that apply to `benchmark`."""
    parts = ["preprocessing", "interpolation"]
    if (
        benchmark.class_subset is not None
        and not benchmark.class_subset.groups
        and benchmark.task == "classification"
    ):
        parts.append("class_mask")
    if benchmark.alexnet_baseline:
        parts.append("mce")
    if len(RELEASE_ENCODINGS.get(benchmark.name, ())) > 1:  # a choice: generated ImageNet-C and ImageNet-P
        parts.append("release_encoding")
    if benchmark.reassessed_labels:
        parts.append("labels")
    if benchmark.robustbench_alexnet:  # ImageNet-C, -3DCC: RobustBench's subset is a choice of its images
        parts.append("image_list")
    return tuple(parts)


def default_protocol(benchmark: Benchmark) -> dict[str, str]:
    """The canonical protocol of `benchmark`: as released for pre-cropped images, else the model's own transform;
    Hendrycks' 200-class argmax; the AlexNet-normalised mCE; the release's JPEG for generated ImageNet-C, no video
    compression for generated ImageNet-P; each model's own resize kernel."""
    defaults = {
        "preprocessing": "as-released" if benchmark.released_size is not None else "model-native",
        "interpolation": DEFAULT_INTERPOLATION,
        "class_mask": "hendrycks-200",
        "mce": "alexnet-15",
        "release_encoding": RELEASE_ENCODINGS.get(benchmark.name, ("none",))[0],
        "labels": "imagenet",
        "image_list": "full",
    }
    return {part: defaults[part] for part in protocol_parts(benchmark)}


def check_protocol(benchmark: Benchmark, protocol: Mapping[str, Any], where: str) -> dict[str, str]:
    """`protocol` (part -> name) checked for `benchmark`; ValueError naming `where`, the part and the valid names."""
    if not isinstance(protocol, Mapping):
        raise ValueError(f"{where}: protocol must be a mapping of part -> name, got {protocol!r}.")
    parts = protocol_parts(benchmark)
    checked = {}
    for part, value in protocol.items():
        if part == "class_mask" and benchmark.class_subset is not None and benchmark.class_subset.groups:
            raise ValueError(
                f"{where}: {benchmark.name} has no class_mask choice: it is scored only with each logit pooled (max) "
                f"over the ImageNet classes of each of its {len(benchmark.class_subset.groups)} classes (ObjectNet's "
                "mapping, as the imagenet-testbed scores it). A 1000-way argmax is not its protocol (a naive mapping "
                "gives 0.3 %, objectnet-template-pytorch #13)."
            )
        if part not in parts:
            hint = did_you_mean(part, parts)
            raise ValueError(
                f"{where}: {benchmark.name} has no protocol part {part!r}.{hint} Its parts: {', '.join(parts)}."
            )
        choices = _CHOICES[part]
        if not isinstance(value, str) or value not in choices:
            hint = did_you_mean(value, choices)
            raise ValueError(
                f"{where}: unknown {part} protocol {value!r} for {benchmark.name}.{hint} "
                f"Known: {', '.join(choices)}."
            )
        if part == "release_encoding" and value not in RELEASE_ENCODINGS[benchmark.name]:
            raise ValueError(
                f"{where}: {benchmark.name} has no {value!r} release encoding; its encodings: "
                f"{', '.join(RELEASE_ENCODINGS[benchmark.name])}."
            )
        if part == "preprocessing" and value == "as-released" and benchmark.released_size is None:
            raise ValueError(
                f"{where}: {benchmark.name} is not released pre-cropped (its images come in any size), so it has "
                "no as-released preprocessing; use model-native, native-resize or resize256-crop224."
            )
        checked[part] = str(value)
    return checked


def benchmark_protocol(
    benchmark: Benchmark, *overrides: Mapping[str, str], where: str = "protocol"
) -> dict[str, str]:
    """The protocol of `benchmark`: its defaults, updated by each mapping of `overrides` in turn (the suite's, then
    the command line's), each checked."""
    protocol = default_protocol(benchmark)
    for override in overrides:
        protocol.update(check_protocol(benchmark, override, where))
    return protocol


def resize_kernel(preprocessing: Mapping[str, Any]) -> str:
    """The kernel a recorded preprocessing (`Preprocessing.to_dict()`, results.json's `models.<key>.preprocessing`)
    resized with: "none" (crop only), "tf-bilinear" (antialias off), one of the 8-bit kernels (`quantize` set) or
    "pil-<mode>" (PIL, antialiased). Records written before `antialias` existed resized with PIL."""
    if preprocessing.get("crop_only"):
        return "none"
    if preprocessing.get("quantize") in _QUANTIZED_KERNELS:
        return _QUANTIZED_KERNELS[preprocessing["quantize"]]
    if preprocessing.get("antialias") is False:
        return "tf-bilinear"
    return f"pil-{preprocessing.get('interpolation') or 'bilinear'}"


def source_image_bytes(source: Mapping[str, Any]) -> tuple[str, str]:
    """(value, why) of the recorded `image_bytes` of a source (`Source.describe()`, results.json's
    `benchmarks.<name>.source`): a registered Hub copy's entry in `HUB_IMAGE_BYTES`, "unknown" for an unregistered
    Hub copy, "release" for a local copy read file by file, "generated" for images made here."""
    kind = str(source.get("kind") or "")
    if source.get("generated") or kind.startswith("generated"):
        return "generated", "generated here from a clean source, not read from a release"
    if kind.startswith("builtin"):
        return "not the benchmark", "the bundled demo photos"
    if kind in _RELEASE_FILE_KINDS:
        return "release", "a local copy read file by file as the release lays it out (the user's files)"
    schema = source.get("schema")
    if schema in HUB_IMAGE_BYTES:
        return HUB_IMAGE_BYTES[str(schema)]
    return (
        "unknown",
        f"a {kind or 'dataset'} source whose pages do not say whether it kept the release's files",
    )


def parse_protocol_option(text: str) -> tuple[str, str, str]:
    """A command-line `--protocol BENCHMARK.PART=NAME` -> (benchmark, part, name); ValueError when malformed."""
    target, sep, value = str(text).partition("=")
    benchmark, dot, part = target.partition(".")
    if not sep or not dot or not benchmark or not part or not value:
        raise ValueError(
            f"--protocol {text!r}: expected BENCHMARK.PART=NAME, e.g. imagenet-c.preprocessing=native-resize or "
            "imagenet-a.class_mask=paul-chen-1000."
        )
    return benchmark.strip(), part.strip(), value.strip()


def protocol_record(
    benchmark: Benchmark, protocol: Mapping[str, str], source: Mapping[str, Any]
) -> dict[str, Any]:
    """What results.json records of a benchmark's protocol: every part with its meaning, the score mask and the
    baseline, whether the release encoding applied (it does only to generated images), and the image bytes read
    (`source_image_bytes`). The interpolation recorded here is the benchmark's; a model's own (a pairing may set
    it) and the kernel it saw are in `models.<key>`."""
    protocol = {**default_protocol(benchmark), **protocol}
    record: dict[str, Any] = {part: protocol[part] for part in protocol_parts(benchmark)}
    record["meaning"] = {part: _CHOICES[part][protocol[part]] for part in protocol_parts(benchmark)}
    if benchmark.released_size is not None:
        record["released_size"] = benchmark.released_size
    if benchmark.class_subset is not None:
        record["class_subset"] = f"{benchmark.class_subset.name}: {len(benchmark.class_subset)} classes"
    if benchmark.task == "ood":
        record["score"] = OOD_SCORE_PROTOCOL
    if benchmark.task == "background":
        record["class_mask"] = "argmax over all 1000 classes mapped to the 9 superclasses; others are wrong"
    if benchmark.alexnet_baseline:
        record["baseline"] = "AlexNet top-1 errors of the hendrycks/robustness README (alexnet-15 only)"
    if "release_encoding" in record and not source.get("generated"):
        record["release_encoding"] = "as released (the files' own encoding)"
        record["meaning"]["release_encoding"] = "the released files are read as they are"
    if benchmark.label_space.startswith("cifar") and benchmark.corruptions and source.get("generated"):
        record["release_encoding"] = "none (the CIFAR-C release is uint8 arrays, no JPEG)"
    record["image_bytes"], record["meaning"]["image_bytes"] = source_image_bytes(source)
    return record


__all__ = [
    "CLASS_MASK_PROTOCOLS",
    "DEFAULT_INTERPOLATION",
    "IMAGE_BYTES",
    "IMAGE_LIST_FILES",
    "IMAGE_LIST_PROTOCOLS",
    "INTERPOLATION_PROTOCOLS",
    "LABELS_PROTOCOLS",
    "LATER_PART_DEFAULTS",
    "MCE_PROTOCOLS",
    "OOD_SCORE_PROTOCOL",
    "PARK_KIM_NOTEBOOK",
    "PREPROCESSING_PROTOCOLS",
    "RELEASE_ENCODING_PROTOCOLS",
    "benchmark_protocol",
    "check_protocol",
    "default_protocol",
    "parse_protocol_option",
    "protocol_parts",
    "protocol_record",
    "resize_kernel",
    "source_image_bytes",
]
