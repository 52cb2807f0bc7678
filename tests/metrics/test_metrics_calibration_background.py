"""Calibration (ECE, MCE, NLL, Brier) and the ImageNet-9 background gap: hand-computed values and invariants."""

import json

import numpy as np
import pytest
from sklearn.metrics import log_loss

from hf_vitrobust.metrics import (
    IMAGENET_TO_IN9,
    IN9_CLASSES,
    background_gap,
    calibration_bins,
    calibration_metrics,
    imagenet_to_in9,
)

PROBABILITIES = np.array([[0.95, 0.05], [0.15, 0.85], [0.65, 0.35], [0.25, 0.75]])
REFERENCES = [0, 0, 0, 1]


def test_calibration_by_hand():
    result = calibration_metrics(PROBABILITIES, REFERENCES, num_bins=5)
    # Bin (0.8, 1]: confidences 0.95, 0.85, one right -> |0.5 - 0.9| = 0.4; bin (0.6, 0.8]: 0.65, 0.75, both right
    # -> |1 - 0.7| = 0.3. ECE = 2/4 * 0.4 + 2/4 * 0.3; MCE = 0.4.
    assert result.ece == pytest.approx(0.35)
    assert result.max_calibration_error == pytest.approx(0.4)
    assert result.nll == pytest.approx(-np.mean(np.log([0.95, 0.15, 0.65, 0.75])))
    assert result.nll == pytest.approx(log_loss(REFERENCES, PROBABILITIES))
    # Brier: (0.05^2 * 2 + 0.85^2 * 2 + 0.35^2 * 2 + 0.25^2 * 2) / 4
    assert result.brier == pytest.approx(0.455)
    assert result.accuracy == pytest.approx(0.75) and result.num_bins == 5
    json.dumps(result.to_dict(), allow_nan=False)


def test_calibration_default_bins_and_logits():
    logits = np.log(PROBABILITIES) + 3.0  # softmax gives PROBABILITIES back
    from_logits = calibration_metrics(logits, REFERENCES, from_logits=True)
    from_probabilities = calibration_metrics(PROBABILITIES, REFERENCES)
    assert from_logits.num_bins == 15
    for key in ("ece", "max_calibration_error", "nll", "brier", "accuracy"):
        assert getattr(from_logits, key) == pytest.approx(getattr(from_probabilities, key)), key
    # Very confident logits keep a finite, exact NLL.
    assert calibration_metrics([[0.0, 800.0]], [0], from_logits=True).nll == pytest.approx(800.0)


def test_perfectly_calibrated_and_order_invariant():
    # In the bin around 0.7, 7 of 10 samples right: ECE 0.
    probabilities = np.tile([0.7, 0.3], (10, 1))
    references = [0] * 7 + [1] * 3
    assert calibration_metrics(probabilities, references).ece == pytest.approx(0.0, abs=1e-12)
    rng = np.random.default_rng(0)
    probabilities = rng.dirichlet(np.ones(5), size=40)
    references = rng.integers(0, 5, size=40)
    order = rng.permutation(40)
    assert calibration_metrics(probabilities[order], references[order]).ece == pytest.approx(
        calibration_metrics(probabilities, references).ece
    )


def _reference_bin(confidence: float, edges: list[float]) -> int:
    """The reference's binning (gpleiss/temperature_scaling, Guo et al. 2017): lower < conf <= upper; 0 joins the
    first bin."""
    if confidence <= edges[1]:
        return 0
    return next(m for m in range(len(edges) - 1) if edges[m] < confidence <= edges[m + 1])


@pytest.mark.parametrize("num_bins", [4, 15, 25, 38])
def test_confidences_exactly_on_bin_edges_close_the_bin_below(num_bins):
    # k / M times M does not always round back to k ((7/25) * 25 = 7.000000000000001): compare with the edges.
    edges = [k / num_bins for k in range(num_bins + 1)]
    expected = [max(k - 1, 0) for k in range(num_bins + 1)]
    assert calibration_bins(edges, num_bins).tolist() == expected
    assert [_reference_bin(c, edges) for c in edges] == expected
    rng = np.random.default_rng(num_bins)
    inside = rng.uniform(0, 1, size=200)
    assert calibration_bins(inside, num_bins).tolist() == [_reference_bin(c, edges) for c in inside]


def test_ece_by_hand_with_confidences_on_bin_edges():
    # 4 bins (0, .25], (.25, .5], (.5, .75], (.75, 1]: 0.5 -> bin 2, 0.75 -> bin 3, 1.0 -> bin 4.
    probabilities = np.array([[0.5, 0.5], [0.75, 0.25], [0.75, 0.25], [1.0, 0.0]])
    result = calibration_metrics(probabilities, [0, 1, 0, 0], num_bins=4)
    # bin 2: one right at 0.5 -> 0.5; bin 3: one of two right at 0.75 -> 2 * 0.25; bin 4: right at 1.0 -> 0.
    assert result.ece == pytest.approx((0.5 + 2 * 0.25) / 4)
    assert result.max_calibration_error == pytest.approx(0.5)
    # 7/25 sits on an edge of the 25 bins: its sample is in bin 7, (6/25, 7/25], not with 0.30 in bin 8 (which
    # would give |1/2 - 0.29| for both, ECE 0.21).
    edge = np.array([[7 / 25, 6 / 25, 6 / 25, 6 / 25], [0.30, 0.70 / 3, 0.70 / 3, 0.70 / 3]])
    apart = calibration_metrics(edge, [0, 1], num_bins=25)
    assert apart.ece == pytest.approx((abs(1 - 7 / 25) + abs(0 - 0.30)) / 2)
    assert apart.max_calibration_error == pytest.approx(1 - 7 / 25)


def test_calibration_errors():
    with pytest.raises(ValueError, match="summing to 1"):
        calibration_metrics([[0.5, 0.6]], [0])
    with pytest.raises(ValueError, match="num_bins"):
        calibration_metrics(PROBABILITIES, REFERENCES, num_bins=0)
    with pytest.raises(ValueError, match=r"\[0, 2\)"):
        calibration_metrics(PROBABILITIES, [0, 0, 0, 2])


def test_imagenet_9_mapping():
    assert IN9_CLASSES == (
        "dog",
        "bird",
        "vehicle",
        "reptile",
        "carnivore",
        "insect",
        "instrument",
        "primate",
        "fish",
    )
    assert IMAGENET_TO_IN9.shape == (1000,)
    # tench -> fish, brambling -> bird, Chihuahua -> dog, ambulance -> vehicle; bullfrog, analog clock: none.
    np.testing.assert_array_equal(imagenet_to_in9([0, 10, 151, 407, 30, 409]), [8, 1, 0, 2, -1, -1])
    assert (IMAGENET_TO_IN9 >= 0).sum() == 370  # the 370 ImageNet classes of ImageNet-9


def test_background_gap_by_hand():
    predictions = [151, 151, 0, 409, 151, 0, 10]
    references = [0, 0, 8, 8, 0, 0, 1]  # the 4th is wrong: analog clock maps to no superclass
    variants = ["original", "mixed_same", "mixed_same", "mixed_same", "mixed_rand", "mixed_rand", "only_fg"]
    result = background_gap(predictions, references, variants)
    assert result.accuracy == {"original": 1.0, "only_fg": 1.0, "mixed_same": 2 / 3, "mixed_rand": 0.5}
    assert result.bg_gap == pytest.approx(2 / 3 - 1 / 2)
    assert result.num_samples == {"original": 1, "only_fg": 1, "mixed_same": 3, "mixed_rand": 2}
    assert background_gap([0], [8], ["original"]).bg_gap is None
    json.dumps(result.to_dict(), allow_nan=False)


def test_background_gap_errors():
    with pytest.raises(ValueError, match="did you mean 'mixed_rand'"):
        background_gap([0], [8], ["mixed_random"])
    with pytest.raises(ValueError, match="ImageNet-9 indices"):
        background_gap([0], [9], ["original"])
    with pytest.raises(ValueError, match="ImageNet-1k indices"):
        background_gap([1000], [0], ["original"])
