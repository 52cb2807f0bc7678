# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""`load_classifier(spec)`: a `Classifier` from a transformers folder or Hub id, a timm spec (`timm/<name>`,
`timm/random-init:<name>`, `timm/local-dir:<folder>`, `timm/hf-hub:<org/name>`) or a folder timm wrote,
`builtin:<name>`, one of Park & Kim's four CIFAR-100 checkpoints (`park-kim:<architecture>[:<path or URL>]`, or the
release URL or a path of the file as released; see `park_kim.release`), or an in-memory module.

Imports run one way: this module uses `classifier` (the adapter), `builtin` (the builtin models), `timm_loading`
(the timm routes), `park_kim` (Park & Kim's checkpoints) and `preprocessing`; none of them imports it back.
"""

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch
from torch import nn

from ..constants import is_hub_id
from .builtin import create_builtin, list_builtin_models
from .classifier import Classifier
from .park_kim.release import ARCHITECTURES as PARK_KIM_ARCHITECTURES
from .park_kim.release import PREFIX as PARK_KIM
from .park_kim.release import RELEASE_URL as PARK_KIM_RELEASE_URL
from .park_kim.release import load_park_kim, parse_park_kim_spec, release_identity
from .preprocessing import Preprocessing
from .stored_dtype import folder_stored_dtype, hub_cache_stored_dtype
from .timm_loading import LOCAL_DIR, is_timm_folder, load_timm

# from_pretrained keywords that also apply to AutoImageProcessor.
_HUB_KWARGS = (
    "revision",
    "token",
    "cache_dir",
    "local_files_only",
    "trust_remote_code",
    "subfolder",
    "force_download",
)


def _resolve_dtype(dtype: torch.dtype | str | None) -> torch.dtype | None:
    if dtype is None:
        return None
    resolved = getattr(torch, dtype, None) if isinstance(dtype, str) else dtype
    if not isinstance(resolved, torch.dtype) or not resolved.is_floating_point:
        raise ValueError(f"dtype must be a floating torch dtype (or its name), got {dtype!r}.")
    return resolved


def _accepted_forms() -> str:
    return (
        "accepted forms: a local folder saved with save_pretrained (config.json + preprocessor_config.json) or "
        "with timm.models.save_for_hf; a Hub id 'org/name' of a transformers image-classification model; "
        "'timm/<model_name>' (timm's pretrained weights), 'timm/random-init:<model_name>' (random weights), "
        "'timm/local-dir:<folder>', 'timm/hf-hub:<org/name>'; 'builtin:<name>' with name in "
        f"{list_builtin_models()}; Park & Kim's CIFAR-100 checkpoints: '{PARK_KIM}<architecture>' (its release "
        f"file, downloaded once), '{PARK_KIM}<architecture>:<path or URL>', or a path or URL of a file named as "
        f"released under {PARK_KIM_RELEASE_URL}, architecture in {list(PARK_KIM_ARCHITECTURES)}; or, from Python, "
        "an nn.Module with preprocessing=Preprocessing(...)."
    )


def _no_processor_message(spec: str, error: Exception) -> str:
    """What to do about a transformers folder or repo without an image processor, for CLI and Python users."""
    example = (
        '{"image_processor_type": "ViTImageProcessor", "do_resize": true, "size": {"height": 224, "width": 224}, '
        '"resample": 3, "do_rescale": true, "rescale_factor": 0.00392156862745098, "do_normalize": true, '
        '"image_mean": [0.485, 0.456, 0.406], "image_std": [0.229, 0.224, 0.225]}'
    )
    return (
        f"{spec!r} has no image processor, so how its model expects images (size, resampling, mean and std) is "
        f"unknown ({type(error).__name__}: {error}). Save the processor it was trained with into the folder "
        "(processor.save_pretrained(folder)), or write preprocessor_config.json there with the model's own "
        f"values, e.g. {example} (resample 3 is bicubic, 2 bilinear). From Python, "
        "load_classifier(..., preprocessing=Preprocessing(...)) also works."
    )


def _load_transformers(
    spec: str, preprocessing: Preprocessing | None, dtype: torch.dtype, kwargs: dict[str, Any]
) -> tuple[nn.Module, Preprocessing, str | None]:
    """The model in `dtype` (transformers 5 would keep the stored dtype: its default is dtype="auto"), its
    preprocessing and its stored dtype."""
    from transformers import AutoImageProcessor, AutoModelForImageClassification

    model = AutoModelForImageClassification.from_pretrained(spec, **kwargs, dtype=dtype)
    hub_kwargs = {key: kwargs[key] for key in _HUB_KWARGS if key in kwargs}
    if os.path.isdir(spec):
        stored = folder_stored_dtype(os.path.join(spec, kwargs.get("subfolder") or ""))
    else:
        stored = hub_cache_stored_dtype(spec, **hub_kwargs)
    if preprocessing is None:
        try:
            processor = AutoImageProcessor.from_pretrained(spec, **hub_kwargs)
        except (OSError, ValueError) as err:
            raise ValueError(_no_processor_message(spec, err)) from err
        preprocessing = Preprocessing.from_image_processor(processor)
    return model, preprocessing, stored


def load_classifier(
    spec: str | os.PathLike | nn.Module,
    *,
    preprocessing: Preprocessing | None = None,
    id2label: Mapping[int, str] | None = None,
    device: torch.device | str | None = None,
    dtype: torch.dtype | str | None = None,
    name: str | None = None,
    **kwargs: Any,
) -> Classifier:
    """Build a `Classifier` in eval mode from a model spec.

    Args:
        spec: a local folder or Hub id ("org/name") of a transformers image-classification model
            (model via `AutoModelForImageClassification`, preprocessing from its `AutoImageProcessor`);
            "timm/<name>" (`timm.create_model(name, pretrained=kwargs.get("pretrained", True), ...)`,
            preprocessing from timm's data config), "timm/random-init:<name>" (random weights, no download),
            "timm/local-dir:<folder>" or a plain folder written by `timm.models.save_for_hf` (its weights and
            pretrained_cfg), "timm/hf-hub:<org/name>" (offline: from the Hub cache); see
            `hf_vitrobust.models.timm_loading`. "builtin:<name>" (see `list_builtin_models()`). One of Park &
            Kim's CIFAR-100 checkpoints: "park-kim:<architecture>", "park-kim:<architecture>:<path or URL>", or a
            path or URL whose file name is the released one (see `hf_vitrobust.models.park_kim.release`). Or an
            `nn.Module`, which needs `preprocessing`.
        preprocessing: overrides the derived preprocessing (required for an nn.Module).
        id2label: overrides the class names.
        device, dtype: where and in which floating dtype to put the model. Models loaded from files run in
            float32 unless `dtype` is given, whatever dtype their weights were stored in (that one is
            `Classifier.stored_dtype`); an in-memory module keeps its dtype unless `dtype` is given.
        name: display name (defaults to the spec).
        **kwargs: passed to `from_pretrained` (transformers), `timm.create_model` (timm, e.g.
            `pretrained=False, num_classes=10`) or the builtin builder.
    """
    if preprocessing is not None and not isinstance(preprocessing, Preprocessing):
        raise TypeError(f"preprocessing must be a Preprocessing, got {type(preprocessing).__name__}.")
    torch_dtype = _resolve_dtype(dtype)
    run_dtype = torch_dtype or torch.float32
    labels = id2label
    stored = None
    if isinstance(spec, nn.Module):
        if preprocessing is None:
            raise ValueError("An in-memory nn.Module needs preprocessing=Preprocessing(...).")
        if kwargs:
            raise TypeError(f"Unexpected keyword arguments for an in-memory module: {sorted(kwargs)}.")
        module, spec_str = spec, f"module:{type(spec).__name__}"
        if torch_dtype is not None:
            module = module.to(torch_dtype)
    elif isinstance(spec, str | os.PathLike):
        spec_str = os.fspath(spec)
        if spec_str.startswith("builtin:"):
            built = create_builtin(spec_str.removeprefix("builtin:"), **kwargs)
            module = built.module
            preprocessing = built.preprocessing if preprocessing is None else preprocessing
            labels = built.id2label if labels is None else labels
            module, stored = module.to(run_dtype), built.stored_dtype
        elif parse_park_kim_spec(spec_str) is not None:
            if kwargs:
                raise TypeError(f"Unexpected keyword arguments for {spec_str!r}: {sorted(kwargs)}.")
            park_kim = load_park_kim(spec_str)
            preprocessing = park_kim.preprocessing if preprocessing is None else preprocessing
            labels = park_kim.id2label if labels is None else labels
            module, stored = park_kim.module.to(run_dtype), park_kim.stored_dtype
        elif spec_str.startswith("timm/") or (os.path.isdir(spec_str) and is_timm_folder(Path(spec_str))):
            # A folder written by timm (save_for_hf) is timm's format, which transformers cannot load.
            timm_name = (
                spec_str.removeprefix("timm/") if spec_str.startswith("timm/") else LOCAL_DIR + spec_str
            )
            module, preprocessing, timm_labels, stored = load_timm(timm_name, preprocessing, kwargs)
            labels = timm_labels if labels is None else labels
            module = module.to(run_dtype)
        elif os.path.isdir(spec_str) or (is_hub_id(spec_str) and not os.path.exists(spec_str)):
            module, preprocessing, stored = _load_transformers(spec_str, preprocessing, run_dtype, kwargs)
        else:
            what = (
                "is a file, not a model folder"
                if os.path.isfile(spec_str)
                else "is not a recognised model spec"
            )
            raise ValueError(f"{spec_str!r} {what}; {_accepted_forms()}")
    else:
        raise ValueError(f"Unsupported model spec of type {type(spec).__name__}; {_accepted_forms()}")
    classifier = Classifier(
        module, preprocessing, id2label=labels, name=name or spec_str, spec=spec_str, stored_dtype=stored
    )
    if device is not None:
        classifier = classifier.to(torch.device(device))
    return classifier.eval()


def checkpoint_identity(spec: str) -> str:
    """The name of the weights `spec` loads, as the published table writes a checkpoint (`model_id`): the release
    URL for any form of a Park & Kim checkpoint (`park_kim.release_identity`), else the spec itself. Two specs with
    the same identity are the same weights for published-number matching."""
    try:
        identity = release_identity(str(spec))
    except ValueError:  # "park-kim:<unknown>" names no release
        identity = None
    return identity or str(spec)


__all__ = ["checkpoint_identity", "load_classifier"]
