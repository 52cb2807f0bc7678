"""Models: AlterNet and Park & Kim's ResNet as native transformers models, and the `Classifier` adapter for any
classifier."""

from transformers import AutoConfig, AutoModel, AutoModelForImageClassification

from .alternet import (
    ALTERNET_PRESETS,
    AlterNetConfig,
    AlterNetForImageClassification,
    AlterNetModel,
    AlterNetPreTrainedModel,
)
from .classifier import Classifier
from .loading import checkpoint_identity, load_classifier
from .park_kim import ParkKimResNetConfig, ParkKimResNetForImageClassification, ParkKimResNetModel
from .preprocessing import Preprocessing

AutoConfig.register(AlterNetConfig.model_type, AlterNetConfig, exist_ok=True)
AutoModel.register(AlterNetConfig, AlterNetModel, exist_ok=True)
AutoModelForImageClassification.register(AlterNetConfig, AlterNetForImageClassification, exist_ok=True)
AutoConfig.register(ParkKimResNetConfig.model_type, ParkKimResNetConfig, exist_ok=True)
AutoModel.register(ParkKimResNetConfig, ParkKimResNetModel, exist_ok=True)
AutoModelForImageClassification.register(
    ParkKimResNetConfig, ParkKimResNetForImageClassification, exist_ok=True
)

__all__ = [
    "ALTERNET_PRESETS",
    "AlterNetConfig",
    "AlterNetForImageClassification",
    "AlterNetModel",
    "AlterNetPreTrainedModel",
    "Classifier",
    "ParkKimResNetConfig",
    "ParkKimResNetForImageClassification",
    "ParkKimResNetModel",
    "Preprocessing",
    "checkpoint_identity",
    "load_classifier",
]
