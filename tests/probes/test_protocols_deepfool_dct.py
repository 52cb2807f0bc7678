"""DeepFool DCT spectrum protocols: our unnormalised DCT and Paul & Chen's notebook spectrum against torch_dct (the
package their notebook `analysis/spectral_decomposition/Disc_Regions.ipynb` uses), the unchanged orthonormal
default, and the row-0 / column-0 relation between the two normalisations."""

import json
import math

import numpy as np
import pytest
import torch
import torch_dct  # the reference: a missing torch_dct must fail these tests, not skip them
from probe_models import random_images, transformers_vit

from hf_vitrobust.probes.deepfool import deepfool_energy_sum, deepfool_spectrum
from hf_vitrobust.probes.spec import get_probe
from hf_vitrobust.probes.spectra import SPECTRA, dct2, dct_energy_db, dct_energy_sum, dct_matrix

SHAPES = [(3, 2, 8, 8), (4, 3, 7, 9), (2, 3, 32, 32)]


def _perturbations(shape, seed=0, dtype=torch.float64):
    generator = torch.Generator().manual_seed(seed)
    return (0.05 * torch.randn(shape, generator=generator, dtype=torch.float64)).to(dtype)


def _notebook_energy(pixel_deltas: torch.Tensor) -> np.ndarray:
    """The notebook's `compute_avg_energy`, transcribed, on deltas of its [-1, 1] inputs (2 x pixel deltas)."""
    deltas = (2.0 * pixel_deltas).numpy()
    deltas_dct = torch_dct.dct_2d(torch.from_numpy(deltas))  # Change basis to DCT for example
    return 10 * np.log10((deltas_dct**2).sum(dim=1).mean(dim=0).numpy())


def _old_orthonormal_energy(perturbations: torch.Tensor) -> torch.Tensor:
    """The orthonormal code path before the spectrum option, written out from the DCT-II definition."""
    h, w = perturbations.shape[-2:]

    def matrix(n):
        k = torch.arange(n, dtype=torch.float64)[:, None]
        i = torch.arange(n, dtype=torch.float64)[None, :]
        m = torch.cos(math.pi * (2 * i + 1) * k / (2 * n)) * math.sqrt(2 / n)
        m[0] /= math.sqrt(2)
        return m

    coefficients = matrix(h) @ perturbations.double() @ matrix(w).T
    return 10.0 * torch.log10(coefficients.square().sum(dim=1).mean(dim=0))


@pytest.mark.parametrize("shape", SHAPES)
def test_unnormalised_and_orthonormal_dct2_match_torch_dct(shape):
    x = _perturbations(shape, seed=1)
    torch.testing.assert_close(dct2(x, norm=None), torch_dct.dct_2d(x), rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(dct2(x), torch_dct.dct_2d(x, norm="ortho"), rtol=1e-10, atol=1e-12)
    x32 = x.float()
    ours = dct2(x32, norm=None)
    assert ours.dtype == torch.float32
    torch.testing.assert_close(ours, torch_dct.dct_2d(x32), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("shape", SHAPES)
def test_notebook_spectrum_matches_torch_dct_transcription(shape):
    x = _perturbations(shape, seed=2)
    ours = dct_energy_db(x, spectrum="paul-chen-notebook")
    assert ours.shape == shape[-2:] and ours.dtype == torch.float64
    np.testing.assert_allclose(ours.numpy(), _notebook_energy(x), rtol=0, atol=1e-9)
    # float32 deltas, as the notebook's (foolbox on float32 models)
    np.testing.assert_allclose(
        dct_energy_db(x.float(), spectrum="paul-chen-notebook").numpy(),
        _notebook_energy(x.float()),
        rtol=0,
        atol=1e-3,
    )
    total = dct_energy_sum(x, spectrum="paul-chen-notebook")
    torch.testing.assert_close(10 * torch.log10(total / shape[0]), ours, rtol=0, atol=1e-9)


@pytest.mark.parametrize("shape", SHAPES)
def test_default_spectrum_is_the_unchanged_orthonormal_one(shape):
    x = _perturbations(shape, seed=3)
    default = dct_energy_db(x)
    torch.testing.assert_close(default, _old_orthonormal_energy(x), rtol=0, atol=1e-9)
    assert torch.equal(default, dct_energy_db(x, spectrum="orthonormal"))
    # Parseval: the orthonormal spectrum sums to the mean squared L2 norm.
    mean_energy = x.flatten(1).square().sum(dim=1).mean()
    torch.testing.assert_close((10 ** (default / 10)).sum(), mean_energy, rtol=1e-10, atol=0)
    torch.testing.assert_close(dct_energy_sum(x), x.shape[0] * 10 ** (default / 10), rtol=1e-10, atol=0)


@pytest.mark.parametrize("shape", SHAPES)
def test_row_and_column_zero_differ_by_an_extra_factor_two_per_zero_index(shape):
    x = _perturbations(shape, seed=4)
    h, w = shape[-2:]
    # Per axis: unnormalised = orthonormal * sqrt(2N) for k >= 1, * sqrt(4N) for k = 0.
    for n in (h, w):
        ratio = dct_matrix(n, dtype=torch.float64, norm=None) / dct_matrix(n, dtype=torch.float64)
        expected = torch.full((n,), math.sqrt(2 * n), dtype=torch.float64)
        expected[0] = math.sqrt(4 * n)
        torch.testing.assert_close(ratio, expected[:, None].expand(n, n), rtol=1e-12, atol=0)
    # 2D squared coefficients: 4HW, times 2 on row 0 and on column 0 (8HW), times 4 at (0, 0) (16HW).
    factor = torch.full((h, w), 4.0 * h * w, dtype=torch.float64)
    factor[0, :] *= 2
    factor[:, 0] *= 2
    torch.testing.assert_close(dct2(x, norm=None).square(), dct2(x).square() * factor, rtol=1e-9, atol=1e-15)
    # In dB, notebook minus orthonormal: 10 log10(16 HW) (4HW and the [-1, 1] input factor 2 squared), plus
    # 3.01 dB on row 0 and on column 0 and 6.02 dB at (0, 0): not a constant.
    difference = dct_energy_db(x, spectrum="paul-chen-notebook") - dct_energy_db(x)
    offset = 10 * math.log10(16 * h * w)
    step = 10 * math.log10(2)
    expected_db = torch.full((h, w), offset, dtype=torch.float64)
    expected_db[0, :] += step
    expected_db[:, 0] += step
    torch.testing.assert_close(difference, expected_db, rtol=0, atol=1e-9)
    assert float(difference[0, 0] - difference[1, 1]) == pytest.approx(2 * step, abs=1e-9)
    assert float(difference[0, 1] - difference[1, 1]) == pytest.approx(step, abs=1e-9)


def test_bad_spectrum_or_norm_raises_naming_the_valid_ones():
    x = _perturbations((2, 3, 8, 8))
    for call in (dct_energy_db, dct_energy_sum):
        with pytest.raises(
            ValueError, match=r"spectrum must be one of .*'orthonormal'.*'paul-chen-notebook'"
        ):
            call(x, spectrum="torch_dct")
    with pytest.raises(ValueError, match="norm must be one of"):
        dct2(x, norm="forward")
    with pytest.raises(ValueError, match="paul-chen-notebook"):
        deepfool_spectrum(transformers_vit(), random_images(2), spectrum="unnormalised")
    assert SPECTRA == ("orthonormal", "paul-chen-notebook")


def test_deepfool_spectrum_option_end_to_end_and_suite_params():
    vit = transformers_vit()
    images = random_images(4, seed=7)
    with torch.no_grad():
        labels = vit(images).argmax(dim=1)
    labels[0] = (labels[0] + 1) % 10  # misclassified: foolbox (and we) leave it unperturbed
    default = deepfool_spectrum(vit, images, labels, steps=3)
    notebook = deepfool_spectrum(vit, images, labels, steps=3, spectrum="paul-chen-notebook")
    assert default.spectrum == "orthonormal" and notebook.spectrum == "paul-chen-notebook"
    assert torch.equal(default.perturbations, notebook.perturbations)
    assert default.success_rate == notebook.success_rate and default.mean_l2 == notebook.mean_l2
    assert float(default.l2_norms[0]) == 0.0
    # Default: orthonormal over the correctly classified images; notebook: its protocol over every image.
    torch.testing.assert_close(default.energy_db, dct_energy_db(default.perturbations[1:]).float())
    np.testing.assert_allclose(
        notebook.energy_db.numpy(), _notebook_energy(notebook.perturbations), atol=1e-3
    )
    for result in (default, notebook):
        energy, count = deepfool_energy_sum(result.perturbations, result.clean_correct, result.spectrum)
        assert count == (3 if result is default else 4)
        torch.testing.assert_close(10 * torch.log10(energy / count).float(), result.energy_db)
    assert json.loads(json.dumps(notebook.to_dict()))["spectrum"] == "paul-chen-notebook"
    # The suite's `params:` of the "deepfool" probe are keyword arguments of deepfool_spectrum.
    task = get_probe("deepfool")
    assert task.probe is deepfool_spectrum and "spectrum" in task.accepted_params
    assert task.check_params({"spectrum": "paul-chen-notebook"})["spectrum"] == "paul-chen-notebook"
