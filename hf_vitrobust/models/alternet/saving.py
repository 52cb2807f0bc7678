# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Save an AlterNet folder that loads anywhere: natively with hf_vitrobust, as remote code without it."""

import os

from transformers import ConvNextImageProcessor

from .configuration_alternet import AlterNetConfig
from .image_processing_alternet import alternet_image_processor
from .modeling_alternet import AlterNetPreTrainedModel


def save_alternet(
    model: AlterNetPreTrainedModel,
    save_directory: str | os.PathLike,
    image_processor: ConvNextImageProcessor | None = None,
    remote_code: bool = True,
) -> None:
    """Write safetensors weights, config and image processor to `save_directory`.

    With `remote_code=True` the model files are copied beside the weights and `auto_map` is written into the
    config, so `AutoModelForImageClassification.from_pretrained(folder, trust_remote_code=True)` works in a
    Python without hf_vitrobust, and `pipeline("image-classification", model=folder)` works with it.
    """
    model_class = type(model)
    auto_class = "AutoModelForImageClassification" if hasattr(model, "classifier") else "AutoModel"
    # transformers keeps remote-code state on the classes (`_auto_class`) and the config (`auto_map`); set it for
    # this save only, so that one call leaves no trace on the next.
    previous = (
        AlterNetConfig._auto_class,
        model_class._auto_class,
        model.config.__dict__.pop("auto_map", None),
    )
    try:
        AlterNetConfig._auto_class = "AutoConfig" if remote_code else None
        model_class._auto_class = auto_class if remote_code else None
        model.save_pretrained(save_directory, safe_serialization=True)
    finally:
        AlterNetConfig._auto_class, model_class._auto_class, auto_map = previous
        model.config.__dict__.pop("auto_map", None)
        if auto_map is not None:
            model.config.auto_map = auto_map
    (image_processor or alternet_image_processor(model.config)).save_pretrained(save_directory)


__all__ = ["save_alternet"]
