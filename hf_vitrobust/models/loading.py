# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""`load_classifier(spec)`: a `Classifier` from a transformers folder or Hub id, `timm/<name>`, `builtin:<name>`,
or an in-memory module.

Imports run one way: this module uses `classifier` (the adapter), `builtin` (the builtin models) and `preprocessing`;
none of them imports it back.
"""

import os
import re
from collections.abc import Mapping
from typing import Any

import torch
from torch import nn

from ..registry import did_you_mean
from .builtin import create_builtin, list_builtin_models
from .classifier import Classifier
from .preprocessing import Preprocessing, _pair

_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")
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
        "accepted forms: a local folder saved with save_pretrained (config.json + preprocessor_config.json); "
        "a Hub id 'org/name' of a transformers image-classification model; 'timm/<model_name>' "
        "(timm.create_model); 'builtin:<name>' with name in "
        f"{list_builtin_models()}; or an nn.Module together with preprocessing=Preprocessing(...)."
    )


def _load_transformers(
    spec: str, preprocessing: Preprocessing | None, dtype: torch.dtype | None, kwargs: dict[str, Any]
) -> tuple[nn.Module, Preprocessing]:
    from transformers import AutoImageProcessor, AutoModelForImageClassification

    model_kwargs = dict(kwargs)
    if dtype is not None:
        model_kwargs["dtype"] = dtype
    model = AutoModelForImageClassification.from_pretrained(spec, **model_kwargs)
    if preprocessing is None:
        hub_kwargs = {key: kwargs[key] for key in _HUB_KWARGS if key in kwargs}
        try:
            processor = AutoImageProcessor.from_pretrained(spec, **hub_kwargs)
        except (OSError, ValueError) as err:
            raise ValueError(
                f"Could not load an image processor for {spec!r} ({err}); pass preprocessing=Preprocessing(...)."
            ) from err
        preprocessing = Preprocessing.from_image_processor(processor)
    return model, preprocessing


def _timm_input_size(model: nn.Module, data_config: Mapping[str, Any]) -> tuple[int, int]:
    """A fixed-size timm model (ViT built with img_size=...) takes its patch embedding's size."""
    patch_embed = getattr(model, "patch_embed", None)
    img_size = getattr(patch_embed, "img_size", None)
    dynamic = getattr(model, "dynamic_img_size", False) or getattr(patch_embed, "dynamic_img_size", False)
    if img_size is not None and not dynamic:
        return _pair(tuple(img_size) if not isinstance(img_size, int) else img_size, "img_size")
    return tuple(data_config["input_size"][-2:])


def _timm_id2label(model: nn.Module) -> dict[int, str]:
    from timm.data import ImageNetInfo, infer_imagenet_subset

    num_classes = getattr(model, "num_classes", 0)
    if not num_classes:
        raise ValueError("The timm model has no classifier head (num_classes=0).")
    subset = infer_imagenet_subset(model)
    if subset:
        info = ImageNetInfo(subset)
        if info.num_classes() == num_classes:
            return {i: info.index_to_description(i) for i in range(num_classes)}
    return {i: f"LABEL_{i}" for i in range(num_classes)}


def _load_timm(
    name: str, preprocessing: Preprocessing | None, kwargs: dict[str, Any]
) -> tuple[nn.Module, Preprocessing, dict[int, str]]:
    import timm
    from timm.data import resolve_data_config

    if not name:
        raise ValueError("Empty timm model name; use 'timm/<model_name>', e.g. 'timm/resnet18'.")
    architecture = name.split(".", 1)[0]
    if not timm.is_model(architecture):
        hint = did_you_mean(
            architecture, timm.list_models(), n=3, display=lambda close: repr(f"timm/{close}")
        )
        raise ValueError(f"Unknown timm model {name!r}.{hint}")
    create_kwargs = dict(kwargs)
    pretrained = bool(create_kwargs.pop("pretrained", True))
    model = timm.create_model(name, pretrained=pretrained, **create_kwargs)
    if preprocessing is None:
        data_config = resolve_data_config({}, model=model)
        preprocessing = Preprocessing.from_timm(data_config, input_size=_timm_input_size(model, data_config))
    return model, preprocessing, _timm_id2label(model)


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
            preprocessing from timm's data config); "builtin:<name>" (see `list_builtin_models()`); or an
            `nn.Module`, which needs `preprocessing`.
        preprocessing: overrides the derived preprocessing (required for an nn.Module).
        id2label: overrides the class names.
        device, dtype: where and in which floating dtype to put the model.
        name: display name (defaults to the spec).
        **kwargs: passed to `from_pretrained` (transformers), `timm.create_model` (timm, e.g.
            `pretrained=False, num_classes=10`) or the builtin builder.
    """
    if preprocessing is not None and not isinstance(preprocessing, Preprocessing):
        raise TypeError(f"preprocessing must be a Preprocessing, got {type(preprocessing).__name__}.")
    torch_dtype = _resolve_dtype(dtype)
    labels = id2label
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
            if torch_dtype is not None:
                module = module.to(torch_dtype)
        elif spec_str.startswith("timm/"):
            module, derived, timm_labels = _load_timm(spec_str.removeprefix("timm/"), preprocessing, kwargs)
            preprocessing = derived
            labels = timm_labels if labels is None else labels
            if torch_dtype is not None:
                module = module.to(torch_dtype)
        elif os.path.isdir(spec_str) or (_HUB_ID.match(spec_str) and not os.path.exists(spec_str)):
            module, preprocessing = _load_transformers(spec_str, preprocessing, torch_dtype, kwargs)
        else:
            what = (
                "is a file, not a model folder"
                if os.path.isfile(spec_str)
                else "is not a recognised model spec"
            )
            raise ValueError(f"{spec_str!r} {what}; {_accepted_forms()}")
    else:
        raise ValueError(f"Unsupported model spec of type {type(spec).__name__}; {_accepted_forms()}")
    classifier = Classifier(module, preprocessing, id2label=labels, name=name or spec_str, spec=spec_str)
    if device is not None:
        classifier = classifier.to(torch.device(device))
    return classifier.eval()


__all__ = ["load_classifier"]
