"""CIFAR-10-C / CIFAR-100-C arrays: the released layout (severity blocks, repeated labels), ids, order, schema errors."""

import numpy as np
import pytest

from hf_vitrobust.data.cifar_c import CIFAR_C_CORRUPTIONS, CifarCArraySource
from hf_vitrobust.data.samples import SchemaError

PER_SEVERITY = 4
LABELS = np.array([3, 0, 9, 7], dtype=np.uint8)


def pixel_value(corruption: int, severity: int, index: int) -> int:
    """A distinct value per (corruption, severity, image), so a sample read from the wrong row is caught."""
    return corruption * 100 + severity * 10 + index


@pytest.fixture
def cifar_folder(tmp_path):
    """Two corruptions x 5 severities x 4 images in the released layout, and labels repeated per severity."""
    for c, name in enumerate(("gaussian_noise", "fog")):
        images = np.zeros((5 * PER_SEVERITY, 32, 32, 3), dtype=np.uint8)
        for severity in range(1, 6):
            for index in range(PER_SEVERITY):
                row = images[(severity - 1) * PER_SEVERITY + index]
                row[...] = pixel_value(c, severity, index)
                row[0, 0] = (1, 2, 3)  # an RGB pixel, to check channel order and the HWC -> CHW layout
        np.save(tmp_path / f"{name}.npy", images)
    np.save(tmp_path / "labels.npy", np.tile(LABELS, 5))
    return tmp_path


def test_release_names_match_the_reference_script():
    assert len(CIFAR_C_CORRUPTIONS) == 19 and len(set(CIFAR_C_CORRUPTIONS)) == 19
    assert {"elastic_transform", "jpeg_compression", "saturate", "spatter"} <= set(CIFAR_C_CORRUPTIONS)


def test_rows_labels_ids_and_order(cifar_folder):
    source = CifarCArraySource(cifar_folder, corruptions=["fog", "gaussian_noise"], severities=[2, 5])
    samples = list(source)
    assert [s.sample_id for s in samples[:5]] == ["fog/2/00000", "fog/2/00001", "fog/2/00002", "fog/2/00003",
                                                  "fog/5/00000"]  # fmt: skip
    assert len(samples) == 2 * 2 * PER_SEVERITY and source.report.num_skipped == 0
    for sample in samples:
        name, severity, index = sample.sample_id.split("/")
        c, severity, index = ("gaussian_noise", "fog").index(name), int(severity), int(index)
        assert sample.image.shape == (3, 32, 32) and sample.image.dtype.is_floating_point is False
        assert int(sample.image[0, 5, 5]) == pixel_value(c, severity, index)
        assert sample.image[:, 0, 0].tolist() == [1, 2, 3]
        assert sample.label == int(LABELS[index])
        assert sample.metadata == {"corruption": name, "severity": severity}
    description = source.describe()
    assert description["generated"] is False and description["images_per_severity"] == PER_SEVERITY


def test_defaults_need_all_19_arrays(cifar_folder):
    with pytest.raises(
        SchemaError, match=r"lacks 17 of the 19 requested arrays: shot_noise\.npy, impulse_noise\.npy"
    ):
        CifarCArraySource(cifar_folder).validate()
    assert len(list(CifarCArraySource(cifar_folder, corruptions=["fog"]))) == 5 * PER_SEVERITY


def test_schema_errors_before_any_sample(cifar_folder):
    np.save(cifar_folder / "fog.npy", np.zeros((5 * PER_SEVERITY, 32, 32), dtype=np.uint8))
    with pytest.raises(SchemaError, match=r"fog\.npy is uint8 \(20, 32, 32\)"):
        next(iter(CifarCArraySource(cifar_folder, corruptions=["fog"])))
    with pytest.raises(SchemaError, match="outside the 10 classes"):
        np.save(cifar_folder / "labels.npy", np.tile(np.array([0, 1, 2, 10], dtype=np.uint8), 5))
        CifarCArraySource(cifar_folder, corruptions=["gaussian_noise"]).validate()
    # A CIFAR-100-C label passes as cifar100-c.
    CifarCArraySource(cifar_folder, dataset="cifar100-c", corruptions=["gaussian_noise"]).validate()
    np.save(cifar_folder / "labels.npy", np.arange(5 * PER_SEVERITY, dtype=np.uint8) % 10)
    with pytest.raises(SchemaError, match="does not repeat"):
        CifarCArraySource(cifar_folder, corruptions=["gaussian_noise"]).validate()
    with pytest.raises(ValueError, match="did you mean 'gaussian_noise'"):
        CifarCArraySource(cifar_folder, corruptions=["gausian_noise"])
    with pytest.raises(ValueError, match="severities"):
        CifarCArraySource(cifar_folder, severities=[0])
    with pytest.raises(SchemaError, match="not a folder"):
        CifarCArraySource(cifar_folder / "missing").validate()


def test_arrays_are_memory_mapped(cifar_folder, monkeypatch):
    loaded = []
    original = np.load

    def spy(*args, **kwargs):
        loaded.append(kwargs.get("mmap_mode"))
        return original(*args, **kwargs)

    monkeypatch.setattr(np, "load", spy)
    list(CifarCArraySource(cifar_folder, corruptions=["fog"], severities=[1]))
    assert loaded and set(loaded) == {"r"}


def test_each_cell_is_a_shard_read_on_its_own(cifar_folder, monkeypatch):
    """One shard per (corruption, severity): in order they are the stream, and reading one copies only its rows."""
    source = CifarCArraySource(cifar_folder, corruptions=["fog", "gaussian_noise"], severities=[2, 5])
    assert source.shards() == ("fog/2", "fog/5", "gaussian_noise/2", "gaussian_noise/5")
    chained = [raw.sample_id for shard in range(4) for raw in source.shard_raw_samples(shard)]
    assert chained == [raw.sample_id for raw in source.raw_samples()]
    copied: list[tuple[int, int]] = []
    real_array = np.array

    def recording_array(value, *args, **kwargs):
        if isinstance(value, np.memmap):
            copied.append((int(value[0, 5, 5, 0]), len(value)))
        return real_array(value, *args, **kwargs)

    monkeypatch.setattr(np, "array", recording_array)
    samples = list(source.shard_raw_samples(2))
    assert [s.sample_id for s in samples] == [f"gaussian_noise/2/{i:05d}" for i in range(PER_SEVERITY)]
    assert copied == [(pixel_value(0, 2, 0), PER_SEVERITY)]  # the rows of gaussian_noise severity 2, only
    with pytest.raises(IndexError, match="no shard 4"):
        next(source.shard_raw_samples(4))
