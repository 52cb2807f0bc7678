"""hessian_spectrum (Park & Kim 2022, Fig. 1 / Fig. 4), its Hessian-vector products and eigen-solvers, and the
differentiable-attention hook: checked against eigvalsh of known and fully materialised Hessians and against finite
differences of gradients."""

import json

import pytest
import torch
import torch.nn.functional as F
from probe_models import FAMILIES, PREPROCESSING, random_images
from torch import nn
from torch.func import functional_call

from hf_vitrobust.models import Classifier
from hf_vitrobust.models.attention_paths import differentiable_attention
from hf_vitrobust.probes.hessian import (
    HessianOperator,
    classifier_loss,
    hessian_spectrum,
    hessian_vector_product,
    lanczos,
    power_iteration,
)

HVP_METHODS = ("forward_over_reverse", "reverse_over_reverse")


def known_symmetric(eigenvalues: list[float], seed: int = 0) -> torch.Tensor:
    """Q diag(eigenvalues) Q^T with a random orthogonal Q, float64."""
    generator = torch.Generator().manual_seed(seed)
    q, _ = torch.linalg.qr(
        torch.randn(len(eigenvalues), len(eigenvalues), generator=generator, dtype=torch.float64)
    )
    return q @ torch.diag(torch.tensor(eigenvalues, dtype=torch.float64)) @ q.T


EIGENVALUES = [5.0, 3.0, 2.0, 1.0, 0.5, 0.25, 0.0, -0.5, -1.0, -2.5, -4.0, -6.0]


def quadratic_loss(matrix: torch.Tensor):
    """loss(w) = 1/2 w^T A w + 1^T w over two parameter tensors, so that the Hessian is exactly A."""

    def loss_fn(params):
        w = torch.cat([params["a"].reshape(-1), params["b"].reshape(-1)])
        return 0.5 * w @ matrix @ w + w.sum()

    params = {"a": torch.ones(2, 3, dtype=torch.float64), "b": torch.linspace(-1, 1, 6, dtype=torch.float64)}
    return loss_fn, params


@pytest.mark.parametrize("method", HVP_METHODS)
def test_quadratic_hvp_lanczos_and_power_match_eigvalsh(method):
    matrix = known_symmetric(EIGENVALUES)
    loss_fn, params = quadratic_loss(matrix)
    operator = HessianOperator(loss_fn, params, method=method)
    vector = torch.arange(12, dtype=torch.float64) - 5.5
    torch.testing.assert_close(operator.matvec(vector), matrix @ vector)
    product = hessian_vector_product(loss_fn, params, operator.unflatten(vector), method=method)
    torch.testing.assert_close(operator.flatten(product), matrix @ vector)
    reference = torch.linalg.eigvalsh(matrix)  # ascending
    start = torch.ones(12, dtype=torch.float64)
    run = lanczos(operator.matvec, start, 12)
    torch.testing.assert_close(run.ritz_values, reference, atol=1e-9, rtol=0)
    torch.testing.assert_close(run.ritz_weights.sum(), torch.tensor(1.0, dtype=torch.float64))
    top = power_iteration(operator.matvec, start, top_k=3, iterations=2000, tol=1e-13)
    bottom = power_iteration(operator.matvec, start, top_k=3, iterations=2000, tol=1e-13, largest=False)
    torch.testing.assert_close(top, reference.flip(0)[:3], atol=1e-6, rtol=0)
    torch.testing.assert_close(bottom, reference[:3], atol=1e-6, rtol=0)


def test_weight_decay_shift_on_operator():
    matrix = known_symmetric(EIGENVALUES, seed=1)
    loss_fn, params = quadratic_loss(matrix)
    operator = HessianOperator(loss_fn, params, shift=0.3)
    run = lanczos(operator.matvec, torch.ones(12, dtype=torch.float64), 12)
    torch.testing.assert_close(run.ritz_values, torch.linalg.eigvalsh(matrix) + 0.3, atol=1e-9, rtol=0)


def test_lanczos_stops_on_invariant_subspace():
    # A start vector in the span of two eigenvectors: the Krylov space has dimension 2, so Lanczos stops there.
    values = torch.tensor([3.0, -2.0, 1.0, 0.5], dtype=torch.float64)
    run = lanczos(lambda v: values * v, torch.tensor([1.0, 1.0, 0.0, 0.0], dtype=torch.float64), 4)
    torch.testing.assert_close(run.ritz_values, torch.tensor([-2.0, 3.0], dtype=torch.float64))


class TinyMLP(nn.Module):
    """Pool to 2x2, then 12 -> 4 (tanh) -> 3: 67 parameters, a non-convex loss (negative Hessian eigenvalues)."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(3)
        self.net = nn.Sequential(
            nn.AdaptiveAvgPool2d(2),
            nn.Flatten(),
            nn.Linear(12, 4),
            nn.Tanh(),
            nn.Dropout(0.5),
            nn.Linear(4, 3),
        )
        with torch.no_grad():
            for param in self.parameters():
                param.mul_(3.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


def tiny_mlp_classifier() -> Classifier:
    return Classifier(TinyMLP().double(), PREPROCESSING, name="tiny-mlp").eval()


def full_hessian_eigenvalues(
    classifier: Classifier, pixels: torch.Tensor, labels: torch.Tensor
) -> torch.Tensor:
    """eigvalsh of the parameter Hessian of the mean cross-entropy, materialised with autograd.functional."""
    names = [name for name, _ in classifier.named_parameters()]
    shapes = [p.shape for _, p in classifier.named_parameters()]
    flat = torch.cat([p.detach().reshape(-1) for _, p in classifier.named_parameters()])

    def loss(vector):
        parts = vector.split([s.numel() for s in shapes])
        params = {name: part.view(s) for name, part, s in zip(names, parts, shapes, strict=True)}
        return F.cross_entropy(functional_call(classifier, params, (pixels.double(),)), labels)

    return torch.linalg.eigvalsh(torch.autograd.functional.hessian(loss, flat))


@pytest.mark.parametrize("hvp", HVP_METHODS)
def test_spectrum_matches_materialised_hessian(hvp):
    classifier = tiny_mlp_classifier()
    images, labels = random_images(6), torch.tensor([0, 1, 2, 0, 1, 2])
    result = hessian_spectrum(classifier, images, labels, batch_size=3, top_k=3, iterations=67, hvp=hvp)
    assert result.eigenvalues.shape == (2, 3) and result.batch_sizes == [3, 3]
    for row, part in enumerate((slice(0, 3), slice(3, 6))):
        reference = full_hessian_eigenvalues(classifier, images[part].double(), labels[part])
        torch.testing.assert_close(result.eigenvalues[row], reference.flip(0)[:3], atol=1e-7, rtol=1e-7)
        torch.testing.assert_close(result.bottom_eigenvalues[row], reference[:3], atol=1e-7, rtol=1e-7)
    assert (result.min_eigenvalues < 0).all()  # the tanh network is not convex here


@pytest.mark.slow
def test_power_method_matches_materialised_hessian():
    classifier = tiny_mlp_classifier()
    images, labels = random_images(3), torch.tensor([0, 1, 2])
    reference = full_hessian_eigenvalues(classifier, images.double(), labels)
    power = hessian_spectrum(
        classifier, images, labels, method="power", iterations=400, tol=1e-10, hvp="reverse_over_reverse"
    )
    torch.testing.assert_close(power.max_eigenvalues, reference[-1:], atol=1e-3, rtol=1e-3)
    torch.testing.assert_close(power.min_eigenvalues, reference[:1], atol=1e-3, rtol=1e-3)


def test_weight_decay_shifts_every_eigenvalue():
    classifier = tiny_mlp_classifier()
    images, labels = random_images(3), torch.tensor([0, 1, 2])
    plain = hessian_spectrum(classifier, images, labels, iterations=67, top_k=2)
    decayed = hessian_spectrum(classifier, images, labels, iterations=67, top_k=2, weight_decay=0.05)
    torch.testing.assert_close(decayed.eigenvalues, plain.eigenvalues + 0.05, atol=1e-8, rtol=0)
    torch.testing.assert_close(decayed.bottom_eigenvalues, plain.bottom_eigenvalues + 0.05, atol=1e-8, rtol=0)
    assert decayed.weight_decay == 0.05


def test_eval_mode_determinism_and_same_batches_same_numbers():
    classifier = tiny_mlp_classifier()
    images, labels = random_images(4), torch.tensor([0, 1, 2, 1])
    # Few iterations, so the numbers depend on the start vector: determinism is then a real check.
    first = hessian_spectrum(classifier, images, labels, batch_size=2, iterations=4, seed=7)
    again = hessian_spectrum(classifier, images, labels, batch_size=2, iterations=4, seed=7)
    torch.testing.assert_close(first.eigenvalues, again.eigenvalues, atol=0, rtol=0)
    other_seed = hessian_spectrum(classifier, images, labels, batch_size=2, iterations=4, seed=8)
    assert not torch.equal(first.eigenvalues, other_seed.eigenvalues)
    # The same batch (index 0) gives the same numbers, whatever follows it.
    alone = hessian_spectrum(classifier, images[:2], labels[:2], batch_size=2, iterations=4, seed=7)
    torch.testing.assert_close(alone.eigenvalues[0], first.eigenvalues[0], atol=0, rtol=0)
    # Eval mode (no dropout) is used and every module's mode restored.
    classifier.train()
    in_train_mode = hessian_spectrum(classifier, images, labels, batch_size=2, iterations=4, seed=7)
    torch.testing.assert_close(in_train_mode.eigenvalues, first.eigenvalues, atol=0, rtol=0)
    assert all(module.training for module in classifier.modules())
    torch.manual_seed(0)
    state = torch.random.get_rng_state()
    hessian_spectrum(classifier, images, labels, batch_size=2, iterations=2)
    assert torch.equal(torch.random.get_rng_state(), state)  # the global RNG is untouched


def test_density_to_dict_and_plots():
    classifier = tiny_mlp_classifier()
    images, labels = random_images(4), torch.tensor([0, 1, 2, 1])
    result = hessian_spectrum(
        classifier, images, labels, batch_size=2, iterations=10, density=True, density_vectors=2, top_k=2
    )
    assert result.density_nodes.shape == result.density_weights.shape == (2, 20)
    torch.testing.assert_close(result.density_weights.sum(1), torch.ones(2, dtype=torch.float64))
    # Ritz values lie inside the spectrum, whose ends the first run's extreme Ritz values approximate from within.
    for row in range(2):
        reference = full_hessian_eigenvalues(
            classifier, images[2 * row : 2 * row + 2].double(), labels[2 * row : 2 * row + 2]
        )
        assert result.density_nodes[row].min() >= reference[0] - 1e-6
        assert result.density_nodes[row].max() <= reference[-1] + 1e-6
    grid = torch.linspace(-50, 50, 2001, dtype=torch.float64)
    mass = torch.trapezoid(result.density(grid, sigma=1.0), grid)
    assert abs(float(mass) - 1.0) < 1e-3
    data = json.loads(json.dumps(result.to_dict()))
    assert data["probe"] == "hessian_spectrum" and len(data["eigenvalues"]) == 2
    assert result.plot().get_xlabel().startswith("Hessian eigenvalue")
    assert result.plot(kind="density").get_ylabel() == "density"


def test_bad_arguments():
    classifier = tiny_mlp_classifier()
    images, labels = random_images(2), torch.tensor([0, 1])
    for kwargs in (
        {"top_k": 0},
        {"iterations": 1, "top_k": 2},
        {"method": "arnoldi"},
        {"weight_decay": -1.0},
        {"hvp": "finite_difference"},
        {"method": "power", "density": True},
        {"max_batches": 0},
    ):
        with pytest.raises(ValueError):
            hessian_spectrum(classifier, images, labels, **kwargs)
    with pytest.raises(ValueError, match="labels"):
        hessian_spectrum(classifier, images)


def finite_difference_check(classifier: Classifier, hvp: str, step: float) -> None:
    """H v from `HessianOperator` against the central difference of gradients (g(w + e v) - g(w - e v)) / 2e, in
    float64 under the differentiable-attention hook."""
    classifier = classifier.double()
    images, labels = random_images(2).double(), torch.tensor([3, 7])
    with differentiable_attention(classifier):
        loss_fn, params = classifier_loss(classifier, images, labels)
        operator = HessianOperator(loss_fn, params, method=hvp)
        generator = torch.Generator().manual_seed(0)
        vector = torch.randn(operator.numel, generator=generator, dtype=torch.float64)
        vector /= vector.norm()
        product = operator.matvec(vector)
        flat = operator.flatten(params)

        def gradient(point: torch.Tensor) -> torch.Tensor:
            leaves = {
                k: v.detach().clone().requires_grad_(True) for k, v in operator.unflatten(point).items()
            }
            grads = torch.autograd.grad(loss_fn(leaves), list(leaves.values()))
            return torch.cat([g.reshape(-1) for g in grads])

        difference = (gradient(flat + step * vector) - gradient(flat - step * vector)) / (2 * step)
    assert float(product.norm()) > 1e-3
    assert float((product - difference).norm() / difference.norm()) < 3e-5


@pytest.mark.slow
@pytest.mark.parametrize("hvp", HVP_METHODS)
@pytest.mark.parametrize(
    ("family", "step"),
    # transformers' eager attention takes its softmax in float32, which limits how small the step may be;
    # AlterNet (ReLU kinks) needs a small one.
    [("transformers_vit", 3e-3), ("alternet", 1e-4)],
)
def test_hvp_matches_finite_difference(family, step, hvp):
    finite_difference_check(FAMILIES[family](), hvp, step)


def test_sdpa_vit_needs_the_hook_and_hook_restores_settings():
    """torch 2.14 on CPU: unmasked SDPA runs the flash kernel, which has no double backward or forward-mode AD; the
    hook switches every attention path to the explicit one and restores each setting afterwards."""
    vit, timm_vit, alternet = FAMILIES["transformers_vit"](), FAMILIES["timm_vit"](), FAMILIES["alternet"]()
    images, labels = random_images(2), torch.tensor([1, 2])
    loss_fn, params = classifier_loss(vit, images, labels)
    vector = {name: torch.ones_like(p) for name, p in params.items()}
    with pytest.raises((RuntimeError, NotImplementedError)):
        hessian_vector_product(loss_fn, params, vector, method="reverse_over_reverse")
    timm_modules = [m for m in timm_vit.modules() if hasattr(m, "fused_attn")]
    assert timm_modules and all(m.fused_attn for m in timm_modules)
    assert alternet.module.config._attn_implementation == "sdpa"
    with torch.no_grad():
        fused = [model(images) for model in (vit, timm_vit, alternet)]
    with (
        vit.differentiable_attention(),
        timm_vit.differentiable_attention(),
        alternet.differentiable_attention(),
    ):
        assert (
            vit.module.config._attn_implementation == alternet.module.config._attn_implementation == "eager"
        )
        assert not any(m.fused_attn for m in timm_modules)
        hessian_vector_product(loss_fn, params, vector)  # works now
        with torch.no_grad():
            explicit = [model(images) for model in (vit, timm_vit, alternet)]
    for a, b in zip(fused, explicit, strict=True):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-5)
    assert vit.module.config._attn_implementation == alternet.module.config._attn_implementation == "sdpa"
    assert all(m.fused_attn for m in timm_modules)


@pytest.mark.slow
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_runs_on_every_family(family):
    classifier = FAMILIES[family]()
    images, labels = random_images(2), torch.tensor([4, 5])
    result = hessian_spectrum(classifier, images, labels, batch_size=1, max_batches=1, iterations=2, top_k=1)
    assert result.eigenvalues.shape == result.bottom_eigenvalues.shape == (1, 1)
    assert torch.isfinite(result.eigenvalues).all()
    assert (result.eigenvalues >= result.bottom_eigenvalues).all()
    assert result.batch_sizes == [1]


def test_hook_restores_settings_on_error():
    vit, alternet = FAMILIES["transformers_vit"](), FAMILIES["alternet"]()
    with pytest.raises(KeyError), differentiable_attention(vit), differentiable_attention(alternet):
        assert alternet.module.config._attn_implementation == "eager"
        raise KeyError("boom")
    assert vit.module.config._attn_implementation == alternet.module.config._attn_implementation == "sdpa"
    with pytest.raises(TypeError), differentiable_attention("not a module"):
        pass
