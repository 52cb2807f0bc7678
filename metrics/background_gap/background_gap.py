# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""`evaluate` module: ImageNet-9 accuracies and BG-gap; the computation is `hf_vitrobust.metrics.background_gap`."""

import datasets
import evaluate

from hf_vitrobust.metrics import background_gap

_DESCRIPTION = """Background robustness on ImageNet-9 (Xiao et al., ICLR 2021): accuracy per test variation (original,
mixed_same, mixed_rand, only_fg, no_fg, ...) from top-1 predictions over all 1000 ImageNet classes mapped to the 9
superclasses (a class outside the 9 counts wrong), and BG-gap = accuracy(mixed_same) - accuracy(mixed_rand)."""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list[int]`): top-1 ImageNet-1k class index per sample (argmax over all 1000 classes).
    references (`list[int]`): true ImageNet-9 class index (0..8: dog, bird, vehicle, reptile, carnivore, insect,
        instrument, primate, fish).
    variants (`list[str]`): the test variation of each sample ("original", "mixed_same", "mixed_rand", ...).
Returns:
    accuracy (per variant, fractions), bg_gap (None unless both mixed_same and mixed_rand are present), num_samples.
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

    def _compute(self, predictions, references, variants):
        return background_gap(predictions, references, variants).to_dict()
