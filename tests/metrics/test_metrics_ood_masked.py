"""ImageNet-O OOD scores and AUPR, and ImageNet-A/R masked accuracy: hand-computed values and brute-force checks."""

import json

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from hf_vitrobust.metrics import (
    masked_accuracy,
    masked_topk_predictions,
    ood_detection_metrics,
    ood_scores_from_logits,
)


def test_ood_by_hand():
    # Sorted by score: 0.8 (OOD), 0.4 (in), 0.35 (OOD), 0.1 (in).
    result = ood_detection_metrics([0.1, 0.4, 0.35, 0.8], [False, False, True, True])
    assert result.aupr == pytest.approx((1 + 2 / 3) / 2)  # precision at each OOD sample
    assert result.auroc == pytest.approx(3 / 4)  # 3 of the 4 (OOD, in) pairs ranked right
    assert result.fpr_at_95_tpr == pytest.approx(1 / 2)  # both OOD found only once 0.4 is flagged too
    assert (result.num_ood, result.num_in_distribution) == (2, 2)
    perfect = ood_detection_metrics([0.0, 0.1, 0.9, 1.0], [0, 0, 1, 1])
    assert (perfect.aupr, perfect.auroc, perfect.fpr_at_95_tpr) == (1.0, 1.0, 0.0)
    json.dumps(result.to_dict(), allow_nan=False)


def test_fpr_when_the_tpr_lands_exactly_on_95_percent():
    """20 OOD images: at the threshold that flags 19 of them the TPR is exactly 19/20 = 0.95, which reaches 95 %.
    Above them, 3 of the 10 in-distribution images; between the 19th and the 20th OOD image, 4 more."""
    ood = np.r_[np.linspace(10.0, 5.0, 19), 1.0]
    in_distribution = np.r_[[11.0, 7.5, 5.5], [4.0, 3.0, 2.5, 2.0], [0.5, 0.2, 0.1]]
    scores = np.r_[ood, in_distribution]
    is_ood = np.r_[np.ones(20, bool), np.zeros(10, bool)]
    assert np.mean(scores[is_ood] >= 5.0) == 0.95  # the 19th OOD image's threshold: TPR exactly 0.95
    result = ood_detection_metrics(scores, is_ood)
    assert result.fpr_at_95_tpr == 3 / 10  # not 7 / 10, the FPR once the 20th is flagged too
    # Just below 95 %: 18 of 19 detected above 5.0 + the 19th below the 4 in-distribution images.
    below = ood_detection_metrics(
        np.r_[ood[:18], 1.0, in_distribution], np.r_[np.ones(19, bool), np.zeros(10, bool)]
    )
    assert below.fpr_at_95_tpr == 7 / 10


@settings(max_examples=25, deadline=None, database=None)
@given(seed=st.integers(0, 2**32 - 1), n_in=st.integers(1, 40), n_out=st.integers(1, 40))
def test_ood_against_brute_force(seed, n_in, n_out):
    rng = np.random.default_rng(seed)
    scores = np.concatenate([rng.normal(size=n_in), rng.normal(0.7, 1.0, size=n_out)])
    is_ood = np.r_[np.zeros(n_in, bool), np.ones(n_out, bool)]
    result = ood_detection_metrics(scores, is_ood)
    pairs = scores[is_ood][:, None] - scores[~is_ood][None, :]
    assert result.auroc == pytest.approx((pairs > 0).mean() + 0.5 * (pairs == 0).mean())
    order = np.argsort(-scores)
    hits = np.cumsum(is_ood[order])
    precision_at_positives = (hits / np.arange(1, len(scores) + 1))[is_ood[order]]
    assert result.aupr == pytest.approx(precision_at_positives.mean())
    fprs = [
        np.mean(scores[~is_ood] >= t) for t in scores if np.mean(scores[is_ood] >= t) >= 0.95
    ]  # every threshold that keeps 95 % of the OOD samples
    assert result.fpr_at_95_tpr == pytest.approx(min(fprs))
    # Sample order does not matter.
    permutation = rng.permutation(len(scores))
    assert ood_detection_metrics(scores[permutation], is_ood[permutation]) == result


def test_ood_errors():
    with pytest.raises(ValueError, match="both OOD and in-distribution"):
        ood_detection_metrics([0.1, 0.2], [True, True])
    with pytest.raises(ValueError, match="lengths"):
        ood_detection_metrics([0.1, 0.2], [True])
    with pytest.raises(ValueError, match="NaN"):
        ood_detection_metrics([np.nan, 0.2], [True, False])
    with pytest.raises(ValueError, match="boolean"):
        ood_detection_metrics([0.1, 0.2], [2, 0])


def test_ood_scores_from_logits():
    logits = np.array([[0.0, np.log(3.0), 100.0], [5.0, 5.0, -100.0]])
    # The softmax is over the mask (classes 0 and 1) only: [1/4, 3/4] and [1/2, 1/2].
    np.testing.assert_allclose(ood_scores_from_logits(logits, [0, 1]), [-0.75, -0.5])
    random = torch.randn(6, 20, dtype=torch.float64) * 30
    mask = [3, 7, 11, 19]
    expected = -torch.softmax(random[:, mask], dim=1).max(dim=1).values
    np.testing.assert_allclose(ood_scores_from_logits(random, mask), expected.numpy(), rtol=1e-12)
    with pytest.raises(ValueError, match="duplicates"):
        ood_scores_from_logits(logits, [0, 0])
    with pytest.raises(ValueError, match=r"\[0, 3\)"):
        ood_scores_from_logits(logits, [0, 3])


def test_masked_accuracy_by_hand():
    logits = np.array(
        [
            [0, 9, 0, 1, 0, 0],  # best overall: 1 (outside the mask); best in mask [0, 3, 5]: 3
            [5, 0, 0, 1, 0, 2],  # best in mask: 0
            [0, 0, 0, 1, 0, 2],  # best in mask: 5
        ],
        dtype=float,
    )
    result = masked_accuracy(logits, [3, 5, 5], [0, 3, 5])
    assert result.top1 == pytest.approx(2 / 3) and result.top5 is None and result.num_classes == 3
    np.testing.assert_array_equal(masked_topk_predictions(logits, [0, 3, 5], 2), [[3, 0], [0, 5], [5, 3]])


def test_masked_top5_against_torch():
    rng = np.random.default_rng(1)
    logits = rng.normal(size=(50, 30))
    mask = np.sort(rng.choice(30, size=12, replace=False))
    references = rng.choice(mask, size=50)
    result = masked_accuracy(logits, references, mask)
    top = torch.from_numpy(logits[:, mask]).topk(5, dim=1).indices.numpy()
    expected_top5 = np.mean([reference in mask[row] for reference, row in zip(references, top, strict=True)])
    assert result.top5 == pytest.approx(expected_top5)
    assert result.top1 == pytest.approx(np.mean(mask[top[:, 0]] == references))
    assert result.num_samples == 50


def test_masked_accuracy_errors():
    with pytest.raises(ValueError, match=r"References outside `class_indices`: \[4\]"):
        masked_accuracy(np.zeros((2, 6)), [0, 4], [0, 3, 5])
    with pytest.raises(ValueError, match="lengths"):
        masked_accuracy(np.zeros((2, 6)), [0], [0, 3, 5])
    with pytest.raises(ValueError, match="2 dimension"):
        masked_accuracy(np.zeros(6), [0], [0, 3, 5])
