"""Attention rollout (Abnar & Zuidema 2020) and AlterNet MSA maps: the math on constructed matrices, and the probe on
tiny ViTs (transformers with sdpa, timm with fused attention, a global-pool timm ViT) and AlterNet."""

import json

import pytest
import timm
import torch
import torch.nn.functional as F
from probe_models import FAMILIES, PREPROCESSING, random_images

from hf_vitrobust.models import Classifier
from hf_vitrobust.models.cam_targets import TokenLayout
from hf_vitrobust.probes.attention import (
    AttentionMapsResult,
    attention_maps,
    attention_rollout,
    fuse_heads,
    msa_map,
    normalize_maps,
    token_readout,
)


# ---------------------------------------------------------------------- the rollout math
def test_rollout_of_identity_attention_is_identity_and_cls_map_is_zero():
    eye = torch.eye(5, dtype=torch.float64).expand(2, 3, 5, 5)  # (N, heads, T, T)
    rollout = attention_rollout([eye, eye, eye])
    torch.testing.assert_close(rollout, torch.eye(5, dtype=torch.float64).expand(2, 5, 5))
    # CLS row over the 2x2 patch grid: the CLS token only ever attended to itself.
    cls_map = token_readout(rollout, TokenLayout(1, (2, 2)), class_token=True)
    assert cls_map.shape == (2, 2, 2)
    assert torch.equal(cls_map, torch.zeros(2, 2, 2, dtype=torch.float64))
    assert torch.equal(normalize_maps(cls_map), torch.zeros(2, 2, 2, dtype=torch.float64))


def test_rollout_two_layers_by_hand():
    a1 = torch.tensor([[0.8, 0.2], [0.4, 0.6]], dtype=torch.float64)
    a2 = torch.tensor([[0.5, 0.5], [0.0, 1.0]], dtype=torch.float64)
    # 0.5 A + 0.5 I: [[0.9, 0.1], [0.2, 0.8]] and [[0.75, 0.25], [0, 1]]; later layer on the left:
    # [[0.75 * 0.9 + 0.25 * 0.2, 0.75 * 0.1 + 0.25 * 0.8], [0.2, 0.8]].
    expected = torch.tensor([[0.725, 0.275], [0.2, 0.8]], dtype=torch.float64)
    rollout = attention_rollout([a1[None, None], a2[None, None]])
    torch.testing.assert_close(rollout[0], expected)
    first, second = attention_rollout([a1[None], a2[None]], cumulative=True)  # (N, T, T) input: already fused
    torch.testing.assert_close(first[0], torch.tensor([[0.9, 0.1], [0.2, 0.8]], dtype=torch.float64))
    torch.testing.assert_close(second[0], expected)


def test_head_fusion_mean_max_min():
    heads = torch.tensor([[[0.9, 0.1], [0.3, 0.7]], [[0.7, 0.3], [0.5, 0.5]]], dtype=torch.float64)[None]
    torch.testing.assert_close(fuse_heads(heads, "mean")[0], torch.tensor([[0.8, 0.2], [0.4, 0.6]]).double())
    torch.testing.assert_close(fuse_heads(heads, "max")[0], torch.tensor([[0.9, 0.3], [0.5, 0.7]]).double())
    torch.testing.assert_close(fuse_heads(heads, "min")[0], torch.tensor([[0.7, 0.1], [0.3, 0.5]]).double())
    # max fusion rows no longer sum to one: rollout renormalises them. (A + I) = [[1.9, 0.3], [0.5, 1.7]].
    rollout = attention_rollout([heads], head_fusion="max")[0]
    torch.testing.assert_close(
        rollout, torch.tensor([[1.9 / 2.2, 0.3 / 2.2], [0.5 / 2.2, 1.7 / 2.2]]).double()
    )


def test_discard_ratio_zeroes_the_smallest_weights_before_the_identity():
    a = torch.tensor([[[0.8, 0.2], [0.4, 0.6]]], dtype=torch.float64)
    # One of four weights goes (the 0.2): [[0.8, 0], [0.4, 0.6]] + I, rows renormalised.
    rollout = attention_rollout([a], discard_ratio=0.25)[0]
    torch.testing.assert_close(rollout, torch.tensor([[1.0, 0.0], [0.2, 0.8]], dtype=torch.float64))
    # The first token's attention to itself is never discarded (vit-explain): with 0.05 the smallest weight,
    # dropping one weight drops nothing, and dropping two drops only the next smallest, the 0.4.
    b = torch.tensor([[[0.05, 0.95], [0.4, 0.6]]], dtype=torch.float64)
    torch.testing.assert_close(attention_rollout([b], discard_ratio=0.25), attention_rollout([b]))
    expected = torch.tensor([[[1.05 / 2, 0.95 / 2], [0.0, 1.0]]], dtype=torch.float64)
    torch.testing.assert_close(attention_rollout([b], discard_ratio=0.5), expected)


def test_rollout_rows_stay_stochastic_and_compose():
    generator = torch.Generator().manual_seed(0)
    layers = [torch.randn(2, 3, 6, 6, generator=generator).softmax(-1).double() for _ in range(4)]
    rollouts = attention_rollout(layers, cumulative=True)
    for rollout in rollouts:
        torch.testing.assert_close(rollout.sum(-1), torch.ones(2, 6, dtype=torch.float64))
    step = layers[3].mean(1) * 0.5 + 0.5 * torch.eye(6, dtype=torch.float64)
    torch.testing.assert_close(rollouts[3], step @ rollouts[2])
    torch.testing.assert_close(attention_rollout(layers), rollouts[-1])


def test_uniform_attention_gives_a_uniform_cls_map():
    uniform = torch.full((1, 2, 5, 5), 0.2)
    cls_map = token_readout(attention_rollout([uniform] * 3), TokenLayout(1, (2, 2)), class_token=True)
    torch.testing.assert_close(normalize_maps(cls_map), torch.ones(1, 2, 2))


def test_token_readout_skips_every_prefix_token():
    matrix = torch.arange(49, dtype=torch.float64).view(1, 7, 7)  # 3 prefix tokens + a 2x2 grid
    layout = TokenLayout(3, (2, 2))
    torch.testing.assert_close(
        token_readout(matrix, layout, True)[0], torch.tensor([[3.0, 4.0], [5.0, 6.0]]).double()
    )
    # Mean over the patch-query rows 3..6 of columns 3..6: row r holds 7 r + c.
    expected = torch.tensor([[7 * 4.5 + 3, 7 * 4.5 + 4], [7 * 4.5 + 5, 7 * 4.5 + 6]], dtype=torch.float64)
    torch.testing.assert_close(token_readout(matrix, layout, False)[0], expected)


def test_rollout_rejects_bad_input():
    with pytest.raises(ValueError, match="at least one layer"):
        attention_rollout([])
    with pytest.raises(ValueError, match="same tokens"):
        attention_rollout([torch.eye(3)[None], torch.eye(4)[None]])
    with pytest.raises(ValueError, match="head_fusion"):
        attention_rollout([torch.eye(3)[None]], head_fusion="median")
    with pytest.raises(ValueError, match="discard_ratio"):
        attention_rollout([torch.eye(3)[None]], discard_ratio=1.0)


# ---------------------------------------------------------------------- AlterNet MSA maps
def test_msa_map_places_windows_and_tokens_row_major():
    # 2x2 windows of 2x2 tokens; every query of window k attends to key k: the four corners of the 4x4 map.
    attention = torch.zeros(1, 4, 2, 4, 4)
    for window in range(4):
        attention[0, window, :, :, window] = 1.0
    expected = torch.zeros(4, 4)
    expected[0, 0] = expected[0, 3] = expected[3, 0] = expected[3, 3] = 1.0
    torch.testing.assert_close(msa_map(attention, (32, 32))[0], expected)


def test_msa_map_averages_heads_and_queries_and_follows_the_aspect_ratio():
    attention = torch.zeros(1, 2, 2, 4, 4)  # 1x2 windows (a 16x32 input)
    attention[0, :, 0, :, 1] = 1.0  # head 0: every query to key 1 (top right of its window)
    attention[0, :, 1] = 0.25  # head 1: uniform
    result = msa_map(attention, (16, 32))[0]
    assert result.shape == (2, 4)
    window = torch.tensor([[0.125, 0.625], [0.125, 0.125]])
    torch.testing.assert_close(result, torch.cat([window, window], dim=1))
    torch.testing.assert_close(result.view(2, 2, 2).sum(dim=(0, 2)), torch.ones(2))  # 1 per window
    with pytest.raises(ValueError, match="tile"):
        msa_map(torch.full((1, 3, 1, 4, 4), 0.25), (32, 32))


# ---------------------------------------------------------------------- the probe on real models
def _reference_rollout_maps(classifier, pixels, prefix=1):
    """CLS rollout maps from the adapter's raw attention, by the formula, upsampled and max-normalised."""
    with torch.no_grad():
        attentions = list(classifier.attention_maps(pixels).values())
    rollout = torch.eye(attentions[0].shape[-1]).expand(pixels.shape[0], -1, -1)
    for attention in attentions:
        step = 0.5 * attention.float().mean(1) + 0.5 * torch.eye(attention.shape[-1])
        rollout = step @ rollout
    side = int((rollout.shape[-1] - prefix) ** 0.5)
    grid = rollout[:, 0, prefix:].reshape(-1, 1, side, side)
    maps = F.interpolate(grid, size=pixels.shape[-2:], mode="bilinear", align_corners=False)[:, 0]
    return maps / maps.flatten(1).amax(1).view(-1, 1, 1)


@pytest.mark.parametrize("family", [pytest.param("transformers_vit", marks=pytest.mark.slow), "timm_vit"])
def test_attention_maps_on_vits_match_the_formula_and_restore_the_model(family):
    classifier = FAMILIES[family]()
    images = random_images(3)
    result = attention_maps(classifier, images)
    assert isinstance(result, AttentionMapsResult)
    assert (result.method, result.readout, result.num_prefix_tokens) == ("rollout", "cls", 1)
    assert result.maps.shape == (3, 32, 32)
    assert len(result.per_layer) == 2 and all(m.shape == (3, 32, 32) for m in result.per_layer.values())
    assert result.maps.min() >= 0.0 and torch.allclose(result.maps.flatten(1).amax(1), torch.ones(3))
    torch.testing.assert_close(result.maps, _reference_rollout_maps(classifier, images), atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(list(result.per_layer.values())[-1], result.maps)
    # The fused / sdpa kernels are back on after the call.
    if family == "transformers_vit":
        assert classifier.module.config._attn_implementation == "sdpa"
    else:
        assert all(block.attn.fused_attn for block in classifier.module.blocks)
    # Batch-size independence.
    single = attention_maps(classifier, images, batch_size=1)
    torch.testing.assert_close(single.maps, result.maps, atol=1e-5, rtol=0)
    # On the patch grid without upsampling.
    grid = attention_maps(classifier, images, upsample=False, head_fusion="max", discard_ratio=0.5)
    assert grid.maps.shape == (3, 4, 4) and grid.maps.max() <= 1.0
    raw = attention_maps(classifier, images, method="attention", upsample=False)
    assert raw.method == "attention" and raw.maps.shape == (3, 4, 4)


def test_attention_maps_on_alternet():
    classifier = FAMILIES["alternet"]()
    images = random_images(2)
    result = attention_maps(classifier, images, upsample=False)
    assert (result.method, result.readout, result.num_prefix_tokens) == ("msa", "window_mean", None)
    shapes = {name: tuple(m.shape) for name, m in result.per_layer.items()}
    assert shapes == {"attentions.0": (2, 16, 16), "attentions.1": (2, 8, 8), "attentions.2": (2, 4, 4)}
    with torch.no_grad():
        last = list(classifier.attention_maps(images).values())[-1]
    torch.testing.assert_close(result.maps, normalize_maps(msa_map(last, (32, 32))).float())
    upsampled = attention_maps(classifier, images)
    assert upsampled.maps.shape == (2, 32, 32)
    assert all(m.shape == (2, 32, 32) for m in upsampled.per_layer.values())
    assert torch.allclose(upsampled.maps.flatten(1).amax(1), torch.ones(2))
    torch.testing.assert_close(
        attention_maps(classifier, images, batch_size=1).maps, upsampled.maps, atol=1e-5, rtol=0
    )
    with pytest.raises(ValueError, match="msa"):
        attention_maps(classifier, images, method="rollout")


def test_global_pool_vit_uses_the_mean_over_query_tokens():
    torch.manual_seed(0)
    module = timm.create_model(
        "vit_tiny_patch16_224",
        pretrained=False,
        img_size=32,
        patch_size=8,
        embed_dim=32,
        depth=2,
        num_heads=2,
        num_classes=10,
        class_token=False,
        global_pool="avg",
    )
    classifier = Classifier(module, PREPROCESSING).eval()
    images = random_images(2)
    result = attention_maps(classifier, images, upsample=False)
    assert (result.readout, result.num_prefix_tokens) == ("mean_query", 0)
    with torch.no_grad():
        rollout = attention_rollout(list(classifier.attention_maps(images).values()))
    torch.testing.assert_close(result.maps, normalize_maps(rollout.mean(1).view(2, 4, 4)).float())


def test_attention_maps_on_a_cnn_is_a_clear_error():
    with pytest.raises(ValueError, match=r"no attention weights.*gradcam"):
        attention_maps(FAMILIES["timm_cnn"](), random_images(1))


def test_attention_maps_bad_arguments_and_training_mode():
    classifier = FAMILIES["timm_vit"]()
    images = random_images(1)
    with pytest.raises(ValueError, match="head_fusion"):
        attention_maps(classifier, images, head_fusion="sum")
    with pytest.raises(ValueError, match="method"):
        attention_maps(classifier, images, method="grad")
    with pytest.raises(ValueError, match="token attention"):
        attention_maps(classifier, images, method="msa")
    classifier.train()
    result = attention_maps(classifier, images)
    assert classifier.training and all(module.training for module in classifier.modules())
    torch.testing.assert_close(result.maps, attention_maps(classifier.eval(), images).maps)


def test_attention_maps_result_to_dict_and_plot():
    result = attention_maps(FAMILIES["timm_vit"](), random_images(2), upsample=False)
    data = json.loads(json.dumps(result.to_dict()))
    assert data["probe"] == "attention_maps" and data["method"] == "rollout"
    assert len(data["maps"]) == 2 and len(data["maps"][0]) == 4
    assert set(data["per_layer"]) == {"blocks.0.attn", "blocks.1.attn"}
    ax = result.plot()
    assert len(ax.get_images()) == 2 and "rollout" in ax.get_title()
