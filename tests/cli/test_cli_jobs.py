"""`vitrobust jobs run` (hf_vitrobust.cli.jobs): the dry run prints the spec, the inner command is parsed by its own
parser before any wheel is built, and a real run submits through (faked) HfApi calls bound to the real signatures.
examples/hf_jobs.py prints the same spec from Python."""

import argparse
import inspect
import json
import re
import runpy
import shlex
import sys
import zipfile
from pathlib import Path

import pytest
from huggingface_hub import CommitInfo, HfApi, JobInfo, RepoUrl

import hf_vitrobust.hub.space
from hf_vitrobust.cli import build_parser, main

TOKEN = "hf_cliJobsToken9876543210zyxwvuABC"
ROOT = Path(__file__).resolve().parents[2]
RUN = [
    "jobs",
    "run",
    "--flavor",
    "a10g-small",
    "--push",
    "me/vit-robustness",
    "--predictions",
    "me/vit-preds",
]
INNER = ["evaluate", "--suite", "paper", "--model", "google/vit-base-patch16-224", "--output", "/tmp/run"]


@pytest.fixture
def wheel(tmp_path: Path) -> Path:
    path = tmp_path / "hf_vitrobust-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("hf_vitrobust/__init__.py", "")
    return path


@pytest.fixture
def no_wheel_build(monkeypatch):
    """Building the wheel fails the test: bad input must be refused before it."""

    def build_wheel(*args, **kwargs):
        raise AssertionError("the wheel was built before the input was checked")

    monkeypatch.setattr(hf_vitrobust.hub.space, "build_wheel", build_wheel)


def test_dry_run_prints_the_spec_with_the_token_masked(wheel, capsys, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    pins = ["--with", "torch==2.9.*", "--with", "numpy<3"]
    assert main([*RUN, "--wheel", str(wheel), "--timeout", "3h", *pins, "--dry-run", "--", *INNER]) == 0
    out, err = capsys.readouterr()
    assert TOKEN not in out + err
    spec = json.loads(out)
    arguments = spec["arguments"]
    assert (arguments["flavor"], arguments["timeout"], arguments["secrets"]) == (
        "a10g-small",
        "3h",
        {"HF_TOKEN": "***"},
    )
    assert (
        spec["upload_first"]["file"] == str(wheel) and spec["upload_first"]["repo_id"] == "me/vit-robustness"
    )
    assert arguments["dependencies"] == [f"/vitrobust-wheel/{wheel.name}", "torch==2.9.*", "numpy<3"]
    run, push = spec["steps"]
    assert shlex.split(run.split(" || ")[0]) == ["vitrobust", *INNER]
    assert shlex.split(push) == [
        "vitrobust",
        "push",
        "--predictions",
        "me/vit-preds",
        "--results",
        "/tmp/run",
        "me/vit-robustness",
    ]
    # Without --output, the job pushes the command's default run folder, which the parser declares.
    assert main([*RUN, "--wheel", str(wheel), "--dry-run", *INNER[:-2]]) == 0
    default_output = build_parser().parse_args(["evaluate"]).output
    assert json.loads(capsys.readouterr().out)["steps"][1].split()[-2] == default_output


def test_the_inner_command_is_checked_before_the_wheel_is_built(no_wheel_build, capsys, tmp_path):
    with pytest.raises(SystemExit) as exit_info:
        main([*RUN, "--dry-run", "evaluate", "--limit", "many"])
    assert exit_info.value.code == 2 and "--limit: invalid int value: 'many'" in capsys.readouterr().err

    local = tmp_path / "imagenet-r"
    local.mkdir()
    refusals = {
        "unknown flavor 'a100-tiny'": ["--flavor", "a100-tiny", "evaluate"],
        "local files, which the job cannot see": [
            "evaluate",
            "--suite",
            "quick",
            "--data",
            f"imagenet-r={local}",
        ],
        "--plan and --list-pairs only print": ["reproduce", "paul-chen", "--plan"],
        "only print: run them here, not as a job": ["evaluate", "--plan"],
        "the job must push its results": ["evaluate"],
        # EvaluationConfig.resolve()'s checks, here rather than in the job after it installed its stack:
        "would stop at once: batch_size must be an integer >= 1, got 0": ["evaluate", "--batch-size", "0"],
        "would stop at once: --protocol imagenet-q.PART=NAME: the suite 'quick' has no benchmark 'imagenet-q'": [
            "evaluate",
            "--suite",
            "quick",
            "--protocol",
            "imagenet-q.class_mask=paul-chen-1000",
        ],
    }
    for message, argv in refusals.items():
        head = ["jobs", "run", "--flavor", "h200"] + (
            [] if message.startswith("the job must") else ["--push", "me/x"]
        )
        with pytest.raises(SystemExit) as exit_info:
            main([*head, "--dry-run", *argv])
        assert exit_info.value.code == 2
        assert message in capsys.readouterr().err, message


def test_without_a_wheel_one_is_built_from_the_checkout(wheel, capsys, monkeypatch):
    built = []

    def build_wheel(output_dir, source_tree=None):
        built.append(Path(output_dir))
        target = Path(output_dir) / wheel.name
        target.write_bytes(wheel.read_bytes())
        return target

    monkeypatch.setattr(hf_vitrobust.hub.space, "build_wheel", build_wheel)
    assert main([*RUN, "--dry-run", *INNER]) == 0
    out, err = capsys.readouterr()
    assert len(built) == 1 and "building the hf_vitrobust wheel" in err
    assert json.loads(out)["upload_first"]["file"] == str(built[0] / wheel.name)
    assert not built[0].exists()  # the scratch folder is gone


def test_a_run_submits_and_says_how_to_follow_the_logs(wheel, capsys, monkeypatch):
    calls = []

    def fake(name, answer):
        real = getattr(HfApi, name)

        def method(self, *args, **kwargs):
            bound = inspect.signature(real).bind(self, *args, **kwargs)
            calls.append(name)
            return answer({key: value for key, value in bound.arguments.items() if key != "self"})

        monkeypatch.setattr(HfApi, name, method)

    fake("create_repo", lambda a: RepoUrl(f"https://huggingface.co/{a['repo_id']}"))
    fake(
        "upload_file",
        lambda a: CommitInfo(
            commit_url=f"https://huggingface.co/{a['repo_id']}/commit/{'ab' * 20}",
            commit_message="m",
            commit_description="",
            oid="ab" * 20,
        ),
    )
    fake(
        "run_uv_job",
        lambda a: JobInfo(
            id="6751f0c2a1b2c3d4e5f60718",
            status={"stage": "SCHEDULING"},
            owner={"id": "1", "name": "me", "type": "user"},
            flavor=a["flavor"],
        ),
    )
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    assert main([*RUN, "--wheel", str(wheel), *INNER]) == 0
    out, err = capsys.readouterr()
    assert calls == ["create_repo", "upload_file", "run_uv_job"] and TOKEN not in out + err
    assert (
        "job 6751f0c2a1b2c3d4e5f60718 started: https://huggingface.co/jobs/me/6751f0c2a1b2c3d4e5f60718" in out
    )
    assert "hf jobs logs -f 6751f0c2a1b2c3d4e5f60718" in out


def test_every_flag_of_jobs_run_has_a_help_text():
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    actions = next(a for a in commands["jobs"]._actions if isinstance(a, argparse._SubParsersAction))
    for action in actions.choices["run"]._actions:
        if not isinstance(action, argparse._HelpAction):
            words = re.sub(r"\(default: [^)]*\)", "", action.help or "").split()
            assert len(words) >= 2, action.dest


def test_the_example_prints_the_same_spec_as_the_command(wheel, capsys, monkeypatch):
    """examples/hf_jobs.py, run as a script (in this process: importing the package again costs ~15 s)."""
    arguments = ["--flavor", "a10g-small", "--push", "me/vit-robustness", "--wheel", str(wheel), "--dry-run"]
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    monkeypatch.setattr(sys, "argv", ["hf_jobs.py", *arguments])
    with pytest.raises(SystemExit) as exit_info:
        runpy.run_path(str(ROOT / "examples" / "hf_jobs.py"), run_name="__main__")
    assert exit_info.value.code == 0
    out, err = capsys.readouterr()
    assert TOKEN not in out + err
    from_python = json.loads(out)
    inner = from_python["steps"][0].split(" || ")[0]
    command = ["jobs", "run", *arguments[:4], "--wheel", str(wheel), "--dry-run", *shlex.split(inner)[1:]]
    assert main(command) == 0
    assert json.loads(capsys.readouterr().out) == from_python


def test_a_push_to_another_models_repo_is_told_it_gets_no_eval_results(wheel, capsys, no_wheel_build):
    assert main([*RUN, "--wheel", str(wheel), "--dry-run", *INNER]) == 0
    note = "note: me/vit-robustness is not a model this run evaluates (google/vit-base-patch16-224)"
    assert note in capsys.readouterr().err
    own = ["jobs", "run", "--flavor", "h200", "--push", "me/my-vit", "--wheel", str(wheel), "--dry-run"]
    assert main([*own, "evaluate", "--model", "me/my-vit"]) == 0
    assert "note:" not in capsys.readouterr().err
    # Without --model, the suite's models are the run's: a bad suite name stops before the wheel is built.
    with pytest.raises(SystemExit) as exit_info:
        main([*RUN, "--dry-run", "evaluate", "--suite", "papr"])
    assert exit_info.value.code == 2 and "papr" in capsys.readouterr().err
