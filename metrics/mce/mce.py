# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""`evaluate` module: mean corruption error on ImageNet-C; the computation is `hf_vitrobust.metrics.mce`, the
confidence intervals `hf_vitrobust.metrics.estimators`."""

import dataclasses

import datasets
import evaluate
import numpy as np

from hf_vitrobust.metrics import mean_corruption_error
from hf_vitrobust.metrics.estimators import corruption_estimators
from hf_vitrobust.metrics.intervals import (
    DEFAULT_NUM_RESAMPLES,
    check_interval_options,
)

_DESCRIPTION = """AlexNet-normalised mean corruption error (mCE) and relative mCE on ImageNet-C (Hendrycks & Dietterich,
ICLR 2019), the per-corruption errors, the unnormalised mCE and the mean accuracy over the 15 x 5 cells (Park & Kim,
ICLR 2022). All outputs are in percent. On request, percentile-bootstrap confidence intervals of the
headlines."""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list[int]`): predicted class index per sample.
    references (`list[int]`): true class index per sample.
    corruptions (`list[str]`): ImageNet-C corruption name per sample (e.g. "gaussian_noise").
    severities (`list[int]`): severity 1..5 per sample.
    clean_error (`float`, optional): the model's clean top-1 error, a fraction; enables `relative_mce`.
    clean_predictions, clean_references (`list[int]`, optional): clean predictions instead of `clean_error`.
    allow_partial (`bool`, default False): compute over the cells present instead of raising on missing cells.
    confidence_level (`float`, optional): e.g. 0.95: add a "<headline>_interval" per headline; None (default):
        none.
    num_resamples (`int`, default 1000), seed (`int`, default 0): the percentile bootstrap's.
    interval_method (`str`, default "wilson"): the interval of proportions ("wilson" or "clopper-pearson");
        the headlines here are bootstrapped, so it changes nothing (every module takes the same options).
    clean_keys (`list[str]`, optional): the clean image of each sample, in the order the samples were added:
        the cluster bootstrap resamples clean images with all their corruptions and severities. Without it the
        samples are treated as independent (resampled within their cell) and each interval's note says so.
    clean_prediction_keys (`list[str]`, optional): the clean image of each of `clean_predictions`, the same
        images as `clean_keys` (each once); with both, `relative_mce` gets its interval.
Returns:
    mce, relative_mce, unnormalized_mce, mean_corruption_accuracy, clean_error (percent), ce, relative_ce, extra_ce
    (per corruption), errors (per corruption and severity), num_samples, missing_cells, complete,
    unnormalized_mce_all (ImageNet-C/test.py's printed mean over every corruption present, extras included) and
    unnormalized_corruptions (the corruptions it covers). With `confidence_level`: mce_interval,
    relative_mce_interval, unnormalized_mce_interval, mean_corruption_accuracy_interval and
    unnormalized_mce_all_interval (`hf_vitrobust.metrics.intervals.Interval` dicts, in percent; None where the
    value is None or, for relative_mce, without `clean_keys` and `clean_prediction_keys`).
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


def _check_keys(keys, name, expected, expected_name):
    if keys is not None and (isinstance(keys, str) or len(keys) != expected):
        raise ValueError(f"`{name}` needs one key per entry of `{expected_name}` ({expected}).")


def _complement(interval):
    """100 minus a percent interval (an accuracy as an error, or the reverse)."""

    def complement(value):
        return None if value is None else 100.0 - value

    return dataclasses.replace(
        interval,
        estimate=complement(interval.estimate),
        low=complement(interval.high),
        high=complement(interval.low),
    )


def _headline_intervals(
    result, wrong, corruptions, severities, clean_keys, clean_wrong, clean_wrong_keys, options
):
    """The headlines' intervals (percent), bootstrapped over clean images (or over samples within cells)."""
    names = ("mce", "relative_mce", "unnormalized_mce", "mean_corruption_accuracy", "unnormalized_mce_all")
    if not len(wrong):
        return {f"{key}_interval": None for key in names}
    corruptions = [str(name) for name in corruptions]
    severities = np.asarray(severities, dtype=np.int64)
    keys = None if clean_keys is None else np.asarray([str(key) for key in clean_keys])
    ids = np.arange(len(wrong))
    clean = {}
    if clean_wrong is not None:
        clean = {"clean_wrong": clean_wrong, "clean_wrong_keys": [str(key) for key in clean_wrong_keys]}
    estimators = corruption_estimators(wrong, corruptions, severities, ids, keys, **clean)
    standard = np.isin(corruptions, list(result["ce"]))  # the standard corruptions present
    if standard.all() and "mean_top1" in estimators:
        estimators["mean_corruption_accuracy"] = estimators["mean_top1"]
    elif standard.any():  # Park & Kim's mean accuracy weighs the standard cells only
        subset = corruption_estimators(
            wrong[standard],
            [name for name, kept in zip(corruptions, standard, strict=True) if kept],
            severities[standard],
            ids[standard],
            None if keys is None else keys[standard],
        )
        estimators["mean_corruption_accuracy"] = subset["mean_top1"]
    intervals = {
        key: estimators[key].interval(**options)
        for key in ("mce", "relative_mce", "mean_corruption_accuracy", "unnormalized_mce_all")
        if result[key] is not None and key in estimators
    }
    if "mean_corruption_accuracy" in intervals:
        intervals["unnormalized_mce"] = _complement(intervals["mean_corruption_accuracy"])
    return {f"{key}_interval": intervals[key].to_dict() if key in intervals else None for key in names}


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
        confidence_level=None,
        num_resamples=DEFAULT_NUM_RESAMPLES,
        seed=0,
        interval_method="wilson",
        clean_keys=None,
        clean_prediction_keys=None,
    ):
        level = check_interval_options(confidence_level, num_resamples, seed, interval_method)
        _check_keys(clean_keys, "clean_keys", len(predictions), "predictions")
        if clean_prediction_keys is not None:
            if clean_predictions is None or clean_keys is None:
                raise ValueError("`clean_prediction_keys` needs `clean_predictions` and `clean_keys`.")
            _check_keys(
                clean_prediction_keys, "clean_prediction_keys", len(clean_predictions), "clean_predictions"
            )
            names = [str(key) for key in clean_prediction_keys]
            if len(set(names)) != len(names) or set(names) != {str(key) for key in clean_keys}:
                raise ValueError(
                    "`clean_prediction_keys` must name each clean image of `clean_keys` once, and no other."
                )
        result = mean_corruption_error(
            predictions,
            references,
            corruptions,
            severities,
            clean_error=clean_error,
            clean_predictions=clean_predictions,
            clean_references=clean_references,
            allow_partial=allow_partial,
        ).to_dict()
        if level is None:
            return result
        wrong = np.asarray(predictions) != np.asarray(references)
        clean_wrong = None
        if clean_prediction_keys is not None:
            clean_wrong = np.asarray(clean_predictions) != np.asarray(clean_references)
        intervals = _headline_intervals(
            result,
            wrong,
            corruptions,
            severities,
            clean_keys,
            clean_wrong,
            clean_prediction_keys,
            {"confidence_level": level, "num_resamples": int(num_resamples), "seed": int(seed)},
        )
        return {**result, **intervals}
