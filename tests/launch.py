"""The `accelerate launch` command line of the distributed tests: N CPU processes on this machine (NOTES: plain
`--cpu --num_processes N` starts one; `--multi_gpu` with ACCELERATE_USE_CPU=1 starts N with gloo)."""

import math
import os
import socket
import sys
from collections.abc import Sequence
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
        *_NO_EXTRAS,
        "--main_process_port",
        str(port_base + os.getpid() % 1000),
        "-m",
        "hf_vitrobust",
        *arguments,
    ]


#: Neither mixed precision nor dynamo: every process computes as the in-process reference does.
_NO_EXTRAS = ("--mixed_precision", "no", "--dynamo_backend", "no")


def assert_results_close(a, b, path: str = "") -> None:
    """Equal structures (results.json parts of two runs); floats within 1e-6 (absolute or relative)."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and set(a) == set(b), f"{path}: keys {set(a) ^ set(b)}"
        for key in a:
            assert_results_close(a[key], b[key], f"{path}.{key}")
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), f"{path}: lengths differ"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_results_close(x, y, f"{path}[{i}]")
    elif isinstance(a, float) or isinstance(b, float):
        assert math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-6), f"{path}: {a} != {b}"
    else:
        assert a == b, f"{path}: {a!r} != {b!r}"


def assert_intervals_identical(one: dict, other: dict) -> None:
    """The headline intervals of two runs of the same predictions are bit-identical (they are a seeded function of
    the predictions); those computed from logits (ECE), which agree only to float rounding across process counts
    (another batching), within 1e-6."""
    assert one["intervals"] and set(one["intervals"]) == set(other["intervals"])
    for model, intervals in one["intervals"].items():
        assert set(intervals) == set(other["intervals"][model])
        for name, interval in intervals.items():
            if "ECE" in name:
                assert_results_close(interval, other["intervals"][model][name], f"{model}.{name}")
            else:
                assert interval == other["intervals"][model][name], f"{model}.{name}"


def cpu_environment(**extra: str) -> dict[str, str]:
    """This environment, offline, with CPU processes of one thread each (as the 1-process references run)."""
    return {**os.environ, "ACCELERATE_USE_CPU": "1", "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", **extra}


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now (for a rendezvous several launchers share)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def accelerate_launch_machine(
    *arguments: str,
    machine_rank: int,
    main_process_port: int,
    num_machines: int = 2,
    processes_per_machine: int = 1,
    program: Sequence[str] = ("-m", "hf_vitrobust"),
) -> list[str]:
    """The `accelerate launch` of machine `machine_rank` of a `num_machines`-machine run whose machine 0 listens on
    127.0.0.1:`main_process_port` (accelerate's default static rendezvous, as on a cluster where each node runs
    one launcher), `--num_processes` counting every machine's; run it with `cpu_environment()` for CPU processes.
    `program`: `-m MODULE` or a script path, followed by ARGUMENTS."""
    return [
        str(Path(sys.executable).parent / "accelerate"),
        "launch",
        "--multi_gpu",
        "--num_machines",
        str(num_machines),
        "--machine_rank",
        str(machine_rank),
        "--main_process_ip",
        "127.0.0.1",
        "--main_process_port",
        str(main_process_port),
        "--num_processes",
        str(num_machines * processes_per_machine),
        *_NO_EXTRAS,
        *program,
        *arguments,
    ]
