# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""ImageNet-C-bar (Mintun et al., "On Interaction Between Augmentations and Corruptions in Natural Corruption
Robustness", NeurIPS 2021): 10 corruptions chosen to be perceptually far from ImageNet-C's, at 5 severities.

The release. facebookresearch/augmentation-corruption (MIT; commit ba4d5a5) publishes the generator
(`imagenet_c_bar/make_imagenet_c_bar.py`) and, in its README, a preprocessed copy (dl.fbaipublicfiles.com/inc_bar/
imagenet_c_bar.tar.gz) that "follows the ImageNet-C folder structure": `<corruption>/<1..5>/<wnid>/<file>`, the
corruption folders named as `C_BAR_CORRUPTIONS`. Each image is the validation image resized to shorter side 256,
centre-cropped to 224 (so 224 x 224 as released), corrupted, and saved as JPEG quality 85 (`save(quality=85,
optimize=True)`). The generator itself writes `ImageNet-C-Bar/<corruption>/<parameter>/<wnid>/<file>`, each severity
folder named by its parameter, "{:.2f}" ("2.35" is caustic_refraction's severity 1: `C_BAR_SEVERITY_PARAMETERS`).
`CBarFolderSource` reads both; the sample ids and metadata name the severity (1..5) either way.

The metric. The repository's `test_c_bar.py` reports the top-1 error of every (corruption, severity) cell, their
mean per corruption ("<corruption>-avg") and their plain mean over all 50 cells ("overall-avg"): no AlexNet
normalisation. That overall mean error is the headline here ("imagenet-c-bar mean error %", 100 minus the mean
top-1 over the cells present), with the per-corruption mean errors in the report.

Generated: "generated:<clean source>" makes it on the fly with `hf_vitrobust.corruptions.c_bar` (every corruption
ported; each image seeded by its clean sample id), then the release's JPEG-85 round trip (`release_encoding`
"none" keeps the corrupted pixels, the repository's in-memory `test_c_bar`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..constants import SEVERITIES
from ..corruptions.c_bar import C_BAR_CORRUPTIONS, C_BAR_SEVERITY_PARAMETERS
from .benchmarks import BENCHMARKS, RELEASE_ENCODINGS, Benchmark, _names
from .local import ImageFolderSource, _ClassFolder, _subdirs
from .samples import SchemaError, Source

IMAGENET_C_BAR_NAME = "imagenet-c-bar"


@dataclass(frozen=True)
class CBarBenchmark(Benchmark):
    """ImageNet-C-bar: its "corruptions" option knows its own 10 names (and "all"), generated or released."""

    def _check_option(self, key: str, value: Any, generated: bool) -> Any:
        if key == "corruptions":
            return _names(value, self.corruptions, {"all": self.corruptions}, "corruptions", "corruption")
        return super()._check_option(key, value, generated)

    def own_folder_source(self, root: str, selection: Mapping[str, Any]) -> Source:
        return CBarFolderSource(root, **selection)

    def own_generated_source(
        self, clean: Source, selection: Mapping[str, Any], seed: int, release_encoding: str
    ) -> Source:
        return generated_c_bar_source(
            clean, selection.get("corruptions"), selection.get("severities"), seed, release_encoding
        )


IMAGENET_C_BAR = CBarBenchmark(
    name=IMAGENET_C_BAR_NAME,
    description="ImageNet-C-bar: ImageNet validation images under 10 corruptions chosen to be perceptually far "
    "from ImageNet-C's (noises, sparkles, caustic refraction, checkerboard cut-out, ...) at 5 severities, 224 x 224; "
    "headline the mean top-1 error over the cells (the repository's overall-avg, no AlexNet normalisation).",
    citation="Mintun et al., On Interaction Between Augmentations and Corruptions in Natural Corruption "
    "Robustness, NeurIPS 2021",
    task="classification",
    label_space="imagenet-1k",
    kind="corruption",
    corruptions=C_BAR_CORRUPTIONS,
    severities=SEVERITIES,
    folder_layout="corruption_severity",
    generated_from="imagenet-val",
    released_size=224,
    mean_error_headline=True,
)
BENCHMARKS.register(IMAGENET_C_BAR.name, IMAGENET_C_BAR)
# make_imagenet_c_bar.py saves JPEG quality 85, as make_imagenet_c.py.
RELEASE_ENCODINGS[IMAGENET_C_BAR.name] = ("jpeg-85", "none")


def severity_folders(corruption: str) -> dict[str, int]:
    """The severity (1..5) of each severity folder name of `corruption`: the release's copy ("1".."5") and
    make_imagenet_c_bar.py's output (the parameter, "{:.2f}")."""
    parameters = C_BAR_SEVERITY_PARAMETERS[corruption]
    return {
        **{str(k): k for k in SEVERITIES},
        **{f"{value:.2f}": k for k, value in enumerate(parameters, start=1)},
    }


class CBarFolderSource(ImageFolderSource):
    """An ImageNet-C-bar folder, `<corruption>/<severity>/<wnid>/<file>`, whose severity folders are 1..5 (the
    release's copy) or the parameters (make_imagenet_c_bar.py's output); any other name is a SchemaError that lists
    the valid ones. The root may also be a single corruption's or cell's folder (read as `ImageFolderSource` does,
    severities 1..5 only)."""

    def __init__(self, root: str | os.PathLike, **options: Any) -> None:
        super().__init__(root, layout="corruption_severity", corruption_names=C_BAR_CORRUPTIONS, **options)

    def _corruption_folders(self) -> list[_ClassFolder]:
        present = _subdirs(self.root)
        if not present or any(name not in C_BAR_CORRUPTIONS for name in present):
            # One corruption's or cell's folder, or a bad name: the parent reads it or says what is wrong.
            return super()._corruption_folders()
        missing = [c for c in self.corruptions or () if c not in present]
        if missing:
            raise SchemaError(f"{self.root}: corruption {missing[0]!r} not found; present: {present}.")
        folders = []
        for corruption in (c for c in C_BAR_CORRUPTIONS if c in present):
            if self.corruptions is not None and corruption not in self.corruptions:
                continue
            known = severity_folders(corruption)
            levels = {}
            for level in _subdirs(os.path.join(self.root, corruption)):
                if level not in known:
                    raise SchemaError(
                        f"{self.root}/{corruption}: folder {level!r} is not a severity of {corruption}; expected "
                        f"1..5 or the parameters {', '.join(k for k in known if not k.isdigit())}."
                    )
                if known[level] in levels:
                    raise SchemaError(f"{self.root}/{corruption}: severity {known[level]} is in two folders.")
                levels[known[level]] = level
            for severity in sorted(levels):
                if self.severities is None or severity in self.severities:
                    metadata = {**self.metadata, "corruption": corruption, "severity": severity}
                    path = os.path.join(self.root, corruption, levels[severity])
                    folders += self._class_folders(path, f"{corruption}/{severity}/", metadata)
            absent = [s for s in self.severities or () if s not in levels]
            if absent:
                raise SchemaError(f"{self.root}/{corruption}: severity {absent[0]} not found.")
        return folders


def generated_c_bar_source(
    clean: Source,
    corruptions: Sequence[str] | None = None,
    severities: Sequence[int] | None = None,
    seed: int = 0,
    release_encoding: str = "jpeg-85",
) -> Source:
    """ImageNet-C-bar made on the fly from `clean` (imagenet-val): `GeneratedSource` with a `CBarRecipe`."""
    from .c_bar_generated import CBarRecipe
    from .generated import GeneratedSource

    jpeg_quality = 85 if release_encoding == "jpeg-85" else None
    return GeneratedSource(clean, CBarRecipe(corruptions, severities, seed, jpeg_quality))


__all__ = [
    "IMAGENET_C_BAR",
    "IMAGENET_C_BAR_NAME",
    "CBarBenchmark",
    "CBarFolderSource",
    "generated_c_bar_source",
    "severity_folders",
]
