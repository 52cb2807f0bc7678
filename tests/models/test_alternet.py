"""AlterNet: presets, forward/backward, outputs, attention numerics, config validation."""

import pytest
import timm.data
import torch
import transformers.image_utils
from transformers import AutoConfig, AutoModel, AutoModelForImageClassification

import hf_vitrobust  # noqa: F401  (registers AlterNet with the Auto classes)
from hf_vitrobust import constants
from hf_vitrobust.models.alternet import (
    ALTERNET_PRESETS,
    AlterNetConfig,
    AlterNetForImageClassification,
    AlterNetModel,
    image_processing_alternet,
)
from hf_vitrobust.models.alternet.modeling_alternet import AlterNetAttentionLayer, AlterNetWindowAttention

# Official parameter counts with num_classes=1000 (github xxxnell/how-do-vits-work, measured; ../shared/NOTES.md).
OFFICIAL_PARAMETER_COUNTS = {
    "alternet-18": 9_968_803,
    "alternet-34": 22_833_054,
    "alternet-50": 35_915_038,
    "alternet-101": 54_907_166,
    "alternet-152": 70_550_814,
}


def input_size(config: AlterNetConfig) -> int:
    return config.image_size


def tiny_model(**overrides) -> AlterNetForImageClassification:
    torch.manual_seed(0)
    return AlterNetForImageClassification(AlterNetConfig.from_preset("alternet-tiny", **overrides))


def test_every_preset_is_tested():
    assert set(OFFICIAL_PARAMETER_COUNTS) | {"alternet-50-cifar", "alternet-tiny"} == set(ALTERNET_PRESETS)


@pytest.mark.parametrize("preset", sorted(OFFICIAL_PARAMETER_COUNTS))
def test_parameter_count_equals_official(preset):
    with torch.device("meta"):
        model = AlterNetForImageClassification(AlterNetConfig.from_preset(preset, num_labels=1000))
    assert sum(p.numel() for p in model.parameters()) == OFFICIAL_PARAMETER_COUNTS[preset]


def expected_stage_layout(config: AlterNetConfig) -> list[list[bool]]:
    return [
        [False] * (n1 - 2 * n2) + [False, True] * n2
        for n1, n2 in zip(config.depths, config.attention_depths, strict=True)
    ]


@pytest.mark.slow
@pytest.mark.parametrize("preset", sorted(ALTERNET_PRESETS))
def test_preset_forward_backward_outputs(preset):
    torch.manual_seed(0)
    config = AlterNetConfig.from_preset(preset, num_labels=7)
    model = AlterNetForImageClassification(config).train()
    size = input_size(config)
    pixels = torch.randn(2, 3, size, size)
    labels = torch.tensor([1, 5])

    outputs = model(pixels, labels=labels, output_hidden_states=True, output_attentions=True)
    assert outputs.logits.shape == (2, 7)
    assert torch.isfinite(outputs.logits).all() and torch.isfinite(outputs.loss)

    # Block order: conv blocks, then (conv, MSA) pairs at the end of each stage.
    layout = [
        [isinstance(b, AlterNetAttentionLayer) for b in s.layers] for s in model.alternet.encoder.stages
    ]
    assert layout == expected_stage_layout(config)

    # Hidden states: stem output + one feature map per stage.
    stem = size // 4 if config.stem_pool else size
    expected, side = [(config.embedding_size, stem)], stem
    for stage, stride in enumerate(config.strides):
        side //= stride
        expected.append((config.stage_out_channels(stage), side))
    assert [(h.shape[1], h.shape[2]) for h in outputs.hidden_states] == expected
    assert all(h.shape[0] == 2 and h.shape[2] == h.shape[3] for h in outputs.hidden_states)

    # Attention maps: one per MSA block, (B, windows, heads, w*w, w*w), rows sum to 1.
    expected_attentions = []
    for stage, flags in enumerate(layout):
        side = expected[stage + 1][1]
        window = config.window_sizes[stage]
        shape = (2, (side // window) ** 2, config.num_heads[stage], window**2, window**2)
        expected_attentions += [shape] * sum(flags)
    assert [tuple(a.shape) for a in outputs.attentions] == expected_attentions
    for attention in outputs.attentions:
        torch.testing.assert_close(attention.sum(-1), torch.ones_like(attention.sum(-1)))

    outputs.loss.backward()
    no_grad = [n for n, p in model.named_parameters() if p.grad is None or not torch.isfinite(p.grad).all()]
    assert no_grad == []
    assert all(p.grad.abs().sum() > 0 for p in model.parameters())


def test_stochastic_depth_rises_linearly():
    config = AlterNetConfig.from_preset("alternet-50-cifar")
    model = AlterNetForImageClassification(config)
    rates = [
        getattr(block.drop_path, "drop_prob", 0.0)
        for s in model.alternet.encoder.stages
        for block in s.layers
    ]
    total = sum(config.depths)
    assert rates == pytest.approx([0.1 * i / (total - 1) for i in range(total)])


def test_eval_is_deterministic_and_sdpa_matches_eager():
    model = tiny_model(drop_path_rate=0.2).eval()
    assert model.config._attn_implementation == "sdpa"  # the default, as for transformers' models
    pixels = torch.randn(3, 3, 32, 32)
    with torch.no_grad():
        sdpa = model(pixels).logits
        with_weights = model(pixels, output_attentions=True).logits  # the eager path, for this call only
        again = model(pixels).logits
        model.set_attn_implementation("eager")
        eager = model(pixels).logits
    torch.testing.assert_close(sdpa, eager, atol=1e-5, rtol=1e-5)
    assert torch.equal(sdpa, again) and torch.equal(with_weights, eager)
    assert {m.config._attn_implementation for m in model.modules() if hasattr(m, "window_size")} == {"eager"}


def test_attention_implementation_is_chosen_like_transformers_models(tmp_path):
    assert not any(hasattr(m, "fused_attn") for m in tiny_model().modules())
    eager = AlterNetForImageClassification(
        AlterNetConfig.from_preset("alternet-tiny", attn_implementation="eager")
    )
    assert eager.config._attn_implementation == "eager"
    tiny_model().save_pretrained(tmp_path)
    loaded = AutoModelForImageClassification.from_pretrained(tmp_path, attn_implementation="eager")
    assert loaded.config._attn_implementation == "eager"
    with pytest.raises(ValueError, match="does not support Flash Attention 2"):
        AutoModelForImageClassification.from_pretrained(tmp_path, attn_implementation="flash_attention_2")


def naive_window_attention(module: AlterNetWindowAttention, x: torch.Tensor) -> torch.Tensor:
    """softmax(q k^T / sqrt(d) + B) v per window, from the paper's definition, one window at a time."""
    w, heads, d = module.window_size, module.num_heads, module.head_size
    q_all = module.query(x)
    k_all, v_all = module.key_value(x).chunk(2, dim=1)
    table = module.relative_position_bias_table
    coords = [(r, c) for r in range(w) for c in range(w)]
    bias = torch.stack(
        [torch.stack([table[kr - qr + w - 1, kc - qc + w - 1] for kr, kc in coords]) for qr, qc in coords]
    )
    out = torch.zeros(x.shape[0], heads * d, x.shape[2], x.shape[3])
    for top in range(0, x.shape[2], w):
        for left in range(0, x.shape[3], w):

            def tokens(t, top=top, left=left):
                patch = t[:, :, top : top + w, left : left + w]  # (B, heads*d, w, w)
                return patch.reshape(x.shape[0], heads, d, w * w).transpose(-1, -2)  # (B, heads, w*w, d)

            q, k, v = tokens(q_all), tokens(k_all), tokens(v_all)
            attention = (q @ k.transpose(-1, -2) / d**0.5 + bias).softmax(-1)
            context = (attention @ v).transpose(-1, -2).reshape(x.shape[0], heads * d, w, w)
            out[:, :, top : top + w, left : left + w] = context
    return module.output(out)


@pytest.mark.parametrize("attn_implementation", ["sdpa", "eager"])
@pytest.mark.parametrize("output_attentions", [False, True])
def test_window_attention_matches_naive_reference(output_attentions, attn_implementation):
    torch.manual_seed(0)
    config = AlterNetConfig.from_preset(
        "alternet-tiny", num_heads=[1, 3, 2, 4], attention_head_size=4, window_sizes=[4, 3, 4, 4]
    )
    config._attn_implementation = attn_implementation
    module = AlterNetWindowAttention(config, 6, 10, stage_index=1)
    assert (module.num_heads, module.head_size, module.window_size) == (3, 4, 3)
    torch.nn.init.normal_(
        module.relative_position_bias_table, std=1.0
    )  # large enough that an index bug shows
    x = torch.randn(2, 6, 6, 9)
    with torch.no_grad():
        ours, weights = module(x, output_attentions=output_attentions)
        reference = naive_window_attention(module, x)
    torch.testing.assert_close(ours, reference, atol=1e-5, rtol=1e-5)
    assert (weights is not None) == output_attentions


def test_relative_position_index_is_key_minus_query():
    index = AlterNetWindowAttention.create_relative_position_index(3)
    # Query token 0 is (0, 0); key token 8 is (2, 2): offset (+2, +2) -> table[4, 4] -> flat 4 * 5 + 4.
    assert index[0, 8] == 24
    assert index[8, 0] == 0
    assert torch.equal(index.diagonal(), torch.full((9,), 2 * 5 + 2))


def test_gradient_checkpointing_gives_same_output_and_gradients():
    model = tiny_model(drop_path_rate=0.1).train()
    pixels = torch.randn(4, 3, 32, 32)
    initial_buffers = {n: b.clone() for n, b in model.named_buffers() if "running" in n or "num_batches" in n}

    def run():
        model.zero_grad()
        torch.manual_seed(1)
        logits = model(pixels).logits
        logits.square().mean().backward()
        return logits.detach(), {n: p.grad.clone() for n, p in model.named_parameters()}

    reference_logits, reference_grads = run()
    reference_buffers = {n: b.clone() for n, b in model.named_buffers()}
    # transformers >= 5.24 renames gradient_checkpointing_enable to activation_checkpointing_enable.
    enable = getattr(model, "activation_checkpointing_enable", None) or model.gradient_checkpointing_enable
    enable()
    assert all(layer.gradient_checkpointing for s in model.alternet.encoder.stages for layer in s.layers)
    model.load_state_dict({**model.state_dict(), **{n: b for n, b in initial_buffers.items()}})
    checkpointed_logits, checkpointed_grads = run()
    torch.testing.assert_close(checkpointed_logits, reference_logits)
    for name, grad in reference_grads.items():
        torch.testing.assert_close(checkpointed_grads[name], grad, atol=1e-6, rtol=1e-5, msg=name)
    # BatchNorm's running statistics are updated once per step, not again by the replayed forward pass.
    for name, buffer in model.named_buffers():
        torch.testing.assert_close(buffer, reference_buffers[name], msg=name)
    assert int(model.alternet.norm.num_batches_tracked) == 1


def test_tuple_outputs_match_dataclass():
    model = tiny_model().eval()
    pixels = torch.randn(2, 3, 32, 32)
    with torch.no_grad():
        dataclass_out = model(pixels, output_hidden_states=True, output_attentions=True)
        tuple_out = model(pixels, output_hidden_states=True, output_attentions=True, return_dict=False)
        base = model.alternet(pixels)
    assert torch.equal(tuple_out[0], dataclass_out.logits)
    assert len(tuple_out[1]) == 5 and len(tuple_out[2]) == 3
    assert base.pooler_output.shape == (2, 32)
    assert base.last_hidden_state.min() >= 0  # after the final BN -> ReLU


def test_auto_classes_build_alternet():
    config = AutoConfig.for_model("alternet", **ALTERNET_PRESETS["alternet-tiny"])
    assert isinstance(config, AlterNetConfig)
    assert isinstance(AutoModelForImageClassification.from_config(config), AlterNetForImageClassification)
    assert isinstance(AutoModel.from_config(config), AlterNetModel)


def test_window_that_does_not_tile_names_stage_size_and_window():
    model = tiny_model().eval()
    with pytest.raises(ValueError, match=r"stage 2: the 18x18 feature map is not tiled by 4x4"):
        model(torch.randn(1, 3, 36, 36))


def test_wrong_channel_count_is_a_clear_error():
    with pytest.raises(ValueError, match="channels"):
        tiny_model()(torch.randn(1, 1, 32, 32))


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"depths": [1, -2, 2, 2]}, r"depths\[1\] must not be negative"),
        ({"attention_depths": [0, -1, 1, 1]}, r"attention_depths\[1\] must not be negative"),
        ({"attention_depths": [0, 1, 2, 1]}, r"attention_depths\[2\]=2 does not fit depths\[2\]=2"),
        ({"num_heads": [1, 0, 2, 4]}, r"num_heads\[1\] must be positive"),
        ({"window_sizes": [4, 4, -4, 4]}, r"window_sizes\[2\] must be positive"),
        ({"hidden_sizes": [8, 16, 24]}, r"hidden_sizes has 3 entries but depths has 4"),
        ({"strides": [1, 2]}, r"strides has 2 entries but depths has 4"),
        ({"layer_type": "dense"}, r"layer_type must be one of"),
        ({"drop_path_rate": 1.0}, r"drop_path_rate must be in \[0, 1\)"),
        ({"attention_head_size": 0}, r"attention_head_size must be positive"),
    ],
)
def test_invalid_config_raises_value_error(overrides, message):
    with pytest.raises(ValueError, match=message):
        AlterNetConfig.from_preset("alternet-tiny", **overrides)


def test_config_is_strict_with_validate_methods(tmp_path):
    """As transformers' configs: fields are type-checked, and `validate_*` run again before a save."""
    from huggingface_hub.errors import (
        StrictDataclassClassValidationError,
        StrictDataclassFieldValidationError,
    )

    validators = {v.__name__ for v in AlterNetConfig.__class_validators__}
    assert {"validate_architecture", "validate_layer_type", "validate_rates"} <= validators
    with pytest.raises(StrictDataclassFieldValidationError, match="layer_type"):
        AlterNetConfig.from_preset("alternet-tiny", layer_type=4)
    config = AlterNetConfig.from_preset("alternet-tiny", drop_path_rate=0)  # an int rate, as JSON may hold it
    config.drop_path_rate = 1.5
    with pytest.raises(StrictDataclassClassValidationError, match=r"drop_path_rate must be in \[0, 1\)"):
        config.save_pretrained(tmp_path)


def test_imagenet_mean_and_std_are_the_same_everywhere():
    """hf_vitrobust.constants, transformers' IMAGENET_DEFAULT_MEAN/STD, timm's, and the AlterNet image processor's
    copy (which takes transformers' values: the remote-code files cannot import hf_vitrobust)."""
    for mean, std in (
        (transformers.image_utils.IMAGENET_DEFAULT_MEAN, transformers.image_utils.IMAGENET_DEFAULT_STD),
        (timm.data.IMAGENET_DEFAULT_MEAN, timm.data.IMAGENET_DEFAULT_STD),
        (image_processing_alternet.IMAGENET_MEAN, image_processing_alternet.IMAGENET_STD),
    ):
        assert tuple(mean) == constants.IMAGENET_DEFAULT_MEAN and tuple(std) == constants.IMAGENET_DEFAULT_STD


def test_heads_need_not_divide_stage_width():
    # The official attention width is heads x head_size whatever the stage width: 3 heads on a 16-wide stage is fine.
    model = tiny_model(num_heads=[1, 3, 5, 7])
    assert model(torch.randn(2, 3, 32, 32)).logits.shape == (2, 10)


def test_unknown_preset():
    with pytest.raises(ValueError, match="Unknown AlterNet preset 'alternet-9'"):
        AlterNetConfig.from_preset("alternet-9")


def test_config_round_trips_through_dict():
    config = AlterNetConfig.from_preset("alternet-50-cifar")
    again = AlterNetConfig.from_dict(config.to_dict())
    assert again.to_dict() == config.to_dict()
    assert again.window_sizes == [4, 4, 4, 4] and again.stem_pool is False and again.num_labels == 100


def test_initialisation_follows_pytorch_defaults_as_the_official_code():
    model = AlterNetForImageClassification(AlterNetConfig.from_preset("alternet-50", num_labels=1000))
    for name, module in model.named_modules():
        if isinstance(module, torch.nn.Conv2d | torch.nn.Linear):
            # kaiming_uniform_(a=sqrt(5)) draws from U(-1/sqrt(fan_in), 1/sqrt(fan_in)); its std is bound/sqrt(3).
            bound = 1 / module.weight[0].numel() ** 0.5
            assert module.weight.abs().max() <= bound, name
            if module.weight.numel() > 10_000:
                assert module.weight.std().item() == pytest.approx(bound / 3**0.5, rel=0.05), name
        elif isinstance(module, torch.nn.BatchNorm2d):
            assert torch.equal(module.weight, torch.ones_like(module.weight)), name
            assert torch.equal(module.bias, torch.zeros_like(module.bias)), name
    tables = torch.cat(
        [m.relative_position_bias_table.flatten() for m in model.modules() if hasattr(m, "window_size")]
    )
    assert tables.std().item() == pytest.approx(0.02, rel=0.15)
