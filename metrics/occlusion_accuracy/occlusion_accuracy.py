# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""`evaluate` module: accuracy and mean confidence per Cutout masking ratio (Paul & Chen, AAAI 2022); the
computation is `hf_vitrobust.metrics.occlusion_accuracy`."""

import datasets
import evaluate

from hf_vitrobust.metrics.occlusion_accuracy import occlusion_accuracy

_DESCRIPTION = """The occlusion curve of Paul & Chen ("Vision Transformers are Robust Learners", AAAI 2022): one
black square hole covering a fraction r of each image (Cutout), and per r the top-1 accuracy and the mean confidence
of the predictions. One record per image and ratio; r = 0 is the clean image."""

_KWARGS_DESCRIPTION = """
Args:
    ratios (`list[float]`): masked fraction of the image area, in [0, 1], per record.
    correct (`list[bool]`): whether the top-1 prediction was right, per record.
    confidences (`list[float]`): a probability in [0, 1] per record (hf_vitrobust records the maximum softmax
        probability).
Returns:
    ratios (ascending), accuracy and mean_confidence per ratio (fractions), num_samples per ratio.
"""

_CITATION = """@inproceedings{paul2022vision,
  title={Vision Transformers are Robust Learners},
  author={Paul, Sayak and Chen, Pin-Yu},
  booktitle={Proceedings of the AAAI Conference on Artificial Intelligence},
  volume={36},
  number={2},
  pages={2071--2081},
  year={2022}
}"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class OcclusionAccuracy(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {
                    "ratios": datasets.Value("float64"),
                    "correct": datasets.Value("bool"),
                    "confidences": datasets.Value("float64"),
                }
            ),
            reference_urls=["https://github.com/sayakpaul/robustness-vit"],
        )

    def _compute(self, ratios, correct, confidences):
        return occlusion_accuracy(ratios, correct, confidences).to_dict()
