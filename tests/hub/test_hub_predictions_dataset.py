"""Per-sample predictions as a Hub dataset: `stage_predictions` writes one config per benchmark and one split per
model, declared in the card's `configs:`; the stage loads with `datasets.load_dataset(stage, config)` offline in a
Python where hf_vitrobust cannot be imported, and every column round-trips the run's parquet. `vitrobust push
--predictions` stages it (and links it from a model card); a real push goes to a dataset repo."""

import json
import math
import os
import pickle
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import huggingface_hub
import pyarrow.parquet as pq
import pytest
import yaml
from hub_fakes import FakeApi

from hf_vitrobust.analysis.predictions import PREDICTION_SCHEMA, with_derived_columns
from hf_vitrobust.cli import main
from hf_vitrobust.hub import push, render_model_card, split_name, stage_predictions
from hf_vitrobust.hub.predictions_dataset import (
    COLUMN_DESCRIPTIONS,
    SPLIT_PATTERN,
    predictions_manifest,
    split_names,
)

FIXTURE_RUN = Path(__file__).parents[1] / "fixtures" / "old_run_6f0f446" / "run"
OLD_KEY = "builtin_efficientnet_lite0"
VIT_KEY = "timm_vit-base"


def _copy_run(source: Path, target: Path, key: str | None = None, spec: str | None = None) -> Path:
    """A copy of a run folder (results.json + predictions/), its model renamed to `key`/`spec` if given."""
    shutil.copytree(source, target, ignore=shutil.ignore_patterns(".work"))
    if key is not None:
        results = json.loads((target / "results.json").read_text())
        (target / "predictions" / OLD_KEY).rename(target / "predictions" / key)
        results["models"][0].update(key=key, spec=spec, name=spec)
        for section in ("metrics", "probes", "predictions", "timing", "summary"):
            if OLD_KEY in (results.get(section) or {}):
                results[section][key] = results[section].pop(OLD_KEY)
        results["predictions"][key] = {
            b: p.replace(f"/{OLD_KEY}/", f"/{key}/") for b, p in results["predictions"][key].items()
        }
        (target / "results.json").write_text(json.dumps(results))
    return target


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    return [
        _copy_run(FIXTURE_RUN, root / "run-a"),
        _copy_run(FIXTURE_RUN, root / "run-b"),  # the same model key again: disambiguated by run
        _copy_run(FIXTURE_RUN, root / "run-c", key=VIT_KEY, spec="timm/vit_base_patch16_224"),
    ]


@pytest.fixture(scope="module")
def staged(runs, tmp_path_factory):
    stage = tmp_path_factory.mktemp("stage") / "predictions"
    files = stage_predictions(stage, runs, repo_id="me/robustness-predictions")
    return stage, files


def _expected_splits():
    return {
        f"{OLD_KEY}@run-a": f"{OLD_KEY}_run_a",
        f"{OLD_KEY}@run-b": f"{OLD_KEY}_run_b",
        VIT_KEY: "timm_vit_base",
    }


def test_split_names_are_valid_deterministic_and_collision_checked():
    assert split_name("builtin_efficientnet_lite0") == "builtin_efficientnet_lite0"
    assert split_name("timm/vit_base_patch16_224") == "timm_vit_base_patch16_224"
    assert split_name("google_vit-base-patch16-224") == "google_vit_base_patch16_224"
    assert split_name("a.b@run-1") == "a_b_run_1"
    assert split_name("--") == "model"
    for key in ("x", "hf-hub:timm/vit_small.augreg_in21k", "ckpt/./alt net", "__a__"):
        assert SPLIT_PATTERN.match(split_name(key)) and split_name(key) == split_name(key)
    assert split_names(["a-b", "c"]) == {"a-b": "a_b", "c": "c"}
    with pytest.raises(ValueError, match="'a-b' and 'a_b' both become split 'a_b'"):
        split_names(["a-b", "a_b"])


def test_every_schema_column_is_described():
    assert list(COLUMN_DESCRIPTIONS) == PREDICTION_SCHEMA.names


def test_stage_layout_and_card_configs(staged):
    stage, files = staged
    splits = _expected_splits().values()
    benchmarks = ["imagenet-val", "imagenet-c", "imagenet-p"]
    expected = {"README.md"} | {f"data/{b}/{s}.parquet" for b in benchmarks for s in splits}
    assert {Path(f).relative_to(stage).as_posix() for f in files} == expected
    text = (stage / "README.md").read_text()
    metadata = yaml.safe_load(text.split("---", 2)[1])
    assert [c["config_name"] for c in metadata["configs"]] == benchmarks
    assert metadata["configs"][0]["default"] is True
    for config in metadata["configs"]:
        assert config["data_files"] == [
            {"split": s, "path": f"data/{config['config_name']}/{s}.parquet"} for s in splits
        ]
    card = huggingface_hub.DatasetCard(text)
    assert [c["config_name"] for c in card.data.configs] == benchmarks
    # Schema, split mapping, protocols and provenance are all in the card.
    for column in PREDICTION_SCHEMA.names:
        assert f"| `{column}` |" in text
    for key, split in _expected_splits().items():
        assert f"| `{split}` | `{key}` |" in text
    assert "`timm/vit_base_patch16_224`" in text
    results = json.loads((FIXTURE_RUN / "results.json").read_text())
    assert "Protocol of `imagenet-val`" in text and "preprocessing: model-native" in text
    assert f"- Seed: {results['seed']}" in text and f"- Created: {results['created']}" in text
    assert f"- hf_vitrobust version: {results['hf_vitrobust_version']}" in text
    assert "hf_vitrobust/assets/photos" in text  # the data source


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def test_stage_loads_with_datasets_without_the_package_and_round_trips_every_column(staged, runs, tmp_path):
    stage, _ = staged
    out = tmp_path / "loaded.pkl"
    script = textwrap.dedent(
        f"""
        import pickle, sys
        sys.modules["hf_vitrobust"] = None  # any import of the package now fails
        import datasets
        loaded = {{}}
        for config in ("imagenet-val", "imagenet-c", "imagenet-p"):
            splits = datasets.load_dataset({str(stage)!r}, config)
            loaded[config] = {{name: split.to_dict() for name, split in splits.items()}}
        with open({str(out)!r}, "wb") as file:
            pickle.dump(loaded, file)
        """
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(HF_DATASETS_OFFLINE="1", HF_HUB_OFFLINE="1", HF_HOME=str(tmp_path / "hf"))
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    loaded = pickle.loads(out.read_bytes())
    sources = {f"{OLD_KEY}_run_a": runs[0], f"{OLD_KEY}_run_b": runs[1], "timm_vit_base": runs[2]}
    key_of = {"timm_vit_base": VIT_KEY}
    for config, splits in loaded.items():
        assert set(splits) == set(sources)
        for split, columns in splits.items():
            run = sources[split]
            original = with_derived_columns(
                pq.read_table(run / "predictions" / key_of.get(split, OLD_KEY) / f"{config}.parquet")
            ).to_pydict()
            assert list(columns) == PREDICTION_SCHEMA.names
            for column in PREDICTION_SCHEMA.names:
                assert _same(columns[column], original[column]), (config, split, column)


def test_staged_parquet_is_written_as_datasets_writes_it_and_loads_with_the_parquet_builder(
    staged, runs, tmp_path
):
    """Every staged file has a page index and records `datasets`' chunker parameters (content-defined chunking);
    `load_dataset("parquet", data_files=...)` of the staged files gives back the run's rows."""
    import datasets

    stage, files = staged
    for path in (Path(f) for f in files if str(f).endswith(".parquet")):
        metadata = pq.ParquetFile(path).metadata
        assert (
            json.loads(metadata.metadata[b"content_defined_chunking"]) == datasets.config.DEFAULT_CDC_OPTIONS
        )
        assert all(
            metadata.row_group(g).column(c).has_offset_index
            for g in range(metadata.num_row_groups)
            for c in range(metadata.num_columns)
        )
    manifest = predictions_manifest(stage)
    loaded = datasets.load_dataset(
        "parquet",
        data_files={split: str(stage / path) for split, path in manifest["imagenet-c"].items()},
        cache_dir=str(tmp_path / "cache"),
    )
    assert set(loaded) == set(_expected_splits().values())
    original = with_derived_columns(
        pq.read_table(runs[0] / "predictions" / OLD_KEY / "imagenet-c.parquet")
    ).to_pydict()
    columns = loaded[f"{OLD_KEY}_run_a"].to_dict()
    assert list(columns) == PREDICTION_SCHEMA.names and len(columns["sample_id"]) == len(
        original["sample_id"]
    )
    for column in PREDICTION_SCHEMA.names:
        assert _same(columns[column], original[column]), column


def test_push_cli_stages_the_dataset_alone_or_with_a_linked_model_repo(runs, tmp_path, capsys):
    alone = tmp_path / "alone"
    assert (
        main(
            [
                "push",
                "--predictions",
                "me/preds",
                "--results",
                str(runs[2]),
                "--dry-run",
                "--output",
                str(alone),
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    assert "for dataset me/preds; nothing uploaded" in printed
    assert (alone / "README.md").is_file() and (
        alone / "data" / "imagenet-c" / "timm_vit_base.parquet"
    ).is_file()

    both = tmp_path / "both"
    argv = ["push", "me/model", "--results", str(runs[2]), "--predictions", "me/preds"]
    assert main([*argv, "--dry-run", "--output", str(both)]) == 0
    printed = capsys.readouterr().out
    assert "for dataset me/preds" in printed and "for model me/model" in printed
    assert (both / "predictions" / "data" / "imagenet-val" / "timm_vit_base.parquet").is_file()
    card = (both / "model" / "README.md").read_text()
    assert "Per-sample predictions: https://huggingface.co/datasets/me/preds" in card

    with pytest.raises(SystemExit):
        main(["push", "--predictions", "me/preds", "--dry-run", "--output", str(tmp_path / "none")])
    assert "--predictions needs the run folder(s)" in capsys.readouterr().err
    assert not (tmp_path / "none").exists()


def test_model_card_links_the_predictions_dataset_only_when_given():
    results = json.loads((FIXTURE_RUN / "results.json").read_text())
    linked = render_model_card(results=[results], repo_id="me/model", predictions_repo="me/preds")
    plain = render_model_card(results=[results], repo_id="me/model")
    line = "Per-sample predictions: https://huggingface.co/datasets/me/preds"
    assert line in linked and line not in plain
    assert linked.index(line) < linked.index("## Robustness results")


def test_a_real_push_goes_to_a_dataset_repo(staged, monkeypatch):
    """Through the shared HfApi stand-in, which binds every call against the real signatures."""
    stage, files = staged
    FakeApi.instances, FakeApi.fail_with = [], None
    monkeypatch.setattr(huggingface_hub, "HfApi", FakeApi)
    result = push(stage, "me/preds", repo_type="dataset", token="hf_test_token_not_real")
    assert result.repo_type == "dataset" and len(result.files) == len(files)
    [api] = FakeApi.instances
    (_, created_repo, created), (_, uploaded_repo, uploaded) = api.calls
    assert created_repo == uploaded_repo == "me/preds"
    assert created["repo_type"] == "dataset" and uploaded["repo_type"] == "dataset"
    assert uploaded["folder_path"] == str(stage)
