"""Writing corrupted image folders: ImageNet-C layout, parquet, resume, bad images, and the `vitrobust corrupt` CLI."""

import io

import numpy as np
import pytest
import skimage.data
import torch
from datasets import load_dataset
from PIL import Image

from hf_vitrobust.cli import main
from hf_vitrobust.corruptions import corrupt, corrupt_image_folder
from hf_vitrobust.corruptions.export import list_image_folder, load_image


@pytest.fixture(scope="module")
def image_folder(tmp_path_factory):
    """Two classes, three readable photos of different sizes, and one truncated JPEG."""
    root = tmp_path_factory.mktemp("images")
    photos = {
        ("n02123045", "cat.JPEG"): skimage.data.chelsea(),
        ("n07920052", "coffee.JPEG"): skimage.data.coffee(),
        ("n07920052", "rocket.png"): skimage.data.rocket(),
    }
    for (cls, name), array in photos.items():
        (root / cls).mkdir(exist_ok=True)
        Image.fromarray(array).save(root / cls / name)
    buffer = io.BytesIO()
    Image.fromarray(skimage.data.astronaut()).save(buffer, format="JPEG")
    (root / "n02123045" / "broken.JPEG").write_bytes(buffer.getvalue()[:2000])
    return root


def decode(path) -> torch.Tensor:
    with Image.open(path) as image:
        return torch.from_numpy(np.array(image.convert("RGB"))).permute(2, 0, 1)


def test_layout_content_and_bad_image_report(image_folder, tmp_path):
    report = corrupt_image_folder(image_folder, tmp_path, ["contrast", "pixelate"], [1, 3], batch_size=3)
    assert report.written == 2 * 2 * 3
    assert report.bad_images == [str(image_folder / "n02123045" / "broken.JPEG")]
    written = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file())
    assert written[:3] == ["contrast/1/n02123045/cat.JPEG", "contrast/1/n07920052/coffee.JPEG",
                           "contrast/1/n07920052/rocket.png"]  # fmt: skip
    assert len(written) == 12 and not any(p.endswith(".part") for p in written)

    # Each file is the corruption of the ImageNet-C crop (resize 256, center crop 224), as JPEG quality 85.
    clean = load_image(image_folder / "n07920052" / "coffee.JPEG", 256, 224)
    assert clean.shape == (3, 224, 224)
    expected = corrupt(clean[None], "pixelate", 3)[0]
    stored = decode(tmp_path / "pixelate" / "3" / "n07920052" / "coffee.JPEG")
    assert stored.shape == (3, 224, 224)
    assert (stored.float() - expected.float()).abs().mean() < 3  # JPEG q85 error only


def test_resume_keeps_what_exists_and_batch_size_does_not_matter(image_folder, tmp_path):
    first = corrupt_image_folder(image_folder, tmp_path / "a", ["contrast"], [2], batch_size=2)
    again = corrupt_image_folder(image_folder, tmp_path / "a", ["contrast"], [2], batch_size=2)
    assert (first.written, again.written, again.skipped_existing) == (3, 0, 3)
    (tmp_path / "a" / "contrast" / "2" / "n07920052" / "coffee.JPEG").unlink()
    assert corrupt_image_folder(image_folder, tmp_path / "a", ["contrast"], [2]).written == 1

    corrupt_image_folder(image_folder, tmp_path / "b", ["contrast"], [2], batch_size=1)
    for path in (tmp_path / "a").rglob("*.*"):
        assert path.read_bytes() == (tmp_path / "b" / path.relative_to(tmp_path / "a")).read_bytes()


def test_parquet_parts_load_with_datasets(image_folder, tmp_path):
    report = corrupt_image_folder(
        image_folder, tmp_path, ["brightness"], [4], batch_size=2, output_format="parquet"
    )
    parts = sorted((tmp_path / "brightness" / "4").glob("*.parquet"))
    assert [p.name for p in parts] == ["part-00000.parquet", "part-00001.parquet"] and report.written == 3
    dataset = load_dataset("parquet", data_files=[str(p) for p in parts], split="train")
    assert dataset.features["image"].__class__.__name__ == "Image"
    assert sorted(dataset["label"]) == ["n02123045", "n07920052", "n07920052"]
    assert set(dataset["severity"]) == {4} and dataset[0]["image"].size == (224, 224)
    resumed = corrupt_image_folder(
        image_folder, tmp_path, ["brightness"], [4], batch_size=2, output_format="parquet"
    )
    assert resumed.written == 0 and resumed.skipped_existing == 4


def test_bad_requests_fail_before_any_work(image_folder, tmp_path):
    with pytest.raises(ValueError, match="Did you mean 'contrast'"):
        corrupt_image_folder(image_folder, tmp_path, ["contrastt"])
    with pytest.raises(ValueError, match="severity"):
        corrupt_image_folder(image_folder, tmp_path, ["contrast"], [6])
    with pytest.raises(ValueError, match="no class folders"):
        corrupt_image_folder(tmp_path, tmp_path / "out", ["contrast"])
    assert not (tmp_path / "contrast").exists()
    assert len(list_image_folder(image_folder)) == 4


def test_command_line(image_folder, tmp_path, capsys):
    assert main(["corrupt", str(image_folder), str(tmp_path), "--corruption", "contrast", "--severity", "5",
                 "--quiet"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "wrote 3 images" in out and "skipped 1 unreadable" in out and "broken.JPEG" in out
    assert len(list((tmp_path / "contrast" / "5").rglob("*.*"))) == 3
    with pytest.raises(SystemExit) as exit_info:
        main(["corrupt", str(image_folder), str(tmp_path), "--corruption", "snowy"])
    assert exit_info.value.code == 2


def test_writer_reads_a_stream_once_and_groups_sizes(tmp_path):
    """`write_corrupted_images` takes any iterable of items: read once, images of several sizes, seeded by id."""
    from hf_vitrobust.corruptions.export import ExportItem, write_corrupted_images

    pulled = []
    images = [torch.from_numpy(skimage.data.chelsea()[:h, :w].copy()).permute(2, 0, 1) for h, w in
              ((64, 64), (48, 80), (64, 64), (16, 64))]  # fmt: skip

    def stream():
        for k, image in enumerate(images):
            pulled.append(k)
            yield ExportItem(class_name=f"c{k % 2}", file_name=f"{k}.png", relative_path=f"{k}.png",
                             sample_index=100 + k, image=image)  # fmt: skip

    finished = []
    report = write_corrupted_images(
        stream(), tmp_path, ["gaussian_noise", "contrast"], [1, 5], batch_size=2, progress=finished.append
    )
    assert pulled == [0, 1, 2, 3] and report.written == 3 * 4 and finished == [2] * 8
    assert report.bad_images == ["3.png"]  # 16 pixels high: too small for the corruptions, reported once
    # The noise is seeded by the item's sample_index: the stored noise correlates with the noise of id 102 and not
    # with another id's (JPEG q85 smooths part of the noise, so the pixels are not compared directly).
    stored = decode(tmp_path / "gaussian_noise" / "1" / "c0" / "2.png").float()
    assert stored.shape == (3, 64, 64)
    clean = images[2].float()

    def correlation(sample_id: int) -> float:
        reference = corrupt(images[2][None], "gaussian_noise", 1, sample_ids=[sample_id])[0].float()
        pair = torch.stack([(stored - clean).flatten(), (reference - clean).flatten()])
        return torch.corrcoef(pair)[0, 1].item()

    assert correlation(102) > 0.3 and abs(correlation(2)) < 0.1 and abs(correlation(100)) < 0.1
    with pytest.raises(ValueError, match="No corruptions"):
        write_corrupted_images(stream(), tmp_path, [])


def test_the_written_files_are_the_images_a_run_generates_from_the_same_folder(image_folder, tmp_path):
    """`vitrobust corrupt` and a run's `generated:<folder>` seed each image by its sample id ("<class>/<file>"), so
    with one seed they give the same pixels (issue 38, point 10): random corruptions included, each file the JPEG-85
    round trip a generated image also takes. Before, the folder export seeded by the file's index in the list."""
    from hf_vitrobust.data.loading import load_benchmark

    names = ["gaussian_noise", "impulse_noise", "contrast"]
    corrupt_image_folder(image_folder, tmp_path, names, [3], seed=5, batch_size=2)
    generated = load_benchmark(
        "imagenet-c", f"generated:{image_folder}", corruptions=names, severities=[3], seed=5
    )
    seen = 0
    for sample in generated:
        written = tmp_path / sample.sample_id
        assert torch.equal(sample.image, decode(written)), sample.sample_id
        seen += 1
    assert seen == 3 * 3  # the broken JPEG is skipped by both
    other = load_benchmark(
        "imagenet-c", f"generated:{image_folder}", corruptions=["gaussian_noise"], severities=[3]
    )
    first = next(iter(other))
    assert not torch.equal(first.image, decode(tmp_path / first.sample_id))  # seed 0: other noise
