# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Per-point intervals over images of the probe curves (issue 19): the merged dicts' "intervals" are the Wilson
interval of each proportion's per-image correctness and the Student-t interval of each mean's per-image values
(re-derived here with scipy), they do not depend on how the images were cut into chunks, a dict without them
renders its headline as before, and `ProbeSpec.probe_intervals` recomputes them at another level."""

import math
import re
from pathlib import Path

import numpy as np
import pytest
import torch
from probe_models import NUM_CLASSES, random_images, timm_cnn, timm_vit
from scipy import stats

from hf_vitrobust.analysis.results import load_results
from hf_vitrobust.corruptions.frequency_noise import DEFAULT_BANDWIDTH, IMAGENET_STD, add_band_noise
from hf_vitrobust.corruptions.occlusion import cutout
from hf_vitrobust.probes import PROBES
from hf_vitrobust.probes.base import predict_logits
from hf_vitrobust.probes.feature_spectrum import log_amplitude_diagonal
from hf_vitrobust.probes.pgd import pgd_attack

SEED = 5
N = 12
CHUNKS = (slice(0, 5), slice(5, 9), slice(9, N))
OCCLUSION = {"ratios": [0.0, 0.2, 0.5], "batch_size": 1}
FREQUENCY_NOISE = {"frequencies": [0.1, 0.9], "epsilon": 1.0, "batch_size": 1}
PGD = {"method": "sign", "eps": 0.03, "steps": 2, "batch_size": 1}
FEATURE_VARIANCE = {"batch_size": 1}
OLD_RUN = Path(__file__).resolve().parents[1] / "fixtures" / "old_run_6f0f446" / "run"


@pytest.fixture(scope="module")
def model():
    return timm_cnn()


@pytest.fixture(scope="module")
def data(model):
    """N images whose labels are the model's prediction for every other image and wrong for the rest."""
    pixels = random_images(N, seed=3)
    labels = predict_logits(model, pixels).argmax(dim=1)
    labels[1::2] = (labels[1::2] + 1) % NUM_CLASSES
    ids = torch.arange(N, dtype=torch.int64) * 7919 + 101
    return pixels, labels, ids


def run(name, model, data, params, chunks=(slice(0, N),)):
    spec = PROBES.get(name)
    pixels, labels, ids = data
    checked = spec.check_params(params)
    return [spec.run(model, pixels[c], labels[c], ids[c], SEED, checked) for c in chunks]


@pytest.fixture(scope="module")
def merged(model, data):
    """Merged dicts of occlusion, frequency noise, PGD and feature variance, from one chunk and from three."""
    out = {}
    for name, params in (
        ("occlusion", OCCLUSION),
        ("frequency_noise", FREQUENCY_NOISE),
        ("pgd", PGD),
        ("feature_variance", FEATURE_VARIANCE),
    ):
        spec = PROBES.get(name)
        one = run(name, model, data, params)
        several = run(name, model, data, params, CHUNKS)
        out[name] = (spec.merge(one), spec.merge(several), several)
    return out


def wilson(k, n, level=0.95):
    ci = stats.binomtest(int(k), int(n)).proportion_ci(confidence_level=level, method="wilson")
    return ci.low, ci.high


def student_t(values, level=0.95):
    values = np.asarray(values, dtype=np.float64)
    sem = values.std(ddof=1) / math.sqrt(values.size)
    return stats.t.interval(level, values.size - 1, loc=values.mean(), scale=sem)


def test_occlusion_intervals_are_wilson_of_the_per_image_correctness(model, data, merged):
    pixels, labels, ids = data
    probe = merged["occlusion"][1]
    entry = probe["intervals"]
    assert (entry["confidence_level"], entry["method"], entry["unit"]) == (0.95, "wilson", "image")
    correct = [
        predict_logits(model, cutout(pixels, ratio, seed=SEED, sample_ids=ids)).argmax(dim=1) == labels
        for ratio in OCCLUSION["ratios"]
    ]
    counts = [int(c.sum()) for c in correct]
    assert probe["num_correct"] == counts
    assert min(counts) > 0 and max(counts) < N  # no interval at the edge: the bounds are not trivial
    for i, k in enumerate(counts):
        low, high = wilson(k, N)
        assert entry["accuracy"]["low"][i] == pytest.approx(low, abs=1e-12)
        assert entry["accuracy"]["high"][i] == pytest.approx(high, abs=1e-12)
        assert entry["accuracy"]["low"][i] < probe["accuracy"][i] < entry["accuracy"]["high"][i]


def test_frequency_noise_intervals_are_wilson_and_paired_t_of_the_per_image_correctness(model, data, merged):
    pixels, labels, ids = data
    probe = merged["frequency_noise"][1]
    entry = probe["intervals"]
    clean = (predict_logits(model, pixels).argmax(dim=1) == labels).double()
    magnitude = [FREQUENCY_NOISE["epsilon"] * s for s in IMAGENET_STD]
    assert entry["clean_accuracy"]["low"] == pytest.approx(wilson(clean.sum(), N)[0], abs=1e-12)
    assert entry["clean_accuracy"]["high"] == pytest.approx(wilson(clean.sum(), N)[1], abs=1e-12)
    discordant = []
    for i, frequency in enumerate(FREQUENCY_NOISE["frequencies"]):
        noisy = add_band_noise(
            pixels,
            frequency,
            magnitude=magnitude,
            bandwidth=DEFAULT_BANDWIDTH,
            seed=SEED,
            sample_ids=ids,
            clip=False,
        )
        correct = (predict_logits(model, noisy).argmax(dim=1) == labels).double()
        low, high = wilson(correct.sum(), N)
        assert entry["accuracy"]["low"][i] == pytest.approx(low, abs=1e-12)
        assert entry["accuracy"]["high"][i] == pytest.approx(high, abs=1e-12)
        difference = (clean - correct).numpy()  # the drop is the mean of the paired per-image differences
        discordant.append(int(np.abs(difference).sum()))
        low, high = student_t(difference)
        assert entry["accuracy_drop"]["method"] == "student-t"
        assert entry["accuracy_drop"]["low"][i] == pytest.approx(low, abs=1e-12)
        assert entry["accuracy_drop"]["high"][i] == pytest.approx(high, abs=1e-12)
    assert probe["num_discordant"] == discordant and max(discordant) > 0


def test_pgd_interval_is_student_t_of_the_per_image_losses(model, data, merged):
    pixels, labels, _ = data
    probe = merged["pgd"][1]
    correct = predict_logits(model, pixels).argmax(dim=1) == labels
    _, losses, predictions = pgd_attack(
        model, pixels[correct], labels[correct], method="sign", eps=PGD["eps"], steps=PGD["steps"]
    )
    losses = losses.double().numpy()
    entry = probe["intervals"]
    assert entry["method"] == "student-t" and probe["num_images"] == int(correct.sum())
    for step in range(PGD["steps"] + 1):
        low, high = student_t(losses[:, step])
        assert entry["loss_mean"]["low"][step] == pytest.approx(low, rel=1e-5)
        assert entry["loss_mean"]["high"][step] == pytest.approx(high, rel=1e-5)
        assert high - low > 1e-4  # the spread of the images gives the interval a width
    fooled = int((predictions != labels[correct]).sum())
    low, high = wilson(fooled, int(correct.sum()))
    assert probe["num_fooled"] == fooled
    assert entry["success_rate"]["method"] == "wilson"
    assert (entry["success_rate"]["low"], entry["success_rate"]["high"]) == pytest.approx(
        (low, high), abs=1e-12
    )


def test_feature_variance_interval_is_student_t_of_the_per_image_variances(model, data, merged):
    pixels, _, _ = data
    probe = merged["feature_variance"][1]
    layers = probe["layers"]
    with torch.no_grad():
        maps = model.feature_maps(pixels, layers)
    compared = 0
    for i, layer in enumerate(layers):
        flat = maps[layer].double().flatten(2)
        if flat.shape[-1] < 2:  # a 1 x 1 map has no spatial variance, and no interval
            assert probe["intervals"]["variance"]["low"][i] is None
            continue
        low, high = student_t(flat.var(dim=-1).mean(dim=1).numpy())
        assert probe["intervals"]["variance"]["low"][i] == pytest.approx(low, rel=1e-6)
        assert probe["intervals"]["variance"]["high"][i] == pytest.approx(high, rel=1e-6)
        compared += 1
    assert compared >= 3


def test_feature_fourier_interval_is_student_t_of_the_per_image_delta(model, data):
    pixels, _, _ = data
    probe = PROBES.get("feature_fourier").merge(
        run("feature_fourier", model, data, {"batch_size": 4}, CHUNKS)
    )
    with torch.no_grad():
        maps = model.feature_maps(pixels, probe["layers"])
    compared = 0
    for i, layer in enumerate(probe["layers"]):
        diagonal = log_amplitude_diagonal(maps[layer])
        if diagonal.shape[1] < 2:  # a 1 x 1 map has no frequency above 0
            assert probe["intervals"]["delta_log_amplitude"]["low"][i] is None
            continue
        low, high = student_t((diagonal[:, -1] - diagonal[:, 0]).numpy())
        assert probe["intervals"]["delta_log_amplitude"]["low"][i] == pytest.approx(low, rel=1e-6, abs=1e-9)
        assert probe["intervals"]["delta_log_amplitude"]["high"][i] == pytest.approx(high, rel=1e-6, abs=1e-9)
        compared += 1
    assert compared >= 3
    rows = PROBES.get("feature_fourier").table(probe)
    assert re.fullmatch(r"\S+ \[\S+, \S+\]", rows["Δ log amplitude, last layer"])


def test_fourier_heatmap_intervals_from_the_half_window_equal_those_of_every_cell(model, data):
    # Under the symmetry each evaluated cell stands for its mirror too: the per-image map errors, and so the
    # interval of the map's mean error, are those of evaluating every cell directly.
    spec = PROBES.get("fourier_heatmap")
    half, full = (
        spec.merge(
            run("fourier_heatmap", model, data, {"window": 3, "eps": 8.0, "use_symmetry": symmetry}, CHUNKS)
        )
        for symmetry in (True, False)
    )
    assert half["evaluated_cells"] == 5 and full["evaluated_cells"] == 9
    assert half["num_errors"] == full["num_errors"]
    assert half["intervals"]["error_map"] == full["intervals"]["error_map"]
    assert half["map_error_square_sum"] == pytest.approx(full["map_error_square_sum"], rel=1e-12)
    low, high = half["intervals"]["map_mean_error"]["low"], half["intervals"]["map_mean_error"]["high"]
    assert (low, high) == pytest.approx(
        (full["intervals"]["map_mean_error"]["low"], full["intervals"]["map_mean_error"]["high"]), rel=1e-9
    )
    assert low < np.mean(half["error_map"]) < high
    for row, errors in zip(half["num_errors"], half["intervals"]["error_map"]["low"], strict=True):
        for k, bound in zip(row, errors, strict=True):
            assert bound == pytest.approx(wilson(k, N)[0], abs=1e-12)
    k = half["num_clean_errors"]
    assert (
        half["intervals"]["clean_error"]["low"],
        half["intervals"]["clean_error"]["high"],
    ) == pytest.approx(wilson(k, N), abs=1e-12)


def test_lesion_drop_interval_is_paired_t_of_the_per_image_differences():
    # The tiny timm ViT, whose lesions change some predictions (the tiny ResNet's do not).
    vit = timm_vit()
    pixels = random_images(N, seed=3)
    labels = predict_logits(vit, pixels).argmax(dim=1)
    labels[1::2] = (labels[1::2] + 1) % NUM_CLASSES
    ids = torch.arange(N, dtype=torch.int64)
    probe = PROBES.get("lesion").merge(run("lesion", vit, (pixels, labels, ids), {}, CHUNKS))
    intact = (predict_logits(vit, pixels).argmax(dim=1) == labels).double()
    entry = probe["intervals"]
    assert (entry["baseline_accuracy"]["low"], entry["baseline_accuracy"]["high"]) == pytest.approx(
        wilson(intact.sum(), N), abs=1e-12
    )
    for i, unit in enumerate(probe["units"]):
        with vit.lesion([unit]):
            lesioned = (predict_logits(vit, pixels).argmax(dim=1) == labels).double()
        assert probe["num_correct"][i] == int(lesioned.sum())
        assert entry["accuracy"]["low"][i] == pytest.approx(wilson(lesioned.sum(), N)[0], abs=1e-12)
        difference = (intact - lesioned).numpy()
        assert probe["num_discordant"][i] == int(np.abs(difference).sum()) > 0
        low, high = student_t(difference)
        drop = entry["accuracy_drop"]
        assert (drop["low"][i], drop["high"][i]) == pytest.approx((low, high), abs=1e-12)


def test_deepfool_intervals_count_the_fooled_among_the_attacked_images(model, data):
    spec = PROBES.get("deepfool")
    probe = spec.merge(run("deepfool", model, data, {"steps": 3, "candidates": 3}, CHUNKS))
    attacked = np.asarray(probe["clean_correct"], dtype=bool)
    fooled = attacked & np.asarray(probe["success"], dtype=bool)
    assert 0 < attacked.sum() < N  # the labels make half the images misclassified: they are not attacked
    entry = probe["intervals"]
    low, high = wilson(fooled.sum(), attacked.sum())
    assert (entry["success_rate"]["low"], entry["success_rate"]["high"]) == pytest.approx(
        (low, high), abs=1e-12
    )
    low, high = student_t(np.asarray(probe["l2_norms"])[fooled])
    assert (entry["mean_l2"]["low"], entry["mean_l2"]["high"]) == pytest.approx((low, high), rel=1e-9)
    rows = spec.table(probe)
    assert rows["mean L2 of the perturbation"].endswith("]") and "[" in rows["success rate (%)"]


def test_deepfool_mean_l2_is_clipped_at_zero_and_keeps_its_upper_bound():
    """Issue 38: a norm's interval never goes below 0. Five fooled images, four tiny perturbations and one large:
    the Student-t interval (scipy) dips below 0; the stored one starts at exactly 0 with the same upper bound. The
    demo's [-0.008, 0.098] was this case."""
    norms = np.array([0.001, 0.002, 0.0015, 0.2, 0.003, 0.0])
    probe = {
        "success": [1, 1, 1, 1, 1, 0],
        "clean_correct": [1, 1, 1, 1, 1, 1],
        "l2_norms": norms.tolist(),
        "mean_l2": float(norms[:5].mean()),
        "success_rate": 5 / 6,
    }
    low, high = student_t(norms[:5])
    assert low < 0.0
    entry = PROBES.get("deepfool").probe_intervals(probe, 0.95)
    assert entry["mean_l2"]["low"] == 0.0 and entry["mean_l2"]["high"] == pytest.approx(high, abs=1e-12)
    assert (entry["success_rate"]["low"], entry["success_rate"]["high"]) == pytest.approx(
        wilson(5, 6), abs=1e-12
    )


def test_pgd_loss_intervals_keep_the_sign_of_their_record():
    """The every-step record holds cross-entropies (>= 0: the interval is clipped at 0); Paul & Chen's notebook
    record holds their negation (<= 0: clipped at 0 from above, never at 0 from below, which would put the lower
    bound above the mean). Three images, two steps; expectations from scipy's t-interval."""
    losses = np.array([[0.01, 0.9], [0.02, 1.1], [2.5, 1.3]])
    for record, sign in (("every-step", 1.0), ("paul-chen-notebook", -1.0)):
        values = sign * losses
        probe = {
            "record": record,
            "losses": values.tolist(),
            "loss_mean": values.mean(axis=0).tolist(),
            "num_images": 3,
            "num_fooled": 1,
        }
        entry = PROBES.get("pgd").probe_intervals(probe, 0.95)["loss_mean"]
        for step in range(2):
            low, high = student_t(values[:, step])
            expected = (max(low, 0.0), high) if sign > 0 else (low, min(high, 0.0))
            assert (entry["low"][step], entry["high"][step]) == pytest.approx(expected, abs=1e-12)
            assert entry["low"][step] <= values[:, step].mean() <= entry["high"][step]
    assert student_t(-losses[:, 0])[1] > 0.0  # the notebook's first step needs the clip at 0 from above


def test_an_accuracy_drop_without_discordant_images_is_not_zero_width():
    """Issue 38: a lesion that changes no prediction has a drop of 0 on every image (s = 0). Its interval is the
    share bound of a mean of values in [-1, 1], +/- z^2 / (n + z^2) (Wilson at 0 of the n images, written out
    here), not [0, 0]; a point with discordant images keeps its Student-t interval."""
    from hf_vitrobust.probes.intervals import paired_accuracy_curves

    probe = {
        "accuracy_drop": [0.0, 0.25],
        "num_discordant": [0, 3],
        "num_correct": [6, 3],
        "num_baseline_correct": 6,
    }
    curves = paired_accuracy_curves(probe, N, "baseline", 0.95)
    z = stats.norm.ppf(0.975)
    eps = z * z / (N + z * z)
    drop = curves["accuracy_drop"]
    assert (drop["low"][0], drop["high"][0]) == pytest.approx((-eps, eps), abs=1e-12)
    low, high = student_t([1.0, 1.0, 1.0] + [0.0] * (N - 3))
    assert (drop["low"][1], drop["high"][1]) == pytest.approx((low, high), abs=1e-12)
    assert "every image gave the same value" in drop["note"]


@pytest.mark.parametrize("name", ["occlusion", "frequency_noise", "pgd", "feature_variance"])
def test_one_chunk_and_several_chunks_give_the_same_intervals(name, merged):
    one, several, _ = merged[name]
    assert set(one["intervals"]) == set(several["intervals"])
    for key, curve in one["intervals"].items():
        if not isinstance(curve, dict):
            assert several["intervals"][key] == curve
            continue
        other = several["intervals"][key]
        if curve["method"] == "wilson":  # from integer counts: bit-identical
            assert other == curve, key
        else:  # sums of squares added in another order
            for bound in ("low", "high"):
                np.testing.assert_allclose(
                    np.asarray(other[bound], float), np.asarray(curve[bound], float), rtol=0, atol=1e-12
                )


def test_partials_without_counts_merge_to_the_same_proportion_intervals(merged):
    # Partials written before the counts were recorded (a resume over an old .work folder) give the counts of
    # their accuracies; the discordant counts cannot be recovered, so the paired drop interval is left out.
    _, several, partials = merged["frequency_noise"]
    old = [
        {k: v for k, v in p.items() if k not in ("num_correct", "num_clean_correct", "num_discordant")}
        for p in partials
    ]
    merged_old = PROBES.get("frequency_noise").merge(old)
    assert merged_old["num_correct"] == several["num_correct"]
    assert merged_old["intervals"]["accuracy"] == several["intervals"]["accuracy"]
    assert merged_old["intervals"]["clean_accuracy"] == several["intervals"]["clean_accuracy"]
    assert "accuracy_drop" not in merged_old["intervals"] and merged_old["num_discordant"] is None


def _report_rows(report: str, probe: str) -> dict[str, str]:
    section = re.split(r"\n#+ ", report.split(f"### Probe: {probe}\n", 1)[1], maxsplit=1)[0]
    return dict(re.findall(r"^\| ([^|]+?) \| ([^|]+?) \|$", section, flags=re.MULTILINE)[1:])


def test_a_dict_without_intervals_renders_as_before():
    # The probe dicts of a run written before intervals existed render the rows its stored report holds.
    (results,) = load_results(OLD_RUN)
    report = (OLD_RUN / "report.md").read_text()
    (model_probes,) = results["probes"].values()
    assert {"occlusion", "pgd", "frequency_noise", "feature_variance"} <= set(model_probes)
    for name, probe in model_probes.items():
        assert "intervals" not in probe
        rows = PROBES.get(name).table(probe)
        expected = _report_rows(report, name)
        if "final loss (mean ± std)" in expected:  # issue 38, point 11: the mean and the images' std apart
            mean, std = expected.pop("final loss (mean ± std)").split(" ± ")
            expected.update({"final loss (mean)": mean, "final loss, std over the images": std})
        assert rows == expected, name
        assert not any("[" in value for value in rows.values())


def test_headline_rows_show_the_stored_intervals(merged):
    probe = merged["occlusion"][1]
    rows = PROBES.get("occlusion").table(probe)
    low, high = probe["intervals"]["accuracy"]["low"][-1], probe["intervals"]["accuracy"]["high"][-1]
    shown = f"{100 * probe['accuracy'][-1]:.2f} [{100 * low:.2f}, {100 * high:.2f}]"
    assert rows["top-1 (%) at 50 % masked"] == shown
    # Without the intervals, the same dict renders the plain values.
    plain = PROBES.get("occlusion").table({k: v for k, v in probe.items() if k != "intervals"})
    assert plain["top-1 (%) at 50 % masked"] == f"{100 * probe['accuracy'][-1]:.2f}"
    pgd = merged["pgd"][1]
    rows = PROBES.get("pgd").table(pgd)
    assert re.fullmatch(r"\S+ \[\S+, \S+\]", rows["final loss (mean)"]), rows
    assert re.fullmatch(r"[0-9.e+-]+", rows["final loss, std over the images"]), rows


def test_probe_intervals_at_a_lower_level_are_narrower(merged):
    for name in ("occlusion", "frequency_noise", "pgd", "feature_variance"):
        spec, probe = PROBES.get(name), merged[name][1]
        at_95 = spec.probe_intervals(probe, 0.95)
        at_90 = spec.probe_intervals(probe, 0.9)
        assert at_95 == probe["intervals"] and at_90["confidence_level"] == 0.9
        compared = 0
        for key, curve in at_95.items():
            if not isinstance(curve, dict):
                continue
            low95, high95 = np.asarray(curve["low"], float), np.asarray(curve["high"], float)
            low90, high90 = np.asarray(at_90[key]["low"], float), np.asarray(at_90[key]["high"], float)
            defined = np.isfinite(low95 + high95)
            assert np.array_equal(defined, np.isfinite(low90 + high90)), (name, key)
            wide = defined & (high95 - low95 > 0)
            assert np.all(high90[wide] - low90[wide] < high95[wide] - low95[wide]), (name, key)
            assert np.all(low90[defined] >= low95[defined]) and np.all(high90[defined] <= high95[defined])
            compared += int(wide.sum())
        assert compared > 0, name


def test_probe_intervals_recompute_an_old_dict_from_its_means():
    # An old dict has no counts; its accuracies are counts over its images, which is what the intervals need.
    (results,) = load_results(OLD_RUN)
    (model_probes,) = results["probes"].values()
    occlusion = model_probes["occlusion"]
    entry = PROBES.get("occlusion").probe_intervals(occlusion, 0.95)
    n = occlusion["num_samples"]
    for i, accuracy in enumerate(occlusion["accuracy"]):
        low, high = wilson(round(accuracy * n), n)
        assert entry["accuracy"]["low"][i] == pytest.approx(low, abs=1e-12)
        assert entry["accuracy"]["high"][i] == pytest.approx(high, abs=1e-12)
    assert PROBES.get("hessian").probe_intervals({"eigenvalues": [[1.0]]}) == {}


def test_curve_figures_draw_the_interval_band(merged):
    for name in ("occlusion", "frequency_noise", "feature_variance"):
        spec, probe = PROBES.get(name), merged[name][1]
        (figure_spec,) = spec.figures.values()
        with_band = figure_spec.draw({"a": probe}).axes[0]
        without = figure_spec.draw({"a": {k: v for k, v in probe.items() if k != "intervals"}}).axes[0]
        assert len(with_band.collections) == len(without.collections) + 1, name
        band = with_band.collections[-1].get_paths()[0].vertices
        assert np.isfinite(band).all() and np.ptp(band[:, 1]) > 0, name
