# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The HF Jobs recipe from Python: Paul & Chen's suite on ViT-B/16, run on a Hugging Face Job that pushes its results
(model repo with results, card and `.eval_results/`; predictions dataset) when it ends. `vitrobust jobs run` does the
same from the shell (docs/hf_jobs.md).

    python examples/hf_jobs.py --flavor a10g-small --push me/vit-robustness --dry-run    # print the spec only
    python examples/hf_jobs.py --flavor a10g-small --push me/vit-robustness --predictions me/vit-robustness-preds

hf_vitrobust is not on PyPI: the wheel built from this checkout (or --wheel) is uploaded to the pushed repo under
wheels/<hash>/ and mounted in the job. The job bills its flavor's price by the minute to you (or --namespace); the
token (HF_TOKEN or `hf auth login`) becomes the job's HF_TOKEN secret and is never printed.
"""

import argparse
import json
import sys
import tempfile
from pathlib import Path

from hf_vitrobust.hub.jobs import DEFAULT_TIMEOUT, build_job_spec, submit
from hf_vitrobust.hub.space import build_wheel

#: The run: the paper suite (its benchmarks read from the Hub) on the ViT-B/16 of Paul & Chen's tables.
EVALUATE = ["--suite", "paper", "--model", "google/vit-base-patch16-224", "--output", "vitrobust-results"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--flavor", required=True, help="the job's hardware, e.g. a10g-small (`hf jobs hardware`)"
    )
    parser.add_argument("--push", help="the model repo the results go to")
    parser.add_argument("--predictions", help="the dataset repo the per-sample predictions go to")
    parser.add_argument("--wheel", help="an hf_vitrobust wheel (default: built from this checkout)")
    parser.add_argument(
        "--timeout", default=DEFAULT_TIMEOUT, help="the job's time limit (default: %(default)s)"
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="print the job spec (token masked), submit nothing"
    )
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as scratch:
        wheel = Path(args.wheel) if args.wheel else build_wheel(Path(scratch))
        spec = build_job_spec(
            "evaluate",
            EVALUATE,
            output="vitrobust-results",
            flavor=args.flavor,
            push_repo=args.push,
            predictions_repo=args.predictions,
            wheel=wheel,
            timeout=args.timeout,
        )
        if args.dry_run:
            print(json.dumps(spec.to_dict(), indent=2))
            return 0
        job = submit(spec)  # uploads the wheel, then HfApi.run_uv_job
    print(f"job {job.id}: {job.url}\nfollow it with: hf jobs logs -f {job.id}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
