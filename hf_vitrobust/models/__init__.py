"""Models: AlterNet as a native transformers model, and the `Classifier` adapter for any classifier."""

from transformers import AutoConfig, AutoModel, AutoModelForImageClassification

from .alternet import (
    ALTERNET_PRESETS,
    AlterNetConfig,
    AlterNetForImageClassification,
    AlterNetModel,
    AlterNetPreTrainedModel,
)
from .classifier import Classifier
from .loading import load_classifier
from .preprocessing import Preprocessing

AutoConfig.register(AlterNetConfig.model_type, AlterNetConfig, exist_ok=True)
AutoModel.register(AlterNetConfig, AlterNetModel, exist_ok=True)
AutoModelForImageClassification.register(AlterNetConfig, AlterNetForImageClassification, exist_ok=True)

__all__ = [
    "ALTERNET_PRESETS",
    "AlterNetConfig",
    "AlterNetForImageClassification",
    "AlterNetModel",
    "AlterNetPreTrainedModel",
    "Classifier",
    "Preprocessing",
    "load_classifier",
]
