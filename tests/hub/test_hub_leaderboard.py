"""hf_vitrobust/hub/leaderboard.py: the leaderboard read from the Hub's `.eval_results` (through a fake
`HfApi.model_info` answering with a real `ModelInfo` built from the Hub's JSON), from pushed results.json files and
from local folders; numbers ranked only against numbers of the same dataset, task and protocol."""

import json
import logging
from pathlib import Path

import httpx
import pytest
import yaml
from huggingface_hub import EvalResultEntry, HfApi, ModelInfo, eval_result_entries_to_yaml
from huggingface_hub.errors import (
    GatedRepoError,
    HfHubHTTPError,
    LocalEntryNotFoundError,
    OfflineModeIsEnabled,
    RepositoryNotFoundError,
)

from hf_vitrobust.analysis.kinds import (
    CLASSIFICATION_ROWS,
    CORRUPTION_ROWS,
    OOD_ROWS,
    SEQUENCE_ROWS,
    background_rows,
    summary_headlines,
)
from hf_vitrobust.analysis.protocols import benchmark_protocol, protocol_record
from hf_vitrobust.data import BENCHMARKS
from hf_vitrobust.hub.eval_results import run_entries
from hf_vitrobust.hub.leaderboard import (
    LEADERBOARD_COLUMNS,
    LOWER_IS_BETTER,
    NOT_STATED,
    folder_model_name,
    read_folder,
    read_hub_repo,
    read_leaderboard,
)
from hf_vitrobust.hub.staging import stage_model

IMAGENET_A = {"kind": "hub", "location": "barkermrl/imagenet-a", "generated": False}


def imagenet_a_metrics(hendrycks_200: float, paul_chen_1000: float, class_mask: str) -> dict:
    """ImageNet-A's metric dict as `scoring.classification_metrics` writes it: both class masks, the run's on top."""
    protocols = {
        "hendrycks-200": {"top1": hendrycks_200, "top5": 80.0},
        "paul-chen-1000": {"top1": paul_chen_1000, "top5": 70.0},
    }
    return {"num_samples": 7500, "protocols": protocols, "class_mask": class_mask, **protocols[class_mask]}


def run_results(models: dict[str, tuple[float, float]], *, class_mask="hendrycks-200", commit=None) -> dict:
    """A results.json as the runner writes it, of models scored on ImageNet-A under one class mask: {name:
    (top-1 over the 200 classes, top-1 over the 1000)}; the summary from the real `summary_headlines`, the
    protocol record from the real `protocol_record`."""
    benchmark = BENCHMARKS.get("imagenet-a")
    protocol = benchmark_protocol(benchmark, {"class_mask": class_mask})
    results = {
        "schema": "hf_vitrobust.results",
        "schema_version": 2,
        "created": "2026-12-01T00:00:00+00:00",
        "complete": True,
        "suite": {"name": "quick"},
        "models": [],
        "benchmarks": {
            "imagenet-a": {
                "task": "classification",
                "source": IMAGENET_A,
                "generated": False,
                "num_samples": 7500,
                "protocol": protocol_record(benchmark, protocol, IMAGENET_A),
            }
        },
        "metrics": {},
        "summary": {},
        "provenance": {"git_commit": commit, "git_dirty": False},
    }
    for index, (name, (hendrycks_200, paul_chen_1000)) in enumerate(models.items()):
        key = f"m{index}"
        metrics = imagenet_a_metrics(hendrycks_200, paul_chen_1000, class_mask)
        results["models"].append({"key": key, "spec": name, "name": name})
        results["metrics"][key] = {"imagenet-a": metrics}
        results["summary"][key] = summary_headlines(benchmark, metrics, protocol)
    return results


def write_run(folder: Path, results: dict) -> Path:
    folder.mkdir(parents=True)
    (folder / "results.json").write_text(json.dumps(results))
    return folder


def model_info(repo_id: str, eval_results: list[dict]) -> ModelInfo:
    """The Hub's answer to GET /api/models/<repo_id>?expand=evalResults (only `_id`, `id` and the expanded field),
    parsed by the real `ModelInfo`: each file's entry as `{"filename", "verified", "data", "pullRequest"}`, or
    `{"filename", "error"}` for a file the Hub refused."""
    return ModelInfo(**{"_id": "65f0c0ffee", "id": repo_id, "evalResults": eval_results})


def hub_item(filename: str, entry: EvalResultEntry) -> dict:
    (data,) = eval_result_entries_to_yaml([entry])
    return {"filename": filename, "verified": False, "data": data, "pullRequest": None}


def test_equal_top1_under_two_class_masks_is_never_ranked_together(tmp_path):
    """Two models with the same ImageNet-A top-1, one under hendrycks-200 and one under paul-chen-1000, and a
    weaker hendrycks-200 model: ranked together the weaker one would be third; by protocol it is second."""
    write_run(
        tmp_path / "results" / "masked",
        run_results({"org/vit": (40.0, 35.0), "org/cnn": (31.5, 30.0)}),
    )
    write_run(
        tmp_path / "results" / "paper",
        run_results({"org/bit": (45.0, 40.0)}, class_mask="paul-chen-1000", commit="0123456789abcdef"),
    )
    board = read_leaderboard(results_dir=tmp_path / "results")
    assert board.skipped == []
    table = board.table()
    assert list(table.columns) == list(LEADERBOARD_COLUMNS)
    rows = {row["model"]: row for row in table.to_dict("records")}
    assert {model: rows[model]["rank"] for model in rows} == {"org/vit": 1, "org/cnn": 2, "org/bit": 1}
    assert rows["org/vit"]["protocol"] == "preprocessing=model-native, class_mask=hendrycks-200"
    assert rows["org/bit"]["protocol"] == "preprocessing=model-native, class_mask=paul-chen-1000"
    assert rows["org/vit"]["dataset"] == rows["org/bit"]["dataset"] == "barkermrl/imagenet-a"
    assert rows["org/vit"]["task"] == "imagenet-a.accuracy" and rows["org/vit"]["metric"] == "accuracy"
    assert rows["org/bit"]["task"] == "imagenet-a.accuracy.class_mask=paul-chen-1000"
    assert rows["org/vit"]["value"] == rows["org/bit"]["value"] == 40.0
    assert rows["org/bit"]["run"] == "paper" and rows["org/bit"]["commit"] == "0123456789ab"
    assert rows["org/vit"]["source"] == "space" and rows["org/vit"]["commit"] is None
    # The groups follow each other: the two hendrycks-200 rows together, best first.
    assert table["model"].tolist().index("org/cnn") == table["model"].tolist().index("org/vit") + 1


def test_hub_repo_entries_come_from_model_info_with_eval_results(tmp_path, monkeypatch):
    """The entries a push writes (`eval_results.run_entries`), as the Hub API returns them, parsed by the real
    ModelInfo: ours keep their protocol and run and rank with the same run's results.json numbers of another
    repo; another tool's entry shows "not stated", unranked; a file the Hub refused is left out; an unknown repo
    is counted with its reason."""
    pushed = run_results({"me/vit": (40.25, 33.0)})
    pushed["_source"] = "/runs/r9/results.json"
    ours = run_entries(pushed, repo_id="me/vit")
    foreign = EvalResultEntry(dataset_id="barkermrl/imagenet-a", task_id="default", value=0.61, notes="tta")
    answer = [
        *(hub_item(".eval_results/r9.yaml", entry) for entry in ours),
        hub_item(".eval_results/other-tool.yaml", foreign),
        {"filename": ".eval_results/broken.yaml", "error": "Invalid dataset id"},
    ]
    asked = []

    def fake_model_info(self, repo_id, *, expand=None, **kwargs):
        asked.append((repo_id, expand))
        if repo_id != "me/vit":
            url = f"https://huggingface.co/api/models/{repo_id}?expand=evalResults"
            response = httpx.Response(404, request=httpx.Request("GET", url))
            raise RepositoryNotFoundError(
                f"404 Client Error. Repository Not Found for url: {url}", response=response
            )
        return model_info(repo_id, answer)

    def fake_snapshot_download(repo_id, allow_patterns=None, **kwargs):
        raise LocalEntryNotFoundError("offline and not in the cache")

    monkeypatch.setattr(HfApi, "model_info", fake_model_info)
    monkeypatch.setattr("huggingface_hub.snapshot_download", fake_snapshot_download)
    write_run(tmp_path / "space" / "r9", run_results({"org/cnn": (41.0, 30.0)}))
    board = read_leaderboard(["me/vit", "me/gone"], results_dir=tmp_path / "space")
    assert asked == [("me/vit", ["evalResults"]), ("me/gone", ["evalResults"])]
    rows = {(row["model"], row["task"]): row for row in board.table().to_dict("records")}
    assert set(rows) == {
        ("me/vit", "imagenet-a.accuracy"),
        ("me/vit", "default"),
        ("org/cnn", "imagenet-a.accuracy"),
    }
    hub, space = rows["me/vit", "imagenet-a.accuracy"], rows["org/cnn", "imagenet-a.accuracy"]
    assert hub["value"] == 40.25 and hub["run"] == "r9" and hub["read_from"] == ".eval_results (Hub API)"
    assert hub["protocol"] == space["protocol"] == "preprocessing=model-native, class_mask=hendrycks-200"
    assert (space["rank"], hub["rank"]) == (1, 2)  # 41.0 beats 40.25 in one group
    other = rows["me/vit", "default"]
    assert (other["protocol"], other["value"], other["run"], other["rank"]) == (NOT_STATED, 0.61, None, None)
    assert [item.source for item in board.skipped] == ["me/vit: results/*/results.json", "me/gone"]
    assert board.skipped[0].reason.startswith("offline")
    assert board.skipped[1].reason == "not found, or private and the token (HF_TOKEN) cannot read it"


def _http_error(cls, status: int):
    url = "https://huggingface.co/api/models/me/a?expand=evalResults"
    response = httpx.Response(status, request=httpx.Request("GET", url))
    return cls(f"{status} Client Error for url: {url}", response=response)


@pytest.mark.parametrize(
    ("failure", "reason"),
    [
        (
            lambda: OfflineModeIsEnabled("Cannot reach https://huggingface.co: offline mode is enabled."),
            "offline: ",
        ),
        (lambda: httpx.ConnectError("[Errno -3] Temporary failure in name resolution"), "unreachable: "),
        (lambda: _http_error(GatedRepoError, 403), "gated: "),
        (lambda: _http_error(HfHubHTTPError, 502), "the Hub answered HTTP 502"),
        # An answer whose entry has no dataset id: the real ModelInfo fails to parse it.
        (
            lambda: ModelInfo(id="me/a", evalResults=[{"data": {"value": 1.0}}]),
            "the Hub's answer could not be read",
        ),
    ],
)
def test_an_unreadable_repo_is_counted_with_its_reason_and_nothing_raises(monkeypatch, failure, reason):
    def model_info(self, repo_id, **kwargs):
        raise failure()

    monkeypatch.setattr(HfApi, "model_info", model_info)
    board = read_leaderboard(["me/a", "me/b", "not a repo id"])
    assert board.scores == [] and board.table().empty
    assert [item.source for item in board.skipped] == ["me/a", "me/b", "not a repo id"]
    assert board.skipped[0].reason.startswith(reason), board.skipped[0].reason
    assert "neither a local folder nor a Hub model id" in board.skipped[2].reason


def test_the_real_offline_hub_is_skipped_not_raised():
    """With HF_HUB_OFFLINE=1 (as every test runs) the real HfApi refuses to connect: the repo is skipped."""
    board = read_hub_repo("me/never-fetched")
    assert board.scores == []
    (skipped,) = board.skipped
    assert skipped.source == "me/never-fetched" and skipped.reason.startswith("offline")


def test_a_staged_folder_reads_its_results_and_its_eval_results_files(tmp_path):
    """A model repo staged by `stage_model` (results/<run>/results.json and .eval_results/<run>.yaml of the same
    numbers), with another tool's file added: each number once; the foreign one shown, unranked."""
    run = write_run(tmp_path / "r1", run_results({"me/vit": (40.0, 33.0)}, commit="feedfacecafe0000"))
    stage = tmp_path / "stage"
    stage_model(stage, results=[run], repo_id="me/vit")
    assert [path.name for path in (stage / ".eval_results").iterdir()] == ["r1.yaml"]
    foreign = EvalResultEntry(dataset_id="timm/imagenet-1k-wds", task_id="top1", value=81.1)
    (stage / ".eval_results" / "theirs.yaml").write_text(
        yaml.safe_dump(eval_result_entries_to_yaml([foreign]))
    )
    (stage / ".eval_results" / "broken.yaml").write_text("- dataset: {task_id: x}\n  value: 1\n")
    board = read_folder(stage, model="me/vit")
    first, second = board.table().to_dict("records")
    assert (first["model"], first["task"], first["value"], first["rank"]) == (
        "me/vit",
        "imagenet-a.accuracy",
        40.0,
        1,
    )
    assert first["read_from"] == "results/r1/results.json" and first["commit"] == "feedfacecafe"
    assert (second["task"], second["value"], second["protocol"], second["rank"]) == (
        "top1",
        81.1,
        NOT_STATED,
        None,
    )
    assert second["read_from"] == ".eval_results/theirs.yaml"
    (skipped,) = board.skipped
    assert skipped.source == f"{stage}: .eval_results/broken.yaml" and "KeyError" in skipped.reason


def test_a_downloaded_snapshot_names_its_model_by_the_repo(tmp_path):
    snapshot = tmp_path / "models--me--vit-robustness" / "snapshots" / "0a1b2c"
    snapshot.mkdir(parents=True)
    assert folder_model_name(snapshot) == "me/vit-robustness"
    assert folder_model_name(tmp_path) == tmp_path.name


def test_every_lower_is_better_card_row_ranks_ascending():
    """The metric types ranked smallest first are those whose model-index row says "lower is better", plus the
    ECE and the BG-gap (named as errors/gaps without saying so)."""
    rows = [*CLASSIFICATION_ROWS, *CORRUPTION_ROWS, *SEQUENCE_ROWS, *OOD_ROWS, *background_rows({})]
    said = {row.type for row in rows if "lower is better" in row.name}
    assert said | {"ece", "bg_gap"} == LOWER_IS_BETTER
    assert {row.type for row in rows} >= LOWER_IS_BETTER


@pytest.mark.parametrize(
    "content", ["{not json", json.dumps({"schema": "hf_vitrobust.results", "schema_version": 99})]
)
def test_unreadable_results_files_are_skipped_with_the_file_named(tmp_path, content):
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "results.json").write_text(content)
    board = read_leaderboard(results_dir=tmp_path)
    assert board.scores == []
    (skipped,) = board.skipped
    assert skipped.source == "space: bad/results.json"


def test_a_run_without_protocols_is_shown_unranked_without_a_push_warning(tmp_path, caplog):
    """A run of schema 1 records no protocol: the leaderboard shows its numbers as "not stated" and says nothing
    about `.eval_results` (the warning is for a push of such a run, not for a reader)."""
    results = run_results({"org/old": (30.0, 28.0)})
    results["schema_version"] = 1
    del results["benchmarks"]["imagenet-a"]["protocol"]
    write_run(tmp_path / "old", results)
    with caplog.at_level(logging.DEBUG, logger="hf_vitrobust.hub.eval_results"):
        board = read_leaderboard([], results_dir=tmp_path)
    table = board.table()
    assert table[["model", "value", "protocol", "rank"]].to_dict("records") == [
        {"model": "org/old", "value": 30.0, "protocol": "not stated", "rank": None}
    ]
    assert not [record for record in caplog.records if record.levelno >= logging.WARNING]
    assert "imagenet-a records no protocol" in caplog.text  # still traced at debug level
