"""Models run in float32 unless a dtype is asked for, whatever dtype their weights were stored in, and the stored
dtype is read from the files (safetensors header, state dict, config.json) without loading the weights: a tiny ViT
saved in bf16 with transformers, a timm model saved in bf16, a Hub-cache layout, a mixed checkpoint."""

import json
import shutil

import pytest
import timm
import torch
from probe_models import save_vit_folder, tiny_vit_model
from safetensors.torch import save_file
from timm.models import save_for_hf
from transformers import AutoModelForImageClassification, ViTForImageClassification

from hf_vitrobust.models import Preprocessing, load_classifier
from hf_vitrobust.models.builtin import BuiltinModel
from hf_vitrobust.models.stored_dtype import (
    folder_stored_dtype,
    hub_cache_stored_dtype,
    safetensors_dtype_counts,
)


def _tiny_vit() -> ViTForImageClassification:
    return tiny_vit_model(num_hidden_layers=2, num_labels=5)


@pytest.fixture(scope="module")
def bf16_vit_folder(tmp_path_factory):
    """A tiny ViT saved with save_pretrained after .to(torch.bfloat16), with its image processor."""
    folder = tmp_path_factory.mktemp("bf16-vit")
    save_vit_folder(folder, _tiny_vit().to(torch.bfloat16))
    return folder


def test_a_bf16_checkpoint_runs_in_fp32_by_default(bf16_vit_folder):
    # What transformers itself does with the folder: it keeps bf16 (dtype="auto"), the reason for the default.
    assert (
        next(AutoModelForImageClassification.from_pretrained(bf16_vit_folder).parameters()).dtype
        == torch.bfloat16
    )
    classifier = load_classifier(bf16_vit_folder)
    assert {p.dtype for p in classifier.module.parameters()} == {torch.float32}
    assert classifier.dtype == torch.float32
    assert classifier.stored_dtype == "bfloat16"
    # The fp32 parameters are the stored bf16 values, upcast exactly.
    stored = AutoModelForImageClassification.from_pretrained(bf16_vit_folder, dtype=torch.bfloat16)
    for (name, ours), (_, theirs) in zip(
        classifier.module.state_dict().items(), stored.state_dict().items(), strict=True
    ):
        assert torch.equal(ours, theirs.float()), name
    # Its logits are the fp32 model's on those values: an independent fp32 reference built by upcasting.
    reference = stored.float().eval()
    pixels = torch.rand(2, 3, 32, 32, generator=torch.Generator().manual_seed(1))
    normalized = (pixels - 0.5) / 0.5  # ViTImageProcessor's default mean and std
    with torch.no_grad():
        expected = reference(pixel_values=normalized).logits
        logits = classifier(pixels)
    assert logits.dtype == torch.float32
    torch.testing.assert_close(logits, expected, rtol=1e-5, atol=1e-5)
    # A bf16 forward pass of the same weights differs by bf16 rounding, not by nothing: fp32 really ran.
    with torch.no_grad():
        bf16_logits = stored.eval()(pixel_values=normalized.bfloat16()).logits.float()
    assert 0 < (bf16_logits - logits).abs().max() < 0.1


def test_a_requested_precision_runs_in_it(bf16_vit_folder):
    classifier = load_classifier(bf16_vit_folder, dtype="bfloat16")
    assert {p.dtype for p in classifier.module.parameters()} == {torch.bfloat16}
    assert classifier.dtype == torch.bfloat16 and classifier.stored_dtype == "bfloat16"
    assert classifier(torch.rand(1, 3, 32, 32)).dtype == torch.bfloat16
    # The view a protocol makes keeps the stored dtype.
    assert classifier.with_preprocessing(classifier.preprocessing).stored_dtype == "bfloat16"


def test_an_fp32_checkpoint_reads_as_fp32(tmp_path):
    save_vit_folder(tmp_path, _tiny_vit())
    classifier = load_classifier(tmp_path)
    assert classifier.stored_dtype == "float32" and classifier.dtype == torch.float32


def test_the_header_is_read_without_the_weights_and_mixed_checkpoints_say_so(tmp_path):
    tensors = {
        "a": torch.zeros(3, dtype=torch.bfloat16),
        "b": torch.zeros(3, dtype=torch.bfloat16),
        "norm": torch.zeros(3, dtype=torch.float32),
        "position_ids": torch.arange(3),  # an integer buffer says nothing about the weights' precision
    }
    save_file(tensors, tmp_path / "model.safetensors")
    assert safetensors_dtype_counts(tmp_path / "model.safetensors") == {"bfloat16": 2, "float32": 1}
    assert folder_stored_dtype(tmp_path) == "bfloat16+float32"
    # Truncated after its header: the data is never read, so the answer is the same.
    data = (tmp_path / "model.safetensors").read_bytes()
    header_end = 8 + int.from_bytes(data[:8], "little")
    truncated = tmp_path / "header-only"
    truncated.mkdir()
    (truncated / "model.safetensors").write_bytes(data[:header_end])
    assert folder_stored_dtype(truncated) == "bfloat16+float32"


def test_sharded_torch_and_config_only_checkpoints(tmp_path):
    sharded = tmp_path / "sharded"
    sharded.mkdir()
    save_file({"a": torch.zeros(2, dtype=torch.float16)}, sharded / "model-00001-of-00002.safetensors")
    save_file({"b": torch.zeros(2, dtype=torch.float16)}, sharded / "model-00002-of-00002.safetensors")
    weight_map = {"a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors"}
    (sharded / "model.safetensors.index.json").write_text(json.dumps({"weight_map": weight_map}))
    assert folder_stored_dtype(sharded) == "float16"
    bin_folder = tmp_path / "bin"
    bin_folder.mkdir()
    torch.save({"w": torch.zeros(2, dtype=torch.bfloat16)}, bin_folder / "pytorch_model.bin")
    assert folder_stored_dtype(bin_folder) == "bfloat16"
    config_only = tmp_path / "config-only"
    config_only.mkdir()
    (config_only / "config.json").write_text(json.dumps({"torch_dtype": "float16"}))
    assert folder_stored_dtype(config_only) == "float16"
    (config_only / "config.json").write_text(json.dumps({"dtype": "bfloat16", "torch_dtype": "float16"}))
    assert folder_stored_dtype(config_only) == "bfloat16"
    assert folder_stored_dtype(tmp_path / "empty-and-missing") is None


def test_a_hub_id_reads_the_cached_files(bf16_vit_folder, tmp_path):
    """The Hub cache's layout (models--org--name/snapshots/<commit>/), as huggingface_hub's own
    try_to_load_from_cache reads it; nothing reaches the Hub."""
    commit = "0" * 40
    repo = tmp_path / "models--org--tiny-vit"
    snapshot = repo / "snapshots" / commit
    shutil.copytree(bf16_vit_folder, snapshot)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    assert hub_cache_stored_dtype("org/tiny-vit", cache_dir=tmp_path) == "bfloat16"
    assert hub_cache_stored_dtype("org/not-cached", cache_dir=tmp_path) is None
    classifier = load_classifier("org/tiny-vit", cache_dir=str(tmp_path), local_files_only=True)
    assert classifier.stored_dtype == "bfloat16" and classifier.dtype == torch.float32


def test_timm_folders_run_in_fp32_and_record_the_stored_dtype(tmp_path):
    model = timm.create_model("resnet18", pretrained=False, num_classes=4).to(torch.bfloat16)
    save_for_hf(model, tmp_path, safe_serialization=True)
    classifier = load_classifier(f"timm/local-dir:{tmp_path}")
    assert classifier.stored_dtype == "bfloat16" and classifier.dtype == torch.float32
    assert load_classifier(tmp_path).stored_dtype == "bfloat16"  # the plain-folder route to timm
    assert load_classifier(f"timm/local-dir:{tmp_path}", dtype=torch.float16).dtype == torch.float16
    random = load_classifier("timm/random-init:resnet18", num_classes=4)
    assert random.stored_dtype is None and random.dtype == torch.float32


def test_builtin_and_in_memory_modules(monkeypatch):
    module = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3 * 8 * 8, 3)).to(torch.bfloat16)
    preprocessing = Preprocessing(input_size=(8, 8), mean=(0.5,) * 3, std=(0.5,) * 3)
    # A builtin whose weights are stored in bf16 runs in fp32.
    built = BuiltinModel(module=module, preprocessing=preprocessing, id2label={0: "a", 1: "b", 2: "c"})
    monkeypatch.setattr(
        "hf_vitrobust.models.loading.create_builtin",
        lambda name, **kwargs: BuiltinModel(built.module, built.preprocessing, built.id2label, "bfloat16"),
    )
    classifier = load_classifier("builtin:whatever")
    assert classifier.dtype == torch.float32 and classifier.stored_dtype == "bfloat16"
    # An in-memory module is not loaded from files: it keeps its dtype unless one is asked for.
    given = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3 * 8 * 8, 3)).to(torch.bfloat16)
    kept = load_classifier(given, preprocessing=preprocessing)
    assert kept.dtype == torch.bfloat16 and kept.stored_dtype is None


def test_timm_pretrained_weights_from_the_hub_cache(tmp_path):
    """`timm/<name>` with pretrained weights: timm reads them from the Hub cache (offline here) and the stored
    dtype comes from the same cached file, found through the model's pretrained_cfg hf_hub_id."""
    commit = "1" * 40
    repo = tmp_path / "models--timm--resnet18.a1_in1k"
    (repo / "snapshots" / commit).mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    weights = timm.create_model("resnet18", pretrained=False).to(torch.bfloat16).state_dict()
    save_file(weights, repo / "snapshots" / commit / "model.safetensors")
    classifier = load_classifier("timm/resnet18.a1_in1k", cache_dir=str(tmp_path))
    assert classifier.stored_dtype == "bfloat16" and classifier.dtype == torch.float32
    loaded = classifier.module.state_dict()
    assert torch.equal(loaded["fc.weight"], weights["fc.weight"].float())
