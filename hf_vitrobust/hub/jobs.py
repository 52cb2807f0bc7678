# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Run `vitrobust evaluate` or `vitrobust reproduce` as a Hugging Face Job that pushes its results when it ends.

How hf_vitrobust gets into the job: it is not on PyPI, so by default the wheel built from this checkout
(`space.build_wheel`) is uploaded to `wheels/<sha256 of the wheel, 16 hex>/` of the repository the job pushes to,
that folder is mounted read-only in the job (a repo volume, `huggingface_hub.Volume`; the hash in its path pins
exactly this build), and `uv run --with <the mounted wheel>` installs it and its dependencies from PyPI. Or
`package=`: any requirement uv understands that names hf_vitrobust (`hf_vitrobust @ git+https://...`, a wheel
URL), and nothing is uploaded.

The job is `uv run --with WHEEL sh -c SCRIPT` in huggingface_hub's uv image (the command `HfApi.run_uv_job` sends
for a command that is not a local file). SCRIPT runs the vitrobust command and then, only if it succeeded, one
`vitrobust push` of its run folder(s): the model repo (results, card, `.eval_results/`) and/or the predictions
dataset. A failed run pushes nothing, so no partial numbers reach a card or a leaderboard, and the job ends with
the run's exit status; a failed push ends it with the push's. The token travels as the job secret HF_TOKEN,
resolved at submission (`push.resolve_token`): a `JobSpec` holds secret names only, and its printed form masks
the value.
"""

from __future__ import annotations

import hashlib
import re
import shlex
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from .push import _mask, resolve_token
from .space import _WHEEL_NAME

#: The vitrobust commands a job can run.
RUN_COMMANDS = ("evaluate", "reproduce")
#: Where the wheel's repo folder is mounted in the job.
WHEEL_MOUNT = "/vitrobust-wheel"
WHEELS_FOLDER = "wheels"
TOKEN_SECRET = "HF_TOKEN"
MASK = "***"
#: The job's time limit unless given: HF Jobs bill by the minute and stop a job at its limit, which then pushes nothing.
DEFAULT_TIMEOUT = "2h"
_TIMEOUT = re.compile(r"^\d+(\.\d+)?[smhd]?$")


class JobError(RuntimeError):
    """A job that cannot be submitted (bad flavor, repo id, package, no token) or that the Hub refused."""


@dataclass(frozen=True)
class WheelUpload:
    """The local wheel that `submit` uploads to `repo_id` (a `repo_type` repo) at `path_in_repo` before the job."""

    file: Path
    repo_id: str
    repo_type: str
    path_in_repo: str
    private: bool = False


@dataclass(frozen=True)
class JobSpec:
    """Everything a job is, before it is submitted: the keyword arguments of `HfApi.run_uv_job` (`script` "sh",
    `script_args` ["-c", script]), the vitrobust steps the script runs, and the wheel to upload first. Secrets are
    names only; their values are resolved by `submit`."""

    script: str
    steps: tuple[str, ...]
    dependencies: tuple[str, ...]
    image: str
    flavor: str
    timeout: str
    name: str
    env: dict[str, str] = field(default_factory=dict)
    secrets: tuple[str, ...] = (TOKEN_SECRET,)
    volumes: tuple[Any, ...] = ()
    namespace: str | None = None
    wheel_upload: WheelUpload | None = None

    @property
    def command(self) -> list[str]:
        """The container's command, as `HfApi.run_uv_job` builds it for the command `sh`."""
        with_args = [arg for dependency in self.dependencies for arg in ("--with", dependency)]
        return ["uv", "run", *with_args, "sh", "-c", self.script]

    def run_uv_job_kwargs(self, token: str) -> dict[str, Any]:
        """The keyword arguments of `HfApi.run_uv_job`, with `token` as the value of every secret."""
        return {
            "script": "sh",
            "script_args": ["-c", self.script],
            "dependencies": list(self.dependencies),
            "image": self.image,
            "env": dict(self.env),
            "secrets": dict.fromkeys(self.secrets, token),
            "flavor": self.flavor,
            "timeout": self.timeout,
            "name": self.name,
            "volumes": list(self.volumes) or None,
            "namespace": self.namespace,
        }

    def to_dict(self) -> dict[str, Any]:
        """The spec as JSON-able data, secrets masked: what a dry run prints."""
        arguments = self.run_uv_job_kwargs(MASK)
        arguments["volumes"] = [volume.to_dict() for volume in self.volumes] or None
        upload = None
        if self.wheel_upload is not None:
            upload = asdict(self.wheel_upload) | {"file": str(self.wheel_upload.file)}
        return {
            "upload_first": upload,
            "submit": "HfApi.run_uv_job",
            "arguments": arguments,
            "command": self.command,
            "steps": list(self.steps),
        }


def default_image() -> str:
    """huggingface_hub's image for uv jobs (Debian with Python and uv), the one `run_uv_job` picks by default."""
    from huggingface_hub._jobs_api import DEFAULT_UV_IMAGE

    return DEFAULT_UV_IMAGE


def job_flavors() -> tuple[str, ...]:
    """The hardware flavors huggingface_hub knows offline (`JobHardware`); `hf jobs hardware` lists their prices."""
    from huggingface_hub import JobHardware

    return tuple(flavor.value for flavor in JobHardware)


def check_repo_id(repo_id: str, what: str) -> None:
    """Refuse a repo id that is not `namespace/name` or that huggingface_hub's own validator refuses."""
    from huggingface_hub.errors import HFValidationError
    from huggingface_hub.utils import validate_repo_id

    if not isinstance(repo_id, str) or repo_id.count("/") != 1:
        raise JobError(f"{what} must read 'namespace/name', not {repo_id!r}.")
    try:
        validate_repo_id(repo_id)
    except HFValidationError as err:
        raise JobError(f"{what} {repo_id!r} is not a valid repo id: {err}") from None


def _check_requirement(text: str, what: str):
    """`text` as a PEP 508 requirement (`packaging.requirements.Requirement`), or JobError saying what is wrong."""
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        return Requirement(text)
    except InvalidRequirement as err:
        raise JobError(f"{what} {text!r} is not a requirement uv can install: {err}") from None


def check_package(package: str) -> None:
    """Refuse a `package` requirement that does not install hf_vitrobust: a PEP 508 requirement named hf_vitrobust
    (`hf_vitrobust @ git+https://...`) or the URL of an hf_vitrobust wheel."""
    from packaging.utils import canonicalize_name

    if re.match(r"^https?://", package):
        if not _WHEEL_NAME.match(package.rsplit("/", 1)[-1]):
            raise JobError(
                f"package URL must end with an hf_vitrobust-<version>-py3-none-any.whl, not {package!r}."
            )
        return
    requirement = _check_requirement(package, "package")
    if canonicalize_name(requirement.name) != "hf-vitrobust":
        raise JobError(
            f"package must install hf_vitrobust (e.g. 'hf_vitrobust @ git+https://...'), not {package!r}."
        )


def local_inputs(values: Sequence[str]) -> list[str]:
    """The values (model specs, suite, data sources) that name files on this machine, which a job cannot see."""
    found = []
    for value in values:
        path = value.removeprefix("generated:")
        if path and Path(path).expanduser().exists():
            found.append(value)
    return found


def _wheel_upload(wheel: Path, repo_id: str, repo_type: str, private: bool) -> WheelUpload:
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()[:16]
    return WheelUpload(wheel, repo_id, repo_type, f"{WHEELS_FOLDER}/{digest}/{wheel.name}", private)


def _push_line(
    command: str, output: str, push_repo: str | None, predictions_repo: str | None, private: bool
) -> str:
    """The `vitrobust push` of the run folder(s): an evaluate run is `output`; a reproduction's are its legs."""
    head = ["vitrobust", "push"] + (["--predictions", predictions_repo] if predictions_repo else [])
    tail = ([push_repo] if push_repo else []) + (["--private"] if private else [])
    if command == "evaluate":
        return shlex.join([*head, "--results", output, *tail])
    legs = shlex.quote(str(PurePosixPath(output) / "legs"))
    collect = f'set -- && for leg in {legs}/*/; do set -- "$@" --results "$leg"; done'
    return f'{collect} && {shlex.join(head)} "$@" {shlex.join(tail)}'.rstrip()


def build_job_spec(
    command: str,
    arguments: Sequence[str],
    *,
    output: str,
    flavor: str,
    push_repo: str | None = None,
    predictions_repo: str | None = None,
    wheel: Path | None = None,
    package: str | None = None,
    timeout: str = DEFAULT_TIMEOUT,
    private: bool = False,
    namespace: str | None = None,
    inputs: Sequence[str] = (),
    extra_dependencies: Sequence[str] = (),
) -> JobSpec:
    """The job that runs `vitrobust COMMAND ARGUMENTS...` on `flavor` and pushes its run folder `output` (the
    command's --output) to `push_repo` (model repo: results, card, `.eval_results/`) and/or `predictions_repo`
    (dataset). hf_vitrobust comes from `wheel` (uploaded to the pushed repo, model repo first) or `package` (a
    requirement); exactly one. `inputs`: the command's model specs, suite and data sources, refused if they name
    local files. `extra_dependencies`: more requirements, resolved together with hf_vitrobust's (e.g. a torch build
    whose CUDA the flavor's driver runs). Everything is checked here, before any upload or submission."""
    if command not in RUN_COMMANDS:
        raise JobError(f"a job runs one of {', '.join(RUN_COMMANDS)}, not {command!r}.")
    flavors = job_flavors()
    if flavor not in flavors:
        raise JobError(
            f"unknown flavor {flavor!r}: one of {', '.join(flavors)} (`hf jobs hardware` lists prices)."
        )
    if not _TIMEOUT.match(str(timeout)):
        raise JobError(f"timeout {timeout!r} must be seconds or a number with s, m, h or d (e.g. 90m, 2h).")
    if not push_repo and not predictions_repo:
        raise JobError(
            "the job must push its results: give the model repo and/or the predictions dataset repo."
        )
    if push_repo:
        check_repo_id(push_repo, "the model repo")
    if predictions_repo:
        check_repo_id(predictions_repo, "the predictions dataset repo")
    if (wheel is None) == (package is None):
        raise JobError(
            "hf_vitrobust must come from exactly one of a wheel (built from a checkout) or a package."
        )
    if package is not None:
        check_package(package)
    else:
        wheel = Path(wheel)
        if not wheel.is_file() or not _WHEEL_NAME.match(wheel.name):
            raise JobError(
                f"wheel must be an existing hf_vitrobust-<version>-py3-none-any.whl file, not {wheel}."
            )
    if not output or PurePosixPath(output).is_relative_to(WHEEL_MOUNT):
        raise JobError(
            f"the run folder {output!r} must be a writable folder of the job, outside {WHEEL_MOUNT}."
        )
    for requirement in extra_dependencies:
        _check_requirement(requirement, "an extra dependency")
    local = local_inputs(inputs)
    if local:
        raise JobError(
            f"{', '.join(local)}: local files, which the job cannot see; push them to the Hub and name the repo id."
        )

    from huggingface_hub import Volume

    upload, volumes, dependency = None, (), package
    if wheel is not None:
        repo_id, repo_type = (push_repo, "model") if push_repo else (predictions_repo, "dataset")
        upload = _wheel_upload(wheel, repo_id, repo_type, private)
        folder = str(PurePosixPath(upload.path_in_repo).parent)
        volumes = (Volume(type=repo_type, source=repo_id, mount_path=WHEEL_MOUNT, path=folder),)
        dependency = f"{WHEEL_MOUNT}/{wheel.name}"
    run = shlex.join(["vitrobust", command, *arguments])
    failed = f'echo "vitrobust job: {command} failed with exit status $status; nothing was pushed" >&2'
    steps = (
        f"{run} || {{ status=$?; {failed}; exit $status; }}",
        _push_line(command, output, push_repo, predictions_repo, private),
    )
    return JobSpec(
        script="\n".join(steps),
        steps=steps,
        dependencies=(dependency, *extra_dependencies),
        image=default_image(),
        flavor=flavor,
        timeout=str(timeout),
        name=f"vitrobust-{command}",
        env={"PYTHONUNBUFFERED": "1"},
        volumes=volumes,
        namespace=namespace,
        wheel_upload=upload,
    )


def submit(spec: JobSpec, *, token: str | None = None):
    """Upload the spec's wheel (if any), then start the job with `HfApi.run_uv_job`; returns its `JobInfo` (`.id`,
    `.url`). The token (argument, HF_TOKEN or the stored login) authenticates and becomes the job's HF_TOKEN secret;
    it is never printed, and the Hub client's errors are re-raised with it masked."""
    resolved = resolve_token(token)
    if not resolved:
        raise JobError(
            "No Hugging Face token: set HF_TOKEN or log in once with `hf auth login` (the job pushes with it). "
            "A dry run needs none."
        )
    from huggingface_hub import HfApi

    api = HfApi(token=resolved)
    try:
        upload = spec.wheel_upload
        if upload is not None:
            api.create_repo(upload.repo_id, repo_type=upload.repo_type, private=upload.private, exist_ok=True)
            api.upload_file(
                path_or_fileobj=str(upload.file),
                path_in_repo=upload.path_in_repo,
                repo_id=upload.repo_id,
                repo_type=upload.repo_type,
                commit_message=f"hf_vitrobust wheel for a {spec.name} job",
            )
        return api.run_uv_job(**spec.run_uv_job_kwargs(resolved))
    except Exception as error:
        message = _mask(f"{type(error).__name__}: {error}", resolved)
        raise JobError(f"Submitting the job {spec.name} failed: {message}") from None


__all__ = [
    "DEFAULT_TIMEOUT",
    "RUN_COMMANDS",
    "JobError",
    "JobSpec",
    "WheelUpload",
    "build_job_spec",
    "default_image",
    "job_flavors",
    "local_inputs",
    "submit",
]
