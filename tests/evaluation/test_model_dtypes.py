"""A run records, per model, the dtype its weights were stored in and the dtype it ran in: a tiny ImageNet-1k ViT
saved in bf16 is evaluated in fp32 (the default), and its results.json and report say both."""

import json

import torch
from probe_models import save_vit_folder, tiny_vit_model

from hf_vitrobust.analysis.results import check_schema
from hf_vitrobust.evaluation.config import EvaluationConfig
from hf_vitrobust.evaluation.runner import evaluate
from hf_vitrobust.report.document import render_markdown


def test_a_bf16_saved_model_runs_in_fp32_and_results_json_records_both(tmp_path):
    folder = tmp_path / "bf16-vit"
    save_vit_folder(folder, tiny_vit_model(hidden_size=16, intermediate_size=32).to(torch.bfloat16))
    suite = {
        "name": "dtypes",
        "description": "two bundled photos",
        "batch_size": 2,
        "chunk_size": 2,
        "benchmarks": {"imagenet-val": {"source": "builtin", "limit": 2}},
    }
    (tmp_path / "suite.json").write_text(json.dumps(suite))
    output = tmp_path / "run"
    evaluate(
        EvaluationConfig(
            models=[str(folder)], suite=str(tmp_path / "suite.json"), output=output, progress=False
        )
    )
    results = json.loads((output / "results.json").read_text())
    check_schema(results)  # the two keys are additions: the schema version readers check is unchanged
    (model,) = results["models"]
    assert model["stored_dtype"] == "bfloat16"
    assert model["run_dtype"] == "float32"
    assert results["settings"]["precision"] == "fp32"
    assert results["benchmarks"]["imagenet-val"]["num_samples"] == 2
    models_table = render_markdown([results], {}).split("## Models", 1)[1].split("\n## ", 1)[0]
    assert "| weights |" in models_table and "| float32, stored bfloat16 |" in models_table
