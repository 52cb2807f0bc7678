# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""A paper's pairings: the preprocessing each of its models had on each benchmark, read from the published table.

Paul & Chen fed each model in its own way: the BiT-M TF-Hub models squashed to 224 pixels in every notebook
(`tf.image.resize(image, (224, 224))`: "squash-224"), the vit_jax ViTs squashed to their 384 pixels on ImageNet-A/R/O
("native-resize"), the 224-pixel ViTs of the probes at 224; all of these with TensorFlow's bilinear resize
("tf-bilinear") where the rows name it. The published table (`analysis.published`) records, per
number, its checkpoint (`model_id`) and its preprocessing. A suite with `pairing: <paper>` gives each model of a run
that preprocessing benchmark by benchmark (`model_pairing`), and `vitrobust reproduce` plans its legs from the same
rows (`row_preprocessing`), so both feed a model alike for the same number. A probe's number sets the preprocessing
of the benchmark its images come from.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ..data import get_benchmark
from ..models.loading import checkpoint_identity
from ..probes.spec import PROBES
from .published import PAPERS, PublishedNumber, published_numbers


@dataclass(frozen=True)
class Pairing:
    """The preprocessing a paper gave one model on one benchmark, its resize kernel where the rows name one (the
    interpolation protocol, else None: the model's own), and which published rows say so."""

    preprocessing: str
    why: str
    interpolation: str | None = None


def row_preprocessing(row: PublishedNumber, probe_benchmark: str) -> tuple[str, str | None]:
    """The benchmark whose images a published number reads (its own, or for a probe's number its condition's
    dataset, else `probe_benchmark`) and the preprocessing it names there (None where it names none or "other")."""
    benchmark = row.benchmark
    if benchmark in PROBES.names():
        benchmark = row.conditions.get("dataset") or probe_benchmark
    preprocessing = row.protocol_parts.get("preprocessing")
    return benchmark, None if preprocessing in (None, "other") else preprocessing


def row_interpolation(row: PublishedNumber) -> str | None:
    """The interpolation protocol a published number names (None where it names none or "other")."""
    interpolation = row.protocol_parts.get("interpolation")
    return None if interpolation in (None, "other") else interpolation


#: The 8-bit resizes Paul & Chen's Cutout notebooks applied before the hole (`analysis.protocols`).
_BEFORE_THE_HOLE = ("cv2-bilinear-uint8", "tf-bilinear-uint8")


def _one_interpolation(rows: Iterable[PublishedNumber]) -> str | None:
    """The interpolation all `rows` name, or None where one names none or two differ; rows whose kernel is none of
    this package's ("other": no choice can match them) are left out, and so are the Cutout notebooks' 8-bit resizes
    before the hole (the holed images' own kernel, not how the model reads the benchmark: `reproduce` gives those
    rows a leg of their own)."""
    named = {row.protocol_parts.get("interpolation") for row in rows} - {"other", *_BEFORE_THE_HOLE}
    return next(iter(named)) if len(named) == 1 else None


def pair_model_keys(pair: Mapping[str, str]) -> tuple[str, str] | None:
    """The published table's keys of a suite pair's two models: its `vit_key` and `cnn_key` where it names them (a
    pair named for readers, "vit-ti/resnet-50-cifar100"), else its name VIT_KEY/CNN_KEY; None for an unnamed pair."""
    names = str(pair.get("name") or "").split("/")
    if len(names) != 2:
        return None
    return str(pair.get("vit_key") or names[0]), str(pair.get("cnn_key") or names[1])


def paper_model_keys(paper: str, spec: str, model_pairs: Iterable[Mapping[str, str]] = ()) -> tuple[str, ...]:
    """The keys of `paper`'s models that `spec` stands for: those whose numbers were made with its weights, and
    those a suite's model pair names it for (a pair "vit-l16/bit-m-r101x3" with vit: SPEC)."""
    identity = checkpoint_identity(spec)
    keys = [row.model_key for row in published_numbers(paper) if row.model_id == identity]
    for pair in model_pairs:
        names = pair_model_keys(pair)
        if names is not None:
            keys += [key for key, role in zip(names, ("vit", "cnn"), strict=True) if pair.get(role) == spec]
    return tuple(dict.fromkeys(keys))


def model_pairing(
    paper: str,
    spec: str,
    probe_benchmarks: Mapping[str, str],
    benchmarks: Iterable[str] = (),
    model_pairs: Iterable[Mapping[str, str]] = (),
) -> dict[str, Pairing]:
    """benchmark -> the preprocessing `paper` gave model `spec` there: from the rows made with `spec`'s very weights,
    else from the rows of the paper's models `spec` stands for (`paper_model_keys`). A benchmark whose rows disagree,
    or that no row names, is left out (the suite's choice applies). `probe_benchmarks`: probe -> the benchmark its
    images come from (imagenet-val for a probe not listed). Where the paper has no number of the model on one of
    `benchmarks` (or a probe's benchmark) of unreleased image size, and feeds it one way on all others, that way.
    Each pairing carries the interpolation its rows all name (None where they name none or differ)."""
    if paper not in PAPERS:
        raise ValueError(f"Unknown paper {paper!r}; papers: {', '.join(PAPERS)}.")
    keys = paper_model_keys(paper, spec, model_pairs)
    identity = checkpoint_identity(spec)
    rows = [row for row in published_numbers(paper) if row.model_key in keys]
    pairing: dict[str, Pairing] = {}
    for own_weights in (True, False):
        found: dict[str, dict[str, list[PublishedNumber]]] = {}
        for row in rows:
            if (row.model_id == identity) != own_weights:
                continue
            benchmark, preprocessing = row_preprocessing(
                row, probe_benchmarks.get(row.benchmark, "imagenet-val")
            )
            if preprocessing is not None and benchmark not in pairing:
                found.setdefault(benchmark, {}).setdefault(preprocessing, []).append(row)
        for benchmark, choices in found.items():
            if len(choices) != 1:
                continue
            (preprocessing, chosen), *_ = choices.items()
            whose = "its weights" if own_weights else f"{'/'.join(keys)} (other weights)"
            interpolation = _one_interpolation(chosen)
            named = f"; resized with {interpolation}" if interpolation else ""
            backing = f"{len(chosen)} rows, e.g." if len(chosen) > 1 else "1 row:"
            pairing[benchmark] = Pairing(
                preprocessing,
                f"{paper} pairing: {preprocessing}, as the published numbers of {whose} "
                f"({backing} {chosen[0].row_id}){named}",
                interpolation,
            )
    # Where the paper has no number of this model, its one way of feeding images of any size (BiT-M: squash-224
    # in every notebook) applies to the benchmarks of such images.
    resized = {
        (p.preprocessing, p.interpolation)
        for b, p in pairing.items()
        if get_benchmark(b).released_size is None
    }
    if len({preprocessing for preprocessing, _ in resized}) == 1:
        preprocessing = next(iter(resized))[0]
        interpolation = next(iter(resized))[1] if len(resized) == 1 else None
        named = f"; resized with {interpolation}" if interpolation else ""
        for benchmark in (*probe_benchmarks.values(), *benchmarks):
            if benchmark not in pairing and get_benchmark(benchmark).released_size is None:
                pairing[benchmark] = Pairing(
                    preprocessing,
                    f"{paper} pairing: {preprocessing}, as every published number of {'/'.join(keys)} on images "
                    f"of any size (none on this benchmark){named}",
                    interpolation,
                )
    return pairing


__all__ = [
    "Pairing",
    "model_pairing",
    "pair_model_keys",
    "paper_model_keys",
    "row_interpolation",
    "row_preprocessing",
]
