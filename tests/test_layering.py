"""Dependencies inside the package point one way, by stage (docs/architecture.md):

    cli -> training -> hub -> evaluation -> report -> analysis -> probes -> data -> metrics, models, corruptions
        -> atomic_files -> the foundation (constants, registry)

A part may import any part below it, never one above. The foundation modules `constants` (the fixed facts) and
`registry` (`Registry[T]`) import nothing of the package and nothing outside the standard library. Corruptions are
image operations and import no model code; metrics aggregate records and import only the foundation; models know
nothing of runs; nothing imports the CLI. Each module's imports of hf_vitrobust are read from its source (static
imports, relative or absolute, those inside functions included) and checked against what its part may use, and no
import cycle exists between modules, inside a package or across packages.
"""

import ast
from pathlib import Path

import pytest

import hf_vitrobust

PACKAGE = Path(hf_vitrobust.__file__).parent
FOUNDATION = {"constants", "registry"}
#: The stages, top to bottom: a part may import the parts of every stage below its own.
STAGES: list[set[str]] = [
    {"cli"},
    {"training"},
    {"hub"},
    {"evaluation"},
    {"report"},
    {"analysis"},
    {"probes"},
    {"data"},
    {"metrics", "models", "corruptions"},
    {"atomic_files"},
    FOUNDATION,
]
#: Parts allowed less than their stage: metrics import only the foundation; corruptions and models only the
#: atomic writer and the foundation (so corruptions import no model code); the foundation imports nothing.
NARROWER: dict[str, set[str]] = {
    "metrics": FOUNDATION,
    "corruptions": {"atomic_files"} | FOUNDATION,
    "models": {"atomic_files"} | FOUNDATION,
    "atomic_files": set(),
    "constants": set(),
    "registry": set(),
}


def _allowed() -> dict[str, set[str]]:
    allowed = {}
    for index, stage in enumerate(STAGES):
        below = set().union(*STAGES[index + 1 :])
        for part in stage:
            # `package` is the package's own __init__ (its version string).
            allowed[part] = NARROWER.get(part, below | {"package"})
    return allowed


ALLOWED = _allowed()
MAX_MODULE_LINES = 600
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
    cross-cutting ones (the CLI, device placement, the examples/ and benchmarks/ scripts, lint, this layering)."""
    tests = Path(__file__).resolve().parent
    folders = {
        path.name
        for path in tests.iterdir()
        if path.is_dir() and path.name not in {"fixtures", "__pycache__"}
    }
    packages = {path.name for path in PACKAGE.iterdir() if (path / "__init__.py").is_file()}
    assert folders <= packages, folders - packages
    assert {
        "analysis",
        "corruptions",
        "data",
        "evaluation",
        "hub",
        "metrics",
        "models",
        "probes",
        "report",
        "training",
    } <= folders
    # Each test of tests/<part>/ exercises hf_vitrobust.<part> (the Space app's tests: the app that hub.space stages).
    space_app = {"test_space_app.py", "test_space_browser.py"}
    for folder in folders:
        for test in (tests / folder).glob("test_*.py"):
            text = test.read_text()
            assert f"hf_vitrobust.{folder}" in text or (folder == "hub" and test.name in space_app), test
    top_level = {path.stem.removeprefix("test_") for path in tests.glob("test_*.py")}
    cross_cutting = {"benchmarks", "cli_train_push", "device_placement", "examples", "layering", "lint"}
    assert top_level <= set(ALLOWED) | cross_cutting, top_level


@pytest.mark.parametrize("part", ["evaluation", "analysis", "report"])
def test_the_run_its_analysis_and_its_report_name_no_probe(part):
    """The runner, the analysis, the report and the figures loop over `PROBES`: no module of evaluation/, analysis/
    or report/ spells a probe's name as a string, or its function or result class as a name."""
    from hf_vitrobust.probes import PROBES

    spelled = set()
    for spec in PROBES.values():
        spelled |= {spec.name, spec.probe.__name__, spec.result_type.__name__, spec.result_type.probe_name()}
    for path in sorted((PACKAGE / part).glob("*.py")):
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
        assert not found, f"{part}/{path.name} names probe(s) {sorted(found)}"


# --------------------------------------------------------------------------------------------------- cycles
def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _import_graph(root: Path) -> dict[str, set[str]]:
    """Module -> the package modules it imports, anywhere in its source (inside functions too). `from X import
    name` counts as an import of X.name where that is a module, else of X."""
    paths = {
        _module_name(path, root): path
        for path in root.rglob("*.py")
        if not NOT_CODE & set(path.relative_to(root).parts)
    }
    top = root.name
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package[: len(package) - (node.level - 1)]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                if target.split(".")[0] != top:
                    continue
                for alias in node.names:
                    found.add(f"{target}.{alias.name}" if f"{target}.{alias.name}" in paths else target)
            elif isinstance(node, ast.Import):
                found |= {alias.name for alias in node.names if alias.name.split(".")[0] == top}
        graph[name] = {target for target in found if target in paths and target != name}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycle_anywhere():
    """No two modules import each other, directly or through others, lazy imports inside functions included."""
    assert _cycles(_import_graph(PACKAGE)) == []


def test_the_cycle_check_sees_lazy_imports(tmp_path):
    """The check is not blind: a cycle closed by an import inside a function is found, and its modules named."""
    root = tmp_path / "pkg"
    (root / "sub").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "sub" / "__init__.py").write_text("")
    (root / "sub" / "a.py").write_text("from .b import thing\n")
    (root / "sub" / "b.py").write_text("def thing():\n    from . import a\n    return a\n")
    (root / "sub" / "c.py").write_text("from pkg.sub import a\n")
    assert _cycles(_import_graph(root)) == [["pkg.sub.a", "pkg.sub.b"]]
    (root / "sub" / "b.py").write_text("thing = 1\n")
    assert _cycles(_import_graph(root)) == []


def test_no_module_is_over_the_line_limit():
    """No module of the package is over MAX_MODULE_LINES lines: a longer one holds more than one concept."""
    long = {
        path.relative_to(PACKAGE).as_posix(): count
        for path in PACKAGE.rglob("*.py")
        if (count := len(path.read_text().splitlines())) > MAX_MODULE_LINES
    }
    assert not long, long


def _is_a_kind(node: ast.AST) -> bool:
    """`x.kind`, `kind`, `x["kind"]` or `x.get("kind")`: an expression that reads a benchmark's kind."""
    if isinstance(node, ast.Attribute):
        return node.attr == "kind"
    if isinstance(node, ast.Name):
        return node.id == "kind"
    if isinstance(node, ast.Subscript):
        return isinstance(node.slice, ast.Constant) and node.slice.value == "kind"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
        return bool(node.args) and isinstance(node.args[0], ast.Constant) and node.args[0].value == "kind"
    return False


def _switches(tree: ast.AST, kinds: set[str]) -> list[int]:
    """Lines comparing a benchmark kind with a kind's name, or anything with "imagenet-c"."""
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        operands = [node.left, *node.comparators]
        constants = {
            element.value
            for operand in operands
            for element in (
                operand.elts if isinstance(operand, ast.Set | ast.Tuple | ast.List) else [operand]
            )
            if isinstance(element, ast.Constant) and isinstance(element.value, str)
        }
        if "imagenet-c" in constants or (constants & kinds and any(_is_a_kind(o) for o in operands)):
            lines.append(node.lineno)
    return lines


def test_no_module_switches_on_a_kind_or_a_benchmark_name():
    """What differs between kinds of benchmark lives in their `BenchmarkKind` (analysis/kinds.py) and display
    (report/displays.py): no other module compares a benchmark's kind with a kind's name, nor anything with
    "imagenet-c"."""
    from hf_vitrobust.analysis.kinds import BENCHMARK_KINDS

    kinds = set(BENCHMARK_KINDS.names())
    allowed = {"analysis/kinds.py", "report/displays.py"}
    found = {
        path.relative_to(PACKAGE).as_posix(): lines
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.relative_to(PACKAGE).as_posix() not in allowed
        and not NOT_CODE & set(path.relative_to(PACKAGE).parts)
        and (lines := _switches(ast.parse(path.read_text()), kinds))
    }
    assert not found, found


def test_the_switch_check_is_not_blind():
    kinds = {"corruption", "background"}
    for source in (
        "if benchmark.kind == 'corruption': pass",
        "x = kind in {'background', 'ood'}",
        "y = info.get('kind') != 'corruption'",
        "z = benchmark.name == 'imagenet-c'",
    ):
        assert _switches(ast.parse(source), kinds) == [1], source
    assert _switches(ast.parse("t = benchmark.task == 'background'"), kinds) == []
