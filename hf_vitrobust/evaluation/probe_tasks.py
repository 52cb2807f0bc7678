# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Every probe of `hf_vitrobust.probes` as a task the evaluation runner can cut into chunks and merge.

The runner picks a probe's images from a benchmark's clean samples (`select_images`), cuts them into chunks of
fixed composition (chunk k = images [k C, (k + 1) C), C = `ProbeTask.chunk_length(params)`), calls `task.run(...)`
on each chunk, possibly in different processes, saves each returned PARTIAL with `torch.save`, and on rank 0 calls
`task.merge(partials_in_chunk_order)`. The MERGED dict has the keys and meaning of the probe's
`ProbeResult.to_dict()` on all the images in one call (values equal up to float summation order), plus
"num_images", so 1 process and N processes give the same results.

How each probe merges:
- means over images (occlusion, Fourier heat map, frequency noise, lesion, loss landscape, feature variance): a
  partial holds its chunk's means and its image count; the merge takes the count-weighted mean.
- feature Fourier: a partial holds the per-layer sums of the per-image log-amplitude profiles
  (`probes.features.log_amplitude_sums`); the merge divides by the total and subtracts the zero frequency.
- DeepFool: per-image success, L2 norm, iterations, clean correctness and target are concatenated; the DCT energy
  spectrum is 10 log10 of (the summed squared DCT coefficients) / (the number of images they sum: the correctly
  classified ones for the orthonormal spectrum, all of them for the notebook's), i.e. the same average as the
  one-call probe (`deepfool_energy_sum`). The perturbations themselves (N x 3 x H x W) are not kept.
- PGD loss progression: the runner selects correctly classified images; each chunk attacks all of its images that
  the model classifies correctly; the merge concatenates the per-image losses, recomputes their mean and
  (population) std through `metrics.loss_progression`, and the success rate from the fooled counts.
  `image_indices` become positions in the probe's selected image list.
- Hessian spectrum: a chunk is one mini-batch (`batch_size` images); each chunk's start vectors come from
  `chunk_seed(seed, sample_ids)`, so the numbers do not depend on which process runs the chunk, and the merge
  stacks the per-batch eigenvalues in chunk order.
- CKA: a chunk is one HSIC minibatch (`minibatch_size` images); partials hold the HSIC_1 sums of Nguyen et al.'s
  minibatch CKA and the merge adds them up before normalising. A last chunk of fewer than 4 images cannot form a
  minibatch: it is left out and counted in "unused_images" (the one-call probe would merge it into the previous
  minibatch instead).
- Attention maps and Grad-CAM: per-image maps (N, h, w) are too large to keep for every image; the merged dict
  keeps the maps of the first `max_maps` images (default 8; for attention the per-layer maps of the first
  `max_layer_maps`, default 1) rounded to 4 decimals, and the mean map over all images. The input image of the
  probe's overlay plot is not kept (the runner knows the images by position).

Partials are dicts of str -> CPU tensors, Python numbers, bools, strings, None, lists and dicts, so they load with
`torch.load(path, weights_only=True)`.
"""

from __future__ import annotations

import difflib
import hashlib
import inspect
import logging
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from ..data.image_lists import IMAGE_LISTS, check_image_list, file_name, image_list, match_image_list
from ..metrics.loss_progression import loss_progression
from ..models.classifier import Classifier
from ..models.imagenet import imagenet_wnid_to_index
from ..probes import (
    AttentionMapsResult,
    DeepFoolResult,
    FeatureFourierResult,
    FeatureSimilarityResult,
    FeatureVarianceResult,
    FourierHeatmapResult,
    FrequencyNoiseResult,
    GradCAMResult,
    HessianSpectrumResult,
    LesionResult,
    LossLandscapeResult,
    OcclusionResult,
    PGDLossResult,
    ProbeInputs,
    ProbeResult,
    attention_maps,
    deepfool_spectrum,
    feature_fourier,
    feature_similarity,
    feature_variance,
    fourier_heatmap,
    frequency_noise,
    gradcam,
    hessian_spectrum,
    lesion_study,
    loss_landscape,
    occlusion_sweep,
    pgd_loss_progression,
    prepare_inputs,
)
from ..probes.attention import ROLLOUT_NORMALIZATIONS
from ..probes.augmentation import TRAINING_AUGMENTATIONS
from ..probes.base import DEFAULT_BATCH_SIZE, check_batch_size, check_seed, json_safe, predict_logits
from ..probes.deepfool import deepfool_energy_sum
from ..probes.features import (
    FREQUENCY_BINS,
    NYQUIST_BINS,
    RESIDUAL_SUMS,
    check_frequency_bins,
    feature_fourier_result,
    log_amplitude_sums,
)
from ..probes.frequency_noise import EPSILON_UNITS
from ..probes.hessian import EIGEN_METHODS, REGULARIZERS
from ..probes.loss_landscape import AUGMENTATION_DRAWS, L2_TERMS, LOSS_AVERAGES, NORMALIZATIONS
from ..probes.occlusion import HOLE_RULES
from ..probes.pgd import RECORDS
from ..probes.similarity import (
    DEFAULT_MINIBATCH_SIZE,
    MIN_MINIBATCH_SIZE,
    accumulate_minibatch_cka,
    cka_from_hsic,
)
from ..probes.spectra import SPECTRA

SELECTIONS = ("random", "correct", "first")
# A selection "image-list:<name>" takes the images of a shipped list (`hf_vitrobust.data.image_lists`) by file name.
IMAGE_LIST_SELECTION = "image-list:"
# Keyword arguments of the probe functions that the runner sets itself.
RUNNER_KEYS = frozenset({"seed", "limit", "sample_ids"})
MAP_DECIMALS = 4


class ProbeNotApplicable(ValueError):
    """The probe cannot run on this classifier (e.g. attention maps of a CNN); the runner skips it and says why."""


# ------------------------------------------------------------------------------------------------ image selection
def _hash_rank(seed: int, sample_id: str) -> int:
    digest = hashlib.blake2b(f"{seed}/{sample_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def select_images(
    selection: str,
    num_images: int | None,
    sample_ids: Sequence[str],
    labels: np.ndarray | Sequence[int] | None = None,
    predictions: np.ndarray | Sequence[int] | None = None,
    seed: int = 0,
) -> np.ndarray:
    """Positions (int64) of a probe's images among a benchmark's clean samples (fewer if fewer are available).

    "random": `num_images` drawn uniformly without replacement: the samples ranked by a keyed hash (BLAKE2b of
        f"{seed}/{sample_id}"), the smallest taken, returned in ascending position. Which samples are drawn depends
        only on the seed and the set of sample ids, not on their order, the batch size or the number of processes.
    "correct": the first `num_images` positions whose prediction equals the label (labels >= 0), in stream order.
    "first": the first `num_images` positions.
    "image-list:<name>": the samples whose file names the list names (`select_listed_images`), in its order.
    num_images None: every eligible sample.
    """
    if not (isinstance(selection, str) and selection.startswith(IMAGE_LIST_SELECTION)) and (
        selection not in SELECTIONS
    ):
        raise ValueError(f"selection must be one of {SELECTIONS}, got {selection!r}.")
    if num_images is not None and (
        isinstance(num_images, bool) or not isinstance(num_images, int | np.integer)
    ):
        raise ValueError(f"num_images must be a positive int or None, got {num_images!r}.")
    if num_images is not None and num_images < 1:
        raise ValueError(f"num_images must be a positive int or None, got {num_images!r}.")
    check_seed(seed)
    if selection.startswith(IMAGE_LIST_SELECTION):
        return select_listed_images(selection[len(IMAGE_LIST_SELECTION) :], num_images, sample_ids, labels)
    ids = [str(sample_id) for sample_id in sample_ids]
    n = len(ids)
    count = n if num_images is None else min(int(num_images), n)
    if selection == "first":
        return np.arange(count, dtype=np.int64)
    if selection == "random":
        ranks = sorted(
            range(n), key=lambda position: (_hash_rank(seed, ids[position]), ids[position], position)
        )
        return np.sort(np.asarray(ranks[:count], dtype=np.int64))
    if labels is None or predictions is None:
        raise ValueError('selection "correct" needs the labels and the model\'s predictions.')
    labels = np.asarray(labels)
    predictions = np.asarray(predictions)
    if labels.shape != (n,) or predictions.shape != (n,):
        raise ValueError(
            f"labels and predictions must have shape ({n},), got {labels.shape} and {predictions.shape}."
        )
    correct = np.flatnonzero((labels >= 0) & (predictions == labels))
    return correct[:count].astype(np.int64)


def select_listed_images(
    list_name: str,
    num_images: int | None,
    sample_ids: Sequence[str],
    labels: np.ndarray | Sequence[int] | None = None,
) -> np.ndarray:
    """Positions (int64) of the samples a shipped image list names, matched by file name, in the list's order,
    each image once (the first `num_images` of them; None: all).

    Paul & Chen's occlusion notebooks ran on a fixed list ("paul-chen-occlusion-1k"); the list's entries are
    "val/<wnid>/ILSVRC2012_val_XXXXXXXX.JPEG" and a sample matches by the last part of its sample id (local
    ImageNet folders keep the file names). Listed images the data lacks are counted in a warning (and the merged
    result's "image_list"), not silently dropped. Raises ValueError for an unknown list, for sources whose sample
    ids carry no file names (Hub and parquet rows, "row-000123"), and when a matched sample's label is not the
    class of the list's <wnid> (another data set).
    """
    entries = image_list(check_image_list(list_name))
    ids = [str(sample_id) for sample_id in sample_ids]
    match = match_image_list(entries, ids)
    if match.missing:
        logging.getLogger(__name__).warning(
            "Image list %r: %d of its %d images are not in the data (e.g. %s); the probe runs on the other %d.",
            list_name,
            len(match.missing),
            match.unique,
            ", ".join(match.missing[:3]),
            len(match.positions),
        )
    positions = np.asarray(match.positions, dtype=np.int64)
    if labels is not None:
        to_index = imagenet_wnid_to_index()
        labels = np.asarray(labels)
        wnids = [(entry.split("/")[-2:-1] or [""])[0] for entry in match.entries]
        listed = np.asarray([to_index.get(wnid, -1) for wnid in wnids], dtype=np.int64)
        found = labels[positions]
        wrong = np.flatnonzero((found >= 0) & (listed >= 0) & (found != listed))
        if len(wrong):
            first = int(wrong[0])
            raise ValueError(
                f"Image list {list_name!r}: {len(wrong)} matched samples have another label than the list's class "
                f"(e.g. {file_name(match.entries[first])}: label {int(found[first])}, listed as {wnids[first]} = "
                f"{int(listed[first])}); is this ImageNet-1k validation?"
            )
    return positions if num_images is None else positions[: int(num_images)]


def chunk_seed(seed: int, sample_ids: torch.Tensor | Sequence[int]) -> int:
    """A 53-bit seed for one chunk from the probe seed and the chunk's sample ids (BLAKE2b), the same in every
    process: chunk-level randomness (the Hessian's start vectors) never depends on the process or chunk index."""
    ids = torch.as_tensor(sample_ids, dtype=torch.int64).cpu().tolist()
    key = f"{check_seed(seed)}/" + ",".join(str(i) for i in ids)
    return int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "big") >> 11


# ------------------------------------------------------------------------------------------------ helpers
def _rounded(maps: torch.Tensor) -> list:
    return torch.round(maps.detach().double().cpu(), decimals=MAP_DECIMALS).tolist()


def _total(partials: Sequence[Mapping[str, Any]]) -> int:
    return sum(int(p["num_images"]) for p in partials)


def _weighted_mean(partials: Sequence[Mapping[str, Any]], key: str) -> torch.Tensor:
    """The image-count-weighted mean of a per-chunk mean (a number, list or tensor), float64."""
    total = _total(partials)
    acc = sum(torch.as_tensor(p[key], dtype=torch.float64) * int(p["num_images"]) for p in partials)
    return acc / total


def _same(partials: Sequence[Mapping[str, Any]], key: str) -> Any:
    """A setting every chunk shares (layers, ratios, eps, ...); chunks that disagree cannot be merged."""
    first = partials[0][key]
    for partial in partials[1:]:
        value = partial[key]
        equal = (
            torch.equal(torch.as_tensor(first), torch.as_tensor(value))
            if isinstance(first, torch.Tensor)
            else value == first
        )
        if not equal:
            raise ValueError(
                f"Partials disagree on {key!r} ({first!r} vs {value!r}); they come from different runs."
            )
    return first


# ------------------------------------------------------------------------------------------------ the task type
PartialFn = Callable[[Classifier, ProbeInputs, int, dict[str, Any]], dict[str, Any]]
MergeFn = Callable[[list[Mapping[str, Any]]], dict[str, Any]]


@dataclass(frozen=True)
class ProbeTask:
    """A probe as a unit of the runner: how its images are selected, how it runs on a chunk and how chunks merge.

    name: registry key; probe: the `hf_vitrobust.probes` function; result_type: its result class.
    selection: "random", "correct" or "first" (see `select_images`); chunk_size: default images per chunk
        (`chunk_length` gives the chunk for given params: one Hessian mini-batch, one CKA minibatch).
    needs_labels: the probe measures accuracy or a loss; labels of -1 (no label) are an error then, and are
        dropped (None) for probes that only use labels when present. uses_labels False: the probe never reads
        labels (attention maps, feature statistics, CKA) and gets None.
    default_params: task settings added to the user's params (e.g. max_maps); excluded_params: probe keywords the
        runner owns, with the reason; extra_params: task settings that are not probe keywords.
    choices: the named options of a param (a protocol switch such as `method` or `hole`) and their valid values,
        checked when a suite is read, before any work.
    """

    name: str
    probe: Callable[..., ProbeResult]
    result_type: type[ProbeResult]
    selection: str
    chunk_size: int
    needs_labels: bool
    partial_fn: PartialFn = field(repr=False)
    merge_fn: MergeFn = field(repr=False)
    default_params: Mapping[str, Any] = field(default_factory=dict)
    excluded_params: Mapping[str, str] = field(default_factory=dict)
    extra_params: tuple[str, ...] = ()
    chunk_param: str | None = None
    chunk_default: int | None = None
    applicable_fn: Callable[[Classifier, dict[str, Any]], None] | None = field(default=None, repr=False)
    uses_labels: bool = True
    selection_fn: Callable[[Mapping[str, Any]], str] | None = field(default=None, repr=False)
    choices: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)

    def selection_for(self, params: Mapping[str, Any] | None) -> str:
        """The image selection for these params: `selection`, unless the protocol the params choose selects its own
        (PGD under Paul & Chen's notebook record: a random draw, of which the correct ones are attacked)."""
        return self.selection if self.selection_fn is None else self.selection_fn(params or {})

    @property
    def accepted_params(self) -> list[str]:
        """The keyword arguments a suite may set: the probe function's keyword-only arguments (minus what the
        runner sets) and the task's own settings."""
        names = [
            name
            for name, parameter in inspect.signature(self.probe).parameters.items()
            if parameter.kind is inspect.Parameter.KEYWORD_ONLY
            and name not in RUNNER_KEYS
            and name not in self.excluded_params
        ]
        return names + [name for name in self.extra_params if name not in names]

    def check_params(self, params: Mapping[str, Any] | None) -> dict[str, Any]:
        """The params to run with (`default_params` updated by `params`); unknown keys are a ValueError naming
        them and the accepted ones, before any work."""
        params = {} if params is None else params
        if not isinstance(params, Mapping):
            raise ValueError(f"Params of probe {self.name!r} must be a mapping, got {type(params).__name__}.")
        accepted = self.accepted_params
        unknown = [key for key in params if key not in accepted]
        if unknown:
            reasons = [
                f"{key!r} is set by the runner ({self.excluded_params[key]})"
                for key in unknown
                if key in self.excluded_params
            ]
            hints = [
                f"{key!r}: did you mean {matches[0]!r}?"
                for key in unknown
                if isinstance(key, str) and (matches := difflib.get_close_matches(key, accepted, n=1))
            ]
            detail = "; ".join(reasons + hints)
            raise ValueError(
                f"Unknown parameter(s) {[str(key) for key in unknown]} for probe {self.name!r}"
                f"{' (' + detail + ')' if detail else ''}; accepted: {accepted}."
            )
        for key, valid in self.choices.items():
            if key in params and params[key] not in valid:
                close = difflib.get_close_matches(str(params[key]), [str(v) for v in valid], n=1)
                hint = f" Did you mean {close[0]!r}?" if close else ""
                raise ValueError(
                    f"Probe {self.name!r}: {key} must be one of {list(valid)}, got {params[key]!r}.{hint}"
                )
        return {**self.default_params, **params}

    def chunk_length(self, params: Mapping[str, Any] | None = None) -> int:
        """Images per chunk for these params: `params[chunk_param]` where the chunk is a unit of the measurement
        (Hessian: `batch_size`; CKA: `minibatch_size`), else `chunk_size`."""
        if self.chunk_param is None:
            return self.chunk_size
        value = (params or {}).get(self.chunk_param, self.chunk_default)
        check_batch_size(value)
        return int(value)

    def check_applicable(self, classifier: Classifier, params: Mapping[str, Any] | None = None) -> None:
        """Raise `ProbeNotApplicable` when the probe cannot run on `classifier` (before any image is loaded)."""
        if self.applicable_fn is not None:
            self.applicable_fn(classifier, dict(params or {}))

    def run(
        self,
        classifier: Classifier,
        pixels: torch.Tensor,
        labels: torch.Tensor | None,
        sample_ids: torch.Tensor,
        seed: int,
        params: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """The PARTIAL of one chunk: pixels (n, 3, H, W) float in [0, 1] at the classifier's input size, labels
        (n,) (-1 = none) or None, sample_ids (n,) unique int64 ids keying each image's randomness."""
        params = self.check_params(params)
        seed = check_seed(seed)
        if not self.uses_labels:
            labels = None
        if labels is not None:
            labels = torch.as_tensor(labels, dtype=torch.int64)
            if bool((labels < 0).any()):
                if self.needs_labels:
                    raise ValueError(
                        f"Probe {self.name!r} needs labels, but {int((labels < 0).sum())} of the images have none."
                    )
                labels = None
        if labels is None and self.needs_labels:
            raise ValueError(f"Probe {self.name!r} needs labels.")
        inputs = prepare_inputs(
            classifier, pixels, labels, sample_ids=sample_ids, require_labels=self.needs_labels
        )
        partial = self.partial_fn(classifier, inputs, seed, params)
        return {"task": self.name, "num_images": len(inputs), **partial}

    def merge(self, partials: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """The MERGED JSON-safe dict from the partials of all chunks, in chunk order."""
        partials = list(partials)
        if not partials:
            raise ValueError(f"No partials to merge for probe {self.name!r}.")
        for partial in partials:
            if not isinstance(partial, Mapping) or partial.get("task") != self.name:
                found = partial.get("task") if isinstance(partial, Mapping) else type(partial).__name__
                raise ValueError(f"A partial of {found!r} cannot be merged into probe {self.name!r}.")
        merged = self.merge_fn(partials)
        merged.setdefault("num_images", _total(partials))
        return json_safe({"probe": self.result_type.probe_name(), **merged})


def _probe_kwargs(params: Mapping[str, Any], task_keys: Sequence[str] = ()) -> dict[str, Any]:
    return {key: value for key, value in params.items() if key not in task_keys}


# ------------------------------------------------------------------------------------------------ occlusion
# Task setting "image_list": run on the images of a shipped list (Paul & Chen's "paul-chen-occlusion-1k"), matched
# by file name, instead of a random draw.
_OCCLUSION_TASK_KEYS = ("image_list",)


def _occlusion_image_list(params: Mapping[str, Any]) -> str | None:
    name = params.get("image_list")
    return None if name is None else check_image_list(name)


def _occlusion_selection(params: Mapping[str, Any]) -> str:
    name = _occlusion_image_list(params)
    return "random" if name is None else IMAGE_LIST_SELECTION + name


def _occlusion_partial(classifier: Classifier, inputs: ProbeInputs, seed: int, params: dict) -> dict:
    result = occlusion_sweep(
        classifier,
        inputs.pixels,
        inputs.labels,
        seed=seed,
        sample_ids=inputs.sample_ids,
        **_probe_kwargs(params, _OCCLUSION_TASK_KEYS),
    )
    return {
        "ratios": list(result.ratios),
        "accuracy": torch.tensor(result.accuracy, dtype=torch.float64),
        "confidence": torch.tensor(result.confidence, dtype=torch.float64),
        "true_class_probability": torch.tensor(result.true_class_probability, dtype=torch.float64),
        "seed": result.seed,
        "hole": result.hole,
        "image_list": _occlusion_image_list(params),
    }


def _occlusion_merge(partials: list) -> dict:
    merged = {
        "ratios": _same(partials, "ratios"),
        "accuracy": _weighted_mean(partials, "accuracy"),
        "confidence": _weighted_mean(partials, "confidence"),
        "true_class_probability": _weighted_mean(partials, "true_class_probability"),
        "num_samples": _total(partials),
        "seed": _same(partials, "seed"),
        "hole": _same(partials, "hole"),
    }
    name = _same(partials, "image_list")
    if name is not None:
        # Each listed image is evaluated once; "not_evaluated": listed images the data lacks (or beyond num_images).
        unique = len({file_name(entry) for entry in image_list(name)})
        merged["image_list"] = {
            "name": name,
            "listed": len(image_list(name)),
            "unique": unique,
            "not_evaluated": unique - merged["num_samples"],
        }
    return merged


# ------------------------------------------------------------------------------------------------ Fourier heat map
def _fourier_partial(classifier: Classifier, inputs: ProbeInputs, seed: int, params: dict) -> dict:
    result = fourier_heatmap(
        classifier, inputs.pixels, inputs.labels, seed=seed, sample_ids=inputs.sample_ids, **params
    )
    return {
        "error_map": torch.as_tensor(np.asarray(result.error_map, dtype=np.float64)),
        "frequencies": list(result.frequencies),
        "eps": float(result.eps),
        "window": int(result.window),
        "clean_error": float(result.clean_error),
        "evaluated_cells": int(result.evaluated_cells),
        "seed": int(result.seed),
    }


def _fourier_merge(partials: list) -> dict:
    return {
        "error_map": _weighted_mean(partials, "error_map"),
        "frequencies": _same(partials, "frequencies"),
        "eps": _same(partials, "eps"),
        "window": _same(partials, "window"),
        "clean_error": float(_weighted_mean(partials, "clean_error")),
        "num_images": _total(partials),
        "evaluated_cells": _same(partials, "evaluated_cells"),
        "seed": _same(partials, "seed"),
    }


# ------------------------------------------------------------------------------------------------ frequency noise
def _frequency_noise_partial(classifier: Classifier, inputs: ProbeInputs, seed: int, params: dict) -> dict:
    result = frequency_noise(
        classifier, inputs.pixels, inputs.labels, seed=seed, sample_ids=inputs.sample_ids, **params
    )
    return {
        "frequencies": list(result.frequencies),
        "clean_accuracy": float(result.clean_accuracy),
        "accuracy": torch.tensor(result.accuracy, dtype=torch.float64),
        "bandwidth": result.bandwidth,
        "epsilon": result.epsilon,
        "equal_energy": result.equal_energy,
        "seed": result.seed,
        "band": result.band,
        "epsilon_units": result.epsilon_units,
        "pixel_magnitude": list(result.pixel_magnitude or []),
    }


def _frequency_noise_merge(partials: list) -> dict:
    clean = _weighted_mean(partials, "clean_accuracy")
    accuracy = _weighted_mean(partials, "accuracy")
    return {
        "frequencies": _same(partials, "frequencies"),
        "clean_accuracy": float(clean),
        "accuracy": accuracy,
        "accuracy_drop": clean - accuracy,
        "bandwidth": _same(partials, "bandwidth"),
        "epsilon": _same(partials, "epsilon"),
        "equal_energy": _same(partials, "equal_energy"),
        "num_samples": _total(partials),
        "seed": _same(partials, "seed"),
        "band": _same(partials, "band"),
        "epsilon_units": _same(partials, "epsilon_units"),
        "pixel_magnitude": _same(partials, "pixel_magnitude"),
    }


# ------------------------------------------------------------------------------------------------ DeepFool
def _deepfool_partial(classifier: Classifier, inputs: ProbeInputs, seed: int, params: dict) -> dict:
    result: DeepFoolResult = deepfool_spectrum(classifier, inputs.pixels, inputs.labels, seed=seed, **params)
    # What the spectrum averages, as a sum over this chunk's images, and how many images it sums.
    energy_sum, energy_images = deepfool_energy_sum(
        result.perturbations, result.clean_correct, result.spectrum
    )
    return {
        "success": result.success.cpu(),
        "l2_norms": result.l2_norms.cpu(),
        "iterations": result.iterations.cpu(),
        "clean_correct": result.clean_correct.cpu(),
        "labels": result.labels.cpu(),
        "energy_sum": energy_sum.cpu(),
        "energy_images": int(energy_images),
        "spectrum": result.spectrum,
        "steps": result.steps,
        "candidates": result.candidates,
        "overshoot": result.overshoot,
    }


def _deepfool_merge(partials: list) -> dict:
    success = torch.cat([p["success"] for p in partials])
    norms = torch.cat([p["l2_norms"] for p in partials])
    clean_correct = torch.cat([p["clean_correct"] for p in partials])
    fooled = success & clean_correct
    attacked = int(clean_correct.sum())
    energy_sum = sum(p["energy_sum"] for p in partials)
    energy_images = sum(int(p["energy_images"]) for p in partials)
    energy_db = (
        10.0 * torch.log10(energy_sum / energy_images)
        if energy_images
        else torch.full_like(energy_sum, math.nan)
    )
    success_rate = int(fooled.sum()) / attacked if attacked else math.nan
    return {
        "success": success,
        "l2_norms": norms,
        "iterations": torch.cat([p["iterations"] for p in partials]),
        "clean_correct": clean_correct,
        "labels": torch.cat([p["labels"] for p in partials]),
        "success_rate": success_rate,
        "mean_l2": float(norms[fooled].double().mean()) if bool(fooled.any()) else math.nan,
        "energy_db": energy_db,
        "steps": _same(partials, "steps"),
        "candidates": _same(partials, "candidates"),
        "overshoot": _same(partials, "overshoot"),
        "spectrum": _same(partials, "spectrum"),
    }


# ------------------------------------------------------------------------------------------------ PGD
def _pgd_partial(classifier: Classifier, inputs: ProbeInputs, seed: int, params: dict) -> dict:
    batch_size = params.get("batch_size", DEFAULT_BATCH_SIZE)
    check_batch_size(batch_size)
    correct = predict_logits(classifier, inputs.pixels, batch_size).argmax(dim=1) == inputs.labels
    if not bool(correct.any()):
        # Nothing to attack in this chunk (the runner selects correct images; other precisions may disagree).
        return {"losses": None, "image_indices": torch.zeros(0, dtype=torch.int64), "num_fooled": 0}
    result: PGDLossResult = pgd_loss_progression(
        classifier,
        inputs.pixels,
        inputs.labels,
        seed=seed,
        sample_ids=inputs.sample_ids,
        num_images=None,
        **params,
    )
    return {
        "losses": result.losses.cpu(),
        "image_indices": result.image_indices.cpu(),
        "num_fooled": round(result.success_rate * result.num_images),
        "method": result.method,
        "eps": result.eps,
        "step_size": result.step_size,
        "steps": result.steps,
        "random_start": result.random_start,
        "record": result.record,
    }


def _pgd_merge(partials: list) -> dict:
    offsets = np.cumsum([0] + [int(p["num_images"]) for p in partials])[:-1]
    attacked = [
        (p, int(offset)) for p, offset in zip(partials, offsets, strict=True) if p["losses"] is not None
    ]
    if not attacked:
        raise ValueError(
            "PGD: the model classifies none of the selected images correctly: nothing was attacked."
        )
    chosen = [p for p, _ in attacked]
    losses = torch.cat([p["losses"] for p in chosen])
    steps = _same(chosen, "steps")
    step_ids = torch.arange(losses.shape[1]).expand_as(losses)  # steps + 1 values, or steps for the notebook
    curve = loss_progression(step_ids.reshape(-1).numpy(), losses.reshape(-1).double().numpy())
    return {
        "method": _same(chosen, "method"),
        "eps": _same(chosen, "eps"),
        "step_size": _same(chosen, "step_size"),
        "steps": steps,
        "random_start": _same(chosen, "random_start"),
        "record": _same(chosen, "record"),
        "loss_mean": curve.loss_mean,
        "loss_std": curve.loss_std,
        "losses": losses,
        "image_indices": torch.cat([p["image_indices"] + offset for p, offset in attacked]),
        "num_images": int(losses.shape[0]),
        "success_rate": sum(int(p["num_fooled"]) for p in chosen) / int(losses.shape[0]),
        "num_selected": _total(partials),
    }


# ------------------------------------------------------------------------------------------------ attention maps
def _attention_partial(classifier: Classifier, inputs: ProbeInputs, seed: int, params: dict) -> dict:
    max_maps, max_layer_maps = int(params["max_maps"]), int(params["max_layer_maps"])
    result: AttentionMapsResult = attention_maps(
        classifier, inputs.pixels, None, seed=seed, **_probe_kwargs(params, ("max_maps", "max_layer_maps"))
    )
    return {
        "maps": result.maps[:max_maps].float().cpu(),
        "map_sum": result.maps.double().sum(dim=0).cpu(),
        "per_layer": {name: maps[:max_layer_maps].float().cpu() for name, maps in result.per_layer.items()},
        "method": result.method,
        "readout": result.readout,
        "head_fusion": result.head_fusion,
        "discard_ratio": result.discard_ratio,
        "normalization": result.normalization,
        "upsampled": result.upsampled,
        "num_prefix_tokens": result.num_prefix_tokens,
        "model": result.model,
        "max_maps": max_maps,
        "max_layer_maps": max_layer_maps,
    }


def _attention_merge(partials: list) -> dict:
    max_maps, max_layer_maps = _same(partials, "max_maps"), _same(partials, "max_layer_maps")
    layers = list(partials[0]["per_layer"])
    return {
        "maps": _rounded(torch.cat([p["maps"] for p in partials])[:max_maps]),
        "per_layer": {
            name: _rounded(torch.cat([p["per_layer"][name] for p in partials])[:max_layer_maps])
            for name in layers
        },
        "mean_map": _rounded(sum(p["map_sum"] for p in partials) / _total(partials)),
        "method": _same(partials, "method"),
        "readout": _same(partials, "readout"),
        "head_fusion": _same(partials, "head_fusion"),
        "discard_ratio": _same(partials, "discard_ratio"),
        "normalization": _same(partials, "normalization"),
        "upsampled": _same(partials, "upsampled"),
        "num_prefix_tokens": _same(partials, "num_prefix_tokens"),
        "model": _same(partials, "model"),
    }


def _attention_applicable(classifier: Classifier, params: dict) -> None:
    if not classifier.has_attention:
        raise ProbeNotApplicable(
            f"attention maps need a model with self-attention (ViT, DeiT, AlterNet); {classifier.name!r} has none "
            "(use gradcam)."
        )


# ------------------------------------------------------------------------------------------------ Grad-CAM
def _gradcam_partial(classifier: Classifier, inputs: ProbeInputs, seed: int, params: dict) -> dict:
    max_maps = int(params["max_maps"])
    target = params.get("target_classes")
    if target is not None and (isinstance(target, bool) or not isinstance(target, int)):
        raise ValueError(
            f"gradcam target_classes must be one class index for every image (or None), got {target!r}."
        )
    result: GradCAMResult = gradcam(
        classifier, inputs.pixels, inputs.labels, seed=seed, **_probe_kwargs(params, ("max_maps",))
    )
    return {
        "cams": result.cams[:max_maps].float().cpu(),
        "cam_sum": result.cams.double().sum(dim=0).cpu(),
        "target_classes": result.target_classes.cpu(),
        "method": result.method,
        "layer": result.layer,
        "module_name": result.module_name,
        "layer_reason": result.layer_reason,
        "target_source": result.target_source,
        "model": result.model,
        "max_maps": max_maps,
    }


def _gradcam_merge(partials: list) -> dict:
    max_maps = _same(partials, "max_maps")
    sources = sorted({p["target_source"] for p in partials})
    return {
        "cams": _rounded(torch.cat([p["cams"] for p in partials])[:max_maps]),
        "mean_cam": _rounded(sum(p["cam_sum"] for p in partials) / _total(partials)),
        "method": _same(partials, "method"),
        "layer": _same(partials, "layer"),
        "module_name": _same(partials, "module_name"),
        "layer_reason": _same(partials, "layer_reason"),
        "target_classes": torch.cat([p["target_classes"] for p in partials]),
        "target_source": sources[0] if len(sources) == 1 else "+".join(sources),
        "model": _same(partials, "model"),
    }


def _gradcam_applicable(classifier: Classifier, params: dict) -> None:
    from ..models.cam_targets import cam_target

    try:
        import pytorch_grad_cam  # noqa: F401
    except ImportError as err:
        raise ProbeNotApplicable(f"gradcam needs the grad-cam package ({err}).") from err
    try:
        cam_target(classifier, params.get("layer"))
    except (ValueError, TypeError) as err:
        raise ProbeNotApplicable(f"gradcam: no target layer in {classifier.name!r}: {err}") from err


# ------------------------------------------------------------------------------------------------ Hessian
def _hessian_partial(classifier: Classifier, inputs: ProbeInputs, seed: int, params: dict) -> dict:
    batch_seed = chunk_seed(seed, inputs.sample_ids)
    params = {"batch_size": len(inputs), **params}
    result: HessianSpectrumResult = hessian_spectrum(
        classifier, inputs.pixels, inputs.labels, seed=batch_seed, **params
    )
    return {
        "eigenvalues": result.eigenvalues.cpu(),
        "bottom_eigenvalues": result.bottom_eigenvalues.cpu(),
        "batch_sizes": list(result.batch_sizes),
        "method": result.method,
        "iterations": result.iterations,
        "weight_decay": result.weight_decay,
        "density_nodes": None if result.density_nodes is None else result.density_nodes.cpu(),
        "density_weights": None if result.density_weights is None else result.density_weights.cpu(),
        "regularizer": result.regularizer,
        "augmentation": result.augmentation,
        "tol": result.tol,
        "power_steps": None if result.power_steps is None else result.power_steps.cpu(),
        "batch_seed": batch_seed,
    }


def _hessian_merge(partials: list) -> dict:
    density = partials[0]["density_nodes"] is not None
    steps = partials[0]["power_steps"] is not None
    return {
        "eigenvalues": torch.cat([p["eigenvalues"] for p in partials]),
        "bottom_eigenvalues": torch.cat([p["bottom_eigenvalues"] for p in partials]),
        "batch_sizes": [size for p in partials for size in p["batch_sizes"]],
        "method": _same(partials, "method"),
        "iterations": _same(partials, "iterations"),
        "weight_decay": _same(partials, "weight_decay"),
        "density_nodes": torch.cat([p["density_nodes"] for p in partials]) if density else None,
        "density_weights": torch.cat([p["density_weights"] for p in partials]) if density else None,
        "regularizer": _same(partials, "regularizer"),
        "augmentation": _same(partials, "augmentation"),
        "tol": _same(partials, "tol"),
        "power_steps": torch.cat([p["power_steps"] for p in partials]) if steps else None,
        "batch_seeds": [p["batch_seed"] for p in partials for _ in p["batch_sizes"]],
    }


def _hessian_applicable(classifier: Classifier, params: dict) -> None:
    if not any(p.requires_grad for p in classifier.parameters()):
        raise ProbeNotApplicable(f"hessian: {classifier.name!r} has no trainable parameters.")


# ------------------------------------------------------------------------------------------------ features
def _check_layers(layers: Any, residual_sums: bool = False) -> list[str] | str | None:
    """None, a non-empty list of names, or (where `residual_sums`: the feature probes) "residual-sums"."""
    if layers is None or (residual_sums and layers == RESIDUAL_SUMS):
        return layers
    if isinstance(layers, str) or not isinstance(layers, Sequence) or not layers:
        also = f", or {RESIDUAL_SUMS!r}" if residual_sums else ""
        raise ValueError(f"layers must be a non-empty list of layer names{also}, got {layers!r}.")
    return [str(name) for name in layers]


def _feature_fourier_partial(classifier: Classifier, inputs: ProbeInputs, seed: int, params: dict) -> dict:
    batch_size = check_batch_size(params.get("batch_size", DEFAULT_BATCH_SIZE))
    frequency_bins = check_frequency_bins(params.get("frequency_bins", NYQUIST_BINS))
    sums, shapes = log_amplitude_sums(
        classifier,
        inputs.pixels,
        _check_layers(params.get("layers"), residual_sums=True),
        batch_size,
        frequency_bins,
    )
    layers = list(sums)
    return {
        "layers": layers,
        "shapes": [list(shapes[name]) for name in layers],
        "sums": [sums[name].cpu() for name in layers],
        "frequency_bins": frequency_bins,
    }


def _feature_fourier_merge(partials: list) -> dict:
    layers = _same(partials, "layers")
    shapes = _same(partials, "shapes")
    # Partials saved before the option existed hold the only bins there were then.
    frequency_bins = _same([{"frequency_bins": NYQUIST_BINS, **p} for p in partials], "frequency_bins")
    sums = {name: sum(p["sums"][i] for p in partials) for i, name in enumerate(layers)}
    result = feature_fourier_result(
        sums, dict(zip(layers, shapes, strict=True)), _total(partials), frequency_bins
    )
    merged = result.to_dict()
    merged.pop("probe")
    return merged


def _feature_variance_partial(classifier: Classifier, inputs: ProbeInputs, seed: int, params: dict) -> dict:
    result: FeatureVarianceResult = feature_variance(classifier, inputs.pixels, None, seed=seed, **params)
    return {
        "layers": list(result.layers),
        "shapes": [list(shape) for shape in result.shapes],
        "variance": torch.tensor(result.variance, dtype=torch.float64),
    }


def _feature_variance_merge(partials: list) -> dict:
    return {
        "layers": _same(partials, "layers"),
        "shapes": _same(partials, "shapes"),
        "variance": _weighted_mean(partials, "variance"),
        "num_images": _total(partials),
    }


def _features_applicable(classifier: Classifier, params: dict) -> None:
    if params.get("layers") == RESIDUAL_SUMS:
        try:
            classifier.residual_sums()
        except (ValueError, TypeError) as err:
            raise ProbeNotApplicable(f"{classifier.name!r} has no known residual sums: {err}") from err
    elif params.get("layers") is None:
        try:
            names = classifier.layer_names()
        except (ValueError, TypeError, NotImplementedError) as err:
            raise ProbeNotApplicable(f"{classifier.name!r} reports no feature layers: {err}") from err
        if not names:
            raise ProbeNotApplicable(f"{classifier.name!r} reports no feature layers.")


# ------------------------------------------------------------------------------------------------ CKA
def _cka_partial(classifier: Classifier, inputs: ProbeInputs, seed: int, params: dict) -> dict:
    minibatch_size = check_batch_size(params.get("minibatch_size", DEFAULT_MINIBATCH_SIZE))
    if minibatch_size < MIN_MINIBATCH_SIZE:
        raise ValueError(
            f"minibatch_size must be at least {MIN_MINIBATCH_SIZE} (unbiased HSIC), got {minibatch_size}."
        )
    batch_size = check_batch_size(params.get("batch_size", DEFAULT_BATCH_SIZE))
    layers = _check_layers(params.get("layers"))
    if len(inputs) < MIN_MINIBATCH_SIZE:
        return {"minibatch_size": minibatch_size, "unused_images": len(inputs), "cross": None}
    accumulator, names, other_names = accumulate_minibatch_cka(
        classifier, inputs.pixels, layers=layers, minibatch_size=minibatch_size, batch_size=batch_size
    )
    cross, self_x, self_y = accumulator.hsic_sums
    return {
        "layers": names,
        "other_layers": other_names,
        "cross": cross.cpu(),
        "self_x": self_x.cpu(),
        "self_y": self_y.cpu(),
        "num_minibatches": accumulator.num_minibatches,
        "minibatch_size": minibatch_size,
        "unused_images": 0,
    }


def _cka_merge(partials: list) -> dict:
    used = [p for p in partials if p["cross"] is not None]
    if not used:
        raise ValueError(
            f"CKA needs a chunk of at least {MIN_MINIBATCH_SIZE} images; no chunk had that many."
        )
    cross = sum(p["cross"] for p in used)
    self_x = sum(p["self_x"] for p in used)
    self_y = sum(p["self_y"] for p in used)
    return {
        "layers": _same(used, "layers"),
        "other_layers": _same(used, "other_layers"),
        "cka": cka_from_hsic(cross, self_x, self_y),
        "minibatch_size": _same(partials, "minibatch_size"),
        "num_minibatches": sum(int(p["num_minibatches"]) for p in used),
        "num_images": _total(used),
        "unused_images": sum(int(p["unused_images"]) for p in partials),
    }


# ------------------------------------------------------------------------------------------------ lesion
def _lesion_partial(classifier: Classifier, inputs: ProbeInputs, seed: int, params: dict) -> dict:
    result: LesionResult = lesion_study(classifier, inputs.pixels, inputs.labels, seed=seed, **params)
    return {
        "units": list(result.units),
        "kinds": list(result.kinds),
        "stages": list(result.stages),
        "indices": list(result.indices),
        "baseline_accuracy": float(result.baseline_accuracy),
        "accuracy": torch.tensor(result.accuracy, dtype=torch.float64),
    }


def _lesion_merge(partials: list) -> dict:
    baseline = _weighted_mean(partials, "baseline_accuracy")
    accuracy = _weighted_mean(partials, "accuracy")
    return {
        "units": _same(partials, "units"),
        "kinds": _same(partials, "kinds"),
        "stages": _same(partials, "stages"),
        "indices": _same(partials, "indices"),
        "baseline_accuracy": float(baseline),
        "accuracy": accuracy,
        "accuracy_drop": baseline - accuracy,
        "num_images": _total(partials),
    }


def _lesion_applicable(classifier: Classifier, params: dict) -> None:
    try:
        units = classifier.residual_units()
    except (ValueError, TypeError) as err:
        raise ProbeNotApplicable(f"lesion: {err}") from err
    if not units:
        raise ProbeNotApplicable(f"lesion: {classifier.name!r} has no residual units to remove.")


# ------------------------------------------------------------------------------------------------ loss landscape
def _landscape_partial(classifier: Classifier, inputs: ProbeInputs, seed: int, params: dict) -> dict:
    # The augmentation of each mini-batch is keyed by its sample ids, so a chunk's numbers do not depend on the
    # process that runs it; with batch_size set, a chunk is one mini-batch (the ProbeTask's chunk_param).
    result: LossLandscapeResult = loss_landscape(
        classifier, inputs.pixels, inputs.labels, seed=seed, sample_ids=inputs.sample_ids, **params
    )
    return {
        "x": result.x.cpu(),
        "y": result.y.cpu(),
        "loss": result.loss.cpu(),
        "accuracy": result.accuracy.cpu(),
        "center_loss": float(result.center_loss),
        "weight_decay": result.weight_decay,
        "l2": result.l2.cpu(),
        "normalization": result.normalization,
        "l2_term": result.l2_term,
        "augmentation": result.augmentation,
        "augmentation_draw": result.augmentation_draw,
        "loss_average": result.loss_average,
        "batch_size": result.batch_size,
        "num_batches": math.ceil(len(inputs) / result.batch_size),
    }


def _landscape_merge(partials: list) -> dict:
    # The L2 term is the same for every chunk, so a weighted mean of (NLL + term) is (mean NLL + term). The NLL of
    # loss_average "images" is a mean over images (weights: image counts), of "batches" a mean of per-batch means
    # (weights: batch counts). Partials written before these settings existed get today's defaults.
    defaults = {
        "l2": None,
        "normalization": "filter",
        "l2_term": "half-squared",
        "augmentation": None,
        "augmentation_draw": "per-point",
        "loss_average": "images",
        "batch_size": None,
    }
    partials = [{**defaults, **partial} for partial in partials]
    loss_average = _same(partials, "loss_average")
    if loss_average == "batches":
        batches = sum(int(p["num_batches"]) for p in partials)
        loss = sum(torch.as_tensor(p["loss"], dtype=torch.float64) * int(p["num_batches"]) for p in partials)
        center = sum(float(p["center_loss"]) * int(p["num_batches"]) for p in partials)
        loss, center_loss = loss / batches, center / batches
    else:
        loss, center_loss = _weighted_mean(partials, "loss"), float(_weighted_mean(partials, "center_loss"))
    has_l2 = all(p["l2"] is not None for p in partials)
    return {
        "x": _same(partials, "x"),
        "y": _same(partials, "y"),
        "loss": loss,
        "accuracy": _weighted_mean(partials, "accuracy"),
        "center_loss": center_loss,
        "weight_decay": _same(partials, "weight_decay"),
        "num_images": _total(partials),
        "l2": _weighted_mean(partials, "l2") if has_l2 else None,
        "normalization": _same(partials, "normalization"),
        "l2_term": _same(partials, "l2_term"),
        "augmentation": _same(partials, "augmentation"),
        "augmentation_draw": _same(partials, "augmentation_draw"),
        "loss_average": loss_average,
        "batch_size": _same(partials, "batch_size"),
    }


def _deepfool_applicable(classifier: Classifier, params: dict) -> None:
    if classifier.num_classes < 2:
        raise ProbeNotApplicable("deepfool needs a classifier with at least 2 classes.")


# ------------------------------------------------------------------------------------------------ the registry
_RUNNER_NUM_IMAGES = "the probe spec's num_images and the 'correct' selection choose the attacked images"

_AUGMENTATIONS = (None, *TRAINING_AUGMENTATIONS)

PROBE_TASKS: dict[str, ProbeTask] = {
    task.name: task
    for task in (
        ProbeTask(
            "occlusion",
            occlusion_sweep,
            OcclusionResult,
            "random",
            100,
            True,
            _occlusion_partial,
            _occlusion_merge,
            extra_params=_OCCLUSION_TASK_KEYS,
            selection_fn=_occlusion_selection,
            choices={"hole": HOLE_RULES, "image_list": (None, *IMAGE_LISTS)},
        ),
        ProbeTask(
            "fourier_heatmap",
            fourier_heatmap,
            FourierHeatmapResult,
            "random",
            8,
            True,
            _fourier_partial,
            _fourier_merge,
        ),
        ProbeTask(
            "deepfool",
            deepfool_spectrum,
            DeepFoolResult,
            "random",
            16,
            False,
            _deepfool_partial,
            _deepfool_merge,
            applicable_fn=_deepfool_applicable,
            choices={"spectrum": SPECTRA},
        ),
        ProbeTask(
            "pgd",
            pgd_loss_progression,
            PGDLossResult,
            "correct",
            25,
            True,
            _pgd_partial,
            _pgd_merge,
            excluded_params={"num_images": _RUNNER_NUM_IMAGES},
            # The notebook attacks the correct images of a fixed random list (its random_hundred_paths_val.npy is
            # not published): here a random draw by the seed, of which the chunks attack the correct ones.
            selection_fn=lambda params: (
                "random" if params.get("record") == "paul-chen-notebook" else "correct"
            ),
            choices={"record": RECORDS},
        ),
        ProbeTask(
            "attention",
            attention_maps,
            AttentionMapsResult,
            "first",
            32,
            False,
            _attention_partial,
            _attention_merge,
            uses_labels=False,
            default_params={"max_maps": 8, "max_layer_maps": 1},
            extra_params=("max_maps", "max_layer_maps"),
            applicable_fn=_attention_applicable,
            choices={"normalization": ROLLOUT_NORMALIZATIONS},
        ),
        ProbeTask(
            "gradcam",
            gradcam,
            GradCAMResult,
            "first",
            32,
            False,
            _gradcam_partial,
            _gradcam_merge,
            default_params={"max_maps": 8},
            extra_params=("max_maps",),
            applicable_fn=_gradcam_applicable,
        ),
        ProbeTask(
            "hessian",
            hessian_spectrum,
            HessianSpectrumResult,
            "random",
            DEFAULT_BATCH_SIZE,
            True,
            _hessian_partial,
            _hessian_merge,
            excluded_params={"max_batches": "the probe spec's num_images sets the number of mini-batches"},
            chunk_param="batch_size",
            chunk_default=DEFAULT_BATCH_SIZE,
            applicable_fn=_hessian_applicable,
            choices={"method": EIGEN_METHODS, "regularizer": REGULARIZERS, "augmentation": _AUGMENTATIONS},
        ),
        ProbeTask(
            "feature_fourier",
            feature_fourier,
            FeatureFourierResult,
            "random",
            64,
            False,
            _feature_fourier_partial,
            _feature_fourier_merge,
            uses_labels=False,
            applicable_fn=_features_applicable,
            choices={"frequency_bins": FREQUENCY_BINS},
        ),
        ProbeTask(
            "feature_variance",
            feature_variance,
            FeatureVarianceResult,
            "random",
            64,
            False,
            _feature_variance_partial,
            _feature_variance_merge,
            uses_labels=False,
            applicable_fn=_features_applicable,
        ),
        ProbeTask(
            "cka",
            feature_similarity,
            FeatureSimilarityResult,
            "random",
            DEFAULT_MINIBATCH_SIZE,
            False,
            _cka_partial,
            _cka_merge,
            uses_labels=False,
            excluded_params={
                "other": "comparing two models is not a runner probe",
                "other_layers": "comparing two models is not a runner probe",
            },
            chunk_param="minibatch_size",
            chunk_default=DEFAULT_MINIBATCH_SIZE,
            applicable_fn=_features_applicable,
        ),
        ProbeTask(
            "frequency_noise",
            frequency_noise,
            FrequencyNoiseResult,
            "random",
            100,
            True,
            _frequency_noise_partial,
            _frequency_noise_merge,
            choices={"epsilon_units": EPSILON_UNITS},
        ),
        ProbeTask(
            "lesion",
            lesion_study,
            LesionResult,
            "random",
            100,
            True,
            _lesion_partial,
            _lesion_merge,
            applicable_fn=_lesion_applicable,
        ),
        ProbeTask(
            "loss_landscape",
            loss_landscape,
            LossLandscapeResult,
            "random",
            64,
            True,
            _landscape_partial,
            _landscape_merge,
            # With batch_size set a chunk is one mini-batch, so Mixup pairs and per-batch means are those of the
            # one-call probe (Park & Kim: 96); without it, chunks of 64 as before.
            chunk_param="batch_size",
            chunk_default=64,
            choices={
                "normalization": NORMALIZATIONS,
                "l2_term": L2_TERMS,
                "augmentation": _AUGMENTATIONS,
                "augmentation_draw": AUGMENTATION_DRAWS,
                "loss_average": LOSS_AVERAGES,
            },
        ),
    )
}

# The probe functions' own names ("occlusion_sweep", ...) and result names also find their task.
_ALIASES = {
    alias: task.name
    for task in PROBE_TASKS.values()
    for alias in (task.probe.__name__, task.result_type.probe_name())
    if alias not in PROBE_TASKS
}


def get_probe_task(name: str) -> ProbeTask:
    """The registered task `name` (or a probe function's name); unknown names raise ValueError with close ones."""
    if isinstance(name, str):
        if name in PROBE_TASKS:
            return PROBE_TASKS[name]
        if name in _ALIASES:
            return PROBE_TASKS[_ALIASES[name]]
    close = difflib.get_close_matches(str(name), list(PROBE_TASKS) + list(_ALIASES), n=3)
    names = list(dict.fromkeys(_ALIASES.get(match, match) for match in close))
    suggestion = f" Did you mean {' or '.join(repr(match) for match in names)}?" if names else ""
    raise ValueError(f"Unknown probe {name!r}.{suggestion} Known probes: {sorted(PROBE_TASKS)}.")


__all__ = [
    "IMAGE_LIST_SELECTION",
    "PROBE_TASKS",
    "SELECTIONS",
    "ProbeNotApplicable",
    "ProbeTask",
    "chunk_seed",
    "get_probe_task",
    "select_images",
    "select_listed_images",
]
