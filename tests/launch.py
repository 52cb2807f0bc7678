"""The `accelerate launch` command line of the distributed tests: N CPU processes on this machine (NOTES: plain
`--cpu --num_processes N` starts one; `--multi_gpu` with ACCELERATE_USE_CPU=1 starts N with gloo)."""

import os
import sys
from pathlib import Path


def accelerate_launch(*arguments: str, num_processes: int = 2, port_base: int = 29500) -> list[str]:
    """`accelerate launch ... -m hf_vitrobust ARGUMENTS`, on a port chosen per test process."""
    return [
        str(Path(sys.executable).parent / "accelerate"),
        "launch",
        "--multi_gpu",
        "--num_processes",
        str(num_processes),
        "--num_machines",
        "1",
        "--mixed_precision",
        "no",
        "--dynamo_backend",
        "no",
        "--main_process_port",
        str(port_base + os.getpid() % 1000),
        "-m",
        "hf_vitrobust",
        *arguments,
    ]


def cpu_environment(**extra: str) -> dict[str, str]:
    """This environment, offline, with CPU processes of one thread each (as the 1-process references run)."""
    return {**os.environ, "ACCELERATE_USE_CPU": "1", "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", **extra}
