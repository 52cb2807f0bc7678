"""hf_vitrobust.hub.jobs: the job spec a dry run prints, its checks, the script it runs (under a real `sh`, with a
stub `vitrobust`), and `submit` against huggingface_hub's real `run_uv_job` signature and command construction.
Offline: every HfApi call is a fake bound to the real method's signature, returning the real huggingface_hub types
built from the Hub's JSON."""

import hashlib
import inspect
import json
import re
import shlex
import subprocess
import zipfile
from pathlib import Path

import huggingface_hub
import pytest
from huggingface_hub import CommitInfo, HfApi, JobHardware, JobInfo, RepoUrl, Volume

from hf_vitrobust.hub.jobs import JobError, build_job_spec, submit

REAL_RUN_UV_JOB = HfApi.run_uv_job
TOKEN = "hf_jobsTestToken0123456789abcdefXYZ"
MODEL_REPO, PREDICTIONS_REPO = "me/vit-robustness", "me/vit-robustness-predictions"
EVALUATE_ARGS = ["--suite", "paper", "--model", "google/vit-base-patch16-224", "--limit", "500"]


@pytest.fixture
def wheel(tmp_path: Path) -> Path:
    """A stand-in for the hf_vitrobust wheel: a real zip under the wheel's file name (building one takes ~15 s)."""
    path = tmp_path / "dist" / "hf_vitrobust-0.1.0-py3-none-any.whl"
    path.parent.mkdir()
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("hf_vitrobust/__init__.py", "__version__ = '0.1.0'\n")
    return path


def _spec(wheel: Path, **overrides):
    options = dict(
        output="/tmp/run",
        flavor="a10g-small",
        push_repo=MODEL_REPO,
        predictions_repo=PREDICTIONS_REPO,
        wheel=wheel,
    )
    return build_job_spec("evaluate", EVALUATE_ARGS, **options | overrides)


def test_the_dry_run_spec_names_the_command_flavor_secret_and_wheel(wheel, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    spec = _spec(wheel, timeout="90m")
    printed = json.dumps(spec.to_dict())
    assert TOKEN not in printed
    data = json.loads(printed)

    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()[:16]
    assert data["upload_first"] == {
        "file": str(wheel),
        "repo_id": MODEL_REPO,
        "repo_type": "model",
        "path_in_repo": f"wheels/{digest}/hf_vitrobust-0.1.0-py3-none-any.whl",
        "private": False,
    }
    arguments = data["arguments"]
    assert arguments["secrets"] == {"HF_TOKEN": "***"}
    assert (arguments["flavor"], arguments["timeout"], arguments["name"]) == (
        "a10g-small",
        "90m",
        "vitrobust-evaluate",
    )
    assert arguments["image"] == "ghcr.io/astral-sh/uv:python3.12-bookworm"
    assert arguments["dependencies"] == ["/vitrobust-wheel/hf_vitrobust-0.1.0-py3-none-any.whl"]
    # The volume is the Hub's own JSON for a read-only repo mount of exactly the uploaded folder.
    volume = Volume(**arguments["volumes"][0])
    assert (volume.type, volume.source, volume.mount_path, volume.path) == (
        "model",
        MODEL_REPO,
        "/vitrobust-wheel",
        f"wheels/{digest}",
    )
    assert arguments["script"] == "sh" and arguments["script_args"][0] == "-c"
    script = arguments["script_args"][1]
    assert data["command"] == [
        "uv",
        "run",
        "--with",
        "/vitrobust-wheel/hf_vitrobust-0.1.0-py3-none-any.whl",
        "sh",
        "-c",
        script,
    ]
    run, push = data["steps"]
    assert script == f"{run}\n{push}"
    assert shlex.split(run.split(" || ")[0]) == ["vitrobust", "evaluate", *EVALUATE_ARGS]
    assert shlex.split(push) == [
        "vitrobust",
        "push",
        "--predictions",
        PREDICTIONS_REPO,
        "--results",
        "/tmp/run",
        MODEL_REPO,
    ]


def test_a_package_requirement_uploads_nothing_and_mounts_nothing(wheel):
    package = "hf_vitrobust @ git+https://github.com/example/hf_vitrobust@v0.1.0"
    spec = _spec(None, package=package, push_repo=None, private=True)
    data = spec.to_dict()
    assert data["upload_first"] is None and data["arguments"]["volumes"] is None
    assert data["arguments"]["dependencies"] == [package]
    assert shlex.split(data["steps"][1]) == [
        "vitrobust",
        "push",
        "--predictions",
        PREDICTIONS_REPO,
        "--results",
        "/tmp/run",
        "--private",
    ]
    # Only the predictions dataset is pushed: the wheel would go to it, as a dataset repo.
    assert _spec(wheel, push_repo=None).wheel_upload.repo_type == "dataset"


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"flavor": "a10g-tiny"}, "unknown flavor 'a10g-tiny': one of cpu-basic"),
        ({"timeout": "2 hours"}, "timeout '2 hours' must be seconds"),
        ({"push_repo": None, "predictions_repo": None}, "the job must push its results"),
        ({"push_repo": "vit-robustness"}, "must read 'namespace/name'"),
        ({"push_repo": "me/vit/robustness"}, "must read 'namespace/name'"),
        ({"predictions_repo": "me/bad..name"}, "is not a valid repo id"),
        ({"package": "hf_vitrobust"}, "exactly one of a wheel"),
        ({"wheel": None}, "exactly one of a wheel"),
        ({"wheel": None, "package": "numpy>=2"}, "package must install hf_vitrobust"),
        (
            {"wheel": None, "package": "https://example.com/numpy-2.0-py3-none-any.whl"},
            "package URL must end",
        ),
        ({"wheel": None, "package": "hf_vitrobust @@ nowhere"}, "is not a requirement uv can install"),
        ({"wheel": Path("no/such/hf_vitrobust-0.1.0-py3-none-any.whl")}, "must be an existing"),
        ({"output": "/vitrobust-wheel/run"}, "must be a writable folder of the job"),
        (
            {"extra_dependencies": ["torch=2.9"]},
            "an extra dependency 'torch=2.9' is not a requirement uv can install",
        ),
    ],
)
def test_bad_input_is_refused_before_any_work(wheel, overrides, message):
    overrides = dict(overrides)
    with pytest.raises(JobError, match=re.escape(message)):
        _spec(overrides.pop("wheel", wheel), **overrides)


def test_the_flavors_are_huggingface_hubs_and_local_files_are_refused(wheel, tmp_path):
    for flavor in ("cpu-basic", "a10g-small", "h200", JobHardware.L40SX1.value):
        assert _spec(wheel, flavor=flavor).flavor == flavor
    # huggingface_hub's validator accepts a bare name; a pushed repo must name its namespace.
    huggingface_hub.utils.validate_repo_id("vit-robustness")
    local = tmp_path / "imagenet-a"
    local.mkdir()
    inputs = ["google/vit-base-patch16-224", "paper", f"generated:{local}"]
    with pytest.raises(JobError, match=f"generated:{local}: local files, which the job cannot see"):
        _spec(wheel, inputs=inputs)
    assert _spec(wheel, inputs=inputs[:2]).name == "vitrobust-evaluate"


def _stub_vitrobust(folder: Path, exits: dict[str, int]) -> Path:
    """A `vitrobust` on PATH that logs its arguments (one per line) and exits as `exits` says per subcommand."""
    log = folder / "calls.log"
    cases = " ".join(f"{command}) exit {status};;" for command, status in exits.items())
    stub = folder / "bin" / "vitrobust"
    stub.parent.mkdir(parents=True)
    stub.write_text(
        f'#!/bin/sh\nprintf "%s\\n" "$@" >> {shlex.quote(str(log))}\necho --- >> {shlex.quote(str(log))}\n'
        f'case "$1" in {cases} *) exit 0;; esac\n'
    )
    stub.chmod(0o755)
    return log


def _run_script(
    spec, tmp_path: Path, exits: dict[str, int]
) -> tuple[subprocess.CompletedProcess, list[list[str]]]:
    log = _stub_vitrobust(tmp_path, exits)
    environment = {"PATH": f"{tmp_path / 'bin'}:/usr/bin:/bin"}
    done = subprocess.run(
        ["sh", "-c", spec.script], cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=60
    )
    calls = log.read_text().split("---\n")[:-1] if log.exists() else []
    return done, [call.splitlines() for call in calls]


def test_the_script_pushes_only_after_the_run_succeeded_and_keeps_its_exit_status(wheel, tmp_path):
    spec = _spec(wheel, output="run")
    done, calls = _run_script(spec, tmp_path / "ok", {})
    assert done.returncode == 0, done.stderr
    assert calls == [
        ["evaluate", *EVALUATE_ARGS],
        ["push", "--predictions", PREDICTIONS_REPO, "--results", "run", MODEL_REPO],
    ]

    done, calls = _run_script(spec, tmp_path / "failed", {"evaluate": 3})
    assert done.returncode == 3 and calls == [["evaluate", *EVALUATE_ARGS]]
    assert "evaluate failed with exit status 3; nothing was pushed" in done.stderr

    done, calls = _run_script(spec, tmp_path / "push-failed", {"push": 4})
    assert done.returncode == 4 and [call[0] for call in calls] == ["evaluate", "push"]


def test_a_reproduction_pushes_every_leg(wheel, tmp_path):
    spec = build_job_spec(
        "reproduce",
        ["paul-chen", "--output", "my reproduction"],
        output="my reproduction",
        flavor="h200",
        push_repo=MODEL_REPO,
        wheel=wheel,
    )
    for leg in ("vit-b16", "bit-m-r101x3"):
        (tmp_path / "my reproduction" / "legs" / leg).mkdir(parents=True)
    done, calls = _run_script(spec, tmp_path, {})
    assert done.returncode == 0, done.stderr
    assert calls[0] == ["reproduce", "paul-chen", "--output", "my reproduction"]
    assert calls[1] == [
        "push",
        "--results",
        "my reproduction/legs/bit-m-r101x3/",
        "--results",
        "my reproduction/legs/vit-b16/",
        MODEL_REPO,
    ]


# ------------------------------------------------------------------------------------------------ submit
def _job_info(namespace: str, kwargs: dict) -> JobInfo:
    """A JobInfo parsed from JSON shaped like the Hub's answer to POST /api/jobs/{namespace}."""
    return JobInfo(
        id="6751f0c2a1b2c3d4e5f60718",
        createdAt="2026-12-03T15:00:00.000Z",
        dockerImage=kwargs.get("image"),
        command=kwargs.get("command"),
        arguments=[],
        environment=kwargs.get("env"),
        secrets={name: None for name in kwargs.get("secrets") or {}},
        flavor=kwargs.get("flavor"),
        status={"stage": "SCHEDULING", "message": None},
        owner={"id": "5e9ecfc04957053f60648a3e", "name": namespace, "type": "user"},
        endpoint="https://huggingface.co",
    )


@pytest.fixture
def hub(monkeypatch):
    """Fake HfApi methods bound to the real signatures; `calls` records (method, arguments) in order."""
    calls: list[tuple[str, dict]] = []
    real = {name: getattr(HfApi, name) for name in ("create_repo", "upload_file", "run_uv_job")}

    def recorder(name, answer):
        def method(self, *args, **kwargs):
            bound = inspect.signature(real[name]).bind(self, *args, **kwargs)
            arguments = {key: value for key, value in bound.arguments.items() if key != "self"}
            calls.append((name, arguments))
            assert self.token == TOKEN  # the client is authenticated with the resolved token
            return answer(arguments)

        monkeypatch.setattr(HfApi, name, method)

    recorder("create_repo", lambda a: RepoUrl(f"https://huggingface.co/{a['repo_id']}"))
    recorder(
        "upload_file",
        lambda a: CommitInfo(
            commit_url=f"https://huggingface.co/{a['repo_id']}/commit/0123abcd",
            commit_message=a["commit_message"],
            commit_description="",
            oid="0123abcd" * 5,
        ),
    )
    recorder("run_uv_job", lambda a: _job_info("me", a))
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    return calls


def test_submit_uploads_the_wheel_then_runs_the_uv_job(wheel, hub):
    spec = _spec(wheel)
    job = submit(spec)
    assert (job.id, job.url) == (
        "6751f0c2a1b2c3d4e5f60718",
        "https://huggingface.co/jobs/me/6751f0c2a1b2c3d4e5f60718",
    )
    assert [name for name, _ in hub] == ["create_repo", "upload_file", "run_uv_job"]
    created, uploaded, ran = (arguments for _, arguments in hub)
    assert created == {"repo_id": MODEL_REPO, "repo_type": "model", "private": False, "exist_ok": True}
    assert uploaded["path_or_fileobj"] == str(wheel)
    assert (uploaded["repo_id"], uploaded["path_in_repo"]) == (MODEL_REPO, spec.wheel_upload.path_in_repo)
    assert ran["secrets"] == {"HF_TOKEN": TOKEN}
    printed = spec.to_dict()["arguments"]
    for key, value in ran.items():
        if key == "volumes":
            assert [volume.to_dict() for volume in value] == printed["volumes"]
        elif key != "secrets":
            assert value == printed[key], key


def test_the_real_run_uv_job_sends_the_command_the_spec_prints(wheel, hub, monkeypatch, tmp_path):
    """huggingface_hub's own `run_uv_job` builds the container command; only `run_job` (the POST) is faked."""
    monkeypatch.setattr(HfApi, "run_uv_job", REAL_RUN_UV_JOB)
    sent = []

    def run_job(self, **kwargs):
        inspect.signature(huggingface_hub.HfApi.run_job).bind(self, **kwargs)
        sent.append(kwargs)
        return _job_info(kwargs["namespace"], kwargs)

    monkeypatch.setattr(HfApi, "run_job", run_job)
    monkeypatch.chdir(tmp_path)  # run_uv_job ships any local file named like the script: there is none here
    spec = _spec(wheel, namespace="me-org", extra_dependencies=["torch==2.9.*", "timm>=1.0.20"])
    job = submit(spec)
    (kwargs,) = sent
    assert kwargs["command"] == spec.command == spec.to_dict()["command"]
    wheel_in_job = "/vitrobust-wheel/hf_vitrobust-0.1.0-py3-none-any.whl"
    assert kwargs["command"][:8] == [
        "uv",
        "run",
        "--with",
        wheel_in_job,
        "--with",
        "torch==2.9.*",
        "--with",
        "timm>=1.0.20",
    ]
    assert (kwargs["image"], kwargs["flavor"], kwargs["timeout"]) == (spec.image, "a10g-small", "2h")
    assert kwargs["secrets"] == {"HF_TOKEN": TOKEN} and kwargs["env"] == {"PYTHONUNBUFFERED": "1"}
    assert kwargs["volumes"] == list(spec.volumes) and kwargs["namespace"] == "me-org"
    assert job.url == "https://huggingface.co/jobs/me-org/6751f0c2a1b2c3d4e5f60718"


def test_submit_needs_a_token_and_never_leaks_it(wheel, hub, monkeypatch, tmp_path):
    monkeypatch.delenv("HF_TOKEN")
    monkeypatch.setattr(huggingface_hub, "get_token", lambda: None)
    with pytest.raises(JobError, match="No Hugging Face token"):
        submit(_spec(wheel))
    assert hub == []

    def refused(self, *args, **kwargs):
        raise RuntimeError(f"403 Forbidden: Authorization: Bearer {TOKEN}")

    monkeypatch.setattr(HfApi, "run_uv_job", refused)
    with pytest.raises(JobError) as refusal:
        submit(_spec(None, package="hf_vitrobust==0.1.0"), token=TOKEN)
    assert TOKEN not in str(refusal.value) and "Bearer ***" in str(refusal.value)
