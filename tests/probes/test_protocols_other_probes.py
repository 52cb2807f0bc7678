"""Conformance of the Fourier heat map, Grad-CAM and CKA with the code their papers used.

* Fourier heat map (Paul & Chen, Fig. 6): robustness-vit `analysis/fourier_heatmap/README.md` points at
  gatheluck/FourierHeatmap. The references below transcribe its v0.2.0 (1b4ef0f): `fhmap/fourier/basis.py`
  (`get_spectrum`, `spectrum_to_basis`), `fhmap/fourier/noise.py` (`AddFourierNoise`), `fhmap/fourier/heatmap.py`
  (`eval_fourier_heatmap`, `create_fourier_heatmap_from_error_matrix`) and `fhmap/__init__.py`
  (`calc_errors`, `eval_mean_errors`); the eps table of its README.
* Grad-CAM (Paul & Chen, Fig. 5): robustness-vit `analysis/attention_maps/CAMs.ipynb` (its target layers, its
  `reshape_transform`, the true class as target) with the `grad-cam` release of its time, 1.2.6
  (jacobgil/pytorch-grad-cam 88df248, `pytorch_grad_cam/base_cam.py`, `grad_cam.py`).
* CKA: Park & Kim released no CKA code (how-do-vits-work has none); the reference is Kornblith's
  `center_gram` / `cka` of google-research `representation_similarity/Demo.ipynb` (U-centring of Szekely & Rizzo
  for the debiased estimate), a different formulation from the Song et al. HSIC_1 that test_probes_similarity.py
  checks against.
"""

from functools import partial

import cv2
import numpy as np
import pytest
import timm
import torch
import torch.fft
from probe_models import FAMILIES, random_images
from timm.models.resnetv2 import ResNetV2

from hf_vitrobust.corruptions.fourier_basis import (
    add_fourier_noise,
    check_window,
    default_fourier_eps,
    fourier_basis,
    fourier_signs,
    max_window,
)
from hf_vitrobust.models import Classifier, Preprocessing
from hf_vitrobust.probes.feature_maps import spatial_feature_map
from hf_vitrobust.probes.fourier_heatmap import fourier_heatmap
from hf_vitrobust.probes.gradcam import gradcam
from hf_vitrobust.probes.similarity import feature_similarity, linear_cka

# --- gatheluck/FourierHeatmap v0.2.0, transcribed -------------------------------------------------------------


def _fhmap_indices(height: int, ignore_edge_size: int) -> torch.Tensor:
    """`get_spectrum(height, height // 2 + 1, e, e, low_center=True)`'s flattened one-hot positions, (rows, cols):
    the index rolled by half so that row r holds the vertical frequency r - H / 2, the edges dropped."""
    width = height // 2 + 1
    total = height * width
    indices = torch.arange(total)
    indices = torch.cat([indices[total // 2 :], indices[: total // 2]]).view(height, width)
    if ignore_edge_size:
        indices = indices[ignore_edge_size:-ignore_edge_size, :-ignore_edge_size]
    return indices


def _fhmap_spectrum(height: int, position: int) -> torch.Tensor:
    """The one-hot half spectrum (H, H // 2 + 1) that `get_spectrum` yields for a flattened position."""
    width = height // 2 + 1
    return (
        torch.nn.functional.one_hot(torch.tensor(position), num_classes=height * width)
        .view(height, width)
        .float()
    )


def _fhmap_frequency(height: int, position: int) -> tuple[int, int]:
    """The (i, j) of a one-hot position: row a is frequency a, or a - H from H / 2 on; column b is j = b."""
    a, b = divmod(position, height // 2 + 1)
    return (a - height if a >= height // 2 else a, b)


def _fhmap_basis(spectrum: torch.Tensor) -> torch.Tensor:
    """`spectrum_to_basis(spectrum, l2_normalize=True)`: irfftn to (H, H), divided by its L2 norm."""
    side = spectrum.size(-2)
    basis = torch.fft.irfftn(spectrum, s=(side, side), dim=(-2, -1))
    return basis / basis.norm(dim=(-2, -1))[None, None]


def _fhmap_from_error_matrix(error_matrix: torch.Tensor) -> torch.Tensor:
    """`create_fourier_heatmap_from_error_matrix`: drop the first row and the last column, mirror about the origin."""
    right = error_matrix[1:, :-1]
    left = torch.flip(right, (0, 1))
    return torch.cat([left[:, :-1], right], dim=1)


def _fhmap_noise(x: torch.Tensor, scaled_basis: torch.Tensor, signs: torch.Tensor) -> torch.Tensor:
    """`AddFourierNoise.__call__` on one image (3, H, W), its per-channel signs r given instead of drawn from
    Python's `random.randrange(-1, 2, 2)`."""
    noise = scaled_basis.unsqueeze(0).repeat(3, 1, 1) * signs.view(3, 1, 1)
    return torch.clamp(x + noise, min=0.0, max=1.0)


@pytest.mark.parametrize(
    ("height", "ignore_edge_size", "step"), [(32, 0, 1), (224, 80, 8)], ids=["32px-all", "224px-sampled"]
)
def test_every_cell_of_the_map_is_the_reference_basis_at_its_frequency(height, ignore_edge_size, step):
    """The reference's map cell (row r, column c) perturbs with the irfftn basis of the spectrum its error matrix
    puts there; ours perturbs cell (r, c) at (i, j) = (r - K, c - K). Both are the unit-norm
    cos(2 pi (i m + j n) / H) up to float32 rounding: all 31 x 31 cells at 32 px; at 224 px (the central 63 x 63,
    e = 80) every 8th row and column plus the centre lines and the last row and column."""
    positions = _fhmap_indices(height, ignore_edge_size)
    index_map = _fhmap_from_error_matrix(
        positions.double()
    ).long()  # the one-hot position behind each map cell
    window = index_map.shape[0]
    assert index_map.shape == (window, window) and window == height - 2 * ignore_edge_size - 1
    half = (window - 1) // 2
    lines = sorted(set(range(0, window, step)) | {half - 1, half, half + 1, window - 1})
    cells = torch.tensor([(r, c) for r in lines for c in lines])
    ours = fourier_basis(cells - half, height, dtype=torch.float64)
    worst = 0.0
    for k, (r, c) in enumerate(cells.tolist()):
        theirs = _fhmap_basis(_fhmap_spectrum(height, int(index_map[r, c]))).double()
        worst = max(worst, float((ours[k] - theirs).abs().max()))
    assert worst < 1e-6
    # The orientation: the reference's right half holds horizontal frequency j >= 0, rows grow with i; the left
    # half and the top of the centre column are mirrors (-i, -j), the same cosine.
    assert _fhmap_frequency(height, int(index_map[half + 1, half + 2])) == (1, 2)
    assert _fhmap_frequency(height, int(index_map[half - 1, half - 2])) == (1, 2)
    assert _fhmap_frequency(height, int(index_map[half - 3, half])) in ((-3, 0), (3, 0))


def test_window_and_eps_defaults_are_the_references():
    """The reference's map side is H - 2 e - 1 (e = ignore_edge_size): 31 at 32 px with e = 0, the central 63 with
    e = 80 at 224 px (Yin et al.'s ImageNet window), 223 with e = 0; eps 4.0 (CIFAR-10) and 15.7 (ImageNet), its
    README's table."""
    assert check_window(None, 32) == 32 - 0 - 1 == 31
    assert check_window(None, 224) == 224 - 2 * 80 - 1 == 63
    assert max_window(224) == 224 - 1
    assert default_fourier_eps(32) == 4.0
    assert default_fourier_eps(224) == 15.7
    # Other sizes (which the reference refuses: its transform only knows 32 and 224) keep the per-pixel amplitude.
    assert default_fourier_eps(448) == pytest.approx(2 * 15.7)


def test_perturbation_is_add_fourier_noise_on_unnormalised_pixels():
    """x~ = clamp(x + r eps U_ij, 0, 1) per channel on ToTensor pixels (before Normalize), eps times the unit-norm
    basis: `AddFourierNoise` with `spectrum_to_basis(...) * eps`."""
    images = random_images(3, seed=4)
    frequency = torch.tensor([[3, -5]])
    eps = 4.0
    signs = fourier_signs(0, torch.arange(3), frequency.expand(3, 2))
    basis = fourier_basis(frequency, 32).expand(3, 32, 32)
    ours = add_fourier_noise(images, basis, eps, signs)
    position = (32 - 3) * (32 // 2 + 1) + 5  # one-hot at (i, j) = (-3, 5): the same basis image as (3, -5)
    assert _fhmap_frequency(32, position) == (-3, 5)
    scaled = _fhmap_basis(_fhmap_spectrum(32, position)) * eps
    theirs = torch.stack([_fhmap_noise(images[n], scaled, signs[n]) for n in range(3)])
    torch.testing.assert_close(ours, theirs, atol=1e-6, rtol=0)
    assert torch.linalg.vector_norm(ours - images) > 0  # the perturbation is not a no-op
    assert bool(((ours == 0) | (ours == 1)).any())  # ... and large enough to be clipped somewhere


def _reference_wrong(classifier, images, labels, eps, ignore_edge_size, seed):
    """`eval_fourier_heatmap`'s loop on the classifier's module: per spectrum of `get_spectrum`, noise added before
    Normalize(mean, std), top-1 wrong or not per image; the signs are the ones our probe draws for that image and
    frequency. Returns (spectra, N) booleans."""
    height = images.shape[-1]
    positions = _fhmap_indices(height, ignore_edge_size).flatten().tolist()
    mean, std = classifier.mean.view(1, 3, 1, 1), classifier.std.view(1, 3, 1, 1)
    ids = torch.arange(images.shape[0])
    wrong = []
    with torch.no_grad():
        for position in positions:
            scaled = _fhmap_basis(_fhmap_spectrum(height, position)) * eps
            frequency = torch.tensor([_fhmap_frequency(height, position)])
            signs = fourier_signs(seed, ids, frequency.expand(len(ids), 2))
            noisy = torch.stack([_fhmap_noise(images[n], scaled, signs[n]) for n in range(len(ids))])
            wrong.append(classifier.module((noisy - mean) / std).argmax(dim=1) != labels)
    return torch.stack(wrong)


def _reference_map(wrong, height, ignore_edge_size, batch_size):
    """`calc_errors` (percent wrong of each batch of the unshuffled loader) averaged over the batches by
    `eval_mean_errors`, the error matrix mirrored by `create_fourier_heatmap_from_error_matrix`; as a fraction."""
    batches = [wrong[:, start : start + batch_size] for start in range(0, wrong.shape[1], batch_size)]
    percent = torch.stack([batch.float().sum(dim=1) * 100.0 / batch.shape[1] for batch in batches]).mean(
        dim=0
    )
    rows, cols = height - 2 * ignore_edge_size, height // 2 + 1 - ignore_edge_size
    return _fhmap_from_error_matrix(percent.view(rows, cols)).double().numpy() / 100.0


def test_heat_map_equals_the_reference_evaluation_given_the_same_signs():
    """The whole probe against `eval_fourier_heatmap` transcribed, on a tiny ViT at 32 px with eps 4 and the central
    7 x 7 frequencies (ignore_edge_size 12): the same error at every cell when the reference's batches are equal.
    Its value is the mean of per-batch error rates, ours the fraction of all images: with unequal batches (4 and
    2 of 6 images) they differ, a documented difference."""
    classifier = FAMILIES["timm_vit"](seed=2)
    images = random_images(6, seed=7)
    with torch.no_grad():
        labels = classifier(images).argmax(dim=1)
    labels[::3] = (labels[::3] + 1) % 10  # some clean errors too
    ours = fourier_heatmap(classifier, images, labels, window=7, eps=4.0, seed=3, batch_size=16)
    wrong = _reference_wrong(classifier, images, labels, 4.0, 12, seed=3)
    theirs = _reference_map(wrong, 32, 12, batch_size=3)
    assert ours.error_map.shape == theirs.shape == (7, 7)
    np.testing.assert_allclose(ours.error_map, theirs, atol=1e-12)
    assert len(np.unique(ours.error_map)) > 2  # frequency-dependent: the test compares real maps
    assert not np.allclose(_reference_map(wrong, 32, 12, batch_size=4), theirs)


# --- Grad-CAM as CAMs.ipynb with grad-cam 1.2.6 ------------------------------------------------------------------


def _grad_cam_1_2_6(module, target_layer, inputs, targets, reshape_transform=None):
    """grad-cam 1.2.6 `BaseCAM.forward` + `GradCAM.get_cam_weights` on a normalised input batch: the target layer's
    output A and the gradient of sum_n y_n[target_n], both through `reshape_transform`; weights = spatial mean of
    the gradient; cam = max(sum_k w_k A_k, 0); per image cv2.resize to the input, then (x - min) / max."""
    captured = []
    handle = target_layer.register_forward_hook(lambda _m, _i, output: captured.append(output))
    try:
        with torch.enable_grad():
            output = module(inputs)
            loss = sum(output[n, int(t)] for n, t in enumerate(targets))
            (grad,) = torch.autograd.grad(loss, captured[0])
    finally:
        handle.remove()
    activations, grads = captured[0].detach(), grad
    if reshape_transform is not None:
        activations, grads = reshape_transform(activations), reshape_transform(grads)
    activations, grads = activations.numpy(), grads.numpy()
    weights = np.mean(grads, axis=(2, 3))
    cam = np.maximum((weights[:, :, None, None] * activations).sum(axis=1), 0)
    result = []
    for img in cam:
        img = cv2.resize(img, inputs.shape[-2:][::-1])
        img = img - np.min(img)
        result.append(img / np.max(img))
    return np.float32(result)


def _notebook_reshape_transform(height, width):
    """CAMs.ipynb's `reshape_transform` (14 x 14 there): drop token 0, patches on the grid, channels first."""

    def transform(tensor):
        result = tensor[:, 1:, :].reshape(tensor.size(0), height, width, tensor.size(2))
        return result.transpose(2, 3).transpose(1, 2)

    return transform


def _tiny_bit() -> Classifier:
    """A BiT-like timm ResNetV2 (StdConv, GroupNorm, pre-activation, one block per stage) at 64 px, whose last stage
    is 2 x 2, with the notebook's mean = std = 0.5."""
    torch.manual_seed(0)
    module = ResNetV2(
        layers=[1, 1, 1, 1],
        channels=(32, 32, 32, 32),
        num_classes=10,
        stem_chs=16,
        stem_type="fixed",
        conv_layer=timm.layers.StdConv2d,
        norm_layer=partial(timm.layers.GroupNormAct, num_groups=8),
    )
    return Classifier(module, Preprocessing(input_size=64, mean=(0.5,) * 3, std=(0.5,) * 3)).eval()


def test_bit_gradcam_is_the_notebooks_at_stages_minus_1_blocks_minus_1():
    """CAMs.ipynb: `target_layer = bit_model.stages[-1].blocks[-1]`, the true class as `target_category`. Our
    default layer is `stages.3`, whose output is that block's, and the maps equal grad-cam 1.2.6's there."""
    classifier = _tiny_bit()
    images = torch.nn.functional.interpolate(random_images(3, seed=5), size=64, mode="bilinear")
    labels = torch.tensor([1, 4, 9])
    result = gradcam(classifier, images, labels)
    assert result.module_name == "stages.3" and result.target_source == "labels"
    assert result.target_classes.tolist() == labels.tolist()
    module = classifier.module
    expected = _grad_cam_1_2_6(module, module.stages[-1].blocks[-1], (images - 0.5) / 0.5, labels)
    assert expected.shape == (3, 64, 64) and float(np.std(expected)) > 0.05  # real, non-constant maps
    np.testing.assert_allclose(result.cams.numpy(), expected, atol=1e-5)


def test_vit_gradcam_is_the_notebooks_at_blocks_minus_1_norm1():
    """CAMs.ipynb: `target_layer = vit_model.blocks[-1].norm1` with its `reshape_transform` (CLS dropped, patches
    row-major on the grid), the true class as target; the maps equal grad-cam 1.2.6's (resize, then min-max)."""
    base = FAMILIES["timm_vit"]()
    classifier = Classifier(base.module, Preprocessing(input_size=32, mean=(0.5,) * 3, std=(0.5,) * 3)).eval()
    images = random_images(3, seed=6)
    labels = torch.tensor([0, 5, 8])
    result = gradcam(classifier, images, labels)
    assert result.module_name == "blocks.1.norm1" and result.target_source == "labels"
    module = classifier.module
    expected = _grad_cam_1_2_6(
        module, module.blocks[-1].norm1, (images - 0.5) / 0.5, labels, _notebook_reshape_transform(4, 4)
    )
    assert float(np.std(expected)) > 0.05
    np.testing.assert_allclose(result.cams.numpy(), expected, atol=1e-5)


# --- CKA against Kornblith's U-centred debiased CKA ------------------------------------------------------------


def _kornblith_center_gram(gram: np.ndarray, unbiased: bool) -> np.ndarray:
    """google-research representation_similarity `center_gram`: plain double centring, or with `unbiased` the
    U-centring (zero diagonal, sums over n - 2, correction over 2 (n - 1), zero diagonal again)."""
    gram = gram.copy()
    n = gram.shape[0]
    if unbiased:
        np.fill_diagonal(gram, 0)
        means = np.sum(gram, 0, dtype=np.float64) / (n - 2)
        means -= np.sum(means) / (2 * (n - 1))
        gram -= means[:, None]
        gram -= means[None, :]
        np.fill_diagonal(gram, 0)
    else:
        means = np.mean(gram, 0, dtype=np.float64)
        means -= np.mean(means) / 2
        gram -= means[:, None]
        gram -= means[None, :]
    return gram


def _kornblith_cka(x: np.ndarray, y: np.ndarray, debiased: bool) -> float:
    """`cka(gram_linear(x), gram_linear(y), debiased)`: <K~, L~>_F / (||K~||_F ||L~||_F)."""
    x, y = x.reshape(len(x), -1), y.reshape(len(y), -1)
    gram_x = _kornblith_center_gram(x @ x.T, debiased)
    gram_y = _kornblith_center_gram(y @ y.T, debiased)
    return float(gram_x.ravel() @ gram_y.ravel() / (np.linalg.norm(gram_x) * np.linalg.norm(gram_y)))


@pytest.mark.parametrize("unbiased", [False, True])
def test_linear_cka_is_kornblith_cka(unbiased):
    generator = torch.Generator().manual_seed(11)
    x = torch.randn(9, 6, generator=generator, dtype=torch.float64)
    y = x @ torch.randn(6, 4, generator=generator, dtype=torch.float64) + 0.7 * torch.randn(
        9, 4, generator=generator, dtype=torch.float64
    )
    expected = _kornblith_cka(x.numpy(), y.numpy(), debiased=unbiased)
    assert 0.05 < abs(expected) < 0.999
    assert linear_cka(x, y, unbiased=unbiased) == pytest.approx(expected, abs=1e-12)


def test_full_batch_probe_is_kornblith_debiased_cka_of_the_flattened_feature_maps():
    """With at most `minibatch_size` images, the probe's CKA between any two layers is Kornblith's debiased linear
    CKA of their flattened (N, C, h, w) feature maps."""
    classifier = FAMILIES["timm_cnn"]()
    images = random_images(10, seed=8)
    result = feature_similarity(classifier, images, minibatch_size=16)
    layers = result.layers
    assert result.other_layers == layers and len(layers) == 5
    with torch.no_grad():
        maps = classifier.feature_maps(images, layers)
    flat = [spatial_feature_map(maps[name], classifier, name).double().numpy() for name in layers]
    expected = np.array([[_kornblith_cka(a, b, debiased=True) for b in flat] for a in flat])
    np.testing.assert_allclose(np.asarray(result.cka, dtype=np.float64), expected, atol=1e-9)
    assert expected[0, 3] < 0.5  # distant layers differ: the comparison is not between near-identical maps
