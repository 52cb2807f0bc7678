# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""`subset="random"` end to end on a tiny ViT and the bundled photos: results.json says which subset each benchmark
is, the random subset is not the first N and is the same on a rerun (other batch size, the CLI), the generated
ImageNet-C corrupts the photos imagenet-val kept, a suite's `subset` is used unless the config gives one, a bad
subset is refused before any work, and `--resume` with another subset is refused."""

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml
from probe_models import save_tiny_vit

from hf_vitrobust.cli import main as cli_main
from hf_vitrobust.data import BuiltinPhotosSource
from hf_vitrobust.evaluation.config import EvaluationConfig, EvaluationError
from hf_vitrobust.evaluation.runner import evaluate
from hf_vitrobust.evaluation.suite import load_suite, suite_from_dict

SEED = 4
LIMIT = 5


def _suite(model: str, subset: str | None = None) -> dict:
    val = {"source": "builtin"}
    if subset is not None:
        val["subset"] = subset
    return {
        "name": "random-subset",
        "batch_size": 4,
        "seed": SEED,
        "chunk_size": 3,
        "models": [model],
        "benchmarks": {
            "imagenet-val": val,
            "imagenet-c": {"source": "generated:builtin", "corruptions": ["contrast"], "severities": [2]},
        },
    }


@pytest.fixture(scope="module")
def setup(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("random-subset")
    model = save_tiny_vit(root / "vit")
    suites = {}
    for subset in (None, "random"):
        suites[subset] = root / f"suite-{subset}.yaml"
        suites[subset].write_text(yaml.safe_dump(_suite(model, subset)))
    return {"root": root, "plain": suites[None], "random-suite": suites["random"]}


def _run(output: Path, suite: Path, **config) -> dict:
    evaluate(
        EvaluationConfig(suite=str(suite), output=output, limit=LIMIT, progress=False, report=False, **config)
    )
    return json.loads((output / "results.json").read_text())


def _ids(output: Path, benchmark: str) -> list[str]:
    [model] = [path.name for path in (output / "predictions").iterdir()]
    frame = pd.read_parquet(output / "predictions" / model / f"{benchmark}.parquet")
    column = "clean_sample_id" if benchmark == "imagenet-c" else "sample_id"
    return frame[column].tolist()


@pytest.fixture(scope="module")
def runs(setup) -> dict[str, Path]:
    root = setup["root"]
    outputs = {name: root / name for name in ("random", "first")}
    _run(outputs["random"], setup["plain"], subset="random")
    _run(outputs["first"], setup["plain"], subset="first")
    return outputs


def test_results_say_which_subset_and_the_random_one_is_not_the_first(runs):
    random = json.loads((runs["random"] / "results.json").read_text())
    first = json.loads((runs["first"] / "results.json").read_text())
    assert random["settings"]["subset"] == "random" and first["settings"]["subset"] == "first"
    assert random["benchmarks"]["imagenet-val"]["subset"] == {
        "kind": "random",
        "limit": LIMIT,
        "seed": SEED,
        "per_cell": False,
    }
    assert random["benchmarks"]["imagenet-c"]["subset"] == {
        "kind": "random",
        "limit": LIMIT,
        "seed": SEED,
        "per_cell": True,
    }
    assert first["benchmarks"]["imagenet-val"]["subset"] == {
        "kind": "first",
        "limit": LIMIT,
        "seed": None,
        "per_cell": False,
    }
    photos = [raw.sample_id for raw in BuiltinPhotosSource().raw_samples()]
    assert _ids(runs["first"], "imagenet-val") == photos[:LIMIT]
    chosen = _ids(runs["random"], "imagenet-val")
    assert len(chosen) == len(set(chosen)) == LIMIT and set(chosen) != set(photos[:LIMIT])
    assert chosen == [photo for photo in photos if photo in chosen]  # in stream order
    assert random["benchmarks"]["imagenet-val"]["num_samples"] == LIMIT
    # The generated ImageNet-C corrupts the same photos: the clean images imagenet-val kept, paired.
    assert sorted(set(_ids(runs["random"], "imagenet-c"))) == sorted(chosen)
    assert random["benchmarks"]["imagenet-c"]["num_samples"] == LIMIT
    # Only the first-N subset's intervals say that they describe those images only.
    notes = {
        name: [
            interval.get("note") or "" for model in run["intervals"].values() for interval in model.values()
        ]
        for name, run in (("first", first), ("random", random))
    }
    # (A small-sample note may come first where every resample was equal; the subset's note is always there.)
    subset_note = "first-N subset of the stream: the interval describes these images, not the benchmark"
    assert notes["first"] and all(subset_note in note for note in notes["first"])
    assert notes["random"] and not any("first-N" in note for note in notes["random"])


def test_a_rerun_and_the_cli_keep_the_same_random_subset(runs, setup, tmp_path):
    again = tmp_path / "again"
    _run(again, setup["plain"], subset="random", batch_size=2)
    assert _ids(again, "imagenet-val") == _ids(runs["random"], "imagenet-val")
    assert _ids(again, "imagenet-c") == _ids(runs["random"], "imagenet-c")
    cli = tmp_path / "cli"
    argv = ["evaluate", "--suite", str(setup["plain"]), "--output", str(cli), "--limit", str(LIMIT)]
    assert cli_main([*argv, "--subset", "random", "--no-report", "--quiet"]) == 0
    assert _ids(cli, "imagenet-val") == _ids(runs["random"], "imagenet-val")
    # Another seed, another subset.
    other = tmp_path / "other-seed"
    _run(other, setup["plain"], subset="random", seed=SEED + 1)
    assert set(_ids(other, "imagenet-val")) != set(_ids(runs["random"], "imagenet-val"))


def test_the_suites_subset_is_used_unless_the_config_gives_one(runs, setup, tmp_path):
    from_suite = _run(tmp_path / "suite", setup["random-suite"])
    assert from_suite["settings"]["subset"] is None
    assert from_suite["benchmarks"]["imagenet-val"]["subset"]["kind"] == "random"
    assert from_suite["benchmarks"]["imagenet-c"]["subset"]["kind"] == "first"  # its entry says nothing
    assert _ids(tmp_path / "suite", "imagenet-val") == _ids(runs["random"], "imagenet-val")
    overridden = _run(tmp_path / "overridden", setup["random-suite"], subset="first")
    assert overridden["benchmarks"]["imagenet-val"]["subset"]["kind"] == "first"
    assert _ids(tmp_path / "overridden", "imagenet-val") == _ids(runs["first"], "imagenet-val")


def test_a_bad_subset_is_refused_before_any_work(setup, tmp_path):
    with pytest.raises(
        EvaluationError, match="subset must be one of first, random, class-balanced, got 'randum'"
    ):
        evaluate(EvaluationConfig(suite=str(setup["plain"]), output=tmp_path / "bad", subset="randum"))
    assert not (tmp_path / "bad").exists()
    suite = _suite("builtin:efficientnet_lite0", "last")
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(suite))
    with pytest.raises(
        EvaluationError,
        match=r"imagenet-val: 'subset' must be one of first, random, class-balanced, got 'last'",
    ):
        evaluate(EvaluationConfig(suite=str(tmp_path / "bad.yaml"), output=tmp_path / "bad"))
    # A suite writes `subset` only where it gives one, and reads back what it wrote.
    written = load_suite(str(setup["random-suite"])).to_dict()
    assert written["benchmarks"]["imagenet-val"]["subset"] == "random"
    assert "subset" not in written["benchmarks"]["imagenet-c"]
    assert suite_from_dict(written) == load_suite(str(setup["random-suite"]))  # path is not compared


def test_without_a_limit_the_subset_is_all(setup, tmp_path):
    evaluate(
        EvaluationConfig(
            suite=str(setup["plain"]), output=tmp_path / "all", subset="random", progress=False, report=False
        )
    )
    results = json.loads((tmp_path / "all" / "results.json").read_text())
    for name in ("imagenet-val", "imagenet-c"):
        assert results["benchmarks"][name]["subset"] == {
            "kind": "all",
            "limit": None,
            "seed": None,
            "per_cell": False,
        }
    photos = [raw.sample_id for raw in BuiltinPhotosSource().raw_samples()]
    assert _ids(tmp_path / "all", "imagenet-val") == photos


def test_resume_with_another_subset_is_refused(runs, setup, tmp_path):
    import shutil

    output = tmp_path / "run"
    shutil.copytree(runs["random"], output)
    kept = {path: path.read_bytes() for path in (output / "results.json", output / ".work" / "run.json")}
    config = {
        "suite": str(setup["plain"]),
        "output": output,
        "limit": LIMIT,
        "resume": True,
        "progress": False,
    }
    with pytest.raises(
        EvaluationError, match=r"--resume with different settings \(subset: 'random' -> 'first'\)"
    ):
        evaluate(EvaluationConfig(subset="first", report=False, **config))
    assert {path: path.read_bytes() for path in kept} == kept
    # The control: the same subset resumes, with the same samples.
    evaluate(EvaluationConfig(subset="random", report=False, **config))
    assert _ids(output, "imagenet-val") == _ids(runs["random"], "imagenet-val")
