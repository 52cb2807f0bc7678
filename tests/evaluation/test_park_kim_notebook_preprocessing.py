# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The "park-kim-notebook" preprocessing protocol as `hf_vitrobust.evaluation` applies it: Park & Kim's
`fourier_analysis.ipynb` (cell 9) squashes each image with PIL's `Image.resize((224, 224))` (bicubic) and normalises
it with ImageNet's mean/std, whatever the model's own normalisation (0.5/0.5 for timm's vit_tiny_patch16_224)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from PIL import Image
from probe_models import transformers_vit
from torch import nn

from hf_vitrobust.analysis.protocols import PREPROCESSING_PROTOCOLS, benchmark_protocol, protocol_record
from hf_vitrobust.data import get_benchmark
from hf_vitrobust.evaluation.model_input import model_input
from hf_vitrobust.models import Classifier, Preprocessing

IMAGENET_VAL = get_benchmark("imagenet-val")


def half_and_half(height: int, width: int) -> Image.Image:
    """Left half (255, 0, 128), right half (64, 255, 64): far from the seam a resize keeps each colour exactly."""
    array = np.empty((height, width, 3), dtype=np.uint8)
    array[:, : width // 2] = (255, 0, 128)
    array[:, width // 2 :] = (64, 255, 64)
    return Image.fromarray(array)


def model_seeing(input_size: int) -> tuple[Classifier, list[torch.Tensor]]:
    """A 1000-class CNN with 0.5/0.5 normalisation (as timm's ViT-Ti) that records the normalised input it gets."""
    torch.manual_seed(0)
    module = nn.Sequential(
        nn.Conv2d(3, 2, 3), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(2, 1000)
    ).eval()
    seen: list[torch.Tensor] = []
    module.register_forward_pre_hook(lambda _module, args: seen.append(args[0].detach().clone()))
    preprocessing = Preprocessing(input_size=input_size, crop_pct=0.875, mean=(0.5,) * 3, std=(0.5,) * 3)
    return Classifier(module, preprocessing, name="half-normalised-cnn"), seen


def test_park_kim_notebook_squashes_to_224_and_normalises_with_imagenet_statistics():
    classifier, seen = model_seeing(224)
    chosen = model_input(IMAGENET_VAL, "park-kim-notebook", classifier)
    assert (chosen.applied, chosen.classifier.input_size) == ("park-kim-notebook", (224, 224))
    assert chosen.classifier.module is classifier.module
    assert chosen.to_dict()["kernel"] == "pil-bicubic"
    image = half_and_half(300, 448)  # 3:2 aspect ratio -> a squash, no crop
    pixels = chosen.classifier.preprocessing.image_to_tensor(image)
    assert pixels.shape == (3, 224, 224)
    # PIL's own Image.resize((224, 224)), as the notebook (bicubic is Pillow's default since 7.0).
    reference = torch.from_numpy(np.asarray(image.resize((224, 224)), dtype=np.float32) / 255.0).permute(
        2, 0, 1
    )
    torch.testing.assert_close(pixels, reference, atol=1 / 255, rtol=0)
    with torch.no_grad():
        chosen.classifier(pixels[None])
    normalised = seen[-1][0]
    # Worked by hand: (level / 255 - ImageNet mean) / ImageNet std, the left colour at the left edge (no crop cut
    # it), the right colour at the right edge.
    left = torch.tensor([(1.0 - 0.485) / 0.229, (0.0 - 0.456) / 0.224, (128 / 255 - 0.406) / 0.225])
    right = torch.tensor([(64 / 255 - 0.485) / 0.229, (1.0 - 0.456) / 0.224, (64 / 255 - 0.406) / 0.225])
    torch.testing.assert_close(normalised[:, 112, 0], left, atol=1e-5, rtol=0)
    torch.testing.assert_close(normalised[:, 112, 223], right, atol=1e-5, rtol=0)
    # The model's own protocol normalises the same pixel with its 0.5/0.5: 2 * 1 - 1, 2 * 0 - 1, 2 * 128 / 255 - 1.
    own = model_input(IMAGENET_VAL, "model-native", classifier)
    with torch.no_grad():
        own.classifier(own.classifier.preprocessing.image_to_tensor(half_and_half(256, 256))[None])
    torch.testing.assert_close(
        seen[-1][0][:, 112, 0], torch.tensor([1.0, -1.0, 2 * 128 / 255 - 1]), atol=1e-5, rtol=0
    )


def test_park_kim_notebook_is_a_named_protocol_recorded_and_refused_for_a_model_not_at_224():
    protocol = benchmark_protocol(IMAGENET_VAL, {"preprocessing": "park-kim-notebook"})
    record = protocol_record(IMAGENET_VAL, protocol, {"kind": "image_folder"})
    assert record["preprocessing"] == "park-kim-notebook"
    assert record["meaning"]["preprocessing"] == PREPROCESSING_PROTOCOLS["park-kim-notebook"]
    assert "ImageNet mean/std" in record["meaning"]["preprocessing"]
    vit = transformers_vit()
    assert vit.input_size != (224, 224)
    with pytest.raises(ValueError, match="does not run at 224x224 pixels, which park-kim-notebook feeds it"):
        model_input(IMAGENET_VAL, "park-kim-notebook", vit)
