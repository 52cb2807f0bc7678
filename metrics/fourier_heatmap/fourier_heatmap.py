# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""`evaluate` module: the Fourier heat map (Yin et al., NeurIPS 2019) from per-image records; the computation is
`hf_vitrobust.metrics.fourier_heatmap.fourier_error_map`, which the `fourier_heatmap` probe also calls; the
confidence intervals are `hf_vitrobust.metrics.intervals`."""

import datasets
import evaluate
import numpy as np

from hf_vitrobust.metrics.fourier_heatmap import fourier_error_map
from hf_vitrobust.metrics.intervals import (
    DEFAULT_NUM_RESAMPLES,
    check_interval_options,
    proportion_interval_dicts,
)

_DESCRIPTION = """The Fourier heat map of Yin et al. (NeurIPS 2019, "A Fourier perspective on model robustness in
computer vision"), used by Paul & Chen (AAAI 2022) to compare ViTs and CNNs: the top-1 test error when
images are perturbed with the Fourier basis image of frequency (i, j), for each (i, j) of a centred window. Each
record is one perturbed image: its vertical and horizontal frequency and whether its prediction was correct. The
map is point symmetric (the basis of (-i, -j) is the basis of (i, j)), so records for one half of the window
suffice: cells without records are filled from their mirror. Run the perturbations with
`hf_vitrobust.probes.fourier_heatmap.fourier_heatmap`, or build them with
`hf_vitrobust.corruptions.fourier_basis.fourier_noise`. On request, per-cell Wilson (or Clopper-Pearson)
confidence intervals of the error."""

_KWARGS_DESCRIPTION = """
Args:
    frequency_i (`list[int]`): vertical frequency (cycles per image, may be negative) of each record's basis.
    frequency_j (`list[int]`): horizontal frequency of each record's basis.
    correct (`list[bool]`): whether the perturbed image's top-1 prediction was its label.
    window (`int`, optional): the side of the centred map (odd); default the smallest holding every record.
    mirror (`bool`, default True): fill cells without records from their mirror (-i, -j).
    confidence_level (`float`, optional): e.g. 0.95: add "error_map_interval"; None (default): none.
    num_resamples (`int`, default 1000), seed (`int`, default 0): accepted so that every module takes the same
        options; no bootstrap here.
    interval_method (`str`, default "wilson"): "wilson" or "clopper-pearson".
Returns:
    error_map (rows i = -K..K, columns j = -K..K; None for an undefined cell), num_samples, mirrored,
    frequencies, mean_error. With `confidence_level`: error_map_interval, one
    `hf_vitrobust.metrics.intervals.Interval` dict per cell of error_map (None where the cell is; a mirrored
    cell has its mirror's), the images of a cell treated as independent; mean_error gets none.
Examples:
    >>> heatmap = evaluate.load("metrics/fourier_heatmap")
    >>> heatmap.compute(frequency_i=[0, 0, 1, 1], frequency_j=[0, 0, 1, 1], correct=[True, False, True, True],
    ...                 window=3)["error_map"]
    [[0.0, None, None], [None, 0.5, None], [None, None, 0.0]]
"""

_CITATION = """@inproceedings{yin2019fourier,
  title={A Fourier Perspective on Model Robustness in Computer Vision},
  author={Yin, Dong and Gontijo Lopes, Raphael and Shlens, Jonathon and Cubuk, Ekin D. and Gilmer, Justin},
  booktitle={Advances in Neural Information Processing Systems (NeurIPS)},
  year={2019}
}
@inproceedings{paul2022vision,
  title={Vision Transformers are Robust Learners},
  author={Paul, Sayak and Chen, Pin-Yu},
  booktitle={AAAI Conference on Artificial Intelligence},
  year={2022}
}"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class FourierHeatmap(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {
                    "frequency_i": datasets.Value("int64"),
                    "frequency_j": datasets.Value("int64"),
                    "correct": datasets.Value("bool"),
                }
            ),
            reference_urls=[
                "https://arxiv.org/abs/1906.08988",
                "https://github.com/gatheluck/FourierHeatmap",
            ],
        )

    def _compute(
        self,
        frequency_i,
        frequency_j,
        correct,
        window=None,
        mirror=True,
        confidence_level=None,
        num_resamples=DEFAULT_NUM_RESAMPLES,
        seed=0,
        interval_method="wilson",
    ):
        level = check_interval_options(confidence_level, num_resamples, seed, interval_method)
        result = fourier_error_map(frequency_i, frequency_j, correct, window=window, mirror=mirror).to_dict()
        if level is None:
            return result
        side = len(result["frequencies"])
        half = (side - 1) // 2
        cells = (np.asarray(frequency_i, dtype=np.int64) + half) * side + np.asarray(frequency_j) + half
        wrong = 1.0 - np.asarray(correct, dtype=np.float64)
        counts = np.bincount(cells, minlength=side * side).reshape(side, side)
        misses = np.bincount(cells, weights=wrong, minlength=side * side).reshape(side, side)
        mirrored = np.asarray(
            result["mirrored"], dtype=bool
        )  # a mirrored cell shows (-i, -j): both axes reversed
        counts = np.where(mirrored, counts[::-1, ::-1], counts)
        misses = np.where(mirrored, misses[::-1, ::-1], misses)
        defined = counts > 0
        flat = iter(proportion_interval_dicts(misses[defined], counts[defined], level, interval_method))
        grid = [[next(flat) if cell else None for cell in row] for row in defined.tolist()]
        return {**result, "error_map_interval": grid}
