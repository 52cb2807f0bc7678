# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""`vitrobust check-data BENCHMARK SOURCE`: the first rows of every part, their features, row counts and decoded
labels with class names; exit status 1 on any mismatch."""

import data_fixtures as fx
import pytest

from hf_vitrobust.cli import main as cli_main
from hf_vitrobust.data.check import check_source


def _run(capsys, *args):
    status = cli_main(["check-data", *args])
    return status, capsys.readouterr().out


def test_a_source_that_matches_its_benchmark_passes(tmp_path, capsys):
    repo = fx.axiong_imagenet_r(tmp_path, ["n01443537", "n01484850", "n02088094"], declared_rows=30_000)
    status, out = _run(capsys, "imagenet-r", str(repo), "--rows", "2")
    assert status == 0, out
    assert "schema axiong-imagenet-r, label mode wnid_column" in out
    assert "part test:" in out and "(config test, split test)" in out
    assert "features: image: Image; wnid: string; class_name: string" in out
    assert "rows: 30000 expected, 30000 found (declared in the dataset card)" in out
    assert "first labels: 1 goldfish, Carassius auratus; 2 great white shark" in out  # 2 rows only
    assert out.rstrip().endswith("OK: 1 part(s) checked, no mismatch")


def test_builtin_photos_and_their_generated_corruptions_pass(capsys):
    status, out = _run(capsys, "imagenet-val", "builtin", "--rows", "3")
    assert status == 0 and "first images (C x H x W): 3x" in out and "no mismatch" in out
    status, out = _run(capsys, "imagenet-c", "generated:builtin", "--corruption", "fog", "--severity", "3")
    assert status == 0 and "note: generated on the fly from the clean source below: fog" in out


def test_every_part_is_checked_and_each_mismatch_listed(tmp_path, capsys):
    repo = fx.tta_imagenet_c(tmp_path, {("fog", 1): [0, 285], ("snow", 2): [7]})
    args = ["imagenet-c", str(repo), "--corruption", "fog", "--corruption", "snow", "--severity", "1"]
    status, out = _run(capsys, *args, "--severity", "2")
    assert status == 1
    assert "part fog/1:" in out and "first labels: 0 tench, Tinca tinca; 285 Egyptian cat" in out
    assert "features: image: struct(bytes, path); label: int64" in out
    assert "MISMATCH: 2 rows (parquet footers), but the benchmark has 50000" in out
    assert "part fog/2:" in out and "Bad split: severity_2" in out
    assert "part snow/2:" in out and "first labels: 7 cock" in out
    assert out.rstrip().endswith("4 mismatch(es) found")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["cifar10-c", "randall-lab/cifar10-c"], "cannot be streamed: a loading script"),
        (["imagenet-c", "Tsomaros/ImageNet-C", "--corruption", "snow"], "not known to publish snow/1"),
        (["imagenet-val", "ILSVRC/imagenet-1k", "--split", "val"], "there is no split 'val'"),
        (
            ["imagenet-r", "axiong/imagenet-r"],
            "cannot load axiong/imagenet-r",
        ),  # offline: the Hub is unreachable
    ],
)
def test_sources_that_cannot_be_read_exit_non_zero_with_the_reason(capsys, args, message):
    status, out = _run(capsys, *args)
    assert status == 1
    assert message in out and "MISMATCH: " in out and out.rstrip().endswith("1 mismatch(es) found")


def test_imagenet_o_halves_and_an_unlabelled_split(tmp_path):
    ood = fx.cais_imagenet_o(tmp_path, 3)
    val = fx.ilsvrc_imagenet_1k(tmp_path, [1, 2])
    result = check_source("imagenet-o", ood, in_distribution=val)
    assert [part.name for part in result.parts] == ["test", "validation"]
    assert result.parts[0].labels == ["no label (out-of-distribution)"] * 3
    assert result.parts[0].problems == ["3 rows (image files), but the benchmark has 2000"]
    assert result.parts[1].labels == [
        "1 goldfish, Carassius auratus",
        "2 great white shark, white shark, man-eater, man-eating shark, Carcharodon carcharias",
    ]
    assert not result.ok
    unlabelled = check_source(
        "imagenet-val", fx.ilsvrc_imagenet_1k(tmp_path / "t", [-1, -1], split="test"), split="test"
    )
    assert not unlabelled.ok and "none of the first 2 rows has a label" in unlabelled.parts[0].problems[0]
    with pytest.raises(ValueError, match="rows must be at least 1"):
        check_source("imagenet-val", "builtin", rows=0)


@pytest.mark.parametrize(
    "written",
    ["{tmp}/no_such_folder", "./no_such_folder_here", "../no_such_folder_here", "~/no_such_folder_here",
     "data/imagenet/val_missing", "generated:{tmp}/no_such_clean"],
)  # fmt: skip
def test_a_missing_local_path_is_named_not_taken_for_a_hub_id(tmp_path, capsys, written):
    source = written.format(tmp=tmp_path)
    status, out = _run(capsys, "imagenet-c" if source.startswith("generated:") else "imagenet-val", source)
    assert status == 1
    assert f"no such folder: {source.removeprefix('generated:')}" in out
    assert "Hub" not in out and "hub" not in out


def test_hub_shaped_names_and_existing_paths_are_not_called_missing(tmp_path):
    from hf_vitrobust.data.check import missing_local_path

    for hub_id in (
        "barkermrl/imagenet-a",
        "WNJXYK/TTA-ImageNet-C:fog@refs/convert/parquet",
        "builtin",
        "x/y",
    ):
        assert missing_local_path(hub_id) is None, hub_id
    (tmp_path / "here").mkdir()
    assert missing_local_path(tmp_path / "here") is None
    assert missing_local_path(f"generated:{tmp_path}/here") is None
    assert missing_local_path(f"{tmp_path}/gone") == f"{tmp_path}/gone"
