"""Conformance of the feature-map probes (`feature_fourier`, `feature_variance`) with Park & Kim's notebooks.

The references below transcribe `fourier_analysis.ipynb` and `featuremap_variance.ipynb` of xxxnell/how-do-vits-work
(commit 9571ff1): the cell that builds `fourier_latents` (`fourier`: log(|fft2| + 1e-6); `shift`: torch.roll by
(int(h/2), int(w/2)); mean over images and channels; `diag()[int(h/2):]`; minus the first point), the ViT reshape
"b (h w) c -> b c h w" after dropping the class token (`latent[:, 1:]`), and `latent.var(dim=[-1, -2]).mean(dim=[0,
1])`. Their `blocks` split each timm ViT block into `Residual(norm1, attn)` and `Residual(norm2, mlp)` after a
`PatchEmbed` (the embedding), or list every ResNet block after the stem: our `layers="residual-sums"`.
"""

import functools
import math

import numpy as np
import pytest
import timm
import torch
import transformers
from einops import rearrange
from probe_models import FAMILIES, PREPROCESSING, alternet, random_images, timm_vit, transformers_vit
from timm.layers import GroupNormAct
from torch import nn

from hf_vitrobust.models import AlterNetConfig, Classifier
from hf_vitrobust.models.residual_units import find_residual_sums
from hf_vitrobust.probes.feature_maps import RESIDUAL_SUMS
from hf_vitrobust.probes.feature_spectrum import (
    FREQUENCY_BINS,
    NOTEBOOK_BINS,
    NYQUIST_BINS,
    diagonal_indices,
    log_amplitude_diagonal,
)
from hf_vitrobust.probes.features import feature_fourier, feature_variance
from hf_vitrobust.probes.spec import PROBES, ProbeNotApplicable


# ------------------------------------------------------------------------------------------- notebook transcription
def notebook_fourier_latent(latent: torch.Tensor) -> torch.Tensor:
    """`fourier_analysis.ipynb`: one latent (b, c, h, w) or ViT tokens without CLS (b, n, c) -> its relative log
    amplitude along the half diagonal of the shifted spectrum."""
    if len(latent.shape) == 3:
        n = latent.shape[1]
        h, w = int(math.sqrt(n)), int(math.sqrt(n))
        latent = rearrange(latent, "b (h w) c -> b c h w", h=h, w=w)
    else:
        h, w = latent.shape[2:]
    f = torch.fft.fft2(latent)
    f = f.abs() + 1e-6
    f = f.log()
    f = torch.roll(f, shifts=(int(h / 2), int(w / 2)), dims=(2, 3)).mean(dim=(0, 1))
    f = f.diag()[int(h / 2) :]
    return f - f[0]


def notebook_variance(latent: torch.Tensor) -> torch.Tensor:
    """`featuremap_variance.ipynb`: one latent (as above) -> its feature map variance."""
    if len(latent.shape) == 3:
        n = latent.shape[1]
        h, w = int(math.sqrt(n)), int(math.sqrt(n))
        latent = rearrange(latent, "b (h w) c -> b c h w", h=h, w=w)
    return latent.var(dim=[-1, -2]).mean(dim=[0, 1])


def _profile(maps: torch.Tensor, bins: str) -> torch.Tensor:
    mean = log_amplitude_diagonal(maps, bins).mean(dim=0)
    return mean - mean[0]


@pytest.mark.parametrize("side", [4, 7, 8, 9, 14])
def test_notebook_bins_match_the_notebook(side):
    maps = torch.randn(3, 5, side, side, generator=torch.Generator().manual_seed(side), dtype=torch.float64)
    reference = notebook_fourier_latent(maps)
    ours = _profile(maps, NOTEBOOK_BINS)
    torch.testing.assert_close(ours, reference, rtol=0, atol=1e-12)
    rows, cols, freqs = diagonal_indices(side, side, NOTEBOOK_BINS)
    assert rows.tolist() == cols.tolist() == list(range(math.ceil(side / 2)))
    # Even sides stop at k = h/2 - 1, one short of the Nyquist corner; odd sides at h // 2, as "nyquist" does.
    assert rows[-1] == (side // 2 - 1 if side % 2 == 0 else side // 2)
    assert freqs[-1] == pytest.approx(2 * int(rows[-1]) / side)
    nyquist = _profile(maps, NYQUIST_BINS)
    if side % 2:
        assert torch.equal(nyquist, ours)
    else:
        assert len(nyquist) == len(ours) + 1 and torch.equal(nyquist[:-1], ours)
        assert diagonal_indices(side, side)[0][-1] == side // 2


def test_white_noise_nyquist_bin_reads_half_log_two_lower():
    """The zero and (pi, pi) DFT coefficients of real white noise are real Gaussians, the others complex ones:
    E log|X| is lower by log(2) / 2 ~ 0.347 for a real one, so Δ at the Nyquist corner is ~0 and Δ one bin
    before it ~ +0.347."""
    maps = torch.randn(64, 64, 16, 16, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    nyquist = float(_profile(maps, NYQUIST_BINS)[-1])
    notebook = float(_profile(maps, NOTEBOOK_BINS)[-1])
    assert nyquist == pytest.approx(0.0, abs=0.06)
    assert notebook == pytest.approx(math.log(2) / 2, abs=0.06)
    assert nyquist - notebook == pytest.approx(-math.log(2) / 2, abs=0.06)
    assert 0.28 < notebook - nyquist < 0.41


def test_bad_frequency_bins():
    with pytest.raises(ValueError, match="frequency_bins must be one of"):
        feature_fourier(timm_vit(), random_images(1), frequency_bins="nyquist-ish")
    with pytest.raises(ValueError, match="frequency_bins"):
        diagonal_indices(8, 8, "corner")
    assert FREQUENCY_BINS == ("nyquist", "park-kim-notebook")


def test_default_is_the_nyquist_protocol_unchanged():
    classifier, images = transformers_vit(), random_images(3)
    default = feature_fourier(classifier, images, batch_size=2)
    explicit = feature_fourier(classifier, images, batch_size=3, frequency_bins=NYQUIST_BINS)
    assert default.frequency_bins == "nyquist" and default.to_dict()["frequency_bins"] == "nyquist"
    assert default.layers == classifier.layer_names()
    assert default.profiles == explicit.profiles
    # Maps of 4 x 4 patches: k = 0, 1, 2, the last at exactly pi.
    assert all(freqs == [0.0, 0.5, 1.0] for freqs in default.frequencies)


# ------------------------------------------------------------------------------------ end-to-end against notebook
def test_probe_on_residual_sums_equals_the_notebook_on_its_blocks():
    """timm ViT: the notebook's `blocks` (PatchEmbed, then Residual(norm1, attn), Residual(norm2, mlp) per block)
    run by hand, CLS dropped, through the transcribed analysis, against our probe with the authors' options."""
    classifier, images = timm_vit(), random_images(4)
    model = classifier.module
    with torch.no_grad():
        x = model.patch_embed(classifier._normalize(images))
        x = torch.cat((model.cls_token.expand(x.shape[0], -1, -1), x), dim=1)
        x = model.pos_drop(x + model.pos_embed)
        latents = [x]
        for block in model.blocks:
            x = block.attn(block.norm1(x)) + x
            latents.append(x)
            x = block.mlp(block.norm2(x)) + x
            latents.append(x)
    latents = [latent[:, 1:] for latent in latents]
    fourier = feature_fourier(
        classifier, images, layers=RESIDUAL_SUMS, frequency_bins=NOTEBOOK_BINS, batch_size=3
    )
    variance = feature_variance(classifier, images, layers=RESIDUAL_SUMS, batch_size=3)
    names = ["blocks.0:input", "blocks.0:msa", "blocks.0:mlp", "blocks.1:msa", "blocks.1:mlp"]
    assert fourier.layers == variance.layers == names
    for latent, profile, delta, var in zip(
        latents, fourier.profiles, fourier.delta_log_amplitude, variance.variance, strict=True
    ):
        reference = notebook_fourier_latent(latent.double())
        assert profile == pytest.approx(reference.tolist(), abs=1e-9)
        assert delta == pytest.approx(float(reference[-1]), abs=1e-9)
        assert var == pytest.approx(float(notebook_variance(latent.double())), rel=1e-9)


def test_residual_sums_are_the_block_sums():
    """transformers ViT: the attention sum is hidden_states + attention(layernorm_before(hidden_states)), the MLP
    sum the layer output; the embedding is hidden_states.0."""
    classifier, images = transformers_vit(), random_images(2)
    with torch.no_grad():
        sums = classifier.residual_sum_maps(images)
        hidden = classifier.feature_maps(images)
        layer = classifier.module.vit.layers[0]
        h0 = hidden["hidden_states.0"]
        attention_sum = layer.attention(layer.layernorm_before(h0))[0] + h0
    assert list(sums)[:3] == ["vit.layers.0:input", "vit.layers.0:msa", "vit.layers.0:mlp"]
    assert torch.equal(sums["vit.layers.0:input"], h0)
    torch.testing.assert_close(sums["vit.layers.0:msa"], attention_sum, rtol=0, atol=1e-6)
    assert torch.equal(sums["vit.layers.0:mlp"], hidden["hidden_states.1"])
    assert torch.equal(sums["vit.layers.1:mlp"], hidden["hidden_states.2"])


# --------------------------------------------------------------------------------------- constructed alternation
class _GridFilter(nn.Module):
    """On ViT tokens (N, 1 + g*g, C): a circular [1, 2, 1] / 4 binomial blur of the patch grid (`high_pass`: gain *
    (x - blur x)); the class token maps to zero."""

    def __init__(self, grid: int, high_pass: float | None = None) -> None:
        super().__init__()
        self.grid, self.high_pass = grid, high_pass

    def forward(self, tokens: torch.Tensor, **_: object) -> torch.Tensor:
        patches = tokens[:, 1:].transpose(1, 2).reshape(tokens.shape[0], -1, self.grid, self.grid)
        blurred = patches
        for dim in (2, 3):
            blurred = (blurred.roll(1, dim) + 2 * blurred + blurred.roll(-1, dim)) / 4
        out = blurred if self.high_pass is None else self.high_pass * (patches - blurred)
        return torch.cat((torch.zeros_like(tokens[:, :1]), out.flatten(2).transpose(1, 2)), dim=1)


def test_alternation_blur_attention_high_pass_mlp():
    """Blocks x + blur(x) (the 'attention') and x + 2 (x - blur x) (the 'MLP'): per channel the spectrum is
    multiplied by g = 1 + b or 1 + 2 (1 - b), b(w) = cos^2(w1/2) cos^2(w2/2), so each sum shifts Δ at the last
    frequency w by exactly log g(w) - log g(0): down after every attention sum, up after every MLP sum."""
    torch.manual_seed(0)
    grid, depth = 8, 3
    module = timm.create_model(
        "vit_tiny_patch16_224", pretrained=False, img_size=32, patch_size=4, embed_dim=16, depth=depth,
        num_heads=2, num_classes=10,
    )  # fmt: skip
    for block in module.blocks:
        block.norm1, block.norm2 = nn.Identity(), nn.Identity()
        block.attn, block.mlp = _GridFilter(grid), _GridFilter(grid, high_pass=2.0)
    classifier = Classifier(module, PREPROCESSING, name="toy-alternation").eval()
    images = random_images(4)
    for bins, last_k in ((NYQUIST_BINS, 4), (NOTEBOOK_BINS, 3)):
        result = feature_fourier(classifier, images, layers=RESIDUAL_SUMS, frequency_bins=bins)
        assert [name.split(":")[1] for name in result.layers] == ["input"] + ["msa", "mlp"] * depth
        blur = math.cos(math.pi * last_k / grid) ** 4  # b at w = (2 pi k / 8, 2 pi k / 8)
        steps = torch.tensor(result.delta_log_amplitude).diff()
        expected = torch.tensor([math.log(1 + blur) - math.log(2), math.log(1 + 2 * (1 - blur))] * depth)
        torch.testing.assert_close(steps.double(), expected.double(), rtol=0, atol=1e-3)
        assert (steps[0::2] < -0.6).all() and (steps[1::2] > 1.0).all()
    # Per-block outputs (today's default granularity) see only the net effect, never the fall.
    per_block = feature_fourier(classifier, images)
    assert len(per_block.layers) == depth and (torch.tensor(per_block.delta_log_amplitude).diff() > 0).all()


# ------------------------------------------------------------------------------------------- every named family
def _deit() -> Classifier:
    config = transformers.DeiTConfig(
        image_size=32, patch_size=8, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=64, num_labels=10,
    )  # fmt: skip
    return Classifier(transformers.DeiTForImageClassification(config), PREPROCESSING, name="deit").eval()


def _swin() -> Classifier:
    config = transformers.SwinConfig(
        image_size=32,
        patch_size=4,
        embed_dim=16,
        depths=[2, 1],
        num_heads=[1, 2],
        window_size=4,
        num_labels=10,
    )
    return Classifier(transformers.SwinForImageClassification(config), PREPROCESSING, name="swin").eval()


def _bit() -> Classifier:
    config = transformers.BitConfig(
        embedding_size=16, hidden_sizes=[32, 64], depths=[2, 1], layer_type="preactivation", num_groups=4,
        num_labels=10,
    )  # fmt: skip
    return Classifier(transformers.BitForImageClassification(config), PREPROCESSING, name="bit").eval()


def _timm_swin() -> Classifier:
    module = timm.create_model(
        "swin_tiny_patch4_window7_224", pretrained=False, img_size=32, window_size=4, embed_dim=16,
        depths=(2, 1), num_heads=(1, 2), num_classes=10,
    )  # fmt: skip
    return Classifier(module, PREPROCESSING, name="timm-swin").eval()


def _timm_pit() -> Classifier:
    module = timm.models.pit.PoolingVisionTransformer(
        img_size=32, patch_size=4, stride=2, base_dims=[8, 8], depth=[2, 1], heads=[1, 2], mlp_ratio=2,
        num_classes=10,
    )  # fmt: skip
    return Classifier(module, PREPROCESSING, name="timm-pit").eval()


def _timm_bit() -> Classifier:
    module = timm.models.resnetv2.ResNetV2(
        layers=(2, 1), channels=(32, 64), stem_chs=16, num_classes=10,
        norm_layer=functools.partial(GroupNormAct, num_groups=4),
    )  # fmt: skip
    return Classifier(module, PREPROCESSING, name="timm-bit").eval()


def _alternet_kinds() -> list[str]:
    config = AlterNetConfig.from_preset("alternet-tiny")
    kinds = []
    for depth, attention in zip(config.depths, config.attention_depths, strict=True):
        kinds += ["conv"] * (depth - 2 * attention) + ["conv", "msa"] * attention
    return kinds


# builder, expected kinds after the embedding, expected (C, h, w) of the embedding and of the last sum.
CASES = {
    "transformers_vit": (transformers_vit, ["msa", "mlp"] * 2, [32, 4, 4], [32, 4, 4]),
    "timm_vit": (timm_vit, ["msa", "mlp"] * 2, [32, 4, 4], [32, 4, 4]),
    "timm_cnn": (FAMILIES["timm_cnn"], ["conv"] * 8, [64, 8, 8], [512, 1, 1]),
    "alternet": (alternet, _alternet_kinds(), None, None),
    "transformers_deit": (_deit, ["msa", "mlp"] * 2, [32, 4, 4], [32, 4, 4]),
    "transformers_swin": (_swin, ["msa", "mlp"] * 3, [16, 8, 8], [32, 4, 4]),
    "transformers_bit": (_bit, ["conv"] * 3, [16, 8, 8], [64, 4, 4]),
    "timm_swin": (_timm_swin, ["msa", "mlp"] * 3, [16, 8, 8], [32, 4, 4]),
    "timm_pit": (_timm_pit, ["msa", "mlp"] * 3, [8, 15, 15], [16, 8, 8]),
    "timm_bit": (_timm_bit, ["conv"] * 3, [16, 8, 8], [64, 4, 4]),
}


@pytest.mark.parametrize("family", sorted(CASES))
def test_every_family_has_its_residual_sums(family):
    build, kinds, first_shape, last_shape = CASES[family]
    torch.manual_seed(0)
    classifier = build()
    sums = classifier.residual_sums()
    assert [s.kind for s in sums] == ["embedding", *kinds]
    assert [s.index for s in sums[1:]] == sorted(s.index for s in sums[1:])
    assert len({s.name for s in sums}) == len(sums)
    if "msa" in kinds and "conv" not in kinds:  # ViT-style: two sums per block, attention first
        assert all(
            a.block == m.block and a.index == m.index for a, m in zip(sums[1::2], sums[2::2], strict=True)
        )
    images = random_images(2)
    fourier = feature_fourier(classifier, images, layers=RESIDUAL_SUMS, frequency_bins=NOTEBOOK_BINS)
    variance = feature_variance(classifier, images, layers=RESIDUAL_SUMS)
    assert fourier.layers == variance.layers == [s.name for s in sums]
    assert fourier.shapes == variance.shapes
    if first_shape is not None:
        assert fourier.shapes[0] == first_shape and fourier.shapes[-1] == last_shape
    for shape, delta, var in zip(fourier.shapes, fourier.delta_log_amplitude, variance.variance, strict=True):
        assert math.isfinite(delta) == (min(shape[1:]) > 2)
        assert math.isfinite(var) == (shape[1] * shape[2] > 1)
        assert not math.isfinite(var) or var > 0


def test_residual_sums_errors():
    plain = Classifier(
        nn.Sequential(nn.Conv2d(3, 4, 3), nn.Flatten(), nn.LazyLinear(10)), PREPROCESSING, name="plain"
    )
    with pytest.raises(ValueError, match="no residual blocks"):
        find_residual_sums(plain.module)
    with pytest.raises(ProbeNotApplicable, match="no known residual sums"):
        PROBES["feature_fourier"].applicable_fn(plain, {"layers": RESIDUAL_SUMS})
    with pytest.raises(TypeError, match="not a single string"):
        feature_variance(timm_vit(), random_images(1), layers="residual_sums")


# ------------------------------------------------------------------------------------------------- runner task
@pytest.mark.parametrize("probe", ["feature_fourier", "feature_variance"])
def test_runner_chunks_merge_to_the_one_call_result(probe):
    classifier, images = alternet(), random_images(5)
    params = {"layers": RESIDUAL_SUMS}
    if probe == "feature_fourier":
        params["frequency_bins"] = NOTEBOOK_BINS
    task = PROBES[probe]
    task.applicable_fn(classifier, task.check_params(params))
    ids = torch.arange(5)
    partials = [
        task.run(classifier, images[part], None, ids[part], 0, params) for part in (slice(0, 3), slice(3, 5))
    ]
    merged = task.merge(partials)
    reference = (feature_fourier if probe == "feature_fourier" else feature_variance)(
        classifier, images, **params
    ).to_dict()
    # The merged dict adds the intervals over images and the per-layer sums of squares behind them.
    # Both keep each image's value per layer (Δ log amplitude, variance) for paired comparisons and findings.
    extra = {
        "intervals",
        "per_image",
        "delta_square_sum" if probe == "feature_fourier" else "variance_square_sum",
    }
    assert merged.keys() == reference.keys() | extra
    assert merged["per_image"]["keys"] == [0, 1, 2, 3, 4]
    assert merged["layers"] == reference["layers"] == [s.name for s in classifier.residual_sums()]
    assert merged["num_images"] == 5
    key = "delta_log_amplitude" if probe == "feature_fourier" else "variance"
    assert merged[key] == pytest.approx(reference[key], rel=1e-9, abs=1e-12)
    if (
        probe == "feature_variance"
    ):  # the one-call variance is the mean of the images' variances of the chunks
        per_image = np.asarray(merged["per_image"]["variance"])
        assert per_image.shape == (5, len(reference["layers"]))
        assert per_image.mean(axis=0) == pytest.approx(reference["variance"], rel=1e-9, abs=1e-12)
    if probe == "feature_fourier":
        assert merged["frequency_bins"] == NOTEBOOK_BINS
        flat = [value for profile in merged["profiles"] for value in profile]
        assert flat == pytest.approx(
            [v for profile in reference["profiles"] for v in profile], rel=1e-9, abs=1e-12
        )
    # CKA reads the same points (the block structure of Park & Kim's multi-stage models is at this granularity).
    cka = PROBES["cka"].run(classifier, images, None, ids, 0, {"layers": RESIDUAL_SUMS})
    assert cka["layers"] == merged["layers"] and cka["shapes"] == merged["shapes"]
