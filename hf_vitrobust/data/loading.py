# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Where the benchmarks' data comes from: a user's source string -> a streaming `Source`.

The benchmarks themselves are `Benchmark` specs in `benchmarks.py`. `load_benchmark(name, source)` turns a user's
source string (`--data BENCHMARK=SOURCE`) into a streaming `Source`:

- a Hub id, "org/name", optionally "org/name:config" and/or "org/name@revision" -> `HubSource` with the
  repository's registered `HubSchema` (or the first of the benchmark's schemas that fits its features);
- a local folder laid out like a known Hub repository ("<dir>/Tsomaros/ImageNet-C-fog-severity_4") ->
  `HubSource` on that folder, so a downloaded copy and the Hub id behave identically;
- a clip-benchmark WebDataset copy ("clip-benchmark/wds_imagenet-a", or a folder with `test/nshards.txt`) ->
  `WebDatasetSource` (`webdataset`);
- a local folder of .mp4 files -> `ImageNetPVideoSource`; of .npy files -> `CifarCArraySource`; of .parquet files
  or a .parquet file -> `ParquetSource`; otherwise an image folder in the benchmark's official layout;
- "generated:<clean source>" -> `GeneratedCorruptionSource` (ImageNet-C, CIFAR-C) or `GeneratedPerturbationSource`
  (ImageNet-P) over the clean benchmark;
- "builtin" (imagenet-val) -> `BuiltinPhotosSource`, the bundled sample of real photos; so "generated:builtin" makes
  ImageNet-C and ImageNet-P of it, offline.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import Any

from .benchmarks import BENCHMARKS, RELEASE_ENCODINGS, Benchmark, benchmark_split, get_benchmark
from .builtin import BUILTIN_SOURCE, BuiltinPhotosSource
from .class_lists import imagenet_o_classes
from .decoding import IMAGE_FILE_EXTENSIONS
from .hub import HubSource
from .hub_copies import webdataset_source
from .hub_parquet import ParquetSource, _match_path_or_parent
from .hub_schemas import HubSchema, get_hub_schema, match_schema
from .imagenet_v2 import imagenet_v2_source
from .local import ImageFolderSource
from .objectnet import ObjectNetSource
from .samples import NO_LABEL, RawSample, SchemaError, Source

# ---------------------------------------------------------------------------------------------------------------
# Wrappers


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

    def validate_shards(self, shards: Sequence[int]) -> None:
        num_ood = len(self.ood.shards())
        self.ood.validate_shards([s for s in shards if s < num_ood])
        if self.in_distribution is not None:
            self.in_distribution.validate_shards([s - num_ood for s in shards if s >= num_ood])

    def raw_samples(self) -> Iterator[RawSample]:
        yield from self._ood_rows(self.ood.raw_samples())
        if self.in_distribution is not None:
            yield from self._in_distribution_rows(self.in_distribution.raw_samples())

    def _ood_rows(self, rows: Iterator[RawSample]) -> Iterator[RawSample]:
        for raw in rows:
            yield RawSample(raw.data, NO_LABEL, f"ood/{raw.sample_id}", {**raw.metadata, "is_ood": True})

    def _in_distribution_rows(self, rows: Iterator[RawSample]) -> Iterator[RawSample]:
        keep = set(self.classes.class_indices)
        for raw in rows:
            if raw.label is None or raw.label in keep:
                yield RawSample(raw.data, raw.label, f"id/{raw.sample_id}", {**raw.metadata, "is_ood": False})

    def shards(self) -> tuple[str, ...]:
        """The out-of-distribution half's shards ("ood/..."), then the in-distribution half's ("id/...")."""
        halves = [("ood", self.ood), ("id", self.in_distribution)]
        return tuple(
            f"{name}/{shard}" for name, half in halves if half is not None for shard in half.shards()
        )

    def shard_raw_samples(self, index: int) -> Iterator[RawSample]:
        num_ood = len(self.ood.shards())
        if index < num_ood:
            return self._ood_rows(self.ood.shard_raw_samples(index))
        if self.in_distribution is None:
            raise IndexError(f"ImageNet-O has {num_ood} shards; there is no shard {index}.")
        return self._in_distribution_rows(self.in_distribution.shard_raw_samples(index - num_ood))

    @property
    def reads_on_decode(self) -> bool:
        halves = [half for half in (self.ood, self.in_distribution) if half is not None]
        return all(half.reads_on_decode for half in halves)

    def describe(self) -> dict[str, Any]:
        described = {"kind": "imagenet-o", "ood": self.ood.describe(), "generated": False}
        described["location"] = described["ood"].get("location")
        if self.in_distribution is not None:
            described["in_distribution"] = self.in_distribution.describe()
        return described

    def limited(self, limit: int, per_cell: bool = False) -> Source:
        """per_cell: the first `limit` images of each half (both stay present: AUPR needs both); else the first
        `limit` samples of the stream."""
        if not per_cell:
            return super().limited(limit)
        half = None if self.in_distribution is None else self.in_distribution.limited(limit)
        return ImageNetOSource(self.ood.limited(limit), half)

    def sampled(self, limit: int, seed: int, per_cell: bool = False) -> Source:
        """per_cell: a random `limit` of each half (both stay present); else a random `limit` of the stream."""
        if not per_cell:
            return super().sampled(limit, seed)
        half = None if self.in_distribution is None else self.in_distribution.sampled(limit, seed)
        return ImageNetOSource(self.ood.sampled(limit, seed), half)

    @property
    def countable(self) -> bool:
        return self.ood.countable and (self.in_distribution is None or self.in_distribution.countable)


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

    bench.check_source(spec)
    if bench.folder_layout == "imagenet_v2":
        return imagenet_v2_source(spec, variants[0] if variants else None)
    copy = webdataset_source(bench.name, spec)
    if copy is not None:
        return copy
    if bench.folder_layout == "objectnet":
        return ObjectNetSource(spec)
    if spec.startswith("generated:"):
        from .generated import GeneratedCorruptionSource, GeneratedPerturbationSource

        clean_spec = spec[len("generated:") :]
        clean = load_benchmark(bench.generated_from, clean_spec or None, streaming=streaming)
        encoding = release_encoding or RELEASE_ENCODINGS[bench.name][0]
        if encoding not in RELEASE_ENCODINGS[bench.name]:
            raise ValueError(
                f"{bench.name}: release_encoding {encoding!r} is not one of "
                f"{', '.join(RELEASE_ENCODINGS[bench.name])}."
            )
        own = bench.own_generated_source(clean, selection, seed, encoding)
        if own is not None:
            return own
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
        own = bench.own_folder_source(spec, selection)
        if own is not None:
            return own
        return ImageFolderSource(
            spec,
            layout=bench.folder_layout,
            labels=bench.folder_labels,
            class_subset=bench.class_subset if bench.folder_labels == "wnid" else None,
            class_names=bench.class_names if bench.folder_labels == "names" else None,
            variants=variants if bench.folder_layout == "imagenet_9" else None,
            **(
                {**selection, "corruption_names": bench.corruptions}
                if bench.folder_layout == "corruption_severity"
                else {}
            ),
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
    if (
        corruptions is not None
        and variant is None
        and "corruptions" not in bench.option_names
        and bench.variants
    ):
        variant, corruptions = corruptions, None  # ImageNet-P's perturbations may be given as `corruptions`
    given = {
        "split": split,
        "schema": schema,
        "corruptions": corruptions,
        "severities": severities,
        "variant": variant,
        "difficulty": difficulty,
        "in_distribution": in_distribution,
    }
    try:
        checked = bench.check_options(
            {key: value for key, value in given.items() if value is not None},
            source if isinstance(source, str | os.PathLike) else None,
        )
    except ValueError as error:
        raise ValueError(f"{bench.name}: {error}") from None
    corruptions, severities = checked.get("corruptions"), checked.get("severities")
    variant = checked.get("variant")

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
    if bench.in_distribution_from is not None:
        half = None
        if in_distribution is not None:
            half = load_benchmark(
                bench.in_distribution_from,
                None if in_distribution == "default" else in_distribution,
                streaming=streaming,
            )
        resolved = ImageNetOSource(resolved, half)
    if limit is not None:
        resolved = resolved.limited(limit)
    return resolved


__all__ = ["ImageNetOSource", "load_benchmark", "parse_hub_spec", "resolve_source"]
