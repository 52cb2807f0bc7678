# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""`evaluate` module: OOD detection (ImageNet-O AUPR); the computation is `hf_vitrobust.metrics.ood`."""

import datasets
import evaluate

from hf_vitrobust.metrics import ood_detection_metrics

_DESCRIPTION = """Out-of-distribution detection from anomaly scores (higher = more anomalous), with the OOD samples as
the positive class: AUPR (scikit-learn average precision; the ImageNet-O headline number of Hendrycks et al., CVPR
2021), AUROC and the false positive rate at 95 % true positive rate. For ImageNet-O the score is the negative
maximum softmax over its 200-class mask: `hf_vitrobust.metrics.ood_scores_from_logits(logits, class_indices)`."""

_KWARGS_DESCRIPTION = """
Args:
    scores (`list[float]`): anomaly score per sample, higher = more anomalous.
    is_ood (`list[bool]`): True for an out-of-distribution sample.
Returns:
    aupr, auroc, fpr_at_95_tpr (fractions), num_ood, num_in_distribution.
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

    def _compute(self, scores, is_ood):
        return ood_detection_metrics(scores, is_ood).to_dict()
