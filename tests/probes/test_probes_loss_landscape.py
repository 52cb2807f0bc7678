"""loss_landscape (Li et al. 2018 / Park & Kim 2022 Fig. 1): filter-normalised directions, the centre value, the
grid against a model whose weights were really moved, restored parameters and batch-size independence."""

import copy
import json

import pytest
import torch
import torch.nn.functional as F
from probe_models import FAMILIES, random_images

from hf_vitrobust.probes.loss_landscape import loss_landscape
from hf_vitrobust.probes.loss_landscape_directions import filter_normalized_direction

IMAGES = random_images(4)
LABELS = torch.tensor([0, 3, 5, 9])


def test_directions_are_filter_normalised_and_zero_on_1d():
    classifier = FAMILIES["timm_vit"]()
    params = {name: p.detach() for name, p in classifier.named_parameters()}
    direction = filter_normalized_direction(params, seed=3, index=0, exclude=("pos_embed",))
    assert direction.keys() == params.keys()
    checked = 0
    for name, param in params.items():
        if param.ndim < 2 or "pos_embed" in name:
            assert torch.equal(direction[name], torch.zeros_like(param)), name
            continue
        torch.testing.assert_close(direction[name].flatten(1).norm(dim=1), param.flatten(1).norm(dim=1))
        checked += 1
    assert checked >= 8
    other = filter_normalized_direction(params, seed=3, index=1)
    again = filter_normalized_direction(params, seed=3, index=0, exclude=("pos_embed",))
    assert all(torch.equal(direction[name], again[name]) for name in params)
    weight = "module.blocks.0.attn.qkv.weight"
    assert not torch.allclose(direction[weight], other[weight])
    cosine = F.cosine_similarity(direction[weight].flatten(), other[weight].flatten(), dim=0)
    assert abs(float(cosine)) < 0.2  # two independent random directions are nearly orthogonal


def test_grid_matches_moved_model_and_parameters_are_restored():
    classifier = FAMILIES["transformers_vit"]()
    before = {name: tensor.clone() for name, tensor in classifier.state_dict().items()}
    result = loss_landscape(
        classifier, IMAGES, LABELS, resolution=(3, 2), x_range=(-0.5, 0.5), y_range=(0.0, 1.0)
    )
    after = classifier.state_dict()
    assert before.keys() == after.keys() and all(torch.equal(before[k], after[k]) for k in before)
    assert result.loss.shape == result.accuracy.shape == (2, 3)
    torch.testing.assert_close(result.x, torch.tensor([-0.5, 0.0, 0.5], dtype=torch.float64))
    with torch.no_grad():
        logits = classifier(IMAGES)
    reference = float(F.cross_entropy(logits, LABELS))
    assert result.center_loss == pytest.approx(reference, abs=1e-6)
    assert float(result.loss[0, 1]) == pytest.approx(reference, abs=1e-6)  # (x, y) = (0, 0)
    accuracy = float((logits.argmax(-1) == LABELS).double().mean())
    assert float(result.accuracy[0, 1]) == pytest.approx(accuracy)
    # Grid point (x, y) = (0.5, 1.0): really move a copy of the model (as Park & Kim's load_state_dict does).
    params = {name: p.detach() for name, p in classifier.named_parameters()}
    d1 = filter_normalized_direction(params, seed=0, index=0)
    d2 = filter_normalized_direction(params, seed=0, index=1)
    moved = copy.deepcopy(classifier)
    with torch.no_grad():
        for name, param in moved.named_parameters():
            param.add_(0.5 * d1[name] + 1.0 * d2[name])
        moved_loss = float(F.cross_entropy(moved(IMAGES), LABELS))
    assert float(result.loss[1, 2]) == pytest.approx(moved_loss, abs=1e-5)
    assert abs(moved_loss - reference) > 1e-3  # the step changes the loss, so the check above means something


@pytest.mark.slow
def test_batch_size_independence_weight_decay_and_seed():
    classifier = FAMILIES["transformers_vit"]()
    kwargs = {"resolution": 2, "x_range": (-0.2, 0.2), "y_range": (-0.2, 0.2)}
    whole = loss_landscape(classifier, IMAGES, LABELS, batch_size=4, **kwargs)
    single = loss_landscape(classifier, IMAGES, LABELS, batch_size=1, **kwargs)
    torch.testing.assert_close(whole.loss, single.loss, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(whole.accuracy, single.accuracy)
    other_seed = loss_landscape(classifier, IMAGES, LABELS, seed=1, **kwargs)
    assert not torch.allclose(whole.loss, other_seed.loss)
    centre = {"resolution": 1, "x_range": (0.0, 0.0), "y_range": (0.0, 0.0)}
    plain = loss_landscape(classifier, IMAGES, LABELS, **centre)
    decayed = loss_landscape(classifier, IMAGES, LABELS, weight_decay=0.1, **centre)
    squared_norm = sum(float(p.detach().double().pow(2).sum()) for p in classifier.parameters())
    assert float(decayed.loss[0, 0]) == pytest.approx(float(plain.loss[0, 0]) + 0.05 * squared_norm, rel=1e-9)
    assert decayed.center_loss == pytest.approx(plain.center_loss + 0.05 * squared_norm, rel=1e-9)


def test_eval_mode_to_dict_plot_and_errors():
    classifier = FAMILIES["alternet"]()  # BatchNorm: eval mode uses the running statistics
    classifier.train()
    centre = {"resolution": 1, "x_range": (0.0, 0.0), "y_range": (0.0, 0.0)}
    result = loss_landscape(classifier, IMAGES[:2], LABELS[:2], **centre)
    assert all(module.training for module in classifier.modules())
    classifier.eval()
    with torch.no_grad():
        reference = float(F.cross_entropy(classifier(IMAGES[:2]), LABELS[:2]))
    assert result.center_loss == pytest.approx(reference, abs=1e-5)
    classifier.train()
    with torch.no_grad():
        assert abs(float(F.cross_entropy(classifier(IMAGES[:2]), LABELS[:2])) - reference) > 1e-4
    result = loss_landscape(FAMILIES["transformers_vit"](), IMAGES[:2], LABELS[:2], resolution=3)
    data = json.loads(json.dumps(result.to_dict()))
    assert data["probe"] == "loss_landscape" and len(data["loss"]) == 3 and len(data["loss"][0]) == 3
    assert result.plot().get_xlabel() == "direction 1"
    for kwargs in ({"resolution": 0}, {"resolution": (2,)}, {"x_range": (1.0, -1.0)}, {"weight_decay": -0.1}):
        with pytest.raises(ValueError):
            loss_landscape(classifier, IMAGES[:2], LABELS[:2], **kwargs)
    with pytest.raises(ValueError, match="labels"):
        loss_landscape(classifier, IMAGES[:2])


@pytest.mark.slow
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_runs_on_every_family(family):
    classifier = FAMILIES[family]()
    result = loss_landscape(classifier, IMAGES[:2], LABELS[:2], resolution=(2, 1), y_range=(0.5, 0.5))
    assert result.loss.shape == (1, 2) and torch.isfinite(result.loss).all()
    assert ((result.accuracy >= 0) & (result.accuracy <= 1)).all()
    assert result.num_images == 2
