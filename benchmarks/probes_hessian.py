"""Cost of one Hessian-vector product against one forward + backward pass (issue goal: HVP <= 3x fwd+bwd).

Models (random init, eval mode, mean cross-entropy over a batch of 8 at 224x224, 1000 classes): a transformers
ViT-Tiny-sized ViT (hidden 192, 12 layers, 3 heads, patch 16) and AlterNet-18. Attention runs on the explicit path
(`differentiable_attention`) for every measurement, fwd+bwd included, since that is the path the HVP needs.

HVP variants timed, all through `hf_vitrobust.probes.hessian.HessianOperator` (or its building blocks):
- forward_over_reverse: torch.func.jvp of torch.func.grad, one product (forward + backward with dual numbers);
- reverse_over_reverse (one-off): gradient with create_graph, then a second backward: what a single HVP costs;
- reverse_over_reverse (amortised): the second backward alone, through a retained gradient graph: what each of
  the Lanczos / power iterations of `hessian_spectrum` costs after the first.
Each time is the best of `repeats` runs after one warm-up.

    python benchmarks/probes_hessian.py [--device cpu] [--threads 2]
"""

import argparse
import json
import time
from collections.abc import Callable

import torch
from torch.func import grad, jvp
from transformers import ViTConfig, ViTForImageClassification

from hf_vitrobust.models import AlterNetConfig, AlterNetForImageClassification, Classifier, Preprocessing
from hf_vitrobust.probes.hessian import HessianOperator, classifier_loss

BATCH = 8
SIZE = 224


def build(name: str) -> Classifier:
    torch.manual_seed(0)
    if name == "vit-tiny":
        config = ViTConfig(
            image_size=SIZE,
            patch_size=16,
            hidden_size=192,
            num_hidden_layers=12,
            num_attention_heads=3,
            intermediate_size=768,
            num_labels=1000,
        )
        module = ViTForImageClassification(config)
    else:
        module = AlterNetForImageClassification(AlterNetConfig.from_preset("alternet-18", num_labels=1000))
    return Classifier(module, Preprocessing(input_size=SIZE), name=name).eval()


def best_time(fn: Callable[[], object], repeats: int, sync: Callable[[], None]) -> float:
    fn()
    sync()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - start)
    return min(times)


def measure(name: str, device: str, repeats: int) -> dict[str, float]:
    classifier = build(name).to(device)
    generator = torch.Generator().manual_seed(0)
    pixels = torch.rand(BATCH, 3, SIZE, SIZE, generator=generator).to(device)
    labels = torch.randint(0, 1000, (BATCH,), generator=generator).to(device)
    sync = torch.cuda.synchronize if device.startswith("cuda") else (lambda: None)
    results: dict[str, float] = {}
    with classifier.differentiable_attention():
        loss_fn, params = classifier_loss(classifier, pixels, labels)
        vector = {k: torch.randn(v.shape, generator=generator).to(v) for k, v in params.items()}
        leaves = {k: v.clone().requires_grad_(True) for k, v in params.items()}

        def forward_backward() -> None:
            torch.autograd.grad(loss_fn(leaves), list(leaves.values()))

        def forward_over_reverse() -> None:
            jvp(grad(loss_fn), (params,), (vector,))

        def reverse_over_reverse_once() -> None:
            grads = torch.autograd.grad(loss_fn(leaves), list(leaves.values()), create_graph=True)
            torch.autograd.grad(grads, list(leaves.values()), grad_outputs=list(vector.values()))

        operator = HessianOperator(loss_fn, params, method="reverse_over_reverse")
        operator.apply(vector)  # builds and keeps the gradient graph

        results["forward_backward_s"] = best_time(forward_backward, repeats, sync)
        results["forward_over_reverse_s"] = best_time(forward_over_reverse, repeats, sync)
        results["reverse_over_reverse_once_s"] = best_time(reverse_over_reverse_once, repeats, sync)
        results["reverse_over_reverse_amortised_s"] = best_time(lambda: operator.apply(vector), repeats, sync)
    base = results["forward_backward_s"]
    for key in ("forward_over_reverse", "reverse_over_reverse_once", "reverse_over_reverse_amortised"):
        results[f"{key}_ratio"] = results[f"{key}_s"] / base
    results["parameters"] = sum(p.numel() for p in params.values())
    return results


def run(device: str = "cpu", threads: int = 2, repeats: int = 2) -> dict:
    """Times and HVP / (forward + backward) ratios for ViT-Tiny and AlterNet-18, batch 8 at 224."""
    torch.set_num_threads(threads)
    out: dict = {
        "device": device,
        "threads": threads,
        "batch": BATCH,
        "image_size": SIZE,
        "torch": torch.__version__,
    }
    for name in ("vit-tiny", "alternet-18"):
        out[name] = measure(name, device, repeats)
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    print(json.dumps(run(args.device, args.threads, args.repeats), indent=2))
