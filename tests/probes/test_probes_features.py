"""`feature_fourier` and `feature_variance` (Park & Kim 2022, Fig. 2a / 8 / 9): analytic spectra of a checkerboard and
a constant map, the official notebook's algorithm, a direct variance computation, token-grid reshaping, batch-size
independence, every model family, JSON and plots."""

import json
import math

import numpy as np
import pytest
import torch
from probe_models import FAMILIES, PREPROCESSING, alternet, random_images, transformers_vit
from torch import nn

from hf_vitrobust.models import Classifier
from hf_vitrobust.probes.feature_maps import spatial_feature_map
from hf_vitrobust.probes.feature_spectrum import LOG_AMPLITUDE_EPS, diagonal_indices, log_amplitude_diagonal
from hf_vitrobust.probes.features import feature_fourier, feature_variance

SIDE = 8
CHANNELS = 4


class _Map(nn.Module):
    """Outputs a fixed (C, SIDE, SIDE) map per image, scaled by the image's mean (so maps differ per image)."""

    def __init__(self, pattern: torch.Tensor):
        super().__init__()
        self.register_buffer("pattern", pattern)

    def forward(self, x):
        return self.pattern * (1.0 + x.mean(dim=(1, 2, 3)))[:, None, None, None]


class _KnownMaps(nn.Module):
    """A "network" whose layers output known maps: a constant, a checkerboard (frequency pi), a random map."""

    def __init__(self):
        super().__init__()
        rows, cols = torch.meshgrid(torch.arange(SIDE), torch.arange(SIDE), indexing="ij")
        checker = ((-1.0) ** (rows + cols)).expand(CHANNELS, SIDE, SIDE).clone()
        self.constant = _Map(torch.full((CHANNELS, SIDE, SIDE), 2.0))
        self.checker = _Map(checker)
        self.noise = _Map(torch.randn(CHANNELS, SIDE, SIDE, generator=torch.Generator().manual_seed(0)))
        self.head = nn.Linear(3, 10)

    def forward(self, x):
        maps = [self.constant(x), self.checker(x), self.noise(x)]
        return self.head(torch.stack([m.mean(dim=(1, 2, 3)) for m in maps], dim=1))


def _scale(images: torch.Tensor) -> torch.Tensor:
    """The factor `_Map` applies per image (the module sees normalised pixels)."""
    normalized = (images - 0.5) / 0.25
    return 1.0 + normalized.mean(dim=(1, 2, 3)).double()


@pytest.fixture(scope="module")
def known():
    return Classifier(_KnownMaps(), PREPROCESSING).eval()


def test_checkerboard_has_positive_and_constant_negative_delta_log_amplitude(known):
    images = random_images(3)
    result = feature_fourier(known, images, layers=["constant", "checker"])
    assert result.layers == ["constant", "checker"]
    scale = _scale(images)  # each image's amplitude factor
    # Constant c: all energy at frequency 0, |F(0)| = c * SIDE^2; zero elsewhere.
    constant_zero = torch.log(2.0 * scale * SIDE**2 + LOG_AMPLITUDE_EPS).mean()
    expected_constant = math.log(LOG_AMPLITUDE_EPS) - float(constant_zero)
    # Checkerboard: all energy at (pi, pi), |F| = SIDE^2 there; zero at frequency 0.
    expected_checker = float(torch.log(scale * SIDE**2 + LOG_AMPLITUDE_EPS).mean()) - math.log(
        LOG_AMPLITUDE_EPS
    )
    assert result.delta_log_amplitude[0] == pytest.approx(expected_constant, abs=1e-5)
    assert result.delta_log_amplitude[1] == pytest.approx(expected_checker, abs=1e-5)
    assert result.delta_log_amplitude[0] < -10 < 10 < result.delta_log_amplitude[1]
    assert result.frequencies[0] == [0.0, 0.25, 0.5, 0.75, 1.0]
    # The checkerboard's profile is flat (zero amplitude) until pi; the constant's drops right after 0.
    np.testing.assert_allclose(result.profiles[1][:-1], 0.0, atol=1e-12)
    np.testing.assert_allclose(result.profiles[0][1:], expected_constant, atol=1e-5)
    assert result.shapes == [[CHANNELS, SIDE, SIDE]] * 2


def _notebook_profile(maps: torch.Tensor) -> torch.Tensor:
    """The official fourier_analysis.ipynb: fft2, log(|F| + 1e-6), roll by half, mean over (images, channels),
    half diagonal from the centre, minus its first value."""
    spectrum = torch.log(torch.fft.fft2(maps).abs() + 1e-6)
    h, w = maps.shape[-2:]
    shifted = torch.roll(spectrum, shifts=(h // 2, w // 2), dims=(2, 3)).mean(dim=(0, 1))
    diagonal = shifted.diag()[h // 2 :]
    return diagonal - diagonal[0]


@pytest.mark.parametrize("side", [8, 7])
def test_profile_matches_the_official_notebook(side):
    maps = torch.randn(3, 5, side, side, dtype=torch.float64, generator=torch.Generator().manual_seed(side))
    ours = log_amplitude_diagonal(maps).mean(dim=0)
    ours = ours - ours[0]
    reference = _notebook_profile(maps)
    # Even sides: the notebook stops one bin before pi; we add the (pi, pi) corner. Odd sides: identical.
    torch.testing.assert_close(ours[: reference.numel()], reference, rtol=0, atol=1e-12)
    assert ours.numel() == reference.numel() + (1 if side % 2 == 0 else 0)
    _, _, freqs = diagonal_indices(side, side)
    assert freqs[-1].item() == pytest.approx(1.0 if side % 2 == 0 else 6 / 7)


def test_non_square_maps_walk_the_diagonal_on_both_axes():
    rows, cols, freqs = diagonal_indices(4, 8)
    assert rows.tolist() == [0, 1, 2] and cols.tolist() == [0, 2, 4]
    assert freqs.tolist() == [0.0, 0.5, 1.0]


def test_token_features_are_put_on_the_patch_grid(known):
    vit = transformers_vit()  # 32x32 images in 8x8 patches: CLS + 4x4 tokens
    maps = torch.randn(2, 6, 4, 4)
    tokens = maps.flatten(2).transpose(1, 2)  # (N, 16, 6), row-major patches
    cls = torch.randn(2, 1, 6)
    torch.testing.assert_close(spatial_feature_map(torch.cat([cls, tokens], 1), vit), maps)
    # Without a known patch size the grid follows the image's aspect ratio after the fewest prefix tokens.
    fine = torch.randn(2, 6, 8, 8)
    with_cls = torch.cat([cls, fine.flatten(2).transpose(1, 2)], 1)
    torch.testing.assert_close(spatial_feature_map(with_cls, known), fine)
    assert spatial_feature_map(maps, vit) is maps
    with pytest.raises(ValueError, match="expected a feature map"):
        spatial_feature_map(torch.randn(2, 6), vit, "pooled")


def test_variance_matches_a_direct_computation_on_vit_tokens():
    classifier = transformers_vit()
    images = random_images(5)
    result = feature_variance(classifier, images, batch_size=2)
    with torch.no_grad():
        hidden = classifier.feature_maps(images)
    expected = []
    for tokens in hidden.values():
        patches = tokens[:, 1:].double()  # drop CLS, (N, 16, dim)
        grid = patches.transpose(1, 2).reshape(5, -1, 4, 4)
        expected.append(float(grid.var(dim=(-1, -2)).mean()))
    np.testing.assert_allclose(result.variance, expected, rtol=1e-10)
    assert result.layers == list(hidden) and result.num_images == 5


def test_variance_of_known_maps(known):
    images = random_images(2)
    result = feature_variance(known, images, layers=["constant", "checker"])
    scale = _scale(images)
    # A +-s checkerboard over 64 positions: mean 0, unbiased variance s^2 * 64 / 63.
    assert result.variance[0] == pytest.approx(0.0, abs=1e-12)
    assert result.variance[1] == pytest.approx(float((scale**2).mean()) * 64 / 63, rel=1e-6)


def test_one_by_one_maps_have_no_frequency_or_variance():
    class Pooled(nn.Module):
        def __init__(self):
            super().__init__()
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.head = nn.Linear(3, 10)

        def forward(self, x):
            return self.head(self.pool(x).flatten(1))

    classifier = Classifier(Pooled(), PREPROCESSING).eval()
    fourier = feature_fourier(classifier, random_images(2), layers=["pool"])
    variance = feature_variance(classifier, random_images(2), layers=["pool"])
    assert math.isnan(fourier.delta_log_amplitude[0]) and math.isnan(variance.variance[0])
    assert fourier.to_dict()["delta_log_amplitude"] == [None]
    assert variance.to_dict()["variance"] == [None]


def test_results_do_not_depend_on_batch_size():
    # float64: log amplitudes of near-zero high frequencies magnify float32 kernels' batch-size rounding.
    classifier = alternet().double()
    images = random_images(5)
    one, many = (
        feature_fourier(classifier, images, batch_size=1),
        feature_fourier(classifier, images, batch_size=5),
    )
    for a, b in zip(one.profiles, many.profiles, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-8)
    one, many = (
        feature_variance(classifier, images, batch_size=1),
        feature_variance(classifier, images, batch_size=5),
    )
    np.testing.assert_allclose(one.variance, many.variance, rtol=1e-8)


@pytest.mark.slow
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_family(family):
    classifier = FAMILIES[family]()
    images = random_images(3)
    fourier = feature_fourier(classifier, images, batch_size=2)
    variance = feature_variance(classifier, images, batch_size=2)
    assert fourier.layers == variance.layers == classifier.layer_names()
    for shape, profile, freqs in zip(fourier.shapes, fourier.profiles, fourier.frequencies, strict=True):
        assert len(shape) == 3 and len(profile) == len(freqs) == min(shape[1:]) // 2 + 1
        assert profile[0] == 0.0
    assert all(v > 0 or math.isnan(v) for v in variance.variance)
    for result in (fourier, variance):
        data = json.loads(json.dumps(result.to_dict()))
        assert data["probe"] == result.probe_name() and data["num_images"] == 3
        ax = result.plot()
        assert len(ax.lines) == 1 and len(ax.lines[0].get_xdata()) == len(result.layers)
    profiles_ax = fourier.plot_profiles()
    assert len(profiles_ax.lines) == len(fourier.layers)


def test_bad_inputs(known):
    images = random_images(2)
    with pytest.raises(TypeError, match="not a single string"):
        feature_fourier(known, images, layers="checker")
    with pytest.raises(ValueError, match="layers is empty"):
        feature_variance(known, images, layers=[])
    with pytest.raises(ValueError, match="unknown layers"):
        feature_variance(known, images, layers=["nope"])
    with pytest.raises(ValueError, match="seed"):
        feature_fourier(known, images, seed=-1)
    with pytest.raises(ValueError, match="batch_size"):
        feature_fourier(known, images, batch_size=0)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        feature_fourier(known, images * 3)
