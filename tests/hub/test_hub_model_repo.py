"""Self-contained model repos: whatever `vitrobust push` stages loads where hf_vitrobust is not installed.

Each staged folder (a plain, code-less AlterNet given --image-size/--image-mean/--image-std; a `train` output; a
timm checkpoint) is loaded in a fresh Python with `sys.modules["hf_vitrobust"] = None`, gives the original's
logits exactly and runs in `pipeline("image-classification")`. A checkpoint without processor information, or one
whose staged copy does not reproduce it, is refused and nothing is written to the output."""

import json
import os
import subprocess
import sys
import textwrap

import pytest
import torch
from huggingface_hub import ModelCard

from hf_vitrobust.cli import main as cli_main
from hf_vitrobust.constants import IMAGENET_DEFAULT_MEAN, IMAGENET_DEFAULT_STD
from hf_vitrobust.hub import ImageProcessorSpec, StagingError, stage_model
from hf_vitrobust.hub import verify as verify_module
from hf_vitrobust.models.alternet import (
    AlterNetConfig,
    AlterNetForImageClassification,
    alternet_image_processor,
)
from hf_vitrobust.models.alternet.saving import save_alternet
from hf_vitrobust.training import TrainingConfig, train

LABELS = {str(i): f"class_{i}" for i in range(3)}


def _isolated(stage, pixels, work):
    """Logits of `pixels`, pipeline output and loaded modules of the staged folder, in a Python without hf_vitrobust."""
    work.mkdir(parents=True, exist_ok=True)
    torch.save(pixels, work / "pixels.pt")
    script = textwrap.dedent(
        f"""
        import json, sys
        sys.modules["hf_vitrobust"] = None  # any import of the package now fails
        import numpy as np, torch
        from PIL import Image
        from transformers import AutoModelForImageClassification, pipeline
        model = AutoModelForImageClassification.from_pretrained({str(stage)!r}, trust_remote_code=True).eval()
        with torch.no_grad():
            torch.save(model(pixel_values=torch.load({str(work / "pixels.pt")!r})).logits, {str(work / "l.pt")!r})
        image = Image.fromarray(np.full((20, 30, 3), 128, dtype=np.uint8))
        out = pipeline("image-classification", model={str(stage)!r}, trust_remote_code=True)(image, top_k=2)
        json.dump({{"module": type(model).__module__, "pipeline": out}}, open({str(work / "out.json")!r}, "w"))
        """
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(HF_MODULES_CACHE=str(work / "modules"), HF_HUB_OFFLINE="1")
    done = subprocess.run([sys.executable, "-c", script], cwd=work, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    return torch.load(work / "l.pt", weights_only=True), json.loads((work / "out.json").read_text())


def _plain_alternet(folder):
    """An AlterNet written as an old/plain folder: no remote code, no auto_map, no image processor."""
    torch.manual_seed(0)
    config = AlterNetConfig.from_preset(
        "alternet-tiny", num_labels=3, id2label=LABELS, label2id={v: int(k) for k, v in LABELS.items()}
    )
    model = AlterNetForImageClassification(config).eval()
    save_alternet(model, folder, remote_code=False)
    (folder / "preprocessor_config.json").unlink()
    assert "auto_map" not in json.loads((folder / "config.json").read_text())
    return model


def test_plain_alternet_with_image_flags_is_self_contained(tmp_path, capsys):
    folder = tmp_path / "plain"
    model = _plain_alternet(folder)
    stage = tmp_path / "stage"
    flags = ["--image-size", "32", "--image-mean", "0.5", "0.4", "0.3", "--image-std", "0.2", "0.25", "0.3"]
    argv = ["push", "me/plain", "--checkpoint", str(folder), "--dry-run", "--output", str(stage), *flags]
    assert cli_main(argv) == 0
    assert "nothing uploaded" in capsys.readouterr().out
    files = {p.name for p in stage.iterdir()}
    assert {"configuration_alternet.py", "modeling_alternet.py", "preprocessor_config.json"} <= files
    config = json.loads((stage / "config.json").read_text())
    assert (
        config["auto_map"]["AutoModelForImageClassification"]
        == "modeling_alternet.AlterNetForImageClassification"
    )
    processor = json.loads((stage / "preprocessor_config.json").read_text())
    assert processor["image_mean"] == [0.5, 0.4, 0.3] and processor["image_std"] == [0.2, 0.25, 0.3]
    pixels = torch.randn(2, 3, 32, 32)
    logits, out = _isolated(stage, pixels, tmp_path / "iso")
    with torch.no_grad():
        assert torch.equal(logits, model(pixel_values=pixels).logits)
    assert out["module"].startswith("transformers_modules") and out["pipeline"][0]["label"] in LABELS.values()
    assert "pip install transformers torch pillow" in (stage / "README.md").read_text()


def test_plain_alternet_without_processor_information_is_refused(tmp_path, capsys):
    folder = tmp_path / "plain"
    _plain_alternet(folder)
    stage = tmp_path / "stage"
    with pytest.raises(StagingError, match="guessed mean/std would silently give wrong predictions"):
        stage_model(stage, folder)
    assert not stage.exists()
    argv = ["push", "me/plain", "--checkpoint", str(folder), "--dry-run", "--output", str(stage)]
    with pytest.raises(SystemExit):
        cli_main(argv)
    assert "--image-size N --image-mean R G B --image-std R G B" in capsys.readouterr().err
    assert not stage.exists()
    with pytest.raises(SystemExit):  # the flags come in full or not at all
        cli_main([*argv, "--image-size", "32"])
    assert not stage.exists()


def test_a_stage_that_does_not_reproduce_the_logits_is_refused(tmp_path, monkeypatch):
    folder = tmp_path / "plain"
    _plain_alternet(folder)
    monkeypatch.setattr(verify_module, "LOGITS_ATOL", -1.0)  # no difference is small enough
    stage = tmp_path / "stage"
    stage.mkdir()
    spec = ImageProcessorSpec(32, (0.5, 0.5, 0.5), (0.25, 0.25, 0.25))
    with pytest.raises(StagingError, match="logits differ"):
        stage_model(stage, folder, image_processor=spec)
    assert list(stage.iterdir()) == []


def test_image_processor_spec_matches_alternets_own_processor():
    config = AlterNetConfig.from_preset("alternet-tiny", num_labels=3)
    for size in (32, 224):
        spec = ImageProcessorSpec(size, (0.1, 0.2, 0.3), (0.4, 0.5, 0.6))
        config.image_size = size
        expected = alternet_image_processor(config, (0.1, 0.2, 0.3), (0.4, 0.5, 0.6)).to_dict()
        assert spec.processor_dict() == expected
    with pytest.raises(ValueError, match="three finite numbers"):
        ImageProcessorSpec(32, (0.5, 0.5), (0.2, 0.2, 0.2))
    with pytest.raises(ValueError, match="std must be positive"):
        ImageProcessorSpec(32, (0.5, 0.5, 0.5), (0.2, 0.0, 0.2))


def test_train_output_is_self_contained(tmp_path):
    folder = tmp_path / "trained"
    config = TrainingConfig(
        output_dir=folder, epochs=1, max_train_samples=64, max_eval_samples=32, batch_size=32
    )
    result = train(config, log=None)
    # As an older trainer wrote it: no remote code, no auto_map, no processor; the summary is the record.
    for name in ("configuration_alternet.py", "modeling_alternet.py", "preprocessor_config.json"):
        (folder / name).unlink()
    saved = json.loads((folder / "config.json").read_text())
    del saved["auto_map"]
    (folder / "config.json").write_text(json.dumps(saved))
    summary = json.loads((folder / "training_summary.json").read_text())
    assert summary["preprocessing"] == {
        "input_size": [16, 16],
        "crop_pct": 1.0,
        "interpolation": "bilinear",
        "mean": list(IMAGENET_DEFAULT_MEAN),
        "std": list(IMAGENET_DEFAULT_STD),
    }
    stage = tmp_path / "stage"
    stage_model(stage, folder, repo_id="me/trained")
    processor = json.loads((stage / "preprocessor_config.json").read_text())
    assert processor["image_mean"] == [0.485, 0.456, 0.406] and processor["size"] == {"shortest_edge": 16}
    # A summary written before the record existed: the trainer's fixed AlterNet rule gives the same processor.
    del summary["preprocessing"]
    (folder / "training_summary.json").write_text(json.dumps(summary))
    stage_model(tmp_path / "stage-older", folder, repo_id="me/trained")
    assert json.loads((tmp_path / "stage-older" / "preprocessor_config.json").read_text()) == processor
    pixels = torch.randn(2, 3, 16, 16)
    logits, out = _isolated(stage, pixels, tmp_path / "iso")
    with torch.no_grad():
        assert torch.equal(logits, result.model(pixel_values=pixels).logits)
    assert out["module"].startswith("transformers_modules") and len(out["pipeline"]) == 2


def test_timm_checkpoint_is_self_contained_and_its_card_names_timm(tmp_path):
    from transformers import (
        AutoModelForImageClassification,
        TimmWrapperConfig,
        TimmWrapperForImageClassification,
    )

    torch.manual_seed(0)
    model = TimmWrapperForImageClassification(
        TimmWrapperConfig(architecture="test_resnet", num_labels=3, id2label=LABELS)
    ).eval()
    folder = tmp_path / "timm"
    model.save_pretrained(folder)
    with pytest.raises(StagingError, match="no image processor"):  # no pretrained_cfg: nothing recorded
        stage_model(tmp_path / "refused", folder)
    assert not (tmp_path / "refused").exists()
    stage = tmp_path / "stage"
    stage_model(stage, folder, image_processor=ImageProcessorSpec(32, (0.5, 0.5, 0.5), (0.25, 0.25, 0.25)))
    config = json.loads((stage / "config.json").read_text())
    # The spec's preprocessing exactly: a resize of the shorter side to 32 by bilinear interpolation, as the
    # package's own processors (AlterNet's ConvNext processor) resize.
    assert config["pretrained_cfg"] == {
        "input_size": [3, 32, 32],
        "crop_pct": 1.0,
        "crop_mode": "center",
        "interpolation": "bilinear",
        "mean": [0.5, 0.5, 0.5],
        "std": [0.25, 0.25, 0.25],
        "num_classes": 3,
    }
    from transformers import AutoImageProcessor

    resize = AutoImageProcessor.from_pretrained(stage).val_transforms.transforms[0]
    assert resize.interpolation.value == "bilinear" and resize.size == 32
    pixels = torch.randn(2, 3, 32, 32)
    logits, out = _isolated(stage, pixels, tmp_path / "iso")
    # The reference is the saved folder as transformers loads it: a TimmWrapper loaded with from_pretrained differs
    # from the very module it was saved from by float rounding (2e-13 here, same weights), in any process.
    reloaded = AutoModelForImageClassification.from_pretrained(folder).eval()
    with torch.no_grad():
        assert torch.equal(logits, reloaded(pixel_values=pixels).logits)
        torch.testing.assert_close(logits, model(pixel_values=pixels).logits, rtol=0, atol=1e-9)
    assert out["pipeline"][0]["label"] in LABELS.values()
    card = ModelCard((stage / "README.md").read_text())
    assert "pip install transformers torch timm pillow" in card.text


def test_a_folder_in_timms_own_format_is_refused_with_the_way_to_publish_it(tmp_path):
    import timm
    from timm.models import save_for_hf

    folder = tmp_path / "my-resnet"
    save_for_hf(
        timm.create_model("resnet10t", pretrained=False, num_classes=3), folder, safe_serialization=True
    )
    with pytest.raises(StagingError, match=r"timm's own format.*push_to_hf_hub.*timm/hf-hub:REPO"):
        stage_model(tmp_path / "stage", folder, repo_id="me/my-resnet")
    assert not (tmp_path / "stage").exists()
