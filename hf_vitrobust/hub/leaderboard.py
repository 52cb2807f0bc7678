# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The robustness leaderboard: numbers read from the Hub's `.eval_results` of model repos, from the results.json
files a push stages (`results/<run>/results.json`), and from local folders, ranked only against numbers of the same
benchmark, metric and protocol.

Every number is a `Score`: its model, where it was read (`source`, `read_from`), the dataset id and task id it is
filed under on the Hub, the metric, the value, the protocol in docs/protocols.md's names ("not stated" where the
number does not record one: entries other tools write, results.json files of schema 1) and, where known, the run
and the git commit it was computed with. `read_leaderboard` gathers them; a source that cannot be read (offline,
not found, private, not hf_vitrobust results) is skipped and recorded as a `Skipped` with its reason, never raised.

The table (`Leaderboard.table`) is long: one row per number, with its protocol in a column of its own and its rank
among the numbers of its group, a group being one (dataset id, task id, protocol). A wide table (one column per
metric) would have to either put numbers of different protocols in one column, which reads as comparable, or
multiply its columns by the protocols (ImageNet-A top-1 x class mask x preprocessing ...), most of them empty and
each naming its protocol only in a long header. The long table keeps every number next to its protocol, sorts and
filters in the Space's table and `DataFrame.pivot` turns one group into a wide table for whoever wants it.

The Hub's own benchmark leaderboards (`HfApi.get_dataset_leaderboard`) are not read: their entries
(`DatasetLeaderboardEntry`) carry no task id, so the numbers of different tasks of one dataset, ours named by
metric and protocol, could not be kept apart, and their ranks are the Hub's, across protocols.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import yaml
from huggingface_hub import EvalResultEntry

from ..analysis.results import check_schema
from .card_results import run_name
from .eval_results import (
    EVAL_RESULTS_FOLDER,
    NOTES_SEPARATOR,
    PROTOCOL_PART_ORDER,
    RUN_PREFIX,
    protocol_from_notes,
    run_entries,
)
from .model_index import dataset_entry, is_hub_id

NOT_STATED = "not stated"
#: The columns of `Leaderboard.table`, in order.
LEADERBOARD_COLUMNS = (
    "rank",
    "model",
    "dataset",
    "task",
    "metric",
    "value",
    "protocol",
    "source",
    "read_from",
    "run",
    "commit",
)
#: The model-index metric types (`analysis.kinds.CardRow.type`, an entry's task id's second part) where a smaller
#: number is the better one: errors (mCE, ImageNet-C-bar's mean error), flip rates, distances, the FPR, and
#: ImageNet-9's BG-gap (a smaller gap between backgrounds of the same class and of random classes is less reliance
#: on the background).
LOWER_IS_BETTER = frozenset(
    {
        "mce",
        "relative_mce",
        "mean_error",
        "mfr",
        "flip_probability",
        "top_5_distance",
        "fpr_at_95_tpr",
        "ece",
        "bg_gap",
    }
)
RESULTS_PATTERN = "results/*/results.json"
#: The `source` of the results shipped with the Space itself.
SPACE_SOURCE = "space"


@dataclass(frozen=True)
class Score:
    """One number of the leaderboard. `protocol` is a tuple of (part, name) pairs in docs/protocols.md's order,
    or None where the number records no protocol (shown as "not stated", never in a group with a number that
    states one). `lower_is_better` is None where the direction is not known (another tool's metric, a headline
    without a protocol): such a number is shown but not ranked."""

    model: str
    source: str
    read_from: str
    dataset_id: str
    task_id: str
    metric: str
    value: float
    protocol: tuple[tuple[str, str], ...] | None
    lower_is_better: bool | None
    run: str | None = None
    commit: str | None = None

    @property
    def protocol_text(self) -> str:
        """The protocol as the table shows it: "preprocessing=model-native, class_mask=hendrycks-200"."""
        if self.protocol is None:
            return NOT_STATED
        return ", ".join(f"{part}={name}" for part, name in self.protocol)

    @property
    def group(self) -> tuple[str, str, str]:
        """The numbers a score is ranked against share this: (dataset id, task id, protocol)."""
        return self.dataset_id, self.task_id, self.protocol_text


@dataclass(frozen=True)
class Skipped:
    """A source, or one file of it, that was not read: where, and why in words a Space owner can act on."""

    source: str
    reason: str


@dataclass
class Leaderboard:
    """The scores read and the sources skipped (`read_leaderboard`)."""

    scores: list[Score] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)

    def add(self, read: list[Score] | Skipped) -> None:
        """Add what reading one file gave: its scores, or why it was skipped."""
        if isinstance(read, Skipped):
            self.skipped.append(read)
        else:
            self.scores.extend(read)

    def extend(self, other: Leaderboard) -> None:
        """Add the scores and the skipped sources of `other`."""
        self.scores.extend(other.scores)
        self.skipped.extend(other.skipped)

    def table(self) -> pd.DataFrame:
        """One row per number (LEADERBOARD_COLUMNS), grouped by (dataset, task, protocol) and ranked inside each
        group: rank 1 is the best (the smallest for an error such as the mCE); equal values share a rank; a number
        whose metric's direction is not known has no rank. Groups follow each other by dataset and task."""
        rows = []
        for score, rank in zip(self.scores, ranks(self.scores), strict=True):
            rows.append(
                {
                    "rank": rank,
                    "model": score.model,
                    "dataset": score.dataset_id,
                    "task": score.task_id,
                    "metric": score.metric,
                    "value": float(f"{score.value:.4g}"),
                    "protocol": score.protocol_text,
                    "source": score.source,
                    "read_from": score.read_from,
                    "run": score.run,
                    "commit": score.commit,
                }
            )
        # Object columns keep None as None (an unknown run or commit), not a missing-string NaN.
        table = pd.DataFrame(rows, columns=list(LEADERBOARD_COLUMNS), dtype=object)
        if table.empty:
            return table
        table["value"] = table["value"].astype(float)
        table["rank"] = table["rank"].astype("Int64")
        order = table.sort_values(
            ["dataset", "task", "protocol", "rank", "model"], na_position="last", kind="stable"
        )
        return order.reset_index(drop=True)

    def skipped_text(self) -> str:
        """The skipped sources in one line each ("" when none), for the Space to show under its table."""
        return "\n".join(f"- {item.source}: {item.reason}" for item in self.skipped)


def ranks(scores: Sequence[Score]) -> list[int | None]:
    """The rank of each score among those of its group (`Score.group`): 1 for the best; equal values share the
    best rank of their tie ("competition" ranking: 1, 1, 3); None where the metric's direction is unknown."""
    by_group: dict[tuple[str, str, str], list[int]] = {}
    for index, score in enumerate(scores):
        if score.lower_is_better is not None:
            by_group.setdefault(score.group, []).append(index)
    ranked: list[int | None] = [None] * len(scores)
    for members in by_group.values():
        lower = scores[members[0]].lower_is_better
        for index in members:
            value = scores[index].value
            better = sum(
                1
                for other in members
                if (scores[other].value < value if lower else scores[other].value > value)
            )
            ranked[index] = better + 1
    return ranked


# ---------------------------------------------------------------------- numbers
def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _notes_segment(notes: str | None, prefix: str) -> str | None:
    for segment in (notes or "").split(NOTES_SEPARATOR):
        if segment.strip().startswith(prefix):
            return segment.strip().removeprefix(prefix).strip() or None
    return None


def _ordered_protocol(protocol: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    known = [part for part in PROTOCOL_PART_ORDER if part in protocol]
    return tuple((part, str(protocol[part])) for part in known + [p for p in protocol if p not in known])


def entry_scores(
    entries: Iterable[EvalResultEntry], *, model: str, source: str, read_from: str, commit: str | None = None
) -> list[Score]:
    """Scores of the `.eval_results` entries of one model. An entry whose notes name its protocol (what
    `vitrobust push` writes: `eval_results.protocol_note`) gets it, its run, and its metric from its task id
    ("<benchmark>.<metric type>[.<part>=<name>...]", `eval_results.task_id`); any other entry (another tool's) is
    shown with the protocol "not stated", its task id as its metric and, the direction of its metric being
    unknown, no rank."""
    scores = []
    for entry in entries:
        if not _is_number(entry.value):
            continue
        protocol = protocol_from_notes(entry.notes)
        ours = protocol is not None and "." in entry.task_id
        metric = entry.task_id.split(".")[1] if ours else entry.task_id
        scores.append(
            Score(
                model=model,
                source=source,
                read_from=read_from,
                dataset_id=entry.dataset_id,
                task_id=entry.task_id,
                metric=metric,
                value=float(entry.value),
                protocol=_ordered_protocol(protocol) if protocol else None,
                lower_is_better=(metric in LOWER_IS_BETTER) if ours else None,
                run=_notes_segment(entry.notes, RUN_PREFIX) if protocol else None,
                commit=commit,
            )
        )
    return scores


def _unstated_headline_scores(
    results: Mapping[str, Any], key: Any, covered: set[str], **where: Any
) -> list[Score]:
    """The headlines (results.json `summary`) of benchmarks that gave no entry, because the run recorded no
    protocol for them (schema 1) or no model-index row holds them: shown with the protocol "not stated", under
    the headline's name, unranked."""
    scores = []
    for headline, value in ((results.get("summary") or {}).get(key) or {}).items():
        benchmark = headline.partition(" ")[0]
        if benchmark in covered or not _is_number(value):
            continue
        info = (results.get("benchmarks") or {}).get(benchmark)
        dataset = str(dataset_entry(benchmark, info)["type"]) if isinstance(info, Mapping) else benchmark
        scores.append(
            Score(
                dataset_id=dataset,
                task_id=headline,
                metric=headline,
                value=float(value),
                protocol=None,
                lower_is_better=None,
                **where,
            )
        )
    return scores


def results_scores(results: Mapping[str, Any], *, source: str, read_from: str) -> list[Score]:
    """Every model's headline numbers in one results.json dict (its `_source` names the run), as the
    `.eval_results` entries a push of that model writes (`eval_results.run_entries`: the same dataset id, task
    id, value and protocol), so that they rank with entries read from the Hub; the commit is results.json's.
    Headlines without an entry are added with the protocol "not stated" (`_unstated_headline_scores`)."""
    commit = (results.get("provenance") or {}).get("git_commit")
    commit = commit[:12] if isinstance(commit, str) and commit else None
    where = {"source": source, "read_from": read_from, "commit": commit}
    scores = []
    for model in results.get("models") or []:
        name = str(model.get("name") or model.get("spec") or model.get("key"))
        entries = run_entries(results, own_specs=[str(model.get("spec") or model.get("key"))], warn=False)
        scores += entry_scores(entries, model=name, **where)
        covered = {entry.task_id.split(".")[0] for entry in entries}
        scores += _unstated_headline_scores(
            results, model.get("key"), covered, model=name, run=run_name(results), **where
        )
    return scores


def _read_results_file(path: Path, *, source: str, read_from: str) -> list[Score] | Skipped:
    try:
        results = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(results, dict):
            raise ValueError("not a JSON object")
        check_schema(results, read_from)
    except (OSError, UnicodeDecodeError, ValueError) as error:
        return Skipped(f"{source}: {read_from}", f"not readable as hf_vitrobust results ({error})")
    results["_source"] = str(path)  # names the run: its folder (`card_results.run_name`)
    return results_scores(results, source=source, read_from=read_from)


def _read_eval_results_file(path: Path, *, model: str, source: str, read_from: str) -> list[Score] | Skipped:
    from huggingface_hub import parse_eval_result_entries

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        entries = parse_eval_result_entries(data if isinstance(data, list) else [data])
    except (
        OSError,
        UnicodeDecodeError,
        yaml.YAMLError,
        KeyError,
        TypeError,
        AttributeError,
        ValueError,
    ) as error:
        return Skipped(
            f"{source}: {read_from}", f"not a valid .eval_results file ({type(error).__name__}: {error})"
        )
    return entry_scores(entries, model=model, source=source, read_from=read_from)


# ---------------------------------------------------------------------- sources
def folder_model_name(folder: Path) -> str:
    """The model a local folder's `.eval_results` belong to: "org/name" for a snapshot in the Hub cache
    (`.../models--org--name/snapshots/<commit>`), else the folder's own name."""
    for part in reversed(folder.resolve().parts):
        if part.startswith("models--") and part.count("--") >= 2:
            return "/".join(part.removeprefix("models--").split("--", 1))
    return folder.resolve().name


def _unless_run_read(scores: list[Score], runs: set[str]) -> list[Score]:
    """Our entries of a run whose results.json was read too are the same numbers (`vitrobust push` writes both
    from it): keep the results.json's, which carry the commit and the other models."""
    return [score for score in scores if score.protocol is None or score.run not in runs]


def read_results_dir(results_dir: str | os.PathLike, *, source: str = SPACE_SOURCE) -> Leaderboard:
    """The results.json files anywhere under `results_dir` (the Space's own `results/<run>/results.json`): the
    run is each file's folder."""
    board = Leaderboard()
    root = Path(results_dir)
    for path in sorted(root.glob("**/results.json")):
        board.add(_read_results_file(path, source=source, read_from=str(path.relative_to(root))))
    return board


def read_folder(folder: str | os.PathLike, *, model: str | None = None) -> Leaderboard:
    """A local model repo (staged by `vitrobust push --dry-run`, or downloaded): its results.json files and its
    `.eval_results/*.yaml` entries (those of `model`, default `folder_model_name`)."""
    root = Path(folder)
    source = str(folder)
    board = read_results_dir(root, source=source)
    runs = {score.run for score in board.scores if score.run}
    model = model or folder_model_name(root)
    for path in sorted((root / EVAL_RESULTS_FOLDER).glob("*.yaml")):
        read_from = f"{EVAL_RESULTS_FOLDER}/{path.name}"
        read = _read_eval_results_file(path, model=model, source=source, read_from=read_from)
        board.add(read if isinstance(read, Skipped) else _unless_run_read(read, runs))
    return board


def hub_error_reason(error: BaseException) -> str:
    """Why a Hub repo could not be read, in words a Space owner can act on (never the token)."""
    import httpx
    from huggingface_hub.errors import (
        GatedRepoError,
        HfHubHTTPError,
        LocalEntryNotFoundError,
        OfflineModeIsEnabled,
        RepositoryNotFoundError,
    )

    if isinstance(error, OfflineModeIsEnabled | LocalEntryNotFoundError):
        return "offline: the Hub cannot be reached (HF_HUB_OFFLINE is set or there is no network)"
    if isinstance(error, GatedRepoError):
        return "gated: accept the model's conditions with the account of the Space's token (HF_TOKEN)"
    if isinstance(error, RepositoryNotFoundError):
        return "not found, or private and the token (HF_TOKEN) cannot read it"
    if isinstance(error, HfHubHTTPError):
        return f"the Hub answered HTTP {error.response.status_code} ({type(error).__name__})"
    if isinstance(error, httpx.TransportError | ConnectionError | TimeoutError):
        return f"unreachable: the connection to the Hub failed ({type(error).__name__})"
    if isinstance(error, KeyError | TypeError | ValueError):
        return f"the Hub's answer could not be read ({type(error).__name__}: {error})"
    return f"unreadable: {type(error).__name__}: {error}"


#: What reading a repo from the Hub raises when it cannot: the Hub's errors (HTTP, offline, not found: OSErrors),
#: a failed connection (httpx's, not an OSError), and an answer that does not parse.
_HUB_FAILURES = (OSError, ValueError, KeyError, TypeError)


def read_hub_repo(repo_id: str, *, token: str | bool | None = None) -> Leaderboard:
    """A model repo on the Hub: its `.eval_results` entries as the Hub API parses them (`HfApi.model_info` with
    `expand=["evalResults"]`; files the Hub refused are left out there) and the results.json files pushed under
    `results/<run>/` (downloaded, nothing else). A repo that cannot be read is skipped with the reason."""
    import httpx
    from huggingface_hub import HfApi, snapshot_download

    failures = (*_HUB_FAILURES, httpx.HTTPError)
    board = Leaderboard()
    try:
        info = HfApi(token=token).model_info(repo_id, expand=["evalResults"])
    except failures as error:
        board.skipped.append(Skipped(repo_id, hub_error_reason(error)))
        return board
    try:
        folder = Path(snapshot_download(repo_id, allow_patterns=[RESULTS_PATTERN], token=token))
    except failures as error:
        board.skipped.append(Skipped(f"{repo_id}: {RESULTS_PATTERN}", hub_error_reason(error)))
    else:
        for path in sorted(folder.glob(RESULTS_PATTERN)):
            read_from = str(path.relative_to(folder))
            board.add(_read_results_file(path, source=repo_id, read_from=read_from))
    runs = {score.run for score in board.scores if score.run}
    entries = entry_scores(
        info.eval_results or [], model=repo_id, source=repo_id, read_from=f"{EVAL_RESULTS_FOLDER} (Hub API)"
    )
    board.scores += _unless_run_read(entries, runs)
    return board


def sources_from_text(text: str | None) -> list[str]:
    """The sources named in a Space variable such as VITROBUST_RESULTS_REPOS: Hub ids or folders, separated by
    commas or whitespace."""
    return [item for item in re.split(r"[\s,]+", text or "") if item]


def read_leaderboard(
    sources: Sequence[str | os.PathLike] = (),
    *,
    results_dir: str | os.PathLike | None = None,
    token: str | bool | None = None,
) -> Leaderboard:
    """The leaderboard of `results_dir` (results.json files anywhere under it, source "space") and of each of
    `sources`: a local folder (`read_folder`) or a Hub model repo id (`read_hub_repo`). Nothing raises for a
    source that cannot be read: it is listed in `Leaderboard.skipped` with the reason."""
    board = Leaderboard()
    if results_dir is not None and Path(results_dir).is_dir():
        board.extend(read_results_dir(results_dir))
    for source in sources:
        if Path(source).expanduser().is_dir():
            board.extend(read_folder(Path(source).expanduser()))
        elif is_hub_id(str(source)):
            board.extend(read_hub_repo(str(source), token=token))
        else:
            board.skipped.append(Skipped(str(source), "neither a local folder nor a Hub model id (org/name)"))
    return board


__all__ = [
    "LEADERBOARD_COLUMNS",
    "LOWER_IS_BETTER",
    "NOT_STATED",
    "Leaderboard",
    "Score",
    "Skipped",
    "entry_scores",
    "folder_model_name",
    "hub_error_reason",
    "ranks",
    "read_folder",
    "read_hub_repo",
    "read_leaderboard",
    "read_results_dir",
    "results_scores",
    "sources_from_text",
]
