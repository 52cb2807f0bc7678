# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""ImageNet-3DCC (Kar et al., "3D Common Corruptions and Data Augmentation", CVPR 2022) as released.

12 corruptions of the ImageNet validation images at 5 severities, read from the release's folders. The release
(github.com/EPFL-VILAB/3DCommonCorruptions at 4fc007b, `tools/download_imagenet_3dcc.sh`) is one archive per
corruption, unpacked into `ImageNet-3DCC/<corruption>/<severity>/<wnid>/<file>`: ImageNet-C's layout, with the
validation file names kept. RobustBench reads it that way (github.com/RobustBench/robustbench at 78fcc9e,
`robustbench/data.py` `load_imagenet3dcc`: `<data_dir>/ImageNet-3DCC/<corruption>/<severity>` joined with the
"<wnid>/ILSVRC2012_val_*.JPEG" entries of its 5,000-image list). The images are 224 x 224 centre crops: the
generator's ImageNet lines (commented out in `create_3dcc/dataset.py`) are `Resize(256), CenterCrop(224)`, and RobustBench's
default loader feeds them with `ToTensor()` alone, stacking them into one batch. The data is CC-BY-NC 4.0 (the
repository's licence); nothing of it is shipped here.

The metric. RobustBench's ImageNet-3DCC leaderboard column ("corruptions_acc_3d", `eval.py`
`corruptions_evaluation`) is the plain mean of the 60 cell accuracies on its 5,000 images; its "corruptions_mce_3d"
normalises by its own AlexNet row measured on those images. Here the headline is that mean top-1 over the cells
present, with the per-cell, per-corruption and per-group top-1 beside it. On the whole release it is not
RobustBench's 5,000-image number: the protocol part `image_list: robustbench-5000` reads only those images of each
cell and, with all 60 cells present, adds both leaderboard columns (`metrics.robustbench`, its AlexNet shipped).

Not generated: every corruption but three needs 3D data that ImageNet does not have (`GENERATION_NEEDS`, read from
the generator's scripts); the release's own files are the benchmark.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..constants import SEVERITIES
from ..metrics.robustbench import ROBUSTBENCH_3DCC_ALEXNET_FILE
from .benchmarks import BENCHMARKS, Benchmark, _names
from .samples import SchemaError

#: The 12 corruptions of ImageNet-3DCC by the generator script that makes them (`create_3dcc/create_3dcc.py`), each
#: under the release's folder name (`tools/download_imagenet_3dcc.sh`, the same 12 as RobustBench's
#: `CORRUPTIONS_3DCC`). The paper's shadow, multi-illumination, occlusion and scale are not in ImageNet-3DCC.
IMAGENET_3DCC_GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("depth of field", ("near_focus", "far_focus")),
    ("camera motion", ("xy_motion_blur", "z_motion_blur")),
    ("weather", ("fog_3d",)),
    ("lighting", ("flash",)),
    ("noise and quantization", ("low_light", "iso_noise", "color_quant")),
    ("video compression", ("h265_crf", "h265_abr", "bit_error")),
)
IMAGENET_3DCC_CORRUPTIONS: tuple[str, ...] = tuple(
    name for _, names in IMAGENET_3DCC_GROUPS for name in names
)

#: What the release's generator needs besides the RGB image, per corruption (`create_3dcc/`): a depth map (for
#: ImageNet, predicted by MiDaS/DPT: the repository's README), a reshading image, and for camera motion and video a
#: novel-view renderer (CuPy CUDA kernels and disparity/inpainting networks in `motion_video/`) with ffmpeg's H.265.
GENERATION_NEEDS: dict[str, str] = {
    "near_focus": "a depth map (create_dof.py: the blur radius follows each pixel's depth)",
    "far_focus": "a depth map (create_dof.py)",
    "xy_motion_blur": "a depth map and a novel-view renderer (motion_video/create_motion.py, CuPy kernels)",
    "z_motion_blur": "a depth map and a novel-view renderer (motion_video/create_motion.py, CuPy kernels)",
    "fog_3d": "a depth map (create_fog.py: transmission exp(-alpha * depth))",
    "flash": "a reshading image of the scene (create_flash.py, RGBAndReshadeDataset)",
    "h265_crf": "a depth map, a rendered camera-motion video and an H.265 encoder (motion_video/create_video.py)",
    "h265_abr": "a depth map, a rendered camera-motion video and an H.265 encoder (motion_video/create_video.py)",
    "bit_error": "a depth map, a rendered camera-motion video and an H.265 encoder (motion_video/create_video.py)",
    "low_light": "the RGB image only (create_non3d.py; not ported here)",
    "iso_noise": "the RGB image only (create_non3d.py; not ported here)",
    "color_quant": "the RGB image only (create_non3d.py; not ported here)",
}
NOT_GENERATED_REASON = (
    "ImageNet-3DCC is read from its released folders only: 9 of its 12 corruptions need 3D data that ImageNet "
    "images do not carry (near_focus, far_focus, fog_3d: a depth map; xy_motion_blur, z_motion_blur: a depth map "
    "and a novel-view renderer; h265_crf, h265_abr, bit_error: a video rendered from a depth map, then H.265; "
    "flash: a reshading image), and the release's maps came from models this package does not run; "
    "low_light, iso_noise and color_quant need only the image but are not ported. Download the release "
    "(EPFL-VILAB/3DCommonCorruptions, tools/download_imagenet_3dcc.sh) and pass its ImageNet-3DCC folder."
)


@dataclass(frozen=True)
class ReleasedOnlyBenchmark(Benchmark):
    """A benchmark of corruptions that is read from its release only: "generated:" is refused with
    `not_generated_reason` before any option is checked, and its "corruptions" option knows its own names (and
    "all"), not ImageNet-C's "standard"/"extra"."""

    not_generated_reason: str = ""

    def check_options(
        self, options: Mapping[str, Any], source: str | os.PathLike | None = None
    ) -> dict[str, Any]:
        self.check_source(os.fspath(source) if isinstance(source, str | os.PathLike) else None)
        return super().check_options(options, source)

    def _check_option(self, key: str, value: Any, generated: bool) -> Any:
        if key == "corruptions":
            return _names(value, self.corruptions, {"all": self.corruptions}, "corruptions", "corruption")
        return super()._check_option(key, value, generated)

    def check_source(self, source: str | None) -> None:
        if source is not None and source.startswith("generated:"):
            raise SchemaError(f"{self.name} cannot be generated: {self.not_generated_reason}")
        super().check_source(source)


IMAGENET_3DCC = ReleasedOnlyBenchmark(
    name="imagenet-3dcc",
    description="ImageNet-3DCC: ImageNet validation images under 12 corruptions that follow the scene's 3D "
    "geometry (depth of field, camera motion, fog, flash, noise, video compression) at 5 severities, 224 x 224, "
    "read from the release's folders; headline the mean top-1 over the cells (RobustBench's corruptions_acc_3d "
    "on its 5,000 images).",
    citation="Kar et al., 3D Common Corruptions and Data Augmentation, CVPR 2022",
    task="classification",
    label_space="imagenet-1k",
    kind="corruption",
    corruptions=IMAGENET_3DCC_CORRUPTIONS,
    corruption_groups=IMAGENET_3DCC_GROUPS,
    severities=SEVERITIES,
    folder_layout="corruption_severity",
    released_size=224,
    robustbench_alexnet=ROBUSTBENCH_3DCC_ALEXNET_FILE,
    not_generated_reason=NOT_GENERATED_REASON,
)
BENCHMARKS.register(IMAGENET_3DCC.name, IMAGENET_3DCC)


def corruption_group(name: str) -> str:
    """The group of an ImageNet-3DCC corruption (`IMAGENET_3DCC_GROUPS`)."""
    for group, names in IMAGENET_3DCC_GROUPS:
        if name in names:
            return group
    raise ValueError(
        f"{name!r} is not an ImageNet-3DCC corruption; known: {', '.join(IMAGENET_3DCC_CORRUPTIONS)}."
    )


__all__ = [
    "GENERATION_NEEDS",
    "IMAGENET_3DCC",
    "IMAGENET_3DCC_CORRUPTIONS",
    "IMAGENET_3DCC_GROUPS",
    "NOT_GENERATED_REASON",
    "ReleasedOnlyBenchmark",
    "corruption_group",
]
