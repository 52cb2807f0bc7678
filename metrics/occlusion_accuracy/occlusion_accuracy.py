# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""`evaluate` module: accuracy and mean confidence per Cutout masking ratio (Paul & Chen, AAAI 2022); the
computation is `hf_vitrobust.metrics.occlusion_accuracy`, the confidence intervals
`hf_vitrobust.metrics.intervals`."""

import datasets
import evaluate
import numpy as np

from hf_vitrobust.metrics.intervals import (
    DEFAULT_NUM_RESAMPLES,
    UNIT_RANGE,
    check_interval_options,
    proportion_interval_dicts,
)
from hf_vitrobust.metrics.mean_intervals import mean_interval_dicts
from hf_vitrobust.metrics.occlusion_accuracy import occlusion_accuracy

_DESCRIPTION = """The occlusion curve of Paul & Chen ("Vision Transformers are Robust Learners", AAAI 2022): one
black square hole covering a fraction r of each image (Cutout), and per r the top-1 accuracy and the mean confidence
of the predictions. One record per image and ratio; r = 0 is the clean image. On request, per-ratio confidence
intervals: Wilson (or Clopper-Pearson) for the accuracy, Student-t for the mean confidence."""

_KWARGS_DESCRIPTION = """
Args:
    ratios (`list[float]`): masked fraction of the image area, in [0, 1], per record.
    correct (`list[bool]`): whether the top-1 prediction was right, per record.
    confidences (`list[float]`): a probability in [0, 1] per record (hf_vitrobust records the maximum softmax
        probability).
    confidence_level (`float`, optional): e.g. 0.95: add "accuracy_interval" and
        "mean_confidence_interval"; None (default):
        none.
    num_resamples (`int`, default 1000), seed (`int`, default 0): accepted so that every module takes the same
        options; no bootstrap here.
    interval_method (`str`, default "wilson"): the accuracies' interval, "wilson" or "clopper-pearson".
Returns:
    ratios (ascending), accuracy and mean_confidence per ratio (fractions), num_samples per ratio. With
    `confidence_level`: accuracy_interval and mean_confidence_interval, one
    `hf_vitrobust.metrics.intervals.Interval` dict per ratio (the images of a ratio treated as independent).
"""

_CITATION = """@inproceedings{paul2022vision,
  title={Vision Transformers are Robust Learners},
  author={Paul, Sayak and Chen, Pin-Yu},
  booktitle={Proceedings of the AAAI Conference on Artificial Intelligence},
  volume={36},
  number={2},
  pages={2071--2081},
  year={2022}
}"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class OcclusionAccuracy(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {
                    "ratios": datasets.Value("float64"),
                    "correct": datasets.Value("bool"),
                    "confidences": datasets.Value("float64"),
                }
            ),
            reference_urls=["https://github.com/sayakpaul/robustness-vit"],
        )

    def _compute(
        self,
        ratios,
        correct,
        confidences,
        confidence_level=None,
        num_resamples=DEFAULT_NUM_RESAMPLES,
        seed=0,
        interval_method="wilson",
    ):
        level = check_interval_options(confidence_level, num_resamples, seed, interval_method)
        result = occlusion_accuracy(ratios, correct, confidences).to_dict()
        if level is None:
            return result
        _, inverse, counts = np.unique(
            np.asarray(ratios, dtype=np.float64), return_inverse=True, return_counts=True
        )
        hits = np.bincount(inverse, weights=np.asarray(correct, dtype=np.float64), minlength=len(counts))
        confidence = np.asarray(confidences, dtype=np.float64)
        mean = np.asarray(result["mean_confidence"])
        squares = np.bincount(inverse, weights=(confidence - mean[inverse]) ** 2, minlength=len(counts))
        with np.errstate(divide="ignore", invalid="ignore"):
            std = np.sqrt(squares / (counts - 1))
        return {
            **result,
            "accuracy_interval": proportion_interval_dicts(hits, counts, level, interval_method),
            "mean_confidence_interval": mean_interval_dicts(mean, std, counts, level, support=UNIT_RANGE),
        }
