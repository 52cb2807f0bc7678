"""Probe tasks of the evaluation runner: a probe run on chunks and merged equals the probe run once on all images
(within 1e-6), partials survive torch.save / torch.load(weights_only=True), params are checked before any work, and
image selection depends only on (seed, sample ids)."""

import inspect
import io
import json
import math

import numpy as np
import pytest
import torch
from probe_models import NUM_CLASSES, PREPROCESSING, random_images, timm_cnn, transformers_vit

from hf_vitrobust.evaluation.probe_images import SELECTIONS, select_images
from hf_vitrobust.models import Classifier
from hf_vitrobust.probes import feature_similarity, hessian_spectrum
from hf_vitrobust.probes.base import predict_logits
from hf_vitrobust.probes.spec import PROBES, ProbeNotApplicable, chunk_seed, get_probe

SEED = 7
# Small settings per task (keys are probe keywords or task settings) and the chunk length used in the test.
SETTINGS = {
    "occlusion": ({"ratios": [0.0, 0.1, 0.5], "batch_size": 3}, 4),
    "fourier_heatmap": ({"window": 5, "eps": 4.0}, 4),
    "deepfool": ({"steps": 5, "candidates": 3}, 4),
    "pgd": ({"method": "sign", "eps": 0.03, "steps": 3, "random_start": True}, 4),
    "attention": ({"max_maps": 16, "max_layer_maps": 16}, 4),
    "gradcam": ({"max_maps": 16}, 4),
    "hessian": ({"batch_size": 4, "top_k": 2, "iterations": 4, "density": True}, 4),
    "feature_fourier": ({"batch_size": 3}, 4),
    "feature_variance": ({}, 4),
    "cka": ({"minibatch_size": 4}, 4),
    "frequency_noise": ({"frequencies": [0.1, 0.5, 0.9], "epsilon": 5.0}, 4),
    "lesion": ({}, 4),
    # A chunk is one mini-batch in a run (the spec's chunk_param), as here: the origin's statistics are per batch.
    "loss_landscape": ({"resolution": 3, "weight_decay": 0.01, "batch_size": 4}, 4),
}
# Keys of the probe's to_dict() that the merged dict leaves out on purpose (too large for results.json).
OMITTED = {"deepfool": {"perturbations"}, "attention": {"image"}, "gradcam": {"image"}}
# Maps are stored rounded to 4 decimals.
ROUNDED = {"attention": {"maps", "per_layer"}, "gradcam": {"cams"}}


@pytest.fixture(scope="module")
def vit():
    return transformers_vit()


@pytest.fixture(scope="module")
def data(vit):
    """12 images, labels right for half of them, and sample ids that are not positions."""
    pixels = random_images(12, seed=3)
    predictions = predict_logits(vit, pixels).argmax(dim=1)
    labels = predictions.clone()
    wrong = torch.tensor([0, 0, 0, 1, 1, 0, 1, 1, 0, 0, 1, 0], dtype=torch.bool)  # chunks differ in accuracy
    labels[wrong] = (labels[wrong] + 1) % NUM_CLASSES
    ids = torch.arange(12, dtype=torch.int64) * 7919 + 101
    return pixels, labels, ids


def assert_close(actual, expected, path="", atol=1e-6):
    """Recursive comparison of JSON-like values: numbers within rtol 1e-6 / atol, the rest exactly."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict) and set(actual) == set(expected), f"{path}: keys differ"
        for key in expected:
            assert_close(actual[key], expected[key], f"{path}.{key}", atol)
    elif isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), f"{path}: lengths differ"
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            assert_close(a, e, f"{path}[{i}]", atol)
    elif isinstance(expected, bool) or expected is None or isinstance(expected, str):
        assert actual == expected, f"{path}: {actual!r} != {expected!r}"
    elif isinstance(expected, int) and isinstance(actual, int) and not isinstance(actual, bool):
        assert actual == expected, f"{path}: {actual} != {expected}"
    else:
        assert isinstance(actual, int | float) and not isinstance(actual, bool), f"{path}: {actual!r}"
        assert math.isclose(actual, expected, rel_tol=1e-6, abs_tol=atol), f"{path}: {actual} != {expected}"


def roundtrip(partial):
    """What the runner does with a partial: torch.save, then torch.load(weights_only=True)."""
    buffer = io.BytesIO()
    torch.save(partial, buffer)
    buffer.seek(0)
    return torch.load(buffer, weights_only=True)


def chunks_of(n, size):
    return [slice(start, min(start + size, n)) for start in range(0, n, size)]


def probe_kwargs(task, params, ids):
    """The probe function's own keyword arguments for the whole-run reference."""
    kwargs = {k: v for k, v in params.items() if k in inspect.signature(task.probe).parameters}
    if "sample_ids" in inspect.signature(task.probe).parameters:
        kwargs["sample_ids"] = ids
    if task.name == "pgd":
        kwargs["num_images"] = None
    return kwargs


@pytest.mark.parametrize("name", sorted(PROBES))
def test_chunks_merge_to_the_whole_run(name, vit, data):
    task = PROBES[name]
    params, size = SETTINGS[name]
    pixels, labels, ids = data
    if name != "cka":  # 10 images: chunks of 4, 4 and 2
        pixels, labels, ids = pixels[:10], labels[:10], ids[:10]
    if task.selection == "correct":
        predictions = predict_logits(vit, pixels).argmax(dim=1)
        keep = select_images(
            "correct", None, [str(i) for i in ids.tolist()], labels.numpy(), predictions.numpy()
        )
        keep = torch.from_numpy(keep)
        assert len(keep) == 6
        pixels, labels, ids = pixels[keep], labels[keep], ids[keep]
    n = pixels.shape[0]
    task_labels = labels if task.needs_labels or name in ("deepfool", "gradcam") else None

    checked = task.check_params(params)
    whole = task.merge([roundtrip(task.run(vit, pixels, task_labels, ids, SEED, checked))])
    partials = [
        roundtrip(
            task.run(
                vit,
                pixels[part],
                task_labels[part] if task_labels is not None else None,
                ids[part],
                SEED,
                checked,
            )
        )
        for part in chunks_of(n, size)
    ]
    assert len(partials) >= 2
    merged = task.merge(partials)
    json.dumps(merged, allow_nan=False)  # JSON-safe
    assert merged["num_images"] == n
    assert merged["probe"] == task.result_type.probe_name()

    kwargs = probe_kwargs(task, checked, ids)
    if name == "hessian":
        # One chunk = one mini-batch whose start vector is keyed by (seed, the chunk's ids).
        parts = [
            hessian_spectrum(vit, pixels[p], labels[p], seed=chunk_seed(SEED, ids[p]), **kwargs).to_dict()
            for p in chunks_of(n, size)
        ]
        reference = {
            key: (
                [row for part in parts for row in part[key]]
                if isinstance(parts[0][key], list)
                else parts[0][key]
            )
            for key in parts[0]
        }
        whole_reference = hessian_spectrum(
            vit, pixels, labels, seed=chunk_seed(SEED, ids), **kwargs
        ).to_dict()
        assert len(merged["eigenvalues"]) == 3 and merged["batch_sizes"] == [4, 4, 2]
        assert merged["batch_seeds"] == [chunk_seed(SEED, ids[p]) for p in chunks_of(n, size)]
    else:
        reference = task.probe(vit, pixels, task_labels, seed=SEED, **kwargs).to_dict()
        whole_reference = reference
        assert_close(merged, whole, name)
    for result, expected in ((merged, reference), (whole, whole_reference)):
        for key in expected:
            if key in OMITTED.get(name, ()):
                assert key not in result
                continue
            if key in ROUNDED.get(name, ()):
                assert_close(result[key], expected[key], f"{name}.{key}", atol=5.1e-5)
            else:
                assert_close(result[key], expected[key], f"{name}.{key}")


def test_merged_values_are_not_trivial(vit, data):
    """The equality test above is only meaningful if the probes measure something that differs between chunks."""
    pixels, labels, ids = data
    task = PROBES["occlusion"]
    params = task.check_params(SETTINGS["occlusion"][0])
    first = task.merge([task.run(vit, pixels[:4], labels[:4], ids[:4], SEED, params)])
    second = task.merge([task.run(vit, pixels[4:], labels[4:], ids[4:], SEED, params)])
    assert first["accuracy"] != second["accuracy"]
    # Randomness follows the sample ids: other ids put the holes elsewhere, so confidences change.
    moved = task.merge([task.run(vit, pixels[:4], labels[:4], ids[:4] + 1, SEED, params)])
    assert moved["confidence"][1:] != first["confidence"][1:]
    assert moved["confidence"][0] == pytest.approx(first["confidence"][0])  # ratio 0: no hole


@pytest.mark.parametrize("name", sorted(PROBES))
def test_check_params_rejects_unknown_keys(name):
    task = PROBES[name]
    with pytest.raises(ValueError, match="bogus_key") as error:
        task.check_params({"bogus_key": 1})
    assert "batch_size" in str(error.value)  # the accepted keys are listed
    with pytest.raises(ValueError, match="did you mean 'batch_size'"):
        task.check_params({"batch_sise": 2})
    for key in ("seed", "limit", "sample_ids"):
        with pytest.raises(ValueError, match=key):
            task.check_params({key: 1})
    # Every accepted key is a keyword of the probe function or a task setting, and defaults come along.
    signature = inspect.signature(task.probe).parameters
    assert all(key in signature or key in task.extra_params for key in task.accepted_params)
    assert task.check_params({"batch_size": 5}) == {**task.default_params, "batch_size": 5}
    assert task.selection in SELECTIONS and task.chunk_length({}) >= 1


def test_runner_owned_params_are_explained():
    with pytest.raises(ValueError, match=r"num_images.*set by the runner"):
        PROBES["pgd"].check_params({"num_images": 5})
    with pytest.raises(ValueError, match="max_batches"):
        PROBES["hessian"].check_params({"max_batches": 2})
    assert PROBES["hessian"].chunk_length({"batch_size": 6}) == 6
    assert PROBES["cka"].chunk_length({"minibatch_size": 12}) == 12
    assert PROBES["occlusion"].chunk_length({"batch_size": 6}) == PROBES["occlusion"].chunk_size


def test_run_checks_params_and_labels_before_work(vit, data):
    pixels, labels, ids = data
    with pytest.raises(ValueError, match="bogus"):
        PROBES["occlusion"].run(vit, pixels[:4], labels[:4], ids[:4], SEED, {"bogus": 1})
    missing = labels[:4].clone()
    missing[2] = -1
    with pytest.raises(ValueError, match="needs labels"):
        PROBES["occlusion"].run(vit, pixels[:4], missing, ids[:4], SEED, {})
    # Probes that use labels only when present run on predictions instead.
    partial = PROBES["deepfool"].run(vit, pixels[:4], missing, ids[:4], SEED, {"steps": 2})
    assert bool(partial["clean_correct"].all())
    with pytest.raises(ValueError, match="Partials disagree on 'ratios'"):
        task = PROBES["occlusion"]
        task.merge(
            [
                task.run(vit, pixels[:4], labels[:4], ids[:4], SEED, {"ratios": [0.0, 0.1]}),
                task.run(vit, pixels[4:8], labels[4:8], ids[4:8], SEED, {"ratios": [0.0, 0.2]}),
            ]
        )
    # Probes that never read labels ignore them (here: out of the model's label space).
    ignored = PROBES["feature_variance"].run(vit, pixels[:4], torch.full((4,), 999), ids[:4], SEED, {})
    assert ignored["num_images"] == 4
    with pytest.raises(ValueError, match="cannot be merged"):
        PROBES["lesion"].merge([{"task": "occlusion", "num_images": 1}])


def test_pgd_skips_chunks_without_correct_images(vit, data):
    """A chunk the model gets all wrong attacks nothing; image indices stay positions in the selected list."""
    pixels, labels, ids = data
    pixels, labels, ids = pixels[:8], labels[:8].clone(), ids[:8]
    labels[:4] = (predict_logits(vit, pixels[:4]).argmax(dim=1) + 3) % NUM_CLASSES  # chunk 0: all wrong
    task = PROBES["pgd"]
    params = task.check_params({"steps": 2, "method": "sign", "eps": 0.03})
    partials = [roundtrip(task.run(vit, pixels[p], labels[p], ids[p], SEED, params)) for p in chunks_of(8, 4)]
    assert partials[0]["losses"] is None
    merged = task.merge(partials)
    reference = task.probe(
        vit, pixels, labels, seed=SEED, sample_ids=ids, num_images=None, steps=2, method="sign", eps=0.03
    ).to_dict()
    assert merged["image_indices"] == reference["image_indices"] == [5]
    assert_close(merged["loss_mean"], reference["loss_mean"])
    assert_close(merged["loss_std"], reference["loss_std"])
    assert merged["num_selected"] == 8 and merged["num_images"] == 1
    with pytest.raises(ValueError, match="none of the selected images"):
        task.merge(partials[:1])


def test_cka_leaves_out_a_last_chunk_below_four_images(vit, data):
    pixels, _, ids = data
    task = PROBES["cka"]
    params = task.check_params({"minibatch_size": 4})
    partials = [task.run(vit, pixels[p], None, ids[p], SEED, params) for p in chunks_of(10, 4)]
    merged = task.merge(partials)
    assert merged["unused_images"] == 2 and merged["num_images"] == 8 and merged["num_minibatches"] == 2
    reference = feature_similarity(vit, pixels[:8], minibatch_size=4).to_dict()
    assert_close(merged["cka"], reference["cka"])
    assert all(abs(merged["cka"][i][i] - 1.0) < 1e-9 for i in range(len(merged["cka"])))


def test_map_tasks_keep_at_most_max_maps(vit, data):
    pixels, _, ids = data
    task = PROBES["attention"]
    params = task.check_params({"max_maps": 3})
    partials = [task.run(vit, pixels[p], None, ids[p], SEED, params) for p in chunks_of(10, 2)]
    merged = task.merge(partials)
    reference = task.probe(vit, pixels[:10]).to_dict()
    assert len(merged["maps"]) == 3 and all(len(maps) == 1 for maps in merged["per_layer"].values())
    assert_close(merged["maps"], reference["maps"][:3], "maps", atol=5.1e-5)
    mean_map = np.asarray(reference["maps"]).mean(axis=0)
    np.testing.assert_allclose(np.asarray(merged["mean_map"]), mean_map, atol=5.1e-5)


def test_check_applicable(vit):
    for task in PROBES.values():
        task.check_applicable(vit)  # a ViT supports every probe
    cnn = timm_cnn()
    with pytest.raises(ProbeNotApplicable, match="attention"):
        PROBES["attention"].check_applicable(cnn)
    assert issubclass(ProbeNotApplicable, ValueError)
    PROBES["gradcam"].check_applicable(cnn)
    PROBES["lesion"].check_applicable(cnn)
    linear = Classifier(
        torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3 * 32 * 32, NUM_CLASSES)), PREPROCESSING
    ).eval()
    with pytest.raises(ProbeNotApplicable, match="residual units"):
        PROBES["lesion"].check_applicable(linear)
    frozen = Classifier(
        torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3 * 32 * 32, NUM_CLASSES)), PREPROCESSING
    ).eval()
    frozen.requires_grad_(False)
    with pytest.raises(ProbeNotApplicable, match="no trainable parameters"):
        PROBES["hessian"].check_applicable(frozen)


def test_get_probe_task():
    assert get_probe("occlusion") is PROBES["occlusion"]
    assert get_probe("occlusion_sweep") is PROBES["occlusion"]  # the probe function's name
    assert get_probe("feature_similarity") is PROBES["cka"]
    with pytest.raises(ValueError, match="Did you mean 'occlusion'"):
        get_probe("occlusoin")
    assert set(PROBES) == {
        "occlusion",
        "fourier_heatmap",
        "deepfool",
        "pgd",
        "attention",
        "gradcam",
        "hessian",
        "feature_fourier",
        "feature_variance",
        "cka",
        "frequency_noise",
        "lesion",
        "loss_landscape",
    }


def test_chunk_seed():
    ids = torch.tensor([5, 9, 11])
    assert chunk_seed(3, ids) == chunk_seed(3, [5, 9, 11]) < 2**53
    assert chunk_seed(3, ids) != chunk_seed(4, ids)
    assert chunk_seed(3, ids) != chunk_seed(3, torch.tensor([5, 9, 12]))


IDS = [f"val/{i:05d}.JPEG" for i in range(40)]


def test_select_random_depends_only_on_seed_and_ids():
    chosen = select_images("random", 10, IDS, seed=1)
    assert chosen.dtype == np.int64 and len(chosen) == 10 and len(set(chosen.tolist())) == 10
    assert np.all(np.diff(chosen) > 0)  # ascending positions
    np.testing.assert_array_equal(chosen, select_images("random", 10, IDS, seed=1))
    assert not np.array_equal(chosen, select_images("random", 10, IDS, seed=2))
    # The same ids are drawn whatever the order of the list.
    order = np.random.default_rng(0).permutation(len(IDS))
    shuffled = [IDS[i] for i in order]
    drawn = {shuffled[i] for i in select_images("random", 10, shuffled, seed=1)}
    assert drawn == {IDS[i] for i in chosen}
    # Fewer available: all of them; None: all of them.
    np.testing.assert_array_equal(select_images("random", 100, IDS[:5], seed=1), np.arange(5))
    np.testing.assert_array_equal(select_images("random", None, IDS, seed=1), np.arange(40))
    # Uniform: over 400 seeds each of 40 ids is drawn about 400 * 10 / 40 = 100 times.
    counts = np.zeros(40)
    for seed in range(400):
        counts[select_images("random", 10, IDS, seed=seed)] += 1
    assert counts.sum() == 4000 and counts.min() > 60 and counts.max() < 140


def test_select_correct_and_first():
    labels = np.array([1, 2, 3, -1, 5, 6, 7, 8])
    predictions = np.array([1, 0, 3, 0, 5, 0, 7, 8])
    np.testing.assert_array_equal(select_images("correct", 3, IDS[:8], labels, predictions), [0, 2, 4])
    np.testing.assert_array_equal(
        select_images("correct", None, IDS[:8], labels, predictions), [0, 2, 4, 6, 7]
    )
    no_label = np.array([1, 2, 3, -1, 5, 6, 7, 8])
    assert 3 not in select_images("correct", None, IDS[:8], no_label, np.where(no_label < 0, -1, predictions))
    np.testing.assert_array_equal(select_images("first", 3, IDS[:8], labels, predictions, seed=5), [0, 1, 2])
    with pytest.raises(ValueError, match="predictions"):
        select_images("correct", 3, IDS[:8], labels, None)
    with pytest.raises(ValueError, match="selection must be one of"):
        select_images("best", 3, IDS[:8])
    with pytest.raises(ValueError, match="num_images"):
        select_images("first", 0, IDS[:8])


@pytest.mark.parametrize(
    "task", [task for task in PROBES.values() if task.choices], ids=lambda task: task.name
)
def test_named_options_are_checked_when_the_suite_is_read(task):
    """Every protocol switch accepts exactly its named options: the probe's default is one of them, each passes
    `check_params`, a misspelt one fails with the closest name before any work, and a suite carrying it fails."""
    from hf_vitrobust.evaluation.suite import suite_from_dict

    signature = inspect.signature(task.probe).parameters
    for key, valid in task.choices.items():
        assert key in task.accepted_params, key
        if key in signature:
            assert signature[key].default in valid, (key, signature[key].default)
        for value in valid:
            assert task.check_params({key: value})[key] == value
        named = next(value for value in valid if isinstance(value, str))
        with pytest.raises(ValueError, match=f"{key} must be one of .*Did you mean {named!r}"):
            task.check_params({key: named[:-1]})
        suite = {
            "name": "s",
            "benchmarks": {"imagenet-val": {}},
            "probes": {task.name: {"num_images": 4, "params": {key: 3}}},
        }
        with pytest.raises(ValueError, match=f"{key} must be one of"):
            suite_from_dict(suite)
