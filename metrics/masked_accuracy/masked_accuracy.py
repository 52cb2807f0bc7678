# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""`evaluate` module: top-1 / top-5 accuracy within a class mask (ImageNet-A/-R); the computation is
`hf_vitrobust.metrics.masked_accuracy`."""

import datasets
import evaluate

from hf_vitrobust.metrics import masked_accuracy

_DESCRIPTION = """Top-1 and top-5 accuracy with the logits cut to a class subset before ranking: the ImageNet-A
(Hendrycks et al., CVPR 2021) and ImageNet-R (Hendrycks et al., ICCV 2021) protocol, whose 1000-class logits are
restricted to the dataset's 200 classes. References are ImageNet-1k indices and must lie in the mask."""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list[list[float]]`): logits (or any scores) over all classes, per sample.
    references (`list[int]`): true ImageNet-1k class index per sample.
    class_indices (`list[int]`): the class mask (e.g. the 200 ImageNet-A classes as ImageNet-1k indices).
Returns:
    top1, top5 (fractions; top5 None for a mask under 5 classes), num_samples, num_classes.
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

    def _compute(self, predictions, references, class_indices=None):
        if class_indices is None:
            raise ValueError(
                "`class_indices` (the class mask) is required: compute(..., class_indices=[...])."
            )
        return masked_accuracy(predictions, references, class_indices).to_dict()
