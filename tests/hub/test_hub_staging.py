"""Staged upload folders, loaded where hf_vitrobust cannot be imported.

A model stage (a tiny AlterNet checkpoint + a real evaluation run) holds exactly the checkpoint's files, each run's
results.json, predictions, figures and report under results/<run>/ (no .work/), and a README rendered from both; the
staged model loads with `from_pretrained(..., trust_remote_code=True)` without hf_vitrobust and gives identical
logits. A metric stage loads with `evaluate.load` without hf_vitrobust, computes exactly what hf_vitrobust.metrics
computes, and its app.py builds the Gradio widget."""

import ast
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml
from huggingface_hub import ModelCard

from hf_vitrobust.evaluation.config import EvaluationConfig
from hf_vitrobust.evaluation.runner import evaluate
from hf_vitrobust.hub import stage_metric, stage_model
from hf_vitrobust.metrics import STANDARD_CORRUPTIONS, mean_corruption_error, ood_detection_metrics
from hf_vitrobust.models.alternet import (
    AlterNetConfig,
    AlterNetForImageClassification,
    alternet_image_processor,
)
from hf_vitrobust.models.alternet.saving import save_alternet

SUMMARY = {
    "architecture": "AlterNetForImageClassification",
    "preset": "alternet-tiny",
    "num_labels": 4,
    "id2label": {str(i): f"class_{i}" for i in range(4)},
    "dataset": "digits",
    "recipe": {"lr": 0.004},
    "epochs": 1,
    "history": [{"epoch": 1, "train_loss": 1.3, "eval_accuracy": 0.5, "seconds": 1.0}],
    "eval_accuracy": 0.5,
    "wall_seconds": 1.0,
    "hf_vitrobust_version": "0.1.0",
}

SUITE = {
    "name": "hubtiny",
    "description": "three photos and one corruption",
    "batch_size": 8,
    "seed": 0,
    "chunk_size": 8,
    "models": ["builtin:efficientnet_lite0"],
    "benchmarks": {
        "imagenet-val": {"source": "builtin", "limit": 3},
        "imagenet-c": {
            "source": "generated:builtin",
            "limit": 2,
            "corruptions": ["contrast"],
            "severities": [5],
        },
    },
}


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    """A real (tiny) evaluation run folder, report and figures included."""
    root = tmp_path_factory.mktemp("runs")
    suite = root / "hubtiny.yaml"
    suite.write_text(yaml.safe_dump(SUITE))
    output = root / "demo-run"
    evaluate(EvaluationConfig(suite=str(suite), output=output, progress=False))
    assert (output / ".work").is_dir() and (output / "report.html").is_file()
    return output


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    torch.manual_seed(0)
    config = AlterNetConfig.from_preset(
        "alternet-tiny",
        num_labels=4,
        id2label=SUMMARY["id2label"],
        label2id={v: int(k) for k, v in SUMMARY["id2label"].items()},
    )
    model = AlterNetForImageClassification(config).eval()
    for module in model.modules():  # non-trivial BN statistics: a lost buffer would change the logits
        if isinstance(module, torch.nn.BatchNorm2d):
            module.running_mean.normal_(0, 0.5)
            module.running_var.uniform_(0.5, 2.0)
    folder = tmp_path_factory.mktemp("ckpt") / "alternet-tiny-digits"
    save_alternet(model, folder, alternet_image_processor(config), remote_code=True)
    (folder / "training_summary.json").write_text(json.dumps(SUMMARY))
    (folder / "README.md").write_text("stale card")
    (folder / "checkpoints" / "epoch_1").mkdir(parents=True)  # resumable state: never uploaded
    (folder / "checkpoints" / "epoch_1" / "optimizer.bin").write_bytes(b"\0" * 16)
    return model, folder


@pytest.fixture(scope="module")
def model_stage(checkpoint, run_dir, tmp_path_factory):
    _, folder = checkpoint
    stage = tmp_path_factory.mktemp("stage") / "upload"
    files = stage_model(stage, folder, [run_dir], repo_id="me/alternet-tiny-digits")
    return stage, files


def _relative(root: Path, paths) -> set[str]:
    return {Path(p).relative_to(root).as_posix() for p in paths}


def test_model_stage_holds_exactly_the_checkpoint_the_runs_and_the_card(checkpoint, run_dir, model_stage):
    _, folder = checkpoint
    stage, files = model_stage
    expected = {p.name for p in folder.iterdir() if p.is_file() and p.name != "README.md"}
    run = run_dir.name
    for path in run_dir.rglob("*"):
        relative = path.relative_to(run_dir)
        if path.is_file() and relative.parts[0] in {
            "results.json",
            "report.md",
            "report.html",
            "predictions",
            "figures",
        }:
            expected.add(f"results/{run}/{relative.as_posix()}")
    expected.add(f"results/{run}/suite.yaml")  # the run read its own suite file: the card's command names it
    expected.add("README.md")
    assert _relative(stage, files) == expected
    assert _relative(stage, (p for p in stage.rglob("*") if p.is_file())) == expected
    # What the issue asks for is there, and nothing private or resumable.
    assert {
        "model.safetensors",
        "config.json",
        "preprocessor_config.json",
        "modeling_alternet.py",
    } <= expected
    assert {
        f"results/{run}/results.json",
        f"results/{run}/report.html",
        f"results/{run}/report.md",
    } <= expected
    assert any(
        name.startswith(f"results/{run}/predictions/") and name.endswith(".parquet") for name in expected
    )
    assert any(name.startswith(f"results/{run}/figures/") for name in expected)
    assert not any(".work" in name or name.startswith("checkpoints") for name in expected)
    for name in ("model.safetensors", "config.json", "training_summary.json"):
        assert (stage / name).read_bytes() == (folder / name).read_bytes()
    assert (stage / "results" / run / "results.json").read_bytes() == (run_dir / "results.json").read_bytes()


def test_model_stage_card_is_rendered_from_checkpoint_and_results(run_dir, model_stage):
    stage, _ = model_stage
    card = ModelCard((stage / "README.md").read_text())
    assert card.text != "stale card" and card.data.library_name == "transformers"
    results = json.loads((run_dir / "results.json").read_text())
    metrics = results["metrics"]["builtin_efficientnet_lite0"]
    listed = {(r.dataset_type, r.metric_type): r.metric_value for r in card.data.eval_results}
    # The bundled photos and generated ImageNet-C: our own marked dataset types (docs/publishing.md, Model-index).
    assert listed[("hf_vitrobust/imagenet-val-local", "accuracy")] == pytest.approx(
        metrics["imagenet-val"]["top1"]
    )
    assert listed[("hf_vitrobust/imagenet-c-generated", "accuracy")] == pytest.approx(
        metrics["imagenet-c"]["mean_top1"]
    )
    assert "| Epoch |" in card.text and "toy model" in card.text
    # The run evaluated EfficientNet-Lite0, not this AlterNet: its numbers keep EfficientNet's name.
    assert card.data.model_name == results["models"][0]["name"] != "alternet-tiny-digits"
    url = f"https://huggingface.co/me/alternet-tiny-digits/blob/main/results/{run_dir.name}/results.json"
    assert {r.source_url for r in card.data.eval_results} == {url}


def test_stage_refuses_to_overwrite_and_needs_something(checkpoint, run_dir, tmp_path):
    _, folder = checkpoint
    stage = tmp_path / "stage"
    stage.mkdir()
    (stage / "keep.txt").write_text("mine")
    with pytest.raises(FileExistsError, match="overwrite=True"):
        stage_model(stage, folder)
    assert (stage / "keep.txt").read_text() == "mine"
    # These check the folder rules, not the logits: the verifying subprocess has its own tests.
    files = stage_model(stage, folder, overwrite=True, verify=False)
    assert not (stage / "keep.txt").exists() and "results" not in {
        p.relative_to(stage).parts[0] for p in files
    }
    with pytest.raises(ValueError, match="Nothing to stage"):
        stage_model(tmp_path / "empty")
    with pytest.raises(FileNotFoundError, match=r"no config\.json"):
        stage_model(tmp_path / "other", run_dir)  # a run folder is not a checkpoint
    assert not (tmp_path / "other").exists()  # refused before writing anything
    for overlapping in (folder, folder / "sub", folder.parent):
        with pytest.raises(ValueError, match="overlaps"):
            stage_model(overlapping, folder, overwrite=True)
    assert (folder / "model.safetensors").is_file()
    results_only = stage_model(tmp_path / "results-only", results=[run_dir / "results.json"])
    assert "README.md" in {p.name for p in results_only} and not any(
        p.suffix == ".safetensors" for p in results_only
    )


def test_checkpoint_without_training_summary_is_described_from_its_config(checkpoint, tmp_path):
    _, folder = checkpoint
    converted = tmp_path / "converted"
    shutil.copytree(folder, converted, ignore=shutil.ignore_patterns("training_summary.json", "checkpoints"))
    files = stage_model(
        tmp_path / "stage", converted, verify=False
    )  # the card is checked here, not the logits
    assert {p.name for p in files} == {p.name for p in converted.iterdir()}  # README.md replaced, not added
    card = ModelCard((tmp_path / "stage" / "README.md").read_text())
    assert "AlterNetForImageClassification" in card.text and "alternet" in card.data.tags
    assert "class_3" in card.text and card.data.eval_results is None


def _mce_inputs():
    rng = np.random.default_rng(0)
    corruptions = [c for c in STANDARD_CORRUPTIONS for _ in range(5 * 3)]
    severities = [s for _ in STANDARD_CORRUPTIONS for s in range(1, 6) for _ in range(3)]
    references = rng.integers(0, 10, len(corruptions))
    predictions = np.where(rng.random(len(corruptions)) < 0.4, references, (references + 3) % 10)
    clean_references = rng.integers(0, 10, 30)
    clean_predictions = np.where(rng.random(30) < 0.8, clean_references, 0)
    return {
        "predictions": predictions.tolist(),
        "references": references.tolist(),
        "corruptions": corruptions,
        "severities": severities,
    }, {"clean_predictions": clean_predictions.tolist(), "clean_references": clean_references.tolist()}


def _ood_inputs():
    rng = np.random.default_rng(1)
    is_ood = (np.arange(50) % 2 == 0).tolist()
    return {"scores": (rng.normal(size=50) + np.asarray(is_ood) * 0.8).tolist(), "is_ood": is_ood}


@pytest.fixture(scope="module")
def isolated(checkpoint, model_stage, tmp_path_factory):
    """One Python where `import hf_vitrobust` fails: loads the staged model and the staged metrics, builds app.py."""
    model, _ = checkpoint
    stage, _ = model_stage
    work = tmp_path_factory.mktemp("isolated")
    metric_stages = {}
    for name in ("mce", "ood_aupr"):
        metric_stages[name] = work / name  # evaluate.load(folder) reads <folder name>.py
        stage_metric(metric_stages[name], name)
    pixels = torch.randn(3, 3, 32, 32)
    torch.save(pixels, work / "pixels.pt")
    mce_batch, mce_clean = _mce_inputs()
    (work / "inputs.json").write_text(
        json.dumps({"mce": [mce_batch, mce_clean], "ood_aupr": [_ood_inputs(), {}]})
    )
    script = textwrap.dedent(
        f"""
        import json, runpy, sys
        sys.modules["hf_vitrobust"] = None  # any import of the package now fails
        import torch
        from transformers import AutoModelForImageClassification
        model = AutoModelForImageClassification.from_pretrained({str(stage)!r}, trust_remote_code=True).eval()
        assert type(model).__module__.startswith("transformers_modules"), type(model).__module__
        with torch.no_grad():
            torch.save(model(torch.load({str(work / "pixels.pt")!r}, weights_only=True)).logits, {str(work / "logits.pt")!r})
        import evaluate
        inputs = json.load(open({str(work / "inputs.json")!r}))
        out = {{}}
        for name, folder in {json.dumps({k: str(v) for k, v in metric_stages.items()})}.items():
            metric = evaluate.load(folder)
            batch, options = inputs[name]
            metric.add_batch(**batch)
            out[name] = metric.compute(**options)
            out[name + "_module"] = type(metric).__module__
        app = runpy.run_path(folder + "/app.py", run_name="space_app")  # the Space's app, built, not launched
        out["app"] = type(app["build_demo"]()).__name__
        json.dump(out, open({str(work / "metrics.json")!r}, "w"))
        assert not any(m == "hf_vitrobust" or m.startswith("hf_vitrobust.") for m in sys.modules if sys.modules[m])
        """
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(HF_MODULES_CACHE=str(work / "modules"), HF_HUB_OFFLINE="1", GRADIO_ANALYTICS_ENABLED="False")
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=work, env=env, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stderr[-4000:]
    return model, pixels, work


def test_staged_model_loads_without_hf_vitrobust_with_identical_logits(isolated):
    model, pixels, work = isolated
    with torch.no_grad():
        expected = model(pixels).logits
    assert torch.equal(torch.load(work / "logits.pt", weights_only=True), expected)


def test_staged_metrics_load_without_hf_vitrobust_and_match_the_package(isolated):
    _, _, work = isolated
    out = json.loads((work / "metrics.json").read_text())
    batch, clean = _mce_inputs()
    expected = mean_corruption_error(
        batch["predictions"], batch["references"], batch["corruptions"], batch["severities"], **clean
    ).to_dict()
    assert out["mce"] == json.loads(json.dumps(expected))  # the same code: the same numbers, exactly
    assert out["mce"]["relative_mce"] is not None and out["mce"]["mce"] > 0
    ood = _ood_inputs()
    assert out["ood_aupr"] == ood_detection_metrics(ood["scores"], ood["is_ood"]).to_dict()
    assert out["mce_module"].startswith("evaluate_modules.") and out["ood_aupr_module"].startswith(
        "evaluate_modules."
    )
    assert out["app"] == "Interface"


def test_metric_stage_is_a_space_folder(tmp_path):
    files = stage_metric(tmp_path / "space", "ood_aupr", repo_id="someone/vitrobust-ood", sdk_version="5.0.0")
    assert _relative(tmp_path / "space", files) == {
        "README.md",
        "app.py",
        "requirements.txt",
        "vitrobust-ood.py",  # evaluate.load("someone/vitrobust-ood") fetches vitrobust-ood.py
        "vitrobust_core.py",
    }
    card = ModelCard((tmp_path / "space" / "README.md").read_text())
    meta = card.data.to_dict()
    assert meta["sdk"] == "gradio" and meta["app_file"] == "app.py" and meta["sdk_version"] == "5.0.0"
    assert {"evaluate", "metric"} <= set(meta["tags"]) and meta["title"]
    assert 'evaluate.load("someone/vitrobust-ood")' in card.text
    app = (tmp_path / "space" / "app.py").read_text()
    assert "from evaluate.utils import launch_gradio_widget" in app and "vitrobust-ood.py" in app
    script = (tmp_path / "space" / "vitrobust-ood.py").read_text()
    imported = [
        node.module if isinstance(node, ast.ImportFrom) else alias.name
        for node in ast.walk(ast.parse(script))
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    ]
    assert not any("hf_vitrobust" in (name or "") for name in imported), imported
    assert "from .vitrobust_core import ood_detection_metrics" in script and "\nimport sklearn\n" in script
    requirements = (tmp_path / "space" / "requirements.txt").read_text().split()
    assert "scikit-learn" in requirements and any(r.startswith("evaluate") for r in requirements)
    core = (tmp_path / "space" / "vitrobust_core.py").read_text()
    assert "import hf_vitrobust" not in core and "from hf_vitrobust" not in core and "from ." not in core
    with pytest.raises(ValueError, match="Unknown metric"):
        stage_metric(tmp_path / "bad", "mcee")
