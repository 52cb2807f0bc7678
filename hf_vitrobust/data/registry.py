# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The benchmarks of the robustness studies (Paul & Chen 2022; Park & Kim 2022) and where their data comes from.

`BENCHMARKS` describes each benchmark: its label space, the class subset its metric is computed on, its task, its
corruptions/variants and its known Hub copies. `load_benchmark(name, source)` turns a user's source string
(`--data BENCHMARK=SOURCE`) into a streaming `Source`:

- a Hub id, "org/name", optionally "org/name:config" and/or "org/name@revision" -> `HubSource` with the
  repository's registered `HubSchema` (or the first of the benchmark's schemas that fits its features);
- a local folder laid out like a known Hub repository ("<dir>/Tsomaros/ImageNet-C-fog-severity_4") ->
  `HubSource` on that folder, so a downloaded copy and the Hub id behave identically;
- a local folder of .mp4 files -> `ImageNetPVideoSource`; of .npy files -> `CifarCArraySource`; of .parquet files
  or a .parquet file -> `ParquetSource`; otherwise an image folder in the benchmark's official layout;
- "generated:<clean source>" -> `GeneratedCorruptionSource` (ImageNet-C, CIFAR-C) or `GeneratedPerturbationSource`
  (ImageNet-P) over the clean benchmark;
- "builtin" (imagenet-val) -> `BuiltinPhotosSource`, the bundled sample of real photos; so "generated:builtin" makes
  ImageNet-C and ImageNet-P of it, offline.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..models.imagenet import IMAGENET_CLASS_NAMES
from .builtin import BUILTIN_SOURCE, BuiltinPhotosSource
from .decoding import IMAGE_FILE_EXTENSIONS
from .hub import (
    CIFAR10_CLASSES,
    CIFAR100_CLASSES,
    HubSchema,
    HubSource,
    ParquetSource,
    _match_path_or_parent,
    get_hub_schema,
    hub_schemas_for,
    match_schema,
)
from .local import ImageFolderSource
from .protocols import (
    IMAGENET_9_CLASSES,
    IMAGENET_9_VARIANTS,
    ClassSubset,
    imagenet_a_classes,
    imagenet_o_classes,
    imagenet_r_classes,
)
from .samples import NO_LABEL, RawSample, SchemaError, Source

TASKS = ("classification", "ood", "sequence", "background")


_CORRUPTION_CITATION = (
    "Hendrycks & Dietterich, Benchmarking Neural Network Robustness to Common Corruptions and Perturbations, "
    "ICLR 2019"
)


def _corruption_names() -> tuple[str, ...]:
    from ..corruptions import EXTRA_CORRUPTIONS, STANDARD_CORRUPTIONS

    return STANDARD_CORRUPTIONS + EXTRA_CORRUPTIONS


def _perturbation_names() -> tuple[str, ...]:
    from ..corruptions import PERTURBATIONS

    return tuple(PERTURBATIONS)


@dataclass(frozen=True)
class Benchmark:
    """One benchmark: what it measures and in which label space.

    label_space: "imagenet-1k", "imagenet-9", "cifar10" or "cifar100"; `num_classes` and `class_names` follow.
    class_subset: ImageNet-A/R: the classes the logits are cut to before the argmax; ImageNet-O: the score mask
        and the classes of its in-distribution half.
    task: "classification", "ood" (ImageNet-O), "sequence" (ImageNet-P) or "background" (ImageNet-9).
    hub_sources: known Hub copies that stream, the default first.
    generated_default: the "generated:" source used by default where no Hub copy streams (CIFAR-C); with
        `hub_sources`, `default_source` is the source when none is given (None: the data must be given as a local
        folder, as for ImageNet-P and ImageNet-9).
    folder_layout / folder_labels: how `ImageFolderSource` reads the official release (None: no image folder).
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
    """

    name: str
    description: str
    citation: str
    task: str
    label_space: str
    class_subset: ClassSubset | None = None
    hub_sources: tuple[str, ...] = ()
    splits: tuple[str, ...] = ()
    variants: tuple[str, ...] = ()
    corruptions: tuple[str, ...] = ()
    severities: tuple[int, ...] = ()
    folder_layout: str | None = "classes"
    folder_labels: str = "wnid"
    generated_from: str | None = None
    generated_default: str | None = None
    released_size: int | None = None
    split: str | None = None
    hub_schemas_from: str | None = None

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
        return hub_schemas_for(self.hub_schemas_from or self.name)

    @property
    def default_source(self) -> str | None:
        """The source read when none is given: the first streaming Hub copy, else the generated default."""
        if self.hub_sources:
            return self.hub_sources[0]
        return self.generated_default


def _imagenet(name: str, description: str, citation: str, **kwargs: Any) -> Benchmark:
    return Benchmark(
        name=name, description=description, citation=citation, label_space="imagenet-1k", **kwargs
    )


BENCHMARKS: dict[str, Benchmark] = {
    b.name: b
    for b in (
        _imagenet(
            "imagenet-val",
            "ImageNet-1k validation set, 50,000 images of the 1000 classes (the clean reference).",
            "Russakovsky et al., ImageNet Large Scale Visual Recognition Challenge, IJCV 2015",
            task="classification",
            hub_sources=("ILSVRC/imagenet-1k",),
            splits=("validation",),
        ),
        _imagenet(
            "imagenet-train",
            "ImageNet-1k training set, 1,281,167 images of the 1000 classes; its clean top-1 is the training "
            "accuracy. Park & Kim measure Hessian spectra and loss landscapes on its mini-batches.",
            "Russakovsky et al., ImageNet Large Scale Visual Recognition Challenge, IJCV 2015",
            task="classification",
            hub_sources=("ILSVRC/imagenet-1k",),
            splits=("train",),
            split="train",
            hub_schemas_from="imagenet-val",
        ),
        _imagenet(
            "imagenet-c",
            "ImageNet validation images under 15 (+4 held-out) corruptions at 5 severities; metric mCE.",
            _CORRUPTION_CITATION,
            task="classification",
            hub_sources=("WNJXYK/TTA-ImageNet-C", "Tsomaros/ImageNet-C"),
            corruptions=_corruption_names(),
            severities=(1, 2, 3, 4, 5),
            folder_layout="corruption_severity",
            generated_from="imagenet-val",
            released_size=224,
        ),
        _imagenet(
            "imagenet-p",
            "ImageNet validation videos of gradually growing perturbations; metrics flip rate and top-5 distance.",
            _CORRUPTION_CITATION,
            task="sequence",
            variants=_perturbation_names(),
            folder_layout=None,
            generated_from="imagenet-val",
            released_size=224,
        ),
        _imagenet(
            "imagenet-a",
            "7,500 natural adversarial examples of 200 ImageNet classes; logits cut to the 200 classes.",
            "Hendrycks et al., Natural Adversarial Examples, CVPR 2021",
            task="classification",
            class_subset=imagenet_a_classes(),
            hub_sources=("barkermrl/imagenet-a", "Tsomaros/imagenet-a"),
        ),
        _imagenet(
            "imagenet-r",
            "30,000 renditions (art, cartoons, sketches, toys, ...) of 200 ImageNet classes; logits cut to them.",
            "Hendrycks et al., The Many Faces of Robustness, ICCV 2021",
            task="classification",
            class_subset=imagenet_r_classes(),
            hub_sources=("axiong/imagenet-r",),
        ),
        _imagenet(
            "imagenet-o",
            "2,000 out-of-distribution images that ImageNet models misclassify with high confidence, against "
            "the ImageNet validation images of 200 classes; score -max softmax over those classes, metric AUPR.",
            "Hendrycks et al., Natural Adversarial Examples, CVPR 2021",
            task="ood",
            class_subset=imagenet_o_classes(),
            hub_sources=("cais/imagenet-o", "Voxel51/ImageNet-O"),
            folder_labels="ood",
        ),
        Benchmark(
            name="imagenet-9",
            description="Backgrounds challenge: 9 superclasses with foreground and background recombined; "
            "BG-gap = accuracy(mixed_same) - accuracy(mixed_rand).",
            citation="Xiao et al., Noise or Signal: The Role of Image Backgrounds in Object Recognition, ICLR 2021",
            task="background",
            label_space="imagenet-9",
            variants=IMAGENET_9_VARIANTS,
            folder_layout="imagenet_9",
            folder_labels="imagenet_9",
            released_size=224,
        ),
        _imagenet(
            "imagenet-sketch",
            "50,889 black-and-white sketches, 50 for each of the 1000 ImageNet classes.",
            "Wang et al., Learning Robust Global Representations by Penalizing Local Predictive Power, NeurIPS 2019",
            task="classification",
            hub_sources=("nateraw/imagenet-sketch",),
        ),
        Benchmark(
            name="cifar10-c",
            description="CIFAR-10 test images under 15 (+4) corruptions at 5 severities.",
            citation=_CORRUPTION_CITATION,
            task="classification",
            label_space="cifar10",
            generated_default="generated:uoft-cs/cifar10",
            corruptions=_corruption_names(),
            severities=(1, 2, 3, 4, 5),
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
            label_space="cifar100",
            generated_default="generated:uoft-cs/cifar100",
            corruptions=_corruption_names(),
            severities=(1, 2, 3, 4, 5),
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
            label_space="cifar10",
            hub_sources=("uoft-cs/cifar10",),
            splits=("train", "test"),
            folder_labels="names",
            released_size=32,
        ),
        Benchmark(
            name="cifar100",
            description="CIFAR-100 test set, 10,000 32x32 images of 100 fine classes.",
            citation="Krizhevsky, Learning Multiple Layers of Features from Tiny Images, 2009",
            task="classification",
            label_space="cifar100",
            hub_sources=("uoft-cs/cifar100",),
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
            label_space="cifar100",
            hub_sources=("uoft-cs/cifar100",),
            splits=("train",),
            folder_labels="names",
            released_size=32,
            split="train",
            hub_schemas_from="cifar100",
        ),
    )
}


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
    key = str(name).strip().lower().replace("_", "-")
    if key not in BENCHMARKS:
        raise ValueError(f"Unknown benchmark {name!r}; known benchmarks: {', '.join(BENCHMARKS)}")
    return BENCHMARKS[key]


# ---------------------------------------------------------------------------------------------------------------
# Wrappers


class LimitedSource(Source):
    """The first `limit` raw samples of another source (ones that then fail to decode included, so positions stay
    the same whatever fails to decode). Shares the inner source's skip report."""

    def __init__(self, inner: Source, limit: int) -> None:
        super().__init__()
        if limit < 0:
            raise ValueError(f"limit must be >= 0, got {limit}")
        self.inner = inner
        self.limit = limit
        self.report = inner.report

    def validate(self) -> None:
        self.inner.validate()

    def raw_samples(self) -> Iterator[RawSample]:
        return itertools.islice(self.inner.raw_samples(), self.limit)

    def describe(self) -> dict[str, Any]:
        return {**self.inner.describe(), "limit": self.limit}


class CellLimitedSource(Source):
    """The first `limit` raw samples of every cell of another source: a (corruption, severity) of ImageNet-C and
    CIFAR-C, a perturbation of ImageNet-P, a variant of ImageNet-9. `--limit` on a multi-cell benchmark thus keeps
    every cell (a complete mCE table on few images) instead of the first cells only. The rest of a full cell is
    passed over without decoding; a Hub repository or split that holds a single cell stops being read. Shares the
    inner source's skip report."""

    CELL_KEYS = ("corruption", "severity", "perturbation", "difficulty", "variant")

    def __init__(self, inner: Source, limit: int) -> None:
        super().__init__()
        if limit < 0:
            raise ValueError(f"limit must be >= 0, got {limit}")
        self.inner = inner
        self.limit = limit
        self.report = inner.report
        if hasattr(inner, "rows_per_cell_part"):
            inner.rows_per_cell_part = limit

    def validate(self) -> None:
        self.inner.validate()

    def raw_samples(self) -> Iterator[RawSample]:
        counts: dict[tuple[Any, ...], int] = {}
        for raw in self.inner.raw_samples():
            cell = tuple(raw.metadata.get(key) for key in self.CELL_KEYS)
            seen = counts.get(cell, 0)
            if seen < self.limit:
                counts[cell] = seen + 1
                yield raw

    def describe(self) -> dict[str, Any]:
        return {**self.inner.describe(), "limit_per_cell": self.limit}


class ImageNetOSource(Source):
    """ImageNet-O's two halves: its out-of-distribution images (`NO_LABEL`, is_ood=True), then, when given, the
    in-distribution ImageNet validation images of ImageNet-O's 200 classes (ImageNet-1k labels, is_ood=False;
    images of other classes are left out, not counted as skipped). Sample ids are prefixed "ood/" and "id/"."""

    def __init__(self, ood: Source, in_distribution: Source | None = None) -> None:
        super().__init__()
        self.ood = ood
        self.in_distribution = in_distribution
        self.classes = imagenet_o_classes()
        for inner in (ood, in_distribution):
            if inner is not None:
                inner.report = self.report

    def validate(self) -> None:
        self.ood.validate()
        if self.in_distribution is not None:
            self.in_distribution.validate()

    def raw_samples(self) -> Iterator[RawSample]:
        for raw in self.ood.raw_samples():
            metadata = {**raw.metadata, "is_ood": True}
            yield RawSample(raw.data, NO_LABEL, f"ood/{raw.sample_id}", metadata)
        if self.in_distribution is None:
            return
        keep = set(self.classes.class_indices)
        for raw in self.in_distribution.raw_samples():
            if raw.label is None or raw.label in keep:
                yield RawSample(raw.data, raw.label, f"id/{raw.sample_id}", {**raw.metadata, "is_ood": False})

    def describe(self) -> dict[str, Any]:
        described = {"kind": "imagenet-o", "ood": self.ood.describe(), "generated": False}
        described["location"] = described["ood"].get("location")
        if self.in_distribution is not None:
            described["in_distribution"] = self.in_distribution.describe()
        return described


# ---------------------------------------------------------------------------------------------------------------
# Resolving a source string


def parse_hub_spec(spec: str) -> tuple[str, str | None, str | None]:
    """ "org/name:config@revision" -> ("org/name", "config", "revision"); both suffixes optional."""
    path, revision = spec, None
    if "@" in path:
        path, revision = path.rsplit("@", 1)
    config = None
    if ":" in path:
        path, config = path.split(":", 1)
    return path, config or None, revision or None


def _first_signal(root: str, kinds: Sequence[str], max_depth: int = 4) -> str | None:
    """The kind of data a folder holds (one of `kinds`: "mp4", "npy", "parquet", "image"), from the first such file
    a depth-first walk meets; only one branch is listed per level, so an ImageNet-C tree costs a handful of
    directory reads."""
    path = root
    for _ in range(max_depth + 1):
        with os.scandir(path) as entries:
            items = sorted(entries, key=lambda e: e.name)
        for entry in items:
            if entry.is_file():
                extension = os.path.splitext(entry.name)[1].lower()
                kind = "image" if extension in IMAGE_FILE_EXTENSIONS else extension[1:]
                if kind in kinds:
                    return kind
        subdirs = [e.path for e in items if e.is_dir() and not e.name.startswith(".")]
        if not subdirs:
            return None
        path = subdirs[0]
    return None


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


def _check_label_space(bench: Benchmark, schema: HubSchema | None, spec: str) -> None:
    """A Hub schema (given, or named by the source's path) must read the benchmark's label space: a copy of
    another benchmark's data would be scored against labels of another numbering."""
    owner = BENCHMARKS.get(schema.benchmark) if schema is not None else None
    if owner is not None and owner.label_space != bench.label_space:
        raise SchemaError(
            f"{spec}: schema {schema.name} reads {schema.repo}, labelled in the {owner.label_space} label space "
            f"({owner.name}); {bench.name} is scored in the {bench.label_space} label space."
        )


def _parquet_source(bench: Benchmark, spec: str, schema: HubSchema | None, kwargs: dict[str, Any]) -> Source:
    named = _match_path_or_parent(spec)
    _check_label_space(bench, schema or (named.schema if named else None), spec)
    return ParquetSource(spec, schema, **kwargs)


def resolve_source(
    benchmark: Benchmark | str,
    spec: str | os.PathLike,
    *,
    split: str | None = None,
    streaming: bool = True,
    corruptions: Sequence[str] | None = None,
    severities: Sequence[int] | None = None,
    variant: str | Sequence[str] | None = None,
    schema: HubSchema | str | None = None,
    difficulty: int | None = None,
    seed: int = 0,
    unavailable: str = "error",
    release_encoding: str | None = None,
) -> Source:
    """The `Source` a user's source string names for `benchmark` (see the module docstring for the forms).

    For "generated:" ImageNet-P, `variant` (or `corruptions`) names the perturbations (default the 10 test ones)
    and `difficulty` (default 1) the difficulty. `unavailable`: "error" or "skip" for the corruption/severity parts
    a Hub family is not known to publish (see `HubSource`). `release_encoding`: how "generated:" images are stored
    (see `RELEASE_ENCODINGS`): ImageNet-C "jpeg-85" (default: saved and reloaded as JPEG quality 85, as the
    released files were) or "none"; ImageNet-P "none" (default) or "h264" (the release's video compression,
    approximated); CIFAR-C "none" only (its release is uint8 arrays). `split` defaults to the benchmark's own
    (`benchmark_split`: "train" for imagenet-train and cifar100-train, which read imagenet-val's and cifar100's Hub
    schemas); a parquet folder then keeps the files whose names say that split (or no split)."""
    bench = get_benchmark(benchmark) if isinstance(benchmark, str) else benchmark
    spec = os.fspath(spec)
    split = benchmark_split(bench, split)
    if isinstance(schema, str):
        schema = get_hub_schema(schema)
    variants = [variant] if isinstance(variant, str) else (list(variant) if variant is not None else None)
    selection = {"corruptions": corruptions, "severities": severities}

    if spec.startswith("generated:"):
        if bench.generated_from is None:
            raise ValueError(
                f"{bench.name} cannot be generated; 'generated:' works for ImageNet-C, ImageNet-P and CIFAR-C."
            )
        from .generated import GeneratedCorruptionSource, GeneratedPerturbationSource

        clean_spec = spec[len("generated:") :]
        clean = load_benchmark(bench.generated_from, clean_spec or None, streaming=streaming)
        encoding = release_encoding or RELEASE_ENCODINGS[bench.name][0]
        if encoding not in RELEASE_ENCODINGS[bench.name]:
            raise ValueError(
                f"{bench.name}: release_encoding {encoding!r} is not one of "
                f"{', '.join(RELEASE_ENCODINGS[bench.name])}."
            )
        if bench.task == "sequence":
            return GeneratedPerturbationSource(
                clean,
                perturbations=variants or corruptions,
                difficulty=1 if difficulty is None else difficulty,
                seed=seed,
                video_encoding=encoding,
            )
        # CIFAR keeps its 32x32 images, as arrays; ImageNet takes the reference's resize-256/crop-224 and JPEG-85.
        if bench.label_space.startswith("cifar"):
            sizes: dict[str, Any] = {"resize": None, "crop": None, "jpeg_quality": None}
        else:
            sizes = {} if encoding == "jpeg-85" else {"jpeg_quality": None}
        return GeneratedCorruptionSource(
            clean, corruptions=corruptions, severities=severities, seed=seed, **sizes
        )

    if spec == BUILTIN_SOURCE:
        if bench.name != "imagenet-val":
            hint = (
                " Use 'generated:builtin' to corrupt or perturb it on the fly."
                if bench.generated_from == "imagenet-val"
                else ""
            )
            raise SchemaError(
                f"'builtin' (the bundled sample of ImageNet-labelled photos) is a source of imagenet-val only, not "
                f"of {bench.name}.{hint}"
            )
        return BuiltinPhotosSource()

    candidates = bench.hub_schemas
    parquet = {"candidates": candidates, "streaming": streaming, "split": split, **selection}
    if os.path.exists(spec):
        if os.path.isfile(spec):
            if spec.endswith(".parquet"):
                return _parquet_source(bench, spec, schema, parquet)
            raise SchemaError(f"{spec}: a file; expected a folder or a .parquet file.")
        if schema is not None or match_schema(spec, candidates) is not None:
            named = match_schema(spec)
            _check_label_space(bench, schema or (named.schema if named else None), spec)
            return HubSource(
                spec,
                schema,
                split=split,
                candidates=candidates,
                streaming=streaming,
                unavailable=unavailable,
                **selection,
            )
        kinds = ["parquet", "image"]
        kinds += ["mp4"] if bench.task == "sequence" else []
        kinds += ["npy"] if bench.generated_from in ("cifar10", "cifar100") else []
        signal = _first_signal(spec, kinds)
        if signal == "mp4":
            from .imagenet_p import ImageNetPVideoSource

            return ImageNetPVideoSource(spec, perturbations=variants or corruptions, difficulty=difficulty)
        if signal == "npy":
            from .cifar_c import CifarCArraySource

            return CifarCArraySource(spec, dataset=bench.name, **selection)
        if signal == "parquet":
            return _parquet_source(bench, spec, schema, parquet)
        if bench.folder_layout is None:
            raise SchemaError(f"{spec}: {bench.name} is read from its released files, not an image folder.")
        return ImageFolderSource(
            spec,
            layout=bench.folder_layout,
            labels=bench.folder_labels,
            class_subset=bench.class_subset if bench.folder_labels == "wnid" else None,
            class_names=bench.class_names if bench.folder_labels == "names" else None,
            variants=variants if bench.folder_layout == "imagenet_9" else None,
            **(selection if bench.folder_layout == "corruption_severity" else {}),
        )

    path, config, revision = parse_hub_spec(spec)
    if "/" not in path:
        raise SchemaError(f"{spec!r} is neither an existing local path nor a Hub id 'org/name'.")
    matched = match_schema(path)
    _check_label_space(bench, schema or (matched.schema if matched else None), spec)
    return HubSource(
        path,
        schema,
        revision=revision,
        config=config,
        split=split,
        candidates=candidates,
        streaming=streaming,
        unavailable=unavailable,
        **selection,
    )


def load_benchmark(
    name: str,
    source: str | os.PathLike | Source | None = None,
    *,
    split: str | None = None,
    streaming: bool = True,
    corruptions: Sequence[str] | None = None,
    severities: Sequence[int] | None = None,
    variant: str | Sequence[str] | None = None,
    limit: int | None = None,
    in_distribution: str | os.PathLike | Source | None = None,
    schema: HubSchema | str | None = None,
    difficulty: int | None = None,
    seed: int = 0,
    unavailable: str = "error",
    release_encoding: str | None = None,
) -> Source:
    """A streaming `Source` of benchmark `name`.

    source: a Hub id, local folder, parquet file/folder, "generated:<clean source>", "builtin" (imagenet-val: the
        bundled photos), or a ready `Source`; default: the benchmark's first known Hub copy.
    corruptions / severities: ImageNet-C and CIFAR-C selection; `variant`: ImageNet-9 variants or ImageNet-P
        perturbations; `difficulty`: ImageNet-P.
    in_distribution: ImageNet-O only: the ImageNet validation source whose images of ImageNet-O's 200 classes
        form the in-distribution half ("default" for ILSVRC/imagenet-1k); without it only the OOD images come.
    schema: a `HubSchema` (or its name) for a Hub id or folder whose name does not identify it.
    seed: seeds "generated:" corruptions.
    unavailable: "error" (default) or "skip": what to do with requested corruption/severity parts that a Hub
        family is not known to publish ("skip" leaves them out and records them in `describe()["unavailable"]`).
    release_encoding: how "generated:" images are stored (`RELEASE_ENCODINGS[name]`, the default first): ImageNet-C
        "jpeg-85" (as the released files) or "none"; ImageNet-P "none" or "h264"; CIFAR-C "none".
    limit: at most this many samples: the first `limit` rows/files handed to the decoder, in order (one that
        fails to decode still uses its place, so positions do not depend on what decodes).
    """
    bench = get_benchmark(name)
    if corruptions is not None and bench.corruptions:
        unknown = [c for c in corruptions if c not in bench.corruptions]
        if unknown:
            raise ValueError(
                f"{bench.name}: unknown corruption {unknown[0]!r}; known: {', '.join(bench.corruptions)}"
            )
    if severities is not None and any(int(s) not in (1, 2, 3, 4, 5) for s in severities):
        raise ValueError(f"severities must be in 1..5, got {list(severities)}")
    if in_distribution is not None and bench.name != "imagenet-o":
        raise ValueError("in_distribution= is only for imagenet-o.")

    if isinstance(source, Source):
        resolved = source
    else:
        if source is None:
            if bench.default_source is None:
                raise SchemaError(
                    f"{bench.name} has no known Hub copy: pass a local folder of its released files as source."
                )
            source = bench.default_source
        resolved = resolve_source(
            bench,
            source,
            split=split,
            streaming=streaming,
            corruptions=corruptions,
            severities=severities,
            variant=variant,
            schema=schema,
            difficulty=difficulty,
            seed=seed,
            unavailable=unavailable,
            release_encoding=release_encoding,
        )
    if bench.name == "imagenet-o":
        half = None
        if in_distribution is not None:
            half = load_benchmark(
                "imagenet-val", None if in_distribution == "default" else in_distribution, streaming=streaming
            )
        resolved = ImageNetOSource(resolved, half)
    if limit is not None:
        resolved = LimitedSource(resolved, limit)
    return resolved


__all__ = [
    "BENCHMARKS",
    "RELEASE_ENCODINGS",
    "TASKS",
    "Benchmark",
    "CellLimitedSource",
    "ImageNetOSource",
    "LimitedSource",
    "benchmark_split",
    "get_benchmark",
    "load_benchmark",
    "parse_hub_spec",
    "resolve_source",
]
