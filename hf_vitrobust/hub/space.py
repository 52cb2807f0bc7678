# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Stage the Gradio Space (`spaces_app/`) as a self-sufficient folder to upload.

hf_vitrobust is not on PyPI, so the staged Space carries a wheel of it built from the checkout
(`wheels/hf_vitrobust-<version>-py3-none-any.whl`) and a requirements.txt that installs that wheel (Spaces install
requirements.txt from the repository root) plus the app's other needs. Results run folders given for the
leaderboard are copied as `results/<run>/results.json`.

The app's files ship inside the package as `hf_vitrobust/space_app` (a link to the top-level `spaces_app/`, like
`evaluate_metrics` -> `metrics/`), so staging also works from an installed wheel; building a new wheel needs the
source tree, otherwise pass `wheel=`.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent.parent
SPACE_APP_DIR = PACKAGE_DIR / "space_app"
WHEELS_DIR = "wheels"
RESULTS_DIR = "results"
# Not part of a Space: caches and local state of running the app or Python in the app folder.
_IGNORED = (
    "__pycache__",
    "*.pyc",
    ".gradio",
    "flagged",
    ".ipynb_checkpoints",
    ".DS_Store",
    RESULTS_DIR,
    WHEELS_DIR,
)
# Source-tree files a wheel build needs besides the package itself.
_BUILD_FILES = (
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "MANIFEST.in",
    "README.md",
    "LICENSE",
    "LICENSE.md",
)
_WHEEL_NAME = re.compile(r"^hf_vitrobust-[^-]+(-\d[^-]*)?-py3-none-any\.whl$")


def find_source_tree(package_dir: Path = PACKAGE_DIR) -> Path | None:
    """The checkout hf_vitrobust is imported from (the folder with its pyproject.toml), or None when it runs from
    an installed wheel."""
    root = package_dir.parent
    pyproject = root / "pyproject.toml"
    if not pyproject.is_file():
        return None
    if not re.search(r'(?m)^name\s*=\s*"hf_vitrobust"', pyproject.read_text(encoding="utf-8")):
        return None
    return root


def build_wheel(output_dir: Path, source_tree: Path | None = None) -> Path:
    """Build a wheel of hf_vitrobust from the checkout into `output_dir`; returns its path.

    The package is copied (links followed) to a temporary tree first, so the build neither writes into the
    checkout nor picks up stale files from an old `build/` folder. Offline: `pip wheel --no-build-isolation`
    uses the setuptools of this environment.
    """
    source_tree = source_tree or find_source_tree()
    if source_tree is None:
        raise RuntimeError(
            f"hf_vitrobust is installed without its source tree ({PACKAGE_DIR}), so no wheel can be built; "
            "pass wheel=<path to an hf_vitrobust .whl> (e.g. built with `pip wheel --no-deps .` in a checkout)."
        )
    output_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="hf_vitrobust-wheel-") as tmp:
        tree = Path(tmp) / "src"
        shutil.copytree(
            source_tree / "hf_vitrobust",
            tree / "hf_vitrobust",
            symlinks=False,
            ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".gradio", "flagged"),
        )
        for name in _BUILD_FILES:
            if (source_tree / name).is_file():
                shutil.copy2(source_tree / name, tree / name)
        built = Path(tmp) / "dist"
        command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q"]
        command += ["--disable-pip-version-check", "-w", str(built), str(tree)]
        process = subprocess.run(command, capture_output=True, text=True, cwd=tmp)
        wheels = sorted(built.glob("hf_vitrobust-*.whl"))
        if process.returncode != 0 or len(wheels) != 1:
            details = (process.stderr or process.stdout).strip()[-2000:]
            raise RuntimeError(
                f"Building the hf_vitrobust wheel failed (exit {process.returncode}):\n{details}"
            )
        target = output_dir / wheels[0].name
        shutil.copy2(wheels[0], target)
    return target


def _app_requirements(app_dir: Path) -> list[str]:
    """The app's own requirement lines (spaces_app/requirements.txt without comments, blank lines and any line
    that installs hf_vitrobust itself)."""
    path = app_dir / "requirements.txt"
    lines = path.read_text(encoding="utf-8").splitlines() if path.is_file() else []
    requirements = []
    for line in lines:
        line = line.split("#", 1)[0].strip()
        if line and not re.match(r"^(\./)?(wheels/)?hf[_-]vitrobust\b", line, re.IGNORECASE):
            requirements.append(line)
    return requirements


def _results_file(run: Path) -> Path:
    run = Path(run)
    path = run / "results.json" if run.is_dir() else run
    if not path.is_file():
        raise FileNotFoundError(
            f"No results.json at {path}: give a run folder of `vitrobust evaluate` or its file."
        )
    return path


def stage_space(stage: Path, *, wheel: Path | None = None, results: Sequence[Path] = ()) -> list[Path]:
    """Write the folder to upload as the demo Space; returns the staged files, sorted.

    stage: an empty or new folder. wheel: an hf_vitrobust wheel to ship instead of building one from the checkout
    (needed when hf_vitrobust runs from an installed wheel). results: run folders (or their results.json files)
    for the leaderboard, copied to `results/<run folder name>/results.json`.

    The staged requirements.txt installs `./wheels/<wheel>` and the app's requirements (spaces_app/requirements.txt);
    gradio itself comes from the Space's `sdk_version` (README.md metadata).
    """
    # Check every input before writing anything.
    stage = Path(stage)
    if stage.exists() and (not stage.is_dir() or any(stage.iterdir())):
        raise FileExistsError(f"The stage folder {stage} must be new or empty.")
    source_tree = None
    if wheel is None:
        source_tree = find_source_tree()
        if source_tree is None:
            raise RuntimeError(
                f"hf_vitrobust is installed without its source tree ({PACKAGE_DIR}), so no wheel of it can be "
                "built; pass wheel=<an hf_vitrobust .whl> (built with `pip wheel --no-deps .` in a checkout)."
            )
    else:
        wheel = Path(wheel)
        if not wheel.is_file() or not _WHEEL_NAME.match(wheel.name):
            raise ValueError(
                f"wheel must be an existing hf_vitrobust-<version>-py3-none-any.whl file, got {wheel}."
            )
    if not (SPACE_APP_DIR / "app.py").is_file():
        raise FileNotFoundError(
            f"The Space app is missing from the installed package ({SPACE_APP_DIR}/app.py); its package data "
            "must include space_app/ (the link to spaces_app/)."
        )
    from ..analysis.results import check_schema

    result_files = [_results_file(Path(run)) for run in results]
    for path in result_files:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            raise ValueError(f"{path} is not valid JSON: {err}") from err
        check_schema(data, str(path))

    stage.mkdir(parents=True, exist_ok=True)
    shutil.copytree(
        SPACE_APP_DIR, stage, symlinks=False, ignore=shutil.ignore_patterns(*_IGNORED), dirs_exist_ok=True
    )
    wheels_dir = stage / WHEELS_DIR
    if wheel is None:
        staged_wheel = build_wheel(wheels_dir, source_tree)
    else:
        wheels_dir.mkdir(parents=True, exist_ok=True)
        staged_wheel = wheels_dir / wheel.name
        shutil.copy2(wheel, staged_wheel)

    requirements = [f"./{WHEELS_DIR}/{staged_wheel.name}", *_app_requirements(SPACE_APP_DIR)]
    (stage / "requirements.txt").write_text(
        "# Written by hf_vitrobust.hub.space.stage_space: the hf_vitrobust wheel shipped with this Space, then the "
        "app's own needs.\n" + "\n".join(requirements) + "\n",
        encoding="utf-8",
    )

    taken: set[str] = set()
    for path in result_files:
        run = path.parent.name or "run"
        name, counter = run, 2
        while name in taken:
            name, counter = f"{run}-{counter}", counter + 1
        taken.add(name)
        target = stage / RESULTS_DIR / name / "results.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
    return sorted(path for path in stage.rglob("*") if path.is_file())


__all__ = ["build_wheel", "find_source_tree", "stage_space"]
