# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The benchmark registry: every benchmark's label space, subsets and Hub copies, and how a source string
resolves to a Source."""

import data_fixtures as fx
import numpy as np
import pytest

from hf_vitrobust.data import (
    BENCHMARKS,
    CIFAR10_CLASSES,
    CIFAR100_CLASSES,
    HubSource,
    ImageFolderSource,
    ImageNetOSource,
    LimitedSource,
    SchemaError,
    get_benchmark,
    load_benchmark,
    match_schema,
    parse_hub_spec,
    resolve_source,
)
from hf_vitrobust.data.benchmarks import TASKS

EXPECTED = {
    "imagenet-val": 1000,
    "imagenet-train": 1000,
    "imagenet-c": 1000,
    "imagenet-p": 1000,
    "imagenet-a": 1000,
    "imagenet-r": 1000,
    "imagenet-o": 1000,
    "imagenet-9": 9,
    "imagenet-sketch": 1000,
    "imagenet-v2": 1000,
    "objectnet": 1000,
    "imagenet-c-bar": 1000,
    "imagenet-3dcc": 1000,
    "cifar10-c": 10,
    "cifar100-c": 100,
    "cifar10": 10,
    "cifar100": 100,
    "cifar100-train": 100,
}


def test_every_expected_benchmark_is_registered():
    assert set(BENCHMARKS) == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(BENCHMARKS))
def test_benchmark_entry_is_consistent(name):
    benchmark = get_benchmark(name)
    assert benchmark.name == name and benchmark.description and benchmark.citation
    assert benchmark.task in TASKS
    assert benchmark.num_classes == EXPECTED[name] == len(benchmark.class_names)
    if name in ("imagenet-a", "imagenet-r", "imagenet-o"):
        assert len(benchmark.class_subset) == 200 and int(benchmark.class_subset.mask.sum()) == 200
    elif name == "objectnet":  # 113 ObjectNet classes over 125 ImageNet classes, no two sharing one
        groups = benchmark.class_subset.groups
        assert len(groups) == 113 and sum(map(len, groups)) == len(benchmark.class_subset) == 125
    else:
        assert benchmark.class_subset is None
    for repo in benchmark.hub_sources:
        matched = match_schema(repo)
        # The training sets read the Hub copies (and schemas) of their evaluation sets, at split "train".
        assert matched is not None and matched.schema.benchmark == (benchmark.hub_schemas_from or name), repo
    if name in ("imagenet-p", "imagenet-9", "imagenet-v2", "objectnet", "imagenet-3dcc"):
        # No streaming Hub copy: the release folder (or, for ImageNet-V2, a downloaded Hub copy) must be given.
        assert benchmark.default_source is None
    elif name == "imagenet-c-bar":  # no Hub copy: its release folder, or generated:<imagenet-val source>
        assert benchmark.default_source is None
    elif name in ("cifar10-c", "cifar100-c"):
        # No Hub copy streams (randall-lab's are loading scripts): corrupted on the fly from uoft-cs's test set.
        assert not benchmark.hub_sources and benchmark.default_source == f"generated:uoft-cs/{name[:-2]}"
    else:
        assert [s.name for s in benchmark.hub_schemas] and benchmark.default_source == benchmark.hub_sources[
            0
        ]
    if benchmark.corruptions:
        # The releases' counts: ImageNet-3DCC 12, ImageNet-C-bar 10, ImageNet-C 19.
        expected = {"imagenet-3dcc": 12, "imagenet-c-bar": 10}.get(name, 19)
        assert benchmark.severities == (1, 2, 3, 4, 5) and len(benchmark.corruptions) == expected


def test_tasks_and_subsets_of_the_special_benchmarks():
    assert get_benchmark("imagenet-o").task == "ood"
    assert get_benchmark("imagenet-p").task == "sequence"
    assert get_benchmark("imagenet-9").task == "background"
    assert get_benchmark("imagenet-9").variants[:3] == ("original", "mixed_same", "mixed_rand")
    assert get_benchmark("ImageNet_C") is get_benchmark("imagenet-c")


def test_unknown_benchmark_error_lists_the_names():
    with pytest.raises(ValueError, match="imagenet-sketch") as error:
        get_benchmark("imagenet-x")
    assert "imagenet-x" in str(error.value)


def test_cifar_class_lists():
    assert len(CIFAR10_CLASSES) == 10 and CIFAR10_CLASSES[0] == "airplane" and CIFAR10_CLASSES[9] == "truck"
    assert len(set(CIFAR100_CLASSES)) == 100 and list(CIFAR100_CLASSES) == sorted(CIFAR100_CLASSES)


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("axiong/imagenet-r", ("axiong/imagenet-r", None, None)),
        ("axiong/imagenet-r:test", ("axiong/imagenet-r", "test", None)),
        (
            "nateraw/imagenet-sketch@refs/convert/parquet",
            ("nateraw/imagenet-sketch", None, "refs/convert/parquet"),
        ),
        ("WNJXYK/TTA-ImageNet-C:fog@main", ("WNJXYK/TTA-ImageNet-C", "fog", "main")),
    ],
)
def test_parse_hub_spec(spec, expected):
    assert parse_hub_spec(spec) == expected


def test_default_sources_and_argument_checks():
    default = load_benchmark("imagenet-r")
    assert isinstance(default, HubSource) and default.path == "axiong/imagenet-r"
    assert load_benchmark("imagenet-a").path == "barkermrl/imagenet-a"
    assert load_benchmark("imagenet-c").path == "WNJXYK/TTA-ImageNet-C"
    ood = load_benchmark("imagenet-o")
    assert (
        isinstance(ood, ImageNetOSource) and ood.in_distribution is None and ood.ood.path == "cais/imagenet-o"
    )
    for no_hub_copy in ("imagenet-p", "imagenet-9"):
        with pytest.raises(SchemaError, match="local folder"):
            load_benchmark(no_hub_copy)
    with pytest.raises(ValueError, match="unknown corruption 'blurry'"):
        load_benchmark("imagenet-c", corruptions=["blurry"])
    with pytest.raises(ValueError, match="severities"):
        load_benchmark("imagenet-c", severities=[6])
    with pytest.raises(ValueError, match="imagenet-o"):
        load_benchmark("imagenet-r", in_distribution="x")
    with pytest.raises(SchemaError, match="neither"):
        resolve_source("imagenet-r", "no-such-folder")
    assert isinstance(load_benchmark("imagenet-r", limit=3), LimitedSource)


def test_a_ready_source_passes_through(tmp_path):
    root = fx.image_folder(tmp_path, {"n01440764/a.png": fx.image_bytes(0)})
    source = ImageFolderSource(root)
    assert load_benchmark("imagenet-val", source) is source


def test_hub_id_offline_fails_with_a_schema_error_naming_it(monkeypatch):
    source = load_benchmark("imagenet-r", "axiong/imagenet-r")
    with pytest.raises(SchemaError, match="axiong/imagenet-r"):
        source.validate()


def test_npy_folder_resolves_to_cifar_c_arrays(tmp_path):
    from hf_vitrobust.data import CifarCArraySource

    np.save(tmp_path / "labels.npy", np.zeros(5, dtype=np.uint8))
    np.save(tmp_path / "fog.npy", np.zeros((5, 32, 32, 3), dtype=np.uint8))
    assert isinstance(resolve_source("cifar10-c", str(tmp_path)), CifarCArraySource)
    assert isinstance(load_benchmark("cifar100-c", str(tmp_path), corruptions=["fog"]), CifarCArraySource)


def test_mp4_folder_resolves_to_imagenet_p_videos(tmp_path):
    from hf_vitrobust.data import ImageNetPVideoSource

    fx.image_folder(tmp_path, {"gaussian_noise/n01440764/ILSVRC2012_val_00000293.mp4": b"\x00"})
    assert isinstance(load_benchmark("imagenet-p", str(tmp_path)), ImageNetPVideoSource)


def test_generated_imagenet_c_over_a_clean_folder(tmp_path):
    from hf_vitrobust.data import GeneratedCorruptionSource

    clean = fx.image_folder(tmp_path, {"n02124075/a.png": fx.image_bytes(100, size=8)})
    source = load_benchmark("imagenet-c", f"generated:{clean}", corruptions=["brightness"], severities=[2])
    assert isinstance(source, GeneratedCorruptionSource) and isinstance(source.clean, ImageFolderSource)
    samples = list(source)
    assert len(samples) == 1 and samples[0].label == 285
    assert samples[0].metadata["corruption"] == "brightness" and samples[0].metadata["severity"] == 2
    assert samples[0].metadata["generated"] is True
    with pytest.raises(ValueError, match="cannot be generated"):
        load_benchmark("imagenet-r", "generated:")
