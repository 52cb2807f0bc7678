"""Training recipe pieces against hand computations: SAM, warmup + cosine, mixup/cutmix targets; config errors."""

import itertools
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from hf_vitrobust.models import AlterNetConfig
from hf_vitrobust.training import (
    SAM,
    MixCriterion,
    TrainingConfig,
    soft_target_cross_entropy,
    warmup_cosine_factor,
    warmup_cosine_schedule,
)
from hf_vitrobust.training.trainer import fit_window_sizes

A = torch.tensor([[3.0, 1.0, 0.0], [1.0, 2.0, 0.5], [0.0, 0.5, 1.0]], dtype=torch.float64)


def _quadratic_loss(w: torch.Tensor) -> torch.Tensor:
    return 0.5 * w @ A @ w


def test_sam_step_equals_hand_computation_on_a_quadratic():
    w0 = torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64)
    lr, rho = 0.1, 0.3
    # Foret et al. 2021, Alg. 1: e = rho g / ||g||, then descend with the gradient at w + e.
    g = A @ w0
    e = rho * g / torch.linalg.vector_norm(g)
    expected = w0 - lr * (A @ (w0 + e))

    w = torch.nn.Parameter(w0.clone())
    sam = SAM(torch.optim.SGD([w], lr=lr), rho=rho)

    def closure():
        sam.zero_grad()
        loss = _quadratic_loss(w)
        loss.backward()
        return loss

    loss = sam.step(closure)
    assert float(loss.detach()) == pytest.approx(float(_quadratic_loss(w0)), rel=1e-12)
    torch.testing.assert_close(w.detach(), expected, rtol=0, atol=1e-12)
    # Plain SGD would land elsewhere: the test would notice a SAM that forgot to perturb.
    assert torch.linalg.vector_norm(w.detach() - (w0 - lr * g)) > 1e-3


def test_sam_first_step_moves_by_rho_and_restore_returns():
    w0 = torch.tensor([0.3, 0.7, -1.1], dtype=torch.float64)
    w = torch.nn.Parameter(w0.clone())
    sam = SAM(torch.optim.SGD([w], lr=0.5), rho=0.05)
    _quadratic_loss(w).backward()
    sam.first_step(zero_grad=True)
    assert w.grad is None
    assert float(torch.linalg.vector_norm(w.detach() - w0)) == pytest.approx(0.05, rel=1e-12)
    with pytest.raises(RuntimeError, match="twice"):
        sam.first_step()
    sam.restore()
    torch.testing.assert_close(w.detach(), w0, rtol=0, atol=1e-15)


def test_sam_ignores_a_non_finite_gradient():
    w = torch.nn.Parameter(torch.ones(3))
    sam = SAM(torch.optim.SGD([w], lr=0.1), rho=0.05)
    w.grad = torch.tensor([float("inf"), 1.0, 0.0])
    sam.first_step(zero_grad=False)
    assert torch.equal(w.detach(), torch.ones(3))
    with pytest.raises(ValueError, match="rho"):
        SAM(torch.optim.SGD([w], lr=0.1), rho=0.0)


def test_warmup_cosine_values():
    # 4 warmup steps, 21 steps in all: warmup (s+1)/5, then cosine from 1 at step 4 to 0 at step 20.
    factors = [warmup_cosine_factor(s, 4, 21) for s in range(21)]
    assert factors[:5] == pytest.approx([0.2, 0.4, 0.6, 0.8, 1.0])
    assert factors[12] == pytest.approx(0.5)  # halfway through the 16 decay steps
    assert factors[8] == pytest.approx(0.5 * (1 + math.cos(math.pi / 4)))
    assert factors[20] == pytest.approx(0.0, abs=1e-12)
    assert all(a > b for a, b in itertools.pairwise(factors[4:]))
    assert warmup_cosine_factor(20, 4, 21, min_ratio=0.1) == pytest.approx(0.1)
    assert warmup_cosine_factor(12, 4, 21, min_ratio=0.1) == pytest.approx(0.55)

    # The LambdaLR gives those learning rates, one per optimizer step.
    param = torch.nn.Parameter(torch.zeros(1))
    optimizer = torch.optim.AdamW([param], lr=0.1)
    scheduler = warmup_cosine_schedule(optimizer, 4, 21)
    lrs = []
    for _ in range(21):
        lrs.append(optimizer.param_groups[0]["lr"])
        optimizer.step()
        scheduler.step()
    assert lrs == pytest.approx([0.1 * f for f in factors])
    with pytest.raises(ValueError, match="warmup_steps"):
        warmup_cosine_schedule(optimizer, 21, 21)


def test_plain_loss_is_label_smoothed_cross_entropy():
    logits = torch.randn(6, 5, generator=torch.Generator().manual_seed(0))
    labels = torch.tensor([0, 1, 2, 3, 4, 0])
    criterion = MixCriterion(5, label_smoothing=0.1)
    pixels = torch.rand(6, 3, 4, 4)
    mixed, targets = criterion.mix(pixels, labels)
    assert mixed is pixels and targets is labels
    assert float(criterion(logits, targets)) == pytest.approx(
        float(F.cross_entropy(logits, labels, label_smoothing=0.1))
    )
    # Smoothed one-hot targets through the soft loss give the same number.
    smooth = torch.full((6, 5), 0.1 / 5)
    smooth[torch.arange(6), labels] = 1 - 0.1 + 0.1 / 5
    assert float(soft_target_cross_entropy(logits, smooth)) == pytest.approx(float(criterion(logits, labels)))


def _smoothed(labels: torch.Tensor, classes: int, eps: float) -> torch.Tensor:
    targets = torch.full((len(labels), classes), eps / classes)
    targets[torch.arange(len(labels)), labels] = 1 - eps + eps / classes
    return targets


def test_mixup_targets_and_images_mix_with_one_coefficient():
    np.random.seed(3)
    classes, eps = 4, 0.1
    labels = torch.tensor([0, 1, 2, 3, 1, 0])
    pixels = torch.rand(6, 3, 8, 8, generator=torch.Generator().manual_seed(1))
    criterion = MixCriterion(classes, mixup_alpha=0.8, label_smoothing=eps)
    mixed, targets = criterion.mix(pixels.clone(), labels)
    assert targets.shape == (6, classes)
    torch.testing.assert_close(targets.sum(-1), torch.ones(6))
    # timm mixes each sample with the batch reversed; recover lambda from the pixels and check the targets.
    flipped = pixels.flip(0)
    lam = float(((mixed - flipped)[0] / (pixels - flipped)[0]).median())
    assert 0.0 <= lam <= 1.0
    torch.testing.assert_close(mixed, lam * pixels + (1 - lam) * flipped, rtol=0, atol=1e-5)
    expected = lam * _smoothed(labels, classes, eps) + (1 - lam) * _smoothed(labels.flip(0), classes, eps)
    torch.testing.assert_close(targets, expected, rtol=0, atol=1e-5)
    logits = torch.randn(6, classes)
    loss = criterion(logits, targets)
    assert torch.isfinite(loss) and loss > 0


def test_cutmix_targets_match_the_pasted_area():
    np.random.seed(0)
    classes = 3
    labels = torch.tensor([0, 1, 2, 0])
    pixels = torch.stack([torch.full((3, 16, 16), float(i + 1)) for i in range(4)])
    criterion = MixCriterion(classes, cutmix_alpha=1.0, label_smoothing=0.0)
    mixed, targets = criterion.mix(pixels.clone(), labels)
    torch.testing.assert_close(targets.sum(-1), torch.ones(4))
    for i in range(4):
        own = float((mixed[i] == pixels[i]).float().mean())
        if labels[i] != labels.flip(0)[i]:
            assert targets[i, labels[i]] == pytest.approx(own, abs=1e-6)
    assert torch.isfinite(criterion(torch.randn(4, classes), targets))
    with pytest.raises(ValueError, match="even"):
        criterion.mix(pixels[:3], labels[:3])


def test_fit_window_sizes():
    assert fit_window_sizes(AlterNetConfig.from_preset("alternet-tiny")) == [4, 4, 4, 4]
    assert fit_window_sizes(AlterNetConfig.from_preset("alternet-tiny", image_size=16)) == [4, 4, 4, 2]
    assert fit_window_sizes(AlterNetConfig.from_preset("alternet-tiny", image_size=24)) == [4, 4, 3, 3]
    assert fit_window_sizes(AlterNetConfig.from_preset("alternet-50", image_size=224)) == [7, 7, 7, 7]


def test_config_errors_name_the_problem():
    with pytest.raises(ValueError, match="Did you mean 'alternet-tiny'"):
        TrainingConfig(model="alternet-tiney")
    with pytest.raises(ValueError, match="precision"):
        TrainingConfig(precision="fp64")
    with pytest.raises(ValueError, match="builtin"):
        TrainingConfig(model="builtin:anything")
    with pytest.raises(ValueError, match="Did you mean 'mixup_alpha'"):
        TrainingConfig.from_dict({"mixup_alhpa": 0.2})
    with pytest.raises(ValueError, match="label_smoothing"):
        TrainingConfig(label_smoothing=1.0)
    with pytest.raises(ValueError, match="model_overrides"):
        TrainingConfig(model="timm/resnet18", model_overrides={"depths": [1]})
    paper = TrainingConfig.paper_recipe(model="alternet-50-cifar", epochs=2)
    assert (paper.epochs, paper.lr, paper.mixup_alpha, paper.drop_path_rate) == (2, 1.25e-4, 0.8, 0.1)
