# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Image folders in every benchmark's official layout: labels, metadata, order, selection and layout errors."""

import data_fixtures as fx
import pytest

from hf_vitrobust.data import (
    NO_LABEL,
    CellLimitedSource,
    ImageFolderSource,
    SchemaError,
    imagenet_a_classes,
    imagenet_r_classes,
    load_benchmark,
    resolve_source,
)
from hf_vitrobust.models.imagenet import IMAGENET_WNIDS


def _png(value):
    return fx.image_bytes(value)


def test_imagenet_val_and_sketch_wnid_folders(tmp_path):
    root = fx.image_folder(
        tmp_path / "val",
        {
            "n02124075/b.JPEG": _png(3),
            "n01440764/ILSVRC2012_val_00000293.JPEG": _png(1),
            "n01440764/a.png": _png(2),
        },
    )
    for benchmark in ("imagenet-val", "imagenet-sketch"):
        source = load_benchmark(benchmark, str(root))
        assert isinstance(source, ImageFolderSource)
        samples = list(source)
        # Round-robin over the classes, each in sorted file order.
        assert [s.sample_id for s in samples] == [
            "n01440764/ILSVRC2012_val_00000293.JPEG",
            "n02124075/b.JPEG",
            "n01440764/a.png",
        ]
        assert [s.label for s in samples] == [0, 285, 0]
        assert [fx.red(s.image) for s in samples] == [1, 3, 2]


def test_a_limited_folder_covers_every_class_and_an_imagenet_c_limit_every_cell(tmp_path):
    """Class-sorted folders are read round-robin over classes, so --limit keeps a class-balanced subset; in
    ImageNet-C the round-robin runs inside each (corruption, severity) cell."""
    wnids = IMAGENET_WNIDS[:4]
    files = {f"{wnid}/{k:02d}.png": _png(10 * c + k) for c, wnid in enumerate(wnids) for k in range(3 + c)}
    root = fx.image_folder(tmp_path / "val", files)
    samples = list(load_benchmark("imagenet-val", str(root)))
    assert len(samples) == len(files) == 3 + 4 + 5 + 6
    assert [s.label for s in samples[:8]] == [0, 1, 2, 3, 0, 1, 2, 3]
    assert [s.label for s in samples[-3:]] == [2, 3, 3]  # the larger classes run on alone
    assert sorted(s.sample_id for s in samples) == sorted(files)
    limited = list(load_benchmark("imagenet-val", str(root), limit=4))
    assert sorted(s.label for s in limited) == [0, 1, 2, 3]

    cells = {
        f"{corruption}/{severity}/{wnid}/{k}.png": _png(k)
        for corruption in ("fog", "snow")
        for severity in (1, 2)
        for wnid in wnids[:3]
        for k in range(2)
    }
    imagenet_c = fx.image_folder(tmp_path / "imagenet-c", cells)
    limited = list(CellLimitedSource(load_benchmark("imagenet-c", str(imagenet_c)), 3))  # what --limit 3 uses
    by_cell = {}
    for sample in limited:
        by_cell.setdefault((sample.metadata["corruption"], sample.metadata["severity"]), []).append(
            sample.label
        )
    assert by_cell == {cell: [0, 1, 2] for cell in (("fog", 1), ("fog", 2), ("snow", 1), ("snow", 2))}


@pytest.mark.parametrize(
    ("benchmark", "subset"), [("imagenet-a", imagenet_a_classes), ("imagenet-r", imagenet_r_classes)]
)
def test_imagenet_a_r_folders_map_wnids_and_reject_other_classes(tmp_path, benchmark, subset):
    wnids = subset().wnids
    root = fx.image_folder(tmp_path / "ok", {f"{wnids[0]}/x.png": _png(0), f"{wnids[-1]}/y.png": _png(1)})
    assert [s.label for s in load_benchmark(benchmark, str(root))] == [
        IMAGENET_WNIDS.index(wnids[0]),
        IMAGENET_WNIDS.index(wnids[-1]),
    ]
    outside = next(w for w in IMAGENET_WNIDS if w not in wnids)
    wrong = fx.image_folder(tmp_path / "wrong", {f"{wnids[0]}/x.png": _png(0), f"{outside}/y.png": _png(1)})
    source = load_benchmark(benchmark, str(wrong))
    with pytest.raises(SchemaError, match=outside):
        next(iter(source))


def test_unknown_class_folder_is_a_schema_error_before_any_file_is_read(tmp_path):
    root = fx.image_folder(tmp_path, {"n01440764/a.png": _png(0), "not_a_wnid/b.png": _png(1)})
    source = load_benchmark("imagenet-val", str(root))
    with pytest.raises(SchemaError, match="not_a_wnid"):
        next(iter(source))
    assert source.report.num_skipped == 0


def test_imagenet_c_folder_layout_and_selection(tmp_path):
    files = {}
    for corruption in ("snow", "gaussian_noise"):
        for severity in (1, 3):
            files[f"{corruption}/{severity}/n01440764/a.JPEG"] = _png(severity)
            files[f"{corruption}/{severity}/n02124075/b.JPEG"] = _png(severity)
    root = fx.image_folder(tmp_path / "imagenet-c", files)
    everything = list(load_benchmark("imagenet-c", str(root)))
    # The reference's corruption order (gaussian_noise before snow), severities ascending, wnids sorted.
    assert [s.sample_id for s in everything[:3]] == [
        "gaussian_noise/1/n01440764/a.JPEG",
        "gaussian_noise/1/n02124075/b.JPEG",
        "gaussian_noise/3/n01440764/a.JPEG",
    ]
    assert len(everything) == 8
    chosen = list(load_benchmark("imagenet-c", str(root), corruptions=["snow"], severities=[3]))
    assert [(s.metadata, s.label) for s in chosen] == [
        ({"corruption": "snow", "severity": 3}, 0),
        ({"corruption": "snow", "severity": 3}, 285),
    ]
    with pytest.raises(SchemaError, match="severity 5"):
        load_benchmark("imagenet-c", str(root), severities=[5]).validate()
    with pytest.raises(SchemaError, match="'fog'"):
        load_benchmark("imagenet-c", str(root), corruptions=["fog"]).validate()
    fx.image_folder(root, {"blurry/1/n01440764/a.JPEG": _png(0)})
    with pytest.raises(SchemaError, match="'blurry'"):
        load_benchmark("imagenet-c", str(root)).validate()


def test_imagenet_c_single_corruption_or_cell_folder(tmp_path):
    files = {f"fog/{s}/n02124075/a.JPEG": _png(s) for s in (2, 4)}
    root = fx.image_folder(tmp_path / "imagenet-c", files)
    one = list(load_benchmark("imagenet-c", str(root / "fog")))
    assert [(s.metadata["severity"], s.sample_id) for s in one] == [
        (2, "fog/2/n02124075/a.JPEG"),
        (4, "fog/4/n02124075/a.JPEG"),
    ]
    cell = list(load_benchmark("imagenet-c", str(root / "fog" / "4")))
    assert [(s.metadata, s.label) for s in cell] == [({"corruption": "fog", "severity": 4}, 285)]
    with pytest.raises(SchemaError, match="severity 4 only"):
        load_benchmark("imagenet-c", str(root / "fog" / "4"), severities=[1]).validate()


def test_imagenet_o_folder_is_out_of_distribution(tmp_path):
    root = fx.image_folder(
        tmp_path, {"n01443537/x.JPEG": _png(0), "n01704323/y.JPEG": _png(1), "README.txt": b"hi"}
    )
    samples = list(load_benchmark("imagenet-o", str(root)))
    assert [s.label for s in samples] == [NO_LABEL, NO_LABEL]
    assert all(s.metadata == {"is_ood": True} for s in samples)


def test_imagenet_9_variants_layout(tmp_path):
    files = {
        "mixed_rand/val/00_dog/a.JPEG": _png(0),
        "mixed_rand/val/08_fish/b.JPEG": _png(1),
        "mixed_same/val/03_reptile/c.JPEG": _png(2),
        "fg_mask/val/00_dog/a.npy": b"x",
    }
    root = fx.image_folder(tmp_path / "bg_challenge", files)
    samples = list(load_benchmark("imagenet-9", str(root)))
    assert [(s.label, s.metadata["variant"]) for s in samples] == [
        (3, "mixed_same"),
        (0, "mixed_rand"),
        (8, "mixed_rand"),
    ]
    assert samples[0].sample_id == "mixed_same/val/03_reptile/c.JPEG"
    only = list(load_benchmark("imagenet-9", str(root), variant="mixed_rand"))
    assert [s.label for s in only] == [0, 8]
    with pytest.raises(SchemaError, match="only_fg"):
        load_benchmark("imagenet-9", str(root), variant="only_fg").validate()


def test_imagenet_9_single_variant_folder(tmp_path):
    root = fx.image_folder(
        tmp_path / "only_fg", {"val/01_bird/a.png": _png(0), "val/07_primate/b.png": _png(1)}
    )
    samples = list(load_benchmark("imagenet-9", str(root)))
    assert [(s.label, s.metadata["variant"], s.sample_id) for s in samples] == [
        (1, "only_fg", "val/01_bird/a.png"),
        (7, "only_fg", "val/07_primate/b.png"),
    ]
    plain = fx.image_folder(tmp_path / "somewhere", {"02_vehicle/a.png": _png(0)})
    with pytest.raises(SchemaError, match="variant="):
        load_benchmark("imagenet-9", str(plain)).validate()
    assert [s.metadata for s in load_benchmark("imagenet-9", str(plain), variant="no_fg")] == [
        {"variant": "no_fg"}
    ]
    bad = fx.image_folder(tmp_path / "original", {"09_plant/a.png": _png(0)})
    with pytest.raises(SchemaError, match="09_plant"):
        load_benchmark("imagenet-9", str(bad)).validate()


def test_cifar_image_folder_by_class_name(tmp_path):
    root = fx.image_folder(tmp_path, {"truck/a.png": _png(0), "airplane/b.png": _png(1)})
    assert [s.label for s in load_benchmark("cifar10", str(root))] == [0, 9]


def test_limit_on_a_folder(tmp_path):
    root = fx.image_folder(tmp_path, {f"n01440764/{i}.png": _png(i) for i in range(5)})
    source = resolve_source("imagenet-val", str(root))
    assert isinstance(source, ImageFolderSource)
    assert [fx.red(s.image) for s in load_benchmark("imagenet-val", str(root), limit=3)] == [0, 1, 2]


def test_class_name_folders_map_to_imagenet_indices(tmp_path):
    """A folder may be named by its class (root/goldfish/x.jpg) as well as by its wnid; the indices are the standard
    ImageNet-1k ones (0 tench, 1 goldfish, 2 great white shark, 285 Egyptian cat)."""
    files = {
        "goldfish/a.png": _png(0),
        "Great_White_Shark/b.png": _png(1),
        "tench, Tinca tinca/c.png": _png(2),
        "Egyptian cat/d.png": _png(3),
        "n01443537/e.png": _png(4),  # goldfish again, by wnid
    }
    root = fx.image_folder(tmp_path, files)
    labels = {s.sample_id: s.label for s in load_benchmark("imagenet-val", str(root))}
    assert labels == {
        "goldfish/a.png": 1,
        "Great_White_Shark/b.png": 2,
        "tench, Tinca tinca/c.png": 0,
        "Egyptian cat/d.png": 285,
        "n01443537/e.png": 1,
    }


def test_unknown_and_ambiguous_class_names_are_named(tmp_path):
    root = fx.image_folder(
        tmp_path / "unknown",
        {"goldfish/a.png": _png(0), "goldfsh/b.png": _png(1), "not_a_class/c.png": _png(2)},
    )
    with pytest.raises(
        SchemaError, match=r"2 folder\(s\) name no ImageNet-1k class .*'goldfsh', 'not_a_class'"
    ):
        next(iter(load_benchmark("imagenet-val", str(root))))
    # "crane" is both the bird (134, n02012849) and the machine (517, n03126707): the user picks the wnid.
    crane = fx.image_folder(tmp_path / "crane", {"crane/a.png": _png(0)})
    with pytest.raises(SchemaError, match=r"names 2 ImageNet classes: rename it n02012849 .* or n03126707"):
        next(iter(load_benchmark("imagenet-val", str(crane))))


def test_a_class_name_outside_a_200_class_subset_is_refused(tmp_path):
    wnid = imagenet_a_classes().wnids[0]
    inside = IMAGENET_WNIDS.index(wnid)
    root = fx.image_folder(
        tmp_path, {f"{wnid}/a.png": _png(0), "goldfish/b.png": _png(1)}
    )  # goldfish: not in A
    with pytest.raises(SchemaError, match=r"'goldfish' \(n01443537\) is not one of the imagenet-a classes"):
        next(iter(load_benchmark("imagenet-a", str(root))))
    ok = fx.image_folder(tmp_path / "ok", {f"{wnid}/a.png": _png(0)})
    assert [s.label for s in load_benchmark("imagenet-a", str(ok))] == [inside]
