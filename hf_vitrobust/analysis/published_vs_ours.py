# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Published numbers beside ours: for each published number of a model a run holds, our number with its interval,
the difference, and a verdict.

Which published numbers a run matches (`identify_models`):
- a run made by `vitrobust reproduce` records, per model, the paper's model it stands for (results.json
  "reproduction"): every published number of that model is shown, those of benchmarks the run lacks included;
- otherwise a model whose spec is the Hub or timm id that holds the published model's very weights (the table's
  `model_id`, `model_match` "same-weights") is that model, and its published numbers of the benchmarks and probes
  the run has are shown.

Our number (`our_number`) is computed from the run's per-sample predictions (the same estimators as the run's
intervals, `analysis.uncertainty`): an accuracy of a cell, a variant or a class mask with its Wilson (or
Clopper-Pearson) interval, a headline (AUPR, BG-gap, mCE) with its bootstrap interval; a probe's number from its
stored counts.

The verdict (`compare_published`), its kind one of VERDICTS:
- "not comparable", with every reason that applies: the number is not in this run; another checkpoint (a stand-in,
  another Hub id, or a published model without public weights); another protocol (a part of the row's protocol
  that the run did not use); other images (a first-N subset, generated instead of released images, another image
  count, an image list that was never published);
- where ours and theirs score the same images (the row's images are all of ours, the published list, or a subset of
  ours: Paul & Chen's ImageNet-A notebooks score 7,424 of our 7,500 images), an accuracy is compared as a count of
  images (`ImageCounts`): "equal" when the counts are equal (and nothing the authors left out can change ours);
  "within k images" when the difference is one the dropped images (and the reading precision) can explain, at most
  k images; "outside by k images" when at least k images must have flipped. Another number of the same images
  (AUPR, mCE, a loss) is "equal" to its reading precision or "outside by x points";
- where we score a random sample of their images, their images are unknown, or a random training augmentation
  made their inputs (Park & Kim's loss landscape), the sampling interval at the run's confidence level: "within the
  interval" or "outside the interval"; a published loss surface also by its summary statistics (`published_surface`);
- "approximate: <verdict>" where the row does not name every protocol part this package knows for its benchmark
  (`protocols.protocol_parts`): the part it leaves unnamed could differ unseen; or where the run read a re-encoded
  copy of the images, or a Hub copy of unknown image bytes (results.json's `image_bytes`), while the published
  number read the release's files.

The interpolation a row names ("tf-bilinear", "pil-bilinear") is compared with the kernel the run applied to the
model (`protocols.resize_kernel`), so "model-own" on a model whose own kernel is bilinear compares with
"pil-bilinear".

The bound the dropped images give is derived in `image_counts.dropped_images_bound`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..data import BENCHMARKS, Benchmark
from ..metrics.estimators import Estimator, derived_seed
from ..metrics.intervals import Interval, proportion_interval, z_value
from ..probes.spec import PROBES
from . import published_surface as surface
from .headlines import AUPR, BG_GAP, ECE, MCE, MEAN_TOP1, MFR, RELATIVE_MCE, headline_name
from .image_counts import ImageCounts, dropped_images_bound, published_count
from .protocols import default_protocol, protocol_parts
from .published import PublishedNumber, published_numbers
from .published_models import Identified, identify_models, reproduction_entries
from .run_models import RunModel, RunModels
from .uncertainty import UncertaintySettings, run_settings

#: The kinds of verdict: "within" and "outside" count images or points, or use the sampling interval.
VERDICTS = ("equal", "within", "outside", "not comparable")
#: The kinds of reason a published number is not comparable with ours.
REASONS = ("not in this run", "other checkpoint", "other protocol", "other images", "no interval")
#: The relative tolerance of "equal": the authors' accuracies were computed and printed in float32.
EQUAL_RELATIVE = 1e-6
#: The suite whose protocol reproduces each paper's numbers.
PAPER_SUITES = {"paul-chen": "paper", "park-kim": "mechanisms"}
#: Metrics whose values are accuracies in percent of images: they are compared as counts of images.
_ACCURACIES = ("top-1 %", "top-5 %", "error %")


# ----------------------------------------------------------------------------------------------- our number
@dataclass(frozen=True)
class OurNumber:
    """Our value of a published number, its interval (None where it has none), the images behind it, and why there
    is none (`missing`)."""

    value: float | None = None
    interval: Interval | None = None
    num_images: int | None = None
    missing: str | None = None


def _missing(why: str) -> OurNumber:
    return OurNumber(missing=why)


def _from_estimator(estimator: Estimator, settings: UncertaintySettings, name: str) -> OurNumber:
    interval = estimator.interval(
        settings.confidence_level,
        num_resamples=settings.num_resamples,
        seed=derived_seed(settings.seed, "published", name),
        proportion_method=settings.proportion_method,
    )
    value = interval.estimate
    return OurNumber(None if value is None else float(value), interval, estimator.num_samples)


#: A published metric -> the quantity of our headline it is (`headlines.headline_name`).
_HEADLINE_QUANTITIES = {
    "AUPR %": AUPR,
    "BG-gap (points)": BG_GAP,
    "mean top-1 %": MEAN_TOP1,
    "relative mCE %": RELATIVE_MCE,
    "ECE %": ECE,
    "mFR %": MFR,
}


def _headline_name(row: PublishedNumber, benchmark: Benchmark, protocol: Mapping[str, str]) -> str:
    if row.metric == "mCE %":
        return headline_name(benchmark.name, MCE, protocol.get("mce", "alexnet-15"))
    if row.metric not in _HEADLINE_QUANTITIES:
        raise LookupError(f"this package computes no {row.metric!r} of {benchmark.name}")
    return headline_name(benchmark.name, _HEADLINE_QUANTITIES[row.metric])


def _benchmark_number(row: PublishedNumber, model: RunModel, settings: UncertaintySettings) -> OurNumber:
    if row.benchmark not in BENCHMARKS.names():
        return _missing(f"{row.benchmark!r} is no benchmark of this package")
    benchmark = BENCHMARKS.get(row.benchmark)
    # class_mask and mce are read from the same predictions under the row's choice; the rest as the run recorded.
    protocol = {**default_protocol(benchmark), **model.applied_protocol(row.benchmark)}
    protocol.update({k: v for k, v in row.protocol_parts.items() if k in ("class_mask", "mce")})
    try:
        model.predictions(row.benchmark)  # a benchmark the run lacks says so before a metric it lacks
        if row.metric in _ACCURACIES:
            metric = "top-5 %" if row.metric == "top-5 %" else "top-1 %"
            estimator = model.accuracy(
                benchmark, metric=metric, class_mask=protocol.get("class_mask"), conditions=row.conditions
            )
            found = _from_estimator(estimator, settings, row.row_id)
            if row.metric == "error %" and found.interval is not None:  # 100 - top-1, its bounds swapped
                interval = found.interval
                error = replace(
                    interval,
                    estimate=100.0 - interval.estimate,
                    low=None if interval.high is None else 100.0 - interval.high,
                    high=None if interval.low is None else 100.0 - interval.low,
                )
                found = OurNumber(error.estimate, error, found.num_images)
            return found
        name = _headline_name(row, benchmark, protocol)
        estimators = model.headlines(benchmark, protocol)
        if name not in estimators:
            raise LookupError(f"this run has no {name}")
        found = _from_estimator(estimators[name], settings, row.row_id)
        if row.metric == "BG-gap (points)":  # published per variant: the foreground images of one background
            predictions = model.frame(row.benchmark)
            labelled = predictions[predictions["label"] >= 0]  # type: ignore[index]
            found = replace(found, num_images=int((labelled["variant"].astype(str) == "mixed_same").sum()))
        return found
    except LookupError as error:
        return _missing(str(error).strip("'\""))


def _probe_number(row: PublishedNumber, model: RunModel, settings: UncertaintySettings) -> OurNumber:
    """A probe's number of the row, read by the probe's own `value_of`; an accuracy gets the Wilson (or
    Clopper-Pearson) interval of its count of correct images."""
    spec = PROBES.get(row.benchmark)
    probe = model.probe(row.benchmark)
    if probe is None:
        not_run = model.probe_not_run(row.benchmark)
        if not_run is not None:
            return _missing(f"the {row.benchmark} probe did not run: {not_run}")
        return _missing(f"no {row.benchmark} probe in this run")
    if spec.value_of is None:
        return _missing(f"this package reads no published number of the {row.benchmark} probe")
    try:
        found = spec.value_of(probe, row.metric, row.conditions)
    except LookupError as error:
        return _missing(str(error).strip("'\""))
    interval = None
    if found.successes is not None and found.num_images:
        interval = proportion_interval(
            found.successes,
            found.trials or found.num_images,
            settings.confidence_level,
            settings.proportion_method,
            100.0,
            "image",
        )
    elif found.standard_error is not None:  # a normal interval of a mean over chunks (a loss of random draws)
        half = z_value(settings.confidence_level) * found.standard_error
        low, high = found.value - half, found.value + half
        interval = Interval(
            found.value, low, high, settings.confidence_level, "normal", found.num_images or 0
        )
    return OurNumber(found.value, interval, found.num_images)


def our_number(row: PublishedNumber, model: RunModel, settings: UncertaintySettings) -> OurNumber:
    """Our value of a published number for one model of a run, with its interval at `settings`' level."""
    if row.benchmark in PROBES.names():
        return _probe_number(row, model, settings)
    return _benchmark_number(row, model, settings)


# -------------------------------------------------------------------------------------------------- the verdict
def _same_images(row: PublishedNumber, model: RunModel, ours: OurNumber) -> bool:
    """Ours scores their images: all of them, their published list, or ours with some they left out."""
    if row.image_set not in ("all", "published-list", "subset-of-all") or row.images is None:
        return False
    if row.protocol_parts.get(
        "augmentation"
    ):  # random training augmentation: their very inputs are never met
        return False
    if ours.num_images is None or _sampled(row, model):
        return False
    return ours.num_images == row.images or (
        row.image_set == "subset-of-all" and ours.num_images > row.images
    )


def _sampled(row: PublishedNumber, model: RunModel) -> bool:
    """The run scores a random sample of the benchmark's images (`--subset random-N`)."""
    if row.benchmark in PROBES.names():
        return False
    subset = model.benchmark_info(row.benchmark).get("subset") or {}
    return subset.get("kind") == "random" and subset.get("limit") is not None


def _image_counts(row: PublishedNumber, ours: OurNumber, tolerance: float) -> ImageCounts | None:
    """Both accuracies as counts of images; None for another metric or a published value that is no count."""
    if row.metric not in _ACCURACIES or ours.value is None or not ours.num_images or not row.images:
        return None
    n, m = int(ours.num_images), int(row.images)
    published = published_count(row.value, m, tolerance)
    if published is None:
        return None
    count = round(ours.value * n / 100.0)
    return ImageCounts(published, m, count, n, dropped_images_bound(count, n, m))


def _unnamed_parts(row: PublishedNumber) -> tuple[str, ...]:
    """The protocol parts this package knows for the row's benchmark that bear on its number and that the row
    does not name (the interpolation bears where the row's preprocessing resizes, the class mask on accuracies, the
    mCE's mean on an mCE; the release encoding only on generated images, which are other images anyway)."""
    if row.benchmark not in BENCHMARKS.names():
        return ()
    bearing = {
        "preprocessing": True,
        "interpolation": row.protocol_parts.get("preprocessing") != "as-released",
        "class_mask": row.metric in _ACCURACIES,
        "mce": row.metric == "mCE %",
    }
    parts = protocol_parts(BENCHMARKS.get(row.benchmark))
    return tuple(part for part in parts if bearing.get(part, False) and part not in row.protocol_parts)


#: What a run's recorded `image_bytes` makes of a verdict against a number made from the release's files.
_COPY_CAVEATS = {"re-encoded": "re-encoded copy", "unknown": "copy of unknown image bytes"}


def _image_bytes_caveat(row: PublishedNumber, model: RunModel) -> str | None:
    """ "re-encoded copy" or "copy of unknown image bytes" where the run read such a copy of the images that the
    published number read from the release (every row of the table did: TFDS or the released files)."""
    bench = row.benchmark
    if bench in PROBES.names():
        bench = str((model.probe(bench) or {}).get("benchmark") or "imagenet-val")
    return _COPY_CAVEATS.get(model.image_bytes(bench))


@dataclass(frozen=True)
class PublishedComparison:
    """One published number beside ours: the verdict (its text and its kind, one of VERDICTS), the reasons behind a
    "not comparable", the counts of images behind a counted verdict, and the protocol parts the row leaves unnamed
    (the verdict then says "approximate")."""

    row: PublishedNumber
    model: str
    spec: str
    ours: OurNumber
    verdict: str
    kind: str
    reasons: tuple[tuple[str, str], ...] = ()
    counts: ImageCounts | None = None
    unnamed: tuple[str, ...] = ()
    sampled: bool = False

    @property
    def difference(self) -> float | None:
        return None if self.ours.value is None else self.ours.value - self.row.value

    def reason_text(self) -> str:
        """The reasons in words: "other checkpoint (...); other images (...)"."""
        return "; ".join(f"{kind}: {detail}" for kind, detail in self.reasons)

    def to_dict(self) -> dict[str, Any]:
        interval = self.ours.interval
        return {
            "row_id": self.row.row_id,
            "paper": self.row.paper,
            "model_key": self.row.model_key,
            "published_model": self.row.model,
            "where": self.row.where,
            "benchmark": self.row.benchmark,
            "metric": self.row.metric,
            "condition": self.row.condition,
            "protocol": self.row.protocol,
            "published": self.row.value,
            "reading_precision": self.row.reading_precision,
            "source": self.row.source,
            "read_from": self.row.read_from,
            "model": self.model,
            "spec": self.spec,
            "ours": self.ours.value,
            "interval": None if interval is None else interval.to_dict(),
            "num_images": self.ours.num_images,
            "difference": self.difference,
            "counts": None if self.counts is None else self.counts.to_dict(),
            "unnamed_parts": list(self.unnamed),
            "sampled": self.sampled,
            "verdict": self.verdict,
            "verdict_kind": self.kind,
            "reasons": [{"kind": kind, "detail": detail} for kind, detail in self.reasons],
        }


def _same(a: str, b: Any) -> bool:
    """Two protocol values are the same: equal as text, or as numbers."""
    if isinstance(b, Mapping):  # a probe's image_list is recorded as {"name": ...}
        b = b.get("name")
    if isinstance(b, list | tuple):  # a list parameter, written "a,b" in the table
        parts = [part.strip() for part in str(a).split(",")]
        return len(parts) == len(b) and all(_same(part, item) for part, item in zip(parts, b, strict=True))
    if str(a) == str(b):
        return True
    try:
        return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-12)
    except (TypeError, ValueError):
        return False


def _kernel_difference(wanted: str, model: RunModel, benchmark: str) -> str | None:
    """How the kernel this model saw differs from the row's interpolation ("tf-bilinear", "pil-bilinear"): the run
    is compared by the kernel it applied, so "model-own" on a bilinear model is "pil-bilinear"."""
    kernel = model.resize_kernel(benchmark)
    if kernel is None:
        return f"interpolation {wanted} published, not recorded here"
    if kernel != wanted:
        return f"interpolation {wanted} published, {'no resize' if kernel == 'none' else kernel} here"
    return None


def _protocol_differences(row: PublishedNumber, model: RunModel) -> list[str]:
    """The parts of the row's protocol that the run did not use for this model, in words."""
    differences = []
    if row.benchmark in PROBES.names():
        probe = model.probe(row.benchmark) or {}
        params = probe.get("params") or {}
        bench = str(probe.get("benchmark") or "imagenet-val")
        for part, wanted in row.protocol_parts.items():
            if part == "interpolation" and wanted != "other":
                differences += filter(None, [_kernel_difference(wanted, model, bench)])
                continue
            if part == "preprocessing":
                recorded = model.applied_protocol(bench).get("preprocessing")
            else:
                recorded = probe.get(part, params.get(part))
            if wanted == "other":
                differences.append(f"{part}: theirs is none of this package's (see the table's note)")
            elif recorded is None or not _same(wanted, recorded):
                differences.append(
                    f"{part} {wanted} published, {recorded if recorded is not None else 'not set'} here"
                )
        return differences
    applied = model.applied_protocol(row.benchmark)
    for part, wanted in row.protocol_parts.items():
        if part in ("class_mask", "mce"):
            continue  # both are computed from the same predictions: ours is read under the row's
        if part == "interpolation" and wanted != "other":
            differences += filter(None, [_kernel_difference(wanted, model, row.benchmark)])
        elif wanted == "other":
            differences.append(f"{part}: theirs is none of this package's (see the table's note)")
        elif part not in applied:
            differences.append(f"{part} {wanted} published, not recorded here")
        elif not _same(wanted, applied[part]):
            differences.append(f"{part} {wanted} published, {applied[part]} here")
    return differences


def _image_differences(row: PublishedNumber, model: RunModel, ours: OurNumber) -> list[str]:
    """Why our images are not the published number's, in words (a random sample of theirs is no reason: it gets
    the sampling interval)."""
    differences: list[str] = []
    bench = row.benchmark
    if bench in PROBES.names():
        bench = str((model.probe(bench) or {}).get("benchmark") or "imagenet-val")
        dataset = row.conditions.get("dataset")
        if dataset and dataset != bench:
            differences.append(f"the probe read {bench} here, the published number {dataset}")
    info = model.benchmark_info(bench)
    source = info.get("source") or {}
    if info.get("generated") or source.get("generated"):
        differences.append(f"{bench} generated on the fly here, not the released images")
    elif str(source.get("kind") or "").startswith("builtin"):
        differences.append(f"{bench} is the bundled demo photos here, not the benchmark's images")
    subset = info.get("subset") or {}
    sampled = _sampled(row, model)
    if subset.get("kind") == "first" and subset.get("limit") is not None:
        differences.append(f"a first-{subset['limit']} subset of {bench} here, not a random sample")
    if row.image_set == "unpublished-list":
        differences.append("the authors' image list was never published")
    m, n = row.images, ours.num_images
    left_out = row.image_set == "subset-of-all" and row.metric in _ACCURACIES and (n or 0) > (m or 0)
    if (
        m is not None
        and n is not None
        and m != n
        and not (sampled or left_out or row.image_set == "unpublished-list")
    ):
        differences.append(f"{n:,} images here, {m:,} published")
    return differences


def _checkpoint_difference(row: PublishedNumber, model: RunModel, stand_in: bool) -> str | None:
    if stand_in:
        return f"{model.spec} stands in for {row.model}"
    if not row.has_public_weights:
        closest = f"; closest public: {row.model_id}" if row.model_match == "closest" else ""
        return f"{row.model} has no public copy of its weights{closest}; {model.spec} ran"
    if model.spec != row.model_id:
        return f"{model.spec} ran; the published number is of {row.model} ({row.model_id})"
    return None


def _counted_or_sampled(
    row: PublishedNumber, model: RunModel, ours: OurNumber, tolerance: float
) -> tuple[str, str, ImageCounts | None] | str:
    """The verdict text, its kind and the counts; or why there is none (no interval where one is needed)."""
    assert ours.value is not None
    if _same_images(row, model, ours):
        counts = _image_counts(row, ours, tolerance)
        if counts is not None:
            text = counts.verdict()
            return text, text.split(" ")[0], counts
        off = abs(ours.value - row.value) - tolerance
        if off <= 0:
            return "equal", "equal", None
        return f"outside by {off:.2f} points", "outside", None
    interval = ours.interval
    if interval is None or interval.low is None or interval.high is None:
        return "ours has no interval and scores other images than the published number"
    # A random sample of all the images estimates their accuracy over all of them, those the authors left out
    # included: not widened for those (at most 100 d / m points, small beside a sample's interval).
    low, high = interval.low, interval.high
    inside = low - tolerance <= row.value <= high + tolerance
    return ("within the interval", "within", None) if inside else ("outside the interval", "outside", None)


def compare_published(
    row: PublishedNumber, model: RunModel, settings: UncertaintySettings, stand_in: bool = False
) -> PublishedComparison:
    """Our number of `row` for `model`, and the verdict (see the module docstring)."""
    ours = our_number(row, model, settings)
    reasons: list[tuple[str, str]] = []
    if ours.missing is not None:
        reasons.append(("not in this run", ours.missing))
    checkpoint = _checkpoint_difference(row, model, stand_in)
    if checkpoint is not None:
        reasons.append(("other checkpoint", checkpoint))
    if ours.missing is None:
        differences = [*_protocol_differences(row, model), *filter(None, [surface.off_the_origin(row)])]
        reasons += [("other protocol", text) for text in differences]
        reasons += [("other images", text) for text in _image_differences(row, model, ours)]
    unnamed = _unnamed_parts(row)
    sampled = ours.missing is None and _sampled(row, model)
    verdict, kind, counts = "not comparable", "not comparable", None
    if not reasons and ours.value is not None:
        tolerance = row.reading_precision + EQUAL_RELATIVE * max(abs(row.value), 1.0)
        found = _counted_or_sampled(row, model, ours, tolerance)
        if isinstance(found, str):
            reasons.append(("no interval", found))
        else:
            verdict, kind, counts = found
            caveats = [f"unnamed: {', '.join(unnamed)}"] if unnamed else []
            caveats += filter(None, [_image_bytes_caveat(row, model)])
            if caveats:
                verdict = f"approximate: {verdict} ({'; '.join(caveats)})"
    return PublishedComparison(
        row, model.key, model.spec, ours, verdict, kind, tuple(reasons), counts, unnamed, sampled
    )


def _candidate_for(row: PublishedNumber, models: Sequence[RunModel]) -> RunModel | None:
    """The run model to read a row from: of those with the row's benchmark, one with its checkpoint and the fewest
    protocol differences; else the first (its "not in this run" says why)."""
    with_data = [model for model in models if model.has(row.benchmark)]
    if not with_data:
        return models[0] if models else None
    return min(with_data, key=lambda m: (m.spec != row.model_id, len(_protocol_differences(row, m))))


def published_comparisons(
    results: Sequence[Mapping[str, Any]],
    settings: UncertaintySettings | None = None,
    run_models: RunModels | None = None,
) -> list[PublishedComparison]:
    """Every published number that the runs match (`identify_models`), beside ours, at `settings` (default: the
    first run's recorded ones); `run_models` shares the models' predictions with other sections."""
    if not results:
        return []
    settings = settings or run_settings(results[0])
    run_models = run_models or RunModels(results)
    out = []
    for identified in identify_models(results):
        models = [run_models(place) for place in identified.candidates]
        for row in published_numbers(identified.paper):
            if row.model_key != identified.model_key:
                continue
            model = _candidate_for(row, models)
            if model is None:
                continue
            if not identified.reproduction and not any(m.has(row.benchmark) for m in models):
                continue
            out.append(compare_published(row, model, settings, stand_in=identified.stand_in))
        out += surface_comparisons(identified, models, settings)
    return out


def surface_comparisons(
    identified: Identified, models: Sequence[RunModel], settings: UncertaintySettings
) -> list[PublishedComparison]:
    """A published loss surface (a probe's "loss" rows on an x, y grid) beside ours by its summary statistics
    (`published_surface`: minimum, curvature at the origin, basin width), one comparison each on a row derived
    from the published grid; not comparable for the reasons its origin row is."""
    grid = [
        row
        for row in published_numbers(identified.paper)
        if row.model_key == identified.model_key
        and row.metric == "loss"
        and {"x", "y"} <= set(row.conditions)
    ]
    origin = next((r for r in grid if float(r.conditions["x"]) == 0.0 == float(r.conditions["y"])), None)
    model = None if origin is None else _candidate_for(origin, models)
    if origin is None or model is None:
        return []
    found = compare_published(origin, model, settings, stand_in=identified.stand_in)
    theirs = surface.surface_statistics(*surface.surface_grid(grid))
    stats = {}
    if not found.reasons:
        probe = model.probe(origin.benchmark) or {}
        ours = (probe["x"], probe["y"], probe["loss"])
        seed = derived_seed(settings.seed, "surface", origin.row_id)
        for stat in surface.compare_surfaces(
            surface.surface_grid(grid),
            ours,
            probe.get("loss_standard_error"),
            settings.confidence_level,
            seed,
        ):
            stats[stat.name] = stat
    out = []
    for name in surface.SURFACE_STATISTICS:
        stat = stats.get(name)
        row = replace(
            origin,
            row_id=f"{origin.paper}/{origin.benchmark}/surface-{name.replace(' ', '-')}/{origin.model_key}",
            metric=f"surface {name}",
            condition=";".join(f"{k}={v}" for k, v in origin.conditions.items() if k not in ("x", "y")),
            value=theirs[name],
            location=f"derived from the {len(grid)} published grid points",
            reading_precision=0.0,
        )
        if stat is None:
            ours_number = OurNumber(missing=found.ours.missing)
            out.append(replace(found, row=row, ours=ours_number, verdict="not comparable", counts=None))
        else:
            ours_number = OurNumber(stat.ours, None, found.ours.num_images)
            out.append(
                replace(found, row=row, ours=ours_number, verdict=stat.verdict, kind=stat.kind, counts=None)
            )
    return out


def verdict_counts(comparisons: Sequence[PublishedComparison]) -> dict[str, int]:
    """How many published numbers got each verdict."""
    return {verdict: sum(c.kind == verdict for c in comparisons) for verdict in VERDICTS}


__all__ = [
    "EQUAL_RELATIVE",
    "PAPER_SUITES",
    "REASONS",
    "VERDICTS",
    "Identified",
    "OurNumber",
    "PublishedComparison",
    "compare_published",
    "identify_models",
    "our_number",
    "published_comparisons",
    "reproduction_entries",
    "verdict_counts",
]
