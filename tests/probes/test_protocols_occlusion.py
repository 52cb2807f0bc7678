"""Cutout occlusion, protocol conformance (Paul & Chen, AAAI 2022; github.com/sayakpaul/robustness-vit, commit
b90ba6b7, analysis/masking/CutOut_ViT.ipynb and CutOut_BiT.ipynb).

- `hole="albumentations-1"` against the installed albumentations' `A.Cutout(num_holes=1, max_h_size=s,
  max_w_size=s, always_apply=True, p=1.)`, the notebooks' call: the same centres give the same masked pixels,
  holes across every edge included; the side is the notebooks' `int(np.sqrt(224 * 224 * factor))`.
- the default hole ("exact-area") is unchanged.
- the notebooks' image list (IMAGENET_VAL_PATHS_1k.pkl), shipped as text: read from opcodes without unpickling,
  equal to the source pickle (rebuilt byte for byte, sha256 checked), and selectable by file name.
"""

import contextlib
import hashlib
import math
import os
import pickle
import random
import re
import struct
import warnings
from pathlib import Path
from types import SimpleNamespace

import albumentations as A
import numpy as np
import pandas as pd
import pytest
import torch
from probe_models import NUM_CLASSES, random_images, transformers_vit
from reproduction_runs import Model, accuracy_frame, write_run

from hf_vitrobust.analysis.published import published_numbers
from hf_vitrobust.analysis.published_vs_ours import compare_published
from hf_vitrobust.analysis.results import load_results, merge_results
from hf_vitrobust.analysis.run_models import RunModel
from hf_vitrobust.analysis.uncertainty import UncertaintySettings
from hf_vitrobust.corruptions.occlusion import cutout, hole_side
from hf_vitrobust.data.image_lists import (
    IMAGE_LISTS,
    convert_pickled_list,
    file_name,
    image_list,
    match_image_list,
    read_pickled_names,
)
from hf_vitrobust.evaluation.probe_images import (
    keyed_rows,
    select_images,
    select_listed_images,
    select_probe_places,
)
from hf_vitrobust.models.imagenet import imagenet_wnid_to_index
from hf_vitrobust.probes.occlusion import (
    albumentations_centres,
    albumentations_cutout,
    albumentations_cutout_mask,
    albumentations_hole_side,
    occlusion_sweep,
)
from hf_vitrobust.probes.spec import PROBES

ROOT = Path(__file__).resolve().parents[2]
LIST_DIR = ROOT / "hf_vitrobust" / "assets" / "image_lists"
SOURCE_SHA256 = "affa82e480b17b5374000dc55c983e2afcc2089e051819a49ed0f0f1c9757639"
LIST_NAME = "paul-chen-occlusion-1k"


@pytest.fixture(scope="module")
def vit():
    return transformers_vit()


@contextlib.contextmanager
def python_random(seed: int):
    """Seed Python's global `random` (albumentations draws from it) and restore its state afterwards."""
    state = random.getstate()
    random.seed(seed)
    try:
        yield
    finally:
        random.setstate(state)


def albumentations_holes(image: np.ndarray, side: int, monkeypatch, centres=None):
    """Run the notebooks' `A.Cutout` on an HWC uint8 image; returns (output, the (y, x) it drew). With `centres`,
    albumentations' `random.randint` returns those values instead (to place holes on chosen edges)."""
    drawn = []
    real = random.randint
    queue = None if centres is None else [v for centre in centres for v in centre]

    def recording(a, b):
        value = real(a, b) if queue is None else queue.pop(0)
        assert a == 0 and 0 <= value <= b  # the centre is drawn over 0..H (0..W), both ends included
        drawn.append(value)
        return value

    monkeypatch.setattr(random, "randint", recording)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # "Cutout has been deprecated"
        transform = A.Cutout(num_holes=1, max_h_size=side, max_w_size=side, always_apply=True, p=1.0)
    out = transform(image=image)["image"]
    monkeypatch.setattr(random, "randint", real)
    assert len(drawn) == 2  # one hole: y, then x
    return out, tuple(drawn)


# ------------------------------------------------------------------------------------------------ the hole rule
def test_albumentations_side_is_the_notebooks_floor():
    # The notebooks' get_transforms_cutout: area = 224 * 224 * factor; max_h_size = int(np.sqrt(area)).
    for factor in (0.05, 0.1, 0.2, 0.5):
        assert albumentations_hole_side(224, 224, factor) == int(np.sqrt(224 * 224 * factor))
    assert [albumentations_hole_side(224, 224, f) for f in (0.05, 0.1, 0.2, 0.5)] == [50, 70, 100, 158]
    assert [hole_side(224, 224, f) for f in (0.05, 0.1, 0.2, 0.5)] == [50, 71, 100, 158]  # ours rounds
    assert albumentations_hole_side(224, 224, 0.0) == 0


@pytest.mark.parametrize(("height", "width", "ratio"), [(224, 224, 0.5), (224, 224, 0.05), (37, 53, 0.2)])
def test_albumentations_rule_equals_installed_cutout(height, width, ratio, monkeypatch):
    """Same centres, same masked pixels: random draws (Python's `random`, seeded here) and chosen centres on every
    edge and corner (holes pushed inside at the top/left, cut at the bottom/right)."""
    side = albumentations_hole_side(height, width, ratio)
    generator = torch.Generator().manual_seed(height + width)
    pixels = torch.randint(1, 256, (3, height, width), generator=generator, dtype=torch.uint8)
    image = pixels.permute(1, 2, 0).contiguous().numpy()
    chosen = [(0, 0), (height, width), (0, width), (height, 0), (side // 2, side // 2), (1, width - 1)]
    chosen += [(height - side + side // 2, width - side + side // 2 + 1), (height // 2, width // 2)]
    cases = []
    with python_random(1234):
        for _ in range(40):
            cases.append(albumentations_holes(image, side, monkeypatch))
    cases += [albumentations_holes(image, side, monkeypatch, [centre]) for centre in chosen]
    centres = torch.tensor([drawn for _, drawn in cases], dtype=torch.int64)
    mask = albumentations_cutout_mask(height, width, side, centres)
    ours = pixels[None].expand(len(cases), -1, -1, -1).masked_fill(mask, 0)
    theirs = torch.stack([torch.from_numpy(out).permute(2, 0, 1) for out, _ in cases])
    assert torch.equal(ours, theirs)
    # The edge cases did what they are for: cut holes (fewer than side**2 pixels) and full ones at the top-left.
    areas = mask.flatten(1).sum(1)
    assert int(areas.max()) == side * side and int(areas.min()) < side * side
    assert int(areas[len(cases) - len(chosen)]) == side * side  # centre (0, 0): pushed inside, not cut
    assert int(areas[len(cases) - len(chosen) + 1]) == (side // 2) ** 2  # centre (H, W): cut to its top-left


def test_albumentations_cutout_follows_the_seeded_stream():
    images = random_images(6, seed=5)
    ids = torch.tensor([3, 17, 4, 99, 1000, 7])
    out = albumentations_cutout(images, 0.2, seed=9, sample_ids=ids)
    side = albumentations_hole_side(32, 32, 0.2)
    mask = albumentations_cutout_mask(32, 32, side, albumentations_centres(32, 32, seed=9, sample_ids=ids))
    assert torch.equal(out, images.masked_fill(mask, 0.0))
    # An image's hole depends only on (seed, its id): the same in a sub-batch, elsewhere with another seed.
    assert torch.equal(albumentations_cutout(images[2:4], 0.2, seed=9, sample_ids=ids[2:4]), out[2:4])
    assert not torch.equal(albumentations_cutout(images, 0.2, seed=10, sample_ids=ids), out)
    as_uint8 = (images * 255).round().to(torch.uint8)
    assert torch.equal(
        albumentations_cutout(as_uint8, 0.2, seed=9, sample_ids=ids), as_uint8.masked_fill(mask, 0)
    )
    # Centres are uniform over 0..H inclusive, and the mean masked share is the rule's expectation.
    many = torch.arange(20_000)
    centres = albumentations_centres(8, 8, seed=0, sample_ids=many)
    counts = torch.bincount(centres[:, 0], minlength=9)
    assert len(counts) == 9 and int(counts.min()) > 0.85 * 20_000 / 9
    mask = albumentations_cutout_mask(224, 224, 158, albumentations_centres(224, 224, sample_ids=many[:2000]))
    rows = [min(max(y - 79, 0) + 158, 224) - max(y - 79, 0) for y in range(225)]
    expected = (sum(rows) / 225) ** 2 / 224**2  # 0.413: rows and columns independent
    assert float(mask.float().mean()) == pytest.approx(expected, abs=0.01)
    assert expected == pytest.approx(0.413, abs=0.001)
    with pytest.raises(ValueError, match="centres must lie"):
        albumentations_cutout_mask(8, 8, 2, torch.tensor([[9, 0]]))
    with pytest.raises(ValueError, match="fill"):
        albumentations_cutout(images, 0.1, fill=2.0)


def test_sweep_hole_option_and_default_unchanged(vit):
    images, labels = random_images(4, seed=1), torch.tensor([0, 3, 5, 9])
    ratios = (0.0, 0.1, 0.5)
    default = occlusion_sweep(vit, images, labels, ratios=ratios, seed=2)
    explicit = occlusion_sweep(vit, images, labels, ratios=ratios, seed=2, hole="exact-area")
    notebook = occlusion_sweep(vit, images, labels, ratios=ratios, seed=2, hole="albumentations-1")
    assert default.hole == "exact-area" and notebook.hole == "albumentations-1"
    assert default.to_dict() == explicit.to_dict()
    ids = torch.arange(4)
    with torch.no_grad():
        for position, ratio in enumerate(ratios):
            ours = (
                vit(cutout(images, ratio, seed=2, sample_ids=ids)).softmax(-1).max(-1).values.double().mean()
            )
            theirs = vit(albumentations_cutout(images, ratio, seed=2, sample_ids=ids)).softmax(-1)
            assert default.confidence[position] == pytest.approx(float(ours), abs=1e-6)
            assert notebook.confidence[position] == pytest.approx(
                float(theirs.max(-1).values.mean()), abs=1e-6
            )
    assert notebook.confidence[0] == pytest.approx(default.confidence[0], abs=1e-7)  # no hole at 0
    assert notebook.confidence[2] != pytest.approx(default.confidence[2], abs=1e-6)  # other holes
    # A hole that does not fit is an error for ours; the notebooks' rule cuts it at the border.
    wide = torch.ones(2, 3, 8, 64)
    with pytest.raises(ValueError, match="shorter side"):
        hole_side(8, 64, 0.5)
    masked = albumentations_cutout(wide, 0.5, sample_ids=torch.tensor([0, 1]))  # side 16, cut to the 8 rows
    assert 0 < int((masked == 0).all(1).flatten(1).sum(1).max()) <= 8 * 16
    with pytest.raises(ValueError, match="hole must be one of"):
        occlusion_sweep(vit, images, labels, hole="albumentations")


# ------------------------------------------------------------------------------------------------ the image list
def numpy1_unicode_array_pickle(names: list[str]) -> bytes:
    """`pickle.dumps(np.array(names), protocol=3)` as numpy 1.x wrote it (the opcodes of IMAGENET_VAL_PATHS_1k.pkl:
    _reconstruct(ndarray, (0,), b"b") then BUILD (1, shape, dtype("U<n>", False, True) with state
    (3, "<", None, None, None, 4 n, 4, 8), False, raw UTF-32-LE bytes)). A transcription for the test only."""
    width = max(map(len, names))

    def unicode(text: str) -> bytes:
        return b"X" + struct.pack("<I", len(text.encode())) + text.encode()

    data = b"".join(name.encode("utf-32-le").ljust(4 * width, b"\0") for name in names)
    return b"".join(
        [
            b"\x80\x03cnumpy.core.multiarray\n_reconstruct\nq\x00cnumpy\nndarray\nq\x01K\x00\x85q\x02C\x01bq\x03",
            b"\x87q\x04Rq\x05(K\x01M" + struct.pack("<H", len(names)) + b"\x85q\x06cnumpy\ndtype\nq\x07",
            unicode(f"U{width}") + b"q\x08\x89\x88\x87q\tRq\n(K\x03" + unicode("<") + b"q\x0bNNN",
            b"K" + bytes([4 * width]) + b"K\x04K\x08tq\x0cb\x89B" + struct.pack("<I", len(data)) + data,
            b"q\rtq\x0eb.",
        ]
    )


def test_shipped_list_is_the_source_pickle():
    entries = list(image_list(LIST_NAME))
    assert IMAGE_LISTS == (LIST_NAME, "robustbench-imagenet-c-5000")
    assert len(entries) == 1000 and len(set(entries)) == 991
    assert len({file_name(entry) for entry in entries}) == 991
    assert all(re.fullmatch(r"val/n\d{8}/ILSVRC2012_val_\d{8}\.JPEG", entry) for entry in entries)
    assert entries[0] == "val/n03857828/ILSVRC2012_val_00048946.JPEG"
    assert set(entry.split("/")[1] for entry in entries) <= set(imagenet_wnid_to_index())
    # Rebuilt in numpy 1.x's layout, the list gives the published pickle byte for byte.
    rebuilt = numpy1_unicode_array_pickle(entries)
    assert hashlib.sha256(rebuilt).hexdigest() == SOURCE_SHA256
    assert read_pickled_names(rebuilt) == entries
    # The README records both hashes.
    readme = (LIST_DIR / "README.md").read_text()
    text_sha = hashlib.sha256((LIST_DIR / "paul-chen-occlusion-1k.txt").read_bytes()).hexdigest()
    assert SOURCE_SHA256 in readme and text_sha in readme
    assert "c36d3a6d1e05f57721a3427b38df7f1a8f8a4230" in readme and "MIT" in readme


class _Exploit:
    def __reduce__(self):
        return (os.system, ("touch should_not_exist",))


def test_pickle_reader_reads_lists_and_executes_nothing(tmp_path, monkeypatch):
    names = ["val/n01440764/ILSVRC2012_val_00000293.JPEG", "a", "ü é"]
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        assert read_pickled_names(pickle.dumps(names, protocol=protocol)) == names
        assert read_pickled_names(pickle.dumps(tuple(names), protocol=protocol)) == names
    assert read_pickled_names(pickle.dumps(np.array(names))) == names  # numpy 2's numpy._core spelling
    big_endian = pickle.dumps(np.array(names, dtype=">U50"), protocol=3)
    assert read_pickled_names(big_endian) == names
    monkeypatch.chdir(tmp_path)
    refused = [
        pickle.dumps([_Exploit()]),
        pickle.dumps({"a": "b"}),
        pickle.dumps([1, 2]),
        pickle.dumps(np.zeros(3)),
        pickle.dumps(np.array([names, names])),
        b"cbuiltins\neval\n(X\x05\x00\x00\x001 + 1tR.",
        b"cnumpy\ndtype\n(X\x02\x00\x00\x00U3\x89\x88tR.",
    ]
    for data in refused:
        with pytest.raises(ValueError, match=r"Refusing|Malformed"):
            read_pickled_names(data)
    assert not (tmp_path / "should_not_exist").exists()
    with pytest.raises(ValueError):
        read_pickled_names(b"\x80\x03]q\x00")  # truncated
    source = tmp_path / "list.pkl"
    source.write_bytes(pickle.dumps(np.array(names)))
    digest = convert_pickled_list(source, tmp_path / "list.txt")
    assert digest == hashlib.sha256(source.read_bytes()).hexdigest()
    assert (tmp_path / "list.txt").read_text(encoding="utf-8").splitlines() == names


def local_ids(entries):
    """Sample ids as a local ImageNet class folder gives them ("<wnid>/<file>"), with ImageNet-1k labels."""
    to_index = imagenet_wnid_to_index()
    ids = ["/".join(entry.split("/")[1:]) for entry in entries]
    return ids, np.asarray([to_index[entry.split("/")[1]] for entry in entries])


def test_select_by_list_matches_file_names_and_counts_missing(caplog):
    entries = list(image_list(LIST_NAME))
    unique = list(dict.fromkeys(entries))
    present = [*unique[::2], "n01440764/ILSVRC2012_val_00000001.JPEG"]  # half the list and one unlisted image
    rng = np.random.default_rng(0)
    order = rng.permutation(len(present))
    ids, labels = local_ids(
        ["val/" + p if p.startswith("n01440764/") else p for p in np.asarray(present)[order]]
    )
    with caplog.at_level("WARNING"):
        positions = select_images(f"image-list:{LIST_NAME}", None, ids, labels, labels, seed=3)
    kept = set(unique[::2])
    expected = [ids.index("/".join(e.split("/")[1:])) for e in entries if e in kept]
    # One position per entry, in the list's order: an image listed twice comes twice.
    assert positions.dtype == np.int64 and positions.tolist() == expected
    assert len(expected) > len(kept)
    assert f"{len(unique) - len(unique[::2])} of its 991 images are not in the data" in caplog.text
    assert select_listed_images(LIST_NAME, 5, ids, labels).tolist() == expected[:5]
    swapped = labels.copy()
    swapped[expected[0]] = (swapped[expected[0]] + 1) % 1000
    with pytest.raises(ValueError, match="another label"):
        select_listed_images(LIST_NAME, None, ids, swapped)
    with pytest.raises(ValueError, match="row number"):
        select_images(f"image-list:{LIST_NAME}", None, [f"row-{i:06d}" for i in range(50)])
    with pytest.raises(ValueError, match="Unknown image list"):
        select_images("image-list:bogus", None, ids)
    with pytest.raises(ValueError, match="several samples"):
        match_image_list(entries, [ids[0], "other/" + ids[0]])


def test_occlusion_task_selects_by_list_and_reports_it(vit):
    task = PROBES["occlusion"]
    assert task.selection_for({}) == "random"
    assert task.selection_for({"image_list": LIST_NAME}) == f"image-list:{LIST_NAME}"
    with pytest.raises(ValueError, match="Unknown image list"):
        task.selection_for({"image_list": "nope"})
    params = task.check_params({"image_list": LIST_NAME, "hole": "albumentations-1", "ratios": [0.0, 0.5]})
    pixels, labels, ids = random_images(6, seed=4), torch.tensor([1, 2, 3, 4, 5, 6]), torch.arange(6) + 40
    partials = [task.run(vit, pixels[p], labels[p], ids[p], 3, params) for p in (slice(0, 4), slice(4, 6))]
    merged = task.merge(partials)
    whole = occlusion_sweep(
        vit, pixels, labels, ratios=(0.0, 0.5), seed=3, sample_ids=ids, hole="albumentations-1"
    )
    assert merged["hole"] == "albumentations-1"
    assert merged["accuracy"] == pytest.approx(whole.accuracy, abs=1e-9)
    assert merged["confidence"] == pytest.approx(whole.confidence, abs=1e-6)
    assert merged["image_list"] == {"name": LIST_NAME, "listed": 1000, "unique": 991, "not_evaluated": 994}
    plain = task.merge([task.run(vit, pixels, labels, ids, 3, task.check_params({"ratios": [0.0, 0.5]}))])
    assert "image_list" not in plain and plain["hole"] == "exact-area"
    assert math.isclose(plain["confidence"][0], merged["confidence"][0], abs_tol=1e-6)


def test_every_listed_entry_is_one_evaluation_with_its_own_hole_and_the_rows_compare(vit, tmp_path):
    """The shipped list through the runner's selection (`select_probe_places`, `keyed_rows`) and the probe: 1,000
    evaluations of 991 images, duplicates with holes of their own, and the published rows compare (no "other
    images": 1,000 here as published)."""
    entries = list(image_list(LIST_NAME))
    unique = list(dict.fromkeys(entries))
    ids, labels = local_ids(unique)
    order = np.random.default_rng(1).permutation(len(ids))  # the data's order is not the list's
    ids, labels = [ids[i] for i in order], labels[order]
    frame = pd.DataFrame(
        {"sample_id": ids, "label": labels, "prediction": labels, "shard": 0, "position": np.arange(len(ids))}
    )
    params = PROBES["occlusion"].check_params({"image_list": LIST_NAME, "hole": "albumentations-1"})
    assert "ratios" not in params  # the default ratios, the notebooks' (0, 0.05, 0.1, 0.2, 0.5)
    spec = SimpleNamespace(name="occlusion", benchmark="imagenet-val", params=params, num_images=None)
    places = select_probe_places([spec], {"imagenet-val": frame}, seed=3)["occlusion"]
    assert len(places) == 1000 and [key for _, _, key in places] == list(range(1000))
    assert [ids[position] for _, position, _ in places] == ["/".join(e.split("/")[1:]) for e in entries]
    # What read_places gives: (pixels, label, stable sample id) per place, each image once.
    pixels = random_images(len(ids), seed=5)
    found = {(0, p): (pixels[p], int(labels[p]) % NUM_CLASSES, 10_000 + p) for p in range(len(ids))}
    seen = []
    hook = vit.register_forward_hook(lambda module, args, output: seen.append(len(args[0])))
    task, partials, keys = PROBES["occlusion"], [], []
    size = task.chunk_length(params)
    for start in range(0, len(places), size):
        rows = keyed_rows(found, places[start : start + size])
        chunk_ids = torch.tensor([r[2] for r in rows])
        keys += chunk_ids.tolist()
        batch = torch.stack([r[0] for r in rows]), torch.tensor([r[1] for r in rows]), chunk_ids
        partials.append(task.run(vit, *batch, 3, params))
    hook.remove()
    merged = task.merge(partials)
    assert sum(seen) == 5 * 1000  # every entry at every ratio
    assert merged["num_samples"] == 1000 and merged["per_image"]["keys"] == list(range(1000))
    assert merged["image_list"] == {"name": LIST_NAME, "listed": 1000, "unique": 991, "not_evaluated": 0}
    # The nine images listed twice: the two entries of each get two different holes.
    twice = {}
    for index, entry in enumerate(entries):
        twice.setdefault(entry, []).append(index)
    pairs = [indices for indices in twice.values() if len(indices) == 2]
    assert len(pairs) == 9
    image = pixels[:1].expand(2, -1, -1, -1)
    for first, second in pairs:
        masked = albumentations_cutout(image, 0.5, seed=3, sample_ids=torch.tensor([first, second]))
        assert not torch.equal(masked[0], masked[1])
    # The published rows of the notebooks compare: our count is theirs, 1,000.
    probe = {**merged, "benchmark": "imagenet-val", "params": params}
    folder = write_run(
        tmp_path / "run",
        [
            Model(
                "google/vit-large-patch16-224",
                {"imagenet-val": accuracy_frame(np.ones(50, dtype=bool))},
                probes={"occlusion": probe},
                applied={"imagenet-val": "native-resize"},
            )
        ],
    )
    run = merge_results(load_results([folder]))[0]
    model = RunModel(run, run["models"][0]["key"])
    settings = UncertaintySettings(confidence_level=0.95, num_resamples=100, seed=0)
    rows = [
        r for r in published_numbers("paul-chen") if r.row_id.startswith("paul-chen/occlusion/top1/vit-l16")
    ]
    assert len(rows) == 5
    for row in rows:
        comparison = compare_published(row, model, settings)
        assert comparison.ours.num_images == 1000
        assert "other images" not in [kind for kind, _ in comparison.reasons], comparison.reason_text()
    # Scored once per distinct image, as before, the same row was "other images: 991 here, 1,000 published".
    once = {**probe, "num_samples": 991, "num_correct": [int(c * 991 / 1000) for c in merged["num_correct"]]}
    folder = write_run(tmp_path / "once", [Model("google/vit-large-patch16-224", probes={"occlusion": once})])
    run = merge_results(load_results([folder]))[0]
    earlier = compare_published(rows[-1], RunModel(run, run["models"][0]["key"]), settings)
    assert "other images" in [kind for kind, _ in earlier.reasons] and "991" in earlier.reason_text()
