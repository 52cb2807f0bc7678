"""The `evaluate` wrappers in metrics/<name>/: they load offline by path and through `hf_vitrobust.metrics.load`,
give the package functions' results, accumulate over `add_batch` calls, and ship inside the wheel."""

import itertools
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import evaluate
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hf_vitrobust.metrics as metrics
from hf_vitrobust.metrics import METRIC_NAMES, SEVERITIES, STANDARD_CORRUPTIONS, TEST_PERTURBATIONS

ROOT = Path(__file__).resolve().parents[2]
_RNG = np.random.default_rng(0)
_LOGITS = _RNG.normal(size=(6, 10))


def _example(name):
    """(evaluate inputs, compute kwargs, the package function's result) of a small example for each metric."""
    if name == "mce":
        cells = [(c, s) for c in STANDARD_CORRUPTIONS for s in SEVERITIES]
        inputs = {
            "predictions": [i % 3 for i in range(75)],
            "references": [0] * 75,
            "corruptions": [c for c, _ in cells],
            "severities": [s for _, s in cells],
        }
        kwargs = {"clean_error": 0.2}
        expected = metrics.mean_corruption_error(*inputs.values(), **kwargs)
    elif name == "flip_rate":
        sequences = _RNG.integers(0, 8, size=(10, 4, 5)).tolist()
        inputs = {
            "predictions": sequences,
            "perturbations": list(TEST_PERTURBATIONS),
            "difficulties": [1] * 10,
        }
        kwargs = {}
        expected = metrics.flip_rates(*inputs.values())
    elif name == "ood_aupr":
        inputs = {"scores": [0.1, 0.4, 0.35, 0.8], "is_ood": [False, False, True, True]}
        kwargs = {}
        expected = metrics.ood_detection_metrics(*inputs.values())
    elif name == "masked_accuracy":
        inputs = {"predictions": _LOGITS.tolist(), "references": [1, 2, 3, 5, 7, 9]}
        kwargs = {"class_indices": [1, 2, 3, 5, 7, 8, 9]}
        expected = metrics.masked_accuracy(_LOGITS, inputs["references"], **kwargs)
    elif name == "calibration":
        inputs = {"predictions": _LOGITS.tolist(), "references": [1, 2, 3, 5, 7, 9]}
        kwargs = {"from_logits": True, "num_bins": 10}
        expected = metrics.calibration_metrics(_LOGITS, inputs["references"], **kwargs)
    elif name == "background_gap":
        inputs = {
            "predictions": [151, 0, 409, 151],
            "references": [0, 8, 8, 1],
            "variants": ["mixed_same", "mixed_same", "mixed_rand", "mixed_rand"],
        }
        kwargs = {}
        expected = metrics.background_gap(*inputs.values())
    elif name == "occlusion_accuracy":
        inputs = {
            "ratios": [0.0, 0.0, 0.1, 0.1, 0.5],
            "correct": [True, True, True, False, False],
            "confidences": [0.9, 0.8, 0.7, 0.4, 0.2],
        }
        kwargs = {}
        expected = metrics.occlusion_accuracy(*inputs.values())
    elif name == "fourier_heatmap":
        inputs = {
            "frequency_i": [0, 0, 1, -1, 1],
            "frequency_j": [0, 0, 1, 0, 0],
            "correct": [True, False, False, True, True],
        }
        kwargs = {"window": 3}
        expected = metrics.fourier_error_map(*inputs.values(), **kwargs)
    elif name == "frequency_noise":
        inputs = {"frequencies": [0.1, 0.1, 0.5, 0.5, 0.9], "correct": [True, True, False, True, False]}
        kwargs = {}
        expected = metrics.frequency_noise_accuracy(*inputs.values())
    elif name == "loss_progression":
        inputs = {"steps": [0, 1, 2, 0, 1, 2], "losses": [0.5, 0.9, 1.4, 0.7, 1.0, 1.2]}
        kwargs = {}
        expected = metrics.loss_progression(*inputs.values())
    return inputs, kwargs, expected.to_dict()


@pytest.fixture(scope="module")
def modules():
    """Each evaluate module, loaded once by path from the checkout (evaluate.load is slow)."""
    return {name: evaluate.load(str(ROOT / "metrics" / name)) for name in METRIC_NAMES}


def test_package_imports_neither_evaluate_nor_data():
    code = "import sys, hf_vitrobust.metrics; print(sorted(m for m in sys.modules if m in ('evaluate', 'hf_vitrobust.data')))"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "[]"


def test_registry_lists_every_wrapper():
    folders = sorted(
        path.name
        for path in (ROOT / "metrics").iterdir()
        if path.is_dir() and not path.name.startswith((".", "_"))
    )
    assert folders == sorted(METRIC_NAMES)
    assert set(METRIC_NAMES) == {
        "mce",
        "flip_rate",
        "ood_aupr",
        "masked_accuracy",
        "calibration",
        "background_gap",
        "occlusion_accuracy",
        "fourier_heatmap",
        "frequency_noise",
        "loss_progression",
    }


@pytest.mark.parametrize("name", METRIC_NAMES)
def test_wrapper_matches_package(modules, name):
    inputs, kwargs, expected = _example(name)
    assert modules[name].compute(**inputs, **kwargs) == expected


@pytest.mark.parametrize("name", METRIC_NAMES)
def test_readme_documents_the_metric(name):
    readme = (ROOT / "metrics" / name / "README.md").read_text()
    for section in ("## What it measures", "## Inputs", "## Outputs", "## Citation", "@"):
        assert section in readme, (name, section)
    script = (ROOT / "metrics" / name / f"{name}.py").read_text()
    # evaluate's import scanner misreads several imports on one line (see NOTES.md).
    assert not [line for line in script.splitlines() if line.startswith("import ") and "," in line]


def test_package_load_uses_the_installed_copy(modules):
    module = metrics.load("mce")
    assert metrics.evaluate_module_path("mce").parent.name == "evaluate_metrics"
    inputs, kwargs, expected = _example("mce")
    assert module.compute(**inputs, **kwargs) == expected
    with pytest.raises(ValueError, match="Did you mean 'flip_rate'"):
        metrics.load("flip_rates")


def test_missing_cells_error_through_evaluate(modules):
    with pytest.raises(ValueError, match="Missing ImageNet-C cells"):
        modules["mce"].compute(predictions=[0], references=[0], corruptions=["fog"], severities=[1])
    result = modules["mce"].compute(
        predictions=[0], references=[0], corruptions=["fog"], severities=[1], allow_partial=True
    )
    assert len(result["missing_cells"]) == 74 and result["complete"] is False


def test_top1_flip_rate_through_evaluate(modules):
    result = modules["flip_rate"].compute(
        predictions=[[3, 3, 4, 3, 5]], perturbations=["gaussian_noise"], difficulties=[1], allow_partial=True
    )
    assert result["flip_probability"] == {"gaussian_noise": 0.5} and result["top5_distance"] == {}


@settings(max_examples=8, deadline=None, database=None)
@given(
    wrong=st.lists(st.booleans(), min_size=150, max_size=150),
    cuts=st.lists(st.integers(1, 149), max_size=4, unique=True),
)
def test_mce_same_in_one_batch_or_many(modules, wrong, cuts):
    cells = [(c, s) for c in STANDARD_CORRUPTIONS for s in SEVERITIES] * 2
    columns = {
        "predictions": [int(w) for w in wrong],
        "references": [0] * 150,
        "corruptions": [c for c, _ in cells],
        "severities": [s for _, s in cells],
    }
    module = modules["mce"]
    bounds = [0, *sorted(cuts), 150]
    for start, stop in itertools.pairwise(bounds):
        module.add_batch(**{key: values[start:stop] for key, values in columns.items()})
    assert (
        module.compute(clean_error=0.1)
        == metrics.mean_corruption_error(*columns.values(), clean_error=0.1).to_dict()
    )


@settings(max_examples=8, deadline=None, database=None)
@given(seed=st.integers(0, 2**32 - 1), cut=st.integers(1, 19))
def test_ood_and_calibration_same_in_one_batch_or_many(modules, seed, cut):
    rng = np.random.default_rng(seed)
    scores, is_ood = rng.normal(size=20).tolist(), [True] * 10 + [False] * 10
    modules["ood_aupr"].add_batch(scores=scores[:cut], is_ood=is_ood[:cut])
    modules["ood_aupr"].add_batch(scores=scores[cut:], is_ood=is_ood[cut:])
    assert modules["ood_aupr"].compute() == metrics.ood_detection_metrics(scores, is_ood).to_dict()
    logits, references = rng.normal(size=(20, 4)), rng.integers(0, 4, size=20).tolist()
    modules["calibration"].add_batch(predictions=logits[:cut].tolist(), references=references[:cut])
    modules["calibration"].add_batch(predictions=logits[cut:].tolist(), references=references[cut:])
    expected = metrics.calibration_metrics(logits, references, from_logits=True).to_dict()
    assert modules["calibration"].compute(from_logits=True) == pytest.approx(expected)


@pytest.mark.slow
def test_wheel_ships_the_wrappers_and_loads_them(tmp_path):
    source = tmp_path / "source"
    source.mkdir()
    for item in ("pyproject.toml", "README.md", "LICENSE"):
        (source / item).write_bytes((ROOT / item).read_bytes())
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(ROOT / "hf_vitrobust", source / "hf_vitrobust", symlinks=True, ignore=ignore)
    shutil.copytree(ROOT / "metrics", source / "metrics", ignore=ignore)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path / "dist"),
            ".",
        ],
        cwd=source,
        check=True,
        capture_output=True,
    )
    (wheel,) = (tmp_path / "dist").glob("hf_vitrobust-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for name in METRIC_NAMES:
        assert f"hf_vitrobust/evaluate_metrics/{name}/{name}.py" in names
        assert f"hf_vitrobust/evaluate_metrics/{name}/README.md" in names
    assert "hf_vitrobust/metrics/alexnet_imagenet_c_errors.csv" in names
    assert "hf_vitrobust/assets/class_lists/imagenet_9.tsv" in names

    # Installed from the wheel (not the checkout), `load` finds and runs the shipped wrapper.
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
    )
    script = (
        "import hf_vitrobust.metrics as m\n"
        f"assert m.__file__.startswith({str(target)!r}), m.__file__\n"
        "r = m.load('ood_aupr').compute(scores=[0.1, 0.4, 0.35, 0.8], is_ood=[False, False, True, True])\n"
        "print(r['auroc'])\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(target)},
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.strip().splitlines()[-1] == "0.75"
