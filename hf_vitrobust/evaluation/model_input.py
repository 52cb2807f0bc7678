# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""A benchmark's preprocessing and interpolation protocols applied to one model (`model_input`): the protocols are
named and described in `analysis.protocols` and docs/protocols.md; and a run's model with how it reads each benchmark
(`ModelEntry`)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..analysis.pairings import Pairing
from ..analysis.protocols import (
    DEFAULT_INTERPOLATION,
    INTERPOLATION_PROTOCOLS,
    PARK_KIM_NOTEBOOK,
    PREPROCESSING_PROTOCOLS,
    resize_kernel,
)
from ..constants import IMAGENET_DEFAULT_MEAN, IMAGENET_DEFAULT_STD
from ..data import Benchmark
from ..models.classifier import Classifier, Preprocessing
from ..probes.spec import ProbeNotApplicable, get_probe

if TYPE_CHECKING:
    from .suite import SuiteProbe

logger = logging.getLogger(__name__)

#: The side and resize of the Hendrycks scripts' transform.
_REFERENCE_RESIZE, _REFERENCE_CROP = 256, 224
#: The interpolation protocols without antialiasing -> their `Preprocessing.quantize`.
_BILINEAR_QUANTIZE = {"tf-bilinear": None, "cv2-bilinear-uint8": "opencv", "tf-bilinear-uint8": "truncate"}


@dataclass(frozen=True)
class ModelInput:
    """How one model reads one benchmark: the classifier (a view on the same weights at the protocol's input size)
    and what was applied, for results.json."""

    classifier: Classifier
    requested: str
    applied: str
    note: str | None = None
    preprocessing: dict[str, Any] = field(default_factory=dict)
    pairing: str | None = None  # why a suite's pairing chose `requested` for this model
    interpolation: str = DEFAULT_INTERPOLATION

    @property
    def kernel(self) -> str:
        """The resize kernel this model saw (`analysis.protocols.resize_kernel`)."""
        return resize_kernel(self.preprocessing)

    def to_dict(self) -> dict[str, Any]:
        return {
            "requested": self.requested,
            "pairing": self.pairing,
            "applied": self.applied,
            "interpolation": self.interpolation,
            "kernel": self.kernel,
            "input_size": list(self.classifier.input_size),
            "preprocessing": self.preprocessing,
            "note": self.note,
        }


def park_kim_notebook_preprocessing() -> Preprocessing:
    """Park & Kim's feature-map input (`fourier_analysis.ipynb` cell 9): PIL's `Image.resize((224, 224))`, bicubic
    (Pillow's default), no crop, then ImageNet's mean/std, whatever the model's own normalisation."""
    side = (_REFERENCE_CROP, _REFERENCE_CROP)
    return Preprocessing(
        input_size=side,
        resize_size=side,
        interpolation="bicubic",
        mean=IMAGENET_DEFAULT_MEAN,
        std=IMAGENET_DEFAULT_STD,
    )


def _native_resize(preprocessing: Preprocessing) -> Preprocessing:
    return Preprocessing(
        input_size=preprocessing.input_size,
        resize_size=preprocessing.input_size,
        interpolation=preprocessing.interpolation,
        mean=preprocessing.mean,
        std=preprocessing.std,
    )


def with_interpolation(preprocessing: Preprocessing, interpolation: str) -> Preprocessing:
    """`preprocessing` resized with the kernel of the interpolation protocol `interpolation`: "model-own" keeps it,
    "pil-bilinear" is PIL's antialiased bilinear, "tf-bilinear" TensorFlow's (`Preprocessing(antialias=False)`), and
    the 8-bit resizes of Paul & Chen's Cutout notebooks "cv2-bilinear-uint8" (OpenCV, rounded) and
    "tf-bilinear-uint8" (TensorFlow's, truncated) (`Preprocessing.quantize`)."""
    if interpolation == "model-own":
        return preprocessing
    if interpolation == "pil-bilinear":
        return replace(preprocessing, interpolation="bilinear", antialias=True, quantize=None)
    if interpolation in _BILINEAR_QUANTIZE:
        quantize = _BILINEAR_QUANTIZE[interpolation]
        return replace(preprocessing, interpolation="bilinear", antialias=False, quantize=quantize)
    raise ValueError(
        f"Unknown interpolation protocol {interpolation!r}; known: {', '.join(INTERPOLATION_PROTOCOLS)}."
    )


def model_input(
    benchmark: Benchmark,
    preprocessing: str,
    classifier: Classifier,
    *,
    pairing: Pairing | None = None,
    interpolation: str = DEFAULT_INTERPOLATION,
) -> ModelInput:
    """The preprocessing protocol `preprocessing` applied to `classifier` for `benchmark` (see the module
    docstring), resized with the kernel of `interpolation` (`with_interpolation`); `pairing`: the suite's pairing
    that chose the preprocessing for this model, recorded; its interpolation, where it names one, replaces the
    default "model-own" (a benchmark's explicit other kernel wins). Raises ValueError before any work when the model
    cannot run under it ("resize256-crop224", "squash-224" or "park-kim-notebook" for a model that does not run at
    224 pixels);
    "as-released" falls back to "native-resize" for such a model."""
    own = classifier.preprocessing
    if pairing is not None and pairing.interpolation is not None and interpolation == DEFAULT_INTERPOLATION:
        interpolation = pairing.interpolation
    if interpolation not in INTERPOLATION_PROTOCOLS:
        raise ValueError(
            f"Unknown interpolation protocol {interpolation!r}; known: {', '.join(INTERPOLATION_PROTOCOLS)}."
        )

    def made(chosen: Preprocessing, applied: str, note: str | None = None) -> ModelInput:
        if not chosen.crop_only:
            chosen = with_interpolation(chosen, interpolation)
        view = classifier.with_preprocessing(chosen, renormalise=applied == PARK_KIM_NOTEBOOK)
        why = pairing and pairing.why
        return ModelInput(view, preprocessing, applied, note, chosen.to_dict(), why, interpolation)

    if preprocessing == "model-native":
        return made(own, "model-native")
    if preprocessing == "native-resize":
        return made(_native_resize(own), "native-resize")
    if preprocessing in ("resize256-crop224", "squash-224", PARK_KIM_NOTEBOOK):
        if preprocessing == "resize256-crop224":
            chosen = Preprocessing(
                input_size=_REFERENCE_CROP,
                resize_size=_REFERENCE_RESIZE,
                interpolation="bilinear",
                mean=own.mean,
                std=own.std,
            )
        elif preprocessing == PARK_KIM_NOTEBOOK:
            chosen = park_kim_notebook_preprocessing()
        else:
            side = (_REFERENCE_CROP, _REFERENCE_CROP)
            chosen = Preprocessing(
                input_size=side, resize_size=side, interpolation=own.interpolation, mean=own.mean, std=own.std
            )
        if not classifier.accepts_input_size(chosen.input_size):
            raise ValueError(
                f"{classifier.name} does not run at 224x224 pixels, which {preprocessing} feeds it; use "
                "model-native or native-resize for this model."
            )
        return made(chosen, preprocessing)
    if preprocessing != "as-released":
        raise ValueError(
            f"Unknown preprocessing protocol {preprocessing!r}; known: {', '.join(PREPROCESSING_PROTOCOLS)}."
        )
    size = benchmark.released_size
    if size is None:
        raise ValueError(
            f"{benchmark.name} is not released pre-cropped: it has no as-released preprocessing."
        )
    released = Preprocessing(
        input_size=size, crop_only=True, interpolation=own.interpolation, mean=own.mean, std=own.std
    )
    if classifier.accepts_input_size(released.input_size):
        note = None
        if released.input_size != own.input_size:
            note = (
                f"fed at the release's {size}x{size} pixels, not the model's own "
                f"{own.input_size[0]}x{own.input_size[1]} (as Paul & Chen fed their BiT-M models)"
            )
        return made(released, "as-released", note)
    note = (
        f"{classifier.name} runs only at its own {own.input_size[0]}x{own.input_size[1]} pixels: the "
        f"{size}-pixel images were resized to it (native-resize)"
    )
    logger.warning("%s: %s.", benchmark.name, note)
    return made(_native_resize(own), "native-resize", note)


@dataclass
class ModelEntry:
    """One model of a run: its key and spec, the benchmarks it is not scored on (and why), how it reads each of the
    others (`ModelInput`), and the probes that cannot run on it (and why)."""

    key: str
    spec: str
    classifier: Classifier
    skipped: dict[str, str] = field(default_factory=dict)  # benchmark -> why this model is not scored on it
    inputs: dict[str, ModelInput] = field(default_factory=dict)  # benchmark -> how the model reads it
    not_run: dict[str, str] = field(default_factory=dict)  # probe -> why it cannot run on this model

    def describe(self) -> dict[str, Any]:
        module = self.classifier.module
        return {
            "key": self.key,
            "spec": self.spec,
            "name": self.classifier.name,
            "kind": self.classifier.kind,
            "num_classes": self.classifier.num_classes,
            "input_size": list(self.classifier.input_size),
            "num_parameters": int(sum(p.numel() for p in module.parameters())),
            # The dtype the weights were stored in and the one the model ran in (the benchmark passes add the
            # run's `precision` autocast on top).
            "stored_dtype": self.classifier.stored_dtype,
            "run_dtype": str(self.classifier.dtype).removeprefix("torch."),
        }

    def check_probes(self, probes: Sequence[SuiteProbe]) -> None:
        """Before any work: each probe's params against the input size this model reads the probe's benchmark at
        (a ValueError naming the model and the probe: a value out of range fails now, not after the benchmarks), and
        whether the probe can run on this model at all (where not, the reason goes to `not_run`: recorded as not
        run, and the run goes on)."""
        for probe in probes:
            if probe.benchmark not in self.inputs:
                continue
            task = get_probe(probe.name)
            classifier = self.inputs[probe.benchmark].classifier
            try:
                task.check_for_input(probe.params, tuple(classifier.input_size))
            except ValueError as error:
                raise ValueError(f"{self.spec}: {error}") from None
            try:
                task.check_applicable(classifier, probe.params)
            except ProbeNotApplicable as reason:
                self.not_run[probe.name] = str(reason)


__all__ = ["ModelInput", "model_input", "with_interpolation"]
