"""Residual units and lesions (`hf_vitrobust.models.residual_units`, `Classifier.residual_units/lesion`): the right
units per architecture, a lesion that equals a hand-written forward without the branch, identity units that change
nothing, and hooks that never outlive the context."""

import copy

import pytest
import timm
import torch
from probe_models import (
    FAMILIES,
    PREPROCESSING,
    alternet,
    random_images,
    timm_cnn,
    timm_vit,
    transformers_vit,
)
from torch import nn

from hf_vitrobust.models import AlterNetConfig, Classifier
from hf_vitrobust.models.residual_units import ResidualUnit, find_residual_units, lesioned, resolve_units


def _randomize_batch_norms(classifier: Classifier, seed: int = 0) -> Classifier:
    """timm zero-initialises each ResNet block's last BN (every branch starts as zero): give them random affines."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for module in classifier.module.modules():
            if isinstance(module, nn.BatchNorm2d):
                module.weight.copy_(torch.rand(module.weight.shape, generator=generator) + 0.5)
                module.bias.copy_(torch.randn(module.bias.shape, generator=generator) * 0.1)
    return classifier


def _hook_count(module: nn.Module) -> int:
    return sum(
        len(m._forward_hooks) + len(m._forward_pre_hooks) + len(m._forward_hooks_with_kwargs)
        for m in module.modules()
    )


def test_alternet_units_follow_the_preset():
    classifier = alternet()
    config = AlterNetConfig.from_preset("alternet-tiny")
    expected_kinds, expected_stages = [], []
    for stage, (depth, attention) in enumerate(zip(config.depths, config.attention_depths, strict=True)):
        kinds = ["conv"] * (depth - 2 * attention) + ["conv", "msa"] * attention
        expected_kinds += kinds
        expected_stages += [stage] * len(kinds)
    units = classifier.residual_units()
    assert [u.kind for u in units] == expected_kinds == ["conv", "conv", "msa", "conv", "msa", "conv", "msa"]
    assert [u.stage for u in units] == expected_stages
    assert [u.index for u in units] == list(range(len(units)))
    assert all(u.module == f"{u.name}.drop_path" and u.block == u.name for u in units)


def test_transformers_vit_has_two_units_per_layer():
    classifier = transformers_vit()
    units = classifier.residual_units()
    layers = classifier.module.config.num_hidden_layers
    assert [u.kind for u in units] == ["msa", "mlp"] * layers
    assert [u.name for u in units[:2]] == ["vit.layers.0.attention", "vit.layers.0.mlp"]
    assert [u.index for u in units] == [i for i in range(layers) for _ in range(2)]
    assert all(u.stage is None and u.action == "zero" for u in units)


def test_timm_vit_units_hook_the_drop_paths():
    units = timm_vit().residual_units()
    assert [(u.name, u.kind, u.module) for u in units] == [
        ("blocks.0.attn", "msa", "blocks.0.drop_path1"),
        ("blocks.0.mlp", "mlp", "blocks.0.drop_path2"),
        ("blocks.1.attn", "msa", "blocks.1.drop_path1"),
        ("blocks.1.mlp", "mlp", "blocks.1.drop_path2"),
    ]


def test_timm_resnet18_has_eight_basic_blocks():
    units = timm_cnn().residual_units()
    assert [u.name for u in units] == [f"layer{s}.{b}" for s in range(1, 5) for b in range(2)]
    assert [u.stage for u in units] == [0, 0, 1, 1, 2, 2, 3, 3]
    assert all(u.kind == "conv" and u.module == f"{u.name}.bn2" for u in units)


def test_squeeze_excitation_blocks_are_cut_after_the_se_module():
    torch.manual_seed(0)
    module = timm.create_model("seresnet18", pretrained=False, num_classes=10)
    classifier = _randomize_batch_norms(Classifier(module, PREPROCESSING).eval())
    units = classifier.residual_units()
    assert units[0].module == "layer1.0.se"
    x = random_images(2)
    # Manual: the first block without its branch is relu(x + 0).
    manual = copy.deepcopy(classifier)
    manual.module.layer1[0] = nn.ReLU()
    with classifier.lesion([units[0].name]):
        lesioned_logits = classifier(x)
    torch.testing.assert_close(lesioned_logits, manual(x), rtol=1e-5, atol=1e-6)


def test_unsupported_architecture_names_the_supported_ones():
    classifier = Classifier(nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 10)), PREPROCESSING)
    with pytest.raises(ValueError, match=r"supported architectures: AlterNet.*timm ResNet"):
        classifier.residual_units()
    with pytest.raises(ValueError, match="supported architectures"), classifier.lesion([]):
        pass


def test_unknown_or_malformed_unit_names_raise_before_hooking():
    classifier = transformers_vit()
    with (
        pytest.raises(
            ValueError, match=r"Unknown residual units \['vit.layers.9.mlp'\].*vit.layers.0.attention"
        ),
        classifier.lesion(["vit.layers.9.mlp"]),
    ):
        pass
    with pytest.raises(TypeError, match="not a single one"), classifier.lesion("vit.layers.0.mlp"):
        pass
    stale = ResidualUnit("vit.layers.0.mlp", "conv", "x", "y", None, 0)
    with pytest.raises(ValueError, match="Unknown residual units"):
        resolve_units(classifier.module, [stale])
    assert _hook_count(classifier) == 0


def test_units_objects_and_names_are_accepted_and_empty_lesions_nothing():
    classifier = transformers_vit()
    units = classifier.residual_units()
    assert resolve_units(classifier.module, [units[3], units[0].name, units[0]]) == [units[0], units[3]]
    x = random_images(2)
    with classifier.lesion([]):
        torch.testing.assert_close(classifier(x), classifier(x), rtol=0, atol=0)


def test_hooks_are_removed_on_exit_and_on_exceptions():
    classifier = timm_vit()
    x = random_images(2)
    before = classifier(x)
    names = [u.name for u in classifier.residual_units()]
    with classifier.lesion(names):
        assert _hook_count(classifier) == len(names)
        changed = classifier(x)
    assert _hook_count(classifier) == 0
    assert not torch.allclose(changed, before)
    with pytest.raises(RuntimeError, match="boom"), classifier.lesion(names[:1]):
        raise RuntimeError("boom")
    assert _hook_count(classifier) == 0
    torch.testing.assert_close(classifier(x), before, rtol=0, atol=0)


def test_a_unit_that_contributes_nothing_is_a_no_op_lesion():
    """Zero the MLP output weights and bias of layer 0: lesioning that unit changes nothing, others do."""
    classifier = transformers_vit()
    with torch.no_grad():
        classifier.module.vit.layers[0].mlp.fc2.weight.zero_()
        classifier.module.vit.layers[0].mlp.fc2.bias.zero_()
    x = random_images(3)
    base = classifier(x)
    with classifier.lesion(["vit.layers.0.mlp"]):
        torch.testing.assert_close(classifier(x), base, rtol=0, atol=0)
    for other in ("vit.layers.0.attention", "vit.layers.1.mlp"):
        with classifier.lesion([other]):
            assert (classifier(x) - base).abs().max() > 1e-4


def test_alternet_msa_unit_with_zero_output_projection_is_a_no_op_lesion():
    classifier = alternet()
    layer = classifier.module.alternet.encoder.stages[1].layers[1]
    with torch.no_grad():
        layer.attention.output.weight.zero_()
        layer.attention.output.bias.zero_()
    x = random_images(2)
    base = classifier(x)
    with classifier.lesion(["alternet.encoder.stages.1.layers.1"]):
        torch.testing.assert_close(classifier(x), base, rtol=0, atol=0)
    with classifier.lesion(["alternet.encoder.stages.2.layers.1"]):
        assert (classifier(x) - base).abs().max() > 1e-5


def test_timm_vit_lesion_equals_a_manual_forward_without_the_branch():
    classifier = timm_vit()
    model = classifier.module
    x = random_images(3)

    def manual(pixels):
        tokens = model.norm_pre(model._pos_embed(model.patch_embed(classifier._normalize(pixels))))
        for i, block in enumerate(model.blocks):
            if i == 1:  # blocks.1.attn removed: only its MLP unit remains
                tokens = tokens + block.drop_path2(block.ls2(block.mlp(block.norm2(tokens))))
            else:
                tokens = block(tokens)
        return model.forward_head(model.norm(tokens))

    with classifier.lesion(["blocks.1.attn"]):
        lesioned_logits = classifier(x)
    torch.testing.assert_close(lesioned_logits, manual(x), rtol=1e-5, atol=1e-6)
    assert not torch.allclose(lesioned_logits, classifier(x), atol=1e-4)


def test_resnet_lesion_of_a_downsampling_block_keeps_its_projection_shortcut():
    classifier = _randomize_batch_norms(timm_cnn())
    x = random_images(2)

    class ShortcutOnly(nn.Module):
        def __init__(self, block):
            super().__init__()
            self.block = block

        def forward(self, inputs):
            return self.block.act2(self.block.downsample(inputs))

    manual = copy.deepcopy(classifier)
    manual.module.layer2[0] = ShortcutOnly(manual.module.layer2[0])
    with classifier.lesion(["layer2.0"]):
        lesioned_logits = classifier(x)
    torch.testing.assert_close(lesioned_logits, manual(x), rtol=1e-5, atol=1e-5)
    assert not torch.allclose(lesioned_logits, classifier(x), atol=1e-4)


class _LegacyViTOutput(nn.Module):
    """transformers < 5 layout: the residual is added inside the output module."""

    def __init__(self):
        super().__init__()
        self.dense = nn.Linear(4, 4)

    def forward(self, hidden_states, input_tensor):
        return self.dense(hidden_states) + input_tensor


class ViTLayer(nn.Module):  # named like transformers' class on purpose
    def __init__(self):
        super().__init__()
        self.attention = nn.Linear(4, 4)
        self.intermediate = nn.Linear(4, 4)
        self.output = _LegacyViTOutput()

    def forward(self, x):
        x = self.attention(x) + x
        return self.output(self.intermediate(x), input_tensor=x)


def test_legacy_vit_output_layout_returns_the_residual_input():
    torch.manual_seed(0)
    layer = ViTLayer()
    units = find_residual_units(layer)
    assert [(u.name, u.kind, u.action) for u in units] == [
        ("attention", "msa", "zero"),
        ("output", "mlp", "skip"),
    ]
    x = torch.randn(2, 3, 4)
    with lesioned(layer, ["output"]):
        torch.testing.assert_close(layer(x), layer.attention(x) + x)
    with lesioned(layer, ["attention", "output"]):
        torch.testing.assert_close(layer(x), x)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_family_lists_units_and_lesioning_all_still_runs(family):
    classifier = FAMILIES[family]()
    units = classifier.residual_units()
    assert units and len({u.name for u in units}) == len(units)
    assert {u.kind for u in units} <= {"msa", "mlp", "conv"}
    with classifier.lesion([u.name for u in units]):
        logits = classifier(random_images(2))
    assert logits.shape == (2, 10) and torch.isfinite(logits).all()
