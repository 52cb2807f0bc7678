"""hf_vitrobust/hub/eval_results.py: a pushed run's headlines as `.eval_results/<run>.yaml` entries, read back
through the real huggingface_hub parser, equal number for number to the card's model-index, with the protocol in
the task id and the notes, the interval, our marked dataset names, the predictions as source, and never a number
of another model. The run is real: a tiny ViT (its classifier biased to class 285, so it is right on the 7 cat
photos of the first 8 bundled photos and wrong on the coffee) on the bundled photos and their generated ImageNet-C."""

import json
import logging
import shutil
from pathlib import Path

import pytest
import torch
import yaml
from huggingface_hub import (
    EvalResultEntry,
    eval_result_entries_to_yaml,
    metadata_load,
    parse_eval_result_entries,
)
from probe_models import save_vit_folder, tiny_vit_model

from hf_vitrobust.analysis.protocols import default_protocol, protocol_parts
from hf_vitrobust.analysis.results import load_results
from hf_vitrobust.cli import main
from hf_vitrobust.data import BENCHMARKS
from hf_vitrobust.hub import push, stage_model
from hf_vitrobust.hub.eval_results import (
    PROTOCOL_PART_ORDER,
    protocol_from_notes,
    protocol_note,
    recorded_protocol,
    run_entries,
    task_id,
)

OLD_RUN = Path(__file__).resolve().parents[1] / "fixtures" / "old_run_6f0f446" / "run"
REPO = "me/myvit"
RUN = "r1"
FILE = f".eval_results/{RUN}.yaml"
SUITE = {
    "name": "mysuite",
    "description": "the first 8 bundled photos and their generated ImageNet-C",
    "batch_size": 8,
    "seed": 0,
    "chunk_size": 8,
    "benchmarks": {
        "imagenet-val": {"source": "builtin", "limit": 8},
        "imagenet-c": {
            "source": "generated:builtin",
            "corruptions": ["gaussian_noise", "contrast"],
            "severities": [1, 5],
            "limit": 8,
        },
    },
}
GENERATED_C = "hf_vitrobust/imagenet-c-generated"
LOCAL_VAL = "hf_vitrobust/imagenet-val-local"
# Headline -> (dataset id, task id, the model-index metric name of the same number). Written out here: the ViT runs
# only at 32 pixels, so ImageNet-C's as-released images were resized to it (native-resize, not the default).
EXPECTED = {
    "imagenet-val top-1 %": (LOCAL_VAL, "imagenet-val.accuracy", "Top-1 accuracy (%)"),
    "imagenet-c mean top-1 %": (
        GENERATED_C,
        "imagenet-c.accuracy.preprocessing=native-resize",
        "Mean top-1 over corruptions and severities (%)",
    ),
    "imagenet-c mCE % (alexnet-15)": (
        GENERATED_C,
        "imagenet-c.mce.preprocessing=native-resize",
        "mCE (%, AlexNet-normalised, lower is better)",
    ),
    "imagenet-c mCE % (unnormalized-19)": (
        GENERATED_C,
        "imagenet-c.mce.preprocessing=native-resize.mce=unnormalized-19",
        "Unnormalised mean corruption error over every corruption (%, unnormalized-19, lower is better)",
    ),
}


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    """A checkpoint folder and its evaluation run (runs/r1), the model recorded by its absolute folder."""
    work = tmp_path_factory.mktemp("work")
    model = tiny_vit_model()
    with torch.no_grad():
        model.classifier.bias[285] = 50.0  # always "Egyptian cat"
    save_vit_folder(work / "myvit", model)
    (work / "suite.yaml").write_text(yaml.safe_dump({**SUITE, "models": [str(work / "myvit")]}))
    assert (
        main(
            ["evaluate", "--suite", str(work / "suite.yaml"), "--output", str(work / "runs" / RUN), "--quiet"]
        )
        == 0
    )
    return work


@pytest.fixture(scope="module")
def result(work) -> dict:
    return load_results(work / "runs" / RUN)[0]


@pytest.fixture(scope="module")
def staged(work) -> Path:
    stage = work / "stage"
    stage_model(stage, work / "myvit", [work / "runs" / RUN], repo_id=REPO, verify=False)
    return stage


def _read(path: Path) -> list[EvalResultEntry]:
    return parse_eval_result_entries(yaml.safe_load(path.read_text()))


def _own_model_index(stage: Path) -> dict[tuple[str, str], float]:
    (own,) = [m for m in metadata_load(stage / "README.md")["model-index"] if m["name"] == REPO.split("/")[1]]
    return {(r["dataset"]["type"], m["name"]): m["value"] for r in own["results"] for m in r["metrics"]}


def test_the_run_is_what_the_expectations_assume(result):
    (key,) = result["summary"]
    assert result["summary"][key]["imagenet-val top-1 %"] == 87.5  # 7 cats of 8 photos
    assert result["summary"][key]["imagenet-c mean top-1 %"] > 0
    applied = result["benchmarks"]["imagenet-c"]["protocol"]["models"][key]
    assert (applied["requested"], applied["applied"]) == ("as-released", "native-resize")


def test_the_staged_file_round_trips_through_the_hub_parser(staged):
    data = yaml.safe_load((staged / FILE).read_text())
    entries = parse_eval_result_entries(data)
    assert len(entries) == len(EXPECTED)
    # Nothing in the file is dropped by the parser: serialising what it read gives the file's data back.
    assert eval_result_entries_to_yaml(entries) == data
    assert sorted(p.relative_to(staged).as_posix() for p in (staged / ".eval_results").iterdir()) == [FILE]


def test_entries_and_the_card_model_index_agree_number_for_number(staged, result):
    (key,) = result["summary"]
    summary = result["summary"][key]
    model_index = _own_model_index(staged)
    entries = {entry.task_id: entry for entry in _read(staged / FILE)}
    assert set(entries) == {task for _, task, _ in EXPECTED.values()}
    for headline, (dataset, task, metric) in EXPECTED.items():
        entry = entries[task]
        assert entry.dataset_id == dataset
        assert entry.value == model_index[(dataset, metric)] == summary[headline]
    # The pair the Hub ranks by is never shared.
    assert len({(e.dataset_id, e.task_id) for e in entries.values()}) == len(entries)


def test_the_card_lists_the_entries(staged):
    text = (staged / "README.md").read_text()
    assert "## Evaluation results (`.eval_results`)" in text
    for dataset, task, _ in EXPECTED.values():
        rows = [
            line for line in text.splitlines() if line.startswith(f"| `{FILE}` | `{dataset}` | `{task}` |")
        ]
        assert len(rows) == 1, task


def test_protocol_in_the_task_id_and_the_notes(staged):
    by_task = {entry.task_id: entry for entry in _read(staged / FILE)}
    c = {"preprocessing": "native-resize", "release_encoding": "jpeg-85"}
    protocols = {
        # labels=imagenet and interpolation=model-own, what every run had before those parts existed, stay out
        # of the notes (the leaderboard ranks within a protocol: old and new runs must rank together).
        "imagenet-val.accuracy": {"preprocessing": "model-native"},
        "imagenet-c.accuracy.preprocessing=native-resize": {**c, "mce": "alexnet-15"},
        "imagenet-c.mce.preprocessing=native-resize": {**c, "mce": "alexnet-15"},
        "imagenet-c.mce.preprocessing=native-resize.mce=unnormalized-19": {**c, "mce": "unnormalized-19"},
    }
    for task, protocol in protocols.items():
        notes = by_task[task].notes
        assert protocol_from_notes(notes) == protocol
        assert notes.startswith("protocol: ") and notes.endswith(f" | run: {RUN}")
    assert by_task["imagenet-c.mce.preprocessing=native-resize"].notes.startswith(
        "protocol: preprocessing=native-resize, mce=alexnet-15, release_encoding=jpeg-85 | "
    )


def test_the_notes_give_the_interval_of_each_number(staged, result):
    (key,) = result["summary"]
    intervals = result["intervals"][key]
    by_task = {entry.task_id: entry for entry in _read(staged / FILE)}
    top1 = intervals["imagenet-val top-1 %"]
    assert top1["method"] == "wilson" and top1["num_samples"] == 8
    segment = f"95 % Wilson interval [{top1['low']:.2f}, {top1['high']:.2f}], 8 images"
    assert by_task["imagenet-val.accuracy"].notes.split(" | ")[1] == segment
    mce = intervals["imagenet-c mCE % (alexnet-15)"]
    segment = (
        f"95 % {mce['method']} interval [{mce['low']:.2f}, {mce['high']:.2f}] over 8 clean images, "
        f"{mce['num_resamples']:,} resamples"
    )
    assert by_task["imagenet-c.mce.preprocessing=native-resize"].notes.split(" | ")[1] == segment
    assert all(len(entry.notes.split(" | ")) == 3 for entry in by_task.values())


def test_the_source_is_the_staged_results_json_or_the_predictions_dataset(staged, work, tmp_path):
    files = push(staged, REPO, dry_run=True).files
    for entry in _read(staged / FILE):
        assert entry.source_url == f"https://huggingface.co/{REPO}/blob/main/results/{RUN}/results.json"
        assert f"results/{RUN}/results.json" in files
        assert entry.date == json.loads((work / "runs" / RUN / "results.json").read_text())["created"]
    stage = tmp_path / "stage"
    run = work / "runs" / RUN
    stage_model(
        stage, work / "myvit", [run], repo_id=REPO, verify=False, predictions_repo="me/myvit-predictions"
    )
    for entry in _read(stage / FILE):
        benchmark = entry.task_id.split(".")[0]
        assert entry.source_url == f"https://huggingface.co/datasets/me/myvit-predictions/viewer/{benchmark}"
        assert entry.source_name == f"hf_vitrobust predictions ({benchmark})"


def test_a_streamed_source_is_named_by_its_hub_id_and_revision(result, work):
    streamed = json.loads(json.dumps(result))
    streamed["benchmarks"]["imagenet-val"]["source"] = {
        "kind": "hub",
        "location": "ILSVRC/imagenet-1k",
        "revision": "0123abcd",
    }
    entries = run_entries(streamed, repo_id=REPO, own_specs=[str(work / "myvit")])
    (val,) = [e for e in entries if e.task_id == "imagenet-val.accuracy"]
    assert (val.dataset_id, val.dataset_revision, val.value) == ("ILSVRC/imagenet-1k", "0123abcd", 87.5)
    assert {e.dataset_id for e in entries if e.task_id.startswith("imagenet-c.")} == {GENERATED_C}


def test_another_model_of_the_run_is_never_credited(result, work):
    (key,) = result["summary"]
    two = json.loads(json.dumps(result))
    two["models"].append({**two["models"][0], "key": "other", "spec": "org/other", "name": "org/other"})
    other = json.loads(json.dumps(two["metrics"][key]))
    other["imagenet-val"]["top1"] = 42.125  # a value no number of the own model has
    two["metrics"]["other"] = other
    two["summary"]["other"] = {**two["summary"][key], "imagenet-val top-1 %": 42.125}
    entries = run_entries(two, repo_id=REPO, own_specs=[str(work / "myvit")])
    assert len(entries) == len(EXPECTED)
    assert 42.125 not in {e.value for e in entries}
    # Nothing of the run is this repository's: no entry at all.
    assert run_entries(two, repo_id="me/another-repo") == []


def test_a_results_only_push_of_other_models_writes_none_and_says_so(work, tmp_path, caplog):
    stage = tmp_path / "stage"
    with caplog.at_level(logging.WARNING, logger="hf_vitrobust.hub.eval_results"):
        files = stage_model(stage, results=[work / "runs" / RUN], repo_id="me/results-only")
    assert not (stage / ".eval_results").exists()
    assert not [f for f in files if ".eval_results" in f.parts]
    assert (
        "No .eval_results entries: no model of these runs is this repository's own (me/results-only)"
        in caplog.text
    )
    text = " ".join((stage / "README.md").read_text().splitlines())
    assert (
        "This repository has no `.eval_results/` entries: an entry names no model, so only the headlines"
        in text
    )
    # The model-index keeps the run's model, under its own name.
    assert _own_model_index_names(stage) == [str(work / "myvit")]


def test_two_runs_giving_one_task_are_both_written_and_logged(repo_run, tmp_path, caplog):
    second = tmp_path / "r2"
    shutil.copytree(repo_run, second)
    stage = tmp_path / "stage"
    with caplog.at_level(logging.WARNING, logger="hf_vitrobust.hub.eval_results"):
        stage_model(stage, results=[repo_run, second], repo_id=REPO)
    first, again = _read(stage / FILE), _read(stage / ".eval_results" / "r2.yaml")
    assert [(e.dataset_id, e.task_id, e.value) for e in first] == [
        (e.dataset_id, e.task_id, e.value) for e in again
    ]
    assert "Runs r1 and r2 both give imagenet-val.accuracy on hf_vitrobust/imagenet-val-local" in caplog.text
    assert caplog.text.count("Runs r1 and r2 both give") == len(EXPECTED)


def _own_model_index_names(stage: Path) -> list[str]:
    return [m["name"] for m in metadata_load(stage / "README.md")["model-index"]]


@pytest.fixture(scope="module")
def repo_run(work, tmp_path_factory) -> Path:
    """The run as if the model had been evaluated from the Hub, `--model me/myvit`."""
    run = tmp_path_factory.mktemp("evaluated-from-the-hub") / RUN
    shutil.copytree(work / "runs" / RUN, run)
    recorded = json.loads((run / "results.json").read_text())
    recorded["models"][0]["spec"] = REPO
    (run / "results.json").write_text(json.dumps(recorded))
    return run


def test_a_results_only_push_credits_the_model_evaluated_from_the_repo(repo_run, tmp_path):
    stage = tmp_path / "stage"
    stage_model(stage, results=[repo_run], repo_id=REPO)
    entries = _read(stage / FILE)
    assert {e.task_id for e in entries} == {task for _, task, _ in EXPECTED.values()}
    model_index = _own_model_index(stage)
    for dataset, task, metric in EXPECTED.values():
        (entry,) = [e for e in entries if e.task_id == task]
        assert entry.value == model_index[(dataset, metric)]


def test_values_keep_the_model_index_units(tmp_path):
    """ImageNet-P's mFR headline is in percent, its model-index row a fraction: the entry takes the row's."""
    run = tmp_path / "old"
    shutil.copytree(OLD_RUN, run)
    recorded = json.loads((run / "results.json").read_text())
    recorded["models"][0]["spec"] = REPO
    (run / "results.json").write_text(json.dumps(recorded))
    stage = tmp_path / "stage"
    stage_model(stage, results=[run], repo_id=REPO)
    (mfr,) = [
        e
        for e in _read(stage / ".eval_results" / "old.yaml")
        if e.dataset_id.endswith("imagenet-p-generated")
    ]
    assert mfr.task_id == "imagenet-p.flip_probability"
    summary = recorded["summary"]["builtin_efficientnet_lite0"]["imagenet-p mFR unnormalised %"]
    assert mfr.value == pytest.approx(summary / 100, rel=1e-12) and mfr.value == pytest.approx(1 / 30)
    name = "Mean flip probability (fraction, lower is better)"
    assert mfr.value == _own_model_index(stage)[("hf_vitrobust/imagenet-p-generated", name)]


def test_a_run_without_recorded_protocols_gives_no_entries(result, work, caplog):
    old = json.loads(json.dumps(result))
    for info in old["benchmarks"].values():
        info.pop("protocol")
    with caplog.at_level(logging.WARNING, logger="hf_vitrobust.hub.eval_results"):
        assert run_entries(old, repo_id=REPO, own_specs=[str(work / "myvit")]) == []
    assert "imagenet-val records no protocol" in caplog.text


def test_the_upload_sends_the_eval_results(staged, monkeypatch):
    """The real `HfApi.upload_folder` (its file listing and ignore patterns), stopped at the commit: the
    `.eval_results/` file is among the operations, byte for byte."""
    import huggingface_hub.hf_api as hf_api
    from huggingface_hub import CommitInfo, HfApi, RepoUrl

    sent = {}

    def create_commit(self, repo_id, operations, **kwargs):
        sent.update({op.path_in_repo: Path(op.path_or_fileobj).read_bytes() for op in operations})
        return CommitInfo(
            commit_url=f"https://huggingface.co/{repo_id}/commit/0123abcd",
            commit_message=kwargs.get("commit_message") or "",
            commit_description="",
            oid="0123abcd",
        )

    monkeypatch.setattr(hf_api, "is_xet_available", lambda: False)
    monkeypatch.setattr(
        HfApi, "create_repo", lambda self, repo_id, **kw: RepoUrl(f"https://huggingface.co/{repo_id}")
    )
    monkeypatch.setattr(HfApi, "_validate_yaml", lambda self, content, **kw: None)
    monkeypatch.setattr(HfApi, "create_commit", create_commit)
    pushed = push(staged, REPO, token="hf_not_a_real_token")
    assert sent[FILE] == (staged / FILE).read_bytes()
    assert FILE in pushed.files and set(sent) == set(pushed.files)


def test_the_cli_dry_run_shows_the_eval_results(repo_run, staged, tmp_path, capsys):
    stage = tmp_path / "stage"
    assert main(["push", "--results", str(repo_run), REPO, "--dry-run", "--output", str(stage)]) == 0
    assert f"  {FILE}\n" in capsys.readouterr().out
    assert yaml.safe_load((stage / FILE).read_text()) == yaml.safe_load((staged / FILE).read_text())


def test_task_ids_name_every_protocol_choice_that_is_not_the_default():
    a = BENCHMARKS.get("imagenet-a")
    assert task_id(a, "accuracy", default_protocol(a)) == "imagenet-a.accuracy"
    both = {"preprocessing": "native-resize", "class_mask": "paul-chen-1000"}
    assert (
        task_id(a, "accuracy", both)
        == "imagenet-a.accuracy.preprocessing=native-resize.class_mask=paul-chen-1000"
    )
    c = BENCHMARKS.get("imagenet-c")
    encodings = [{**default_protocol(c), "release_encoding": name} for name in ("jpeg-85", "none")]
    assert [task_id(c, "mce", p) for p in encodings] == [
        "imagenet-c.mce",
        "imagenet-c.mce.release_encoding=none",
    ]


def test_protocol_note_names_parts_in_protocol_order():
    note = protocol_note({"class_mask": "hendrycks-200", "preprocessing": "model-native"})
    assert note == "protocol: preprocessing=model-native, class_mask=hendrycks-200"


@pytest.mark.parametrize("name", sorted(BENCHMARKS.names()))
def test_protocol_note_round_trips_every_default_protocol(name):
    benchmark = BENCHMARKS.get(name)
    protocol = default_protocol(benchmark)
    notes = " | ".join(
        [protocol_note(protocol), "95 % Wilson interval [41.20, 43.51], 7,424 images", "run: r1"]
    )
    assert protocol_from_notes(notes) == protocol
    # The fixed order is protocol_parts' order for every benchmark.
    order = [part for part in PROTOCOL_PART_ORDER if part in protocol]
    assert tuple(order) == protocol_parts(benchmark)


def test_protocol_from_notes_without_a_protocol_segment():
    assert protocol_from_notes(None) is None
    assert protocol_from_notes("") is None
    assert protocol_from_notes("no-tools") is None
    assert protocol_from_notes("protocol: not a pair | run: r1") is None


def test_protocol_note_refuses_names_it_could_not_read_back():
    with pytest.raises(ValueError, match="cannot be written into notes"):
        protocol_note({"release_encoding": "none (the CIFAR-C release is uint8 arrays, no JPEG)"})
    with pytest.raises(ValueError, match="empty"):
        protocol_note({})


def test_later_parts_enter_the_notes_only_when_they_differ_from_what_earlier_runs_had():
    val = BENCHMARKS.get("imagenet-val")
    record = {"preprocessing": "model-native", "interpolation": "model-own", "labels": "imagenet"}
    assert recorded_protocol(val, record, "m") == {"preprocessing": "model-native"}
    changed = {**record, "interpolation": "tf-bilinear", "labels": "real"}
    assert recorded_protocol(val, changed, "m") == {
        "preprocessing": "model-native",
        "interpolation": "tf-bilinear",
        "labels": "real",
    }
    assert task_id(val, "accuracy", recorded_protocol(val, changed, "m")) == (
        "imagenet-val.accuracy.interpolation=tf-bilinear.labels=real"
    )
