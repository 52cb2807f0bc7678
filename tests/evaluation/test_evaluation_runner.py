"""The evaluation runner end to end on the builtin EfficientNet-Lite0 and the bundled photos: one process, two
processes under `accelerate launch` (identical predictions, metrics within 1e-6), a killed and resumed run
(identical results), bad samples, and errors that come before any work."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
import yaml
from launch import accelerate_launch, assert_intervals_identical, assert_results_close, cpu_environment
from PIL import Image
from probe_models import save_tiny_vit

from hf_vitrobust.cli import main as cli_main
from hf_vitrobust.evaluation.config import EvaluationConfig, EvaluationError
from hf_vitrobust.evaluation.runner import Runner, evaluate

MODEL = "builtin:efficientnet_lite0"
PREDICTION_COLUMNS = [
    "position",
    "sample_id",
    "label",
    "prediction",
    "top5",
    "subset_prediction",
    "corruption",
]

SUITE = {
    "name": "tiny",
    "description": "a few photos, two corruptions, four probes",
    "batch_size": 8,
    "seed": 3,
    "chunk_size": 4,
    "models": [MODEL],
    "benchmarks": {
        "imagenet-val": {"source": "builtin", "limit": 8},
        "imagenet-c": {
            "source": "generated:builtin",
            "limit": 5,
            "corruptions": ["gaussian_noise", "contrast"],
            "severities": [1, 5],
        },
    },
    "probes": {
        "occlusion": {"benchmark": "imagenet-val", "num_images": 6, "params": {"ratios": [0.0, 0.2]}},
        "fourier_heatmap": {"benchmark": "imagenet-val", "num_images": 4, "params": {"window": 3}},
        "pgd": {
            "benchmark": "imagenet-val",
            "num_images": 4,
            "params": {"method": "sign", "eps": 0.004, "step_size": 0.002, "steps": 2},
        },
        "deepfool": {"benchmark": "imagenet-val", "num_images": 3, "params": {"steps": 3}},
    },
}


def _env() -> dict[str, str]:
    env = dict(os.environ, HF_HUB_OFFLINE="1", OMP_NUM_THREADS="1", PYTHONUNBUFFERED="1")
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    return env


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "hf_vitrobust", "evaluate", *args, "--quiet"]


def _predictions(output: Path, benchmark: str) -> pd.DataFrame:
    return pd.read_parquet(output / "predictions" / "builtin_efficientnet_lite0" / f"{benchmark}.parquet")


@pytest.fixture(scope="module")
def suite_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("suite") / "tiny.yaml"
    path.write_text(yaml.safe_dump(SUITE))
    return path


@pytest.fixture(scope="module")
def reference_run(suite_file, tmp_path_factory) -> tuple[Path, dict]:
    """The 1-process reference, on one thread like every process of the subprocess runs: the float reductions of
    a CPU kernel depend on its thread count (not on the number of processes), and DeepFool's dB spectrum at
    near-zero DCT coefficients shows differences of that size."""
    output = tmp_path_factory.mktemp("runs") / "one-process"
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        results = evaluate(EvaluationConfig(suite=str(suite_file), output=output, progress=False))
    finally:
        torch.set_num_threads(threads)
    return output, results


def test_one_process_run_writes_consistent_results(reference_run, suite_file):
    output, results = reference_run
    on_disk = json.loads((output / "results.json").read_text())
    assert on_disk["schema"] == "hf_vitrobust.results" and on_disk["schema_version"] == 2
    assert on_disk["complete"] is True and on_disk["seed"] == 3
    assert_results_close(results["metrics"], on_disk["metrics"])  # what evaluate() returns is what it wrote
    assert [m["spec"] for m in on_disk["models"]] == [MODEL]
    assert on_disk["models"][0]["num_classes"] == 1000
    benchmarks = on_disk["benchmarks"]
    assert benchmarks["imagenet-val"]["num_samples"] == 8 and benchmarks["imagenet-val"]["generated"] is False
    assert (
        benchmarks["imagenet-c"]["num_samples"] == 5 * 2 * 2 and benchmarks["imagenet-c"]["generated"] is True
    )
    assert benchmarks["imagenet-c"]["source"]["kind"] == "generated-corruptions"

    clean = _predictions(output, "imagenet-val")
    corrupted = _predictions(output, "imagenet-c")
    assert len(clean) == 8 and clean["sample_id"].is_unique and clean["position"].is_monotonic_increasing
    assert corrupted["sample_id"].is_unique and len(corrupted) == 20
    assert set(zip(corrupted["corruption"], corrupted["severity"], strict=True)) == {
        ("gaussian_noise", 1),
        ("gaussian_noise", 5),
        ("contrast", 1),
        ("contrast", 5),
    }
    # The metrics are recomputable from the predictions alone.
    metrics = on_disk["metrics"]["builtin_efficientnet_lite0"]
    assert metrics["imagenet-val"]["top1"] == pytest.approx(
        100 * np.mean(clean["prediction"] == clean["label"])
    )
    logits = np.stack(clean["logits"].to_numpy())
    assert logits.shape == (8, 1000)
    assert (logits.argmax(axis=1) == clean["prediction"].to_numpy()).all()
    # The relative mCE's clean error is that of the 5 photos the corruptions were generated from, not of all 8.
    same_images = clean[clean["sample_id"].isin({i.split("/", 2)[2] for i in corrupted["sample_id"]})]
    assert len(same_images) == 5
    # ImageNet-C by its definitions (Hendrycks & Dietterich 2019), over the cells present: a corruption's CE is its
    # summed error over AlexNet's summed error (AlexNet's errors from the hendrycks/robustness README table), the
    # relative CE subtracts the clean errors (AlexNet's: 43.5 %), and the unnormalised mean is test.py's.
    alexnet = {"gaussian_noise": {1: 0.69528, 5: 0.99452}, "contrast": {1: 0.64548, 5: 0.99270}}
    error = {
        (c, s): float(np.mean(cell["prediction"] != cell["label"]))
        for (c, s), cell in corrupted.groupby(["corruption", "severity"])
    }
    clean_error = float(np.mean(same_images["prediction"] != same_images["label"]))
    ce = {c: 100 * sum(error[c, s] for s in a) / sum(a.values()) for c, a in alexnet.items()}
    relative = {
        c: 100 * sum(error[c, s] - clean_error for s in a) / sum(v - 0.435 for v in a.values())
        for c, a in alexnet.items()
    }
    imagenet_c = metrics["imagenet-c"]
    assert imagenet_c["mce"] == pytest.approx(np.mean(list(ce.values())), rel=1e-12)
    assert imagenet_c["relative_mce"] == pytest.approx(np.mean(list(relative.values())), rel=1e-12)
    assert imagenet_c["protocols"]["unnormalized-19"]["mce"] == pytest.approx(
        100 * np.mean([np.mean([error[c, 1], error[c, 5]]) for c in alexnet]), rel=1e-12
    )
    assert imagenet_c["top1_by_cell"] == pytest.approx(
        {f"{c}/{s}": 100 * (1 - e) for (c, s), e in error.items()}, rel=1e-12
    )
    assert imagenet_c["mean_top1"] == pytest.approx(100 * (1 - np.mean(list(error.values()))), rel=1e-12)
    assert imagenet_c["severity5_top1"] == pytest.approx(
        100 * (1 - np.mean([error[c, 5] for c in alexnet])), rel=1e-12
    )
    contrast5 = corrupted[(corrupted["corruption"] == "contrast") & (corrupted["severity"] == 5)]
    assert imagenet_c["contrast_s5_top1"] == pytest.approx(
        100 * np.mean(contrast5["prediction"] == contrast5["label"])
    )

    probes = on_disk["probes"]["builtin_efficientnet_lite0"]
    assert probes["occlusion"]["num_images"] == 6 and probes["occlusion"]["ratios"] == [0.0, 0.2]
    assert np.asarray(probes["fourier_heatmap"]["error_map"]).shape == (3, 3)
    # PGD attacks the first 4 correctly classified photos.
    correct = clean[clean["prediction"] == clean["label"]]
    assert probes["pgd"]["num_images"] == min(4, len(correct))
    assert len(probes["pgd"]["loss_mean"]) == 3
    assert probes["deepfool"]["num_images"] == 3

    for name in ("report.md", "report.html"):
        assert (output / name).stat().st_size > 1000
    for figure in on_disk["figures"].values():
        assert (output / figure).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # A second run into the same folder without --resume is refused before any work.
    with pytest.raises(EvaluationError, match="resume"):
        evaluate(EvaluationConfig(suite=str(suite_file), output=output, progress=False))


@pytest.mark.slow
def test_two_processes_match_one_process(reference_run, suite_file, tmp_path):
    """`accelerate launch` with 2 CPU processes: every sample evaluated once, identical predictions and sample sets,
    metrics and probe results within 1e-6 of the 1-process run."""
    output = tmp_path / "two-processes"
    command = accelerate_launch("evaluate", "--suite", str(suite_file), "--output", str(output), "--quiet")
    completed = subprocess.run(
        command,
        env=cpu_environment(PYTHONPATH=_env()["PYTHONPATH"]),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    one = json.loads((reference_run[0] / "results.json").read_text())
    two = json.loads((output / "results.json").read_text())
    assert two["settings"]["num_processes"] == 2 and one["settings"]["num_processes"] == 1
    # The same chunk layout as one process (the bundled photos are one shard, cut into the same chunks), and the
    # same shard markers.
    for benchmark in ("imagenet-val", "imagenet-c"):
        folders = [
            root / ".work" / "builtin_efficientnet_lite0" / "benchmarks" / benchmark
            for root in (reference_run[0], output)
        ]
        names = [sorted(p.name for p in folder.glob("chunk-*.parquet")) for folder in folders]
        assert names[0] == names[1] and len(names[0]) >= 2
        markers = [[json.loads(p.read_text()) for p in sorted(f.glob("shard-*.json"))] for f in folders]
        assert markers[0] == markers[1] and len(markers[0]) == 1
        a, b = _predictions(reference_run[0], benchmark), _predictions(output, benchmark)
        pd.testing.assert_frame_equal(a[PREDICTION_COLUMNS], b[PREDICTION_COLUMNS])
        np.testing.assert_allclose(np.stack(a["confidence"]), np.stack(b["confidence"]), atol=1e-6)
    assert_results_close(one["metrics"], two["metrics"])
    assert_results_close(one["probes"], two["probes"])
    assert_intervals_identical(one, two)
    assert_results_close(
        {k: {**v, "source": None} for k, v in one["benchmarks"].items()},
        {k: {**v, "source": None} for k, v in two["benchmarks"].items()},
    )


@pytest.mark.slow
def test_killed_run_resumes_to_identical_results(reference_run, suite_file, tmp_path):
    output = tmp_path / "killed"
    process = subprocess.Popen(
        _cli("--suite", str(suite_file), "--output", str(output)),
        env=_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    chunks = output / ".work" / "builtin_efficientnet_lite0" / "benchmarks" / "imagenet-c"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and len(list(chunks.glob("chunk-*.parquet"))) < 2:
        assert process.poll() is None, process.stderr.read().decode()[-2000:]
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait()
    written = len(list(chunks.glob("chunk-*.parquet")))
    assert 2 <= written < 5, "the kill came too late to test resuming"
    if (output / "results.json").exists():  # never truncated: it parses, and says it is incomplete
        assert json.loads((output / "results.json").read_text())["complete"] is False

    with pytest.raises(SystemExit):  # the folder holds a run: without --resume the CLI refuses
        cli_main(["evaluate", "--suite", str(suite_file), "--output", str(output), "--quiet"])
    completed = subprocess.run(
        _cli("--suite", str(suite_file), "--output", str(output), "--resume"),
        env=_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    resumed = json.loads((output / "results.json").read_text())
    one = json.loads((reference_run[0] / "results.json").read_text())
    assert resumed["complete"] is True
    for benchmark in ("imagenet-val", "imagenet-c"):
        pd.testing.assert_frame_equal(
            _predictions(reference_run[0], benchmark), _predictions(output, benchmark)
        )
    assert_results_close(one["metrics"], resumed["metrics"])
    assert_results_close(one["probes"], resumed["probes"])
    assert_intervals_identical(one, resumed)


def _folder_with_a_bad_file(root: Path) -> Path:
    """An ImageNet validation folder (<wnid>/<file>) of three bundled photos and one truncated JPEG."""
    from hf_vitrobust.data.builtin import builtin_photos_dir, read_manifest

    folder = root / "val"
    rows = read_manifest(builtin_photos_dir())[:3]
    for row in rows:
        (folder / row["wnid"]).mkdir(parents=True, exist_ok=True)
        (folder / row["wnid"] / row["file"]).write_bytes((builtin_photos_dir() / row["file"]).read_bytes())
    data = (builtin_photos_dir() / rows[0]["file"]).read_bytes()
    (folder / rows[0]["wnid"] / "broken.jpg").write_bytes(data[: len(data) // 3])
    return folder


def test_bad_samples_are_skipped_counted_and_listed(tmp_path):
    """bf16 autocast and a DataLoader worker on the way: the truncated file is skipped and named, the rest is
    evaluated."""
    suite = {
        "name": "bad",
        "description": "one bad file",
        "batch_size": 2,
        "chunk_size": 2,
        "benchmarks": {"imagenet-val": {"source": str(_folder_with_a_bad_file(tmp_path))}},
    }
    suite_path = tmp_path / "bad.json"
    suite_path.write_text(json.dumps(suite))
    output = tmp_path / "out"
    results = evaluate(
        EvaluationConfig(
            models=[MODEL],
            suite=str(suite_path),
            output=output,
            precision="bf16",
            num_workers=1,
            progress=False,
        )
    )
    entry = results["benchmarks"]["imagenet-val"]
    assert entry["num_samples"] == 3 and entry["num_source_items"] == 4
    assert entry["skipped"]["num_skipped"] == 1
    assert entry["skipped"]["examples"][0]["sample_id"].endswith("broken.jpg")
    assert len(_predictions(output, "imagenet-val")) == 3
    assert results["settings"]["precision"] == "bf16"


def test_errors_come_before_any_work(tmp_path, suite_file):
    output = tmp_path / "never"
    with pytest.raises(EvaluationError, match="paper"):
        evaluate(EvaluationConfig(suite="papr", output=output, progress=False))
    with pytest.raises(EvaluationError, match="imagenet-c"):
        evaluate(
            EvaluationConfig(suite=str(suite_file), data={"imagenet-cc": "x"}, output=output, progress=False)
        )
    with pytest.raises(EvaluationError, match="Did you mean 'builtin:efficientnet_lite0'"):
        evaluate(EvaluationConfig(models=["builtin:efficientnet_lite"], suite=str(suite_file), output=output))
    with pytest.raises(EvaluationError, match="Did you mean 'timm/resnet50'"):
        evaluate(EvaluationConfig(models=["timm/resnet5"], suite=str(suite_file), output=output))
    with pytest.raises(EvaluationError, match="precision"):
        evaluate(EvaluationConfig(suite=str(suite_file), precision="fp8", output=output, progress=False))
    with pytest.raises(EvaluationError, match="limit"):
        evaluate(EvaluationConfig(suite=str(suite_file), limit=0, output=output, progress=False))
    with pytest.raises(EvaluationError, match="imagenet-val: cannot read source"):
        evaluate(
            EvaluationConfig(
                suite=str(suite_file),
                data={"imagenet-val": str(tmp_path / "absent")},
                output=output,
                progress=False,
            )
        )
    assert not output.exists()


def test_label_space_mismatch_is_refused_before_work(tmp_path, suite_file):
    folder = save_tiny_vit(tmp_path / "ten-classes", num_labels=10)
    output = tmp_path / "never"
    with pytest.raises(EvaluationError, match=r"10 classes.*imagenet-1k"):
        evaluate(EvaluationConfig(models=[folder], suite=str(suite_file), output=output, progress=False))
    assert not output.exists()


def test_unavailable_and_mismatched_benchmarks_are_skipped_and_recorded(tmp_path):
    """An optional benchmark without a source, and a benchmark in another label space than the model's (a suite
    that mixes ImageNet and CIFAR), are skipped and recorded; naming the mismatched one with --data is an error."""
    cifar = tmp_path / "cifar10" / "airplane"
    cifar.mkdir(parents=True)
    Image.new("RGB", (32, 32), (200, 30, 30)).save(cifar / "0.png")
    suite = {
        "name": "mixed",
        "description": "ImageNet and CIFAR benchmarks, one without data",
        "chunk_size": 8,
        "benchmarks": {
            "imagenet-val": {"source": "builtin", "limit": 2},
            "imagenet-9": {"optional": True},
            "cifar10": {"source": str(tmp_path / "cifar10")},
        },
    }
    path = tmp_path / "mixed.yaml"
    path.write_text(yaml.safe_dump(suite))
    results = evaluate(
        EvaluationConfig(models=[MODEL], suite=str(path), output=tmp_path / "out", progress=False)
    )
    metrics = results["metrics"]["builtin_efficientnet_lite0"]
    assert metrics["imagenet-val"]["num_samples"] == 2
    assert "no Hub copy" in metrics["imagenet-9"]["skipped"]
    assert (
        "1000 classes" in metrics["cifar10"]["skipped"]
        and "cifar10 label space" in metrics["cifar10"]["skipped"]
    )
    assert set(results["benchmarks"]) == {"imagenet-val"}
    with pytest.raises(EvaluationError, match="cifar10 label space"):
        evaluate(
            EvaluationConfig(
                models=[MODEL],
                suite=str(path),
                data={"cifar10": str(tmp_path / "cifar10")},
                output=tmp_path / "out2",
                progress=False,
            )
        )


def test_report_command_rebuilds_and_merges_runs(reference_run, tmp_path, capsys):
    import shutil

    other = tmp_path / "second-run"
    shutil.copytree(reference_run[0], other)
    (other / "report.md").unlink()
    assert cli_main(["report", str(other)]) == 0  # rebuilt in place from results.json
    rebuilt = (other / "report.md").read_text()
    assert rebuilt == (reference_run[0] / "report.md").read_text().replace(str(reference_run[0]), str(other))
    merged = tmp_path / "merged"
    assert cli_main(["report", str(reference_run[0]), str(other), "--output", str(merged)]) == 0
    text = (merged / "report.md").read_text()
    assert (
        "builtin_efficientnet_lite0@one-process" in text and "builtin_efficientnet_lite0@second-run" in text
    )
    assert (merged / "report.html").read_text().count("data:image/png;base64,") >= 2
    assert "report:" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        cli_main(["report", str(tmp_path / "missing")])


@pytest.mark.slow
def test_compile_gives_the_same_predictions(tmp_path):
    """--compile (torch.compile, inductor on the CPU) changes the speed, not the predicted classes."""
    suite = {
        "name": "compile",
        "description": "four photos",
        "batch_size": 4,
        "chunk_size": 4,
        "benchmarks": {"imagenet-val": {"source": "builtin", "limit": 4}},
    }
    path = tmp_path / "compile.yaml"
    path.write_text(yaml.safe_dump(suite))
    outputs = {}
    for compiled in (False, True):
        outputs[compiled] = tmp_path / f"compiled-{compiled}"
        evaluate(
            EvaluationConfig(
                models=[MODEL], suite=str(path), output=outputs[compiled], compile=compiled, progress=False
            )
        )
    eager, compiled = (_predictions(outputs[c], "imagenet-val") for c in (False, True))
    assert eager["prediction"].tolist() == compiled["prediction"].tolist()
    np.testing.assert_allclose(eager["confidence"], compiled["confidence"], atol=1e-4)


def test_a_run_and_a_dry_run_push_read_each_predictions_file_once(tmp_path, monkeypatch):
    """The analysis is computed once, on the predictions files the runner has written, and stored: one `evaluate`
    reads a plain benchmark's file whole once (the metrics, the probes' image selection and the analysis share the
    read), ImageNet-C's never whole (in batches only), and the report and the model card of a `push --dry-run` read
    none."""
    import pyarrow.parquet as pq

    suite = {**SUITE, "probes": {}}
    (tmp_path / "suite.json").write_text(json.dumps(suite))
    output = tmp_path / "run"
    reads: list[str] = []
    reading = pq.read_table

    def counted(source, *args, **kwargs):
        path = Path(str(source))
        if output / "predictions" in path.parents:
            reads.append(path.relative_to(output).as_posix())
        return reading(source, *args, **kwargs)

    monkeypatch.setattr(pq, "read_table", counted)
    results = evaluate(EvaluationConfig(suite=str(tmp_path / "suite.json"), output=output, progress=False))
    assert reads == ["predictions/builtin_efficientnet_lite0/imagenet-val.parquet"]
    scored = results["metrics"]["builtin_efficientnet_lite0"]["imagenet-c"]
    assert (
        scored["num_samples"] > 0
        and "imagenet-c mCE % (alexnet-15)" in results["intervals"]["builtin_efficientnet_lite0"]
    )
    assert json.loads((output / "results.json").read_text())["analysis"]["published"] == []
    reads.clear()
    assert (
        cli_main(
            ["push", "user/model", "--results", str(output), "--dry-run", "--output", str(tmp_path / "s")]
        )
        == 0
    )
    assert reads == []


def test_num_threads_is_set_for_the_run_recorded_and_restored(tmp_path, monkeypatch):
    """`--num-threads` (EvaluationConfig.num_threads) sets torch's CPU threads during the run and puts them back;
    a bad value is refused before any work."""
    import torch

    suite = {**SUITE, "benchmarks": {"imagenet-val": {"source": "builtin", "limit": 2}}, "probes": {}}
    (tmp_path / "suite.json").write_text(json.dumps(suite))
    seen = []
    real = Runner._run

    def watching(self, plans, models):
        seen.append(torch.get_num_threads())
        return real(self, plans, models)

    monkeypatch.setattr(Runner, "_run", watching)
    before = torch.get_num_threads()
    output = tmp_path / "run"
    assert (
        cli_main(
            [
                "evaluate",
                "--suite",
                str(tmp_path / "suite.json"),
                "--output",
                str(output),
                "--num-threads",
                "1",
                "--quiet",
                "--no-report",
            ]
        )
        == 0
    )
    assert seen == [1] and torch.get_num_threads() == before
    assert json.loads((output / "results.json").read_text())["settings"]["num_threads"] == 1
    with pytest.raises(EvaluationError, match="num_threads must be an integer >= 1, got 0"):
        evaluate(EvaluationConfig(suite=str(tmp_path / "suite.json"), output=tmp_path / "bad", num_threads=0))
    assert not (tmp_path / "bad").exists()
