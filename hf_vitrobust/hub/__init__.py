# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Publishing to the Hugging Face Hub: model cards rendered from the `model_cards/` templates, staged upload folders
(a checkpoint with its robustness results, or a metric as a self-contained `evaluate` Space), and the upload.

Stage first, then push: `stage_model(stage, checkpoint, results)` / `stage_metric(stage, name)` write exactly what
`push(stage, repo_id)` uploads, so a dry run shows it file by file. (`hf_vitrobust.hub.space.stage_space` stages
the Gradio demo Space; `stage_predictions` / `push_predictions` a run's per-sample predictions as a dataset repo;
`read_leaderboard` reads the numbers back from the Hub, from pushed results and from folders, ranked by protocol;
`eval_result_files` gives the `.eval_results/*.yaml` entries `stage_model` writes beside the card's model-index;
`build_job_spec` / `submit_job` run an evaluation on HF Jobs and push what it made.)
Where each goes and what it holds: docs/publishing.md.
"""

from .card_results import eval_results
from .cards import render_model_card
from .eval_results import eval_result_files, write_eval_results
from .jobs import JobSpec, build_job_spec
from .jobs import submit as submit_job
from .leaderboard import Leaderboard, read_leaderboard
from .model_repo import ImageProcessorSpec, StagingError
from .predictions_dataset import push_predictions, split_name, stage_predictions
from .push import PushError, PushResult, push, resolve_token
from .space import build_wheel, stage_space
from .staging import bundle_metric_code, stage_metric, stage_model, staged_files

__all__ = [
    "ImageProcessorSpec",
    "JobSpec",
    "Leaderboard",
    "PushError",
    "PushResult",
    "StagingError",
    "build_job_spec",
    "build_wheel",
    "bundle_metric_code",
    "eval_result_files",
    "eval_results",
    "push",
    "push_predictions",
    "read_leaderboard",
    "render_model_card",
    "resolve_token",
    "split_name",
    "stage_metric",
    "stage_model",
    "stage_predictions",
    "stage_space",
    "staged_files",
    "submit_job",
    "write_eval_results",
]
