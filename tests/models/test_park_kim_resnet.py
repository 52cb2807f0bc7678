"""Park & Kim's ResNet as a transformers model, against a transcription of their code (issue 33, point 1).

`TheirResNet` below transcribes github xxxnell/how-do-vits-work (commit 9571ff1) models/resnet.py `ResNet` with
models/resnet_dnn_block.py `BasicBlock`/`Bottleneck`, models/classifier_block.py `GAPBlock` and models/layers.py
(`conv3x3`, `conv1x1`: bias-free convolutions), keeping their module names, so that its state dict is theirs key for
key. `resnet_50` as their README builds it for CIFAR-100 is `models.get_model("resnet_50", num_classes=100,
stem=False)`. Their own code, run once beside this package, gave 23,705,252 parameters and 320 state-dict entries for
it, and the converted model matched its logits within 6e-8.
"""

import pytest
import torch
from torch import nn
from transformers import AutoModelForImageClassification

from hf_vitrobust import load_classifier
from hf_vitrobust.models.park_kim import (
    RELEASE_FILES,
    ParkKimResNetConfig,
    ParkKimResNetForImageClassification,
    convert_park_kim_resnet_state_dict,
    rename_park_kim_resnet_key,
)

MEAN = torch.tensor([0.5071, 0.4867, 0.4408]).view(1, 3, 1, 1)
STD = torch.tensor([0.2675, 0.2565, 0.2761]).view(1, 3, 1, 1)


def conv(in_channels, out_channels, kernel_size, stride=1):
    return nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding=kernel_size // 2, bias=False)


class TheirBottleneck(nn.Module):
    expansion = 4

    def __init__(self, in_channels, channels, stride=1):
        super().__init__()
        out = channels * self.expansion
        self.shortcut = nn.Sequential()
        if stride != 1 or in_channels != out:
            self.shortcut = nn.Sequential(conv(in_channels, out, 1, stride), nn.BatchNorm2d(out))
        self.conv1 = nn.Sequential(conv(in_channels, channels, 1), nn.BatchNorm2d(channels), nn.ReLU())
        self.conv2 = nn.Sequential(conv(channels, channels, 3, stride), nn.BatchNorm2d(channels), nn.ReLU())
        self.conv3 = nn.Sequential(conv(channels, out, 1), nn.BatchNorm2d(out))
        self.relu = nn.ReLU()

    def forward(self, x):
        return self.relu(self.conv3(self.conv2(self.conv1(x))) + self.shortcut(x))


class TheirBasicBlock(nn.Module):
    expansion = 1

    def __init__(self, in_channels, channels, stride=1):
        super().__init__()
        self.shortcut = nn.Sequential()
        if stride != 1 or in_channels != channels:
            self.shortcut = nn.Sequential(conv(in_channels, channels, 1, stride), nn.BatchNorm2d(channels))
        self.conv1 = nn.Sequential(
            conv(in_channels, channels, 3, stride), nn.BatchNorm2d(channels), nn.ReLU()
        )
        self.conv2 = nn.Sequential(conv(channels, channels, 3), nn.BatchNorm2d(channels))
        self.relu = nn.ReLU()

    def forward(self, x):
        return self.relu(self.conv2(self.conv1(x)) + self.shortcut(x))


class TheirGAPBlock(nn.Module):
    def __init__(self, in_features, num_classes):
        super().__init__()
        self.gap = nn.AdaptiveAvgPool2d((1, 1))
        self.dense = nn.Linear(in_features, num_classes)

    def forward(self, x):
        return self.dense(self.gap(x).flatten(1))


class TheirResNet(nn.Module):
    def __init__(self, block, num_blocks, num_classes=100, stem=False, widths=(64, 128, 256, 512)):
        super().__init__()
        if stem:
            self.layer0 = nn.Sequential(
                nn.Conv2d(3, widths[0], 7, 2, padding=3, bias=False), nn.BatchNorm2d(widths[0]), nn.ReLU(),
                nn.MaxPool2d(kernel_size=3, stride=2, padding=1),
            )  # fmt: skip
        else:
            self.layer0 = nn.Sequential(conv(3, widths[0], 3), nn.BatchNorm2d(widths[0]), nn.ReLU())
        channels = widths[0]
        for index, (width, count) in enumerate(zip(widths, num_blocks, strict=True)):
            blocks = []
            for j in range(count):
                blocks.append(block(channels, width, stride=2 if index > 0 and j == 0 else 1))
                channels = width * block.expansion
            setattr(self, f"layer{index + 1}", nn.Sequential(*blocks))
            setattr(self, f"smooth{index + 1}", nn.Sequential())  # num_sblocks=(0, 0, 0, 0)
        self.classifier = nn.Sequential(TheirGAPBlock(channels, num_classes))

    def forward(self, x):
        x = self.layer0(x)
        for index in range(1, 5):
            x = getattr(self, f"smooth{index}")(getattr(self, f"layer{index}")(x))
        return self.classifier(x)


def randomised(model: nn.Module, seed: int = 0) -> nn.Module:
    """Every tensor of the state dict drawn anew (BatchNorm statistics and affine parameters too, so that each one
    matters; weights at PyTorch's default scale, 1 / sqrt(fan_in)). A model built on the meta device gets its storage
    here, which spares the default initialisation of 23.7M weights."""
    model = model.to_empty(device="cpu")
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, tensor in model.state_dict().items():
            if not tensor.is_floating_point():
                tensor.zero_()
            elif tensor.ndim > 1:
                tensor.copy_(torch.randn(tensor.shape, generator=generator) / tensor[0].numel() ** 0.5)
            elif name.endswith(("running_var", "weight")):
                tensor.copy_(torch.rand(tensor.shape, generator=generator) + 0.5)
            else:
                tensor.copy_(torch.randn(tensor.shape, generator=generator) * 0.1)
    return model.eval()


def test_their_resnet_50_file_loads_with_their_parameter_count_and_logits(tmp_path):
    with torch.device("meta"):
        theirs = TheirResNet(TheirBottleneck, [3, 4, 6, 3])
    theirs = randomised(theirs)
    path = tmp_path / RELEASE_FILES["resnet-50"]
    torch.save({"name": "resnet_50", "state_dict": theirs.state_dict()}, path)

    classifier = load_classifier(str(path))
    ours = classifier.module
    assert isinstance(ours, ParkKimResNetForImageClassification) and classifier.kind == "transformers"
    assert ours.config.num_labels == 100 and ours.config.id2label[30] == classifier.id2label[30] == "dolphin"
    count = sum(p.numel() for p in ours.parameters())
    assert count == sum(p.numel() for p in theirs.parameters()) == 23_705_252
    assert len(ours.state_dict()) == len(theirs.state_dict()) == 320
    pixels = torch.rand(2, 3, 32, 32, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        expected = theirs((pixels - MEAN) / STD)
        assert torch.allclose(classifier(pixels), expected, atol=1e-4, rtol=1e-4)
    assert expected.std() > 0.1
    assert classifier.layer_names() == [f"hidden_states.{i}" for i in range(5)]
    with torch.no_grad():
        maps = classifier.feature_maps(pixels[:1])
    assert [tuple(m.shape[1:]) for m in maps.values()] == [
        (64, 32, 32), (256, 32, 32), (512, 16, 16), (1024, 8, 8), (2048, 4, 4),
    ]  # fmt: skip


@pytest.mark.parametrize("stem", [False, True])
def test_basic_blocks_and_the_imagenet_stem_match_their_code(stem):
    """Their resnet_dnn_18 layout (basic blocks) at small widths, with and without the 7x7/2 + max-pool stem."""
    widths = (8, 16, 24, 32)
    theirs = randomised(TheirResNet(TheirBasicBlock, [2, 2, 2, 2], num_classes=10, stem=stem, widths=widths))
    config = ParkKimResNetConfig(
        num_labels=10, layer_type="basic", depths=[2, 2, 2, 2], hidden_sizes=list(widths),
        embedding_size=8, stem_pool=stem,
    )  # fmt: skip
    ours = ParkKimResNetForImageClassification(config).eval()
    ours.load_state_dict(convert_park_kim_resnet_state_dict(theirs.state_dict(), config), strict=True)
    x = torch.randn(2, 3, 64, 64, generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        assert torch.allclose(ours(x).logits, theirs(x), atol=1e-5)


def test_keys_map_one_to_one_and_a_wrong_checkpoint_is_named():
    assert (
        rename_park_kim_resnet_key("layer0.1.running_var")
        == "resnet.embedder.embedder.normalization.running_var"
    )
    assert (
        rename_park_kim_resnet_key("layer3.0.conv2.0.weight")
        == "resnet.encoder.stages.2.layers.0.layer.1.convolution.weight"
    )
    assert (
        rename_park_kim_resnet_key("layer2.0.shortcut.1.num_batches_tracked")
        == "resnet.encoder.stages.1.layers.0.shortcut.normalization.num_batches_tracked"
    )
    assert rename_park_kim_resnet_key("classifier.0.dense.bias") == "classifier.bias"
    with pytest.raises(KeyError, match=r"smooth1\.0\.weight"):
        rename_park_kim_resnet_key("smooth1.0.weight")
    config = ParkKimResNetConfig(
        num_labels=10, layer_type="basic", depths=[1, 1, 1, 1], hidden_sizes=[8] * 4, embedding_size=8
    )
    wider = TheirResNet(TheirBasicBlock, [1, 1, 1, 1], num_classes=10, widths=(8, 8, 8, 16)).state_dict()
    with pytest.raises(ValueError, match=r"Shape mismatch for resnet\.encoder\.stages\.3"):
        convert_park_kim_resnet_state_dict(wider, config)
    deeper = TheirResNet(TheirBasicBlock, [1, 1, 1, 2], num_classes=10, widths=(8,) * 4).state_dict()
    with pytest.raises(ValueError, match=r"unexpected: \['resnet\.encoder\.stages\.3\.layers\.1"):
        convert_park_kim_resnet_state_dict(deeper, config)
    with pytest.raises(ValueError, match="layer_type must be one of"):
        ParkKimResNetConfig(layer_type="preact")


def test_saved_folder_loads_back_through_auto_classes(tmp_path):
    config = ParkKimResNetConfig(
        num_labels=3, layer_type="basic", depths=[1, 1, 1, 1], hidden_sizes=[8] * 4, embedding_size=8
    )
    model = randomised(ParkKimResNetForImageClassification(config))
    model.save_pretrained(tmp_path)
    loaded = AutoModelForImageClassification.from_pretrained(tmp_path).eval()
    assert type(loaded) is ParkKimResNetForImageClassification
    x = torch.randn(1, 3, 32, 32)
    with torch.no_grad():
        assert torch.equal(loaded(x).logits, model(x).logits)


class ZeroBranch(nn.Module):
    def forward(self, hidden_states):
        return torch.zeros_like(hidden_states)


def test_lesion_units_and_residual_sums_are_the_blocks():
    """Each block is one conv unit; lesioning it equals the block with its branch replaced by zeros (relu of the
    shortcut), and its residual sum is the block's output, the stage's last one its hidden state."""
    from hf_vitrobust import Preprocessing
    from hf_vitrobust.models import Classifier

    config = ParkKimResNetConfig(
        num_labels=5,
        layer_type="bottleneck",
        depths=[1, 2, 1, 1],
        hidden_sizes=[4, 8, 8, 8],
        embedding_size=8,
    )
    model = randomised(ParkKimResNetForImageClassification(config))
    classifier = Classifier(model, Preprocessing(input_size=16, mean=(0.0,) * 3, std=(1.0,) * 3)).eval()
    units = classifier.residual_units()
    assert [(u.name, u.kind, u.stage) for u in units] == [
        (f"resnet.encoder.stages.{s}.layers.{b}", "conv", s)
        for s, b in [(0, 0), (1, 0), (1, 1), (2, 0), (3, 0)]
    ]
    pixels = torch.rand(2, 3, 16, 16, generator=torch.Generator().manual_seed(3))
    block = model.resnet.encoder.stages[1].layers[1]
    with torch.no_grad():
        with classifier.lesion([units[2].name]):
            lesioned = classifier(pixels)
        assert isinstance(
            block.shortcut, nn.Identity
        )  # the block keeps its shape: a zero branch is zeros_like
        branch, block.layer = block.layer, ZeroBranch()
        expected = classifier(pixels)
        block.layer = branch
        assert torch.equal(lesioned, expected) and not torch.allclose(lesioned, classifier(pixels))
        sums = classifier.residual_sum_maps(pixels)
        hidden = model(pixels, output_hidden_states=True).hidden_states
    assert next(iter(sums)) == "resnet.encoder.stages.0.layers.0:input"
    assert torch.equal(sums["resnet.encoder.stages.0.layers.0:input"], hidden[0])
    assert torch.equal(sums["resnet.encoder.stages.1.layers.1:conv"], hidden[2])
