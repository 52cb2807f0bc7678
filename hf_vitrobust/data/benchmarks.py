# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The benchmarks of the robustness studies (Paul & Chen 2022; Park & Kim 2022): one `Benchmark` spec each.

A `Benchmark` is the single description of a benchmark: its label space, the class subset its metric is computed
on, its task and its `kind` (how `hf_vitrobust.analysis.kinds` scores and shows it), the
`load_benchmark` options it takes with their valid values (`check_options`, used by the suite loader and by
`load_benchmark`), the clean benchmark it is generated from, and its Hub copies (read from the registered Hub
schemas). `BENCHMARKS` is the `Registry` of them; a plug-in registers its own with `BENCHMARKS.register(name, b)`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..constants import (
    ALL_CORRUPTIONS,
    EXTRA_CORRUPTIONS,
    IMAGENET_9_CLASSES,
    IMAGENET_9_VARIANTS,
    PERTURBATIONS,
    SEVERITIES,
    STANDARD_CORRUPTIONS,
    TEST_PERTURBATIONS,
    VALIDATION_PERTURBATIONS,
)
from ..metrics.robustbench import ROBUSTBENCH_ALEXNET_FILE
from ..models.imagenet import IMAGENET_CLASS_NAMES
from ..registry import Registry, did_you_mean
from .builtin import BUILTIN_SOURCE
from .class_lists import ClassSubset, imagenet_a_classes, imagenet_o_classes, imagenet_r_classes
from .hub_labels import CIFAR10_CLASSES, CIFAR100_CLASSES
from .hub_schemas import HUB_SCHEMAS, HubSchema, check_complete_split, check_not_refused, hub_schemas_for
from .imagenet_v2 import IMAGENET_V2_VARIANTS
from .objectnet import objectnet_class_subset
from .samples import SchemaError, Source

TASKS = ("classification", "ood", "sequence", "background")

#: The `load_benchmark` options a suite may set, in the order error messages list them. "split" and "schema" apply
#: to every benchmark; each of the others to the benchmarks that declare its values (`Benchmark.option_names`).
OPTION_NAMES = ("split", "schema", "corruptions", "severities", "variant", "difficulty", "in_distribution")

_CORRUPTION_CITATION = (
    "Hendrycks & Dietterich, Benchmarking Neural Network Robustness to Common Corruptions and Perturbations, "
    "ICLR 2019"
)


@dataclass(frozen=True)
class Benchmark:
    """One benchmark: what it measures, in which label space, how it is scored and which options it takes.

    label_space: "imagenet-1k", "imagenet-9", "cifar10" or "cifar100"; `num_classes` and `class_names` follow.
    class_subset: ImageNet-A/R: the classes the logits are cut to before the argmax; ImageNet-O: the score mask
        and the classes of its in-distribution half.
    task: "classification", "ood" (ImageNet-O), "sequence" (ImageNet-P) or "background" (ImageNet-9).
    kind: how it is scored, summarised and shown: a name of `hf_vitrobust.analysis.BENCHMARK_KINDS` ("clean",
        "masked" (ImageNet-A/R), "corruption", "perturbation", "ood", "background"); written into results.json.
    corruptions / severities: the corruptions and severities it has (the "corruptions" and "severities" options).
    corruption_groups: its corruptions by group, where its release groups them (ImageNet-3DCC: depth of field,
        camera motion, ...); its metrics then add the mean top-1 per corruption and per group.
    variants: its variants (ImageNet-9), perturbations (ImageNet-P) or test sets (ImageNet-V2): the "variant" option;
        `variant_groups` are the shorthands a suite may write for several ("all", "test", ...), `variant_noun` names
        one in errors. one_variant: the option names a single one (ImageNet-V2: each test set is its own number).
    difficulties: the values of the "difficulty" option (ImageNet-P).
    in_distribution_from: the benchmark whose images form the in-distribution half (ImageNet-O: imagenet-val),
        given with the "in_distribution" option.
    generated_default: the "generated:" source used by default where no Hub copy streams (CIFAR-C); with
        `hub_sources`, `default_source` is the source when none is given (None: the data must be given as a local
        folder, as for ImageNet-P and ImageNet-9).
    folder_layout / folder_labels: how `ImageFolderSource` reads the official release (None: no image folder;
        "imagenet_v2": `hf_vitrobust.data.imagenet_v2`, class folders named by ImageNet-1k index).
    generated_from: the clean benchmark that "generated:" corrupts (or, for ImageNet-P, perturbs) on the fly.
    released_size: the side of the images as released, already cropped, where the official evaluation reads them
        without resizing (ImageNet-C and ImageNet-P: 224, ImageNet-C/test.py `CenterCrop(224)`; ImageNet-9: 224,
        backgrounds_challenge `ToTensor()`; CIFAR and CIFAR-C: 32, AugMix cifar.py `ToTensor()`); None where the
        images come in any size and each model's own transform resizes them.
    split: the one split of its sources that this benchmark is (the training sets: "train"); a source's other
        splits are other benchmarks, so `split=` naming one is refused. None: the Hub schema's default split, and
        `split=` may choose another.
    hub_schemas_from: the benchmark whose registered Hub schemas this one reads (imagenet-train: imagenet-val's
        ILSVRC/imagenet-1k; cifar100-train: cifar100's uoft-cs/cifar100): the same repositories, label mapping and
        checks, read at `split`. None: its own schemas.
    alexnet_baseline: whether its corruption errors are normalised by AlexNet's (ImageNet-C: the mCE of Hendrycks &
        Dietterich, with the "mce" protocol part choosing between the normalised and unnormalised means).
    mean_error_headline: whether its headline is the plain mean top-1 error over its cells, with the mean error per
        corruption beside it (ImageNet-C-bar: Mintun et al.'s test_c_bar.py "overall-avg" and "<corruption>-avg").
    robustbench_alexnet: the shipped file of RobustBench's AlexNet accuracies on its 5,000 validation images
        (`hf_vitrobust.metrics.robustbench`) where RobustBench has a leaderboard of it (ImageNet-C, ImageNet-3DCC):
        its "image_list" protocol part then offers those images, and under them its leaderboard's two columns.
    reassessed_labels: whether its images have ReaL labels (`hf_vitrobust.data.real_labels`: the ImageNet
        validation set), scored under the "labels" protocol part's "real".
    """

    name: str
    description: str
    citation: str
    task: str
    label_space: str
    kind: str = "clean"
    class_subset: ClassSubset | None = None
    splits: tuple[str, ...] = ()
    variants: tuple[str, ...] = ()
    variant_groups: tuple[tuple[str, tuple[str, ...]], ...] = ()
    variant_noun: str = "variant"
    one_variant: bool = False
    corruptions: tuple[str, ...] = ()
    severities: tuple[int, ...] = ()
    corruption_groups: tuple[tuple[str, tuple[str, ...]], ...] = ()
    difficulties: tuple[int, ...] = ()
    in_distribution_from: str | None = None
    folder_layout: str | None = "classes"
    folder_labels: str = "wnid"
    generated_from: str | None = None
    generated_default: str | None = None
    released_size: int | None = None
    split: str | None = None
    hub_schemas_from: str | None = None
    alexnet_baseline: bool = False
    robustbench_alexnet: str | None = None
    mean_error_headline: bool = False
    reassessed_labels: bool = False

    @property
    def num_classes(self) -> int:
        return len(self.class_names)

    @property
    def class_names(self) -> tuple[str, ...]:
        return {
            "imagenet-1k": IMAGENET_CLASS_NAMES,
            "imagenet-9": IMAGENET_9_CLASSES,
            "cifar10": CIFAR10_CLASSES,
            "cifar100": CIFAR100_CLASSES,
        }[self.label_space]

    @property
    def hub_schemas(self) -> tuple[HubSchema, ...]:
        from . import hub_datasets  # noqa: F401  (registers the known Hub schemas)

        return hub_schemas_for(self.hub_schemas_from or self.name)

    @property
    def hub_sources(self) -> tuple[str, ...]:
        """Its known Hub copies that stream, the default first: the repositories of its registered Hub schemas,
        in registration order."""
        return tuple(dict.fromkeys(schema.repo for schema in self.hub_schemas))

    @property
    def default_source(self) -> str | None:
        """The source read when none is given: the first streaming Hub copy, else the generated default."""
        if self.hub_sources:
            return self.hub_sources[0]
        return self.generated_default

    @property
    def clean(self) -> str | None:
        """The clean benchmark whose predictions give this one's clean error (ImageNet-C's relative mCE): the one a
        benchmark of corruptions is generated from; None for the others (ImageNet-P's sequences included)."""
        return self.generated_from if self.corruptions else None

    @property
    def option_names(self) -> tuple[str, ...]:
        """The `load_benchmark` options that apply to it (of `OPTION_NAMES`)."""
        declared = {
            "corruptions": self.corruptions,
            "severities": self.severities,
            "variant": self.variants,
            "difficulty": self.difficulties,
            "in_distribution": self.in_distribution_from,
        }
        return tuple(name for name in OPTION_NAMES if declared.get(name, True))

    def check_options(
        self, options: Mapping[str, Any], source: str | os.PathLike | None = None
    ) -> dict[str, Any]:
        """Check `load_benchmark` options (a suite entry's, or a call's) against what this benchmark declares; return
        them with shorthands expanded ("corruptions: all" -> the names) and None values left out.

        `source` is the source string they will be read from ("generated:..." sources have exactly the corruptions
        this version implements, and ImageNet-P's generated difficulties 2-3 only for the noise types). Raises
        ValueError, without the caller's location, for an option that does not apply or a value that is not valid.
        """
        source = os.fspath(source) if isinstance(source, str | os.PathLike) else None
        generated = source is not None and source.startswith("generated:")
        checked = {}
        for key, value in options.items():
            if key not in OPTION_NAMES:
                raise ValueError(
                    f"unknown option {key!r}.{did_you_mean(key, OPTION_NAMES, n=3)} Known: {', '.join(OPTION_NAMES)}."
                )
            if key not in self.option_names:
                scope = [b.name for b in BENCHMARKS.values() if key in b.option_names]
                hint = (
                    f" ({self.variant_noun}s are its 'variant')"
                    if key == "corruptions" and self.variants
                    else ""
                )
                raise ValueError(f"option {key!r} is for {', '.join(scope)} only, not {self.name}{hint}.")
            if value is not None:
                checked[key] = self._check_option(key, value, generated)
        if checked.get("difficulty", 1) != 1 and generated:
            from ..corruptions.perturbations import NOISE_LEVELS

            others = [name for name in checked.get("variant", self.variants) if name not in NOISE_LEVELS]
            if others:
                raise ValueError(
                    f"generated ImageNet-P has difficulty {checked['difficulty']} only for the noise types "
                    f"({', '.join(NOISE_LEVELS)}), not {', '.join(others)}; use difficulty 1 for them."
                )
        return checked

    def _check_option(self, key: str, value: Any, generated: bool) -> Any:
        if key == "corruptions":
            from ..corruptions import CORRUPTIONS

            # A generated source has exactly the corruptions this version implements; released data has all 19.
            every = tuple(CORRUPTIONS) if generated else self.corruptions
            shorthands = {"standard": STANDARD_CORRUPTIONS, "extra": EXTRA_CORRUPTIONS, "all": every}
            return _names(value, every, shorthands, "corruptions", "corruption")
        if key == "severities":
            severities = [value] if isinstance(value, int) else value
            if (
                not isinstance(severities, list | tuple)
                or not severities
                or any(isinstance(s, bool) or s not in self.severities for s in severities)
            ):
                low, high = min(self.severities), max(self.severities)
                raise ValueError(
                    f"severities must be integers in {low}..{high} (or a list of them), got {value!r}."
                )
            if len(set(severities)) != len(severities):
                raise ValueError(f"severities lists a severity twice: {value!r}.")
            return [int(s) for s in severities]
        if key == "variant":
            names = _names(value, self.variants, dict(self.variant_groups), "variant", self.variant_noun)
            if self.one_variant and len(names) > 1:
                raise ValueError(
                    f"variant: {self.name} takes one {self.variant_noun} per entry, got {names}; "
                    "evaluate each in its own run."
                )
            return names
        if key == "difficulty":
            if isinstance(value, bool) or value not in self.difficulties:
                allowed = ", ".join(str(d) for d in self.difficulties[:-1]) + f" or {self.difficulties[-1]}"
                raise ValueError(f"difficulty must be {allowed} (or null for every one), got {value!r}.")
            return int(value)
        if key == "schema":
            if isinstance(value, HubSchema):
                return value
            if not isinstance(value, str) or value not in HUB_SCHEMAS:
                raise ValueError(
                    f"unknown Hub schema {value!r}.{did_you_mean(value, HUB_SCHEMAS, n=3)} "
                    f"Known: {', '.join(sorted(HUB_SCHEMAS))}."
                )
            return value
        if key == "in_distribution" and isinstance(value, Source | os.PathLike):
            return value
        # split, in_distribution: strings ("default" for in_distribution: ImageNet-1k's validation set on the Hub).
        if not isinstance(value, str) or not value:
            raise ValueError(f"{key} must be a non-empty string, got {value!r}.")
        if key == "split":
            check_complete_split(value)
            benchmark_split(self, value)  # a training set reads its own split only
        return value

    def own_folder_source(self, root: str, selection: Mapping[str, Any]) -> Source | None:
        """A plug-in's own reader of a local folder of its release, with the corruptions/severities `selection`
        (ImageNet-C-bar: severity folders named 1..5 or by parameter); None: `ImageFolderSource` in `folder_layout`."""
        return None

    def own_generated_source(
        self, clean: Source, selection: Mapping[str, Any], seed: int, release_encoding: str
    ) -> Source | None:
        """A plug-in's own "generated:" source over `clean` (ImageNet-C-bar's generator); None: ImageNet-C's
        corruptions or ImageNet-P's perturbations."""
        return None

    def check_source(self, source: str | None) -> None:
        """Refuse the source forms that only fit other benchmarks ("builtin", "generated:..."), with a `SchemaError`
        (a ValueError) naming what to use; the rest is checked when the data is opened. The one check of these
        forms: the suite loader and `resolve_source` both call it."""
        if source == BUILTIN_SOURCE and self.name != "imagenet-val":
            hint = (
                f"; for {self.name} use 'generated:{BUILTIN_SOURCE}' (corrupted or perturbed on the fly)."
                if self.generated_from == "imagenet-val"
                else f"; {self.name} has no bundled data."
            )
            raise SchemaError(
                f"'{BUILTIN_SOURCE}' (the bundled sample of ImageNet-labelled photos) is a source of imagenet-val "
                f"only, not of {self.name}{hint}"
            )
        if source is not None:
            check_not_refused(source[len("generated:") :] if source.startswith("generated:") else source)
        if source is None or not source.startswith("generated:"):
            return
        if self.generated_from is None:
            raise SchemaError(
                f"{self.name} cannot be generated; 'generated:<clean source>' works for "
                f"{', '.join(name for name, b in BENCHMARKS.items() if b.generated_from)}."
            )
        clean = source[len("generated:") :]
        if clean == BUILTIN_SOURCE and self.generated_from != "imagenet-val":
            example = (*BENCHMARKS[self.generated_from].hub_sources, "<path>")[0]
            raise SchemaError(
                f"'generated:{BUILTIN_SOURCE}' corrupts the bundled ImageNet photos, a source of imagenet-val only, "
                f"not of {self.generated_from}; {self.name} is generated from {self.generated_from} "
                f"(e.g. generated:{example})."
            )


def _names(
    value: Any, known: tuple[str, ...], shorthands: dict[str, tuple[str, ...]], key: str, noun: str
) -> list[str]:
    """A name, a list of names or a shorthand -> the list of names, each one of `known`."""
    if isinstance(value, str) and value in shorthands:
        return list(shorthands[value])
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list | tuple) or not names or not all(isinstance(n, str) for n in names):
        raise ValueError(
            f"{key}: expected a {noun} name, a list of them or one of {', '.join(shorthands)}; got {value!r}."
        )
    for name in names:
        if name not in known:
            raise ValueError(
                f"{key}: unknown {noun} {name!r}.{did_you_mean(name, (*known, *shorthands), n=3)} "
                f"Known: {', '.join(known)} (or {', '.join(shorthands)})."
            )
    if len(set(names)) != len(names):
        raise ValueError(f"{key}: a {noun} is listed twice: {value!r}.")
    return list(names)


#: The registered benchmarks, in the order reports list them.
BENCHMARKS: Registry[Benchmark] = Registry("benchmark")


def _imagenet(name: str, description: str, citation: str, **kwargs: Any) -> Benchmark:
    return Benchmark(
        name=name, description=description, citation=citation, label_space="imagenet-1k", **kwargs
    )


for _benchmark in (
    _imagenet(
        "imagenet-val",
        "ImageNet-1k validation set, 50,000 images of the 1000 classes (the clean reference).",
        "Russakovsky et al., ImageNet Large Scale Visual Recognition Challenge, IJCV 2015",
        task="classification",
        kind="clean",
        splits=("validation",),
        reassessed_labels=True,
    ),
    _imagenet(
        "imagenet-train",
        "ImageNet-1k training set, 1,281,167 images of the 1000 classes; its clean top-1 is the training "
        "accuracy. Park & Kim measure Hessian spectra and loss landscapes on its mini-batches.",
        "Russakovsky et al., ImageNet Large Scale Visual Recognition Challenge, IJCV 2015",
        task="classification",
        kind="clean",
        splits=("train",),
        split="train",
        hub_schemas_from="imagenet-val",
    ),
    _imagenet(
        "imagenet-c",
        "ImageNet validation images under 15 (+4 held-out) corruptions at 5 severities; metric mCE.",
        _CORRUPTION_CITATION,
        task="classification",
        kind="corruption",
        corruptions=ALL_CORRUPTIONS,
        severities=SEVERITIES,
        folder_layout="corruption_severity",
        generated_from="imagenet-val",
        released_size=224,
        alexnet_baseline=True,
        robustbench_alexnet=ROBUSTBENCH_ALEXNET_FILE,
    ),
    _imagenet(
        "imagenet-p",
        "ImageNet validation videos of gradually growing perturbations; metrics flip rate and top-5 distance.",
        _CORRUPTION_CITATION,
        task="sequence",
        kind="perturbation",
        variants=PERTURBATIONS,
        variant_groups=(
            ("test", TEST_PERTURBATIONS),
            ("validation", VALIDATION_PERTURBATIONS),
            ("all", PERTURBATIONS),
        ),
        variant_noun="ImageNet-P perturbation",
        difficulties=(1, 2, 3),
        folder_layout=None,
        generated_from="imagenet-val",
        released_size=224,
    ),
    _imagenet(
        "imagenet-a",
        "7,500 natural adversarial examples of 200 ImageNet classes; logits cut to the 200 classes.",
        "Hendrycks et al., Natural Adversarial Examples, CVPR 2021",
        task="classification",
        kind="masked",
        class_subset=imagenet_a_classes(),
    ),
    _imagenet(
        "imagenet-r",
        "30,000 renditions (art, cartoons, sketches, toys, ...) of 200 ImageNet classes; logits cut to them.",
        "Hendrycks et al., The Many Faces of Robustness, ICCV 2021",
        task="classification",
        kind="masked",
        class_subset=imagenet_r_classes(),
    ),
    _imagenet(
        "imagenet-o",
        "2,000 out-of-distribution images that ImageNet models misclassify with high confidence, against "
        "the ImageNet validation images of 200 classes; score -max softmax over those classes, metric AUPR.",
        "Hendrycks et al., Natural Adversarial Examples, CVPR 2021",
        task="ood",
        kind="ood",
        class_subset=imagenet_o_classes(),
        folder_labels="ood",
        in_distribution_from="imagenet-val",
    ),
    Benchmark(
        name="imagenet-9",
        description="Backgrounds challenge: 9 superclasses with foreground and background recombined; "
        "BG-gap = accuracy(mixed_same) - accuracy(mixed_rand).",
        citation="Xiao et al., Noise or Signal: The Role of Image Backgrounds in Object Recognition, ICLR 2021",
        task="background",
        kind="background",
        label_space="imagenet-9",
        variants=IMAGENET_9_VARIANTS,
        variant_groups=(("all", IMAGENET_9_VARIANTS),),
        folder_layout="imagenet_9",
        folder_labels="imagenet_9",
        released_size=224,
    ),
    _imagenet(
        "imagenet-sketch",
        "50,889 black-and-white sketches, 50 for each of the 1000 ImageNet classes.",
        "Wang et al., Learning Robust Global Representations by Penalizing Local Predictive Power, NeurIPS 2019",
        task="classification",
        kind="clean",
    ),
    _imagenet(
        "imagenet-v2",
        "ImageNet-V2: 10,000 new images, 10 for each of the 1000 ImageNet classes, in three test sets "
        "(matched-frequency, the default, threshold-0.7, top-images: the 'variant' option); top-1/top-5 over all "
        "1000 classes. Its class folders are ImageNet-1k indices.",
        "Recht et al., Do ImageNet Classifiers Generalize to ImageNet?, ICML 2019",
        task="classification",
        kind="clean",
        variants=IMAGENET_V2_VARIANTS,
        variant_noun="ImageNet-V2 test set",
        one_variant=True,
        folder_layout="imagenet_v2",
        folder_labels="index",
    ),
    _imagenet(
        "objectnet",
        "ObjectNet's 113 classes that overlap ImageNet (of 313; 50,273 images by FLYP #7's count), each scored by "
        "its maximum logit over its ImageNet classes (ObjectNet's mapping, the imagenet-testbed's protocol); top-1 "
        "only; the images' border removed. Licence: evaluation only, no training.",
        "Barbu et al., ObjectNet: A large-scale bias-controlled dataset for pushing the limits of object "
        "recognition models, NeurIPS 2019",
        task="classification",
        kind="clean",
        class_subset=objectnet_class_subset(),
        folder_layout="objectnet",
    ),
    Benchmark(
        name="cifar10-c",
        description="CIFAR-10 test images under 15 (+4) corruptions at 5 severities.",
        citation=_CORRUPTION_CITATION,
        task="classification",
        kind="corruption",
        label_space="cifar10",
        generated_default="generated:uoft-cs/cifar10",
        corruptions=ALL_CORRUPTIONS,
        severities=SEVERITIES,
        folder_layout="corruption_severity",
        folder_labels="names",
        generated_from="cifar10",
        released_size=32,
    ),
    Benchmark(
        name="cifar100-c",
        description="CIFAR-100 test images under 15 (+4) corruptions at 5 severities.",
        citation=_CORRUPTION_CITATION,
        task="classification",
        kind="corruption",
        label_space="cifar100",
        generated_default="generated:uoft-cs/cifar100",
        corruptions=ALL_CORRUPTIONS,
        severities=SEVERITIES,
        folder_layout="corruption_severity",
        folder_labels="names",
        generated_from="cifar100",
        released_size=32,
    ),
    Benchmark(
        name="cifar10",
        description="CIFAR-10 test set, 10,000 32x32 images of 10 classes.",
        citation="Krizhevsky, Learning Multiple Layers of Features from Tiny Images, 2009",
        task="classification",
        kind="clean",
        label_space="cifar10",
        splits=("train", "test"),
        folder_labels="names",
        released_size=32,
    ),
    Benchmark(
        name="cifar100",
        description="CIFAR-100 test set, 10,000 32x32 images of 100 fine classes.",
        citation="Krizhevsky, Learning Multiple Layers of Features from Tiny Images, 2009",
        task="classification",
        kind="clean",
        label_space="cifar100",
        splits=("train", "test"),
        folder_labels="names",
        released_size=32,
    ),
    Benchmark(
        name="cifar100-train",
        description="CIFAR-100 training set, 50,000 32x32 images of 100 fine classes; its clean top-1 is the "
        "training accuracy. Park & Kim measure Hessian spectra and loss landscapes on its mini-batches.",
        citation="Krizhevsky, Learning Multiple Layers of Features from Tiny Images, 2009",
        task="classification",
        kind="clean",
        label_space="cifar100",
        splits=("train",),
        folder_labels="names",
        released_size=32,
        split="train",
        hub_schemas_from="cifar100",
    ),
):
    BENCHMARKS.register(_benchmark.name, _benchmark)

#: How each generated benchmark may store its images, the default first: ImageNet-C as the release's JPEG-85 files
#: (make_imagenet_c.py), ImageNet-P as computed or through the release's H.264 (make_imagenet_p.py; slow, and not
#: bit-equal to the release's unknown x264 build), CIFAR-C as the release's uint8 arrays (make_cifar_c.py).
RELEASE_ENCODINGS: dict[str, tuple[str, ...]] = {
    "imagenet-c": ("jpeg-85", "none"),
    "imagenet-p": ("none", "h264"),
    "cifar10-c": ("none",),
    "cifar100-c": ("none",),
}


def get_benchmark(name: str) -> Benchmark:
    """The registered benchmark `name` ("imagenet-c", "ImageNet_C" and "imagenet_c" all work)."""
    return BENCHMARKS.get(str(name).strip().lower().replace("_", "-"))


def benchmark_split(benchmark: Benchmark, split: str | None) -> str | None:
    """The split to read for `benchmark`: `split`, else the benchmark's own (`Benchmark.split`: "train" for the
    training sets, None for the rest). A split other than a training set's own is refused with a ValueError naming
    the benchmark that reads it (ILSVRC/imagenet-1k's validation split is imagenet-val, not imagenet-train)."""
    if benchmark.split is None or not split or split == benchmark.split:
        return split or benchmark.split
    sources = " or ".join(benchmark.hub_sources) or "its sources"
    holder = f" Use {benchmark.hub_schemas_from} for the other splits." if benchmark.hub_schemas_from else ""
    raise ValueError(
        f"{benchmark.name} reads only the {benchmark.split!r} split of {sources}; got split={split!r}.{holder}"
    )


__all__ = [
    "BENCHMARKS",
    "OPTION_NAMES",
    "RELEASE_ENCODINGS",
    "TASKS",
    "Benchmark",
    "benchmark_split",
    "get_benchmark",
]
