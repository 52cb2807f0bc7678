# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The timm routes of `load_classifier`: a model of timm's registry, with or without its pretrained weights, a folder
that timm wrote (`timm.models.save_for_hf` / `push_to_hf_hub`), and a timm model repo on the Hub.

Specs (after the "timm/" prefix):
  - `<name>`: `timm.create_model(name, pretrained=True)`: timm's pretrained weights (downloaded, or from the Hub
    cache);
  - `random-init:<name>`: the same architecture with random weights, nothing downloaded;
  - `local-dir:<folder>`: timm's own folder format (config.json with "architecture" and "pretrained_cfg", and
    model.safetensors or pytorch_model.bin), loaded by timm with its weights and its preprocessing;
  - `hf-hub:<org/name>[@revision]`: the same format on the Hub; offline, from the local Hugging Face cache.
A folder given as a plain path is routed to `local-dir:` when its config.json is timm's (`is_timm_folder`).

Offline (HF_HUB_OFFLINE, or no network), weights or a repo missing from the cache give an error naming the fix.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from torch import nn

from ..registry import did_you_mean
from .preprocessing import Preprocessing, _pair
from .stored_dtype import folder_stored_dtype, hub_cache_stored_dtype

LOCAL_DIR = "local-dir:"
HF_HUB = "hf-hub:"
RANDOM_INIT = "random-init:"
# What timm's load_state_dict_from_path reads from a folder (preferred names first, then by extension);
# .bin/.pth files are read with torch.load(weights_only=True) by timm.
_WEIGHT_SUFFIXES = (".safetensors", ".pth", ".pth.tar", ".bin")


def read_timm_config(folder: Path) -> dict[str, Any] | None:
    """config.json of `folder` when timm wrote it (an "architecture" and no transformers "model_type"), else
    None. transformers' own timm folders (TimmWrapper, "model_type": "timm_wrapper") are not timm's format."""
    config_file = Path(folder) / "config.json"
    if not config_file.is_file():
        return None
    try:
        config = json.loads(config_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(config, Mapping) or "model_type" in config or not config.get("architecture"):
        return None
    return dict(config)


def is_timm_folder(folder: Path) -> bool:
    """Whether `folder` holds a model in timm's own format (`timm.models.save_for_hf`), which transformers'
    AutoModel cannot load (it fails with "multiple values for keyword argument 'num_classes'")."""
    return read_timm_config(folder) is not None


def _check_local_dir(path: str) -> None:
    import timm

    folder = Path(path).expanduser()
    if not folder.is_dir():
        raise ValueError(f"timm/{LOCAL_DIR}{path}: {folder} is not a folder.")
    config = read_timm_config(folder)
    if config is None:
        raise ValueError(
            f"timm/{LOCAL_DIR}{path}: {folder / 'config.json'} is missing or not timm's format (it needs "
            '"architecture" and "pretrained_cfg", as timm.models.save_for_hf(model, folder) writes them).'
        )
    architecture = str(config["architecture"])
    if not timm.is_model(architecture):
        hint = did_you_mean(architecture, timm.list_models(), n=3)
        raise ValueError(
            f"timm/{LOCAL_DIR}{path}: config.json names the architecture {architecture!r}, which this timm "
            f"({timm.__version__}) does not know.{hint}"
        )
    if not any(file.name.endswith(_WEIGHT_SUFFIXES) for file in folder.iterdir() if file.is_file()):
        raise ValueError(
            f"timm/{LOCAL_DIR}{path}: {folder} holds no weights (model.safetensors or pytorch_model.bin, as "
            "timm.models.save_for_hf writes them)."
        )


def _check_registry_name(name: str) -> None:
    import timm

    architecture = name.split(".", 1)[0]
    if not architecture or not timm.is_model(architecture):
        hint = did_you_mean(
            architecture, timm.list_models(), n=3, display=lambda close: repr(f"timm/{close}")
        )
        raise ValueError(f"Unknown timm model {name!r}.{hint}")


def _offline_error(name: str, source: str | None, error: Exception) -> ValueError:
    """The error for weights or a repo that the Hub cache lacks while the Hub cannot be reached."""
    from huggingface_hub import constants

    why = "HF_HUB_OFFLINE is set" if constants.HF_HUB_OFFLINE else "the Hub could not be reached"
    if source == "hf-hub":
        return ValueError(
            f"timm/{HF_HUB}{name} is not in the local Hugging Face cache and {why}. Download it once online "
            f"(`hf download {name.split('@', 1)[0]}`), or save the model to a folder and use "
            f"timm/{LOCAL_DIR}<folder>. ({type(error).__name__})"
        )
    return ValueError(
        f"timm's pretrained weights for {name!r} are not in the local Hugging Face cache and {why}. Download them "
        f"once online (python -c \"import timm; timm.create_model('{name}', pretrained=True)\"), use your own "
        f"weights with timm/{LOCAL_DIR}<folder> (a folder written by timm.models.save_for_hf), or evaluate the "
        f"architecture with random weights: timm/{RANDOM_INIT}{name}. ({type(error).__name__})"
    )


def _timm_input_size(model: nn.Module, data_config: Mapping[str, Any]) -> tuple[int, int]:
    """A fixed-size timm model (ViT built with img_size=...) takes its patch embedding's size."""
    patch_embed = getattr(model, "patch_embed", None)
    img_size = getattr(patch_embed, "img_size", None)
    dynamic = getattr(model, "dynamic_img_size", False) or getattr(patch_embed, "dynamic_img_size", False)
    if img_size is not None and not dynamic:
        return _pair(tuple(img_size) if not isinstance(img_size, int) else img_size, "img_size")
    return tuple(data_config["input_size"][-2:])


def _timm_id2label(model: nn.Module) -> dict[int, str]:
    """The model's class names: a saved folder's `label_names`, else ImageNet's where the head fits, else
    LABEL_i."""
    from timm.data import ImageNetInfo, infer_imagenet_subset

    num_classes = getattr(model, "num_classes", 0)
    if not num_classes:
        raise ValueError("The timm model has no classifier head (num_classes=0).")
    saved = (getattr(model, "pretrained_cfg", None) or {}).get("label_names")
    if isinstance(saved, list | tuple) and len(saved) == num_classes:
        return {i: str(label) for i, label in enumerate(saved)}
    subset = infer_imagenet_subset(model)
    if subset:
        info = ImageNetInfo(subset)
        if info.num_classes() == num_classes:
            return {i: info.index_to_description(i) for i in range(num_classes)}
    return {i: f"LABEL_{i}" for i in range(num_classes)}


def _timm_stored_dtype(
    model_name: str, source: str | None, model: nn.Module, pretrained: bool, cache_dir: Any
) -> str | None:
    """The dtype timm's weights were stored in (`stored_dtype`), read from the files timm loaded them from: the
    folder, the Hub repo's cached files, or those of the pretrained config's `hf_hub_id`. None for random weights
    and for weights that came from a URL."""
    if not pretrained:
        return None
    if source == "local-dir":
        return folder_stored_dtype(model_name.removeprefix(LOCAL_DIR))
    if source == "hf-hub":
        repo, _, revision = model_name.removeprefix(HF_HUB).partition("@")
    else:
        repo, revision = (getattr(model, "pretrained_cfg", None) or {}).get("hf_hub_id"), ""
    if not repo:
        return None
    return hub_cache_stored_dtype(repo, revision=revision or None, cache_dir=cache_dir)


def load_timm(
    name: str, preprocessing: Preprocessing | None, kwargs: dict[str, Any]
) -> tuple[nn.Module, Preprocessing, dict[int, str], str | None]:
    """The module, preprocessing (timm's data config of the model: mean, std, input size, interpolation,
    crop_pct), class names and stored dtype (`stored_dtype`) of a timm spec, `name` being what follows "timm/"
    (module docstring). timm builds the model in float32 and copies the weights into it, whatever their stored
    dtype.

    `kwargs` go to `timm.create_model` (e.g. `num_classes=10`, `cache_dir=...`); `pretrained` defaults to True
    (False for `random-init:`). The spec is checked before any model is built."""
    import timm
    from huggingface_hub.errors import LocalEntryNotFoundError, OfflineModeIsEnabled
    from timm.data import resolve_data_config

    if not name:
        raise ValueError(
            "Empty timm model name; use 'timm/<model_name>', e.g. 'timm/resnet18', or "
            f"'timm/{LOCAL_DIR}<folder>', 'timm/{HF_HUB}<org/name>', 'timm/{RANDOM_INIT}<model_name>'."
        )
    create_kwargs = dict(kwargs)
    pretrained = bool(create_kwargs.pop("pretrained", True))
    source = None
    if name.startswith(RANDOM_INIT):
        if kwargs.get("pretrained"):
            raise ValueError(f"timm/{name} means random weights: leave out pretrained=True.")
        name, pretrained = name.removeprefix(RANDOM_INIT), False
        _check_registry_name(name)
        model_name = name
    elif name.startswith(LOCAL_DIR):
        path = name.removeprefix(LOCAL_DIR)
        _check_local_dir(path)
        model_name, source = f"{LOCAL_DIR}{Path(path).expanduser()}", "local-dir"
    elif name.startswith(HF_HUB):
        repo = name.removeprefix(HF_HUB)
        if repo.split("@", 1)[0].count("/") != 1:
            raise ValueError(f"timm/{name}: give the Hub repository as 'org/name' (optionally '@revision').")
        model_name, source = name, "hf-hub"
    else:
        if ":" in name:
            raise ValueError(
                f"timm/{name}: unknown timm source {name.split(':', 1)[0]!r}; use timm/{LOCAL_DIR}<folder>, "
                f"timm/{HF_HUB}<org/name> or timm/{RANDOM_INIT}<model_name>."
            )
        _check_registry_name(name)
        model_name = name
    try:
        model = timm.create_model(model_name, pretrained=pretrained, **create_kwargs)
    except (LocalEntryNotFoundError, OfflineModeIsEnabled) as error:
        raise _offline_error(name.removeprefix(HF_HUB), source, error) from error
    if preprocessing is None:
        data_config = resolve_data_config({}, model=model)
        preprocessing = Preprocessing.from_timm(data_config, input_size=_timm_input_size(model, data_config))
    stored = _timm_stored_dtype(model_name, source, model, pretrained, create_kwargs.get("cache_dir"))
    return model, preprocessing, _timm_id2label(model), stored


__all__ = ["HF_HUB", "LOCAL_DIR", "RANDOM_INIT", "is_timm_folder", "load_timm", "read_timm_config"]
