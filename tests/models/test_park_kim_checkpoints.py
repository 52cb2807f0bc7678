"""Park & Kim's four CIFAR-100 checkpoints through `load_classifier` (issue 33, point 1), offline.

Each timm test builds the architecture of the how-do-vits-work README with the installed timm, writes its weights in
the layout timm 0.5.4 saved them in (checked against `fixtures/park_kim_timm054_state_dict_keys.json`, recorded from
timm 0.5.4 itself) as their `{"name": ..., "state_dict": ...}` file under the released file name, and loads it back:
the classifier's logits for pixels in [0, 1] must equal the reference model's for those pixels normalised with their
CIFAR-100 mean and std (the numbers of their ops/datasets.py, spelled out here). The ResNet-50 is in
test_park_kim_resnet.py.
"""

import json
import re
import shutil
from pathlib import Path

import numpy
import pytest
import timm
import torch
from huggingface_hub import constants

from hf_vitrobust import Preprocessing, load_classifier
from hf_vitrobust.models.park_kim import RELEASE_FILES, read_state_dict

TIMM_054 = json.loads(
    (Path(__file__).parents[1] / "fixtures" / "park_kim_timm054_state_dict_keys.json").read_text()
)["models"]
# how-do-vits-work, ops/datasets.py, get_cifar100.
MEAN = torch.tensor([0.5071, 0.4867, 0.4408]).view(1, 3, 1, 1)
STD = torch.tensor([0.2675, 0.2565, 0.2761]).view(1, 3, 1, 1)
URL = "https://github.com/xxxnell/how-do-vits-work-storage/releases/download/v0.1/"


@pytest.fixture(autouse=True)
def offline(monkeypatch, tmp_path):
    """No network, and an empty torch hub cache."""
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch_home"))


def reference_model(architecture: str, seed: int = 0) -> torch.nn.Module:
    """The README's constructor call, with the small tensors that timm initialises to constants (norms, biases,
    tokens) perturbed so that each weight matters for the logits; the large ones are random already."""
    torch.manual_seed(seed)
    if architecture == "vit-ti":
        model = timm.models.vision_transformer.VisionTransformer(
            num_classes=100, img_size=32, patch_size=2, embed_dim=192, depth=12, num_heads=3, qkv_bias=False
        )
    elif architecture == "pit-ti":
        model = timm.models.pit.PoolingVisionTransformer(
            num_classes=100, img_size=32, patch_size=2, stride=1,
            base_dims=[32, 32, 32], depth=[2, 6, 4], heads=[2, 4, 8], mlp_ratio=4,
        )  # fmt: skip
    else:
        model = timm.models.swin_transformer.SwinTransformer(
            num_classes=100, img_size=32, patch_size=1, window_size=4,
            embed_dim=96, depths=(2, 2, 6, 2), num_heads=(3, 6, 12, 24), qkv_bias=False,
        )  # fmt: skip
    with torch.no_grad():
        for parameter in model.parameters():
            if parameter.numel() < 100_000:
                parameter.add_(torch.randn_like(parameter) * 0.02)
    return model.eval()


def timm_054_state_dict(architecture: str, model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """`model`'s weights as timm 0.5.4 named them: PiT's pooling and Swin's patch merging at the end of the stage
    before, Swin's head without `.fc`, and Swin's relative position indices and shifted-window masks saved."""
    old = {}
    for key, tensor in model.state_dict().items():
        key = re.sub(r"^(transformers|layers)\.(\d+)\.(pool|downsample)\.", _stage_before, key)
        old[re.sub(r"^head\.fc\.", "head.", key)] = tensor
    if architecture == "swin-ti":
        for name, buffer in model.named_buffers():
            if name.endswith(("relative_position_index", "attn_mask")):
                old[name] = buffer
    assert {k: list(v.shape) for k, v in old.items()} == dict(map(tuple, TIMM_054[architecture]))
    return old


def _stage_before(match: re.Match) -> str:
    return f"{match[1]}.{int(match[2]) - 1}.{match[3]}."


def save_release_file(folder: Path, architecture: str, state_dict: dict, name: str | None = None) -> Path:
    path = folder / (name or RELEASE_FILES[architecture])
    torch.save({"name": architecture.replace("-", "_"), "state_dict": state_dict}, path)
    return path


def assert_same_logits(classifier, reference: torch.nn.Module) -> None:
    pixels = torch.rand(2, 3, 32, 32, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        expected = reference((pixels - MEAN) / STD)
        assert torch.allclose(classifier(pixels), expected, atol=1e-5, rtol=1e-5)
    assert expected.abs().max() > 0.1


@pytest.mark.parametrize("architecture", ["pit-ti", "swin-ti"])
def test_pit_and_swin_in_their_timm_layout_load_by_path(tmp_path, architecture):
    reference = reference_model(architecture)
    path = save_release_file(tmp_path, architecture, timm_054_state_dict(architecture, reference))
    classifier = load_classifier(str(path))
    assert type(classifier.module) is type(reference)
    assert classifier.kind == "timm" and classifier.num_classes == 100 and classifier.spec == str(path)
    assert_same_logits(classifier, reference)


@pytest.fixture(scope="module")
def vit_ti(tmp_path_factory):
    reference = reference_model("vit-ti")
    folder = tmp_path_factory.mktemp("release")
    return reference, save_release_file(folder, "vit-ti", timm_054_state_dict("vit-ti", reference))


def test_vit_ti_loads_by_path_with_their_preprocessing(vit_ti):
    reference, path = vit_ti
    classifier = load_classifier(path)
    assert_same_logits(classifier, reference)
    assert classifier.stored_dtype == "float32"
    # CIFAR-100's fine labels in torchvision's (alphabetical) order
    assert [classifier.id2label[i] for i in (0, 1, 30, 99)] == ["apple", "aquarium_fish", "dolphin", "worm"]
    # their test transform: timm's eval transform at 32 px, crop_pct 1.0, bilinear; no resize of 32x32 images
    assert classifier.preprocessing == Preprocessing(
        input_size=32, crop_pct=1.0, interpolation="bilinear",
        mean=(0.5071, 0.4867, 0.4408), std=(0.2675, 0.2565, 0.2761),
    )  # fmt: skip


def test_their_preprocessing_equals_timms_eval_transform_on_cifar_images(vit_ti):
    from PIL import Image
    from timm.data import create_transform

    classifier = load_classifier(vit_ti[1])
    rng = torch.Generator().manual_seed(2)
    images = [
        Image.fromarray(torch.randint(0, 256, (32, 32, 3), generator=rng, dtype=torch.uint8).numpy())
        for _ in range(2)
    ]
    # ops/datasets.py get_cifar100: tff.transforms_imagenet_eval(img_size=32, mean, std, crop_pct=1.0, bilinear)
    theirs = create_transform(
        32, is_training=False, mean=(0.5071, 0.4867, 0.4408), std=(0.2675, 0.2565, 0.2761),
        crop_pct=1.0, interpolation="bilinear",
    )  # fmt: skip
    pixels = classifier.preprocess(images)
    unresized = torch.stack([torch.tensor(numpy.asarray(image)).permute(2, 0, 1) for image in images])
    assert torch.equal((pixels * 255).round().to(torch.uint8), unresized)
    assert torch.allclose((pixels - MEAN) / STD, torch.stack([theirs(i) for i in images]), atol=1e-6)


def test_the_release_url_is_downloaded_once_into_the_torch_hub_cache(vit_ti, tmp_path, monkeypatch):
    reference, path = vit_ti
    downloads = []

    def download(url, destination, **kwargs):  # stands in for the network
        downloads.append(url)
        shutil.copy(path, destination)

    monkeypatch.setattr(torch.hub, "download_url_to_file", download)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    assert_same_logits(load_classifier(URL + "vit_ti_cifar100_9857b21357.pth.tar"), reference)
    cached = tmp_path / "torch_home" / "hub" / "checkpoints" / "vit_ti_cifar100_9857b21357.pth.tar"
    assert downloads == [URL + "vit_ti_cifar100_9857b21357.pth.tar"] and cached.is_file()
    # offline, from the cache: the URL and its short form
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    assert_same_logits(load_classifier("park-kim:vit-ti"), reference)
    assert len(downloads) == 1


def test_a_failed_download_is_an_error_that_names_the_file(monkeypatch):
    def unreachable(url, destination, **kwargs):
        raise OSError("Network is unreachable")

    monkeypatch.setattr(torch.hub, "download_url_to_file", unreachable)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    with pytest.raises(
        ValueError, match=r"Could not download .*pit_ti_cifar100_0645889efb\.pth\.tar.*Network"
    ):
        load_classifier("park-kim:pit-ti")


def test_a_renamed_file_loads_with_the_explicit_form(vit_ti, tmp_path):
    reference, path = vit_ti
    renamed = shutil.copy(path, tmp_path / "my_vit.pt")
    with pytest.raises(ValueError, match="is a file, not a model folder"):
        load_classifier(renamed)
    assert_same_logits(load_classifier(f"park-kim:vit-ti:{renamed}"), reference)


def test_a_url_not_in_the_cache_offline_names_the_file_and_the_path_form(tmp_path):
    with pytest.raises(ValueError) as error:
        load_classifier(URL + "swin_ti_cifar100_ec2894492b.pth.tar")
    message = str(error.value)
    assert "HF_HUB_OFFLINE" in message and "swin_ti_cifar100_ec2894492b.pth.tar" in message
    assert str(tmp_path / "torch_home" / "hub" / "checkpoints") in message
    assert "park-kim:swin-ti:<path>" in message


class NotATensor:
    """Anything a pickle could name: a class whose loading would run code."""


def test_unsafe_content_is_refused_and_their_optimizer_state_is_not(tmp_path):
    weights = {"head.weight": torch.randn(3, 2), "head.bias": torch.zeros(3)}
    parameters = [torch.nn.Parameter(t.clone()) for t in weights.values()]
    optimizer = torch.optim.AdamW(parameters, lr=1.25e-4, weight_decay=0.05)
    sum(p.sum() for p in parameters).backward()
    optimizer.step()
    # what their models._save writes: name, state dict, optimizer state
    torch.save(
        {"name": "vit_ti", "state_dict": weights, "optimizer": optimizer.state_dict()}, tmp_path / "ok.pt"
    )
    loaded = read_state_dict(tmp_path / "ok.pt")
    assert loaded.keys() == weights.keys() and all(torch.equal(loaded[k], weights[k]) for k in weights)

    unsafe = tmp_path / RELEASE_FILES["vit-ti"]
    torch.save({"name": "vit_ti", "state_dict": weights, "extra": NotATensor()}, unsafe)
    with pytest.raises(ValueError, match="was refused: it holds more than tensors"):
        load_classifier(str(unsafe))


def test_wrong_files_and_specs_fail_clearly(tmp_path):
    with pytest.raises(ValueError, match=r"Unknown Park & Kim architecture 'deit-s'.*'resnet-50', 'vit-ti'"):
        load_classifier("park-kim:deit-s")
    with pytest.raises(ValueError, match="is not a file"):
        load_classifier(str(tmp_path / RELEASE_FILES["pit-ti"]))
    not_vit = {"head.weight": torch.randn(100, 8), "head.bias": torch.zeros(100)}
    path = save_release_file(tmp_path, "vit-ti", not_vit)
    with pytest.raises(ValueError, match="does not fit Park & Kim's CIFAR-100 vit-ti"):
        load_classifier(str(path))
    torch.save([1, 2, 3], tmp_path / "list.pt")
    with pytest.raises(ValueError, match="holds no state dict"):
        load_classifier(f"park-kim:pit-ti:{tmp_path / 'list.pt'}")
    with pytest.raises(TypeError, match="Unexpected keyword arguments"):
        load_classifier("park-kim:vit-ti", num_classes=10)
