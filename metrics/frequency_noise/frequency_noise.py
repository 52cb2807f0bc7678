# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""`evaluate` module: accuracy per band of band-passed noise and its drop from the clean accuracy (Park & Kim, ICLR
2022, Fig. 2b); the computation is `hf_vitrobust.metrics.frequency_noise`."""

import datasets
import evaluate

from hf_vitrobust.metrics.frequency_noise import frequency_noise_accuracy

_DESCRIPTION = """Robustness for noise frequency (Park & Kim, "How Do Vision Transformers Work?", ICLR 2022, Fig. 2b):
random noise band-passed to a square annulus of frequencies around f (0.1 pi ... 0.9 pi) is added to each image;
per f, the top-1 accuracy and, given the clean accuracy, its drop. One record per image and band."""

_KWARGS_DESCRIPTION = """
Args:
    frequencies (`list[float]`): the band centre of the noise, in units of pi (in [0, 1]), per record.
    correct (`list[bool]`): whether the top-1 prediction under that noise was right, per record.
    clean_accuracy (`float`, optional, a `compute` argument): accuracy on the same images without noise.
Returns:
    frequencies (ascending), accuracy and num_samples per band, clean_accuracy, and accuracy_drop per band
    (clean_accuracy - accuracy; None without clean_accuracy).
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

    def _compute(self, frequencies, correct, clean_accuracy=None):
        return frequency_noise_accuracy(frequencies, correct, clean_accuracy=clean_accuracy).to_dict()
