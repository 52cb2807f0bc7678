"""Robustness for noise frequency (Park & Kim, ICLR 2022, Fig. 2b): on every model family the probe equals a direct
computation (band noise of amplitude epsilon x the classifier's std, forward, argmax), it does not depend on the batch
size, it follows the seed, and its aggregation is the `frequency_noise` core, also as an `evaluate` module."""

import json
from pathlib import Path

import evaluate
import numpy as np
import pytest
import torch
from probe_models import FAMILIES, random_images, transformers_vit

from hf_vitrobust.corruptions.frequency_noise import IMAGENET_STD, add_band_noise
from hf_vitrobust.metrics.frequency_noise import frequency_noise_accuracy
from hf_vitrobust.probes.frequency_noise import FrequencyNoiseResult, frequency_noise

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def vit():
    return transformers_vit()


@pytest.fixture(scope="module")
def module():
    return evaluate.load(str(ROOT / "metrics" / "frequency_noise"))


def _labels_right_on(classifier, images):
    """Labels equal to the clean predictions (clean accuracy 1), so any flip under noise shows as a drop."""
    with torch.no_grad():
        return classifier(images).argmax(-1)


@pytest.mark.slow
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_probe_equals_direct_computation_on_every_family(family):
    classifier = FAMILIES[family]()
    images = random_images(4, seed=5)
    labels = _labels_right_on(classifier, images)
    frequencies, epsilon = (0.7, 0.1), 3.0  # flips some predictions of the random timm models
    result = frequency_noise(
        classifier, images, labels, frequencies=frequencies, epsilon=epsilon, batch_size=3
    )
    assert isinstance(result, FrequencyNoiseResult)
    assert result.frequencies == [0.1, 0.7] and result.clean_accuracy == 1.0 and result.num_samples == 4
    magnitude = [epsilon * s for s in IMAGENET_STD]  # eps in pixels: times the ImageNet std for every model
    expected = []
    with torch.no_grad():
        for frequency in (0.1, 0.7):
            noisy = add_band_noise(images, frequency, magnitude=magnitude, seed=0, clip=False)
            expected.append(float((classifier(noisy).argmax(-1) == labels).double().mean()))
    assert result.accuracy == pytest.approx(expected, abs=1e-9)
    assert result.accuracy_drop == pytest.approx([1.0 - a for a in expected], abs=1e-9)


def test_zero_noise_costs_nothing_and_loud_noise_costs_accuracy(vit):
    images = random_images(8, seed=6)
    labels = _labels_right_on(vit, images)
    silent = frequency_noise(vit, images, labels, epsilon=0.0)
    assert silent.frequencies == pytest.approx([0.1 * k for k in range(1, 10)])
    assert silent.accuracy_drop == [0.0] * 9 and silent.accuracy == [1.0] * 9
    loud = frequency_noise(vit, images, labels, frequencies=(0.1, 0.5, 0.9), epsilon=20.0, equal_energy=True)
    assert max(loud.accuracy_drop) > 0 and all(0 <= d <= 1 for d in loud.accuracy_drop)


def test_batch_size_independence_and_seed_dependence(vit):
    images = random_images(6, seed=7)
    labels = _labels_right_on(vit, images)
    settings = {"frequencies": (0.2, 0.8), "epsilon": 4.0}
    one = frequency_noise(vit, images, labels, batch_size=1, **settings)
    many = frequency_noise(vit, images, labels, batch_size=6, **settings)
    assert one.to_dict() == many.to_dict()
    # A different seed draws different noise: the noisy images differ, and so (for some seed) do the outcomes.
    first = add_band_noise(images, 0.2, magnitude=1.0, seed=0, clip=False)
    second = add_band_noise(images, 0.2, magnitude=1.0, seed=1, clip=False)
    assert not torch.allclose(first, second)
    outcomes = {tuple(frequency_noise(vit, images, labels, seed=s, **settings).accuracy) for s in range(4)}
    assert len(outcomes) > 1


def test_to_dict_is_json_and_plot_returns_axes(vit):
    result = frequency_noise(vit, random_images(2), [0, 1], frequencies=(0.3, 0.6))
    data = json.loads(json.dumps(result.to_dict()))
    assert data["probe"] == "frequency_noise"
    assert data["bandwidth"] == 0.2 and data["epsilon"] == 0.7 and data["equal_energy"] is False
    from matplotlib.axes import Axes

    ax = result.plot()
    assert isinstance(ax, Axes)
    assert list(ax.lines[0].get_xdata()) == [0.3, 0.6]
    assert list(ax.lines[0].get_ydata()) == pytest.approx([-100 * d for d in result.accuracy_drop])


def test_bad_inputs_fail_before_model_work(vit):
    images = random_images(2)
    with pytest.raises(ValueError, match="frequency must lie in"):
        frequency_noise(vit, images, [0, 1], frequencies=(0.5, 1.5))
    with pytest.raises(ValueError, match="distinct"):
        frequency_noise(vit, images, [0, 1], frequencies=(0.5, 0.5))
    with pytest.raises(ValueError, match="empty"):
        frequency_noise(vit, images, [0, 1], frequencies=())
    with pytest.raises(ValueError, match="bandwidth"):
        frequency_noise(vit, images, [0, 1], bandwidth=0.0)
    with pytest.raises(ValueError, match="No frequency of a 32x32 image"):
        frequency_noise(vit, images, [0, 1], frequencies=(0.53,), bandwidth=0.01)
    with pytest.raises(ValueError, match="epsilon"):
        frequency_noise(vit, images, [0, 1], epsilon=-1.0)
    with pytest.raises(ValueError, match="needs labels"):
        frequency_noise(vit, images)


def test_core_by_hand_and_errors():
    result = frequency_noise_accuracy([0.5, 0.1, 0.5, 0.1], [True, True, False, False], clean_accuracy=0.75)
    assert result.frequencies == [0.1, 0.5]
    assert result.accuracy == [0.5, 0.5] and result.num_samples == [2, 2]
    assert result.accuracy_drop == pytest.approx([0.25, 0.25]) and result.clean_accuracy == 0.75
    assert frequency_noise_accuracy([0.3], [1]).accuracy_drop is None
    with pytest.raises(ValueError, match="units of pi"):
        frequency_noise_accuracy([1.3], [1])
    with pytest.raises(ValueError, match="clean_accuracy"):
        frequency_noise_accuracy([0.3], [1], clean_accuracy=1.5)
    with pytest.raises(ValueError, match="one entry per sample"):
        frequency_noise_accuracy([0.3, 0.4], [1])
    with pytest.raises(ValueError, match="No records"):
        frequency_noise_accuracy([], [])


def test_evaluate_module_equals_core_in_one_batch_or_two(module):
    rng = np.random.default_rng(1)
    frequencies = rng.choice([0.1 * k for k in range(1, 10)], size=45).tolist()
    correct = (rng.random(45) < 0.5).tolist()
    expected = frequency_noise_accuracy(frequencies, correct, clean_accuracy=0.8).to_dict()
    assert module.compute(frequencies=frequencies, correct=correct, clean_accuracy=0.8) == expected
    module.add_batch(frequencies=frequencies[:20], correct=correct[:20])
    module.add_batch(frequencies=frequencies[20:], correct=correct[20:])
    assert module.compute(clean_accuracy=0.8) == expected
    assert module.compute(frequencies=frequencies, correct=correct)["accuracy_drop"] is None
