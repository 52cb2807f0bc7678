"""Tiny, seeded classifiers of the three families every probe must support: a transformers ViT, a timm CNN (and a
timm ViT) and AlterNet, all at 32x32 with 10 classes, built offline in well under a second; and the one builder of
tiny transformers ViTs saved as model folders (`tiny_vit_model`, `save_vit_folder`) that run and Hub tests share."""

import pytest
import timm
import torch
from transformers import ViTConfig, ViTForImageClassification, ViTImageProcessor

from hf_vitrobust.models import AlterNetConfig, AlterNetForImageClassification, Classifier, Preprocessing

IMAGE_SIZE = 32
NUM_CLASSES = 10
PREPROCESSING = Preprocessing(input_size=IMAGE_SIZE, mean=(0.5, 0.5, 0.5), std=(0.25, 0.25, 0.25))


def tiny_vit_model(
    *,
    image_size: int = IMAGE_SIZE,
    patch_size: int = 16,
    hidden_size: int = 32,
    num_hidden_layers: int = 1,
    intermediate_size: int = 64,
    num_labels: int = 1000,
    seed: int = 0,
    **config,
) -> ViTForImageClassification:
    """A seeded transformers ViT with two heads and random weights, in eval mode: the same keywords give the same
    weights (tests compare numbers against runs of it). `config`: other `ViTConfig` keywords."""
    torch.manual_seed(seed)
    vit_config = ViTConfig(
        image_size=image_size,
        patch_size=patch_size,
        hidden_size=hidden_size,
        num_hidden_layers=num_hidden_layers,
        num_attention_heads=2,
        intermediate_size=intermediate_size,
        num_labels=num_labels,
        **config,
    )
    return ViTForImageClassification(vit_config).eval()


def save_vit_folder(folder, model: ViTForImageClassification, **processor) -> str:
    """`model` saved as a transformers model folder (a model spec for runs) with a `ViTImageProcessor` resizing to
    its image size; `processor`: other `ViTImageProcessor` keywords (resample, image_mean, image_std)."""
    model.save_pretrained(folder)
    side = model.config.image_size
    ViTImageProcessor(size={"height": side, "width": side}, **processor).save_pretrained(folder)
    return str(folder)


def vit_l16_input_folder(folder, image_size: int) -> str:
    """google/vit-large-patch16-<image_size>'s input geometry and image processor (its preprocessor_config: a
    bilinear resize to image_size x image_size, mean and std 0.5) on one narrow layer with random weights: for
    tests where only the input matters."""
    model = tiny_vit_model(image_size=image_size, hidden_size=16, intermediate_size=32)
    return save_vit_folder(folder, model, resample=2, image_mean=[0.5] * 3, image_std=[0.5] * 3)


def transformers_vit(seed: int = 0, attn_implementation: str = "sdpa") -> Classifier:
    module = tiny_vit_model(
        patch_size=8,
        num_hidden_layers=2,
        num_labels=NUM_CLASSES,
        seed=seed,
        attn_implementation=attn_implementation,
    )
    return Classifier(module, PREPROCESSING, name="tiny-vit").eval()


def save_tiny_vit(folder, num_labels: int = 1000, seed: int = 0) -> str:
    """A seeded one-layer 32x32 ViT saved as a transformers folder with its processor (a model spec for runs)."""
    model = tiny_vit_model(
        patch_size=8, hidden_size=16, intermediate_size=3072, num_labels=num_labels, seed=seed
    )
    return save_vit_folder(folder, model)


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
