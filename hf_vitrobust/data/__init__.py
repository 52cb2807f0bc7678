# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Benchmark data: every benchmark as a streaming `Source` of decoded `Sample`s in one label space, whatever holds
it (a Hub dataset, a local image folder, parquet files, CIFAR-C arrays, ImageNet-P videos, generated corruptions).

    from hf_vitrobust.data import load_benchmark
    for sample in load_benchmark("imagenet-r", "axiong/imagenet-r", limit=8):
        ...
"""

from importlib import import_module
from typing import Any

from .benchmarks import BENCHMARKS, OPTION_NAMES, RELEASE_ENCODINGS, Benchmark, benchmark_split, get_benchmark
from .builtin import BuiltinPhotosSource
from .class_lists import (
    IMAGENET_9_CLASSES,
    IMAGENET_9_VARIANTS,
    ClassSubset,
    imagenet_9_folder_name,
    imagenet_a_classes,
    imagenet_o_classes,
    imagenet_r_classes,
    imagenet_to_imagenet_9,
)
from .decoding import BadSampleError, DecodedImage, decode_image
from .hub import HubSource
from .hub_docs import hub_sources_markdown
from .hub_labels import (
    CIFAR10_CLASSES,
    CIFAR100_CLASSES,
    CLASS_NAME_VARIANTS,
    ClassNameVariant,
    register_class_name_variant,
)
from .hub_parquet import ParquetSource
from .hub_schemas import (
    HUB_SCHEMAS,
    UNSTREAMABLE_REPOS,
    Evidence,
    HubSchema,
    UnstreamableRepo,
    check_streamable,
    get_hub_schema,
    hub_schemas_for,
    match_schema,
    register_hub_schema,
    register_unstreamable_repo,
)
from .imagenet_3dcc import IMAGENET_3DCC_CORRUPTIONS, IMAGENET_3DCC_GROUPS  # registers imagenet-3dcc
from .imagenet_c_bar import IMAGENET_C_BAR  # noqa: F401  (registers imagenet-c-bar)
from .loading import ImageNetOSource, load_benchmark, parse_hub_spec, resolve_source
from .local import ImageFolderSource
from .samples import (
    NO_LABEL,
    CellLimitedSource,
    LimitedSource,
    RawSample,
    Sample,
    SchemaError,
    SkipReport,
    Source,
)

# Sources of released arrays/videos and of generated corruptions live in their own modules and are imported on
# first use, so that importing the package does not need PyAV.
_LAZY = {
    "ImageNetPVideoSource": ".imagenet_p",
    "CifarCArraySource": ".cifar_c",
    "GeneratedCorruptionSource": ".generated",
    "GeneratedPerturbationSource": ".generated",
    "GeneratedSource": ".generated",
    "CorruptionRecipe": ".generated",
    "PerturbationRecipe": ".generated",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "BENCHMARKS",
    "OPTION_NAMES",
    "RELEASE_ENCODINGS",
    "CIFAR10_CLASSES",
    "CIFAR100_CLASSES",
    "CLASS_NAME_VARIANTS",
    "HUB_SCHEMAS",
    "UNSTREAMABLE_REPOS",
    "IMAGENET_9_CLASSES",
    "IMAGENET_9_VARIANTS",
    "IMAGENET_3DCC_CORRUPTIONS",
    "IMAGENET_3DCC_GROUPS",
    "NO_LABEL",
    "BadSampleError",
    "Benchmark",
    "CellLimitedSource",
    "BuiltinPhotosSource",
    "ClassNameVariant",
    "ClassSubset",
    "DecodedImage",
    "Evidence",
    "HubSchema",
    "HubSource",
    "ImageFolderSource",
    "ImageNetOSource",
    "LimitedSource",
    "ParquetSource",
    "RawSample",
    "Sample",
    "SchemaError",
    "SkipReport",
    "Source",
    "UnstreamableRepo",
    "benchmark_split",
    "check_streamable",
    "decode_image",
    "get_benchmark",
    "get_hub_schema",
    "hub_schemas_for",
    "hub_sources_markdown",
    "imagenet_9_folder_name",
    "imagenet_a_classes",
    "imagenet_o_classes",
    "imagenet_r_classes",
    "imagenet_to_imagenet_9",
    "load_benchmark",
    "match_schema",
    "parse_hub_spec",
    "register_class_name_variant",
    "register_hub_schema",
    "register_unstreamable_repo",
    "resolve_source",
    *_LAZY,
]
