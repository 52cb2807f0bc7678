# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""`evaluate` module: ImageNet-P flip probability and top-5 distance; the computation is
`hf_vitrobust.metrics.flip_rate`, the confidence intervals `hf_vitrobust.metrics.estimators`."""

import datasets
import evaluate
import numpy as np

from hf_vitrobust.metrics import flip_rates
from hf_vitrobust.metrics.estimators import flip_rate_estimator
from hf_vitrobust.metrics.flip_rate import per_sequence_stability
from hf_vitrobust.metrics.intervals import DEFAULT_NUM_RESAMPLES, check_interval_options

_DESCRIPTION = """Prediction stability on ImageNet-P (Hendrycks & Dietterich, ICLR 2019): flip probability and top-5
distance (T5D) per perturbation, following the reference `ImageNet-P/test.py` (noise sequences compare each frame
with the first; others compare frames `difficulty` apart), and their means over the 10 test perturbations.
The means are NOT normalised by AlexNet (no citable source of AlexNet's per-perturbation values was found); pass
`baseline_flip_probability` / `baseline_top5_distance` to normalise. On request, percentile-bootstrap
confidence intervals of the means."""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list[list[list[int]]]`): per sequence, per frame, the top-5 class indices (best first); a list of
        one index per frame (top-1 only) gives flip probabilities without T5D.
    perturbations (`list[str]`): ImageNet-P perturbation name per sequence.
    difficulties (`list[int]`): difficulty 1..3 per sequence, one value for the whole computation.
    allow_partial (`bool`, default False): average the test perturbations present instead of raising.
    baseline_flip_probability, baseline_top5_distance (`dict[str, float]`, optional): a baseline model's values.
    confidence_level (`float`, optional): e.g. 0.95: add a "<mean>_interval" per mean; None (default): none.
    num_resamples (`int`, default 1000), seed (`int`, default 0): the percentile bootstrap's.
    interval_method (`str`, default "wilson"): the interval of proportions ("wilson" or "clopper-pearson");
        the means here are bootstrapped, so it changes nothing (every module takes the same options).
    clean_keys (`list[str]`, optional): the clean image of each sequence, in the order the sequences were
        added: the cluster bootstrap resamples clean images with all their sequences. Without it the sequences
        are treated as independent (resampled within their perturbation) and each interval's note says so.
Returns:
    difficulty, flip_probability and top5_distance (per perturbation), mfr_unnormalized, mt5d_unnormalized,
    validation_mfr_unnormalized, validation_mt5d_unnormalized, num_sequences, mfr, mt5d (percent of the baseline,
    None without one), missing_perturbations. With `confidence_level`: mfr_unnormalized_interval,
    mt5d_unnormalized_interval, mfr_interval and mt5d_interval (`hf_vitrobust.metrics.intervals.Interval`
    dicts in the value's units; None where the value is None).
"""

_CITATION = """@inproceedings{hendrycks2019benchmarking,
  title={Benchmarking Neural Network Robustness to Common Corruptions and Perturbations},
  author={Hendrycks, Dan and Dietterich, Thomas},
  booktitle={International Conference on Learning Representations},
  year={2019}
}"""


def _mean_intervals(result, sequences, perturbations, clean_keys, baselines, options):
    """The intervals of the means over the test perturbations, bootstrapped over clean images (or over
    sequences within their perturbation), in the value's units (fractions, rank units, percent of the
    baseline)."""
    names = [str(name) for name in perturbations]
    flips, distances = per_sequence_stability(sequences, names, result["difficulty"])
    ids = np.arange(len(names))
    keys = None if clean_keys is None else [str(key) for key in clean_keys]

    def interval(values, key, baseline=None):
        if result[key] is None or values is None:
            return None
        if baseline is not None:  # 100 * value / baseline per sequence: the mean of the normalised values
            # (the mean covers the test perturbations only, which `flip_rates` checked the baseline has)
            values = values * np.asarray(
                [100.0 / baseline[name] if baseline.get(name) else 1.0 for name in names]
            )
        return flip_rate_estimator(values, names, ids, keys, scale=1.0).interval(**options).to_dict()

    flip_baseline, distance_baseline = baselines
    return {
        "mfr_unnormalized_interval": interval(flips, "mfr_unnormalized"),
        "mt5d_unnormalized_interval": interval(distances, "mt5d_unnormalized"),
        "mfr_interval": interval(flips, "mfr", flip_baseline),
        "mt5d_interval": interval(distances, "mt5d", distance_baseline),
    }


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class FlipRate(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=[
                datasets.Features(
                    {
                        "predictions": datasets.Sequence(datasets.Sequence(datasets.Value("int64"))),
                        "perturbations": datasets.Value("string"),
                        "difficulties": datasets.Value("int64"),
                    }
                ),
                datasets.Features(
                    {
                        "predictions": datasets.Sequence(datasets.Value("int64")),
                        "perturbations": datasets.Value("string"),
                        "difficulties": datasets.Value("int64"),
                    }
                ),
            ],
            reference_urls=["https://github.com/hendrycks/robustness/blob/master/ImageNet-P/test.py"],
        )

    def _compute(
        self,
        predictions,
        perturbations,
        difficulties,
        allow_partial=False,
        baseline_flip_probability=None,
        baseline_top5_distance=None,
        confidence_level=None,
        num_resamples=DEFAULT_NUM_RESAMPLES,
        seed=0,
        interval_method="wilson",
        clean_keys=None,
    ):
        level = check_interval_options(confidence_level, num_resamples, seed, interval_method)
        if clean_keys is not None and (isinstance(clean_keys, str) or len(clean_keys) != len(predictions)):
            raise ValueError(f"`clean_keys` needs one key per sequence ({len(predictions)}).")
        # Top-1 input: one index per frame -> (frames, 1).
        sequences = [
            [frame if isinstance(frame, list) else [frame] for frame in sequence] for sequence in predictions
        ]
        result = flip_rates(
            sequences,
            perturbations,
            difficulties,
            allow_partial=allow_partial,
            baseline_flip_probability=baseline_flip_probability,
            baseline_top5_distance=baseline_top5_distance,
        ).to_dict()
        if level is None:
            return result
        options = {"confidence_level": level, "num_resamples": int(num_resamples), "seed": int(seed)}
        baselines = (baseline_flip_probability, baseline_top5_distance)
        return {**result, **_mean_intervals(result, sequences, perturbations, clean_keys, baselines, options)}
