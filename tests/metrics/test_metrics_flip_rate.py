"""ImageNet-P flip probability and top-5 distance: hand-computed values and a frame-by-frame loop that follows the
reference evaluation's structure (hendrycks/robustness ImageNet-P/test.py) on full rankings."""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hf_vitrobust.metrics import (
    PERTURBATIONS,
    TEST_PERTURBATIONS,
    VALIDATION_PERTURBATIONS,
    flip_rates,
    top5_distance,
)


def _loop_reference(scores, noise, difficulty):
    """Flip probability and T5D from full score vectors, walking the frames as the reference does: for each offset
    below the step, the chain of frames offset, offset + step, ...; noise chains compare with their first frame."""
    step = 1 if noise else difficulty
    video_flips, video_distances = [], []
    for video in scores:
        ranks = np.empty_like(video, dtype=np.int64)  # rank (from 1) of every class in every frame
        for f, frame in enumerate(video):
            ranks[f, np.argsort(-frame)] = np.arange(1, frame.size + 1)
        flips, distances = [], []
        for offset in range(step):
            chain = list(range(offset, len(video), step))
            anchor = chain[0]
            for frame in chain[1:]:
                flips.append(int(np.argmax(video[anchor]) != np.argmax(video[frame])))
                anchor_order = np.argsort(ranks[anchor])  # classes, best first, in the anchor frame
                sigma = ranks[frame][anchor_order][:5]
                distances.append(sum(abs(min(k, 5) - min(s - 1, 5)) for k, s in enumerate(sigma)))
                if not noise:
                    anchor = frame
        video_flips.append(np.mean(flips))
        video_distances.append(np.mean(distances))
    return np.mean(video_flips), np.mean(video_distances)


def _top5(scores):
    return np.argsort(-scores, axis=-1, kind="stable")[..., :5]


def test_names_match_the_corruptions_package():
    from hf_vitrobust import corruptions

    assert TEST_PERTURBATIONS == corruptions.TEST_PERTURBATIONS
    assert VALIDATION_PERTURBATIONS == corruptions.VALIDATION_PERTURBATIONS


def test_top5_distance_by_hand():
    earlier = np.array([[1, 2, 3, 4, 5]] * 4)
    later = np.array([[1, 2, 3, 4, 5], [2, 1, 3, 4, 5], [6, 7, 8, 9, 10], [5, 4, 3, 2, 1]])
    # identical; one swap (|0-1| + |1-0|); all five pushed out (5+4+3+2+1); reversed (4+2+0+2+4)
    np.testing.assert_array_equal(top5_distance(earlier, later), [0, 2, 15, 12])


def _single(top1, name, difficulty=1):
    sequence = [[c] for c in top1]
    return flip_rates([sequence], [name], [difficulty], allow_partial=True).flip_probability[name]


def test_flip_probability_by_hand():
    top1 = [3, 3, 4, 3, 5]
    assert _single(top1, "gaussian_noise") == pytest.approx(2 / 4)  # vs the first frame: 3,4,3,5 -> 0,1,0,1
    assert _single(top1, "rotate") == pytest.approx(3 / 4)  # consecutive: 0,1,1,1
    assert _single(top1, "rotate", 2) == pytest.approx(2 / 3)  # 2 apart: 3-4, 3-3, 4-5
    assert _single(top1, "rotate", 3) == pytest.approx(1 / 2)  # 3 apart: 3-3, 3-5
    assert _single(top1, "shot_noise", 3) == pytest.approx(2 / 4)  # noise: difficulty changes the data only


def test_means_over_sequences_then_perturbations():
    # Two rotate sequences of different lengths: the perturbation value is the mean of the per-sequence means.
    sequences = [[[0], [1]], [[0], [0], [0], [1]]]
    result = flip_rates(sequences, ["rotate", "rotate"], 1, allow_partial=True)
    assert result.flip_probability["rotate"] == pytest.approx((1.0 + 1 / 3) / 2)
    assert result.num_sequences == {"rotate": 2} and result.top5_distance == {}


@settings(max_examples=20, deadline=None, database=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    name=st.sampled_from(PERTURBATIONS),
    difficulty=st.integers(1, 3),
    frames=st.integers(4, 9),
)
def test_matches_the_reference_loop_on_full_rankings(seed, name, difficulty, frames):
    scores = np.random.default_rng(seed).normal(size=(3, frames, 12))
    scores[:, 1::2, :3] += 1.5  # make some top-5 lists overlap and some flips happen
    result = flip_rates(list(_top5(scores)), [name] * 3, difficulty, allow_partial=True)
    flips, distance = _loop_reference(scores, "noise" in name, difficulty)
    assert result.flip_probability[name] == pytest.approx(flips)
    assert result.top5_distance[name] == pytest.approx(distance)


def _full_set(rng, names, frames=6):
    scores = rng.normal(size=(len(names), frames, 10))
    return list(_top5(scores)), list(names)


def test_means_and_validation_apart():
    rng = np.random.default_rng(0)
    names = [*TEST_PERTURBATIONS, *TEST_PERTURBATIONS, *VALIDATION_PERTURBATIONS]
    predictions, names = _full_set(rng, names)
    result = flip_rates(predictions, names)
    assert result.mfr_unnormalized == pytest.approx(
        np.mean([result.flip_probability[n] for n in TEST_PERTURBATIONS])
    )
    assert result.mt5d_unnormalized == pytest.approx(
        np.mean([result.top5_distance[n] for n in TEST_PERTURBATIONS])
    )
    assert result.validation_mfr_unnormalized == pytest.approx(
        np.mean([result.flip_probability[n] for n in VALIDATION_PERTURBATIONS])
    )
    assert result.mfr is None and result.missing_perturbations == []
    # A baseline equal to the model itself normalises to 100 %.
    normalised = flip_rates(
        predictions,
        names,
        baseline_flip_probability=result.flip_probability,
        baseline_top5_distance=result.top5_distance,
    )
    assert normalised.mfr == pytest.approx(100.0) and normalised.mt5d == pytest.approx(100.0)
    json.dumps(result.to_dict(), allow_nan=False)


@settings(max_examples=15, deadline=None, database=None)
@given(seed=st.integers(0, 2**32 - 1), permutation_seed=st.integers(0, 2**32 - 1))
def test_invariant_to_sequence_order(seed, permutation_seed):
    predictions, names = _full_set(np.random.default_rng(seed), TEST_PERTURBATIONS * 2)
    order = np.random.default_rng(permutation_seed).permutation(len(names))
    shuffled = flip_rates([predictions[i] for i in order], [names[i] for i in order])
    original = flip_rates(predictions, names)
    assert shuffled.flip_probability == pytest.approx(original.flip_probability)
    assert shuffled.top5_distance == pytest.approx(original.top5_distance)
    assert shuffled.mfr_unnormalized == pytest.approx(original.mfr_unnormalized)
    assert shuffled.mt5d_unnormalized == pytest.approx(original.mt5d_unnormalized)


def test_errors():
    good = [np.zeros((5, 5), dtype=int)]
    with pytest.raises(ValueError, match="Missing ImageNet-P test perturbations: gaussian_noise"):
        flip_rates(good, ["rotate"])
    with pytest.raises(ValueError, match="did you mean 'rotate'"):
        flip_rates(good, ["rotat"], allow_partial=True)
    with pytest.raises(ValueError, match=r"Difficulties must be in 1\.\.3"):
        flip_rates(good, ["rotate"], [4], allow_partial=True)
    with pytest.raises(ValueError, match="One difficulty per computation"):
        flip_rates(good * 2, ["rotate", "tilt"], [1, 2], allow_partial=True)
    with pytest.raises(ValueError, match="k = 1 or k >= 5"):
        flip_rates([np.zeros((5, 3), dtype=int)], ["rotate"], allow_partial=True)
    with pytest.raises(ValueError, match="too few frames"):
        flip_rates([np.zeros((2, 5), dtype=int)], ["rotate"], [2], allow_partial=True)
    with pytest.raises(ValueError, match="lengths"):
        flip_rates(good, ["rotate", "tilt"], allow_partial=True)
    with pytest.raises(ValueError, match="baseline lacks"):
        flip_rates(good, ["rotate"], allow_partial=True, baseline_flip_probability={"tilt": 0.1})
