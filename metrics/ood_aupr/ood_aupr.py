# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""`evaluate` module: OOD detection (ImageNet-O AUPR); the computation is `hf_vitrobust.metrics.ood`, the
confidence interval `hf_vitrobust.metrics.estimators`."""

import dataclasses

import datasets
import evaluate

from hf_vitrobust.metrics import ood_detection_metrics
from hf_vitrobust.metrics.estimators import aupr_estimator
from hf_vitrobust.metrics.intervals import (
    DEFAULT_NUM_RESAMPLES,
    check_interval_options,
)

_DESCRIPTION = """Out-of-distribution detection from anomaly scores (higher = more anomalous), with the OOD samples as
the positive class: AUPR (scikit-learn average precision; the ImageNet-O headline number of Hendrycks et al., CVPR
2021), AUROC and the false positive rate at 95 % true positive rate. For ImageNet-O the score is the negative
maximum softmax over its 200-class mask: `hf_vitrobust.metrics.ood_scores_from_logits(logits, class_indices)`.
On request, a stratified percentile-bootstrap confidence interval of the AUPR."""

_KWARGS_DESCRIPTION = """
Args:
    scores (`list[float]`): anomaly score per sample, higher = more anomalous.
    is_ood (`list[bool]`): True for an out-of-distribution sample.
    confidence_level (`float`, optional): e.g. 0.95: add "aupr_interval"; None (default): none.
    num_resamples (`int`, default 1000), seed (`int`, default 0): the percentile bootstrap's (OOD and
        in-distribution images resampled separately).
    interval_method (`str`, default "wilson"): the interval of proportions ("wilson" or "clopper-pearson");
        the AUPR is bootstrapped, so it changes nothing (every module takes the same options).
Returns:
    aupr, auroc, fpr_at_95_tpr (fractions), num_ood, num_in_distribution. With `confidence_level`:
    aupr_interval (an `hf_vitrobust.metrics.intervals.Interval` dict, a fraction like aupr).
Examples:
    >>> ood = evaluate.load("metrics/ood_aupr")
    >>> ood.compute(scores=[0.1, 0.4, 0.35, 0.8], is_ood=[False, False, True, True])["aupr"]
    0.8333333333333333
"""

_CITATION = """@inproceedings{hendrycks2021nae,
  title={Natural Adversarial Examples},
  author={Hendrycks, Dan and Zhao, Kevin and Basart, Steven and Steinhardt, Jacob and Song, Dawn},
  booktitle={IEEE/CVF Conference on Computer Vision and Pattern Recognition (CVPR)},
  year={2021}
}"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class OODAupr(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {"scores": datasets.Value("float64"), "is_ood": datasets.Value("bool")}
            ),
            reference_urls=["https://github.com/hendrycks/natural-adv-examples"],
        )

    def _compute(
        self,
        scores,
        is_ood,
        confidence_level=None,
        num_resamples=DEFAULT_NUM_RESAMPLES,
        seed=0,
        interval_method="wilson",
    ):
        level = check_interval_options(confidence_level, num_resamples, seed, interval_method)
        result = ood_detection_metrics(scores, is_ood).to_dict()
        if level is None:
            return result
        # The estimator's AUPR is in percent; scale 1 gives the module's fraction.
        estimator = dataclasses.replace(aupr_estimator(scores, is_ood), scale=1.0)
        interval = estimator.interval(level, num_resamples=int(num_resamples), seed=int(seed))
        return {**result, "aupr_interval": interval.to_dict()}
