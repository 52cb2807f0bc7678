"""Park & Kim's loss-landscape protocol (xxxnell/how-do-vits-work `ops/loss_landscapes.py`, `ops/norm.py`,
`ops/tests.py`, losslandscape.ipynb) against transcriptions of their code and hand computations, and the switches
between it and Li et al.'s filter normalisation (the default)."""

import copy
import re

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from probe_models import PREPROCESSING, random_images, transformers_vit

from hf_vitrobust.models import Classifier
from hf_vitrobust.probes.augmentation import augment_batch, soft_target_cross_entropy
from hf_vitrobust.probes.loss_landscape import _augmentation_seed, loss_landscape
from hf_vitrobust.probes.loss_landscape_directions import (
    PARK_KIM_EXCLUDE,
    filter_normalized_direction,
    landscape_tensors,
    normalize_direction,
    random_direction,
)
from hf_vitrobust.probes.spec import PROBES

IMAGES = random_images(5, seed=4)
LABELS = torch.tensor([1, 4, 4, 7, 0])
PARK_KIM = {"normalization": "park-kim", "l2_term": "park-kim", "exclude": PARK_KIM_EXCLUDE}


class TinyNet(nn.Module):
    """A conv (with BatchNorm), a (1, T, D) pos_embed, a relative_position table, a persistent 2-D float buffer, a
    LayerNorm and a linear head: every kind of tensor their normalize_filter / ignore_bn / ignore_kw treat."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 4, stride=4)
        self.bn = nn.BatchNorm2d(4)
        self.pos_embed = nn.Parameter(torch.randn(1, 64, 4) * 0.1)
        self.relative_position_bias_table = nn.Parameter(torch.randn(3, 4) * 0.1)
        self.register_buffer("mix", torch.eye(4) + 0.1 * torch.randn(4, 4))
        self.norm = nn.LayerNorm(4)
        self.head = nn.Linear(4, 10)

    def forward(self, pixels: torch.Tensor) -> torch.Tensor:
        tokens = self.bn(self.conv(pixels)).flatten(2).transpose(1, 2) + self.pos_embed
        tokens = tokens @ self.mix + self.relative_position_bias_table.mean(0)
        return self.head(self.norm(tokens).mean(1))


def tiny_classifier() -> Classifier:
    torch.manual_seed(0)
    module = TinyNet()
    with torch.no_grad():  # non-trivial running statistics, so eval mode matters
        module.bn.running_mean.uniform_(-0.2, 0.2)
        module.bn.running_var.uniform_(0.5, 1.5)
        module.bn.num_batches_tracked.fill_(7)
    return Classifier(module, PREPROCESSING, name="tiny-net").eval()


def their_bases(raw: dict, state: dict, kws) -> dict:
    """Transcription of how-do-vits-work ops/loss_landscapes.py: normalize_filter, then ignore_bn, then ignore_kw,
    on every state_dict entry (buffers included)."""
    bs = {k: v.float() for k, v in raw.items()}
    ws = {k: v.float() for k, v in state.items()}
    out = {}
    for k in bs:
        ws_norm = torch.norm(ws[k], dim=0, keepdim=True)
        bs_norm = torch.norm(bs[k], dim=0, keepdim=True)
        out[k] = ws_norm / (bs_norm + 1e-7) * bs[k]
    out = {k: torch.zeros(v.size()) if len(v.size()) < 2 else v for k, v in out.items()}
    return {k: torch.zeros(v.size()) if any(re.search(kw, k) for kw in kws) else v for k, v in out.items()}


def test_park_kim_normalisation_equals_their_normalize_filter_ignore_bn_ignore_kw():
    classifier = tiny_classifier()
    state = classifier.state_dict()
    tensors = landscape_tensors(classifier, "park-kim")
    # Their state_dict minus the integer counter, whose direction is zero there too; the float buffer is moved.
    assert list(tensors) == [k for k in state if k != "module.bn.num_batches_tracked"]
    assert "module.mix" in tensors and "module.mix" not in dict(classifier.named_parameters())
    raw = random_direction(tensors, seed=5, index=1)
    raw_all = {k: raw.get(k, torch.tensor(0.3)) for k in state}  # the same basis fed to both
    for kws in (PARK_KIM_EXCLUDE, ()):
        reference = their_bases(raw_all, state, kws)
        ours = normalize_direction(raw, tensors, normalization="park-kim", exclude=kws)
        assert torch.equal(reference["module.bn.num_batches_tracked"], torch.zeros(()))
        for name in tensors:
            torch.testing.assert_close(ours[name], reference[name], rtol=1e-6, atol=0, msg=name)
    conv_w = state["module.conv.weight"]
    # A norm per (input channel, kh, kw) position across the 4 filters, not per filter (Li et al.).
    park_kim = normalize_direction(raw, tensors, normalization="park-kim")
    li = normalize_direction(raw, tensors, normalization="filter")
    torch.testing.assert_close(park_kim["module.conv.weight"].norm(dim=0), conv_w.norm(dim=0))
    torch.testing.assert_close(li["module.conv.weight"].flatten(1).norm(dim=1), conv_w.flatten(1).norm(dim=1))
    assert not torch.allclose(park_kim["module.conv.weight"], li["module.conv.weight"], rtol=1e-2)
    head = state["module.head.weight"]  # (O, I): one norm per input column
    torch.testing.assert_close(park_kim["module.head.weight"].norm(dim=0), head.norm(dim=0))
    # (1, T, D): dim 0 has size 1, so the direction is elementwise |theta| b / (|b| + 1e-7), about |theta| sign(b).
    theta, basis = state["module.pos_embed"], raw["module.pos_embed"]
    torch.testing.assert_close(park_kim["module.pos_embed"], theta.abs() * basis / (basis.abs() + 1e-7))
    assert (park_kim["module.pos_embed"].sign() == basis.sign()).all()
    for name in ("module.bn.weight", "module.bn.running_mean", "module.head.bias", "module.norm.weight"):
        assert torch.equal(park_kim[name], torch.zeros_like(state[name])) and torch.equal(
            li[name], park_kim[name]
        )


def moved_copy(classifier, directions, x, y):
    """Park & Kim's get_loss_landscape step: load_state_dict(ws0 + (x b1 + y b2)) into a copy of the model."""
    moved = copy.deepcopy(classifier)
    state = moved.state_dict()
    d1, d2 = directions
    moved.load_state_dict({k: v + (x * d1[k] + y * d2[k]) if k in d1 else v for k, v in state.items()})
    return moved


def test_park_kim_grid_point_is_nll_plus_wd_times_the_sum_of_norms_at_the_moved_point():
    classifier = tiny_classifier()
    classifier.train()  # the probe evaluates in eval mode, as their tests.test
    result = loss_landscape(
        classifier,
        IMAGES,
        LABELS,
        seed=3,
        resolution=(2, 1),
        x_range=(0.0, 0.5),
        y_range=(-0.75, -0.75),
        weight_decay=0.05,
        **PARK_KIM,
    )
    classifier.eval()
    tensors = landscape_tensors(classifier, "park-kim")
    directions = [
        filter_normalized_direction(
            tensors, seed=3, index=i, exclude=PARK_KIM_EXCLUDE, normalization="park-kim"
        )
        for i in (0, 1)
    ]
    moved = moved_copy(classifier, directions, 0.5, -0.75).eval()
    assert not torch.equal(moved.state_dict()["module.mix"], classifier.state_dict()["module.mix"])
    with torch.no_grad():
        logits = moved(IMAGES)
        nll = float(F.cross_entropy(logits, LABELS))
        l2 = float(sum(torch.norm(p) for p in moved.parameters()))  # ops/norm.py l2
    assert float(result.l2[0, 1]) == pytest.approx(l2, rel=1e-6)
    assert float(result.loss[0, 1]) == pytest.approx(nll + 0.05 * l2, rel=1e-6)
    assert float(result.accuracy[0, 1]) == pytest.approx(float((logits.argmax(1) == LABELS).double().mean()))
    centre_l2 = float(sum(torch.norm(p.detach()) for p in classifier.parameters()))
    assert abs(l2 - centre_l2) > 1e-3  # the term is evaluated at the moved point, not at theta
    # Moving only the parameters (not the buffer) gives another loss: the buffer's direction is part of it.
    params_only = moved_copy(
        classifier, [{k: d[k] for k in d if k != "module.mix"} for d in directions], 0.5, -0.75
    )
    with torch.no_grad():
        assert abs(float(F.cross_entropy(params_only.eval()(IMAGES), LABELS)) - nll) > 1e-4
    # The switches the other way: Li's directions and the (1/2) ||theta||^2 term (the defaults).
    li = loss_landscape(
        classifier,
        IMAGES,
        LABELS,
        seed=3,
        resolution=(2, 1),
        x_range=(0.0, 0.5),
        y_range=(-0.75, -0.75),
        weight_decay=0.05,
        exclude=PARK_KIM_EXCLUDE,
    )
    assert (li.normalization, li.l2_term) == ("filter", "half-squared")
    params = {k: p.detach() for k, p in classifier.named_parameters()}
    li_dirs = [filter_normalized_direction(params, seed=3, index=i, exclude=PARK_KIM_EXCLUDE) for i in (0, 1)]
    li_moved = moved_copy(classifier, li_dirs, 0.5, -0.75).eval()
    squared = float(sum(p.detach().double().pow(2).sum() for p in li_moved.parameters()))
    with torch.no_grad():
        li_nll = float(F.cross_entropy(li_moved(IMAGES), LABELS))
    assert float(li.l2[0, 1]) == pytest.approx(0.5 * squared, rel=1e-6)
    assert float(li.loss[0, 1]) == pytest.approx(li_nll + 0.025 * squared, rel=1e-6)
    assert abs(float(li.loss[0, 1]) - float(result.loss[0, 1])) > 1e-2
    assert result.to_dict()["normalization"] == "park-kim" and result.to_dict()["l2_term"] == "park-kim"


def test_augmented_points_are_the_soft_target_nll_of_fresh_or_fixed_draws():
    classifier = tiny_classifier()
    origin = {"resolution": (2, 1), "x_range": (0.0, 0.0), "y_range": (0.0, 0.0), "batch_size": 2}
    kwargs = {"augmentation": "park-kim-cifar100", "loss_average": "batches", "seed": 11, **origin}
    fresh = loss_landscape(classifier, IMAGES, LABELS, sample_ids=[3, 1, 4, 15, 9], **kwargs)
    # Hand computation of grid point 1 (x = y = 0): per batch of 2 (the last of 1) the augmentation keyed by
    # (seed, point, the batch's sample ids), soft-target NLL averaged over batches, accuracy against argmax target.
    ids = torch.tensor([3, 1, 4, 15, 9])
    batch_losses, correct = [], 0
    for part in (slice(0, 2), slice(2, 4), slice(4, 5)):
        tag = ",".join(str(i) for i in ids[part].tolist())
        pixels, targets = augment_batch(
            IMAGES[part],
            LABELS[part],
            recipe="park-kim-cifar100",
            seed=_augmentation_seed(11, "1", tag),
            num_classes=10,
            sample_ids=ids[part],
        )
        with torch.no_grad():
            logits = classifier(pixels)
        batch_losses.append(float(soft_target_cross_entropy(logits, targets)))
        correct += int((logits.argmax(1) == targets.argmax(1)).sum())
    assert float(fresh.loss[0, 1]) == pytest.approx(sum(batch_losses) / 3, rel=1e-6)
    assert float(fresh.accuracy[0, 1]) == pytest.approx(correct / 5)
    # "per-point": the two points at the same weights see different draws; "fixed": the same one, also the centre's.
    assert abs(float(fresh.loss[0, 0]) - float(fresh.loss[0, 1])) > 1e-4
    assert abs(fresh.center_loss - float(fresh.loss[0, 0])) > 1e-4
    fixed = loss_landscape(classifier, IMAGES, LABELS, augmentation_draw="fixed", **kwargs)
    assert float(fixed.loss[0, 0]) == float(fixed.loss[0, 1]) == fixed.center_loss
    clean = loss_landscape(classifier, IMAGES, LABELS, loss_average="batches", **origin)
    assert abs(clean.center_loss - fixed.center_loss) > 1e-3
    data = fixed.to_dict()
    assert (data["augmentation"], data["augmentation_draw"], data["batch_size"]) == (
        "park-kim-cifar100",
        "fixed",
        2,
    )
    with pytest.raises(ValueError, match="augmentation"):
        loss_landscape(classifier, IMAGES, LABELS, augmentation="cifar", **origin)
    for key in ("normalization", "l2_term", "augmentation_draw", "loss_average"):
        with pytest.raises(ValueError, match=key):
            loss_landscape(classifier, IMAGES, LABELS, **{key: "nope"}, **origin)


def test_batch_average_and_runner_chunks_of_one_mini_batch_merge_to_the_one_call_probe():
    classifier = tiny_classifier()
    settings = {"resolution": (2, 2), "x_range": (-0.3, 0.3), "y_range": (0.0, 0.4), "weight_decay": 0.05}
    by_images = loss_landscape(classifier, IMAGES, LABELS, batch_size=2, **settings)
    by_batches = loss_landscape(classifier, IMAGES, LABELS, batch_size=2, loss_average="batches", **settings)
    # Their AverageMeter: the mean of the per-batch means, the last batch (1 image) weighing as a full one.
    with torch.no_grad():
        logits = classifier(IMAGES)
    means = [float(F.cross_entropy(logits[p], LABELS[p])) for p in (slice(0, 2), slice(2, 4), slice(4, 5))]
    centre_decay = 0.025 * float(sum(p.detach().double().pow(2).sum() for p in classifier.parameters()))
    assert by_batches.center_loss == pytest.approx(sum(means) / 3 + centre_decay, rel=1e-6)
    assert by_images.center_loss == pytest.approx(
        float(F.cross_entropy(logits, LABELS)) + centre_decay, rel=1e-6
    )
    assert abs(by_batches.center_loss - by_images.center_loss) > 1e-4
    assert torch.equal(by_images.accuracy, by_batches.accuracy)
    gap = by_batches.loss - by_images.loss  # the same L2 term at every point, only the NLL average differs
    assert (gap.abs() > 1e-5).all()
    # The runner: with batch_size set a chunk is one mini-batch, and the merge weighs chunks by batch count.
    task = PROBES["loss_landscape"]
    ids = torch.tensor([3, 1, 4, 15, 9])
    for params in (
        {"batch_size": 2, "loss_average": "batches", **settings},
        {
            "batch_size": 2,
            "loss_average": "batches",
            "augmentation": "park-kim-cifar100",
            **settings,
            **PARK_KIM,
        },
    ):
        checked = task.check_params(params)
        size = task.chunk_length(checked)
        assert size == 2 and task.chunk_length({}) == 64
        partials = [
            task.run(classifier, IMAGES[s : s + size], LABELS[s : s + size], ids[s : s + size], 5, checked)
            for s in range(0, 5, size)
        ]
        merged = task.merge(partials)
        whole = loss_landscape(classifier, IMAGES, LABELS, seed=5, sample_ids=ids, **params).to_dict()
        for key in ("loss", "accuracy", "l2"):
            torch.testing.assert_close(
                torch.tensor(merged[key]), torch.tensor(whole[key]), rtol=1e-6, atol=1e-7
            )
        assert merged["center_loss"] == pytest.approx(whole["center_loss"], rel=1e-6)
        for key in (
            "normalization",
            "l2_term",
            "augmentation",
            "augmentation_draw",
            "loss_average",
            "batch_size",
        ):
            assert merged[key] == whole[key], key
        # Weighing by images instead would give another surface.
        by_count = sum(torch.as_tensor(p["loss"]) * p["num_images"] for p in partials) / 5
        assert not torch.allclose(by_count.double(), torch.tensor(merged["loss"]).double(), rtol=1e-5)


def test_transformers_position_embeddings_get_a_zero_direction():
    classifier = transformers_vit()
    name = "module.vit.embeddings.position_embeddings"
    for normalization in ("filter", "park-kim"):
        tensors = landscape_tensors(classifier, normalization)
        excluded = filter_normalized_direction(
            tensors, seed=1, exclude=PARK_KIM_EXCLUDE, normalization=normalization
        )
        assert torch.equal(excluded[name], torch.zeros_like(tensors[name]))
        # Their kws do not name the class token: it keeps its direction, as timm's cls_token does there.
        assert excluded["module.vit.embeddings.cls_token"].abs().sum() > 0
        kept = filter_normalized_direction(tensors, seed=1, normalization=normalization)
        assert kept[name].abs().sum() > 0
        others = [k for k in tensors if k != name]
        assert all(torch.equal(excluded[k], kept[k]) for k in others)
