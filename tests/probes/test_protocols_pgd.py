"""PGD loss progression, protocol conformance: `pgd_loss_progression(record="paul-chen-notebook")` against a plain
torch transcription of Paul & Chen's `analysis/pgd_attacks/PGD_ViT.ipynb` (github.com/sayakpaul/robustness-vit,
commit b90ba6b7: `generate_adversaries`, `perturb_image` and the assessment loop), run image by image in the
notebook's [-1, 1] input space with its eps 0.002 and Adam lr 1e-3; the default record ("every-step") unchanged."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from probe_models import random_images, transformers_vit

from hf_vitrobust.probes.pgd import RECORDS, pgd_attack, pgd_loss_progression

# The notebook's cell 7 and generate_adversaries: EPS[1] (the ViT run) and Adam's lr, on Normalize(0.5, 0.5) inputs.
NOTEBOOK_EPS = 0.002
NOTEBOOK_LR = 1e-3
ITERATIONS = 10


@pytest.fixture(scope="module")
def vit():
    return transformers_vit()


def predicted(classifier, images):
    with torch.no_grad():
        return classifier(images).argmax(dim=1)


def clamp_gradient_at_bound() -> float:
    x = torch.tensor(1.0, requires_grad=True)
    (grad,) = torch.autograd.grad(x.clamp(0.0, 1.0), x)
    return float(grad)


def notebook_model(classifier):
    """The notebook's `model`: a ViT on inputs in [-1, 1] (transforms.Normalize(0.5, 0.5) of ToTensor's pixels)
    returning (logits, attention weights), as jeonsworld's VisionTransformer."""

    def model(inp):
        return classifier((inp + 1) / 2), None

    return model


def generate_adversaries(image_tensor, model, true_class_index):
    """The notebook's cell 10, transcribed (the device aside)."""
    delta = torch.zeros_like(image_tensor, requires_grad=True)
    optimizer = torch.optim.Adam([delta], lr=NOTEBOOK_LR)
    losses = []

    for _t in range(ITERATIONS):
        inp = torch.clamp(image_tensor + delta, -1, 1)
        logits, _ = model(inp)
        loss = -torch.nn.CrossEntropyLoss()(logits, torch.LongTensor([true_class_index]))

        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        delta.data.clamp_(-NOTEBOOK_EPS, NOTEBOOK_EPS)

        losses.append(loss.item())

    return delta, losses


def notebook_assessment(classifier, pixels, labels):
    """The notebook's `perturb_image` and cell 13: attack every image of the fixed list, keep the losses of those
    predicted correctly before the attack; successful attacks among them. Returns (all_losses, kept, rate)."""
    model = notebook_model(classifier)
    num_corrects, adv_attacks, all_losses, kept = 0, 0, [], []
    for i, (image, true_class_index) in enumerate(zip(pixels, labels.tolist(), strict=True)):
        preprocessed_image = 2 * image - 1
        logits, _ = model(preprocessed_image.unsqueeze(0))
        pred_label = logits.argmax().item()
        delta_tensor, losses = generate_adversaries(preprocessed_image.unsqueeze(0), model, true_class_index)
        pertubed_image = (preprocessed_image.unsqueeze(0) + delta_tensor).clamp_(-1, 1)
        adv_logits, _ = model(pertubed_image)
        adv_label = adv_logits.argmax().item()
        if true_class_index == pred_label:
            all_losses.append(losses)
            kept.append(i)
            num_corrects += 1
            if pred_label != adv_label:
                adv_attacks += 1
    return torch.tensor(all_losses, dtype=torch.float64), kept, adv_attacks / num_corrects


def list_of_images(vit):
    """Six images, two with patches within eps of the pixel box (where the notebook's eps-ball-only clamp and an
    exact projection part ways in delta), two misclassified (the notebook's filter drops them)."""
    images = random_images(6, seed=11)
    images[1, :, :12, :12] = 0.9996
    images[2, :, 8:20, 8:20] = 0.0003
    labels = predicted(vit, images)
    labels[[0, 3]] = (labels[[0, 3]] + 1) % 10
    return images, labels


def test_notebook_record_equals_the_notebook_loop(vit):
    images, labels = list_of_images(vit)
    # The notebook's list is the first 5 images here: image 5 is outside it, 0 and 3 are misclassified.
    reference, kept, rate = notebook_assessment(vit, images[:5], labels[:5])
    assert kept == [1, 2, 4]
    assert (reference < 0).all()  # -CE, as appended
    result = pgd_loss_progression(
        vit,
        images,
        labels,
        num_images=5,
        record="paul-chen-notebook",
        eps=NOTEBOOK_EPS / 2,
        step_size=NOTEBOOK_LR / 2,
        steps=ITERATIONS,
        batch_size=2,
    )
    assert result.record == "paul-chen-notebook"
    assert result.image_indices.tolist() == kept and result.num_images == len(kept)
    assert result.losses.shape == (len(kept), ITERATIONS)
    torch.testing.assert_close(result.losses.double(), reference, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(result.loss_mean, reference.mean(dim=0), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(result.loss_std, reference.std(dim=0, correction=0), rtol=1e-4, atol=1e-6)
    assert result.success_rate == pytest.approx(rate)
    if clamp_gradient_at_bound() == 0.0:
        # Where torch.clamp's gradient is 0 at its bounds, the exact ball-and-box projection reaches the same
        # iterates: the default record holds the same values, as CE, plus the loss after the last step. (With the
        # older subgradient 1, pytorch#7049, a pixel on the box edge keeps its gradient there and they may part.)
        every_step = pgd_loss_progression(
            vit, images[kept], labels[kept], eps=NOTEBOOK_EPS / 2, step_size=NOTEBOOK_LR / 2, steps=ITERATIONS
        )
        torch.testing.assert_close(
            -every_step.losses[:, :ITERATIONS].double(), reference, rtol=1e-5, atol=1e-6
        )
    ax = result.plot()
    assert len(ax.lines[0].get_xdata()) == ITERATIONS and "before each step" in ax.get_ylabel()


def test_default_record_is_unchanged(vit):
    images, labels = list_of_images(vit)
    kwargs = {"eps": 0.01, "step_size": 0.004, "steps": 4, "num_images": 3}
    default = pgd_loss_progression(vit, images, labels, **kwargs)
    explicit = pgd_loss_progression(vit, images, labels, record="every-step", **kwargs)
    assert default.record == "every-step"
    for key, value in default.to_dict().items():
        assert explicit.to_dict()[key] == value, key
    # The first 3 correctly classified inputs, CE after t = 0..steps updates of the exact projection.
    assert default.image_indices.tolist() == [1, 2, 4]
    assert default.losses.shape == (3, 5) and default.loss_mean.shape == (5,)
    chosen = default.image_indices
    adversarial, losses, _ = pgd_attack(
        vit, images[chosen], labels[chosen], eps=0.01, step_size=0.004, steps=4
    )
    torch.testing.assert_close(default.losses, losses)
    with torch.no_grad():
        clean = F.cross_entropy(vit(images[chosen]), labels[chosen], reduction="none")
        final = F.cross_entropy(vit(adversarial), labels[chosen], reduction="none")
    torch.testing.assert_close(default.losses[:, 0], clean)
    torch.testing.assert_close(default.losses[:, 4], final)
    assert default.plot().get_ylabel() == "cross-entropy"


def test_bad_record_raises_naming_the_valid_ones(vit):
    images, labels = list_of_images(vit)
    assert RECORDS == ("every-step", "paul-chen-notebook", "paul-chen-bit-notebook")
    with pytest.raises(
        ValueError, match=r"record must be one of.*'every-step'.*'paul-chen-notebook'.*'notebook'"
    ):
        pgd_loss_progression(vit, images, labels, record="notebook")
    with pytest.raises(ValueError, match='method "adam"'):
        pgd_loss_progression(vit, images, labels, record="paul-chen-notebook", method="sign")
    with pytest.raises(ValueError, match="random_start"):
        pgd_loss_progression(vit, images, labels, record="paul-chen-notebook", random_start=True)
    with pytest.raises(ValueError, match="projection"):
        pgd_attack(vit, images, labels, method="sign", projection="ball")
    with pytest.raises(ValueError, match="projection must be one of"):
        pgd_attack(vit, images, labels, projection="box")


# ---------------------------------------------------------------------------- the BiT notebook (PGD_BiT.ipynb)
BIT_EPS = 0.001  # its cell 7: EPS[0], used by clip_eps (cell 8)
BIT_LR = 1e-3  # its cell 11: tf.keras.optimizers.Adam(learning_rate=1e-3), on inputs in [0, 1]


def bit_generate_adversaries(image, model, true_class_index, iterations=ITERATIONS):
    """PGD_BiT.ipynb cell 11, transcribed: the GradientTape loop with Keras' Adam written out (TF's ApplyAdam:
    lr_t = lr sqrt(1 - b2^t) / (1 - b1^t), var -= lr_t m / (sqrt(v) + 1e-7), Keras' default epsilon), and the
    update `delta.assign_add(clip_eps(delta))`. Returns delta after each step and the appended losses (-CE)."""
    beta_1, beta_2, epsilon = 0.9, 0.999, 1e-7
    delta = np.zeros(tuple(image.shape), dtype=np.float64)
    m, v = np.zeros_like(delta), np.zeros_like(delta)
    deltas, losses = [], []
    for t in range(1, iterations + 1):
        watched = torch.tensor(delta, dtype=torch.float32, requires_grad=True)
        inp = torch.clamp(image + watched, 0, 1)
        predictions = model(inp)
        loss = -F.cross_entropy(predictions, torch.tensor([true_class_index]))
        (gradients,) = torch.autograd.grad(loss, watched)
        g = gradients.double().numpy()
        m = beta_1 * m + (1 - beta_1) * g
        v = beta_2 * v + (1 - beta_2) * g * g
        lr_t = BIT_LR * np.sqrt(1 - beta_2**t) / (1 - beta_1**t)
        delta = delta - lr_t * m / (np.sqrt(v) + epsilon)
        delta = delta + np.clip(delta, -BIT_EPS, BIT_EPS)
        deltas.append(delta.copy())
        losses.append(loss.item())
    return deltas, losses


def test_bit_notebook_record_follows_its_unprojected_update_step_by_step(vit):
    # Pixels away from the box, so that x + delta is never clamped and the adversarial image shows delta itself.
    images = 0.3 + 0.4 * random_images(4, seed=5)
    labels = predicted(vit, images)
    labels[2] = (labels[2] + 1) % 10  # misclassified: the notebook attacks it but does not count it
    reference = [
        bit_generate_adversaries(image.unsqueeze(0), vit, int(label))
        for image, label in zip(images, labels, strict=True)
    ]
    for steps in (1, 2, 5, ITERATIONS):
        adversarial, losses, _ = pgd_attack(
            vit, images, labels, eps=BIT_EPS, step_size=BIT_LR, steps=steps, projection="added-clip"
        )
        for i, (deltas, appended) in enumerate(reference):
            ours = (adversarial[i] - images[i]).double()
            # float32 against float64, batched against one image: a pixel whose gradient is near 0 (where Adam's
            # m / sqrt(v) is ill-conditioned) may differ by a few 1e-6; the update rule's terms are 1e-3.
            torch.testing.assert_close(ours, torch.from_numpy(deltas[steps - 1][0]), rtol=0, atol=1e-5)
            torch.testing.assert_close(-losses[i, :steps].double(), torch.tensor(appended[:steps]).double())
    # Nothing bounds delta: about 2 lr more per step, 0.02 after 10 steps (the ViT notebook's stays within 0.001).
    final = np.abs(np.stack([deltas[-1] for deltas, _ in reference]))
    assert 0.018 < final.max() <= 0.021 and np.median(final) > 0.015
    bounded, _, _ = pgd_attack(vit, images, labels, eps=BIT_EPS, step_size=BIT_LR / 2, projection="ball")
    assert float((bounded - images).abs().max()) <= BIT_EPS + 1e-7
    # The record: the notebook's kept curves (-CE before each step) and success count, with its lr by default.
    result = pgd_loss_progression(vit, images, labels, record="paul-chen-bit-notebook", num_images=4)
    assert (result.step_size, result.eps, result.record) == (BIT_LR, BIT_EPS, "paul-chen-bit-notebook")
    kept = [i for i in range(4) if i != 2]
    assert result.image_indices.tolist() == kept
    expected = torch.tensor([reference[i][1] for i in kept], dtype=torch.float64)
    torch.testing.assert_close(result.losses.double(), expected)
    fooled = predicted(
        vit, images[kept] + torch.from_numpy(np.stack([reference[i][0][-1][0] for i in kept])).float()
    )
    assert result.success_rate == pytest.approx(float((fooled != labels[kept]).float().mean()))
