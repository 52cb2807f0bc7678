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
- "not checked": a model lacks the data (the reason says which), the two share no images, or their runs differ
  from the paper's protocol ("other protocol (the parts)").

Each finding names the parts of its quantity's protocol that the runs decide (`ProtocolPart`: the preprocessing
each model was given, the release encoding, a probe's protocol param), with the name the paper used for its ViT and
its CNN (Paul & Chen fed BiT-M squashed to 224 and the ViTs at 384 on ImageNet-A/R/O), or none where the two need
only share one. A pair whose runs differ in any part is not checked; `check_other_protocols` checks it anyway, and
its verdict then ends in "under another protocol".

The pair is the ViT and the CNN of a `paper` or `mechanisms` suite pair (`model_pairs`), or the two members of a
`vitrobust reproduce` run; across the runs of a reproduction each finding reads the run that holds its data.

A claim about one model by itself (`Claim.member`: MSAs reduce the feature-map variance within the ViT, convolutions
raise it within the CNN) reads only that member of the pair: its quantity against 0, bootstrapped over its images
with the same verdicts ("quantity above / below 0" in place of "ViT above / below the CNN").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np

from ..metrics.estimators import (
    Estimator,
    derived_seed,
    paired_comparison,
)
from ..metrics.intervals import holm_adjust
from ..probes.spec import PROBES, Claim, ProtocolPart
from ..registry import Registry
from .finding_quantities import (
    MissingData,
    accuracy_quantity,
    headline_quantity,
    mean_over_corruptions,
    probe_quantity,
)
from .headlines import AUPR
from .published_vs_ours import PAPER_SUITES, reproduction_entries
from .run_models import RunModel, RunModels
from .uncertainty import UncertaintySettings, run_settings

FINDING_VERDICTS = ("holds", "reversed", "not resolved", "not checked")
#: What a verdict reached under another protocol than the paper's ends in (`check_other_protocols`).
UNDER_ANOTHER_PROTOCOL = "under another protocol"
#: `Claim.member`: None (the ViT against the CNN), or the pair member a claim about one model reads, with its name.
MEMBER_ROLES = {None: None, "vit": "ViT", "cnn": "CNN"}
#: The test of a claim about one model: its quantity against 0, bootstrapped over its units.
AGAINST_ZERO = "bootstrap against 0"


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
    if finding.member not in MEMBER_ROLES:
        raise ValueError(
            f"Finding {finding.name!r}: member must be one of {list(MEMBER_ROLES)}, got {finding.member!r}."
        )
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


def _sync_probe_findings() -> None:
    """Register the findings the probes declare (`ProbeSpec.findings`), a probe registered later included."""
    for spec in PROBES.values():
        for finding in spec.findings:
            if finding.baseline is None and finding.name not in FINDINGS:  # else a set's (`finding_sets`)
                claim = {
                    field.name: getattr(finding, field.name) for field in fields(Claim)
                }  # protocol included
                register_finding(
                    Finding(**claim, data=spec.name, estimator=probe_quantity(spec.name, finding))
                )


# ------------------------------------------------------------------------------------------------ the findings
# Paul & Chen's sections as the robustness-vit READMEs name them: Sec. 3 the ImageNet benchmarks, Sec. 4 the analyses.
# Their ImageNet-A/R/O notebooks resize without a crop: the ViTs to their 384 pixels, BiT-M squashed to 224 (the
# published rows' protocols). On ImageNet-C both read the released 224-pixel images: the two runs must share theirs.
_NOTEBOOK_RESIZE = (ProtocolPart("preprocessing", vit="native-resize", cnn="squash-224"),)
_SHARED_IMAGENET_C = (ProtocolPart("preprocessing"), ProtocolPart("release_encoding"))
register_finding(
    Finding(
        "imagenet-a",
        "paul-chen",
        "ViT above BiT on ImageNet-A",
        "Paul & Chen, Sec. 3, ImageNet-A table; the abstract's 4.3x (ViT-L/16 28.10 %) is against BiT-M R101x1 "
        "(4.38x in the notebooks), 2.69x against BiT-M R101x3",
        "ImageNet-A top-1 % over all 1000 classes (paul-chen-1000)",
        +1,
        "imagenet-a",
        accuracy_quantity("imagenet-a", class_mask="paul-chen-1000"),
        protocol=_NOTEBOOK_RESIZE,
    )
)
register_finding(
    Finding(
        "imagenet-r",
        "paul-chen",
        "ViT above BiT on ImageNet-R",
        "Paul & Chen, Sec. 3, ImageNet-R table",
        "ImageNet-R top-1 % over all 1000 classes (paul-chen-1000)",
        +1,
        "imagenet-r",
        accuracy_quantity("imagenet-r", class_mask="paul-chen-1000"),
        protocol=_NOTEBOOK_RESIZE,
    )
)
register_finding(
    Finding(
        "imagenet-o",
        "paul-chen",
        "ViT above BiT in ImageNet-O detection",
        "Paul & Chen, Sec. 3, ImageNet-O figure",
        "ImageNet-O AUPR %",
        +1,
        "imagenet-o",
        headline_quantity("imagenet-o", AUPR),
        protocol=_NOTEBOOK_RESIZE,
    )
)
register_finding(
    Finding(
        "imagenet-c-severity-5",
        "paul-chen",
        "ViT above BiT on ImageNet-C at severity 5, for every size",
        "Paul & Chen, Sec. 3, Fig. 2 (ImageNet-C)",
        "ImageNet-C top-1 % at severity 5, the mean over the run's corruptions (19 in a full run)",
        +1,
        "imagenet-c",
        mean_over_corruptions("imagenet-c", "5"),
        protocol=_SHARED_IMAGENET_C,
    )
)
register_finding(
    Finding(
        "contrast-severity-5",
        "paul-chen",
        "ViT slightly below BiT on contrast at severity 5",
        "Paul & Chen, Sec. 3, Fig. 3 (ImageNet-C, contrast at severity 5)",
        "ImageNet-C top-1 % on contrast at severity 5",
        -1,
        "imagenet-c",
        accuracy_quantity("imagenet-c", conditions={"corruption": "contrast", "severity": "5"}),
        protocol=_SHARED_IMAGENET_C,
    )
)


# ---------------------------------------------------------------------------------------------------- checking
@dataclass(frozen=True)
class FindingCheck:
    """The outcome of one finding on a pair: the models read, their values, ViT minus CNN with its paired interval,
    the p-value (raw and Holm-adjusted), and the verdict; `reason` says why a finding was not checked. protocol:
    the finding's protocol parts as each model's run applied them ({"vit": {part: name}, "cnn": {...}});
    other_protocol: how they differ from the paper's, where they do."""

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
    protocol: Mapping[str, Mapping[str, str | None]] | None = None
    other_protocol: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "finding": self.finding.name,
            "paper": self.finding.paper,
            "claim": self.finding.claim,
            "source": self.finding.source,
            "quantity": self.finding.quantity,
            "direction": _direction_words(self.finding),
            "member": self.finding.member,
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
            "protocol": None if self.protocol is None else {k: dict(v) for k, v in self.protocol.items()},
            "other_protocol": self.other_protocol,
        }


def _direction_words(finding: Finding) -> str:
    """ "ViT higher" / "ViT lower" for a pair claim; "CNN's quantity above 0" and alike for a claim about one model."""
    side = "higher" if finding.direction > 0 else "lower"
    if finding.member is None:
        return f"ViT {side}"
    return f"{MEMBER_ROLES[finding.member]}'s quantity {'above' if finding.direction > 0 else 'below'} 0"


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


def applied_part(model: RunModel, data: str, part: str) -> str | None:
    """The name of protocol `part` that a model's run applied to `data` (a benchmark, or a probe: its preprocessing
    is that of the benchmark it read, its other parts its params); None where the run recorded none."""
    if data in PROBES.names():
        probe = model.probe(data) or {}
        if part != "preprocessing":
            found = probe.get(part, (probe.get("params") or {}).get(part))
            return None if found is None else str(found)
        data = str(probe.get("benchmark") or "imagenet-val")
    return model.applied_protocol(data).get(part)


def protocol_of(
    finding: Finding, vit: RunModel, cnn: RunModel
) -> tuple[dict[str, dict[str, str | None]], str]:
    """The finding's protocol parts as each run applied them ({"vit": {part: name}, "cnn": ...}), and how they
    differ from the paper's, in words ("" when they do not): a part the paper names for a role must be that name
    (a run that did not record it differs), one it does not must be the same for both (recorded by both or by
    neither: runs written before the part was recorded)."""
    applied = {
        role: {p.part: applied_part(model, finding.data, p.part) for p in finding.protocol}
        for role, model in (("vit", vit), ("cnn", cnn))
    }
    differences = []
    for part in finding.protocol:
        ours = (applied["vit"][part.part], applied["cnn"][part.part])
        papers = (part.vit, part.cnn)
        if papers == (None, None) and ours[0] != ours[1]:
            differences.append(
                f"{part.part}: ViT {ours[0] or 'not recorded'}, CNN {ours[1] or 'not recorded'}"
            )
        elif any(paper is not None and paper != mine for paper, mine in zip(papers, ours, strict=True)):
            differences.append(
                f"{part.part}: ViT {ours[0] or 'not recorded'}, CNN {ours[1] or 'not recorded'} here; the "
                f"paper's ViT {part.vit or 'any'}, "
                f"CNN {part.cnn or 'any'}"
            )
    return applied, "; ".join(differences)


def _zero_like(estimator: Estimator) -> Estimator:
    """A constant 0 on the same units as `estimator`: what a claim about one model compares its quantity with."""
    return replace(
        estimator,
        statistic=lambda data, weights: np.zeros(len(weights)),
        proportion=False,
        spread=lambda data, share: (0.0, 0.0),
        note=None,
    )


def _member_check(
    finding: Finding, models: Sequence[RunModel], settings: UncertaintySettings, check_other_protocols: bool
) -> FindingCheck:
    """A claim about one member of the pair (`Claim.member`): that model's quantity against 0 over its images (the
    verdict is set with the others after Holm's correction). Its protocol parts must be the paper's for its role
    where the paper names one."""
    role = str(finding.member)
    model = _model_with(models, finding)
    if model is None:
        return FindingCheck(finding, None, None, reason=f"the {MEMBER_ROLES[role]} has no {finding.data}")
    keys = {"vit": model.key if role == "vit" else None, "cnn": model.key if role == "cnn" else None}
    applied = {p.part: applied_part(model, finding.data, p.part) for p in finding.protocol}
    papers = {p.part: getattr(p, role) for p in finding.protocol}
    other = "; ".join(
        f"{part}: {MEMBER_ROLES[role]} {applied[part] or 'not recorded'} here, the paper's {paper}"
        for part, paper in papers.items()
        if paper is not None and applied[part] != paper
    )
    protocol = {role: applied}
    if other and not check_other_protocols:
        return FindingCheck(
            finding, **keys, reason=f"other protocol ({other})", protocol=protocol, other_protocol=other
        )
    try:
        estimator = _estimate(finding, model)
        comparison = paired_comparison(
            estimator,
            _zero_like(estimator),
            settings.confidence_level,
            num_resamples=settings.num_resamples,
            seed=derived_seed(settings.seed, "finding", finding.name),
        )
    except (LookupError, ValueError) as error:
        reason = str(error).strip("'\"")
        return FindingCheck(finding, **keys, reason=reason, protocol=protocol, other_protocol=other or None)
    values = {f"{role}_value": estimator.estimate}
    return FindingCheck(
        finding,
        **keys,
        **values,
        difference=comparison.difference.to_dict(),
        test=AGAINST_ZERO,
        p_value=comparison.p_value,
        num_units=comparison.num_units,
        protocol=protocol,
        other_protocol=other or None,
    )


def check_findings(
    vit: Sequence[RunModel],
    cnn: Sequence[RunModel],
    findings: Sequence[Finding],
    settings: UncertaintySettings,
    *,
    check_other_protocols: bool = False,
) -> list[FindingCheck]:
    """Each finding on the pair (each member given as the run models that stand for it, read in order), with Holm's
    correction over the findings that could be checked. A pair whose runs differ from the finding's protocol
    (`protocol_of`) is not checked ("other protocol (...)"), unless `check_other_protocols`: then it is checked
    and its verdict ends in "under another protocol"."""
    checks: list[FindingCheck] = []
    tested: list[int] = []
    for finding in findings:
        if finding.member is not None:
            check = _member_check(
                finding, vit if finding.member == "vit" else cnn, settings, check_other_protocols
            )
            if check.difference is not None:
                tested.append(len(checks))
            checks.append(check)
            continue
        a, b = _model_with(vit, finding), _model_with(cnn, finding)
        if a is None or b is None:
            lacking = ", ".join(
                f"the {role} has no {finding.data}"
                for role, found in (("ViT", a), ("CNN", b))
                if found is None
            )
            checks.append(FindingCheck(finding, a and a.key, b and b.key, reason=lacking))
            continue
        protocol, other = protocol_of(finding, a, b)
        if other and not check_other_protocols:
            reason = f"other protocol ({other})"
            checks.append(
                FindingCheck(finding, a.key, b.key, reason=reason, protocol=protocol, other_protocol=other)
            )
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
            reason = str(error).strip("'\"")
            checks.append(
                FindingCheck(finding, a.key, b.key, reason=reason, protocol=protocol, other_protocol=other)
            )
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
                protocol=protocol,
                other_protocol=other or None,
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
        if check.other_protocol:
            verdict = f"{verdict} {UNDER_ANOTHER_PROTOCOL}"
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
    *,
    check_other_protocols: bool = False,
) -> list[tuple[Pairing, list[FindingCheck]]]:
    """Every pair the runs hold (`pairings`) with the checks of its paper's findings; `run_models` shares the
    models' predictions with other sections; `check_other_protocols`: see `check_findings`."""
    if not results:
        return []
    settings = settings or run_settings(results[0])
    run_models = run_models or RunModels(results)
    out = []
    for pairing in pairings(results):
        vit = [run_models(place) for place in pairing.vit]
        cnn = [run_models(place) for place in pairing.cnn]
        checks = check_findings(
            vit, cnn, findings_of(pairing.paper), settings, check_other_protocols=check_other_protocols
        )
        out.append((pairing, checks))
    return out


__all__ = [
    "AGAINST_ZERO",
    "FINDINGS",
    "FINDING_VERDICTS",
    "MEMBER_ROLES",
    "UNDER_ANOTHER_PROTOCOL",
    "Finding",
    "FindingCheck",
    "MissingData",
    "Pairing",
    "applied_part",
    "check_findings",
    "findings_for",
    "findings_of",
    "get_finding",
    "headline_quantity",
    "pairings",
    "probe_quantity",
    "protocol_of",
    "register_finding",
]
