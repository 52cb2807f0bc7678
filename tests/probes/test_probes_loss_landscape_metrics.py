"""Park & Kim's origin metrics of the loss landscape (`probes.loss_landscape_metrics`) against a transcription of
their how-do-vits-work `ops/tests.py` `test` and `ops/meters.py` on constructed logits, merged over chunks, with the
jackknife over batches, and recorded by the probe at x = y = 0."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch
from probe_models import PREPROCESSING, random_images

from hf_vitrobust.metrics.calibration import calibration_metrics
from hf_vitrobust.models import Classifier
from hf_vitrobust.probes.loss_landscape import SPEC, loss_landscape
from hf_vitrobust.probes.loss_landscape_metrics import (
    L1_METRIC,
    ORIGIN_METRICS,
    concatenate_batches,
    jackknife_standard_errors,
    merge_origin,
    origin_batch_statistics,
    origin_metrics,
)

NUM_CLASSES = 7
THEIR_BINS = np.linspace(0.0, 1.0, 11)  # test(bins=np.linspace(0.0, 1.0, 11))


# ------------------------------------------------------------------- transcription of their ops/tests.py (numpy)
def _cm(ys, ys_pred, filter_min=0.0, filter_max=1.0):
    num_classes = ys_pred.shape[1]
    confidence = np.amax(ys_pred, axis=1)
    ys_pred = np.argmax(ys_pred, axis=1)
    condition = np.logical_and(confidence > filter_min, confidence <= filter_max)
    k = (ys >= 0) & (ys < num_classes) & condition
    cm = np.bincount(num_classes * ys[k] + ys_pred[k], minlength=num_classes**2)
    return np.reshape(cm, [num_classes, num_classes])


def _miou(cm):
    weights = [1 if w > 0 else 0 for w in np.sum(cm, axis=1)]
    if np.sum(weights) == 0:
        return 0.0
    num = np.diag(cm)
    den = np.sum(cm, axis=1) + np.sum(cm, axis=0) - np.diag(cm)
    ious = np.divide(num, den, out=np.zeros_like(num, dtype=float), where=(den != 0))
    return np.average(ious, weights=weights)


def _gacc(cm):
    num, den = np.diag(cm).sum(), np.sum(cm)
    return np.divide(num, den, out=np.zeros_like(num, dtype=float), where=(den != 0)).tolist()


def their_test(batches, cutoffs=(0.0, 0.9), bins=THEIR_BINS):
    """ops/tests.py `test` with n_ff = 1 on (float32 softmax probabilities, hard labels) batches: the metrics their
    `save_metrics` writes (Acc, Acc-90, Unc-90, IoU, IoU-90, Freq-90, Top-5, Brier, ECE, ECSE), each a fraction."""
    num_classes = batches[0][0].shape[1]
    cms = [[np.zeros([num_classes] * 2), np.zeros([num_classes] * 2)] for _ in cutoffs]
    cms_bin = [np.zeros([num_classes] * 2) for _ in range(len(bins) - 1)]
    conf_acc_bin = [0.0 for _ in range(len(bins) - 1)]
    top5, brier = [], []  # AverageMeter over per-image arrays: a mean over images
    for ys_pred, ys in batches:
        top = ys_pred.argsort(axis=1)[:, -5:][:, ::-1]
        top5.extend(np.logical_or.reduce(top == ys.reshape(-1, 1), axis=1))
        brier.extend(np.square(np.eye(num_classes)[ys] - ys_pred).sum(axis=1))
        for cutoff, group in zip(cutoffs, cms, strict=True):
            group[0] = group[0] + _cm(ys, ys_pred, filter_min=cutoff)
            group[1] = group[1] + _cm(ys, ys_pred, filter_max=cutoff)
        for i, (start, end) in enumerate(itertools.pairwise(bins)):
            cms_bin[i] = cms_bin[i] + _cm(ys, ys_pred, filter_min=start, filter_max=end)
            confidence = np.amax(ys_pred, axis=1)
            condition = np.logical_and(confidence >= start, confidence < end)
            conf_acc_bin[i] = conf_acc_bin[i] + np.sum(confidence[condition])
    count_bin = np.array([np.sum(c) for c in cms_bin])
    acc_bin = np.array([_gacc(c) for c in cms_bin])
    conf_bin = np.array([a / (c + 1e-7) for c, a in zip(count_bin, conf_acc_bin, strict=True)])
    freq = np.nan_to_num(count_bin / (sum(count_bin) + 1e-7))

    def unconfidence(certain, uncertain):
        a = np.sum(certain) - np.diag(certain).sum()
        b = np.sum(uncertain) - np.diag(uncertain).sum()
        return b / (a + b + 1e-7)

    def frequency(certain, uncertain):
        return np.sum(certain) / (np.sum(certain) + np.sum(uncertain) + 1e-7)

    return {
        "Acc": _gacc(cms[0][0]),
        "top-1 % (confidence > 0.9)": _gacc(cms[1][0]),
        "share of errors with confidence <= 0.9 %": unconfidence(*cms[1]),
        "mean IoU %": _miou(cms[0][0]),
        "mean IoU % (confidence > 0.9)": _miou(cms[1][0]),
        "share of images with confidence > 0.9 %": frequency(*cms[1]),
        "top-5 %": float(np.mean(top5)),
        "Brier": float(np.mean(brier)),
        "ECE %": float(np.sum(np.absolute(acc_bin - conf_bin) * freq)),
        "signed ECE %": float(np.sum((conf_bin - acc_bin) * freq)),
    }


def _theirs_in_our_units(theirs: dict) -> dict:
    return {
        name: value * ORIGIN_METRICS[name].scale for name, value in theirs.items() if name in ORIGIN_METRICS
    }


def constructed_batches(seed: int = 0, sizes=(9, 12, 7)) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Logits spanning every confidence bin: some near uniform, some above 0.9, some saturating the float32 softmax
    to exactly 1.0 (counted in the last bin, adding no confidence there: their two bin conditions), wrong too."""
    generator = torch.Generator().manual_seed(seed)
    out = []
    for size in sizes:
        labels = torch.randint(0, NUM_CLASSES, (size,), generator=generator)
        scale = torch.linspace(0.2, 12.0, size)[:, None]
        logits = torch.randn(size, NUM_CLASSES, generator=generator) * scale
        logits[0] = 0.0
        logits[0, labels[0]] = 120.0  # softmax exactly 1.0, correct
        logits[1] = 0.0
        logits[1, (labels[1] + 1) % NUM_CLASSES] = 120.0  # exactly 1.0, wrong
        out.append((logits, labels))
    return out


def _float32_probabilities(batches):
    return [(torch.softmax(logits.float(), -1).numpy(), labels.numpy()) for logits, labels in batches]


def test_every_origin_metric_equals_their_ops_tests_on_constructed_logits():
    batches = constructed_batches()
    per_batch = concatenate_batches([origin_batch_statistics(logits, labels) for logits, labels in batches])
    probabilities = _float32_probabilities(batches)
    assert any(p.max(1).max() == 1.0 for p, _ in probabilities)  # the edge case their bins treat twice
    theirs = their_test(probabilities)
    ours = origin_metrics(per_batch)
    assert set(ours) == set(_theirs_in_our_units(theirs))
    for name, value in _theirs_in_our_units(theirs).items():
        assert ours[name] == pytest.approx(value, rel=1e-6, abs=1e-9), name
    assert 0.0 < theirs["share of images with confidence > 0.9 %"] < 1.0 and theirs["ECE %"] > 0.01
    # Not the package's ECE (metrics.calibration, Guo et al.'s bins): a confidence of exactly 1.0 differs.
    flat = [np.concatenate(part) for part in zip(*probabilities, strict=True)]
    guo = calibration_metrics(flat[0], flat[1], num_bins=10).ece
    assert abs(guo - theirs["ECE %"]) > 0.01


def test_merged_chunks_equal_one_part_and_the_jackknife_is_their_metric_without_each_batch():
    batches = constructed_batches(seed=1, sizes=(8, 8, 8, 5))
    parts = [origin_batch_statistics(logits, labels) for logits, labels in batches]
    by_chunks = merge_origin([concatenate_batches(parts[:1]), concatenate_batches(parts[1:3]), parts[3]])
    by_one = merge_origin([concatenate_batches(parts)])
    assert by_chunks["batches"] == by_one["batches"] == 4
    for key, total in by_one["totals"].items():
        assert torch.equal(by_chunks["totals"][key], total), key
    assert by_chunks["standard_errors"] == by_one["standard_errors"]
    # The jackknife re-derived with their code: the metric without batch b, over the four batches.
    probabilities = _float32_probabilities(batches)
    for name in ("ECE %", "mean IoU %", "Brier"):
        scale = ORIGIN_METRICS[name].scale
        theta = np.array(
            [their_test(probabilities[:b] + probabilities[b + 1 :])[name] * scale for b in range(4)]
        )
        expected = np.sqrt(3 / 4 * np.sum((theta - theta.mean()) ** 2))
        assert by_one["standard_errors"][name] == pytest.approx(expected, rel=1e-6), name
        assert expected > 0
    assert jackknife_standard_errors(parts[0]) is None
    assert merge_origin([parts[0], None]) is None


class _Tiny(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(3)
        self.conv = torch.nn.Conv2d(3, 4, 8, stride=8)
        self.head = torch.nn.Linear(4 * 16, NUM_CLASSES)

    def forward(self, pixels: torch.Tensor) -> torch.Tensor:
        return 6.0 * self.head(self.conv(pixels).flatten(1))


def test_the_probe_records_them_at_the_origin_only_and_its_chunks_merge_to_the_one_call():
    classifier = Classifier(_Tiny(), PREPROCESSING, name="tiny").eval()
    images = random_images(9, seed=2)
    labels = torch.randint(0, NUM_CLASSES, (9,), generator=torch.Generator().manual_seed(5))
    settings = {"resolution": 3, "x_range": (-0.5, 0.5), "y_range": (-0.5, 0.5), "batch_size": 3}
    whole = loss_landscape(classifier, images, labels, seed=4, **settings)
    with torch.no_grad():
        logits = classifier(images)
    theirs = their_test(_float32_probabilities([(logits[s : s + 3], labels[s : s + 3]) for s in (0, 3, 6)]))
    ours = origin_metrics(whole.origin)
    for name, value in _theirs_in_our_units(theirs).items():
        assert ours[name] == pytest.approx(value, rel=1e-5, abs=1e-7), name
    l1 = float(torch.cat([p.detach().flatten() for p in classifier.parameters()]).double().abs().sum())
    assert whole.origin_l1 == pytest.approx(l1, rel=1e-12)
    no_origin = loss_landscape(
        classifier, images, labels, resolution=2, x_range=(0.1, 0.2), y_range=(0.1, 0.2)
    )
    assert no_origin.origin is None and no_origin.origin_l1 is None
    # The runner's chunks of one mini-batch merge to the one-call probe, and the published rows read it.
    task = SPEC
    params = task.check_params(settings)
    ids = torch.arange(9)
    partials = [
        task.run(classifier, images[s : s + 3], labels[s : s + 3], ids[s : s + 3], 4, params)
        for s in (0, 3, 6)
    ]
    merged = task.merge(partials)
    expected = merge_origin([whole.origin])
    assert merged["origin"]["totals"] == {k: v.tolist() for k, v in expected["totals"].items()}
    assert merged["origin"]["standard_errors"] == pytest.approx(expected["standard_errors"])
    origin = {"x": "0.0", "y": "0.0"}
    ece = task.value_of(merged, "ECE %", origin)
    assert ece.value == pytest.approx(100 * theirs["ECE %"], rel=1e-5)
    assert ece.standard_error == pytest.approx(expected["standard_errors"]["ECE %"])
    top5 = task.value_of(merged, "top-5 %", origin)
    assert (top5.successes, top5.trials) == (round(theirs["top-5 %"] * 9), 9)
    assert task.value_of(merged, L1_METRIC, origin) == (pytest.approx(l1, rel=1e-12), 9, None, 0.0, None)
    with pytest.raises(LookupError, match="origin"):
        task.value_of(merged, "ECE %", {"x": "0.5", "y": "0.0"})
