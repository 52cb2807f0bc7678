"""hf_vitrobust: the robustness science of Vision Transformers, for the Hugging Face ecosystem.

Importing the package registers AlterNet with transformers' Auto classes, so
``AutoModelForImageClassification.from_pretrained(folder)`` needs no ``trust_remote_code``.
"""

from .models import (
    AlterNetConfig,
    AlterNetForImageClassification,
    AlterNetModel,
    AlterNetPreTrainedModel,
    Classifier,
    Preprocessing,
    load_classifier,
)

__version__ = "0.1.0"

__all__ = [
    "AlterNetConfig",
    "AlterNetForImageClassification",
    "AlterNetModel",
    "AlterNetPreTrainedModel",
    "Classifier",
    "Preprocessing",
    "__version__",
    "load_classifier",
]
