# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The papers' claims about a set of models rather than a ViT/CNN pair, checked over the models of a run.

Paul & Chen's Table 7 compares CNNs with attention modules (global context, GENet, selective kernels: the models
of their `analysis/attention_effectiveness` notebooks) with a plain ResNet-50 on ImageNet-A and -R; their Fig. 9
finds ViT and BiT less sensitive than a ResNet-50 across the Fourier spectrum (a probe's claim: its
`ProbeFinding.baseline` names the ResNet-50). A `FindingSet`
names which models of a run belong to the set and which is the baseline; each member is then checked against the
baseline as a pair (`findings.check_findings`, the member in the ViT's place, the baseline in the CNN's), with its
protocol parts, verdicts and Holm's correction over the set's findings of that member.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from ..probes.spec import PROBES, Claim, ProtocolPart
from ..registry import Registry
from .finding_quantities import accuracy_quantity, headline_quantity
from .findings import Finding, FindingCheck, Pairing, check_findings, get_finding, probe_quantity
from .published import published_numbers
from .run_models import RunModels
from .uncertainty import UncertaintySettings, run_settings


@dataclass(frozen=True)
class FindingSet:
    """A claim over a set of models: name, paper, claim and source (figure or table); findings: its quantities,
    each a `Finding` whose direction is +1 when the paper finds the set's models above the baseline; is_member and
    is_baseline: whether a model (its spec) belongs to the set, is the baseline."""

    name: str
    paper: str
    claim: str
    source: str
    findings: tuple[Finding, ...]
    is_member: Callable[[str], bool]
    is_baseline: Callable[[str], bool]


FINDING_SETS: Registry[FindingSet] = Registry("finding set")


def register_finding_set(finding_set: FindingSet) -> FindingSet:
    """Add a claim over a model set to `FINDING_SETS`."""
    return FINDING_SETS.register(finding_set.name, finding_set)


def _architecture(spec: str) -> str:
    """ "timm/gernet_s.idstcv_in1k" -> "gernet_s": the checkpoint's architecture, its pretrained tag left out."""
    return spec.removeprefix("timm/").split(".")[0].lower()


#: A plain ResNet-50 (timm's resnet50.*, microsoft/resnet-50), not a variant (skresnet50, seresnet50, resnet50d).
_RESNET_50 = re.compile(r"(?:^|/)resnet-?50(?:\.|$)")


def is_resnet50(spec: str) -> bool:
    """Whether a model spec is a plain ResNet-50."""
    return bool(_RESNET_50.search(spec.lower()))


def _table_7_member(spec: str) -> bool:
    """The attention CNNs of Paul & Chen's Table 7: the architectures of its published rows."""
    architectures = {
        _architecture(row.model_id)
        for row in published_numbers("paul-chen")
        if "attention-infused" in row.where
    }
    return _architecture(spec) in architectures


def _against_resnet50(name: str, benchmark: str) -> Finding:
    """A Table 7 quantity: the pair finding of `name`'s top-1 (all 1000 classes, as the notebooks), the attention
    CNN above; both models given the same preprocessing (the notebooks squash every model to 224)."""
    pair = get_finding(name)
    return Finding(
        f"table-7-{benchmark}",
        "paul-chen",
        f"CNN with attention modules above a plain ResNet-50 on {benchmark}",
        "Paul & Chen, Table 7",
        pair.quantity,
        +1,
        benchmark,
        pair.estimator,
        protocol=(ProtocolPart("preprocessing"),),
    )


register_finding_set(
    FindingSet(
        "table-7",
        "paul-chen",
        "CNNs with attention modules (GC, GENet, SK) more robust than a plain ResNet-50 on ImageNet-A and -R",
        "Paul & Chen, Table 7 (analysis/attention_effectiveness notebooks: ImageNet-A and -R)",
        (_against_resnet50("imagenet-a", "imagenet-a"), _against_resnet50("imagenet-r", "imagenet-r")),
        _table_7_member,
        is_resnet50,
    )
)


def is_vit_or_bit(spec: str) -> bool:
    """Whether a model spec is a ViT or a BiT (Fig. 9's models): "vit" in its architecture, or a BiT checkpoint."""
    architecture = _architecture(spec)
    return architecture.startswith(("vit", "google/vit")) or "_bit" in architecture or "/bit" in spec.lower()


#: Park & Kim's CIFAR-100 models by spec: an AlterNet (this package's port saves and names it "alternet"), a plain
#: ResNet-50 (timm's, transformers', their release's `resnet_50_cifar100_*.pth.tar` or `park-kim:resnet-50`) and a
#: ViT (timm's or transformers' ViT / DeiT, their `vit_ti_cifar100_*.pth.tar` or `park-kim:vit-ti`).
_ALTERNET = re.compile(r"alternet")
_CIFAR_RESNET_50 = re.compile(r"(?:^|[/:])resnet[-_]?50(?:[._:/-]|$)")
_PLAIN_VIT = re.compile(r"(?:^|[/:])(?:vit|deit)[-_]")


def is_alternet(spec: str) -> bool:
    """Whether a model spec names an AlterNet."""
    return bool(_ALTERNET.search(spec.lower()))


def is_park_kim_resnet50(spec: str) -> bool:
    """Whether a model spec names a plain ResNet-50, Park & Kim's release file and `park-kim:` spec included."""
    return is_resnet50(spec) or bool(_CIFAR_RESNET_50.search(spec.lower()))


def is_plain_vit(spec: str) -> bool:
    """Whether a model spec names a plain ViT or DeiT (not a PiT, Swin or hybrid)."""
    return bool(_PLAIN_VIT.search(spec.lower()))


def _alternet_above(baseline: str) -> tuple[Finding, ...]:
    """Park & Kim's CIFAR-100 quantities, the AlterNet above `baseline`; both models given the same preprocessing."""
    same = (ProtocolPart("preprocessing"),)
    source = "Park & Kim, Sec. 4 (AlterNet); how-do-vits-work README: AlterNet outperforms CNNs on CIFAR-100"
    return (
        Finding(
            f"alternet-above-{baseline}-cifar100",
            "park-kim",
            f"AlterNet above the {baseline.upper()} on CIFAR-100",
            source,
            "CIFAR-100 top-1 %",
            +1,
            "cifar100",
            accuracy_quantity("cifar100"),
            protocol=same,
        ),
        Finding(
            f"alternet-above-{baseline}-cifar100-c",
            "park-kim",
            f"AlterNet above the {baseline.upper()} on CIFAR-100-C",
            source,
            "CIFAR-100-C mean top-1 % over the run's corruptions and severities",
            +1,
            "cifar100-c",
            headline_quantity("cifar100-c", "mean top-1 %"),
            protocol=same,
        ),
    )


for _baseline, _is_baseline in (("cnn", is_park_kim_resnet50), ("vit", is_plain_vit)):
    register_finding_set(
        FindingSet(
            f"alternet-above-{_baseline}",
            "park-kim",
            f"AlterNet outperforms the {_baseline.upper()} on CIFAR-100 (where a run holds both)",
            "Park & Kim, Sec. 4 (AlterNet); how-do-vits-work README: AlterNet outperforms CNNs on CIFAR-100, unlike "
            "canonical ViTs",
            _alternet_above(_baseline),
            is_alternet,
            _is_baseline,
        )
    )

#: The baselines a probe's set claim names (`ProbeFinding.baseline`).
BASELINES: dict[str, Callable[[str], bool]] = {"resnet-50": is_resnet50}


def _sync_probe_sets() -> None:
    """Register the set claims the probes declare (`ProbeFinding.baseline`: the ViTs and BiTs of a run against
    that baseline), a probe registered later included."""
    for spec in PROBES.values():
        for finding in spec.findings:
            if finding.baseline is None or finding.name in FINDING_SETS:
                continue
            claim = {field.name: getattr(finding, field.name) for field in fields(Claim)}
            quantity = Finding(**claim, data=spec.name, estimator=probe_quantity(spec.name, finding))
            register_finding_set(
                FindingSet(
                    finding.name,
                    finding.paper,
                    finding.claim,
                    finding.source,
                    (quantity,),
                    is_vit_or_bit,
                    BASELINES[finding.baseline],
                )
            )


def finding_set_checks(
    results: Sequence[Mapping[str, Any]],
    settings: UncertaintySettings | None = None,
    run_models: RunModels | None = None,
    *,
    check_other_protocols: bool = False,
) -> list[tuple[Pairing, list[FindingCheck]]]:
    """Each registered set's findings over the models of the runs: every member against the baseline (the first
    model that is one), as a `Pairing` whose origin is "model set" and name says which set and models; a model
    that holds none of the set's data is left out."""
    if not results:
        return []
    _sync_probe_sets()
    settings = settings or run_settings(results[0])
    run_models = run_models or RunModels(results)
    places = [
        (index, str(model["key"]), str(model.get("spec") or model["key"]))
        for index, result in enumerate(results)
        for model in result.get("models") or []
    ]
    out = []
    for finding_set in FINDING_SETS.values():

        def has_data(index: int, key: str, _set: FindingSet = finding_set) -> bool:
            return any(run_models((index, key)).has(finding.data) for finding in _set.findings)

        baseline = next((p for p in places if finding_set.is_baseline(p[2]) and has_data(p[0], p[1])), None)
        if baseline is None:
            continue
        for index, key, spec in places:
            if not finding_set.is_member(spec) or not has_data(index, key):
                continue
            name = f"{finding_set.name}: {key} against {baseline[1]}"
            pairing = Pairing(finding_set.paper, name, ((index, key),), (baseline[:2],), "model set")
            checks = check_findings(
                [run_models((index, key))],
                [run_models(baseline[:2])],
                finding_set.findings,
                settings,
                check_other_protocols=check_other_protocols,
            )
            out.append((pairing, checks))
    return out


__all__ = [
    "FINDING_SETS",
    "FindingSet",
    "finding_set_checks",
    "is_alternet",
    "is_park_kim_resnet50",
    "is_plain_vit",
    "is_resnet50",
    "is_vit_or_bit",
    "register_finding_set",
]
