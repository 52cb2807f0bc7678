# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""RobustBench's ImageNet-C leaderboard columns against its published numbers and its eval.py formula."""

import numpy as np
import pytest

from hf_vitrobust.metrics.robustbench import (
    ROBUSTBENCH_3DCC_ALEXNET_ACCURACIES,
    ROBUSTBENCH_3DCC_CORRUPTIONS,
    ROBUSTBENCH_ALEXNET_ACCURACIES,
    ROBUSTBENCH_CORRUPTIONS,
    ROBUSTBENCH_SEVERITIES,
    robustbench_corruption_scores,
)

# RobustBench's own rows of model_info/imagenet/corruptions/unaggregated_results.csv (commit 78fcc9e4), copied
# here by hand so the shipped CSV is checked against the source, not against itself.
ALEXNET_ROW = {
    "shot_noise": (0.2944, 0.1598, 0.0726, 0.0196, 0.012),
    "motion_blur": (0.4174, 0.295, 0.1794, 0.1022, 0.0698),
}
STANDARD_R50_ROW = {
    "shot_noise": (0.5828, 0.4486, 0.2856, 0.1026, 0.0352),
    "motion_blur": (0.636, 0.5342, 0.3754, 0.2158, 0.1452),
    "snow": (0.5468, 0.312, 0.3494, 0.2344, 0.165),
    "pixelate": (0.638, 0.6434, 0.4598, 0.293, 0.2088),
    "gaussian_noise": (0.602, 0.4878, 0.3124, 0.1422, 0.0288),
    "defocus_blur": (0.5914, 0.5154, 0.3808, 0.2752, 0.1824),
    "brightness": (0.736, 0.7222, 0.6958, 0.6496, 0.5886),
    "fog": (0.6092, 0.56, 0.4674, 0.4024, 0.236),
    "zoom_blur": (0.5258, 0.4302, 0.356, 0.2844, 0.2194),
    "frost": (0.6106, 0.4366, 0.3064, 0.2864, 0.2258),
    "glass_blur": (0.5362, 0.3974, 0.1708, 0.1306, 0.1034),
    "impulse_noise": (0.4854, 0.3862, 0.2904, 0.113, 0.0244),
    "contrast": (0.6428, 0.5824, 0.466, 0.2098, 0.0542),
    "jpeg_compression": (0.6644, 0.6234, 0.6004, 0.4786, 0.3254),
    "elastic_transform": (0.6684, 0.4514, 0.5456, 0.4122, 0.1702),
}


def _cells(row):
    return {(c, s): row[c][s - 1] for c in row for s in ROBUSTBENCH_SEVERITIES}


def test_shipped_alexnet_numbers_are_robustbench_order_and_rows():
    # robustbench.data.CORRUPTIONS, in its order.
    assert tuple(STANDARD_R50_ROW) == ROBUSTBENCH_CORRUPTIONS
    for name, row in ALEXNET_ROW.items():
        assert ROBUSTBENCH_ALEXNET_ACCURACIES[name] == row


@pytest.mark.parametrize(
    "row, published_acc, published_mce",
    [
        # model_info/imagenet/corruptions/AlexNet.json and Standard_R50.json: corruptions_acc, corruptions_mce.
        (ROBUSTBENCH_ALEXNET_ACCURACIES, 21.12, 100.0),
        (STANDARD_R50_ROW, 39.48, 76.38),
    ],
)
def test_leaderboard_columns_match_robustbench_published_numbers(row, published_acc, published_mce):
    scores = robustbench_corruption_scores(_cells(row))
    assert scores["corruptions_acc"] == pytest.approx(published_acc, abs=0.005)
    assert scores["corruptions_mce"] == pytest.approx(published_mce, abs=0.005)


def test_constructed_run_against_eval_py_loop():
    rng = np.random.default_rng(0)
    model = {c: tuple(rng.uniform(0.05, 0.9, 5)) for c in ROBUSTBENCH_CORRUPTIONS}
    # eval.py's corruptions_evaluation, written again: per corruption, per-severity error over AlexNet's mean
    # error, averaged over severities; then averaged over the 15 corruptions.
    mce = 0.0
    for c in ROBUSTBENCH_CORRUPTIONS:
        alexnet_mean_error = sum(1 - a for a in ROBUSTBENCH_ALEXNET_ACCURACIES[c]) / 5
        mce += sum((1 - m) / alexnet_mean_error for m in model[c]) / 5 / 15
    accuracy = sum(sum(v) for v in model.values()) / 75
    scores = robustbench_corruption_scores(_cells(model))
    assert scores["corruptions_mce"] == pytest.approx(100 * mce, rel=1e-12)
    assert scores["corruptions_acc"] == pytest.approx(100 * accuracy, rel=1e-12)
    # A perfect model has no error at all.
    perfect = robustbench_corruption_scores({k: 1.0 for k in _cells(model)})
    assert perfect == {"corruptions_acc": 100.0, "corruptions_mce": 0.0}


def test_partial_or_foreign_cells_are_refused():
    cells = _cells(STANDARD_R50_ROW)
    del cells[("fog", 3)]
    with pytest.raises(ValueError, match=r"missing 1 cells \[\('fog', 3\)\]"):
        robustbench_corruption_scores(cells)
    cells = {**_cells(STANDARD_R50_ROW), ("speckle_noise", 1): 0.5}
    with pytest.raises(ValueError, match="speckle_noise"):
        robustbench_corruption_scores(cells)
    with pytest.raises(ValueError, match="fractions"):
        robustbench_corruption_scores({k: 100 * v for k, v in _cells(STANDARD_R50_ROW).items()})


# RobustBench's ImageNet-3DCC rows of model_info/imagenet/corruptions/unaggregated_results_3d.csv (commit 78fcc9e4),
# copied here by hand: two cells of its AlexNet row and the whole Standard_R50 row, in its CORRUPTIONS_3DCC order.
ALEXNET_3DCC_ROW = {
    "near_focus": (0.4616, 0.4192, 0.3822, 0.3554, 0.3282),
    "z_motion_blur": (0.2792, 0.2308, 0.193, 0.166, 0.1516),
}
STANDARD_R50_3DCC_ROW = {
    "near_focus": (0.667, 0.6298, 0.5892, 0.559, 0.523),
    "far_focus": (0.6708, 0.6064, 0.5372, 0.4888, 0.4456),
    "bit_error": (0.6338, 0.5696, 0.4886, 0.4026, 0.2476),
    "color_quant": (0.73, 0.7176, 0.6776, 0.5074, 0.1854),
    "flash": (0.4924, 0.4532, 0.3976, 0.3312, 0.2196),
    "fog_3d": (0.6542, 0.5176, 0.4016, 0.3128, 0.2526),
    "h265_abr": (0.7064, 0.6964, 0.6464, 0.514, 0.5216),
    "h265_crf": (0.7078, 0.7064, 0.6888, 0.655, 0.6248),
    "iso_noise": (0.406, 0.37, 0.2896, 0.19, 0.0804),
    "low_light": (0.555, 0.519, 0.4644, 0.399, 0.2828),
    "xy_motion_blur": (0.5112, 0.3934, 0.2972, 0.2292, 0.179),
    "z_motion_blur": (0.476, 0.3978, 0.328, 0.276, 0.2492),
}


def test_shipped_3dcc_alexnet_numbers_are_robustbench_order_and_rows():
    assert tuple(STANDARD_R50_3DCC_ROW) == ROBUSTBENCH_3DCC_CORRUPTIONS
    for name, row in ALEXNET_3DCC_ROW.items():
        assert ROBUSTBENCH_3DCC_ALEXNET_ACCURACIES[name] == row


@pytest.mark.parametrize(
    "row, published_acc, published_mce",
    [
        # model_info/imagenet/corruptions/AlexNet.json and Standard_R50.json: corruptions_acc_3d, corruptions_mce_3d.
        (ROBUSTBENCH_3DCC_ALEXNET_ACCURACIES, 28.47, 100.0),
        (STANDARD_R50_3DCC_ROW, 47.12, 73.16),
    ],
)
def test_3dcc_leaderboard_columns_match_robustbench_published_numbers(row, published_acc, published_mce):
    scores = robustbench_corruption_scores(_cells(row), alexnet=ROBUSTBENCH_3DCC_ALEXNET_ACCURACIES)
    assert scores["corruptions_acc"] == pytest.approx(published_acc, abs=0.005)
    assert scores["corruptions_mce"] == pytest.approx(published_mce, abs=0.005)
    with pytest.raises(ValueError, match="its 12 corruptions"):  # ImageNet-C's cells are not 3DCC's
        robustbench_corruption_scores(_cells(STANDARD_R50_ROW), alexnet=ROBUSTBENCH_3DCC_ALEXNET_ACCURACIES)


def test_the_interval_estimators_resample_the_leaderboard_formulas_over_clean_images():
    """robustbench_estimators' statistics on the whole table are robustbench_corruption_scores of its cell
    accuracies; the table must hold every cell; the mCE's bootstrap covers its value."""
    from hf_vitrobust.metrics.cell_tables import cell_table
    from hf_vitrobust.metrics.corruption_cells import _corruption_cell, corruption_cell_labels
    from hf_vitrobust.metrics.robustbench import robustbench_estimators

    rng = np.random.default_rng(1)
    images, cells = 40, [(c, s) for c in ROBUSTBENCH_CORRUPTIONS for s in range(1, 6)]
    wrong = rng.random((images, len(cells))) < np.linspace(0.1, 0.9, len(cells))  # per image, per cell
    corruptions = [c for _ in range(images) for c, _ in cells]
    severities = np.array([s for _ in range(images) for _, s in cells])
    keys = [f"img{i}" for i in range(images) for _ in cells]
    ids = [f"{c}/{s}/img{i}" for i in range(images) for c, s in cells]
    labels = corruption_cell_labels(corruptions, severities)
    table = cell_table(wrong.reshape(-1).astype(np.float64), labels, ids, keys, _corruption_cell)
    estimators = robustbench_estimators(table)
    accuracies = {cell: 1.0 - wrong[:, k].mean() for k, cell in enumerate(cells)}
    scores = robustbench_corruption_scores(accuracies)
    for name in ("corruptions_acc", "corruptions_mce"):
        assert estimators[name].estimate == pytest.approx(scores[name], rel=1e-12)
    interval = estimators["corruptions_mce"].interval(0.95, num_resamples=200, seed=0)
    assert interval.low < scores["corruptions_mce"] < interval.high and interval.unit == "clean image"
    partial = [k for k, (c, s) in enumerate(cells) if (c, s) != ("fog", 3)]
    keep = np.isin(np.arange(len(ids)) % len(cells), partial)
    table = cell_table(
        wrong.reshape(-1)[keep].astype(np.float64),
        labels[keep],
        list(np.asarray(ids)[keep]),
        list(np.asarray(keys)[keep]),
        _corruption_cell,
    )
    assert robustbench_estimators(table) == {}
