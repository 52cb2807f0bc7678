# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The papers' qualitative claims as checks on a pair of models: does the finding hold for this ViT and this CNN,
and how confidently?

Each `Finding` names a quantity both models have (an accuracy on ImageNet-A, the top-1 under contrast at severity
5, the mCE) and the direction the paper reports (the ViT above or below the CNN). The claims a probe checks (the
occlusion curve, a feature statistic) are declared by the probe itself (`ProbeSpec.findings`, a per-image quantity
of its record) and registered here as the others, so that no module of evaluation/ names a probe.
`check_findings` computes ViT minus CNN over the images both models saw, with one set of bootstrap weights for both
(the paired interval of `metrics.estimators.paired_comparison`, as the run's model comparisons), McNemar's exact
test for accuracies (else the bootstrap's p-value), and Holm's correction over the findings checked together. A
finding then:
- "holds": the interval lies wholly on the paper's side of 0 and Holm's p-value is at most 1 - level;
- "reversed": it lies wholly on the other side (and Holm's p-value is at most 1 - level);
- "not resolved": the interval contains 0, or Holm's correction leaves it unresolved;
- "not checked": a model lacks the data (the reason says which), or the two share no images.

The pair is the ViT and the CNN of a `paper` or `mechanisms` suite pair (`model_pairs`), or the two members of a
`vitrobust reproduce` run; across the runs of a reproduction each finding reads the run that holds its data.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

from ..data import BENCHMARKS
from ..metrics.estimators import (
    Estimator,
    derived_seed,
    mean_estimator,
    paired_comparison,
)
from ..metrics.intervals import holm_adjust
from ..probes.spec import PROBES, Claim, ProbeFinding
from ..registry import Registry
from .headlines import AUPR, MCE, headline_name
from .kinds import get_benchmark_kind
from .protocols import protocol_parts
from .published_vs_ours import PAPER_SUITES, reproduction_entries
from .run_models import RunModel, RunModels
from .uncertainty import UncertaintySettings, run_settings

FINDING_VERDICTS = ("holds", "reversed", "not resolved", "not checked")


class MissingData(LookupError):
    """A model lacks what a finding reads; the message says what."""


@dataclass(frozen=True)
class Finding(Claim):
    """A claim (`probes.spec.Claim`: name, paper, claim, source, quantity, direction) as a check on a pair of
    models: data: the benchmark or probe it reads; estimator: the quantity of one model as an `Estimator` over its
    images (raises MissingData when the model lacks it)."""

    data: str
    estimator: Callable[[RunModel], Estimator]


FINDINGS: Registry[Finding] = Registry("finding")


def register_finding(finding: Finding) -> Finding:
    """Add a finding to `FINDINGS` (its direction must be +1 or -1)."""
    if finding.direction not in (-1, 1):
        raise ValueError(f"Finding {finding.name!r}: direction must be +1 or -1, got {finding.direction!r}.")
    return FINDINGS.register(finding.name, finding)


def findings_of(paper: str) -> list[Finding]:
    """The findings of one paper, in registration order: those on benchmarks (below), then the probes' own
    (`ProbeSpec.findings`)."""
    _sync_probe_findings()
    return [finding for finding in FINDINGS.values() if finding.paper == paper]


def get_finding(name: str) -> Finding:
    """A finding by name (the probes' included); an unknown name is a ValueError naming the closest ones."""
    _sync_probe_findings()
    return FINDINGS.get(name)


# -------------------------------------------------------------------------------------------- estimator builders
def _accuracy(benchmark: str, **options: Any) -> Callable[[RunModel], Estimator]:
    """A top-1 of `RunModel.accuracy` (options: class_mask, conditions: a cell or a variant)."""
    return lambda model: model.accuracy(BENCHMARKS.get(benchmark), **options)


def headline_quantity(
    benchmark: str, quantity: str, choice: str | None = None
) -> Callable[[RunModel], Estimator]:
    """The estimator of a headline `quantity` of `benchmark` (scored under the protocol `choice`, where it has one),
    as its kind builds it (`BenchmarkKind.estimators`; its units: clean images, OOD and in-distribution images,
    foreground images, ...), by `RunModel.headlines`. The quantity must be one its kind declares
    (`BenchmarkKind.quantities`)."""
    kind = get_benchmark_kind(BENCHMARKS.get(benchmark).kind)
    if quantity not in kind.quantities:
        raise ValueError(
            f"{benchmark} ({kind.name}) has no headline quantity {quantity!r}; its kind's: {list(kind.quantities)}."
        )
    name = headline_name(benchmark, quantity, choice)
    part = next((p for p in protocol_parts(BENCHMARKS.get(benchmark)) if p in ("class_mask", "mce")), None)
    protocol = {part: choice} if choice and part else None

    def build(model: RunModel) -> Estimator:
        found = model.headlines(BENCHMARKS.get(benchmark), protocol)
        if name not in found:
            raise MissingData(f"no {name} in this run")
        return found[name]

    return build


def _probe_quantity(probe: str, finding: ProbeFinding) -> Callable[[RunModel], Estimator]:
    """A probe finding's quantity of one model: the mean over its images of the probe's per-image values."""

    def build(model: RunModel) -> Estimator:
        found = model.probe(probe)
        if found is None:
            raise MissingData(f"no {probe} probe in this run")
        try:
            keys, values = finding.per_image(found)
        except LookupError as error:
            raise MissingData(f"{probe}: {error}") from None
        return mean_estimator(values, keys, scale=finding.scale)

    return build


def _sync_probe_findings() -> None:
    """Register the findings the probes declare (`ProbeSpec.findings`), a probe registered later included."""
    for spec in PROBES.values():
        for finding in spec.findings:
            if finding.name not in FINDINGS:
                claim = {field.name: getattr(finding, field.name) for field in fields(Claim)}
                register_finding(
                    Finding(**claim, data=spec.name, estimator=_probe_quantity(spec.name, finding))
                )


# ------------------------------------------------------------------------------------------------ the findings
# Paul & Chen's sections as the robustness-vit READMEs name them: Sec. 3 the ImageNet benchmarks, Sec. 4 the analyses.
register_finding(
    Finding(
        "imagenet-a",
        "paul-chen",
        "ViT above BiT on ImageNet-A",
        "Paul & Chen, Sec. 3 (ImageNet-A; abstract: ViT-L/16 28.10 %, 4.3x a comparable BiT)",
        "ImageNet-A top-1 % over all 1000 classes (paul-chen-1000)",
        +1,
        "imagenet-a",
        _accuracy("imagenet-a", class_mask="paul-chen-1000"),
    )
)
register_finding(
    Finding(
        "imagenet-r",
        "paul-chen",
        "ViT above BiT on ImageNet-R",
        "Paul & Chen, Sec. 3 (ImageNet-R)",
        "ImageNet-R top-1 % over all 1000 classes (paul-chen-1000)",
        +1,
        "imagenet-r",
        _accuracy("imagenet-r", class_mask="paul-chen-1000"),
    )
)
register_finding(
    Finding(
        "imagenet-o",
        "paul-chen",
        "ViT above BiT in ImageNet-O detection",
        "Paul & Chen, Sec. 3 (ImageNet-O)",
        "ImageNet-O AUPR %",
        +1,
        "imagenet-o",
        headline_quantity("imagenet-o", AUPR),
    )
)
register_finding(
    Finding(
        "imagenet-c-mce",
        "paul-chen",
        "ViT below BiT in ImageNet-C error",
        "Paul & Chen, Sec. 3 (ImageNet-C)",
        "ImageNet-C mCE % (unnormalized-19, the mean error their test.py prints)",
        -1,
        "imagenet-c",
        headline_quantity("imagenet-c", MCE, "unnormalized-19"),
    )
)
register_finding(
    Finding(
        "contrast-severity-5",
        "paul-chen",
        "ViT below BiT on contrast at severity 5",
        "Paul & Chen, Sec. 3 (ImageNet-C, contrast at severity 5)",
        "ImageNet-C top-1 % on contrast at severity 5",
        -1,
        "imagenet-c",
        _accuracy("imagenet-c", conditions={"corruption": "contrast", "severity": "5"}),
    )
)


# ---------------------------------------------------------------------------------------------------- checking
@dataclass(frozen=True)
class FindingCheck:
    """The outcome of one finding on a pair: the models read, their values, ViT minus CNN with its paired interval,
    the p-value (raw and Holm-adjusted), and the verdict; `reason` says why a finding was not checked."""

    finding: Finding
    vit: str | None
    cnn: str | None
    vit_value: float | None = None
    cnn_value: float | None = None
    difference: Mapping[str, Any] | None = None
    test: str | None = None
    p_value: float | None = None
    p_holm: float | None = None
    num_units: int | None = None
    verdict: str = "not checked"
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "finding": self.finding.name,
            "paper": self.finding.paper,
            "claim": self.finding.claim,
            "source": self.finding.source,
            "quantity": self.finding.quantity,
            "direction": "ViT higher" if self.finding.direction > 0 else "ViT lower",
            "vit": self.vit,
            "cnn": self.cnn,
            "vit_value": self.vit_value,
            "cnn_value": self.cnn_value,
            "difference": None if self.difference is None else dict(self.difference),
            "test": self.test,
            "p_value": self.p_value,
            "p_holm": self.p_holm,
            "num_units": self.num_units,
            "verdict": self.verdict,
            "reason": self.reason,
        }


def _model_with(models: Sequence[RunModel], finding: Finding) -> RunModel | None:
    return next((model for model in models if model.has(finding.data)), None)


def _verdict(direction: int, low: float | None, high: float | None, p_holm: float, alpha: float) -> str:
    """ "holds" / "reversed" when the interval of ViT - CNN lies wholly on one side of 0 and Holm's p-value is at
    most alpha, else "not resolved"."""
    if low is None or high is None or p_holm > alpha:
        return "not resolved"
    above, below = low > 0, high < 0
    on_the_papers_side, on_the_other = (above, below) if direction > 0 else (below, above)
    if on_the_papers_side:
        return "holds"
    return "reversed" if on_the_other else "not resolved"


def _estimate(finding: Finding, model: RunModel) -> Estimator:
    """The finding's quantity of one model; MissingData naming the model when it lacks the data."""
    try:
        return finding.estimator(model)
    except LookupError as error:
        reason = str(error).strip("'\"")  # a KeyError's message is quoted
        raise MissingData(f"{model.key}: {reason}") from None


def check_findings(
    vit: Sequence[RunModel],
    cnn: Sequence[RunModel],
    findings: Sequence[Finding],
    settings: UncertaintySettings,
) -> list[FindingCheck]:
    """Each finding on the pair (each member given as the run models that stand for it, read in order), with Holm's
    correction over the findings that could be checked."""
    checks: list[FindingCheck] = []
    tested: list[int] = []
    for finding in findings:
        a, b = _model_with(vit, finding), _model_with(cnn, finding)
        if a is None or b is None:
            lacking = ", ".join(
                f"the {role} has no {finding.data}"
                for role, found in (("ViT", a), ("CNN", b))
                if found is None
            )
            checks.append(FindingCheck(finding, a and a.key, b and b.key, reason=lacking))
            continue
        try:
            estimator_a, estimator_b = _estimate(finding, a), _estimate(finding, b)
            comparison = paired_comparison(
                estimator_a,
                estimator_b,
                settings.confidence_level,
                num_resamples=settings.num_resamples,
                seed=derived_seed(settings.seed, "finding", finding.name),
            )
        except (LookupError, ValueError) as error:
            checks.append(FindingCheck(finding, a.key, b.key, reason=str(error).strip("'\"")))
            continue
        tested.append(len(checks))
        checks.append(
            FindingCheck(
                finding,
                a.key,
                b.key,
                vit_value=estimator_a.estimate,
                cnn_value=estimator_b.estimate,
                difference=comparison.difference.to_dict(),
                test="McNemar exact" if comparison.mcnemar is not None else "paired bootstrap",
                p_value=comparison.p_value,
                num_units=comparison.num_units,
            )
        )
    adjusted = holm_adjust([checks[i].p_value for i in tested])
    alpha = 1.0 - settings.confidence_level
    for index, p_holm in zip(tested, adjusted, strict=True):
        check = checks[index]
        difference = check.difference or {}
        verdict = _verdict(
            check.finding.direction, difference.get("low"), difference.get("high"), p_holm, alpha
        )
        checks[index] = replace(check, p_holm=float(p_holm), verdict=verdict)
    return checks


@dataclass(frozen=True)
class Pairing:
    """A ViT and a CNN of one paper's comparison, each as the run models (merged-result index, key) that stand for
    it, and where the pairing comes from ("reproduction" or "model_pairs")."""

    paper: str
    name: str
    vit: tuple[tuple[int, str], ...]
    cnn: tuple[tuple[int, str], ...]
    origin: str


def pairings(results: Sequence[Mapping[str, Any]]) -> list[Pairing]:
    """The pairs the runs hold: the members of a `vitrobust reproduce` (results.json "reproduction"), else a suite
    pair (`model_pairs` with a name) whose ViT and CNN specs both ran."""
    found: list[Pairing] = []
    by_pair: dict[tuple[str, str], dict[str, list[tuple[int, str]]]] = {}
    for index, result in enumerate(results):
        record = result.get("reproduction") or {}
        if record.get("pair") and record.get("paper"):
            roles = by_pair.setdefault((str(record["paper"]), str(record["pair"])), {"vit": [], "cnn": []})
            for key, members in reproduction_entries(result).items():
                for member in members:
                    if member.get("role") in roles:
                        roles[member["role"]].append((index, key))
    for (paper, name), roles in by_pair.items():
        if roles["vit"] and roles["cnn"]:
            found.append(Pairing(paper, name, tuple(roles["vit"]), tuple(roles["cnn"]), "reproduction"))
    if found:
        return found
    specs: dict[str, list[tuple[int, str]]] = {}
    for index, result in enumerate(results):
        for model in result.get("models") or []:
            specs.setdefault(str(model.get("spec")), []).append((index, str(model["key"])))
    seen = set()
    for result in results:
        suite = result.get("suite") or {}
        paper = next((p for p, s in PAPER_SUITES.items() if s == suite.get("name")), None)
        for pair in suite.get("model_pairs") or []:
            name = pair.get("name")
            if paper is None or not name or (paper, name) in seen:
                continue
            if pair.get("vit") in specs and pair.get("cnn") in specs:
                seen.add((paper, name))
                found.append(
                    Pairing(paper, name, tuple(specs[pair["vit"]]), tuple(specs[pair["cnn"]]), "model_pairs")
                )
    return found


def findings_for(
    results: Sequence[Mapping[str, Any]],
    settings: UncertaintySettings | None = None,
    run_models: RunModels | None = None,
) -> list[tuple[Pairing, list[FindingCheck]]]:
    """Every pair the runs hold (`pairings`) with the checks of its paper's findings; `run_models` shares the
    models' predictions with other sections."""
    if not results:
        return []
    settings = settings or run_settings(results[0])
    run_models = run_models or RunModels(results)
    out = []
    for pairing in pairings(results):
        vit = [run_models(place) for place in pairing.vit]
        cnn = [run_models(place) for place in pairing.cnn]
        out.append((pairing, check_findings(vit, cnn, findings_of(pairing.paper), settings)))
    return out


__all__ = [
    "FINDINGS",
    "FINDING_VERDICTS",
    "Finding",
    "FindingCheck",
    "MissingData",
    "Pairing",
    "check_findings",
    "findings_for",
    "findings_of",
    "get_finding",
    "headline_quantity",
    "pairings",
    "register_finding",
]
