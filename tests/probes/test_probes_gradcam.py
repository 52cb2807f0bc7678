"""Grad-CAM through the grad-cam package: the token reshape, the adapter-side target layers, a reference
computation of Selvaraju et al.'s Eq. 1-2, localisation on a model that reads one quadrant, and the runs on every
probe family without side effects on the model."""

import json
import sys

import numpy as np
import pytest
import timm
import torch
from probe_models import FAMILIES, PREPROCESSING, random_images
from torch import nn
from transformers import DeiTConfig, DeiTForImageClassificationWithTeacher

from hf_vitrobust.models import Classifier, Preprocessing
from hf_vitrobust.models.cam_targets import (
    TokenLayout,
    cam_target,
    head_reads_class_token,
    layer_tap,
    token_layout,
)
from hf_vitrobust.probes.attention import attention_maps, attention_rollout, normalize_maps
from hf_vitrobust.probes.gradcam import GradCAMResult, TokenReshape, cam_method_name, gradcam


def _hook_count(module: nn.Module) -> int:
    return sum(
        len(m._forward_hooks) + len(m._forward_pre_hooks) + len(m._backward_hooks) for m in module.modules()
    )


# ---------------------------------------------------------------------- reshape and target layers
def test_token_reshape_drops_prefix_tokens_and_fills_the_grid_row_major():
    tokens = torch.arange(2 * 8 * 3, dtype=torch.float32).view(2, 8, 3)  # 2 prefix + a 2x3 grid, 3 channels
    grid = TokenReshape(TokenLayout(2, (2, 3)))(tokens)
    assert grid.shape == (2, 3, 2, 3)
    for n in range(2):
        for c in range(3):
            for i in range(2):
                for j in range(3):
                    assert grid[n, c, i, j] == tokens[n, 2 + 3 * i + j, c]
    with pytest.raises(ValueError, match="prefix"):
        TokenReshape(TokenLayout(1, (2, 3)))(tokens)
    # Feature maps pass through, as float32 (grad-cam converts to numpy, which has no bfloat16).
    features = torch.randn(2, 4, 3, 3).bfloat16()
    assert torch.equal(TokenReshape(None)(features), features.float())


def test_token_layout_from_patch_size_or_inferred():
    assert token_layout(FAMILIES["transformers_vit"](), 17) == TokenLayout(1, (4, 4))
    assert token_layout(FAMILIES["timm_vit"](), 17) == TokenLayout(1, (4, 4))
    plain = Classifier(nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(3, 10)), PREPROCESSING)
    assert token_layout(plain, 16) == TokenLayout(0, (4, 4))
    assert token_layout(plain, 21) == TokenLayout(5, (4, 4))  # CLS + 4 registers
    assert token_layout(plain, 198) == TokenLayout(2, (14, 14))  # distilled DeiT
    wide = Classifier(plain.module, Preprocessing(input_size=(16, 32)))
    assert token_layout(wide, 9) == TokenLayout(1, (2, 4))


@pytest.mark.slow
def test_default_targets_of_the_families():
    # CLS-token ViTs: the patch tokens of the last block carry no gradient, so the pre-attention norm is chosen.
    vit = cam_target(FAMILIES["transformers_vit"]())
    assert vit.module_name == "vit.layers.1.layernorm_before" and vit.token_layout == TokenLayout(1, (4, 4))
    timm_vit = cam_target(FAMILIES["timm_vit"]())
    assert timm_vit.module_name == "blocks.1.norm1" and timm_vit.token_layout == TokenLayout(1, (4, 4))
    # ResNet-18 at 32x32: layer4 is 1x1, so the deepest layer with more than one position is layer3.
    cnn = cam_target(FAMILIES["timm_cnn"]())
    assert (cnn.layer, cnn.module_name, cnn.token_layout) == ("layer3", "layer3", None)
    # AlterNet: the last stage's output, a transformers hidden state that no module name spells.
    alternet = cam_target(FAMILIES["alternet"]())
    assert (alternet.layer, alternet.module_name) == ("hidden_states.4", "alternet.encoder.stages.3")
    assert alternet.reason == "deepest feature layer"


def test_layer_tap_sees_the_hidden_state_and_leaves_no_hook():
    classifier = FAMILIES["alternet"]()
    images = random_images(2)
    with torch.no_grad():
        expected = classifier.feature_maps(images, ["hidden_states.4"])["hidden_states.4"]
    seen = []
    before = _hook_count(classifier)
    with layer_tap(classifier, "alternet.encoder.stages.3") as tap:
        tap.register_forward_hook(lambda _m, _a, output: seen.append(output))
        with torch.no_grad():
            classifier(images)
    assert _hook_count(classifier) == before
    torch.testing.assert_close(seen[0], expected)


def test_global_pool_vit_keeps_the_last_block():
    torch.manual_seed(0)
    module = timm.create_model(
        "vit_tiny_patch16_224", pretrained=False, img_size=32, patch_size=8, embed_dim=32, depth=2,
        num_heads=2, num_classes=10, global_pool="avg",
    )  # fmt: skip
    classifier = Classifier(module, PREPROCESSING).eval()
    assert head_reads_class_token(classifier) is False
    target = cam_target(classifier)
    assert (target.module_name, target.token_layout) == ("blocks.1", TokenLayout(1, (4, 4)))
    result = gradcam(classifier, random_images(2))
    assert result.cams.shape == (2, 32, 32) and torch.isfinite(result.cams).all()


def _distilled_deit() -> Classifier:
    torch.manual_seed(0)
    config = DeiTConfig(
        image_size=32, patch_size=8, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=64, num_labels=10, attn_implementation="sdpa",
    )  # fmt: skip
    return Classifier(DeiTForImageClassificationWithTeacher(config), PREPROCESSING).eval()


def _timm_vit_with_registers() -> Classifier:
    torch.manual_seed(0)
    module = timm.create_model(
        "vit_tiny_patch16_224", pretrained=False, img_size=32, patch_size=8, embed_dim=32, depth=2,
        num_heads=2, num_classes=10, reg_tokens=4,
    )  # fmt: skip
    return Classifier(module, PREPROCESSING).eval()


@pytest.mark.parametrize(
    ("build", "prefix", "module_name"),
    [(_distilled_deit, 2, "deit.layers.1.layernorm_before"), (_timm_vit_with_registers, 5, "blocks.1.norm1")],
    ids=["deit_distilled", "timm_registers"],
)
def test_every_prefix_token_is_skipped(build, prefix, module_name):
    """DeiT's distillation token and timm's register tokens are prefix tokens, like CLS: neither the Grad-CAM
    reshape nor the rollout readout puts them on the patch grid."""
    classifier = build()
    images = random_images(2)
    target = cam_target(classifier)
    assert (target.module_name, target.token_layout) == (module_name, TokenLayout(prefix, (4, 4)))
    result = attention_maps(classifier, images, upsample=False)
    assert (result.readout, result.num_prefix_tokens) == ("cls", prefix)
    with torch.no_grad():
        rollout = attention_rollout(list(classifier.attention_maps(images).values()))
    torch.testing.assert_close(result.maps, normalize_maps(rollout[:, 0, prefix:].reshape(2, 4, 4)).float())
    cams = gradcam(classifier, images).cams
    assert cams.shape == (2, 32, 32) and torch.isfinite(cams).all() and cams.min() >= 0 and cams.max() <= 1


def test_cls_head_makes_the_last_token_layer_gradient_free():
    """Why the default moves to the pre-attention norm: at the last block's output Grad-CAM is zero."""
    classifier = FAMILIES["timm_vit"]()
    assert head_reads_class_token(classifier) is True
    assert gradcam(classifier, random_images(2), layer="blocks.1").cams.abs().max() == 0
    assert gradcam(classifier, random_images(2)).cams.flatten(1).amax(1).min() > 0.99


# ---------------------------------------------------------------------- real numbers on a constructed model
class QuadrantHead(nn.Module):
    """Logits from the top-left quadrant of the feature map only: logit c = sum_k W[c, k] mean_TL(A^k)."""

    def __init__(self, channels: int, classes: int) -> None:
        super().__init__()
        self.fc = nn.Linear(channels, classes)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        half_h, half_w = features.shape[-2] // 2, features.shape[-1] // 2
        return self.fc(features[..., :half_h, :half_w].mean(dim=(-2, -1)))


def _quadrant_classifier() -> Classifier:
    torch.manual_seed(0)
    module = nn.Sequential(nn.Conv2d(3, 6, 3, padding=1), nn.ReLU(), QuadrantHead(6, 4))
    with torch.no_grad():  # CAMs of order 1, so grad-cam's 1e-7 in the min-max scaling is negligible
        module[2].fc.weight.mul_(1000.0)
    preprocessing = Preprocessing(input_size=32, mean=(0.5, 0.5, 0.5), std=(0.25, 0.25, 0.25))
    return Classifier(module, preprocessing).eval()


def test_gradcam_equals_selvaraju_eq_1_2_on_the_quadrant_model():
    classifier = _quadrant_classifier()
    images = random_images(3, seed=1)
    result = gradcam(classifier, images, target_classes=[0, 1, 2])
    assert result.module_name == "1"  # the ReLU output, the deepest spatial layer
    features = classifier.feature_maps(images, ["1"])["1"].detach().requires_grad_(True)
    logits = classifier.module[2](features)
    (grads,) = torch.autograd.grad(logits[torch.arange(3), torch.tensor([0, 1, 2])].sum(), features)
    alpha = grads.mean(dim=(-2, -1), keepdim=True)  # Eq. 1
    cam = (alpha * features).sum(1).relu()  # Eq. 2
    cam = cam - cam.flatten(1).amin(1).view(-1, 1, 1)
    cam = cam / (cam.flatten(1).amax(1).view(-1, 1, 1) + 1e-7)
    torch.testing.assert_close(result.cams, cam.detach(), atol=1e-5, rtol=1e-5)


def test_gradcam_equals_selvaraju_eq_1_2_on_the_vit_token_grid():
    """On a ViT the layer's patch tokens are the feature map: drop the CLS token, put the 16 patch tokens of a
    32 x 32 input (patch 8) on their 4 x 4 grid row-major, weight each channel by the mean gradient of the class
    score (Eq. 1), keep the positive weighted sum (Eq. 2), min-max scale, resize bilinearly to 32 x 32 (cv2) and
    min-max scale again, as the grad-cam package does."""
    import cv2

    classifier = FAMILIES["timm_vit"]()
    images = random_images(2, seed=3)
    targets = torch.tensor([3, 7])
    result = gradcam(classifier, images, target_classes=targets.tolist())
    assert result.module_name == "blocks.1.norm1"  # the CLS-reading head: the last block's pre-attention norm
    module = dict(classifier.module.named_modules())[result.module_name]
    captured = []
    handle = module.register_forward_hook(lambda _m, _i, output: captured.append(output))
    try:
        with torch.enable_grad():
            logits = classifier(images)
            (grads,) = torch.autograd.grad(logits[torch.arange(2), targets].sum(), captured[0])
    finally:
        handle.remove()
    tokens = captured[0].detach()
    assert tokens.shape == (2, 1 + 16, 32)
    features = tokens[:, 1:].transpose(1, 2).reshape(2, 32, 4, 4)  # row-major grid, channels first
    gradient_grid = grads[:, 1:].transpose(1, 2).reshape(2, 32, 4, 4)
    alpha = gradient_grid.mean(dim=(-2, -1), keepdim=True)  # Eq. 1
    coarse = (alpha * features).sum(1).relu()  # Eq. 2, on the 4 x 4 token grid

    def min_max(cam):
        cam = cam - cam.min()
        return cam / (cam.max() + 1e-7)

    # Scaled, resized, and scaled again (the resized map's extremes fall between grid centres).
    expected = [min_max(cv2.resize(min_max(cam).astype("float32"), (32, 32))) for cam in coarse.numpy()]
    torch.testing.assert_close(result.cams, torch.tensor(np.stack(expected)), atol=1e-5, rtol=1e-5)
    # The map is the grid's: every 8 x 8 patch block of the coarse map peaks where its token does.
    peak = coarse.flatten(1).argmax(1)
    assert [divmod(int(k), 4) for k in peak] == [
        tuple(int(v) // 8 for v in divmod(int(result.cams[n].argmax()), 32)) for n in range(2)
    ]


@pytest.mark.parametrize("method", ["HiResCAM", "LayerCAM", "GradCAMElementWise"])
def test_elementwise_cams_put_all_mass_on_the_quadrant_the_head_reads(method):
    classifier = _quadrant_classifier()
    result = gradcam(classifier, random_images(4, seed=2), target_classes=1, method=method)
    mass = result.cams.sum(dim=(1, 2))
    top_left = result.cams[:, :16, :16].sum(dim=(1, 2))
    assert (mass > 0).all()
    torch.testing.assert_close(top_left / mass, torch.ones(4))


def test_gradcam_channel_weights_are_global():
    """Grad-CAM's weights are spatial means (Eq. 1): an identical bright square outside the read quadrant lights
    up as much as the one inside, which the element-wise HiResCAM does not show."""
    classifier = _quadrant_classifier()
    image = torch.full((1, 3, 32, 32), 0.5)  # normalises to 0, like the convolution's zero padding
    image[..., 4:12, 4:12] = 0.9
    image[..., 20:28, 20:28] = 0.9
    with torch.no_grad():
        target = int(classifier(image).argmax())
    cams = gradcam(classifier, image, target_classes=target).cams[0]
    hires = gradcam(classifier, image, target_classes=target, method="HiResCAM").cams[0]
    torch.testing.assert_close(cams[:16, :16].sum(), cams[16:, 16:].sum(), rtol=1e-5, atol=0)
    assert cams[:16, :16].sum() > 0.4 * cams.sum()
    assert hires[16:, 16:].sum() == 0 and hires[:16, :16].sum() > 0


# ---------------------------------------------------------------------- every family, no side effects
@pytest.mark.slow
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_gradcam_on_every_family(family):
    classifier = FAMILIES[family]()
    images = random_images(3)
    labels = torch.tensor([1, 5, 9])
    gradcam(classifier, images[:1])  # warm up: transformers installs its output-recording hooks once
    before = _hook_count(classifier)
    flags = [p.requires_grad for p in classifier.parameters()]
    sentinel = next(classifier.parameters())
    sentinel.grad = torch.full_like(sentinel, 3.0)
    classifier.train()
    result = gradcam(classifier, images, labels)
    assert _hook_count(classifier) == before
    assert all(module.training for module in classifier.modules())
    assert [p.requires_grad for p in classifier.parameters()] == flags
    assert torch.equal(sentinel.grad, torch.full_like(sentinel, 3.0))
    assert all(p.grad is None for p in classifier.parameters() if p is not sentinel)
    classifier.eval()
    assert isinstance(result, GradCAMResult)
    assert result.cams.shape == (3, 32, 32) and result.cams.dtype == torch.float32
    assert torch.isfinite(result.cams).all() and result.cams.min() >= 0 and result.cams.max() <= 1
    assert result.target_source == "labels" and result.target_classes.tolist() == [1, 5, 9]
    single = gradcam(classifier, images, labels, batch_size=1)
    torch.testing.assert_close(single.cams, result.cams, atol=1e-5, rtol=0)


@pytest.mark.parametrize("method", ["GradCAM++", "XGradCAM", "EigenCAM", "ScoreCAM"])
def test_variants_on_the_timm_vit(method):
    result = gradcam(FAMILIES["timm_vit"](), random_images(2), method=method)
    assert result.method == cam_method_name(method)
    assert result.cams.shape == (2, 32, 32) and torch.isfinite(result.cams).all()
    assert result.cams.min() >= 0 and result.cams.max() <= 1 and result.target_source == "predictions"


def test_half_precision_model_and_smoothing_options():
    images = random_images(2)
    reference = gradcam(FAMILIES["timm_vit"](), images).cams
    half = gradcam(FAMILIES["timm_vit"]().to(torch.bfloat16), images).cams
    assert half.dtype == torch.float32 and (half - reference).abs().mean() < 0.05
    for options in ({"eigen_smooth": True}, {"aug_smooth": True}):
        cams = gradcam(FAMILIES["timm_vit"](), images, **options).cams
        assert cams.shape == (2, 32, 32) and torch.isfinite(cams).all() and cams.max() <= 1


def test_explicit_token_layer_of_the_transformers_vit():
    classifier = FAMILIES["transformers_vit"]()
    result = gradcam(classifier, random_images(2), layer="hidden_states.1", target_classes=3)
    assert (result.layer, result.module_name) == ("hidden_states.1", "vit.layers.0")
    assert result.target_classes.tolist() == [3, 3] and result.target_source == "given"
    assert torch.isfinite(result.cams).all() and result.cams.max() <= 1


# ---------------------------------------------------------------------- arguments, errors, outputs
def test_method_names_and_bad_arguments():
    assert cam_method_name("grad-cam++") == "GradCAMPlusPlus"
    assert cam_method_name("score_cam") == "ScoreCAM"
    assert cam_method_name("EigenCAM") == "EigenCAM"
    classifier = FAMILIES["timm_vit"]()
    images = random_images(2)
    with pytest.raises(ValueError, match="Unknown CAM method"):
        gradcam(classifier, images, method="FullGrad")
    with pytest.raises(ValueError, match="target_classes"):
        gradcam(classifier, images, target_classes=[0, 10])
    with pytest.raises(ValueError, match="target_classes"):
        gradcam(classifier, images, target_classes=[0, 1, 2])
    with pytest.raises(ValueError, match="unknown layer"):
        gradcam(classifier, images, layer="blocks.7")


def test_missing_package_names_the_install_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "pytorch_grad_cam", None)
    with pytest.raises(ImportError, match="pip install grad-cam"):
        gradcam(FAMILIES["timm_vit"](), random_images(1))


def test_gradcam_result_to_dict_and_plot():
    result = gradcam(_quadrant_classifier(), random_images(2), [0, 3])
    data = json.loads(json.dumps(result.to_dict()))
    assert data["probe"] == "gradcam" and data["method"] == "GradCAM" and data["target_classes"] == [0, 3]
    assert len(data["cams"]) == 2 and len(data["cams"][0]) == 32
    ax = result.plot()
    assert len(ax.get_images()) == 2 and "GradCAM" in ax.get_title()
