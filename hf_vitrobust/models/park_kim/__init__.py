"""Park & Kim's released CIFAR-100 checkpoints (ResNet-50, ViT-Ti, PiT-Ti, Swin-Ti) and their ResNet as a native
transformers model."""

from .configuration_park_kim_resnet import ParkKimResNetConfig
from .convert_park_kim_resnet_to_hf import convert_park_kim_resnet_state_dict, rename_park_kim_resnet_key
from .modeling_park_kim_resnet import (
    ParkKimResNetForImageClassification,
    ParkKimResNetModel,
    ParkKimResNetPreTrainedModel,
)
from .release import (
    ARCHITECTURES,
    PARK_KIM_CIFAR100_PREPROCESSING,
    RELEASE_FILES,
    RELEASE_URL,
    load_park_kim,
    parse_park_kim_spec,
    read_state_dict,
    release_identity,
    release_url,
)
from .timm_models import TIMM_ARCHITECTURES, build_timm_model, to_current_timm_layout

__all__ = [
    "ARCHITECTURES",
    "PARK_KIM_CIFAR100_PREPROCESSING",
    "RELEASE_FILES",
    "RELEASE_URL",
    "TIMM_ARCHITECTURES",
    "ParkKimResNetConfig",
    "ParkKimResNetForImageClassification",
    "ParkKimResNetModel",
    "ParkKimResNetPreTrainedModel",
    "build_timm_model",
    "convert_park_kim_resnet_state_dict",
    "load_park_kim",
    "parse_park_kim_spec",
    "read_state_dict",
    "release_identity",
    "release_url",
    "rename_park_kim_resnet_key",
    "to_current_timm_layout",
]
