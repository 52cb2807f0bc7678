"""Tiny, seeded classifiers of the three families every probe must support: a transformers ViT, a timm CNN (and a
timm ViT) and AlterNet, all at 32x32 with 10 classes, built offline in well under a second."""

import pytest
import timm
import torch
from transformers import ViTConfig, ViTForImageClassification, ViTImageProcessor

from hf_vitrobust.models import AlterNetConfig, AlterNetForImageClassification, Classifier, Preprocessing

IMAGE_SIZE = 32
NUM_CLASSES = 10
PREPROCESSING = Preprocessing(input_size=IMAGE_SIZE, mean=(0.5, 0.5, 0.5), std=(0.25, 0.25, 0.25))


def transformers_vit(seed: int = 0, attn_implementation: str = "sdpa") -> Classifier:
    torch.manual_seed(seed)
    config = ViTConfig(
        image_size=IMAGE_SIZE,
        patch_size=8,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        num_labels=NUM_CLASSES,
        attn_implementation=attn_implementation,
    )
    return Classifier(ViTForImageClassification(config), PREPROCESSING, name="tiny-vit").eval()


def save_tiny_vit(folder, num_labels: int = 1000, seed: int = 0) -> str:
    """A seeded one-layer 32x32 ViT saved as a transformers folder with its processor (a model spec for runs)."""
    torch.manual_seed(seed)
    config = ViTConfig(
        image_size=IMAGE_SIZE,
        patch_size=8,
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_labels=num_labels,
    )
    ViTForImageClassification(config).save_pretrained(folder)
    ViTImageProcessor(size={"height": IMAGE_SIZE, "width": IMAGE_SIZE}).save_pretrained(folder)
    return str(folder)


def timm_cnn(seed: int = 0) -> Classifier:
    torch.manual_seed(seed)
    module = timm.create_model("resnet18", pretrained=False, num_classes=NUM_CLASSES)
    return Classifier(module, PREPROCESSING, name="tiny-resnet18").eval()


def timm_vit(seed: int = 0) -> Classifier:
    torch.manual_seed(seed)
    module = timm.create_model(
        "vit_tiny_patch16_224",
        pretrained=False,
        img_size=IMAGE_SIZE,
        patch_size=8,
        embed_dim=32,
        depth=2,
        num_heads=2,
        num_classes=NUM_CLASSES,
    )
    return Classifier(module, PREPROCESSING, name="tiny-timm-vit").eval()


def alternet(seed: int = 0) -> Classifier:
    torch.manual_seed(seed)
    module = AlterNetForImageClassification(AlterNetConfig.from_preset("alternet-tiny"))
    return Classifier(module, PREPROCESSING, name="alternet-tiny").eval()


# The three families of the "done when", plus a timm ViT (fused attention, timm block layout).
FAMILIES = {
    "transformers_vit": transformers_vit,
    "timm_cnn": timm_cnn,
    "timm_vit": timm_vit,
    "alternet": alternet,
}


@pytest.fixture(params=sorted(FAMILIES))
def family_classifier(request) -> Classifier:
    """Each tiny classifier in turn (use with `from probe_models import family_classifier`)."""
    return FAMILIES[request.param]()


def random_images(n: int, seed: int = 0) -> torch.Tensor:
    """n smooth random images (3, 32, 32) in [0, 1]."""
    generator = torch.Generator().manual_seed(seed)
    coarse = torch.rand(n, 3, 8, 8, generator=generator)
    return torch.nn.functional.interpolate(
        coarse, size=IMAGE_SIZE, mode="bilinear", align_corners=False
    ).clamp(0, 1)
