# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""`evaluate` module: accuracy per band of band-passed noise and its drop from the clean accuracy (Park & Kim, ICLR
2022, Fig. 2b); the computation is `hf_vitrobust.metrics.frequency_noise`, the confidence intervals
`hf_vitrobust.metrics.intervals`."""

import datasets
import evaluate
import numpy as np

from hf_vitrobust.metrics.frequency_noise import frequency_noise_accuracy
from hf_vitrobust.metrics.intervals import (
    DEFAULT_NUM_RESAMPLES,
    check_interval_options,
    proportion_interval_dicts,
)

_DESCRIPTION = """Robustness for noise frequency (Park & Kim, "How Do Vision Transformers Work?", ICLR 2022, Fig. 2b):
random noise band-passed to a square annulus of frequencies around f (0.1 pi ... 0.9 pi) is added to each image;
per f, the top-1 accuracy and, given the clean accuracy, its drop. One record per image and band. On request,
per-band Wilson (or Clopper-Pearson) confidence intervals of the accuracy."""

_KWARGS_DESCRIPTION = """
Args:
    frequencies (`list[float]`): the band centre of the noise, in units of pi (in [0, 1]), per record.
    correct (`list[bool]`): whether the top-1 prediction under that noise was right, per record.
    clean_accuracy (`float`, optional, a `compute` argument): accuracy on the same images without noise.
    confidence_level (`float`, optional): e.g. 0.95: add "accuracy_interval"; None (default): none.
    num_resamples (`int`, default 1000), seed (`int`, default 0): accepted so that every module takes the same
        options; no bootstrap here.
    interval_method (`str`, default "wilson"): "wilson" or "clopper-pearson".
Returns:
    frequencies (ascending), accuracy and num_samples per band, clean_accuracy, and accuracy_drop per band
    (clean_accuracy - accuracy; None without clean_accuracy). With `confidence_level`: accuracy_interval, one
    `hf_vitrobust.metrics.intervals.Interval` dict per band (the images of a band treated as independent); the
    drop gets none (clean_accuracy is a given number, not records).
"""

_CITATION = """@inproceedings{park2022how,
  title={How Do Vision Transformers Work?},
  author={Park, Namuk and Kim, Songkuk},
  booktitle={International Conference on Learning Representations},
  year={2022}
}"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class FrequencyNoise(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {"frequencies": datasets.Value("float64"), "correct": datasets.Value("bool")}
            ),
            reference_urls=["https://github.com/xxxnell/how-do-vits-work"],
        )

    def _compute(
        self,
        frequencies,
        correct,
        clean_accuracy=None,
        confidence_level=None,
        num_resamples=DEFAULT_NUM_RESAMPLES,
        seed=0,
        interval_method="wilson",
    ):
        level = check_interval_options(confidence_level, num_resamples, seed, interval_method)
        result = frequency_noise_accuracy(frequencies, correct, clean_accuracy=clean_accuracy).to_dict()
        if level is None:
            return result
        _, inverse, counts = np.unique(
            np.asarray(frequencies, dtype=np.float64), return_inverse=True, return_counts=True
        )
        hits = np.bincount(inverse, weights=np.asarray(correct, dtype=np.float64), minlength=len(counts))
        return {
            **result,
            "accuracy_interval": proportion_interval_dicts(hits, counts, level, interval_method),
        }
