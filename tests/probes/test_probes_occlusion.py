"""The Cutout occlusion sweep (Paul & Chen, AAAI 2022): on every model family it equals a direct computation (cutout,
forward, softmax), it does not depend on the batch size, its holes follow the seed, and its aggregation is the
`occlusion_accuracy` core, also as an `evaluate` module."""

import json
from pathlib import Path

import evaluate
import numpy as np
import pytest
import torch
from probe_models import FAMILIES, random_images, transformers_vit

from hf_vitrobust.corruptions.occlusion import cutout
from hf_vitrobust.metrics.occlusion_accuracy import occlusion_accuracy
from hf_vitrobust.probes.occlusion import OcclusionResult, occlusion_sweep

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def vit():
    return transformers_vit()


@pytest.fixture(scope="module")
def module():
    return evaluate.load(str(ROOT / "metrics" / "occlusion_accuracy"))


def _direct(classifier, images, labels, ratios, seed):
    """Accuracy, mean max softmax and mean true-class probability per ratio, computed without the probe."""
    ids = torch.arange(len(images))
    rows = []
    with torch.no_grad():
        for ratio in ratios:
            probabilities = classifier(cutout(images, ratio, seed=seed, sample_ids=ids)).softmax(-1)
            rows.append(
                (
                    float((probabilities.argmax(-1) == labels).double().mean()),
                    float(probabilities.max(-1).values.double().mean()),
                    float(probabilities[torch.arange(len(labels)), labels].double().mean()),
                )
            )
    return [list(column) for column in zip(*rows, strict=True)]


@pytest.mark.slow
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_sweep_equals_direct_computation_on_every_family(family):
    classifier = FAMILIES[family]()
    images, labels = random_images(4, seed=1), torch.tensor([0, 3, 5, 9])
    # Make one image certainly right at ratio 0, so accuracy is not trivially 0.
    with torch.no_grad():
        labels[0] = classifier(images[:1]).argmax(-1)[0]
    result = occlusion_sweep(classifier, images, labels, ratios=(0.5, 0.0), batch_size=3, seed=4)
    assert isinstance(result, OcclusionResult)
    assert result.ratios == [0.0, 0.5] and result.num_samples == 4 and result.seed == 4
    accuracy, confidence, truth = _direct(classifier, images, labels, [0.0, 0.5], seed=4)
    assert result.accuracy == pytest.approx(accuracy, abs=1e-6)
    assert result.accuracy[0] >= 0.25
    assert result.confidence == pytest.approx(confidence, abs=1e-5)
    assert result.true_class_probability == pytest.approx(truth, abs=1e-5)
    assert all(t <= c + 1e-7 for t, c in zip(result.true_class_probability, result.confidence, strict=True))


def test_batch_size_independence_and_seed_dependence(vit):
    images, labels = random_images(6, seed=2), torch.arange(6)
    ratios = (0.0, 0.1, 0.5)
    one = occlusion_sweep(vit, images, labels, ratios=ratios, batch_size=1)
    many = occlusion_sweep(vit, images, labels, ratios=ratios, batch_size=6)
    assert one.accuracy == many.accuracy
    assert one.confidence == pytest.approx(many.confidence, abs=1e-5)
    assert one.true_class_probability == pytest.approx(many.true_class_probability, abs=1e-5)
    other = occlusion_sweep(vit, images, labels, ratios=ratios, batch_size=6, seed=1)
    assert other.confidence[0] == pytest.approx(many.confidence[0], abs=1e-6)  # no hole, nothing random
    assert abs(other.confidence[2] - many.confidence[2]) > 1e-6  # the holes moved


def test_dataset_rows_and_limit(vit):
    images = random_images(3, seed=3)
    rows = [
        {"image": (image.permute(1, 2, 0) * 255).round().to(torch.uint8).numpy(), "label": label}
        for image, label in zip(images, [1, 2, 3], strict=True)
    ]
    result = occlusion_sweep(vit, rows, ratios=(0.2,), limit=2)
    assert result.num_samples == 2 and result.ratios == [0.2]


def test_to_dict_is_json_and_plot_returns_axes(vit):
    result = occlusion_sweep(vit, random_images(2), [0, 1], ratios=(0.0, 0.2))
    data = json.loads(json.dumps(result.to_dict()))
    assert data["probe"] == "occlusion_sweep"
    assert set(data) == {
        "probe",
        "ratios",
        "accuracy",
        "confidence",
        "true_class_probability",
        "num_samples",
        "seed",
        "hole",
    }
    assert data["hole"] == "exact-area"
    from matplotlib.axes import Axes

    ax = result.plot()
    assert isinstance(ax, Axes) and len(ax.lines) == 2
    assert list(ax.lines[0].get_xdata()) == [0.0, 20.0]


def test_bad_inputs_fail_before_model_work(vit):
    images = random_images(2)
    with pytest.raises(ValueError, match="ratio must be a number in"):
        occlusion_sweep(vit, images, [0, 1], ratios=(0.1, 1.5))
    with pytest.raises(ValueError, match="distinct"):
        occlusion_sweep(vit, images, [0, 1], ratios=(0.1, 0.1))
    with pytest.raises(ValueError, match="non-empty"):
        occlusion_sweep(vit, images, [0, 1], ratios=())
    with pytest.raises(ValueError, match="needs labels"):
        occlusion_sweep(vit, images)
    with pytest.raises(ValueError, match="seed"):
        occlusion_sweep(vit, images, [0, 1], seed=-1)


def test_core_by_hand_and_errors():
    result = occlusion_accuracy([0.5, 0.0, 0.5, 0.0, 0.5], [1, 1, 0, 0, 0], [0.2, 0.9, 0.4, 0.5, 0.6])
    assert result.ratios == [0.0, 0.5]
    assert result.accuracy == pytest.approx([0.5, 1 / 3])
    assert result.mean_confidence == pytest.approx([0.7, 0.4])
    assert result.num_samples == [2, 3]
    with pytest.raises(ValueError, match="one entry per sample"):
        occlusion_accuracy([0.1, 0.2], [True], [0.5, 0.5])
    with pytest.raises(ValueError, match="booleans"):
        occlusion_accuracy([0.1], [2], [0.5])
    with pytest.raises(ValueError, match="probabilities"):
        occlusion_accuracy([0.1], [True], [1.5])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        occlusion_accuracy([-0.1], [True], [0.5])
    with pytest.raises(ValueError, match="No records"):
        occlusion_accuracy([], [], [])


def test_evaluate_module_equals_core_in_one_batch_or_two(module):
    rng = np.random.default_rng(0)
    ratios = rng.choice([0.0, 0.05, 0.1, 0.2, 0.5], size=40).tolist()
    correct = (rng.random(40) < 0.6).tolist()
    confidences = rng.random(40).tolist()
    expected = occlusion_accuracy(ratios, correct, confidences).to_dict()
    assert module.compute(ratios=ratios, correct=correct, confidences=confidences) == expected
    module.add_batch(ratios=ratios[:13], correct=correct[:13], confidences=confidences[:13])
    module.add_batch(ratios=ratios[13:], correct=correct[13:], confidences=confidences[13:])
    assert module.compute() == expected
