"""AlterNet on disk: safetensors round trip, pipeline, Auto classes, remote code without hf_vitrobust."""

import ast
import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from isolated import remote_code_logits
from PIL import Image
from transformers import AutoConfig, AutoImageProcessor, AutoModelForImageClassification, pipeline

import hf_vitrobust.models.alternet as alternet_package
from hf_vitrobust.models.alternet import AlterNetConfig, AlterNetForImageClassification
from hf_vitrobust.models.alternet.saving import save_alternet


@pytest.fixture(scope="module")
def saved_tiny(tmp_path_factory):
    torch.manual_seed(0)
    config = AlterNetConfig.from_preset(
        "alternet-tiny",
        id2label={i: f"digit_{i}" for i in range(10)},
        label2id={f"digit_{i}": i for i in range(10)},
    )
    model = AlterNetForImageClassification(config).eval()
    # Non-trivial BN statistics, so that a buffer lost in saving would change the logits.
    for module in model.modules():
        if isinstance(module, torch.nn.BatchNorm2d):
            module.running_mean.normal_(0, 0.5)
            module.running_var.uniform_(0.5, 2.0)
    folder = tmp_path_factory.mktemp("alternet-tiny")
    save_alternet(model, folder)
    return model, folder


def test_folder_holds_safetensors_config_processor_and_code(saved_tiny):
    _, folder = saved_tiny
    files = set(os.listdir(folder))
    assert {"model.safetensors", "config.json", "preprocessor_config.json"} <= files
    assert {"configuration_alternet.py", "modeling_alternet.py"} <= files
    assert not any(f.endswith((".bin", ".pt", ".pth")) for f in files)
    config = json.loads((folder / "config.json").read_text())
    assert config["model_type"] == "alternet"
    assert (
        config["auto_map"]["AutoModelForImageClassification"]
        == "modeling_alternet.AlterNetForImageClassification"
    )


def test_native_folder_has_no_code_and_no_auto_map(saved_tiny, tmp_path):
    model, _ = saved_tiny
    save_alternet(model, tmp_path / "native", remote_code=False)
    assert not list((tmp_path / "native").glob("*.py"))
    assert "auto_map" not in json.loads((tmp_path / "native" / "config.json").read_text())
    loaded = AutoModelForImageClassification.from_pretrained(tmp_path / "native")
    assert type(loaded) is AlterNetForImageClassification
    # The registrations are back: a later save writes remote code again.
    assert (type(model)._auto_class, AlterNetConfig._auto_class) == (
        "AutoModelForImageClassification",
        "AutoConfig",
    )
    save_alternet(model, tmp_path / "remote")
    assert {"configuration_alternet.py", "modeling_alternet.py"} <= {
        p.name for p in (tmp_path / "remote").iterdir()
    }


def test_save_pretrained_itself_writes_remote_code(tmp_path):
    """register_for_auto_class: plain `save_pretrained` copies the model files and writes auto_map."""
    AlterNetForImageClassification(AlterNetConfig.from_preset("alternet-tiny")).alternet.save_pretrained(
        tmp_path
    )
    assert {"configuration_alternet.py", "modeling_alternet.py"} <= set(os.listdir(tmp_path))
    assert json.loads((tmp_path / "config.json").read_text())["auto_map"] == {
        "AutoConfig": "configuration_alternet.AlterNetConfig",
        "AutoModel": "modeling_alternet.AlterNetModel",
    }


# config.json as the code before `@strict` and `attn_implementation` wrote it (save_alternet of alternet-tiny).
OLD_CONFIG = {
    "architectures": ["AlterNetForImageClassification"],
    "attention_depths": [0, 1, 1, 1],
    "attention_head_size": 8,
    "auto_map": {
        "AutoConfig": "configuration_alternet.AlterNetConfig",
        "AutoModelForImageClassification": "modeling_alternet.AlterNetForImageClassification",
    },
    "depths": [1, 2, 2, 2],
    "drop_path_rate": 0.1,
    "dtype": "float32",
    "embedding_size": 8,
    "hidden_dropout_prob": 0.0,
    "hidden_sizes": [8, 16, 24, 32],
    "id2label": {
        "0": "LABEL_0",
        "1": "LABEL_1",
        "2": "LABEL_2",
        "3": "LABEL_3",
        "4": "LABEL_4",
        "5": "LABEL_5",
        "6": "LABEL_6",
        "7": "LABEL_7",
        "8": "LABEL_8",
        "9": "LABEL_9",
    },
    "image_size": 32,
    "initializer_range": 0.02,
    "label2id": {
        "LABEL_0": 0,
        "LABEL_1": 1,
        "LABEL_2": 2,
        "LABEL_3": 3,
        "LABEL_4": 4,
        "LABEL_5": 5,
        "LABEL_6": 6,
        "LABEL_7": 7,
        "LABEL_8": 8,
        "LABEL_9": 9,
    },
    "layer_type": "basic",
    "model_type": "alternet",
    "num_channels": 3,
    "num_heads": [1, 2, 2, 4],
    "stem_pool": False,
    "strides": [1, 2, 2, 2],
    "transformers_version": "5.24.0",
    "window_sizes": [4, 4, 4, 4],
}


def test_a_folder_saved_by_the_old_code_loads(tmp_path):
    """A config.json from before `@strict`, `attn_implementation` and `register_for_auto_class`, with its extra keys
    (auto_map, architectures, dtype, transformers_version), loads, builds the same model and saves again."""
    (tmp_path / "config.json").write_text(json.dumps(OLD_CONFIG))
    config = AutoConfig.from_pretrained(tmp_path)
    assert type(config) is AlterNetConfig
    fields = {k: v for k, v in OLD_CONFIG.items() if k not in ("auto_map", "id2label", "label2id", "dtype")}
    assert {k: config.to_dict()[k] for k in fields if k != "transformers_version"} == {
        k: v for k, v in fields.items() if k != "transformers_version"
    }
    model = AlterNetForImageClassification(config)
    assert model.config._attn_implementation == "sdpa" and model.num_labels == 10
    assert model(torch.randn(1, 3, 32, 32)).logits.shape == (1, 10)
    save_alternet(model, tmp_path / "again")
    assert AlterNetConfig.from_pretrained(tmp_path / "again").to_dict()["depths"] == OLD_CONFIG["depths"]


def test_round_trip_gives_identical_logits(saved_tiny):
    model, folder = saved_tiny
    loaded = AutoModelForImageClassification.from_pretrained(folder).eval()
    assert type(loaded) is AlterNetForImageClassification
    pixels = torch.randn(3, 3, 32, 32)
    with torch.no_grad():
        assert torch.equal(model(pixels).logits, loaded(pixels).logits)
    for name, buffer in model.state_dict().items():
        assert torch.equal(buffer, loaded.state_dict()[name]), name


def test_pipeline_classifies_a_pil_image(saved_tiny):
    model, folder = saved_tiny
    image = Image.fromarray(np.random.default_rng(0).integers(0, 256, (48, 40, 3), dtype=np.uint8))
    classify = pipeline("image-classification", model=str(folder), device="cpu")
    predictions = classify(image, top_k=3)
    assert len(predictions) == 3 and all(p["label"].startswith("digit_") for p in predictions)

    # The pipeline's top class is the model's top class on the processor's tensor.
    processor = AutoImageProcessor.from_pretrained(folder)
    pixels = processor(image, return_tensors="pt")["pixel_values"]
    assert pixels.shape == (1, 3, 32, 32)
    with torch.no_grad():
        probabilities = model(pixels).logits.softmax(-1)[0]
    assert predictions[0]["label"] == f"digit_{int(probabilities.argmax())}"
    assert predictions[0]["score"] == pytest.approx(float(probabilities.max()), abs=1e-5)


def test_remote_code_loads_without_hf_vitrobust(saved_tiny, tmp_path):
    model, folder = saved_tiny
    pixels = torch.randn(2, 3, 32, 32)
    with torch.no_grad():
        expected = model(pixels).logits
    assert torch.equal(remote_code_logits(folder, pixels, tmp_path), expected)


def test_model_files_import_only_torch_transformers_stdlib_and_each_other():
    """The remote-code rule: files under models/alternet/ must run on the Hub without hf_vitrobust
    (huggingface_hub, for `@strict`, is a requirement of transformers)."""
    allowed = {"torch", "transformers", "huggingface_hub"} | set(sys.stdlib_module_names)
    offending = []
    for path in Path(alternet_package.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                roots = [alias.name.split(".")[0] for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                roots = [node.module.split(".")[0]]
            else:
                continue
            offending += [f"{path.name}: {root}" for root in roots if root not in allowed]
    assert offending == []
