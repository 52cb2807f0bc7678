# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""`evaluate` module: calibration (ECE, MCE, NLL, Brier); the computation is
`hf_vitrobust.metrics.calibration`, the confidence intervals `hf_vitrobust.metrics.estimators`."""

import dataclasses

import datasets
import evaluate
import numpy as np

from hf_vitrobust.metrics import calibration_bins, calibration_metrics
from hf_vitrobust.metrics.calibration import softmax
from hf_vitrobust.metrics.estimators import ece_estimator
from hf_vitrobust.metrics.intervals import (
    DEFAULT_NUM_RESAMPLES,
    check_interval_options,
    proportion_interval,
)

_DESCRIPTION = """Calibration of a classifier from its class probabilities (or logits): expected calibration error
(ECE, equal-width confidence bins, 15 by default; Naeini et al. 2015, Guo et al. 2017), maximum calibration error over
the non-empty bins, negative log-likelihood, and the multi-class Brier score sum_k (p_k - y_k)^2 (range
[0, 2]). On request, confidence intervals of the ECE (percentile bootstrap over images) and of the accuracy
(Wilson or Clopper-Pearson)."""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list[list[float]]`): class probabilities per sample (or logits with `from_logits=True`).
    references (`list[int]`): true class index per sample.
    from_logits (`bool`, default False): apply a softmax to `predictions` first.
    num_bins (`int`, default 15): number of equal-width confidence bins.
    confidence_level (`float`, optional): e.g. 0.95: add "ece_interval" and "accuracy_interval"; None
        (default): none.
    num_resamples (`int`, default 1000), seed (`int`, default 0): the ECE's percentile bootstrap over
        images.
    interval_method (`str`, default "wilson"): the accuracy's interval, "wilson" or "clopper-pearson" (exact).
Returns:
    ece, max_calibration_error (fractions), nll (nats), brier, accuracy, num_samples, num_bins. With
    `confidence_level`: ece_interval and accuracy_interval (`hf_vitrobust.metrics.intervals.Interval` dicts,
    fractions like the values).
"""

_CITATION = """@inproceedings{guo2017calibration,
  title={On Calibration of Modern Neural Networks},
  author={Guo, Chuan and Pleiss, Geoff and Sun, Yu and Weinberger, Kilian Q.},
  booktitle={International Conference on Machine Learning},
  year={2017}
}
@article{brier1950verification,
  title={Verification of Forecasts Expressed in Terms of Probability},
  author={Brier, Glenn W.},
  journal={Monthly Weather Review},
  volume={78},
  number={1},
  pages={1--3},
  year={1950}
}"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Calibration(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {
                    "predictions": datasets.Sequence(datasets.Value("float64")),
                    "references": datasets.Value("int64"),
                }
            ),
        )

    def _compute(
        self,
        predictions,
        references,
        from_logits=False,
        num_bins=15,
        confidence_level=None,
        num_resamples=DEFAULT_NUM_RESAMPLES,
        seed=0,
        interval_method="wilson",
    ):
        level = check_interval_options(confidence_level, num_resamples, seed, interval_method)
        result = calibration_metrics(
            predictions, references, from_logits=from_logits, num_bins=num_bins
        ).to_dict()
        if level is None:
            return result
        scores = np.asarray(predictions, dtype=np.float64)
        probabilities = softmax(scores) if from_logits else scores
        confidence = probabilities.max(axis=1)
        correct = probabilities.argmax(axis=1) == np.asarray(references, dtype=np.int64)
        # The estimator's ECE is in percent; scale 1 gives the module's fraction.
        estimator = ece_estimator(confidence, correct, calibration_bins(confidence, num_bins))
        ece = dataclasses.replace(estimator, scale=1.0).interval(
            level, num_resamples=int(num_resamples), seed=int(seed)
        )
        accuracy = proportion_interval(int(correct.sum()), len(correct), level, interval_method)
        return {**result, "ece_interval": ece.to_dict(), "accuracy_interval": accuracy.to_dict()}
