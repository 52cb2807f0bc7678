"""End-to-end training: the offline digits default, the checkpoint folder it writes, resume, bad datasets."""

import json
import os

import numpy as np
import pytest
import torch
from isolated import remote_code_logits
from PIL import Image
from probe_models import tiny_vit_model
from transformers import AutoImageProcessor, AutoModelForImageClassification

from hf_vitrobust.models import AlterNetForImageClassification, load_classifier
from hf_vitrobust.training import SUMMARY_FILE, TrainingConfig, digits_images, digits_split, train
from hf_vitrobust.training.trainer import CHECKPOINTS_DIR

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def digits_run(tmp_path_factory):
    """The offline default run, once per module (about a minute on 2 CPU cores)."""
    folder = tmp_path_factory.mktemp("train") / "alternet-digits"
    result = train(TrainingConfig(output_dir=folder), log=None)
    return result


def _eval_pixels(size: int) -> tuple[torch.Tensor, torch.Tensor]:
    images, labels = digits_images(size)
    _, test = digits_split(labels.tolist())
    mean = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)
    std = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1)
    return (images[test].float() / 255 - mean) / std, labels[test]


def test_digits_default_reaches_95_percent(digits_run):
    summary = digits_run.summary
    config = TrainingConfig()
    assert summary["eval_accuracy"] >= 0.95
    assert summary["num_eval_samples"] == 360 and summary["num_train_samples"] == 1437
    assert [record["epoch"] for record in summary["history"]] == list(range(1, config.epochs + 1))
    assert all(np.isfinite(record["train_loss"]) for record in summary["history"])
    assert summary["history"][-1]["train_loss"] < summary["history"][0]["train_loss"]
    # The reported accuracy is the returned model's accuracy on the fixed digits test split.
    pixels, labels = _eval_pixels(16)
    with torch.no_grad():
        accuracy = float((digits_run.model(pixel_values=pixels).logits.argmax(-1) == labels).float().mean())
    assert accuracy == pytest.approx(summary["eval_accuracy"], abs=1e-6)


def test_checkpoint_folder_contents(digits_run):
    folder = digits_run.output_dir
    files = set(os.listdir(folder))
    expected = {"model.safetensors", "config.json", "preprocessor_config.json", SUMMARY_FILE, "README.md"}
    assert expected | {"configuration_alternet.py", "modeling_alternet.py"} <= files
    assert CHECKPOINTS_DIR not in files  # resumable states are removed once the run finished
    config = json.loads((folder / "config.json").read_text())
    assert config["auto_map"]["AutoModelForImageClassification"].startswith("modeling_alternet.")
    assert config["image_size"] == 16 and config["window_sizes"] == [4, 4, 4, 2]
    summary = json.loads((folder / SUMMARY_FILE).read_text())
    assert summary == digits_run.summary
    for key in ("architecture", "preset", "num_labels", "id2label", "dataset", "recipe", "epochs", "history"):
        assert key in summary, key
    assert (
        summary["architecture"] == "AlterNetForImageClassification" and summary["preset"] == "alternet-tiny"
    )
    assert summary["recipe"]["lr"] == TrainingConfig().lr and summary["wall_seconds"] > 0
    readme = (folder / "README.md").read_text()
    assert readme.startswith("---\n") and "alternet" in readme.lower()


def test_folder_loads_with_auto_classes_and_the_processor_matches_training(digits_run):
    folder = digits_run.output_dir
    loaded = AutoModelForImageClassification.from_pretrained(folder).eval()
    assert type(loaded) is AlterNetForImageClassification
    pixels, _ = _eval_pixels(16)
    with torch.no_grad():
        assert torch.equal(loaded(pixel_values=pixels).logits, digits_run.model(pixel_values=pixels).logits)
    # A user's path: 8x8 grayscale digit images through the saved image processor.
    from sklearn.datasets import load_digits

    digits = load_digits()
    _, test = digits_split(digits.target.tolist())
    photos = [Image.fromarray((digits.images[i] / 16 * 255).astype(np.uint8)).convert("RGB") for i in test]
    processor = AutoImageProcessor.from_pretrained(folder)
    inputs = processor(photos, return_tensors="pt")["pixel_values"]
    assert inputs.shape == (len(test), 3, 16, 16)
    with torch.no_grad():
        predictions = loaded(pixel_values=inputs).logits.argmax(-1)
    assert float((predictions == torch.from_numpy(digits.target[test])).float().mean()) >= 0.9


def test_remote_code_loads_without_hf_vitrobust_with_identical_logits(digits_run, tmp_path):
    pixels, _ = _eval_pixels(16)
    pixels = pixels[:8]
    with torch.no_grad():
        expected = digits_run.model(pixel_values=pixels).logits
    assert torch.equal(remote_code_logits(digits_run.output_dir, pixels, tmp_path), expected)


class _Interrupted(Exception):
    pass


def _small_config(output_dir, **overrides) -> TrainingConfig:
    """Every random part of the recipe on, on 48 images: what a resume must replay exactly."""
    values = {
        "output_dir": output_dir,
        "epochs": 3,
        "batch_size": 16,
        "max_train_samples": 48,
        "max_eval_samples": 16,
        "lr": 3e-3,
        "mixup_alpha": 0.8,
        "cutmix_alpha": 1.0,
        "label_smoothing": 0.1,
        "randaugment": True,
        "random_erasing": 0.25,
        "drop_path_rate": 0.1,
        "grad_clip": 1.0,
        "sam": True,
        "seed": 7,
        "num_threads": 1,
    }
    return TrainingConfig(**{**values, **overrides})


def test_resume_after_interruption_gives_the_weights_of_an_uninterrupted_run(tmp_path):
    straight = train(_small_config(tmp_path / "straight"), log=None)

    def stop_after_two(record):
        if record["epoch"] == 2:
            raise _Interrupted

    with pytest.raises(_Interrupted):
        train(_small_config(tmp_path / "resumed"), callback=stop_after_two, log=None)
    states = os.listdir(tmp_path / "resumed" / CHECKPOINTS_DIR)
    assert states == ["epoch_2"]  # the epoch-1 state was replaced by the epoch-2 one
    assert not (tmp_path / "resumed" / "model.safetensors").exists()
    with pytest.raises(ValueError, match=r"lr, seed differ from the interrupted run"):
        train(_small_config(tmp_path / "resumed", resume=True, lr=1e-3, seed=1), log=None)
    resumed = train(_small_config(tmp_path / "resumed", resume=True), log=None)

    assert [r["epoch"] for r in resumed.summary["history"]] == [1, 2, 3]
    for a, b in zip(straight.summary["history"], resumed.summary["history"], strict=True):
        assert a["train_loss"] == pytest.approx(b["train_loss"], abs=1e-6)
        assert a["eval_accuracy"] == b["eval_accuracy"]
    reference = straight.model.state_dict()
    for name, tensor in resumed.model.state_dict().items():
        torch.testing.assert_close(tensor, reference[name], rtol=0, atol=1e-6, msg=name)


def test_resume_without_a_state_is_an_error(tmp_path):
    with pytest.raises(ValueError, match="no completed epoch state"):
        train(_small_config(tmp_path / "empty", resume=True), log=None)


def _image_folder(root, classes=("dark", "light"), per_class=12):
    rng = np.random.default_rng(0)
    for index, name in enumerate(classes):
        (root / name).mkdir(parents=True)
        for i in range(per_class):
            level = 40 + 170 * index
            pixels = np.clip(rng.normal(level, 20, (20, 24, 3)), 0, 255).astype(np.uint8)
            Image.fromarray(pixels).save(root / name / f"{i}.png")
    return root


def test_local_image_folder_trains_and_keeps_its_class_names(tmp_path):
    data = _image_folder(tmp_path / "folder")
    result = train(
        TrainingConfig(
            dataset=str(data),
            output_dir=tmp_path / "out",
            image_size=16,
            epochs=5,
            batch_size=8,
            lr=1e-2,
            warmup_epochs=0,
        ),
        log=None,
    )
    summary = result.summary
    assert summary["id2label"] == {"0": "dark", "1": "light"}
    assert summary["num_train_samples"] + summary["num_eval_samples"] == 24
    assert summary["eval_split"].startswith("train (held-out")
    config = json.loads((tmp_path / "out" / "config.json").read_text())
    assert config["id2label"] == {"0": "dark", "1": "light"}
    assert summary["eval_accuracy"] == 1.0  # dark against light is separable after a few steps


def test_dataset_without_a_label_column_fails_before_training(tmp_path):
    import datasets

    images = [Image.new("RGB", (8, 8), (i * 20, 0, 0)) for i in range(4)]
    part = datasets.Dataset.from_dict({"image": images, "target": [0, 1, 0, 1]})
    part = part.cast_column("image", datasets.Image())
    (tmp_path / "data").mkdir()
    part.to_parquet(str(tmp_path / "data" / "train.parquet"))
    with pytest.raises(ValueError, match=r"no label column 'label' \(columns: \['image', 'target'\]\)"):
        train(TrainingConfig(dataset=str(tmp_path / "data"), output_dir=tmp_path / "out"), log=None)
    assert not (tmp_path / "out").exists()
    with pytest.raises(ValueError, match="no image column 'picture'"):
        train(
            TrainingConfig(
                dataset=str(tmp_path / "data"), image_column="picture", output_dir=tmp_path / "out"
            ),
            log=None,
        )


def test_bf16_mixed_precision_trains(tmp_path):
    result = train(
        TrainingConfig(
            output_dir=tmp_path / "bf16",
            precision="bf16",
            epochs=1,
            batch_size=16,
            max_train_samples=64,
            max_eval_samples=32,
        ),
        log=None,
    )
    assert np.isfinite(result.summary["history"][0]["train_loss"])
    assert result.summary["recipe"]["precision"] == "bf16"
    assert all(p.dtype == torch.float32 for p in result.model.parameters())


@pytest.fixture
def tiny_convnext_folder(tmp_path):
    from transformers import ConvNextConfig, ConvNextForImageClassification, ConvNextImageProcessor

    config = ConvNextConfig(hidden_sizes=[8, 16], depths=[1, 1], num_stages=2, patch_size=4, image_size=16)
    folder = tmp_path / "convnext"
    ConvNextForImageClassification(config).save_pretrained(folder)
    ConvNextImageProcessor(size={"shortest_edge": 16}, crop_pct=1.0).save_pretrained(folder)
    return folder


@pytest.mark.parametrize("spec", ["timm/resnet18", "convnext-folder"])
def test_timm_and_transformers_models_train_and_save_as_transformers_folders(
    spec, tiny_convnext_folder, tmp_path
):
    model = str(tiny_convnext_folder) if spec == "convnext-folder" else spec
    size = 16 if spec.startswith("timm/") else None
    result = train(
        TrainingConfig(
            model=model,
            image_size=size,
            output_dir=tmp_path / "out",
            epochs=1,
            batch_size=16,
            max_train_samples=32,
            max_eval_samples=16,
            drop_path_rate=0.05,
            num_threads=1,
        ),
        log=None,
    )
    assert result.summary["num_labels"] == 10 and result.summary["recipe"]["drop_path_rate"] == 0.05
    loaded = AutoModelForImageClassification.from_pretrained(tmp_path / "out").eval()
    assert type(loaded) is type(result.model) and loaded.config.num_labels == 10
    assert AutoImageProcessor.from_pretrained(tmp_path / "out") is not None
    pixels = torch.randn(2, 3, 16, 16)
    with torch.no_grad():
        torch.testing.assert_close(
            loaded(pixel_values=pixels).logits, result.model(pixel_values=pixels).logits, rtol=0, atol=1e-6
        )
    # The folder is also a model spec for the rest of the package (evaluation, probes).
    classifier = load_classifier(str(tmp_path / "out"))
    assert classifier.num_classes == 10 and classifier.input_size == (16, 16)


def test_bad_models_fail_before_training(tmp_path):
    with pytest.raises(ValueError, match="Did you mean 'timm/resnet18'"):
        train(TrainingConfig(model="timm/resnet18x", output_dir=tmp_path / "out"), log=None)
    vit = tmp_path / "vit"
    tiny_vit_model(
        image_size=16, patch_size=4, hidden_size=8, intermediate_size=8, num_labels=2
    ).save_pretrained(vit)
    with pytest.raises(ValueError, match="ViTConfig has no drop_path_rate"):
        train(TrainingConfig(model=str(vit), drop_path_rate=0.1, output_dir=tmp_path / "out"), log=None)
    with pytest.raises(ValueError, match="cannot take 12x12 inputs"):
        train(
            TrainingConfig(
                image_size=12, model_overrides={"window_sizes": [4, 4, 4, 4]}, output_dir=tmp_path / "out"
            ),
            log=None,
        )
    assert not (tmp_path / "out").exists()


def test_a_wrongly_typed_model_override_is_a_value_error_naming_the_field(tmp_path):
    """A value of the wrong type (the @strict config's own error, not a TypeError) becomes the trainer's ValueError
    before any training."""
    from hf_vitrobust.training.trainer import _build_alternet

    config = TrainingConfig(
        model="alternet-tiny", model_overrides={"layer_type": 4}, output_dir=tmp_path / "out"
    )
    with pytest.raises(ValueError, match=r"Bad model_overrides for 'alternet-tiny':.*layer_type"):
        _build_alternet(config, {"num_labels": 10})
