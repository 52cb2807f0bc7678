"""Noise corruptions (gaussian_noise, shot_noise, impulse_noise, speckle_noise) and the exact Poisson sampler.

"imagenet" profile: the `imagecorruptions` 1.1.2 package itself, on natural photos from scikit-image, compared by
mean SSIM / PSNR over seeds (the noise is random, so pixels cannot match). "cifar" profile: the parameter tables
of hendrycks/robustness ImageNet-C/create_c/make_cifar_c.py, and statistics against NumPy / scikit-image versions
of that file's functions. The noise itself is checked against its distribution on flat images.
"""

import numpy as np
import pytest
import skimage.data
import skimage.util
import torch
from PIL import Image
from reference_corruptions import assert_statistics_match, mean_ssim_psnr, reference_statistics
from scipy import stats

import hf_vitrobust.corruptions.noise  # noqa: F401  (registers the noise corruptions)
from hf_vitrobust.corruptions import corrupt
from hf_vitrobust.corruptions.noise import (
    GAUSSIAN_NOISE,
    IMPULSE_NOISE,
    MAX_TABLE_RATE,
    SHOT_NOISE,
    SPECKLE_NOISE,
    photon_counts,
    sample_poisson,
)
from hf_vitrobust.corruptions.randomness import uniform

NAMES = ("gaussian_noise", "shot_noise", "impulse_noise", "speckle_noise")
SEVERITIES = (1, 2, 3, 4, 5)
TABLES = {
    "gaussian_noise": GAUSSIAN_NOISE,
    "shot_noise": SHOT_NOISE,
    "impulse_noise": IMPULSE_NOISE,
    "speckle_noise": SPECKLE_NOISE,
}
SEEDS = range(3)
# Tolerances of the tighter fidelity check (SSIM, dB).
TIGHT_SSIM, TIGHT_PSNR_DB = 0.01, 0.2


def _photo(name: str, size: int) -> np.ndarray:
    """A scikit-image photo, centre-cropped to a square and resized to size x size, uint8 (H, W, 3)."""
    image = getattr(skimage.data, name)()
    rows, cols = image.shape[:2]
    keep = min(rows, cols)
    top, left = (rows - keep) // 2, (cols - keep) // 2
    image = image[top : top + keep, left : left + keep]
    return np.asarray(Image.fromarray(image).resize((size, size), Image.BICUBIC))


def _batch(photos: list[np.ndarray]) -> torch.Tensor:
    return torch.from_numpy(np.stack(photos)).permute(0, 3, 1, 2).contiguous()


@pytest.fixture(scope="module")
def photos() -> torch.Tensor:
    return _batch([_photo(name, 224) for name in ("astronaut", "chelsea", "coffee")])


@pytest.fixture(scope="module")
def cifar_photos() -> torch.Tensor:
    return _batch([_photo(name, 32) for name in ("astronaut", "chelsea", "coffee", "rocket")])


def _flat(value: float, size: int = 224, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    return torch.full((1, 3, size, size), value, dtype=dtype)


# ---------------------------------------------------------------------------------------------------------------
# the Poisson sampler


def test_poisson_mean_and_variance_on_a_grid_of_rates():
    rates = torch.tensor(
        [0.0, 0.3, 1.0, 4.0, 9.5, 9.999, 10.0, 11.0, 25.0, 60.0, 200.0, 500.0], dtype=torch.float64
    )
    per_rate = 100_000
    grid = (
        rates.view(1, -1, 1).expand(4, -1, per_rate // 4).contiguous()
    )  # 4 samples, 25k draws per rate each
    counts = sample_poisson(grid, 7, torch.arange(4), "test").permute(1, 0, 2).reshape(len(rates), -1)
    assert torch.equal(counts, counts.round()) and counts.min() >= 0
    for rate, draws in zip(rates.tolist(), counts, strict=True):
        if rate == 0:
            assert draws.eq(0).all()
            continue
        # Five standard errors of the sample mean and of the sample variance of Poisson(rate).
        mean_error = 5 * (rate / per_rate) ** 0.5
        variance_error = 5 * ((2 * rate**2 + rate) / per_rate) ** 0.5
        assert abs(draws.mean().item() - rate) <= mean_error, (rate, draws.mean().item())
        assert abs(draws.var().item() - rate) <= variance_error, (rate, draws.var().item())


def _binned_counts(draws: np.ndarray, rate: float) -> tuple[np.ndarray, np.ndarray]:
    """Observed counts and Poisson(rate) probabilities in bins: each k between the 1e-4 quantiles, and two tails."""
    low, high = int(stats.poisson.ppf(1e-4, rate)), int(stats.poisson.ppf(1 - 1e-4, rate))
    ks = np.arange(low, high + 1)
    observed = np.concatenate([[(draws < low).sum()], (draws[:, None] == ks).sum(0), [(draws > high).sum()]])
    expected = np.concatenate(
        [[stats.poisson.cdf(low - 1, rate)], stats.poisson.pmf(ks, rate), [stats.poisson.sf(high, rate)]]
    )
    keep = expected > 0
    return observed[keep], expected[keep]


def _total_variation(a: np.ndarray, b: np.ndarray) -> float:
    size = max(a.max(), b.max()) + 1
    return (
        0.5 * np.abs(np.bincount(a, minlength=size) / len(a) - np.bincount(b, minlength=size) / len(b)).sum()
    )


@pytest.mark.parametrize("rate", [2.5, 9.99, 10.0, 40.0, 500.0])
def test_poisson_distribution_matches_numpy(rate):
    draws_count = 200_000
    ours = sample_poisson(torch.full((2, draws_count // 2), rate), 3, torch.tensor([5, 9]), "test")
    ours = ours.flatten().numpy().astype(np.int64)
    observed, probabilities = _binned_counts(ours, rate)
    assert stats.chisquare(observed, probabilities * draws_count).pvalue > 1e-4, rate
    numpy_draws = np.random.default_rng(0).poisson(rate, draws_count)
    assert _total_variation(ours, numpy_draws) < 0.02, rate
    # The checks can fail: a rounded normal approximation of the same mean and variance is rejected.
    approximation = (
        np.rint(np.random.default_rng(1).normal(rate, rate**0.5, draws_count)).clip(0).astype(np.int64)
    )
    observed, probabilities = _binned_counts(approximation, rate)
    assert stats.chisquare(observed, probabilities * draws_count).pvalue < 1e-4, rate


def test_poisson_element_depends_only_on_its_own_rate_and_position():
    """Rejection rounds work on shrinking subsets; an element's draw must not depend on which others are pending."""
    rates = torch.linspace(0.0, 600.0, 60_000, dtype=torch.float64).view(2, -1)
    ids = torch.tensor([0, 1])
    reference = sample_poisson(rates, 0, ids, "test")
    changed = rates.clone()
    changed[:, ::2] = torch.flip(changed[:, ::2], dims=[1])  # other rates everywhere else
    again = sample_poisson(changed, 0, ids, "test")
    assert torch.equal(again[:, 1::2], reference[:, 1::2])
    assert not torch.equal(again[:, ::2], reference[:, ::2])
    assert not torch.equal(sample_poisson(rates, 1, ids, "test"), reference)


def _grid_intensities(dtype: torch.dtype, copies: int) -> torch.Tensor:
    """Every 8-bit level k / 255 (computed in `dtype`), `copies` times per sample, for 2 samples: (2, 256 * copies)."""
    levels = torch.arange(256, dtype=dtype) / 255.0
    return levels.repeat(2, copies)


@pytest.mark.parametrize("photons", [3.0, 60.0, 500.0])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_photon_counts_on_the_grid_are_scipys_inverse_cdf(photons, dtype):
    """The table inversion draws, for every 8-bit level and rates up to 500, scipy's Poisson quantile of the
    element's own uniform: exact inversion, element by element."""
    intensities = _grid_intensities(dtype, copies=40)
    ids = torch.tensor([4, 2**33 + 1])
    counts = photon_counts(intensities, photons, 11, ids, "test")
    u = uniform(11, ids, "test/inversion", tuple(intensities.shape[1:]), torch.float64)
    rates = intensities.double() * photons
    expected = stats.poisson.ppf(u.numpy(), rates.numpy())
    expected[rates.numpy() == 0] = 0
    assert counts.dtype == torch.float64
    np.testing.assert_array_equal(counts.numpy(), expected)


def test_photon_counts_agree_with_the_walk_below_rate_10_and_per_element():
    """On-grid intensities (table) and off-grid ones (walk and PTRS) mixed in one batch: below rate 10 both paths
    give the same counts; every element's count is the one it gets in a batch of its own kind; float32 input and
    its float64 copy give the same counts."""
    photons, ids = 25.0, torch.tensor([0, 9])
    on_grid = _grid_intensities(torch.float32, copies=20)
    table = photon_counts(on_grid, photons, 5, ids, "test")
    walk = sample_poisson(on_grid.double() * photons, 5, ids, "test")
    below_10 = on_grid.double() * photons < 10
    assert below_10.sum() > 1000 and torch.equal(table[below_10], walk[below_10])
    assert not torch.equal(table[~below_10], walk[~below_10])  # above 10: inversion here, PTRS there
    assert torch.equal(photon_counts(on_grid.double(), photons, 5, ids, "test"), table)

    mixed = on_grid.clone()
    mixed[:, ::3] += 1e-4  # off the grid: a third of the elements
    counts = photon_counts(mixed, photons, 5, ids, "test")
    kept = torch.ones_like(mixed, dtype=torch.bool)
    kept[:, ::3] = False
    assert torch.equal(counts[kept], table[kept])
    assert torch.equal(counts[~kept], sample_poisson(mixed.double() * photons, 5, ids, "test")[~kept])


def test_photon_counts_past_the_table_range_use_the_general_sampler():
    intensities, ids = _grid_intensities(torch.float32, copies=2), torch.tensor([1, 2])
    photons = MAX_TABLE_RATE + 50.0
    assert torch.equal(
        photon_counts(intensities, photons, 0, ids, "test"),
        sample_poisson(intensities.double() * photons, 0, ids, "test"),
    )


# ---------------------------------------------------------------------------------------------------------------
# "imagenet" profile against imagecorruptions


@pytest.mark.parametrize("name", NAMES)
def test_statistics_match_imagecorruptions(name, photos):
    for severity in SEVERITIES:
        ours = np.array(
            [mean_ssim_psnr(photos, corrupt(photos, name, severity, seed=seed)) for seed in SEEDS]
        )
        reference = reference_statistics(photos, name, severity, SEEDS)
        assert_statistics_match(ours, reference)
        # Tighter than the rule: on 3 x 150k noise values per seed, both sides vary far less than the
        # floors, and a faithful sampler lands within a few thousandths of SSIM and hundredths of a dB.
        assert_statistics_match(ours, reference, ssim_floor=TIGHT_SSIM, psnr_floor=TIGHT_PSNR_DB)


def test_fidelity_checks_can_fail(photos):
    """The tolerance separates severities: each corruption's severity 1 misses the reference's severity 2."""
    for name in NAMES:
        ours = np.array([mean_ssim_psnr(photos, corrupt(photos, name, 1, seed=seed)) for seed in SEEDS])
        reference = reference_statistics(photos, name, 2, SEEDS)
        with pytest.raises(AssertionError):
            assert_statistics_match(ours, reference)


def test_gaussian_and_speckle_noise_are_normal():
    """On a flat grey image (no clipping): gaussian adds N(0, c); speckle adds x * N(0, c)."""
    grey = _flat(0.5)
    for name, scale in (
        ("gaussian_noise", GAUSSIAN_NOISE["imagenet"][0]),
        ("speckle_noise", 0.5 * SPECKLE_NOISE["imagenet"][0]),
    ):
        noise = ((corrupt(grey, name, 1, seed=4) - grey) / scale).flatten().numpy()
        assert abs(noise.mean()) < 0.02 and abs(noise.std() - 1) < 0.01, name
        assert stats.kstest(noise, "norm").pvalue > 1e-4, name
        # Independent across channels: the correlation between the red and green noise is near zero.
        channels = noise.reshape(3, -1)
        assert abs(np.corrcoef(channels[0], channels[1])[0, 1]) < 0.02, name


def test_shot_noise_is_poisson_over_c():
    value, scale = 0.5, SHOT_NOISE["imagenet"][0]
    counts = (corrupt(_flat(value), "shot_noise", 1, seed=2) * scale).flatten()
    assert torch.allclose(counts, counts.round(), atol=1e-9)
    assert abs(counts.mean().item() - value * scale) < 0.1 and abs(counts.var().item() - value * scale) < 0.6


@pytest.mark.parametrize("profile", ["imagenet", "cifar"])
def test_shot_noise_is_the_photon_counts_over_c_on_every_route(photos, profile):
    """The table route (counts looked up per bucket, values per count), the uint8 route and the general sampler
    all give clip(photon_counts / c, 0, 1): on grid intensities in float32 and float64, and off the grid."""
    ids = torch.tensor([4, 0, 2**33])
    on_grid = photos[:, :, :40, :48].float() / 255.0
    off_grid = on_grid + 1e-3 * torch.rand(on_grid.shape, generator=torch.Generator().manual_seed(0))
    for severity in SEVERITIES:
        scale = SHOT_NOISE[profile][severity - 1]
        for images in (on_grid, on_grid.double(), off_grid):
            counts = photon_counts(images, scale, 3, ids, "shot_noise/poisson")
            expected = (counts / scale).clamp(0.0, 1.0).to(images.dtype)
            ours = corrupt(images, "shot_noise", severity, seed=3, sample_ids=ids, profile=profile)
            assert torch.equal(ours, expected), (severity, images.dtype)
        as_uint8 = corrupt(
            photos[:, :, :40, :48], "shot_noise", severity, seed=3, sample_ids=ids, profile=profile
        )
        # np.uint8(clip(counts / c, 0, 1) * 255), with counts / c rounded to float32 as the float route does
        expected = (photon_counts(on_grid, scale, 3, ids, "shot_noise/poisson") / scale).clamp(0, 1).float()
        assert torch.equal(as_uint8, (expected * 255).int().to(torch.uint8)), severity


def test_impulse_noise_as_skimage_random_noise():
    """Each value is flipped with probability c (per element, not per pixel), half to salt (1), half to pepper (0);
    the others are untouched. The fractions agree with skimage's own random_noise(mode="s&p")."""
    amount = IMPULSE_NOISE["imagenet"][4]
    grey = _flat(0.5)
    out = corrupt(grey, "impulse_noise", 5, seed=1)[0]
    assert set(out.unique().tolist()) == {0.0, 0.5, 1.0}
    flipped = out != 0.5
    reference = skimage.util.random_noise(np.full((224, 224, 3), 0.5), mode="s&p", amount=amount, rng=0)
    reference_flipped = reference != 0.5
    error = 5 * (amount * (1 - amount) / flipped.numel()) ** 0.5
    assert abs(flipped.double().mean().item() - amount) < error
    assert abs(flipped.double().mean().item() - reference_flipped.mean()) < 2 * error
    salt_fraction = (out == 1).sum().item() / flipped.sum().item()
    assert (
        abs(salt_fraction - 0.5) < 0.01 and abs((reference == 1).sum() / reference_flipped.sum() - 0.5) < 0.01
    )
    all_channels = flipped.all(0).double().mean().item()
    assert abs(all_channels - amount**3) < 0.002 and abs(reference_flipped.all(-1).mean() - amount**3) < 0.002


# ---------------------------------------------------------------------------------------------------------------
# "cifar" profile against make_cifar_c.py


def test_cifar_tables_match_make_cifar_c():
    # hendrycks/robustness ImageNet-C/create_c/make_cifar_c.py, the `c = [...]` line of each function:
    assert GAUSSIAN_NOISE["cifar"] == (0.04, 0.06, 0.08, 0.09, 0.10)  # line 131, gaussian_noise
    assert SHOT_NOISE["cifar"] == (500, 250, 100, 75, 50)  # line 138, shot_noise
    assert IMPULSE_NOISE["cifar"] == (0.01, 0.02, 0.03, 0.05, 0.07)  # line 145, impulse_noise
    assert SPECKLE_NOISE["cifar"] == (0.06, 0.1, 0.12, 0.16, 0.2)  # line 152, speckle_noise
    # imagecorruptions 1.1.2 corruptions.py, for comparison:
    assert GAUSSIAN_NOISE["imagenet"] == (0.08, 0.12, 0.18, 0.26, 0.38)
    assert SHOT_NOISE["imagenet"] == (60, 25, 12, 5, 3)
    assert IMPULSE_NOISE["imagenet"] == (0.03, 0.06, 0.09, 0.17, 0.27)
    assert SPECKLE_NOISE["imagenet"] == (0.15, 0.2, 0.35, 0.45, 0.6)


def _cifar_reference(image: np.ndarray, name: str, severity: int, rng: np.random.Generator) -> np.ndarray:
    """make_cifar_c.py's function `name` on a uint8 (32, 32, 3) image, drawing from `rng`, then np.uint8."""
    x = image / 255.0
    if name == "gaussian_noise":
        out = np.clip(x + rng.normal(size=x.shape, scale=(0.04, 0.06, 0.08, 0.09, 0.10)[severity - 1]), 0, 1)
    elif name == "shot_noise":
        c = (500, 250, 100, 75, 50)[severity - 1]
        out = np.clip(rng.poisson(x * c) / c, 0, 1)
    elif name == "impulse_noise":
        amount = (0.01, 0.02, 0.03, 0.05, 0.07)[severity - 1]
        out = np.clip(skimage.util.random_noise(x, mode="s&p", amount=amount, rng=rng), 0, 1)
    else:
        out = np.clip(
            x + x * rng.normal(size=x.shape, scale=(0.06, 0.1, 0.12, 0.16, 0.2)[severity - 1]), 0, 1
        )
    return np.uint8(out * 255)


@pytest.mark.parametrize("name", NAMES)
def test_cifar_profile_statistics_match_make_cifar_c(name, cifar_photos):
    seeds = range(6)
    for severity in SEVERITIES:
        ours = corrupt(cifar_photos, name, severity)  # 32x32: the "cifar" profile by default
        assert torch.equal(ours, corrupt(cifar_photos, name, severity, profile="cifar"))
        assert not torch.equal(ours, corrupt(cifar_photos, name, severity, profile="imagenet"))
        ours_rows = np.array(
            [mean_ssim_psnr(cifar_photos, corrupt(cifar_photos, name, severity, seed=s)) for s in seeds]
        )
        reference_rows = []
        for seed in seeds:
            rng = np.random.default_rng(seed)
            expected = [
                _cifar_reference(image.permute(1, 2, 0).numpy(), name, severity, rng)
                for image in cifar_photos
            ]
            reference_rows.append(mean_ssim_psnr(cifar_photos, _batch(expected)))
        assert_statistics_match(ours_rows, np.array(reference_rows))


# ---------------------------------------------------------------------------------------------------------------
# dtype, determinism, batches, devices


def test_corruptions_draw_unrelated_noise():
    """Distinct streams: gaussian and speckle noise on the same seed are uncorrelated."""
    grey = _flat(0.5)
    gaussian = corrupt(grey, "gaussian_noise", 1, seed=0) - grey
    speckle = corrupt(grey, "speckle_noise", 1, seed=0) - grey
    assert abs(np.corrcoef(gaussian.flatten().numpy(), speckle.flatten().numpy())[0, 1]) < 0.02
