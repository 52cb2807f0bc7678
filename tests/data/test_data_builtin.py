"""The bundled sample of real photos ("builtin"), and ImageNet-C / ImageNet-P generated from it offline."""

import csv
import importlib.util
import shutil
import sys

import numpy as np
import pytest
import torch

from hf_vitrobust.corruptions import corrupt
from hf_vitrobust.corruptions.digital import jpeg_round_trip
from hf_vitrobust.corruptions.export import resize_and_crop, stable_sample_index
from hf_vitrobust.corruptions.perturbations import TEST_PERTURBATIONS, perturbation_sequence
from hf_vitrobust.data import (
    BuiltinPhotosSource,
    GeneratedPerturbationSource,
    SchemaError,
    load_benchmark,
    resolve_source,
)
from hf_vitrobust.data.builtin import builtin_photos_dir, read_manifest
from hf_vitrobust.data.samples import InMemorySource
from hf_vitrobust.models.imagenet import IMAGENET_CLASS_NAMES, IMAGENET_WNIDS

PHOTOS = builtin_photos_dir()
ORIGINALS = {"chelsea.jpg", "coffee.jpg"}  # the first two demo photos, kept at their size


@pytest.fixture(scope="module")
def manifest():
    with open(PHOTOS / "manifest.csv", encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def build_script():
    spec = importlib.util.spec_from_file_location("build_sample", PHOTOS / "build_sample.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the script runs
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return module


@pytest.fixture(scope="module")
def photos():
    """The decoded sample, by sample id."""
    return {sample.sample_id: sample for sample in BuiltinPhotosSource()}


def test_manifest_lists_every_photo_with_a_consistent_label(manifest):
    files = [row["file"] for row in manifest]
    assert 24 <= len(files) <= 40 and len(set(files)) == len(files)
    assert set(files) == {path.name for path in PHOTOS.glob("*.jpg")} and set(files) >= ORIGINALS
    assert sum((PHOTOS / file).stat().st_size for file in files) < 2_000_000
    licence = (PHOTOS / "LICENSE.md").read_text(encoding="utf-8")
    for row in manifest:
        label = int(row["label"])
        assert row["wnid"] == IMAGENET_WNIDS[label] and row["class_name"] == IMAGENET_CLASS_NAMES[label]
        assert row["source"].startswith("skimage.data.") and f"`{row['source']}()`" in licence, row
        width, height = (int(v) for v in row["size"].split("x"))
        assert row["file"] in ORIGINALS or min(width, height) <= 320, row
    assert {row["label"] for row in manifest} == {"285", "967", "657", "812", "872"}
    assert len(read_manifest(PHOTOS)) == len(manifest)


def test_build_script_is_the_provenance(manifest, build_script):
    """The script's table says how each file was made; its images (before JPEG) match the files."""
    sample = build_script.SAMPLE
    assert [photo.file for photo in sample] == [row["file"] for row in manifest]
    for photo, row in zip(sample, manifest, strict=True):
        assert f"skimage.data.{photo.source}" == row["source"] and str(photo.label) == row["label"]
        assert build_script.crop_text(photo) == row["crop"]
        rendered = np.asarray(build_script.render(photo), dtype=np.float64)
        stored = _read_rgb(PHOTOS / photo.file)
        assert rendered.shape == stored.shape and row["size"] == f"{rendered.shape[1]}x{rendered.shape[0]}"
        assert np.abs(rendered - stored).mean() < 4, photo.file  # JPEG quality 90 only
        assert np.abs(np.roll(rendered, 3, axis=1) - stored).mean() > 5, photo.file  # not a shifted crop
    # A crop outside its photo is refused.
    bad = build_script.Photo("x.jpg", "coffee", 967, (0, 0, 601, 10))
    with pytest.raises(ValueError, match="outside"):
        build_script.render(bad)


def _read_rgb(path):
    from PIL import Image

    with Image.open(path) as image:
        return np.asarray(image.convert("RGB"), dtype=np.float64)


def test_builtin_model_accuracy_is_what_the_manifest_records(manifest, photos):
    """The builtin EfficientNet-Lite0 classifies the sample now as recorded: 22 of 29 top-1, 28 of 29 top-5."""
    from PIL import Image

    from hf_vitrobust.models import load_classifier

    recorded_top1 = sum(row["builtin_top1"] == row["label"] for row in manifest)
    recorded_top5 = sum(row["label_in_builtin_top5"] == "true" for row in manifest)
    assert (recorded_top1, recorded_top5, len(manifest)) == (22, 28, 29)

    classifier = load_classifier("builtin:efficientnet_lite0", device="cpu")
    # The decoded samples, through the model's own resize and crop (as the evaluation runner feeds them).
    images = [Image.fromarray(photos[row["file"]].image.permute(1, 2, 0).numpy()) for row in manifest]
    pixels = classifier.preprocess(images)
    top = classifier.predict_topk(pixels, k=5)
    labels = torch.tensor([int(row["label"]) for row in manifest])
    top1 = (top.indices[:, 0] == labels).sum().item()
    top5 = (top.indices == labels[:, None]).any(dim=1).sum().item()
    assert (top1, top5) == (recorded_top1, recorded_top5)
    for row, indices, probabilities in zip(manifest, top.indices, top.probabilities, strict=True):
        assert int(row["builtin_top1"]) == indices[0].item(), row["file"]
        assert row["builtin_top1_name"] == IMAGENET_CLASS_NAMES[indices[0].item()]
        assert abs(float(row["builtin_top1_probability"]) - probabilities[0].item()) < 1e-3
        assert (row["label_in_builtin_top5"] == "true") == (int(row["label"]) in indices.tolist())


def test_builtin_source_round_trip(manifest, photos):
    source = load_benchmark("imagenet-val", "builtin")
    assert isinstance(source, BuiltinPhotosSource)
    samples = list(source)
    assert [s.sample_id for s in samples] == [row["file"] for row in manifest]
    assert [s.label for s in samples] == [int(row["label"]) for row in manifest]
    chelsea = samples[0]
    assert chelsea.image.shape == (3, 300, 451) and chelsea.image.dtype == torch.uint8
    assert torch.equal(
        chelsea.image, torch.from_numpy(_read_rgb(PHOTOS / "chelsea.jpg")).permute(2, 0, 1).byte()
    )
    assert chelsea.metadata == {"photo_source": "skimage.data.chelsea", "crop": "full"}
    assert source.report.num_skipped == 0
    described = source.describe()
    assert described["kind"] == "builtin-photos" and described["generated"] is False
    assert described["count"] == len(manifest) and described["location"] == "hf_vitrobust/assets/photos"
    limited = load_benchmark("imagenet-val", "builtin", limit=3)
    assert [s.sample_id for s in limited] == [row["file"] for row in manifest[:3]]


def test_generated_imagenet_c_from_the_builtin_photos(manifest, photos):
    source = load_benchmark(
        "imagenet-c", "generated:builtin", corruptions=["contrast", "brightness"], severities=[3], limit=31
    )
    samples = list(source)
    # One batch of 32 clean photos covers the 29: every photo with contrast, then two with brightness.
    assert len(samples) == 31
    assert (
        samples[0].sample_id == "contrast/3/chelsea.jpg"
        and samples[29].sample_id == "brightness/3/chelsea.jpg"
    )
    assert [s.label for s in samples[:29]] == [int(row["label"]) for row in manifest]
    assert all(s.image.shape == (3, 224, 224) and s.metadata["generated"] is True for s in samples)
    coffee = resize_and_crop(photos["coffee.jpg"].image, 256, 224)
    expected = corrupt(coffee[None], "contrast", 3, seed=0, sample_ids=[stable_sample_index("coffee.jpg")])
    # Then saved as the released files are (JPEG quality 85) and decoded.
    released = jpeg_round_trip(expected, 85)[0]
    assert torch.equal({s.sample_id: s.image for s in samples}["contrast/3/coffee.jpg"], released)
    assert source.describe()["clean"]["kind"] == "builtin-photos"


def _same_shape_photos(photos):
    """Three photos of one shape (320x320 squares), so that a batch really stacks images."""
    squares = ["coffee_left.jpg", "rocket_left.jpg", "rocket_right.jpg"]
    assert {tuple(photos[name].image.shape) for name in squares} == {(3, 320, 320)}
    return InMemorySource([photos[name] for name in squares])


# Small frames keep the sequences quick; the default 256 -> 224 is tested through the registry below.
SMALL = {"resize": 72, "crop": 64}


def test_generated_imagenet_p_sequences(photos):
    names = ["gaussian_noise", "translate", "zoom_blur"]
    clean = _same_shape_photos(photos)
    by_batch = {
        size: list(GeneratedPerturbationSource(clean, names, seed=3, batch_size=size, **SMALL))
        for size in (1, 3)
    }
    one, three = by_batch[1], by_batch[3]
    assert len(one) == len(three) == 3 * len(names)
    # Batch-major order: every perturbation of the first batch, then the next batch.
    assert [s.sample_id for s in one[:4]] == [
        "gaussian_noise/1/coffee_left.jpg", "translate/1/coffee_left.jpg", "zoom_blur/1/coffee_left.jpg",
        "gaussian_noise/1/rocket_left.jpg",
    ]  # fmt: skip
    assert [s.sample_id for s in three[:4]] == [
        "gaussian_noise/1/coffee_left.jpg", "gaussian_noise/1/rocket_left.jpg",
        "gaussian_noise/1/rocket_right.jpg", "translate/1/coffee_left.jpg",
    ]  # fmt: skip
    three_by_id = {s.sample_id: s for s in three}
    for sample in one:  # the frames do not depend on the batch size
        assert torch.equal(sample.image, three_by_id[sample.sample_id].image), sample.sample_id
        assert sample.metadata == three_by_id[sample.sample_id].metadata
    sequence = three_by_id["gaussian_noise/1/rocket_left.jpg"]
    assert sequence.image.shape == (31, 3, 64, 64) and sequence.image.dtype == torch.uint8
    assert sequence.label == 657 and sequence.metadata == {
        "photo_source": "skimage.data.rocket", "crop": "0,0,427,427", "perturbation": "gaussian_noise",
        "difficulty": 1, "generated": True, "clean_sample_id": "rocket_left.jpg",
    }  # fmt: skip
    assert three_by_id["translate/1/rocket_left.jpg"].image.shape == (41, 3, 64, 64)

    # As the engine defines them: the resize of the clean photo, then the sequence seeded by the sample id.
    resized = resize_and_crop(photos["rocket_left.jpg"].image, 72, None)
    expected = perturbation_sequence(
        resized[None],
        "gaussian_noise",
        1,
        seed=3,
        sample_ids=[stable_sample_index("rocket_left.jpg")],
        crop=64,
    )
    assert torch.equal(sequence.image, expected[0])
    # Frame 0 of a noise or zoom sequence and the unshifted translate frame are the clean centre crop.
    clean_crop = resize_and_crop(photos["rocket_left.jpg"].image, 72, 64)
    assert torch.equal(sequence.image[0], clean_crop)
    assert not torch.equal(sequence.image[1], clean_crop)
    assert torch.equal(three_by_id["zoom_blur/1/rocket_left.jpg"].image[0], clean_crop)
    assert torch.equal(three_by_id["translate/1/rocket_left.jpg"].image[20], clean_crop)
    assert not torch.equal(three_by_id["translate/1/rocket_left.jpg"].image[19], clean_crop)
    # The noise follows the sample id and the seed.
    other = three_by_id["gaussian_noise/1/rocket_right.jpg"].image
    assert not torch.equal(sequence.image[1].int() - sequence.image[0].int(), other[1].int() - other[0].int())
    reseeded = list(GeneratedPerturbationSource(clean, ["gaussian_noise"], seed=4, **SMALL))[1]
    assert reseeded.sample_id == sequence.sample_id and not torch.equal(reseeded.image, sequence.image)


def test_imagenet_p_difficulty(photos):
    clean = InMemorySource([photos["coffee_small.jpg"]])
    names = ["gaussian_noise", "translate"]
    easy = list(GeneratedPerturbationSource(clean, names, difficulty=1, **SMALL))
    hard = list(GeneratedPerturbationSource(clean, names, difficulty=3, **SMALL))
    assert [s.sample_id for s in hard] == [
        "gaussian_noise/3/coffee_small.jpg",
        "translate/3/coffee_small.jpg",
    ]
    assert all(s.metadata["difficulty"] == 3 for s in hard)
    # Difficulty is the noise level of the noise sequences (standard deviation 0.03 -> 0.08) ...
    spread = [(s.image[1:].float() - s.image[:1].float()).std().item() for s in (easy[0], hard[0])]
    assert 1.8 < spread[1] / spread[0] < 3.2
    # ... and a frame stride at evaluation for the others, whose frames do not change.
    assert torch.equal(easy[1].image, hard[1].image)
    # Photos smaller than the crop are skipped and counted.
    tiny = InMemorySource([photos["coffee_small.jpg"]])
    assert list(GeneratedPerturbationSource(tiny, ["translate"], resize=None, crop=200)) == []
    assert tiny.report.skipped == {"too_small": 1}


def test_generated_imagenet_p_through_the_registry(manifest):
    source = resolve_source("imagenet-p", "generated:builtin", variant=["translate"], difficulty=1)
    assert isinstance(source, GeneratedPerturbationSource) and source.perturbations == ("translate",)
    assert isinstance(source.clean, BuiltinPhotosSource) and source.difficulty == 1
    described = source.describe()
    assert described["kind"] == "generated-perturbations" and described["generated"] is True
    assert described["clean"]["kind"] == "builtin-photos" and described["frames"] == {"translate": 41}
    limited = list(load_benchmark("imagenet-p", "generated:builtin", variant="translate", limit=2))
    assert [s.sample_id for s in limited] == [f"translate/1/{row['file']}" for row in manifest[:2]]
    assert limited[0].image.shape == (41, 3, 224, 224) and limited[1].label == 285
    default = resolve_source("imagenet-p", "generated:builtin")
    assert default.perturbations == TEST_PERTURBATIONS and default.difficulty == 1


def test_builtin_is_only_for_imagenet_val(tmp_path):
    for benchmark in ("imagenet-a", "cifar10", "imagenet-9"):
        with pytest.raises(SchemaError, match="source of imagenet-val only, not of"):
            load_benchmark(benchmark, "builtin")
    with pytest.raises(SchemaError, match="generated:builtin"):
        load_benchmark("imagenet-c", "builtin")
    with pytest.raises(SchemaError, match="not of cifar10"):
        load_benchmark("cifar10-c", "generated:builtin")
    with pytest.raises(ValueError, match="cannot be generated"):
        load_benchmark("imagenet-a", "generated:builtin")
    # A manifest whose wnid disagrees with its label is refused before any image is read.
    shutil.copy(PHOTOS / "coffee.jpg", tmp_path / "coffee.jpg")
    (tmp_path / "manifest.csv").write_text(
        "file,label,wnid,class_name,source,crop\ncoffee.jpg,967,n02124075,espresso,skimage.data.coffee,full\n"
    )
    with pytest.raises(SchemaError, match="is not class 967's"):
        list(BuiltinPhotosSource(tmp_path))
    (tmp_path / "manifest.csv").write_text("file,label\ncoffee.jpg,967\n")
    with pytest.raises(SchemaError, match="lacks the column"):
        BuiltinPhotosSource(tmp_path).validate()


def test_bad_perturbation_requests():
    empty = InMemorySource([])
    with pytest.raises(ValueError, match="Did you mean 'translate'"):
        GeneratedPerturbationSource(empty, ["translat"])
    with pytest.raises(ValueError, match="difficulty"):
        GeneratedPerturbationSource(empty, ["rotate"], difficulty=4)
    with pytest.raises(ValueError, match="batch_size"):
        GeneratedPerturbationSource(empty, batch_size=0)
    with pytest.raises(ValueError, match="perturbations"):
        GeneratedPerturbationSource(empty, "rotate")
