"""ImageNet-P MP4 sequences: frames decoded in order with PyAV, wnid labels, difficulty folders, bad videos skipped."""

from pathlib import Path

import av
import numpy as np
import pytest
import torch

from hf_vitrobust.data.imagenet_p import ImageNetPVideoSource, decode_video, difficulty_folder
from hf_vitrobust.data.samples import SchemaError
from hf_vitrobust.models.imagenet import imagenet_wnid_to_index

SIZE = 64
NUM_FRAMES = 6


def frame_brightness(t: int, offset: int = 0) -> int:
    return 20 + 35 * t + offset


def write_video(path, num_frames: int = NUM_FRAMES, offset: int = 0) -> None:
    """Frame t: grey level 20 + 35 t (+ offset), with a white 8x8 square at column 8 t. H.264 at crf 0, as the
    release is H.264; values are checked to within a few levels because of the RGB <-> YUV 4:2:0 conversion."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with av.open(str(path), mode="w") as container:
        stream = container.add_stream("libx264", rate=1)
        stream.width = stream.height = SIZE
        stream.pix_fmt = "yuv420p"
        stream.options = {"crf": "0"}
        for t in range(num_frames):
            array = np.full((SIZE, SIZE, 3), frame_brightness(t, offset), dtype=np.uint8)
            array[8:16, 8 * t : 8 * t + 8] = 255
            container.mux(stream.encode(av.VideoFrame.from_ndarray(array, format="rgb24")))
        container.mux(stream.encode())


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    root = tmp_path_factory.mktemp("imagenet_p")
    write_video(root / "gaussian_noise" / "n01440764" / "ILSVRC2012_val_00000293.mp4")
    write_video(root / "gaussian_noise" / "n01443537" / "ILSVRC2012_val_00000236.mp4", offset=5)
    write_video(root / "gaussian_noise_3" / "n01440764" / "ILSVRC2012_val_00000293.mp4", offset=10)
    write_video(root / "translate" / "n01443537" / "ILSVRC2012_val_00000236.mp4", num_frames=4)
    (root / "translate" / "n01443537" / "garbage.mp4").write_bytes(b"<html>not a video</html>" * 40)
    return root


def test_decode_video_frame_order_and_content(release):
    frames = decode_video(release / "gaussian_noise" / "n01440764" / "ILSVRC2012_val_00000293.mp4")
    assert frames.shape == (NUM_FRAMES, 3, SIZE, SIZE) and frames.dtype == torch.uint8
    for t in range(NUM_FRAMES):
        background = frames[t, :, 40:, 40:].float()
        assert (background - frame_brightness(t)).abs().max() <= 3, t
        square = frames[t, :, 9:15, 8 * t + 1 : 8 * t + 7].float()
        assert square.min() >= 245, t  # the square moves right by 8 pixels per frame


def test_samples_labels_metadata_and_skipped_garbage(release):
    source = ImageNetPVideoSource(release)
    samples = list(source)
    ids = [s.sample_id for s in samples]
    assert ids == [
        "gaussian_noise/1/n01440764/ILSVRC2012_val_00000293.mp4",
        "gaussian_noise/1/n01443537/ILSVRC2012_val_00000236.mp4",
        "gaussian_noise/3/n01440764/ILSVRC2012_val_00000293.mp4",
        "translate/1/n01443537/ILSVRC2012_val_00000236.mp4",
    ]
    to_index = imagenet_wnid_to_index()
    assert [s.label for s in samples] == [to_index["n01440764"], to_index["n01443537"]] * 2
    assert [s.label for s in samples][:2] == [0, 1]  # tench, goldfish: the first two ImageNet-1k classes
    assert [s.metadata for s in samples] == [
        {"perturbation": "gaussian_noise", "difficulty": 1},
        {"perturbation": "gaussian_noise", "difficulty": 1},
        {"perturbation": "gaussian_noise", "difficulty": 3},
        {"perturbation": "translate", "difficulty": 1},
    ]
    assert [s.image.shape[0] for s in samples] == [NUM_FRAMES, NUM_FRAMES, NUM_FRAMES, 4]
    # Each sample's own video: the offsets 0, 5, 10 of the fixture show in frame 0.
    levels = torch.tensor([s.image[0, :, 40:, 40:].float().mean().item() for s in samples[:3]])
    assert (levels - torch.tensor([20.0, 25.0, 30.0])).abs().max() <= 2
    assert source.report.num_skipped == 1 and source.report.skipped["undecodable_video"] == 1
    assert source.report.examples[0]["sample_id"] == "translate/1/n01443537/garbage.mp4"
    assert source.describe()["folders"] == ["gaussian_noise", "gaussian_noise_3", "translate"]


def test_difficulty_selects_noise_folder_or_stride(release):
    noise = list(ImageNetPVideoSource(release, ["gaussian_noise"], difficulty=3))
    assert [s.sample_id for s in noise] == ["gaussian_noise/3/n01440764/ILSVRC2012_val_00000293.mp4"]
    translate = list(ImageNetPVideoSource(release, ["translate"], difficulty=2))
    assert [s.metadata["difficulty"] for s in translate] == [2] and translate[0].image.shape[0] == 4
    assert difficulty_folder("shot_noise", 2) == "shot_noise_2" and difficulty_folder("rotate", 3) == "rotate"


def test_schema_errors_before_any_video(release, tmp_path):
    with pytest.raises(SchemaError, match="gaussian_noise_2"):
        ImageNetPVideoSource(release, ["gaussian_noise"], difficulty=2).validate()
    with pytest.raises(SchemaError, match="lacks the folder"):
        ImageNetPVideoSource(release, ["rotate"]).validate()
    with pytest.raises(ValueError, match="did you mean 'translate'"):
        ImageNetPVideoSource(release, ["translat"])
    with pytest.raises(ValueError, match="difficulty"):
        ImageNetPVideoSource(release, difficulty=4)
    (tmp_path / "tilt" / "not_a_wnid").mkdir(parents=True)
    with pytest.raises(SchemaError, match="not ImageNet-1k wnids: not_a_wnid"):
        next(iter(ImageNetPVideoSource(tmp_path)))
    with pytest.raises(SchemaError, match="none of the release's folders"):
        ImageNetPVideoSource(tmp_path / "tilt").validate()


def test_videos_are_decoded_only_with_their_sample(release, monkeypatch):
    """Listing the stream opens no video (each raw sample is a `VideoFile`): a process of a distributed run decodes
    only the videos of its own chunks; a bad one is skipped when it is decoded, for the same reason as before."""
    from hf_vitrobust.data import imagenet_p
    from hf_vitrobust.data.samples import SkipReport, decode_raw_sample

    decoded: list[str] = []
    real = imagenet_p.decode_video
    monkeypatch.setattr(
        imagenet_p, "decode_video", lambda path: decoded.append(Path(path).name) or real(path)
    )
    source = ImageNetPVideoSource(release)
    raw = list(source.raw_samples())
    assert len(raw) == 5 and decoded == [] and source.reads_on_decode
    assert all(isinstance(r.data, imagenet_p.VideoFile) for r in raw)
    report = SkipReport()
    assert decode_raw_sample(raw[4], report) is None and report.skipped["undecodable_video"] == 1
    assert decode_raw_sample(raw[1], report).image.shape == (NUM_FRAMES, 3, SIZE, SIZE)
    assert decoded == ["garbage.mp4", "ILSVRC2012_val_00000236.mp4"]
