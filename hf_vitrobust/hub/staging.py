# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Stage the exact folder an upload sends: a checkpoint and/or evaluation runs as a model repo, or a shipped metric
as a self-contained `evaluate` metric Space.

Staging is separate from uploading so that `vitrobust push --dry-run --output STAGE` shows, file by file, what
would reach the Hub, and so that the tests can load what was staged (a model with `from_pretrained`, a metric with
`evaluate.load`) in a Python where hf_vitrobust cannot be imported.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Sequence
from importlib import metadata, resources
from pathlib import Path
from typing import Any

import yaml

from ..models.timm_loading import read_timm_config
from .card_results import run_name
from .cards import metric_space_readme, render_model_card
from .eval_results import eval_result_files, write_eval_results
from .model_repo import ImageProcessorSpec, StagingError, checkpoint_kind, make_self_contained, plan_processor
from .published_runs import name_own_models, staged_suite, suite_yaml
from .verify import verify_model_stage

# What a run folder contributes to an upload (`.work/`, resumable state and anything else stay home).
RESULTS_FILES = ("results.json", "report.md", "report.html")
RESULTS_FOLDERS = ("predictions", "figures")
# Never copied from a checkpoint folder: the trainer's resumable states and the card (rendered anew).
_CHECKPOINT_SKIP = {"checkpoints", "README.md"}
# The module the staged metric script imports its computation from (one file: `evaluate` copies a script's
# direct relative imports beside it, locally and from the Hub, but only single `.py` files and not recursively).
CORE_MODULE = "vitrobust_core"


def _prepare_stage(stage: Path, overwrite: bool) -> Path:
    stage = Path(stage)
    if stage.exists() and not stage.is_dir():
        raise FileExistsError(f"Stage {stage} exists and is not a folder.")
    if stage.is_dir() and any(stage.iterdir()):
        if not overwrite:
            raise FileExistsError(
                f"Stage {stage} is not empty; pass overwrite=True (CLI: --overwrite) to replace its contents."
            )
        shutil.rmtree(stage)
    stage.mkdir(parents=True, exist_ok=True)
    return stage


def _check_apart(stage: Path, inputs: Sequence[Path]) -> None:
    """The stage is emptied and written: it must neither be, hold, nor lie inside what it copies."""
    target = stage.resolve()
    for source in inputs:
        source = Path(source).resolve()
        if target == source or target in source.parents or source in target.parents:
            raise ValueError(f"Stage {stage} overlaps {source}: stage into a separate, new folder.")


def staged_files(stage: Path) -> list[Path]:
    """Every file under `stage`, sorted (what `upload_folder` sends). Links are local aliases, not part of the
    upload (`local_aliases`)."""
    return sorted(path for path in Path(stage).rglob("*") if path.is_file() and not path.is_symlink())


def local_aliases(stage: Path) -> list[str]:
    """The links under `stage`, relative: local aliases that `push` leaves out of the upload (a metric stage's
    `<stage folder name>.py`, so that `evaluate.load(<stage folder>)` works where the folder is not named like
    the repo)."""
    return sorted(path.relative_to(stage).as_posix() for path in Path(stage).rglob("*") if path.is_symlink())


# --------------------------------------------------------------------------------------------------- model repos


def _checkpoint_summary(checkpoint: Path) -> dict[str, Any]:
    summary_file = checkpoint / "training_summary.json"
    if summary_file.is_file():
        return json.loads(summary_file.read_text(encoding="utf-8"))
    # A checkpoint not trained here (converted, or any transformers folder): describe it from its config.
    config = json.loads((checkpoint / "config.json").read_text(encoding="utf-8"))
    # A TimmWrapper config.json holds `label_names` instead of `id2label`.
    id2label = config.get("id2label") or {
        str(i): name for i, name in enumerate(config.get("label_names") or [])
    }
    return {
        "architecture": (config.get("architectures") or [config.get("model_type", "unknown")])[0],
        "model_type": config.get("model_type"),
        "num_labels": len(id2label) or config.get("num_classes") or None,
        "id2label": id2label,
    }


def _check_checkpoint(checkpoint: Path) -> None:
    if not checkpoint.is_dir():
        raise FileNotFoundError(f"Checkpoint {checkpoint} is not a folder.")
    if not (checkpoint / "config.json").is_file():
        raise FileNotFoundError(
            f"Checkpoint {checkpoint} holds no config.json: not a transformers model folder."
        )
    if read_timm_config(checkpoint) is not None:
        raise StagingError(
            f"Checkpoint {checkpoint} is in timm's own format (timm.models.save_for_hf), which is staged here only "
            "as a transformers folder: publish it with timm.models.push_to_hf_hub(model, REPO), which evaluates as "
            "timm/hf-hub:REPO, or save it as a transformers folder (TimmWrapperForImageClassification)."
        )
    if (
        not any(checkpoint.glob("*.safetensors"))
        and not (checkpoint / "model.safetensors.index.json").is_file()
    ):
        raise FileNotFoundError(f"Checkpoint {checkpoint} holds no .safetensors weights.")


def stage_model(
    stage: Path,
    checkpoint: Path | None = None,
    results: Sequence[Path] = (),
    *,
    repo_id: str | None = None,
    overwrite: bool = False,
    image_processor: ImageProcessorSpec | None = None,
    verify: bool = True,
    predictions_repo: str | None = None,
) -> list[Path]:
    """Write exactly the folder a model-repo upload sends, and return its files.

    `checkpoint`: a transformers folder (weights, config, image processor, remote code, `training_summary.json`),
    copied without its resumable `checkpoints/` and made self-contained (`model_repo.make_self_contained`): an
    AlterNet gets its remote code and `auto_map`; a folder without an image processor gets one from its
    `training_summary.json` or from `image_processor` (which replaces the checkpoint's), else it is refused
    (StagingError). `results`: evaluation run folders (or their results.json); each goes to `results/<run folder
    name>/` with results.json, predictions/, figures/, report.md and report.html (never `.work/`), and the run's
    suite as `suite.yaml` where it read a suite file of its own (a shipped suite is named by its name). With
    `repo_id`, a run's model whose spec is the checkpoint's folder is named `repo_id` in the staged results.json
    (its key and spec stay: they record what was evaluated), so the card and the Space leaderboard show the repo
    id (`published_runs`). README.md is rendered from both (`render_model_card`; its reproduce commands name the
    repo id and the staged suite; `predictions_repo`: the dataset repo of the runs' predictions, linked from the
    card and the source of the `.eval_results/<run>.yaml` entries: each run's headlines of the repository's own
    model, `eval_results.eval_result_files`, listed in the card; none for a run without the own model).

    Everything is staged in a temporary folder first; with `verify` (the default) a staged checkpoint must load
    and run where hf_vitrobust cannot be imported and give the original's logits (`verify.verify_model_stage`).
    Only then is `stage` written: a refused checkpoint leaves it untouched. A non-empty `stage` is refused unless
    `overwrite`, which empties it first.
    """
    from ..analysis.results import load_results

    if checkpoint is None and not results:
        raise ValueError("Nothing to stage: give a checkpoint folder, evaluation results, or both.")
    if checkpoint is None and image_processor is not None:
        raise ValueError("An image processor (--image-size/--image-mean/--image-std) needs a checkpoint.")
    if isinstance(results, str | os.PathLike):
        results = [results]
    summary = processor = kind = None
    if checkpoint is not None:
        checkpoint = Path(checkpoint)
        _check_checkpoint(checkpoint)
        summary = _checkpoint_summary(checkpoint)
        kind = checkpoint_kind(json.loads((checkpoint / "config.json").read_text(encoding="utf-8")))
        processor = plan_processor(
            checkpoint, summary if (checkpoint / "training_summary.json").is_file() else None, image_processor
        )
    loaded = load_results(list(results)) if results else []
    own = [str(checkpoint), str(checkpoint.resolve())] if checkpoint is not None else []
    # In the repo, the pushed checkpoint is named by the repo id; a run's own suite file goes with it.
    published = [name_own_models(result, own, repo_id) for result in loaded]
    suites = [staged_suite(result, own, repo_id) for result in published]
    runs = [Path(result["_source"]).parent for result in loaded]
    names = [run_name(result) for result in loaded]
    if len(set(names)) != len(names):
        raise ValueError(
            f"Two results runs share a folder name ({names}); rename one: they'd share results/<name>/."
        )
    inputs = ([checkpoint] if checkpoint is not None else []) + runs
    _check_apart(Path(stage), inputs)
    if Path(stage).is_dir() and any(Path(stage).iterdir()) and not overwrite:
        _prepare_stage(Path(stage), overwrite)  # raises: refused before any work
    with tempfile.TemporaryDirectory(prefix="vitrobust-stage-") as scratch:
        temp = Path(scratch) / "stage"
        temp.mkdir()
        if checkpoint is not None:
            for item in sorted(checkpoint.iterdir()):
                if item.name in _CHECKPOINT_SKIP or item.name.startswith("."):
                    continue
                if item.is_dir():
                    shutil.copytree(
                        item, temp / item.name, ignore=shutil.ignore_patterns(".*", "__pycache__")
                    )
                else:
                    shutil.copy2(item, temp / item.name)
            make_self_contained(temp, kind, processor)
        suite_files = {}
        for run, name, original, result, suite in zip(runs, names, loaded, published, suites, strict=True):
            target = temp / "results" / name
            target.mkdir(parents=True)
            for file_name in RESULTS_FILES:
                if (run / file_name).is_file():
                    shutil.copy2(run / file_name, target / file_name)
            if result != original:  # an own model renamed: the staged results.json says so
                stored = {key: value for key, value in result.items() if key != "_source"}
                (target / "results.json").write_text(json.dumps(stored, indent=1) + "\n", encoding="utf-8")
            if suite is not None:
                file_name, suite_dict = suite
                (target / file_name).write_text(suite_yaml(suite_dict), encoding="utf-8")
                suite_files[name] = f"results/{name}/{file_name}"
            for folder in RESULTS_FOLDERS:
                if (run / folder).is_dir():
                    shutil.copytree(run / folder, target / folder, ignore=shutil.ignore_patterns(".*"))
        entries = eval_result_files(
            published, repo_id=repo_id, own_specs=own, predictions_repo=predictions_repo
        )
        card = render_model_card(
            checkpoint=summary,
            results=published,
            repo_id=repo_id,
            own_specs=own,
            predictions_repo=predictions_repo,
            suite_files=suite_files,
            eval_result_files=entries,
        )
        (temp / "README.md").write_text(card, encoding="utf-8")
        write_eval_results(temp, entries)
        if checkpoint is not None and verify:
            verify_model_stage(temp, checkpoint, Path(scratch) / "verify", kind=kind)
        # Everything is checked: now write.
        stage = _prepare_stage(Path(stage), overwrite)
        for item in sorted(temp.iterdir()):
            shutil.move(str(item), str(stage / item.name))
    return staged_files(stage)


# ------------------------------------------------------------------------------------------------ metric Spaces


def _metrics_dir() -> Path:
    return Path(str(resources.files("hf_vitrobust").joinpath("metrics")))


def _top_level_names(tree: ast.Module) -> set[str]:
    names = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {target.id for target in node.targets if isinstance(target, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names - {"__all__"}


def _defining_module(name: str) -> str:
    """The submodule of hf_vitrobust.metrics that defines the top-level `name`."""
    for path in sorted(_metrics_dir().glob("*.py")):
        if path.stem != "__init__" and name in _top_level_names(ast.parse(path.read_text(encoding="utf-8"))):
            return path.stem
    raise ValueError(f"hf_vitrobust.metrics.{name} is defined in no submodule: it cannot be bundled.")


def _resource_reads(tree: ast.Module, package: str) -> dict[str, tuple[str, tuple[str, ...]]]:
    """`resources.files(PKG).joinpath(*CONSTANTS)` expressions of a module: {key: (package, parts)}."""
    reads = {}
    for node in ast.walk(tree):
        parts: list[str] = []
        current = node
        while (
            isinstance(current, ast.Call)
            and isinstance(current.func, ast.Attribute)
            and current.func.attr == "joinpath"
        ):
            if not all(isinstance(arg, ast.Constant) and isinstance(arg.value, str) for arg in current.args):
                raise ValueError(
                    "A metric module reads a resource whose path is not a constant: cannot bundle it."
                )
            parts = [arg.value for arg in current.args] + parts
            current = current.func.value
        if not parts or not (
            isinstance(current, ast.Call)
            and isinstance(current.func, ast.Attribute)
            and current.func.attr == "files"
            and isinstance(current.func.value, ast.Name)
            and current.func.value.id == "resources"
        ):
            continue
        (argument,) = current.args
        if isinstance(argument, ast.Name) and argument.id == "__package__":
            owner = package
        elif isinstance(argument, ast.Constant) and isinstance(argument.value, str):
            owner = argument.value
        else:
            raise ValueError(
                "A metric module reads resources of a package named at run time: cannot bundle it."
            )
        reads["/".join(parts)] = (owner, tuple(parts))
    return reads


_SHIM = """
# Data files the metric code reads through importlib.resources, embedded: this bundle is a single file.
_EMBEDDED_FILES = {embedded}


class _EmbeddedFile:
    def __init__(self, parts=()):
        self.parts = tuple(parts)

    def joinpath(self, *parts):
        return _EmbeddedFile(self.parts + parts)

    def read_text(self, encoding="utf-8"):
        return _EMBEDDED_FILES["/".join(self.parts)]


class resources:  # stands in for importlib.resources in the bundled code below
    @staticmethod
    def files(package):
        return _EmbeddedFile()
"""


# Modules outside hf_vitrobust.metrics that the metrics may import: the foundation, which imports only the
# standard library (tests/test_layering.py), so a bundle of it still needs nothing but the metric's own packages.
BUNDLED_FOUNDATION = ("constants", "registry")


def bundle_metric_code(names: Sequence[str]) -> tuple[str, set[str]]:
    """One Python module holding the hf_vitrobust.metrics code that defines `names`, with everything it imports
    from the package (other metrics modules and the foundation modules `BUNDLED_FOUNDATION`), in dependency order,
    and the data files it reads embedded. Returns the source and the third-party packages it imports (so the
    script can declare them to `evaluate`'s dependency check).

    Why: a published metric must compute with the very code the package tests, without the package.
    """
    package_root = _metrics_dir().parent
    order: list[str] = []  # "metrics/mce", "constants", ...: paths below hf_vitrobust/ without ".py"
    trees: dict[str, ast.Module] = {}

    def imported_module(module: str, node: ast.ImportFrom) -> str:
        if module.startswith("metrics/") and node.level == 1 and node.module:
            return f"metrics/{node.module.split('.')[0]}"
        if module.startswith("metrics/") and node.level == 2 and node.module in BUNDLED_FOUNDATION:
            return node.module
        raise ValueError(
            f"{module}.py imports from outside hf_vitrobust.metrics and {', '.join(BUNDLED_FOUNDATION)}."
        )

    def visit(module: str, chain: tuple[str, ...]) -> None:
        if module in order:
            return
        if module in chain:
            raise ValueError(f"Import cycle in hf_vitrobust.metrics: {' -> '.join((*chain, module))}.")
        tree = ast.parse((package_root / f"{module}.py").read_text(encoding="utf-8"))
        trees[module] = tree
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.level:
                visit(imported_module(module, node), (*chain, module))
        order.append(module)

    for module in dict.fromkeys(_defining_module(name) for name in names):
        visit(f"metrics/{module}", ())

    defined: dict[str, str] = {}
    third_party: set[str] = set()
    embedded: dict[str, str] = {}
    chunks = []
    for module in order:
        tree = trees[module]
        for name in _top_level_names(tree):
            if name in defined:
                raise ValueError(f"{name!r} is defined in both {defined[name]}.py and {module}.py.")
            defined[name] = module
        owner = "hf_vitrobust.metrics" if module.startswith("metrics/") else "hf_vitrobust"
        for key, (package, parts) in _resource_reads(tree, owner).items():
            text = resources.files(package).joinpath(*parts).read_text(encoding="utf-8")
            if embedded.setdefault(key, text) != text:
                raise ValueError(f"Two different resources are both read as {key!r}.")
        drop: set[int] = set()
        for node in tree.body:
            is_future = isinstance(node, ast.ImportFrom) and node.module == "__future__"
            is_relative = isinstance(node, ast.ImportFrom) and node.level > 0
            is_resources = (
                isinstance(node, ast.ImportFrom)
                and node.module == "importlib"
                and [alias.name for alias in node.names] == ["resources"]
            )
            is_all = isinstance(node, ast.Assign) and any(
                isinstance(target, ast.Name) and target.id == "__all__" for target in node.targets
            )
            if is_future or is_relative or is_resources or is_all:
                drop.update(range(node.lineno, node.end_lineno + 1))
            elif isinstance(node, ast.Import | ast.ImportFrom):
                imported = (
                    [alias.name for alias in node.names] if isinstance(node, ast.Import) else [node.module]
                )
                for package in (name.split(".")[0] for name in imported):
                    if package == "hf_vitrobust":
                        raise ValueError(f"{module}.py imports hf_vitrobust: cannot bundle it.")
                    if package not in sys.stdlib_module_names:
                        third_party.add(package)
        lines = (package_root / f"{module}.py").read_text(encoding="utf-8").splitlines()
        kept = [line for number, line in enumerate(lines, 1) if number not in drop]
        if kept and kept[0].startswith("# Copyright"):
            kept = kept[1:]
        body = "\n".join(kept).strip("\n")
        chunks.append(f"# {'-' * 30} hf_vitrobust/{module}.py {'-' * 30}\n\n{body}\n")
    version = metadata.version("hf_vitrobust")
    header = (
        "# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.\n"
        f'"""The computation of this metric: hf_vitrobust {version}\'s modules '
        f"{', '.join(f'{module}.py' for module in order)}, bundled into one file\nby `hf_vitrobust.hub.stage_metric` so that the metric runs "
        'without hf_vitrobust. Generated: edit the package, not this file."""\n\n'
        "from __future__ import annotations\n"
    )
    shim = _SHIM.format(embedded=repr(embedded)) if embedded else ""
    source = header + shim + "\n\n" + "\n\n".join(chunks)
    exported = sorted(defined)
    source += f"\n\n__all__ = {exported!r}\n"
    return source, third_party


def _metric_script(wrapper: str, third_party: set[str]) -> tuple[str, list[str]]:
    """The wrapper script with its hf_vitrobust imports pointed at the bundled core module."""
    tree = ast.parse(wrapper)
    lines = wrapper.splitlines()
    imported: list[str] = []
    replace: dict[int, str] = {}
    drop: set[int] = set()
    for node in tree.body:
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "hf_vitrobust" for a in node.names):
            raise ValueError(
                "The metric script imports hf_vitrobust as a module; import names from it instead."
            )
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "hf_vitrobust":
            names = ", ".join(a.name if a.asname is None else f"{a.name} as {a.asname}" for a in node.names)
            imported += [alias.name for alias in node.names]
            drop.update(range(node.lineno + 1, node.end_lineno + 1))
            # evaluate's dependency check reads `import X` lines of the script only: declare the core's needs here.
            declared = {a.name.split(".")[0] for n in tree.body if isinstance(n, ast.Import) for a in n.names}
            needs = "".join(f"import {package}\n" for package in sorted(third_party - declared))
            replace[node.lineno] = needs + f"from .{CORE_MODULE} import {names}"
    if not imported:
        raise ValueError("The metric script imports nothing from hf_vitrobust: nothing to bundle.")
    out = []
    for number, line in enumerate(lines, 1):
        if number in drop:
            continue
        out.append(replace.get(number, line))
    return "\n".join(out) + "\n", imported


_APP = '''# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Gradio widget of the {module_name} metric: evaluate's own widget on Gradio 3, the same form on Gradio 4+."""

from pathlib import Path

import evaluate
import gradio as gr
from evaluate.utils import launch_gradio_widget
from evaluate.utils.gradio import infer_gradio_input_types, json_to_string_type, parse_gradio_data, parse_readme

module = evaluate.load(str(Path(__file__).with_name("{module_name}.py")))


def build_demo() -> gr.Interface:
    features = module.features[0] if isinstance(module.features, list) else module.features
    names, types = zip(*features.items())
    input_types = infer_gradio_input_types(types)

    def compute(data):
        return module.compute(**parse_gradio_data(data, input_types))

    return gr.Interface(
        fn=compute,
        inputs=gr.Dataframe(headers=list(names), datatype=json_to_string_type(input_types)),
        outputs=gr.Textbox(label=module.name),
        description=module.info.description,
        title=f"Metric: {{module.name}}",
        article=parse_readme(Path(__file__).with_name("README.md")),
        api_name="compute",
    )


if __name__ == "__main__":
    if int(gr.__version__.split(".")[0]) < 4:
        launch_gradio_widget(module)  # evaluate 0.4's widget uses the Gradio 3 API
    else:
        build_demo().launch()
'''


def _front_matter(text: str) -> tuple[dict[str, Any], str]:
    match = re.match(r"^---\s*\n(.*?)\n---\s*\n", text, flags=re.DOTALL)
    if not match:
        return {}, text
    return yaml.safe_load(match.group(1)) or {}, text[match.end() :]


def _installed_version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def stage_metric(
    stage: Path,
    name: str,
    *,
    repo_id: str | None = None,
    sdk_version: str | None = None,
    overwrite: bool = False,
) -> list[Path]:
    """Write an `evaluate` metric Space for the shipped metric `name` (a folder of `metrics/`), and return its files.

    The Space holds `<module>.py` (the metric script, importing its computation from the generated single-file
    `vitrobust_core.py`: hf_vitrobust is not needed), README.md (the metric card with Space metadata: sdk gradio,
    app_file app.py, tags evaluate/metric), app.py (the Gradio widget) and requirements.txt. `<module>` is the
    last part of `repo_id` when given, since `evaluate.load("user/repo")` fetches `repo.py`; else `name`.
    `evaluate.load(str(stage))` reads `<stage folder name>.py`: where the folder is named otherwise, that name is
    a link to the script (a local alias: `staged_files` and `push` leave it out). `sdk_version`: the Space's
    Gradio version (default: the installed Gradio's, else the Hub's default).
    """
    from ..metrics import METRIC_NAMES, evaluate_module_path

    if name not in METRIC_NAMES:
        raise ValueError(f"Unknown metric {name!r}; shipped metrics: {', '.join(METRIC_NAMES)}.")
    module_name = repo_id.split("/")[-1] if repo_id else name
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*", module_name) or module_name == CORE_MODULE:
        raise ValueError(f"{module_name!r} cannot name the metric script (repo name -> script name).")
    if Path(stage).name != module_name and Path(stage).name in (CORE_MODULE, "app"):
        raise ValueError(
            f"A metric stage folder named {Path(stage).name!r} cannot hold its local alias "
            f"{Path(stage).name}.py (a staged file has that name): stage into a folder named otherwise."
        )
    source_dir = evaluate_module_path(name)
    wrapper = (source_dir / f"{name}.py").read_text(encoding="utf-8")
    _, imported = _metric_script(wrapper, set())
    core, third_party = bundle_metric_code(imported)
    script, _ = _metric_script(wrapper, third_party)
    metadata_in, body = _front_matter((source_dir / "README.md").read_text(encoding="utf-8"))
    tags = list(dict.fromkeys([*metadata_in.get("tags", []), "evaluate", "metric", "hf_vitrobust"]))
    space_metadata = {
        "title": metadata_in.get("title", name),
        "emoji": "📈",
        "colorFrom": "blue",
        "colorTo": "green",
        "sdk": "gradio",
        **({"sdk_version": v} if (v := sdk_version or _installed_version("gradio")) else {}),
        "app_file": "app.py",
        "pinned": False,
        "license": "apache-2.0",
        "tags": tags,
        **{key: value for key, value in metadata_in.items() if key not in {"title", "tags"}},
    }
    readme = metric_space_readme(
        metadata=space_metadata, body=body, name=name, module_name=module_name, repo_id=repo_id
    )
    requirements = ["evaluate>=0.4.3", "datasets"]
    requirements += sorted(
        {"sklearn": "scikit-learn"}.get(p, p) for p in third_party if p not in {"datasets"}
    )
    stage = _prepare_stage(Path(stage), overwrite)
    (stage / f"{module_name}.py").write_text(script, encoding="utf-8")
    (stage / f"{CORE_MODULE}.py").write_text(core, encoding="utf-8")
    (stage / "README.md").write_text(readme, encoding="utf-8")
    (stage / "app.py").write_text(_APP.format(module_name=module_name), encoding="utf-8")
    (stage / "requirements.txt").write_text("\n".join(requirements) + "\n", encoding="utf-8")
    if stage.name != module_name:
        # evaluate.load(<folder>) reads <folder>/<folder name>.py: a link to the script, never uploaded.
        (stage / f"{stage.name}.py").symlink_to(f"{module_name}.py")
    return staged_files(stage)


__all__ = [
    "CORE_MODULE",
    "RESULTS_FILES",
    "ImageProcessorSpec",
    "StagingError",
    "bundle_metric_code",
    "local_aliases",
    "stage_metric",
    "stage_model",
    "staged_files",
]
