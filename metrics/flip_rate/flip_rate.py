# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""`evaluate` module: ImageNet-P flip probability and top-5 distance; the computation is
`hf_vitrobust.metrics.flip_rate`."""

import datasets
import evaluate

from hf_vitrobust.metrics import flip_rates

_DESCRIPTION = """Prediction stability on ImageNet-P (Hendrycks & Dietterich, ICLR 2019): flip probability and top-5
distance (T5D) per perturbation, following the reference `ImageNet-P/test.py` (noise sequences compare each frame
with the first; others compare frames `difficulty` apart), and their means over the 10 test perturbations.
The means are NOT normalised by AlexNet (no citable source of AlexNet's per-perturbation values was found); pass
`baseline_flip_probability` / `baseline_top5_distance` to normalise."""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list[list[list[int]]]`): per sequence, per frame, the top-5 class indices (best first); a list of
        one index per frame (top-1 only) gives flip probabilities without T5D.
    perturbations (`list[str]`): ImageNet-P perturbation name per sequence.
    difficulties (`list[int]`): difficulty 1..3 per sequence, one value for the whole computation.
    allow_partial (`bool`, default False): average the test perturbations present instead of raising.
    baseline_flip_probability, baseline_top5_distance (`dict[str, float]`, optional): a baseline model's values.
Returns:
    difficulty, flip_probability and top5_distance (per perturbation), mfr_unnormalized, mt5d_unnormalized,
    validation_mfr_unnormalized, validation_mt5d_unnormalized, num_sequences, mfr, mt5d (percent of the baseline,
    None without one), missing_perturbations.
"""

_CITATION = """@inproceedings{hendrycks2019benchmarking,
  title={Benchmarking Neural Network Robustness to Common Corruptions and Perturbations},
  author={Hendrycks, Dan and Dietterich, Thomas},
  booktitle={International Conference on Learning Representations},
  year={2019}
}"""


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
    ):
        # Top-1 input: one index per frame -> (frames, 1).
        sequences = [
            [frame if isinstance(frame, list) else [frame] for frame in sequence] for sequence in predictions
        ]
        return flip_rates(
            sequences,
            perturbations,
            difficulties,
            allow_partial=allow_partial,
            baseline_flip_probability=baseline_flip_probability,
            baseline_top5_distance=baseline_top5_distance,
        ).to_dict()
