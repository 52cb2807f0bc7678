# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The evaluation runner: models x benchmarks x probes of a suite, on one CPU or many GPUs, with results, reports
and resume.

    from hf_vitrobust.evaluation import EvaluationConfig, evaluate
    results = evaluate(EvaluationConfig(models=["builtin:efficientnet_lite0"], suite="demo", output="runs/demo"))

The same runs from the command line as `vitrobust evaluate` and `accelerate launch -m hf_vitrobust evaluate`.
"""
