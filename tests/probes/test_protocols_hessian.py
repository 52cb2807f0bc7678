"""Park & Kim's Hessian spectra protocol (`hessian_spectrum(method="pyhessian", regularizer="sum-of-norms")`):
checked against eigvalsh of exactly materialised Hessians, against the `pyhessian` package's own power iteration,
and for the switch between it and our default (Lanczos, (wd / 2) ||w||^2), whose numbers are pinned."""

import json

import pyhessian
import pytest
import torch
import torch.nn.functional as F
from probe_models import PREPROCESSING, random_images
from torch import nn
from torch.func import functional_call

from hf_vitrobust.models import Classifier
from hf_vitrobust.probes import hessian as hessian_module
from hf_vitrobust.probes.augmentation import augment_batch
from hf_vitrobust.probes.hessian import (
    HessianOperator,
    classifier_loss,
    hessian_spectrum,
    pyhessian_eigenvalues,
)
from hf_vitrobust.probes.spec import PROBES, chunk_seed

LABELS = torch.tensor([0, 1, 2, 3, 4, 0])


class SmallNet(nn.Module):
    """Pool to 2x2, then 12 -> 8 (tanh) -> 5: 149 parameters, none zero, a Hessian with negative eigenvalues among
    the largest in magnitude."""

    def __init__(self) -> None:
        super().__init__()
        self.net = nn.Sequential(
            nn.AdaptiveAvgPool2d(2), nn.Flatten(), nn.Linear(12, 8), nn.Tanh(), nn.Linear(8, 5)
        )
        generator = torch.Generator().manual_seed(3)
        with torch.no_grad():
            for param in self.parameters():
                param.copy_(1.5 * torch.randn(param.shape, generator=generator))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


def small_net(dtype: torch.dtype = torch.float64) -> Classifier:
    return Classifier(SmallNet().to(dtype), PREPROCESSING, name="small-net").eval()


def exact_eigenvalues(
    classifier: Classifier, images: torch.Tensor, labels: torch.Tensor, weight_decay: float = 0.0
) -> torch.Tensor:
    """eigvalsh of the torch.func.hessian of NLL + weight_decay * sum_p ||p|| (Park & Kim's `ops/norm.py` `l2`:
    `torch.norm(param)` summed over `model.parameters()`), ascending, float64."""
    names = [name for name, _ in classifier.named_parameters()]
    shapes = [p.shape for _, p in classifier.named_parameters()]
    flat = torch.cat([p.detach().reshape(-1) for p in classifier.parameters()]).double()
    pixels = images.double()

    def loss(vector: torch.Tensor) -> torch.Tensor:
        parts = vector.split([s.numel() for s in shapes])
        params = {name: part.view(s) for name, part, s in zip(names, parts, shapes, strict=True)}
        nll = F.cross_entropy(functional_call(classifier, params, (pixels,)), labels)
        return nll + weight_decay * sum(torch.linalg.vector_norm(p) for p in params.values())

    return torch.linalg.eigvalsh(torch.func.hessian(loss)(flat))


def by_magnitude(values: torch.Tensor, k: int) -> torch.Tensor:
    return values[values.abs().argsort(descending=True)][:k]


def test_pyhessian_method_matches_exact_hessian_for_nll_and_sum_of_norms():
    """Top-4 by magnitude, with signs, equal eigvalsh of the exact Hessian to 1e-4 relative (observed 2e-6: the
    1e-6 that PyHessian adds to every norm biases the Rayleigh quotient by about 2e-6), for NLL alone and for
    NLL + wd * sum ||p||; the regularizer's Hessian is not a shift, and Lanczos under it gives both ends exactly."""
    classifier = small_net()
    images = random_images(6, seed=1)
    plain_reference = exact_eigenvalues(classifier, images, LABELS)
    for weight_decay in (0.0, 0.3):
        reference = exact_eigenvalues(classifier, images, LABELS, weight_decay)
        result = hessian_spectrum(
            classifier,
            images,
            LABELS,
            batch_size=6,
            top_k=4,
            method="pyhessian",
            regularizer="sum-of-norms",
            weight_decay=weight_decay,
            iterations=20_000,
            tol=1e-12,
        )
        expected = by_magnitude(reference, 4)
        assert (expected < 0).any()  # a negative one among the top 4 by magnitude
        torch.testing.assert_close(result.eigenvalues[0], expected, rtol=1e-4, atol=0)
        assert (result.power_steps[0] < 20_000).all()  # every one stopped by the rule
        assert torch.isnan(result.bottom_eigenvalues).all()
        lanczos = hessian_spectrum(
            classifier,
            images,
            LABELS,
            batch_size=6,
            top_k=3,
            iterations=149,
            regularizer="sum-of-norms",
            weight_decay=weight_decay,
        )
        torch.testing.assert_close(lanczos.eigenvalues[0], reference.flip(0)[:3], rtol=1e-6, atol=1e-7)
        torch.testing.assert_close(lanczos.bottom_eigenvalues[0], reference[:3], rtol=1e-6, atol=1e-7)
    # The L2 part matters, and is not the constant shift of (wd / 2) ||w||^2.
    shift = (reference - plain_reference).abs()
    assert float(shift.max()) > 1e-2 and float(shift.max() - shift.min()) > 1e-2


def test_sum_of_norms_operator_equals_its_exact_hessian():
    """What norm_penalty adds to a loss's Hessian (here 1/2 ||w||^2's, I), materialised column by column, equals
    torch.func.hessian of c * sum_p ||p||; a tensor of norm 0 contributes nothing (no second derivative there)."""
    params = {
        "a": torch.tensor([[1.0, -2.0], [0.5, 3.0]], dtype=torch.float64),
        "b": torch.tensor([0.25, -0.75, 1.5], dtype=torch.float64),
        "zero": torch.zeros(2, dtype=torch.float64),
    }
    quadratic = HessianOperator(lambda p: sum(0.5 * (t**2).sum() for t in p.values()), params)
    operator = HessianOperator(
        lambda p: sum(0.5 * (t**2).sum() for t in p.values()), params, norm_penalty=0.4
    )
    identity = torch.eye(operator.numel, dtype=torch.float64)
    materialised = torch.stack(
        [operator.matvec(column) - quadratic.matvec(column) for column in identity], dim=1
    )

    def penalty(vector: torch.Tensor) -> torch.Tensor:
        a, b = vector[:4], vector[4:7]
        return 0.4 * (torch.linalg.vector_norm(a) + torch.linalg.vector_norm(b))

    expected = torch.zeros(9, 9, dtype=torch.float64)
    expected[:7, :7] = torch.func.hessian(penalty)(operator.flatten(params)[:7])
    torch.testing.assert_close(materialised, expected, rtol=1e-12, atol=1e-12)
    # Each block's eigenvalues: 0 along p, c / ||p|| across it.
    torch.testing.assert_close(
        torch.linalg.eigvalsh(materialised[:4, :4]),
        torch.tensor([0.0, 1.0, 1.0, 1.0], dtype=torch.float64) * 0.4 / params["a"].norm(),
        rtol=0,
        atol=1e-12,
    )


def pyhessian_starts(classifier: Classifier, seed: int, count: int) -> list[torch.Tensor]:
    """The start vectors PyHessian 0.1's `eigenvalues` draws after torch.manual_seed(seed): for each eigenvalue,
    `torch.randn(p.size())` for every parameter in `model.parameters()` order (pyhessian/hessian.py)."""
    generator = torch.Generator().manual_seed(seed)
    return [
        torch.cat([torch.randn(p.shape, generator=generator).reshape(-1) for p in classifier.parameters()])
        for _ in range(count)
    ]


def test_nll_part_equals_the_pyhessian_package(monkeypatch):
    """PyHessian 0.1 itself (`hessian(model, F.cross_entropy, data=..., cuda=False).eigenvalues(top_n=4)`, its
    defaults maxIter 100, tol 1e-3; it works on torch 2.14 unshimmed) against ours with the start vectors it draws.

    Tolerance from the stopping rule: both stop at the first step whose estimate moved by less than tol = 1e-3
    relative and return the previous estimate, so two runs of the same iterates that stopped one step apart differ
    by less than tol: rtol = tol. With the same iterates they stop at the same step and agree to float32 rounding
    (observed 4e-7), which the tighter 1e-5 checks; the eigenvectors agree too."""
    classifier = small_net(torch.float32)
    images = random_images(6, seed=1)
    for seed in (0, 1):
        starts = pyhessian_starts(classifier, seed, 4)
        monkeypatch.setattr(
            hessian_module,
            "_pyhessian_start",
            lambda seed, index, numel, like, rank, starts=starts: starts[rank],
        )
        ours = hessian_spectrum(classifier, images, LABELS, batch_size=6, top_k=4, method="pyhessian")
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            computer = pyhessian.hessian(classifier, F.cross_entropy, data=(images, LABELS), cuda=False)
            values, vectors = computer.eigenvalues(top_n=4)
        for param in classifier.parameters():
            param.grad = None  # PyHessian leaves create_graph gradients on the model
        reference = torch.tensor(values, dtype=torch.float64)
        assert (reference < 0).any()
        torch.testing.assert_close(ours.eigenvalues[0], reference, rtol=1e-3, atol=0)
        torch.testing.assert_close(ours.eigenvalues[0], reference, rtol=1e-5, atol=0)
        assert ours.iterations == 100 and ours.tol == 1e-3 and (ours.power_steps[0] < 100).all()

        with classifier.differentiable_attention():
            loss_fn, params = classifier_loss(classifier, images, LABELS)
            run = pyhessian_eigenvalues(HessianOperator(loss_fn, params).matvec, torch.stack(starts), top_k=4)
        torch.testing.assert_close(run.eigenvalues, ours.eigenvalues[0], rtol=0, atol=0)
        flat_vectors = torch.stack([torch.cat([part.reshape(-1) for part in vector]) for vector in vectors])
        cosines = (run.eigenvectors * flat_vectors).sum(1) / (
            run.eigenvectors.norm(dim=1) * flat_vectors.norm(dim=1)
        )
        assert float(cosines.min()) > 1 - 1e-5


class SaddleNet(nn.Module):
    """SmallNet's layers plus a scalar theta = 0 that adds 20 theta^2 to logit 0. With every label 0, the Hessian
    along theta is exactly -40 * mean(1 - p_0) (d logit / d theta = 0 at theta = 0, so it decouples), the largest
    eigenvalue in magnitude, and negative."""

    def __init__(self) -> None:
        super().__init__()
        self.body = SmallNet()
        self.theta = nn.Parameter(torch.zeros(()))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        logits = self.body(x)
        return logits + 20.0 * self.theta**2 * F.one_hot(torch.tensor(0), logits.shape[-1]).to(logits)


def test_a_large_negative_eigenvalue_is_reported_with_its_sign():
    classifier = Classifier(SaddleNet().double(), PREPROCESSING, name="saddle").eval()
    images, labels = random_images(6, seed=1), torch.zeros(6, dtype=torch.int64)
    with torch.no_grad():
        p0 = classifier(images).softmax(-1)[:, 0]
    saddle = -40.0 * float((1 - p0).mean())
    reference = exact_eigenvalues(classifier, images, labels)
    assert saddle < -5 and abs(float(reference[0]) - saddle) < 1e-8  # the most negative, and the largest |.|
    result = hessian_spectrum(
        classifier, images, labels, batch_size=6, top_k=3, method="pyhessian", iterations=5000, tol=1e-12
    )
    torch.testing.assert_close(result.eigenvalues[0], by_magnitude(reference, 3), rtol=1e-4, atol=0)
    assert result.max_eigenvalues[0] < 0 and result.pooled_eigenvalues[0] == result.eigenvalues[0, 0]
    # Our default ranks algebraically: the saddle is the bottom, not among the top.
    lanczos = hessian_spectrum(classifier, images, labels, batch_size=6, top_k=3, iterations=150)
    assert (lanczos.eigenvalues[0] > 0).all()
    assert abs(float(lanczos.min_eigenvalues[0]) - saddle) < 1e-6


def test_default_is_unchanged_and_the_switch_changes_what_it_should():
    """The defaults give the numbers of the code before the protocol existed (pinned from it, commit 33636f0:
    bit-identical there); method, regularizer and augmentation each change only their part."""
    classifier = small_net()
    images = random_images(6, seed=1)
    default = hessian_spectrum(classifier, images, LABELS, batch_size=3, seed=3, top_k=2, iterations=4)
    pinned_top = [[4.614258820232706, 1.2627120851955276], [1.8517383379986714, 0.18836142016899984]]
    pinned_bottom = [[-0.7940979146670218, 0.014264497340591941], [-0.7303403563632782, -0.0243988344273155]]
    torch.testing.assert_close(
        default.eigenvalues, torch.tensor(pinned_top, dtype=torch.float64), rtol=1e-12, atol=0
    )
    torch.testing.assert_close(
        default.bottom_eigenvalues, torch.tensor(pinned_bottom, dtype=torch.float64), rtol=1e-12, atol=0
    )
    power = hessian_spectrum(
        classifier, images, LABELS, batch_size=3, seed=3, method="power", iterations=5, weight_decay=0.05
    )
    torch.testing.assert_close(
        power.eigenvalues, torch.tensor([[1.8646505326403853], [0.3108129194561151]], dtype=torch.float64)
    )
    assert (default.method, default.regularizer, default.augmentation, default.power_steps) == (
        "lanczos",
        "half-squared-norm",
        None,
        None,
    )
    # The regularizer: no effect without weight decay; with it, half-squared-norm is a shift, sum-of-norms is not.
    kwargs = {"batch_size": 6, "top_k": 3, "iterations": 149}
    plain = hessian_spectrum(classifier, images, LABELS, **kwargs)
    zero_norms = hessian_spectrum(classifier, images, LABELS, regularizer="sum-of-norms", **kwargs)
    torch.testing.assert_close(zero_norms.eigenvalues, plain.eigenvalues, rtol=0, atol=0)
    squared = hessian_spectrum(classifier, images, LABELS, weight_decay=0.3, **kwargs)
    norms = hessian_spectrum(
        classifier, images, LABELS, weight_decay=0.3, regularizer="sum-of-norms", **kwargs
    )
    torch.testing.assert_close(squared.eigenvalues, plain.eigenvalues + 0.3, rtol=0, atol=1e-8)
    difference = norms.eigenvalues - plain.eigenvalues
    assert float(difference.max() - difference.min()) > 1e-3 and norms.regularizer == "sum-of-norms"
    # The method: magnitude order with signs instead of the algebraic top.
    magnitude = hessian_spectrum(
        classifier, images, LABELS, method="pyhessian", batch_size=6, top_k=3, iterations=5000, tol=1e-12
    )
    reference = exact_eigenvalues(classifier, images, LABELS)
    torch.testing.assert_close(magnitude.eigenvalues[0], by_magnitude(reference, 3), rtol=1e-4, atol=0)
    assert magnitude.eigenvalues[0, 1] < 0 < plain.eigenvalues[0, 2]
    torch.testing.assert_close(magnitude.pooled_eigenvalues, magnitude.eigenvalues[0])
    assert magnitude.plot().get_xlabel().startswith("Hessian eigenvalue")  # no NaN minima drawn
    # Deterministic from the seed, and the global RNG is left alone.
    state = torch.random.get_rng_state()
    first = hessian_spectrum(
        classifier, images, LABELS, method="pyhessian", batch_size=3, iterations=3, seed=5
    )
    assert torch.equal(torch.random.get_rng_state(), state)
    again = hessian_spectrum(
        classifier, images, LABELS, method="pyhessian", batch_size=3, iterations=3, seed=5
    )
    other = hessian_spectrum(
        classifier, images, LABELS, method="pyhessian", batch_size=3, iterations=3, seed=6
    )
    assert torch.equal(first.eigenvalues, again.eigenvalues) and not torch.equal(
        first.eigenvalues, other.eigenvalues
    )


def test_training_augmentation_feeds_the_loss_and_is_recorded():
    """With a recipe, each batch is `augment_batch` of (a seed derived from (seed, batch index), its images' ids) and
    the loss is the soft-target NLL: the eigenvalues equal that composition's, differ from the clean batch's, and
    the recipe is in to_dict."""
    classifier = small_net()
    images = random_images(6, seed=1)
    kwargs = {"batch_size": 3, "top_k": 2, "method": "pyhessian", "iterations": 30, "seed": 11}
    ids = torch.arange(6)  # prepare_inputs' sample ids of a tensor: its positions
    result = hessian_spectrum(classifier, images, LABELS, augmentation="park-kim-cifar100", **kwargs)
    clean = hessian_spectrum(classifier, images, LABELS, **kwargs)
    assert result.augmentation == "park-kim-cifar100" and clean.augmentation is None
    assert json.loads(json.dumps(result.to_dict()))["augmentation"] == "park-kim-cifar100"
    assert not torch.allclose(result.eigenvalues, clean.eigenvalues, rtol=1e-2)
    for index, part in enumerate((slice(0, 3), slice(3, 6))):
        pixels, targets = augment_batch(
            images[part].float(),
            LABELS[part],
            recipe="park-kim-cifar100",
            seed=hessian_module._augmentation_seed(11, index),
            num_classes=5,
            sample_ids=ids[part],
        )
        assert targets.shape == (3, 5) and torch.allclose(targets.sum(1), torch.ones(3))
        with classifier.differentiable_attention():
            loss_fn, params = classifier_loss(classifier, pixels, targets)
            operator = HessianOperator(loss_fn, params)
            starts = [
                hessian_module._pyhessian_start(11, index, operator.numel, pixels.double(), r) for r in (0, 1)
            ]
            run = pyhessian_eigenvalues(operator.matvec, torch.stack(starts), top_k=2, iterations=30)
        torch.testing.assert_close(result.eigenvalues[index], run.eigenvalues, rtol=0, atol=0)


def test_probe_task_merges_the_protocol_fields():
    """The runner's chunks (one mini-batch each) merge into the fields of one result: eigenvalues and power_steps
    concatenated by batch, regularizer, augmentation and tol shared."""
    classifier = small_net(torch.float32)
    task = PROBES["hessian"]
    params = task.check_params(
        {
            "batch_size": 3,
            "top_k": 2,
            "method": "pyhessian",
            "regularizer": "sum-of-norms",
            "weight_decay": 0.05,
            "augmentation": "park-kim-cifar100",
            "iterations": 20,
        }
    )
    images, ids = random_images(6, seed=1), torch.arange(10, 16)
    partials = [
        task.run(classifier, images[p], LABELS[p], ids[p], 7, params) for p in (slice(0, 3), slice(3, 6))
    ]
    merged = task.merge(partials)
    assert (merged["method"], merged["regularizer"], merged["augmentation"], merged["tol"]) == (
        "pyhessian",
        "sum-of-norms",
        "park-kim-cifar100",
        1e-3,
    )
    assert len(merged["eigenvalues"]) == len(merged["power_steps"]) == 2
    for row, part in enumerate((slice(0, 3), slice(3, 6))):
        alone = hessian_spectrum(
            classifier,
            images[part],
            LABELS[part],
            seed=chunk_seed(7, ids[part]),
            **params,
        )
        assert merged["eigenvalues"][row] == alone.eigenvalues[0].tolist()
        assert merged["power_steps"][row] == alone.power_steps[0].tolist()
    lanczos = task.merge([task.run(classifier, images, LABELS, ids, 7, task.check_params({"iterations": 4}))])
    assert lanczos["power_steps"] is None and lanczos["regularizer"] == "half-squared-norm"


def test_bad_protocol_arguments():
    classifier = small_net()
    images = random_images(2)
    for kwargs in (
        {"method": "lanczos-magnitude"},
        {"regularizer": "l1"},
        {"augmentation": "autoaugment"},
        {"method": "pyhessian", "density": True},
        {"method": "pyhessian", "tol": -1.0},
    ):
        with pytest.raises(ValueError, match=next(iter(kwargs.keys() - {"method"}), "method")):
            hessian_spectrum(classifier, images, LABELS[:2], **kwargs)


def test_report_figure_pools_every_top_eigenvalue_of_the_pyhessian_protocol():
    """Park & Kim histogram the top-k of every batch together; our Lanczos figure keeps the top one per batch."""
    from hf_vitrobust.probes.hessian_result import draw_hessian_spectrum

    nan = float("nan")
    eigenvalues = [[5.0, -2.0, 1.0], [4.0, 3.0, -0.5]]
    for method, expected in (("pyhessian", 6), ("lanczos", 2)):
        probe = {"method": method, "eigenvalues": eigenvalues, "bottom_eigenvalues": [[nan] * 3, [nan] * 3]}
        figure = draw_hessian_spectrum({"model": probe})
        counts = sum(bar.get_height() for bars in figure.axes[0].containers for bar in bars)
        assert counts == expected, method
