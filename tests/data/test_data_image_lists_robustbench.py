# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""RobustBench's 5,000-image ImageNet-C list: the shipped file, and its selection on ImageNet-C folders."""

import hashlib

import data_fixtures as fx
import pytest

from hf_vitrobust.data import load_benchmark
from hf_vitrobust.data.image_lists import IMAGE_LISTS, image_list, listed_samples
from hf_vitrobust.models.imagenet import IMAGENET_WNIDS

LIST = "robustbench-imagenet-c-5000"


def test_shipped_list_is_robustbench_file():
    entries = image_list(LIST)
    assert LIST in IMAGE_LISTS
    # sha256 of robustbench/helper_files/imagenet_test_image_ids.txt at commit 78fcc9e4 (no final newline).
    assert hashlib.sha256("\n".join(entries).encode()).hexdigest() == (
        "d4121626d07722a0126c35b1563042e46a546f1a05ce705f2cdc635896d58574"
    )
    assert len(entries) == len(set(entries)) == 5000
    assert entries[0] == "n09468604/ILSVRC2012_val_00015253.JPEG"
    assert {e.split("/")[0] for e in entries} <= set(IMAGENET_WNIDS)


def test_only_listed_files_are_selected_in_every_cell_of_a_released_folder(tmp_path):
    listed = image_list(LIST)[:2]  # e.g. n09468604/ILSVRC2012_val_00015253.JPEG
    unlisted = "n01440764/ILSVRC2012_val_00000293.JPEG"
    assert not any(e.endswith(unlisted.split("/")[1]) for e in image_list(LIST))
    files = {
        f"{c}/{s}/{entry}": fx.image_bytes(s)
        for c in ("snow", "gaussian_noise")
        for s in (1, 5)
        for entry in (*listed, unlisted)
    }
    root = fx.image_folder(tmp_path / "ImageNet-C", files)
    ids = [sample.sample_id for sample in load_benchmark("imagenet-c", str(root)).raw_samples()]
    assert len(ids) == 12
    selected = listed_samples(image_list(LIST), ids)
    chosen = sorted(i for i, keep in zip(ids, selected, strict=True) if keep)
    assert chosen == sorted(
        f"{c}/{s}/{e}" for c in ("snow", "gaussian_noise") for s in (1, 5) for e in listed
    )


def test_hub_copy_without_file_names_is_refused(tmp_path):
    repo = fx.tsomaros_imagenet_c(tmp_path, "fog", 4, ["n01440764", "n02124075"])
    ids = [sample.sample_id for sample in load_benchmark("imagenet-c", str(repo)).raw_samples()]
    with pytest.raises(ValueError, match="names its samples by row number"):
        listed_samples(image_list(LIST), ids)
    with pytest.raises(ValueError, match="None of the 5000 listed images"):
        listed_samples(image_list(LIST), ["snow/1/n01440764/ILSVRC2012_val_00000293.JPEG"])
