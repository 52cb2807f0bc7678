# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The run: models x benchmarks x probes of a suite, on one CPU or many GPUs, with resume.

    from hf_vitrobust.evaluation import EvaluationConfig, evaluate
    results = evaluate(EvaluationConfig(models=["builtin:efficientnet_lite0"], suite="demo", output="runs/demo"))

The same runs from the command line as `vitrobust evaluate` and `accelerate launch -m hf_vitrobust evaluate`.
What a run recorded is read and analysed by `hf_vitrobust.analysis` and shown by `hf_vitrobust.report`.
`vitrobust reproduce` plans and runs the checkpoints and protocols of a pair's published numbers:

    from hf_vitrobust.evaluation import plan_reproduction, run_reproduction
    plan = plan_reproduction("paul-chen", "vit-l16/bit-m-r101x3", data={"imagenet-val": "/data/imagenet/val"})
    record = run_reproduction(plan, "runs/vit-l16-bit")   # record["published"], record["findings"]
"""

from .config import DEFAULT_MODEL, EvaluationConfig, EvaluationError
from .probe_images import select_images
from .reproduce import plan_reproduction, run_reproduction
from .runner import Runner, evaluate
from .suite import SUITE_NAMES, BenchmarkSpec, Suite, SuiteProbe, load_suite, suite_path

__all__ = [
    "DEFAULT_MODEL",
    "SUITE_NAMES",
    "BenchmarkSpec",
    "EvaluationConfig",
    "EvaluationError",
    "Runner",
    "Suite",
    "SuiteProbe",
    "evaluate",
    "load_suite",
    "plan_reproduction",
    "run_reproduction",
    "select_images",
    "suite_path",
]
