"""A user's own timm model, by every route, offline (issue 38, point 4).

Each test writes a tiny timm model as timm itself saves it (`timm.models.save_for_hf`: config.json with
"architecture", "num_classes", "pretrained_cfg", and model.safetensors) and loads it back through `load_classifier`:
its logits must equal the in-memory model's, and its preprocessing must be the one written in the folder's
pretrained_cfg (the values are spelled out here, not derived by the code under test)."""

import json
import shutil

import pytest
import timm
import torch
from huggingface_hub import constants
from probe_models import tiny_vit_model
from timm.models import save_for_hf
from transformers import TimmWrapperConfig, TimmWrapperForImageClassification

from hf_vitrobust import Preprocessing, load_classifier
from hf_vitrobust.models.timm_loading import is_timm_folder

LABELS = ["ant", "bee", "cat", "dog", "eel"]
# The folder's preprocessing, deliberately unlike timm's resnet10t defaults (bicubic, 176 px, 0.875, ImageNet's).
DATA_CONFIG = {
    "input_size": (3, 64, 64),
    "interpolation": "bilinear",
    "crop_pct": 0.8,
    "crop_mode": "center",
    "mean": (0.5, 0.4, 0.3),
    "std": (0.2, 0.25, 0.3),
}
EXPECTED = Preprocessing(
    input_size=(64, 64), crop_pct=0.8, interpolation="bilinear", mean=(0.5, 0.4, 0.3), std=(0.2, 0.25, 0.3)
)


@pytest.fixture(autouse=True)
def offline(monkeypatch, tmp_path):
    """No network, and an empty Hugging Face cache: nothing can come from anywhere but the test's folders."""
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "empty-hub-cache"))


@pytest.fixture(scope="module")
def own_model():
    torch.manual_seed(0)
    model = timm.create_model("resnet10t", pretrained=False, num_classes=len(LABELS)).eval()
    for module in model.modules():  # non-trivial BN statistics: lost buffers would change the logits
        if isinstance(module, torch.nn.BatchNorm2d):
            module.running_mean.normal_(0, 0.5)
            module.running_var.uniform_(0.5, 2.0)
    return model


@pytest.fixture(scope="module")
def timm_folder(own_model, tmp_path_factory):
    folder = tmp_path_factory.mktemp("own") / "my-resnet"
    save_for_hf(
        own_model,
        folder,
        model_config={"label_names": LABELS},
        data_config=DATA_CONFIG,
        safe_serialization=True,
    )
    return folder


def _reference_logits(model, pixels):
    """The in-memory model on the folder's normalisation, written out."""
    mean = torch.tensor(DATA_CONFIG["mean"]).view(1, 3, 1, 1)
    std = torch.tensor(DATA_CONFIG["std"]).view(1, 3, 1, 1)
    with torch.no_grad():
        return model((pixels - mean) / std)


def _pixels():
    return torch.rand(2, 3, 64, 64, generator=torch.Generator().manual_seed(1))


def test_the_folder_is_what_timm_writes(timm_folder):
    config = json.loads((timm_folder / "config.json").read_text())
    assert config["architecture"] == "resnet10t" and config["num_classes"] == len(LABELS)
    assert config["pretrained_cfg"]["interpolation"] == "bilinear" and "model_type" not in config
    assert (timm_folder / "model.safetensors").is_file() and is_timm_folder(timm_folder)


@pytest.mark.parametrize("route", ["plain path", "timm/local-dir:"])
def test_a_timm_folder_loads_with_its_weights_and_preprocessing(route, own_model, timm_folder):
    spec = str(timm_folder) if route == "plain path" else f"timm/local-dir:{timm_folder}"
    clf = load_classifier(spec)
    assert clf.kind == "timm" and clf.spec == spec
    # The folder's pretrained_cfg, bilinear included (not timm's bicubic default for resnet10t).
    assert clf.preprocessing == EXPECTED
    assert clf.id2label == dict(enumerate(LABELS))
    pixels = _pixels()
    with torch.no_grad():
        torch.testing.assert_close(clf(pixels), _reference_logits(own_model, pixels), atol=1e-5, rtol=1e-5)


def test_transformers_fails_on_a_timm_folder_that_load_classifier_reads(timm_folder):
    """Why the folder is routed to timm: transformers' AutoModel cannot read timm's format."""
    from transformers import AutoModelForImageClassification

    with pytest.raises(TypeError, match="num_classes"):
        AutoModelForImageClassification.from_pretrained(timm_folder)


def _hub_cache(root, repo_id, folder, commit="0123456789abcdef0123456789abcdef01234567"):
    """A Hugging Face cache holding `folder` as the main revision of `repo_id` (the layout hf_hub_download reads)."""
    repo = root / f"models--{repo_id.replace('/', '--')}"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)
    shutil.copytree(folder, repo / "snapshots" / commit)
    return root


def test_timm_hf_hub_reads_the_local_cache_offline(own_model, timm_folder, tmp_path, monkeypatch):
    cache = _hub_cache(tmp_path / "hub-cache", "me/my-resnet", timm_folder)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    clf = load_classifier("timm/hf-hub:me/my-resnet")
    assert clf.preprocessing == EXPECTED and clf.id2label == dict(enumerate(LABELS))
    pixels = _pixels()
    with torch.no_grad():
        torch.testing.assert_close(clf(pixels), _reference_logits(own_model, pixels), atol=1e-5, rtol=1e-5)
    # The same through an explicit cache_dir (passed to timm.create_model).
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "elsewhere"))
    assert load_classifier("timm/hf-hub:me/my-resnet", cache_dir=str(cache)).preprocessing == EXPECTED


def test_timm_hf_hub_not_cached_offline_names_the_fix():
    with pytest.raises(ValueError, match=r"not in the local Hugging Face cache.*hf download me/absent"):
        load_classifier("timm/hf-hub:me/absent")


def test_timm_pretrained_weights_not_cached_offline_name_the_fixes():
    with pytest.raises(ValueError) as raised:
        load_classifier("timm/resnet10t")
    message = str(raised.value)
    assert "HF_HUB_OFFLINE is set" in message
    assert "timm/random-init:resnet10t" in message and "timm/local-dir:" in message


def test_random_init_downloads_nothing_and_is_timms_random_model(monkeypatch):
    def no_download(*args, **kwargs):
        raise AssertionError("random-init tried to fetch weights")

    monkeypatch.setattr("timm.models._builder.load_pretrained", no_download)
    torch.manual_seed(3)
    clf = load_classifier("timm/random-init:resnet10t", num_classes=3)
    torch.manual_seed(3)
    reference = timm.create_model("resnet10t", pretrained=False, num_classes=3)
    ours = clf.module.state_dict()
    assert ours.keys() == reference.state_dict().keys()
    for key, value in reference.state_dict().items():
        torch.testing.assert_close(ours[key], value, atol=0, rtol=0)
    # pretrained=False in Python is the same route.
    assert load_classifier("timm/resnet10t", pretrained=False, num_classes=3).num_classes == 3


def test_bad_timm_specs_are_refused_before_a_model_is_built(monkeypatch, tmp_path, timm_folder):
    def forbidden(*args, **kwargs):
        raise AssertionError("a model was built for a bad spec")

    monkeypatch.setattr(timm, "create_model", forbidden)
    no_weights = tmp_path / "no-weights"
    no_weights.mkdir()
    shutil.copy(timm_folder / "config.json", no_weights / "config.json")
    unknown_arch = tmp_path / "unknown-arch"
    shutil.copytree(timm_folder, unknown_arch)
    config = json.loads((unknown_arch / "config.json").read_text())
    (unknown_arch / "config.json").write_text(json.dumps({**config, "architecture": "resnet10x"}))
    for spec, match in [
        (f"timm/local-dir:{tmp_path / 'missing'}", "is not a folder"),
        (f"timm/local-dir:{no_weights}", "holds no weights"),
        (f"timm/local-dir:{unknown_arch}", r"resnet10x.*does not know.*resnet10t"),
        (f"timm/local-dir:{tmp_path}", "not timm's format"),
        ("timm/hf-hub:justaname", "'org/name'"),
        ("timm/random-init:resnet10x", "Unknown timm model"),
        ("timm/file:/somewhere", "unknown timm source 'file'"),
    ]:
        with pytest.raises(ValueError, match=match):
            load_classifier(spec)
    with pytest.raises(ValueError, match="leave out pretrained=True"):
        load_classifier("timm/random-init:resnet10t", pretrained=True)


def test_transformers_timm_wrapper_folders_stay_with_transformers(tmp_path):
    folder = tmp_path / "wrapper"
    TimmWrapperForImageClassification(
        TimmWrapperConfig(architecture="resnet10t", num_labels=3)
    ).save_pretrained(folder)
    assert not is_timm_folder(folder)  # "model_type": "timm_wrapper": transformers' format


def test_a_folder_without_image_processor_says_what_a_cli_user_can_do(tmp_path):
    folder = tmp_path / "vit-no-processor"
    tiny_vit_model(patch_size=8, num_labels=3).save_pretrained(folder)  # no image processor saved
    with pytest.raises(ValueError) as raised:
        load_classifier(str(folder))
    message = str(raised.value)
    assert "preprocessor_config.json" in message and '"image_mean"' in message and '"size"' in message
    assert "save_pretrained(folder)" in message
