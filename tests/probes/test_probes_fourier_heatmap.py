"""The Fourier heat map (Yin et al. 2019): basis images, sign streams, the metric core and its evaluate module, and
the probe on an analytic low-pass model and on every tiny model family."""

import json
from pathlib import Path

import evaluate
import numpy as np
import pytest
import torch
from probe_models import FAMILIES, PREPROCESSING, random_images
from torch import nn

from hf_vitrobust.corruptions.fourier_basis import (
    add_fourier_noise,
    check_window,
    default_fourier_eps,
    fourier_basis,
    fourier_noise,
    fourier_signs,
    half_window_frequencies,
    window_frequencies,
)
from hf_vitrobust.data.samples import Sample
from hf_vitrobust.metrics.fourier_heatmap import fourier_error_map
from hf_vitrobust.models import Classifier
from hf_vitrobust.probes.fourier_heatmap import FourierHeatmapResult, fourier_heatmap

EVALUATE_MODULE = Path(__file__).parents[2] / "metrics" / "fourier_heatmap"


# ---------------------------------------------------------------------------------------------- basis images
@pytest.mark.parametrize("size", [(32, 32), (16, 24), (15, 15)])
def test_basis_is_real_unit_norm_with_dft_energy_exactly_at_plus_minus_frequency(size):
    height, width = size
    frequencies = window_frequencies(min(check_window(None, size), 9))
    basis = fourier_basis(frequencies, size, dtype=torch.float64)
    assert basis.shape == (len(frequencies), height, width) and not basis.is_complex()
    torch.testing.assert_close(
        basis.square().sum(dim=(1, 2)), torch.ones(len(frequencies), dtype=torch.float64)
    )
    spectrum = torch.fft.fft2(basis).abs()
    for (i, j), energy in zip(frequencies.tolist(), spectrum, strict=True):
        support = torch.zeros(height, width, dtype=torch.bool)
        support[i % height, j % width] = True
        support[-i % height, -j % width] = True
        assert energy[~support].max() < 1e-9
        # Parseval for the unnormalised DFT: sum |F|^2 = H W ||U||^2, all of it on the one or two bins.
        torch.testing.assert_close(
            energy[support].square().sum(), torch.tensor(height * width, dtype=torch.float64)
        )
        # Equal amplitude on both bins (a real image has a Hermitian spectrum).
        torch.testing.assert_close(energy[i % height, j % width], energy[-i % height, -j % width])


def test_basis_matches_the_reference_irfft_of_a_one_hot_half_spectrum():
    """gatheluck/FourierHeatmap builds U_ij as irfftn of a one-hot (H, W // 2 + 1) spectrum, L2-normalised."""
    size = 32
    frequencies = half_window_frequencies(31)
    spectra = torch.zeros(len(frequencies), size, size // 2 + 1, dtype=torch.float64)
    spectra[torch.arange(len(frequencies)), frequencies[:, 0] % size, frequencies[:, 1]] = 1.0
    reference = torch.fft.irfftn(spectra, s=(size, size), dim=(-2, -1))
    reference = reference / reference.norm(dim=(-2, -1), keepdim=True)
    torch.testing.assert_close(fourier_basis(frequencies, size, dtype=torch.float64), reference)


def test_mirror_frequency_gives_the_same_basis_signs_and_perturbed_images():
    frequencies = window_frequencies(9)
    assert torch.equal(fourier_basis(frequencies, 32), fourier_basis(-frequencies, 32))
    ids = torch.arange(len(frequencies)) * 7 + 3
    assert torch.equal(fourier_signs(5, ids, frequencies), fourier_signs(5, ids, -frequencies))
    images = random_images(4)
    assert torch.equal(fourier_noise(images, (2, -3), seed=1), fourier_noise(images, (-2, 3), seed=1))
    assert not torch.equal(fourier_noise(images, (2, -3), seed=1), fourier_noise(images, (2, 3), seed=1))


def test_perturbation_has_norm_eps_per_channel_and_signs_follow_the_sample_id():
    images = torch.full((3, 3, 32, 32), 0.5)
    perturbed = fourier_noise(images, (3, 5), eps=4.0, sample_ids=[10, 11, 12])
    delta = perturbed - images
    torch.testing.assert_close(delta.flatten(2).norm(dim=2), torch.full((3, 3), 4.0))
    basis = fourier_basis([[3, 5]], 32)[0]
    signs = (delta * basis).sum(dim=(2, 3)) / 4.0  # the sign of each channel
    torch.testing.assert_close(
        signs, fourier_signs(0, torch.tensor([10, 11, 12]), torch.tensor([[3, 5]] * 3))
    )
    # An image's signs depend on its id, not on its position or its batch.
    alone = fourier_noise(images[:1], (3, 5), eps=4.0, sample_ids=[12])
    assert torch.equal(alone[0], perturbed[2])
    # Clipping to [0, 1].
    clipped = add_fourier_noise(torch.ones(1, 3, 32, 32), basis[None], 40.0, torch.ones(1, 3))
    assert clipped.max() == 1.0 and clipped.min() == 0.0


def test_signs_are_balanced_and_independent_across_channels():
    ids = torch.arange(4000)
    signs = fourier_signs(0, ids, torch.tensor([[1, 2]]).expand(4000, 2))
    assert set(signs.unique().tolist()) == {-1.0, 1.0}
    assert signs.mean(dim=0).abs().max() < 0.06
    correlation = torch.corrcoef(signs.T)
    assert (correlation - torch.eye(3)).abs().max() < 0.06


def test_defaults_follow_the_published_protocol():
    assert default_fourier_eps(32) == 4.0 and default_fourier_eps(224) == 15.7
    assert default_fourier_eps(448) == pytest.approx(31.4)
    assert (
        check_window(None, (32, 32)) == 31 and check_window(None, 224) == 63 and check_window(None, 33) == 33
    )
    assert len(half_window_frequencies(31)) == (31 * 31 + 1) // 2
    with pytest.raises(ValueError, match="odd"):
        check_window(4, 32)
    with pytest.raises(ValueError, match="too wide"):
        check_window(33, 32)


# ---------------------------------------------------------------------------------------- metric core + evaluate
def test_error_map_averages_records_and_mirrors_missing_cells():
    result = fourier_error_map([0, 0, 1, 1, 1, -1], [0, 0, 1, 1, 1, 0], [1, 0, 1, 0, 0, 1], window=3)
    errors = result.as_array()
    assert errors[1, 1] == 0.5  # (0, 0)
    assert errors[2, 2] == pytest.approx(2 / 3) and errors[0, 0] == pytest.approx(
        2 / 3
    )  # (1, 1) and its mirror
    assert errors[0, 1] == 0.0 and errors[2, 1] == 0.0  # (-1, 0) and its mirror (1, 0)
    assert np.isnan(errors[0, 2]) and result.error_map[0][2] is None  # neither (-1, 1) nor (1, -1)
    assert result.mirrored[0][0] and not result.mirrored[2][2]
    assert result.num_samples[0][0] == 3 and result.frequencies == [-1, 0, 1]
    unmirrored = fourier_error_map([1, 1, 1], [1, 1, 1], [1, 0, 0], mirror=False)
    assert unmirrored.error_map[0][0] is None and unmirrored.error_map[2][2] == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="outside the window"):
        fourier_error_map([2], [0], [True], window=3)
    with pytest.raises(ValueError, match="booleans"):
        fourier_error_map([0], [0], [2])
    with pytest.raises(ValueError, match="lengths"):
        fourier_error_map([0, 1], [0], [True])


def test_evaluate_module_equals_the_core_over_batches():
    rng = np.random.default_rng(0)
    records = {
        "frequency_i": rng.integers(-2, 3, 60).tolist(),
        "frequency_j": rng.integers(0, 3, 60).tolist(),
        "correct": rng.random(60).round().astype(bool).tolist(),
    }
    module = evaluate.load(str(EVALUATE_MODULE))
    module.add_batch(**{key: values[:25] for key, values in records.items()})
    module.add_batch(**{key: values[25:] for key, values in records.items()})
    expected = fourier_error_map(*records.values(), window=5).to_dict()
    assert module.compute(window=5) == expected
    assert json.loads(json.dumps(expected)) == expected


# ------------------------------------------------------------------------------------ an analytic low-pass model
class LowPassLinear(nn.Module):
    """Two logits (s, -s) with s = <P z, w>: P the ideal low-pass keeping |i|, |j| <= cutoff, w a fixed random field
    of those low frequencies. It is blind to every higher frequency, and without clipping a perturbation eps U_ij
    with signs r moves s by (eps / std) sum_c r_c <U_ij, w> (P is an orthogonal projection and P w = w)."""

    def __init__(self, size: int = 32, cutoff: int = 1) -> None:
        super().__init__()
        k = torch.fft.fftfreq(size, 1.0 / size).abs()
        mask = ((k[:, None] <= cutoff) & (k[None, :] <= cutoff)).double()
        noise = torch.randn(size, size, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
        self.register_buffer("mask", mask)
        self.register_buffer("weight", torch.fft.ifft2(torch.fft.fft2(noise) * mask).real)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        low = torch.fft.ifft2(torch.fft.fft2(z.double()) * self.mask).real
        score = (low * self.weight).sum(dim=(1, 2, 3))
        return torch.stack((score, -score), dim=1).float()


def _grey_images(n: int) -> torch.Tensor:
    """Images in [0.45, 0.55]: a perturbation of norm 4 (amplitude <= 0.18) never clips."""
    coarse = torch.rand(n, 3, 4, 4, generator=torch.Generator().manual_seed(1))
    return 0.5 + 0.1 * (torch.nn.functional.interpolate(coarse, size=32, mode="bilinear") - 0.5)


@pytest.fixture(scope="module")
def lowpass():
    classifier = Classifier(LowPassLinear(), PREPROCESSING, name="lowpass").eval()
    images = _grey_images(16)
    labels = classifier(images).argmax(dim=1)  # clean error 0
    return classifier, images, labels


def _analytic_map(
    model: LowPassLinear, images: torch.Tensor, window: int, eps: float, seed: int
) -> np.ndarray:
    std = PREPROCESSING.std[0]
    z = (images.double() - 0.5) / std
    score = (z * model.weight).sum(dim=(1, 2, 3))  # z projected on w (w is low-pass)
    frequencies = window_frequencies(window)
    shifts = fourier_basis(frequencies, 32, dtype=torch.float64).mul(model.weight).sum(dim=(1, 2))
    n = len(images)
    pairs = frequencies.repeat_interleave(n, dim=0)
    signs = fourier_signs(seed, torch.arange(n).repeat(len(frequencies)), pairs).double().sum(dim=1)
    perturbed = score.repeat(len(frequencies)) + eps / std * signs * shifts.repeat_interleave(n)
    wrong = (perturbed > 0) != (score.repeat(len(frequencies)) > 0)
    return wrong.view(len(frequencies), n).double().mean(dim=1).view(window, window).numpy()


def test_map_of_a_low_pass_model_equals_the_analytic_map(lowpass):
    classifier, images, labels = lowpass
    result = fourier_heatmap(classifier, images, labels, window=7, seed=3, batch_size=13)
    expected = _analytic_map(classifier.module, images, 7, 4.0, 3)
    np.testing.assert_array_equal(result.error_map, expected)
    assert result.eps == 4.0 and result.clean_error == 0.0 and result.evaluated_cells == 25
    # Blind beyond the cut-off: no error at all; sensitive inside it.
    low = np.zeros((7, 7), dtype=bool)
    low[2:5, 2:5] = True
    assert np.all(result.error_map[~low] == 0.0)
    assert result.error_map[low].mean() > 0.3
    # The map is point symmetric but not transposition symmetric, so a wrong mirror would show.
    np.testing.assert_array_equal(result.error_map, result.error_map[::-1, ::-1])
    assert not np.array_equal(result.error_map, result.error_map.T)


def test_mirrored_half_equals_direct_computation_of_every_frequency(lowpass):
    classifier, images, labels = lowpass
    mirrored = fourier_heatmap(classifier, images, labels, window=7, seed=3)
    direct = fourier_heatmap(classifier, images, labels, window=7, seed=3, use_symmetry=False)
    assert direct.evaluated_cells == 49 and mirrored.evaluated_cells == 25
    np.testing.assert_array_equal(mirrored.error_map, direct.error_map)


def test_map_does_not_depend_on_batch_size_or_order(lowpass):
    classifier, images, labels = lowpass
    images, labels = images[:6], labels[:6]
    reference = fourier_heatmap(classifier, images, labels, window=5, batch_size=64)
    assert 0 < reference.error_map.max() < 1  # a map with something to get wrong
    for batch_size in (1, 5):
        np.testing.assert_array_equal(
            fourier_heatmap(classifier, images, labels, window=5, batch_size=batch_size).error_map,
            reference.error_map,
        )
    # A dataset keys each image's signs by its sample id: reversing the dataset leaves the map unchanged.
    samples = [
        Sample((image * 255).round().byte(), int(label), f"val/{k}.png")
        for k, (image, label) in enumerate(zip(images, labels, strict=True))
    ]
    forward = fourier_heatmap(classifier, samples, window=5, batch_size=4)
    backward = fourier_heatmap(classifier, samples[::-1], window=5, batch_size=11)
    assert forward.num_images == len(images)
    np.testing.assert_array_equal(forward.error_map, backward.error_map)


# --------------------------------------------------------------------------------------------- every family
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_runs_on_every_family(family):
    classifier = FAMILIES[family]()
    images = random_images(3)
    labels = classifier(images).argmax(dim=1)
    result = fourier_heatmap(classifier, images, labels, window=5, eps=12.0, batch_size=39)
    assert isinstance(result, FourierHeatmapResult) and result.error_map.shape == (5, 5)
    assert result.clean_error == 0.0 and np.all((result.error_map >= 0) & (result.error_map <= 1))
    assert result.frequencies == [-2, -1, 0, 1, 2] and result.evaluated_cells == 13
    small = fourier_heatmap(classifier, images, labels, window=5, eps=12.0, batch_size=4)
    np.testing.assert_allclose(small.error_map, result.error_map, atol=1e-5)
    data = result.to_dict()
    assert data["probe"] == "fourier_heatmap" and json.loads(json.dumps(data)) == data
    ax = result.plot()
    assert ax.get_xlabel().startswith("horizontal frequency") and ax.images[0].get_array().shape == (5, 5)
    assert ax.images[0].get_extent() == [-2.5, 2.5, 2.5, -2.5]


@torch.no_grad()
def test_probe_equals_a_one_pass_per_frequency_reference_loop():
    """An independent loop (gatheluck's irfftn basis, one frequency at a time, every cell of the window) with the
    same sign streams gives the probe's map, mirrored half included."""
    classifier = FAMILIES["timm_vit"]()
    images = random_images(4)
    labels = classifier(images).argmax(dim=1)
    result = fourier_heatmap(classifier, images, labels, window=5, eps=8.0, seed=2, batch_size=32)
    expected = np.zeros((5, 5))
    for i, j in window_frequencies(5).tolist():
        ci, cj = (i, j) if j > 0 or (j == 0 and i >= 0) else (-i, -j)
        spectrum = torch.zeros(32, 17, dtype=torch.float64)
        spectrum[ci % 32, cj] = 1.0
        basis = torch.fft.irfftn(spectrum, s=(32, 32))
        basis = (basis / basis.norm()).float()
        signs = fourier_signs(2, torch.arange(4), torch.tensor([[i, j]] * 4))
        noisy = (images + 8.0 * signs[:, :, None, None] * basis).clamp(0, 1)
        expected[i + 2, j + 2] = (classifier(noisy).argmax(dim=1) != labels).double().mean()
    assert 0 < expected.mean() < 1
    np.testing.assert_array_equal(result.error_map, expected)


def test_bad_inputs_fail_before_any_work(lowpass):
    classifier, images, labels = lowpass
    with pytest.raises(ValueError, match="odd"):
        fourier_heatmap(classifier, images, labels, window=6)
    with pytest.raises(ValueError, match="eps"):
        fourier_heatmap(classifier, images, labels, eps=-1.0)
    with pytest.raises(ValueError, match="needs labels"):
        fourier_heatmap(classifier, images)
    with pytest.raises(ValueError, match="too wide"):
        fourier_heatmap(classifier, images, labels, window=33)
    classifier.train()
    try:
        with pytest.raises(ValueError, match="training mode"):
            fourier_heatmap(classifier, images, labels)
    finally:
        classifier.eval()
