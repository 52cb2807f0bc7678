# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""What an evaluation run becomes in the model repo it is pushed to (`stage_model`).

A run that evaluated the pushed checkpoint from a local folder records that folder as the model's spec and name
("path/to/myvit"). In the repo, the model is the repo: the staged results.json names it by the repo id
(`name_own_models`; the spec stays as the provenance of the numbers), so the card and the Space leaderboard show
"me/myvit". A run read from a suite file of its own gets that suite staged beside its results.json
(`staged_suite`), so that the card's reproduce command names a file that is in the repo; a shipped suite is
named by its name.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

import yaml

from ..evaluation.suite import SUITE_NAMES, suite_from_dict
from .card_results import same_model
from .cards import suite_argument

# The suite of a run, staged beside its results.json (results/<run>/SUITE_FILE).
SUITE_FILE = "suite.yaml"


def name_own_models(
    result: Mapping[str, Any], own_specs: Sequence[str], repo_id: str | None
) -> dict[str, Any]:
    """A copy of a results.json dict in which every model whose spec is one of `own_specs` (the pushed
    checkpoint's folder) is named `repo_id`; its key and spec stay as recorded. Unchanged without `repo_id`."""
    renamed = copy.deepcopy(dict(result))
    if not repo_id:
        return renamed
    for model in renamed.get("models") or []:
        if isinstance(model, dict) and same_model(model.get("spec"), own_specs):
            model["name"] = repo_id
    return renamed


def staged_suite(
    result: Mapping[str, Any], own_specs: Sequence[str], repo_id: str | None
) -> tuple[str, dict[str, Any]] | None:
    """(file name, suite dict) to stage beside a run's results.json when the run read a suite file of its own
    (a shipped suite is named by its name, and None is returned). The dict is the suite as results.json records
    it (`Suite.to_dict`, which `load_suite` reads back into an equal suite), without the local file's path and
    with the pushed checkpoint's folder replaced by `repo_id` among its models. ValueError when it does not
    validate as a suite."""
    if suite_argument(result) in SUITE_NAMES:
        return None
    recorded = result.get("suite")
    if not isinstance(recorded, Mapping) or not recorded.get("benchmarks"):
        raise ValueError(
            f"Run {result.get('_source', '')!r} names its own suite file but records no suite to stage."
        )
    suite = {key: copy.deepcopy(value) for key, value in recorded.items() if key != "path"}

    def pushed(spec: Any) -> Any:
        return repo_id if repo_id and same_model(spec, own_specs) else spec

    suite["models"] = [pushed(spec) for spec in suite.get("models") or []]
    suite["model_pairs"] = [
        {role: pushed(spec) for role, spec in pair.items()} for pair in suite.get("model_pairs") or []
    ]
    suite_from_dict(suite, path=SUITE_FILE)  # the staged file must load as a suite
    return SUITE_FILE, suite


def suite_yaml(suite: Mapping[str, Any]) -> str:
    """The YAML text of a staged suite (`load_suite` reads it)."""
    header = (
        "# The suite of this run, as its results.json records it (staged by hf_vitrobust.hub.stage_model).\n"
    )
    return header + yaml.safe_dump(dict(suite), sort_keys=False, allow_unicode=True)


__all__ = ["SUITE_FILE", "name_own_models", "staged_suite", "suite_yaml"]
