"""The scripts of examples/ on their offline defaults (the builtin EfficientNet-Lite0, the bundled photos): run as
`python examples/x.py` and as `accelerate launch examples/x.py` on 2 CPU processes, they print and write the same
numbers, and those are the package's own numbers for the same images (`evaluate` for the mCE, the probe function on
the whole dataset for the probe). Each script stays under 100 non-empty lines and ruff-clean."""

import json
import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import yaml
from launch import cpu_environment

from hf_vitrobust import load_classifier
from hf_vitrobust.data import load_benchmark
from hf_vitrobust.evaluation import EvaluationConfig, evaluate
from hf_vitrobust.probes import occlusion_sweep

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
MODEL = "builtin:efficientnet_lite0"
CORRUPTIONS, SEVERITIES = ["gaussian_noise", "contrast"], [1, 5]
# 8 bundled photos (two batches of 4, one per process): the 7 views of the cat and the first of the coffee.
MCE_ARGS = ["--limit", "8", "--batch-size", "4", "--corruptions", *CORRUPTIONS]
MCE_ARGS += ["--severities", *map(str, SEVERITIES)]
RATIOS = [0.0, 0.2, 0.5]
# 3 photos in chunks of 2: rank 0 takes chunk 0 (2 images), rank 1 chunk 1 (the 1-image tail).
PROBE_ARGS = ["--limit", "3", "--batch-size", "2", "--params", json.dumps({"ratios": RATIOS})]
SCRIPTS = {"imagenet_c_mce": MCE_ARGS, "probe_over_dataset": PROBE_ARGS}


def _free_ports(count: int) -> list[int]:
    """`count` distinct ports free now (the sockets are held open together, so the system gives different ones)."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for held in sockets:
            held.bind(("127.0.0.1", 0))
        return [held.getsockname()[1] for held in sockets]
    finally:
        for held in sockets:
            held.close()


def _command(script: str, output: Path, processes: int, port: int) -> list[str]:
    arguments = [str(EXAMPLES / f"{script}.py"), *SCRIPTS[script], "--output", str(output)]
    if processes == 1:
        return [sys.executable, *arguments]
    launcher = [
        str(Path(sys.executable).parent / "accelerate"),
        "launch",
        "--multi_gpu",
        "--num_processes",
        "2",
    ]
    launcher += ["--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no"]
    return [*launcher, "--main_process_port", str(port), *arguments]


class Runs:
    """Every script on 1 and 2 processes, all started at once (a 1-process run leaves one of 2 cores idle); each
    result is waited for when a test first asks for it, so the references compute while the scripts run."""

    def __init__(self, folder: Path) -> None:
        self.started = {}
        ports = iter(_free_ports(len(SCRIPTS)))
        for script in SCRIPTS:
            for processes in (1, 2):
                output = folder / f"{script}-{processes}.json"
                command = _command(script, output, processes, next(ports) if processes == 2 else 0)
                environment = cpu_environment(PYTHONPATH=str(ROOT))
                # Files, not pipes: a process whose pipe fills while another is waited for would block.
                with (
                    open(output.with_suffix(".out"), "w") as out,
                    open(output.with_suffix(".err"), "w") as err,
                ):
                    popen = subprocess.Popen(
                        command, cwd=ROOT, env=environment, stdout=out, stderr=err, start_new_session=True
                    )
                self.started[script, processes] = (popen, output)
        self.done: dict[tuple[str, int], tuple[dict, str]] = {}

    def stderr(self, script: str, processes: int) -> str:
        """What the script wrote to stderr (its progress bar), once it has ended."""
        self.result(script, processes)
        return self.started[script, processes][1].with_suffix(".err").read_text()

    def result(self, script: str, processes: int) -> tuple[dict, str]:
        """The script's JSON output and stdout."""
        if (script, processes) not in self.done:
            popen, output = self.started[script, processes]
            popen.wait(timeout=600)
            assert popen.returncode == 0, output.with_suffix(".err").read_text()[-3000:]
            stdout = output.with_suffix(".out").read_text()
            self.done[script, processes] = (json.loads(output.read_text()), stdout)
        return self.done[script, processes]

    def stop(self) -> None:
        """End the runs still going (a failed test's). SIGTERM first: the launcher then ends its workers, which
        torch's elastic agent starts in sessions of their own."""
        for popen, _ in self.started.values():
            if popen.poll() is None:
                popen.terminate()
        for popen, _ in self.started.values():
            try:
                popen.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(popen.pid, signal.SIGKILL)
                popen.wait()


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    started = Runs(tmp_path_factory.mktemp("examples"))
    yield started
    started.stop()


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory) -> dict:
    """results.json of `hf_vitrobust.evaluate` on the same photos, corruptions and severities."""
    folder = tmp_path_factory.mktemp("evaluate")
    suite = {
        "name": "examples",
        "description": "the example's settings",
        "batch_size": 4,
        "seed": 0,
        "chunk_size": 16,
        "models": [MODEL],
        "benchmarks": {
            "imagenet-val": {"source": "builtin", "limit": 8},
            "imagenet-c": {
                "source": "generated:builtin",
                "corruptions": CORRUPTIONS,
                "severities": SEVERITIES,
            },
        },
    }
    (folder / "suite.yaml").write_text(yaml.safe_dump(suite))
    config = EvaluationConfig(
        suite=str(folder / "suite.yaml"), output=folder / "run", limit=8, progress=False, report=False
    )
    evaluate(config)
    return json.loads((folder / "run" / "results.json").read_text())


@pytest.mark.slow
def test_mce_same_on_two_processes_and_equal_to_evaluate(runs, evaluated):
    reference = evaluated["metrics"]["builtin_efficientnet_lite0"]["imagenet-c"]
    # The protocol the script follows (its docstring) is the one evaluate applied.
    protocol = evaluated["benchmarks"]["imagenet-c"]["protocol"]
    assert (protocol["preprocessing"], protocol["release_encoding"], protocol["mce"]) == (
        "as-released",
        "jpeg-85",
        "alexnet-15",
    )
    assert protocol["models"]["builtin_efficientnet_lite0"]["applied"] == "as-released"
    one, one_stdout = runs.result("imagenet_c_mce", 1)
    two, two_stdout = runs.result("imagenet_c_mce", 2)
    assert one.pop("images_per_process") == [8] and two.pop("images_per_process") == [4, 4]
    assert one == two
    assert one["num_samples"] == 8 * 2 * 2 == reference["num_samples"]
    for key in ("mce", "relative_mce", "clean_error", "ce", "relative_ce", "errors", "unnormalized_mce"):
        assert one[key] == reference[key], key
    # Different cells, different errors: the numbers measure something.
    assert len({error for cells in one["errors"].values() for error in cells.values()}) > 1
    for stdout in (one_stdout, two_stdout):
        assert f"mCE {one['mce']:.2f} % (relative {one['relative_mce']:.2f} %)" in stdout
    assert "8 images, 1 process(es)" in one_stdout and "8 images, 2 process(es)" in two_stdout
    # It says what it does from the start: the main process's bar, over every batch of the stream (2 of 4 images).
    for processes in (1, 2):
        bar = re.findall(
            r"batches of 4 clean images x 4 cells: (\d+)batch", runs.stderr("imagenet_c_mce", processes)
        )
        assert bar[0] == "0" and bar[-1] == "2", bar


@pytest.mark.slow
def test_probe_same_on_two_processes_and_equal_to_the_probe_function(runs):
    source = load_benchmark("imagenet-val", "builtin", limit=3)
    reference = occlusion_sweep(load_classifier(MODEL), source, ratios=RATIOS, seed=0)
    one, one_stdout = runs.result("probe_over_dataset", 1)
    two, two_stdout = runs.result("probe_over_dataset", 2)
    assert one["chunks_per_process"] == [2] and two["chunks_per_process"] == [1, 1]
    assert one["result"] == two["result"]
    result = one["result"]
    assert result["ratios"] == reference.ratios and result["num_images"] == reference.num_samples == 3
    assert result["accuracy"] == pytest.approx(reference.accuracy, abs=1e-12)
    assert result["confidence"] == pytest.approx(reference.confidence, abs=1e-6)
    assert result["true_class_probability"] == pytest.approx(reference.true_class_probability, abs=1e-6)
    assert len(set(result["accuracy"])) > 1
    for stdout in (one_stdout, two_stdout):
        assert f"top-1 (%) at 50 % masked: {100 * reference.accuracy[-1]:.2f}" in stdout
    assert one_stdout.startswith(f"loading {MODEL} and builtin (1 process(es))\n")
    assert two_stdout.startswith(f"loading {MODEL} and builtin (2 process(es))\n")  # once: the main process
    for processes in (1, 2):
        bar = re.findall(
            r"occlusion: chunks of 2 images: (\d+)chunk", runs.stderr("probe_over_dataset", processes)
        )
        assert bar[0] == "0" and bar[-1] == "2", bar  # 3 images: 2 chunks


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_script_is_short(script):
    lines = (EXAMPLES / f"{script}.py").read_text().splitlines()
    assert len([line for line in lines if line.strip()]) < 100


def _readme_remote_code_lines() -> list[str]:
    """The README's "anywhere, even without hf_vitrobust installed" lines, as Python."""
    lines = (ROOT / "README.md").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if "even without hf_vitrobust installed" in line)
    return [line.lstrip("# ").strip() for line in lines[start + 1 : start + 3]]


def test_the_readme_pipeline_line_runs_without_the_package(tmp_path):
    """The README's `pipeline(...)` line, as written, on a tiny AlterNet saved by `save_alternet` under the README's
    folder name, in a Python where `import hf_vitrobust` fails; without `trust_remote_code=True` it cannot load."""
    from hf_vitrobust import AlterNetConfig, AlterNetForImageClassification
    from hf_vitrobust.models.alternet import save_alternet

    auto_line, pipeline_line = _readme_remote_code_lines()
    assert pipeline_line.startswith("pipeline(") and "trust_remote_code=True" in pipeline_line
    assert auto_line.startswith("AutoModelForImageClassification.from_pretrained(")
    torch.manual_seed(0)
    model = AlterNetForImageClassification(AlterNetConfig.from_preset("alternet-tiny", num_labels=3)).eval()
    save_alternet(model, tmp_path / "alternet-50")

    without_trust = pipeline_line.replace(", trust_remote_code=True", "")
    script = "\n".join(
        [
            "import json, sys",
            "sys.modules['hf_vitrobust'] = None  # any import of the package now fails",
            "from PIL import Image",
            "from transformers import AutoModelForImageClassification, pipeline",
            f"model = {auto_line}",
            f"classify = {pipeline_line}",
            "found = {'module': type(model).__module__}",
            "found['predictions'] = classify(Image.new('RGB', (40, 40), (200, 30, 30)), top_k=3)",
            "try:",
            f"    {without_trust}",
            "    found['without_trust'] = 'loaded'",
            "except ValueError as error:",
            "    found['without_trust'] = str(error)",
            "open('found.json', 'w').write(json.dumps(found))",
        ]
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(HF_MODULES_CACHE=str(tmp_path / "modules"), HF_HUB_OFFLINE="1")
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,  # transformers asks before running custom code when not told: answered "no"
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads((tmp_path / "found.json").read_text())
    assert found["module"].startswith("transformers_modules")  # the folder's code, not an installed package
    predictions = found["predictions"]  # [{"label", "score"}, ...]
    assert len(predictions) == 3 and abs(sum(p["score"] for p in predictions) - 1.0) < 1e-4
    assert {p["label"] for p in predictions} == set(model.config.id2label.values())
    assert "trust_remote_code" in found["without_trust"]
