# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""`evaluate` module: mean and standard deviation of a loss per attack step; the computation is
`hf_vitrobust.metrics.loss_progression`."""

import datasets
import evaluate

from hf_vitrobust.metrics.loss_progression import loss_progression

_DESCRIPTION = """The progression of a loss along an iterative attack: (step, loss) records, one per image and
step, become the mean and the standard deviation of the loss at each step. Paul & Chen (AAAI 2022) plot this for
the cross-entropy of 100 correctly classified ImageNet images under a 10-step L-inf attack: a ViT's loss rises
more slowly than a CNN's. `hf_vitrobust.probes.pgd_loss_progression` produces such records."""

_KWARGS_DESCRIPTION = """
Args:
    steps (`list[int]`): the attack step of each record (non-negative).
    losses (`list[float]`): the loss of each record (finite).
Returns:
    steps (the distinct steps, increasing), loss_mean, loss_std (population standard deviation) and counts
    (records per step), one entry per step.
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

    def _compute(self, steps, losses):
        return loss_progression(steps, losses).to_dict()
