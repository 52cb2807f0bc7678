# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""One benchmark end to end through `evaluate()`: the run a benchmark's data tests make on their tiny local copy,
returning the results and the first model's stored predictions, so that each test recomputes the metric itself."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from hf_vitrobust.evaluation.config import EvaluationConfig
from hf_vitrobust.evaluation.runner import evaluate


def evaluate_benchmark(
    output: Path, model: Any, benchmark: str, entry: dict[str, Any], **config: Any
) -> tuple[dict[str, Any], pd.DataFrame]:
    """Run `model` on a one-benchmark suite (`entry`: the suite's entry for `benchmark`, e.g. its source and
    options) into `output`/run; return the results and the model's predictions parquet for the benchmark."""
    output.mkdir(parents=True, exist_ok=True)
    suite = output / "suite.yaml"
    suite.write_text(yaml.safe_dump({"name": f"{benchmark}-only", "benchmarks": {benchmark: entry}}))
    settings = {"output": output / "run", "progress": False, **config}
    results = evaluate(EvaluationConfig(models=[model], suite=str(suite), **settings))
    key = results["models"][0]["key"]
    return results, pd.read_parquet(output / "run" / "predictions" / key / f"{benchmark}.parquet")
