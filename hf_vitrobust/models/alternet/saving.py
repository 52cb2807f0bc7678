# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Save an AlterNet folder that loads anywhere: natively with hf_vitrobust, as remote code without it.

The config and model classes are registered for the Auto classes (`register_for_auto_class`, in
configuration_alternet.py and modeling_alternet.py), so transformers' `save_pretrained` itself copies the model files
beside the weights and writes `auto_map` into config.json. `save_alternet` adds the image processor, and can write a
native folder instead (no code, no `auto_map`).
"""

import contextlib
import os
from collections.abc import Iterator

from transformers import ConvNextImageProcessor, PreTrainedModel

from .image_processing_alternet import alternet_image_processor
from .modeling_alternet import AlterNetPreTrainedModel


@contextlib.contextmanager
def _without_remote_code(model: PreTrainedModel) -> Iterator[None]:
    """Meanwhile `model.save_pretrained` writes no model files and no `auto_map`: the Auto-class registrations of the
    model and config classes are off, and an `auto_map` the config holds (read from a remote-code folder, or written
    by an earlier save) is set aside. Everything is restored on exit."""
    classes = (type(model), type(model.config))
    registered = [cls.__dict__.get("_auto_class") for cls in classes]
    auto_map = model.config.__dict__.pop("auto_map", None)
    try:
        for cls in classes:
            cls._auto_class = None
        yield
    finally:
        for cls, auto_class in zip(classes, registered, strict=True):
            if auto_class is None:
                with contextlib.suppress(AttributeError):
                    del cls._auto_class
            else:
                cls._auto_class = auto_class
        if auto_map is not None:
            model.config.auto_map = auto_map


def save_alternet(
    model: AlterNetPreTrainedModel,
    save_directory: str | os.PathLike,
    image_processor: ConvNextImageProcessor | None = None,
    remote_code: bool = True,
) -> None:
    """Write safetensors weights, config and image processor to `save_directory`.

    With `remote_code=True` (what `model.save_pretrained` does by itself) the model files are copied beside the weights
    and `auto_map` is written into the config, so `AutoModelForImageClassification.from_pretrained(folder,
    trust_remote_code=True)` works in a Python without hf_vitrobust, and `pipeline("image-classification",
    model=folder)` works with it. `remote_code=False` writes a folder for hf_vitrobust's native classes only.
    """
    with contextlib.nullcontext() if remote_code else _without_remote_code(model):
        model.save_pretrained(save_directory, safe_serialization=True)
    (image_processor or alternet_image_processor(model.config)).save_pretrained(save_directory)


__all__ = ["save_alternet"]
