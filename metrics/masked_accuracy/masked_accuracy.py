# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""`evaluate` module: top-1 / top-5 accuracy within a class mask (ImageNet-A/-R); the computation is
`hf_vitrobust.metrics.masked_accuracy`, the confidence intervals `hf_vitrobust.metrics.intervals`."""

import datasets
import evaluate
import numpy as np

from hf_vitrobust.metrics import masked_accuracy, masked_topk_predictions
from hf_vitrobust.metrics.intervals import (
    DEFAULT_NUM_RESAMPLES,
    check_interval_options,
    proportion_interval,
)

_DESCRIPTION = """Top-1 and top-5 accuracy with the logits cut to a class subset before ranking: the ImageNet-A
(Hendrycks et al., CVPR 2021) and ImageNet-R (Hendrycks et al., ICCV 2021) protocol, whose 1000-class logits are
restricted to the dataset's 200 classes. References are ImageNet-1k indices and must lie in the mask. On
request, Wilson (or Clopper-Pearson) confidence intervals of both accuracies."""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list[list[float]]`): logits (or any scores) over all classes, per sample.
    references (`list[int]`): true ImageNet-1k class index per sample.
    class_indices (`list[int]`): the class mask (e.g. the 200 ImageNet-A classes as ImageNet-1k indices).
    confidence_level (`float`, optional): e.g. 0.95: add "top1_interval" and "top5_interval"; None
        (default): none.
    num_resamples (`int`, default 1000), seed (`int`, default 0): accepted so that every module takes the
        same options; no bootstrap here.
    interval_method (`str`, default "wilson"): "wilson" or "clopper-pearson" (exact).
Returns:
    top1, top5 (fractions; top5 None for a mask under 5 classes), num_samples, num_classes. With
    `confidence_level`: top1_interval, top5_interval (`hf_vitrobust.metrics.intervals.Interval` dicts,
    fractions; top5_interval None where top5 is).
"""

_CITATION = """@inproceedings{hendrycks2021nae,
  title={Natural Adversarial Examples},
  author={Hendrycks, Dan and Zhao, Kevin and Basart, Steven and Steinhardt, Jacob and Song, Dawn},
  booktitle={IEEE/CVF Conference on Computer Vision and Pattern Recognition (CVPR)},
  year={2021}
}
@inproceedings{hendrycks2021many,
  title={The Many Faces of Robustness: A Critical Analysis of Out-of-Distribution Generalization},
  author={Hendrycks, Dan and Basart, Steven and Mu, Norman and Kadavath, Saurav and Wang, Frank and Dorundo, Evan
    and Desai, Rahul and Zhu, Tyler and Parajuli, Samyak and Guo, Mike and Song, Dawn and Steinhardt, Jacob
    and Gilmer, Justin},
  booktitle={IEEE/CVF International Conference on Computer Vision (ICCV)},
  year={2021}
}"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class MaskedAccuracy(evaluate.Metric):
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
            reference_urls=[
                "https://github.com/hendrycks/natural-adv-examples",
                "https://github.com/hendrycks/imagenet-r",
            ],
        )

    def _compute(
        self,
        predictions,
        references,
        class_indices=None,
        confidence_level=None,
        num_resamples=DEFAULT_NUM_RESAMPLES,
        seed=0,
        interval_method="wilson",
    ):
        level = check_interval_options(confidence_level, num_resamples, seed, interval_method)
        if class_indices is None:
            raise ValueError(
                "`class_indices` (the class mask) is required: compute(..., class_indices=[...])."
            )
        result = masked_accuracy(predictions, references, class_indices).to_dict()
        if level is None:
            return result
        top = masked_topk_predictions(predictions, class_indices, 5)
        hits = top == np.asarray(references, dtype=np.int64)[:, None]
        n = len(hits)

        def interval(successes):
            return proportion_interval(int(successes), n, level, interval_method).to_dict()

        return {
            **result,
            "top1_interval": interval(hits[:, 0].sum()),
            "top5_interval": None if result["top5"] is None else interval(hits.any(axis=1).sum()),
        }
