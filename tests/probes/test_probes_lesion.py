"""`lesion_study` (Park & Kim 2022, Fig. 11-12): accuracy with each residual unit removed, against hand-made
lesions and known no-op units, on every family; batch-size independence, JSON and the bar chart."""

import json

import numpy as np
import pytest
import torch
from probe_models import FAMILIES, PREPROCESSING, alternet, random_images, transformers_vit
from torch import nn

from hf_vitrobust.models import Classifier
from hf_vitrobust.probes.lesion import KIND_COLORS, lesion_study


def _labels_from(classifier: Classifier, images: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return classifier(images).argmax(dim=-1)


def test_accuracy_matches_manual_lesions_and_no_op_units_cost_nothing():
    classifier = transformers_vit()
    with torch.no_grad():  # layer 0's MLP unit contributes nothing
        classifier.module.vit.layers[0].mlp.fc2.weight.zero_()
        classifier.module.vit.layers[0].mlp.fc2.bias.zero_()
    images = random_images(12)
    labels = _labels_from(classifier, images)
    labels[:3] = (labels[:3] + 1) % 10  # baseline 9 / 12
    result = lesion_study(classifier, images, labels, batch_size=5)
    assert result.units == [
        "vit.layers.0.attention",
        "vit.layers.0.mlp",
        "vit.layers.1.attention",
        "vit.layers.1.mlp",
    ]
    assert result.kinds == ["msa", "mlp", "msa", "mlp"] and result.indices == [0, 0, 1, 1]
    assert result.stages == [None] * 4
    assert result.baseline_accuracy == pytest.approx(0.75)
    for name, accuracy in zip(result.units, result.accuracy, strict=True):
        with classifier.lesion([name]), torch.no_grad():
            expected = (classifier(images).argmax(-1) == labels).double().mean().item()
        assert accuracy == pytest.approx(expected)
    assert result.accuracy[1] == result.baseline_accuracy and result.accuracy_drop[1] == 0.0
    np.testing.assert_allclose(result.accuracy_drop, result.baseline_accuracy - np.array(result.accuracy))


def test_alternet_units_selection_and_kinds():
    classifier = alternet()
    images = random_images(6)
    labels = _labels_from(classifier, images)
    chosen = ["alternet.encoder.stages.3.layers.1", "alternet.encoder.stages.1.layers.0"]
    result = lesion_study(classifier, images, labels, units=chosen)
    assert result.units == chosen[::-1]  # network order
    assert result.kinds == ["conv", "msa"] and result.stages == [1, 3]
    assert result.baseline_accuracy == 1.0


def test_batch_size_does_not_change_the_result():
    classifier = transformers_vit()
    images = random_images(6)
    labels = _labels_from(classifier, images)
    labels[::2] = (labels[::2] + 1) % 10
    one = lesion_study(classifier, images, labels, batch_size=1)
    many = lesion_study(classifier, images, labels, batch_size=6)
    assert one.baseline_accuracy == 0.5
    assert one.to_dict() == many.to_dict()


@pytest.mark.slow
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_family(family):
    classifier = FAMILIES[family]()
    images = random_images(4)
    result = lesion_study(classifier, images, _labels_from(classifier, images), batch_size=3)
    units = classifier.residual_units()
    assert result.units == [u.name for u in units] and result.kinds == [u.kind for u in units]
    assert result.baseline_accuracy == 1.0 and result.num_images == 4
    assert all(0.0 <= a <= 1.0 for a in result.accuracy)
    data = json.loads(json.dumps(result.to_dict()))
    assert data["probe"] == "lesion_study" and len(data["accuracy_drop"]) == len(units)
    ax = result.plot()
    bars = ax.patches
    assert len(bars) == len(units)
    for bar, kind, drop in zip(bars, result.kinds, result.accuracy_drop, strict=True):
        assert bar.get_height() == pytest.approx(100 * drop)
        np.testing.assert_allclose(bar.get_facecolor()[:3], _rgb(KIND_COLORS[kind]))
    assert {text.get_text() for text in ax.get_legend().get_texts()} == {k.upper() for k in set(result.kinds)}


def _rgb(name):
    from matplotlib.colors import to_rgb

    return to_rgb(name)


def test_bad_inputs():
    classifier = transformers_vit()
    images = random_images(3)
    labels = torch.zeros(3, dtype=torch.long)
    with pytest.raises(ValueError, match="needs labels"):
        lesion_study(classifier, images)
    with pytest.raises(ValueError, match=r"Unknown residual units \['vit.layers.5.mlp'\]"):
        lesion_study(classifier, images, labels, units=["vit.layers.5.mlp"])
    with pytest.raises(TypeError, match="not a single string"):
        lesion_study(classifier, images, labels, units="vit.layers.0.mlp")
    with pytest.raises(ValueError, match="units is empty"):
        lesion_study(classifier, images, labels, units=[])
    plain = Classifier(nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 10)), PREPROCESSING)
    with pytest.raises(ValueError, match="supported architectures"):
        lesion_study(plain, images, labels)


def test_the_runner_record_keeps_each_images_correctness_under_each_lesion():
    """The lesion task's per-image record (what Park & Kim's end-of-stage finding reads), over two chunks, against
    the hand-made lesions; its sums are the merged counts."""
    from hf_vitrobust.probes.spec import PROBES

    classifier = transformers_vit()
    images = random_images(6)
    labels = _labels_from(classifier, images)
    labels[::3] = (labels[::3] + 1) % 10
    ids = torch.arange(40, 46)
    task = PROBES["lesion"]
    partials = [task.run(classifier, images[s], labels[s], ids[s], 0, {}) for s in (slice(0, 4), slice(4, 6))]
    merged = task.merge(partials)
    record = merged["per_image"]
    assert record["keys"] == list(range(40, 46))
    with torch.no_grad():
        assert record["correct"] == (classifier(images).argmax(-1) == labels).int().tolist()
    for column, name in enumerate(merged["units"]):
        with classifier.lesion([name]), torch.no_grad():
            expected = (classifier(images).argmax(-1) == labels).int().tolist()
        assert [row[column] for row in record["lesioned_correct"]] == expected, name
    assert np.sum(record["lesioned_correct"], axis=0).tolist() == merged["num_correct"]
