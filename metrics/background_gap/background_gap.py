# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""`evaluate` module: ImageNet-9 accuracies and BG-gap; the computation is
`hf_vitrobust.metrics.background_gap`, the confidence intervals `hf_vitrobust.metrics.estimators`."""

import dataclasses

import datasets
import evaluate
import numpy as np

from hf_vitrobust.metrics import background_gap, imagenet_to_in9
from hf_vitrobust.metrics.estimators import background_gap_estimator
from hf_vitrobust.metrics.intervals import (
    DEFAULT_NUM_RESAMPLES,
    check_interval_options,
    proportion_interval,
)

_DESCRIPTION = """Background robustness on ImageNet-9 (Xiao et al., ICLR 2021): accuracy per test variation (original,
mixed_same, mixed_rand, only_fg, no_fg, ...) from top-1 predictions over all 1000 ImageNet classes mapped to the 9
superclasses (a class outside the 9 counts wrong), and BG-gap = accuracy(mixed_same) - accuracy(mixed_rand).
On request, confidence intervals: Wilson (or Clopper-Pearson) per variant, a percentile bootstrap of the
BG-gap."""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list[int]`): top-1 ImageNet-1k class index per sample (argmax over all 1000 classes).
    references (`list[int]`): true ImageNet-9 class index (0..8: dog, bird, vehicle, reptile, carnivore, insect,
        instrument, primate, fish).
    variants (`list[str]`): the test variation of each sample ("original", "mixed_same", "mixed_rand", ...).
    confidence_level (`float`, optional): e.g. 0.95: add "bg_gap_interval" and "accuracy_interval"; None
        (default): none.
    num_resamples (`int`, default 1000), seed (`int`, default 0): the BG-gap's percentile bootstrap.
    interval_method (`str`, default "wilson"): the accuracies' interval, "wilson" or "clopper-pearson".
    foreground_keys (`list[str]`, optional): the foreground image of each sample, in the order the samples
        were added: the BG-gap's bootstrap resamples foregrounds with both their backgrounds (paired). Without
        it the images are treated as independent (resampled within their variant) and the interval says so.
Returns:
    accuracy (per variant, fractions), bg_gap (None unless both mixed_same and mixed_rand are present), num_samples.
    With `confidence_level`: bg_gap_interval (None where bg_gap is) and accuracy_interval (per variant), as
    `hf_vitrobust.metrics.intervals.Interval` dicts, fractions like the values.
"""

_CITATION = """@inproceedings{xiao2021noise,
  title={Noise or Signal: The Role of Image Backgrounds in Object Recognition},
  author={Xiao, Kai Yuanqing and Engstrom, Logan and Ilyas, Andrew and Madry, Aleksander},
  booktitle={International Conference on Learning Representations},
  year={2021}
}"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class BackgroundGap(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {
                    "predictions": datasets.Value("int64"),
                    "references": datasets.Value("int64"),
                    "variants": datasets.Value("string"),
                }
            ),
            reference_urls=["https://github.com/MadryLab/backgrounds_challenge"],
        )

    def _compute(
        self,
        predictions,
        references,
        variants,
        confidence_level=None,
        num_resamples=DEFAULT_NUM_RESAMPLES,
        seed=0,
        interval_method="wilson",
        foreground_keys=None,
    ):
        level = check_interval_options(confidence_level, num_resamples, seed, interval_method)
        if foreground_keys is not None and (
            isinstance(foreground_keys, str) or len(foreground_keys) != len(predictions)
        ):
            raise ValueError(f"`foreground_keys` needs one key per sample ({len(predictions)}).")
        result = background_gap(predictions, references, variants).to_dict()
        if level is None:
            return result
        correct = imagenet_to_in9(predictions) == np.asarray(references, dtype=np.int64)
        names = np.asarray([str(name) for name in variants])
        accuracy = {
            name: proportion_interval(
                int(correct[names == name].sum()), int(count), level, interval_method
            ).to_dict()
            for name, count in result["num_samples"].items()
        }
        gap = None
        if result["bg_gap"] is not None:
            keys = None if foreground_keys is None else [str(key) for key in foreground_keys]
            # The estimator's BG-gap is in points; scale 1 gives the module's difference of fractions.
            estimator = background_gap_estimator(correct, names.tolist(), np.arange(len(names)), keys)
            gap = dataclasses.replace(estimator, scale=1.0).interval(
                level, num_resamples=int(num_resamples), seed=int(seed)
            )
        return {
            **result,
            "bg_gap_interval": None if gap is None else gap.to_dict(),
            "accuracy_interval": accuracy,
        }
