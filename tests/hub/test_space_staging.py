"""Staging the Space (`hf_vitrobust.hub.space.stage_space`): the staged folder carries a wheel of hf_vitrobust and a
requirements.txt that installs it, and the staged app runs from that wheel, isolated from the checkout."""

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from huggingface_hub import SpaceCard

from hf_vitrobust import __version__
from hf_vitrobust.hub.space import find_source_tree, stage_space

ROOT = Path(__file__).resolve().parents[2]
# The modules app.py imports from its own folder.
SIBLINGS = ("app_analysis.py", "app_gpu.py", "app_inputs.py", "app_painting.py")
RESULTS = {
    "schema": "hf_vitrobust.results",
    "schema_version": 1,
    "complete": True,
    "models": [
        {"key": "builtin_efficientnet_lite0", "spec": "builtin:efficientnet_lite0", "name": "builtin"}
    ],
    "summary": {"builtin_efficientnet_lite0": {"imagenet-val top-1 %": 87.5, "imagenet-c mCE %": 94.36}},
}

# Runs in a fresh interpreter with cwd = the stage and PYTHONPATH = the unpacked wheel. The editable install of the
# checkout (setuptools' _EditableFinder on sys.meta_path) and any sys.path entry inside the checkout are removed,
# so hf_vitrobust can only come from the wheel (the virtual environment may live in the checkout: it stays).
ISOLATED = r"""
import json, sys
from pathlib import Path

repo, unpacked, wheel, scratch, out = (Path(arg) for arg in sys.argv[1:6])
sys.meta_path[:] = [f for f in sys.meta_path if getattr(f, "__name__", type(f).__name__) != "_EditableFinder"]
venv = Path(sys.prefix).resolve()
sys.path[:] = [
    p for p in sys.path
    if not Path(p or ".").resolve().is_relative_to(repo) or Path(p or ".").resolve().is_relative_to(venv)
]
report = {}

import torch
import hf_vitrobust
import app  # the staged app.py, from the current directory

report["hf_vitrobust"] = hf_vitrobust.__file__
report["app"] = app.__file__
report["demo"] = type(app.build_demo()).__name__
classifier = app.ModelCache().get(app.DEFAULT_MODEL)
pixels = classifier.preprocess(app.load_upload("examples/coffee.jpg"))
perturbed, _ = app.perturb(
    pixels, "corruption", corruption="brightness", severity=1, ratio=0.2, frequency=(0, 20), eps=15.7, seed=0
)
report["top1"] = [next(iter(table)) for table in app.top_k(classifier, torch.cat([pixels, perturbed]))]
report["leaderboard"] = app.leaderboard().to_dict("records")

from hf_vitrobust.hub.space import stage_space

try:
    stage_space(scratch / "without-wheel")
    report["without_wheel"] = "no error"
except RuntimeError as err:
    report["without_wheel"] = str(err)
try:
    files = stage_space(scratch / "with-wheel", wheel=wheel)
    report["with_wheel"] = sorted(str(p.relative_to(scratch / "with-wheel")) for p in files)
except Exception as err:
    report["with_wheel"] = f"{type(err).__name__}: {err}"
report["modules"] = sorted(
    {m.__file__ for name, m in list(sys.modules.items()) if name.split(".")[0] == "hf_vitrobust" and getattr(m, "__file__", None)}
)
out.write_text(json.dumps(report))
"""


@pytest.fixture(scope="module")
def staged(tmp_path_factory):
    run = tmp_path_factory.mktemp("runs") / "demo-run"
    run.mkdir()
    (run / "results.json").write_text(json.dumps(RESULTS))
    stage = tmp_path_factory.mktemp("stage")
    files = stage_space(stage, results=[run])
    return stage, files


@pytest.fixture(scope="module")
def isolated(staged, tmp_path_factory):
    stage, _ = staged
    wheel = next((stage / "wheels").glob("*.whl"))
    unpacked = tmp_path_factory.mktemp("unpacked")
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(unpacked)
    scratch = tmp_path_factory.mktemp("scratch")
    out = scratch / "report.json"
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env["PYTHONPATH"] = str(unpacked)
    process = subprocess.run(
        [sys.executable, "-c", ISOLATED, str(ROOT), str(unpacked), str(wheel), str(scratch), str(out)],
        cwd=stage,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert process.returncode == 0, process.stderr[-3000:]
    return unpacked, json.loads(out.read_text())


def test_staged_folder_has_the_app_the_wheel_and_the_results(staged):
    stage, files = staged
    names = {str(path.relative_to(stage)) for path in files}
    wheel = f"wheels/hf_vitrobust-{__version__}-py3-none-any.whl"
    assert names == {
        "README.md",
        "app.py",
        *SIBLINGS,
        "requirements.txt",
        "examples/chelsea.jpg",
        "examples/coffee.jpg",
        wheel,
        "results/demo-run/results.json",
    }
    requirements = [
        line
        for line in (stage / "requirements.txt").read_text().splitlines()
        if line and not line.startswith("#")
    ]
    assert requirements[0] == f"./{wheel}"
    assert (stage / requirements[0]).is_file()
    assert "grad-cam==1.5.7" in requirements
    # The MCP server needs gradio's mcp extra, at the gradio the Space runs (README.md's sdk_version).
    card = SpaceCard.load(stage / "README.md").data
    assert f"gradio[mcp]=={card.sdk_version}" in requirements
    assert json.loads((stage / "results/demo-run/results.json").read_text()) == RESULTS
    for name in ("app.py", *SIBLINGS):
        assert (stage / name).read_bytes() == (ROOT / "spaces_app" / name).read_bytes()
    with zipfile.ZipFile(stage / wheel) as archive:
        members = set(archive.namelist())
    assert {
        "hf_vitrobust/__init__.py",
        "hf_vitrobust/hub/space.py",
        "hf_vitrobust/models/builtin.py",
        *(f"hf_vitrobust/space_app/{name}" for name in ("app.py", *SIBLINGS)),
    } <= members


def test_readme_declares_the_installed_gradio():
    import gradio

    card = SpaceCard.load(ROOT / "spaces_app" / "README.md").data
    assert card.sdk == "gradio" and card.app_file == "app.py" and card.license == "apache-2.0"
    assert card.sdk_version == gradio.__version__
    assert card.title and card.emoji and card.colorFrom and card.colorTo
    assert len(card.short_description) <= 60  # the Hub's limit


def test_staged_app_runs_from_the_wheel_not_the_checkout(isolated):
    unpacked, report = isolated
    assert Path(report["hf_vitrobust"]).is_relative_to(unpacked)
    assert report["modules"] and all(Path(path).is_relative_to(unpacked) for path in report["modules"])
    assert not any(Path(path).is_relative_to(ROOT) for path in report["modules"])
    assert Path(report["app"]).name == "app.py" and not Path(report["app"]).is_relative_to(ROOT)
    assert report["demo"] == "Blocks"
    assert report["top1"] == ["espresso", "espresso"]
    # RESULTS is of schema 1: no protocol recorded, so each headline is shown as "not stated", unranked.
    common = {"rank": None, "model": "builtin", "protocol": "not stated", "source": "space"}
    where = {"read_from": "demo-run/results.json", "run": "demo-run", "commit": None}
    assert report["leaderboard"] == [
        {
            **common,
            "dataset": "imagenet-c",
            "task": "imagenet-c mCE %",
            "metric": "imagenet-c mCE %",
            "value": 94.36,
            **where,
        },
        {
            **common,
            "dataset": "imagenet-val",
            "task": "imagenet-val top-1 %",
            "metric": "imagenet-val top-1 %",
            "value": 87.5,
            **where,
        },
    ]


def test_installed_package_needs_a_wheel_to_stage(isolated):
    _, report = isolated
    assert "installed without its source tree" in report["without_wheel"]
    assert "wheel=" in report["without_wheel"]


def test_installed_package_stages_with_a_given_wheel(isolated):
    """Needs the package data globs "space_app/*" and "space_app/examples/*" (hf_vitrobust/space_app links to
    spaces_app/, as evaluate_metrics links to metrics/)."""
    _, report = isolated
    assert isinstance(report["with_wheel"], list), report["with_wheel"]
    assert {"app.py", "README.md", "requirements.txt", "examples/coffee.jpg"} <= set(report["with_wheel"])
    assert f"wheels/hf_vitrobust-{__version__}-py3-none-any.whl" in report["with_wheel"]


def test_bad_inputs_fail_before_any_work(tmp_path):
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "file.txt").write_text("x")
    with pytest.raises(FileExistsError, match="must be new or empty"):
        stage_space(busy)
    with pytest.raises(FileNotFoundError, match=r"No results\.json"):
        stage_space(tmp_path / "a", results=[tmp_path])
    not_a_wheel = tmp_path / "something.whl"
    not_a_wheel.write_bytes(b"")
    with pytest.raises(ValueError, match=r"hf_vitrobust-<version>-py3-none-any\.whl"):
        stage_space(tmp_path / "b", wheel=not_a_wheel)
    newer = tmp_path / "newer"
    newer.mkdir()
    (newer / "results.json").write_text(json.dumps({**RESULTS, "schema_version": 99}))
    with pytest.raises(ValueError, match="newer than this hf_vitrobust reads"):
        stage_space(tmp_path / "c", results=[newer])
    assert not any((tmp_path / name).exists() for name in ("a", "b", "c"))
    assert find_source_tree() == ROOT
