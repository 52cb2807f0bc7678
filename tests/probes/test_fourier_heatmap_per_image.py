# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The Fourier heat map probe's per-image record ("per_image": each image's error averaged over the map), which
Paul & Chen's Fig. 9 finding reads (`analysis.finding_sets`): one value per image in key order, whose squares add
up to the probe's own "map_error_square_sum" and whose mean is the map's, the same however the images were cut into chunks."""

import numpy as np
import pytest
import torch
from probe_models import NUM_CLASSES, random_images, timm_cnn

from hf_vitrobust.probes import PROBES
from hf_vitrobust.probes.base import predict_logits
from hf_vitrobust.probes.fourier_heatmap import map_error_per_image
from hf_vitrobust.probes.per_image import PER_IMAGE

SEED, N = 4, 6


@pytest.fixture(scope="module")
def model():
    return timm_cnn()


def test_each_images_map_error_is_kept(model):
    pixels = random_images(N, seed=3)
    labels = predict_logits(model, pixels).argmax(dim=1)
    labels[::2] = (labels[::2] + 1) % NUM_CLASSES
    ids = torch.arange(N, dtype=torch.int64) * 7919 + 5
    spec = PROBES.get("fourier_heatmap")
    params = spec.check_params({"window": 3, "batch_size": 4})

    def merged(chunks):
        return spec.merge([spec.run(model, pixels[c], labels[c], ids[c], SEED, params) for c in chunks])

    probe = merged((slice(0, 2), slice(2, N)))
    keys, errors = map_error_per_image(probe)
    assert keys == ids.tolist() and errors.shape == (N,)
    assert ((errors >= 0) & (errors <= 1)).all()
    assert float((errors**2).sum()) == pytest.approx(probe["map_error_square_sum"], rel=1e-12)
    assert merged((slice(0, N),))[PER_IMAGE] == probe[PER_IMAGE]
    error_map = np.asarray(probe["error_map"], dtype=np.float64)
    # Every image is perturbed at every cell: the images' mean is the map's mean (its headline).
    assert errors.mean() == pytest.approx(np.nanmean(error_map), abs=1e-12)
