"""Park & Kim's training augmentation (`hf_vitrobust.probes.augmentation`): the mini-batch mixing equals timm's
`Mixup` draw for draw, the whole batch equals a transcription of their `ops/datasets.py` pipeline under the same
seeds, and no global generator is disturbed."""

import random

import numpy as np
import pytest
import torch
from timm.data import Mixup
from timm.data.transforms_factory import transforms_imagenet_train
from torchvision import transforms
from torchvision.transforms.functional import to_pil_image

from hf_vitrobust.corruptions.randomness import random_bits
from hf_vitrobust.probes.augmentation import (
    TRAINING_AUGMENTATION_RECIPES,
    _mix_batch,
    augment_batch,
    check_augmentation,
    mixed_targets,
    soft_target_cross_entropy,
)


def _images(n: int, size: int, seed: int = 0) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    return (torch.randint(0, 256, (n, 3, size, size), generator=generator) / 255.0).float()


@pytest.mark.parametrize("recipe", list(TRAINING_AUGMENTATION_RECIPES))
def test_mixing_equals_timm_mixup_draw_for_draw(recipe):
    settings = TRAINING_AUGMENTATION_RECIPES[recipe]
    pixels, labels = _images(6, 16), torch.tensor([0, 3, 1, 4, 2, 3])
    reference = Mixup(
        mixup_alpha=1.0,
        cutmix_alpha=0.8,
        prob=1.0,
        switch_prob=0.5,
        mode="batch",
        label_smoothing=0.1,
        num_classes=5,
    )
    branches = set()
    for key in range(12):
        np.random.seed([key, 0])
        expected_pixels, expected_targets = reference(pixels.clone(), labels)
        mixed, lam = _mix_batch(pixels, settings, np.random.RandomState([key, 0]))
        branches.add("mixup" if (mixed - pixels).abs().gt(0).float().mean() > 0.9 else "cutmix")
        torch.testing.assert_close(mixed, expected_pixels, rtol=0, atol=1e-6)
        torch.testing.assert_close(mixed_targets(labels, 5, lam, 0.1), expected_targets, rtol=0, atol=1e-7)
    assert branches == {"mixup", "cutmix"}


def _transcribed_cifar100_transform() -> transforms.Compose:
    """how-do-vits-work ops/datasets.py `get_cifar100` with configs/cifar100_vit.yaml (padding 4, color_jitter 0,
    auto_augment rand-m9-n2-mstd1.0, re_prob 0, hflip 0.5, interpolation random)."""
    mean, std = (0.5071, 0.4867, 0.4408), (0.2675, 0.2565, 0.2761)
    parts = transforms_imagenet_train(
        img_size=32, mean=mean, std=std, hflip=0.5, color_jitter=0.0, auto_augment="rand-m9-n2-mstd1.0",
        interpolation="random", re_prob=0.0, re_mode="const", re_count=1, separate=True,
    )  # fmt: skip
    crop = transforms.Compose([transforms.RandomCrop(32, padding=4), transforms.RandomHorizontalFlip(p=0.5)])
    return transforms.Compose([crop, *parts[1:]])


def test_cifar100_batch_equals_the_transcribed_pipeline_under_the_same_seeds():
    pixels, labels = _images(4, 32, seed=1), torch.tensor([7, 2, 99, 2])
    sample_ids = torch.tensor([10, 11, 12, 13])
    seed = 2**40 + 5
    got_pixels, got_targets = augment_batch(
        pixels, labels, recipe="park-kim-cifar100", seed=seed, num_classes=100, sample_ids=sample_ids
    )
    transform = _transcribed_cifar100_transform()
    image_seeds = random_bits(seed, sample_ids, "training_augmentation/image", (1,)).view(-1).tolist()
    outputs = []
    for image, image_seed in zip(pixels, image_seeds, strict=True):
        random.seed(image_seed & 0xFFFFFFFF)
        np.random.seed(image_seed & 0xFFFFFFFF)
        torch.manual_seed(image_seed & 0xFFFFFFFF)
        outputs.append(transform(to_pil_image(image.mul(255).round().to(torch.uint8))))
    np.random.seed([seed & 0xFFFFFFFF, seed >> 32])
    reference = Mixup(
        mixup_alpha=1.0, cutmix_alpha=0.8, prob=1.0, switch_prob=0.5, label_smoothing=0.1, num_classes=100
    )
    mixed, expected_targets = reference(torch.stack(outputs), labels)  # as theirs: mixed after Normalize
    mean, std = torch.tensor([0.5071, 0.4867, 0.4408]), torch.tensor([0.2675, 0.2565, 0.2761])
    expected_pixels = (mixed * std.view(1, 3, 1, 1) + mean.view(1, 3, 1, 1)).clamp(0, 1)
    torch.testing.assert_close(got_pixels, expected_pixels, rtol=0, atol=1e-5)
    torch.testing.assert_close(got_targets, expected_targets, rtol=0, atol=1e-6)
    assert not torch.allclose(got_pixels, pixels, atol=0.05)  # something was applied


def test_seeded_repeatable_and_global_generators_untouched():
    pixels, labels = _images(3, 32), torch.tensor([0, 1, 2])  # odd: the middle image pairs with itself
    random.seed(123)
    np.random.seed(123)
    torch.manual_seed(123)
    states = random.getstate(), np.random.get_state()[1].copy(), torch.get_rng_state()
    first = augment_batch(pixels, labels, recipe="park-kim-imagenet", seed=4, num_classes=10)
    second = augment_batch(pixels, labels, recipe="park-kim-imagenet", seed=4, num_classes=10)
    assert random.getstate() == states[0]
    assert np.array_equal(np.random.get_state()[1], states[1])
    assert torch.equal(torch.get_rng_state(), states[2])
    assert torch.equal(first[0], second[0]) and torch.equal(first[1], second[1])
    other = augment_batch(pixels, labels, recipe="park-kim-imagenet", seed=5, num_classes=10)
    assert not torch.equal(first[0], other[0])
    assert first[0].shape == pixels.shape and first[0].min() >= 0 and first[0].max() <= 1
    torch.testing.assert_close(first[1].sum(dim=1), torch.ones(3))
    assert first[1].min() >= 0.1 / 10 - 1e-7  # label smoothing 0.1 over 10 classes


def test_soft_target_cross_entropy_is_cross_entropy_for_one_hot_targets():
    logits, labels = (
        torch.randn(5, 7, generator=torch.Generator().manual_seed(0)),
        torch.tensor([0, 6, 3, 3, 1]),
    )
    one_hot = torch.nn.functional.one_hot(labels, 7).float()
    torch.testing.assert_close(
        soft_target_cross_entropy(logits, one_hot), torch.nn.functional.cross_entropy(logits, labels)
    )


def test_bad_recipe_and_shapes_are_refused():
    with pytest.raises(ValueError, match="park-kim-cifar100"):
        check_augmentation("park-kim")
    assert check_augmentation(None) is None
    with pytest.raises(ValueError, match="labels"):
        augment_batch(_images(2, 8), torch.tensor([0]), recipe="park-kim-cifar100", seed=0, num_classes=3)
