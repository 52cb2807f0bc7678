# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""`vitrobust evaluate --plan` (`evaluation.plan`): per model and benchmark the resolved protocol (every part, and
where it came from), the input geometry and the images, read from configs only; the same preprocessing as
`vitrobust reproduce paul-chen --plan` for the same checkpoint and benchmark.

The default pair's ViTs come from a local folder laid out as the Hub cache (models--org--name/snapshots/<commit>/)
holding their input geometry (tests/probe_models.py: `vit_l16_input_folder`) and no weights; the BiT-M from timm's
own registry config (448 pixels, crop_pct 1.0). Nothing reaches the Hub, and no weights are read."""

from __future__ import annotations

import json

import huggingface_hub
import pytest
import timm
import yaml
from PIL import Image
from probe_models import save_tiny_vit, vit_l16_input_folder
from timm.models import resnetv2

from hf_vitrobust.analysis.protocols import protocol_parts
from hf_vitrobust.cli import main
from hf_vitrobust.data import get_benchmark
from hf_vitrobust.data.class_lists import imagenet_a_classes

VIT_224, VIT_384 = "google/vit-large-patch16-224", "google/vit-large-patch16-384"
BIT = "timm/resnetv2_101x3_bit.goog_in21k_ft_in1k"
COMMIT = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture
def hub_cache(tmp_path, monkeypatch):
    """The Hub cache holding the default pair's ViT configs and processors, without their weights; timm may not
    load pretrained weights either."""
    cache = tmp_path / "hub-cache"
    for repo, side in ((VIT_224, 224), (VIT_384, 384)):
        root = cache / f"models--{repo.replace('/', '--')}"
        snapshot = root / "snapshots" / COMMIT
        vit_l16_input_folder(snapshot, side)
        (snapshot / "model.safetensors").unlink()
        (root / "refs").mkdir()
        (root / "refs" / "main").write_text(COMMIT)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(cache))

    def no_weights(*args, **kwargs):
        raise AssertionError("--plan loaded pretrained weights")

    monkeypatch.setattr(timm.models._builder, "load_pretrained", no_weights)

    # BiT-M R101x3 with its real pretrained config (448 pixels, crop_pct 1.0) on a body of one block per stage: the
    # plan reads the config, and the body only has to run at 224 pixels on the meta device (the full body takes
    # seconds there).
    def short_r101x3(pretrained=False, **kwargs):
        return resnetv2._create_resnetv2_bit(
            "resnetv2_101x3_bit", pretrained=pretrained, layers=[1, 1, 1, 1], width_factor=1, **kwargs
        )

    monkeypatch.setitem(timm.models._registry._model_entrypoints, "resnetv2_101x3_bit", short_r101x3)
    return cache


def _blocks(text: str) -> dict[str, dict[str, list[str]]]:
    """model spec -> benchmark or probe name -> its lines (the first is the benchmark's or probe's own)."""
    models: dict[str, dict[str, list[str]]] = {}
    current: list[str] = []
    for line in text.splitlines():
        if line.startswith("model "):
            spec = line.split("--model ", 1)[1].split(" (", 1)[0]
            blocks = models.setdefault(spec, {})
        elif line.startswith(("  benchmark ", "  probe ")):
            name = line.split()[1].rstrip(":")
            current = blocks.setdefault(name, [])
            current.append(line)
        elif line.startswith("    "):
            current.append(line)
    return models


def _parts(line: str) -> dict[str, str]:
    return dict(item.split("=", 1) for item in line.split(": ", 1)[1].split(", "))


def test_the_plan_of_a_small_suite(tmp_path, capsys):
    folder_a = tmp_path / "imagenet-a"
    for wnid in imagenet_a_classes().wnids[:2]:
        (folder_a / wnid).mkdir(parents=True)
        Image.new("RGB", (40, 30), (90, 20, 200)).save(folder_a / wnid / "x.png")
    suite = {
        "name": "tiny-plan",
        "seed": 3,
        "benchmarks": {
            "imagenet-val": {"source": "builtin", "limit": 3},
            "imagenet-a": {
                "source": str(folder_a),
                "limit": 2,
                "subset": "random",
                "protocol": {"class_mask": "paul-chen-1000"},
            },
        },
        "probes": {
            "occlusion": {"benchmark": "imagenet-val", "num_images": 2, "params": {"ratios": [0.0, 0.5]}}
        },
    }
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(suite))
    vit = save_tiny_vit(tmp_path / "vit")
    output = tmp_path / "run"
    args = [
        "evaluate",
        "--suite",
        str(tmp_path / "suite.yaml"),
        f"--model={vit}",
        "--model=builtin:efficientnet_lite0",
    ]
    args += ["--protocol", "imagenet-a.preprocessing=native-resize", "--output", str(output), "--plan"]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert not output.exists()  # no run folder
    assert text.splitlines()[0] == "suite tiny-plan, seed 3: 2 model(s)"
    plans = _blocks(text)
    assert set(plans) == {vit, "builtin:efficientnet_lite0"}
    # The tiny ViT's processor: a bilinear squash to 32x32, mean and std 0.5 (ViTImageProcessor's defaults).
    own_vit = "resize to 32x32 (aspect ratio not kept), no crop; bilinear, antialiased; mean (0.5, 0.5, 0.5), std (0.5, 0.5, 0.5)"
    # EfficientNet-Lite0's eval transform (NOTES.md): shorter side 256 bicubic, centre crop 224; mean = std = 0.5.
    lite = "bicubic, antialiased; mean (0.5, 0.5, 0.5), std (0.5, 0.5, 0.5)"
    expected = {
        vit: {
            "imagenet-val": ("model-native", f"input 32x32: {own_vit}"),
            "imagenet-a": ("native-resize", f"input 32x32: {own_vit}"),
        },
        "builtin:efficientnet_lite0": {
            "imagenet-val": (
                "model-native",
                f"input 224x224: shorter side to 256 (crop_pct 0.875), centre crop 224x224; {lite}",
            ),
            "imagenet-a": (
                "native-resize",
                f"input 224x224: resize to 224x224 (aspect ratio not kept), no crop; {lite}",
            ),
        },
    }
    for spec, benchmarks in expected.items():
        for name, (preprocessing, geometry) in benchmarks.items():
            lines = plans[spec][name]
            parts = _parts(lines[0])
            assert set(parts) == set(protocol_parts(get_benchmark(name))), (spec, name)  # every part printed
            assert parts["preprocessing"] == preprocessing
            origins = dict(item.split(" ", 1) for item in lines[1].removeprefix("    from: ").split("; "))
            assert origins["preprocessing"] == ("--protocol" if name == "imagenet-a" else "default")
            assert all(
                origins[part] == "default" for part in parts if part not in ("preprocessing", "class_mask")
            )
            assert lines[2].strip() == geometry, (spec, name)
        assert _parts(plans[spec]["imagenet-a"][0])["class_mask"] == "paul-chen-1000"
        assert "class_mask suite" in plans[spec]["imagenet-a"][1]
        assert plans[spec]["imagenet-val"][-1].strip() == "images: the first 3; source builtin (suite)"
        assert (
            plans[spec]["imagenet-a"][-1].strip()
            == f"images: the random 2 (seed 3); source {folder_a} (suite)"
        )
    assert plans[vit]["occlusion"] == [
        "  probe occlusion on imagenet-val (input 32x32): 2 images, ratios=[0.0, 0.5]"
    ]
    # --json: the same plan as data (the ViT alone).
    args.remove("--model=builtin:efficientnet_lite0")
    assert main([*args, "--json"]) == 0
    (vit_plan,) = json.loads(capsys.readouterr().out)["models"]
    (val,) = [bench for bench in vit_plan["benchmarks"] if bench["name"] == "imagenet-val"]
    assert (val["input_size"], val["preprocessing"]["resize_size"]) == ([32, 32], [32, 32])
    assert val["images"] == {"limit": 3, "subset": "first", "seed": None}
    assert val["origins"]["preprocessing"] == "default"


def test_the_plan_reads_configs_only_and_refuses_an_uncached_hub_id(hub_cache, tmp_path, capsys):
    output = tmp_path / "run"
    args = [
        "evaluate",
        "--suite",
        "paper",
        "--model",
        VIT_384,
        "--model",
        BIT,
        "--output",
        str(output),
        "--plan",
    ]
    assert main(args) == 0
    assert not output.exists()
    plans = _blocks(capsys.readouterr().out)
    bit_a, vit_a = plans[BIT]["imagenet-a"], plans[VIT_384]["imagenet-a"]
    # The notebooks: BiT-M squashed to 224 (not timm's 448 with crop_pct 1.0), the 384-pixel ViT squashed to 384.
    assert _parts(bit_a[0])["preprocessing"] == "squash-224" and bit_a[1].startswith(
        "    from: preprocessing pairing"
    )
    assert bit_a[2].startswith(
        "    input 224x224: resize to 224x224 (aspect ratio not kept), no crop; bilinear"
    )
    assert vit_a[2].startswith(
        "    input 384x384: resize to 384x384 (aspect ratio not kept), no crop; bilinear"
    )
    assert plans[BIT]["occlusion"][0].startswith("  probe occlusion on imagenet-val (input 224x224)")
    with pytest.raises(SystemExit) as exit_info:
        main(["evaluate", "--suite", "paper", "--model", "google/vit-base-patch16-224", "--plan"])
    assert exit_info.value.code == 2
    error = capsys.readouterr().err
    assert (
        "'google/vit-base-patch16-224': its config.json and preprocessor_config.json are not in the local"
        in error
    )
    assert "hf download google/vit-base-patch16-224 config.json preprocessor_config.json" in error
    for command in (["evaluate"], ["reproduce", "paul-chen"]):
        with pytest.raises(SystemExit):
            main([*command, "--json", "--output", str(output)])
        assert "--json prints the plan: give it with --plan" in capsys.readouterr().err
    assert not output.exists()


def test_evaluate_and_reproduce_plan_the_same_preprocessing_for_the_default_pair(hub_cache, capsys):
    assert main(["reproduce", "paul-chen", "--plan", "--json"]) == 0
    legs = json.loads(capsys.readouterr().out)["legs"]
    specs = list(dict.fromkeys(leg["spec"] for leg in legs))
    assert set(specs) == {VIT_224, VIT_384, BIT}
    assert (
        main(["evaluate", "--suite", "paper", *(f"--model={spec}" for spec in specs), "--plan", "--json"])
        == 0
    )
    evaluated = {
        (model["spec"], bench["name"]): bench
        for model in json.loads(capsys.readouterr().out)["models"]
        for bench in model["benchmarks"]
    }
    compared = []
    for leg in legs:
        for name, protocol in leg["benchmarks"].items():
            if "preprocessing" in protocol:
                assert evaluated[leg["spec"], name]["protocol"]["preprocessing"] == protocol["preprocessing"]
                compared.append((leg["spec"], name, protocol["preprocessing"]))
    # ImageNet-A/R/O of both models (the ViT's 384-pixel checkpoint), the BiT-M's and the 224-pixel ViT's probes.
    assert {(spec, name) for spec, name, _ in compared} >= {
        (spec, name) for spec in (VIT_384, BIT) for name in ("imagenet-a", "imagenet-r", "imagenet-o")
    } | {(BIT, "imagenet-val")}
    assert evaluated[BIT, "imagenet-a"]["input_size"] == [224, 224]
    assert evaluated[VIT_384, "imagenet-a"]["input_size"] == [384, 384]
