# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""`evaluate` module: mean and standard deviation of a loss per attack step; the computation is
`hf_vitrobust.metrics.loss_progression`, the confidence intervals `hf_vitrobust.metrics.intervals`."""

import datasets
import evaluate
import numpy as np

from hf_vitrobust.metrics.intervals import (
    DEFAULT_NUM_RESAMPLES,
    check_interval_options,
)
from hf_vitrobust.metrics.loss_progression import loss_progression
from hf_vitrobust.metrics.mean_intervals import mean_interval_dicts

_DESCRIPTION = """The progression of a loss along an iterative attack: (step, loss) records, one per image and
step, become the mean and the standard deviation of the loss at each step. Paul & Chen (AAAI 2022) plot this for
the cross-entropy of 100 correctly classified ImageNet images under a 10-step L-inf attack: a ViT's loss rises
more slowly than a CNN's. `hf_vitrobust.probes.pgd_loss_progression` produces such records. On request,
per-step Student-t confidence intervals of the mean loss."""

_KWARGS_DESCRIPTION = """
Args:
    steps (`list[int]`): the attack step of each record (non-negative).
    losses (`list[float]`): the loss of each record (finite).
    confidence_level (`float`, optional): e.g. 0.95: add "loss_mean_interval"; None (default): none.
    num_resamples (`int`, default 1000), seed (`int`, default 0): accepted so that every module takes the same
        options; no bootstrap here.
    interval_method (`str`, default "wilson"): accepted so that every module takes the same options; the
        intervals here are Student-t.
Returns:
    steps (the distinct steps, increasing), loss_mean, loss_std (population standard deviation) and counts
    (records per step), one entry per step. With `confidence_level`: loss_mean_interval, one
    `hf_vitrobust.metrics.intervals.Interval` dict per step (mean -/+ t s / sqrt(n), s with ddof 1, the
    images of a step treated as independent; low and high None for a step of one record).
"""

_CITATION = """@inproceedings{paul2022vision,
  title={Vision Transformers are Robust Learners},
  author={Paul, Sayak and Chen, Pin-Yu},
  booktitle={Proceedings of the AAAI Conference on Artificial Intelligence},
  year={2022}
}"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class LossProgression(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {
                    "steps": datasets.Value("int64"),
                    "losses": datasets.Value("float64"),
                }
            ),
            reference_urls=["https://github.com/sayakpaul/robustness-vit/tree/master/analysis/pgd_attacks"],
        )

    def _compute(
        self,
        steps,
        losses,
        confidence_level=None,
        num_resamples=DEFAULT_NUM_RESAMPLES,
        seed=0,
        interval_method="wilson",
    ):
        level = check_interval_options(confidence_level, num_resamples, seed, interval_method)
        result = loss_progression(steps, losses).to_dict()
        if level is None:
            return result
        counts = np.asarray(result["counts"], dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):  # population -> sample standard deviation
            std = np.asarray(result["loss_std"]) * np.sqrt(counts / (counts - 1))
        return {**result, "loss_mean_interval": mean_interval_dicts(result["loss_mean"], std, counts, level)}
