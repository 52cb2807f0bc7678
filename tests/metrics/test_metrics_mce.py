"""mCE on ImageNet-C: the published AlexNet table, hand-computed values, partial data and input errors."""

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hf_vitrobust.metrics import (
    ALEXNET_CLEAN_ERROR,
    ALEXNET_CORRUPTION_ERRORS,
    EXTRA_CORRUPTIONS,
    SEVERITIES,
    STANDARD_CORRUPTIONS,
    corruption_error_from_cells,
    mean_corruption_error,
)
from hf_vitrobust.metrics.mce import ALEXNET_AVERAGE_ERRORS

TABLE = Path(__file__).resolve().parents[2] / "hf_vitrobust" / "metrics" / "alexnet_imagenet_c_errors.csv"


def _alexnet_cells(names=STANDARD_CORRUPTIONS + EXTRA_CORRUPTIONS):
    return {(name, s): ALEXNET_CORRUPTION_ERRORS[name][s - 1] for name in names for s in SEVERITIES}


def _samples(cell_wrong, per_cell=4):
    """Per-sample arrays with `cell_wrong[(name, s)]` wrong predictions out of `per_cell` in each cell."""
    predictions, references, corruptions, severities = [], [], [], []
    for (name, severity), wrong in cell_wrong.items():
        predictions += [1] * wrong + [0] * (per_cell - wrong)
        references += [0] * per_cell
        corruptions += [name] * per_cell
        severities += [severity] * per_cell
    return predictions, references, corruptions, severities


def test_table_is_the_published_one():
    rows = list(csv.DictReader(TABLE.open()))
    assert [row["corruption"] for row in rows[:15]] == list(STANDARD_CORRUPTIONS)
    assert {row["set"] for row in rows[15:]} == {"extra"} and len(rows) == 19
    assert EXTRA_CORRUPTIONS == ("speckle_noise", "gaussian_blur", "spatter", "saturate")
    # Spot values of the hendrycks/robustness README table (also in AugMix's imagenet.py).
    assert ALEXNET_CORRUPTION_ERRORS["gaussian_noise"] == (0.69528, 0.82542, 0.93554, 0.98138, 0.99452)
    assert ALEXNET_CORRUPTION_ERRORS["jpeg_compression"][4] == 0.74778
    assert ALEXNET_CORRUPTION_ERRORS["saturate"][2] == 0.51174
    for name, errors in ALEXNET_CORRUPTION_ERRORS.items():
        assert ALEXNET_AVERAGE_ERRORS[name] == pytest.approx(np.mean(errors), abs=5e-7), name


def test_names_match_the_corruptions_package():
    from hf_vitrobust import corruptions

    assert STANDARD_CORRUPTIONS == corruptions.STANDARD_CORRUPTIONS
    assert EXTRA_CORRUPTIONS == corruptions.EXTRA_CORRUPTIONS


def test_alexnet_scores_100():
    result = corruption_error_from_cells(_alexnet_cells(), clean_error=ALEXNET_CLEAN_ERROR)
    assert result.mce == pytest.approx(100.0, abs=1e-12)
    assert result.relative_mce == pytest.approx(100.0, abs=1e-12)
    assert all(value == pytest.approx(100.0) for value in result.ce.values())
    assert all(value == pytest.approx(100.0) for value in result.extra_ce.values())
    assert set(result.extra_ce) == set(EXTRA_CORRUPTIONS) and set(result.ce) == set(STANDARD_CORRUPTIONS)
    # AlexNet's unnormalised mCE: the mean of the 15 published averages.
    averages = [ALEXNET_AVERAGE_ERRORS[name] for name in STANDARD_CORRUPTIONS]
    assert result.unnormalized_mce == pytest.approx(100 * np.mean(averages), abs=1e-4)
    assert result.mean_corruption_accuracy == pytest.approx(100 - result.unnormalized_mce)


def test_hand_computed_half_errors():
    cells = {(name, s): 2 for name in STANDARD_CORRUPTIONS for s in SEVERITIES}  # 2 of 4 wrong everywhere
    result = mean_corruption_error(*_samples(cells), clean_error=0.25)
    # gaussian_noise: 100 * (5 * 0.5) / (0.69528 + 0.82542 + 0.93554 + 0.98138 + 0.99452)
    assert result.ce["gaussian_noise"] == pytest.approx(100 * 2.5 / 4.43214)
    # relative: 100 * 5 * (0.5 - 0.25) / (4.43214 - 5 * 0.435)
    assert result.relative_ce["gaussian_noise"] == pytest.approx(100 * 1.25 / (4.43214 - 2.175))
    assert result.mce == pytest.approx(
        np.mean([250 / sum(ALEXNET_CORRUPTION_ERRORS[n]) for n in STANDARD_CORRUPTIONS])
    )
    assert result.unnormalized_mce == pytest.approx(50.0)
    assert result.mean_corruption_accuracy == pytest.approx(50.0)
    assert result.clean_error == pytest.approx(25.0)
    assert result.errors["fog"][3] == pytest.approx(50.0)
    assert result.num_samples == 15 * 5 * 4 and result.complete and result.extra_ce == {}


def test_clean_predictions_equal_clean_error():
    samples = _samples({(name, s): (s % 4) for name in STANDARD_CORRUPTIONS for s in SEVERITIES})
    by_error = mean_corruption_error(*samples, clean_error=0.25)
    by_predictions = mean_corruption_error(
        *samples, clean_predictions=[0, 1, 1, 1], clean_references=[0, 1, 1, 0]
    )
    assert by_predictions.relative_mce == pytest.approx(by_error.relative_mce)
    assert mean_corruption_error(*samples).relative_mce is None


def test_extra_corruptions_reported_apart():
    cells = {(name, s): 1 for name in (*STANDARD_CORRUPTIONS, "spatter") for s in SEVERITIES}
    result = mean_corruption_error(*_samples(cells))
    assert set(result.extra_ce) == {"spatter"}
    assert result.extra_ce["spatter"] == pytest.approx(100 * 1.25 / sum(ALEXNET_CORRUPTION_ERRORS["spatter"]))
    only_standard = mean_corruption_error(*_samples({k: v for k, v in cells.items() if k[0] != "spatter"}))
    assert result.mce == pytest.approx(only_standard.mce)
    assert result.unnormalized_mce == pytest.approx(only_standard.unnormalized_mce)


def test_missing_cells_raise_and_name_them():
    cells = {(name, s): 1 for name in STANDARD_CORRUPTIONS for s in SEVERITIES}
    del cells["fog", 3], cells["snow", 5]
    with pytest.raises(ValueError, match=r"fog/3.*snow/5|snow/5.*fog/3"):
        mean_corruption_error(*_samples(cells))
    partial = mean_corruption_error(*_samples(cells), allow_partial=True)
    assert partial.missing_cells == ["snow/5", "fog/3"] and not partial.complete
    assert json.loads(json.dumps(partial.to_dict(), allow_nan=False))["complete"] is False
    # fog's CE covers the severities present only.
    alex = ALEXNET_CORRUPTION_ERRORS["fog"]
    assert partial.ce["fog"] == pytest.approx(100 * 0.25 * 4 / (sum(alex) - alex[2]))
    # An extra corruption, once present, needs all five severities too.
    cells_extra = {**{k: 0 for k in _alexnet_cells(STANDARD_CORRUPTIONS)}, ("saturate", 1): 0}
    with pytest.raises(ValueError, match="saturate/2"):
        mean_corruption_error(*_samples(cells_extra))


def test_no_standard_cells_partial_gives_none():
    result = mean_corruption_error(*_samples({("saturate", s): 1 for s in SEVERITIES}), allow_partial=True)
    assert result.mce is None and result.unnormalized_mce is None and len(result.missing_cells) == 75
    json.dumps(result.to_dict(), allow_nan=False)


@pytest.mark.parametrize(
    ("corruptions", "severities", "message"),
    [
        (["gausian_noise"], [1], "did you mean 'gaussian_noise'"),
        (["fog"], [6], "Severities must be in 1..5"),
        (["fog"], [0], "Severities must be in 1..5"),
    ],
)
def test_bad_names_and_severities(corruptions, severities, message):
    with pytest.raises(ValueError, match=message):
        mean_corruption_error([0], [0], corruptions, severities, allow_partial=True)


def test_bad_inputs():
    with pytest.raises(ValueError, match="lengths"):
        mean_corruption_error([0, 1], [0], ["fog"], [1], allow_partial=True)
    with pytest.raises(ValueError, match="not both"):
        mean_corruption_error(
            [0], [0], ["fog"], [1], clean_error=0.1, clean_predictions=[0], clean_references=[0]
        )
    with pytest.raises(ValueError, match="fraction"):
        mean_corruption_error([0], [0], ["fog"], [1], clean_error=24.0, allow_partial=True)
    with pytest.raises(ValueError, match="one string per sample"):
        mean_corruption_error([0], [0], "fog", [1], allow_partial=True)


def test_to_dict_is_json_safe():
    result = mean_corruption_error(*_samples({(n, s): 1 for n in STANDARD_CORRUPTIONS for s in SEVERITIES}))
    loaded = json.loads(json.dumps(result.to_dict(), allow_nan=False))
    assert loaded["errors"]["fog"]["1"] == pytest.approx(25.0) and loaded["mce"] == pytest.approx(result.mce)


@settings(max_examples=25, deadline=None, database=None)
@given(st.lists(st.integers(0, 3), min_size=75, max_size=75), st.randoms(use_true_random=False))
def test_invariant_to_sample_order(wrong_counts, rng):
    cells = dict(zip([(n, s) for n in STANDARD_CORRUPTIONS for s in SEVERITIES], wrong_counts, strict=True))
    columns = _samples(cells, per_cell=3)
    order = list(range(len(columns[0])))
    rng.shuffle(order)
    shuffled = [[column[i] for i in order] for column in columns]
    assert mean_corruption_error(*shuffled).to_dict() == mean_corruption_error(*columns).to_dict()
