"""The shared probe contract: input validation and gathering, JSON-safe results, axes."""

import json
import math
from dataclasses import dataclass

import pytest
import torch
from PIL import Image
from probe_models import IMAGE_SIZE, NUM_CLASSES, random_images, timm_cnn

from hf_vitrobust.corruptions.export import stable_sample_index
from hf_vitrobust.data.samples import NO_LABEL, Sample
from hf_vitrobust.probes.base import (
    ProbeResult,
    batch_slices,
    check_seed,
    new_axes,
    predict_logits,
    prepare_inputs,
)


@pytest.fixture(scope="module")
def classifier():
    return timm_cnn()


def test_tensor_inputs_are_gathered_with_positions_as_ids(classifier):
    images = random_images(5)
    inputs = prepare_inputs(classifier, images, torch.arange(5), limit=3)
    assert inputs.pixels.shape == (3, 3, IMAGE_SIZE, IMAGE_SIZE)
    assert torch.equal(inputs.pixels, images[:3])
    assert inputs.labels.tolist() == [0, 1, 2]
    assert inputs.sample_ids.tolist() == [0, 1, 2]
    subset = inputs.select(torch.tensor([False, True, True]))
    assert subset.sample_ids.tolist() == [1, 2] and subset.labels.tolist() == [1, 2]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"images": torch.rand(2, 3, 16, 16)}, "takes"),
        ({"images": torch.rand(2, 1, 32, 32)}, r"\(N, 3, H, W\)"),
        ({"images": (torch.rand(2, 3, 32, 32) * 255).to(torch.uint8)}, "float pixels"),
        ({"images": torch.rand(2, 3, 32, 32) * 2}, r"\[0, 1\]"),
        ({"images": torch.rand(2, 3, 32, 32), "labels": [0, 1, 2]}, "shape"),
        ({"images": torch.rand(2, 3, 32, 32), "labels": [0, NUM_CLASSES]}, "class indices"),
        ({"images": torch.rand(2, 3, 32, 32)}, "needs labels"),
        ({"images": torch.rand(2, 3, 32, 32), "labels": [0, 1], "sample_ids": [4, 4]}, "unique"),
        ({"images": torch.rand(2, 3, 32, 32), "labels": [0, 1], "limit": 0}, "limit"),
        ({"images": "folder/"}, "not a string"),
    ],
)
def test_bad_inputs_are_named(classifier, kwargs, message):
    with pytest.raises((ValueError, TypeError), match=message):
        prepare_inputs(classifier, **kwargs)


def test_dataset_of_samples_is_preprocessed_like_the_classifier(classifier):
    photo = torch.randint(0, 256, (3, 40, 48), dtype=torch.uint8, generator=torch.Generator().manual_seed(0))
    samples = [Sample(photo, 3, "val/a.JPEG"), Sample(photo.flip(-1), 7, "val/b.JPEG"), Sample(photo, 1, "c")]
    inputs = prepare_inputs(classifier, samples, limit=2)
    expected = classifier.preprocess(Image.fromarray(photo.permute(1, 2, 0).numpy()))
    assert torch.equal(inputs.pixels[0], expected[0])
    assert inputs.labels.tolist() == [3, 7]
    assert inputs.sample_ids.tolist() == [
        stable_sample_index("val/a.JPEG"),
        stable_sample_index("val/b.JPEG"),
    ]
    unlabeled = [Sample(photo, NO_LABEL, "x")]
    assert prepare_inputs(classifier, unlabeled, require_labels=False).labels is None
    with pytest.raises(ValueError, match="needs labels"):
        prepare_inputs(classifier, unlabeled)


def test_dataset_rows_with_pil_images(classifier):
    rows = [{"image": Image.new("RGB", (50, 40), (255, 0, 0)), "label": 2}]
    inputs = prepare_inputs(classifier, rows)
    assert inputs.labels.tolist() == [2] and inputs.sample_ids.tolist() == [0]
    assert torch.allclose(inputs.pixels[0, 0], torch.ones(IMAGE_SIZE, IMAGE_SIZE))
    assert inputs.pixels[0, 1:].abs().max() == 0
    with pytest.raises(TypeError, match="Sample objects or mappings"):
        prepare_inputs(classifier, [torch.rand(3, 32, 32)])


def test_batches_and_logits_do_not_depend_on_batch_size(classifier):
    assert [(s.start, s.stop) for s in batch_slices(5, 2)] == [(0, 2), (2, 4), (4, 5)]
    with pytest.raises(ValueError, match="batch_size"):
        list(batch_slices(5, 0))
    images = random_images(5)
    torch.testing.assert_close(predict_logits(classifier, images, 1), predict_logits(classifier, images, 5))


def test_check_seed():
    assert check_seed(2**40) == 2**40
    for bad in (-1, 1.5, True, 2**64):
        with pytest.raises(ValueError, match="seed"):
            check_seed(bad)


@dataclass
class _ToyResult(ProbeResult):
    values: torch.Tensor
    scores: dict
    nested: tuple

    @classmethod
    def probe_name(cls) -> str:
        return "toy"

    def plot(self, ax=None):
        ax = new_axes(ax)
        ax.plot(self.values.tolist())
        return ax


def test_results_are_json_safe_and_plot():
    import numpy as np

    result = _ToyResult(
        torch.tensor([1.0, math.nan]), {"a": np.float32(0.5), 1: math.inf}, (np.arange(2), None)
    )
    data = json.loads(json.dumps(result.to_dict()))
    assert data == {
        "probe": "toy",
        "values": [1.0, None],
        "scores": {"a": 0.5, "1": None},
        "nested": [[0, 1], None],
    }
    ax = result.plot()
    assert len(ax.lines) == 1
    assert result.plot(ax) is ax


@pytest.mark.parametrize("probe", ["deepfool_spectrum", "pgd_loss_progression", "fourier_heatmap"])
def test_attacks_and_sweeps_refuse_training_mode_and_bare_modules(probe):
    from probe_models import random_images, transformers_vit

    import hf_vitrobust.probes as probes

    run = getattr(probes, probe)
    classifier = transformers_vit()
    images, labels = random_images(2), torch.tensor([0, 1])
    classifier.train()
    with pytest.raises(ValueError, match="training mode"):
        run(classifier, images, labels)
    with pytest.raises(TypeError, match="Classifier"):
        run(classifier.module, images, labels)
