"""Linear CKA and `feature_similarity` (Kornblith et al. 2019; Nguyen et al. 2021 minibatch CKA): invariances,
independent numpy references for the biased and unbiased estimators, minibatch accumulation, numerical safety
with constant or huge features, and the probe on every model family."""

import copy
import json

import numpy as np
import pytest
import torch
from probe_models import FAMILIES, alternet, random_images, transformers_vit

from hf_vitrobust.probes.feature_maps import spatial_feature_map
from hf_vitrobust.probes.similarity import (
    MinibatchCKA,
    feature_similarity,
    linear_cka,
    minibatch_slices,
    unbiased_hsic,
)


def _features(n=12, p=7, seed=0):
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(n, p, generator=generator, dtype=torch.float64)


def _reference_biased(x, y):
    """Kornblith et al. (2019), linear CKA in feature space: ||Y^T X||_F^2 / (||X^T X||_F ||Y^T Y||_F), centred."""
    x = np.asarray(x, dtype=np.float64).reshape(len(x), -1)
    y = np.asarray(y, dtype=np.float64).reshape(len(y), -1)
    x, y = x - x.mean(0), y - y.mean(0)
    return np.linalg.norm(y.T @ x) ** 2 / (np.linalg.norm(x.T @ x) * np.linalg.norm(y.T @ y))


def _reference_hsic1(k, m):
    """Song et al. (2012) unbiased HSIC, written out with explicit matrices."""
    n = k.shape[0]
    kt, lt = k - np.diag(np.diag(k)), m - np.diag(np.diag(m))
    ones = np.ones(n)
    return (
        np.trace(kt @ lt)
        + (ones @ kt @ ones) * (ones @ lt @ ones) / ((n - 1) * (n - 2))
        - 2.0 / (n - 2) * ones @ kt @ lt @ ones
    ) / (n * (n - 3))


def _reference_minibatch_cka(xs, ys):
    """Nguyen et al. (2021) minibatch CKA: summed HSIC_1 over minibatches, raw (uncentred) linear Grams."""
    cross = sum(_reference_hsic1(x @ x.T, y @ y.T) for x, y in zip(xs, ys, strict=True))
    self_x = sum(_reference_hsic1(x @ x.T, x @ x.T) for x in xs)
    self_y = sum(_reference_hsic1(y @ y.T, y @ y.T) for y in ys)
    return cross / np.sqrt(self_x * self_y)


def test_cka_of_a_representation_with_itself_is_one():
    x = _features()
    assert linear_cka(x, x) == pytest.approx(1.0, abs=1e-12)
    assert linear_cka(x, x, unbiased=True) == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("unbiased", [False, True])
def test_cka_is_invariant_to_orthogonal_transforms_and_isotropic_scaling(unbiased):
    x, y = _features(16, 6, 1), _features(16, 9, 2)
    y = y + 0.5 * x @ _features(6, 9, 3)  # correlated with x
    q, _ = torch.linalg.qr(_features(9, 9, 4))
    base = linear_cka(x, y, unbiased=unbiased)
    assert 0.1 < base < 0.99
    assert linear_cka(x, y @ q, unbiased=unbiased) == pytest.approx(base, abs=1e-10)
    assert linear_cka(17.0 * x, 0.003 * y, unbiased=unbiased) == pytest.approx(base, abs=1e-10)
    assert linear_cka(y, x, unbiased=unbiased) == pytest.approx(base, abs=1e-12)
    # Not invariant to general (anisotropic) linear maps: the test can fail.
    skew = torch.diag(torch.tensor([50.0, 1, 1, 1, 1, 1], dtype=torch.float64))
    assert abs(linear_cka(x @ skew, y, unbiased=unbiased) - base) > 1e-3


def test_biased_cka_matches_the_feature_space_formula():
    x, y = _features(10, 5, 5), _features(10, 30, 6)
    assert linear_cka(x, y) == pytest.approx(_reference_biased(x.numpy(), y.numpy()), abs=1e-12)
    # Features of any rank are flattened per sample.
    maps = _features(10, 3 * 2 * 2, 7).reshape(10, 3, 2, 2)
    assert linear_cka(maps, y) == pytest.approx(_reference_biased(maps.numpy(), y.numpy()), abs=1e-12)


def test_unbiased_hsic_matrix_matches_the_reference():
    xs = [_features(9, p, seed) for p, seed in ((4, 0), (6, 1), (3, 2))]
    grams = torch.stack([x @ x.T for x in xs])
    hsic = unbiased_hsic(grams, grams).numpy()
    for i, j in np.ndindex(3, 3):
        expected = _reference_hsic1(grams[i].numpy(), grams[j].numpy())
        assert hsic[i, j] == pytest.approx(expected, rel=1e-10, abs=1e-12)


def test_full_batch_minibatch_cka_matches_the_direct_unbiased_cka():
    x, y, z = _features(20, 5, 8), _features(20, 7, 9), _features(20, 3, 10)
    accumulator = MinibatchCKA(3)
    accumulator.update([x, y, z])
    cka = accumulator.compute().numpy()
    assert cka[0, 1] == pytest.approx(linear_cka(x, y, unbiased=True), abs=1e-12)
    assert cka[0, 1] == pytest.approx(_reference_minibatch_cka([x.numpy()], [y.numpy()]), abs=1e-10)
    np.testing.assert_allclose(np.diag(cka), 1.0, atol=1e-12)
    np.testing.assert_allclose(cka, cka.T, atol=1e-14)
    # With many samples the unbiased and biased estimators agree closely, but not exactly.
    big_x, big_y = _features(400, 5, 11), _features(400, 5, 12) + _features(400, 5, 11)
    biased, unbiased = linear_cka(big_x, big_y), linear_cka(big_x, big_y, unbiased=True)
    assert biased != unbiased and abs(biased - unbiased) < 0.02


def test_minibatch_accumulation_matches_the_reference():
    x, y = _features(15, 5, 13), _features(15, 8, 14)
    parts = [slice(0, 5), slice(5, 10), slice(10, 15)]
    accumulator = MinibatchCKA(1, 1)
    for part in parts:
        accumulator.update([x[part]], [y[part]])
    expected = _reference_minibatch_cka([x[p].numpy() for p in parts], [y[p].numpy() for p in parts])
    assert accumulator.num_minibatches == 3
    assert accumulator.compute().item() == pytest.approx(expected, abs=1e-10)
    # The minibatch estimate is not the full-batch one: the split matters (documented).
    assert accumulator.compute().item() != pytest.approx(linear_cka(x, y, unbiased=True), abs=1e-6)


def test_constant_zero_and_huge_features_give_no_nan():
    x = _features(12, 5, 15)
    constant = torch.full((12, 5), 3.0, dtype=torch.float64)
    zero = torch.zeros(12, 5)
    for other in (constant, zero):
        assert linear_cka(x, other) == 0.0 and linear_cka(other, other, unbiased=True) == 0.0
    accumulator = MinibatchCKA(3)
    accumulator.update([x, constant, zero])
    cka = accumulator.compute()
    assert torch.isfinite(cka).all()
    torch.testing.assert_close(cka, torch.diag(torch.tensor([1.0, 0.0, 0.0], dtype=torch.float64)))
    # float32 activations with a large offset and scale: float64 centred Grams keep CKA exact.
    huge = (1e4 + 1e3 * x).float()
    assert linear_cka(huge, huge, unbiased=True) == pytest.approx(1.0, abs=1e-9)
    assert linear_cka(huge, x) == pytest.approx(1.0, abs=1e-6)


def test_minibatch_slices_merge_a_short_remainder():
    assert minibatch_slices(9, 4) == [slice(0, 4), slice(4, 9)]
    assert minibatch_slices(12, 4) == [slice(0, 4), slice(4, 8), slice(8, 12)]
    assert minibatch_slices(14, 4) == [slice(0, 4), slice(4, 8), slice(8, 14)]
    assert minibatch_slices(3, 8) == [slice(0, 3)]


def test_probe_full_batch_equals_direct_cka_of_the_feature_maps():
    classifier = alternet()
    images = random_images(6)
    result = feature_similarity(classifier, images, batch_size=4)
    assert result.num_minibatches == 1 and result.minibatch_size == 256 and result.num_images == 6
    with torch.no_grad():
        maps = classifier.feature_maps(images)
    names = list(maps)
    assert result.layers == result.other_layers == names
    for i, j in ((0, 1), (1, 3), (2, 4)):
        expected = linear_cka(maps[names[i]], maps[names[j]], unbiased=True)
        assert result.cka[i][j] == pytest.approx(expected, abs=1e-6)


def test_probe_minibatches_and_batch_size_independence():
    classifier = transformers_vit()
    images = random_images(10)
    a = feature_similarity(classifier, images, batch_size=1, minibatch_size=5)
    b = feature_similarity(classifier, images, batch_size=10, minibatch_size=5)
    np.testing.assert_allclose(a.cka, b.cka, atol=1e-5)
    assert a.num_minibatches == 2
    with torch.no_grad():
        maps = classifier.feature_maps(images)
    grids = [spatial_feature_map(m, classifier).flatten(1).double().numpy() for m in maps.values()]
    parts = [slice(0, 5), slice(5, 10)]
    expected = _reference_minibatch_cka([grids[0][p] for p in parts], [grids[2][p] for p in parts])
    assert a.cka[0][2] == pytest.approx(expected, abs=1e-5)
    full = feature_similarity(classifier, images, batch_size=3)
    assert full.num_minibatches == 1 and abs(full.cka[0][2] - a.cka[0][2]) > 1e-6


@pytest.mark.slow
def test_two_models_compare_their_layers():
    classifier = alternet()
    images = random_images(6)
    alone = feature_similarity(classifier, images)
    twin = copy.deepcopy(classifier)
    cross = feature_similarity(classifier, images, other=twin)
    np.testing.assert_allclose(cross.cka, alone.cka, atol=1e-6)
    vit = transformers_vit()
    mixed = feature_similarity(classifier, images, other=vit, other_layers=["hidden_states.2"])
    assert np.array(mixed.cka).shape == (len(alone.layers), 1)
    assert mixed.other_layers == ["hidden_states.2"]


@pytest.mark.slow
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_family(family):
    classifier = FAMILIES[family]()
    result = feature_similarity(classifier, random_images(5), batch_size=2)
    cka = np.array(result.cka)
    assert cka.shape == (len(classifier.layer_names()),) * 2
    assert np.isfinite(cka).all()
    np.testing.assert_allclose(np.diag(cka), 1.0, atol=1e-6)
    np.testing.assert_allclose(cka, cka.T, atol=1e-9)
    data = json.loads(json.dumps(result.to_dict()))
    assert data["probe"] == "feature_similarity" and len(data["cka"]) == len(result.layers)
    ax = result.plot()
    np.testing.assert_allclose(ax.images[0].get_array(), cka)


def test_bad_inputs():
    classifier = transformers_vit()
    images = random_images(6)
    with pytest.raises(ValueError, match="at least 4 images"):
        feature_similarity(classifier, images[:3])
    with pytest.raises(ValueError, match="minibatch_size must be at least 4"):
        feature_similarity(classifier, images, minibatch_size=3)
    with pytest.raises(ValueError, match="other_layers needs other"):
        feature_similarity(classifier, images, other_layers=["hidden_states.0"])
    with pytest.raises(ValueError, match="same samples"):
        linear_cka(torch.zeros(4, 2), torch.zeros(5, 2))
    with pytest.raises(ValueError, match="at least 4 samples"):
        unbiased_hsic(torch.zeros(1, 3, 3), torch.zeros(1, 3, 3))
    with pytest.raises(ValueError, match="before any update"):
        MinibatchCKA(2).compute()


def test_runner_chunks_keep_each_minibatchs_hsic_and_the_map_sizes_give_the_stages():
    """At Park & Kim's residual sums of a multi-stage net (AlterNet), the task keeps each chunk's HSIC terms (their
    sum is the merged CKA) and each layer's map shape; the stages are the runs of one map size."""
    from hf_vitrobust.probes.similarity import cka_from_hsic, stages_by_map_size
    from hf_vitrobust.probes.spec import PROBES

    classifier, images = alternet(), random_images(12)
    task = PROBES["cka"]
    params = task.check_params({"layers": "residual-sums", "minibatch_size": 6})
    ids = torch.arange(100, 112)
    merged = task.merge(
        [task.run(classifier, images[s], None, ids[s], 0, params) for s in (slice(0, 6), slice(6, 12))]
    )
    one_chunk = task.merge([task.run(classifier, images, None, ids, 0, params)])
    assert one_chunk["minibatch_hsic"]["keys"] == merged["minibatch_hsic"]["keys"]
    np.testing.assert_allclose(
        one_chunk["minibatch_hsic"]["cross"], merged["minibatch_hsic"]["cross"], rtol=1e-9
    )
    assert merged["layers"] == [s.name for s in classifier.residual_sums()]
    record = merged["minibatch_hsic"]
    assert record["keys"] == [100, 106] and len(record["cross"]) == 2
    total = torch.as_tensor(record["cross"], dtype=torch.float64).sum(dim=0)
    np.testing.assert_allclose(
        cka_from_hsic(total, total.diagonal(), total.diagonal()), merged["cka"], atol=1e-12
    )
    sizes = [tuple(shape[-2:]) for shape in merged["shapes"]]
    stages = stages_by_map_size(merged["shapes"])
    assert stages[0] == 0 and stages[-1] >= 1  # the AlterNet halves its maps between stages
    for i in range(1, len(sizes)):
        assert (stages[i] == stages[i - 1]) == (sizes[i] == sizes[i - 1])
