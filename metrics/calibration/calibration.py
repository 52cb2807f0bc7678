# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""`evaluate` module: calibration (ECE, MCE, NLL, Brier); the computation is `hf_vitrobust.metrics.calibration`."""

import datasets
import evaluate

from hf_vitrobust.metrics import calibration_metrics

_DESCRIPTION = """Calibration of a classifier from its class probabilities (or logits): expected calibration error
(ECE, equal-width confidence bins, 15 by default; Naeini et al. 2015, Guo et al. 2017), maximum calibration error over
the non-empty bins, negative log-likelihood, and the multi-class Brier score sum_k (p_k - y_k)^2 (range [0, 2])."""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list[list[float]]`): class probabilities per sample (or logits with `from_logits=True`).
    references (`list[int]`): true class index per sample.
    from_logits (`bool`, default False): apply a softmax to `predictions` first.
    num_bins (`int`, default 15): number of equal-width confidence bins.
Returns:
    ece, max_calibration_error (fractions), nll (nats), brier, accuracy, num_samples, num_bins.
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

    def _compute(self, predictions, references, from_logits=False, num_bins=15):
        return calibration_metrics(
            predictions, references, from_logits=from_logits, num_bins=num_bins
        ).to_dict()
