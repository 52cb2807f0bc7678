# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Seeded random subsets (`Source.sampled`): uniform without replacement, fixed by the seed and the sample ids
alone (not by the order of the stream), in stream order; per cell the same clean images in every cell of a
released ImageNet-C folder and of a generated one; the limited views say which subset they are."""

import itertools
from collections import Counter

import data_fixtures as fx
import pytest
import torch
from scipy.stats import chi2

from hf_vitrobust.data import (
    BuiltinPhotosSource,
    ImageNetOSource,
    get_benchmark,
    imagenet_o_classes,
    load_benchmark,
)
from hf_vitrobust.data.generated import GeneratedCorruptionSource
from hf_vitrobust.data.samples import (
    CellLimitedSource,
    InMemorySource,
    LimitedSource,
    Sample,
    SampledSource,
    subset_hash,
)
from hf_vitrobust.evaluation.streams import plan_stream
from hf_vitrobust.models.imagenet import IMAGENET_WNIDS

SIZE = 20


def _memory(ids, label: int = 0, size: int = 2) -> InMemorySource:
    image = torch.zeros(3, size, size, dtype=torch.uint8)
    return InMemorySource([Sample(image, label, sample_id) for sample_id in ids])


def _ids(source) -> list[str]:
    return [raw.sample_id for raw in source.raw_samples()]


IDS = [f"item-{k:02d}" for k in range(SIZE)]


def test_every_sample_and_every_pair_is_chosen_as_often_as_uniform_sampling_says():
    """2000 seeds, 5 of 20: each sample is kept with probability 1/4, each pair with 5*4/(20*19). Without
    replacement the 20 standardised counts have correlation -1/19, so (19/20) * sum z^2 is chi-square with 19
    degrees of freedom."""
    source = _memory(IDS)
    seeds, limit = 2000, 5
    singles, pairs = Counter(), Counter()
    for seed in range(seeds):
        chosen = _ids(source.sampled(limit, seed))
        assert len(chosen) == limit == len(set(chosen))
        singles.update(chosen)
        pairs.update(itertools.combinations(chosen, 2))
    p = limit / SIZE
    expected, sd = seeds * p, (seeds * p * (1 - p)) ** 0.5
    assert set(singles) == set(IDS)
    assert all(abs(singles[i] - expected) < 4.5 * sd for i in IDS), singles
    statistic = sum((singles[i] - expected) ** 2 for i in IDS) / sd**2 * (SIZE - 1) / SIZE
    assert chi2.sf(statistic, SIZE - 1) > 1e-4, statistic
    q = limit * (limit - 1) / (SIZE * (SIZE - 1))
    pair_expected, pair_sd = seeds * q, (seeds * q * (1 - q)) ** 0.5
    assert len(pairs) == SIZE * (SIZE - 1) // 2  # every pair occurs
    assert all(abs(count - pair_expected) < 5 * pair_sd for count in pairs.values()), pairs.most_common(3)


def test_the_seed_and_the_ids_alone_choose_and_the_stream_order_is_kept():
    forward, backward = _memory(IDS), _memory(IDS[::-1])
    chosen = _ids(forward.sampled(6, seed=11))
    assert chosen == _ids(forward.sampled(6, seed=11))  # the same seed, the same ids
    assert chosen == sorted(chosen)  # in stream order
    assert chosen != IDS[:6]
    # The bottom 6 of the keyed hashes, computed here from the ids themselves.
    assert set(chosen) == set(sorted(IDS, key=lambda i: subset_hash(11, i))[:6])
    # Read in another order, the stream gives the same ids, in its own order.
    assert _ids(backward.sampled(6, seed=11)) == chosen[::-1]
    others = {tuple(_ids(forward.sampled(6, seed=seed))) for seed in range(12, 20)}
    assert tuple(chosen) not in others and len(others) > 1  # other seeds, other subsets
    assert _ids(forward.sampled(SIZE, 3)) == IDS and _ids(forward.sampled(SIZE + 5, 3)) == IDS
    assert _ids(forward.sampled(0, 3)) == []
    # Bottom-k: a larger subset of the same seed holds the smaller one.
    assert set(_ids(forward.sampled(4, 11))) < set(chosen)
    with pytest.raises(ValueError, match="limit"):
        forward.sampled(-1, 0)


def test_the_views_describe_their_subset_and_count_it():
    source = _memory(IDS)
    sampled = source.sampled(5, seed=9)
    assert isinstance(sampled, SampledSource) and sampled.report is source.report
    assert sampled.describe() == {
        "kind": "in-memory",
        "generated": False,
        "subset": {"kind": "random", "limit": 5, "seed": 9, "per_cell": False},
    }
    assert sampled.shards() == ("",) and sampled.reads_on_decode and not sampled.countable
    assert sampled.count_without_decoding() == 5  # the inner count is unknown: the limit
    photos = BuiltinPhotosSource()
    assert photos.sampled(5, 0).count_without_decoding() == 5
    assert photos.sampled(500, 0).count_without_decoding() == photos.count_without_decoding()
    assert [s.sample_id for s in photos.sampled(5, 0).samples()] == _ids(photos.sampled(5, 0))
    first = source.limited(5)
    assert isinstance(first, LimitedSource)
    assert first.describe()["limit"] == 5
    assert first.describe()["subset"] == {"kind": "first", "limit": 5, "per_cell": False}
    per_cell = source.limited(2, per_cell=True)
    assert isinstance(per_cell, CellLimitedSource) and per_cell.describe()["limit_per_cell"] == 2
    assert per_cell.describe()["subset"] == {"kind": "first", "limit": 2, "per_cell": True}


def _released_imagenet_c(root):
    """2 corruptions x 2 severities, each cell the same 3 classes x 3 files (in round-robin class order)."""
    files = {
        f"{corruption}/{severity}/{wnid}/ILSVRC2012_val_{c}{k}.JPEG": fx.image_bytes(10 * c + k)
        for corruption in ("fog", "snow")
        for severity in (1, 2)
        for c, wnid in enumerate(IMAGENET_WNIDS[:3])
        for k in range(3)
    }
    return fx.image_folder(root / "imagenet-c", files)


def test_per_cell_a_released_imagenet_c_folder_keeps_the_same_clean_files_in_every_cell(tmp_path):
    inner = load_benchmark("imagenet-c", str(_released_imagenet_c(tmp_path)))
    sampled = inner.sampled(4, seed=5, per_cell=True)
    by_cell: dict[tuple, list[str]] = {}
    for raw in sampled.raw_samples():
        cell = (raw.metadata["corruption"], raw.metadata["severity"])
        by_cell.setdefault(cell, []).append(raw.sample_id.split("/", 2)[2])
    assert sorted(by_cell) == [("fog", 1), ("fog", 2), ("snow", 1), ("snow", 2)]
    files = {tuple(sorted(kept)) for kept in by_cell.values()}
    assert len(files) == 1 and all(len(kept) == 4 for kept in by_cell.values())  # the same 4 in every cell
    first_cell = [raw.sample_id.split("/", 2)[2] for raw in inner.raw_samples()][:9]  # fog/1
    assert len(set(first_cell)) == 9
    assert set(next(iter(files))) == set(sorted(first_cell, key=lambda key: subset_hash(5, key))[:4])
    assert set(next(iter(files))) != set(first_cell[:4])  # not the first four
    # In stream order: the kept samples appear in the order the folder lists them.
    listed = [raw.sample_id for raw in inner.raw_samples()]
    kept = _ids(sampled)
    assert kept == [i for i in listed if i in set(kept)]
    assert sampled.count_without_decoding() == 16 and sampled.describe()["subset"]["per_cell"] is True
    # Not per cell: 4 of the whole stream of 36.
    assert len(_ids(inner.sampled(4, seed=5))) == 4


def test_a_generated_imagenet_c_samples_its_clean_images_each_in_every_cell():
    clean = _memory([f"n01440764/clean-{k:02d}.png" for k in range(12)], size=32)
    source = GeneratedCorruptionSource(
        clean, ["contrast", "brightness"], [1, 3], seed=2, resize=None, crop=None, jpeg_quality=None
    )
    sampled = source.sampled(4, seed=8, per_cell=True)
    assert sampled.clean_source is not None and sampled.expansion == 4
    chosen = _ids(clean.sampled(4, seed=8))
    assert _ids(sampled.clean_source) == chosen and chosen != _ids(clean)[:4]
    samples = list(sampled.samples())
    assert len(samples) == 4 * 4
    cells = Counter((s.metadata["corruption"], s.metadata["severity"]) for s in samples)
    assert cells == {(c, s): 4 for c in ("contrast", "brightness") for s in (1, 3)}
    for cell in cells:
        in_cell = {
            s.metadata["clean_sample_id"]
            for s in samples
            if (s.metadata["corruption"], s.metadata["severity"]) == cell
        }
        assert in_cell == set(chosen), cell
    # The plan of a generated benchmark with subset "random" chunks those clean images.
    plan = plan_stream(get_benchmark("imagenet-c"), source, 4, 8, {}, subset="random", seed=8)
    assert isinstance(plan.raw, SampledSource) and _ids(plan.raw) == chosen and plan.generated is not None
    first = plan_stream(get_benchmark("imagenet-c"), source, 4, 8, {})
    assert isinstance(first.raw, LimitedSource) and _ids(first.raw) == _ids(clean)[:4]
    with pytest.raises(ValueError, match="subset"):
        plan_stream(get_benchmark("imagenet-c"), source, 4, 8, {}, subset="last")


def test_imagenet_o_samples_each_half():
    label = imagenet_o_classes().class_indices[0]
    ood = _memory([f"o{k:02d}" for k in range(10)], label=-1)
    in_distribution = _memory([f"i{k:02d}" for k in range(10)], label=label)
    plan = plan_stream(
        get_benchmark("imagenet-o"), ImageNetOSource(ood, in_distribution), 3, 4, {}, subset="random", seed=4
    )
    assert isinstance(plan.raw, ImageNetOSource)
    ids = _ids(plan.raw)
    assert ids == [f"ood/{i}" for i in _ids(ood.sampled(3, 4))] + [
        f"id/{i}" for i in _ids(in_distribution.sampled(3, 4))
    ]


def test_a_hub_part_of_one_cell_is_read_to_its_end_for_a_random_subset(tmp_path):
    for corruption in ("fog", "snow"):
        fx.tsomaros_imagenet_c(tmp_path, corruption, 1, ["n01440764"] * 6)
    family = str(tmp_path / "Tsomaros" / "ImageNet-C")
    inner = load_benchmark("imagenet-c", family, corruptions=["fog", "snow"], severities=[1])
    sampled = inner.sampled(2, seed=1, per_cell=True)
    assert inner.rows_per_cell_part is None  # no early stop, unlike `limited`
    ids = [s.sample_id for s in sampled.samples()]
    assert Counter(i.split("/row-")[0] for i in ids) == {"fog/1": 2, "snow/1": 2}
    rows = {int(i.rsplit("-", 1)[1]) for i in ids}
    assert max(rows) >= 2  # rows past the first two were read
    assert set(ids) == {
        f"{cell}/row-{row:06d}"
        for cell in ("fog/1", "snow/1")
        for row in sorted(range(6), key=lambda r: subset_hash(1, f"{cell}/row-{r:06d}"))[:2]
    }
