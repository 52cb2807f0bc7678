"""DeepFool spectrum probe: agreement with foolbox's L2 DeepFool, the orthonormal DCT against scipy, the energy
spectrum of known perturbations, batch-size independence and every model family."""

import json
import math

import foolbox
import numpy as np
import pytest
import scipy.fft
import torch
from probe_models import FAMILIES, random_images, timm_cnn, transformers_vit

from hf_vitrobust.probes.deepfool import DeepFoolResult, deepfool, deepfool_spectrum
from hf_vitrobust.probes.spectra import dct2, dct_energy_db, dct_matrix, idct2


@pytest.fixture(scope="module")
def vit():
    return transformers_vit()


@pytest.fixture(scope="module")
def cnn():
    return timm_cnn()


# ----------------------------------------------------------------------------- DCT
@pytest.mark.parametrize("shape", [(5, 7), (2, 3, 8, 8), (1, 32, 32)])
def test_dct2_matches_scipy_orthonormal_dct(shape):
    x = torch.from_numpy(np.random.default_rng(0).normal(size=shape))
    expected = scipy.fft.dctn(x.numpy(), type=2, norm="ortho", axes=(-2, -1))
    np.testing.assert_allclose(dct2(x).numpy(), expected, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(dct2(x.float()).numpy(), expected, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(idct2(dct2(x)).numpy(), x.numpy(), atol=1e-12)


def test_dct_matrix_is_orthogonal_and_parseval_holds():
    matrix = dct_matrix(12, dtype=torch.float64)
    torch.testing.assert_close(matrix @ matrix.T, torch.eye(12, dtype=torch.float64))
    x = torch.randn(3, 12, 12, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    torch.testing.assert_close(dct2(x).square().sum(), x.square().sum())


def test_energy_db_of_a_dct_basis_perturbation_peaks_at_its_coefficient():
    coefficients = torch.zeros(1, 3, 16, 16, dtype=torch.float64)
    coefficients[0, 1, 3, 5] = 0.5  # one basis function, in one channel
    perturbation = idct2(coefficients)
    energy = dct_energy_db(perturbation)
    assert energy.shape == (16, 16)
    assert divmod(int(energy.argmax()), 16) == (3, 5)
    assert float(energy[3, 5]) == pytest.approx(10 * math.log10(0.25), abs=1e-9)
    others = energy.clone()
    others[3, 5] = -math.inf
    assert float(others.max()) < -200  # round-off only


def test_energy_db_averages_energy_over_images_then_takes_the_log():
    perturbations = torch.zeros(2, 3, 4, 4, dtype=torch.float64)
    coefficients = torch.zeros(3, 4, 4, dtype=torch.float64)
    coefficients[0, 0, 0] = 2.0
    perturbations[0] = idct2(coefficients)
    # Image 0: energy 4 at (0, 0); image 1: nothing. Mean energy 2 -> 10 log10(2) dB.
    assert float(dct_energy_db(perturbations)[0, 0]) == pytest.approx(10 * math.log10(2.0))


def test_dct_rejects_bad_input():
    with pytest.raises(ValueError, match="size"):
        dct_matrix(0)
    with pytest.raises(ValueError, match="2 dimensions"):
        dct2(torch.zeros(5))
    with pytest.raises(ValueError, match=r"\(N, C, H, W\)"):
        dct_energy_db(torch.zeros(3, 4, 4))


# ----------------------------------------------------------------------------- DeepFool
@pytest.mark.slow
@pytest.mark.parametrize("make", [transformers_vit, timm_cnn], ids=["transformers_vit", "timm_cnn"])
def test_deepfool_agrees_with_foolbox(make):
    classifier = make()
    images = random_images(4, seed=3)
    with torch.no_grad():
        labels = classifier(images).argmax(dim=1)
    adversarial, success, _ = deepfool(classifier, images, labels)
    with torch.no_grad():
        predictions = classifier(adversarial).argmax(dim=1)
    assert success.any()
    assert torch.all(predictions[success] != labels[success])  # every reported success is misclassified
    assert adversarial.min() >= 0 and adversarial.max() <= 1
    fmodel = foolbox.PyTorchModel(classifier, bounds=(0, 1))
    attack = foolbox.attacks.L2DeepFoolAttack(steps=50, candidates=10, overshoot=0.02)
    raw, _, fb_success = attack(fmodel, images, labels, epsilons=None)
    ours = (adversarial - images).flatten(1).norm(dim=1)[success].mean()
    theirs = (raw - images).flatten(1).norm(dim=1)[fb_success].mean()
    assert torch.equal(success, fb_success)
    assert float(ours) == pytest.approx(float(theirs), rel=0.10)
    # Same algorithm, same arithmetic: the images agree to float round-off.
    torch.testing.assert_close(adversarial, raw, atol=1e-5, rtol=0)


@pytest.mark.slow
def test_deepfool_gradient_modes_agree(vit):
    images = random_images(3, seed=4)
    loop = deepfool(vit, images, gradients="loop")
    vmap = deepfool(vit, images, gradients="vmap")
    torch.testing.assert_close(loop[0], vmap[0], atol=1e-5, rtol=0)
    assert torch.equal(loop[1], vmap[1]) and torch.equal(loop[2], vmap[2])


def test_deepfool_steps_cap_and_no_update_for_misclassified_images(vit):
    images = random_images(4, seed=5)
    with torch.no_grad():
        predictions = vit(images).argmax(dim=1)
    wrong = (predictions + 1) % 10
    labels = torch.where(torch.arange(4) < 2, wrong, predictions)
    adversarial, success, iterations = deepfool(vit, images, labels, steps=1)
    # Already misclassified: success without any update, image unchanged.
    assert success[:2].all() and torch.equal(iterations[:2], torch.zeros(2, dtype=torch.int64))
    assert torch.equal(adversarial[:2], images[:2])
    assert torch.all(iterations[2:] == 1)


@pytest.mark.slow
def test_deepfool_spectrum_result_batch_independence_json_and_plot(cnn):
    images = random_images(3, seed=6)
    one = deepfool_spectrum(cnn, images, batch_size=1, steps=10)
    many = deepfool_spectrum(cnn, images, batch_size=3, steps=10)
    assert isinstance(one, DeepFoolResult)
    torch.testing.assert_close(one.perturbations, many.perturbations, atol=1e-5, rtol=0)
    assert torch.equal(one.success, many.success)
    assert one.mean_l2 == pytest.approx(many.mean_l2, abs=1e-5)
    torch.testing.assert_close(one.energy_db, many.energy_db, atol=1e-3, rtol=0)
    # The reported numbers follow from the perturbations.
    norms = one.perturbations.flatten(1).norm(dim=1)
    torch.testing.assert_close(one.l2_norms, norms)
    assert one.mean_l2 == pytest.approx(float(norms[one.success].mean()), rel=1e-6)
    assert one.success_rate == pytest.approx(float(one.success.float().mean()))
    torch.testing.assert_close(one.energy_db, dct_energy_db(one.perturbations).float(), atol=1e-4, rtol=0)
    data = json.loads(json.dumps(one.to_dict()))
    assert data["probe"] == "deepfool_spectrum"
    assert np.asarray(data["energy_db"]).shape == (32, 32)
    assert np.asarray(data["perturbations"]).shape == (3, 3, 32, 32)
    ax = one.plot()
    assert len(ax.images) == 1 and ax.images[0].get_array().shape == (32, 32)


@pytest.mark.slow
def test_deepfool_spectrum_with_labels_leaves_misclassified_images_out(vit):
    images = random_images(4, seed=7)
    with torch.no_grad():
        predictions = vit(images).argmax(dim=1)
    labels = predictions.clone()
    labels[0] = (labels[0] + 1) % 10
    result = deepfool_spectrum(vit, images, labels, steps=20)
    assert result.clean_correct.tolist() == [False, True, True, True]
    assert float(result.l2_norms[0]) == 0.0 and bool(result.success[0])
    assert result.success_rate == pytest.approx(float(result.success[1:].float().mean()))
    torch.testing.assert_close(
        result.energy_db, dct_energy_db(result.perturbations[1:]).float(), atol=1e-4, rtol=0
    )


@pytest.mark.slow
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_deepfool_spectrum_runs_on_every_family(family):
    classifier = FAMILIES[family]()
    result = deepfool_spectrum(classifier, random_images(2, seed=8), steps=3, candidates=3)
    assert result.perturbations.shape == (2, 3, 32, 32)
    assert result.energy_db.shape == (32, 32)
    with torch.no_grad():
        predictions = classifier(random_images(2, seed=8) + result.perturbations).argmax(dim=1)
    assert torch.all(predictions[result.success] != result.labels[result.success])


def test_deepfool_rejects_bad_arguments(vit):
    images = random_images(2)
    with pytest.raises(ValueError, match="candidates"):
        deepfool_spectrum(vit, images, candidates=1)
    with pytest.raises(ValueError, match="steps"):
        deepfool_spectrum(vit, images, steps=0)
    with pytest.raises(ValueError, match="overshoot"):
        deepfool_spectrum(vit, images, overshoot=-0.1)
    with pytest.raises(ValueError, match="gradients"):
        deepfool(vit, images, gradients="fast")
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        deepfool_spectrum(vit, images * 2)
    vit.train()
    try:
        with pytest.raises(ValueError, match="eval"):
            deepfool_spectrum(vit, images)
    finally:
        vit.eval()
