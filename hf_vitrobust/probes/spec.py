# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""`ProbeSpec`: everything the evaluation runner, the report and the figures know about one probe, and `PROBES`,
the registry each probe module adds its spec to (`register_probe`).

The runner picks a probe's images from a benchmark's clean samples, cuts them into chunks of fixed composition
(chunk k = images [k C, (k + 1) C), C = `ProbeSpec.chunk_length(params)`), calls `spec.run(...)` on each chunk,
possibly in different processes, saves each returned PARTIAL with `torch.save`, and on rank 0 calls
`spec.merge(partials_in_chunk_order)`. The MERGED dict has the keys and meaning of the probe's
`ProbeResult.to_dict()` on all the images in one call (values equal up to float summation order), plus
"num_images", so 1 process and N processes give the same results. Each probe module states how its partials
merge next to its spec.

Partials are dicts of str -> CPU tensors, Python numbers, bools, strings, None, lists and dicts, so they load with
`torch.load(path, weights_only=True)`.

The report shows `spec.table(probe_dict)` (the spec's `headline` rows plus the image count) for each probe, the
`summary_row` of it in its Summary table, and the spec's `figures`: name -> `ProbeFigure(draw, caption)`, where
`draw({model_key: probe_dict})` returns a matplotlib Figure (or None). The same draw function, given `ax`, is
what the probe's `ProbeResult.plot(ax)` draws with.

Per-point intervals over images. Where a probe's numbers are means over its images, the spec's `intervals_fn`
turns the MERGED dict into confidence intervals, and `merge` stores them as "intervals":
{"confidence_level": 0.95, "method": ..., "unit": "image", <curve key>: {"low": [...], "high": [...],
"method": ...}}, each curve's bounds of the shape of its value in the dict (a scalar, a list, a map); a curve's
"method" is its own, the top-level one that of the first curve. Proportions (accuracies, errors, success rates)
get the Wilson interval of their counts ("wilson"; the merged dict keeps the counts, "num_correct" and alike);
means of continuous per-image values (a PGD loss per step, a feature statistic per layer) and the paired
per-image differences behind an accuracy drop get the Student-t interval over images ("student-t"; the merged
dict keeps the per-image values or their sum of squares). They are computed from the merged statistics only, so
they are the same for 1 and N processes and after a resume. `spec.probe_intervals(probe_dict, level)` recomputes
them from a stored dict at another level; the headline rows read the stored "intervals" and show "x [lo, hi]"
(a dict without them renders as before), and the line figures draw them as a band or error bars.

Probes without intervals, and why:
- hessian: eigenvalues of per-mini-batch Hessians, a statistic of each batch, not a mean of per-image values: its
  intervals (the negative share, the top magnitude) are over mini-batches instead (`hessian_statistics`).
- cka: a ratio of HSIC sums over minibatches, not a mean of independent per-image values.
- loss_landscape: losses along random weight directions shared by all images (and mixed pairs under Mixup):
  the grid's variation is not image sampling.
- attention, gradcam: maps of single images and their mean map, shown as pictures, not numbers.
- deepfool's energy spectrum: 10 log10 of a mean energy map, shown as a picture (its success rate and mean L2
  have intervals).
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import torch

from ..metrics.intervals import DEFAULT_CONFIDENCE_LEVEL, check_confidence_level
from ..models.classifier import Classifier
from ..registry import Registry, close_matches, did_you_mean
from .base import ProbeInputs, ProbeResult, check_batch_size, check_seed, json_safe, prepare_inputs
from .display import MISSING, fmt_count
from .intervals import counts_from_means
from .param_checks import ValueCheck, positive_int

if TYPE_CHECKING:
    from matplotlib.figure import Figure

# Keyword arguments of the probe functions that the runner sets itself.
RUNNER_KEYS = frozenset({"seed", "limit", "sample_ids"})
# A selection "image-list:<name>" takes the images of a shipped list (`hf_vitrobust.data.image_lists`) by file name.
IMAGE_LIST_SELECTION = "image-list:"
MAP_DECIMALS = 4
# Value checks every probe shares (each probe function takes a batch size).
COMMON_VALUE_CHECKS: Mapping[str, ValueCheck] = {"batch_size": positive_int}
# joint_check(effective params, model input size or None): checks of several params together, or of a param against
# the input size (None when the suite is read, the (height, width) of each model once the models are loaded).
JointCheck = Callable[[Mapping[str, Any], "tuple[int, int] | None"], None]


class ProbeNotApplicable(ValueError):
    """The probe cannot run on this classifier (e.g. attention maps of a CNN); the runner skips it and says why."""


def chunk_seed(seed: int, sample_ids: torch.Tensor | Sequence[int]) -> int:
    """A 53-bit seed for one chunk from the probe seed and the chunk's sample ids (BLAKE2b), the same in every
    process: chunk-level randomness (the Hessian's start vectors) never depends on the process or chunk index."""
    ids = torch.as_tensor(sample_ids, dtype=torch.int64).cpu().tolist()
    key = f"{check_seed(seed)}/" + ",".join(str(i) for i in ids)
    return int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "big") >> 11


# ------------------------------------------------------------------------------------------------ merge helpers
def rounded_maps(maps: torch.Tensor) -> list:
    """Maps as nested lists rounded to MAP_DECIMALS decimals (what a merged dict keeps of per-image maps)."""
    return torch.round(maps.detach().double().cpu(), decimals=MAP_DECIMALS).tolist()


def total_images(partials: Sequence[Mapping[str, Any]]) -> int:
    """The number of images of all partials."""
    return sum(int(p["num_images"]) for p in partials)


def weighted_mean(partials: Sequence[Mapping[str, Any]], key: str) -> torch.Tensor:
    """The image-count-weighted mean of a per-chunk mean (a number, list or tensor), float64."""
    total = total_images(partials)
    acc = sum(torch.as_tensor(p[key], dtype=torch.float64) * int(p["num_images"]) for p in partials)
    return acc / total


def same_setting(partials: Sequence[Mapping[str, Any]], key: str) -> Any:
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


def summed_counts(
    partials: Sequence[Mapping[str, Any]], count_key: str, mean_key: str | None = None
) -> list | int | None:
    """The counts `count_key` summed over the partials (a number, list or map of ints); a partial written before it
    carried them gives `counts_from_means(its mean_key, its num_images)`. None when some partial has neither."""
    total: np.ndarray | None = None
    for partial in partials:
        if partial.get(count_key) is not None:
            counts = np.asarray(torch.as_tensor(partial[count_key]).cpu().numpy(), dtype=np.int64)
        else:
            if mean_key is None:
                return None
            counts = counts_from_means(partial.get(mean_key), partial.get("num_images"))
            if counts is None:
                return None
        total = counts if total is None else total + counts
    return None if total is None else total.tolist()


def summed_values(partials: Sequence[Mapping[str, Any]], key: str) -> list | float | None:
    """A per-chunk sum (a number or list, e.g. a sum of squares) added up over the partials in chunk order,
    float64; None when some partial lacks it (written before it was recorded)."""
    if any(partial.get(key) is None for partial in partials):
        return None
    total = torch.as_tensor(partials[0][key], dtype=torch.float64)
    for partial in partials[1:]:
        total = total + torch.as_tensor(partial[key], dtype=torch.float64)
    return total.tolist()


def probe_kwargs(params: Mapping[str, Any], task_keys: Sequence[str] = ()) -> dict[str, Any]:
    """The params that are the probe function's keyword arguments (without the spec's own settings)."""
    return {key: value for key, value in params.items() if key not in task_keys}


# ------------------------------------------------------------------------------------------------ the spec
PartialFn = Callable[[Classifier, ProbeInputs, int, dict[str, Any]], dict[str, Any]]
MergeFn = Callable[[list[Mapping[str, Any]]], dict[str, Any]]
HeadlineFn = Callable[[Mapping[str, Any]], dict[str, str]]
IntervalsFn = Callable[[Mapping[str, Any], float], dict[str, Any]]
DrawFn = Callable[..., "Figure | None"]


class ProbeFigure(NamedTuple):
    """A figure of a probe: `draw({model_key: probe_dict}, ax=None)` -> a Figure or None, and its caption."""

    draw: DrawFn
    caption: str


#: A probe's per-image quantity: merged probe dict -> (image keys, one value per image), from its "per_image" record.
PerImageFn = Callable[[Mapping[str, Any]], tuple[Sequence[Any], np.ndarray]]


class ProbeValue(NamedTuple):
    """A probe's number beside a published one (`analysis.published_vs_ours`): the value in the published metric's
    unit, the images behind it, and, for an accuracy in percent, the count of correct images (its Wilson interval,
    over `trials` where the proportion is of fewer than all the images, e.g. of the confident ones); for another
    number, its standard error where the probe knows one (a normal interval)."""

    value: float
    num_images: int | None = None
    successes: int | None = None
    standard_error: float | None = None
    trials: int | None = None


#: A probe's reader of a published metric: (merged probe dict, metric, condition) -> `ProbeValue`; LookupError (with
#: the reason) when the dict holds no such number.
ValueOfFn = Callable[[Mapping[str, Any], str, Mapping[str, str]], ProbeValue]


def grid_index(values: Sequence[Any], wanted: float) -> int:
    """The position of `wanted` in a probe's grid of settings (ratios, steps), to 1e-9; LookupError when absent."""
    for index, value in enumerate(values):
        if abs(float(value) - wanted) <= 1e-9:
            return index
    raise LookupError(f"{wanted:g} is not among {[float(v) for v in values]}")


@dataclass(frozen=True)
class ProtocolPart:
    """One protocol part of a claim's quantity that the runs decide (`analysis.protocols`' "preprocessing" or
    "release_encoding" of the data it reads, or a probe's protocol param such as "hole"), with the name the paper
    used for its ViT and for its CNN; None where the paper's is not named: the two models must then share one."""

    part: str
    vit: str | None = None
    cnn: str | None = None


@dataclass(frozen=True)
class Claim:
    """A paper's claim about ViTs against CNNs, checked on a pair of models (`analysis.findings`).

    name: a slug; paper: "paul-chen" or "park-kim"; claim: the claim as a reader states it; source: where the paper
    makes it (figure or table); quantity: what is compared, with its unit; direction: +1 when the paper finds the
    ViT's quantity higher, -1 lower; protocol: the parts of the quantity's protocol the runs decide
    (`ProtocolPart`): a pair whose runs differ in any is not checked unless asked. member: "vit" or "cnn" for a
    claim about one model by itself (MSAs reduce the feature-map variance within a ViT): that member's quantity is
    checked against 0, direction +1 when the paper finds it above 0, -1 below; None: the ViT against the CNN."""

    name: str
    paper: str
    claim: str
    source: str
    quantity: str
    direction: int
    protocol: tuple[ProtocolPart, ...] = field(default=(), kw_only=True)
    member: str | None = field(default=None, kw_only=True)


@dataclass(frozen=True)
class ProbeFinding(Claim):
    """A claim that a probe's per-image record checks (`analysis.findings` pairs the two models' images and
    bootstraps the difference of the means): per_image(probe_dict) gives the images' keys and the quantity per
    image (raises LookupError when the dict cannot give it); scale: the factor to the quantity's unit (100: a mean
    of 0/1 in percent); baseline: where the claim is about the ViTs and BiTs of a run against one baseline model
    rather than a pair, that baseline's name ("resnet-50"; `analysis.finding_sets`); unit: what per_image's units
    are where they are not images ("minibatch": CKA's HSIC minibatches)."""

    per_image: PerImageFn
    scale: float = 1.0
    baseline: str | None = field(default=None, kw_only=True)
    unit: str = field(default="image", kw_only=True)


def _no_headline(probe: Mapping[str, Any]) -> dict[str, str]:
    return {}


def method_headline(probe: Mapping[str, Any]) -> dict[str, str]:
    """The headline of the map probes (attention maps, Grad-CAM): the method that made the maps."""
    return {"method": str(probe.get("method") or MISSING)}


@dataclass(frozen=True, kw_only=True)
class ProbeSpec:
    """A probe as a unit of the runner and of the report.

    name: registry key; probe: the `hf_vitrobust.probes` function; result_type: its result class.
    selection: "random", "correct" or "first" (see `evaluation.probe_images.select_images`); chunk_size: default
        images per chunk (`chunk_length` gives the chunk for given params: one Hessian mini-batch, one CKA
        minibatch).
    needs_labels: the probe measures accuracy or a loss; labels of -1 (no label) are an error then, and are
        dropped (None) for probes that only use labels when present. uses_labels False: the probe never reads
        labels (attention maps, feature statistics, CKA) and gets None.
    partial_fn(classifier, inputs, seed, params): the PARTIAL of one chunk; merge_fn(partials): the MERGED dict.
    default_params: task settings added to the user's params (e.g. max_maps); excluded_params: probe keywords the
        runner owns, with the reason; extra_params: task settings that are not probe keywords.
    choices: the named options of a param (a protocol switch such as `method` or `hole`) and their valid values,
        checked when a suite is read, before any work.
    value_checks: param -> `param_checks.ValueCheck` for every other param a suite may set (ranges, types), also
        checked when a suite is read; joint_check(params, input_size): checks of params together, or against the
        model's input size (run once more per model before any work; see `check_for_input`).
    headline(probe_dict): the report's rows for the probe, label (with unit) -> formatted value.
    image_count(probe_dict): the image count of a dict that stores neither "num_images" nor "num_samples".
    summary_row: the label of the report's Summary row (None: the probe has none); summary_value(rows) picks its
        value from the headline rows (default: the row labelled `summary_row`).
    figures: figure name -> `ProbeFigure(draw, caption)`.
    intervals_fn(probe_dict, confidence_level): the per-point intervals over images of a MERGED dict (see the
        module docstring; `intervals.interval_entry`), {} where the dict lacks what they need; None: the probe has none.
    findings: the papers' claims its per-image record checks on a pair of models (`ProbeFinding`).
    value_of(probe_dict, metric, condition): the probe's number of a published metric (`ProbeValue`), for the
        published numbers beside ours; None: the papers published none of this probe.
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
    value_checks: Mapping[str, ValueCheck] = field(default_factory=dict, repr=False)
    joint_check: JointCheck | None = field(default=None, repr=False)
    headline: HeadlineFn = field(default=_no_headline, repr=False)
    image_count: Callable[[Mapping[str, Any]], Any] | None = field(default=None, repr=False)
    summary_row: str | None = None
    summary_value: Callable[[Mapping[str, str]], str] | None = field(default=None, repr=False)
    figures: Mapping[str, ProbeFigure] = field(default_factory=dict, repr=False)
    intervals_fn: IntervalsFn | None = field(default=None, repr=False)
    findings: tuple[ProbeFinding, ...] = field(default=(), repr=False)
    value_of: ValueOfFn | None = field(default=None, repr=False)

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
                if isinstance(key, str) and (matches := close_matches(key, accepted))
            ]
            detail = "; ".join(reasons + hints)
            raise ValueError(
                f"Unknown parameter(s) {[str(key) for key in unknown]} for probe {self.name!r}"
                f"{' (' + detail + ')' if detail else ''}; accepted: {accepted}."
            )
        for key, valid in self.choices.items():
            if key in params and params[key] not in valid:
                raise ValueError(
                    f"Probe {self.name!r}: {key} must be one of {list(valid)}, got {params[key]!r}."
                    f"{did_you_mean(params[key], valid)}"
                )
        checks = {**COMMON_VALUE_CHECKS, **self.value_checks}
        for key, value in params.items():
            if key in checks:
                try:
                    checks[key](value)
                except ValueError as error:
                    raise ValueError(f"Probe {self.name!r}: {key} {error}") from None
        merged = {**self.default_params, **params}
        self.check_for_input(merged, None)
        return merged

    def effective_params(self, params: Mapping[str, Any] | None) -> dict[str, Any]:
        """Every setting the probe runs with: its function's keyword defaults, then `default_params`, then
        `params`."""
        defaults = {
            name: parameter.default
            for name, parameter in inspect.signature(self.probe).parameters.items()
            if parameter.kind is inspect.Parameter.KEYWORD_ONLY
            and parameter.default is not inspect.Parameter.empty
        }
        return {**defaults, **self.default_params, **(params or {})}

    def check_for_input(self, params: Mapping[str, Any] | None, input_size: tuple[int, int] | None) -> None:
        """The probe's `joint_check` on its effective params, against a model's (height, width) input size when
        given: a ValueError naming the probe, before any work."""
        if self.joint_check is None:
            return
        try:
            self.joint_check(self.effective_params(params), input_size)
        except ValueError as error:
            size = "" if input_size is None else f" (for {input_size[0]}x{input_size[1]} model inputs)"
            raise ValueError(f"Probe {self.name!r}{size}: {error}") from None

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

    def merge(
        self,
        partials: Sequence[Mapping[str, Any]],
        *,
        confidence_level: float = DEFAULT_CONFIDENCE_LEVEL,
    ) -> dict[str, Any]:
        """The MERGED JSON-safe dict from the partials of all chunks, in chunk order, with its "intervals" at
        `confidence_level` where the probe has them."""
        confidence_level = check_confidence_level(confidence_level)
        partials = list(partials)
        if not partials:
            raise ValueError(f"No partials to merge for probe {self.name!r}.")
        for partial in partials:
            if not isinstance(partial, Mapping) or partial.get("task") != self.name:
                found = partial.get("task") if isinstance(partial, Mapping) else type(partial).__name__
                raise ValueError(f"A partial of {found!r} cannot be merged into probe {self.name!r}.")
        merged = self.merge_fn(partials)
        merged.setdefault("num_images", total_images(partials))
        merged = json_safe({"probe": self.result_type.probe_name(), **merged})
        intervals = self.probe_intervals(merged, confidence_level)
        if intervals:
            merged["intervals"] = intervals
        return merged

    def probe_intervals(
        self, probe: Mapping[str, Any], confidence_level: float = DEFAULT_CONFIDENCE_LEVEL
    ) -> dict[str, Any]:
        """The per-point intervals over images of a merged probe dict (as stored in results.json) at
        `confidence_level`, JSON-safe: what `merge` stores as "intervals", recomputed from the dict's counts, sums
        of squares or per-image values without running the model. {} where the probe has none, the dict is a
        skip, or it lacks what they need."""
        confidence_level = check_confidence_level(confidence_level)
        if self.intervals_fn is None or "skipped" in probe:
            return {}
        return json_safe(self.intervals_fn(probe, confidence_level))

    # -------------------------------------------------------------------------------------------- the report
    def table(self, probe: Mapping[str, Any]) -> dict[str, str]:
        """The report's rows for one probe dict: the headline rows, then the image count ("not run": why, for a
        probe the run recorded as not run on this model)."""
        if "skipped" in probe:
            return {"not run": str(probe["skipped"])}
        out = dict(self.headline(probe))
        images = probe.get("num_images", probe.get("num_samples"))
        if images is None and self.image_count is not None:
            images = self.image_count(probe)
        if images is not None:
            out["images"] = fmt_count(images)
        return out

    def summary_cell(self, probe: Mapping[str, Any] | None) -> str:
        """The value of the Summary row for one probe dict (MISSING when absent)."""
        if not probe:
            return MISSING
        values = self.table(probe)
        if self.summary_value is not None:
            return self.summary_value(values)
        return values.get(self.summary_row or "", MISSING)


PROBES: Registry[ProbeSpec] = Registry("probe")


def register_probe(spec: ProbeSpec, *, replace: bool = False) -> ProbeSpec:
    """Add `spec` to `PROBES` under its name, with its function's name and its result's `probe_name()` as
    aliases (a suite, `--probe` and a results.json `probe` field may name it either way). Returns `spec`."""
    aliases = [alias for alias in (spec.probe.__name__, spec.result_type.probe_name()) if alias != spec.name]
    return PROBES.register(spec.name, spec, aliases=tuple(dict.fromkeys(aliases)), replace=replace)


def get_probe(name: str) -> ProbeSpec:
    """The registered probe `name` (or its function's or result's name); unknown names raise `UnknownNameError`
    (a ValueError) with the closest names."""
    return PROBES.get(name)


def probe_of(name: str, data: Mapping[str, Any]) -> ProbeSpec | None:
    """The spec a results.json probe entry comes from: its registered name, else its dict's `probe` field (the
    result type's `probe_name()`); None when neither is known."""
    if name in PROBES.names():
        return PROBES.get(name)
    field_name = str(data.get("probe"))
    return next((spec for spec in PROBES.values() if spec.result_type.probe_name() == field_name), None)


__all__ = [
    "COMMON_VALUE_CHECKS",
    "IMAGE_LIST_SELECTION",
    "MAP_DECIMALS",
    "PROBES",
    "RUNNER_KEYS",
    "Claim",
    "IntervalsFn",
    "JointCheck",
    "ProbeFigure",
    "ProbeFinding",
    "ProbeNotApplicable",
    "ProbeSpec",
    "ProbeValue",
    "ProtocolPart",
    "chunk_seed",
    "get_probe",
    "grid_index",
    "method_headline",
    "probe_kwargs",
    "probe_of",
    "register_probe",
    "rounded_maps",
    "same_setting",
    "summed_counts",
    "summed_values",
    "total_images",
    "weighted_mean",
]
