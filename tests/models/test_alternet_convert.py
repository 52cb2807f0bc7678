"""Converter for official AlterNet checkpoints, tested on state dicts in the official naming scheme.

`fixtures/official_alternet_state_dict_keys.json` lists the key names and shapes that the official code
(github xxxnell/how-do-vits-work, models/alternet.py) produces for dnn_18, dnn_50 and the CIFAR-100 AlterNet-50.
Logit parity against the official code itself is checked by `benchmarks/alternet_forward.py --official-repo`.
"""

import json
from pathlib import Path

import pytest
import torch

from hf_vitrobust.models.alternet import (
    AlterNetConfig,
    AlterNetForImageClassification,
    convert,
    convert_alternet_to_hf,
)
from hf_vitrobust.models.alternet.convert_alternet_to_hf import (
    convert_official_checkpoint,
    convert_official_state_dict,
    main,
    rename_official_key,
    unwrap_official_checkpoint,
)

OFFICIAL = json.loads(
    (Path(__file__).parents[1] / "fixtures" / "official_alternet_state_dict_keys.json").read_text()
)


def official_state_dict(variant: str, seed: int = 0) -> dict[str, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    state = {}
    for key, shape in OFFICIAL["models"][variant]["keys"]:
        if key.endswith("num_batches_tracked"):
            state[key] = torch.tensor(7)
        else:
            state[key] = torch.randn(shape, generator=generator)
            if key.endswith("running_var"):
                state[key] = state[key].abs() + 0.5
    return state


@pytest.mark.parametrize("variant", sorted(OFFICIAL["models"]))
def test_every_official_tensor_lands_in_its_place(variant):
    official = official_state_dict(variant)
    config = AlterNetConfig.from_preset(variant, num_labels=OFFICIAL["models"][variant]["num_labels"])
    converted = convert_official_state_dict(official, config)
    model = AlterNetForImageClassification(config)
    model.load_state_dict(converted, strict=True)
    assert len(converted) == len(official) == len(model.state_dict())
    ours = model.state_dict()
    for key, tensor in official.items():
        assert torch.equal(ours[rename_official_key(key)], tensor), key


@pytest.mark.parametrize(
    ("official", "ours"),
    [
        ("layer0.layer0.0.weight", "alternet.embeddings.convolution.weight"),
        ("layer2.0.shortcut.0.weight", "alternet.encoder.stages.1.layers.0.shortcut.weight"),
        ("layer3.4.bn.running_var", "alternet.encoder.stages.2.layers.4.norm1.running_var"),
        ("layer3.4.conv2.0.weight", "alternet.encoder.stages.2.layers.4.norm2.weight"),
        ("layer3.4.conv2.2.weight", "alternet.encoder.stages.2.layers.4.conv2.weight"),
        ("layer4.3.conv3.0.bias", "alternet.encoder.stages.3.layers.3.norm3.bias"),
        ("layer4.3.norm1.weight", "alternet.encoder.stages.3.layers.3.norm1.weight"),
        ("layer4.3.attn.attn.to_kv.weight", "alternet.encoder.stages.3.layers.3.attention.key_value.weight"),
        ("layer4.3.attn.attn.to_out.0.bias", "alternet.encoder.stages.3.layers.3.attention.output.bias"),
        (
            "layer4.3.attn.pos_embedding",
            "alternet.encoder.stages.3.layers.3.attention.relative_position_bias_table",
        ),
        ("classifier.0.bn.running_mean", "alternet.norm.running_mean"),
        ("classifier.0.dense.weight", "classifier.weight"),
    ],
)
def test_key_renaming(official, ours):
    assert rename_official_key(official) == ours


def test_unknown_key_is_named():
    with pytest.raises(KeyError, match=r"layer1\.0\.se\.fc\.weight"):
        rename_official_key("layer1.0.se.fc.weight")


def test_wrong_variant_or_labels_is_a_clear_error():
    official = official_state_dict("alternet-50")
    with pytest.raises(ValueError, match="Missing"):
        convert_official_state_dict(official, AlterNetConfig.from_preset("alternet-18", num_labels=1000))
    with pytest.raises(ValueError, match=r"Shape mismatch for classifier.weight"):
        convert_official_state_dict(official, AlterNetConfig.from_preset("alternet-50", num_labels=10))


def test_data_parallel_prefix_and_wrapper_are_removed():
    wrapped = {"name": "alternet_50", "state_dict": {"module.layer0.layer0.0.weight": torch.zeros(1)}}
    assert list(unwrap_official_checkpoint(wrapped)) == ["layer0.layer0.0.weight"]


def test_command_line_converts_and_saves(tmp_path, capsys):
    official = official_state_dict("alternet-50-cifar")
    checkpoint = tmp_path / "cifar100_alternet_50.pth.tar"
    torch.save({"name": "alternet_50", "state_dict": official}, checkpoint)
    main([
        "--official-checkpoint", str(checkpoint), "--variant", "alternet-50-cifar",
        "--num-labels", "100", "--output", str(tmp_path / "out"),
    ])  # fmt: skip
    assert "alternet-50-cifar" in capsys.readouterr().out
    loaded = AlterNetForImageClassification.from_pretrained(tmp_path / "out")
    assert torch.equal(loaded.classifier.weight, official["classifier.0.dense.weight"])
    processor = json.loads((tmp_path / "out" / "preprocessor_config.json").read_text())
    assert processor["image_mean"] == pytest.approx([0.5071, 0.4867, 0.4408])
    assert processor["size"] == {"shortest_edge": 32} and processor["crop_pct"] == 1.0


def test_command_line_stores_class_names(tmp_path):
    checkpoint = tmp_path / "alternet_18.pth.tar"
    torch.save({"name": "alternet_18", "state_dict": official_state_dict("alternet-18")}, checkpoint)
    names = {str(i): f"class {i}" for i in range(1000)}
    (tmp_path / "labels.json").write_text(json.dumps(names))
    main([
        "--official-checkpoint", str(checkpoint), "--variant", "alternet-18", "--num-labels", "1000",
        "--id2label", str(tmp_path / "labels.json"), "--output", str(tmp_path / "out"),
    ])  # fmt: skip
    config = AlterNetConfig.from_pretrained(tmp_path / "out")
    assert config.id2label[999] == "class 999" and config.label2id["class 3"] == 3
    with pytest.raises(ValueError, match=r"keys 0\.\.999"):
        convert_official_checkpoint(checkpoint, "alternet-18", 1000, id2label={0: "only one"})


def test_command_line_rejects_missing_checkpoint(tmp_path):
    with pytest.raises(SystemExit):
        main(["--official-checkpoint", str(tmp_path / "nope.pth"), "--variant", "alternet-50",
              "--num-labels", "1000", "--output", str(tmp_path / "out")])  # fmt: skip


def test_the_former_module_name_still_converts():
    """`convert.py` (the name in README and older scripts) is the transformers-named converter under its old name."""
    for name in convert.__all__:
        assert getattr(convert, name) is getattr(convert_alternet_to_hf, name)
