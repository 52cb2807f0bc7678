# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""`vitrobust reproduce`: run a paper's suite on one of its model pairs, with the protocol and the checkpoint of
each published number, and report the published numbers beside ours and the paper's findings on the pair.

A published number fixes more than a benchmark: the checkpoint (Paul & Chen scored ImageNet-A/R/O with vit_jax's
384-pixel ViTs but ImageNet-C with timm's 224-pixel ones), the preprocessing (a squash to 384 pixels for those
ViTs, to 224 for the BiT-M TF-Hub models, the release's 224 pixels for ImageNet-C) and the probe's parameters (the
notebooks' Cutout rule and image list, their PGD record). `plan_reproduction` groups the published numbers of the
pair's two models into LEGS, one run each: a model spec with, per benchmark, the protocol its numbers need and,
per probe, their parameters. A number's spec is the Hub or timm id holding its very weights, else the closest
public model the table names, else the pair's own spec (the report then says "other checkpoint"). The benchmarks
and probes that the paper's findings read are added to each member's first leg. With `stand_in` one spec (e.g. the
offline builtin model) replaces every checkpoint, so every number is "not comparable" and says why.

`run_reproduction` runs the legs (`evaluation.runner.evaluate`, one folder each under `<output>/legs/`), records
in each leg's results.json which paper model its model stands for ("reproduction"), and writes the combined report
(`<output>/report.md`, `.html`: every run side by side, then "Published vs ours" and "Findings") and
`<output>/reproduction.json` (the plan and both sections).
"""

from __future__ import annotations

import inspect
import json
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from ..analysis.analyze import analyze
from ..analysis.findings import findings_of
from ..analysis.pairings import pair_model_keys, row_interpolation, row_preprocessing
from ..analysis.published import PAPERS, PublishedNumber, published_numbers
from ..analysis.published_vs_ours import PAPER_SUITES
from ..analysis.record import model_key
from ..analysis.results import RESULTS_FILE, load_results, merge_results
from ..atomic_files import write_text_atomic
from ..models.loading import checkpoint_identity
from ..probes.spec import PROBES
from ..registry import did_you_mean
from ..report.document import write_report
from .config import EvaluationConfig
from .runner import evaluate
from .suite import Suite, load_suite

#: The pair `vitrobust reproduce` runs when none is named: the paper's headline comparison.
DEFAULT_PAIRS = {"paul-chen": "vit-l16/bit-m-r101x3", "park-kim": "deit-s/resnet-50"}
#: A pair of another label space (`label_space:` of its suite entry) has the probes of the paper's findings read the
#: counterpart of the suite's ImageNet benchmarks, and probes with Park & Kim's ImageNet training augmentation take
#: their CIFAR-100 recipe at its batch size (how-do-vits-work configs/cifar100_vit.yaml: batch_size 96).
LABEL_SPACES: dict[str, dict[str, str]] = {
    "cifar100": {"imagenet-val": "cifar100", "imagenet-train": "cifar100-train"},
}
_AUGMENTATION_OVERRIDES: dict[str, dict[str, dict[str, Any]]] = {
    "cifar100": {"park-kim-imagenet": {"augmentation": "park-kim-cifar100", "batch_size": 96}},
}
#: The offline sources `--offline` reads (the demo suite's): the bundled photos, ImageNet-C/-P generated from them.
OFFLINE_DATA = {
    "imagenet-val": "builtin",
    "imagenet-c": "generated:builtin",
    "imagenet-p": "generated:builtin",
}
ROLES = ("vit", "cnn")
#: The key under which a probe's needs carry the benchmark its images come from (kept in `Leg.probe_data`).
_DATA = "\x00benchmark"
REPRODUCTION_FILE = "reproduction.json"


@dataclass(frozen=True)
class Member:
    """One model of the pair: its role ("vit" or "cnn"), its key in the published table (the paper's model, whose
    numbers may come from several checkpoints), and the spec the pair names for it."""

    role: str
    model_key: str
    spec: str


@dataclass
class Leg:
    """One run of a reproduction: a model spec standing for one or both members, the benchmarks with their protocol
    overrides, the probes with their parameter overrides, the published rows it serves, and why this spec."""

    name: str
    spec: str
    members: list[Member] = field(default_factory=list)
    why: str = ""
    benchmarks: dict[str, dict[str, str]] = field(default_factory=dict)
    probes: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: probe -> the benchmark its images come from, where the published numbers name another than the suite's
    probe_data: dict[str, str] = field(default_factory=dict)
    #: probe -> the images its published numbers used, where they are random draws (a training augmentation)
    probe_images: dict[str, int] = field(default_factory=dict)
    rows: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class ReproductionPlan:
    """The legs of a reproduction, and what it leaves out (benchmark or probe -> why) or adapts (notes)."""

    paper: str
    pair: str
    suite: Suite
    members: tuple[Member, Member]
    legs: list[Leg]
    stand_in: str | None = None
    data: dict[str, str] = field(default_factory=dict)
    left_out: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    #: the pair's label space where it is not ImageNet's (`LABEL_SPACES`)
    label_space: str | None = None

    @property
    def published_rows(self) -> int:
        """How many published numbers the legs serve (0: only the paper's findings are checked on the pair)."""
        return sum(len(leg.rows) for leg in self.legs)

    def to_dict(self) -> dict[str, Any]:
        return {
            "paper": self.paper,
            "pair": self.pair,
            "label_space": self.label_space,
            "published_rows": self.published_rows,
            "suite": self.suite.name,
            "members": [asdict(member) for member in self.members],
            "stand_in": self.stand_in,
            "data": self.data,
            "legs": [leg.to_dict() for leg in self.legs],
            "left_out": self.left_out,
            "notes": self.notes,
        }

    def describe(self) -> str:
        """The plan in words, one leg a paragraph (what `vitrobust reproduce --plan` prints)."""
        lines = [f"{PAPERS[self.paper]}: pair {self.pair} (suite {self.suite.name})"]
        for member in self.members:
            lines.append(f"  {member.role}: {member.model_key}, pair spec {member.spec}")
        for leg in self.legs:
            roles = ", ".join(f"{m.role} {m.model_key}" for m in leg.members)
            lines.append(f"leg {leg.name}: --model {leg.spec} for {roles} ({leg.why})")
            for name, protocol in leg.benchmarks.items():
                chosen = ", ".join(f"{k}={v}" for k, v in protocol.items()) or "the suite's protocol"
                lines.append(f"  benchmark {name}: {chosen}")
            for name, params in leg.probes.items():
                chosen = ", ".join(f"{k}={v}" for k, v in params.items()) or "the suite's parameters"
                data = f" on {leg.probe_data[name]}" if name in leg.probe_data else ""
                images = f", {leg.probe_images[name]} images" if name in leg.probe_images else ""
                lines.append(f"  probe {name}{data}{images}: {chosen}")
            lines.append(f"  published numbers served: {len(leg.rows)}")
        lines += [f"left out: {name}: {why}" for name, why in self.left_out.items()]
        lines += [f"note: {note}" for note in self.notes]
        return "\n".join(lines)


def pair_names(paper: str) -> tuple[str, ...]:
    """The named pairs of a paper's suite (`model_pairs`)."""
    return tuple(str(p["name"]) for p in load_suite(PAPER_SUITES[paper]).model_pairs if p.get("name"))


def _members(
    paper: str, suite: Suite, pair: str | None, vit: str | None, cnn: str | None
) -> tuple[str, tuple[Member, Member], dict[str, str]]:
    name = pair or DEFAULT_PAIRS[paper]
    keys = name.split("/")
    if len(keys) != 2 or not all(keys):
        raise ValueError(f"--pair takes VIT_KEY/CNN_KEY, e.g. {DEFAULT_PAIRS[paper]}, got {name!r}.")
    entry = next((p for p in suite.model_pairs if p.get("name") == name), None)
    if entry is not None:
        keys = list(pair_model_keys(entry) or keys)
    if entry is None and (vit is None or cnn is None):
        known = pair_names(paper)
        raise ValueError(
            f"{name!r} is not a pair of the {suite.name} suite.{did_you_mean(name, known)} Its pairs: "
            f"{', '.join(known)}; or give both models with --vit SPEC --cnn SPEC."
        )
    members = []
    for role, key, given in zip(ROLES, keys, (vit, cnn), strict=True):
        spec = given or (entry or {}).get(role)
        if not spec:
            raise ValueError(f"Pair {name!r} names no {role} spec; give it with --{role} SPEC.")
        members.append(Member(role, key, str(spec)))
    return name, (members[0], members[1]), dict(entry or {})


def _spec_for(row: PublishedNumber, member: Member) -> tuple[str, str]:
    """The spec that runs a published number, and why."""
    if row.has_public_weights:
        why = f"the weights of {member.model_key}'s published numbers: {row.model}"
        if member.spec != row.model_id and checkpoint_identity(member.spec) == row.model_id:
            return member.spec, f"{why} (the pair's copy of {row.model_id})"
        return row.model_id, why
    if row.model_match == "closest":
        return row.model_id, f"the closest public model to {row.model} (no public copy of its weights)"
    return member.spec, f"the pair's model: {row.model} has no public copy of its weights"


def _probe_value(probe: str, param: str, text: str) -> Any:
    """A probe parameter of the table (text) as the probe function takes it (a number, a list, a name)."""
    value = _parsed_probe_value(probe, param, text)
    return list(value) if isinstance(value, tuple) else value


@cache
def _parsed_probe_value(probe: str, param: str, text: str) -> Any:
    # Cached: Park & Kim's 877 loss-landscape rows repeat the same nine parameters.
    parameter = inspect.signature(PROBES.get(probe).probe).parameters.get(param)
    if parameter is not None and isinstance(parameter.default, list | tuple):
        return tuple(yaml.safe_load(item) for item in text.split(","))
    return yaml.safe_load(text)


def _needs(row: PublishedNumber, suite: Suite) -> tuple[dict[str, dict[str, str]], dict[str, dict[str, Any]]]:
    """What a published number needs of a leg: benchmark -> protocol overrides, probe -> parameter overrides. Its
    preprocessing and interpolation are read as the suite's `pairing` reads them (`analysis.pairings`)."""
    parts = row.protocol_parts
    bench, preprocessing = row_preprocessing(row, _probe_benchmark(suite, row.benchmark))
    protocol = {} if preprocessing is None else {"preprocessing": preprocessing}
    if row_interpolation(row) is not None:
        protocol["interpolation"] = str(row_interpolation(row))
    if row.benchmark in PROBES.names():
        task = PROBES.get(row.benchmark)
        accepted = set(task.accepted_params) | set(task.extra_params)
        params = {
            part: _probe_value(row.benchmark, part, text)
            for part, text in parts.items()
            if part in accepted and text != "other"
        }
        return {bench: protocol}, {row.benchmark: {**params, _DATA: bench}}
    return {bench: protocol}, {}


def _random_draw_images(row: PublishedNumber) -> int | None:
    """The image count of a probe's number made on randomly augmented draws (Park & Kim's loss landscape: 4,992
    shuffled training images a point): their very inputs can never be met, so a leg draws as many (None else)."""
    if row.benchmark in PROBES.names() and row.protocol_parts.get("augmentation") and row.images:
        return int(row.images)
    return None


def _conflicts(
    leg: Leg, benchmarks: Mapping[str, Mapping[str, str]], probes: Mapping[str, Mapping[str, Any]]
) -> bool:
    for name, protocol in benchmarks.items():
        have = leg.benchmarks.get(name, {})
        if any(part in have and have[part] != value for part, value in protocol.items()):
            return True
    for name, params in probes.items():
        have = {**leg.probes.get(name, {}), _DATA: leg.probe_data.get(name)}
        if any(have.get(param) is not None and have[param] != value for param, value in params.items()):
            return True
    return False


def _add(
    leg: Leg, benchmarks: Mapping[str, Mapping[str, str]], probes: Mapping[str, Mapping[str, Any]]
) -> None:
    for name, protocol in benchmarks.items():
        leg.benchmarks.setdefault(name, {}).update(protocol)
    for name, params in probes.items():
        leg.probes.setdefault(name, {}).update({k: v for k, v in params.items() if k != _DATA})
        if _DATA in params:
            leg.probe_data[name] = params[_DATA]


def _leg_for(
    legs: list[Leg],
    spec: str,
    member: Member,
    why: str,
    benchmarks: Mapping[str, Mapping[str, str]],
    probes: Mapping[str, Mapping[str, Any]],
) -> Leg:
    """The first leg of `spec` that can take these needs without a conflict (a new one otherwise)."""
    for leg in legs:
        if leg.spec == spec and not _conflicts(leg, benchmarks, probes):
            break
    else:
        leg = Leg(name="", spec=spec, why=why)
        legs.append(leg)
    if member not in leg.members:
        leg.members.append(member)
    _add(leg, benchmarks, probes)
    return leg


def _is_local_folder(source: str | None) -> bool:
    return bool(source) and os.path.isdir(os.path.expanduser(str(source)))


def plan_reproduction(
    paper: str,
    pair: str | None = None,
    *,
    vit: str | None = None,
    cnn: str | None = None,
    stand_in: str | None = None,
    data: Mapping[str, str] | None = None,
    offline: bool = False,
) -> ReproductionPlan:
    """The legs that reproduce `paper`'s published numbers of a pair (`--pair VIT_KEY/CNN_KEY`, a named pair of the
    paper's suite, or any two model keys of the table with `vit` and `cnn` specs). `stand_in` replaces every
    checkpoint; `offline` stands the builtin model in and reads the bundled photos (the benchmarks without an
    offline copy are left out, and say so). Raises ValueError before any work for an unknown paper or pair."""
    if paper not in PAPERS:
        raise ValueError(
            f"Unknown paper {paper!r}.{did_you_mean(paper, PAPERS)} Papers: {', '.join(PAPERS)}."
        )
    suite = load_suite(PAPER_SUITES[paper])
    name, members, entry = _members(paper, suite, pair, vit, cnn)
    label_space = entry.get("label_space")
    if label_space is not None and label_space not in LABEL_SPACES:
        raise ValueError(f"Pair {name!r}: label_space {label_space!r} is none of {', '.join(LABEL_SPACES)}.")
    data = dict(data or {})
    if offline:
        from ..constants import DEFAULT_MODEL

        stand_in = stand_in or DEFAULT_MODEL
        data = {**OFFLINE_DATA, **data}
    plan = ReproductionPlan(paper, name, suite, members, [], stand_in, data, label_space=label_space)
    suite_benchmarks = set(suite.benchmark_names)
    for member in members:
        for row in published_numbers(paper):
            if row.model_key != member.model_key:
                continue
            spec, why = _spec_for(row, member)
            if stand_in is not None:
                spec, why = stand_in, f"stand-in for {member.model_key}"
            benchmarks, probes = _needs(row, suite)
            unknown = [
                b for b in [*benchmarks, *probes] if b not in suite_benchmarks and b not in suite.probe_names
            ]
            if unknown:
                plan.left_out.setdefault(unknown[0], f"the {suite.name} suite does not run {unknown[0]}")
                continue
            leg = _leg_for(plan.legs, spec, member, why, benchmarks, probes)
            leg.rows.append(row.row_id)
            if _random_draw_images(row) is not None:
                leg.probe_images[row.benchmark] = max(
                    leg.probe_images.get(row.benchmark, 0), _random_draw_images(row)
                )
        mine = [leg for leg in plan.legs if member in leg.members]
        first = next(
            (leg for leg in mine if leg.spec == (stand_in or member.spec)), mine[0] if mine else None
        )
        for finding in findings_of(paper):
            if any(
                member in leg.members and finding.data in (*leg.benchmarks, *leg.probes) for leg in plan.legs
            ):
                continue
            if finding.data in suite.probe_names:
                needs = _finding_probe_needs(suite, finding.data, label_space)
            elif finding.data in suite_benchmarks and label_space is not None:
                plan.left_out.setdefault(
                    finding.data, f"{finding.data} is not in the pair's {label_space} labels"
                )
                continue
            elif finding.data in suite_benchmarks:
                needs = ({finding.data: {}}, {})
            else:
                plan.left_out.setdefault(finding.data, f"the {suite.name} suite does not run {finding.data}")
                continue
            if first is None:
                spec = stand_in or member.spec
                why = (
                    f"stand-in for {member.model_key}"
                    if stand_in
                    else f"the pair's model for {member.model_key}"
                )
                first = _leg_for(plan.legs, spec, member, why, *needs)
            elif _conflicts(first, *needs):
                continue
            else:
                _add(first, *needs)
    _finish(plan)
    return plan


def _finding_probe_needs(
    suite: Suite, probe: str, label_space: str | None
) -> tuple[dict[str, dict[str, str]], dict[str, dict[str, Any]]]:
    """What a finding's probe needs of a leg: its images' benchmark (in the pair's label space) and, for a
    CIFAR-100 pair, Park & Kim's CIFAR-100 augmentation where the suite gives the probe their ImageNet one."""
    bench = _probe_benchmark(suite, probe)
    if label_space is None:
        return {bench: {}}, {probe: {}}
    bench = LABEL_SPACES[label_space].get(bench, bench)
    recipe = (suite.probe(probe).params or {}).get("augmentation")
    params = dict(_AUGMENTATION_OVERRIDES.get(label_space, {}).get(str(recipe), {}))
    return {bench: {}}, {probe: {**params, _DATA: bench}}


def _finish(plan: ReproductionPlan) -> None:
    """Probes get their images' benchmark; offline, benchmarks without an offline copy are left out; the occlusion
    image list needs a local validation folder; legs get names."""
    for leg in plan.legs:
        if plan.stand_in is not None:
            leg.why = f"stand-in for {' and '.join(member.model_key for member in leg.members)}"
        for probe in leg.probes:
            leg.benchmarks.setdefault(_leg_probe_benchmark(plan.suite, leg, probe), {})
        if plan.stand_in is not None and plan.data.keys() >= set(OFFLINE_DATA):
            for name in [b for b in leg.benchmarks if b not in plan.data]:
                plan.left_out[name] = f"no offline copy of {name}: give its data with --data {name}=SOURCE"
                del leg.benchmarks[name]
            for probe in [
                p for p in leg.probes if _leg_probe_benchmark(plan.suite, leg, p) not in leg.benchmarks
            ]:
                plan.left_out[probe] = "its images' benchmark has no offline copy"
                del leg.probes[probe]
        for probe, params in leg.probes.items():
            source = plan.data.get(_leg_probe_benchmark(plan.suite, leg, probe))
            if params.get("image_list") is not None and not _is_local_folder(source):
                params.pop("image_list")
                plan.notes.append(
                    f"{probe}: the published image list is matched by file name, which needs a local ImageNet "
                    "validation folder (--data imagenet-val=PATH); without it the probe draws its images at random "
                    "and its published numbers are not comparable (other protocol)"
                )
    if not plan.published_rows:
        plan.notes.append(
            f"no published number of {PAPERS[plan.paper].split(',')[0]} is of this pair's checkpoints: only the "
            "paper's findings are checked on it"
        )
    taken: set[str] = set()
    for leg in plan.legs:
        roles = "+".join(m.role for m in leg.members)
        spec = leg.spec.rsplit("/", 1)[-1] if "://" in leg.spec else leg.spec  # a URL: its file name
        leg.name = model_key(f"{roles}-{spec}", taken)
        taken.add(leg.name)
    plan.notes = list(dict.fromkeys(plan.notes))


def _probe_benchmark(suite: Suite, probe: str) -> str:
    """The benchmark a probe of the suite reads its images from (imagenet-val for a probe the suite lacks)."""
    return suite.probe(probe).benchmark if probe in suite.probe_names else "imagenet-val"


def _leg_probe_benchmark(suite: Suite, leg: Leg, probe: str) -> str:
    return leg.probe_data.get(probe) or _probe_benchmark(suite, probe)


def leg_suite(plan: ReproductionPlan, leg: Leg) -> dict[str, Any]:
    """The suite of one leg, as `suite.suite_from_dict` reads it: the paper's suite restricted to the leg's
    benchmarks and probes, with their protocol and parameter overrides."""
    base = plan.suite.to_dict()
    benchmarks = {}
    for name, protocol in leg.benchmarks.items():
        entry = json.loads(json.dumps(base["benchmarks"][name]))
        if protocol:
            entry["protocol"] = {**(entry.get("protocol") or {}), **protocol}
        benchmarks[name] = entry
    probes = {}
    for name, params in leg.probes.items():
        entry = json.loads(json.dumps(base["probes"][name]))
        entry["params"] = {**(entry.get("params") or {}), **params}
        entry["benchmark"] = _leg_probe_benchmark(plan.suite, leg, name)
        if name in leg.probe_images:
            entry["num_images"] = leg.probe_images[name]
        probes[name] = entry
    roles = ", ".join(f"{m.role} {m.model_key}" for m in leg.members)
    return {
        **base,
        "path": None,
        "description": f"{base['description']} Restricted by `vitrobust reproduce` to {roles} ({leg.why}).",
        "models": [],
        "benchmarks": benchmarks,
        "probes": probes,
    }


def reproduction_record(plan: ReproductionPlan, leg: Leg, run_model_key: str) -> dict[str, Any]:
    """What a leg's results.json records of the reproduction: the paper, the pair, and which paper models the run's
    model stands for (read by the report's "Published vs ours" and "Findings")."""
    return {
        "paper": plan.paper,
        "pair": plan.pair,
        "leg": leg.name,
        "models": {
            run_model_key: [
                {
                    "role": member.role,
                    "model_key": member.model_key,
                    "stand_in": plan.stand_in is not None,
                    "why": leg.why,
                }
                for member in leg.members
            ]
        },
    }


def run_reproduction(
    plan: ReproductionPlan,
    output: Path | str,
    *,
    report: bool = True,
    check_other_protocols: bool = False,
    **evaluate_options: Any,
) -> dict[str, Any]:
    """Run every leg of `plan` into `<output>/legs/<leg>/` (`evaluate_options` go to `EvaluationConfig`: limit,
    batch_size, precision, device, seed, resume, progress, the interval settings), record the reproduction in each
    leg's results.json, and write the combined report and reproduction.json. Returns reproduction.json's dict.
    `check_other_protocols`: check the findings also on pairs whose runs differ from the paper's protocol, their
    verdicts marked "under another protocol" (recorded in reproduction.json and said in the report)."""

    output = Path(output)
    if not plan.legs:
        raise ValueError(f"Nothing to run: {plan.describe()}")
    suites = output / "suites"
    suites.mkdir(parents=True, exist_ok=True)
    folders = []
    for leg in plan.legs:
        suite_file = suites / f"{leg.name}.json"
        write_text_atomic(suite_file, json.dumps(leg_suite(plan, leg), indent=1) + "\n")
        folder = output / "legs" / leg.name
        config = EvaluationConfig(
            models=[leg.spec],
            suite=str(suite_file),
            data={k: v for k, v in plan.data.items() if k in leg.benchmarks},
            output=folder,
            report=False,
            **evaluate_options,
        )
        evaluate(config)
        stored = json.loads((folder / RESULTS_FILE).read_text(encoding="utf-8"))
        stored["reproduction"] = reproduction_record(plan, leg, str(stored["models"][0]["key"]))
        write_text_atomic(folder / RESULTS_FILE, json.dumps(stored, indent=1) + "\n")
        folders.append(folder)
    merged = merge_results(load_results(folders))
    analysis = analyze(merged, check_other_protocols=check_other_protocols)
    record = {
        "plan": plan.to_dict(),
        "runs": [str(f.relative_to(output)) for f in folders],
        **analysis.reproduction(),
    }
    write_text_atomic(output / REPRODUCTION_FILE, json.dumps(record, indent=1, allow_nan=True) + "\n")
    if report:
        analysis.store(merged)
        write_report(merged, output)
    return record


__all__ = [
    "DEFAULT_PAIRS",
    "LABEL_SPACES",
    "OFFLINE_DATA",
    "REPRODUCTION_FILE",
    "Leg",
    "Member",
    "ReproductionPlan",
    "leg_suite",
    "pair_names",
    "plan_reproduction",
    "reproduction_record",
    "run_reproduction",
]
