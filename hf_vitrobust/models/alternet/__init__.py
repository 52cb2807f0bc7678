"""AlterNet (Park & Kim, ICLR 2022) as a native transformers model."""

from .configuration_alternet import ALTERNET_PRESETS, AlterNetConfig
from .image_processing_alternet import alternet_image_processor
from .modeling_alternet import AlterNetForImageClassification, AlterNetModel, AlterNetPreTrainedModel
from .saving import save_alternet

__all__ = [
    "ALTERNET_PRESETS",
    "AlterNetConfig",
    "AlterNetForImageClassification",
    "AlterNetModel",
    "AlterNetPreTrainedModel",
    "alternet_image_processor",
    "save_alternet",
]
