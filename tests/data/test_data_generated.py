"""On-the-fly ImageNet-C: reference preprocessing, per-sample seeds independent of batching, one clean pass."""

import io

import numpy as np
import pytest
import skimage.data
import torch
from PIL import Image

from hf_vitrobust.corruptions import STANDARD_CORRUPTIONS, corrupt
from hf_vitrobust.corruptions.digital import jpeg_round_trip
from hf_vitrobust.corruptions.export import load_image, resize_and_crop, stable_sample_index
from hf_vitrobust.data.generated import (
    CorruptionRecipe,
    GeneratedCorruptionSource,
    GeneratedPerturbationSource,
    GeneratedSource,
)
from hf_vitrobust.data.samples import InMemorySource, LimitedSource, RawSample, Source

CORRUPTIONS = ["gaussian_noise", "contrast"]
SEVERITIES = [1, 4]


class ListSource(Source):
    """A clean source over a list of (data, label, sample id); counts how often its stream is opened."""

    def __init__(self, rows):
        super().__init__()
        self.rows = rows
        self.passes = 0

    def validate(self):
        pass

    def raw_samples(self):
        self.passes += 1
        for data, label, sample_id in self.rows:
            yield RawSample(data=data, label=label, sample_id=sample_id, metadata={"split": "val"})

    def describe(self):
        return {"kind": "list", "location": "memory", "revision": "r1", "generated": False}


def png_bytes(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(array).save(buffer, format="PNG")
    return buffer.getvalue()


@pytest.fixture(scope="module")
def clean_rows():
    """Three photos of different sizes (one given twice under another id) and a truncated file."""
    chelsea = skimage.data.chelsea()
    return [
        (png_bytes(chelsea), 285, "n02124075/chelsea.png"),
        (png_bytes(skimage.data.coffee()), 967, "n07920052/coffee.png"),
        (png_bytes(chelsea)[:300], 1, "n01443537/broken.png"),
        (skimage.data.astronaut(), 3, "n01491361/astronaut.png"),
        (png_bytes(chelsea), 285, "n02124075/chelsea_copy.png"),
    ]


def generated(rows, batch_size, **kwargs):
    clean = ListSource(rows)
    source = GeneratedCorruptionSource(
        clean, CORRUPTIONS, SEVERITIES, seed=7, batch_size=batch_size, **kwargs
    )
    return clean, source, list(source)


def test_batch_size_does_not_change_any_image(clean_rows):
    _, _, one = generated(clean_rows, batch_size=1)
    _, _, three = generated(clean_rows, batch_size=3)
    assert len(one) == len(three) == 4 * len(CORRUPTIONS) * len(SEVERITIES)
    by_id = {sample.sample_id: sample for sample in three}
    assert set(by_id) == {sample.sample_id for sample in one}
    for sample in one:
        assert torch.equal(sample.image, by_id[sample.sample_id].image), sample.sample_id
        assert sample.metadata == by_id[sample.sample_id].metadata


def test_stream_order_labels_metadata_report_and_provenance(clean_rows):
    clean, source, samples = generated(clean_rows, batch_size=2)
    assert clean.passes == 1  # the clean stream is read once for every corruption and severity
    # Batch-major: the first two clean samples at every corruption and severity, then the next batch.
    assert [s.sample_id for s in samples[:4]] == [
        "gaussian_noise/1/n02124075/chelsea.png", "gaussian_noise/1/n07920052/coffee.png",
        "gaussian_noise/4/n02124075/chelsea.png", "gaussian_noise/4/n07920052/coffee.png",
    ]  # fmt: skip
    assert samples[8].sample_id == "gaussian_noise/1/n01491361/astronaut.png"
    assert {s.label for s in samples if "coffee" in s.sample_id} == {967}
    assert samples[0].metadata == {
        "split": "val",
        "corruption": "gaussian_noise",
        "severity": 1,
        "generated": True,
        "clean_sample_id": "n02124075/chelsea.png",
    }
    assert all(s.image.shape == (3, 224, 224) and s.image.dtype == torch.uint8 for s in samples)
    assert source.report is clean.report and source.report.skipped == {"truncated": 1}
    description = source.describe()
    assert description["generated"] is True and description["clean"]["kind"] == "list"
    assert description["seed"] == 7 and description["engine"].startswith("hf_vitrobust.corruptions")
    assert description["corruptions"] == CORRUPTIONS and description["revision"] == "r1"


def test_images_are_the_reference_crop_corrupted_with_the_sample_seed(clean_rows, tmp_path):
    _, _, samples = generated(clean_rows, batch_size=3)
    by_id = {sample.sample_id: sample.image for sample in samples}
    # The same crop as the folder exporter (shorter side 256 through PIL, center 224).
    (tmp_path / "coffee.png").write_bytes(clean_rows[1][0])
    crop = load_image(tmp_path / "coffee.png", 256, 224)
    assert torch.equal(
        crop, resize_and_crop(torch.from_numpy(skimage.data.coffee()).permute(2, 0, 1), 256, 224)
    )
    for name in CORRUPTIONS:
        expected = corrupt(
            crop[None], name, 4, seed=7, sample_ids=[stable_sample_index("n07920052/coffee.png")]
        )
        # Saved as the released files are: JPEG quality 85 (make_imagenet_c.py), then decoded.
        assert torch.equal(by_id[f"{name}/4/n07920052/coffee.png"], jpeg_round_trip(expected, 85)[0])
    # The noise follows the sample id: the same photo under two ids gets two noise patterns, contrast is the same.
    first, copy = "n02124075/chelsea.png", "n02124075/chelsea_copy.png"
    assert not torch.equal(by_id[f"gaussian_noise/4/{first}"], by_id[f"gaussian_noise/4/{copy}"])
    assert torch.equal(by_id[f"contrast/4/{first}"], by_id[f"contrast/4/{copy}"])
    # Another seed, other noise.
    other = GeneratedCorruptionSource(ListSource(clean_rows[:1]), ["gaussian_noise"], [4], seed=8)
    assert not torch.equal(next(iter(other)).image, by_id[f"gaussian_noise/4/{first}"])


def test_stable_sample_index_is_pinned():
    # Pinned to its definition: the first 8 bytes of BLAKE2b(id), big-endian, low 31 bits. Changing the hash would
    # silently change every generated benchmark.
    import hashlib

    def by_definition(key: str) -> int:
        digest = hashlib.blake2b(key.encode("utf-8"), digest_size=8).digest()
        return int.from_bytes(digest, "big") % 2**31

    keys = ["n01440764/ILSVRC2012_val_00000293.JPEG", "fog/3/row-000007", "", "é/日本"]
    keys += [f"row-{i:06d}" for i in range(100)]
    assert [stable_sample_index(key) for key in keys] == [by_definition(key) for key in keys]
    assert all(0 <= stable_sample_index(key) < 2**31 for key in keys)
    assert stable_sample_index(keys[0]) == 1169083225  # the value every generated benchmark so far used


def test_cifar_sized_images_use_the_cifar_profile(tiny_photos):
    rows = [(image.permute(1, 2, 0).numpy(), k, f"row-{k:06d}") for k, image in enumerate(tiny_photos)]
    rows.append((np.zeros((16, 16, 3), dtype=np.uint8), 0, "row-too-small"))
    _, source, samples = generated(rows, batch_size=2, resize=None, crop=None, jpeg_quality=None)
    assert len(samples) == 3 * len(CORRUPTIONS) * len(SEVERITIES) and source.report.skipped == {
        "too_small": 1
    }
    image = {s.sample_id: s.image for s in samples}["contrast/4/row-000001"]
    assert torch.equal(image, corrupt(tiny_photos[1:2], "contrast", 4, profile="cifar")[0])
    assert not torch.equal(image, corrupt(tiny_photos[1:2], "contrast", 4, profile="imagenet")[0])


def test_defaults_and_bad_requests():
    source = GeneratedCorruptionSource(ListSource([]))
    assert source.corruptions == STANDARD_CORRUPTIONS and source.severities == (1, 2, 3, 4, 5)
    with pytest.raises(ValueError, match="Did you mean 'contrast'"):
        GeneratedCorruptionSource(ListSource([]), ["contrastt"])
    with pytest.raises(ValueError, match="severity"):
        GeneratedCorruptionSource(ListSource([]), ["contrast"], [6])
    with pytest.raises(ValueError, match="batch_size"):
        GeneratedCorruptionSource(ListSource([]), batch_size=0)


def test_the_clean_sample_id_travels_in_the_metadata(clean_rows):
    _, _, samples = generated(clean_rows, batch_size=2)
    # What runs before the metadata carried it parsed back out of the sample id.
    assert all(s.metadata["clean_sample_id"] == s.sample_id.split("/", 2)[-1] for s in samples)
    assert {s.metadata["clean_sample_id"] for s in samples} == {
        "n02124075/chelsea.png", "n07920052/coffee.png", "n01491361/astronaut.png", "n02124075/chelsea_copy.png",
    }  # fmt: skip


def test_capabilities_of_a_generated_source(clean_rows):
    clean, source, samples = generated(clean_rows, batch_size=2)
    assert source.clean_source is clean and source.expansion == len(CORRUPTIONS) * len(SEVERITIES)
    assert isinstance(source, GeneratedSource) and isinstance(source.recipe, CorruptionRecipe)
    assert GeneratedPerturbationSource(clean, ["rotate", "translate", "gaussian_noise"]).expansion == 3
    # Plain sources: no clean source, one sample per item, and no generation over another clean source.
    assert clean.clean_source is None and clean.expansion == 1
    with pytest.raises(TypeError, match="not generated"):
        clean.with_clean(clean)
    # Limited per cell: the first 3 clean items (the truncated one included), each in every cell.
    limited = source.limited(3, per_cell=True)
    assert isinstance(limited.clean_source, LimitedSource) and limited.clean_source.inner is clean
    assert limited.expansion == source.expansion and limited.report is clean.report
    kept = list(limited)
    assert {s.metadata["clean_sample_id"] for s in kept} == {"n02124075/chelsea.png", "n07920052/coffee.png"}
    first = [
        s
        for s in samples
        if s.metadata["clean_sample_id"] in ("n02124075/chelsea.png", "n07920052/coffee.png")
    ]
    assert [s.sample_id for s in kept] == [s.sample_id for s in first]
    assert all(torch.equal(a.image, b.image) for a, b in zip(kept, first, strict=True))
    # Limited as a stream: the first 3 generated samples.
    head = source.limited(3)
    assert isinstance(head, LimitedSource) and [s.sample_id for s in head] == [
        s.sample_id for s in samples[:3]
    ]


def test_with_clean_generates_the_same_images_from_decoded_samples(clean_rows):
    clean, source, samples = generated(clean_rows, batch_size=2)
    decoded = list(ListSource(clean_rows[:2]).samples())
    again = source.with_clean(InMemorySource(decoded))
    assert again.recipe is source.recipe and again.clean_source is not clean and source.clean is clean
    made = list(again.samples())
    expected = [s for s in samples if s.metadata["clean_sample_id"] in {d.sample_id for d in decoded}]
    assert [s.sample_id for s in made] == [s.sample_id for s in expected]
    assert all(
        torch.equal(a.image, b.image) and a.metadata == b.metadata
        for a, b in zip(made, expected, strict=True)
    )


def test_counts_without_decoding():
    from hf_vitrobust.data import BuiltinPhotosSource

    photos = BuiltinPhotosSource()
    count = photos.count_without_decoding()
    assert photos.countable and count == len(list(photos.raw_samples())) > 3
    assert photos.limited(3).count_without_decoding() == 3 and photos.limited(3, per_cell=True).countable
    source = GeneratedCorruptionSource(photos, CORRUPTIONS, SEVERITIES)
    assert not source.countable and source.count_without_decoding() == count * 4
    assert ListSource([]).count_without_decoding() is None  # not countable: no count, nothing listed
