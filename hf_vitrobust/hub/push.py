# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Upload a staged folder to the Hub with `HfApi.create_repo` + `HfApi.upload_folder`.

Not `ModelCard.push_to_hub`, which validates the card against a hard-coded Hub URL; the card is README.md in the
staged folder. The token comes from the argument, else HF_TOKEN, else huggingface_hub's stored login, and is never
printed, logged or written: errors raised by the Hub client are re-raised with any occurrence of it masked.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

from .model_repo import ImageProcessorSpec
from .staging import local_aliases, stage_metric, stage_model, staged_files

logger = logging.getLogger(__name__)

REPO_TYPES = ("model", "dataset", "space")


class PushError(RuntimeError):
    """A push that cannot start (no token, bad stage or repo id) or that the Hub refused."""


@dataclass
class PushResult:
    """What a push sent (or, with `dry_run`, would send): repository, type, the staged files, and the commit URL."""

    repo_id: str
    repo_type: str
    files: list[str]
    url: str | None = None
    dry_run: bool = False


def resolve_token(token: str | None = None) -> str | None:
    """The token to use: `token`, else the HF_TOKEN environment variable, else huggingface_hub's stored login."""
    if token:
        return token
    if os.environ.get("HF_TOKEN"):
        return os.environ["HF_TOKEN"]
    from huggingface_hub import get_token

    return get_token() or None


def _mask(text: str, token: str | None) -> str:
    return text.replace(token, "***") if token else text


def push(
    stage: Path,
    repo_id: str,
    *,
    repo_type: str = "model",
    token: str | None = None,
    private: bool = False,
    dry_run: bool = False,
    commit_message: str | None = None,
) -> PushResult:
    """Upload every file of the staged folder `stage` to `repo_id` (created if missing; a Space with the Gradio
    SDK). `dry_run`: no network and no token needed; returns the files that would be uploaded. Links in the stage
    are local aliases (`staging.local_aliases`) and are not uploaded."""
    stage = Path(stage)
    if repo_type not in REPO_TYPES:
        raise ValueError(f"repo_type must be one of {REPO_TYPES}, not {repo_type!r}.")
    if not isinstance(repo_id, str) or repo_id.count("/") != 1 or not all(repo_id.split("/")):
        raise ValueError(f"repo_id must read 'namespace/name', not {repo_id!r}.")
    if not stage.is_dir():
        raise FileNotFoundError(f"Stage {stage} is not a folder: stage the upload first.")
    files = [path.relative_to(stage).as_posix() for path in staged_files(stage)]
    if not files:
        raise ValueError(f"Stage {stage} is empty: nothing to upload.")
    if repo_type == "space" and "README.md" not in files:
        raise ValueError(
            f"Stage {stage} has no README.md: a Space needs one with its metadata (sdk, app_file)."
        )
    if dry_run:
        logger.info("Dry run: %d files of %s would go to %s (%s).", len(files), stage, repo_id, repo_type)
        return PushResult(repo_id=repo_id, repo_type=repo_type, files=files, dry_run=True)

    resolved = resolve_token(token)
    if not resolved:
        raise PushError(
            "No Hugging Face token: pass one, set HF_TOKEN, or log in once with `hf auth login`. "
            "(A dry run needs none.)"
        )
    from huggingface_hub import HfApi

    try:
        api = HfApi(token=resolved)
        created = api.create_repo(
            repo_id,
            repo_type=repo_type,
            exist_ok=True,
            private=private,
            **({"space_sdk": "gradio"} if repo_type == "space" else {}),
        )
        repo_id = getattr(created, "repo_id", None) or repo_id
        logger.info("Uploading %d files of %s to %s (%s).", len(files), stage, repo_id, repo_type)
        commit = api.upload_folder(
            repo_id=repo_id,
            repo_type=repo_type,
            folder_path=str(stage),
            commit_message=commit_message or f"Upload with hf_vitrobust ({len(files)} files)",
            ignore_patterns=local_aliases(stage) or None,
        )
    except Exception as error:
        # The Hub client's messages may quote request headers: never let the token through.
        message = _mask(f"{type(error).__name__}: {error}", resolved)
        raise PushError(f"Push to {repo_id} ({repo_type}) failed: {message}") from None
    url = getattr(commit, "commit_url", None) or (str(commit) if commit is not None else None)
    return PushResult(
        repo_id=repo_id, repo_type=repo_type, files=files, url=_mask(url, resolved) if url else None
    )


__all__ = [
    "REPO_TYPES",
    "ImageProcessorSpec",
    "PushError",
    "PushResult",
    "push",
    "resolve_token",
    "stage_metric",
    "stage_model",
]
