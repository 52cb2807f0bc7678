"""Device placement: every corruption, ImageNet-P perturbation, image helper and probe, and one evaluation run, with
their inputs on CUDA, emulated on the CPU by `fake_cuda` (CI has no GPU). Each call must (a) never mix devices in an
op, (b) leave its outputs on the device (runner partials: on the CPU, as documented) and (c) give the values of
the same call on the CPU bit for bit, since the emulator computes with the CPU's kernels.

Corruptions and probes are parametrised over their registries, so a newly registered one is covered without edits.
"""

import copy
from collections.abc import Callable
from typing import Any

import pandas as pd
import pytest
import torch
import yaml
from fake_cuda import cpu_values, fake_cuda, is_fake_cuda
from probe_models import FAMILIES, NUM_CLASSES, random_images, transformers_vit

from hf_vitrobust.corruptions import (
    FRAME_COUNTS,
    PERTURBATIONS,
    add_band_noise,
    add_fourier_noise,
    corrupt,
    cutout,
    fourier_basis,
    fourier_noise,
    perturbation_sequence,
    registered_corruptions,
)
from hf_vitrobust.corruptions.blur import torch_paths_only
from hf_vitrobust.corruptions.fourier_basis import fourier_signs
from hf_vitrobust.corruptions.geometric import elastic_transform_with_draws
from hf_vitrobust.corruptions.motion_glass import (
    glass_blur_with_offsets,
    glass_offsets,
    motion_blur_with_angles,
)
from hf_vitrobust.corruptions.snow import snow_with_draws
from hf_vitrobust.corruptions.weather import blend_frost
from hf_vitrobust.evaluation.config import EvaluationConfig
from hf_vitrobust.evaluation.runner import evaluate
from hf_vitrobust.models import Classifier
from hf_vitrobust.probes import pgd_attack
from hf_vitrobust.probes.base import predict_logits
from hf_vitrobust.probes.spec import PROBES, ProbeNotApplicable

SEED = 7


def uint8_images(n: int, height: int, width: int, seed: int) -> torch.Tensor:
    """n random uint8 (3, height, width) images, the dtype datasets decode to."""
    generator = torch.Generator().manual_seed(seed)
    return torch.randint(0, 256, (n, 3, height, width), dtype=torch.uint8, generator=generator)


def run_on_cpu_and_fake_cuda(call: Callable[[str], Any]) -> tuple[Any, Any]:
    """`call("cpu")`, then `call("cuda")` under `fake_cuda()` (the call moves its inputs to the device it is given);
    fails with the recorded violations if the CUDA run mixed devices. Returns (CPU output, fake CUDA output)."""
    expected = call("cpu")
    with fake_cuda() as recorder:
        actual = call("cuda")
    if recorder.violations:
        pytest.fail(recorder.report())
    return expected, actual


def assert_same_values_on_fake_cuda(actual: torch.Tensor, expected: torch.Tensor) -> None:
    assert is_fake_cuda(actual), (
        f"the output is a {type(actual).__name__} on {actual.device}, not on the device"
    )
    values = cpu_values(actual)
    assert (values.dtype, values.shape) == (expected.dtype, expected.shape)
    differ = values != expected
    assert not differ.any(), (
        f"{int(differ.sum())} of {differ.numel()} values differ from the CPU run, by up to "
        f"{(values.double() - expected.double()).abs().max().item():.3g}"
    )


def assert_no_fake_cuda_tensor(value: Any, path: str = "output") -> None:
    """Runner partials are documented to hold CPU tensors only (the runner saves them with torch.save)."""
    if isinstance(value, dict):
        for key, item in value.items():
            assert_no_fake_cuda_tensor(item, f"{path}[{key!r}]")
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            assert_no_fake_cuda_tensor(item, f"{path}[{index}]")
    else:
        assert not is_fake_cuda(value), f"{path} was left on the device"


# ------------------------------------------------------------------------------------------------ corruptions
CORRUPTION_IMAGES = {"imagenet": uint8_images(3, 40, 48, seed=1), "cifar": uint8_images(3, 32, 32, seed=2)}
SAMPLE_IDS = [5, 9, 11]


@pytest.mark.parametrize("profile", sorted(CORRUPTION_IMAGES))
@pytest.mark.parametrize("severity", [1, 5])
@pytest.mark.parametrize("name", registered_corruptions())
def test_corruption_on_cuda(name, severity, profile):
    images = CORRUPTION_IMAGES[profile]
    # The CPU run takes the torch path that CUDA runs; the CPU-only fast paths, which differ by float rounding, are
    # compared with it in tests/corruptions/test_corruptions_cpu_fast_paths.py.
    with torch_paths_only():
        expected, actual = run_on_cpu_and_fake_cuda(
            lambda device: corrupt(
                images.to(device), name, severity, seed=SEED, sample_ids=SAMPLE_IDS, profile=profile
            )
        )
    assert_same_values_on_fake_cuda(actual, expected)


@pytest.mark.parametrize("name", PERTURBATIONS)
def test_perturbation_sequence_on_cuda(name):
    images = uint8_images(2, 40, 44, seed=3)
    expected, actual = run_on_cpu_and_fake_cuda(
        lambda device: perturbation_sequence(images.to(device), name, seed=SEED, sample_ids=[3, 4], crop=32)
    )
    assert expected.shape == (2, FRAME_COUNTS[name], 3, 32, 32)
    assert_same_values_on_fake_cuda(actual, expected)


# ------------------------------------------------------------------------------------------------ image helpers
# The helpers' explicit draws and indices are CPU tensors while the images are on the device: a caller that draws
# them with the default generator, or builds them with torch.tensor, passes exactly that.
HELPER_SIZE = 32
_draws = torch.Generator().manual_seed(11)
NOISE_X = torch.rand(2, HELPER_SIZE, HELPER_SIZE, generator=_draws)
NOISE_Y = torch.rand(2, HELPER_SIZE, HELPER_SIZE, generator=_draws)
AFFINE_NOISE = torch.rand(2, 3, 2, generator=_draws)
SNOW_NOISE = torch.randn(2, HELPER_SIZE, HELPER_SIZE, dtype=torch.float64, generator=_draws)
FREQUENCIES = [[1, 2], [3, -1]]
HELPER_IDS = torch.tensor([1, 2])

HELPERS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "elastic_transform_with_draws-cifar": lambda images: elastic_transform_with_draws(
        images, 3, "cifar", NOISE_X, NOISE_Y, AFFINE_NOISE
    ),
    "elastic_transform_with_draws-imagenet": lambda images: elastic_transform_with_draws(
        images, 3, "imagenet", NOISE_X, NOISE_Y
    ),
    "blend_frost": lambda images: blend_frost(
        images, 3, "imagenet", torch.tensor([0, 4]), torch.tensor([3, 40]), torch.tensor([5, 17])
    ),
    "add_fourier_noise": lambda images: add_fourier_noise(
        images, fourier_basis(FREQUENCIES, HELPER_SIZE), 2.0, fourier_signs(SEED, HELPER_IDS, FREQUENCIES)
    ),
    "snow_with_draws": lambda images: snow_with_draws(
        images, 3, "imagenet", SNOW_NOISE, torch.tensor([10.0, 200.0])
    ),
    "glass_blur_with_offsets": lambda images: glass_blur_with_offsets(
        images, 0.7, 1, glass_offsets(SEED, HELPER_IDS, 1, 2, HELPER_SIZE, HELPER_SIZE)
    ),
    "motion_blur_with_angles": lambda images: motion_blur_with_angles(
        images, 5, 2, torch.tensor([10.0, 200.0])
    ),
    "cutout": lambda images: cutout(images, 0.2, seed=SEED, sample_ids=HELPER_IDS),
    "add_band_noise": lambda images: add_band_noise(
        images, 0.5, magnitude=torch.tensor([0.05, 0.1, 0.2]), seed=SEED, sample_ids=HELPER_IDS
    ),
    "fourier_noise": lambda images: fourier_noise(images, (2, 3), seed=SEED, sample_ids=HELPER_IDS),
}


@pytest.mark.parametrize("name", sorted(HELPERS))
def test_image_helper_on_cuda_with_cpu_draws(name):
    images = random_images(2, seed=4)
    # The CPU-only fast paths are compared with the torch path in test_corruptions_cpu_fast_paths.py.
    with torch_paths_only():
        expected, actual = run_on_cpu_and_fake_cuda(lambda device: HELPERS[name](images.to(device)))
    assert (expected - images).abs().max() > 0.01  # the helper did change the images
    assert_same_values_on_fake_cuda(actual, expected)


# ------------------------------------------------------------------------------------------------ probes
# Small settings per probe task; a task registered later runs with its defaults.
PROBE_SETTINGS: dict[str, dict[str, Any]] = {
    "occlusion": {"ratios": [0.0, 0.3], "batch_size": 3},
    "fourier_heatmap": {"window": 3, "eps": 4.0},
    "deepfool": {"steps": 3, "candidates": 3},
    "pgd": {"method": "sign", "eps": 0.03, "steps": 2, "random_start": True},
    "hessian": {"batch_size": 4, "top_k": 2, "iterations": 3, "density": True},
    "feature_fourier": {"batch_size": 3},
    "cka": {"minibatch_size": 4},
    "frequency_noise": {"frequencies": [0.1, 0.9], "epsilon": 5.0},
    "loss_landscape": {"resolution": 2, "weight_decay": 0.01},
}
PROBE_PIXELS = random_images(4, seed=3)
PROBE_IDS = torch.tensor([101, 108, 115, 122])


def half_wrong_labels(classifier: Classifier) -> torch.Tensor:
    """The classifier's predictions, with every other one moved to the next class: accuracies between 0 and 1,
    and correctly classified images for PGD."""
    labels = predict_logits(classifier, PROBE_PIXELS).argmax(dim=1)
    labels[::2] = (labels[::2] + 1) % NUM_CLASSES
    return labels


@pytest.mark.parametrize("name", sorted(PROBES))
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_probe_task_on_cuda(family, name):
    """The runner's view of a probe: pixels, labels and sample ids on the classifier's device, one chunk, merged."""
    task = PROBES[name]
    classifier = FAMILIES[family]()
    try:
        task.check_applicable(classifier)
    except ProbeNotApplicable as reason:
        pytest.skip(str(reason))
    labels = half_wrong_labels(classifier)
    params = task.check_params(PROBE_SETTINGS.get(name, {}))
    models, partials = {}, {}

    def run(device: str) -> dict[str, Any]:
        models[device] = copy.deepcopy(classifier).to(device)
        tensors = (PROBE_PIXELS.to(device), labels.to(device), PROBE_IDS.to(device))
        partials[device] = task.run(models[device], *tensors, SEED, params)
        return task.merge([partials[device]])

    expected, actual = run_on_cpu_and_fake_cuda(run)
    assert all(is_fake_cuda(parameter) for parameter in models["cuda"].parameters())
    assert_no_fake_cuda_tensor(partials["cuda"], "partial")
    assert actual == expected


def test_pgd_attack_on_cuda_with_a_cpu_init():
    """The random start `init` is drawn on the CPU by a caller while pixels and labels are on the device."""
    classifier = transformers_vit()
    labels = half_wrong_labels(classifier)
    init = (torch.rand(PROBE_PIXELS.shape, generator=torch.Generator().manual_seed(5)) - 0.5) * 0.06

    def attack(device: str) -> tuple[torch.Tensor, ...]:
        model = copy.deepcopy(classifier).to(device)
        return pgd_attack(
            model, PROBE_PIXELS.to(device), labels.to(device), method="sign", eps=0.03, steps=2, init=init
        )

    expected, actual = run_on_cpu_and_fake_cuda(attack)
    assert len(actual) == len(expected) == 3  # adversarial pixels, losses, predictions
    for actual_part, expected_part in zip(actual, expected, strict=True):
        assert_same_values_on_fake_cuda(actual_part, expected_part)


# ------------------------------------------------------------------------------------------------ runner
RUNNER_SUITE = {
    "name": "device",
    "description": "two photos, one corruption, two probes",
    "batch_size": 4,
    "seed": 3,
    "chunk_size": 2,
    "models": ["builtin:efficientnet_lite0"],
    "benchmarks": {
        "imagenet-val": {"source": "builtin", "limit": 4},
        "imagenet-c": {
            "source": "generated:builtin",
            "limit": 2,
            "corruptions": ["gaussian_noise"],
            "severities": [3],
        },
    },
    "probes": {
        "occlusion": {"benchmark": "imagenet-val", "num_images": 2, "params": {"ratios": [0.0, 0.2]}},
        "pgd": {
            "benchmark": "imagenet-val",
            "num_images": 2,
            "params": {"method": "sign", "eps": 0.004, "step_size": 0.002, "steps": 1},
        },
    },
}


def test_evaluation_run_on_cuda(tmp_path):
    suite = tmp_path / "device.yaml"
    suite.write_text(yaml.safe_dump(RUNNER_SUITE))

    def run(device: str) -> dict[str, Any]:
        config = EvaluationConfig(
            suite=str(suite), output=tmp_path / device, device=device, progress=False, report=False
        )
        return evaluate(config)

    expected, actual = run_on_cpu_and_fake_cuda(run)
    assert actual["environment"]["device_type"] == "cuda"
    # On a GPU the generated ImageNet-C is corrupted on the model's device, on the CPU in the DataLoader workers.
    assert actual["settings"]["corruption_device"] == "device"
    assert expected["settings"]["corruption_device"] == "workers"
    assert set(actual["probes"]["builtin_efficientnet_lite0"]) == {"occlusion", "pgd"}
    for key in ("metrics", "probes", "summary"):
        assert actual[key] == expected[key], key
    for benchmark in ("imagenet-val", "imagenet-c"):
        files = [
            tmp_path / device / "predictions" / "builtin_efficientnet_lite0" for device in ("cpu", "cuda")
        ]
        cpu, cuda = (pd.read_parquet(folder / f"{benchmark}.parquet") for folder in files)
        assert len(cpu) == (4 if benchmark == "imagenet-val" else 2)
        pd.testing.assert_frame_equal(cuda, cpu)


# ------------------------------------------------------------------------------------------------ the checker
def test_the_checker_reports_what_cuda_rejects():
    with fake_cuda() as recorder:
        images = torch.rand(2, 3, 4, 4).to("cuda")
        shifted = images + torch.ones(4)  # a CPU tensor with a CUDA one
        array = shifted.numpy()  # .numpy() of a CUDA tensor
        picked = torch.arange(10)[torch.tensor([1, 2], device="cuda")]  # CPU tensor, CUDA indices
        images[torch.tensor([0])] = torch.zeros(1, 3, 4, 4)  # CPU values written into a CUDA tensor
    kinds = [violation.kind for violation in recorder.violations]
    assert kinds == [
        "cpu tensor in an op with cuda tensors",
        ".numpy() of a cuda tensor",
        "cpu tensor indexed by cuda indices",
        "cpu values written into a cuda tensor",
    ], recorder.report()
    lines = [violation.source[-1] for violation in recorder.violations]
    assert "test_device_placement.py" in lines[0] and "images + torch.ones(4)" in lines[0]
    assert "shifted.numpy()" in lines[1]
    assert array.shape == (2, 3, 4, 4) and picked.tolist() == [1, 2]  # the run went on with the CPU values


def test_the_checker_allows_what_cuda_allows():
    with fake_cuda() as recorder:
        images = torch.arange(6.0, device="cuda")
        scaled = images * torch.tensor(2.0)  # a CPU 0-dim tensor is a scalar to CUDA kernels
        picked = scaled[torch.tensor([1, 4])]  # CPU indices into a CUDA tensor
        scaled[torch.tensor([0])] = torch.tensor(-1.0)
        on_cpu = scaled.cpu().numpy()
    assert not recorder.violations, recorder.report()
    assert is_fake_cuda(picked) and picked.tolist() == [2.0, 8.0]
    assert on_cpu.tolist() == [-1.0, 2.0, 4.0, 6.0, 8.0, 10.0]


def test_fake_cuda_tensors_behave_like_cuda_tensors():
    """What the equality tests above rely on: gradients flow back through `.to("cuda")`, in-place view ops reshape
    the fake tensor, and an assignment to `.data` that the emulator cannot follow is refused, not computed wrong."""
    leaf = torch.tensor([1.0, 2.0], requires_grad=True)
    with fake_cuda() as recorder:
        (leaf.to("cuda") * 3).sum().backward()
        grid = torch.zeros(3, device="cuda").unsqueeze_(-1)
        shifted = grid + torch.arange(2.0, device="cuda")
        weight = torch.nn.Linear(2, 1).to("cuda").weight
        weight.data = torch.zeros(1, 2, dtype=torch.float64, device="cuda")
        with pytest.raises(RuntimeError, match="no longer matches its CPU values"):
            weight * 2
    assert not recorder.violations, recorder.report()
    assert not is_fake_cuda(leaf.grad) and leaf.grad.tolist() == [3.0, 3.0]
    assert grid.shape == (3, 1) and shifted.shape == (3, 2) and is_fake_cuda(shifted)
