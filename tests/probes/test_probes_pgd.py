"""PGD loss progression probe: torchattacks' PGD as the reference of the sign variant, torch.optim.Adam (per image,
the paper notebook's loop with a proper projection) as the reference of the Adam variant, the eps-ball, batch-size
independence, the image selection, every model family, and the `loss_progression` metric and evaluate module."""

import json
from pathlib import Path

import evaluate
import numpy as np
import pytest
import torch
import torch.nn.functional as F
import torchattacks
from probe_models import FAMILIES, random_images, timm_cnn, transformers_vit

from hf_vitrobust.metrics.loss_progression import loss_progression
from hf_vitrobust.probes.pgd import PGDLossResult, pgd_attack, pgd_loss_progression

EVALUATE_MODULE = Path(__file__).resolve().parents[2] / "metrics" / "loss_progression"


@pytest.fixture(scope="module")
def vit():
    return transformers_vit()


@pytest.fixture(scope="module")
def cnn():
    return timm_cnn()


def predicted(classifier, images):
    with torch.no_grad():
        return classifier(images).argmax(dim=1)


class _Recorder(torch.nn.Module):
    """The classifier, keeping the logits of every forward pass (the iterates torchattacks evaluates)."""

    def __init__(self, classifier):
        super().__init__()
        self.classifier = classifier
        self.logits = []

    def forward(self, pixels):
        logits = self.classifier(pixels)
        self.logits.append(logits.detach())
        return logits


@pytest.mark.slow
@pytest.mark.parametrize("random_start", [False, True])
def test_sign_pgd_equals_torchattacks(cnn, random_start):
    images = random_images(3, seed=1)
    labels = predicted(cnn, images)
    eps, alpha, steps = 8 / 255, 2 / 255, 4
    recorder = _Recorder(cnn).eval()
    attack = torchattacks.PGD(recorder, eps=eps, alpha=alpha, steps=steps, random_start=random_start)
    init = None
    if random_start:
        # torchattacks draws from the global generator: replay its draw as our starting perturbation.
        torch.manual_seed(0)
        init = torch.empty_like(images).uniform_(-eps, eps)
        torch.manual_seed(0)
    reference = attack(images, labels)
    adversarial, losses, predictions = pgd_attack(
        cnn, images, labels, method="sign", eps=eps, step_size=alpha, steps=steps, init=init
    )
    torch.testing.assert_close(adversarial, reference, atol=1e-6, rtol=0)
    reference_losses = torch.stack(
        [F.cross_entropy(z, labels, reduction="none") for z in recorder.logits], dim=1
    )
    torch.testing.assert_close(losses[:, :steps], reference_losses, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(losses[:, steps], F.cross_entropy(cnn(reference), labels, reduction="none"))
    assert torch.equal(predictions, predicted(cnn, adversarial))


@pytest.mark.slow
def test_adam_variant_equals_per_image_torch_adam(vit):
    images = random_images(2, seed=2)
    labels = predicted(vit, images)
    eps, lr, steps = 0.01, 0.004, 5
    adversarial, losses, _ = pgd_attack(
        vit, images, labels, method="adam", eps=eps, step_size=lr, steps=steps
    )
    for i in range(2):  # the paper notebook's loop, one image at a time, with the exact projection
        x = images[i : i + 1]
        delta = torch.zeros_like(x, requires_grad=True)
        optimizer = torch.optim.Adam([delta], lr=lr)
        for t in range(steps):
            loss = -F.cross_entropy(vit((x + delta).clamp(0, 1)), labels[i : i + 1])
            assert float(-loss.detach()) == pytest.approx(float(losses[i, t]), rel=1e-5, abs=1e-6)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            with torch.no_grad():
                delta.copy_(torch.minimum(torch.maximum(delta, (-x).clamp(min=-eps)), (1 - x).clamp(max=eps)))
        torch.testing.assert_close(
            adversarial[i : i + 1], (x + delta.detach()).clamp(0, 1), atol=1e-6, rtol=0
        )


@pytest.mark.parametrize("method", ["sign", "adam"])
def test_pgd_stays_in_the_eps_ball_and_the_loss_grows(cnn, method):
    images = random_images(4, seed=3)
    images[0, :, :4, :4] = 0.0  # pixels at the box edges, where the projection must also respect [0, 1]
    images[1, :, :4, :4] = 1.0
    labels = predicted(cnn, images)
    eps = 0.03
    init = (2 * torch.rand(images.shape, generator=torch.Generator().manual_seed(0)) - 1) * eps
    adversarial, losses, _ = pgd_attack(cnn, images, labels, method=method, eps=eps, steps=6, init=init)
    assert (adversarial - images).abs().max() <= eps + 1e-6
    assert adversarial.min() >= 0 and adversarial.max() <= 1
    mean = losses.mean(dim=0)
    assert mean[-1] > mean[0]
    assert mean[-1] > F.cross_entropy(cnn(images), labels).item()


@pytest.mark.parametrize("method", ["sign", "adam"])
def test_probe_is_batch_size_independent_and_seeded(vit, method):
    images = random_images(4, seed=4)
    labels = predicted(vit, images)
    kwargs = {"method": method, "eps": 0.02, "steps": 3, "random_start": True, "seed": 7}
    one = pgd_loss_progression(vit, images, labels, batch_size=1, **kwargs)
    many = pgd_loss_progression(vit, images, labels, batch_size=4, **kwargs)
    torch.testing.assert_close(one.losses, many.losses, atol=1e-5, rtol=0)
    torch.testing.assert_close(one.loss_mean, many.loss_mean, atol=1e-5, rtol=0)
    again = pgd_loss_progression(vit, images, labels, batch_size=2, **kwargs)
    torch.testing.assert_close(again.losses, one.losses, atol=1e-5, rtol=0)
    other_seed = pgd_loss_progression(vit, images, labels, **{**kwargs, "seed": 8})
    assert not torch.allclose(other_seed.losses[:, 0], one.losses[:, 0])
    with torch.no_grad():
        clean = F.cross_entropy(vit(images), labels, reduction="none")
    assert not torch.allclose(one.losses[:, 0], clean)  # the random start moved the images


def test_probe_attacks_the_first_correct_images_and_reports_core_curve(vit):
    images = random_images(6, seed=5)
    labels = predicted(vit, images)
    labels[[0, 3]] = (labels[[0, 3]] + 1) % 10  # images 0 and 3 misclassified
    result = pgd_loss_progression(vit, images, labels, num_images=3, steps=4, eps=0.02, step_size=0.01)
    assert isinstance(result, PGDLossResult)
    assert result.image_indices.tolist() == [1, 2, 4]
    assert result.num_images == 3 and result.losses.shape == (3, 5)
    core = loss_progression(
        np.repeat([np.arange(5)], 3, axis=0).ravel(), result.losses.double().numpy().ravel()
    )
    np.testing.assert_allclose(result.loss_mean.numpy(), core.loss_mean)
    np.testing.assert_allclose(result.loss_std.numpy(), core.loss_std)
    np.testing.assert_allclose(
        result.loss_mean.numpy(), result.losses.double().mean(dim=0).numpy(), rtol=1e-6
    )
    np.testing.assert_allclose(
        result.loss_std.numpy(), result.losses.double().std(dim=0, correction=0).numpy(), rtol=1e-5, atol=1e-7
    )
    data = json.loads(json.dumps(result.to_dict()))
    assert data["probe"] == "pgd_loss_progression" and len(data["loss_mean"]) == 5
    ax = result.plot()
    assert len(ax.lines) == 1 and len(ax.collections) == 1  # the mean curve and its std band
    np.testing.assert_allclose(ax.lines[0].get_ydata(), result.loss_mean.numpy())


def test_paper_defaults(vit):
    images = random_images(3, seed=6)
    result = pgd_loss_progression(vit, images, predicted(vit, images))
    assert (result.method, result.eps, result.step_size, result.steps) == ("adam", 0.001, 0.0005, 10)
    assert result.loss_mean.shape == (11,) and result.num_images == 3
    assert result.loss_mean[-1] > result.loss_mean[0]


@pytest.mark.slow
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_probe_runs_on_every_family(family):
    classifier = FAMILIES[family]()
    images = random_images(2, seed=7)
    result = pgd_loss_progression(classifier, images, predicted(classifier, images), steps=2, eps=0.02)
    assert result.losses.shape == (2, 3)
    assert torch.isfinite(result.losses).all()
    assert result.loss_mean[-1] > result.loss_mean[0]


def test_probe_rejects_bad_input(vit):
    images = random_images(2)
    labels = predicted(vit, images)
    with pytest.raises(ValueError, match="labels"):
        pgd_loss_progression(vit, images)
    with pytest.raises(ValueError, match="method"):
        pgd_loss_progression(vit, images, labels, method="fgsm")
    with pytest.raises(ValueError, match="eps"):
        pgd_loss_progression(vit, images, labels, eps=0)
    with pytest.raises(ValueError, match="step_size"):
        pgd_loss_progression(vit, images, labels, step_size=-1.0)
    with pytest.raises(ValueError, match="num_images"):
        pgd_loss_progression(vit, images, labels, num_images=0)
    with pytest.raises(ValueError, match="none of the images"):
        pgd_loss_progression(vit, images, (labels + 1) % 10)


# ----------------------------------------------------------------------------- metric and evaluate module
def test_loss_progression_core_analytic():
    result = loss_progression([1, 0, 0, 1, 2], [2.0, 1.0, 3.0, 2.0, 5.0])
    assert result.steps == [0, 1, 2]
    assert result.loss_mean == [2.0, 2.0, 5.0]
    assert result.loss_std == [1.0, 0.0, 0.0]
    assert result.counts == [2, 2, 1]
    with pytest.raises(ValueError, match="lengths"):
        loss_progression([0, 1], [1.0])
    with pytest.raises(ValueError, match="NaN"):
        loss_progression([0], [float("nan")])
    with pytest.raises(ValueError, match="non-negative"):
        loss_progression([-1], [1.0])
    with pytest.raises(ValueError, match="No"):
        loss_progression([], [])


@pytest.mark.slow
def test_evaluate_module_equals_core():
    module = evaluate.load(str(EVALUATE_MODULE))
    rng = np.random.default_rng(0)
    steps = np.tile(np.arange(4), 5)
    losses = rng.normal(size=steps.size)
    module.add_batch(steps=steps[:7].tolist(), losses=losses[:7].tolist())
    module.add_batch(steps=steps[7:].tolist(), losses=losses[7:].tolist())
    result = module.compute()
    expected = loss_progression(steps, losses).to_dict()
    assert result.keys() == expected.keys()
    assert result["steps"] == expected["steps"] and result["counts"] == expected["counts"]
    np.testing.assert_allclose(result["loss_mean"], expected["loss_mean"], rtol=1e-12)
    np.testing.assert_allclose(result["loss_std"], expected["loss_std"], rtol=1e-12)
