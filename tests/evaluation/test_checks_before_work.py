"""A whole suite is checked before any work (issue 38, point 1): every probe parameter's value against its range
when the suite is read, and against each model's input size once the models are loaded; a probe that cannot run
on what it was given is recorded as not run, with its reason, and the run goes on; a fixed setting of a step that
never ran does not block `--resume` of the finished ones."""

import json
import shutil
from pathlib import Path

import pytest
import yaml
from probe_models import save_tiny_vit

from hf_vitrobust.evaluation.config import EvaluationConfig, EvaluationError
from hf_vitrobust.evaluation.runner import evaluate
from hf_vitrobust.evaluation.store import suite_change_refusal
from hf_vitrobust.evaluation.suite import suite_from_dict
from hf_vitrobust.probes import PROBES


def _suite(probes: dict, **benchmarks_extra) -> dict:
    return {
        "name": "checks",
        "description": "probe checks",
        "batch_size": 8,
        "seed": 1,
        "chunk_size": 4,
        "models": ["builtin:efficientnet_lite0"],
        "benchmarks": {"imagenet-val": {"source": "builtin", "limit": 4}, **benchmarks_extra},
        "probes": probes,
    }


def _load(probe: str, params: dict) -> None:
    suite_from_dict(_suite({probe: {"num_images": 2, "params": params}}))


@pytest.mark.parametrize(
    ("probe", "param"),
    [(name, param) for name, spec in sorted(PROBES.items()) for param in spec.accepted_params],
)
def test_every_parameter_of_every_probe_is_checked_when_the_suite_is_read(probe, param):
    """No probe parameter takes a mapping, so each one refusing {"bad": 1} at load shows that each has a check."""
    with pytest.raises(ValueError, match=rf"probes\.{probe}: params: .*{param}"):
        _load(probe, {param: {"bad": 1}})


@pytest.mark.parametrize("probe", sorted(PROBES))
def test_every_default_value_passes_its_own_check(probe):
    """The checks refuse nothing the probe runs with by default."""
    spec = PROBES[probe]
    defaults = {key: value for key, value in spec.effective_params({}).items() if key in spec.accepted_params}
    assert spec.check_params(defaults) == {**spec.default_params, **defaults}


@pytest.mark.parametrize(
    ("probe", "params", "message"),
    [
        ("occlusion", {"ratios": [0.0, 1.5]}, r"ratios \(item 1\) must be a number in \[0, 1\].*got 1\.5"),
        ("occlusion", {"ratios": [0.1, 0.1]}, r"ratios must hold distinct values"),
        ("occlusion", {"ratios": []}, r"ratios must be a non-empty list"),
        ("pgd", {"eps": -0.1}, r"eps must be a finite number > 0, got -0\.1"),
        ("pgd", {"steps": 0}, r"steps must be a positive int, got 0"),
        ("pgd", {"random_start": 1}, r"random_start must be true or false, got 1"),
        ("pgd", {"method": "sign", "record": "paul-chen-notebook"}, r'needs method "adam"'),
        ("pgd", {"method": "adamw"}, r"method must be one of \['adam', 'sign'\].*Did you mean 'adam'"),
        ("deepfool", {"candidates": 1}, r"candidates must be an int >= 2, got 1"),
        ("deepfool", {"overshoot": -0.02}, r"overshoot must be a finite number >= 0"),
        ("attention", {"discard_ratio": 1.0}, r"discard_ratio must be in \[0, 1\), got 1\.0"),
        ("attention", {"head_fusion": "meen"}, r"Did you mean 'mean'"),
        ("gradcam", {"method": "gradcamm"}, r"method is not accepted: Unknown CAM method 'gradcamm'"),
        ("hessian", {"iterations": 2, "top_k": 5}, r"Lanczos needs iterations >= top_k"),
        ("hessian", {"method": "power", "density": True}, r"density true needs method 'lanczos'"),
        ("hessian", {"tol": -1e-3}, r"tol must be a finite number >= 0"),
        ("fourier_heatmap", {"window": 4}, r"window must be odd"),
        (
            "fourier_heatmap",
            {"eps": -1},
            r"eps \(the L2 norm of the perturbation\) must be a finite number >= 0",
        ),
        (
            "frequency_noise",
            {"frequencies": [0.1, 1.2]},
            r"frequencies \(item 1\) must be a number in \[0, 1\]",
        ),
        ("frequency_noise", {"bandwidth": 0}, r"bandwidth must be a number in \(0, 2\]"),
        ("cka", {"minibatch_size": 3}, r"minibatch_size must be an int >= 4, got 3"),
        ("feature_variance", {"layers": "stem"}, r"layers must be a non-empty list of layer names"),
        ("lesion", {"units": []}, r"units must be a non-empty list"),
        ("loss_landscape", {"x_range": [1.0, -1.0]}, r"x_range must have low <= high"),
        ("loss_landscape", {"resolution": [3, 0]}, r"resolution must be a positive int, got 0"),
        ("loss_landscape", {"exclude": ["("]}, r"exclude holds '\(', which is not a regular expression"),
    ],
)
def test_out_of_range_values_are_refused_in_the_suites_words(probe, params, message):
    with pytest.raises(ValueError, match=rf"suite: probes\.{probe}: params: .*{message}"):
        _load(probe, params)


@pytest.mark.parametrize(
    ("probe", "params", "size", "message"),
    [
        ("fourier_heatmap", {"window": 33}, (32, 32), r"window 33 is too wide for 32x32 images"),
        ("occlusion", {"ratios": [0.5]}, (16, 64), r"hole"),
        ("frequency_noise", {"band": "park-kim"}, (32, 48), r"32x48|square|even"),
    ],
)
def test_values_are_checked_against_the_input_size(probe, params, size, message):
    spec = PROBES[probe]
    spec.check_for_input(params, (224, 224))  # fits a 224 x 224 input
    with pytest.raises(
        ValueError, match=rf"Probe '{probe}' \(for {size[0]}x{size[1]} model inputs\): .*{message}"
    ):
        spec.check_for_input(params, size)


def test_a_value_that_does_not_fit_the_model_fails_before_any_work(tmp_path):
    """A 33-wide Fourier window is fine for 224-pixel models and too wide for the 32-pixel ViT: refused once the
    models are loaded, before any benchmark, with no run folder left behind."""
    model = save_tiny_vit(tmp_path / "vit")
    suite = _suite({"fourier_heatmap": {"num_images": 2, "params": {"window": 33}}})
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(suite))
    output = tmp_path / "run"
    with pytest.raises(EvaluationError, match=r"window 33 is too wide for 32x32 images"):
        evaluate(
            EvaluationConfig(
                models=[model], suite=str(tmp_path / "suite.yaml"), output=output, progress=False
            )
        )
    assert not output.exists()


def test_a_bad_suite_file_fails_before_the_run_folder_exists(tmp_path):
    (tmp_path / "bad.yaml").write_text(
        yaml.safe_dump(_suite({"occlusion": {"num_images": 2, "params": {"ratios": [0.0, 1.5]}}}))
    )
    output = tmp_path / "run"
    with pytest.raises(EvaluationError, match=r"ratios \(item 1\) must be a number in \[0, 1\]"):
        evaluate(EvaluationConfig(suite=str(tmp_path / "bad.yaml"), output=output, progress=False))
    assert not output.exists()


def test_a_probe_with_nothing_to_attack_is_recorded_as_not_run_and_the_run_goes_on(tmp_path):
    """A random 32-pixel ViT gets none of the photos right: PGD under the notebook's record (a random draw, of which
    the correct images are attacked) has nothing to attack. The run completes, the benchmark's results and the
    other probe are kept, and PGD says why it did not run, in results.json and in the report."""
    model = save_tiny_vit(tmp_path / "vit")
    probes = {
        "pgd": {"num_images": 4, "params": {"record": "paul-chen-notebook", "steps": 1}},
        "feature_variance": {"num_images": 4},
    }
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(_suite(probes)))
    output = tmp_path / "run"
    results = evaluate(EvaluationConfig(models=[model], suite=str(tmp_path / "suite.yaml"), output=output))
    (key,) = results["probes"]
    probes_of_model = results["probes"][key]
    assert results["complete"] is True
    assert probes_of_model["pgd"] == {
        "skipped": "PGD: the model classifies none of the selected images correctly: nothing was attacked.",
        "benchmark": "imagenet-val",
    }
    assert probes_of_model["feature_variance"]["num_images"] == 4
    assert results["metrics"][key]["imagenet-val"]["top1"] == 0.0
    report = (output / "report.md").read_text()
    assert "nothing was attacked" in report


def _run(tmp_path: Path, suite: dict, *, resume: bool = False) -> dict:
    (tmp_path / "suite.json").write_text(json.dumps(suite))
    config = EvaluationConfig(
        suite=str(tmp_path / "suite.json"),
        output=tmp_path / "run",
        progress=False,
        report=False,
        resume=resume,
    )
    return evaluate(config)


def _benchmark_chunks(tmp_path: Path) -> dict[str, int]:
    """Each benchmark chunk file of the run and its modification time (an atomic rewrite replaces the file)."""
    work = tmp_path / "run" / ".work"
    return {
        str(path.relative_to(work)): path.stat().st_mtime_ns for path in work.glob("*/benchmarks/*/chunk-*")
    }


def test_resume_accepts_a_step_that_never_ran_and_refuses_one_that_did(tmp_path):
    """After a finished run, --resume may add a probe (it never ran) without computing any benchmark again, and
    refuses a change of a probe that ran, naming its folder; once that folder is removed, the probe runs again
    under its new settings, and still no benchmark chunk is computed again."""
    first = _suite({"occlusion": {"num_images": 2, "params": {"ratios": [0.0, 0.5]}}})
    _run(tmp_path, first)
    chunks = _benchmark_chunks(tmp_path)
    assert len(chunks) == 1  # 4 images, chunks of 4
    added = _suite({**first["probes"], "feature_variance": {"num_images": 2}})
    results = _run(tmp_path, added, resume=True)
    assert sorted(results["probes"]["builtin_efficientnet_lite0"]) == ["feature_variance", "occlusion"]
    assert results["probes"]["builtin_efficientnet_lite0"]["feature_variance"]["num_images"] == 2
    changed = _suite(
        {
            "occlusion": {"num_images": 2, "params": {"ratios": [0.0, 0.2]}},
            "feature_variance": {"num_images": 2},
        }
    )
    folder = tmp_path / "run" / ".work" / "builtin_efficientnet_lite0" / "probes" / "occlusion"
    with pytest.raises(
        EvaluationError, match=rf"probe occlusion changed after it ran \(remove {folder} to run it"
    ):
        _run(tmp_path, changed, resume=True)
    shutil.rmtree(folder)
    results = _run(tmp_path, changed, resume=True)
    assert results["probes"]["builtin_efficientnet_lite0"]["occlusion"]["ratios"] == [0.0, 0.2]
    assert _benchmark_chunks(tmp_path) == chunks


def test_suite_change_refusal_names_each_started_step_and_the_results_wide_settings(tmp_path):
    before = suite_from_dict(_suite({"occlusion": {"num_images": 2}, "pgd": {"num_images": 2}})).to_dict()
    (tmp_path / "m" / "probes" / "occlusion").mkdir(parents=True)
    (tmp_path / "m" / "probes" / "occlusion" / "chunk-000000.pt").write_bytes(b"x")
    (tmp_path / "m" / "probes" / "pgd").mkdir(parents=True)  # an empty folder: never started
    after = json.loads(json.dumps(before))
    after["probes"]["pgd"]["num_images"] = 3
    after["description"] = "edited"
    assert suite_change_refusal(before, after, tmp_path) is None
    after["probes"]["occlusion"]["num_images"] = 3
    assert suite_change_refusal(before, after, tmp_path) == (
        f"probe occlusion changed after it ran (remove {tmp_path / 'm' / 'probes' / 'occlusion'} to run it again "
        "with the new settings)"
    )
    del after["probes"]["occlusion"]
    after["seed"] = 2
    assert suite_change_refusal(before, after, tmp_path) == (
        "the suite's seed changed (1 -> 2); probe occlusion removed after it ran (remove "
        f"{tmp_path / 'm' / 'probes' / 'occlusion'} to run it again with the new settings)"
    )


def test_a_default_source_that_cannot_be_read_is_named(tmp_path):
    """A benchmark without a source reads its default Hub copy; offline, the error names that copy (it said
    "cannot read source None" before), before any work."""
    suite = {**_suite({}), "benchmarks": {"imagenet-r": {"limit": 2}}}
    (tmp_path / "suite.json").write_text(json.dumps(suite))
    output = tmp_path / "run"
    with pytest.raises(
        EvaluationError, match=r"imagenet-r: cannot read source 'axiong/imagenet-r' \(its default source\)"
    ):
        evaluate(EvaluationConfig(suite=str(tmp_path / "suite.json"), output=output, progress=False))
    assert not output.exists()
