# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Every known Hub schema, read offline from a fixture laid out like its repository, through the same
`load_dataset(folder, streaming=True)` path as the Hub id: labels in the benchmark's label space, metadata, and
schema errors raised before any sample."""

import data_fixtures as fx
import pytest

from hf_vitrobust.data import (
    HUB_SCHEMAS,
    NO_LABEL,
    HubSource,
    ParquetSource,
    SchemaError,
    imagenet_a_classes,
    imagenet_o_classes,
    load_benchmark,
    match_schema,
    resolve_source,
)
from hf_vitrobust.models.imagenet import IMAGENET_WNIDS


def _collect(source):
    samples = list(source)
    return samples, [s.label for s in samples], [s.metadata for s in samples]


def test_every_schema_names_a_repo_that_matches_it():
    for schema in HUB_SCHEMAS.values():
        matched = match_schema(schema.repo)
        assert matched is not None and matched.schema is schema
        assert schema.confirmed, f"{schema.name} must say what was confirmed about its schema"


def test_tsomaros_imagenet_c_single_repo(tmp_path):
    repo = fx.tsomaros_imagenet_c(tmp_path, "fog", 4, ["n01440764", "n01443537", "n02124075"])
    source = load_benchmark("imagenet-c", str(repo))
    assert isinstance(source, HubSource) and source.schema.name == "tsomaros-imagenet-c"
    samples, labels, metadata = _collect(source)
    assert labels == [0, 1, 285]
    assert metadata == [{"corruption": "fog", "severity": 4}] * 3
    assert [s.sample_id for s in samples] == ["row-000000", "row-000001", "row-000002"]
    assert [fx.red(s.image) for s in samples] == [0, 1, 2]
    assert samples[0].image.shape == (3, 6, 6)


def test_tsomaros_imagenet_c_family_selects_repos_by_corruption_and_severity(tmp_path):
    fx.tsomaros_imagenet_c(tmp_path, "fog", 1, ["n01440764"])
    fx.tsomaros_imagenet_c(tmp_path, "fog", 2, ["n01443537"])
    fx.tsomaros_imagenet_c(tmp_path, "snow", 1, ["n02124075", "n01440764"])
    family = str(tmp_path / "Tsomaros" / "ImageNet-C")
    source = load_benchmark("imagenet-c", family, corruptions=["snow", "fog"], severities=[1])
    samples, labels, metadata = _collect(source)
    assert labels == [285, 0, 0]
    assert [(m["corruption"], m["severity"]) for m in metadata] == [("snow", 1), ("snow", 1), ("fog", 1)]
    assert [s.sample_id for s in samples] == ["snow/1/row-000000", "snow/1/row-000001", "fog/1/row-000000"]
    missing = load_benchmark("imagenet-c", family, corruptions=["fog"], severities=[3])
    with pytest.raises(SchemaError, match="severity_3"):
        missing.validate()


def test_single_repo_outside_the_requested_selection_is_an_error_not_an_empty_stream(tmp_path):
    repo = fx.tsomaros_imagenet_c(tmp_path, "fog", 4, ["n01440764"])
    with pytest.raises(SchemaError, match="nothing matches"):
        next(iter(load_benchmark("imagenet-c", str(repo), corruptions=["snow"])))
    assert [
        s.label for s in load_benchmark("imagenet-c", str(repo), corruptions=["fog"], severities=[4])
    ] == [0]


def test_tta_imagenet_c_configs_and_severity_splits(tmp_path):
    repo = fx.tta_imagenet_c(tmp_path, {("fog", 1): [0, 285], ("fog", 3): [7], ("snow", 1): [1]})
    source = load_benchmark("imagenet-c", str(repo), corruptions=["fog"], severities=[1, 3])
    _, labels, metadata = _collect(source)
    assert labels == [0, 285, 7]
    assert [m["severity"] for m in metadata] == [1, 1, 3]
    assert {m["corruption"] for m in metadata} == {"fog"}
    assert (
        source.parts[1].load_kwargs["name"] == "fog" and source.parts[1].load_kwargs["split"] == "severity_3"
    )


def test_tsomaros_imagenet_a_maps_200_class_indices_through_the_subset(tmp_path):
    repo = fx.tsomaros_imagenet_a(tmp_path, [0, 1, 199])
    _, labels, metadata = _collect(load_benchmark("imagenet-a", str(repo)))
    subset = imagenet_a_classes()
    assert labels[0] == 6  # A's class 0 is n01498041, stingray, ImageNet index 6
    assert labels == [subset.class_indices[0], subset.class_indices[1], subset.class_indices[199]]
    assert metadata == [{}, {}, {}]


@pytest.mark.parametrize("label_names", ["names", "wnids"])
def test_barkermrl_imagenet_a_class_label_by_name_or_wnid(tmp_path, label_names):
    repo = fx.barkermrl_imagenet_a(tmp_path, [0, 5, 199], label_names=label_names)
    _, labels, _ = _collect(load_benchmark("imagenet-a", str(repo)))
    subset = imagenet_a_classes()
    assert labels == [6, subset.class_indices[5], subset.class_indices[199]]
    assert IMAGENET_WNIDS[labels[2]] == subset.wnids[199]


def test_axiong_imagenet_r_wnid_column(tmp_path):
    repo = fx.axiong_imagenet_r(tmp_path, ["n01443537", "n01484850"])
    source = load_benchmark("imagenet-r", str(repo))
    assert source.schema.name == "axiong-imagenet-r"
    assert source.parts[0].load_kwargs["name"] == "test" and source.parts[0].load_kwargs["split"] == "test"
    _, labels, _ = _collect(source)
    assert labels == [1, 2]


def test_axiong_unknown_wnid_first_row_is_a_schema_error_later_rows_are_skipped(tmp_path):
    bad_first = fx.axiong_imagenet_r(tmp_path / "a", ["n99999999", "n01443537"])
    source = load_benchmark("imagenet-r", str(bad_first))
    with pytest.raises(SchemaError, match="n99999999"):
        next(iter(source))
    bad_later = fx.axiong_imagenet_r(tmp_path / "b", ["n01443537", "n99999999", "n01484850"])
    source = load_benchmark("imagenet-r", str(bad_later))
    _, labels, _ = _collect(source)
    assert labels == [1, 2]
    assert source.report.skipped == {"unknown_wnid": 1}


def test_voxel51_imagenet_o_is_all_ood_and_combines_with_in_distribution_half(tmp_path):
    repo = fx.voxel51_imagenet_o(tmp_path, 3)
    ood_only = list(load_benchmark("imagenet-o", str(repo)))
    assert [s.label for s in ood_only] == [NO_LABEL] * 3
    assert all(s.metadata["is_ood"] is True for s in ood_only)
    o_classes = imagenet_o_classes().class_indices
    outside = next(i for i in range(1000) if i not in o_classes)
    val = fx.ilsvrc_imagenet_1k(tmp_path, [o_classes[0], outside, o_classes[199]])
    both = list(load_benchmark("imagenet-o", str(repo), in_distribution=str(val)))
    assert [s.label for s in both] == [NO_LABEL] * 3 + [o_classes[0], o_classes[199]]
    assert [s.metadata["is_ood"] for s in both] == [True] * 3 + [False] * 2
    assert both[3].sample_id == "id/row-000000" and both[0].sample_id.startswith("ood/")
    assert len({s.sample_id for s in both}) == 5


def test_nateraw_sketch_from_the_parquet_conversion_branch(tmp_path):
    repo = fx.nateraw_imagenet_sketch(tmp_path, [0, 517, 999])
    source = load_benchmark("imagenet-sketch", str(repo))
    assert source.revision == "refs/convert/parquet"
    _, labels, _ = _collect(source)
    assert labels == [0, 517, 999]  # 517 is the second "crane": kept by its verified position


def test_class_names_in_another_order_are_mapped_by_name_not_position(tmp_path):
    from datasets import ClassLabel, Features, Image

    names = fx.hub_imagenet_names()
    names[134] = f"crane ({IMAGENET_WNIDS[134]})"  # out of position, only a wnid tells the two cranes apart
    features = Features({"image": Image(), "label": ClassLabel(names=list(reversed(names)))})
    repo = tmp_path / "nateraw" / "imagenet-sketch"
    columns = {"image": fx._images([1, 2, 3, 4]), "label": [0, 999 - 134, 999 - 517, 999 - 639]}
    fx.write_parquet(repo / "default" / "train" / "0000.parquet", columns, features)
    assert [s.label for s in load_benchmark("imagenet-sketch", str(repo))] == [999, 134, 517, 639]
    # Without the wnid, a "crane" out of position could be either crane: refuse rather than guess.
    names[134] = "crane"
    features = Features({"image": Image(), "label": ClassLabel(names=list(reversed(names)))})
    fx.write_parquet(repo / "default" / "train" / "0000.parquet", columns, features)
    with pytest.raises(SchemaError, match="'crane'"):
        load_benchmark("imagenet-sketch", str(repo)).validate()


def test_label_names_outside_imagenet_are_a_schema_error(tmp_path):
    from datasets import ClassLabel, Features, Image

    names = [f"thing {i}" for i in range(1000)]
    features = Features({"image": Image(), "label": ClassLabel(names=names)})
    repo = tmp_path / "nateraw" / "imagenet-sketch"
    fx.write_parquet(
        repo / "default" / "train" / "0000.parquet", {"image": fx._images([1]), "label": [0]}, features
    )
    with pytest.raises(SchemaError, match="thing 0"):
        load_benchmark("imagenet-sketch", str(repo)).validate()


@pytest.mark.parametrize("which", ["cifar10-c", "cifar100-c"])
def test_randall_cifar_c_corruption_and_severity_columns(tmp_path, which):
    rows = [(3, "gaussian_noise", 1), (5, "fog", 2), (7, "Gaussian Noise", 3), (9, "gaussian_noise", 5)]
    repo = fx.randall_cifar_c(tmp_path, which, rows)
    source = load_benchmark(which, str(repo), corruptions=["gaussian_noise"], severities=[1, 3])
    samples, labels, metadata = _collect(source)
    assert labels == [3, 7]
    assert metadata == [
        {"corruption": "gaussian_noise", "severity": 1},
        {"corruption": "gaussian_noise", "severity": 3},
    ]
    assert [s.sample_id for s in samples] == ["row-000000", "row-000002"]


def test_uoft_cifar_and_ilsvrc_validation(tmp_path):
    assert [s.label for s in load_benchmark("cifar10", str(fx.uoft_cifar(tmp_path, "cifar10", [9, 0])))] == [
        9,
        0,
    ]
    assert [
        s.label for s in load_benchmark("cifar100", str(fx.uoft_cifar(tmp_path, "cifar100", [99, 4])))
    ] == [99, 4]
    val = fx.ilsvrc_imagenet_1k(tmp_path, [285, 0])
    source = load_benchmark("imagenet-val", str(val))
    assert source.parts[0].load_kwargs["split"] == "validation"
    assert [s.label for s in source] == [285, 0]


def test_missing_column_is_a_schema_error_before_any_sample(tmp_path):
    from datasets import ClassLabel, Features, Image

    features = Features({"picture": Image(), "label": ClassLabel(names=list(IMAGENET_WNIDS))})
    repo = tmp_path / "Tsomaros" / "ImageNet-C-fog-severity_1"
    fx.write_parquet(
        repo / "data" / "validation-00000-of-00001.parquet",
        {"picture": fx._images([1]), "label": [0]},
        features,
    )
    source = load_benchmark("imagenet-c", str(repo))
    with pytest.raises(SchemaError, match="missing column 'image'"):
        next(iter(source))
    assert source.report.num_skipped == 0


def test_unknown_wnid_in_class_label_names_is_a_schema_error(tmp_path):
    from datasets import ClassLabel, Features, Image

    names = [*IMAGENET_WNIDS[:999], "n99999999"]
    features = Features({"image": Image(), "label": ClassLabel(names=names)})
    repo = tmp_path / "Tsomaros" / "ImageNet-C-fog-severity_1"
    fx.write_parquet(
        repo / "data" / "validation-00000-of-00001.parquet",
        {"image": fx._images([1]), "label": [0]},
        features,
    )
    with pytest.raises(SchemaError, match="n99999999"):
        next(iter(load_benchmark("imagenet-c", str(repo))))


def test_parquet_copy_behaves_like_the_hub_layout(tmp_path):
    repo = fx.tsomaros_imagenet_c(tmp_path, "snow", 2, ["n01440764", "n02124075"])
    via_hub = list(load_benchmark("imagenet-c", str(repo)))
    via_parquet = list(ParquetSource(repo / "data"))
    single_file = resolve_source("imagenet-c", str(repo / "data" / "validation-00000-of-00001.parquet"))
    assert isinstance(single_file, ParquetSource)
    for other in (via_parquet, list(single_file)):
        assert [s.label for s in other] == [s.label for s in via_hub] == [0, 285]
        assert [s.metadata for s in other] == [s.metadata for s in via_hub]
        assert all((a.image == b.image).all() for a, b in zip(other, via_hub, strict=True))


def test_parquet_folder_with_an_unknown_name_detects_its_schema_from_features(tmp_path):
    repo = fx.axiong_imagenet_r(tmp_path, ["n01443537"])
    renamed = tmp_path / "my-download"
    repo.rename(renamed)
    source = resolve_source("imagenet-r", str(renamed))
    assert isinstance(source, ParquetSource)
    assert [s.label for s in source] == [1]
    assert source.schema.name == "axiong-imagenet-r"


def test_hub_id_is_parsed_with_config_and_revision():
    source = resolve_source("imagenet-r", "axiong/imagenet-r:test@abc123")
    assert isinstance(source, HubSource)
    assert source.parts[0].load_kwargs == {
        "path": "axiong/imagenet-r",
        "split": "test",
        "name": "test",
        "revision": "abc123",
    }
    sketch = resolve_source("imagenet-sketch", "nateraw/imagenet-sketch")
    assert sketch.parts[0].load_kwargs["revision"] == "refs/convert/parquet"
    family = resolve_source("imagenet-c", "Tsomaros/ImageNet-C", corruptions=["fog"], severities=[2, 5])
    assert [p.load_kwargs["path"] for p in family.parts] == [
        "Tsomaros/ImageNet-C-fog-severity_2",
        "Tsomaros/ImageNet-C-fog-severity_5",
    ]


def test_limit_caps_samples(tmp_path):
    repo = fx.tsomaros_imagenet_c(tmp_path, "fog", 1, ["n01440764"] * 5)
    assert len(list(load_benchmark("imagenet-c", str(repo), limit=2))) == 2


def test_cell_limited_source_keeps_every_cell_and_stops_reading_single_cell_parts(tmp_path):
    from hf_vitrobust.data import CellLimitedSource

    for corruption, severity in (("fog", 1), ("fog", 2), ("snow", 1), ("snow", 2)):
        fx.tsomaros_imagenet_c(tmp_path, corruption, severity, ["n01440764", "n01443537", "n02124075"])
    family = str(tmp_path / "Tsomaros" / "ImageNet-C")
    inner = load_benchmark("imagenet-c", family, corruptions=["fog", "snow"], severities=[1, 2])
    limited = CellLimitedSource(inner, 2)
    ids = [s.sample_id for s in limited.samples()]
    assert ids == [
        "fog/1/row-000000",
        "fog/1/row-000001",
        "fog/2/row-000000",
        "fog/2/row-000001",
        "snow/1/row-000000",
        "snow/1/row-000001",
        "snow/2/row-000000",
        "snow/2/row-000001",
    ]
    assert inner.rows_per_cell_part == 2 and limited.describe()["limit_per_cell"] == 2
    # One part holding every cell (corruption and level are columns): cut per cell, never per part.
    repo = fx.randall_cifar_c(
        tmp_path, "cifar10-c", [(1, "fog", 1), (2, "fog", 1), (3, "fog", 2), (4, "snow", 5)]
    )
    mixed = CellLimitedSource(load_benchmark("cifar10-c", str(repo)), 1)
    assert [(s.label, s.metadata["corruption"], s.metadata["severity"]) for s in mixed.samples()] == [
        (1, "fog", 1),
        (3, "fog", 2),
        (4, "snow", 5),
    ]
