"""`vitrobust train` and `vitrobust push` as a user runs them: a short training run on the digits, then the staged
(dry-run) upload folders of the checkpoint with an evaluation run, of a metric, and the refusals."""

import json
from pathlib import Path

import pytest
from launch import accelerate_launch, cpu_environment

from hf_vitrobust.cli import main as cli_main


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory) -> Path:
    output = tmp_path_factory.mktemp("train") / "alternet-digits"
    args = ["train", "--epochs", "1", "--max-train-samples", "128", "--max-eval-samples", "64"]
    assert cli_main([*args, "--batch-size", "32", "--output", str(output), "--quiet"]) == 0
    return output


def test_train_writes_a_checkpoint_folder(checkpoint):
    summary = json.loads((checkpoint / "training_summary.json").read_text())
    assert summary["epochs"] == 1 and summary["dataset"] == "digits" and summary["num_labels"] == 10
    assert summary["recipe"]["lr"] == pytest.approx(4e-3)
    for name in ("model.safetensors", "config.json", "preprocessor_config.json", "README.md"):
        assert (checkpoint / name).is_file(), name


def test_train_flags_override_the_paper_recipe(tmp_path):
    with pytest.raises(SystemExit):  # a bad value is refused before any training
        cli_main(["train", "--paper-recipe", "--epochs", "0", "--output", str(tmp_path / "x"), "--quiet"])
    assert not (tmp_path / "x").exists()


def test_push_dry_run_stages_the_checkpoint(checkpoint, tmp_path, capsys):
    stage = tmp_path / "stage"
    assert (
        cli_main(
            [
                "push",
                "me/alternet-digits",
                "--checkpoint",
                str(checkpoint),
                "--dry-run",
                "--output",
                str(stage),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "nothing uploaded" in out
    staged = sorted(str(p.relative_to(stage)) for p in stage.rglob("*") if p.is_file())
    assert {"README.md", "config.json", "model.safetensors", "training_summary.json"} <= set(staged)
    assert all(f"  {name}" in out for name in staged)
    assert "alternet" in (stage / "README.md").read_text().lower()


def test_push_metric_dry_run_and_refusals(tmp_path, capsys, monkeypatch):
    stage = tmp_path / "mce"
    assert cli_main(["push", "me/mce", "--metric", "mce", "--dry-run", "--output", str(stage)]) == 0
    assert {"README.md", "app.py", "mce.py"} <= {p.name for p in stage.iterdir()}
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setattr("huggingface_hub.get_token", lambda: None)
    for argv in (
        ["push", "me/x", "--metric", "mce", "--dry-run"],  # a dry run needs a stage folder
        ["push", "me/x", "--metric", "mce", "--space"],  # one thing at a time
        ["push", "me/x"],  # nothing to push
        ["push", "me/x", "--metric", "mce"],  # no token: refused before any upload
    ):
        with pytest.raises(SystemExit):
            cli_main(argv)
    assert "token" in capsys.readouterr().err.lower()


@pytest.mark.slow
def test_train_under_accelerate_launch_with_two_processes(tmp_path):
    """`accelerate launch -m hf_vitrobust train` on 2 CPU processes: one checkpoint folder, written once, whose
    evaluation counted every held-out digit exactly once."""
    import subprocess

    output = tmp_path / "two-processes"
    command = accelerate_launch(
        "train",
        "--epochs",
        "1",
        "--max-train-samples",
        "128",
        "--max-eval-samples",
        "50",
        "--num-threads",
        "1",
        "--output",
        str(output),
        "--quiet",
        port_base=29700,
    )
    env = cpu_environment()
    completed = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert completed.returncode == 0, completed.stderr[-3000:]
    summary = json.loads((output / "training_summary.json").read_text())
    assert summary["num_eval_samples"] == 50
    correct = summary["eval_accuracy"] * 50
    assert abs(correct - round(correct)) < 1e-9  # a count out of 50: no duplicated or dropped sample
    assert (output / "model.safetensors").is_file() and not (output / "checkpoints").exists()


def test_push_space_dry_run_carries_a_wheel_and_the_results(tmp_path, capsys):
    """--space with --results: the Space folder with a wheel of this package and the results for its leaderboard."""
    from hf_vitrobust.evaluation import EvaluationConfig, evaluate

    suite = tmp_path / "tiny.json"
    suite.write_text(
        json.dumps(
            {
                "name": "tiny",
                "description": "two photos",
                "benchmarks": {"imagenet-val": {"source": "builtin", "limit": 2}},
            }
        )
    )
    run = tmp_path / "run"
    evaluate(
        EvaluationConfig(models=["builtin:efficientnet_lite0"], suite=str(suite), output=run, progress=False)
    )
    stage = tmp_path / "space"
    assert (
        cli_main(["push", "me/demo", "--space", "--results", str(run), "--dry-run", "--output", str(stage)])
        == 0
    )
    staged = {str(p.relative_to(stage)) for p in stage.rglob("*") if p.is_file()}
    assert {"app.py", "README.md", "requirements.txt", "results/run/results.json"} <= staged
    wheels = [name for name in staged if name.startswith("wheels/hf_vitrobust-") and name.endswith(".whl")]
    assert len(wheels) == 1 and f"./{wheels[0]}" in (stage / "requirements.txt").read_text()
