# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""ImageNet-P from its released MP4 sequences (Hendrycks & Dietterich, ICLR 2019), decoded with PyAV.

The reference generation script (hendrycks/robustness `ImageNet-P/create_p/make_imagenet_p.py`) encodes one
sequence per validation image with ffmpeg at `<root>/<perturbation>/<wnid>/<image name without .JPEG>.mp4`; the
harder noise sequences are separate data sets in `<perturbation>_2` and `<perturbation>_3`. The evaluation
(`ImageNet-P/test.py`, through `utils/video_loader.py`'s `VideoFolder`) reads `<root>/<perturbation>_<d>` only for
noise perturbations at difficulty d > 1 and `<root>/<perturbation>` otherwise: for the other perturbations the
difficulty is the frame stride of the comparison (see `hf_vitrobust.metrics.flip_rate`), not another folder. The
class of a sequence is its wnid folder, mapped to the ImageNet-1k index (the reference's sorted-folder index is the
same for a complete release).

`encode_video_as_released` writes a sequence as make_imagenet_p.py's ffmpeg command does (libx264, `-preset
veryslow`, `-crf 20`, or `-tune grain` for the noise sequences, one frame per second), so that generated sequences can
go through the release's compression (`h264_round_trip`).
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..constants import PERTURBATIONS
from ..models.imagenet import imagenet_wnid_to_index
from ..registry import check_known
from .decoding import BadSampleError
from .samples import DeferredData, RawSample, SchemaError, Source

DIFFICULTIES = (1, 2, 3)
VIDEO_EXTENSION = ".mp4"
#: make_imagenet_p.py's libx264 settings: `-crf 20 -preset veryslow`; the noise sequences `-tune grain -preset
#: veryslow` (x264's default crf, 23). ffmpeg encodes its RGB PNG frames as yuv444p when no -pix_fmt is given.
RELEASE_X264_OPTIONS = {"preset": "veryslow", "crf": "20"}
RELEASE_X264_NOISE_OPTIONS = {"preset": "veryslow", "tune": "grain"}
RELEASE_PIXEL_FORMAT = "yuv444p"
#: One thread and x264's C code (asm=0, bit-exact to its assembly by x264's design): measured here, PyAV 18's x264
#: gives a different bitstream from one call to the next with its assembly at preset veryslow, and with frame
#: threads the bitstream depends on the machine's core count. About 3 s per 31-frame 224-pixel sequence on one core.
X264_THREADS = 1
X264_DETERMINISTIC_PARAMS = "asm=0"


def is_noise_perturbation(name: str) -> bool:
    """The noise sequences (every frame compared with the first; one folder per difficulty)."""
    return "noise" in name


def difficulty_folder(perturbation: str, difficulty: int) -> str:
    """The release's folder of a perturbation at a difficulty: `gaussian_noise_2`, or `translate` at any one."""
    if is_noise_perturbation(perturbation) and difficulty > 1:
        return f"{perturbation}_{difficulty}"
    return perturbation


def decode_video(path: str | os.PathLike | io.BytesIO) -> torch.Tensor:
    """All frames of a video (a file, or the bytes of one), in presentation order, as a uint8 (T, 3, H, W) RGB
    tensor.

    Raises `BadSampleError` for a file PyAV cannot open or decode, one without a video stream or frames, or frames
    of different sizes."""
    import av

    try:
        with av.open(path if isinstance(path, io.BytesIO) else str(path)) as container:
            if not container.streams.video:
                raise BadSampleError("no_video_stream", f"{path} has no video stream")
            stream = container.streams.video[0]
            decoded = [(frame.pts, frame.to_ndarray(format="rgb24")) for frame in container.decode(stream)]
    except BadSampleError:
        raise
    except FileNotFoundError as error:
        raise BadSampleError("missing_file", str(error)) from error
    except (av.FFmpegError, OSError, ValueError, EOFError) as error:
        raise BadSampleError("undecodable_video", f"{path}: {type(error).__name__}: {error}") from error
    if not decoded:
        raise BadSampleError("empty_video", f"{path} holds no decodable frames")
    if all(pts is not None for pts, _ in decoded):
        decoded.sort(key=lambda pair: pair[0])  # the decoder already outputs presentation order; be explicit
    frames = [array for _, array in decoded]
    if len({array.shape for array in frames}) != 1:
        raise BadSampleError("bad_sequence", f"{path} has frames of different sizes")
    return torch.from_numpy(np.stack(frames)).permute(0, 3, 1, 2).contiguous()


def encode_video_as_released(frames: torch.Tensor, perturbation: str) -> bytes:
    """A uint8 (T, 3, H, W) RGB sequence -> the bytes of an MP4 encoded as the release's (see
    `RELEASE_X264_OPTIONS`: libx264, yuv444p, one frame per second), for the perturbation `perturbation`."""
    import av

    if frames.dtype != torch.uint8 or frames.dim() != 4 or frames.shape[1] != 3:
        raise ValueError(f"Expected a uint8 (T, 3, H, W) sequence, got {frames.dtype} {tuple(frames.shape)}.")
    options = RELEASE_X264_NOISE_OPTIONS if is_noise_perturbation(perturbation) else RELEASE_X264_OPTIONS
    buffer = io.BytesIO()
    with av.open(buffer, "w", format="mp4") as container:
        stream = container.add_stream("libx264", rate=1)
        stream.width, stream.height = int(frames.shape[-1]), int(frames.shape[-2])
        stream.pix_fmt = RELEASE_PIXEL_FORMAT
        stream.codec_context.thread_count = X264_THREADS
        stream.options = {**options, "x264-params": X264_DETERMINISTIC_PARAMS}
        for array in np.ascontiguousarray(frames.permute(0, 2, 3, 1).cpu().numpy()):
            container.mux(stream.encode(av.VideoFrame.from_ndarray(array, format="rgb24")))
        container.mux(stream.encode())
    return buffer.getvalue()


def h264_round_trip(frames: torch.Tensor, perturbation: str) -> torch.Tensor:
    """A sequence encoded as the release's videos (`encode_video_as_released`) and decoded as they are read."""
    decoded = decode_video(io.BytesIO(encode_video_as_released(frames, perturbation)))
    if decoded.shape != frames.shape:
        raise RuntimeError(
            f"The H.264 round trip gave {tuple(decoded.shape)} frames for {tuple(frames.shape)}."
        )
    return decoded.to(frames.device)


class VideoFile(DeferredData):
    """An ImageNet-P video on disk, decoded (`decode_video`) only when its sample is: the process that owns the
    sample's chunk is the only one that reads it."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)

    def load(self) -> torch.Tensor:
        return decode_video(self.path)

    def __repr__(self) -> str:
        return f"VideoFile({str(self.path)!r})"


class ImageNetPVideoSource(Source):
    """ImageNet-P sequences of a release folder: one sample per video, its image a uint8 (T, 3, H, W) tensor.

    root: the folder holding `<perturbation>[_<difficulty>]/<wnid>/<name>.mp4`.
    perturbations: which to read (default: every known perturbation whose folder is present).
    difficulty: 1, 2 or 3. For the noise perturbations it picks the folder; for the others it is recorded in the
        metadata as the evaluation's frame stride and the one folder is read. Default None: every noise difficulty
        folder present, and difficulty 1 for the others (the reference `test.py`'s default).

    Labels are ImageNet-1k indices of the wnid folders. Sample ids are "<perturbation>/<difficulty>/<wnid>/<file>";
    metadata holds "perturbation" and "difficulty". Order: perturbation (as given), difficulty, wnid, file name.
    A video that cannot be decoded is skipped and counted in `report`.
    """

    def __init__(
        self,
        root: str | os.PathLike,
        perturbations: Sequence[str] | None = None,
        difficulty: int | None = None,
    ) -> None:
        super().__init__()
        self.root = Path(root)
        self.perturbations = None if perturbations is None else tuple(perturbations)
        if self.perturbations is not None:
            if not self.perturbations:
                raise ValueError(f"No ImageNet-P perturbation given. Known: {', '.join(PERTURBATIONS)}.")
            check_known(self.perturbations, PERTURBATIONS, "ImageNet-P perturbation")
        if difficulty is not None and (isinstance(difficulty, bool) or difficulty not in DIFFICULTIES):
            raise ValueError(f"difficulty must be 1, 2 or 3 (or None for all), got {difficulty!r}.")
        self.difficulty = difficulty
        self._plan: list[tuple[str, int, str, list[str]]] | None = None

    def _planned_folders(self) -> list[tuple[str, int, str]]:
        """(perturbation, difficulty, folder) to read, in order; a requested folder that is missing is an error."""
        if not self.root.is_dir():
            raise SchemaError(f"ImageNet-P: {self.root} is not a folder.")
        names = self.perturbations or tuple(
            name
            for name in PERTURBATIONS
            if any((self.root / difficulty_folder(name, d)).is_dir() for d in DIFFICULTIES)
        )
        if not names:
            raise SchemaError(
                f"ImageNet-P: {self.root} holds none of the release's folders ({', '.join(PERTURBATIONS)}, and "
                "<noise>_2, <noise>_3)."
            )
        planned, missing = [], []
        for name in names:
            if self.difficulty is not None:
                levels = [self.difficulty]
            elif is_noise_perturbation(name):
                present = [d for d in DIFFICULTIES if (self.root / difficulty_folder(name, d)).is_dir()]
                levels = present or [1]
            else:
                levels = [1]
            for level in levels:
                folder = difficulty_folder(name, level)
                if (self.root / folder).is_dir():
                    planned.append((name, level, folder))
                else:
                    missing.append(folder)
        if missing:
            raise SchemaError(f"ImageNet-P: {self.root} lacks the folder(s) {', '.join(missing)}.")
        return planned

    def validate(self) -> None:
        """Check the folders and that every class folder is an ImageNet-1k wnid. Lists folders, reads no video."""
        try:
            import av  # noqa: F401
        except ImportError as error:
            raise ImportError("Reading ImageNet-P videos needs PyAV: pip install av") from error
        known = imagenet_wnid_to_index()
        plan = []
        for name, level, folder in self._planned_folders():
            classes = sorted(entry.name for entry in os.scandir(self.root / folder) if entry.is_dir())
            unknown = [wnid for wnid in classes if wnid not in known]
            if unknown:
                raise SchemaError(
                    f"ImageNet-P: {self.root / folder} has class folders that are not ImageNet-1k wnids: "
                    f"{', '.join(unknown[:5])}{' ...' if len(unknown) > 5 else ''}."
                )
            if not classes:
                raise SchemaError(f"ImageNet-P: {self.root / folder} has no <wnid> class folders.")
            plan.append((name, level, folder, classes))
        self._plan = plan

    def raw_samples(self) -> Iterator[RawSample]:
        if self._plan is None:
            self.validate()
        to_index = imagenet_wnid_to_index()
        for name, level, folder, classes in self._plan:  # type: ignore[union-attr]
            for wnid in classes:
                files = sorted(
                    entry.name
                    for entry in os.scandir(self.root / folder / wnid)
                    if entry.is_file() and entry.name.lower().endswith(VIDEO_EXTENSION)
                )
                for file in files:
                    yield RawSample(
                        data=VideoFile(self.root / folder / wnid / file),
                        label=to_index[wnid],
                        sample_id=f"{name}/{level}/{wnid}/{file}",
                        metadata={"perturbation": name, "difficulty": level},
                    )

    @property
    def countable(self) -> bool:
        """Local videos: listing them decodes none."""
        return True

    @property
    def reads_on_decode(self) -> bool:
        """Each raw sample is a `VideoFile`, read when its sample is decoded."""
        return True

    def describe(self) -> dict[str, Any]:
        folders = [folder for _, _, folder, _ in self._plan] if self._plan is not None else None
        return {
            "kind": "imagenet-p-videos",
            "location": str(self.root),
            "revision": None,
            "generated": False,
            "perturbations": list(self.perturbations) if self.perturbations is not None else None,
            "difficulty": self.difficulty,
            "folders": folders,
            "decoder": "PyAV",
            "reference": "hendrycks/robustness ImageNet-P/test.py, utils/video_loader.py (Zenodo 3565846)",
        }


__all__ = [
    "DIFFICULTIES",
    "ImageNetPVideoSource",
    "VideoFile",
    "decode_video",
    "difficulty_folder",
    "encode_video_as_released",
    "h264_round_trip",
    "is_noise_perturbation",
]
