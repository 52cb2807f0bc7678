"""Tests of the `vitrobust` command line (`hf_vitrobust.cli.main` and `python -m hf_vitrobust`)."""

import dataclasses
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image
from torchvision.transforms.v2 import functional as TF

from hf_vitrobust.cli import main
from hf_vitrobust.models.builtin import bundled_photos


def _photo(name: str) -> str:
    return next(str(p) for p in bundled_photos() if p.name == name)


ROW = re.compile(r"^\s+(\d+)\s+(\d+)\s+(0\.\d{4}|1\.0000)\s+(\S.*)$")


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_VITROBUST_CACHE", str(tmp_path_factory.getbasetemp() / "vitrobust_cache"))


def _tables(output: str) -> dict[str, list[tuple[int, int, float, str]]]:
    """Parse the printed tables into {image: [(rank, class, probability, label), ...]}."""
    tables: dict[str, list[tuple[int, int, float, str]]] = {}
    current = None
    for line in output.splitlines():
        match = ROW.match(line)
        if match:
            rank, index, prob, label = match.groups()
            tables[current].append((int(rank), int(index), float(prob), label))
        elif line.strip() and not line.startswith((" ", "model:")):
            current = line.strip()
            tables[current] = []
    return tables


def test_classify_prints_top5_table(capsys):
    chelsea, coffee = _photo("chelsea.jpg"), _photo("coffee.jpg")
    assert main(["classify", chelsea, coffee]) == 0
    output = capsys.readouterr().out
    assert output.startswith("model: builtin:efficientnet_lite0")
    tables = _tables(output)
    assert list(tables) == [chelsea, coffee]
    for rows in tables.values():
        assert [rank for rank, *_ in rows] == [1, 2, 3, 4, 5]
        probs = [prob for _, _, prob, _ in rows]
        assert probs == sorted(probs, reverse=True) and 0.0 < sum(probs) <= 1.0001
    assert (285, "Egyptian cat") in [(index, label) for _, index, _, label in tables[chelsea]]
    _, index, prob, label = tables[coffee][0]
    assert (index, label) == (967, "espresso") and prob > 0.9


def test_classify_top_k_and_batches(capsys, tmp_path):
    gray = tmp_path / "gray.png"
    Image.fromarray(np.full((40, 60), 128, dtype=np.uint8)).save(gray)
    chelsea = _photo("chelsea.jpg")
    assert main(["classify", chelsea, str(gray), "--top-k", "2", "--batch-size", "1", "--device", "cpu"]) == 0
    tables = _tables(capsys.readouterr().out)
    assert list(tables) == [chelsea, str(gray)] and all(len(rows) == 2 for rows in tables.values())


def test_classify_missing_file_exits_with_message(capsys, tmp_path):
    missing = tmp_path / "no_such_photo.jpg"
    with pytest.raises(SystemExit) as exit_info:
        main(["classify", str(missing)])
    assert exit_info.value.code != 0
    assert f"image not found: {missing}" in capsys.readouterr().err


def test_classify_unreadable_image_and_bad_options(capsys, tmp_path):
    not_an_image = tmp_path / "notes.jpg"
    not_an_image.write_text("hello")
    with pytest.raises(SystemExit) as exit_info:
        main(["classify", str(not_an_image)])
    assert exit_info.value.code != 0 and "not a readable image" in capsys.readouterr().err
    chelsea = _photo("chelsea.jpg")
    for args, message in [
        (["--top-k", "0"], "--top-k"),
        (["--device", "tpu:x"], "--device"),
        (["--model", "no-such-model"], "could not load model"),
    ]:
        with pytest.raises(SystemExit) as exit_info:
            main(["classify", chelsea, *args])
        assert exit_info.value.code != 0 and message in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:
        main([])
    assert exit_info.value.code != 0


@pytest.mark.slow
def test_python_dash_m_runs_classify(tmp_path):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_VITROBUST_CACHE": str(tmp_path / "cache")}
    coffee = _photo("coffee.jpg")
    done = subprocess.run(
        [sys.executable, "-m", "hf_vitrobust", "classify", coffee, "--top-k", "3"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    rows = _tables(done.stdout)[coffee]
    assert len(rows) == 3 and rows[0][3] == "espresso"
    failed = subprocess.run(
        [sys.executable, "-m", "hf_vitrobust", "classify", str(tmp_path / "missing.png")],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert failed.returncode == 2 and "image not found" in failed.stderr


# `vitrobust corrupt` from parquet files and Hub ids, read through the data registry (image folders: see
# tests/corruptions/test_corruptions_export.py).


def _png(array: np.ndarray) -> bytes:
    import io

    buffer = io.BytesIO()
    Image.fromarray(array).save(buffer, format="PNG")
    return buffer.getvalue()


@pytest.fixture(scope="module")
def imagenet_parquet(tmp_path_factory):
    """ImageNet validation rows as the Hub stores them: an Image feature and a ClassLabel of the 1000 wnids;
    chelsea (285, n02124075), coffee (967, n07920052) and one row that is not an image."""
    import skimage.data
    from datasets import ClassLabel, Dataset, Features
    from datasets import Image as ImageFeature

    from hf_vitrobust.models.imagenet import IMAGENET_WNIDS

    features = Features({"image": ImageFeature(), "label": ClassLabel(names=list(IMAGENET_WNIDS))})
    rows = {
        "image": [{"bytes": _png(skimage.data.chelsea()), "path": None},
                  {"bytes": _png(skimage.data.coffee()), "path": None}, {"bytes": b"<html>", "path": None}],
        "label": [285, 967, 1],
    }  # fmt: skip
    path = tmp_path_factory.mktemp("parquet") / "val.parquet"
    Dataset.from_dict(rows, features=features).to_parquet(str(path))
    return path


def _residual_correlation(image: torch.Tensor, reference: torch.Tensor, clean: torch.Tensor) -> float:
    pair = torch.stack(
        [(image.float() - clean.float()).flatten(), (reference.float() - clean.float()).flatten()]
    )
    return torch.corrcoef(pair)[0, 1].item()


def test_corrupt_parquet_source_matches_generated_source(imagenet_parquet, tmp_path, capsys):
    from hf_vitrobust.corruptions.export import resize_and_crop
    from hf_vitrobust.data import GeneratedCorruptionSource, resolve_source

    args = ["corrupt", str(imagenet_parquet), str(tmp_path), "--corruption", "contrast", "--corruption",
            "gaussian_noise", "--severity", "3", "--seed", "5", "--batch-size", "2", "--quiet"]  # fmt: skip
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "wrote 4 images, kept 0" in out and "skipped 1 unreadable" in out
    assert "val.parquet/row-000002 (not_an_image)" in out
    written = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file())
    assert written == [
        "contrast/3/n02124075/val.parquet__row-000000.JPEG", "contrast/3/n07920052/val.parquet__row-000001.JPEG",
        "gaussian_noise/3/n02124075/val.parquet__row-000000.JPEG",
        "gaussian_noise/3/n07920052/val.parquet__row-000001.JPEG",
    ]  # fmt: skip

    # Each file is what GeneratedCorruptionSource yields for that sample (same crop, same per-sample seed), up to
    # JPEG q85: contrast pixel by pixel, the noise by the correlation of its pattern.
    def generated(seed):
        clean = resolve_source("imagenet-val", imagenet_parquet)
        source = GeneratedCorruptionSource(clean, ["contrast", "gaussian_noise"], [3], seed=seed)
        return {s.sample_id: s.image for s in source}

    same, other = generated(5), generated(6)
    coffee = "val.parquet/row-000001"
    stored = {name: TF.pil_to_tensor(Image.open(tmp_path / name / "3" / "n07920052" / "val.parquet__row-000001.JPEG"))
              for name in ("contrast", "gaussian_noise")}  # fmt: skip
    assert stored["contrast"].shape == (3, 224, 224)
    assert (stored["contrast"].float() - same[f"contrast/3/{coffee}"].float()).abs().mean() < 3
    import skimage.data

    clean_crop = resize_and_crop(torch.from_numpy(skimage.data.coffee()).permute(2, 0, 1), 256, 224)
    noisy = stored["gaussian_noise"]
    assert _residual_correlation(noisy, same[f"gaussian_noise/3/{coffee}"], clean_crop) > 0.3
    assert abs(_residual_correlation(noisy, other[f"gaussian_noise/3/{coffee}"], clean_crop)) < 0.1

    # Resumed: nothing is rewritten.
    assert main(args) == 0
    assert "wrote 0 images, kept 4 already written" in capsys.readouterr().out


def test_corrupt_parquet_to_parquet_and_cifar_label_space(imagenet_parquet, tmp_path, capsys):
    import skimage.data
    from datasets import ClassLabel, Dataset, Features, load_dataset
    from datasets import Image as ImageFeature

    from hf_vitrobust.data import CIFAR10_CLASSES

    assert main(["corrupt", str(imagenet_parquet), str(tmp_path / "pq"), "--corruption", "brightness",
                 "--severity", "1", "--format", "parquet", "--quiet"]) == 0  # fmt: skip
    parts = sorted((tmp_path / "pq" / "brightness" / "1").glob("*.parquet"))
    dataset = load_dataset("parquet", data_files=[str(p) for p in parts], split="train")
    assert dataset["label"] == ["n02124075", "n07920052"] and dataset[0]["image"].size == (224, 224)

    # CIFAR-10 rows (column "img", ClassLabel of the 10 names) stay 32x32 and go to class-name folders.
    tiny = np.asarray(Image.fromarray(skimage.data.chelsea()).resize((32, 32)))
    features = Features({"img": ImageFeature(), "label": ClassLabel(names=list(CIFAR10_CLASSES))})
    cifar = tmp_path / "cifar" / "test.parquet"
    cifar.parent.mkdir()
    Dataset.from_dict(
        {"img": [{"bytes": _png(tiny), "path": None}], "label": [3]}, features=features
    ).to_parquet(str(cifar))
    assert main(["corrupt", str(cifar), str(tmp_path / "c"), "--benchmark", "cifar10", "--corruption", "contrast",
                 "--severity", "2", "--quiet"]) == 0  # fmt: skip
    assert "wrote 1 images" in capsys.readouterr().out
    files = list((tmp_path / "c" / "contrast" / "2").rglob("*.JPEG"))
    assert [f.parent.name for f in files] == ["cat"] and Image.open(files[0]).size == (32, 32)


def test_corrupt_bad_benchmark_or_unreachable_hub_exits_with_message(imagenet_parquet, tmp_path, capsys):
    for args, message in [
        (["--benchmark", "imagenet-z"], "Unknown benchmark 'imagenet-z'"),
        (["--benchmark", "imagenet-c"], "not a clean image benchmark"),
        (["--benchmark", "imagenet-p"], "not a clean image benchmark"),
    ]:
        with pytest.raises(SystemExit) as exit_info:
            main(["corrupt", str(imagenet_parquet), str(tmp_path), "--quiet", *args])
        assert exit_info.value.code == 2 and message in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:
        main(["corrupt", "some-org/not-cached", str(tmp_path), "--corruption", "contrast", "--quiet"])
    assert exit_info.value.code == 2 and "some-org/not-cached" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


def test_evaluate_protocol_options_are_parsed_and_checked_before_any_work(capsys, tmp_path, monkeypatch):
    import hf_vitrobust.evaluation.runner as runner

    seen = {}
    monkeypatch.setattr(runner, "evaluate", lambda config: seen.setdefault("config", config))
    args = ["evaluate", "--output", str(tmp_path / "run"), "--quiet"]
    assert (
        main(
            [
                *args,
                "--protocol",
                "imagenet-c.preprocessing=native-resize",
                "--protocol",
                "imagenet-c.mce=unnormalized-19",
            ]
        )
        == 0
    )
    assert seen["config"].protocols == {
        "imagenet-c": {"preprocessing": "native-resize", "mce": "unnormalized-19"}
    }
    for bad, message in [
        ("imagenet-c=native-resize", "BENCHMARK.PART=NAME"),
        ("imagenet-c.mce", "BENCHMARK.PART=NAME"),
    ]:
        with pytest.raises(SystemExit) as exit_info:
            main([*args, "--protocol", bad])
        assert exit_info.value.code != 0 and message in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(
            [*args, "--protocol", "imagenet-c.mce=alexnet-15", "--protocol", "imagenet-c.mce=unnormalized-19"]
        )
    assert "twice" in capsys.readouterr().err
    monkeypatch.undo()
    with pytest.raises(
        SystemExit
    ):  # the demo suite's ImageNet-C has no such protocol: refused before any model loads
        main([*args, "--protocol", "imagenet-c.preprocessing=squash"])
    assert "unknown preprocessing protocol 'squash'" in capsys.readouterr().err


def _declared(action) -> tuple:
    return (type(action), action.dest, action.type, action.default, action.choices, action.metavar)


def test_the_flags_of_a_run_are_declared_once_with_the_registries_choices():
    """`evaluate` and `reproduce` take the same flags of a run and of its intervals (declared once, in
    `hf_vitrobust.cli.common`), and every choice list and default is the registry's or the config's."""
    import argparse

    from hf_vitrobust.analysis.published import PAPERS
    from hf_vitrobust.cli import build_parser
    from hf_vitrobust.corruptions.export import OUTPUT_FORMATS
    from hf_vitrobust.evaluation.config import CORRUPTION_DEVICES, EvaluationConfig
    from hf_vitrobust.evaluation.suite import SUBSETS
    from hf_vitrobust.metrics.intervals import PROPORTION_METHODS

    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices

    def actions(command: str) -> dict[str, argparse.Action]:
        return {(a.option_strings or [a.dest])[0]: a for a in commands[command]._actions}

    evaluate, reproduce = actions("evaluate"), actions("reproduce")
    shared = [
        "--data", "--limit", "--subset", "--batch-size", "--precision", "--num-workers", "--device", "--seed",
        "--resume", "--confidence-level", "--num-resamples", "--interval-method", "--target-half-width", "--quiet",
    ]  # fmt: skip
    for flag in shared:
        assert _declared(evaluate[flag]) == _declared(reproduce[flag]), flag
    assert evaluate["--subset"].choices == SUBSETS
    assert evaluate["--interval-method"].choices == actions("report")["--interval-method"].choices
    assert evaluate["--interval-method"].choices == PROPORTION_METHODS
    assert evaluate["--corruption-device"].choices == CORRUPTION_DEVICES
    assert evaluate["--corruption-device"].default == EvaluationConfig.corruption_device
    assert (evaluate["--precision"].default, evaluate["--num-workers"].default) == ("fp32", 0)
    assert evaluate["--output"].default == EvaluationConfig.output
    assert tuple(reproduce["paper"].choices) == tuple(PAPERS)
    assert actions("corrupt")["--format"].choices == OUTPUT_FORMATS


def test_version_prints_the_package_version(capsys):
    from hf_vitrobust import __version__

    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"vitrobust {__version__}"


def _subcommands():
    import argparse

    from hf_vitrobust.cli import build_parser

    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    return parser, commands


def test_every_flag_of_every_command_has_a_help_text():
    """Walk every parser: each argument says what it is, not only its default."""
    import argparse

    parser, commands = _subcommands()
    assert set(commands) == {
        "classify",
        "corrupt",
        "evaluate",
        "report",
        "reproduce",
        "check-data",
        "train",
        "push",
        "jobs",
    }
    for name, command in [("vitrobust", parser), *commands.items()]:
        for action in command._actions:
            if isinstance(action, argparse._HelpAction | argparse._SubParsersAction):
                continue
            flag = (action.option_strings or [action.dest])[0]
            text = action.help
            assert isinstance(text, str) and text != argparse.SUPPRESS, f"{name} {flag}"
            words = re.sub(r"\(default: [^)]*\)", "", text).split()
            assert len(words) >= 2, f"{name} {flag}: {text!r}"


def test_train_flags_carry_the_config_docstring_and_output_is_the_folder():
    import argparse

    from hf_vitrobust.training import TrainingConfig

    _, commands = _subcommands()
    train = {a.option_strings[0]: a for a in commands["train"]._actions if a.option_strings}
    assert "AdamW" in train["--lr"].help and "(default: 0.004)" in train["--lr"].help
    assert "sharpness-aware" in train["--sam"].help
    assert "checkpoint folder" in train["--output"].help and train["--output"].dest == "output_dir"
    assert "--output-dir" not in train  # --output, as in every other command
    # One flag per config field that the command line can carry, none without its field's description.
    fields = {f.name for f in dataclasses.fields(TrainingConfig)} - {"model_overrides"}
    assert {a.dest for a in train.values() if not isinstance(a, argparse._HelpAction)} >= fields
    help_text = commands["train"].format_help()
    assert "--output OUTPUT" in help_text


def test_classify_skips_a_bad_image_counts_and_names_it(capsys, tmp_path):
    broken = tmp_path / "broken.jpg"
    broken.write_bytes(Path(_photo("coffee.jpg")).read_bytes()[:200])
    missing = tmp_path / "missing.jpg"
    chelsea = _photo("chelsea.jpg")
    assert main(["classify", str(broken), chelsea, str(missing), "--top-k", "1"]) == 0
    captured = capsys.readouterr()
    assert list(_tables(captured.out)) == [chelsea]
    assert "skipped 2 of 3 images:" in captured.err
    assert str(broken) in captured.err and f"image not found: {missing}" in captured.err
    # All of them bad: a non-zero exit naming each, before any model is loaded.
    with pytest.raises(SystemExit) as exit_info:
        main(["classify", str(broken), str(missing), "--model", "no-such-model"])
    assert exit_info.value.code != 0
    err = capsys.readouterr().err
    assert "no image could be read" in err and str(broken) in err and "could not load model" not in err


TINY_SUITE = {
    "name": "tiny",
    "description": "two bundled photos",
    "batch_size": 2,
    "chunk_size": 2,
    "benchmarks": {"imagenet-val": {"source": "builtin", "limit": 2}},
}


def test_a_launcher_mixed_precision_the_run_did_not_ask_for_is_refused_before_any_work(
    tmp_path, capsys, monkeypatch
):
    import json

    suite = tmp_path / "tiny.json"
    suite.write_text(json.dumps(TINY_SUITE))
    output = tmp_path / "run"
    monkeypatch.setenv("ACCELERATE_MIXED_PRECISION", "bf16")  # accelerate launch --mixed_precision bf16
    for command in (
        ["evaluate", "--suite", str(suite), "--output", str(output), "--quiet"],
        ["train", "--epochs", "1", "--output", str(tmp_path / "ckpt"), "--quiet"],
    ):
        with pytest.raises(SystemExit) as exit_info:
            main(command)
        assert exit_info.value.code == 2
        err = capsys.readouterr().err
        assert "--mixed_precision bf16 asks for bf16, but this run's --precision is fp32" in err
        assert "pass --precision bf16" in err and "--mixed_precision no" in err
    assert not output.exists() and not (tmp_path / "ckpt").exists()
    monkeypatch.setenv("ACCELERATE_MIXED_PRECISION", "fp8")
    with pytest.raises(SystemExit):
        main(["evaluate", "--suite", str(suite), "--output", str(output), "--quiet"])
    assert "--mixed_precision fp8 is not supported" in capsys.readouterr().err
    # Agreeing: the run autocasts in bf16 and records it.
    monkeypatch.setenv("ACCELERATE_MIXED_PRECISION", "bf16")
    assert main(["evaluate", "--suite", str(suite), "--output", str(output), "--precision", "bf16", "--quiet",
                 "--no-report"]) == 0  # fmt: skip
    assert json.loads((output / "results.json").read_text())["settings"]["precision"] == "bf16"
    # "no" (the launcher's default) leaves the precision to the run.
    monkeypatch.setenv("ACCELERATE_MIXED_PRECISION", "no")
    assert main(["evaluate", "--suite", str(suite), "--output", str(tmp_path / "fp32"), "--quiet",
                 "--no-report"]) == 0  # fmt: skip
    assert json.loads((tmp_path / "fp32" / "results.json").read_text())["settings"]["precision"] == "fp32"
