# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Bad data inside a stream is skipped and counted (or converted to RGB and counted), never a crash; the samples
after it still come."""

import data_fixtures as fx
import torch

from hf_vitrobust.data import ParquetSource, load_benchmark

# Each row: (image bytes or None, wnid or None) and what the stream must do with it.
_ROWS = [
    (fx.image_bytes(1), "n01440764"),  # fine
    (fx.truncated_jpeg(), "n01440764"),  # skipped: truncated
    (b"<html>404 not found</html>", "n01440764"),  # skipped: not an image
    (fx.cmyk_jpeg(), "n01443537"),  # converted from CMYK
    (fx.sixteen_bit_png(), "n01443537"),  # converted from 16-bit
    (fx.palette_png_with_transparency(), "n01443537"),  # converted from a palette with transparency
    (fx.image_bytes(7), None),  # skipped: missing label
    (None, "n01440764"),  # skipped: missing image
    (b"", "n01440764"),  # skipped: empty
    (fx.image_bytes(9), "n02124075"),  # fine, after all the bad ones
]


def _check(samples, report):
    assert [s.label for s in samples] == [0, 1, 1, 1, 285]
    assert all(s.image.dtype == torch.uint8 and s.image.shape[0] == 3 for s in samples)
    assert fx.red(samples[0].image) == 1 and fx.red(samples[-1].image) == 9
    assert samples[2].image.unique().tolist() == [255]  # 16-bit white scales to 8-bit white, not clipped
    assert report.skipped == {
        "truncated": 1,
        "not_an_image": 1,
        "missing_label": 1,
        "missing_image": 1,
        "empty": 1,
    }
    assert report.converted == {"CMYK": 1, "I;16": 1, "P": 1}


def test_bad_rows_in_a_hub_stream(tmp_path):
    images = [data for data, _ in _ROWS]
    repo = fx.tsomaros_imagenet_c(tmp_path, "fog", 1, [w for _, w in _ROWS], images=images)
    source = load_benchmark("imagenet-c", str(repo))
    samples = list(source)
    _check(samples, source.report)
    assert [s.sample_id for s in samples] == [
        "row-000000",
        "row-000003",
        "row-000004",
        "row-000005",
        "row-000009",
    ]
    assert {e["sample_id"] for e in source.report.examples} == {
        "row-000001",
        "row-000002",
        "row-000006",
        "row-000007",
        "row-000008",
    }


def test_bad_rows_in_local_parquet(tmp_path):
    images = [data for data, _ in _ROWS]
    repo = fx.tsomaros_imagenet_c(tmp_path, "fog", 1, [w for _, w in _ROWS], images=images)
    source = ParquetSource(repo / "data")
    _check(list(source), source.report)


def test_bad_files_in_an_image_folder(tmp_path):
    root = fx.image_folder(
        tmp_path,
        {
            "n01440764/0_good.png": fx.image_bytes(1),
            "n01440764/1_truncated.JPEG": fx.truncated_jpeg(),
            "n01440764/2_notes.txt": b"not an image",
            "n01440764/3_empty.JPEG": b"",
            "n01443537/4_cmyk.JPEG": fx.cmyk_jpeg(),
            "n01443537/5_16bit.png": fx.sixteen_bit_png(),
            "n01443537/6_palette.png": fx.palette_png_with_transparency(),
            "n02124075/7_good.png": fx.image_bytes(9),
        },
    )
    source = load_benchmark("imagenet-val", str(root))
    samples = list(source)
    assert [s.label for s in samples] == [0, 1, 285, 1, 1]  # round-robin over the three classes
    assert source.report.skipped == {"truncated": 1, "not_an_image": 1, "empty": 1}
    assert source.report.converted == {"CMYK": 1, "I;16": 1, "P": 1}


def test_bad_ood_images_and_limit_share_one_report(tmp_path):
    repo = fx.voxel51_imagenet_o(tmp_path, 2)
    (repo / "data" / "img_001.jpg").write_bytes(fx.truncated_jpeg())
    source = load_benchmark("imagenet-o", str(repo), limit=2)
    samples = list(source)
    assert len(samples) == 1 and samples[0].metadata["is_ood"] is True
    assert source.report.skipped == {"truncated": 1}


def test_out_of_range_subset_index_after_the_first_batch_is_skipped_and_counted(tmp_path):
    """A 200-class number of 200 or more (or -1) in the first batch is a schema error (tests/data/test_data_hub.py);
    after it, one such row is skipped and counted and the stream goes on."""
    from hf_vitrobust.data import HubSource, imagenet_a_classes
    from hf_vitrobust.data.datasets_source import FIRST_BATCH_ROWS

    repo, schema = fx.int_imagenet_a(tmp_path, [0] * FIRST_BATCH_ROWS + [200, -1, 199])
    source = HubSource(str(repo), schema)
    samples = list(source)
    assert [s.sample_id for s in samples][-2:] == [
        f"row-{FIRST_BATCH_ROWS - 1:06d}",
        f"row-{FIRST_BATCH_ROWS + 2:06d}",
    ]
    assert (
        samples[-1].label == imagenet_a_classes().class_indices[199] and len(samples) == FIRST_BATCH_ROWS + 1
    )
    assert source.report.skipped == {"unknown_label": 1, "missing_label": 1}
