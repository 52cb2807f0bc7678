# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The per-image quantities of the attack probes that Paul & Chen's Fig. 11 and Fig. 13 findings compare
(hf_vitrobust.probes): DeepFool's share of each perturbation's DCT energy in the lowest quarter of the frequencies
along each axis (against scipy's DCT, on perturbations whose energy split is known), and PGD's mean rise of the
cross-entropy per step (against the mean of the per-step differences), kept per image by sample id, the same however
the images were cut into chunks; a record made before they were kept says so (LookupError)."""

import math

import numpy as np
import pytest
import torch
from probe_models import NUM_CLASSES, random_images, transformers_vit
from scipy.fft import dctn, idctn

from hf_vitrobust.probes import PROBES
from hf_vitrobust.probes.base import predict_logits
from hf_vitrobust.probes.deepfool import deepfool_spectrum, low_frequency_share_per_image
from hf_vitrobust.probes.per_image import PER_IMAGE
from hf_vitrobust.probes.pgd import loss_rise_per_image
from hf_vitrobust.probes.spectra import low_frequency_share

N = 6


@pytest.fixture(scope="module")
def vit():
    return transformers_vit()


def _scipy_share(perturbation: np.ndarray, rows: int, cols: int) -> float:
    energy = (dctn(perturbation, type=2, norm="ortho", axes=(-2, -1)) ** 2).sum(axis=0)
    return float(energy[:rows, :cols].sum() / energy.sum())


def test_low_frequency_share_of_a_known_split_and_against_scipy():
    # 8 x 12 images: the band is the first 2 rows and the first 3 columns of the DCT (a quarter of each axis).
    rng = np.random.default_rng(0)
    coefficients = np.zeros((3, 3, 8, 12))
    band = np.zeros((8, 12), dtype=bool)
    band[:2, :3] = True
    for image, low_energy in enumerate((0.75, 0.1, 1.0)):
        values = rng.standard_normal((3, 8, 12))
        inside = values * band
        outside = values * ~band
        coefficients[image] = inside * math.sqrt(low_energy / (inside**2).sum())
        if low_energy < 1.0:
            coefficients[image] += outside * math.sqrt((1.0 - low_energy) / (outside**2).sum())
    perturbations = idctn(coefficients, type=2, norm="ortho", axes=(-2, -1))
    shares = low_frequency_share(torch.from_numpy(perturbations))
    assert shares.dtype == torch.float64
    assert shares.tolist() == pytest.approx([0.75, 0.1, 1.0], abs=1e-12)
    # Any perturbation: the share scipy's orthonormal DCT gives, the band rounded up (9 x 10: 3 x 3; at 0.1: 1 x 1).
    noise = rng.standard_normal((2, 3, 9, 10))
    assert low_frequency_share(torch.from_numpy(noise)).tolist() == pytest.approx(
        [_scipy_share(p, 3, 3) for p in noise], abs=1e-12
    )
    assert low_frequency_share(torch.from_numpy(noise), fraction=0.1).tolist() == pytest.approx(
        [_scipy_share(p, 1, 1) for p in noise], abs=1e-12
    )
    # An unperturbed image has no share; a bad fraction is refused.
    assert math.isnan(float(low_frequency_share(torch.zeros(1, 3, 8, 8))[0]))
    with pytest.raises(ValueError, match="fraction"):
        low_frequency_share(torch.from_numpy(noise), fraction=0.0)


def test_deepfool_keeps_each_attacked_images_share(vit):
    pixels = random_images(N, seed=1)
    labels = predict_logits(vit, pixels).argmax(dim=1)
    labels[:2] = (labels[:2] + 1) % NUM_CLASSES  # misclassified: not attacked, no share
    ids = torch.arange(N, dtype=torch.int64) * 13 + 2
    spec = PROBES.get("deepfool")
    params = spec.check_params({"steps": 4, "batch_size": 4})

    def merged(chunks):
        return spec.merge([spec.run(vit, pixels[c], labels[c], ids[c], 0, params) for c in chunks])

    probe = merged((slice(0, 3), slice(3, N)))
    keys, shares = low_frequency_share_per_image(probe)
    assert keys == ids[2:].tolist()
    result = deepfool_spectrum(vit, pixels, labels, steps=4)
    attacked = result.perturbations[result.clean_correct].double().numpy()
    assert shares == pytest.approx([_scipy_share(p, 8, 8) for p in attacked], rel=1e-6)
    assert merged((slice(0, N),))[PER_IMAGE] == probe[PER_IMAGE]


def test_pgd_keeps_each_attacked_images_loss_rise(vit):
    pixels = random_images(N, seed=2)
    labels = predict_logits(vit, pixels).argmax(dim=1)
    labels[1] = (labels[1] + 1) % NUM_CLASSES
    ids = torch.arange(N, dtype=torch.int64) * 7 + 1
    spec = PROBES.get("pgd")
    for record, sign in (("every-step", 1.0), ("paul-chen-notebook", -1.0)):
        params = spec.check_params({"steps": 3, "record": record})
        probe = spec.merge(
            [spec.run(vit, pixels[c], labels[c], ids[c], 0, params) for c in (slice(0, 3), slice(3, N))]
        )
        keys, rises = loss_rise_per_image(probe)
        assert keys == [int(ids[i]) for i in range(N) if i != 1]
        cross_entropy = sign * np.asarray(probe["losses"])  # the notebook keeps -CE
        assert rises == pytest.approx(np.diff(cross_entropy, axis=1).mean(axis=1), rel=1e-9)
    # Known curves: CE 1, 2, 4 (every step) and -CE -1, -2, -4 (the notebook) both rise 1.5 per step.
    for record, losses in (("every-step", [[1.0, 2.0, 4.0]]), ("paul-chen-notebook", [[-1.0, -2.0, -4.0]])):
        constructed = {"record": record, "losses": losses, PER_IMAGE: {"keys": [9]}}
        assert loss_rise_per_image(constructed)[1].tolist() == [1.5]


def test_records_made_before_the_per_image_quantities_say_so():
    with pytest.raises(LookupError, match="per-image record"):
        low_frequency_share_per_image({"success": [True], "l2_norms": [0.1]})
    with pytest.raises(LookupError, match="low-frequency share"):
        low_frequency_share_per_image({PER_IMAGE: {"keys": [1]}})
    with pytest.raises(LookupError, match="per-image record"):
        loss_rise_per_image({"losses": [[1.0, 2.0]], "record": "every-step"})
    with pytest.raises(LookupError, match="two steps"):
        loss_rise_per_image({"losses": [[1.0]], PER_IMAGE: {"keys": [1]}})
