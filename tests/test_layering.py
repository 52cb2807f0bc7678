"""Dependencies inside the package point one way: cli -> evaluation -> probes, data, metrics -> models, corruptions.

Under all of them lie the foundation modules `constants` (the fixed facts) and `registry` (`Registry[T]`), which
import nothing of the package and nothing outside the standard library. Corruptions are image operations and import
no model code; metrics aggregate records and import only the foundation; models know nothing of runs; nothing
imports the CLI. Each subpackage's imports of other parts of
hf_vitrobust are read from its source (static imports, relative or absolute) and checked against what it may use.
"""

import ast
from pathlib import Path

import pytest

import hf_vitrobust

PACKAGE = Path(hf_vitrobust.__file__).parent
# `package` is the package's own __init__ (its version string); `atomic_files` imports nothing of the package.
FOUNDATION = {"constants", "registry"}
ALLOWED: dict[str, set[str]] = {
    "constants": set(),
    "registry": set(),
    "atomic_files": set(),
    "corruptions": {"atomic_files"} | FOUNDATION,
    "models": {"atomic_files"} | FOUNDATION,
    "metrics": FOUNDATION,
    "data": {"package", "corruptions", "models"} | FOUNDATION,
    "probes": {"corruptions", "data", "metrics", "models"} | FOUNDATION,
    "evaluation": {"package", "atomic_files", "corruptions", "data", "metrics", "models", "probes"}
    | FOUNDATION,
    "hub": {"package", "evaluation", "metrics"} | FOUNDATION,
    "training": {"package", "atomic_files", "hub", "models"} | FOUNDATION,
    "cli": {"corruptions", "data", "evaluation", "hub", "models", "training"} | FOUNDATION,
}
# Folders that hold non-code or links to top-level folders (evaluate modules, card templates, the Space app).
NOT_CODE = {"assets", "evaluate_metrics", "model_card_templates", "space_app", "__pycache__"}


def _part_of(path: Path) -> str:
    relative = path.relative_to(PACKAGE)
    return relative.parts[0].removesuffix(".py") if len(relative.parts) > 1 else relative.stem


def _imported_parts(path: Path) -> set[str]:
    """The top-level parts of hf_vitrobust that a module imports ("package" for the package's __init__)."""
    folder = list(path.relative_to(PACKAGE).parts[:-1])
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = folder[: len(folder) - (node.level - 1)]
            dotted = base + [part for part in (node.module or "").split(".") if part]
            found.add(dotted[0] if dotted else "package")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "hf_vitrobust":
            parts = node.module.split(".")
            found.add(parts[1] if len(parts) > 1 else "package")
        elif isinstance(node, ast.Import):
            found |= {
                alias.name.split(".")[1] for alias in node.names if alias.name.startswith("hf_vitrobust.")
            }
    return found


def _modules() -> list[Path]:
    return [
        path
        for path in sorted(PACKAGE.rglob("*.py"))
        if not NOT_CODE & set(path.relative_to(PACKAGE).parts) and _part_of(path) in ALLOWED
    ]


def test_every_part_of_the_package_is_covered():
    parts = {path.name.removesuffix(".py") for path in PACKAGE.iterdir() if path.name not in NOT_CODE}
    parts -= {"__init__", "__main__"}
    assert parts == set(ALLOWED)


@pytest.mark.parametrize("path", _modules(), ids=lambda path: path.relative_to(PACKAGE).as_posix())
def test_imports_point_one_way(path):
    part = _part_of(path)
    forbidden = _imported_parts(path) - ALLOWED[part] - {part}
    assert not forbidden, f"{path.relative_to(PACKAGE)} ({part}) imports {sorted(forbidden)}"


def test_the_check_reads_relative_and_absolute_imports(tmp_path, monkeypatch):
    """The reader is not blind: a corruption module importing model code, either way, is caught."""
    monkeypatch.setattr(f"{__name__}.PACKAGE", tmp_path)
    module = tmp_path / "corruptions" / "bad.py"
    module.parent.mkdir()
    module.write_text("from ..models.classifier import Classifier\nimport hf_vitrobust.evaluation.runner\n")
    assert _imported_parts(module) == {"models", "evaluation"}


@pytest.mark.parametrize("name", sorted(FOUNDATION))
def test_the_foundation_imports_only_the_standard_library(name):
    """constants and registry import nothing of the package and nothing from third parties."""
    import sys

    tree = ast.parse((PACKAGE / f"{name}.py").read_text())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            assert not node.level, f"{name}.py has a relative import"
            imported.add((node.module or "").split(".")[0])
    assert imported <= set(sys.stdlib_module_names) | {"__future__"}, imported - set(sys.stdlib_module_names)


def test_the_tests_mirror_the_package_layout():
    """tests/<part>/ holds the tests of hf_vitrobust/<part>/; tests/ itself the top-level modules' and the
    cross-cutting ones (the CLI, device placement, the examples/ scripts, lint, this layering)."""
    tests = Path(__file__).resolve().parent
    folders = {
        path.name
        for path in tests.iterdir()
        if path.is_dir() and path.name not in {"fixtures", "__pycache__"}
    }
    packages = {path.name for path in PACKAGE.iterdir() if (path / "__init__.py").is_file()}
    assert folders <= packages, folders - packages
    assert {"corruptions", "data", "evaluation", "hub", "metrics", "models", "probes", "training"} <= folders
    # Each test of tests/<part>/ exercises hf_vitrobust.<part> (the Space app's tests: the app that hub.space stages).
    space_app = {"test_space_app.py", "test_space_browser.py"}
    for folder in folders:
        for test in (tests / folder).glob("test_*.py"):
            text = test.read_text()
            assert f"hf_vitrobust.{folder}" in text or (folder == "hub" and test.name in space_app), test
    top_level = {path.stem.removeprefix("test_") for path in tests.glob("test_*.py")}
    cross_cutting = {"cli_train_push", "device_placement", "examples", "layering", "lint"}
    assert top_level <= set(ALLOWED) | cross_cutting, top_level


def test_evaluation_names_no_probe():
    """The runner, the report and the figures loop over `PROBES`: no module of evaluation/ spells a probe's name as
    a string, or its function or result class as a name."""
    from hf_vitrobust.probes import PROBES

    spelled = set()
    for spec in PROBES.values():
        spelled |= {spec.name, spec.probe.__name__, spec.result_type.__name__, spec.result_type.probe_name()}
    for path in sorted((PACKAGE / "evaluation").glob("*.py")):
        tree = ast.parse(path.read_text())
        strings = {
            node.value
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
        }
        names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
        names |= {
            alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) for alias in node.names
        }
        found = spelled & (strings | names)
        assert not found, f"evaluation/{path.name} names probe(s) {sorted(found)}"
