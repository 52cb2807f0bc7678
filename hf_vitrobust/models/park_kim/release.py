# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Park & Kim's four released CIFAR-100 checkpoints ("How Do Vision Transformers Work?", ICLR 2022), as models.

The how-do-vits-work README (commit 9571ff1) links four files of the `how-do-vits-work-storage` v0.1 GitHub release,
each `torch.save({"name": ..., "state_dict": ...})` of their training code, loaded there as `checkpoint["state_dict"]`:

    resnet-50  resnet_50_cifar100_691cc9a9e4.pth.tar  their own `models.get_model("resnet_50", stem=False)`
    vit-ti     vit_ti_cifar100_9857b21357.pth.tar     timm VisionTransformer
    pit-ti     pit_ti_cifar100_0645889efb.pth.tar     timm PoolingVisionTransformer
    swin-ti    swin_ti_cifar100_ec2894492b.pth.tar    timm SwinTransformer

Specs `load_classifier` accepts for them:
  - the release URL, `RELEASE_URL + <file>`, or any URL or local path whose file name is one of the four;
  - `park-kim:<architecture>`: that architecture's release URL;
  - `park-kim:<architecture>:<path or URL>`: a renamed copy.
A URL is downloaded once into torch's hub cache (`torch.hub.get_dir()/checkpoints/<file name>`) and read from there
afterwards; offline (HF_HUB_OFFLINE) a URL that is not there is an error that names the file and the path to put it
at. The 10 hex digits of the file names are not checked: they are the run id their notebooks use (`uid =
"691cc9a9e4"` in losslandscape.ipynb), and whether they are a sha256 prefix (torch.hub's convention, which would also
need a "-" before them) could not be verified without the files.

Files are read with `torch.load(weights_only=True)`: tensors and plain Python values only. Their checkpoints are
dicts of a name, a state dict and, where an optimizer was saved, its state dict, all of which that allows; anything
else (a pickled object of any class) is refused. The preprocessing is their CIFAR-100 test transform
(`ops/datasets.py`: timm's eval transform at 32 px, crop_pct 1.0, bilinear, mean (0.5071, 0.4867, 0.4408), std
(0.2675, 0.2565, 0.2761)): 32x32 images go in unresized.
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

import torch
from torch import nn

from ..alternet.image_processing_alternet import CIFAR100_MEAN, CIFAR100_STD
from ..cifar import CIFAR100_CLASSES
from ..preprocessing import Preprocessing
from ..stored_dtype import tensors_dtype
from .configuration_park_kim_resnet import ParkKimResNetConfig
from .convert_park_kim_resnet_to_hf import convert_park_kim_resnet_state_dict
from .modeling_park_kim_resnet import ParkKimResNetForImageClassification
from .timm_models import TIMM_ARCHITECTURES, build_timm_model, to_current_timm_layout

PREFIX = "park-kim:"
RELEASE_URL = "https://github.com/xxxnell/how-do-vits-work-storage/releases/download/v0.1/"
#: architecture -> the file name of its release.
RELEASE_FILES: dict[str, str] = {
    "resnet-50": "resnet_50_cifar100_691cc9a9e4.pth.tar",
    "vit-ti": "vit_ti_cifar100_9857b21357.pth.tar",
    "pit-ti": "pit_ti_cifar100_0645889efb.pth.tar",
    "swin-ti": "swin_ti_cifar100_ec2894492b.pth.tar",
}
ARCHITECTURES: tuple[str, ...] = tuple(RELEASE_FILES)
CIFAR100_NUM_CLASSES = len(CIFAR100_CLASSES)
#: Their CIFAR-100 test transform (module docstring).
PARK_KIM_CIFAR100_PREPROCESSING = Preprocessing(
    input_size=(32, 32), crop_pct=1.0, interpolation="bilinear", mean=CIFAR100_MEAN, std=CIFAR100_STD
)


def release_url(architecture: str) -> str:
    """The download URL of `architecture`'s released checkpoint."""
    return RELEASE_URL + RELEASE_FILES[_check_architecture(architecture)]


def _check_architecture(architecture: str) -> str:
    if architecture not in RELEASE_FILES:
        raise ValueError(
            f"Unknown Park & Kim architecture {architecture!r}; choose one of {list(ARCHITECTURES)} "
            f"({PREFIX}<architecture>[:<path or URL>])."
        )
    return architecture


def _is_url(location: str) -> bool:
    return location.startswith(("https://", "http://"))


def _file_name(location: str) -> str:
    return location.rstrip("/").rsplit("/", 1)[-1] if _is_url(location) else Path(location).name


class ParkKimSpec(NamedTuple):
    """A parsed spec: the architecture and where its file is (a local path or a URL)."""

    architecture: str
    location: str


def parse_park_kim_spec(spec: str) -> ParkKimSpec | None:
    """The architecture and location a spec names (module docstring), or None when it names none of the four."""
    if spec.startswith(PREFIX):
        architecture, _, location = spec.removeprefix(PREFIX).partition(":")
        _check_architecture(architecture)
        return ParkKimSpec(architecture, location or release_url(architecture))
    by_file = {file: architecture for architecture, file in RELEASE_FILES.items()}
    architecture = by_file.get(_file_name(spec))
    return None if architecture is None else ParkKimSpec(architecture, spec)


def release_identity(spec: str) -> str | None:
    """The release URL of the checkpoint `spec` names (any of the forms above: a local copy with the released file
    name, or a renamed one given with its architecture, stands for the release it says it is); None for a spec that
    names none of the four. Published numbers made with the release match a run of any of its forms."""
    parsed = parse_park_kim_spec(spec)
    return None if parsed is None else release_url(parsed.architecture)


def cached_path(url: str) -> Path:
    """Where a downloaded checkpoint lives: torch.hub's checkpoint cache, under the URL's file name."""
    return Path(torch.hub.get_dir()) / "checkpoints" / _file_name(url)


def _local_file(spec: ParkKimSpec) -> Path:
    """The local file of `spec`, downloading a URL once (module docstring)."""
    if not _is_url(spec.location):
        path = Path(spec.location).expanduser()
        if not path.is_file():
            raise ValueError(
                f"{spec.location} is not a file. Download Park & Kim's {spec.architecture} checkpoint from "
                f"{release_url(spec.architecture)}, or give its URL."
            )
        return path
    from huggingface_hub import constants

    target = cached_path(spec.location)
    if target.is_file():
        return target
    hint = (
        f"Download {_file_name(spec.location)} once (e.g. `curl -L -o {target} {spec.location}`): the URL then loads "
        f"from that cache, and any copy loads by its path ('{PREFIX}{spec.architecture}:<path>' if renamed)."
    )
    if constants.HF_HUB_OFFLINE:
        raise ValueError(
            f"{spec.location} is not in the local cache ({target}) and HF_HUB_OFFLINE is set. {hint}"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        torch.hub.download_url_to_file(spec.location, str(target), progress=True)
    except OSError as error:  # urllib's URLError and HTTPError are OSErrors
        raise ValueError(
            f"Could not download {spec.location} ({type(error).__name__}: {error}). {hint}"
        ) from error
    return target


def read_state_dict(path: str | os.PathLike) -> dict[str, torch.Tensor]:
    """The model tensors of one of their checkpoint files (`checkpoint["state_dict"]`, or a bare state dict), read
    with `torch.load(weights_only=True)`: a file that pickles anything but tensors and plain values is refused."""
    try:
        checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as error:
        raise ValueError(
            f"{path} was refused: it holds more than tensors and plain Python values, and loading it would run "
            f"the code its pickle names. Park & Kim's checkpoints hold only a name, a state dict and an optimizer "
            f"state. ({str(error).splitlines()[0]})"
        ) from error
    except (RuntimeError, EOFError, OSError) as error:
        raise ValueError(
            f"{path} is not a readable torch checkpoint ({type(error).__name__}: {error})."
        ) from error
    state = checkpoint.get("state_dict", checkpoint) if isinstance(checkpoint, Mapping) else None
    if (
        not isinstance(state, Mapping)
        or not state
        or not all(isinstance(v, torch.Tensor) for v in state.values())
    ):
        raise ValueError(
            f"{path} holds no state dict: expected their `{{'state_dict': {{name: tensor}}}}` (or the state dict "
            "itself)."
        )
    return {str(key).removeprefix("module."): tensor for key, tensor in state.items()}


def _build(architecture: str, state_dict: Mapping[str, torch.Tensor]) -> nn.Module:
    """The model of `architecture` holding `state_dict`, loaded strictly. It is built on the meta device and takes the
    checkpoint's tensors as they are (no random initialisation to overwrite), except timm's Swin, whose relative
    position indices and shifted-window masks are buffers that its state dict does not hold: it is built on the CPU.
    """
    device = "cpu" if architecture == "swin-ti" else "meta"
    with torch.device(device):
        if architecture in TIMM_ARCHITECTURES:
            model = build_timm_model(architecture, CIFAR100_NUM_CLASSES)
        else:
            labels = dict(enumerate(CIFAR100_CLASSES))
            config = ParkKimResNetConfig(id2label=labels, label2id={name: i for i, name in labels.items()})
            model = ParkKimResNetForImageClassification(config)
    if architecture in TIMM_ARCHITECTURES:
        weights = to_current_timm_layout(architecture, state_dict, model)
    else:
        weights = convert_park_kim_resnet_state_dict(state_dict, model.config)
    model.load_state_dict(weights, strict=True, assign=device == "meta")
    return model


class ParkKimModel(NamedTuple):
    """What `load_park_kim` returns: the model (eval mode, float32 as stored), its preprocessing, CIFAR-100's class
    names and the stored dtype."""

    module: nn.Module
    preprocessing: Preprocessing
    id2label: dict[int, str]
    stored_dtype: str | None


def load_park_kim(spec: str) -> ParkKimModel:
    """One of Park & Kim's CIFAR-100 checkpoints as a model (module docstring: the specs, the download and the safe
    load). Raises ValueError for a spec that names none of the four, a file that is refused, or weights that do
    not fit the architecture."""
    parsed = parse_park_kim_spec(spec)
    if parsed is None:
        raise ValueError(f"{spec!r} names none of Park & Kim's checkpoints {sorted(RELEASE_FILES.values())}.")
    path = _local_file(parsed)
    state_dict = read_state_dict(path)
    try:
        module = _build(parsed.architecture, state_dict)
    except (RuntimeError, ValueError) as error:
        raise ValueError(
            f"{path} does not fit Park & Kim's CIFAR-100 {parsed.architecture} "
            f"(a renamed file of another architecture? use '{PREFIX}<architecture>:<path>'): {error}"
        ) from error
    labels = dict(enumerate(CIFAR100_CLASSES))
    return ParkKimModel(
        module.eval(), PARK_KIM_CIFAR100_PREPROCESSING, labels, tensors_dtype(state_dict.values())
    )


__all__ = [
    "ARCHITECTURES",
    "PARK_KIM_CIFAR100_PREPROCESSING",
    "PREFIX",
    "RELEASE_FILES",
    "RELEASE_URL",
    "ParkKimModel",
    "ParkKimSpec",
    "cached_path",
    "load_park_kim",
    "parse_park_kim_spec",
    "read_state_dict",
    "release_url",
]
