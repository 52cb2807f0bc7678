# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The per-image records of the occlusion, frequency-noise and feature-Fourier probes ("per_image"): what a paired
comparison of two models on the same images needs (`evaluation.findings`). Each is re-derived here from the
model, equals the probe's own aggregates, and does not depend on how the images were cut into chunks."""

import numpy as np
import pytest
import torch
from probe_models import NUM_CLASSES, random_images, timm_cnn

from hf_vitrobust.corruptions.frequency_noise import DEFAULT_BANDWIDTH, IMAGENET_STD, add_band_noise
from hf_vitrobust.corruptions.occlusion import cutout
from hf_vitrobust.probes import PROBES
from hf_vitrobust.probes.base import predict_logits
from hf_vitrobust.probes.feature_spectrum import log_amplitude_diagonal
from hf_vitrobust.probes.per_image import PER_IMAGE, merged_per_image, per_image_record

SEED = 2
N = 10
CHUNKS = (slice(0, 4), slice(4, 7), slice(7, N))


@pytest.fixture(scope="module")
def model():
    return timm_cnn()


@pytest.fixture(scope="module")
def data(model):
    pixels = random_images(N, seed=11)
    labels = predict_logits(model, pixels).argmax(dim=1)
    labels[::3] = (labels[::3] + 1) % NUM_CLASSES
    ids = torch.arange(N, dtype=torch.int64) * 104729 + 7
    return pixels, labels, ids


def _merged(name, model, data, params, chunks):
    spec = PROBES.get(name)
    pixels, labels, ids = data
    checked = spec.check_params(params)
    return spec.merge([spec.run(model, pixels[c], labels[c], ids[c], SEED, checked) for c in chunks])


def test_occlusion_keeps_each_images_correctness_at_every_ratio(model, data):
    pixels, labels, ids = data
    params = {"ratios": [0.5, 0.0, 0.1], "batch_size": 3}
    probe = _merged("occlusion", model, data, params, CHUNKS)
    record = probe[PER_IMAGE]
    assert record["keys"] == ids.tolist()
    expected = torch.stack(
        [
            predict_logits(model, cutout(pixels, ratio, seed=SEED, sample_ids=ids)).argmax(dim=1) == labels
            for ratio in sorted(params["ratios"])
        ],
        dim=1,
    )
    assert np.array_equal(np.asarray(record["correct"]), expected.int().numpy())
    assert np.asarray(record["correct"]).sum(axis=0).tolist() == probe["num_correct"]
    one_call = _merged("occlusion", model, data, params, (slice(0, N),))
    assert one_call[PER_IMAGE] == record and one_call["num_correct"] == probe["num_correct"]


def test_frequency_noise_keeps_clean_and_noisy_correctness(model, data):
    pixels, labels, ids = data
    params = {"frequencies": [0.9, 0.1], "epsilon": 1.0, "batch_size": 4}
    probe = _merged("frequency_noise", model, data, params, CHUNKS)
    record = probe[PER_IMAGE]
    clean = predict_logits(model, pixels).argmax(dim=1) == labels
    assert record["keys"] == ids.tolist() and record["clean"] == clean.int().tolist()
    magnitude = [params["epsilon"] * s for s in IMAGENET_STD]
    for column, frequency in enumerate(sorted(params["frequencies"])):
        noisy = add_band_noise(
            pixels, frequency, magnitude=magnitude, bandwidth=DEFAULT_BANDWIDTH, seed=SEED, sample_ids=ids
        )
        correct = predict_logits(model, noisy).argmax(dim=1) == labels
        assert [row[column] for row in record["correct"]] == correct.int().tolist()
    assert np.asarray(record["correct"]).sum(axis=0).tolist() == probe["num_correct"]
    assert sum(record["clean"]) == probe["num_clean_correct"]


def test_feature_fourier_keeps_each_images_delta_at_every_layer(model, data):
    pixels, _, ids = data
    probe = _merged("feature_fourier", model, data, {"batch_size": 4}, CHUNKS)
    deltas = np.asarray(probe[PER_IMAGE]["delta_log_amplitude"], dtype=np.float64)
    assert probe[PER_IMAGE]["keys"] == ids.tolist()
    assert deltas.shape == (N, len(probe["layers"]))
    with torch.no_grad():
        maps = model.feature_maps(pixels, probe["layers"])
    for i, layer in enumerate(probe["layers"]):
        diagonal = log_amplitude_diagonal(maps[layer]).double()
        if diagonal.shape[1] < 2:
            assert np.isnan(deltas[:, i]).all()
            continue
        np.testing.assert_allclose(deltas[:, i], (diagonal[:, -1] - diagonal[:, 0]).numpy(), atol=5e-7)
        # The probe's mean over images is the mean of the per-image values (rounded to 6 decimals).
        assert deltas[:, i].mean() == pytest.approx(probe["delta_log_amplitude"][i], abs=1e-6)


def test_records_merge_in_chunk_order_and_old_partials_have_none():
    first = {PER_IMAGE: per_image_record(torch.tensor([3, 1]), value=torch.tensor([0.5, 1.5]))}
    second = {PER_IMAGE: per_image_record(torch.tensor([2]), value=torch.tensor([2.5]))}
    assert merged_per_image([first, second]) == {"keys": [3, 1, 2], "value": [0.5, 1.5, 2.5]}
    assert merged_per_image([first, {}]) is None
    with pytest.raises(ValueError, match="rows for 2 images"):
        per_image_record(torch.tensor([1, 2]), value=torch.tensor([1.0]))
