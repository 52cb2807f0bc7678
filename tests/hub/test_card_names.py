"""A pushed checkpoint is named by its repo id, and its card's reproduce command runs from the repo (issue 38,
point 6).

A tiny ViT saved to a local folder ("models/myvit") is evaluated with a suite file of its own, then staged for
`me/myvit` as `vitrobust push --checkpoint models/myvit --results runs/r1 me/myvit --dry-run` stages it: the staged
results.json, the card and the Space leaderboard name "me/myvit" (the local path stays only as the recorded spec);
the card's command names the repo id and a suite file that is in the staged repo, and that command, run from the
staged repo on the staged model, gives the same numbers."""

import dataclasses
import importlib.util
import json
import re
import shlex
import sys
from pathlib import Path

import pytest
import yaml
from huggingface_hub import ModelCard
from probe_models import save_vit_folder, tiny_vit_model

from hf_vitrobust.cli import main
from hf_vitrobust.evaluation.suite import load_suite, suite_path
from hf_vitrobust.hub import push, stage_model
from hf_vitrobust.hub.published_runs import staged_suite

REPO = "me/myvit"
LOCAL = "models/myvit"
SUITE = {
    "name": "mysuite",
    "description": "three bundled photos",
    "batch_size": 4,
    "seed": 0,
    "chunk_size": 4,
    "models": [LOCAL],
    "benchmarks": {"imagenet-val": {"source": "builtin", "limit": 3}},
}


@pytest.fixture(scope="module")
def pushed(tmp_path_factory):
    """The working folder (a local checkpoint, its run) and the dry-run stage for me/myvit."""
    work = tmp_path_factory.mktemp("work")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(work)  # specs are recorded as given: a relative folder, as a user types it
        save_vit_folder(LOCAL, tiny_vit_model())
        Path("my-suite.yaml").write_text(yaml.safe_dump(SUITE))
        assert main(["evaluate", "--suite", "my-suite.yaml", "--output", "runs/r1", "--quiet"]) == 0
        # What the push's dry run stages (the staged model's loading is verified by tests/hub/test_hub_staging.py).
        stage_model(Path("stage"), Path(LOCAL), [Path("runs/r1")], repo_id=REPO, verify=False)
        files = push(Path("stage"), REPO, dry_run=True).files
    return work, work / "stage", files


def _command(card_text: str) -> list[str]:
    (command,) = re.findall(
        r"```bash\n(vitrobust evaluate --model me/myvit --suite results/[^\n]*)\n```", card_text
    )
    return shlex.split(command)


def test_the_staged_results_name_the_repo_and_keep_the_local_spec(pushed):
    work, stage, _ = pushed
    original = json.loads((work / "runs" / "r1" / "results.json").read_text())
    staged = json.loads((stage / "results" / "r1" / "results.json").read_text())
    (model,) = staged["models"]
    assert model["name"] == REPO and model["spec"] == LOCAL and model["key"] == original["models"][0]["key"]
    # Nothing else changed.
    original["models"][0]["name"] = REPO
    assert staged == original


def test_the_card_names_the_repo_not_the_local_folder(pushed):
    _, stage, _ = pushed
    card = ModelCard((stage / "README.md").read_text())
    assert LOCAL not in card.text and "models_myvit" not in card.text
    rows = [line for line in card.text.splitlines() if line.startswith(f"| {REPO} |")]
    assert len(rows) >= 2  # the headline row and the interval rows
    assert {r.source_url for r in card.data.eval_results} == {
        f"https://huggingface.co/{REPO}/blob/main/results/r1/results.json"
    }


def test_the_reproduce_command_names_a_suite_file_that_is_staged(pushed):
    work, stage, files = pushed
    words = _command((stage / "README.md").read_text())
    suite_file = words[words.index("--suite") + 1]
    assert words[words.index("--model") + 1] == REPO and suite_file == "results/r1/suite.yaml"
    assert suite_file in files  # the dry run uploads it
    # The staged suite is the run's suite, its model named by the repo id.
    expected = dataclasses.replace(load_suite(work / "my-suite.yaml"), models=(REPO,))
    assert load_suite(stage / suite_file) == expected


def test_the_command_run_from_the_staged_repo_reproduces_the_numbers(pushed, tmp_path, monkeypatch):
    work, stage, _ = pushed
    words = _command((stage / "README.md").read_text())
    words[words.index("--model") + 1] = str(stage)  # the folder `me/myvit` downloads to
    monkeypatch.chdir(stage)
    assert main([*words[1:], "--output", str(tmp_path / "again"), "--quiet"]) == 0
    original = json.loads((work / "runs" / "r1" / "results.json").read_text())
    again = json.loads((tmp_path / "again" / "results.json").read_text())
    (first,) = original["metrics"].values()
    (second,) = again["metrics"].values()
    assert second["imagenet-val"]["top1"] == first["imagenet-val"]["top1"]
    assert second["imagenet-val"]["num_samples"] == first["imagenet-val"]["num_samples"] == 3


def test_the_space_leaderboard_names_the_repo(pushed):
    _, stage, _ = pushed
    spec = importlib.util.spec_from_file_location(
        "vitrobust_space_app", Path(__file__).resolve().parents[2] / "spaces_app" / "app.py"
    )
    if spec.name not in sys.modules:
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
    board = sys.modules[spec.name].leaderboard(stage / "no-space-results", repos=[str(stage)])
    assert board["model"].tolist() == [REPO]


def test_a_shipped_suite_is_named_not_staged():
    demo = load_suite("demo")
    result = {"suite": {**demo.to_dict(), "path": str(suite_path("demo"))}, "models": []}
    assert staged_suite(result, [LOCAL], REPO) is None
