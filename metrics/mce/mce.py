# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""`evaluate` module: mean corruption error on ImageNet-C; the computation is `hf_vitrobust.metrics.mce`."""

import datasets
import evaluate

from hf_vitrobust.metrics import mean_corruption_error

_DESCRIPTION = """AlexNet-normalised mean corruption error (mCE) and relative mCE on ImageNet-C (Hendrycks & Dietterich,
ICLR 2019), the per-corruption errors, the unnormalised mCE and the mean accuracy over the 15 x 5 cells (Park & Kim,
ICLR 2022). All outputs are in percent."""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list[int]`): predicted class index per sample.
    references (`list[int]`): true class index per sample.
    corruptions (`list[str]`): ImageNet-C corruption name per sample (e.g. "gaussian_noise").
    severities (`list[int]`): severity 1..5 per sample.
    clean_error (`float`, optional): the model's clean top-1 error, a fraction; enables `relative_mce`.
    clean_predictions, clean_references (`list[int]`, optional): clean predictions instead of `clean_error`.
    allow_partial (`bool`, default False): compute over the cells present instead of raising on missing cells.
Returns:
    mce, relative_mce, unnormalized_mce, mean_corruption_accuracy, clean_error (percent), ce, relative_ce, extra_ce
    (per corruption), errors (per corruption and severity), num_samples, missing_cells, complete,
    unnormalized_mce_all (ImageNet-C/test.py's printed mean over every corruption present, extras included) and
    unnormalized_corruptions (the corruptions it covers).
Examples:
    >>> mce = evaluate.load("metrics/mce")
    >>> mce.add_batch(predictions=[1, 2], references=[1, 3], corruptions=["fog", "fog"], severities=[1, 1])
    >>> round(mce.compute(allow_partial=True)["ce"]["fog"], 4)  # 100 * 0.5 / 0.67474 (AlexNet's fog/1 error)
    74.1026
"""

_CITATION = """@inproceedings{hendrycks2019benchmarking,
  title={Benchmarking Neural Network Robustness to Common Corruptions and Perturbations},
  author={Hendrycks, Dan and Dietterich, Thomas},
  booktitle={International Conference on Learning Representations},
  year={2019}
}"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class MeanCorruptionError(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {
                    "predictions": datasets.Value("int64"),
                    "references": datasets.Value("int64"),
                    "corruptions": datasets.Value("string"),
                    "severities": datasets.Value("int64"),
                }
            ),
            reference_urls=["https://github.com/hendrycks/robustness"],
        )

    def _compute(
        self,
        predictions,
        references,
        corruptions,
        severities,
        clean_error=None,
        clean_predictions=None,
        clean_references=None,
        allow_partial=False,
    ):
        return mean_corruption_error(
            predictions,
            references,
            corruptions,
            severities,
            clean_error=clean_error,
            clean_predictions=clean_predictions,
            clean_references=clean_references,
            allow_partial=allow_partial,
        ).to_dict()
