"""Probe speed against the references the issue names, in one run on one machine.

* Fourier heat map (`probes_fourier.py`): ours (half the window, mirrored, batched over bases x images) against a
  one-pass-per-frequency loop over the data, as gatheluck/FourierHeatmap does. Goal: >= 2x.
* DeepFool and PGD (`probes_attacks.py`): ours against foolbox's batched L2 DeepFool (10 candidates) on the
  1000-class builtin EfficientNet-Lite0, at equal or smaller norms; our PGD against torchattacks' PGD.
  Goals: DeepFool at least as fast as foolbox, PGD <= 1.2x torchattacks' time.
* Hessian (`probes_hessian.py`): one Hessian-vector product against one forward plus backward pass.
  Goal: <= 3x.

Each part prints its own table; `--part` runs one of them.

    python benchmarks/probes.py --threads 2
"""

import argparse
import json
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import probes_attacks  # after the path set-up above
import probes_fourier
import probes_hessian

PARTS = {"fourier": probes_fourier.run, "attacks": probes_attacks.run, "hessian": probes_hessian.run}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=2, help="torch CPU threads")
    parser.add_argument(
        "--part", action="append", choices=sorted(PARTS), help="only these parts (repeatable)"
    )
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    figures = {}
    for name in args.part or list(PARTS):
        start = time.perf_counter()
        print(f"== {name} ==", flush=True)
        figures[name] = PARTS[name](args.device, args.threads)
        print(json.dumps(figures[name], indent=2), flush=True)
        print(f"({name}: {time.perf_counter() - start:.0f} s)", flush=True)
    if args.json is not None:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
